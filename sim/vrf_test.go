package sim

import (
	"slices"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/workloads"
)

// TestVRFRefusesUnreachableFlow: a flow between hosts of two VRFs without
// a leak is refused in New, naming the flow and both VRFs; a leak makes it
// reachable.
func TestVRFRefusesUnreachableFlow(t *testing.T) {
	f := srv6Fabric(t, "leafspine:leaves=2,spines=2,hosts_per_leaf=2")
	m := &workloads.Matrix{Hosts: 4, Flows: []workloads.Flow{{ID: 3, Src: 0, Dst: 2, Size: 64 << 10, After: -1}}}
	cfg := Config{Fabric: f, Matrix: m, Transport: transport.DefaultParams(), Seed: 1,
		VRF: VRF{Of: []int{0, 0, 1, 1}, Names: []string{"red", "blue"}}}
	_, err := New(cfg)
	if err == nil || !strings.Contains(err.Error(), "flow 3") || !strings.Contains(err.Error(), "VRF red") || !strings.Contains(err.Error(), "VRF blue") {
		t.Fatalf("New: %v, want the flow and both VRFs named", err)
	}
	cfg.VRF.Reach = [][]bool{{true, true}, {true, true}}
	r := run(t, cfg)
	if r.Flows[0].FCT < 0 {
		t.Fatal("leaked flow did not finish")
	}
}

// TestVRFDropsWithoutRoute: with DropUnreachable the cross-VRF flow's
// packets die at the source leaf (nothing reaches the destination host,
// counted as unreachable) while a flow inside a VRF runs as without VRFs.
func TestVRFDropsWithoutRoute(t *testing.T) {
	f := srv6Fabric(t, "leafspine:leaves=2,spines=2,hosts_per_leaf=2")
	m := &workloads.Matrix{Hosts: 4, Flows: []workloads.Flow{
		{ID: 0, Src: 0, Dst: 2, Size: 256 << 10, After: -1}, // red -> blue
		{ID: 1, Src: 1, Dst: 3, Size: 256 << 10, After: -1}, // blue -> blue
	}}
	cfg := Config{Fabric: f, Matrix: m, Transport: transport.DefaultParams(), Seed: 1, End: 2_000_000_000,
		VRF: VRF{Of: []int{0, 1, 1, 1}, DropUnreachable: true}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run()
	if r.Flows[0].FCT >= 0 || r.Flows[1].FCT < 0 {
		t.Fatalf("FCTs %d, %d: want the cross-VRF flow unfinished and the other done", r.Flows[0].FCT, r.Flows[1].FCT)
	}
	if in := s.PortStats(portTo(s, "leaf1", "host2")).OutOctets; in != 0 {
		t.Errorf("host2 received %d bytes across VRFs", in)
	}
	if r.Packets.Unreachable == 0 || r.Packets.Dropped < r.Packets.Unreachable {
		t.Errorf("unreachable %d, dropped %d", r.Packets.Unreachable, r.Packets.Dropped)
	}
	if d := s.PortStats(portTo(s, "host0", "leaf0")).OutOctets; d == 0 {
		t.Error("host0 sent nothing")
	}
}

// TestVRFECMP: per-VRF ECMP. The same eight flows between two leaves
// spread over the four spines one way in the default VRF and another in a
// VRF of their own (each VRF hashes with its own salt); each is
// deterministic.
func TestVRFECMP(t *testing.T) {
	f := srv6Fabric(t, "leafspine:leaves=2,spines=4,hosts_per_leaf=8")
	m := &workloads.Matrix{Hosts: 16}
	for i := 0; i < 8; i++ {
		m.Flows = append(m.Flows, workloads.Flow{ID: i, Src: i, Dst: 8 + i, Size: 256 << 10, After: -1})
	}
	tp := transport.DefaultParams()
	tp.LB = transport.ECMP
	spread := func(of []int) []uint64 {
		s, err := New(Config{Fabric: f, Matrix: m, Transport: tp, Seed: 1, VRF: VRF{Of: of}})
		if err != nil {
			t.Fatal(err)
		}
		if r := s.Run(); r.Incomplete > 0 {
			t.Fatalf("%d flows incomplete", r.Incomplete)
		}
		var out []uint64
		for _, sp := range []string{"spine0", "spine1", "spine2", "spine3"} {
			out = append(out, s.PortStats(portTo(s, sp, "leaf1")).OutOctets>>16)
		}
		return out
	}
	def := make([]int, 16)
	own := make([]int, 16)
	for i := range own {
		own[i] = 1
	}
	a, b, a2 := spread(def), spread(own), spread(def)
	t.Logf("64 KiB units per spine: default VRF %v, VRF 1 %v", a, b)
	if !slices.Equal(a, a2) {
		t.Errorf("not deterministic: %v vs %v", a, a2)
	}
	if slices.Equal(a, b) {
		t.Errorf("VRF 1 spreads the flows as the default VRF does (%v): no per-VRF hashing", a)
	}
}
