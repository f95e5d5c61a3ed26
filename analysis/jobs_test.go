package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
)

const us = int64(1_000_000) // ps

func jobOf(t *testing.T, j JobInput, ideal func(int, int, int64) int64) results.Job {
	t.Helper()
	out := analyze(t, Input{Fabric: testFabric(t), Jobs: []JobInput{j}, Ideal: ideal})
	return out.Jobs[0]
}

func near(a, b float64) bool { return math.Abs(a-b) <= 0.0005 } // results are rounded to 3 decimals

// (e) nccl-tests bandwidth conventions, hand-computed.
func TestBandwidthConventions(t *testing.T) {
	// All-reduce, 4 ranks, 1 MB buffer: 2(n-1) = 6 steps of 250 kB chunks
	// over a ring, done in 100 µs: algbw = 8e6 b / 100 µs = 80 Gb/s,
	// busbw = 80 · 2·3/4 = 120 Gb/s.
	ar := JobInput{Name: "ar", Workload: AllReduce, Hosts: []int{0, 4, 8, 12}, SizeBytes: 1_000_000, Repetitions: 1}
	for step := 0; step < 6; step++ {
		for i, h := range ar.Hosts {
			ar.Flows = append(ar.Flows, FlowRecord{ID: len(ar.Flows), Src: h, Dst: ar.Hosts[(i+1)%4], Size: 250_000,
				Start: int64(step) * 16 * us, FCT: 10 * us})
		}
	}
	ar.Flows[len(ar.Flows)-1].FCT = 20 * us // the last chunk lands at 5·16+20 = 100 µs
	// All-to-all, 4 ranks, 1 MB per pair, 200 µs: algbw = 4·8e6/200 µs =
	// 160 Gb/s, busbw = 160·3/4 = 120 Gb/s.
	a2a := JobInput{Name: "a2a", Workload: AllToAll, Hosts: []int{0, 1, 2, 3}, SizeBytes: 1_000_000, Repetitions: 1}
	for s := 0; s < 4; s++ {
		for d := 0; d < 4; d++ {
			if s != d {
				a2a.Flows = append(a2a.Flows, FlowRecord{ID: len(a2a.Flows), Src: s, Dst: d, Size: 1_000_000, Start: 5 * us, FCT: int64(150+10*s) * us})
			}
		}
	}
	a2a.Flows[0].Start, a2a.Flows[0].FCT = 0, 10*us // the first start: 0
	a2a.Flows[1].FCT = 195 * us                     // the last end: 5+195 = 200 µs
	// Permutation, 1 MB in 100 µs: 80/80.
	perm := JobInput{Name: "perm", Workload: Permutation, Hosts: []int{0, 1, 2}, SizeBytes: 1_000_000, Repetitions: 1, Flows: []FlowRecord{
		{Src: 0, Dst: 1, Size: 1_000_000, Start: 0, FCT: 100 * us},
		{ID: 1, Src: 1, Dst: 2, Size: 1_000_000, Start: 0, FCT: 90 * us},
		{ID: 2, Src: 2, Dst: 0, Size: 1_000_000, Start: 0, FCT: 80 * us},
	}}
	// Incast 3 senders x 1 MB in 300 µs: 80/80 (receiver goodput).
	inc := JobInput{Name: "inc", Workload: Incast, Hosts: []int{0, 1, 2, 3}, SizeBytes: 1_000_000, Repetitions: 1}
	for i := 1; i <= 3; i++ {
		inc.Flows = append(inc.Flows, FlowRecord{ID: i, Src: i, Dst: 0, Size: 1_000_000, Start: 0, FCT: int64(100*i) * us})
	}
	for _, c := range []struct {
		j                  JobInput
		completion, alg, b float64
	}{
		{ar, 100, 80, 120},
		{a2a, 200, 160, 120},
		{perm, 100, 80, 80},
		{inc, 300, 80, 80},
	} {
		r := jobOf(t, c.j, nil)
		if r.CompletionUs != c.completion || !near(r.AlgBWGbps, c.alg) || !near(r.BusBWGbps, c.b) {
			t.Errorf("%s: completion %v µs algbw %v busbw %v, want %v %v %v", c.j.Name, r.CompletionUs, r.AlgBWGbps, r.BusBWGbps, c.completion, c.alg, c.b)
		}
		if r.Completed != len(c.j.Flows) || r.Flows != len(c.j.Flows) || r.Hosts != len(c.j.Hosts) || r.StartUs != 0 {
			t.Errorf("%s: %+v", c.j.Name, r)
		}
	}
}

func TestFCTQuantilesSlowdownAndPairBandwidth(t *testing.T) {
	// 200 flows of 1.25 MB (10 Mb) with FCTs 100..299 µs between hosts of
	// 100 Gb/s: pair bandwidth 10 Mb / FCT / 100 Gb/s = 100/FCT(µs).
	j := JobInput{Name: "perm", Workload: Permutation, Hosts: []int{0, 1}, SizeBytes: 1_250_000, Repetitions: 1}
	for i := 0; i < 200; i++ {
		j.Flows = append(j.Flows, FlowRecord{ID: i, Src: i % 2, Dst: 1 - i%2, Size: 1_250_000, Start: 0, FCT: int64(299-i) * us, Retx: 2, Nacks: 1, Timeouts: uint64(i % 2)})
	}
	r := jobOf(t, j, func(src, dst int, size int64) int64 { return 50 * us })
	if want := (results.Quantiles{Min: 100, P50: 199, P99: 297, Max: 299}); r.FCTUs != want {
		t.Errorf("fct %+v, want %+v", r.FCTUs, want)
	}
	if want := (results.Quantiles{Min: 2, P50: 3.98, P99: 5.94, Max: 5.98}); r.Slowdown != want {
		t.Errorf("slowdown %+v, want %+v", r.Slowdown, want)
	}
	// Nearest rank: the 2nd smallest of 200.
	if want := round(100.0/298, 4); r.P01PairBW != want {
		t.Errorf("p01 pair bw %v, want %v", r.P01PairBW, want)
	}
	if want := (results.JobPackets{Retransmitted: 400, Nacks: 200, Timeouts: 100}); r.Packets != want {
		t.Errorf("packets %+v", r.Packets)
	}
	// Without an ideal model there is no slowdown.
	if r := jobOf(t, j, nil); r.Slowdown != (results.Quantiles{}) {
		t.Errorf("slowdown without ideal %+v", r.Slowdown)
	}
}

func TestNearestRank(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct{ p, want float64 }{{0, 1}, {0.01, 1}, {0.1, 1}, {0.11, 2}, {0.5, 5}, {0.51, 6}, {0.99, 10}, {1, 10}} {
		if got := NearestRank(v, c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	big := make([]float64, 700)
	for i := range big {
		big[i] = float64(i + 1)
	}
	if got := NearestRank(big, 0.99); got != 693 {
		t.Errorf("p99 of 1..700 = %v", got)
	}
	if !math.IsNaN(NearestRank(nil, 0.5)) {
		t.Error("empty")
	}
}

func TestRepetitionsAndUnfinishedFlows(t *testing.T) {
	j := JobInput{Name: "perm", Workload: Permutation, Hosts: []int{0, 1}, SizeBytes: 1_000_000, Repetitions: 2, Flows: []FlowRecord{
		{ID: 0, Src: 0, Dst: 1, Size: 1_000_000, Start: 10 * us, FCT: 100 * us, Rep: 0},
		{ID: 1, Src: 1, Dst: 0, Size: 1_000_000, Start: 10 * us, FCT: 90 * us, Rep: 0},
		{ID: 2, Src: 0, Dst: 1, Size: 1_000_000, Start: 120 * us, FCT: 150 * us, Rep: 1},
		{ID: 3, Src: 1, Dst: 0, Size: 1_000_000, Start: 125 * us, FCT: 100 * us, Rep: 1},
	}}
	r := jobOf(t, j, nil)
	if r.StartUs != 10 || r.CompletionUs != 150 || !reflect.DeepEqual(r.RepetitionsUs, []float64{100, 150}) || !near(r.AlgBWGbps, 8e6/150e-6/1e9) {
		t.Errorf("repetitions: %+v", r)
	}
	j.Flows[3].FCT = -1
	r = jobOf(t, j, nil)
	if r.CompletionUs != -1 || !reflect.DeepEqual(r.RepetitionsUs, []float64{100, -1}) || r.AlgBWGbps != 0 || r.BusBWGbps != 0 || r.Completed != 3 {
		t.Errorf("unfinished: %+v", r)
	}
	if r.FCTUs != (results.Quantiles{Min: 90, P50: 100, P99: 150, Max: 150}) {
		t.Errorf("fct over finished flows: %+v", r.FCTUs)
	}
	j.Flows[2].Start, j.Flows[2].FCT = -1, -1
	j.Flows[3].Start = -1
	r = jobOf(t, j, nil)
	if r.Completed != 2 || r.CompletionUs != -1 || r.StartUs != 10 {
		t.Errorf("never started: %+v", r)
	}
	// A declared repetition without flows did not happen.
	j.Repetitions = 3
	j.Flows = j.Flows[:2]
	if r := jobOf(t, j, nil); r.CompletionUs != -1 || !reflect.DeepEqual(r.RepetitionsUs, []float64{100, -1, -1}) {
		t.Errorf("missing repetition: %+v", r)
	}
	if r := jobOf(t, JobInput{Name: "empty", Workload: AllReduce}, nil); r.CompletionUs != -1 || r.StartUs != -1 || r.FCTUs != (results.Quantiles{}) {
		t.Errorf("empty job: %+v", r)
	}
}

func TestBadInput(t *testing.T) {
	f := testFabric(t)
	for _, in := range []Input{
		{},
		{Fabric: f, Jobs: []JobInput{{Name: "x", Hosts: []int{16}}}},
		{Fabric: f, Jobs: []JobInput{{Name: "x", Flows: []FlowRecord{{Src: 0, Dst: -1}}}}},
		{Fabric: f, Opts: Options{StragLow: 0.9, StragHigh: 0.5}},
		{Fabric: f, Opts: Options{SymZ: math.NaN()}},
	} {
		if _, err := Analyze(in); err == nil {
			t.Errorf("no error for %+v", in.Opts)
		}
	}
}

// Analyze on a run without telemetry: job results, empty plots, no
// coverage.
func ExampleAnalyze() {
	f, _ := inventory.ParseSpec("leafspine:leaves=4,spines=4,hosts_per_leaf=4")
	out, err := Analyze(Input{Fabric: f, Jobs: []JobInput{{Name: "perm", Workload: Permutation, Hosts: []int{0, 5}, SizeBytes: 1 << 20,
		Flows: []FlowRecord{{Src: 0, Dst: 5, Size: 1 << 20, Start: 0, FCT: 100 * us}, {ID: 1, Src: 5, Dst: 0, Size: 1 << 20, Start: 0, FCT: -1}}}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := out.Coverage
	fmt.Println(c.SwitchPorts, c.SwitchPortsWithSamples, c.NICs, c.NICsWithSamples, len(c.Missing), c.Missing[0])
	fmt.Println(out.Metrics[MetricCoverage], len(out.Anomalies), len(out.Groups), out.Groups[0].Active, out.Groups[0].Means)
	fmt.Println(out.Jobs[0].Completed, out.Jobs[0].CompletionUs, out.Jobs[0].FCTUs.Max)
	b, _ := json.Marshal(out.Plots.Groups[0])
	fmt.Println(string(b))
	// Output:
	// 48 0 16 0 20 leaf0:Ethernet0
	// 0 0 13 false [-1 -1 -1 -1]
	// 1 -1 100
	// {"group":"leaf-uplinks:leaf0","kind":"leaf-uplinks","members":["leaf0:Ethernet4","leaf0:Ethernet5","leaf0:Ethernet6","leaf0:Ethernet7"],"times_us":[],"gbps":[[],[],[],[]]}
}
