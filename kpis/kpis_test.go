package kpis

import (
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/analysis"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
)

func f64(v float64) *float64 { return &v }

func testOutput() *analysis.Output {
	return &analysis.Output{
		Jobs: []results.Job{
			{Name: "ar", Workload: analysis.AllReduce, Flows: 24, Completed: 24, CompletionUs: 100, AlgBWGbps: 80, BusBWGbps: 71.2,
				FCTUs: results.Quantiles{Min: 10, P50: 12, P99: 20, Max: 21}, Slowdown: results.Quantiles{Min: 1, P50: 1.2, P99: 2, Max: 2.1},
				P01PairBW: 0.91, Packets: results.JobPackets{Retransmitted: 3, Timeouts: 1}},
			{Name: "stuck", Workload: analysis.Permutation, Flows: 4, Completed: 3, CompletionUs: -1,
				FCTUs: results.Quantiles{Min: 10, P50: 12, P99: 20, Max: 21}},
			{Name: "none", Workload: analysis.Permutation, Flows: 4, CompletionUs: -1},
		},
		Coverage: analysis.Coverage{SwitchPorts: 48, SwitchPortsWithSamples: 48, NICs: 16, NICsWithSamples: 16},
		Metrics: map[string]float64{
			analysis.MetricSymmetryAnomalies: 1, analysis.MetricStragglers: 0, analysis.MetricMaxGroupCV: 0.12,
			analysis.MetricActiveGroups: 13, analysis.MetricCoverage: 1, analysis.MetricDrops: 7, analysis.MetricTrims: 0, analysis.MetricECNMarked: 5000,
		},
	}
}

func TestEvaluate(t *testing.T) {
	specs := []Spec{
		{Metric: "busbw_gbps", Scope: "ar", Min: f64(80)},                      // fail
		{Name: "ar-fast", Metric: "fct_p99_us", Scope: "ar", Max: f64(20)},     // pass (equal)
		{Metric: "completion_us", Scope: "stuck", Max: f64(1000)},              // error: unfinished
		{Metric: "completed_fraction", Scope: "stuck", Min: f64(1)},            // fail
		{Metric: "slowdown_p99", Scope: "stuck", Max: f64(3)},                  // error: no ideal
		{Metric: "fct_p50_us", Scope: "none", Max: f64(3)},                     // error: nothing finished
		{Metric: "symmetry_anomalies", Max: f64(0)},                            // fail
		{Metric: "max_group_cv", Scope: "fabric", Max: f64(0.2)},               // pass
		{Metric: "drops", Max: f64(0)},                                         // pass: overridden by extra
		{Metric: "retransmitted", Max: f64(10)},                                // fail: from extra
		{Metric: "nonsense", Max: f64(1)},                                      // error: unknown
		{Metric: "busbw_gbps", Scope: "ar", Min: f64(1), Max: f64(2)},          // error: both bounds
		{Metric: "p01_pair_bw", Scope: "ar", Min: f64(0.9)},                    // pass
		{Metric: "ecn_marked", Max: f64(1e4)},                                  // pass
		{Metric: "fct_max_us", Scope: "ar", Max: f64(20.5)},                    // fail
		{Metric: "telemetry_coverage", Scope: "fabric", Min: f64(0.99)},        // pass
		{Metric: "timeouts", Scope: "ar", Max: f64(0)},                         // fail
		{Metric: "completion_us", Scope: "ar", Max: f64(99.9)},                 // fail
		{Metric: "slowdown_max", Scope: "ar", Max: f64(2.1)},                   // pass
		{Metric: "retransmissions", Scope: "ar", Max: f64(3)},                  // pass
		{Metric: "algbw_gbps", Scope: "stuck", Min: f64(1)},                    // error: unfinished
		{Metric: "stragglers", Scope: "ar", Max: f64(0)},                       // error: wrong scope
		{Metric: "busbw_gbps", Scope: "ghost", Min: f64(1)},                    // error: unknown job
		{Metric: "ecn_marked", Scope: "", Min: f64(1e4)},                       // fail, big number
		{Name: "x", Metric: "completed_fraction", Scope: "ar", Min: f64(1)},    // pass
		{Name: "y", Metric: "completed_fraction", Scope: "stuck", Max: f64(1)}, // pass
		{Metric: "busbw_GBps", Scope: "ar", Min: f64(10)},                      // fail: 71.2 Gb/s is 8.9 GB/s
		{Metric: "algbw_GBps", Scope: "ar", Min: f64(8)},                       // pass
	}
	want := []struct{ name, verdict, msg string }{
		{"ar.busbw_gbps", results.Fail, "busbw_gbps 71.2 Gb/s < 80 Gb/s (min)"},
		{"ar-fast", results.Pass, ""},
		{"stuck.completion_us", results.Error, "job did not complete (3 of 4 flows finished)"},
		{"stuck.completed_fraction", results.Fail, "completed_fraction 0.75 < 1 (min)"},
		{"stuck.slowdown_p99", results.Error, "no slowdown: the backend gave no ideal FCT model"},
		{"none.fct_p50_us", results.Error, "no finished flows (0 of 4)"},
		{"fabric.symmetry_anomalies", results.Fail, "symmetry_anomalies 1 > 0 (max)"},
		{"fabric.max_group_cv", results.Pass, ""},
		{"fabric.drops", results.Pass, ""},
		{"fabric.retransmitted", results.Fail, "retransmitted 12 packets > 10 packets (max)"},
		{"fabric.nonsense", results.Error, `unknown metric "nonsense" (job metrics: fct_p50_us,`},
		{"ar.busbw_gbps", results.Error, "metric busbw_gbps: give exactly one of max and min"},
		{"ar.p01_pair_bw", results.Pass, ""},
		{"fabric.ecn_marked", results.Pass, ""},
		{"ar.fct_max_us", results.Fail, "fct_max_us 21 µs > 20.5 µs (max)"},
		{"fabric.telemetry_coverage", results.Pass, ""},
		{"ar.timeouts", results.Fail, "timeouts 1 > 0 (max)"},
		{"ar.completion_us", results.Fail, "completion_us 100 µs > 99.9 µs (max)"},
		{"ar.slowdown_max", results.Pass, ""},
		{"ar.retransmissions", results.Pass, ""},
		{"stuck.algbw_gbps", results.Error, "job did not complete"},
		{"ar.stragglers", results.Error, `metric stragglers is fabric-wide: scope must be empty or "fabric", not "ar"`},
		{"ghost.busbw_gbps", results.Error, `unknown job "ghost" in scope (jobs: ar, none, stuck)`},
		{"fabric.ecn_marked", results.Fail, "ecn_marked 5000 packets < 10000 packets (min)"},
		{"x", results.Pass, ""},
		{"y", results.Pass, ""},
		{"ar.busbw_GBps", results.Fail, "busbw_GBps 8.9 GB/s < 10 GB/s (min)"},
		{"ar.algbw_GBps", results.Pass, ""},
	}
	got := Evaluate(specs, testOutput(), map[string]float64{"drops": 0, "retransmitted": 12})
	if len(got) != len(want) {
		t.Fatalf("%d KPIs for %d specs", len(got), len(want))
	}
	for i, w := range want {
		k := got[i]
		if k.Name != w.name || k.Verdict != w.verdict || !strings.HasPrefix(k.Message, w.msg) || (w.msg == "" && k.Message != "") {
			t.Errorf("%d: %s %s %q, want %s %s %q", i, k.Name, k.Verdict, k.Message, w.name, w.verdict, w.msg)
		}
	}
	if k := got[0]; k.Op != ">=" || k.Threshold != 80 || k.Value != 71.2 || k.Unit != "Gb/s" || k.Scope != "ar" || k.Metric != "busbw_gbps" {
		t.Errorf("KPI fields %+v", k)
	}
	if k := got[6]; k.Op != "<=" || k.Scope != "fabric" || k.Value != 1 {
		t.Errorf("KPI fields %+v", k)
	}
	if k := got[2]; k.Value != 0 {
		t.Errorf("error KPI value %v", k.Value)
	}
}

func TestCheck(t *testing.T) {
	jobs := []string{"perm", "a2a"}
	for _, c := range []struct {
		s   Spec
		err string
	}{
		{Spec{Metric: "busbw_gbps", Scope: "a2a", Min: f64(1)}, ""},
		{Spec{Metric: "drops", Max: f64(0)}, ""},
		{Spec{Metric: "drops", Scope: "fabric", Max: f64(0)}, ""},
		{Spec{Metric: "retransmitted", Max: f64(0)}, ""},
		{Spec{Metric: "busbw", Scope: "a2a", Min: f64(1)}, `unknown metric "busbw" (job metrics: fct_p50_us, fct_p99_us, fct_max_us, slowdown_p50, slowdown_p99, slowdown_max, completion_us, algbw_gbps, busbw_gbps, algbw_GBps, busbw_GBps, p01_pair_bw, completed_fraction, retransmissions, timeouts, spurious_retransmits, jct_us,`},
		{Spec{Scope: "a2a", Min: f64(1)}, "missing metric (job metrics:"},
		{Spec{Metric: "busbw_gbps", Min: f64(1)}, "metric busbw_gbps is per job: scope must name a job (jobs: a2a, perm)"},
		{Spec{Metric: "busbw_gbps", Scope: "fabric", Min: f64(1)}, "metric busbw_gbps is per job"},
		{Spec{Metric: "busbw_gbps", Scope: "nope", Min: f64(1)}, `unknown job "nope" in scope (jobs: a2a, perm)`},
		{Spec{Metric: "drops", Scope: "perm", Max: f64(0)}, `metric drops is fabric-wide: scope must be empty or "fabric", not "perm"`},
		{Spec{Metric: "drops"}, "metric drops: give exactly one of max and min"},
		{Spec{Metric: "drops", Max: f64(1), Min: f64(0)}, "metric drops: give exactly one of max and min"},
	} {
		err := Check(c.s, jobs)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%+v: %v", c.s, err)
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("%+v: error %v, want %q", c.s, err, c.err)
		}
	}
	if err := Check(Spec{Metric: "fct_p99_us", Scope: "x", Max: f64(1)}, nil); err == nil || err.Error() != `unknown job "x" in scope (the suite has no jobs)` {
		t.Errorf("no jobs: %v", err)
	}
}

func TestMetricsAreDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Metrics() {
		if seen[m.Name] || m.Unit == "" || m.Description == "" || (m.Scope != ScopeJob && m.Scope != ScopeFabric) {
			t.Errorf("metric %+v", m)
		}
		seen[m.Name] = true
	}
	// Every fabric-wide metric the analysis computes (except the
	// bookkeeping active_groups) is a KPI metric.
	out := analyzeNoTelemetry(t)
	for name := range out.Metrics {
		if !seen[name] && name != analysis.MetricActiveGroups {
			t.Errorf("analysis metric %s is not a KPI metric", name)
		}
	}
}

// analyzeNoTelemetry analyses a small leaf-spine run without jobs or
// telemetry.
func analyzeNoTelemetry(t *testing.T) *analysis.Output {
	t.Helper()
	f, err := inventory.ParseSpec("leafspine:leaves=2,spines=2,hosts_per_leaf=2")
	if err != nil {
		t.Fatal(err)
	}
	out, err := analysis.Analyze(analysis.Input{Fabric: f})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Without telemetry the telemetry-derived fabric metrics cannot be judged
// (zero anomalies would pass vacuously); coverage itself can.
func TestNoTelemetry(t *testing.T) {
	out := analyzeNoTelemetry(t)
	got := Evaluate([]Spec{
		{Metric: "symmetry_anomalies", Max: f64(0)},
		{Metric: "telemetry_coverage", Min: f64(0.9)},
		{Metric: "drops", Max: f64(0)},
		{Metric: "max_group_cv", Max: f64(0.1)},
	}, out, map[string]float64{"drops": 0})
	want := []string{results.Error, results.Fail, results.Pass, results.Error}
	for i, k := range got {
		if k.Verdict != want[i] {
			t.Errorf("%s: %s %q, want %s", k.Name, k.Verdict, k.Message, want[i])
		}
	}
	if got[0].Message != "symmetry_anomalies needs telemetry and the run has no samples" {
		t.Errorf("message %q", got[0].Message)
	}
	if k := Evaluate([]Spec{{Metric: "drops", Max: f64(0)}}, nil, nil)[0]; k.Verdict != results.Error {
		t.Errorf("nil output: %+v", k)
	}
}
