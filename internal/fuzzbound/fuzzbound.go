// Package fuzzbound checks the resource bounds of one parse in a fuzz
// target: that it ends within a time budget and allocates less than a
// memory budget. The budgets are generous (far above what any input
// needs on a loaded 2-core machine), so they never flake and only catch
// inputs whose cost explodes: alias bombs, quadratic loops, huge
// preallocations from a count in the input.
package fuzzbound

import (
	"runtime"
	"testing"
	"time"
)

// Default budgets for parsing one fuzz input.
const (
	Time  = 5 * time.Second
	Bytes = 512 << 20
)

// Check runs f and fails t when it takes longer than maxTime or allocates
// more than maxBytes (runtime.MemStats.TotalAlloc delta, so freed memory
// counts too).
func Check(t testing.TB, maxTime time.Duration, maxBytes uint64, f func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	f()
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if took > maxTime {
		t.Fatalf("one input took %v (budget %v)", took, maxTime)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxBytes {
		t.Fatalf("one input allocated %d bytes (budget %d)", alloc, maxBytes)
	}
}

// Default is Check with the default budgets.
func Default(t testing.TB, f func()) { Check(t, Time, Bytes, f) }
