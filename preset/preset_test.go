package preset

import (
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
)

func TestLookup(t *testing.T) {
	for _, n := range []string{"smartt", "SMaRTT", " smartt "} {
		if p, err := Lookup(n); err != nil || p != &SMaRTT {
			t.Errorf("Lookup(%q) = %v, %v", n, p, err)
		}
	}
	if _, err := Lookup("nope"); err == nil || err.Error() != `unknown preset "nope" (want smartt or spritz)` {
		t.Errorf("Lookup(nope) error = %v", err)
	}
}

func TestApplySpec(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"fattree:hosts=16", "fattree:hosts=16,gbps=800,latency=600ns,switch_latency=400ns"},
		{"fattree:", "fattree:gbps=800,latency=600ns,switch_latency=400ns"},
		{"leafspine:leaves=2,spines=1,hosts_per_leaf=2,GBPS=400,latency=1us",
			"leafspine:leaves=2,spines=1,hosts_per_leaf=2,GBPS=400,latency=1us,switch_latency=400ns"},
		{" fattree:hosts=16,gbps=100,latency=2us,switch_latency=0 ", "fattree:hosts=16,gbps=100,latency=2us,switch_latency=0"},
		{"nokind", "nokind"},
	} {
		if got := SMaRTT.ApplySpec(c.in); got != c.want {
			t.Errorf("ApplySpec(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSMaRTTTransportDefaults: suites apply the preset without keys for the
// target RTT and the window bound; they rely on the preset's values being
// the transport's defaults.
func TestSMaRTTTransportDefaults(t *testing.T) {
	if SMaRTT.TargetRTT != transport.TargetFactor || SMaRTT.MaxWindow != transport.MaxWindowBDP {
		t.Errorf("smartt target RTT %g, max window %g; the transport defaults are %g, %g",
			SMaRTT.TargetRTT, SMaRTT.MaxWindow, transport.TargetFactor, transport.MaxWindowBDP)
	}
	if d := transport.DefaultParams(); SMaRTT.MTU != d.MTU || !d.Trimming {
		t.Errorf("smartt mtu %d, default %d", SMaRTT.MTU, d.MTU)
	}
}
