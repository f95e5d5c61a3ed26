package sim

import (
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

func TestReconvergenceStopsBlackholing(t *testing.T) {
	f, err := inventory.ParseSpec("fattree:hosts=16,tiers=3")
	if err != nil {
		t.Fatal(err)
	}
	m := workloads.Permutation(f, 1<<20, 1)
	ev, err := f.ParseLinkEvent("down:tor0-agg0@10us")
	if err != nil {
		t.Fatal(err)
	}
	base := Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.OPS), Seed: 1, Links: []LinkEvent{ev}}
	never := run(t, base)
	base.Reconverge = 5e6
	fast := run(t, base)
	n, r := fcts(t, never), fcts(t, fast)
	t.Logf("tor0-agg0 down at 10 us, OPS: no reconvergence max FCT %.1f us (%d dropped); reconverged after 5 us: %.1f us (%d dropped)",
		n.max, never.Packets.Dropped, r.max, fast.Packets.Dropped)
	if never.Reroutes != 0 || fast.Reroutes != 1 {
		t.Errorf("reroutes: %d without reconvergence, %d with; want 0 and 1", never.Reroutes, fast.Reroutes)
	}
	if fast.Packets.Dropped >= never.Packets.Dropped || r.max >= n.max {
		t.Errorf("reconvergence did not help: drops %d -> %d, max FCT %.1f -> %.1f", never.Packets.Dropped, fast.Packets.Dropped, n.max, r.max)
	}
}
