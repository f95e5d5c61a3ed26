package workloads

import (
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/inventory"
)

func groupOfHost(f *inventory.Fabric, h int) int { return f.Nodes[f.HostLeaf(h)].Pod }

func TestGroupWorkloads(t *testing.T) {
	f, err := inventory.ParseSpec("dragonfly:p=2,a=4,h=2")
	if err != nil {
		t.Fatal(err)
	}
	// D1 of the non-shortest-path paper: 72 hosts, 8 per group; its pair counts.
	if UNF.Pairs(f) != 4608 || ADV1.Pairs(f) != 64 || ADV2.Pairs(f) != 512 {
		t.Errorf("pairs: UNF %d ADV1 %d ADV2 %d, want 4608 64 512", UNF.Pairs(f), ADV1.Pairs(f), ADV2.Pairs(f))
	}
	m, err := ParseSpec("groupshift:size=1MiB", f, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Flows) != 72 {
		t.Fatalf("groupshift: %d flows, want 72", len(m.Flows))
	}
	for _, fl := range m.Flows {
		if groupOfHost(f, fl.Dst) != (groupOfHost(f, fl.Src)+1)%9 || fl.Dst%8 != fl.Src%8 {
			t.Fatalf("groupshift flow %d -> %d is not group i -> i+1, same position", fl.Src, fl.Dst)
		}
	}
	m, err = ParseSpec("adv1:size=1MiB,src_group=2,dst_group=5", f, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Flows) != 64 {
		t.Fatalf("adv1: %d flows, want the paper's 64", len(m.Flows))
	}
	for _, fl := range m.Flows {
		if groupOfHost(f, fl.Src) != 2 || groupOfHost(f, fl.Dst) != 5 {
			t.Fatalf("adv1 flow %d -> %d not group 2 -> 5", fl.Src, fl.Dst)
		}
	}
	m, err = ParseSpec("adv2:size=1MiB,flows=300", f, 7)
	if err != nil {
		t.Fatal(err)
	}
	dst := groupOfHost(f, m.Flows[0].Dst)
	for _, fl := range m.Flows {
		if groupOfHost(f, fl.Dst) != dst || groupOfHost(f, fl.Src) == dst {
			t.Fatalf("adv2 flow %d -> %d: destinations must all be in group %d, sources outside", fl.Src, fl.Dst, dst)
		}
	}
	m, err = ParseSpec("unf:size=64KiB,flows=500", f, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, fl := range m.Flows {
		if groupOfHost(f, fl.Src) == groupOfHost(f, fl.Dst) {
			t.Fatalf("unf flow %d -> %d stays in its group", fl.Src, fl.Dst)
		}
	}
	// Deterministic per seed.
	a, _ := ParseSpec("unf:size=64KiB,flows=50", f, 3)
	b, _ := ParseSpec("unf:size=64KiB,flows=50", f, 3)
	for i := range a.Flows {
		if a.Flows[i] != b.Flows[i] {
			t.Fatal("unf is not deterministic for a seed")
		}
	}
	for spec, want := range map[string]string{
		"adv1:size=1MiB,src_group=3,dst_group=3": "two different groups",
		"adv1:size=1MiB,dst_group=9":             "out of range",
		"groupshift:size=1MiB,shift=9":           "onto itself",
	} {
		if _, err := ParseSpec(spec, f, 1); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", spec, err, want)
		}
	}
}
