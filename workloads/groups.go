package workloads

import (
	"fmt"
	"math/rand/v2"

	"github.com/fabricbench/fabricbench/inventory"
)

// Group-structured traffic for low-diameter fabrics (Dragonfly groups,
// or any fabric's pods): the adversarial group shift of Spritz and
// Dragonfly papers, and the UNF, ADV1 and ADV2 pairings of the
// non-shortest-path paper (../shared/papers/non-shortest-path-routing-lossy.txt,
// Sec. IV).

// GroupByPod splits hosts by group (the pod of each host's switch): the
// groups in order of their first host in hosts, each in hosts' order.
func GroupByPod(f *inventory.Fabric, hosts []int) [][]int {
	idx := map[int]int{}
	var out [][]int
	for _, h := range hosts {
		pod := f.Nodes[f.HostLeaf(h)].Pod
		g, ok := idx[pod]
		if !ok {
			g = len(out)
			idx[pod] = g
			out = append(out, nil)
		}
		out[g] = append(out[g], h)
	}
	return out
}

// hostGroupsOf returns the hosts of each group (GroupByPod over every
// host), in host order, and an error when the fabric has fewer than two.
func hostGroupsOf(f *inventory.Fabric) ([][]int, error) {
	all := make([]int, f.NumHosts())
	for h := range all {
		all[h] = h
	}
	out := GroupByPod(f, all)
	if len(out) < 2 {
		return nil, fmt.Errorf("the fabric has %d group(s) of hosts (pods); group traffic needs at least 2", len(out))
	}
	return out, nil
}

// GroupShift is the adversarial pattern: the k-th host of group g sends
// size bytes to the k-th host of group g+shift (mod the number of groups),
// when that group has a k-th host.
func GroupShift(f *inventory.Fabric, size int64, shift int) (*Matrix, error) {
	gs, err := hostGroupsOf(f)
	if err != nil {
		return nil, err
	}
	if shift%len(gs) == 0 {
		return nil, fmt.Errorf("shift %d maps every group of %d onto itself", shift, len(gs))
	}
	m := &Matrix{Name: fmt.Sprintf("groupshift:size=%d,shift=%d", size, shift), Hosts: f.NumHosts()}
	for g, hs := range gs {
		to := gs[((g+shift)%len(gs)+len(gs))%len(gs)]
		for k, h := range hs {
			if k < len(to) {
				m.Flows = append(m.Flows, Flow{ID: len(m.Flows), Src: h, Dst: to[k], Size: size, After: -1})
			}
		}
	}
	return m, nil
}

// Pairing is one of the non-shortest-path paper's workloads.
type Pairing int

const (
	// UNF: the source uniformly from all hosts, the destination uniformly
	// from the hosts outside the source's group.
	UNF Pairing = iota
	// ADV1: two random groups; every source in the first, every
	// destination in the second.
	ADV1
	// ADV2: one random group receives; sources from all the others.
	ADV2
)

func (p Pairing) String() string {
	return [...]string{"unf", "adv1", "adv2"}[p]
}

// Pairs returns the paper's number of distinct pairs of a pairing (its
// Table: UNF hosts x (hosts - per group), ADV1 per group squared, ADV2
// (groups - 1) x per group squared), for a balanced fabric.
func (p Pairing) Pairs(f *inventory.Fabric) int {
	gs, err := hostGroupsOf(f)
	if err != nil {
		return 0
	}
	per, n := len(gs[0]), f.NumHosts()
	switch p {
	case UNF:
		return n * (n - per)
	case ADV1:
		return per * per
	}
	return (len(gs) - 1) * per * per
}

// GroupPairs draws flows source-destination pairs of pairing p (each a
// flow of size bytes, all starting at 0), seeded. src and dst fix ADV1's
// groups and ADV2's destination group (dst) when >= 0; otherwise they are
// drawn at random.
func GroupPairs(f *inventory.Fabric, p Pairing, size int64, flows int, src, dst int, seed uint64) (*Matrix, error) {
	gs, err := hostGroupsOf(f)
	if err != nil {
		return nil, err
	}
	G := len(gs)
	if src >= G || dst >= G {
		return nil, fmt.Errorf("group %d out of range: the fabric has groups 0..%d", max(src, dst), G-1)
	}
	if flows < 1 {
		return nil, fmt.Errorf("flows must be positive, got %d", flows)
	}
	r := rand.New(rand.NewPCG(seed, 0x67727073))
	groupOf := make([]int, f.NumHosts())
	for g, hs := range gs {
		for _, h := range hs {
			groupOf[h] = g
		}
	}
	if p == ADV1 {
		if dst < 0 {
			dst = r.IntN(G)
			for dst == src {
				dst = r.IntN(G)
			}
		}
		if src < 0 {
			src = r.IntN(G)
			for src == dst {
				src = r.IntN(G)
			}
		}
		if src == dst {
			return nil, fmt.Errorf("adv1 needs two different groups, got %d twice", src)
		}
	}
	if p == ADV2 && dst < 0 {
		dst = r.IntN(G)
	}
	name := fmt.Sprintf("%s:size=%d,flows=%d", p, size, flows)
	if p != UNF {
		if p == ADV1 {
			name += fmt.Sprintf(",src_group=%d", src)
		}
		name += fmt.Sprintf(",dst_group=%d", dst)
	}
	m := &Matrix{Name: name, Hosts: f.NumHosts()}
	n := f.NumHosts()
	for i := 0; i < flows; i++ {
		var a, b int
		switch p {
		case UNF:
			a = r.IntN(n)
			for b = r.IntN(n); groupOf[b] == groupOf[a]; b = r.IntN(n) {
			}
		case ADV1:
			a, b = gs[src][r.IntN(len(gs[src]))], gs[dst][r.IntN(len(gs[dst]))]
		case ADV2:
			b = gs[dst][r.IntN(len(gs[dst]))]
			for a = r.IntN(n); groupOf[a] == dst; a = r.IntN(n) {
			}
		}
		m.Flows = append(m.Flows, Flow{ID: i, Src: a, Dst: b, Size: size, After: -1})
	}
	return m, nil
}
