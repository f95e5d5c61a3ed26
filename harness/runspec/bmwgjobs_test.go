package runspec

import "testing"

// All-gather and reduce-scatter are rings of n-1 steps of size/n chunks;
// qps splits a flow into queue pairs; rate paces each sender.
func TestRingAllGatherQPsAndRate(t *testing.T) {
	f := fabric(t) // 100 Gb/s NICs
	hosts := []int{0, 1, 2, 3}
	for _, wl := range []string{AllGather, ReduceScatter} {
		w, err := BuildWorkload(f, []Job{{Name: "ag", Workload: wl, Hosts: hosts, Size: 4 << 20, Reps: 2}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		n := len(hosts)
		if got, want := len(w.Matrix.Flows), 2*(n-1)*n; got != want {
			t.Fatalf("%s: %d flows, want 2 repetitions of (n-1)n = %d", wl, got, want)
		}
		for i, fl := range w.Matrix.Flows[:(n-1)*n] {
			if fl.Size != 1<<20 || fl.Dst != hosts[(indexOf(hosts, fl.Src)+1)%n] || (i >= n) != (fl.After >= 0) {
				t.Fatalf("%s flow %d: %d->%d %d bytes after %d", wl, i, fl.Src, fl.Dst, fl.Size, fl.After)
			}
		}
	}
	w, err := BuildWorkload(f, []Job{{Name: "p", Workload: Permutation, Hosts: hosts, Size: 10 << 20, Reps: 1, QPs: 4, RateFrac: 0.5}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Matrix.Flows) != 16 {
		t.Fatalf("%d flows, want 4 pairs x 4 QPs", len(w.Matrix.Flows))
	}
	pairs := map[[2]int]int64{}
	for _, fl := range w.Matrix.Flows {
		pairs[[2]int{fl.Src, fl.Dst}] += fl.Size
		if fl.Rate != 50e9/4 {
			t.Fatalf("flow %d paced at %d bps, want half of 100 Gb/s over 4 QPs", fl.ID, fl.Rate)
		}
	}
	for p, b := range pairs {
		if b != 10<<20 {
			t.Fatalf("pair %v carries %d bytes, want 10 MiB", p, b)
		}
	}
}
