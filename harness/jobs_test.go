package harness

import (
	"testing"

	"github.com/fabricbench/fabricbench/harness/suite"
	"github.com/fabricbench/fabricbench/inventory"
)

func fabric(t *testing.T) *inventory.Fabric {
	t.Helper()
	f, err := inventory.ParseSpec("leafspine:leaves=4,spines=4,hosts_per_leaf=4")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRingAllReduceSchedule(t *testing.T) {
	f := fabric(t)
	hosts := []int{0, 1, 2, 3, 4}
	w, err := BuildWorkload(f, []Job{{Name: "ar", Workload: AllReduce, Hosts: hosts, Size: 5 << 20, Reps: 1}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	n := len(hosts)
	if got, want := len(w.Matrix.Flows), 2*(n-1)*n; got != want {
		t.Fatalf("%d flows, want 2(n-1)n = %d", got, want)
	}
	byID := map[int]int{}
	for i, fl := range w.Matrix.Flows {
		byID[fl.ID] = i
	}
	for i, fl := range w.Matrix.Flows {
		if fl.Dst != hosts[(indexOf(hosts, fl.Src)+1)%n] || fl.Size != 1<<20 {
			t.Fatalf("flow %d: %d->%d size %d, want a ring step of 1 MiB", fl.ID, fl.Src, fl.Dst, fl.Size)
		}
		step := i / n
		if step == 0 {
			if fl.After != -1 {
				t.Fatalf("first-step flow %d waits for %d", fl.ID, fl.After)
			}
			continue
		}
		// Rank src sends step s once it has received step s-1.
		prev := w.Matrix.Flows[byID[fl.After]]
		if prev.Dst != fl.Src || byID[fl.After]/n != step-1 {
			t.Fatalf("flow %d (step %d from %d) waits for flow %d (%d->%d)", fl.ID, step, fl.Src, fl.After, prev.Src, prev.Dst)
		}
	}
}

func indexOf(s []int, v int) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func TestAllToAllWindowAndRepetitionBarrier(t *testing.T) {
	f := fabric(t)
	hosts := []int{0, 5, 10, 15}
	w, err := BuildWorkload(f, []Job{{Name: "a", Workload: AllToAll, Hosts: hosts, Size: 1000, Reps: 2, Window: 1, Gap: 7e6, Start: 3e6}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Matrix.Flows) != 2*4*3 {
		t.Fatalf("%d flows", len(w.Matrix.Flows))
	}
	pairs := map[[2]int]int{}
	for i, fl := range w.Matrix.Flows {
		rep := w.FlowRep[i]
		pairs[[2]int{fl.Src, fl.Dst}]++
		switch {
		case fl.After >= 0: // window 1: the next flow of the same sender
		case rep == 0:
			if fl.Start != 3e6 || fl.AfterGroup != 0 {
				t.Fatalf("rep 0 flow %+v: want start 3us, no barrier", fl)
			}
		default:
			if fl.AfterGroup != fl.Group-1 || fl.Start != 7e6 {
				t.Fatalf("rep 1 flow %+v: want the barrier on rep 0 and the gap", fl)
			}
		}
	}
	if len(pairs) != 12 {
		t.Fatalf("%d distinct pairs, want 12", len(pairs))
	}
	for p, c := range pairs {
		if c != 2 {
			t.Fatalf("pair %v sent %d times, want once per repetition", p, c)
		}
	}
}

func TestIncastAndPermutationParticipants(t *testing.T) {
	f := fabric(t)
	w, err := BuildWorkload(f, []Job{
		{Name: "in", Workload: Incast, Hosts: []int{1, 2, 3, 4, 5}, Receiver: 3, Senders: 2, Size: 10},
		{Name: "p", Workload: Permutation, Hosts: []int{6, 7, 8}, Size: 10},
	}, 9)
	if err != nil {
		t.Fatal(err)
	}
	var in, perm int
	seen := map[int]bool{}
	for i, fl := range w.Matrix.Flows {
		if w.FlowJob[i] == 0 {
			in++
			if fl.Dst != 3 || fl.Src == 3 {
				t.Fatalf("incast flow %d->%d", fl.Src, fl.Dst)
			}
			continue
		}
		perm++
		if fl.Src == fl.Dst || fl.Src < 6 || fl.Dst < 6 || fl.Dst > 8 || seen[fl.Dst] {
			t.Fatalf("permutation flow %d->%d", fl.Src, fl.Dst)
		}
		seen[fl.Dst] = true
	}
	if in != 2 || perm != 3 {
		t.Fatalf("%d incast and %d permutation flows, want 2 and 3", in, perm)
	}
}

func TestResolveFaults(t *testing.T) {
	f := fabric(t)
	got, err := resolveFault(f, &suite.Fault{Kind: "degrade", Port: "spine2:Ethernet1", Fraction: 0.25, At: "10us", Until: "20us"}, "F1", 1)
	if err != nil {
		t.Fatal(err)
	}
	// Spine ports are the B end of leaf-spine links: transmit side = B->A.
	if len(got) != 2 || got[0].Direction != inventory.DirBA || got[0].Fraction != 0.25 || got[0].At != 10e6 || got[1].At != 20e6 || got[1].Fraction != 1 {
		t.Fatalf("%+v", got)
	}
	l := f.Links[got[0].Link]
	if f.Nodes[f.Ports[l.B].Node].Name != "spine2" || f.Ports[l.B].Name != "Ethernet1" {
		t.Fatalf("wrong link %+v", l)
	}
	flap, err := resolveFault(f, &suite.Fault{Kind: "flap", NIC: "host3", Period: "10us", Count: 3}, "F1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(flap) != 6 || flap[0].Up || !flap[1].Up || flap[1].At != 5e6 || flap[4].At != 20e6 {
		t.Fatalf("flap: %+v", flap)
	}
	if _, err := resolveFault(f, &suite.Fault{Kind: "down", Port: "leaf0:Ethernet99"}, "F1", 1); err == nil {
		t.Fatal("an unknown port was accepted")
	}
	// Random: a fraction of the switch-to-switch links, by seed, down and up.
	var fabricLinks int
	for _, l := range f.Links {
		if f.Nodes[f.Ports[l.A].Node].IsSwitch() && f.Nodes[f.Ports[l.B].Node].IsSwitch() {
			fabricLinks++
		}
	}
	rnd := func(seed uint64) []Fault {
		got, err := resolveFault(f, &suite.Fault{Kind: "random", Fraction: 0.25, At: "10us", Until: "20us"}, "F2", seed)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	r1, r2 := rnd(1), rnd(2)
	want := int(0.25*float64(fabricLinks) + 0.5)
	if len(r1) != 2*want || r1[0].Up || r1[0].At != 10e6 || !r1[1].Up || r1[1].At != 20e6 || r1[1].Link != r1[0].Link {
		t.Fatalf("random: %d events %+v, want %d links down at 10us and up at 20us", len(r1), r1, want)
	}
	same := true
	for i := range r1 {
		l := f.Links[r1[i].Link]
		if !f.Nodes[f.Ports[l.A].Node].IsSwitch() || !f.Nodes[f.Ports[l.B].Node].IsSwitch() {
			t.Fatalf("random fault on a host link: %+v", r1[i])
		}
		same = same && r1[i].Link == r2[i].Link
	}
	if same {
		t.Error("seeds 1 and 2 failed the same links")
	}
	if r3 := rnd(1); r3[0].Link != r1[0].Link {
		t.Error("the same seed failed different links")
	}
}
