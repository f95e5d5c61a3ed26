package harness

import (
	"fmt"
	"os"
	"runtime"

	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/results"
)

// Limits of a leak check's slopes per run: a goroutine or a file
// descriptor left behind by every second run, or 4 MiB of heap per run.
const (
	LeakGoroutinesPerRun = 0.5
	LeakFDsPerRun        = 0.5
	LeakHeapMiBPerRun    = 4
	// leakMinRuns: runs a trend needs (the first is warm-up).
	leakMinRuns = 4
)

// sampleResources measures the harness process after a run: a garbage
// collection first, so that the heap counts what is still referenced.
func sampleResources() *results.Resources {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fds := -1
	if es, err := os.ReadDir("/proc/self/fd"); err == nil {
		fds = len(es)
	}
	return &results.Resources{Goroutines: runtime.NumGoroutine(), FDs: fds, HeapBytes: ms.HeapInuse}
}

// Slope is the least-squares slope of v against 0, 1, 2, ...
func Slope(v []float64) float64 {
	n := float64(len(v))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i, y := range v {
		x := float64(i)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

// LeakTrendOf judges the resources sampled after a test's runs, in run
// order; nil with fewer than leakMinRuns samples.
func LeakTrendOf(samples []*results.Resources) *results.LeakTrend {
	if len(samples) < leakMinRuns {
		return &results.LeakTrend{Runs: len(samples), Verdict: results.Error,
			Message: fmt.Sprintf("a leak check needs %d or more runs (sweep seed), the test has %d", leakMinRuns, len(samples))}
	}
	var g, f, h []float64
	fdsKnown := true
	for _, s := range samples[1:] { // the first run warms up pools and caches
		g = append(g, float64(s.Goroutines))
		f = append(f, float64(s.FDs))
		h = append(h, float64(s.HeapBytes)/(1<<20))
		fdsKnown = fdsKnown && s.FDs >= 0
	}
	lt := &results.LeakTrend{Runs: len(samples), GoroutinesPerRun: Slope(g), HeapMiBPerRun: Slope(h), Verdict: results.Pass}
	if fdsKnown {
		lt.FDsPerRun = Slope(f)
	}
	var why []string
	if lt.GoroutinesPerRun > LeakGoroutinesPerRun {
		why = append(why, fmt.Sprintf("goroutines grow by %.2f per run (limit %g)", lt.GoroutinesPerRun, LeakGoroutinesPerRun))
	}
	if lt.FDsPerRun > LeakFDsPerRun {
		why = append(why, fmt.Sprintf("open file descriptors grow by %.2f per run (limit %g)", lt.FDsPerRun, LeakFDsPerRun))
	}
	if lt.HeapMiBPerRun > LeakHeapMiBPerRun {
		why = append(why, fmt.Sprintf("the heap grows by %.1f MiB per run (limit %g MiB)", lt.HeapMiBPerRun, float64(LeakHeapMiBPerRun)))
	}
	if len(why) > 0 {
		lt.Verdict = results.Fail
		lt.Message = "resource leak: " + joinAnd(why)
	}
	return lt
}

func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	out := s[0]
	for _, x := range s[1 : len(s)-1] {
		out += ", " + x
	}
	return out + " and " + s[len(s)-1]
}

// finishLeakChecks judges every leak_check test over its runs' samples
// (runs in matrix order); a failed trend fails the suite through a KPI
// "resource_growth" on the test's last sampled run.
func finishLeakChecks(points []*runspec.RunSpec, runs []*results.Run, res *results.Results) {
	for ti := range res.Tests {
		t := &res.Tests[ti]
		var samples []*results.Resources
		last := -1
		leak := false
		for i, p := range points {
			if p.Test == nil || p.Test.Name != t.Name || !p.Test.LeakCheck {
				continue
			}
			leak = true
			if runs[i] != nil && runs[i].Resources != nil {
				samples = append(samples, runs[i].Resources)
				last = i
			}
		}
		if !leak {
			continue
		}
		t.Leak = LeakTrendOf(samples)
		if last >= 0 && t.Leak.Verdict != results.Pass {
			r := runs[last]
			r.KPIs = append(r.KPIs, results.KPI{Name: "harness.resource_growth", Metric: "resource_growth", Scope: "harness", Op: "<=",
				Value: t.Leak.GoroutinesPerRun, Unit: "goroutines/run", Threshold: LeakGoroutinesPerRun, Verdict: t.Leak.Verdict, Message: t.Leak.Message})
			if r.Status == results.Pass {
				r.Status = results.Fail
			}
		}
	}
}
