package harness_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/harness"
)

// TestSpritzPresetFromSuite: preset: spritz runs on the sim backend with
// the longest-path sizing (features.queue: longest-path, queues and windows
// on the longest source-guided path), which changes the run against a
// one-BDP queue of the shortest-path fabric (features.queue: bdp); the
// sizing on a fabric that is not a dragonfly or slimfly is refused at plan.
func TestSpritzPresetFromSuite(t *testing.T) {
	file := writeSuite(t, `
name: spritz
preset: spritz
fabric: {spec: "dragonfly:p=2,a=4,h=2"}
features: {ecmp: {mode: source-guided}}
transport: {lb: spritz-spray}
jobs:
  - {name: perm, workload: permutation, size: 1MiB}
matrix:
  features.queue: [longest-path, bdp]
`)
	res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: t.TempDir(), Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2 || len(res.Runs[0].Jobs) != 1 || len(res.Runs[1].Jobs) != 1 {
		t.Fatalf("runs %+v", res.Runs)
	}
	lp, bdp := res.Runs[0].Jobs[0].FCTUs, res.Runs[1].Jobs[0].FCTUs
	t.Logf("permutation 1 MiB, spritz-spray: max FCT %.1f us with longest-path sizing, %.1f us with queue bdp", lp.Max, bdp.Max)
	if lp.Max <= 0 || lp.Max == bdp.Max {
		t.Errorf("longest-path sizing max FCT %.1f us, bdp %.1f us: want a completed run that differs", lp.Max, bdp.Max)
	}

	bad := writeSuite(t, `
fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2"}
features: {queue: longest-path}
jobs:
  - {name: perm, workload: permutation, size: 64KiB}
`)
	_, err = harness.Run(context.Background(), harness.Options{SuiteFile: bad, Out: t.TempDir(), Parallel: 1})
	if err == nil || !strings.Contains(err.Error(), "features.queue: longest-path sizes on the source-guided paths of a dragonfly or slimfly fabric") {
		t.Errorf("longest-path on a leaf-spine: err = %v", err)
	}
}
