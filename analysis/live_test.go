package analysis

import (
	"slices"
	"sort"
	"testing"

	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/telemetry"
)

// degradedUplink is leaf0:Ethernet5 at half rate with a standing, marked
// queue from interval 5 (400 µs) on, over 20 intervals, the other ports
// healthy (as in TestDegradedLeafUplinkIsTheOnlyAnomaly).
func degradedUplink(t *testing.T) ([]telemetry.Sample, int) {
	f := testFabric(t)
	bad := portOf(t, f, "leaf0", "spine1")
	rate := func(p, i int) float64 {
		if p == bad && i >= 5 {
			return 50
		}
		return 95
	}
	queue := func(p, i int) (int64, int64) {
		if p == bad && i >= 5 {
			return 100_000, 40
		}
		return 8_000, 0
	}
	return withQueues(f, 20, rate, queue, nil), bad
}

// newLive is a live analysis of f (REPS, testStep intervals) expecting
// every node of f, whose names it returns, and the extra targets.
func newLive(t *testing.T, f *inventory.Fabric, extra ...string) (*Live, []string) {
	t.Helper()
	var targets []string
	for i := range f.Nodes {
		targets = append(targets, f.Nodes[i].Name)
	}
	l, err := NewLive(Input{Fabric: f, LB: "reps"}, testStep, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	l.Expect(append(slices.Clone(targets), extra...))
	return l, targets
}

// Every anomaly carries its time to detect: the window analysis that
// first reports it. The plateau test needs MinIntervals (4) capped
// intervals, so the uplink degraded from 400 µs is reported by the window
// ending at 800 µs. Fed to Live in any order, with one switch's samples
// arriving late, the windows give the same detection at the same time
// (the watermark waits for every target), and none before the late
// switch's samples of that window arrived.
func TestLiveWindows(t *testing.T) {
	f := testFabric(t)
	samples, bad := degradedUplink(t)
	out := analyze(t, Input{Fabric: f, Samples: samples, EpochNs: testEpoch, LB: "reps"})
	if len(out.Anomalies) != 1 {
		t.Fatalf("anomalies %+v", out.Anomalies)
	}
	a := out.Anomalies[0]
	if a.Member != "leaf0:Ethernet5" || a.StartUs != 400 || a.DetectedUs != 800 || a.TimeToDetectUs != 400 || out.Metrics[MetricTimeToDetect] != 400 {
		t.Fatalf("%s from %g µs detected at %g (time to detect %g, metric %g), want leaf0:Ethernet5 from 400 detected at 800 (400)",
			a.Member, a.StartUs, a.DetectedUs, a.TimeToDetectUs, out.Metrics[MetricTimeToDetect])
	}

	// leaf0's samples arrive 6 intervals late; the others in time order.
	late := f.Nodes[f.Ports[bad].Node].Name
	arrival := func(s *telemetry.Sample) int64 {
		if s.Target == late {
			return s.Time + 6*testStep
		}
		return s.Time
	}
	feed := slices.Clone(samples)
	sort.SliceStable(feed, func(i, j int) bool { return arrival(&feed[i]) < arrival(&feed[j]) })
	l, _ := newLive(t, f)
	if l.Every() != 1 {
		t.Errorf("every %d intervals, want 1 on a small fabric", l.Every())
	}
	var got []Detection
	lateSeen := int64(0) // the latest late sample fed so far
	for i := 0; i < len(feed); i += 50 {
		batch := feed[i:min(i+50, len(feed))]
		for _, s := range batch {
			if s.Target == late {
				lateSeen = max(lateSeen, s.Time)
			}
		}
		for _, d := range l.Add(batch) {
			if d.DetectedNs > lateSeen {
				t.Errorf("window ending %d µs analysed before %s had sent it (latest %d µs)", (d.DetectedNs-testEpoch)/1000, late, (lateSeen-testEpoch)/1000)
			}
			got = append(got, d)
		}
	}
	got = append(got, l.Flush()...)
	if len(got) != 1 || got[0].Member != "leaf0:Ethernet5" || got[0].DetectedNs != testEpoch+800_000 || got[0].StartNs != testEpoch+400_000 {
		for _, d := range got {
			t.Logf("%s from %d µs detected at %d µs", d.Member, (d.StartNs-testEpoch)/1000, (d.DetectedNs-testEpoch)/1000)
		}
		t.Fatalf("live detections: want leaf0:Ethernet5 from 400 µs detected at 800 µs")
	}
	if d := l.Detections(); len(d) != 1 {
		t.Errorf("Detections %+v", d)
	}
}

// A target that sends nothing holds the windows back until it is dropped
// (or the run ends: Flush).
func TestLiveWaitsForEveryTarget(t *testing.T) {
	f := testFabric(t)
	samples, _ := degradedUplink(t)
	l, targets := newLive(t, f, "ghost")
	if d := l.Add(samples); len(d) != 0 {
		t.Fatalf("detections %+v while a target was silent", d)
	}
	l.Drop("ghost")
	if d := l.Add(nil); len(d) != 1 || d[0].DetectedNs != testEpoch+800_000 {
		t.Fatalf("after the drop: %+v", d)
	}
	if !slices.Equal(l.Waiting(), func() []string { s := slices.Clone(targets); slices.Sort(s); return s }()) {
		t.Errorf("waiting for %v", l.Waiting())
	}
}

// Samples of one series may arrive out of order; the index keeps them
// sorted, a repeated timestamp keeping the last value.
func TestIndexAdd(t *testing.T) {
	x := &Index{series: map[telemetry.Key]*Series{}}
	for _, tv := range [][2]int64{{30, 3}, {10, 1}, {20, 2}, {20, 5}, {40, 4}} {
		x.add(&telemetry.Sample{Time: tv[0], Value: tv[1], Target: "a", Field: "f"})
	}
	s := x.Get(telemetry.Key{Target: "a", Field: "f"})
	if !slices.Equal(s.T, []int64{10, 20, 30, 40}) || !slices.Equal(s.V, []int64{1, 5, 3, 4}) {
		t.Errorf("series %v %v", s.T, s.V)
	}
	if first, last, _ := x.Span(); first != 10 || last != 40 {
		t.Errorf("span %d-%d", first, last)
	}
	if LiveEvery(50_000, 64) != 16 || LiveEvery(400, 64) != 1 {
		t.Errorf("LiveEvery %d %d", LiveEvery(50_000, 64), LiveEvery(400, 64))
	}
}
