package main

import (
	"testing"

	"github.com/fabricbench/fabricbench/results"
)

// TestDragonflySuites runs examples/suites/dragonfly.yaml (the routing
// modes on group-shift traffic) and dragonfly-spritz.yaml (the load
// balancers on source-guided routing) and dragonfly-failures.yaml (2% of
// the links down at random; Spritz and OPS): every run completes every flow,
// minimal routing is the slowest mode (>= 2x UGAL-G's max FCT), and
// spritz-spray has the shortest max FCT of the load balancers.
func TestDragonflySuites(t *testing.T) {
	maxFCT := func(suite, key string) map[string]float64 {
		dir := t.TempDir()
		code, stdout, stderr := runCLI(t, "run", suites+suite, "--out", dir, "--quiet")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", suite, code, stdout, stderr)
		}
		res, err := results.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, r := range res.Runs {
			j := r.Jobs[0]
			if j.Completed != j.Flows || j.Flows != 72 {
				t.Fatalf("%s %s: %d of %d flows completed", suite, r.ID, j.Completed, j.Flows)
			}
			out[r.Params[key]] = j.FCTUs.Max
		}
		t.Logf("%s: max FCT (us) by %s: %v", suite, key, out)
		return out
	}
	modes := maxFCT("dragonfly.yaml", "features.ecmp.mode")
	for _, m := range []string{"valiant", "ugal-l", "ugal-g", "source-guided"} {
		if modes[m] >= modes["minimal"] {
			t.Errorf("%s max FCT %.0f us not below minimal's %.0f", m, modes[m], modes["minimal"])
		}
	}
	if modes["minimal"] < 2*modes["ugal-g"] {
		t.Errorf("minimal %.0f us, want >= 2x ugal-g's %.0f", modes["minimal"], modes["ugal-g"])
	}
	// 2% of the links down (faults: kind random): Spritz and OPS finish
	// every flow (the OPS run did not end before the receivers chose
	// their ACKs' entropy and runs got a stall limit).
	fails := maxFCT("dragonfly-failures.yaml", "transport.lb")
	if len(fails) != 3 {
		t.Errorf("dragonfly-failures.yaml: runs %v, want spritz-scout, spritz-spray and ops", fails)
	}
	lbs := maxFCT("dragonfly-spritz.yaml", "transport.lb")
	for lb, v := range lbs {
		if lb != "spritz-spray" && v <= lbs["spritz-spray"] {
			t.Errorf("%s max FCT %.0f us, not above spritz-spray's %.0f", lb, v, lbs["spritz-spray"])
		}
	}
}
