package sim

import (
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/workloads"
)

// globalShares runs two 4 MiB flows from the hosts of group 0's first
// router (host 0 and 1) to group 4 on the 72-host Dragonfly (p2 a4 h2)
// with routing mode and returns the share of group 0's outgoing global
// packets on the source router's own global links (mean per link) and on
// the group's other global links (mean per link).
func globalShares(t *testing.T, mode LowDiameter) (own, other float64) {
	t.Helper()
	f := spritzDragonfly(t, 2, 4, 2, 400)
	m := &workloads.Matrix{Name: "g0-g4", Hosts: f.NumHosts(), Flows: []workloads.Flow{
		{ID: 0, Src: 0, Dst: 32, Size: 4 << 20, After: -1}, {ID: 1, Src: 1, Dst: 33, Size: 4 << 20, After: -1}}}
	tp := spritzParams(transport.OPS)
	s, err := New(Config{Fabric: f, Matrix: m, Transport: tp, Seed: 1, LowDiameter: mode})
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Run(); r.Incomplete > 0 {
		t.Fatalf("%s: %d flows did not finish", mode, r.Incomplete)
	}
	src := f.HostLeaf(0)
	group := f.Nodes[src].Pod
	var ownPk, otherPk, total float64
	var nOwn, nOther int
	for p := range f.Ports {
		fp := &f.Ports[p]
		if !f.Links[fp.Link].Global || f.Nodes[fp.Node].Pod != group {
			continue
		}
		n := float64(s.PortStats(p).OutPkts)
		total += n
		if fp.Node == src {
			ownPk, nOwn = ownPk+n, nOwn+1
		} else {
			otherPk, nOther = otherPk+n, nOther+1
		}
	}
	if total == 0 || nOwn == 0 || nOther == 0 {
		t.Fatalf("%s: %g packets on %d own and %d other global links", mode, total, nOwn, nOther)
	}
	return ownPk / total / float64(nOwn), otherPk / total / float64(nOther)
}

// TestValiantHopFavoursDirectGlobalLinks: with the next hop sampled at
// each switch (valiant-hop, the Spritz paper's Valiant) the source
// router's own global links each carry about 1/(a-1+h) = 20% of the
// group's outgoing global packets and each of the other routers' about
// 10% (measured 0.191 vs 0.103, 1.85x; at least 1.5x asserted); with the
// textbook Valiant (a uniform intermediate group, 1/7 of the packets on
// each of the 7 links to an intermediate group) the shares are near equal
// (0.147 vs 0.118, 1.25x: the link into the destination's group, never an
// intermediate, is among the others; below 1.5x asserted).
func TestValiantHopFavoursDirectGlobalLinks(t *testing.T) {
	own, other := globalShares(t, ValiantHop)
	vOwn, vOther := globalShares(t, Valiant)
	t.Logf("share of group 0's outgoing global packets per link: valiant-hop own router %.3f, other routers %.3f (%.2fx); valiant %.3f, %.3f (%.2fx)",
		own, other, own/other, vOwn, vOther, vOwn/vOther)
	if own < 1.5*other {
		t.Errorf("valiant-hop: the source router's own global links carry %.3f each, not 1.5x the others' %.3f", own, other)
	}
	if vOwn >= 1.5*vOther {
		t.Errorf("valiant: own %.3f vs other %.3f per global link, want below 1.5x (uniform intermediate group)", vOwn, vOther)
	}
}

// TestValiantHopTableIII logs the Table III benchmark (72 hosts, the
// paper's Figure 5 background, seeds 1-5, TestSpritzTableIII's setting)
// for valiant-hop next to the textbook Valiant [paper Valiant: 228 us].
// Both must finish; only the figures are compared (docs/papers.md).
func TestValiantHopTableIII(t *testing.T) {
	f := spritzDragonfly(t, 2, 4, 2, 400)
	m, err := workloads.ParseSpec("monitored:size=6MiB,free=1", f, 1)
	if err != nil {
		t.Fatal(err)
	}
	runTableIII(t, f, m, 5, []spritzScheme{{"Valiant", Valiant, transport.OPS, false}, {"Valiant (hop)", ValiantHop, transport.OPS, false}})
}

// TestValiantHopNeedsDragonfly: valiant-hop is refused on a fabric without
// global links.
func TestValiantHopNeedsDragonfly(t *testing.T) {
	f := arFabric(t, "fattree:hosts=8,tiers=2")
	m := workloads.Permutation(f, 4096, 1)
	if _, err := New(Config{Fabric: f, Matrix: m, Transport: spritzParams(transport.OPS), LowDiameter: ValiantHop}); err == nil {
		t.Error("valiant-hop on a fat tree: no error")
	}
}
