package harness

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/harness/suite"
	"github.com/fabricbench/fabricbench/results"
)

// A Need is something a suite test may need beyond its suite fields
// (suite.Test.Needs): a measurement or hardware that only some backends,
// or none, have. A test whose needs the backend does not meet is planned
// as not applicable, with the reason, and reported so; the suite's other
// tests run.
type Need struct {
	Description string
	// Lacks returns why the backend cannot meet the need, "" when it can.
	Lacks func(backend string, c Capabilities) string
}

// Needs known to the planner (suite.Test.Needs values).
const (
	// NeedOneWayDelay: one-way fabric latency of every data packet, which
	// needs the sender's and the receiver's clocks on one time base.
	NeedOneWayDelay = "one-way-delay"
	// NeedGPU: accelerators running compute kernels or training models
	// (MLPerf).
	NeedGPU = "gpu"
	// NeedUECNIC: UEC 1.0 NICs (libfabric provider, packet delivery
	// contexts, UEC transport services in hardware).
	NeedUECNIC = "uec-nic"
	// NeedCBFC: credit-based flow control (UEC link layer).
	NeedCBFC = "cbfc"
	// NeedLLR: link-layer retry (UEC link layer).
	NeedLLR = "llr"
)

// FeatOneWayDelay is the one-way delay measurement a backend may lack
// (Capabilities.Unsupported), checked for NeedOneWayDelay.
const FeatOneWayDelay Feature = "one-way-delay"

// TestNeeds are the known needs.
var TestNeeds = map[string]Need{
	NeedOneWayDelay: {
		Description: "one-way fabric latency per packet (sender and receiver clocks on one time base)",
		Lacks: func(backend string, c Capabilities) string {
			if r, no := c.Unsupported[FeatOneWayDelay]; no {
				return r
			}
			return ""
		},
	},
	NeedGPU: {
		Description: "accelerators (GPUs/XPUs) running compute kernels or training models",
		Lacks: func(backend string, c Capabilities) string {
			return "fabricbench drives the fabric with transport agents and has no accelerators: compute phases are timed gaps between collectives (category 5's synthetic JCT), and training models do not run"
		},
	},
	NeedUECNIC: {
		Description: "UEC 1.0 NICs (libfabric, packet delivery contexts, transport services in hardware)",
		Lacks: func(backend string, c Capabilities) string {
			return "the transport agents implement UET-like semantics in software (unordered delivery with selective ACKs, NSCC, trimming, entropy spraying) but not UEC 1.0 NICs: PDC set-up rates and NIC-level transport services are not measured"
		},
	},
	NeedCBFC: {
		Description: "credit-based flow control (UEC link layer)",
		Lacks: func(backend string, c Capabilities) string {
			return "no backend models credit-based flow control: the simulator's link layer has PFC (per-priority pause) and a lossy class with trimming, not per-destination credits"
		},
	},
	NeedLLR: {
		Description: "link-layer retry (UEC link layer)",
		Lacks: func(backend string, c Capabilities) string {
			return "no backend models link-layer retry or bit errors: the simulator's links do not corrupt frames, the labs' veth links do not either"
		},
	},
}

// knownNeeds refuses needs the planner does not know (bad input at the
// field).
func knownNeeds() suite.CheckFunc {
	return func(s *suite.Suite, errf func(path, format string, args ...any)) {
		if s.Test == nil {
			return
		}
		for _, n := range s.Test.Needs {
			if _, ok := TestNeeds[n]; !ok {
				errf("tests", "test %s: unknown need %q (known: %s)", s.Test.Name, n, strings.Join(needNames(), ", "))
			}
		}
	}
}

func needNames() []string {
	out := make([]string, 0, len(TestNeeds))
	for n := range TestNeeds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// needsCheck reports the needs of a point's test that the backend does
// not meet.
func needsCheck(backend string, c Capabilities) suite.CheckFunc {
	return func(s *suite.Suite, errf func(path, format string, args ...any)) {
		if s.Test == nil {
			return
		}
		for _, n := range s.Test.Needs {
			nd, ok := TestNeeds[n]
			if !ok {
				continue
			}
			if why := nd.Lacks(backend, c); why != "" {
				errf("tests", "the %s backend cannot do %s (test %s needs %s): %s", backend, nd.Description, s.Test.Name, n, why)
			}
		}
	}
}

// testsOf describes a suite's tests for results.json.
func testsOf(s *suite.Suite) []results.Test {
	var out []results.Test
	for i := range s.Tests {
		t := &s.Tests[i]
		rt := results.Test{Name: t.Name, Section: t.Section, Title: t.Title, Needs: t.Needs}
		if t.Primary != nil {
			rt.PrimaryMetric, rt.PrimaryScope = t.Primary.Metric, t.Primary.Scope
		}
		if t.Search != nil {
			rt.SearchKey = t.Search.Key
			for _, v := range t.Matrix[t.Search.Key] {
				rt.SearchValues = append(rt.SearchValues, fmt.Sprint(v))
			}
		}
		for k, v := range t.Reference {
			rt.ReferenceKey, rt.ReferenceValue = k, fmt.Sprint(v)
		}
		out = append(out, rt)
	}
	return out
}

// notApplicableRun is the run of a point the backend cannot do.
func notApplicableRun(p *runspec.RunSpec) *results.Run {
	return &results.Run{ID: p.ID, Test: testName(p), Params: p.Params, Seed: p.Suite.Seed, Status: results.NotApplicable,
		Error: "not applicable: " + strings.Join(p.NotApplicable, "; "), Jobs: []results.Job{}, KPIs: []results.KPI{},
		Anomalies: []results.Anomaly{}, Imbalances: []results.Imbalance{}}
}

func testName(p *runspec.RunSpec) string {
	if p.Test == nil {
		return ""
	}
	return p.Test.Name
}

// DescribeTests summarises a planned suite's tests, one line each (none
// for a suite without tests): the section, how many points run, and for a
// test the backend cannot run, why.
func DescribeTests(pl *SuitePlan) []string {
	if pl == nil || pl.Suite == nil || len(pl.Suite.Tests) == 0 {
		return nil
	}
	backend := pl.Backend
	if backend == "" {
		backend = "(no backend)"
	}
	out := []string{fmt.Sprintf("tests: %s", runspec.Plural(len(pl.Suite.Tests), "test", "tests"))}
	for i := range pl.Suite.Tests {
		t := &pl.Suite.Tests[i]
		run, na := 0, 0
		var why []string
		seen := map[string]bool{}
		for _, p := range pl.Points {
			if p.Test == nil || p.Test.Name != t.Name {
				continue
			}
			if len(p.NotApplicable) == 0 {
				run++
				continue
			}
			na++
			for _, r := range p.NotApplicable {
				if !seen[r] {
					seen[r] = true
					why = append(why, r)
				}
			}
		}
		head := "  " + t.Name
		if t.Section != "" {
			head += " [" + t.Section + "]"
		}
		switch {
		case na == 0 && t.Search != nil:
			out = append(out, fmt.Sprintf("%s: binary search over %s (%d values): runs at most %d points", head, t.Search.Key, run, searchProbes(run)))
		case na == 0:
			out = append(out, fmt.Sprintf("%s: runs %s", head, runspec.Plural(run, "point", "points")))
		case run == 0:
			out = append(out, fmt.Sprintf("%s: NOT APPLICABLE on the %s backend: %s", head, backend, strings.Join(why, "; ")))
		default:
			out = append(out, fmt.Sprintf("%s: runs %s; %d NOT APPLICABLE on the %s backend: %s", head, runspec.Plural(run, "point", "points"), na, backend, strings.Join(why, "; ")))
		}
	}
	return out
}

// searchProbes is how many points a binary search over n values runs at
// most.
func searchProbes(n int) int {
	k := 0
	for m := 1; m < n+1; m *= 2 { // ceil(log2(n+1)): searchGroup.run
		k++
	}
	return max(k, 1)
}

// addJobExtras adds the backend's per-job metrics to the jobs' Extra.
func addJobExtras(jobs []results.Job, extra []map[string]float64) {
	for i := range jobs {
		if i >= len(extra) || len(extra[i]) == 0 {
			continue
		}
		if jobs[i].Extra == nil {
			jobs[i].Extra = map[string]float64{}
		}
		for k, v := range extra[i] {
			jobs[i].Extra[k] = v
		}
	}
}
