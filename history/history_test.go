package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/results"
)

func kpi(name, op string, threshold, v float64, verdict string) results.KPI {
	return results.KPI{Name: name, Metric: name[strings.IndexByte(name, '.')+1:], Scope: "perm", Op: op, Threshold: threshold, Value: v, Verdict: verdict, Unit: "ratio"}
}

func res(started time.Time, runs ...results.Run) *results.Results {
	return &results.Results{Schema: results.Schema, Suite: "nightly", Started: started, Status: results.Fail, Runs: runs}
}

func row(t *testing.T, c *Comparison, point, name string) Row {
	t.Helper()
	for _, r := range c.Rows {
		if r.Point == point && r.KPI == name {
			return r
		}
	}
	t.Fatalf("no row %s %s in %+v", point, name, c.Rows)
	return Row{}
}

func TestCompare(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 2, 0, 0, 0, time.UTC)
	base := res(t0,
		results.Run{ID: "lb=reps", Status: results.Pass, KPIs: []results.KPI{
			kpi("perm.slowdown_p99", "<=", 1.5, 1.00, results.Pass),     // +20%: regressed (default 10%)
			kpi("perm.fct_p99_us", "<=", 500, 200, results.Pass),        // +8%: within 10%
			kpi("a2a.busbw_gbps", ">=", 60, 80, results.Pass),           // -4%: within 5%
			kpi("ar.busbw_gbps", ">=", 60, 80, results.Pass),            // -6%: regressed
			kpi("perm.p01_pair_bw", ">=", 0.5, 0.6, results.Pass),       // +10%: improved
			kpi("fabric.symmetry_anomalies", "<=", 0, 0, results.Pass),  // 0 -> 1: regressed
			kpi("fabric.stragglers", "<=", 0, 0, results.Pass),          // 0 -> 0
			kpi("incast.completion_us", "<=", 9000, 1000, results.Pass), // value -> error: regressed
			kpi("fabric.drops", "<=", 100, 10, results.Pass),            // 10 -> 13 with regress 5 (absolute): within
			kpi("perm.gone", "<=", 1, 0.5, results.Pass),                // removed
		}},
		results.Run{ID: "lb=ecmp", Status: results.Fail, KPIs: []results.KPI{kpi("perm.slowdown_p99", "<=", 1.5, 3, results.Fail)}},
	)
	nw := res(t0.Add(24*time.Hour),
		results.Run{ID: "lb=reps", Status: results.Fail, KPIs: []results.KPI{
			kpi("perm.slowdown_p99", "<=", 1.5, 1.20, results.Pass),
			kpi("perm.fct_p99_us", "<=", 500, 216, results.Pass),
			kpi("a2a.busbw_gbps", ">=", 60, 76.8, results.Pass),
			kpi("ar.busbw_gbps", ">=", 60, 75.2, results.Pass),
			kpi("perm.p01_pair_bw", ">=", 0.5, 0.66, results.Pass),
			kpi("fabric.symmetry_anomalies", "<=", 0, 1, results.Fail),
			kpi("fabric.stragglers", "<=", 0, 0, results.Pass),
			{Name: "incast.completion_us", Op: "<=", Threshold: 9000, Verdict: results.Error, Message: "job did not complete"},
			func() results.KPI { k := kpi("fabric.drops", "<=", 100, 13, results.Pass); k.Regress = "5"; return k }(),
			kpi("perm.brand_new", "<=", 1, 0.5, results.Pass),
		}},
		results.Run{ID: "lb=ops", Status: results.Pass, KPIs: []results.KPI{kpi("perm.slowdown_p99", "<=", 1.5, 1.1, results.Pass)}},
	)
	c := Compare("base", base, "new", nw)
	want := map[string]string{
		"perm.slowdown_p99":         Regressed,
		"perm.fct_p99_us":           Unchanged,
		"a2a.busbw_gbps":            Unchanged,
		"ar.busbw_gbps":             Regressed,
		"perm.p01_pair_bw":          Improved,
		"fabric.symmetry_anomalies": Regressed,
		"fabric.stragglers":         Unchanged,
		"incast.completion_us":      Regressed,
		"fabric.drops":              Unchanged,
		"perm.brand_new":            New,
		"perm.gone":                 Removed,
	}
	for name, st := range want {
		if r := row(t, c, "lb=reps", name); r.Status != st {
			t.Errorf("%s: %s (%+v), want %s", name, r.Status, r, st)
		}
	}
	if r := row(t, c, "lb=reps", "perm.slowdown_p99"); r.Rel == nil || *r.Rel < 0.199 || *r.Rel > 0.201 || r.Tolerance != "10% (default)" {
		t.Errorf("slowdown row %+v", r)
	}
	if r := row(t, c, "lb=reps", "fabric.drops"); r.Tolerance != "5" {
		t.Errorf("drops tolerance %q, want the suite's 5", r.Tolerance)
	}
	if r := row(t, c, "lb=reps", "fabric.symmetry_anomalies"); r.Note != "passed before, fails now" {
		t.Errorf("anomalies note %q", r.Note)
	}
	if r := row(t, c, "lb=ops", "perm.slowdown_p99"); r.Status != New {
		t.Errorf("new point: %+v", r)
	}
	if r := row(t, c, "lb=ecmp", "perm.slowdown_p99"); r.Status != Removed {
		t.Errorf("removed point: %+v", r)
	}
	if strings.Join(c.PointsAdded, ",") != "lb=ops" || strings.Join(c.PointsRemoved, ",") != "lb=ecmp" {
		t.Errorf("points added %v removed %v", c.PointsAdded, c.PointsRemoved)
	}
	s := c.Summary
	if s.Regressed != 4 || s.Improved != 1 || s.Unchanged != 4 || s.New != 2 || s.Removed != 2 || s.Rows != 13 || !c.HasRegression() {
		t.Errorf("summary %+v", s)
	}
	// Same results: nothing regressed.
	if c := Compare("a", base, "b", base); c.HasRegression() || c.Summary.Unchanged != c.Summary.Rows {
		t.Errorf("a run against itself: %+v", c.Summary)
	}
}

func TestSaveLoadLatestIn(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2025, 1, 1, 2, 0, 0, 0, time.UTC)
	good := res(t0, results.Run{ID: "p", Status: results.Fail, KPIs: []results.KPI{kpi("perm.x", "<=", 1, 1, results.Pass)}})
	save := func(name string, r *results.Results) string {
		d := filepath.Join(root, name)
		if err := results.Save(d, r); err != nil {
			t.Fatal(err)
		}
		return d
	}
	d1 := save("n1", good)
	later := *good
	later.Started = t0.Add(time.Hour)
	d2 := save("n2", &later)
	// n2 regressed against n1: not a baseline.
	c := Compare(d1, good, d2, &later)
	c.Summary.Regressed = 1
	if err := Save(d2, c); err != nil {
		t.Fatal(err)
	}
	if got, err := Load(d2); err != nil || !got.HasRegression() {
		t.Fatalf("Load: %v %v", got, err)
	}
	errored := *good
	errored.Started = t0.Add(2 * time.Hour)
	errored.Runs = []results.Run{{ID: "p", Status: results.Error}}
	save("n3", &errored)
	other := *good
	other.Suite, other.Started = "smoke", t0.Add(3*time.Hour)
	save("n4", &other)
	mine := *good
	mine.Started = t0.Add(4 * time.Hour)
	d5 := save("n5", &mine)
	if got, err := LatestIn(root, "nightly", d5); err != nil || got != d1 {
		t.Errorf("LatestIn = %q, %v; want %s (n2 regressed, n3 errored, n4 another suite, n5 excluded)", got, err, d1)
	}
	if _, err := LatestIn(root, "absent", ""); err == nil || !strings.Contains(err.Error(), "no results of suite") {
		t.Errorf("LatestIn of an unknown suite: %v", err)
	}
	// LoadDirs: a folder of results stands for its subdirectories, ordered by start.
	nights, err := LoadDirs([]string{root})
	if err != nil || len(nights) != 5 || nights[4].Dir != d5 {
		t.Fatalf("LoadDirs: %d nights, %v", len(nights), err)
	}
	if _, err := LoadDirs([]string{filepath.Join(root, "missing")}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("LoadDirs of a missing directory: %v", err)
	}
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "x"), nil, 0o644)
	if _, err := LoadDirs([]string{empty}); err == nil || !strings.Contains(err.Error(), "is "+empty+" a fabricbench results directory") {
		t.Errorf("LoadDirs of a directory without results: %v", err)
	}
}

func TestTrend(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 2, 0, 0, 0, time.UTC)
	night := func(h int, v float64) Night {
		return Night{Dir: "n", Results: res(t0.Add(time.Duration(h)*time.Hour),
			results.Run{ID: "lb=reps", KPIs: []results.KPI{kpi("perm.slowdown_p99", "<=", 1.5, v, results.Pass)}})}
	}
	// Given out of order; the third night regressed (+30%).
	nights := []Night{night(2, 1.3), night(0, 1.0), night(1, 1.02)}
	sortNights(nights)
	tr := BuildTrend(nights)
	if len(tr.KPIs) != 1 || len(tr.KPIs[0].Lines) != 1 {
		t.Fatalf("trend %+v", tr.KPIs)
	}
	vals := tr.KPIs[0].Lines[0].Values
	if v, _ := vals[0].Number(); v != 1.0 {
		t.Errorf("first night %v, want 1.0 (ordered by start)", v)
	}
	regs := tr.Regressions()
	if len(regs) != 1 || regs[0].Night != 2 || vals[1].Row.Status != Unchanged {
		t.Errorf("regressions %+v; night 2 %q", regs, vals[1].Row.Status)
	}
}
