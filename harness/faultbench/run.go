package faultbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/fabricbench/fabricbench/harness"
	_ "github.com/fabricbench/fabricbench/harness/simbackend" // the "sim" backend
)

// Run writes the scenario's suite file into dir (suite.yaml), runs it on
// the simulator with results under dir/out, and evaluates the run. An
// error that stops the run is reported in Result.Err.
func Run(ctx context.Context, s Scenario, dir string) Result {
	return RunWith(ctx, s, dir, Options{})
}

// RunWith is Run with the lab settings of opts (AgentBinary,
// LabStateRoot) for a scenario on a lab backend.
func RunWith(ctx context.Context, s Scenario, dir string, opts Options) Result {
	fail := func(format string, args ...any) Result {
		return Result{Scenario: s, Err: fmt.Sprintf(format, args...)}
	}
	f, err := Fabric(s.Fabric)
	if err != nil {
		return fail("fabric: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail("%v", err)
	}
	file := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(file, []byte(s.SuiteYAML()), 0o644); err != nil {
		return fail("%v", err)
	}
	backend := s.Backend
	if backend == "" {
		backend = "sim"
	}
	res, err := harness.Run(ctx, harness.Options{SuiteFile: file, Out: filepath.Join(dir, "out"), Backend: backend,
		AgentBinary: opts.AgentBinary, LabStateRoot: opts.LabStateRoot})
	if err != nil {
		return fail("harness: %v", err)
	}
	if res == nil || len(res.Runs) != 1 {
		n := 0
		if res != nil {
			n = len(res.Runs)
		}
		return fail("harness: %d runs, want 1", n)
	}
	return Evaluate(f, s, &res.Runs[0])
}

// Options control RunAll.
type Options struct {
	// Root is the directory the runs go under, one subdirectory per
	// scenario (named by its ID). Required.
	Root string
	// Parallel bounds the concurrent runs (default GOMAXPROCS).
	Parallel int
	// Keep keeps every run's directory; by default it is removed once
	// the run is evaluated.
	Keep bool
	// Done, when set, is called after each run (from several goroutines
	// at once).
	Done func(Result)
	// AgentBinary and LabStateRoot are harness.Options' for scenarios on
	// a lab backend (Scenario.Backend).
	AgentBinary, LabStateRoot string
}

// RunAll runs the scenarios with bounded concurrency, each in its own
// directory, and returns their results in the scenarios' order.
func RunAll(ctx context.Context, scenarios []Scenario, opts Options) []Result {
	par := opts.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	out := make([]Result, len(scenarios))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := range scenarios {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			s := scenarios[i]
			dir := filepath.Join(opts.Root, fmt.Sprintf("%03d-%s", i, s.ID))
			if ctx.Err() != nil {
				out[i] = Result{Scenario: s, Err: ctx.Err().Error()}
			} else {
				out[i] = RunWith(ctx, s, dir, opts)
			}
			if !opts.Keep {
				os.RemoveAll(dir)
			}
			if opts.Done != nil {
				opts.Done(out[i])
			}
		}(i)
	}
	wg.Wait()
	return out
}
