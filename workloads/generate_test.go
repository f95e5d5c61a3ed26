package workloads

import (
	"reflect"
	"testing"

	"github.com/fabricbench/fabricbench/inventory"
)

// checkPermutation checks that m is a permutation (derangement) on f with
// flows i -> dst in order, and returns how many flows stay in their
// sender's leaf and pod.
func checkPermutation(t *testing.T, f *inventory.Fabric, m *Matrix, size int64) (sameLeaf, samePod int) {
	t.Helper()
	n := f.NumHosts()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if m.Hosts != n || len(m.Flows) != n {
		t.Fatalf("hosts %d flows %d, want %d and %d", m.Hosts, len(m.Flows), n, n)
	}
	recv := make([]int, n)
	for i, fl := range m.Flows {
		if fl.ID != i || fl.Src != i || fl.Size != size || fl.Start != 0 || fl.After != -1 {
			t.Fatalf("flow %d = %+v", i, fl)
		}
		if fl.Dst == fl.Src {
			t.Fatalf("host %d sends to itself", i)
		}
		recv[fl.Dst]++
		if f.HostLeaf(fl.Src) == f.HostLeaf(fl.Dst) {
			sameLeaf++
		}
		if p := f.HostPod(fl.Src); p >= 0 && p == f.HostPod(fl.Dst) {
			samePod++
		}
	}
	for h, c := range recv {
		if c != 1 {
			t.Fatalf("host %d receives %d flows", h, c)
		}
	}
	return sameLeaf, samePod
}

func TestPermutationOutsidePod(t *testing.T) {
	f := leafSpine(t, 4, 2, 2) // 16 hosts, 4 pods of 2 leaves of 2 hosts
	for seed := range uint64(200) {
		m := Permutation(f, 2<<20, seed)
		if leaf, pod := checkPermutation(t, f, m, 2<<20); leaf != 0 || pod != 0 {
			t.Fatalf("seed %d: %d flows stay in their leaf, %d in their pod", seed, leaf, pod)
		}
	}
}

func TestPermutationOutsideLeaf(t *testing.T) {
	f := leafSpine(t, 0, 4, 4) // flat: 4 leaves of 4 hosts
	for seed := range uint64(200) {
		if leaf, _ := checkPermutation(t, f, Permutation(f, 1000, seed), 1000); leaf != 0 {
			t.Fatalf("seed %d: %d flows stay in their leaf", seed, leaf)
		}
	}
	// Two leaves of exactly half the hosts: every flow crosses.
	f = leafSpine(t, 0, 2, 5)
	for seed := range uint64(200) {
		if leaf, _ := checkPermutation(t, f, Permutation(f, 1000, seed), 1000); leaf != 0 {
			t.Fatalf("two halves, seed %d: %d flows stay in their leaf", seed, leaf)
		}
	}
}

func TestPermutationFallbacks(t *testing.T) {
	// Pods of 6 and 2 hosts: leaving the pod is impossible for everyone,
	// leaving the leaf is not; at least 4 of the 6 senders of the big pod
	// must stay in it, and the best-effort pass should get exactly 4.
	f := buildFabric(t, true, []int{2, 2, 2}, []int{2})
	for seed := range uint64(200) {
		leaf, pod := checkPermutation(t, f, Permutation(f, 1, seed), 1)
		if leaf != 0 {
			t.Fatalf("unbalanced pods, seed %d: %d flows stay in their leaf", seed, leaf)
		}
		if pod != 4 {
			t.Fatalf("unbalanced pods, seed %d: %d flows stay in their pod, the minimum is 4", seed, pod)
		}
	}
	// One leaf: only a derangement is possible.
	f = leafSpine(t, 0, 1, 5)
	for seed := range uint64(50) {
		checkPermutation(t, f, Permutation(f, 1, seed), 1)
	}
	f = leafSpine(t, 0, 1, 2)
	checkPermutation(t, f, Permutation(f, 1, 7), 1)
	// A leaf of 3 and a leaf of 1: the lone host must send into and receive
	// from the big leaf, the best effort pass should find that.
	f = buildFabric(t, false, []int{3, 1})
	for seed := range uint64(50) {
		m := Permutation(f, 1, seed)
		checkPermutation(t, f, m, 1)
		if m.Flows[3].Dst == 3 || f.HostLeaf(m.Flows[3].Dst) == f.HostLeaf(3) {
			t.Fatalf("seed %d: lone host sends to %d", seed, m.Flows[3].Dst)
		}
	}
	// One host: no flows.
	f = leafSpine(t, 0, 1, 1)
	if m := Permutation(f, 1, 1); len(m.Flows) != 0 || m.Validate() == nil {
		t.Fatalf("one host: %+v", m)
	}
}

func TestPermutationDeterministic(t *testing.T) {
	f := leafSpine(t, 4, 2, 2)
	a, b := Permutation(f, 100, 42), Permutation(f, 100, 42)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different matrices")
	}
	if c := Permutation(f, 100, 43); reflect.DeepEqual(a.Flows, c.Flows) {
		t.Fatal("seeds 42 and 43 give the same matrix")
	}
}

func TestIncast(t *testing.T) {
	f := leafSpine(t, 4, 2, 2) // host 5's leaf holds hosts 4 and 5
	for _, tc := range []struct {
		n, dst  int
		inLeaf  int // senders expected in dst's leaf
		wantDst int
	}{
		{n: 14, dst: 5, inLeaf: 0, wantDst: 5},
		{n: 15, dst: 5, inLeaf: 1, wantDst: 5},
		{n: 3, dst: 0, inLeaf: 0, wantDst: 0},
		{n: 8, dst: -1, inLeaf: 0, wantDst: -1},
	} {
		m, err := Incast(f, tc.n, tc.dst, 2e6, 9)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		if len(m.Flows) != tc.n || m.Hosts != 16 {
			t.Fatalf("%+v: %d flows on %d hosts", tc, len(m.Flows), m.Hosts)
		}
		dst := m.Flows[0].Dst
		if tc.wantDst >= 0 && dst != tc.wantDst {
			t.Fatalf("%+v: destination %d", tc, dst)
		}
		seen := map[int]bool{}
		inLeaf := 0
		for i, fl := range m.Flows {
			if fl.ID != i || fl.Dst != dst || fl.Size != 2e6 || fl.Start != 0 || fl.After != -1 {
				t.Fatalf("%+v: flow %+v", tc, fl)
			}
			if seen[fl.Src] || fl.Src == dst {
				t.Fatalf("%+v: bad sender %d", tc, fl.Src)
			}
			if i > 0 && fl.Src < m.Flows[i-1].Src {
				t.Fatalf("%+v: senders not sorted", tc)
			}
			seen[fl.Src] = true
			if f.HostLeaf(fl.Src) == f.HostLeaf(dst) {
				inLeaf++
			}
		}
		if inLeaf != tc.inLeaf {
			t.Fatalf("%+v: %d senders in the destination's leaf", tc, inLeaf)
		}
	}
	// Random destination: deterministic per seed, varies with the seed.
	dsts := map[int]bool{}
	for seed := range uint64(20) {
		a, _ := Incast(f, 4, -1, 1, seed)
		b, _ := Incast(f, 4, -1, 1, seed)
		if !reflect.DeepEqual(a, b) {
			t.Fatal("same seed, different matrices")
		}
		dsts[a.Flows[0].Dst] = true
	}
	if len(dsts) < 3 {
		t.Fatalf("random destinations: only %v", dsts)
	}
	for _, tc := range []struct {
		n, dst int
		want   string
	}{
		{0, 1, "incast: 0 senders requested; the fabric has 15 hosts besides the destination"},
		{16, 1, "incast: 16 senders requested; the fabric has 15 hosts besides the destination"},
		{2, 16, "incast: destination host 16 out of range [0, 16)"},
		{2, -2, "incast: destination host -2 out of range [0, 16)"},
	} {
		if _, err := Incast(f, tc.n, tc.dst, 1, 1); err == nil || err.Error() != tc.want {
			t.Errorf("Incast(n=%d, dst=%d) = %v, want %q", tc.n, tc.dst, err, tc.want)
		}
	}
}

// checkAllToAll checks the shape of an all-to-all with window k.
func checkAllToAll(t *testing.T, m *Matrix, n, k int, size int64) {
	t.Helper()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(m.Flows) != n*(n-1) || m.Hosts != n {
		t.Fatalf("%d flows on %d hosts, want %d on %d", len(m.Flows), m.Hosts, n*(n-1), n)
	}
	pair := make([]bool, n*n)
	for id, fl := range m.Flows {
		if fl.ID != id || fl.Size != size || fl.Start != 0 {
			t.Fatalf("flow %+v", fl)
		}
		s, j := id/(n-1), id%(n-1)
		if fl.Src != s {
			t.Fatalf("flow %d from %d, want %d", id, fl.Src, s)
		}
		if pair[s*n+fl.Dst] {
			t.Fatalf("pair %d->%d twice", s, fl.Dst)
		}
		pair[s*n+fl.Dst] = true
		want := -1
		if k > 0 && j >= k {
			want = id - k
			if p := m.Flows[want]; p.Src != s {
				t.Fatalf("flow %d waits for flow %d of another sender", id, want)
			}
		}
		if fl.After != want {
			t.Fatalf("flow %d (sender %d, step %d) After %d, want %d", id, s, j, fl.After, want)
		}
	}
	// At each step every host receives exactly one flow.
	for j := range n - 1 {
		recv := make([]bool, n)
		for s := range n {
			d := m.Flows[s*(n-1)+j].Dst
			if recv[d] {
				t.Fatalf("step %d: host %d receives twice", j, d)
			}
			recv[d] = true
		}
	}
}

func TestAllToAll(t *testing.T) {
	f := leafSpine(t, 4, 2, 2)
	for _, k := range []int{0, -1, 1, 3, 14, 15, 100} {
		checkAllToAll(t, AllToAll(f, 4096, k, 5), 16, k, 4096)
	}
	if a, b := AllToAll(f, 1, 2, 5), AllToAll(f, 1, 2, 5); !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different matrices")
	}
	if a, b := AllToAll(f, 1, 2, 5), AllToAll(f, 1, 2, 6); reflect.DeepEqual(a.Flows, b.Flows) {
		t.Fatal("different seeds, same matrix")
	}
	f = leafSpine(t, 0, 1, 2)
	checkAllToAll(t, AllToAll(f, 1, 1, 1), 2, 1, 1)
}

func TestAllToAll1024(t *testing.T) {
	if testing.Short() {
		t.Skip("large matrix")
	}
	f := leafSpine(t, 0, 32, 32)
	m := AllToAll(f, 1<<20, 4, 1)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(m.Flows) != 1047552 {
		t.Fatalf("%d flows", len(m.Flows))
	}
	// How long generation and validation take is measured by
	// BenchmarkAllToAll1024 and BenchmarkValidateAllToAll1024
	// (task bench-workloads), not asserted here.
}

func BenchmarkAllToAll1024(b *testing.B) {
	f := leafSpine(b, 0, 32, 32)
	for b.Loop() {
		AllToAll(f, 1<<20, 4, 1)
	}
}

func BenchmarkValidateAllToAll1024(b *testing.B) {
	f := leafSpine(b, 0, 32, 32)
	m := AllToAll(f, 1<<20, 4, 1)
	for b.Loop() {
		if err := m.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPermutation4096(b *testing.B) {
	f := leafSpine(b, 8, 16, 32)
	for b.Loop() {
		Permutation(f, 1<<20, 1)
	}
}
