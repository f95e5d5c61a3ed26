package simbackend

import (
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/pathctl"
	"github.com/fabricbench/fabricbench/sim"
	"github.com/fabricbench/fabricbench/workloads"
)

// elephants is issue 16 item 4's set-up: 8 elephant flows from leaf0's
// hosts to leaf1's on an 8-spine leaf-spine.
func elephants(t *testing.T) (*inventory.Fabric, *workloads.Matrix) {
	f, err := inventory.ParseSpec("leafspine:leaves=2,spines=8,hosts_per_leaf=8")
	if err != nil {
		t.Fatal(err)
	}
	m := &workloads.Matrix{Name: "elephants", Hosts: 16}
	for i := 0; i < 8; i++ {
		m.Flows = append(m.Flows, workloads.Flow{ID: i, Src: i, Dst: 8 + i, Size: 16 << 20, After: -1})
	}
	return f, m
}

// outcome runs the matrix and returns the p01 pair bandwidth (fraction of
// line rate), how many leaf-spine links (either direction of the data's
// way) carried more than one elephant and the most elephants on one.
func outcome(t *testing.T, f *inventory.Fabric, m *workloads.Matrix, seed uint64, sr sim.SRv6) (p01 float64, shared, most int) {
	tp := transport.DefaultParams()
	tp.LB = transport.ECMP
	s, err := sim.New(sim.Config{Fabric: f, Matrix: m, Transport: tp, Seed: seed, SRv6: sr})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run()
	p01 = 2
	for _, fr := range r.Flows {
		if fr.FCT <= 0 {
			t.Fatalf("flow %d did not finish", fr.ID)
		}
		line := float64(f.PortRate(f.Nodes[f.Hosts[fr.Src]].Ports[0]))
		bw := float64(m.Flows[fr.ID].Size) * 8 / (float64(fr.FCT) * 1e-12) / line
		p01 = min(p01, bw) // the 1st percentile of 8 is the smallest
	}
	size := uint64(m.Flows[0].Size)
	for _, leaf := range []string{"leaf0", "spine"} {
		for n := range f.Nodes {
			name := f.Nodes[n].Name
			if len(name) < len(leaf) || name[:len(leaf)] != leaf {
				continue
			}
			for _, p := range f.Nodes[n].Ports {
				peer := f.Nodes[f.PeerNode(p)].Name
				if (leaf == "leaf0" && peer[:5] == "spine") || (leaf == "spine" && peer == "leaf1") {
					n := int((s.PortStats(p).OutOctets + size/2) / size)
					most = max(most, n)
					if n > 1 {
						shared++
					}
				}
			}
		}
	}
	return p01, shared, most
}

// TestDisjointVersusECMP is the acceptance of issue 16 item 4: placed on
// disjoint spines (pathctl.Disjoint, pinned as the backend pins them) the
// 8 elephants share no uplink and each runs at >= 95% of line rate;
// hashed by ECMP some collide.
func TestDisjointVersusECMP(t *testing.T) {
	f, m := elephants(t)
	pl := pathctl.Disjoint(f, m.Flows, 1<<20)
	if len(pl.Placed) != 8 || pl.Shared != 0 || len(pl.Unplaced) != 0 {
		t.Fatalf("placement: %d placed, %d shared links, unplaced %v", len(pl.Placed), pl.Shared, pl.Unplaced)
	}
	collisions := 0
	for seed := uint64(1); seed <= 3; seed++ {
		dp, ds, dm := outcome(t, f, m, seed, sim.SRv6{Paths: placedPaths(f, pl.Placed)})
		ep, es, em := outcome(t, f, m, seed, sim.SRv6{})
		t.Logf("seed %d: disjoint p01 pair bw %.4f, %d shared links (at most %d elephants on one); ECMP p01 %.4f, %d shared links (at most %d on one)",
			seed, dp, ds, dm, ep, es, em)
		if ds != 0 || dp < 0.95 {
			t.Errorf("seed %d: disjoint placement: %d shared uplinks, p01 pair bw %.4f (want 0, >= 0.95)", seed, ds, dp)
		}
		collisions += es
	}
	if collisions == 0 {
		t.Errorf("ECMP hashing showed no collision in 3 seeds")
	}
}
