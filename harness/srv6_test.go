package harness_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/telemetry"
)

// features.srv6.placement reaches the simulator (issue 16 item 4): 8
// elephants between two leaves, hashed by ECMP (placement none) collide
// on some seed, placed on disjoint spines every one runs at >= 95% of line
// rate.
func TestSRv6PlacementFromSuite(t *testing.T) {
	out := t.TempDir()
	res, err := harness.Run(context.Background(), harness.Options{
		SuiteFile: filepath.Join("..", "examples", "suites", "srv6-placement.yaml"), Out: out, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 6 {
		t.Fatalf("%d runs", len(res.Runs))
	}
	slowECMP := 0
	for _, r := range res.Runs {
		p01 := 2.0
		for _, j := range r.Jobs {
			p01 = min(p01, j.P01PairBW)
		}
		t.Logf("%s: p01 pair bandwidth %.4f of line rate", r.ID, p01)
		switch {
		case strings.Contains(r.ID, "disjoint"):
			if p01 < 0.95 {
				t.Errorf("%s: p01 pair bandwidth %.4f, want >= 0.95", r.ID, p01)
			}
		case p01 < 0.95:
			slowECMP++
		}
	}
	if slowECMP == 0 {
		t.Errorf("ECMP hashing showed no collision in 3 seeds")
	}
}

// features.srv6.paths on the simulator: the lab's suite pins host0 <->
// host3 to spine1, so spine0 carries only ACKs.
func TestSRv6PathsOnSim(t *testing.T) {
	out := t.TempDir()
	res, err := harness.Run(context.Background(), harness.Options{
		SuiteFile: filepath.Join("..", "examples", "suites", "lab-srv6.yaml"), Out: out, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Runs[0]
	last := lastValues(readTelemetry(t, out, r.Files["telemetry"]))
	per := map[string]int64{}
	for k, v := range last {
		if k.Field == telemetry.FieldOutOctets && k.Measurement == telemetry.MeasInterface && strings.HasPrefix(k.Target, "spine") {
			per[k.Target] += v
		}
	}
	t.Logf("%s: %s; bytes out: %v", r.ID, r.Status, per)
	if per["spine1"] < 8<<20 || per["spine0"] > 1<<20 {
		t.Errorf("bytes out per spine %v: want both 4 MiB flows on spine1", per)
	}
}
