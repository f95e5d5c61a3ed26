package suite

import (
	"strings"
	"testing"
)

// features.ecmp.mode: hash by default; adaptive with its defaults; the
// adaptive knobs are refused without adaptive, and bad values name the
// field.
func TestECMPMode(t *testing.T) {
	s := mustParse(t, "hash.yaml", base)
	if s.Features.ECMP.Mode != ECMPModeHash || s.Features.ECMP.Staleness.String() != "" {
		t.Errorf("default: %+v", s.Features.ECMP)
	}
	s = mustParse(t, "ar.yaml", base+"features:\n  ecmp: {mode: adaptive}\n")
	if e := s.Features.ECMP; e.Mode != ECMPModeAdaptive || e.Staleness.String() != DefaultARStaleness || e.Weighted {
		t.Errorf("adaptive: %+v", e)
	}
	s = mustParse(t, "arw.yaml", base+"features:\n  ecmp: {mode: adaptive, staleness: 1us, quantum: 32KiB, weighted: true}\n")
	if e := s.Features.ECMP; e.Staleness.String() != "1us" || e.Quantum.String() != "32KiB" || !e.Weighted {
		t.Errorf("adaptive with knobs: %+v", e)
	}
	s = mustParse(t, "fl.yaml", base+"features:\n  ecmp: {mode: flowlet, flowlet_gap: 20us}\n  pfc: {enabled: true, watchdog: {detect: 200us}}\n")
	if e := s.Features.ECMP; e.Mode != ECMPModeFlowlet || e.FlowletGap.String() != "20us" || s.Features.PFC.Watchdog.Detect.String() != "200us" {
		t.Errorf("flowlet and watchdog: %+v %+v", e, s.Features.PFC)
	}
	for _, c := range []struct{ doc, want string }{
		{"features:\n  ecmp: {mode: spray}\n", `features.ecmp.mode: unknown mode "spray" (want hash, adaptive, flowlet, or on dragonfly and slimfly fabrics minimal, valiant, valiant-hop, ugal-l, ugal-g, source-guided or port-msb)`},
		{"features:\n  ecmp: {staleness: 1us}\n", "features.ecmp.staleness: applies to adaptive routing only"},
		{"features:\n  ecmp: {mode: hash, weighted: true}\n", "features.ecmp.weighted: applies to adaptive routing only"},
		{"features:\n  ecmp: {mode: adaptive, staleness: 2ms}\n", "features.ecmp.staleness: 2ms is out of range (want 0..1ms)"},
		{"features:\n  ecmp: {mode: adaptive, staleness: soon}\n", `features.ecmp.staleness: "soon" is not a duration`},
		{"features:\n  ecmp: {mode: adaptive, quantum: 1GiB}\n", "features.ecmp.quantum: 1GiB is out of range (want 1B..16MiB)"},
		{"features:\n  ecmp: {flowlet_gap: 10us}\n", "features.ecmp.flowlet_gap: applies to flowlet load balancing only"},
		{"features:\n  ecmp: {mode: flowlet, flowlet_gap: 20ms}\n", "features.ecmp.flowlet_gap: 20ms is out of range (want 100ns..10ms)"},
		{"features:\n  ecmp: {mode: flowlet, staleness: 1us}\n", "features.ecmp.staleness: applies to adaptive routing only"},
		{"features:\n  pfc: {enabled: true, watchdog: {restore: 1ms}}\n", "features.pfc.watchdog.detect: required"},
		{"features:\n  pfc: {enabled: true, watchdog: {detect: 1us}}\n", "features.pfc.watchdog.detect: 1us is out of range (want 10us..10s)"},
		{"features:\n  pfc: {enabled: false, watchdog: {detect: 1ms}}\n", "features.pfc.watchdog: needs features.pfc.enabled: true"},
	} {
		_, err := Parse("bad.yaml", []byte(base+c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.yaml:") {
			t.Errorf("%q: error %v, want %q with its position", c.doc, err, c.want)
		}
	}
}
