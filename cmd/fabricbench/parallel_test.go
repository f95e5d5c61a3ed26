package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/results"
)

// --parallel: a matrix on the sim backend runs concurrently with one line
// per finished run and the runs in matrix order in results.json; a
// non-positive value is bad input; a backend that cannot run points
// concurrently (netns) falls back to one at a time with a notice. The
// netns case stops at a bad suite, before any namespace is made.
func TestRunParallelFlag(t *testing.T) {
	dir := t.TempDir()
	suite := writeFile(t, dir, "m.yaml", tinyFabric+`jobs:
  - {name: p, workload: permutation, size: 64KiB}
kpis:
  - {metric: completed_fraction, scope: p, min: 1}
matrix:
  transport.lb: [ecmp, ops, reps]
`)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "run", suite, "--out", out, "--parallel", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	n := 0
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "run lb=") {
			n++
		}
	}
	if n != 3 {
		t.Errorf("want 3 run lines:\n%s", stdout)
	}
	res, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range res.Runs {
		ids = append(ids, r.ID)
	}
	if strings.Join(ids, " ") != "lb=ecmp lb=ops lb=reps" {
		t.Errorf("runs %v, want matrix order", ids)
	}

	for _, v := range []string{"0", "-1"} {
		code, _, stderr := runCLI(t, "run", suite, "--out", out, "--parallel", v)
		if code != 2 || !strings.Contains(stderr, "--parallel: "+v+" is not a number of points") {
			t.Errorf("--parallel %s: exit %d, stderr %q", v, code, stderr)
		}
	}

	bad := writeFile(t, dir, "bad.yaml", tinyFabric+"jobs:\n  - {name: p, workload: nope, size: 64KiB}\n")
	code, _, stderr = runCLI(t, "run", bad, "--out", filepath.Join(dir, "bad"), "--backend", "netns", "--parallel", "4")
	if code != 2 || !strings.Contains(stderr, "note: --parallel 4: the netns backend cannot run points concurrently; running them one at a time") {
		t.Errorf("netns --parallel 4: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad", "runs")); err == nil {
		t.Error("a bad suite created a results directory")
	}
}
