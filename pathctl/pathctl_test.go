package pathctl

import (
	"testing"

	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

func TestDisjointLeavesLocalFlowsAndBalances(t *testing.T) {
	f, err := inventory.ParseSpec("leafspine:leaves=2,spines=2,hosts_per_leaf=4")
	if err != nil {
		t.Fatal(err)
	}
	var fl []workloads.Flow
	for i := 0; i < 4; i++ {
		fl = append(fl, workloads.Flow{ID: i, Src: i, Dst: 4 + i, Size: 8 << 20, After: -1})
	}
	fl = append(fl, workloads.Flow{ID: 4, Src: 0, Dst: 1, Size: 8 << 20, After: -1}, // same leaf
		workloads.Flow{ID: 5, Src: 1, Dst: 5, Size: 1 << 10, After: -1}) // a mouse
	pl := Disjoint(f, fl, 1<<20)
	per := map[int]int{}
	for _, p := range pl.Placed {
		per[p.Via[0]]++
	}
	if len(pl.Placed) != 4 || len(pl.Unplaced) != 1 || pl.Unplaced[0] != 4 || len(per) != 2 || per[10] != 2 {
		t.Errorf("placed %+v, unplaced %v, per spine %v", pl.Placed, pl.Unplaced, per)
	}
	// 4 elephants on 2 spines: both links of each spine carry 2.
	if pl.Shared != 4 {
		t.Errorf("shared links %d, want 4", pl.Shared)
	}
}
