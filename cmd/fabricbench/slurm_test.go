package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/internal/slurmtest"
	"github.com/fabricbench/fabricbench/results"
)

// Flags of run --point / --slurm that mean nothing alone are bad input,
// and a point run then merged gives the run of a local run.
func TestPointFlagsAndMerge(t *testing.T) {
	dir := t.TempDir()
	suite := writeFile(t, dir, "m.yaml", tinyFabric+`jobs:
  - {name: p, workload: permutation, size: 64KiB}
kpis:
  - {metric: completed_fraction, scope: p, min: 1}
matrix:
  transport.lb: [ecmp, ops]
`)
	out := filepath.Join(dir, "pts")
	for _, args := range [][]string{
		{"run", suite, "--wait"},
		{"run", suite, "--partition", "p"},
		{"run", suite, "--point", "2", "--out", out},
		{"run", suite, "--point", "lb=x", "--out", out},
		{"run", suite, "--point", "0"},
		{"run", suite, "--point", "0", "--slurm"},
		{"run", suite, "--slurm", "--array-limit", "-1", "--dry-run"},
	} {
		if code, stdout, stderr := runCLI(t, args...); code != exitBadInput {
			t.Errorf("%q: exit %d, want 2\n%s%s", args, code, stdout, stderr)
		}
	}
	if code, stdout, stderr := runCLI(t, "run", suite, "--point", "1", "--out", out, "-q"); code != 0 {
		t.Fatalf("--point 1: exit %d\n%s%s", code, stdout, stderr)
	}
	// Point 0 was not run: merged as a run in error, exit 3.
	code, stdout, _ := runCLI(t, "merge", out)
	if code != exitInfra || !strings.Contains(stdout, "1 finished, 1 error") {
		t.Errorf("merge with a missing point: exit %d\n%s", code, stdout)
	}
	if code, stdout, stderr := runCLI(t, "run", suite, "--point", "lb=ecmp", "--out", out, "-q"); code != 0 {
		t.Fatalf("--point lb=ecmp: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runCLI(t, "merge", out); code != 0 {
		t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
	}
	local := filepath.Join(dir, "local")
	if code, stdout, stderr := runCLI(t, "run", suite, "--out", local, "-q"); code != 0 {
		t.Fatalf("local: exit %d\n%s%s", code, stdout, stderr)
	}
	compareResults(t, local, out)
	if code, _, stderr := runCLI(t, "merge", t.TempDir()); code != exitBadInput {
		t.Errorf("merge of an empty directory: exit %d (%s)", code, stderr)
	}
}

// The Slurm acceptance on a one-node cluster on loopback: --dry-run is a
// script sbatch accepts (--test-only); --slurm --wait runs a 3-point
// suite as a job array and a merge job whose results equal a local run's;
// a task cancelled while it runs (scancel JOB_1) is a run in error with
// its Slurm state and log, the other points merged.
func TestSlurm(t *testing.T) {
	cluster := slurmtest.Start(t)
	start := time.Now()
	dir := t.TempDir()
	bin := filepath.Join(dir, "fabricbench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("cluster up and binary built in %.1f s (%s)", time.Since(start).Seconds(), cluster.Dir)
	cli := func(args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(out)
	}
	writeFile(t, dir, "s3.yaml", `name: s3
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
  transport.lb: [ecmp, ops, reps]
`)

	t.Run("dry-run", func(t *testing.T) {
		code, script := cli("run", "s3.yaml", "--slurm", "--dry-run", "--out", "sl", "--time", "10:00", "--array-limit", "2", "--partition", "debug")
		if code != 0 || !strings.HasPrefix(script, "#!/bin/bash\n") || !strings.Contains(script, "#SBATCH --array=0-2%2\n") {
			t.Fatalf("exit %d:\n%s", code, script)
		}
		path := writeFile(t, dir, "dry.sbatch", script)
		if out, err := exec.Command("sbatch", "--test-only", path).CombinedOutput(); err != nil {
			t.Errorf("sbatch --test-only: %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "sl")); err == nil {
			t.Error("--dry-run created the results directory")
		}
	})

	t.Run("submit-wait-equals-local", func(t *testing.T) {
		if code, out := cli("run", "s3.yaml", "--out", "local", "-q"); code != 0 {
			t.Fatalf("local run: exit %d\n%s", code, out)
		}
		t0 := time.Now()
		code, out := cli("run", "s3.yaml", "--slurm", "--wait", "--slurm-poll", "300ms", "--out", "sl")
		t.Logf("--slurm --wait took %.1f s:\n%s", time.Since(t0).Seconds(), out)
		if code != 0 || !strings.Contains(out, "s3: PASS — 3 runs") || !strings.Contains(out, "submitted: array job") {
			t.Fatalf("exit %d", code)
		}
		compareResults(t, filepath.Join(dir, "local"), filepath.Join(dir, "sl"))
		for _, f := range []string{"junit.xml", "report.html", "slurm/array.sbatch", "slurm/job.json"} {
			if _, err := os.Stat(filepath.Join(dir, "sl", f)); err != nil {
				t.Error(err)
			}
		}
	})

	t.Run("cancelled-task", func(t *testing.T) {
		writeFile(t, dir, "long.yaml", `name: long
fabric: {spec: "leafspine:leaves=4,spines=4,hosts_per_leaf=4"}
jobs:
  - {name: perm, workload: permutation, size: 4MiB}
kpis:
  - {metric: completed_fraction, scope: perm, min: 1}
matrix:
  jobs[0].size: [256KiB, 2GiB, 512KiB]
`)
		code, out := cli("run", "long.yaml", "--slurm", "--out", "killed")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		data, err := os.ReadFile(filepath.Join(dir, "killed", "slurm", "job.json"))
		if err != nil {
			t.Fatal(err)
		}
		var job struct {
			ArrayJob string `json:"array_job"`
			MergeJob string `json:"merge_job"`
		}
		if err := json.Unmarshal(data, &job); err != nil {
			t.Fatal(err)
		}
		task := job.ArrayJob + "_1"
		// Cancel task 1 once it has run for a moment.
		deadline := time.Now().Add(30 * time.Second)
		for {
			out, _ := exec.Command("squeue", "-h", "-j", task, "-o", "%T").Output()
			if strings.TrimSpace(string(out)) == "RUNNING" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("task %s not running after 30 s: %q", task, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
		if out, err := exec.Command("scancel", task).CombinedOutput(); err != nil {
			t.Fatalf("scancel %s: %v %s", task, err, out)
		}
		// The merge job runs after the array, whatever its tasks did.
		for {
			out, _ := exec.Command("squeue", "-h", "-j", job.ArrayJob+","+job.MergeJob).Output()
			if strings.TrimSpace(string(out)) == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("jobs still queued after 30 s:\n%s", out)
			}
			time.Sleep(200 * time.Millisecond)
		}
		res, err := results.Load(filepath.Join(dir, "killed"))
		if err != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "killed", "slurm", "logs", "merge_"+job.MergeJob+".out"))
			t.Fatalf("%v\nmerge log:\n%s", err, log)
		}
		if len(res.Runs) != 3 || res.Status != results.Error || results.ExitCode(res) != exitInfra {
			t.Fatalf("status %s, %d runs", res.Status, len(res.Runs))
		}
		r := res.Runs[1]
		t.Logf("cancelled point: %s: %s", r.Status, r.Error)
		if r.ID != "size=2GiB" || r.Status != results.Error || r.ErrorKind != results.ErrorInfrastructure ||
			!strings.Contains(r.Error, "Slurm task "+task+" CANCELLED") || !strings.Contains(r.Error, task+".out") {
			t.Errorf("cancelled point: %+v", r)
		}
		for _, i := range []int{0, 2} {
			if res.Runs[i].Status != results.Pass {
				t.Errorf("run %s: %s %s", res.Runs[i].ID, res.Runs[i].Status, res.Runs[i].Error)
			}
		}
	})
}

// compareResults compares two results.json but for wall-clock fields and
// run tags.
func compareResults(t *testing.T, a, b string) {
	t.Helper()
	na, nb := normalisedResults(t, a), normalisedResults(t, b)
	if !reflect.DeepEqual(na, nb) {
		ja, _ := json.Marshal(na)
		jb, _ := json.Marshal(nb)
		i := 0
		for i < len(ja) && i < len(jb) && ja[i] == jb[i] {
			i++
		}
		t.Errorf("results.json differ at byte %d:\n%s: ...%.200s\n%s: ...%.200s", i, a, ja[max(0, i-100):], b, jb[max(0, i-100):])
	}
}

func normalisedResults(t *testing.T, dir string) any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	results.StripVolatile(v)
	if fmt.Sprint(v) == "" {
		t.Fatal("empty results")
	}
	return v
}
