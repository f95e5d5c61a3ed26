package containerlab

import (
	"net/netip"
	"sort"
	"time"
)

// Runtimes a topology is resolved for.
const (
	// RuntimeNative is fabricbench's own runtime: network namespaces,
	// veth links, FRR and sshd started directly; no Docker.
	RuntimeNative = "native"
	// RuntimeContainerlab deploys with containerlab and Docker.
	RuntimeContainerlab = "containerlab"
)

// Runtimes lists the runtimes.
var Runtimes = []string{RuntimeContainerlab, RuntimeNative}

// Lab is the resolved, deployer-facing view of a topology file: kinds and
// defaults merged into each node, roles decided (labels, else inferred
// from the graph), links in extended form. Topology.Resolve builds it for
// a runtime and rejects what that runtime cannot honour, naming the field.
type Lab struct {
	Name string
	// Dir is the directory of the topology file; relative paths in binds
	// and startup-config are relative to it.
	Dir string
	// File is the topology file ("" for topologies built in memory).
	File string
	// Runtime is the runtime the lab was resolved for.
	Runtime string
	// Prefix is the container name prefix as written: "clab"
	// (containerlab's default), "" (containers named after their nodes),
	// "__lab-name" (containers named LAB-NODE) or another prefix.
	Prefix string
	// Mgmt is the management IPv4 subnet (mgmt.ipv4-subnet); every node
	// has an address in it. MgmtIPv6 is the IPv6 one (containerlab
	// runtime only; invalid when unset).
	Mgmt     netip.Prefix
	MgmtIPv6 netip.Prefix
	// MgmtNetwork is the management network's name (mgmt.network;
	// containerlab's default "clab").
	MgmtNetwork string
	Nodes       []*Node // sorted by name
	// Links are the links between two nodes (bridge nodes included), in
	// file order.
	Links []*Link
	// Stubs are the links with one node end: dummy interfaces, links to
	// this machine (host), to the management network (mgmt-net), macvlan
	// and vxlan links; in file order.
	Stubs []*Stub
}

// Roles a node can have. Switch roles carry their tier when the lab has
// hosts; RoleSwitch is a router of a lab without hosts to count tiers
// from.
const (
	RoleHost       = "host"
	RoleLeaf       = "leaf"
	RoleSpine      = "spine"
	RoleSuperSpine = "super-spine"
	RoleSwitch     = "switch"
	RoleBridge     = "bridge"
)

// Node is one lab node.
type Node struct {
	Name  string
	Kind  string // linux, bridge, sonic-vs
	Image string
	// Role is host, leaf, spine, super-spine, switch (a router with no tier)
	// or bridge: the fabricbench.role label, else inferred (RoleInferred).
	Role         string
	RoleInferred bool
	// OS is "frr" (label fabricbench.os=frr, an FRR image, FRR
	// configuration bound onto /etc/frr or a startup-config), "linux"
	// (other linux nodes), "sonic" (sonic-vs) or "" (bridge nodes).
	OS   string
	Mgmt netip.Addr // mgmt-ipv4
	// MgmtIPv6 is mgmt-ipv6 (containerlab runtime only).
	MgmtIPv6 netip.Addr
	// FRRConfig and FRRDaemons are absolute paths of the node's frr.conf
	// (startup-config, or a bind onto /etc/frr/frr.conf) and daemons file
	// (bind onto /etc/frr/daemons); FRRDir of a directory bound onto
	// /etc/frr (its frr.conf and daemons, when present, are FRRConfig and
	// FRRDaemons). Empty when absent.
	FRRConfig, FRRDaemons, FRRDir string
	// StartupConfig is the node's startup-config (absolute path), if any.
	// containerlab's linux kind ignores it; fabricbench's runtimes load it
	// into FRR.
	StartupConfig string
	// Binds are every bind of the node, resolved (source absolute).
	Binds []Bind
	// Exec are commands run in the node after its links are up.
	Exec []string
	// Env are the node's environment variables: env-files first, then env.
	Env map[string]string
	// StartupDelay delays the node's start (startup-delay).
	StartupDelay time.Duration
	// Cmd, Entrypoint and NetworkMode are the container's (containerlab
	// runtime only).
	Cmd, Entrypoint, NetworkMode string
	Labels                       map[string]string
	// ASN is the fabricbench.asn label (0 when absent).
	ASN uint32
	// Loopback is the fabricbench.loopback label (router ID), if any.
	Loopback netip.Prefix
	// SRv6Locator is the fabricbench.srv6-locator label: the node's uN
	// micro-SID locator, e.g. fd00:bbbb:1::/48.
	SRv6Locator netip.Prefix
	Sysctls     map[string]string
}

// Bind is one bind mount of a node.
type Bind struct {
	Source  string // absolute path on this machine
	Target  string // path in the node
	Options string // "", "ro" or "rw" (containerlab also takes others)
	Dir     bool   // Source is a directory
}

// IsSwitch reports whether the node forwards between other nodes (any
// switch role).
func (n *Node) IsSwitch() bool {
	switch n.Role {
	case RoleLeaf, RoleSpine, RoleSuperSpine, RoleSwitch:
		return true
	}
	return false
}

// Container is the node's container name as containerlab names it:
// PREFIX-LAB-NODE, LAB-NODE for prefix __lab-name, NODE for an empty
// prefix.
func (l *Lab) Container(node string) string {
	switch l.Prefix {
	case "":
		return node
	case "__lab-name":
		return l.Name + "-" + node
	}
	return l.Prefix + "-" + l.Name + "-" + node
}

// Link is a point-to-point veth link between two nodes.
type Link struct {
	A, B Endpoint
	MTU  int // 0: default
	// RateBps shapes both directions with tbf (link vars: rate); 0 = none.
	RateBps int64
	// Type is the link type as written: "" (the short form), veth or
	// veth-stitch.
	Type string
}

// Endpoint is one end of a link.
type Endpoint struct {
	Node, Interface string
	IPv4, IPv6      netip.Prefix // interface addresses, if any
	MAC             string       // the interface's MAC address, if set
}

// Stub is a link with one node end.
type Stub struct {
	// Type is dummy, host, mgmt-net, macvlan, vxlan or vxlan-stitch.
	Type     string
	Endpoint Endpoint
	// HostInterface is the interface on this machine (host, mgmt-net;
	// "" lets the runtime name it) or the macvlan parent interface.
	HostInterface string
	Mode          string // macvlan mode
	Remote        string // vxlan remote
	VNI, UDPPort  int    // vxlan
	MTU           int
}

// NodeByName returns the node called name.
func (l *Lab) NodeByName(name string) *Node {
	for _, n := range l.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Devices are the nodes that are devices (every node but bridges).
func (l *Lab) Devices() []*Node {
	var out []*Node
	for _, n := range l.Nodes {
		if n.Kind != "bridge" {
			out = append(out, n)
		}
	}
	return out
}

// Neighbours lists the nodes node has a link to, sorted, each once.
func (l *Lab) Neighbours(node string) []string {
	seen := map[string]bool{}
	for _, k := range l.Links {
		switch node {
		case k.A.Node:
			seen[k.B.Node] = true
		case k.B.Node:
			seen[k.A.Node] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
