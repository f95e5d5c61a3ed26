package workloads

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/fabricbench/fabricbench/inventory"
)

// pcgStream is the second PCG word of every generator's random source, so
// that the seed alone determines a generator's output.
const pcgStream = 0x6661627269636265 // "fabricbe"

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, pcgStream)) }

// Permutation returns a permutation matrix on f: every host sends size
// bytes to exactly one other host and receives from exactly one, all
// starting at 0. Flow i goes from host i; flow IDs are 0..n-1.
//
// Receivers are chosen at random subject to the strongest of these
// constraints that some permutation can meet:
//
//  1. the receiver is outside the sender's pod and leaf (when no pod,
//     together with the leaves spanning pods, holds more than half of the
//     hosts, e.g. two or more equal pods);
//  2. the receiver is outside the sender's leaf (when no leaf holds more
//     than half of the hosts);
//  3. the receiver is not the sender.
//
// Whichever level is guaranteed, a best-effort pass then swaps receivers to
// move further flows out of their sender's leaf and pod. A fabric with fewer
// than two hosts gets a matrix with no flows (which Validate rejects).
func Permutation(f *inventory.Fabric, size int64, seed uint64) *Matrix {
	n := f.NumHosts()
	m := &Matrix{Name: fmt.Sprintf("permutation:size=%d", size), Hosts: n}
	if n < 2 {
		return m
	}
	leaf, domain := hostGroups(f)
	self := make([]int32, n)
	for i := range self {
		self[i] = int32(i)
	}
	// cost of sending from a to b: 0 outside a's domain (pod), 1 in its
	// domain but outside its leaf, 2 in its leaf, 3 to itself.
	cost := func(a, b int) int {
		switch {
		case a == b:
			return 3
		case leaf[a] == leaf[b]:
			return 2
		case domain[a] == domain[b]:
			return 1
		}
		return 0
	}
	hard, maxCost := self, 2
	switch {
	case feasible(domain):
		hard, maxCost = domain, 0
	case feasible(leaf):
		hard, maxCost = leaf, 1
	}

	r := newRand(seed)
	dst := r.Perm(n)
	separate(dst, hard, r)
	if maxCost > 0 {
		improve(dst, cost, maxCost, r)
	}
	m.Flows = make([]Flow, n)
	for i, d := range dst {
		m.Flows[i] = Flow{ID: i, Src: i, Dst: d, Size: size, After: -1}
	}
	return m
}

// hostGroups numbers the hosts' leaves, and their domains: the connected
// groups of hosts that share a pod or a leaf. In a normal podded fabric the
// domains are the pods; in a fabric without pods, the leaves.
func hostGroups(f *inventory.Fabric) (leaf, domain []int32) {
	n := f.NumHosts()
	leaf = make([]int32, n)
	parent := make([]int32, n)
	find := func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	union := func(a, b int32) { parent[find(a)] = find(b) }
	leafIdx := make(map[int]int32)
	firstOfLeaf := make(map[int]int32)
	firstOfPod := make(map[int]int32)
	for h := range n {
		parent[h] = int32(h)
		l := f.HostLeaf(h)
		li, ok := leafIdx[l]
		if !ok {
			li = int32(len(leafIdx))
			leafIdx[l] = li
			firstOfLeaf[l] = int32(h)
		}
		leaf[h] = li
		union(int32(h), firstOfLeaf[l])
		if p := f.HostPod(h); p >= 0 {
			if first, ok := firstOfPod[p]; ok {
				union(int32(h), first)
			} else {
				firstOfPod[p] = int32(h)
			}
		}
	}
	domain = make([]int32, n)
	for h := range n {
		domain[h] = find(int32(h))
	}
	return leaf, domain
}

// feasible reports whether some permutation sends every host outside its
// group: exactly when no group holds more than half of the hosts (Hall's
// condition). Group keys are in [0, len(key)).
func feasible(key []int32) bool {
	count := make([]int, len(key))
	for _, k := range key {
		count[k]++
		if 2*count[k] > len(key) {
			return false
		}
	}
	return true
}

// separate rearranges the permutation dst so that key[i] != key[dst[i]] for
// every i, by swapping the receivers of offending senders with those of
// random other senders. Each swap fixes its sender without breaking the
// other one, so a single pass suffices. When no group holds more than half
// of the hosts, a fixing partner always exists: a sender i in group A that
// sends into A leaves at most |A|-1 receivers in A for the n-|A| senders
// outside A, so at least n-2|A|+1 >= 1 of them send outside A, and any of
// those can swap with i. A linear scan finds one if random tries fail.
func separate(dst []int, key []int32, r *rand.Rand) {
	n := len(dst)
	ok := func(i, j int) bool { return key[dst[j]] != key[i] && key[dst[i]] != key[j] }
	for i := range dst {
		if key[i] != key[dst[i]] {
			continue
		}
		fixed := false
		for range 64 {
			if j := r.IntN(n); ok(i, j) {
				dst[i], dst[j] = dst[j], dst[i]
				fixed = true
				break
			}
		}
		if fixed {
			continue
		}
		start := r.IntN(n)
		for s := range n {
			j := start + s
			if j >= n {
				j -= n
			}
			if ok(i, j) {
				dst[i], dst[j] = dst[j], dst[i]
				break
			}
		}
	}
}

// improve lowers the total cost of the permutation dst by random swaps that
// keep every pair's cost at most maxCost.
func improve(dst []int, cost func(a, b int) int, maxCost int, r *rand.Rand) {
	n := len(dst)
	for i := range dst {
		ci := cost(i, dst[i])
		for try := 0; ci > 0 && try < 32; try++ {
			j := r.IntN(n)
			ni, nj := cost(i, dst[j]), cost(j, dst[i])
			if ni <= maxCost && nj <= maxCost && ni+nj < ci+cost(j, dst[j]) {
				dst[i], dst[j] = dst[j], dst[i]
				ci = ni
			}
		}
	}
}

// Incast returns an n:1 incast on f: n distinct senders each send size bytes
// to host dst, all starting at 0, with flow IDs 0..n-1 in increasing sender
// order. dst = -1 picks a random destination. Senders are chosen at random,
// first from the hosts outside dst's leaf and then, if more are needed,
// from dst's leaf. It fails unless 1 <= n <= hosts-1 and -1 <= dst < hosts.
func Incast(f *inventory.Fabric, n, dst int, size int64, seed uint64) (*Matrix, error) {
	hosts := f.NumHosts()
	if hosts < 2 {
		return nil, fmt.Errorf("incast: the fabric has %d hosts; an incast needs at least 2", hosts)
	}
	if dst < -1 || dst >= hosts {
		return nil, fmt.Errorf("incast: destination host %d out of range [0, %d)", dst, hosts)
	}
	if n < 1 || n > hosts-1 {
		return nil, fmt.Errorf("incast: %d senders requested; the fabric has %d hosts besides the destination", n, hosts-1)
	}
	r := newRand(seed)
	if dst < 0 {
		dst = r.IntN(hosts)
	}
	far := make([]int, 0, hosts)
	var near []int
	dl := f.HostLeaf(dst)
	for h := range hosts {
		switch {
		case h == dst:
		case f.HostLeaf(h) != dl:
			far = append(far, h)
		default:
			near = append(near, h)
		}
	}
	r.Shuffle(len(far), func(i, j int) { far[i], far[j] = far[j], far[i] })
	r.Shuffle(len(near), func(i, j int) { near[i], near[j] = near[j], near[i] })
	senders := append(far, near...)[:n]
	slices.Sort(senders)
	m := &Matrix{Name: fmt.Sprintf("incast:senders=%d,size=%d,dst=%d", n, size, dst), Hosts: hosts, Flows: make([]Flow, n)}
	for i, s := range senders {
		m.Flows[i] = Flow{ID: i, Src: s, Dst: dst, Size: size, After: -1}
	}
	return m, nil
}

// AllToAll returns an all-to-all on f: every host sends size bytes to every
// other host, n(n-1) flows for n hosts. The flows of host s have IDs
// s(n-1) .. s(n-1)+n-2, in the order s sends them: the hosts are placed on
// a random ring, and the j-th flow of each host goes to the host j places
// further along it, so at every step j each host receives exactly one flow.
//
// With k > 0 each sender has at most k flows outstanding: its j-th flow for
// j >= k has After = the ID of its flow j-k (and a zero delay), all others
// start at 0. With k <= 0 every flow starts at 0. A fabric with fewer than
// two hosts gets a matrix with no flows (which Validate rejects).
func AllToAll(f *inventory.Fabric, size int64, k int, seed uint64) *Matrix {
	n := f.NumHosts()
	name := fmt.Sprintf("alltoall:size=%d", size)
	if k > 0 {
		name += fmt.Sprintf(",k=%d", k)
	}
	m := &Matrix{Name: name, Hosts: n}
	if n < 2 {
		return m
	}
	ring := newRand(seed).Perm(n)
	pos := make([]int, n)
	for p, h := range ring {
		pos[h] = p
	}
	per := n - 1
	m.Flows = make([]Flow, n*per)
	for s := range n {
		base := s * per
		q := pos[s]
		for j := range per {
			q++
			if q == n {
				q = 0
			}
			id := base + j
			after := -1
			if k > 0 && j >= k {
				after = id - k
			}
			m.Flows[id] = Flow{ID: id, Src: s, Dst: ring[q], Size: size, After: after}
		}
	}
	return m
}
