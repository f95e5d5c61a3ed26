package analysis

import (
	"container/heap"
	"strings"
)

// Which ports a flow may cross depends on the fabric's routing. A tree
// (leaf-spine, fat tree) routes on shortest paths, hashed or adaptive: a
// port lies on a flow's path only if a shortest path runs through it. A
// Dragonfly routes minimal paths on (global hops, local hops), which may
// be a hop longer than the fewest hops (local-global-local rather than
// global-global through a third group); a Slim Fly's minimal paths are
// its shortest. Their non-minimal modes (Valiant, UGAL, source-guided)
// detour through an intermediate group or router: a flow may then cross
// any port on a path of at most twice the router diameter. For victims,
// "may cross" must not miss a path the routing can take, so that bound
// errs on the wide side.

// Routing modes of Input.Routing (suite features.ecmp.mode).
const (
	RoutingHash     = "hash"
	RoutingAdaptive = "adaptive"
	RoutingMinimal  = "minimal"
)

// globalCost weighs a global link in the (global hops, local hops) order
// of a Dragonfly's minimal routing.
const globalCost = 1 << 16

// lowDiameter reports whether the fabric has flat routers: tier-0
// switches linked to other switches, without uplinks (groups.go builds
// local-links and global-links groups for them).
func (a *analyzer) lowDiameter() bool {
	if a.flat != nil {
		return *a.flat
	}
	flat := false
	for ni := range a.f.Nodes {
		n := &a.f.Nodes[ni]
		if !n.IsSwitch() || n.Tier != 0 {
			continue
		}
		up, sw := false, false
		for _, p := range n.Ports {
			up = up || a.f.Ports[p].Uplink
			sw = sw || a.f.Nodes[a.f.PeerNode(p)].IsSwitch()
		}
		if sw && !up {
			flat = true
			break
		}
	}
	a.flat = &flat
	return flat
}

// routerDiameter is the largest hop distance between two switches.
func (a *analyzer) routerDiameter() int {
	if a.diam > 0 {
		return a.diam
	}
	d := 1
	for ni := range a.f.Nodes {
		if !a.f.Nodes[ni].IsSwitch() {
			continue
		}
		for nj, x := range a.dist(ni) {
			if x > d && a.f.Nodes[nj].IsSwitch() {
				d = x
			}
		}
	}
	a.diam = d
	return d
}

// mayCross reports whether port p (from its node to its peer) may carry
// traffic from node src to node dst under the fabric's routing.
func (a *analyzer) mayCross(src, dst, p int) bool {
	if !a.lowDiameter() {
		return a.crosses(src, dst, p)
	}
	u, w := a.f.Ports[p].Node, a.f.PeerNode(p)
	ds, dw := a.dist(src), a.dist(w)
	if ds[dst] < 0 || ds[u] < 0 || dw[dst] < 0 {
		return false
	}
	length := ds[u] + 1 + dw[dst]
	switch a.in.Routing {
	case RoutingMinimal:
		if a.dragonfly() {
			// Fewest global hops first, then fewest local hops.
			ws, ww := a.wdist(src), a.wdist(w)
			cost := 1
			if a.f.Links[a.f.Ports[p].Link].Global {
				cost = globalCost
			}
			return ws[u] >= 0 && ww[dst] >= 0 && ws[u]+cost+ww[dst] == ws[dst]
		}
		return length == ds[dst]
	case RoutingHash, RoutingAdaptive:
		return length == ds[dst]
	}
	// Non-minimal: src's router, up to the diameter to an intermediate
	// router, up to the diameter to dst's router, then dst.
	hostHops := 0
	if !a.f.Nodes[src].IsSwitch() {
		hostHops++
	}
	if !a.f.Nodes[dst].IsSwitch() {
		hostHops++
	}
	return length <= 2*a.routerDiameter()+hostHops
}

// dragonfly reports whether the fabric is a Dragonfly: global links
// between groups, which its minimal routing crosses once (a Slim Fly's
// global links are tags, its minimal routing counts hops).
func (a *analyzer) dragonfly() bool {
	if strings.HasPrefix(strings.ToLower(a.f.Name), "slimfly:") {
		return false
	}
	for _, l := range a.f.Links {
		if l.Global {
			return true
		}
	}
	return false
}

// wdist returns (and caches) the (global hops, local hops) distances from
// node u, weighted globalCost per global link and 1 per other link, −1
// where unreachable; hosts do not forward.
func (a *analyzer) wdist(u int) []int {
	if d, ok := a.wdists[u]; ok {
		return d
	}
	f := a.f
	d := unreached(len(f.Nodes), u)
	h := &distHeap{{u, 0}}
	for h.Len() > 0 {
		it := heap.Pop(h).(distItem)
		x := it.node
		if it.d != d[x] || x != u && !f.Nodes[x].IsSwitch() {
			continue // stale, or a host (hosts do not forward)
		}
		for _, p := range f.Nodes[x].Ports {
			y := f.PeerNode(p)
			c := 1
			if f.Links[f.Ports[p].Link].Global {
				c = globalCost
			}
			if d[y] < 0 || d[x]+c < d[y] {
				d[y] = d[x] + c
				heap.Push(h, distItem{y, d[y]})
			}
		}
	}
	if a.wdists == nil {
		a.wdists = map[int][]int{}
	}
	a.wdists[u] = d
	return d
}

type distItem struct{ node, d int }

// distHeap is a min-heap of nodes by distance (wdist's Dijkstra).
type distHeap []distItem

func (h distHeap) Len() int           { return len(h) }
func (h distHeap) Less(i, j int) bool { return h[i].d < h[j].d }
func (h distHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *distHeap) Push(x any)        { *h = append(*h, x.(distItem)) }
func (h *distHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
