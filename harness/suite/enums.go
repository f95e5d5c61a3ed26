package suite

import (
	"fmt"
	"slices"

	"github.com/fabricbench/fabricbench/agents/transport"
)

// The suite's fields that are a closed set of words decode into these
// string types (encoding.TextUnmarshaler): a word outside the set is
// reported at its position by the decode itself, like a bad quantity
// (quantity.go). The empty text is unset (the field's default applies, or
// the checker reports it as required). Being strings, they compare with
// the untyped constants (ECMPModeHash, ...) as they are.

// ECMPMode is features.ecmp.mode.
type ECMPMode string

// ECMPModes are the modes, in the order messages list them.
var ECMPModes = []string{ECMPModeHash, ECMPModeAdaptive, ECMPModeFlowlet,
	"minimal", "valiant", "valiant-hop", "ugal-l", "ugal-g", ECMPModeSourceGuided, ECMPModePortMSB}

// UnmarshalText decodes one of ECMPModes.
func (m *ECMPMode) UnmarshalText(b []byte) error {
	return word((*string)(m), b, ECMPModes, func(s string) error {
		return fmt.Errorf("unknown mode %q (want hash, adaptive, flowlet, or on dragonfly and slimfly fabrics minimal, valiant, valiant-hop, ugal-l, ugal-g, source-guided or port-msb)", s)
	})
}

// Placement is features.srv6.placement.
type Placement string

// UnmarshalText decodes none or disjoint.
func (p *Placement) UnmarshalText(b []byte) error {
	return word((*string)(p), b, []string{SRv6PlacementNone, SRv6PlacementDisjoint}, func(s string) error {
		return fmt.Errorf("%q is not a placement (want none or disjoint)", s)
	})
}

// ControllerKind is controller.kind.
type ControllerKind string

// UnmarshalText decodes srv6-reroute or none.
func (k *ControllerKind) UnmarshalText(b []byte) error {
	return word((*string)(k), b, []string{ControllerSRv6Reroute, ControllerNone}, func(s string) error {
		return fmt.Errorf("unknown controller %q (want %s or %s)", s, ControllerSRv6Reroute, ControllerNone)
	})
}

// Launcher is agents.launcher.
type Launcher string

// UnmarshalText decodes ssh or srun.
func (l *Launcher) UnmarshalText(b []byte) error {
	return word((*string)(l), b, []string{LauncherSSH, LauncherSrun}, func(s string) error {
		return fmt.Errorf("unknown launcher %q (want ssh or srun)", s)
	})
}

// Workload is jobs[].workload, one of Workloads.
type Workload string

// UnmarshalText decodes one of Workloads.
func (w *Workload) UnmarshalText(b []byte) error {
	return word((*string)(w), b, Workloads, func(s string) error {
		return fmt.Errorf("unknown workload %q (want %s)", s, orList(Workloads))
	})
}

// FaultKind is faults[].kind, one of FaultKinds.
type FaultKind string

// UnmarshalText decodes one of FaultKinds.
func (k *FaultKind) UnmarshalText(b []byte) error {
	return word((*string)(k), b, FaultKinds, func(s string) error {
		return fmt.Errorf("unknown fault kind %q (want %s)", s, orList(FaultKinds))
	})
}

// Runtime is bringup.runtime.
type Runtime string

// UnmarshalText decodes auto, containerlab or native.
func (r *Runtime) UnmarshalText(b []byte) error {
	return word((*string)(r), b, []string{"auto", "native", "containerlab"}, func(s string) error {
		return fmt.Errorf("%q is not a lab runtime (want auto, containerlab or native)", s)
	})
}

// CongestionControl is transport.cc, stored as its canonical name
// (transport.CCKind's String: smartt decodes to nscc).
type CongestionControl string

// UnmarshalText decodes a congestion control (transport.ParseCC).
func (c *CongestionControl) UnmarshalText(b []byte) error {
	return canonical((*string)(c), b, func(s string) (fmt.Stringer, error) { return transport.ParseCC(s) }, func(s string) error {
		return fmt.Errorf("unknown congestion control %q (want nscc or dctcp)", s)
	})
}

// LoadBalancer is transport.lb, stored as its canonical name
// (transport.LBKind's String).
type LoadBalancer string

// UnmarshalText decodes a load balancer (transport.ParseLB).
func (l *LoadBalancer) UnmarshalText(b []byte) error {
	return canonical((*string)(l), b, func(s string) (fmt.Stringer, error) { return transport.ParseLB(s) }, func(s string) error {
		return fmt.Errorf("unknown load balancer %q (want %s)", s, transport.LBNames)
	})
}

// PlaneMode is transport.planes, stored as its canonical name
// (transport.PlaneMode's String: per-plane decodes to plb).
type PlaneMode string

// UnmarshalText decodes a plane load balancing (transport.ParsePlaneMode).
func (m *PlaneMode) UnmarshalText(b []byte) error {
	return canonical((*string)(m), b, func(s string) (fmt.Stringer, error) { return transport.ParsePlaneMode(s) }, func(s string) error {
		return fmt.Errorf("unknown plane load balancing %q (want plb, global or entropy)", s)
	})
}

// HashField is one field of features.ecmp.hash (hashFields). The empty
// text decodes (the checker names it as an unknown field).
type HashField string

// UnmarshalText decodes one of hashFields.
func (h *HashField) UnmarshalText(b []byte) error {
	return word((*string)(h), b, hashFields, func(s string) error {
		return fmt.Errorf("unknown hash field %q (want %s)", s, orList(hashFields))
	})
}

// canonical decodes a word with parse into dst as its canonical name (""
// is unset), else bad's error.
func canonical(dst *string, b []byte, parse func(string) (fmt.Stringer, error), bad func(string) error) error {
	s := string(b)
	*dst = ""
	if s == "" {
		return nil
	}
	v, err := parse(s)
	if err != nil {
		return bad(s)
	}
	*dst = v.String()
	return nil
}

// word decodes one of words into dst ("" is unset), else bad's error.
func word(dst *string, b []byte, words []string, bad func(string) error) error {
	s := string(b)
	*dst = ""
	if s != "" && !slices.Contains(words, s) {
		return bad(s)
	}
	*dst = s
	return nil
}
