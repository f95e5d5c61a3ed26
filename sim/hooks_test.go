package sim

import (
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

func TestGroupBarrierStartsAfterEveryFlowOfTheGroup(t *testing.T) {
	f := refFabric(t)
	// Group 1: four flows of different sizes; group 2 waits for all of them.
	m := &workloads.Matrix{Hosts: 128}
	for i, size := range []int64{64 << 10, 256 << 10, 1 << 20, 32 << 10} {
		m.Flows = append(m.Flows, workloads.Flow{ID: i, Src: i, Dst: 64 + i, Size: size, After: -1, Group: 1})
	}
	const gap = 5e6 // 5 us
	for i := 0; i < 4; i++ {
		m.Flows = append(m.Flows, workloads.Flow{ID: 4 + i, Src: i, Dst: 64 + i, Size: 64 << 10, After: -1, Start: gap, Group: 2, AfterGroup: 1})
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	r := run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1})
	var last int64
	for _, fr := range r.Flows[:4] {
		if e := fr.Start + fr.FCT; e > last {
			last = e
		}
	}
	for _, fr := range r.Flows[4:] {
		if fr.Start != last+gap {
			t.Fatalf("flow %d of group 2 started at %d ps, want the end of group 1 (%d) + %d", fr.ID, fr.Start, last, int64(gap))
		}
	}
}

func TestGroupValidation(t *testing.T) {
	m := &workloads.Matrix{Hosts: 4, Flows: []workloads.Flow{
		{ID: 0, Src: 0, Dst: 1, Size: 1, After: -1, Group: 1},
		{ID: 1, Src: 1, Dst: 2, Size: 1, After: -1, Group: 1, AfterGroup: 1},
	}}
	if err := m.Validate(); err == nil {
		t.Fatal("a flow waiting for its own group was accepted")
	}
}

func TestDirectionalDegradeSlowsOnlyOneDirection(t *testing.T) {
	f, err := inventory.ParseSpec("leafspine:leaves=2,spines=1,hosts_per_leaf=1")
	if err != nil {
		t.Fatal(err)
	}
	// host0 -> host1 and host1 -> host0; degrade host0's transmit side only.
	m := &workloads.Matrix{Hosts: 2, Flows: []workloads.Flow{
		{ID: 0, Src: 0, Dst: 1, Size: 4 << 20, After: -1},
		{ID: 1, Src: 1, Dst: 0, Size: 4 << 20, After: -1},
	}}
	link := f.Ports[f.Nodes[f.Hosts[0]].Ports[0]].Link
	r := run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1,
		Links: []LinkEvent{{Link: link, Up: true, RateFactor: 0.5, Direction: inventory.DirAB}}})
	a, b := r.Flows[0].FCT, r.Flows[1].FCT
	t.Logf("host0->host1 %d ps, host1->host0 %d ps", a, b)
	if float64(a) < 1.8*float64(b) {
		t.Fatalf("the degraded direction took %d ps, the other %d ps: want about twice as long", a, b)
	}
}

func TestIdealFCTMatchesAnUnloadedFlow(t *testing.T) {
	f := refFabric(t)
	m := refMatrix(t, "one128.cm")
	s, err := New(Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	fl := m.Flows[0]
	ideal := s.IdealFCT(fl.Src, fl.Dst, fl.Size)
	r := s.Run()
	got := r.Flows[0].FCT
	if d := float64(got-ideal) / float64(ideal); d < -0.01 || d > 0.01 {
		t.Fatalf("ideal FCT %d ps, unloaded flow took %d ps (%.2f%%)", ideal, got, 100*d)
	}
}

func TestInterruptStopsARun(t *testing.T) {
	f := refFabric(t)
	m := workloads.Permutation(f, 2<<20, 1)
	var s *Sim
	cfg := Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1,
		SampleEvery: 10e6, OnSample: func(sm *Sim, now int64) {
			if now >= 50e6 {
				sm.Interrupt()
			}
		}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run()
	if !r.Interrupted || r.Incomplete == 0 || r.SimEnd > 60e6 {
		t.Fatalf("interrupted %v, incomplete %d, end %d ps", r.Interrupted, r.Incomplete, r.SimEnd)
	}
}

func TestAddressOnlyHashPinsSprayedPackets(t *testing.T) {
	f := refFabric(t)
	m := &workloads.Matrix{Hosts: 128, Flows: []workloads.Flow{{ID: 0, Src: 0, Dst: 127, Size: 4 << 20, After: -1}}}
	used := func(addrOnly bool) int {
		s, err := New(Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.OPS), Seed: 1, HashAddressesOnly: addrOnly})
		if err != nil {
			t.Fatal(err)
		}
		s.Run()
		n := 0
		leaf := f.HostLeaf(0)
		for _, p := range f.Nodes[leaf].Ports {
			if f.Ports[p].Uplink && s.PortStats(p).OutPkts > 0 {
				n++
			}
		}
		return n
	}
	if spray, pinned := used(false), used(true); spray < 2 || pinned != 1 {
		t.Fatalf("OPS used %d uplinks with the 5-tuple hash and %d with addresses only; want several and 1", spray, pinned)
	}
}
