package runspec

import (
	"testing"
)

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
