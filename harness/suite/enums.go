package suite

import (
	"fmt"
	"slices"
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
