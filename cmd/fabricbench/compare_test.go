package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/history"
	"github.com/fabricbench/fabricbench/report"
	"github.com/fabricbench/fabricbench/results"
)

func saveNight(t *testing.T, dir string, started time.Time, slowdown, busbw float64) {
	t.Helper()
	r := &results.Results{Suite: "nightly", Started: started, Status: results.Pass, Runs: []results.Run{{
		ID: "lb=reps", Status: results.Pass, KPIs: []results.KPI{
			{Name: "perm.slowdown_p99", Metric: "slowdown_p99", Scope: "perm", Op: "<=", Threshold: 1.5, Value: slowdown, Verdict: results.Pass, Unit: "ratio"},
			{Name: "a2a.busbw_gbps", Metric: "busbw_gbps", Scope: "a2a", Op: ">=", Threshold: 60, Value: busbw, Verdict: results.Pass, Unit: "Gb/s"},
		}}}}
	if err := results.Save(dir, r); err != nil {
		t.Fatal(err)
	}
}

// compare: exit 0 without a regression, 1 naming the regressed KPIs, 2
// for a directory that is not a results directory (naming it); trend: 0,
// and 2 likewise.
func TestCompareAndTrendExitStatus(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2025, 3, 1, 2, 0, 0, 0, time.UTC)
	n1, n2, n3 := filepath.Join(root, "n1"), filepath.Join(root, "n2"), filepath.Join(root, "n3")
	saveNight(t, n1, t0, 1.10, 80)
	saveNight(t, n2, t0.Add(24*time.Hour), 1.12, 79) // +1.8%, -1.3%: within tolerance
	saveNight(t, n3, t0.Add(48*time.Hour), 1.40, 70) // +25%, -11%: regressed

	code, stdout, stderr := runCLI(t, "compare", n1, n2)
	if code != exitOK || !strings.Contains(stdout, "NO REGRESSION") {
		t.Errorf("compare n1 n2: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "compare", n2, n3)
	if code != exitFail || !strings.Contains(stderr, "2 KPIs regressed") || !strings.Contains(stderr, "perm.slowdown_p99 [lb=reps]") || !strings.Contains(stderr, "a2a.busbw_gbps [lb=reps]") {
		t.Errorf("compare n2 n3: exit %d, want 1 naming both KPIs\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "REGRESSED [lb=reps] perm.slowdown_p99: 1.12 → 1.4 (+0.28, +25%, tolerance 10% (default)) regressed") {
		t.Errorf("compare output:\n%s", stdout)
	}
	for _, f := range []string{history.FileName, report.CompareHTMLFile, report.CompareJUnitFile} {
		if _, err := os.Stat(filepath.Join(n3, f)); err != nil {
			t.Errorf("compare wrote no %s into NEW: %v", f, err)
		}
	}
	junit, _ := os.ReadFile(filepath.Join(n3, report.CompareJUnitFile))
	if !strings.Contains(string(junit), `failures="2"`) {
		t.Errorf("compare.xml has not 2 failures:\n%s", junit)
	}
	notResults := t.TempDir()
	code, _, stderr = runCLI(t, "compare", notResults, n3)
	if code != exitBadInput || !strings.Contains(stderr, notResults) {
		t.Errorf("compare of a non-results dir: exit %d, stderr %q; want 2 naming %s", code, stderr, notResults)
	}
	code, _, stderr = runCLI(t, "compare", n1)
	if code != exitBadInput || !strings.Contains(stderr, "usage: fabricbench compare BASE NEW") {
		t.Errorf("compare with one argument: exit %d, %q", code, stderr)
	}

	out := t.TempDir()
	code, stdout, stderr = runCLI(t, "trend", n3, root+string(filepath.Separator)+"n1", n2, "--out", out)
	if code != exitOK {
		t.Fatalf("trend: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"3 nights", "night 1 2025-03-01", "night 3 2025-03-03", "night 3 REGRESSED [lb=reps] perm.slowdown_p99", "night 3 REGRESSED [lb=reps] a2a.busbw_gbps"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("trend output lacks %q:\n%s", want, stdout)
		}
	}
	page, err := os.ReadFile(filepath.Join(out, report.TrendHTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), `<svg role="img" class="plot"`); n != 2 {
		t.Errorf("trend.html has %d plots, want one per KPI (2)", n)
	}
	// A folder of nights stands for its results subdirectories.
	code, stdout, _ = runCLI(t, "trend", root, "--out", out)
	if code != exitOK || !strings.Contains(stdout, "3 nights") {
		t.Errorf("trend of the folder: exit %d\n%s", code, stdout)
	}
	code, _, stderr = runCLI(t, "trend", n1, notResults)
	if code != exitBadInput || !strings.Contains(stderr, notResults) {
		t.Errorf("trend with a non-results dir: exit %d, %q", code, stderr)
	}
}

// The acceptance of issue 15 on a small suite: three nights on the
// simulator, the third with a degraded uplink; the suite's baseline is
// the latest good night. The third night fails against its baseline
// (exit 1, the regressed KPIs named, shown in report.html and junit.xml),
// compare exits 1 naming them, and trend plots the three nights.
func TestNightlyBaselineCompareTrend(t *testing.T) {
	root := t.TempDir()
	nights := filepath.Join(root, "nights")
	suite := `name: mini-nightly
baseline: latest-in nights
fabric: {spec: "leafspine:leaves=4,spines=4,hosts_per_leaf=4,gbps=100"}
telemetry: {interval: 100us}
jobs:
  - {name: perm, workload: permutation, size: 2MiB}
kpis:
  - {metric: slowdown_p99, scope: perm, max: 5}
  - {metric: fct_p99_us, scope: perm, max: 5000, regress: 20%}
  - {metric: completed_fraction, scope: perm, min: 1}
matrix:
  transport.lb: [ops, reps]
`
	good := filepath.Join(root, "nightly.yaml")
	bad := filepath.Join(root, "nightly-bad.yaml")
	os.WriteFile(good, []byte(suite), 0o644)
	os.WriteFile(bad, []byte(suite+"faults:\n  - {kind: degrade, port: leaf1:Ethernet5, fraction: 0.25, at: 0}\n"), 0o644)
	run := func(file, name string) (int, string, string) {
		t.Helper()
		return runCLI(t, "run", file, "--out", filepath.Join(nights, name), "--quiet", "--parallel", "2")
	}
	code, stdout, stderr := run(good, "n1")
	if code != exitOK || !strings.Contains(stdout, "note: no baseline to compare with") {
		t.Fatalf("night 1: exit %d, want 0 and no baseline yet\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = run(good, "n2")
	if code != exitOK || !strings.Contains(stdout, "baseline: ") || !strings.Contains(stdout, "NO REGRESSION") {
		t.Fatalf("night 2: exit %d, want 0 against night 1\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = run(bad, "n3")
	n2, n3 := filepath.Join(nights, "n2"), filepath.Join(nights, "n3")
	if code != exitFail || !strings.Contains(stderr, "regressed against "+n2) || !strings.Contains(stderr, "perm.fct_p99_us [lb=") {
		t.Fatalf("night 3: exit %d, want 1 naming the regressed KPIs against night 2\n%s%s", code, stdout, stderr)
	}
	page, _ := os.ReadFile(filepath.Join(n3, report.HTMLFile))
	junit, _ := os.ReadFile(filepath.Join(n3, report.JUnitFile))
	if !strings.Contains(string(page), "Against the baseline") || !strings.Contains(string(page), "REGRESSED") || !strings.Contains(string(page), `id="matrix"`) {
		t.Errorf("report.html of night 3 shows no baseline regression or no matrix table")
	}
	if !strings.Contains(string(junit), "mini-nightly.baseline") || !strings.Contains(string(junit), `type="regression"`) {
		t.Errorf("junit.xml of night 3 has no failing baseline suite")
	}
	// A night that regressed is not a baseline for the next.
	if got, err := history.LatestIn(nights, "mini-nightly", ""); err != nil || got != n2 {
		t.Errorf("LatestIn after night 3 = %q, %v; want %s", got, err, n2)
	}
	code, stdout, stderr = runCLI(t, "compare", filepath.Join(nights, "n1"), n3, "--out", t.TempDir())
	if code != exitFail || !strings.Contains(stderr, "perm.fct_p99_us [lb=") {
		t.Errorf("compare n1 n3: exit %d, want 1 naming perm.fct_p99_us\n%s%s", code, stdout, stderr)
	}
	t.Logf("compare n1 n3:\n%s", stdout)
	code, stdout, stderr = runCLI(t, "trend", nights)
	if code != exitOK || !strings.Contains(stdout, "3 nights") || !strings.Contains(stdout, "night 3 REGRESSED") {
		t.Fatalf("trend: exit %d\n%s%s", code, stdout, stderr)
	}
	t.Logf("trend:\n%s", stdout)
	tp, _ := os.ReadFile(filepath.Join(n3, report.TrendHTMLFile))
	if n := strings.Count(string(tp), `<svg role="img" class="plot"`); n != 3 {
		t.Errorf("trend.html has %d plots, want 3 (one per KPI)", n)
	}
}
