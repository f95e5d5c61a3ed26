package kpis

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/analysis"
	"github.com/fabricbench/fabricbench/results"
)

// bmwgOutput is a hand-computed run: job "ar" took 3 repetitions of 100,
// 110 and 90 us with 10 us gaps (JCT 320 us) against a roofline of 80 us
// per repetition (260 us with the gaps); its baseline ran in 256 us; it
// delivered 1000 packets, 50 out of order, and retransmitted 16.
func bmwgOutput() *analysis.Output {
	return &analysis.Output{
		Jobs: []results.Job{
			{Name: "ar", Workload: analysis.AllReduce, Flows: 6, Completed: 6, CompletionUs: 110, Repetitions: 3,
				RepetitionsUs: []float64{100, 110, 90}, JCTUs: 320, RooflineUs: 260, GapUs: 10, BaselineJCTUs: 256, GoodputGbps: 42,
				Packets: results.JobPackets{Retransmitted: 16},
				Extra: map[string]float64{"latency_p50_us": 2.5, "latency_p99_us": 7.25, "latency_p999_us": 9.5, "latency_max_us": 11,
					"delivered_packets": 1000, "ooo_packets": 50}},
			{Name: "solo", Workload: analysis.Permutation, Flows: 2, Completed: 2, CompletionUs: 50, Repetitions: 1,
				RepetitionsUs: []float64{50}, JCTUs: 50},
			{Name: "stuck", Workload: analysis.Permutation, Flows: 2, Completed: 1, CompletionUs: -1},
		},
		Coverage: analysis.Coverage{SwitchPorts: 8, SwitchPortsWithSamples: 8},
		Metrics: map[string]float64{analysis.MetricActiveGroups: 2, analysis.MetricMaxGroupMMR: 1.25,
			analysis.MetricPFCPauseFrames: 300},
	}
}

func TestBMWGKPIsHandComputed(t *testing.T) {
	// 2,000,000 packets sent, 5 dropped, 40 retransmitted over 2 ms, 1.5
	// MB of payload; 1,000,000 delivered of which 30,000 marked CE.
	extra := map[string]float64{MetricSentPackets: 2e6, MetricDroppedPkts: 5, MetricDeliveredPkts: 1e6, MetricCEPackets: 3e4,
		MetricRetxPackets: 40, MetricDurationUs: 2000, MetricPayloadBytes: 1.5e6, "loss_duration_us": 12.5}
	sdRatio := math.Sqrt((0 + 0.125*0.125 + 0.125*0.125) / 2) // ratios 1.25, 1.375, 1.125 around 1.25
	for _, c := range []struct {
		metric, scope string
		want          float64
	}{
		{"jct_us", "ar", 320},
		{"jct_ratio", "ar", 320.0 / 260},
		{"jct_ratio_sd", "ar", sdRatio},      // per-rep roofline (260-2*10)/3 = 80 us: ratios 1.25, 1.375, 1.125
		{"iteration_cv", "ar", 10.0 / 100.0}, // mean 100, sample sd 10
		{"interference_factor", "ar", 1.25},  // 320 / 256
		{"goodput_gbps", "ar", 42},
		{"latency_p50_us", "ar", 2.5},
		{"latency_p99_us", "ar", 7.25},
		{"latency_p999_us", "ar", 9.5},
		{"latency_max_us", "ar", 11},
		{"ooo_fraction", "ar", 0.05},
		{"ooo_rate_pps", "ar", 50 / 320e-6},
		{"retx_rate_per_s", "ar", 16 / 320e-6},
		{"drop_rate_ppm", "", 5 / 2.00004},   // 5 / (2e6 + 40) * 1e6
		{"ecn_marking_ratio_pct", "", 3},     // 3e4 / 1e6 * 100
		{"fabric_retx_rate_per_s", "", 2e4},  // 40 / 2 ms
		{"pfc_pause_rate_per_s", "", 1.5e5},  // 300 / 2 ms
		{"aggregate_throughput_gbps", "", 6}, // 1.5e6*8 bits / 2 ms
		{"max_group_mmr", "", 1.25},
		{"loss_duration_us", "", 12.5},
	} {
		k := Evaluate([]Spec{{Metric: c.metric, Scope: c.scope, Max: f64(1e12)}}, bmwgOutput(), extra)[0]
		if k.Verdict != results.Pass || math.Abs(k.Value-c.want) > 1e-9*math.Max(1, c.want) {
			t.Errorf("%s(%s) = %v (%s %s), want %v", c.metric, c.scope, k.Value, k.Verdict, k.Message, c.want)
		}
		if info, ok := Info(c.metric); !ok || info.Unit == "" || info.Description == "" {
			t.Errorf("%s: no unit or description", c.metric)
		}
	}
	// A bound that the value breaks fails.
	if k := Evaluate([]Spec{{Metric: "jct_ratio", Scope: "ar", Max: f64(1.15)}}, bmwgOutput(), extra)[0]; k.Verdict != results.Fail {
		t.Errorf("jct_ratio 1.23 <= 1.15: %s", k.Verdict)
	}
	// What cannot be computed is an error naming why, never a pass.
	for _, c := range []struct{ metric, scope, want string }{
		{"jct_ratio", "solo", "no roofline"},
		{"interference_factor", "solo", "no baseline"},
		{"jct_ratio_sd", "solo", "2 or more repetitions"},
		{"jct_us", "stuck", "did not complete"},
		{"latency_p99_us", "solo", "no one-way latency"},
		{"ooo_fraction", "solo", "no packet ordering"},
		{"drop_rate_ppm", "", "sent_packets is not reported"},
		{"pfc_deadlock", "", "not reported by this backend"},
	} {
		ex := extra
		if c.metric == "drop_rate_ppm" {
			ex = map[string]float64{MetricDroppedPkts: 1}
		}
		k := Evaluate([]Spec{{Metric: c.metric, Scope: c.scope, Max: f64(1e12)}}, bmwgOutput(), ex)[0]
		if k.Verdict != results.Error || !strings.Contains(k.Message, c.want) {
			t.Errorf("%s(%s): %s %q, want an error with %q", c.metric, c.scope, k.Verdict, k.Message, c.want)
		}
	}
}

func TestMeanSDAndCV(t *testing.T) {
	m, sd := MeanSD([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	// mean 5, sum of squares 32, sample variance 32/7
	if m != 5 || math.Abs(sd-math.Sqrt(32.0/7)) > 1e-12 {
		t.Errorf("MeanSD = %v, %v", m, sd)
	}
	if cv := CV([]float64{95, 105}); math.Abs(cv-math.Sqrt(50)/100) > 1e-12 {
		t.Errorf("CV = %v", cv)
	}
	if CV([]float64{3}) != 0 || CV(nil) != 0 {
		t.Error("CV of fewer than two values must be 0")
	}
}

// ECN accuracy on an ideal RED profile: buckets of 1000 bytes, kmin
// 10000, kmax 20000: bucket i (center i*1000+500) marks (center-kmin)/
// (kmax-kmin) of 1000 packets; the fit recovers the thresholds, and a
// marker that starts early is caught.
func TestECNAccuracy(t *testing.T) {
	p := &results.ECNProfile{BucketBytes: 1000, KMinBytes: 10000, KMaxBytes: 20000}
	for i := 0; i < 25; i++ {
		c := float64(i*1000 + 500)
		pr := math.Min(math.Max((c-10000)/10000, 0), 1)
		p.Seen = append(p.Seen, 1000)
		p.Marked = append(p.Marked, uint64(math.Round(pr*1000)))
	}
	kmin, kmax, below, ok := ECNAccuracy(p)
	if !ok || math.Abs(kmin-10000) > 1 || math.Abs(kmax-20000) > 1 || below != 0 {
		t.Fatalf("ECNAccuracy = %v %v %v %v, want 10000 20000 0", kmin, kmax, below, ok)
	}
	x := ECNExtras(p)
	if math.Abs(x["ecn_kmin_deviation_pct"]) > 0.01 || math.Abs(x["ecn_kmax_deviation_pct"]) > 0.01 {
		t.Errorf("deviations %v", x)
	}
	// A marker 2000 bytes early: marks below kmin, kmin 20% low.
	q := &results.ECNProfile{BucketBytes: 1000, KMinBytes: 10000, KMaxBytes: 20000}
	for i := 0; i < 25; i++ {
		c := float64(i*1000 + 500)
		pr := math.Min(math.Max((c-8000)/12000, 0), 1)
		q.Seen = append(q.Seen, 1000)
		q.Marked = append(q.Marked, uint64(math.Round(pr*1000)))
	}
	x = ECNExtras(q)
	if math.Abs(x["ecn_kmin_deviation_pct"]+20) > 0.5 || x["ecn_marks_below_kmin"] == 0 {
		t.Errorf("early marker: %v", x)
	}
	if _, _, _, ok := ECNAccuracy(&results.ECNProfile{BucketBytes: 1000, Seen: []uint64{5}, Marked: []uint64{0}}); ok {
		t.Error("no partial marking: want not ok")
	}
}

func TestNeedsTelemetry(t *testing.T) {
	for name, want := range map[string]bool{"jct_ratio": false, "drop_rate_ppm": false, "pfc_deadlock": false, "retransmitted": false,
		"pfc_pause_rate_per_s": true, "max_group_mmr": true, "drops": true, "telemetry_coverage": true} {
		if got := NeedsTelemetry(name); got != want {
			t.Errorf("NeedsTelemetry(%s) = %v, want %v", name, got, want)
		}
	}
}

// Stored recomputes KPIs from a run as results.json keeps it.
func TestStored(t *testing.T) {
	o := bmwgOutput()
	r := &results.Run{Jobs: o.Jobs, Metrics: map[string]float64{MetricDroppedPkts: 3, MetricSentPackets: 1e6, MetricRetxPackets: 0,
		analysis.MetricCoverage: 1, analysis.MetricActiveGroups: 1, analysis.MetricMaxGroupMMR: 1.5}}
	for _, c := range []struct {
		metric, scope string
		want          float64
	}{{"jct_ratio", "ar", 320.0 / 260}, {"drop_rate_ppm", "", 3}, {"max_group_mmr", "", 1.5}} {
		if v, err := Stored(c.metric, c.scope, r); err != nil || math.Abs(v-c.want) > 1e-12 {
			t.Errorf("Stored(%s) = %v, %v; want %v", c.metric, v, err, c.want)
		}
	}
	if _, err := Stored("loss_duration_us", "", r); err == nil {
		t.Error("a metric the run lacks: want an error")
	}
}

// docs/bmwg.md documents every BMWG metric.
func TestBMWGMetricsDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/bmwg.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range append(append([]metric{}, bmwgJobMetrics...), bmwgFabricMetrics...) {
		if !strings.Contains(string(b), "| `"+m.Name+"` | "+m.Scope+" | "+m.Unit+" |") {
			t.Errorf("docs/bmwg.md lacks the row of %s (%s, %s)", m.Name, m.Scope, m.Unit)
		}
	}
}
