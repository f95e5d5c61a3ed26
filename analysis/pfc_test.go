package analysis

import (
	"testing"

	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// withPFC adds the PFC counters of every switch port: pause frames sent
// and received and paused ns per interval from pfc(p, i).
func withPFC(f *inventory.Fabric, n int, pfc func(p, i int) (tx, rx, pausedNs int64)) []telemetry.Sample {
	var out []telemetry.Sample
	for p := range f.Ports {
		pt := &f.Ports[p]
		if !f.Nodes[pt.Node].IsSwitch() {
			continue
		}
		var ctx, crx, cns int64
		for i := 0; i <= n; i++ {
			if i > 0 {
				tx, rx, ns := pfc(p, i)
				ctx, crx, cns = ctx+tx, crx+rx, cns+ns
			}
			tm := testEpoch + int64(i)*testStep
			for _, fv := range []struct {
				field string
				v     int64
			}{{telemetry.FieldPFCPauseTx, ctx}, {telemetry.FieldPFCPauseRx, crx}, {telemetry.FieldPFCPausedNs, cns}} {
				out = append(out, telemetry.Sample{Time: tm, Target: f.Nodes[pt.Node].Name, Measurement: telemetry.MeasQueue,
					Interface: pt.Name, Queue: "q0", Field: fv.field, Value: fv.v})
			}
		}
	}
	return out
}

// A port paused by its peer for half of every interval, backlogged all
// the time and sending at half rate, served its queue at line rate while
// it could: it is the pause's victim, not a capacity culprit. The same
// signals without the paused time make it one. Its peer switch, which
// sent the pauses because its port towards a host filled, holds the
// pause tree, rooted at that port; with no culprit there the tree is
// informational (an incast receiver).
func TestPausedPortIsNotACulprit(t *testing.T) {
	f := testFabric(t)
	paused := portOf(t, f, "spine2", "leaf3") // spine2's egress towards leaf3
	leaf3In := f.Ports[paused].Peer           // leaf3's port from spine2: sends the pauses
	root := portOf(t, f, "leaf3", "host12")   // the incast receiver's port
	for _, pfcOn := range []bool{true, false} {
		rate := func(p, i int) float64 {
			switch p {
			case paused:
				return 50
			case root:
				return 100
			}
			return 60
		}
		queue := func(p, i int) (int64, int64) {
			switch p {
			case paused:
				return 200_000, 30
			case root:
				return 300_000, 50
			}
			return 4_000, 0
		}
		busy := func(p, i int) int64 {
			if p == paused || p == root {
				return testStep
			}
			return 0
		}
		pfc := func(p, i int) (int64, int64, int64) {
			if !pfcOn {
				return 0, 0, 0
			}
			switch p {
			case paused:
				return 0, 3, testStep / 2
			case leaf3In:
				return 3, 0, 0
			}
			return 0, 0, 0
		}
		samples := append(withQueues(f, 8, rate, queue, nil), withBusy(f, 8, busy)...)
		samples = append(samples, withPFC(f, 8, pfc)...)
		out := analyze(t, Input{Fabric: f, Samples: samples, EpochNs: testEpoch, LB: "reps"})
		capped := false
		for _, a := range out.Anomalies {
			capped = capped || a.Member == "spine2:"+f.Ports[paused].Name || a.Link == "leaf3-spine2" || a.Link == "spine2-leaf3"
		}
		if pfcOn {
			if capped || len(out.Anomalies) != 0 {
				t.Errorf("paused: anomalies %+v, want none", out.Anomalies)
			}
			if len(out.CongestionTrees) != 1 {
				t.Fatalf("trees %+v, want one", out.CongestionTrees)
			}
			ct := out.CongestionTrees[0]
			if ct.Root != "leaf3" || ct.Cause != results.TreeIncast || len(ct.RootHosts) != 1 || ct.RootHosts[0] != "host12" ||
				ct.PortsPaused != 1 || ct.Ports[0].Port != "spine2:"+f.Ports[paused].Name || ct.Ports[0].Hop != 1 || ct.Hops != 1 ||
				ct.PausedUs != 400 || ct.PauseFrames != 24 || ct.Anomaly != 0 {
				t.Errorf("tree %+v", ct)
			}
			if out.Metrics[MetricCongestionTrees] != 1 || out.Metrics[MetricCongestionSpread] != 1 || out.Metrics[MetricPFCPausedUs] != 400 || out.Metrics[MetricPFCPauseFrames] != 24 {
				t.Errorf("metrics %v", out.Metrics)
			}
		} else if !capped {
			t.Errorf("not paused: anomalies %+v, want spine2's port (capacity)", out.Anomalies)
		}
	}
}

// Which ports a flow may cross follows the routing: on the Dragonfly a
// flow from group 0 to group 1 crosses router0's global link to group 1
// under minimal routing, and under UGAL may also detour over a global
// link to a third group; minimal routing never takes that one.
func TestMayCrossFollowsTheRouting(t *testing.T) {
	f, err := inventory.ParseSpec("dragonfly:p=2,a=4,h=2")
	if err != nil {
		t.Fatal(err)
	}
	src, _ := f.NodeByName("host0") // router0, group 0
	dst, _ := f.NodeByName("host9") // router4, group 1
	direct := portOf(t, f, "router0", "router4")
	detour := portOf(t, f, "router0", "router8") // to group 2
	for _, c := range []struct {
		routing        string
		direct, detour bool
	}{
		{RoutingMinimal, true, false},
		{"ugal-l", true, true},
		{"source-guided", true, true},
	} {
		a := newAnalyzer(Input{Fabric: f, Routing: c.routing}, Options{})
		if a.mayCross(src, dst, direct) != c.direct || a.mayCross(src, dst, detour) != c.detour {
			t.Errorf("%s: may cross the direct global link %v (want %v), the detour %v (want %v)",
				c.routing, a.mayCross(src, dst, direct), c.direct, a.mayCross(src, dst, detour), c.detour)
		}
	}
	// A leaf-spine routes on shortest paths only.
	ls := testFabric(t)
	a := newAnalyzer(Input{Fabric: ls, Routing: RoutingHash}, Options{})
	h0, _ := ls.NodeByName("host0")
	h1, _ := ls.NodeByName("host1")
	up := portOf(t, ls, "leaf0", "spine0")
	if a.lowDiameter() || a.mayCross(h0, h1, up) {
		t.Errorf("leaf-spine: low diameter %v; a flow under one leaf may cross its uplink", a.lowDiameter())
	}
}
