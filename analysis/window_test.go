package analysis

import (
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/results"
)

// A fault at 500 µs in a 1 ms run: the evidence is over the faulted
// window, not averaged with the healthy half before it. The culprit's
// rate and its victim's shortfall are those of 500–1000 µs.
func TestEvidenceIsOverTheFaultWindow(t *testing.T) {
	f := testFabric(t)
	const n = 10                           // 100 µs intervals
	_, rate, queue := uplinkFault(t, f, 6) // interval 6 is 500–600 µs
	out := analyze(t, Input{Fabric: f, Samples: withQueues(f, n, rate, queue, nil), EpochNs: testEpoch, LB: "reps", Opts: Options{VictimDeviation: 0.05},
		Faults: []results.Fault{{AtUs: 500, ID: "F1", Kind: "degrade", Ports: []string{"leaf0:Ethernet5"}, Description: "degrade leaf0:Ethernet5 to 50% at 500us"}}})
	if len(out.Anomalies) != 1 {
		t.Fatalf("anomalies %+v, want leaf0:Ethernet5 alone", out.Anomalies)
	}
	a := out.Anomalies[0]
	if a.Member != "leaf0:Ethernet5" || a.StartUs != 500 || a.EndUs != 1000 {
		t.Fatalf("anomaly %s %v–%v µs, want leaf0:Ethernet5 500–1000 µs", a.Member, a.StartUs, a.EndUs)
	}
	// Over the whole run the port averaged 72.5 Gb/s; in its window 50.
	if a.Details["rate_util"] != 0.5 {
		t.Errorf("rate_util %v, want 0.5 (the window's, not the run's 0.725)", a.Details["rate_util"])
	}
	// The spine1 plane: 4 × 83.75 = 335 Gb/s vs 380 in the window (−12%);
	// over the whole run 357.5 vs 380 (−6%).
	var why string
	for _, v := range a.Victims {
		if v.Group == "plane:fabric" && v.Member == "spine1" {
			why = v.Why
		}
	}
	want := "carried 335.0 Gb/s vs group median 380.0 Gb/s (\u221212%) in the culprit's window"
	if !strings.HasPrefix(why, want) {
		t.Errorf("spine1 plane victim: %q, want prefix %q", why, want)
	}
}
