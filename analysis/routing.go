package analysis

// Which ports a flow may cross depends on the fabric's routing. A tree
// (leaf-spine, fat tree) routes on shortest paths, hashed or adaptive: a
// port lies on a flow's path only if a shortest path runs through it. A
// low-diameter fabric (Dragonfly, Slim Fly: flat routers) routes minimal
// paths on (global hops, local hops), which may be one or two hops longer
// than the fewest hops, and its non-minimal modes (Valiant, UGAL,
// source-guided) detour through an intermediate group or router: a flow
// may then cross any port on a path of at most twice the router
// diameter. For victims, "may cross" must not miss a path the routing
// can take, so these bounds err on the wide side.

// Routing modes of Input.Routing (suite features.ecmp.mode).
const (
	RoutingHash     = "hash"
	RoutingAdaptive = "adaptive"
	RoutingMinimal  = "minimal"
)

// minimalSlack is how many router hops longer than the fewest a minimal
// low-diameter path may be (a Dragonfly's local-global-local path where a
// global-global one through a third group has fewer hops).
const minimalSlack = 2

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
		return length <= ds[dst]+minimalSlack
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
