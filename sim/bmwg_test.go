package sim

import (
	"math"
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

func specFabric(t *testing.T, spec string) *inventory.Fabric {
	t.Helper()
	f, err := inventory.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// egress returns node a's port towards node b in f.
func egress(t *testing.T, f *inventory.Fabric, a, b string) int {
	t.Helper()
	na, ok1 := f.NodeByName(a)
	nb, ok2 := f.NodeByName(b)
	if ok1 && ok2 {
		for _, p := range f.Nodes[na].Ports {
			if f.PeerNode(p) == nb {
				return p
			}
		}
	}
	t.Fatalf("no port %s -> %s", a, b)
	return -1
}

// cyclicPFC is the cyclic traffic of the PFC deadlock test: on a
// leaf-spine of 3 leaves and 3 spines, two flows from each leaf i travel
// the ring leaf i -> spine i -> leaf i+1 -> spine i+1 -> leaf i+2 (a
// bounce at every leaf: not an up-down path), explicitly routed, so the
// six ring links' buffers depend on each other in a cycle.
func cyclicPFC(t *testing.T) (*inventory.Fabric, *workloads.Matrix, map[int][]int) {
	f := specFabric(t, "leafspine:leaves=3,spines=3,hosts_per_leaf=4,gbps=100")
	ring := []string{"leaf0", "spine0", "leaf1", "spine1", "leaf2", "spine2"}
	m := &workloads.Matrix{Hosts: f.NumHosts()}
	paths := map[int][]int{}
	for li := 0; li < 3; li++ {
		for k := 0; k < 2; k++ {
			src, dst := 4*li+k, 4*((li+2)%3)+3
			var p []int
			for i := 0; i < 4; i++ {
				p = append(p, egress(t, f, ring[(2*li+i)%6], ring[(2*li+i+1)%6]))
			}
			p = append(p, egress(t, f, ring[(2*li+4)%6], f.Nodes[f.Hosts[dst]].Name))
			id := len(m.Flows)
			m.Flows = append(m.Flows, workloads.Flow{ID: id, Src: src, Dst: dst, Size: 4 << 20, After: -1})
			paths[id] = p
		}
	}
	return f, m, paths
}

// TestPFCWatchdogBreaksDeadlock: the cyclic traffic deadlocks a lossless
// fabric (the run stalls with flows unfinished and ring ports paused);
// with the PFC watchdog (200 µs) it finishes: the watchdog found the
// storms, dropped the stuck queues and the transport recovered.
func TestPFCWatchdogBreaksDeadlock(t *testing.T) {
	f, m, paths := cyclicPFC(t)
	run := func(detect int64) (*Sim, *Result) {
		p := htsimParams(transport.ECMP)
		p.CC = transport.DCTCP
		s, err := New(Config{Fabric: f, Matrix: m, Transport: p, Seed: 1, Paths: paths, StallAfter: 5e9,
			PFC: PFC{Enabled: true, WatchdogDetect: detect}})
		if err != nil {
			t.Fatal(err)
		}
		return s, s.Run()
	}
	s, r := run(0)
	if r.EndReason != EndStalled || r.Incomplete == 0 || s.PFCPausedNow() == 0 {
		t.Fatalf("without a watchdog: %v, %d incomplete, %d paused; want a deadlock", r.EndReason, r.Incomplete, s.PFCPausedNow())
	}
	s, r = run(200e6)
	ev, drops := s.PFCWatchdog()
	if r.EndReason != EndDone || r.Incomplete != 0 || ev == 0 || drops == 0 || r.Packets.Retransmitted == 0 {
		t.Fatalf("with the watchdog: %v, %d incomplete, %d events, %d drops, %d retransmitted", r.EndReason, r.Incomplete, ev, drops, r.Packets.Retransmitted)
	}
	if _, err := New(Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.ECMP), PFC: PFC{WatchdogDetect: 1e6}}); err == nil {
		t.Error("a watchdog without PFC was accepted")
	}
}

// TestLatencyHistogram: buckets below 64 ps are exact, above them 1/64
// wide; quantiles are nearest rank.
func TestLatencyHistogram(t *testing.T) {
	var h LatencyHist
	for v := int64(1); v <= 100; v++ {
		h.Add(v * 1000) // 1..100 ns
	}
	for _, c := range []struct{ p, want float64 }{{0.5, 50e3}, {0.99, 99e3}, {1, 100e3}, {0, 1e3}} {
		if got := h.Quantile(c.p); math.Abs(got-c.want)/c.want > 1.0/64 {
			t.Errorf("p%g = %g, want %g within 1/64", c.p*100, got, c.want)
		}
	}
	if h.Mean() != 50.5e3 || h.N != 100 || h.Min != 1e3 || h.Max != 100e3 {
		t.Errorf("mean %g n %d min %d max %d", h.Mean(), h.N, h.Min, h.Max)
	}
	for v := int64(0); v < 1<<20; v = v*3/2 + 1 {
		b := histBucket(v)
		if histLow(b) > v || (b+1 < histBuckets && histLow(b+1) <= v) {
			t.Fatalf("value %d in bucket %d [%d, %d)", v, b, histLow(b), histLow(b+1))
		}
	}
	var empty LatencyHist
	if !math.IsNaN(empty.Quantile(0.5)) {
		t.Error("quantile of an empty histogram")
	}
}

// TestDeliveryStage: one flow on an idle leaf-spine has every packet's
// one-way latency equal to the unloaded one (NIC and switch
// serialisation plus the links' and switches' latencies) and none out of
// order; spraying (OPS) over a loaded fabric reorders.
func TestDeliveryStage(t *testing.T) {
	f := specFabric(t, "leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=100")
	m := &workloads.Matrix{Hosts: 4, Flows: []workloads.Flow{{ID: 0, Src: 0, Dst: 2, Size: 1 << 20, After: -1}}}
	p := htsimParams(transport.ECMP)
	s, err := New(Config{Fabric: f, Matrix: m, Transport: p, Seed: 1, Delivery: Delivery{Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	s.Run()
	d := s.Delivery(0)
	// host -> leaf -> spine -> leaf -> host: 4 links, 4 serialisations of
	// a full packet (store and forward).
	wire := int64(p.MTU + p.HeaderBytes)
	var want int64
	for _, pair := range [][2]string{{"host0", "leaf0"}, {"leaf0", "spine0"}, {"spine0", "leaf1"}, {"leaf1", "host2"}} {
		pid := egress(t, f, pair[0], pair[1])
		want += transport.TxTime(wire, s.ports[pid].rate) + s.ports[pid].lat
	}
	if d.Delivered == 0 || d.OutOfOrder != 0 || d.Latency.Min > want || float64(d.Latency.Max) > 1.05*float64(want) {
		t.Fatalf("delivered %d, out of order %d, latency %d..%d ps; want about %d", d.Delivered, d.OutOfOrder, d.Latency.Min, d.Latency.Max, want)
	}
	// A permutation sprayed per packet: reordering.
	perm := workloads.Permutation(f, 4<<20, 1)
	p.LB = transport.OPS
	s, err = New(Config{Fabric: f, Matrix: perm, Transport: p, Seed: 1, Delivery: Delivery{Enabled: true, Groups: 1}})
	if err != nil {
		t.Fatal(err)
	}
	s.Run()
	if d := s.Delivery(0); d.OutOfOrder == 0 || d.Delivered < uint64(4*(4<<20)/p.MTU) {
		t.Fatalf("sprayed: %d delivered, %d out of order", d.Delivered, d.OutOfOrder)
	}
}

// TestPacedSender: a flow paced at 25 Gb/s on a 100 Gb/s fabric takes
// its size at 25 Gb/s.
func TestPacedSender(t *testing.T) {
	f := specFabric(t, "leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=100")
	const size = 4 << 20
	m := &workloads.Matrix{Hosts: 4, Flows: []workloads.Flow{{ID: 0, Src: 0, Dst: 2, Size: size, After: -1, Rate: 25e9}}}
	p := htsimParams(transport.ECMP)
	s, err := New(Config{Fabric: f, Matrix: m, Transport: p, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run()
	pkts := int64(math.Ceil(float64(size) / float64(p.MTU)))
	want := float64(size+pkts*int64(p.HeaderBytes)) * 8 / 25e9 * 1e12
	if got := float64(r.Flows[0].FCT); r.Incomplete != 0 || got < 0.98*want || got > 1.02*want+20e6 {
		t.Fatalf("paced flow FCT %.0f ps, want %.0f (25 Gb/s)", got, want)
	}
}

// TestFlowletBalances: on a leaf-spine where ECMP hashing collides (16
// flows from leaf0 over 4 uplinks, single entropy each), flowlet load
// balancing spreads the uplinks' bytes evenly and finishes sooner; it
// starts new flowlets only at gaps.
func TestFlowletBalances(t *testing.T) {
	f := specFabric(t, "leafspine:leaves=2,spines=4,hosts_per_leaf=4,gbps=100")
	m := &workloads.Matrix{Hosts: 8}
	for i := 0; i < 16; i++ {
		m.Flows = append(m.Flows, workloads.Flow{ID: i, Src: i % 4, Dst: 4 + i%4, Size: 1 << 20, After: -1})
	}
	imbalance := func(routing Routing) (float64, int64, *Sim) {
		p := htsimParams(transport.ECMP)
		s, err := New(Config{Fabric: f, Matrix: m, Transport: p, Seed: 3, Routing: routing, FlowletGap: map[Routing]int64{RoutingFlowlet: 5e6}[routing]})
		if err != nil {
			t.Fatal(err)
		}
		r := s.Run()
		var bytes []float64
		for _, sp := range []string{"spine0", "spine1", "spine2", "spine3"} {
			bytes = append(bytes, float64(s.PortStats(egress(t, f, "leaf0", sp)).OutOctets))
		}
		mx, sum := 0.0, 0.0
		for _, b := range bytes {
			mx, sum = math.Max(mx, b), sum+b
		}
		end := int64(0)
		for _, fl := range r.Flows {
			end = max(end, fl.Start+fl.FCT)
		}
		return mx / (sum / 4), end, s
	}
	ecmp, ecmpEnd, _ := imbalance(RoutingHash)
	fl, flEnd, s := imbalance(RoutingFlowlet)
	if !(ecmp > 1.2 && fl < ecmp && fl < 1.15 && flEnd < ecmpEnd) || s.Flowlets() == 0 {
		t.Fatalf("max/mean uplink bytes: ECMP %.3f (done %d ps), flowlet %.3f (done %d ps, %d flowlets)", ecmp, ecmpEnd, fl, flEnd, s.Flowlets())
	}
}

// TestECNProfile: every marking decision is recorded; no packet is marked
// at or below kmin and every one at or above kmax.
func TestECNProfile(t *testing.T) {
	f := specFabric(t, "leafspine:leaves=2,spines=1,hosts_per_leaf=4,gbps=100")
	m := &workloads.Matrix{Hosts: 8}
	for i := 0; i < 4; i++ {
		m.Flows = append(m.Flows, workloads.Flow{ID: i, Src: i, Dst: 4, Size: 2 << 20, After: -1})
	}
	p := htsimParams(transport.ECMP)
	s, err := New(Config{Fabric: f, Matrix: m, Transport: p, Seed: 1, QueueBytes: 64 * 4150, KMin: 0.25, KMax: 0.75, ECNProfile: true,
		Delivery: Delivery{Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run()
	e := s.ECNProfile()
	var seen, marked uint64
	for i := range e.Seen {
		lo := int64(i) * e.BucketBytes
		hi := lo + e.BucketBytes
		seen += e.Seen[i]
		marked += e.Marked[i]
		if hi <= e.KMin && e.Marked[i] > 0 {
			t.Errorf("bucket [%d, %d) at or below kmin %d: %d marked", lo, hi, e.KMin, e.Marked[i])
		}
		if lo >= e.KMax && e.Marked[i] != e.Seen[i] {
			t.Errorf("bucket [%d, %d) at or above kmax %d: %d of %d marked", lo, hi, e.KMax, e.Marked[i], e.Seen[i])
		}
	}
	if marked != r.Packets.ECNMarked || seen == 0 || marked == 0 {
		t.Errorf("profile: %d seen, %d marked; the run marked %d", seen, marked, r.Packets.ECNMarked)
	}
	// The receiver sees the marks: every marked packet crossed one
	// congested port (host4's), so the CE packets delivered are the
	// marks less the marked packets that were dropped later.
	if d := s.Delivery(0); d.CE == 0 || d.CE > marked || d.CE+r.Packets.Dropped < marked {
		t.Errorf("delivered %d CE packets; %d marked, %d dropped", d.CE, marked, r.Packets.Dropped)
	}
}

// TestLinkLossWindow: packets lost to a failed link are counted from the
// failure on; with reconvergence they stop.
func TestLinkLossWindow(t *testing.T) {
	f := specFabric(t, "leafspine:leaves=2,spines=2,hosts_per_leaf=4,gbps=100")
	m := workloads.Permutation(f, 4<<20, 1)
	link := f.Ports[egress(t, f, "leaf0", "spine0")].Link
	p := htsimParams(transport.REPS)
	s, err := New(Config{Fabric: f, Matrix: m, Transport: p, Seed: 1, Reconverge: 50e6,
		Links: []LinkEvent{{At: 100e6, Link: link}}})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run()
	n, first, last := s.LinkLoss()
	if r.Incomplete != 0 || n == 0 || first != 100e6 || last < first || last > 100e6+50e6+10e6 {
		t.Fatalf("%d incomplete; lost %d packets from %d to %d ps; want from the failure at 100 us to about the reconvergence 50 us later", r.Incomplete, n, first, last)
	}
}

// TestBMWGStagesHotPathAllocations: the delivery stage, the ECN profile,
// pacing, flowlet routing and the PFC watchdog allocate nothing per
// packet: 64 times the packets cost no more allocations beyond the
// transport's per-flow growth.
func TestBMWGStagesHotPathAllocations(t *testing.T) {
	f := specFabric(t, "leafspine:leaves=2,spines=4,hosts_per_leaf=4,gbps=100")
	checkFlatAllocs(t, "the stages", 9, 64<<10, 4<<20, func(size int64) Config {
		m := &workloads.Matrix{Hosts: 8}
		for i := 0; i < 8; i++ {
			m.Flows = append(m.Flows, workloads.Flow{ID: i, Src: i, Dst: (i + 4) % 8, Size: size, After: -1, Rate: int64(60e9 + 1e9*float64(i))})
		}
		m.Flows = append(m.Flows, workloads.Flow{ID: 8, Src: 0, Dst: 5, Size: size, After: -1})
		return Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1,
			Routing: RoutingFlowlet, Delivery: Delivery{Enabled: true}, ECNProfile: true,
			PFC: PFC{Enabled: true, WatchdogDetect: 50e6}}
	})
}
