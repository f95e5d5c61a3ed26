package preset

// The settings a preset fills (Apply), by name: a suite maps each to its
// field (transport.cc, features.queue, ...), fabricbench sim to its flag.
const (
	SetCC        = "cc"
	SetMTU       = "mtu"
	SetQueue     = "queue"
	SetKMin      = "kmin"
	SetKMax      = "kmax"
	SetECN       = "ecn"
	SetTrimming  = "trimming"
	SetTargetRTT = "target_rtt"
	SetMaxWindow = "max_window"
)

// Settings are the switch and transport settings a preset fills; a
// caller without one of them (a suite has no target RTT) ignores it.
type Settings struct {
	CC                   string // a congestion control's name
	MTU                  int
	Queue                string // bdp, longest-path or a size
	KMin, KMax           float64
	ECN, Trimming        bool
	TargetRTT, MaxWindow float64
}

// Apply is the one place a preset's settings are applied, for suites and
// fabricbench sim alike: every setting the user did not give (given
// reports it by its name, Set*) takes the preset's value; the
// congestion control only where the preset has one. Settings the user
// gave win.
func (p *Preset) Apply(s Settings, given func(name string) bool) Settings {
	set := func(name string) bool { return !given(name) }
	if p.HasCC && set(SetCC) {
		s.CC = p.CC.String()
	}
	if set(SetMTU) {
		s.MTU = p.MTU
	}
	if set(SetQueue) {
		s.Queue = p.Queue
	}
	if set(SetKMin) {
		s.KMin = p.KMin
	}
	if set(SetKMax) {
		s.KMax = p.KMax
	}
	if set(SetECN) {
		s.ECN = p.ECN
	}
	if set(SetTrimming) {
		s.Trimming = p.Trimming
	}
	if set(SetTargetRTT) {
		s.TargetRTT = p.TargetRTT
	}
	if set(SetMaxWindow) {
		s.MaxWindow = p.MaxWindow
	}
	return s
}
