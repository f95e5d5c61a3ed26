package inventory

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Role is the function of a node in the fabric.
type Role uint8

const (
	RoleHost  Role = iota
	RoleLeaf       // tier 0 switch: ToR / leaf
	RoleSpine      // tier 1 switch: aggregation in a 3-tier tree, spine in a 2-tier one
	RoleCore       // tier 2 switch
)

func (r Role) String() string {
	switch r {
	case RoleHost:
		return "host"
	case RoleLeaf:
		return "leaf"
	case RoleSpine:
		return "spine"
	case RoleCore:
		return "core"
	}
	return fmt.Sprintf("role(%d)", uint8(r))
}

// Node is a host or a switch.
type Node struct {
	ID   int
	Name string
	Role Role
	// Tier is the switching tier (0 = leaf/ToR, 1 = spine/agg, 2 = core); -1 for hosts.
	Tier int
	// Pod is the pod a node belongs to, or -1 (core switches, flat fabrics).
	Pod int
	// LatencyPs is the forwarding latency a packet spends crossing this node (switches).
	LatencyPs int64
	// Ports are indices into Fabric.Ports, in port-number order.
	Ports []int
	// Plane is the plane a switch belongs to (an index into Fabric.Planes;
	// 0 in a single-plane fabric, and for hosts, which belong to every
	// plane they have a port in).
	Plane int
}

// IsSwitch reports whether the node forwards traffic.
func (n *Node) IsSwitch() bool { return n.Role != RoleHost }

// Port is one end of a link on a node. A port transmits towards Peer.
type Port struct {
	ID    int
	Node  int
	Index int // position within the node's port list
	Name  string
	Link  int
	Peer  int // the port at the other end of the link
	// Uplink is true when the peer sits on a higher tier (host->leaf, leaf->spine, spine->core).
	Uplink bool
	// Plane is the plane of the port: its switch's, or for a host NIC
	// port the plane of the switch it attaches to (0 in a single-plane
	// fabric).
	Plane int
	// Rail is the rail of a host NIC port, an index into Fabric.Rails; -1
	// on switch ports and when the fabric declares no rails.
	Rail int
}

// Link is a full-duplex point-to-point link; both directions have the same
// rate and latency.
type Link struct {
	ID        int
	A, B      int // port IDs; A is the lower-tier end
	RateBps   int64
	LatencyPs int64
	// Global marks a link between two groups of a Dragonfly (a global
	// link, routed as such by minimal low-diameter routing); false for
	// local links and every link of other fabrics.
	Global bool
}

// Fabric is a complete topology.
type Fabric struct {
	Name  string
	Nodes []Node
	Ports []Port
	Links []Link
	// Hosts maps host number (as used by traffic matrices) to node ID.
	Hosts []int
	// Tiers is the number of switching tiers (1, 2 or 3).
	Tiers int
	// HostsPerPod is the number of hosts in a pod (0 if not pod-structured).
	HostsPerPod int
	// Planes names the fabric's planes: parallel, disjoint switch fabrics,
	// every host having a NIC port in each (Node.Plane, Port.Plane index
	// it). Nil in a single-plane fabric.
	Planes []string
	// Rails names the fabric's rails (Port.Rail indexes it): the host NIC
	// ports served by one set of leaves. Nil when the fabric has none.
	Rails []string
}

// MaxPlanes is the most planes a fabric may have.
const MaxPlanes = 8

// NumPlanes returns the number of planes (1 for a single-plane fabric).
func (f *Fabric) NumPlanes() int { return max(1, len(f.Planes)) }

// HostPlanePort returns the port of host h on plane pl: its first NIC port
// attached to a switch of that plane, or -1.
func (f *Fabric) HostPlanePort(h, pl int) int {
	for _, p := range f.Host(h).Ports {
		if f.Ports[p].Plane == pl {
			return p
		}
	}
	return -1
}

// NumHosts returns the number of hosts.
func (f *Fabric) NumHosts() int { return len(f.Hosts) }

// Host returns the node of host number h.
func (f *Fabric) Host(h int) *Node { return &f.Nodes[f.Hosts[h]] }

// HostLeaf returns the node ID of the (first) leaf host h attaches to.
func (f *Fabric) HostLeaf(h int) int {
	n := f.Host(h)
	for _, p := range n.Ports {
		return f.Ports[f.Ports[p].Peer].Node
	}
	return -1
}

// HostPod returns the pod of host h (-1 if none).
func (f *Fabric) HostPod(h int) int { return f.Host(h).Pod }

// PeerNode returns the node at the other end of port p.
func (f *Fabric) PeerNode(p int) int { return f.Ports[f.Ports[p].Peer].Node }

// PortRate returns the line rate of port p.
func (f *Fabric) PortRate(p int) int64 { return f.Links[f.Ports[p].Link].RateBps }

// NodeByName finds a node by name.
func (f *Fabric) NodeByName(name string) (int, bool) {
	for i := range f.Nodes {
		if f.Nodes[i].Name == name {
			return i, true
		}
	}
	return -1, false
}

// Builder assembles a fabric node by node and link by link.
type Builder struct {
	f Fabric
}

// NewBuilder starts an empty fabric.
func NewBuilder(name string) *Builder { return &Builder{f: Fabric{Name: name}} }

// AddNode adds a node and returns its ID.
func (b *Builder) AddNode(name string, role Role, tier, pod int, latencyPs int64) int {
	id := len(b.f.Nodes)
	b.f.Nodes = append(b.f.Nodes, Node{ID: id, Name: name, Role: role, Tier: tier, Pod: pod, LatencyPs: latencyPs})
	if role == RoleHost {
		b.f.Hosts = append(b.f.Hosts, id)
	}
	return id
}

// Connect adds a link between lower-tier node lo and higher-tier node hi.
func (b *Builder) Connect(lo, hi int, rateBps, latencyPs int64) int {
	f := &b.f
	lid := len(f.Links)
	pa, pb := len(f.Ports), len(f.Ports)+1
	f.Ports = append(f.Ports,
		Port{ID: pa, Node: lo, Index: len(f.Nodes[lo].Ports), Link: lid, Peer: pb, Uplink: true, Rail: -1},
		Port{ID: pb, Node: hi, Index: len(f.Nodes[hi].Ports), Link: lid, Peer: pa, Rail: -1})
	f.Nodes[lo].Ports = append(f.Nodes[lo].Ports, pa)
	f.Nodes[hi].Ports = append(f.Nodes[hi].Ports, pb)
	f.Links = append(f.Links, Link{ID: lid, A: pa, B: pb, RateBps: rateBps, LatencyPs: latencyPs})
	return lid
}

// Fabric names the ports and returns the finished, validated fabric.
func (b *Builder) Fabric(tiers, hostsPerPod int) (*Fabric, error) {
	f := &b.f
	f.Tiers, f.HostsPerPod = tiers, hostsPerPod
	for i := range f.Ports {
		p := &f.Ports[i]
		if f.Nodes[p.Node].Role == RoleHost {
			p.Name = fmt.Sprintf("eth%d", p.Index)
		} else {
			p.Name = fmt.Sprintf("Ethernet%d", p.Index)
		}
	}
	f.setPortPlanes()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// Validate checks structural invariants: every host has a port, links have
// positive rates, names are unique and every host can reach every other host.
func (f *Fabric) Validate() error {
	if len(f.Hosts) == 0 {
		return fmt.Errorf("fabric %q has no hosts", f.Name)
	}
	seen := make(map[string]int, len(f.Nodes))
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if j, dup := seen[n.Name]; dup {
			return fmt.Errorf("fabric %q: node name %q used twice (nodes %d and %d)", f.Name, n.Name, j, i)
		}
		seen[n.Name] = i
		if n.Role == RoleHost && len(n.Ports) == 0 {
			return fmt.Errorf("fabric %q: host %s has no link", f.Name, n.Name)
		}
	}
	if err := f.validatePlanes(); err != nil {
		return err
	}
	for _, l := range f.Links {
		if l.RateBps <= 0 {
			return fmt.Errorf("fabric %q: link %s-%s has no rate", f.Name, f.Nodes[f.Ports[l.A].Node].Name, f.Nodes[f.Ports[l.B].Node].Name)
		}
		if l.LatencyPs < 0 {
			return fmt.Errorf("fabric %q: link %s-%s has negative latency", f.Name, f.Nodes[f.Ports[l.A].Node].Name, f.Nodes[f.Ports[l.B].Node].Name)
		}
	}
	// Connectivity: BFS from host 0 must reach all hosts.
	reach := make([]bool, len(f.Nodes))
	q := []int{f.Hosts[0]}
	reach[f.Hosts[0]] = true
	for len(q) > 0 {
		n := q[0]
		q = q[1:]
		for _, p := range f.Nodes[n].Ports {
			m := f.PeerNode(p)
			// Hosts do not forward: do not expand through them.
			if !reach[m] {
				reach[m] = true
				if f.Nodes[m].IsSwitch() {
					q = append(q, m)
				}
			}
		}
	}
	var missing []string
	for _, h := range f.Hosts {
		if !reach[h] {
			missing = append(missing, f.Nodes[h].Name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		if len(missing) > 5 {
			missing = append(missing[:5], "...")
		}
		return fmt.Errorf("fabric %q is not connected: %d hosts unreachable from %s (%v)", f.Name, len(missing), f.Nodes[f.Hosts[0]].Name, missing)
	}
	return nil
}

// Summary returns what the fabric has, in the names its nodes use, e.g.
// "16 hosts, 8 ToRs (tor0..tor7), 8 aggs (agg0..agg7), 4 cores
// (core0..core3), 48 links" or "8 hosts, 2 leaves (leaf0..leaf1), 2 spines
// (spine0..spine1), 12 links". Tiers without switches are left out.
func (f *Fabric) Summary() string {
	var hosts int
	type tier struct {
		names []string
		role  Role
	}
	var tiers []tier
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if n.Role == RoleHost {
			hosts++
			continue
		}
		t := max(n.Tier, 0)
		for len(tiers) <= t {
			tiers = append(tiers, tier{role: n.Role})
		}
		tiers[t].names = append(tiers[t].names, n.Name)
	}
	parts := []string{count(hosts, "host", "hosts")}
	for _, t := range tiers {
		if len(t.names) == 0 {
			continue
		}
		prefix := namePrefix(t.names)
		one, many := tierNoun(prefix, t.role)
		p := count(len(t.names), one, many)
		if prefix != "" {
			if len(t.names) == 1 {
				p += " (" + t.names[0] + ")"
			} else {
				p += " (" + t.names[0] + ".." + t.names[len(t.names)-1] + ")"
			}
		}
		parts = append(parts, p)
	}
	parts = append(parts, count(len(f.Links), "link", "links"))
	if len(f.Planes) > 1 {
		parts = append(parts, count(len(f.Planes), "plane", "planes"))
	}
	return strings.Join(parts, ", ")
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// namePrefix returns the prefix all names share before their number
// ("tor" for tor0..tor7), or "" when they do not.
func namePrefix(names []string) string {
	prefix := ""
	for i, n := range names {
		p := strings.TrimRight(n, "0123456789")
		if p == "" || p == n || (i > 0 && p != prefix) {
			return ""
		}
		prefix = p
	}
	return prefix
}

// tierNoun names a tier's switches after their names where it knows them,
// else after their role.
func tierNoun(prefix string, r Role) (one, many string) {
	switch prefix {
	case "tor":
		return "ToR", "ToRs"
	case "agg":
		return "agg", "aggs"
	case "superspine", "super-spine":
		return "super-spine", "super-spines"
	case "router":
		return "router", "routers"
	}
	switch r {
	case RoleLeaf:
		return "leaf", "leaves"
	case RoleSpine:
		return "spine", "spines"
	case RoleCore:
		return "core", "cores"
	}
	return "switch", "switches"
}
