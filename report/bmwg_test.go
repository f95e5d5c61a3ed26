package report

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/results"
)

// bmwgResults: test "lat" ran twice (seeds 1 and 2) with a probe P99 of
// 10 and 12 us (mean 11, sample SD sqrt(2), CV 12.9%: above 5%); test
// "soak" once with repetitions 100, 100, 100, 104 us (mean 101, sample SD
// 2, CV 1.98%); test "gpu" not applicable; test "search" settled on 30%
// with a probe failing above it.
func bmwgResults() *results.Results {
	job := func(name string, reps []float64, p99 float64) results.Job {
		return results.Job{Name: name, Flows: 1, Completed: 1, CompletionUs: 1, JCTUs: 500, RooflineUs: 400, RepetitionsUs: reps, Repetitions: len(reps),
			Extra: map[string]float64{"latency_p99_us": p99}}
	}
	cfg := map[string]string{"cc": "nscc", "lb": "ecmp", "ecn_kmin": "0.2", "queue_bytes": "bdp"}
	return &results.Results{Schema: results.Schema, Suite: "pack", Backend: "sim", Status: results.Pass, Started: time.Unix(0, 0).UTC(), Finished: time.Unix(60, 0).UTC(),
		DUT: &results.DUT{Kind: "simulated", Description: "sim", Devices: []results.DUTDevice{{Name: "leaf0", Role: "leaf", PortSpeed: "100 Gb/s"}}, Host: "agents"},
		Topology: &results.Topology{Description: "2 leaves", Tiers: []results.TopoTier{{Role: "spine", Nodes: []string{"spine0"}}, {Role: "leaf", Nodes: []string{"leaf0", "leaf1"}}},
			Links: []results.TopoLinks{{From: "leaf", To: "spine", Count: 2, Gbps: 100}}},
		Tests: []results.Test{
			{Name: "lat", Section: "1.2", PrimaryMetric: "latency_p99_us", PrimaryScope: "probe"},
			{Name: "soak", PrimaryMetric: "jct_us", PrimaryScope: "train"},
			{Name: "gpu", Needs: []string{"gpu"}},
			{Name: "search", SearchKey: "rate", Found: "30%", PrimaryMetric: "drop_rate_ppm", PrimaryScope: "fabric"},
		},
		Runs: []results.Run{
			{ID: "lat,seed=1", Test: "lat", Status: results.Pass, Params: map[string]string{"seed": "1", "tests": "lat"}, Config: cfg, Jobs: []results.Job{job("probe", nil, 10)}},
			{ID: "lat,seed=2", Test: "lat", Status: results.Pass, Params: map[string]string{"seed": "2", "tests": "lat"}, Config: cfg, Jobs: []results.Job{job("probe", nil, 12)}},
			{ID: "soak", Test: "soak", Status: results.Pass, Config: cfg, Jobs: []results.Job{job("train", []float64{100, 100, 100, 104}, 1)}},
			{ID: "gpu", Test: "gpu", Status: results.NotApplicable, Error: "not applicable: no accelerators"},
			{ID: "search,rate=30%", Test: "search", Status: results.Pass, Search: results.SearchPass, Params: map[string]string{"rate": "30%"}, Config: cfg,
				Metrics: map[string]float64{"dropped": 0, "sent_packets": 1000, "retransmitted": 0}},
			{ID: "search,rate=40%", Test: "search", Status: results.Fail, Search: results.SearchAbove, Params: map[string]string{"rate": "40%"}, Config: cfg,
				Metrics: map[string]float64{"dropped": 3, "sent_packets": 1000, "retransmitted": 0},
				KPIs:    []results.KPI{{Name: "fabric.drop_rate_ppm", Metric: "drop_rate_ppm", Scope: "fabric", Op: "<=", Value: 3000, Verdict: results.Fail}}},
		},
	}
}

func TestBMWGReport(t *testing.T) {
	rep := BuildBMWG(bmwgResults())
	rp := map[string]Repeatability{}
	for _, r := range rep.Repeatability {
		rp[r.Test] = r
	}
	if r := rp["lat"]; r.Iterations != 2 || math.Abs(r.Mean-11) > 1e-12 || math.Abs(r.SD-math.Sqrt2) > 1e-12 || math.Abs(r.CV-math.Sqrt2/11) > 1e-12 || r.Warning == "" {
		t.Errorf("lat repeatability %+v: want 2 iterations, mean 11, SD sqrt(2), CV 12.9%% with a warning", r)
	}
	if r := rp["soak"]; r.Iterations != 4 || math.Abs(r.CV-2.0/101) > 1e-12 || r.Warning != "" || !strings.Contains(r.Basis, "repetitions") {
		t.Errorf("soak repeatability %+v: want 4 repetitions, CV 1.98%%, no warning", r)
	}
	if r := rp["search"]; r.Iterations != 1 || r.Warning == "" {
		t.Errorf("search repeatability %+v: want one iteration and a warning", r)
	}
	byName := map[string]BMWGTest{}
	for _, tt := range rep.Tests {
		byName[tt.Name] = tt
	}
	if g := byName["gpu"]; g.Status != results.NotApplicable || g.NotApplicable != "no accelerators" {
		t.Errorf("gpu test: %s %q", g.Status, g.NotApplicable)
	}
	s := byName["search"]
	if s.Status != results.Pass || s.Found != "30%" || len(s.Rows) != 2 || s.Rows[1].Primary == nil || *s.Rows[1].Primary != 3000 {
		t.Errorf("search test: %+v", s)
	}
	anoms := strings.Join(rep.Anomalies, "\n")
	if !strings.Contains(anoms, "[gpu] not run (not applicable") || strings.Contains(anoms, "drop_rate_ppm") {
		t.Errorf("anomalies: %s (want the n/a test and not the search probe above the limit)", anoms)
	}
	md := string(rep.Markdown())
	for _, want := range []string{"## 1. DUT identification", "## 2. Test topology", "## 3. Test configuration", "## 4. Host configuration",
		"## 5. Test results", "## 6. Anomalies", "## 7. Repeatability statement", "| leaf0 | leaf |", "2 links leaf–spine at 100 Gb/s",
		"| ecn_kmin | 0.2 |", "| cc | nscc |", "Binary search over `rate`: **30%**", "12.86%", "above the 5%"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	h, err := rep.HTML()
	if err != nil || !strings.Contains(string(h), "7. Repeatability statement") || !strings.Contains(string(h), "12.86%") {
		t.Errorf("HTML: %v", err)
	}
}

// RenderBMWG writes bmwg.md, bmwg.json and the plots from a results
// directory; report.html gets the same sections.
func TestRenderBMWG(t *testing.T) {
	dir := t.TempDir()
	r := bmwgResults()
	data, _ := json.Marshal(r)
	if err := os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	md, js, err := RenderBMWG(dir)
	if err != nil {
		t.Fatal(err)
	}
	var back BMWGReport
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &back) != nil || len(back.Tests) != 4 || len(back.Repeatability) != 4 {
		t.Fatalf("bmwg.json: %v %+v", err, back)
	}
	if _, err := os.Stat(md); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "bmwg-lat.svg"))
	if err != nil || !strings.Contains(string(svg), "<svg") || !strings.Contains(string(svg), ">12.0<") {
		t.Errorf("plot: %v %s", err, svg)
	}
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	if h, _ := os.ReadFile(filepath.Join(dir, HTMLFile)); !strings.Contains(string(h), "IETF BMWG AI-fabric report") {
		t.Error("report.html lacks the BMWG sections")
	}
}
