package harness_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/harness"
	_ "github.com/fabricbench/fabricbench/harness/simbackend"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

func writeSuite(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "suite.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readTelemetry reads a run's telemetry store, file relative to the
// results directory out (results.Run.Files["telemetry"]).
func readTelemetry(t *testing.T, out, file string) []telemetry.Sample {
	t.Helper()
	s, err := telemetry.ReadStore(filepath.Join(out, file))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// lastValues is the last value of every series in samples.
func lastValues(samples []telemetry.Sample) map[telemetry.Key]int64 {
	last := map[telemetry.Key]int64{}
	for _, s := range samples {
		last[s.Key()] = s.Value
	}
	return last
}

const small = `
name: det
seed: 3
fabric: {spec: "leafspine:leaves=4,spines=4,hosts_per_leaf=4"}
jobs:
  - {name: perm, workload: permutation, size: 1MiB, repetitions: 2}
  - {name: ar, workload: all-reduce, size: 4MiB, hosts: 8, start: 50us}
faults:
  - {kind: degrade, link: leaf0-spine1, fraction: 0.5, at: 30us}
kpis:
  - {metric: completed_fraction, scope: ar, min: 1}
matrix:
  transport.lb: [ops, reps]
`

// Same suite and seed: same flows and same telemetry values (timestamps
// differ only by the run epoch).
func TestRunsAreDeterministic(t *testing.T) {
	file := writeSuite(t, small)
	read := func() (*results.Results, map[string][]byte, map[string][]telemetry.Sample) {
		out := t.TempDir()
		res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: out})
		if err != nil {
			t.Fatal(err)
		}
		flows, samples := map[string][]byte{}, map[string][]telemetry.Sample{}
		for _, r := range res.Runs {
			b, err := os.ReadFile(filepath.Join(out, r.Files["flows"]))
			if err != nil {
				t.Fatal(err)
			}
			flows[r.ID] = b
			s := readTelemetry(t, out, r.Files["telemetry"])
			for i := range s {
				s[i].Time -= r.Telemetry.EpochNs
				s[i].Run = r.ID // the run tag holds the start time
			}
			samples[r.ID] = s
		}
		return res, flows, samples
	}
	r1, f1, s1 := read()
	r2, f2, s2 := read()
	if len(r1.Runs) != 2 || r1.Runs[0].ID != "lb=ops" || r1.Runs[1].ID != "lb=reps" {
		t.Fatalf("runs %+v", r1.Runs)
	}
	for id := range f1 {
		if string(f1[id]) != string(f2[id]) {
			t.Errorf("run %s: flows.csv differs between identical runs", id)
		}
		a, b := s1[id], s2[id]
		if len(a) != len(b) || len(a) == 0 {
			t.Fatalf("run %s: %d vs %d samples", id, len(a), len(b))
		}
		// Arrival order across targets may differ; compare as sets.
		count := map[telemetry.Sample]int{}
		for _, s := range a {
			count[s]++
		}
		for _, s := range b {
			count[s]--
		}
		for s, c := range count {
			if c != 0 {
				t.Fatalf("run %s: sample %+v differs (%d)", id, s, c)
			}
		}
	}
	if r1.Runs[0].Jobs[1].CompletionUs != r2.Runs[0].Jobs[1].CompletionUs {
		t.Fatal("all-reduce completion differs")
	}
	if string(f1["lb=ops"]) == string(f1["lb=reps"]) {
		t.Fatal("OPS and REPS runs gave identical flows: the matrix value was not applied")
	}
}

// Cancelling the context (Ctrl-C) stops the run, keeps what was collected
// and writes the reports.
func TestInterruptKeepsResults(t *testing.T) {
	file := writeSuite(t, `
fabric: {spec: "fattree:hosts=128,tiers=3"}
jobs:
  - {name: perm, workload: permutation, size: 8MiB, repetitions: 50}
matrix:
  transport.lb: [reps, ops]
`)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel once telemetry has reached the store.
	go func() {
		store := filepath.Join(out, "runs", "lb=reps", "telemetry.csv.gz")
		for ctx.Err() == nil {
			if st, err := os.Stat(store); err == nil && st.Size() > 15<<20 {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	res, err := harness.Run(ctx, harness.Options{SuiteFile: file, Out: out, Parallel: 1})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if res == nil || res.Status != results.Interrupted || len(res.Runs) != 2 {
		t.Fatalf("results %+v", res)
	}
	first, second := res.Runs[0], res.Runs[1]
	if first.Status != results.Interrupted || first.Telemetry.Samples == 0 || len(first.Jobs) != 1 || first.Jobs[0].Completed == 0 {
		t.Fatalf("interrupted run: %+v", first)
	}
	if second.Status != results.Skipped {
		t.Fatalf("second run %s, want skipped", second.Status)
	}
	stored, err := results.Load(out)
	if err != nil || stored.Status != results.Interrupted {
		t.Fatalf("stored results: %v %+v", err, stored)
	}
	for _, f := range []string{"junit.xml", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Fatal(err)
		}
	}
}

// A feature the backend cannot do is refused while planning, at the
// suite field with its line and column, before any run starts.
func TestUnsupportedFeatureIsRefusedAtPlan(t *testing.T) {
	file := writeSuite(t, `
fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2"}
features:
  ecmp: {hash: [src-port, dst-port]}
jobs:
  - {name: p, workload: permutation, size: 64KiB}
`)
	res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: t.TempDir()})
	var ie *harness.InputError
	want := "4:16: features.ecmp.hash: the sim backend cannot do a hash without src-ip: the simulator always hashes on src-ip and dst-ip"
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err %v, want an input error %q", err, want)
	}
	if res != nil {
		t.Fatalf("results %+v, want none: nothing may run", res)
	}
}

// features.ecmp.mode: adaptive reaches the simulator: on a permutation
// with ECMP (hash collisions on the uplinks), switch adaptive routing
// spreads every flow per packet and the slowest flow finishes sooner.
func TestAdaptiveRoutingFromSuite(t *testing.T) {
	file := writeSuite(t, `
name: ar
fabric: {spec: "leafspine:leaves=4,spines=4,hosts_per_leaf=4"}
transport: {lb: ecmp}
jobs:
  - {name: perm, workload: permutation, size: 2MiB}
matrix:
  features.ecmp.mode: [hash, adaptive]
`)
	res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: t.TempDir(), Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2 || len(res.Runs[0].Jobs) != 1 || len(res.Runs[1].Jobs) != 1 {
		t.Fatalf("runs %+v", res.Runs)
	}
	hash, ar := res.Runs[0].Jobs[0].FCTUs, res.Runs[1].Jobs[0].FCTUs
	t.Logf("max FCT: hash %.1f us, adaptive %.1f us", hash.Max, ar.Max)
	if !(ar.Max < 0.9*hash.Max) {
		t.Errorf("adaptive routing max FCT %.1f us, want well below ECMP's %.1f us", ar.Max, hash.Max)
	}
}
