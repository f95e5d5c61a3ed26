package sim

import (
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

func srv6Fabric(t testing.TB, spec string) *inventory.Fabric {
	t.Helper()
	f, err := inventory.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func sidOf(t testing.TB, f *inventory.Fabric, name string) uint16 {
	t.Helper()
	n, ok := f.NodeByName(name)
	if !ok {
		t.Fatalf("no node %s", name)
	}
	return USID(f, n)
}

// TestSRv6PinsAndCountsOverhead: a flow pinned via spine2 crosses spine2
// only, its encapsulated packets are 40 bytes longer on every link up to
// the destination leaf, which decapsulates: the host link carries what it
// carries without SRv6.
func TestSRv6PinsAndCountsOverhead(t *testing.T) {
	f := srv6Fabric(t, "leafspine:leaves=2,spines=4,hosts_per_leaf=2")
	m := &workloads.Matrix{Hosts: 4, Flows: []workloads.Flow{{ID: 7, Src: 0, Dst: 2, Size: 1 << 20, After: -1}}}
	tp := transport.DefaultParams()
	base := Config{Fabric: f, Matrix: m, Transport: tp, Seed: 1}
	pinned := base
	pinned.SRv6 = SRv6{Paths: []SRv6Path{{Name: "via-spine2", Flows: []int{7}, SIDs: []uint16{sidOf(t, f, "spine2")}, Strict: true}}}
	s0, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	r0 := s0.Run()
	s1, err := New(pinned)
	if err != nil {
		t.Fatal(err)
	}
	r1 := s1.Run()
	if r1.Flows[0].FCT < 0 {
		t.Fatal("pinned flow did not finish")
	}
	for _, sp := range []string{"spine0", "spine1", "spine2", "spine3"} {
		out := s1.PortStats(portTo(s1, sp, "leaf1")).OutOctets
		if (sp == "spine2") != (out > 1<<20) {
			t.Errorf("%s -> leaf1 carried %d bytes; only spine2 should carry the flow", sp, out)
		}
	}
	nic := func(s *Sim) PortStats { return s.PortStats(portTo(s, "host0", "leaf0")) }
	up := func(s *Sim) uint64 { return s.PortStats(portTo(s, "leaf0", "spine2")).OutOctets }
	down := func(s *Sim) uint64 { return s.PortStats(portTo(s, "leaf1", "host2")).OutOctets }
	pk := nic(s1).OutPkts
	t.Logf("packets %d; host NIC %d -> %d bytes, leaf1->host2 %d -> %d bytes (FCT %d -> %d ps)",
		pk, nic(s0).OutOctets, nic(s1).OutOctets, down(s0), down(s1), r0.Flows[0].FCT, r1.Flows[0].FCT)
	if got := nic(s1).OutOctets - nic(s0).OutOctets; nic(s0).OutPkts != pk || got != SRv6Encap*pk {
		t.Errorf("encapsulation: %d extra bytes over %d packets (%d before), want %d each", got, pk, nic(s0).OutPkts, SRv6Encap)
	}
	if up(s1) != nic(s1).OutOctets {
		t.Errorf("leaf0 -> spine2 %d bytes, want the NIC's %d (still encapsulated)", up(s1), nic(s1).OutOctets)
	}
	if down(s1) != down(s0) {
		t.Errorf("leaf1 -> host2 %d bytes, want %d (decapsulated)", down(s1), down(s0))
	}
	if r1.Flows[0].FCT <= r0.Flows[0].FCT {
		t.Errorf("40 bytes more per packet should cost time: FCT %d vs %d", r1.Flows[0].FCT, r0.Flows[0].FCT)
	}
}

// TestSRv6NonAdjacent: on a 3-tier fat tree a list naming only a core
// switch is routed to it by ECMP (normal routing between uSIDs), then on
// to the destination leaf; strict, the same list is refused.
func TestSRv6NonAdjacent(t *testing.T) {
	f := srv6Fabric(t, "fattree:hosts=16,tiers=3")
	m := &workloads.Matrix{Hosts: 16, Flows: []workloads.Flow{{ID: 1, Src: 0, Dst: 15, Size: 256 << 10, After: -1}}}
	p := SRv6Path{Name: "via-core2", Flows: []int{1}, SIDs: []uint16{sidOf(t, f, "core2")}}
	cfg := Config{Fabric: f, Matrix: m, Transport: transport.DefaultParams(), Seed: 1, SRv6: SRv6{Paths: []SRv6Path{p}}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.Run().Flows[0].FCT < 0 {
		t.Fatal("flow did not finish")
	}
	core, _ := f.NodeByName("core2")
	var through uint64
	for _, c := range []string{"core0", "core1", "core2", "core3"} {
		n, _ := f.NodeByName(c)
		var out uint64
		for _, q := range f.Nodes[n].Ports {
			out += s.PortStats(q).OutOctets
		}
		if n == core {
			through = out
		} else if out > 64<<10 { // ACKs may cross other cores
			t.Errorf("%s carried %d bytes of the pinned flow", c, out)
		}
	}
	if through < 256<<10 {
		t.Errorf("core2 carried %d bytes, want the whole flow", through)
	}
	p.Strict = true
	cfg.SRv6.Paths[0] = p
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "via-core2") || !strings.Contains(err.Error(), "not adjacent") {
		t.Errorf("strict non-adjacent hop: error %v", err)
	}
}

func TestSRv6Errors(t *testing.T) {
	f := srv6Fabric(t, "leafspine:leaves=2,spines=4,hosts_per_leaf=2")
	m := &workloads.Matrix{Hosts: 4, Flows: []workloads.Flow{{ID: 1, Src: 0, Dst: 2, Size: 64 << 10, After: -1}}}
	s0, s1, s2 := sidOf(t, f, "spine0"), sidOf(t, f, "spine1"), sidOf(t, f, "spine2")
	l0, l1 := sidOf(t, f, "leaf0"), sidOf(t, f, "leaf1")
	for _, c := range []struct {
		p    SRv6Path
		want string
	}{
		{SRv6Path{Name: "bad", Flows: []int{1}, SIDs: []uint16{0x4242}}, "path bad: uSID 0 (0x4242) is no switch's uN"},
		{SRv6Path{Name: "long", Flows: []int{1}, SIDs: []uint16{s0, l0, s1, l1, s2}}, "path long: flow 1: 7 uSIDs"},
		{SRv6Path{Name: "gone", Flows: []int{9}, SIDs: []uint16{s0}}, "path gone: flow 9 is not in the traffic matrix"},
		{SRv6Path{Name: "empty", Flows: []int{1}}, "path empty: no uSIDs"},
		{SRv6Path{Name: "twice", Flows: []int{1}, SIDs: []uint16{s0, s0}}, "path twice: uSID 1"},
		{SRv6Path{Name: "strict", Flows: []int{1}, SIDs: []uint16{s0, s1}, Strict: true}, "path strict: strict: hop 1, spine1 is not adjacent to spine0"},
	} {
		_, err := New(Config{Fabric: f, Matrix: m, Transport: transport.DefaultParams(), SRv6: SRv6{Paths: []SRv6Path{c.p}}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.p.Name, err, c.want)
		}
	}
	// Four listed, ending at the destination leaf, and its uDX: 5 uSIDs.
	ok := SRv6Path{Name: "ok", Flows: []int{1}, SIDs: []uint16{s0, l0, s1, l1}}
	if _, err := New(Config{Fabric: f, Matrix: m, Transport: transport.DefaultParams(), SRv6: SRv6{Paths: []SRv6Path{ok}}}); err != nil {
		t.Errorf("4 uSIDs ending at the destination leaf: %v", err)
	}
}

// TestSRv6Allocations: the uSID stage allocates nothing per packet, and
// runs are deterministic.
func TestSRv6Allocations(t *testing.T) {
	f := srv6Fabric(t, "leafspine:leaves=2,spines=4,hosts_per_leaf=4")
	cfg := func(size int64) Config {
		var fl []workloads.Flow
		var paths []SRv6Path
		for i := 0; i < 4; i++ {
			fl = append(fl, workloads.Flow{ID: i, Src: i, Dst: 4 + i, Size: size, After: -1})
			paths = append(paths, SRv6Path{Name: "p", Flows: []int{i}, SIDs: []uint16{USID(f, 10+i)}})
		}
		return Config{Fabric: f, Matrix: &workloads.Matrix{Hosts: 8, Flows: fl}, Transport: transport.DefaultParams(), Seed: 1,
			SRv6: SRv6{Paths: paths}}
	}
	checkFlatAllocs(t, "SRv6", 4, 64<<10, 8<<20, cfg)
	r1, r2 := run(t, cfg(1<<20)), run(t, cfg(1<<20))
	if r1.Events != r2.Events || r1.Flows[3].FCT != r2.Flows[3].FCT {
		t.Errorf("runs differ: %d/%d events", r1.Events, r2.Events)
	}
}
