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
	if p.HasCC && !given(SetCC) {
		s.CC = p.CC.String()
	}
	fill(given, SetMTU, &s.MTU, p.MTU)
	fill(given, SetQueue, &s.Queue, p.Queue)
	fill(given, SetKMin, &s.KMin, p.KMin)
	fill(given, SetKMax, &s.KMax, p.KMax)
	fill(given, SetECN, &s.ECN, p.ECN)
	fill(given, SetTrimming, &s.Trimming, p.Trimming)
	fill(given, SetTargetRTT, &s.TargetRTT, p.TargetRTT)
	fill(given, SetMaxWindow, &s.MaxWindow, p.MaxWindow)
	return s
}

// fill sets *dst to the preset's value v unless the user gave setting
// name.
func fill[T any](given func(name string) bool, name string, dst *T, v T) {
	if !given(name) {
		*dst = v
	}
}
