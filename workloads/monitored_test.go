package workloads

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/inventory"
)

// TestMonitoredFig5 checks the Spritz Figure 5 pattern on the 72-host
// Dragonfly (p2 a4 h2, 9 groups of 8 hosts): the monitored flow 0 -> 71
// (group 0 -> 8), group 7 free; in each of groups 0..6 the hosts off the
// exit router (the one with the global link to group 8) send to its two
// hosts, and no background flow leaves its group or touches groups 7 and 8.
func TestMonitoredFig5(t *testing.T) {
	f, err := inventory.ParseSpec("dragonfly:p=2,a=4,h=2")
	if err != nil {
		t.Fatal(err)
	}
	if got := FreeBefore(9, 0, 8, 1); !reflect.DeepEqual(got, []int{7}) {
		t.Fatalf("FreeBefore(9, 0, 8, 1) = %v, want [7]", got)
	}
	if got := FreeBefore(9, 7, 8, 2); !reflect.DeepEqual(got, []int{5, 6}) {
		t.Fatalf("FreeBefore(9, 7, 8, 2) = %v, want [5 6] (the source group is skipped)", got)
	}
	m, err := ParseSpec("monitored:size=6MiB", f, 1)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := ParseSpec("monitored:size=6MiB", f, 99)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Flows, m2.Flows) {
		t.Error("the pattern depends on the seed; it must be deterministic")
	}
	if fl := m.Flows[0]; fl.Src != 0 || fl.Dst != 71 || fl.Size != 4<<20 {
		t.Fatalf("monitored flow %+v, want 0 -> 71, 4 MiB", fl)
	}
	// 7 congested groups x 6 senders, less the monitored sender in group 0
	if len(m.Flows) != 1+7*6-1 {
		t.Fatalf("%d flows, want 1 + 41 background", len(m.Flows))
	}
	recv := map[int]map[int]int{} // group -> receiver -> flows
	for _, fl := range m.Flows[1:] {
		g := groupOfHost(f, fl.Src)
		if groupOfHost(f, fl.Dst) != g {
			t.Fatalf("background %d -> %d leaves group %d", fl.Src, fl.Dst, g)
		}
		if g == 7 || g == 8 || fl.Src == 0 {
			t.Fatalf("background %d -> %d in an idle group or from the monitored sender", fl.Src, fl.Dst)
		}
		// the receiver's router holds the group's global link to group 8
		r := f.HostLeaf(fl.Dst)
		linked := false
		for _, l := range f.Links {
			a, b := f.Ports[l.A].Node, f.Ports[l.B].Node
			linked = linked || l.Global && (a == r && f.Nodes[b].Pod == 8 || b == r && f.Nodes[a].Pod == 8)
		}
		if !linked {
			t.Fatalf("background %d -> %d: %s has no global link to group 8", fl.Src, fl.Dst, f.Nodes[r].Name)
		}
		if f.HostLeaf(fl.Src) == r {
			t.Fatalf("background %d -> %d from the exit router's own host", fl.Src, fl.Dst)
		}
		if recv[g] == nil {
			recv[g] = map[int]int{}
		}
		recv[g][fl.Dst]++
	}
	for g := 0; g < 7; g++ {
		if len(recv[g]) != 2 {
			t.Fatalf("group %d: background reaches %d hosts, want the exit router's 2", g, len(recv[g]))
		}
		for h, n := range recv[g] {
			// 6 senders in turn onto 2 hosts; group 0 has 5 (the
			// monitored sender is not one): its first receiver gets 3
			want := 3
			if g == 0 && h%2 == 1 {
				want = 2
			}
			if n != want {
				t.Errorf("group %d: host %d receives %d flows, want %d", g, h, n, want)
			}
		}
	}
	// group 0's exit router is router 3 (hosts 6, 7): htsim's arrangement
	// puts group 0's links to groups 7 and 8 on its last router.
	p, err := Monitored{Src: 0, Dst: 71, Size: 1, BackgroundSize: 1, Free: []int{7}}.Plan(f)
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Congested[0]; c.Group != 0 || !reflect.DeepEqual(c.Receivers, []int{6, 7}) || !reflect.DeepEqual(c.Senders, []int{1, 2, 3, 4, 5}) {
		t.Errorf("group 0: %+v, want receivers [6 7], senders [1..5]", c)
	}
	for _, bad := range []string{"monitored:size=1MiB,src=0,dst=3", "monitored:size=1MiB,free=x", "monitored:size=1MiB,flow=0"} {
		if _, err := ParseSpec(bad, f, 1); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	if _, err := (Monitored{Src: 0, Dst: 71, Size: 1, BackgroundSize: 1, Free: []int{0}}).Plan(f); err == nil {
		t.Error("the source group accepted as free")
	}
}

// TestMonitoredIntoDst: the into=dst variant keeps the senders and sends
// every background flow into the destination group, never to the
// monitored receiver.
func TestMonitoredIntoDst(t *testing.T) {
	f, err := inventory.ParseSpec("dragonfly:p=2,a=4,h=2")
	if err != nil {
		t.Fatal(err)
	}
	a, err := ParseSpec("monitored:size=6MiB", f, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseSpec("monitored:size=6MiB,into=dst", f, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Flows) != len(b.Flows) {
		t.Fatalf("%d vs %d flows", len(a.Flows), len(b.Flows))
	}
	for i, fl := range b.Flows[1:] {
		if fl.Src != a.Flows[i+1].Src || groupOfHost(f, fl.Dst) != 8 || fl.Dst == 71 {
			t.Fatalf("into=dst flow %d -> %d (paper pattern: %d -> %d)", fl.Src, fl.Dst, a.Flows[i+1].Src, a.Flows[i+1].Dst)
		}
	}
	if _, err := ParseSpec("monitored:size=6MiB,into=x", f, 1); err == nil {
		t.Error("into=x accepted")
	}
}

// TestMonitoredIntoPeer: into=peer sends group g's background over g's
// global link to the destination group, to the hosts of the router at its
// far end (never the monitored receiver); flows=N keeps each group's
// first N senders; bg=minimal marks the background, not the monitored
// flow, as minimal-routed environment traffic.
func TestMonitoredIntoPeer(t *testing.T) {
	f, err := inventory.ParseSpec("dragonfly:p=2,a=4,h=2")
	if err != nil {
		t.Fatal(err)
	}
	mb := Monitored{Src: 0, Dst: 71, Size: 4 << 20, BackgroundSize: 6 << 20, Free: []int{7}}
	plan, err := mb.Plan(f)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseSpec("monitored:size=6MiB,into=peer,flows=2,bg=minimal", f, 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.Flows[0].Minimal {
		t.Error("the monitored flow is marked minimal")
	}
	want := 2 * len(plan.Congested)
	if got := len(m.Flows) - 1; got != want {
		t.Fatalf("%d background flows, want 2 per congested group (%d)", got, want)
	}
	k := 1
	for _, cg := range plan.Congested {
		if f.Nodes[cg.Peer].Pod != plan.DstGroup {
			t.Fatalf("group %d: peer %s is not in the destination group", cg.Group, f.Nodes[cg.Peer].Name)
		}
		linked := false
		for _, l := range f.Links {
			a, b := f.Ports[l.A].Node, f.Ports[l.B].Node
			linked = linked || l.Global && (a == cg.Exit && b == cg.Peer || a == cg.Peer && b == cg.Exit)
		}
		if !linked {
			t.Fatalf("group %d: no global link %s - %s", cg.Group, f.Nodes[cg.Exit].Name, f.Nodes[cg.Peer].Name)
		}
		for j := 0; j < 2; j++ {
			fl := m.Flows[k]
			k++
			if fl.Src != cg.Senders[j] || f.HostLeaf(fl.Dst) != cg.Peer || fl.Dst == 71 || !fl.Minimal {
				t.Fatalf("group %d flow %d -> %d (minimal %v): want sender %d to a host of %s but 71, minimal", cg.Group, fl.Src, fl.Dst, fl.Minimal, cg.Senders[j], f.Nodes[cg.Peer].Name)
			}
		}
	}
	for _, bad := range []string{"flows=-1", "bg=x", "into=x"} {
		if _, err := ParseSpec("monitored:size=6MiB,"+bad, f, 1); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	// A peer router whose only host is the monitored receiver.
	f1, err := inventory.ParseSpec("dragonfly:p=1,a=2,h=1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseSpec("monitored:size=1MiB,free=0,into=peer", f1, 1); err == nil || !strings.Contains(err.Error(), "no host but the monitored receiver") {
		t.Errorf("into=peer onto the receiver's router: %v", err)
	}
}
