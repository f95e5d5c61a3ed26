package analysis

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/telemetry"
)

const (
	testEpoch = int64(1_700_000_000_000_000_000)
	testStep  = int64(100_000) // 100 µs in ns
	testSpec  = "leafspine:leaves=4,spines=4,hosts_per_leaf=4,gbps=100"
)

func testFabric(t *testing.T) *inventory.Fabric {
	t.Helper()
	f, err := inventory.ParseSpec(testSpec)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// rateFunc gives the out rate in Gb/s of port p during interval i (1-based:
// interval i ends at sample i).
type rateFunc func(p, i int) float64

// synth returns cumulative out-octets (and in-octets, mirroring the peer's
// out) samples for every port of f, at samples 0..n, shuffled.
func synth(f *inventory.Fabric, n int, rate rateFunc) []telemetry.Sample {
	var out []telemetry.Sample
	for p := range f.Ports {
		pt := &f.Ports[p]
		target := f.Nodes[pt.Node].Name
		var cumOut, cumIn float64
		for i := 0; i <= n; i++ {
			if i > 0 {
				cumOut += rate(p, i) * 1e9 / 8 * float64(testStep) / 1e9
				cumIn += rate(pt.Peer, i) * 1e9 / 8 * float64(testStep) / 1e9
			}
			tm := testEpoch + int64(i)*testStep
			out = append(out,
				telemetry.Sample{Time: tm, Target: target, Measurement: telemetry.MeasInterface, Interface: pt.Name, Field: telemetry.FieldOutOctets, Value: int64(cumOut)},
				telemetry.Sample{Time: tm, Target: target, Measurement: telemetry.MeasInterface, Interface: pt.Name, Field: telemetry.FieldInOctets, Value: int64(cumIn)})
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// portOf returns the port of node a whose peer is node b.
func portOf(t *testing.T, f *inventory.Fabric, a, b string) int {
	t.Helper()
	na, _ := f.NodeByName(a)
	nb, _ := f.NodeByName(b)
	for _, p := range f.Nodes[na].Ports {
		if f.PeerNode(p) == nb {
			return p
		}
	}
	t.Fatalf("no port %s->%s", a, b)
	return -1
}

// uplinkFault gives the rates (Gb/s) and queues (bytes, ECN marks)
// of testFabric's ports in each interval: leaf0's uplink to spine1 (bad)
// sends at 50 Gb/s with a 100 KB queue, marking, from interval from on;
// every other port runs at 95 Gb/s with short queues, and a spine
// forwards an equal share of what every leaf sends it.
func uplinkFault(t *testing.T, f *inventory.Fabric, from int) (bad int, rate func(p, i int) float64, queue func(p, i int) (int64, int64)) {
	bad = portOf(t, f, "leaf0", "spine1")
	up := func(p, i int) float64 {
		if p == bad && i >= from {
			return 50
		}
		return 95
	}
	rate = func(p, i int) float64 {
		pt := &f.Ports[p]
		switch {
		case isHostPort(f, p):
			return 95
		case pt.Uplink:
			return up(p, i)
		case strings.HasPrefix(nodeName(f, p), "spine"):
			sp := nodeName(f, p)
			sum := 0.0
			for _, l := range []string{"leaf0", "leaf1", "leaf2", "leaf3"} {
				sum += up(portOf(t, f, l, sp), i)
			}
			return sum / 4
		}
		return 95 // leaf downlinks
	}
	queue = func(p, i int) (int64, int64) {
		if p == bad && i >= from {
			return 100_000, 40
		}
		return 8_000, 0
	}
	return bad, rate, queue
}

func nodeName(f *inventory.Fabric, p int) string { return f.Nodes[f.Ports[p].Node].Name }

func isHostPort(f *inventory.Fabric, p int) bool { return !f.Nodes[f.Ports[p].Node].IsSwitch() }

func analyze(t *testing.T, in Input) *Output {
	t.Helper()
	out, err := Analyze(in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func anomaliesOf(out *Output, kind string) []string {
	var s []string
	for _, a := range out.Anomalies {
		if a.Kind == kind {
			s = append(s, a.Group+" "+a.Member)
		}
	}
	return s
}

// queueFunc gives port p's queue high-water (bytes) and ECN marks during
// interval i.
type queueFunc func(p, i int) (hw, marks int64)

// withQueues adds, for every switch port, the queue high-water and the
// cumulative ECN-mark counter (queue "q0"), and the cumulative out-pkts
// and out-discards counters of every port (pkts at 4 KiB per packet of the
// rate; drops from drop(p, i), nil for none).
func withQueues(f *inventory.Fabric, n int, rate rateFunc, queue queueFunc, drop func(p, i int) int64) []telemetry.Sample {
	var out []telemetry.Sample
	for p := range f.Ports {
		pt := &f.Ports[p]
		target := f.Nodes[pt.Node].Name
		var marks, pkts, drops int64
		for i := 0; i <= n; i++ {
			hw := int64(0)
			if i > 0 {
				var m int64
				hw, m = queue(p, i)
				marks += m
				pkts += int64(rate(p, i) * 1e9 / 8 * float64(testStep) / 1e9 / 4096)
				if drop != nil {
					d := drop(p, i)
					drops += d
					pkts += d
				}
			}
			tm := testEpoch + int64(i)*testStep
			out = append(out,
				telemetry.Sample{Time: tm, Target: target, Measurement: telemetry.MeasInterface, Interface: pt.Name, Field: telemetry.FieldOutPkts, Value: pkts},
				telemetry.Sample{Time: tm, Target: target, Measurement: telemetry.MeasInterface, Interface: pt.Name, Field: telemetry.FieldOutDiscards, Value: drops})
			if f.Nodes[pt.Node].IsSwitch() {
				out = append(out,
					telemetry.Sample{Time: tm, Target: target, Measurement: telemetry.MeasQueue, Interface: pt.Name, Queue: "q0", Field: telemetry.FieldMaxQueueLen, Value: hw},
					telemetry.Sample{Time: tm, Target: target, Measurement: telemetry.MeasQueue, Interface: pt.Name, Queue: "q0", Field: telemetry.FieldECNMarkedPkts, Value: marks})
			}
		}
	}
	return append(out, synth(f, n, rate)...)
}

// maxMean: loads 1, 2, 3, 6 (mean 3) have a max-mean ratio of 2; equal
// loads 1; an idle group 1.
func TestMaxMean(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want float64
	}{{[]float64{1, 2, 3, 6}, 2}, {[]float64{4, 4, 4}, 1}, {[]float64{0, 0}, 1}} {
		if got := maxMean(c.v); got != c.want {
			t.Errorf("maxMean(%v) = %v, want %v", c.v, got, c.want)
		}
	}
}
