package analysis

import (
	"encoding/json"
	"fmt"
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

// (b) One leaf uplink degraded to 50%: it serves its standing queue
// (100 KB, marking) at a flat 50 Gb/s while its peers run at 95 with short
// queues. Exactly one anomaly, a capacity culprit on that port, in the
// fault's window; the spine1 plane member, which carries less because of
// it, is its victim, not a second anomaly.
func TestDegradedLeafUplinkIsTheOnlyAnomaly(t *testing.T) {
	f := testFabric(t)
	bad, rate, queue := uplinkFault(t, f, 5) // degraded from interval 5 on
	// The spine1 plane carries 8.6% less over the active window.
	out := analyze(t, Input{Fabric: f, Samples: withQueues(f, 20, rate, queue, nil), EpochNs: testEpoch, LB: "reps", Opts: Options{VictimDeviation: 0.05},
		Faults: []results.Fault{{AtUs: 400, ID: "F1", Kind: "degrade", Ports: []string{"leaf0:Ethernet5"}, Description: "degrade leaf0:Ethernet5 (transmit) to 50% at 400us"}}})
	if nodeName(f, bad)+":"+f.Ports[bad].Name != "leaf0:Ethernet5" {
		t.Fatalf("the degraded port is %s", f.Ports[bad].Name)
	}
	if len(out.Anomalies) != 1 {
		t.Fatalf("anomalies %+v, want exactly leaf0:Ethernet5", out.Anomalies)
	}
	a := out.Anomalies[0]
	if a.Rank != 1 || a.Kind != results.KindSymmetry || a.Group != "leaf-uplinks:leaf0" || a.Member != "leaf0:Ethernet5" || a.Cause != results.CauseCapacity || a.Link != "" {
		t.Fatalf("anomaly %+v", a)
	}
	if a.StartUs != 400 || a.EndUs != 2000 {
		t.Errorf("window %v-%v µs, want 400-2000", a.StartUs, a.EndUs)
	}
	// 16 intervals at half capacity.
	if math.Abs(a.Score-8) > 0.01 || a.Details["rate_util"] != 0.5 || a.Details["queue_bytes"] != 100_000 || a.Details["ecn_marks"] != 640 {
		t.Errorf("score %v details %v", a.Score, a.Details)
	}
	want := "leaf0:Ethernet5 sent at 50% of its 100.0 Gb/s line rate in 16 intervals while its queue held 100 KB"
	if !strings.HasPrefix(a.Evidence, want) {
		t.Errorf("evidence %q, want prefix %q", a.Evidence, want)
	}
	var sigs []string
	for _, s := range a.Signals {
		sigs = append(sigs, fmt.Sprintf("%s=%v/%v", s.Name, s.Value, s.Baseline))
	}
	if !reflect.DeepEqual(sigs[:2], []string{"rate_util=0.5/-1", "queue_bytes=100000/8000"}) {
		t.Errorf("signals %v", sigs)
	}
	var victims []string
	for _, v := range a.Victims {
		victims = append(victims, v.Group+" "+v.Member)
	}
	if !slices.Contains(victims, "plane:fabric spine1") {
		t.Errorf("victims %v, want the spine1 plane", victims)
	}
	if !reflect.DeepEqual(a.Faults, []string{"F1"}) || len(out.FaultMatches) != 1 || out.FaultMatches[0].Anomaly != 1 {
		t.Errorf("fault correlation: anomaly faults %v, matches %+v", a.Faults, out.FaultMatches)
	}
	if out.Metrics[MetricSymmetryAnomalies] != 1 || out.Metrics[MetricAnomalies] != 1 || out.Metrics[MetricStragglers] != 0 || out.Metrics[MetricUnmatchedFaults] != 0 {
		t.Errorf("metrics %v", out.Metrics)
	}
	// Plot data: the group series marks the member; the anomaly gives the
	// member's and the median's time series.
	gs := out.Plots.Groups[0]
	if gs.Group != "leaf-uplinks:leaf0" || !reflect.DeepEqual(gs.Anomalous, []string{"leaf0:Ethernet5"}) || len(gs.TimesUs) != 20 || gs.TimesUs[0] != 100 || gs.Gbps[1][6] != 50 {
		t.Errorf("group series %+v", gs)
	}
	var ts []string
	for _, s := range out.Plots.TimeSeries {
		ts = append(ts, s.Panel+"|"+s.Name)
	}
	if !reflect.DeepEqual(ts, []string{"leaf-uplinks:leaf0|leaf0:Ethernet5", "leaf-uplinks:leaf0|median of leaf-uplinks:leaf0"}) {
		t.Errorf("time series %v", ts)
	}
	if _, err := json.Marshal(out); err != nil {
		t.Errorf("output does not marshal: %v", err)
	}
}

// A member low on bytes with an empty queue is starved: a victim, never a
// culprit, with spraying or ECMP. With no culprit to hang it under, its
// group is reported once as an imbalance.
func TestStarvedMemberIsNeverACulprit(t *testing.T) {
	f := testFabric(t)
	low := portOf(t, f, "leaf0", "spine1")
	rate := func(p, i int) float64 {
		if p == low {
			return 40
		}
		return 95
	}
	quiet := func(p, i int) (int64, int64) { return 4_000, 0 }
	spray := analyze(t, Input{Fabric: f, Samples: withQueues(f, 10, rate, quiet, nil), EpochNs: testEpoch, LB: "ops"})
	if len(spray.Anomalies) != 0 || len(spray.Imbalances) != 1 {
		t.Fatalf("spraying: anomalies %+v imbalances %+v", spray.Anomalies, spray.Imbalances)
	}
	ecmp := analyze(t, Input{Fabric: f, Samples: withQueues(f, 10, rate, quiet, nil), EpochNs: testEpoch, LB: "ecmp"})
	if len(ecmp.Anomalies) != 0 {
		t.Fatalf("ECMP: anomalies %+v, want none", ecmp.Anomalies)
	}
	if len(ecmp.Imbalances) != 1 || ecmp.Imbalances[0].Group != "leaf-uplinks:leaf0" || ecmp.Imbalances[0].MinMember != "leaf0:Ethernet5" {
		t.Fatalf("ECMP imbalances %+v", ecmp.Imbalances)
	}
	im := ecmp.Imbalances[0]
	// Loads 95, 40, 95, 95: mean 81.25, CV 0.293, max/min 2.375, Jain 0.921.
	if math.Abs(im.CV-0.2929) > 0.001 || math.Abs(im.MaxMin-2.375) > 0.001 || math.Abs(im.Jain-0.921) > 0.001 {
		t.Errorf("imbalance %+v", im)
	}
	if ecmp.Metrics[MetricImbalancedGroups] != 1 {
		t.Errorf("metrics %v", ecmp.Metrics)
	}
}

// A healthy port whose queue filled in part of each interval, at a rate
// that wanders below line rate, is not capped: no plateau. The same port
// serving a standing queue at a flat 60% is.
func TestCapacityNeedsAPlateau(t *testing.T) {
	f := testFabric(t)
	port := portOf(t, f, "spine2", "leaf3")
	for _, c := range []struct {
		name  string
		rates []float64
		want  int
	}{
		{"wandering", []float64{62, 75, 66, 79, 63, 71, 78, 64}, 0},
		{"flat", []float64{60, 60.4, 59.8, 60.1, 60, 59.9, 60.2, 60}, 1},
	} {
		rate := func(p, i int) float64 {
			if p == port && i <= len(c.rates) {
				return c.rates[i-1]
			}
			return 95
		}
		queue := func(p, i int) (int64, int64) {
			if p == port {
				return 60_000, 10
			}
			return 4_000, 0
		}
		out := analyze(t, Input{Fabric: f, Samples: withQueues(f, 10, rate, queue, nil), EpochNs: testEpoch, LB: "reps"})
		n := 0
		for _, a := range out.Anomalies {
			if a.Cause == results.CauseCapacity {
				n++
			}
		}
		if n != c.want {
			t.Errorf("%s: capacity anomalies %+v, want %d", c.name, out.Anomalies, c.want)
		}
	}
}

// A link down for three intervals loses what both ports send in that
// time: one loss anomaly naming the link, with its window.
func TestLinkDownIsALossCulprit(t *testing.T) {
	f := testFabric(t)
	a, b := portOf(t, f, "leaf2", "spine3"), portOf(t, f, "spine3", "leaf2")
	rate := func(p, i int) float64 { return 90 }
	quiet := func(p, i int) (int64, int64) { return 4_000, 0 }
	drop := func(p, i int) int64 {
		if (p == a || p == b) && i >= 6 && i <= 8 {
			return 1000
		}
		return 0
	}
	out := analyze(t, Input{Fabric: f, Samples: withQueues(f, 15, rate, quiet, drop), EpochNs: testEpoch, LB: "ops",
		Faults: []results.Fault{
			{AtUs: 500, ID: "F1", Kind: "down", Ports: []string{"leaf2:Ethernet7", "spine3:Ethernet2"}, Description: "down link leaf2-spine3 at 500us"},
			{AtUs: 800, ID: "F1", Kind: "up", Ports: []string{"leaf2:Ethernet7", "spine3:Ethernet2"}, Description: "up link leaf2-spine3 at 800us"},
		}})
	if len(out.Anomalies) != 1 {
		t.Fatalf("anomalies %+v", out.Anomalies)
	}
	an := out.Anomalies[0]
	if an.Cause != results.CauseLoss || an.Link != "leaf2-spine3" || an.StartUs != 500 || an.EndUs != 800 {
		t.Errorf("anomaly %+v", an)
	}
	if fm := out.FaultMatches; len(fm) != 1 || fm[0].Anomaly != 1 || fm[0].StartUs != 500 || fm[0].EndUs != 800 {
		t.Errorf("fault matches %+v", fm)
	}
}

// (c) A spine sending more on one downlink than on the others is not
// starved (high side); the same spine sending much less on one is.
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
		return starvedOf(t, Input{Fabric: f, Samples: synth(f, 20, rate), EpochNs: testEpoch, Opts: Options{VictimDeviation: 0.2}})
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
	in := Input{Fabric: f, Samples: synth(f, 60, rate), EpochNs: testEpoch}
	if got := starvedOf(t, in); !reflect.DeepEqual(got, []string{"leaf-uplinks:leaf2 leaf2:Ethernet7"}) {
		t.Fatalf("starved %v", got)
	}
	out := analyze(t, in)
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

// starvedOf lists the starved members ("group member") the symmetry test
// finds.
func starvedOf(t *testing.T, in Input) []string {
	t.Helper()
	opts, err := in.Opts.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	a := newAnalyzer(in, opts)
	var out []string
	for _, gr := range a.buildGroups() {
		_, sv := a.symmetry(gr, a.groupData(gr))
		for _, s := range sv {
			out = append(out, s.group+" "+s.label)
		}
	}
	return out
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
	opts := Options{SymMinDeviation: 0.01, VictimDeviation: 0.01}
	if got := starvedOf(t, Input{Fabric: f, Samples: synth(f, 10, rate), EpochNs: testEpoch, Opts: opts}); len(got) != 0 {
		t.Fatalf("a 1.6%% shortfall in a near-uniform group: %v", got)
	}
	// 3% short: z = 0.6745 · 3 / 0.95 ≈ 2.1 with the floor, still not an
	// outlier; 6% short: z ≈ 4.3, an outlier.
	for _, c := range []struct {
		v    float64
		want int
	}{{92.1, 0}, {89.3, 1}} {
		leaf0[1] = c.v
		if got := starvedOf(t, Input{Fabric: f, Samples: synth(f, 10, rate), EpochNs: testEpoch, Opts: opts}); len(got) != c.want {
			t.Errorf("leaf0:Ethernet5 at %v: starved %v", c.v, got)
		}
	}
}

// withBusy adds the backlogged-ns counter of every switch port: busy(p, i)
// nanoseconds of backlog in interval i.
func withBusy(f *inventory.Fabric, n int, busy func(p, i int) int64) []telemetry.Sample {
	var out []telemetry.Sample
	for p := range f.Ports {
		pt := &f.Ports[p]
		if !f.Nodes[pt.Node].IsSwitch() {
			continue
		}
		var cum int64
		for i := 0; i <= n; i++ {
			if i > 0 {
				cum += busy(p, i)
			}
			out = append(out, telemetry.Sample{Time: testEpoch + int64(i)*testStep, Target: f.Nodes[pt.Node].Name,
				Measurement: telemetry.MeasQueue, Interface: pt.Name, Queue: "q0", Field: telemetry.FieldBackloggedNs, Value: cum})
		}
	}
	return out
}

// With backlogged-ns the capacity test is a measurement: a port whose
// bytes over its backlogged time stay below 80% of line rate is capped,
// even when its rate wanders (a load balancer steering load away keeps its
// queue short) and in a single interval; a port that sends at line rate
// while backlogged, or is backlogged too briefly to measure, is not.
func TestServiceRateBound(t *testing.T) {
	f := testFabric(t)
	port := portOf(t, f, "leaf1", "spine2")
	for _, c := range []struct {
		name  string
		rates []float64 // Gb/s of the port in intervals 1..
		busy  []int64   // ns backlogged
		want  int
	}{
		// 50% capacity, backlogged part of each interval: 40 Gb/s over
		// 80 µs backlogged = 50 Gb/s service rate.
		{"wandering at half rate", []float64{44, 38, 47, 40, 45}, []int64{88_000, 76_000, 94_000, 80_000, 90_000}, 1},
		{"one interval", []float64{95, 25, 95}, []int64{0, 100_000, 0}, 1},
		// Healthy: 60 Gb/s with 60 µs backlogged is 100 Gb/s.
		{"healthy part-time backlog", []float64{60, 70, 50, 65}, []int64{60_000, 70_000, 50_000, 65_000}, 0},
		// 5 µs backlogged is too short to measure (minBusyFraction).
		{"too brief", []float64{2, 2, 2}, []int64{5_000, 5_000, 5_000}, 0},
	} {
		rate := func(p, i int) float64 {
			if p == port && i <= len(c.rates) {
				return c.rates[i-1]
			}
			return 60
		}
		queue := func(p, i int) (int64, int64) {
			if p == port {
				return 30_000, 3
			}
			return 4_000, 0
		}
		busy := func(p, i int) int64 {
			if p == port && i <= len(c.busy) {
				return c.busy[i-1]
			}
			return 0
		}
		samples := append(withQueues(f, 8, rate, queue, nil), withBusy(f, 8, busy)...)
		out := analyze(t, Input{Fabric: f, Samples: samples, EpochNs: testEpoch, LB: "reps"})
		var got []results.Anomaly
		for _, a := range out.Anomalies {
			if a.Cause == results.CauseCapacity {
				got = append(got, a)
			}
		}
		if len(got) != c.want {
			t.Errorf("%s: capacity anomalies %+v, want %d", c.name, got, c.want)
			continue
		}
		if c.want == 0 {
			continue
		}
		a := got[0]
		if a.Member != "leaf1:"+f.Ports[port].Name {
			t.Errorf("%s: member %s, want leaf1:%s", c.name, a.Member, f.Ports[port].Name)
		}
		found := false
		for _, s := range a.Signals {
			if s.Name == "service_rate" {
				found = true
				if s.Value > 0.55 || s.Baseline >= 0 && s.Baseline < 0.9 {
					t.Errorf("%s: service_rate %+v, want at most 0.55 (baseline none or >= 0.9)", c.name, s)
				}
			}
		}
		if !found {
			t.Errorf("%s: no service_rate signal in %+v", c.name, a.Signals)
		}
	}
}

// TestGroupsOfLowDiameter: on a Dragonfly and a Slim Fly (flat routers,
// no uplinks) the groups are each router's local links and, per group of
// routers, its global links: p2 a4 h2 has 36 routers with 3 local links
// and 9 groups with 8 global links; slimfly q=5 has 50 routers with 2
// local links ((Q-d)/2) and 10 groups of 5 routers whose 25 links go to
// the other half.
func TestGroupsOfLowDiameter(t *testing.T) {
	for _, c := range []struct {
		spec                             string
		locals, perLocal, globals, perGl int
	}{
		{"dragonfly:p=2,a=4,h=2", 36, 3, 9, 8},
		{"slimfly:q=5,p=1", 50, 2, 10, 25},
	} {
		f, err := inventory.ParseSpec(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		out := analyze(t, Input{Fabric: f, Samples: synth(f, 20, func(p, i int) float64 { return 80 }), EpochNs: testEpoch})
		n := map[string]int{}
		for _, g := range out.Groups {
			kind, _, _ := strings.Cut(g.Name, ":")
			n[kind]++
			want := map[string]int{KindLocalLinks: c.perLocal, KindGlobalLinks: c.perGl}[kind]
			if want > 0 && len(g.Members) != want {
				t.Errorf("%s: %s: %d members, want %d", c.spec, g.Name, len(g.Members), want)
			}
		}
		if n[KindLocalLinks] != c.locals || n[KindGlobalLinks] != c.globals || n[KindLeafUplinks] != 0 {
			t.Errorf("%s: groups by kind %v, want %d local-links, %d global-links", c.spec, n, c.locals, c.globals)
		}
	}
}
