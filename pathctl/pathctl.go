// Package pathctl is a path-placement controller: at job start it pins
// elephant flows to explicit SRv6 micro-SID paths chosen to share as few
// links as possible (the deterministic path placement of Filsfils et al.,
// "Toward Deterministic Path Placement in AI Backends"), instead of
// leaving them to ECMP hashing, where two elephants land on one uplink as
// soon as their hashes collide.
//
// Disjoint places each elephant between two leaves on a switch both
// leaves are adjacent to (a spine of a leaf-spine): the one whose two
// links (source leaf -> spine, spine -> destination leaf) carry the
// fewest elephants already placed, ties broken round robin. Elephants
// within one leaf, and those between leaves with no common neighbour (a
// 3-tier fat tree across pods), are left to ECMP.
//
// Rerouter (reroute.go) is the reroute loop on gNMI telemetry: it moves
// pinned pairs off links whose measured capacity drops (a degraded link).
package pathctl

import (
	"sort"

	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

// Placement pins one flow to the switches Via (node IDs), in order.
type Placement struct {
	Flow int // flow ID
	Via  []int
}

// Result is a placement and what it could not place.
type Result struct {
	Placed []Placement
	// Unplaced are elephants left to ECMP (same leaf, or no common
	// neighbour of their leaves).
	Unplaced []int
	// Shared is how many directed leaf-spine links carry more than one
	// placed elephant (0 when the fabric has room for all of them).
	Shared int
}

// Disjoint places the flows of at least minBytes (elephants; 0: every
// flow) on disjoint paths. The order is deterministic: by start time,
// then size (largest first), then ID.
func Disjoint(f *inventory.Fabric, flows []workloads.Flow, minBytes int64) Result {
	var el []workloads.Flow
	for _, fl := range flows {
		if fl.Size >= minBytes {
			el = append(el, fl)
		}
	}
	sort.SliceStable(el, func(i, j int) bool {
		a, b := el[i], el[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.Size != b.Size {
			return a.Size > b.Size
		}
		return a.ID < b.ID
	})
	load := map[[2]int]int{} // directed (node, node) link -> elephants
	rr := map[[2]int]int{}   // leaf pair -> round-robin offset
	var out Result
	for _, fl := range el {
		a, b := f.HostLeaf(fl.Src), f.HostLeaf(fl.Dst)
		if a < 0 || b < 0 || a == b {
			out.Unplaced = append(out.Unplaced, fl.ID)
			continue
		}
		cand := common(f, a, b)
		if len(cand) == 0 {
			out.Unplaced = append(out.Unplaced, fl.ID)
			continue
		}
		k := [2]int{a, b}
		best, bestCost := -1, 0
		for i := range cand {
			c := cand[(rr[k]+i)%len(cand)]
			cost := load[[2]int{a, c}] + load[[2]int{c, b}]
			if best < 0 || cost < bestCost {
				best, bestCost = c, cost
			}
		}
		for i, c := range cand {
			if c == best {
				rr[k] = i + 1
			}
		}
		load[[2]int{a, best}]++
		load[[2]int{best, b}]++
		out.Placed = append(out.Placed, Placement{Flow: fl.ID, Via: []int{best}})
	}
	for _, n := range load {
		if n > 1 {
			out.Shared++
		}
	}
	return out
}

// common lists the switches adjacent to both a and b, in node order.
func common(f *inventory.Fabric, a, b int) []int {
	nb := map[int]bool{}
	for _, p := range f.Nodes[a].Ports {
		nb[f.PeerNode(p)] = true
	}
	var out []int
	seen := map[int]bool{}
	for _, p := range f.Nodes[b].Ports {
		m := f.PeerNode(p)
		if nb[m] && !seen[m] && f.Nodes[m].IsSwitch() {
			seen[m] = true
			out = append(out, m)
		}
	}
	sort.Ints(out)
	return out
}

// link returns a's first port towards b, or -1.
func link(f *inventory.Fabric, a, b int) int {
	for _, p := range f.Nodes[a].Ports {
		if f.PeerNode(p) == b {
			return p
		}
	}
	return -1
}
