package containerlab

import "net/netip"

// Lab is the resolved, deployer-facing view of a topology file: kinds and
// defaults merged into each node, fabricbench labels decoded, links in
// extended form. Topology.Lab builds it and rejects what the native
// deployer cannot honour, naming the field.
type Lab struct {
	Name string
	// Dir is the directory of the topology file; relative paths in binds
	// and startup-config are relative to it.
	Dir string
	// Mgmt is the management IPv4 subnet (mgmt.ipv4-subnet); every node
	// has an address in it.
	Mgmt  netip.Prefix
	Nodes []*Node // sorted by name
	Links []*Link // in file order
}

// Node is one lab node.
type Node struct {
	Name  string
	Kind  string // linux, sonic-vs
	Image string
	// Role is the fabricbench.role label: host, leaf, spine, super-spine.
	Role string
	// OS is "frr" (kind linux with an FRR image or label fabricbench.os=frr),
	// "linux" (other linux nodes: hosts) or "sonic" (sonic-vs).
	OS   string
	Mgmt netip.Addr // mgmt-ipv4
	// FRRConfig and FRRDaemons are absolute paths of the node's frr.conf
	// (startup-config, or a bind onto /etc/frr/frr.conf) and daemons file
	// (bind onto /etc/frr/daemons); empty when absent.
	FRRConfig, FRRDaemons string
	// Exec are commands run in the node after its links are up.
	Exec   []string
	Labels map[string]string
	// ASN is the fabricbench.asn label (0 when absent).
	ASN uint32
	// Loopback is the fabricbench.loopback label (router ID), if any.
	Loopback netip.Prefix
	// SRv6Locator is the fabricbench.srv6-locator label: the node's uN
	// micro-SID locator, e.g. fd00:bbbb:1::/48.
	SRv6Locator netip.Prefix
	Sysctls     map[string]string
}

// Link is a point-to-point veth link.
type Link struct {
	A, B Endpoint
	MTU  int // 0: default
	// RateBps shapes both directions with tbf (link vars: rate); 0 = none.
	RateBps int64
}

// Endpoint is one end of a link.
type Endpoint struct {
	Node, Interface string
	IPv4, IPv6      netip.Prefix // interface addresses, if any
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
