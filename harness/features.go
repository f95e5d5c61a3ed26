package harness

import (
	"fmt"
	"sync"

	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/harness/suite"
)

// The feature registry. Every switch feature a suite may ask for is one
// registered FeatureKind: its capability name, the words errors use for
// it, its suite fields, a line of documentation and its default, the
// suite fields that ask for it and whether a resolved run asks for it. A
// backend declares which kinds it cannot do (Capabilities.Unsupported,
// with the reason) or does only where its devices can
// (Capabilities.ByDevice; per platform: PlatformCapable); the planner's
// capability check (Capabilities.check) and Configure's check for callers
// that did not plan (Capabilities.Refuse) are each one loop over the
// registry, and so is the generated table of features and backends
// (FeatureSupport, in docs/features.md). Adding a feature: its Feature
// constant, one RegisterFeature call below, and the backends that do it
// (their mapping of Features) or cannot (their Unsupported entry); then
// 'task docs'.

// FeatureKind is one registered switch feature.
type FeatureKind struct {
	Feature Feature
	// Doc names the feature in errors: "the lab backend cannot do <Doc>:
	// <reason>".
	Doc string
	// Paths are the suite fields that configure the feature
	// ("features.pfc"; "jobs[].rate" for a field of every job).
	Paths []string
	// Line is the feature's documentation: one sentence of what it does.
	Line string
	// Default is what a suite that leaves the feature out gets.
	Default string
	// Enabled, for a feature on by default (where the backend can do it),
	// returns the suite's switch (nil: left at the default; the planner
	// then turns it off on a backend that cannot do it, with a note).
	Enabled func(*suite.Features) *bool
	// EnabledField is the suite field of that switch (for the note).
	EnabledField string
	// Asks returns the suite fields that ask for the feature, in order,
	// each with how to do without (may be ""). It is called only for a
	// backend that cannot do the feature.
	Asks func(*suite.Suite) []FeatureAsk
	// Runs, when set, reports whether a resolved run's features ask for
	// the feature, and the suite field that does (Refuse).
	Runs func(runspec.Features) (field string, on bool)
}

// FeatureAsk is a suite field that asks for a feature and how to do
// without it.
type FeatureAsk struct{ Path, Fix string }

var (
	featMu    sync.Mutex
	featKinds []FeatureKind
)

// RegisterFeature adds a feature kind. It panics on an empty name, a kind
// without Asks, suite paths, documentation line or default, or one
// registered before.
func RegisterFeature(k FeatureKind) {
	featMu.Lock()
	defer featMu.Unlock()
	if k.Feature == "" || k.Asks == nil {
		panic("harness: RegisterFeature needs a feature name and Asks")
	}
	if len(k.Paths) == 0 || k.Line == "" || k.Default == "" {
		panic(fmt.Sprintf("harness: feature %q needs its suite paths, a documentation line and its default", k.Feature))
	}
	for _, o := range featKinds {
		if o.Feature == k.Feature {
			panic(fmt.Sprintf("harness: feature %q registered twice", k.Feature))
		}
	}
	featKinds = append(featKinds, k)
}

// FeatureKinds returns the registered feature kinds in registration order.
func FeatureKinds() []FeatureKind {
	featMu.Lock()
	defer featMu.Unlock()
	return append([]FeatureKind(nil), featKinds...)
}

// FeatureKindOf returns the registered kind of f.
func FeatureKindOf(f Feature) (FeatureKind, bool) {
	for _, k := range FeatureKinds() {
		if k.Feature == f {
			return k, true
		}
	}
	return FeatureKind{}, false
}

// Refuse is Configure's check, for callers that did not plan: the first
// registered feature feat asks for (FeatureKind.Runs) and c lists as
// unsupported, as Cannot's error; nil when there is none.
func (c Capabilities) Refuse(backend string, feat runspec.Features) error {
	for _, k := range FeatureKinds() {
		if k.Runs == nil {
			continue
		}
		if field, on := k.Runs(feat); on {
			if _, no := c.Unsupported[k.Feature]; no {
				return c.Cannot(backend, field, k.Feature)
			}
		}
	}
	return nil
}

func asks(on bool, path, fix string) []FeatureAsk {
	if !on {
		return nil
	}
	return []FeatureAsk{{path, fix}}
}

// defaultOn is a feature on by default where the backend can do it,
// switched by field.enabled; on returns whether a run has it on.
func defaultOn(f Feature, doc, field, line string, get func(*suite.Features) *bool, on func(runspec.Features) bool) FeatureKind {
	return FeatureKind{
		Feature: f, Doc: doc, Enabled: get, EnabledField: field,
		Paths: []string{field}, Line: line,
		Default: "on where the backend can do it; off, with a note, where it cannot or only some devices can",
		Asks: func(s *suite.Suite) []FeatureAsk {
			b := get(&s.Features)
			return asks(b != nil && *b, field+".enabled", "set "+field+": {enabled: false}, or leave it out (off by default on this backend)")
		},
		Runs: func(ft runspec.Features) (string, bool) { return field, on(ft) },
	}
}

// The features, in the order the planner reports them.
func init() {
	// Left at their defaults, ECN and trimming follow the backend (off
	// where it cannot do them, with a note: PlanSuite).
	RegisterFeature(defaultOn(FeatECN, "ECN marking (RED/WRED)", "features.ecn",
		"RED/ECN marking (WRED) of the data queues, from kmin to kmax (fractions of the queue; 0.2 and 0.8 by default)",
		func(ft *suite.Features) *bool { return ft.ECN.Enabled }, func(f runspec.Features) bool { return f.ECN }))
	RegisterFeature(defaultOn(FeatTrimming, "packet trimming", "features.trimming",
		"a full queue trims a data packet to its headers, which still reach the receiver, instead of dropping it",
		func(ft *suite.Features) *bool { return ft.Trimming.Enabled }, func(f runspec.Features) bool { return f.Trimming }))
	RegisterFeature(FeatureKind{
		Feature: FeatPFC, Doc: "PFC",
		Paths:   []string{"features.pfc"},
		Line:    "priority flow control: the data class is lossless, a congested switch pauses its upstream ports",
		Default: "off",
		Asks: func(s *suite.Suite) []FeatureAsk {
			return asks(s.Features.PFC != nil && s.Features.PFC.Enabled, "features.pfc.enabled", "")
		},
		Runs: func(f runspec.Features) (string, bool) { return "features.pfc", f.PFC },
	})
	RegisterFeature(FeatureKind{
		Feature: FeatPFCWatchdog, Doc: "the PFC watchdog",
		Paths:   []string{"features.pfc.watchdog"},
		Line:    "the PFC watchdog: a class paused longer than detect without a resume is a storm; its queue is dropped and pauses ignored for restore",
		Default: "off",
		Asks: func(s *suite.Suite) []FeatureAsk {
			pfc := s.Features.PFC
			return asks(pfc != nil && pfc.Enabled && pfc.Watchdog != nil, "features.pfc.watchdog", "")
		},
		Runs: func(f runspec.Features) (string, bool) {
			return "features.pfc.watchdog", f.PFC && f.PFCWatchdogDetect > 0
		},
	})
	RegisterFeature(FeatureKind{
		Feature: FeatSRv6, Doc: "SRv6 path placement",
		Paths:   []string{"features.srv6", "features.srv6.paths"},
		Line:    "SRv6 micro-SID paths: the flows of a host pair, both ways, pinned to a path through the named switches",
		Default: "off: every flow follows the switches' routing",
		Asks:    func(s *suite.Suite) []FeatureAsk { return asks(s.Features.SRv6 != nil, "features.srv6", "") },
		Runs:    func(f runspec.Features) (string, bool) { return "features.srv6", f.SRv6 || len(f.SRv6Paths) > 0 },
	})
	RegisterFeature(FeatureKind{
		Feature: FeatSRv6Control, Doc: "SRv6 path control (placement, per-job or strict paths)",
		Paths:   []string{"features.srv6.placement", "features.srv6.paths[].job", "features.srv6.paths[].strict"},
		Line:    "SRv6 path control: elephants placed on the least-used spine at job start, paths for one job only, strict paths (every hop adjacent)",
		Default: "placement none; a path pins every job's flows of its pair, loosely",
		Asks: func(s *suite.Suite) []FeatureAsk {
			sr := s.Features.SRv6
			if sr == nil {
				return nil
			}
			out := asks(sr.Placement != "" && sr.Placement != suite.SRv6PlacementNone, "features.srv6.placement", "")
			for i, sp := range sr.Paths {
				if sp.Job != "" || sp.Strict {
					out = append(out, FeatureAsk{Path: fmt.Sprintf("features.srv6.paths[%d]", i)})
				}
			}
			return out
		},
	})
	RegisterFeature(FeatureKind{
		Feature: FeatVRF, Doc: "VRFs",
		Paths:   []string{"features.vrfs"},
		Line:    "VRFs: routing instances of hosts, isolated from each other unless they leak routes",
		Default: "none: every host is in VRF default",
		Asks:    func(s *suite.Suite) []FeatureAsk { return asks(len(s.Features.VRFs) > 0, "features.vrfs", "") },
		Runs:    func(f runspec.Features) (string, bool) { return "features.vrfs", len(f.VRFs) > 0 },
	})
	RegisterFeature(FeatureKind{
		Feature: FeatController, Doc: "a path controller",
		Paths:   []string{"controller.kind"},
		Line:    "a path controller during the jobs: srv6-reroute moves pairs pinned by features.srv6.paths off congested links",
		Default: "none",
		Asks: func(s *suite.Suite) []FeatureAsk {
			return asks(s.Controller != nil && s.Controller.Kind != suite.ControllerNone, "controller.kind", "")
		},
	})
	RegisterFeature(FeatureKind{
		Feature: FeatAdaptive, Doc: "adaptive routing",
		Paths:   []string{"features.ecmp.mode"},
		Line:    "switch adaptive routing (mode adaptive): per packet, the equal-cost port with the shortest queue",
		Default: "mode hash: ECMP hashing on features.ecmp.hash (the 5-tuple)",
		Asks: func(s *suite.Suite) []FeatureAsk {
			return asks(s.Features.ECMP.Mode == suite.ECMPModeAdaptive, "features.ecmp.mode", "use mode: hash")
		},
		Runs: func(f runspec.Features) (string, bool) { return "features.ecmp.mode", f.Adaptive },
	})
	RegisterFeature(FeatureKind{
		Feature: FeatFlowlet, Doc: "flowlet load balancing (DLB)",
		Paths:   []string{"features.ecmp.mode", "features.ecmp.flowlet_gap"},
		Line:    "flowlet load balancing (mode flowlet, DLB): a flow may move to another equal-cost port after an idle gap",
		Default: "mode hash: ECMP hashing on features.ecmp.hash (the 5-tuple)",
		Asks: func(s *suite.Suite) []FeatureAsk {
			return asks(s.Features.ECMP.Mode == suite.ECMPModeFlowlet, "features.ecmp.mode", "use mode: hash")
		},
		Runs: func(f runspec.Features) (string, bool) { return "features.ecmp.mode", f.Flowlet },
	})
	RegisterFeature(FeatureKind{
		Feature: FeatLowDiameter, Doc: "low-diameter routing (minimal, valiant, ugal, source-guided)",
		Paths:   []string{"features.ecmp.mode"},
		Line:    "dragonfly and slimfly routing modes: minimal, valiant, valiant-hop, ugal-l, ugal-g, source-guided, port-msb",
		Default: "mode hash: ECMP hashing on features.ecmp.hash (the 5-tuple)",
		Asks: func(s *suite.Suite) []FeatureAsk {
			m := s.Features.ECMP.Mode
			return asks(m != suite.ECMPModeAdaptive && m != suite.ECMPModeFlowlet && m != suite.ECMPModeHash, "features.ecmp.mode", "use mode: hash")
		},
		Runs: func(f runspec.Features) (string, bool) { return "features.ecmp.mode", f.LowDiameter != "" },
	})
	RegisterFeature(FeatureKind{
		Feature: FeatQueue, Doc: "per-run queue sizes",
		Paths:   []string{"features.queue"},
		Line:    "the data queue of every switch port: a size (512KiB) or longest-path (one BDP of the longest source-guided path)",
		Default: "bdp: one bandwidth-delay product of the port",
		Asks: func(s *suite.Suite) []FeatureAsk {
			return asks(!s.Features.Queue.BDP(), "features.queue", "leave it out or set bdp")
		},
		Runs: func(f runspec.Features) (string, bool) {
			return "features.queue", f.QueueBytes > 0 || f.QueueLongestPath
		},
	})
	// Per-job pacing is not a switch setting: the planner refuses it
	// (Asks); Features has no job rates, so Configure has nothing to check.
	RegisterFeature(FeatureKind{
		Feature: FeatPacing, Doc: "paced senders (jobs[].rate)",
		Paths:   []string{"jobs[].rate"},
		Line:    "senders paced at a job's offered load",
		Default: "no rate: the congestion control sets each flow's",
		Asks: func(s *suite.Suite) []FeatureAsk {
			var out []FeatureAsk
			for i, j := range s.Jobs {
				if j.Rate.IsSet() {
					out = append(out, FeatureAsk{fmt.Sprintf("jobs[%d].rate", i), "leave it out (the congestion control sets the rate)"})
				}
			}
			return out
		},
	})
	RegisterFeature(FeatureKind{
		Feature: FeatPlanes, Doc: "multi-plane hosts",
		Paths:   []string{"fabric.spec", "fabric.file"},
		Line:    "multi-plane hosts: a NIC per plane (a fabric with planes=N), load balanced across planes by transport.planes",
		Default: "one plane",
		Asks: func(s *suite.Suite) []FeatureAsk {
			f, err := s.LoadedFabric()
			if err != nil || f.NumPlanes() <= 1 {
				return nil
			}
			path := "fabric.spec"
			if s.Fabric.Spec == "" {
				path = "fabric.file"
			}
			return []FeatureAsk{{path, fmt.Sprintf("use a single-plane fabric (this one has %d planes)", f.NumPlanes())}}
		},
	})
}
