package harness_test

import (
	"context"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/harness/simbackend"
	"github.com/fabricbench/fabricbench/results"
)

func TestSlopeAndLeakTrend(t *testing.T) {
	// y = 2x + 1 exactly; the least-squares slope of 1, 3, 2, 4 is 0.8.
	if s := harness.Slope([]float64{1, 3, 5, 7}); s != 2 {
		t.Errorf("slope %v, want 2", s)
	}
	if s := harness.Slope([]float64{1, 3, 2, 4}); math.Abs(s-0.8) > 1e-12 {
		t.Errorf("slope %v, want 0.8", s)
	}
	flat := []*results.Resources{{Goroutines: 50, FDs: 30, HeapBytes: 8 << 20}, {Goroutines: 20, FDs: 12, HeapBytes: 4 << 20},
		{Goroutines: 21, FDs: 12, HeapBytes: 4 << 20}, {Goroutines: 20, FDs: 12, HeapBytes: 5 << 20}, {Goroutines: 21, FDs: 12, HeapBytes: 4 << 20}}
	if lt := harness.LeakTrendOf(flat); lt.Verdict != results.Pass {
		t.Errorf("flat: %+v", lt)
	}
	var growing []*results.Resources
	for i := range 5 {
		growing = append(growing, &results.Resources{Goroutines: 20 + i, FDs: 12 + 2*i, HeapBytes: 4 << 20})
	}
	if lt := harness.LeakTrendOf(growing); lt.Verdict != results.Fail || lt.GoroutinesPerRun != 1 || lt.FDsPerRun != 2 ||
		!strings.Contains(lt.Message, "goroutines grow by 1.00 per run") || !strings.Contains(lt.Message, "file descriptors grow by 2.00") {
		t.Errorf("growing: %+v", lt)
	}
	if lt := harness.LeakTrendOf(growing[:3]); lt.Verdict != results.Error {
		t.Errorf("3 runs: %+v", lt)
	}
}

// leaky is the simulator backend leaking a goroutine and an open file
// per run, as a broken agent or collector would.
type leaky struct {
	*simbackend.Backend
	stop chan struct{}
	mu   *sync.Mutex
	fs   *[]*os.File
}

func (l *leaky) RunJobs(ctx context.Context, w *runspec.Workload, progress func(harness.Progress)) (*harness.RunResult, error) {
	go func() { <-l.stop }()
	if f, err := os.Open(os.DevNull); err == nil {
		l.mu.Lock()
		*l.fs = append(*l.fs, f)
		l.mu.Unlock()
	}
	return l.Backend.RunJobs(ctx, w, progress)
}

// The leak check of a soak test: the simulator's runs leave nothing
// behind and pass; a backend that leaks a goroutine and a file per run
// fails the suite with the growth named.
func TestLeakCheck(t *testing.T) {
	stop := make(chan struct{})
	var mu sync.Mutex
	var files []*os.File
	t.Cleanup(func() {
		close(stop)
		for _, f := range files {
			f.Close()
		}
	})
	harness.Register("leaky-sim", func() harness.Backend {
		return &leaky{Backend: simbackend.New(), stop: stop, mu: &mu, fs: &files}
	})
	file := writeSuite(t, `
name: leak
fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2"}
telemetry: {interval: 100us}
tests:
  - name: soak
    leak_check: true
    jobs:
      - {name: ar, workload: all-reduce, size: 256KiB, repetitions: 4}
    matrix:
      seed: [1, 2, 3, 4, 5, 6]
`)
	for _, c := range []struct {
		backend string
		leaks   bool
	}{{"sim", false}, {"leaky-sim", true}} {
		res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: t.TempDir(), Backend: c.backend, Parallel: 1})
		if err != nil {
			t.Fatal(err)
		}
		lt := res.Tests[0].Leak
		if lt == nil || lt.Runs != 6 {
			t.Fatalf("%s: leak trend %+v", c.backend, lt)
		}
		t.Logf("%s: %+v", c.backend, *lt)
		switch {
		case !c.leaks && (lt.Verdict != results.Pass || res.Status != results.Pass):
			t.Errorf("%s: %s, suite %s: the harness leaks", c.backend, lt.Message, res.Status)
		case c.leaks && (lt.Verdict != results.Fail || res.Status != results.Fail || math.Abs(lt.GoroutinesPerRun-1) > 0.3 || math.Abs(lt.FDsPerRun-1) > 0.3):
			t.Errorf("%s: %+v, suite %s: want the leak found", c.backend, *lt, res.Status)
		}
	}
}
