package containerlab

import (
	"regexp"
	"sort"
)

// forwardingExecRe finds an exec command that turns forwarding on:
// sysctl -w net.ipv4.ip_forward=1 (or ipv6 ...forwarding=1), or a write
// of 1 to /proc/sys/net/ipv4/ip_forward.
var forwardingExecRe = regexp.MustCompile(`(ip_forward|conf\.all\.forwarding|conf/all/forwarding)\s*=\s*1\b|echo\s+1\s*>\s*/proc/sys/net/(ipv4/ip_forward|ipv6/conf/all/forwarding)`)

// forwards reports whether a node turns forwarding on.
func forwards(n *Node) bool {
	if n.Sysctls["net.ipv4.ip_forward"] == "1" || n.Sysctls["net.ipv6.conf.all.forwarding"] == "1" {
		return true
	}
	for _, c := range n.Exec {
		if forwardingExecRe.MatchString(c) {
			return true
		}
	}
	return false
}

// inferRoles gives every node without a fabricbench.role label a role
// from the lab's graph (labels always win; docs/containerlab.md):
//
//   - switches are the nodes that route: OS frr or sonic (FRR image, FRR
//     configuration bound or a startup-config, or sonic-vs), or a plain
//     Linux node that turns IPv4 or IPv6 forwarding on (its sysctls, or a
//     sysctl or /proc write in its exec commands) and has links to two or
//     more other nodes (a router with static routes);
//   - bridge nodes are layer-2 segments: RoleBridge, and transparent when
//     counting hops (nodes on one bridge are neighbours);
//   - every other node is a host;
//   - a switch's tier is its distance from the nearest host, counted over
//     switches: 1 leaf, 2 spine, 3 or more super-spine; a switch no host
//     reaches is RoleSwitch.
func inferRoles(lab *Lab) {
	byName := map[string]*Node{}
	for _, n := range lab.Nodes {
		byName[n.Name] = n
	}
	adj := neighbours(lab, byName)
	isSwitch := map[string]bool{}
	for _, n := range lab.Nodes {
		switch {
		case n.Kind == "bridge":
		case n.Role != "":
			isSwitch[n.Name] = n.Role != RoleHost
		case n.OS == "frr" || n.OS == "sonic":
			isSwitch[n.Name] = true
		case forwards(n) && len(adj[n.Name]) >= 2:
			isSwitch[n.Name] = true
		}
	}
	// Breadth-first from every host, over switches only.
	dist := map[string]int{}
	var queue []string
	for _, n := range lab.Nodes {
		if n.Kind != "bridge" && !isSwitch[n.Name] {
			dist[n.Name] = 0
			queue = append(queue, n.Name)
		}
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, nb := range adj[cur] {
			if _, seen := dist[nb]; seen || !isSwitch[nb] {
				continue
			}
			dist[nb] = dist[cur] + 1
			queue = append(queue, nb)
		}
	}
	for _, n := range lab.Nodes {
		if n.Role != "" {
			continue
		}
		n.RoleInferred = true
		d, reached := dist[n.Name]
		switch {
		case !isSwitch[n.Name]:
			n.Role = RoleHost
		case !reached:
			n.Role = RoleSwitch
		case d == 1:
			n.Role = RoleLeaf
		case d == 2:
			n.Role = RoleSpine
		default:
			n.Role = RoleSuperSpine
		}
	}
}

// neighbours maps every device to the devices it has a link to, bridges
// made transparent (all devices on one bridge, or chain of bridges, are
// neighbours), each list sorted.
func neighbours(lab *Lab, byName map[string]*Node) map[string][]string {
	set := map[string]map[string]bool{}
	add := func(a, b string) {
		if a == b {
			return
		}
		if set[a] == nil {
			set[a] = map[string]bool{}
		}
		set[a][b] = true
	}
	isBridge := func(name string) bool { n := byName[name]; return n != nil && n.Kind == "bridge" }
	// Union the bridges that are linked to each other.
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if p, ok := parent[x]; ok && p != x {
			r := find(p)
			parent[x] = r
			return r
		}
		parent[x] = x
		return x
	}
	for _, l := range lab.Links {
		if isBridge(l.A.Node) && isBridge(l.B.Node) {
			parent[find(l.A.Node)] = find(l.B.Node)
		}
	}
	segments := map[string][]string{} // bridge group -> devices on it
	for _, l := range lab.Links {
		a, b := l.A.Node, l.B.Node
		switch {
		case isBridge(a) && isBridge(b):
		case isBridge(a):
			segments[find(a)] = append(segments[find(a)], b)
		case isBridge(b):
			segments[find(b)] = append(segments[find(b)], a)
		default:
			add(a, b)
			add(b, a)
		}
	}
	for _, devs := range segments {
		for _, a := range devs {
			for _, b := range devs {
				add(a, b)
			}
		}
	}
	out := map[string][]string{}
	for n, s := range set {
		for m := range s {
			out[n] = append(out[n], m)
		}
		sort.Strings(out[n])
	}
	return out
}
