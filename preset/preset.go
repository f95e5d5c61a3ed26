// Package preset holds named settings of fabric, switches and transport
// that reproduce a published evaluation, for suites (`preset: smartt`) and
// `fabricbench sim --preset smartt`. Settings the user gives explicitly
// (a spec key, a suite key, a flag) win over the preset's.
package preset

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fabricbench/fabricbench/agents/transport"
)

// Preset is one named set of settings.
type Preset struct {
	Name string
	// Source says where the values come from.
	Source string
	// Spec are generator-spec parameters (fattree and leafspine take all
	// of them) added to a fabric spec that does not set them, in order.
	Spec []KV
	// MTU is the payload bytes of a full data packet.
	MTU int
	// KMin and KMax are the RED/ECN thresholds as fractions of the queue.
	KMin, KMax float64
	// Queue is the switch data queue per port: "bdp", a size, or
	// "longest-path" (Spritz Sec. V-A: one BDP of the fabric's longest
	// source-guided path, and every flow's window sized on that path too;
	// sim.LongestPathSizing).
	Queue string
	// Kinds are the generator-spec kinds the preset applies to (nil: any);
	// CheckSpec rejects the others.
	Kinds []string
	// CC is the congestion control when HasCC (else the default, NSCC,
	// stays).
	CC    transport.CCKind
	HasCC bool
	// ECN and Trimming switch ECN marking and packet trimming.
	ECN, Trimming bool
	// TargetRTT is the congestion control's target RTT in base RTTs,
	// MaxWindow its largest window in BDPs (transport.Params).
	TargetRTT, MaxWindow float64
	// AckEvery, AckEveryBytes and AckDelay are the receivers' ACK
	// coalescing (transport.Params; zero: an ACK per packet); Entropies the
	// size of the load balancer's entropy space (0: transport's default).
	AckEvery, AckEveryBytes int
	AckDelay                transport.Time
	Entropies               uint32
	// OPSCycle makes OPS walk a cycle of its entropies, REPSWarmup makes
	// REPS send its first window on successive entropies
	// (transport.Params.OPSCycle, REPSWarmup).
	OPSCycle, REPSWarmup bool
}

// Transport sets the preset's transport settings in tp.
func (p *Preset) Transport(tp *transport.Params) {
	if p.HasCC {
		tp.CC = p.CC
	}
	tp.MTU = p.MTU
	tp.Trimming = p.Trimming
	tp.TargetRTT, tp.MaxWindow = p.TargetRTT, p.MaxWindow
	tp.AckEvery, tp.AckEveryBytes, tp.AckDelay = p.AckEvery, p.AckEveryBytes, p.AckDelay
	if p.Entropies > 0 {
		tp.Entropies = p.Entropies
	}
	tp.OPSCycle, tp.REPSWarmup = p.OPSCycle, p.REPSWarmup
}

// KV is one generator-spec parameter.
type KV struct{ Key, Value string }

// SMaRTT is the setting of the SMaRTT paper's simulations (Sec. IV a and
// Sec. III-J of ../shared/papers/smartt-nscc-congestion-control.txt): 800
// Gb/s links, 4 KiB MTU, 400 ns switch traversal, 600 ns on every link,
// RED/ECN between 20% and 80% of a one-BDP queue, trimming, target RTT 1.5
// base RTTs, window at most 1.5 BDP. Congestion control and load balancing
// keep their defaults (NSCC with REPS, the paper's pairing).
var SMaRTT = Preset{
	Name:   "smartt",
	Source: "SMaRTT (NSCC) paper, Sec. IV: 800 Gb/s, 4 KiB MTU, 400 ns switches, 600 ns links, RED 20%/80% of a 1-BDP queue, target RTT 1.5x base, window <= 1.5 BDP",
	Spec: []KV{
		{"gbps", "800"},
		{"latency", "600ns"},
		{"switch_latency", "400ns"},
	},
	MTU:       4096,
	KMin:      0.2,
	KMax:      0.8,
	Queue:     "bdp",
	ECN:       true,
	Trimming:  true,
	TargetRTT: 1.5,
	MaxWindow: 1.5,
}

// HTSim is the setting of the htsim reference figures
// (../shared/reference/htsim/README.md, htsim_uec with its defaults): 100
// Gb/s links, 1 us per link, no switch latency, 4150 B data packets (4086 B
// payload + 64 B header), RED/ECN between 20% and 80% of a one-BDP queue,
// trimming, and the htsim_uec defaults that differ from fabricbench's: its
// sink ACKs every 16384 wire bytes (4 packets; at once on ECN, on the
// sender's ACK request, on the first packet), with no timer; its load
// balancers spray over 64 entropies (main_uec's path_entropy_size when
// -paths is not given); its oblivious spraying (OPS) walks every entropy
// once per cycle in a per-cycle order (OPSCycle) and its REPS sends the
// first window on successive entropies (REPSWarmup); NSCC targets 6 us of
// queueing, 1.428 base RTTs of the reference tree (14.02 us).
var HTSim = Preset{
	Name:   "htsim",
	Source: "htsim_uec defaults of the htsim reference figures: 100 Gb/s, 1 us links, 4150 B packets, RED 20%/80% of a 1-BDP queue, ACK every 16384 B, 64 entropies (OPS walks them in cycles, REPS's first window in turn), target 6 us queueing (1.428x base RTT)",
	Spec: []KV{
		{"gbps", "100"},
		{"latency", "1us"},
	},
	MTU:           4086,
	KMin:          0.2,
	KMax:          0.8,
	Queue:         "bdp",
	ECN:           true,
	Trimming:      true,
	TargetRTT:     1.428,
	MaxWindow:     1.5,
	AckEveryBytes: 16384,
	Entropies:     64,
	OPSCycle:      true,
	REPSWarmup:    true,
}

// Spritz is the setting of the Spritz paper's evaluation (Sec. V-A and
// Table II of ../shared/papers/spritz-path-aware-load-balancing.txt) on a
// Dragonfly or a Slim Fly: 400 Gb/s links, 25 ns on host and local links, 500 ns on
// global links, 500 ns switch traversal, 4 KiB MTU with 64 B headers, RED/
// ECN between 20% and 80% of a queue of one BDP of the topology's longest
// path, every flow's window (initial and maximum, 1.5 BDP) sized on that
// path too, trimming, DCTCP with QuickAdapt and FastIncrease. Routing and
// load balancing are the user's (--routing source-guided --lb
// spritz-spray for Spritz); the Spritz load balancers' parameters (buffer
// 8 paths, explore threshold 44, ECN threshold 8, weight scale 3) are the
// transport's defaults.
var Spritz = Preset{
	Name:   "spritz",
	Source: "Spritz paper, Sec. V-A / Table II: 400 Gb/s, 25 ns host and local links, 500 ns global links and switches, 4 KiB MTU, RED 20%/80% of a queue of 1 BDP of the longest path, windows sized on the longest path, DCTCP with QuickAdapt and FastIncrease",
	Spec: []KV{
		{"gbps", "400"},
		{"latency", "25ns"},
		{"local_latency", "25ns"},
		{"global_latency", "500ns"},
		{"switch_latency", "500ns"},
	},
	Kinds:     []string{"dragonfly", "slimfly"},
	CC:        transport.DCTCP,
	HasCC:     true,
	MTU:       4096,
	KMin:      0.2,
	KMax:      0.8,
	Queue:     LongestPath,
	ECN:       true,
	Trimming:  true,
	TargetRTT: transport.TargetFactor,
	MaxWindow: transport.MaxWindowBDP,
}

// LongestPath is the Queue value of Spritz's sizing.
const LongestPath = "longest-path"

var all = map[string]*Preset{SMaRTT.Name: &SMaRTT, Spritz.Name: &Spritz}

// CheckSpec reports an error when the preset does not apply to the
// generator spec's kind (the spritz preset sizes a dragonfly).
func (p *Preset) CheckSpec(spec string) error {
	if len(p.Kinds) == 0 {
		return nil
	}
	kind, _, _ := strings.Cut(strings.TrimSpace(spec), ":")
	kind = strings.ToLower(strings.TrimSpace(kind))
	for _, k := range p.Kinds {
		if k == kind {
			return nil
		}
	}
	return fmt.Errorf("preset %s applies to %s fabric specs (e.g. %s:p=2,a=4,h=2), not %q", p.Name, strings.Join(p.Kinds, " or "), p.Kinds[0], kind)
}

// Names lists the presets, sorted.
func Names() []string {
	n := make([]string, 0, len(all))
	for k := range all {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Lookup returns the preset called name (case-insensitive).
func Lookup(name string) (*Preset, error) {
	if p, ok := all[strings.ToLower(strings.TrimSpace(name))]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("unknown preset %q (want %s)", name, strings.Join(Names(), " or "))
}

// ApplySpec returns the generator spec with the preset's spec parameters
// appended where spec does not set them ("fattree:hosts=16,gbps=100"
// becomes "fattree:hosts=16,gbps=100,latency=600ns,switch_latency=400ns").
// Keys compare case-insensitively, as the spec parser does; a spec without
// a "kind:" is returned unchanged for the parser to reject.
func (p *Preset) ApplySpec(spec string) string {
	spec = strings.TrimSpace(spec)
	kind, rest, ok := strings.Cut(spec, ":")
	if !ok {
		return spec
	}
	have := map[string]bool{}
	var parts []string
	for _, part := range strings.Split(rest, ",") {
		if strings.TrimSpace(part) == "" && strings.TrimSpace(rest) == "" {
			continue
		}
		k, _, _ := strings.Cut(part, "=")
		have[strings.ToLower(strings.TrimSpace(k))] = true
		parts = append(parts, part)
	}
	for _, kv := range p.Spec {
		if !have[kv.Key] {
			parts = append(parts, kv.Key+"="+kv.Value)
		}
	}
	return kind + ":" + strings.Join(parts, ",")
}

// SpecKeys lists the spec parameters the preset sets, e.g.
// "gbps=800, latency=600ns, switch_latency=400ns".
func (p *Preset) SpecKeys() string {
	s := make([]string, len(p.Spec))
	for i, kv := range p.Spec {
		s[i] = kv.Key + "=" + kv.Value
	}
	return strings.Join(s, ", ")
}
