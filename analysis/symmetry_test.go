package analysis

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

func TestGroupsOfLeafSpine(t *testing.T) {
	f := testFabric(t)
	out := analyze(t, Input{Fabric: f, Samples: synth(f, 20, func(p, i int) float64 { return 80 }), EpochNs: testEpoch})
	var names []string
	for _, g := range out.Groups {
		names = append(names, g.Name)
	}
	want := []string{
		"leaf-uplinks:leaf0", "leaf-uplinks:leaf1", "leaf-uplinks:leaf2", "leaf-uplinks:leaf3",
		"spine-downlinks:spine0", "spine-downlinks:spine1", "spine-downlinks:spine2", "spine-downlinks:spine3",
		"rail:leaf0", "rail:leaf1", "rail:leaf2", "rail:leaf3",
		"plane:fabric",
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("groups %v\nwant %v", names, want)
	}
	g := out.Groups[0]
	if !reflect.DeepEqual(g.Members, []string{"leaf0:Ethernet4", "leaf0:Ethernet5", "leaf0:Ethernet6", "leaf0:Ethernet7"}) {
		t.Errorf("leaf0 uplinks %v", g.Members)
	}
	if m := out.Groups[8].Members; !reflect.DeepEqual(m, []string{"host0", "host1", "host2", "host3"}) {
		t.Errorf("rail:leaf0 members %v", m)
	}
	if m := out.Groups[12].Members; !reflect.DeepEqual(m, []string{"spine0", "spine1", "spine2", "spine3"}) {
		t.Errorf("plane members %v", m)
	}
}

func TestGroupsOfThreeTierTree(t *testing.T) {
	f, err := inventory.ParseSpec("fattree:hosts=16")
	if err != nil {
		t.Fatal(err)
	}
	out := analyze(t, Input{Fabric: f, EpochNs: testEpoch})
	kinds := map[string]int{}
	for _, g := range out.Groups {
		kinds[g.Kind]++
	}
	// K=4: 8 ToRs, 8 aggs in 4 pods, 4 cores.
	want := map[string]int{KindLeafUplinks: 8, KindSpineDownlinks: 8, KindSpineUplinks: 8, KindCoreDownlinks: 4, KindRail: 8, KindPlane: 4}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("group kinds %v, want %v", kinds, want)
	}
	if out.Groups[len(out.Groups)-1].Name != "plane:pod3" {
		t.Errorf("last group %s", out.Groups[len(out.Groups)-1].Name)
	}
}

// (a) Perfectly uniform load: no anomalies, CV 0.
func TestUniformLoadHasNoAnomalies(t *testing.T) {
	f := testFabric(t)
	out := analyze(t, Input{Fabric: f, Samples: synth(f, 20, func(p, i int) float64 { return 80 }), EpochNs: testEpoch})
	if len(out.Anomalies) != 0 {
		t.Fatalf("anomalies on a uniform load: %+v", out.Anomalies)
	}
	for _, g := range out.Groups {
		if !g.Active || g.CV > 1e-6 || math.Abs(g.MaxMin-1) > 1e-6 || g.ActiveIntervals != 20 {
			t.Errorf("%s: active %v (%d intervals) cv %g max/min %g", g.Name, g.Active, g.ActiveIntervals, g.CV, g.MaxMin)
		}
		for _, m := range g.Means {
			want := 80e9
			if g.Kind == KindPlane {
				want = 4 * 80e9
			}
			if math.Abs(m-want) > 1e6 {
				t.Errorf("%s: mean %g, want %g", g.Name, m, want)
			}
		}
	}
	if out.Metrics[MetricMaxGroupCV] > 1e-6 || out.Metrics[MetricActiveGroups] != 13 || out.Metrics[MetricCoverage] != 1 {
		t.Errorf("metrics %v", out.Metrics)
	}
	if c := out.Coverage; c.SwitchPorts != 48 || c.SwitchPortsWithSamples != 48 || c.NICs != 16 || c.NICsWithSamples != 16 || len(c.Missing) != 0 {
		t.Errorf("coverage %+v", c)
	}
}

// (b) One leaf uplink at 50% while its peers run at 95%: exactly one
// anomaly, on that port; the spine side (whose every downlink loses the same
// share) and the rails stay quiet.
func TestDegradedLeafUplinkIsTheOnlyAnomaly(t *testing.T) {
	f := testFabric(t)
	bad := portOf(t, f, "leaf0", "spine1")
	up := func(p int) float64 {
		if p == bad {
			return 50
		}
		return 95
	}
	rate := func(p, i int) float64 {
		pt := &f.Ports[p]
		switch {
		case isHostPort(f, p):
			return 95
		case pt.Uplink:
			return up(p)
		case strings.HasPrefix(nodeName(f, p), "spine"):
			// A spine forwards an equal share of what every leaf sends it.
			sp := nodeName(f, p)
			sum := 0.0
			for _, l := range []string{"leaf0", "leaf1", "leaf2", "leaf3"} {
				sum += up(portOf(t, f, l, sp))
			}
			return sum / 4
		}
		return 95 // leaf downlinks
	}
	out := analyze(t, Input{Fabric: f, Samples: synth(f, 20, rate), EpochNs: testEpoch,
		Faults: []results.Fault{{AtUs: 0, Description: "degrade leaf0:Ethernet5 to 50%"}}})
	got := anomaliesOf(out, results.KindSymmetry)
	if !reflect.DeepEqual(got, []string{"leaf-uplinks:leaf0 leaf0:Ethernet5"}) {
		t.Fatalf("symmetry anomalies %v, want exactly leaf0:Ethernet5", got)
	}
	if nodeName(f, bad)+":"+f.Ports[bad].Name != "leaf0:Ethernet5" {
		t.Fatalf("the degraded port is %s", f.Ports[bad].Name)
	}
	a := out.Anomalies[0]
	if d := a.Details["deviation"]; math.Abs(d-45.0/95) > 0.002 {
		t.Errorf("deviation %g, want %.4f", d, 45.0/95)
	}
	if a.Details["median_gbps"] != 95 || math.Abs(a.Details["mean_gbps"]-50) > 0.01 || a.Score < 20 {
		t.Errorf("details %v score %g", a.Details, a.Score)
	}
	if !strings.Contains(a.Evidence, "leaf0:Ethernet5 carried 50.0 Gb/s vs group median 95.0 Gb/s (\u221247%) over 2.0 ms") {
		t.Errorf("evidence %q", a.Evidence)
	}
	if out.Metrics[MetricSymmetryAnomalies] != 1 {
		t.Errorf("metric %v", out.Metrics[MetricSymmetryAnomalies])
	}
	// The spine1 plane member carries 11% less than its peers: a clear
	// z-score, but below the minimum deviation.
	for _, g := range out.Groups {
		if g.Name == "plane:fabric" && (g.CV < 0.01 || g.Means[1] >= g.Means[0]) {
			t.Errorf("plane stats %+v", g)
		}
	}
	// Plot data: the group series marks the member; the fault and the
	// anomaly give the member's and the median's time series.
	gs := out.Plots.Groups[0]
	if gs.Group != "leaf-uplinks:leaf0" || !reflect.DeepEqual(gs.Anomalous, []string{"leaf0:Ethernet5"}) || len(gs.TimesUs) != 20 || gs.TimesUs[0] != 100 || gs.Gbps[1][3] != 50 {
		t.Errorf("group series %+v", gs)
	}
	var ts []string
	for _, s := range out.Plots.TimeSeries {
		ts = append(ts, s.Panel+"|"+s.Name)
	}
	if !reflect.DeepEqual(ts, []string{"leaf-uplinks:leaf0|leaf0:Ethernet5", "leaf-uplinks:leaf0|median of leaf-uplinks:leaf0"}) {
		t.Errorf("time series %v", ts)
	}
	if s := out.Plots.TimeSeries[1]; s.Gbps[5] != 95 {
		t.Errorf("median series %v", s.Gbps)
	}
	if _, err := json.Marshal(out); err != nil {
		t.Errorf("output does not marshal: %v", err)
	}
}

// (c) A spine sending more on one downlink than on the others is not an
// anomaly (high side); the same spine sending much less on one is.
func TestSpineDownlinkHighMemberIsNotAnAnomaly(t *testing.T) {
	f := testFabric(t)
	run := func(first float64) []string {
		target := portOf(t, f, "spine0", "leaf0")
		rate := func(p, i int) float64 {
			if p == target {
				return first
			}
			if nodeName(f, p) == "spine0" {
				return 83
			}
			return 83
		}
		return anomaliesOf(analyze(t, Input{Fabric: f, Samples: synth(f, 20, rate), EpochNs: testEpoch}), results.KindSymmetry)
	}
	if got := run(100); len(got) != 0 {
		t.Errorf("{100, 83, 83, 83}: anomalies %v", got)
	}
	if got := run(40); !reflect.DeepEqual(got, []string{"spine-downlinks:spine0 spine0:Ethernet0"}) {
		t.Errorf("{40, 83, 83, 83}: anomalies %v", got)
	}
	// A small shortfall scores a high z (MAD floored at 1%) but stays under
	// the minimum deviation.
	if got := run(70); len(got) != 0 {
		t.Errorf("{70, 83, 83, 83}: anomalies %v", got)
	}
}

// A member is judged over the group's active window only: idle time around
// the burst does not dilute the shortfall, and an idle fabric is not active.
func TestActiveWindow(t *testing.T) {
	f := testFabric(t)
	bad := portOf(t, f, "leaf2", "spine3")
	rate := func(p, i int) float64 {
		if i <= 30 || i > 40 {
			return 0.5 // idle: below 5% of line rate
		}
		if p == bad {
			return 40
		}
		return 90
	}
	out := analyze(t, Input{Fabric: f, Samples: synth(f, 60, rate), EpochNs: testEpoch})
	if got := anomaliesOf(out, results.KindSymmetry); !reflect.DeepEqual(got, []string{"leaf-uplinks:leaf2 leaf2:Ethernet7"}) {
		t.Fatalf("anomalies %v", got)
	}
	for _, g := range out.Groups {
		if g.Name == "leaf-uplinks:leaf2" && (g.ActiveIntervals != 10 || math.Abs(g.Means[3]-40e9) > 1e6) {
			t.Errorf("%+v", g)
		}
	}
	idle := analyze(t, Input{Fabric: f, Samples: synth(f, 20, func(p, i int) float64 { return 1 }), EpochNs: testEpoch})
	for _, g := range idle.Groups {
		if g.Active || g.CV != 0 {
			t.Errorf("idle group %+v", g)
		}
	}
	if idle.Metrics[MetricActiveGroups] != 0 {
		t.Errorf("active groups %v", idle.Metrics[MetricActiveGroups])
	}
}

// A port without samples is reported missing, excluded from its group and
// never flagged; its plot series is NoData.
func TestMissingTelemetry(t *testing.T) {
	f := testFabric(t)
	gone := portOf(t, f, "leaf1", "spine0")
	gone2 := f.Ports[gone].Peer // spine0:Ethernet1
	var samples []telemetry.Sample
	for _, s := range synth(f, 10, func(p, i int) float64 { return 90 }) {
		if s.Target == "leaf1" && s.Interface == f.Ports[gone].Name || s.Target == "spine0" && s.Interface == f.Ports[gone2].Name {
			continue
		}
		samples = append(samples, s)
	}
	out := analyze(t, Input{Fabric: f, Samples: samples, EpochNs: testEpoch})
	if len(out.Anomalies) != 0 {
		t.Fatalf("anomalies %v", out.Anomalies)
	}
	if c := out.Coverage; c.SwitchPortsWithSamples != 46 || len(c.Missing) != 2 || !slices.Contains(c.Missing, "leaf1:Ethernet4") || !slices.Contains(c.Missing, "spine0:Ethernet1") {
		t.Errorf("coverage %+v", c)
	}
	if v := out.Metrics[MetricCoverage]; v != 46.0/48 {
		t.Errorf("coverage metric %v", v)
	}
	for gi, g := range out.Groups {
		if g.Name == "leaf-uplinks:leaf1" {
			if g.Means[0] != NoData || out.Plots.Groups[gi].Gbps[0][0] != NoData {
				t.Errorf("missing member: %+v / %v", g, out.Plots.Groups[gi].Gbps[0])
			}
		}
		if g.Name == "plane:fabric" && g.Means[0] != NoData {
			t.Errorf("spine0's plane value needs all its downlinks: %v", g.Means)
		}
	}
}

// A counter reset loses one interval, not the series.
func TestCounterResetIsSkipped(t *testing.T) {
	s := &Series{T: []int64{0, 100_000, 200_000, 300_000, 400_000}, V: []int64{0, 1_250_000, 2_500_000, 100, 1_250_100}}
	r := s.Rates()
	if len(r) != 3 || r[0].Bps != 100e9 || r[1].Bps != 100e9 || r[2].Bps != 100e9 || r[2].End != 400_000 {
		t.Fatalf("rates %+v", r)
	}
	if s.Increase() != 2_500_000+1_250_000 {
		t.Errorf("increase %d", s.Increase())
	}
	// Unsorted input and repeated timestamps.
	x := NewIndex([]telemetry.Sample{
		{Time: 300, Target: "a", Measurement: telemetry.MeasInterface, Interface: "e", Field: telemetry.FieldOutOctets, Value: 30},
		{Time: 100, Target: "a", Measurement: telemetry.MeasInterface, Interface: "e", Field: telemetry.FieldOutOctets, Value: 10},
		{Time: 200, Target: "a", Measurement: telemetry.MeasInterface, Interface: "e", Field: telemetry.FieldOutOctets, Value: 15},
		{Time: 200, Target: "a", Measurement: telemetry.MeasInterface, Interface: "e", Field: telemetry.FieldOutOctets, Value: 20},
	})
	got := x.Interface("a", "e", telemetry.FieldOutOctets)
	if !reflect.DeepEqual(got.T, []int64{100, 200, 300}) || !reflect.DeepEqual(got.V, []int64{10, 20, 30}) || x.Step() != 100 {
		t.Errorf("series %+v step %d", got, x.Step())
	}
}

func TestCounterTotals(t *testing.T) {
	f := testFabric(t)
	var s []telemetry.Sample
	add := func(target, meas, iface, queue, field string, vals ...int64) {
		for i, v := range vals {
			s = append(s, telemetry.Sample{Time: testEpoch + int64(i)*testStep, Target: target, Measurement: meas, Interface: iface, Queue: queue, Field: field, Value: v})
		}
	}
	add("leaf0", telemetry.MeasInterface, "Ethernet4", "", telemetry.FieldOutDiscards, 0, 3, 5)
	add("spine1", telemetry.MeasInterface, "Ethernet0", "", telemetry.FieldOutDiscards, 10, 12, 1, 4) // reset: 2 + 3
	add("host0", telemetry.MeasInterface, "eth0", "", telemetry.FieldOutDiscards, 0, 100)             // not a switch
	add("leaf0", telemetry.MeasQueue, "Ethernet4", "0", telemetry.FieldTrimPkts, 0, 7)
	add("leaf0", telemetry.MeasQueue, "Ethernet4", "1", telemetry.FieldTrimPkts, 0, 1)
	add("leaf0", telemetry.MeasQueue, "Ethernet4", "0", telemetry.FieldECNMarkedPkts, 5, 9)
	add("leaf0", telemetry.MeasQueue, "Ethernet4", "0", telemetry.FieldMaxQueueLen, 5000, 9000)
	out := analyze(t, Input{Fabric: f, Samples: s, EpochNs: testEpoch})
	if m := out.Metrics; m[MetricDrops] != 10 || m[MetricTrims] != 8 || m[MetricECNMarked] != 4 {
		t.Errorf("metrics %v", m)
	}
}

func TestFaultLinkNamesBothEnds(t *testing.T) {
	f := testFabric(t)
	out := analyze(t, Input{Fabric: f, Samples: synth(f, 5, func(p, i int) float64 { return 50 }), EpochNs: testEpoch,
		Faults: []results.Fault{{Description: "down:leaf3-spine2@50us"}, {Description: "degrade nic host5"}}})
	var ts []string
	for _, s := range out.Plots.TimeSeries {
		ts = append(ts, s.Panel+"|"+s.Name)
	}
	want := []string{
		"leaf-uplinks:leaf3|leaf3:Ethernet6", "leaf-uplinks:leaf3|median of leaf-uplinks:leaf3",
		"spine-downlinks:spine2|spine2:Ethernet3", "spine-downlinks:spine2|median of spine-downlinks:spine2",
		"rail:leaf1|host5", "rail:leaf1|median of rail:leaf1",
	}
	if !reflect.DeepEqual(ts, want) {
		t.Errorf("time series\n%v\nwant\n%v", ts, want)
	}
}

func TestLongRunsAreDownsampled(t *testing.T) {
	f := testFabric(t)
	out := analyze(t, Input{Fabric: f, Samples: synth(f, 1200, func(p, i int) float64 { return float64(i%2*100) + float64(i/4) }), EpochNs: testEpoch})
	gs := out.Plots.Groups[0]
	// 1200 intervals in bins of 3 (at most MaxPlotPoints = 300: bins of 4).
	if len(gs.TimesUs) != 300 || len(gs.Gbps[0]) != 300 || gs.TimesUs[0] != 400 || gs.TimesUs[299] != 120000 {
		t.Fatalf("%d points, times %v ... %v", len(gs.TimesUs), gs.TimesUs[0], gs.TimesUs[len(gs.TimesUs)-1])
	}
	if gs.Gbps[0][0] != 50.25 || gs.Gbps[0][1] != 51.25 {
		t.Errorf("bins %v", gs.Gbps[0][:4])
	}
}

// The MAD is floored at 1% of the median: in a near-uniform group a small
// shortfall does not score as an outlier just because the others agree to
// within noise.
func TestMADFloor(t *testing.T) {
	f := testFabric(t)
	leaf0 := []float64{95.05, 93.5, 95.1, 95} // median 95.025, MAD 0.05
	rate := func(p, i int) float64 {
		if nodeName(f, p) == "leaf0" && f.Ports[p].Uplink {
			return leaf0[f.Ports[p].Index-4]
		}
		return 95
	}
	opts := Options{SymMinDeviation: 0.01}
	out := analyze(t, Input{Fabric: f, Samples: synth(f, 10, rate), EpochNs: testEpoch, Opts: opts})
	if got := anomaliesOf(out, results.KindSymmetry); len(got) != 0 {
		t.Fatalf("a 1.6%% shortfall in a near-uniform group: %v", got)
	}
	// 3% short: z = 0.6745 · 3 / 0.95 ≈ 2.1 with the floor, still not an
	// outlier; 6% short: z ≈ 4.3, an outlier.
	for _, c := range []struct {
		v    float64
		want int
	}{{92.1, 0}, {89.3, 1}} {
		leaf0[1] = c.v
		out = analyze(t, Input{Fabric: f, Samples: synth(f, 10, rate), EpochNs: testEpoch, Opts: opts})
		if got := anomaliesOf(out, results.KindSymmetry); len(got) != c.want {
			t.Errorf("leaf0:Ethernet5 at %v: anomalies %v", c.v, got)
		}
	}
}
