package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/results"
)

const mergeSuite = `
name: merge
fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=4"}
jobs:
  - {name: perm, workload: permutation, size: 256KiB}
  - {name: ar, workload: all-reduce, size: 1MiB, hosts: 4, start: 20us}
faults:
  - {kind: degrade, link: leaf0-spine1, fraction: 0.5, at: 10us}
kpis:
  - {metric: completed_fraction, scope: ar, min: 1}
  - {metric: slowdown_p99, scope: perm, max: 100}
  - {metric: telemetry_coverage, min: 1}
matrix:
  transport.lb: [ops, reps]
  seed: [1, 2]
`

// The points of a matrix run one by one (--point, by index and by ID, as
// on several machines into copies of the results directory) and merged
// give the results.json of a local run of the whole suite (but for
// timestamps, wall times and run tags), the same flows.csv and plots.json,
// and the same reports' inputs.
func TestMergeEqualsLocalRun(t *testing.T) {
	file := writeSuite(t, mergeSuite)
	local := t.TempDir()
	if _, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: local, Parallel: 2}); err != nil {
		t.Fatal(err)
	}
	merged := t.TempDir()
	pr, _, err := harness.PlanPoints(context.Background(), file, "sim")
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pr.Points {
		// Each point in its own directory, as on its own machine; then
		// copied together.
		machine := t.TempDir()
		sel := strconv.Itoa(i)
		if i%2 == 1 {
			sel = p.ID
		}
		if _, err := harness.RunPoint(context.Background(), harness.Options{SuiteFile: file, Out: machine}, sel); err != nil {
			t.Fatalf("point %s: %v", sel, err)
		}
		if _, err := os.Stat(filepath.Join(machine, results.FileName)); err == nil {
			t.Errorf("point %s wrote results.json; only merge should", sel)
		}
		// plan.json is in every copy, with the same content.
		copyMissing(t, machine, merged)
	}
	res, err := harness.Merge(merged, harness.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != results.Pass || len(res.Runs) != 4 {
		t.Fatalf("merged: %s, %d runs", res.Status, len(res.Runs))
	}
	want, got := readNormalised(t, local), readNormalised(t, merged)
	if want != got {
		i := 0
		for i < len(want) && i < len(got) && want[i] == got[i] {
			i++
		}
		t.Errorf("results.json differs at byte %d:\nlocal:  ...%.200s\nmerged: ...%.200s", i, want[max(0, i-100):], got[max(0, i-100):])
	}
	for _, r := range res.Runs {
		for _, k := range []string{"flows", "plots"} {
			a, err1 := os.ReadFile(filepath.Join(local, r.Files[k]))
			b, err2 := os.ReadFile(filepath.Join(merged, r.Files[k]))
			if err1 != nil || err2 != nil || string(a) != string(b) {
				t.Errorf("%s %s differs (%v, %v)", r.ID, k, err1, err2)
			}
		}
	}
	for _, f := range []string{"junit.xml", "report.html"} {
		if _, err := os.Stat(filepath.Join(merged, f)); err != nil {
			t.Error(err)
		}
	}
}

// A point that never ran is a run in error that says so, in its place in
// matrix order; the others are merged and the status is error (exit 3).
func TestMergeMissingPoint(t *testing.T) {
	file := writeSuite(t, mergeSuite)
	dir := t.TempDir()
	for _, sel := range []string{"0", "2", "3"} {
		if _, err := harness.RunPoint(context.Background(), harness.Options{SuiteFile: file, Out: dir}, sel); err != nil {
			t.Fatal(err)
		}
	}
	res, err := harness.Merge(dir, harness.MergeOptions{Task: func(i int) *harness.TaskInfo {
		if i == 1 {
			return &harness.TaskInfo{State: "CANCELLED", Desc: "Slurm task 7_1 CANCELLED, log logs/7_1.out"}
		}
		return &harness.TaskInfo{State: "COMPLETED", Desc: "Slurm task 7_" + strconv.Itoa(i) + " COMPLETED"}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 4 || res.Status != results.Error || results.ExitCode(res) != results.ExitInfrastructure {
		t.Fatalf("status %s, %d runs", res.Status, len(res.Runs))
	}
	r := res.Runs[1]
	if r.ID != "lb=reps,seed=1" || r.Status != results.Error || r.ErrorKind != results.ErrorInfrastructure ||
		!strings.Contains(r.Error, "CANCELLED") || !strings.Contains(r.Error, "logs/7_1.out") {
		t.Errorf("missing point: %+v", r)
	}
	if res.Summary.RunsErrored != 1 || res.Runs[0].Status != results.Pass || res.Runs[3].Status != results.Pass {
		t.Errorf("summary %+v, runs %s %s", res.Summary, res.Runs[0].Status, res.Runs[3].Status)
	}
	if _, err := results.Load(dir); err != nil {
		t.Error(err)
	}
}

func TestPointSelection(t *testing.T) {
	file := writeSuite(t, mergeSuite)
	pr, _, err := harness.PlanPoints(context.Background(), file, "sim")
	if err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]int{"0": 0, "3": 3, "lb=reps,seed=1": 1} {
		if k, err := pr.SelectPoint(sel); err != nil || k != want {
			t.Errorf("%s: %d %v, want %d", sel, k, err, want)
		}
	}
	for _, sel := range []string{"4", "-1", "lb=x"} {
		if _, err := pr.SelectPoint(sel); err == nil {
			t.Errorf("%s: no error", sel)
		}
	}
	if _, err := harness.Merge(t.TempDir(), harness.MergeOptions{}); err == nil || !strings.Contains(err.Error(), "plan.json") {
		t.Errorf("empty directory: %v", err)
	}
}

func readNormalised(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	return normalise(t, b)
}

// copyMissing copies what src holds and dst does not.
func copyMissing(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		if _, err := os.Stat(out); err == nil {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
