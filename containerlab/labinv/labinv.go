// Package labinv writes the hardware inventory (docs/inventory.md) of a
// deployed lab, native or containerlab, so that the lab can be driven
// through the hardware path (`fabricbench run --inventory`, `lab validate
// INVENTORY`) exactly as real switches are: `fabricbench lab inventory
// TOPOLOGY`.
//
// What the inventory holds, from the topology and the lab's state:
//
//   - every node but bridges, with its platform (FRR nodes frr, SONiC
//     nodes sonic, other nodes linux), role, management address, ASN and
//     loopback (fabricbench.asn, fabricbench.loopback labels);
//   - one credential set, the lab's SSH user and client key
//     (file:KEY, never the key itself), and the lab's known_hosts file:
//     host keys are verified as on real switches;
//   - switch ports named as fabric specs name them: a router's ethN is
//     Ethernet<N-1> with interface ethN (the kernel's name, which the
//     drivers, faults and the exporter use), a SONiC node's ethN is
//     Ethernet<N-1> with interface Ethernet<4(N-1)> (SONiC's own name for
//     the port containerlab wires to ethN); other names are kept;
//   - host NICs with the link's IPv4 address (the address the agent
//     binds);
//   - links with the lab link's rate (vars.rate) as speed, else the
//     default speed given;
//   - gNMI servers given per node (a switch running its own); every other
//     device gets fabricbench's kernel-counter exporter for a run.
//
// A containerlab node whose image has no sshd gets container: (docker
// exec on this machine). A lab that cannot be an inventory is refused
// naming the node or link: a node without a management address, a router
// without a tier, links through bridge nodes, a link without a rate when
// no default speed is given.
package labinv

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/labrt"
	"github.com/fabricbench/fabricbench/inventory"
)

// Options shape the inventory.
type Options struct {
	// Name is the inventory's name (default the lab's).
	Name string
	// DefaultSpeed is the speed (bit/s) of links without a rate; 0: such
	// a link is an error.
	DefaultSpeed int64
	// GNMI are the nodes' own gNMI servers, by node name.
	GNMI map[string]GNMI
	// Topology is the topology file, named in the header comment.
	Topology string
}

// GNMI is a node's own gNMI server.
type GNMI struct {
	Address string // HOST:PORT
	Profile string // openconfig (default) or sonic
	// Exactly one of CA, SkipVerify and Insecure.
	CA         string
	SkipVerify bool
	Insecure   bool
	// User and Password (a secret reference, env:NAME or file:PATH) are
	// what the server checks; empty: the lab's SSH user, no password.
	User, Password string
}

// ParseGNMI parses a --gnmi flag value:
// NODE=HOST:PORT[,ca=FILE|,skip-verify|,insecure][,profile=P][,user=U][,password=REF].
func ParseGNMI(s string) (string, GNMI, error) {
	node, rest, ok := strings.Cut(s, "=")
	if !ok || node == "" || rest == "" {
		return "", GNMI{}, fmt.Errorf("%q: want NODE=HOST:PORT[,ca=FILE|,skip-verify|,insecure][,profile=openconfig|sonic][,user=USER][,password=env:NAME|file:PATH]", s)
	}
	parts := strings.Split(rest, ",")
	g := GNMI{Address: parts[0]}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(p, "=")
		switch k {
		case "ca":
			g.CA = v
		case "skip-verify":
			g.SkipVerify = true
		case "insecure":
			g.Insecure = true
		case "profile":
			g.Profile = v
		case "user":
			g.User = v
		case "password":
			g.Password = v
		default:
			return "", GNMI{}, fmt.Errorf("%q: unknown option %q (want ca=FILE, skip-verify, insecure, profile=, user=, password=)", s, k)
		}
	}
	n := 0
	for _, b := range []bool{g.CA != "", g.SkipVerify, g.Insecure} {
		if b {
			n++
		}
	}
	if n != 1 {
		return "", GNMI{}, fmt.Errorf("%q: give exactly one of ca=FILE, skip-verify and insecure (plain text is never the default)", s)
	}
	return node, g, nil
}

// PortName is the inventory's name of a switch interface and the
// device's own name of it ("" when the same).
func PortName(os, iface string) (name, own string) {
	k, err := strconv.Atoi(strings.TrimPrefix(iface, "eth"))
	if !strings.HasPrefix(iface, "eth") || err != nil || k < 1 {
		return iface, ""
	}
	name = "Ethernet" + strconv.Itoa(k-1)
	if os == "sonic" {
		return name, "Ethernet" + strconv.Itoa(4*(k-1))
	}
	return name, iface
}

// Platform is the driver platform of a lab node.
func Platform(n *containerlab.Node) string {
	switch n.OS {
	case "frr":
		return "frr"
	case "sonic":
		return "sonic"
	}
	return "linux"
}

// q quotes a YAML scalar.
func q(s string) string { return strconv.Quote(s) }

// Speed writes bit/s as an inventory speed (M, G or T).
func Speed(bps int64) string {
	switch {
	case bps%1e12 == 0:
		return strconv.FormatInt(bps/1e12, 10) + "T"
	case bps%1e9 == 0:
		return strconv.FormatInt(bps/1e9, 10) + "G"
	case bps%1e6 == 0:
		return strconv.FormatInt(bps/1e6, 10) + "M"
	}
	s := strconv.FormatFloat(float64(bps)/1e6, 'f', 6, 64)
	return strings.TrimRight(strings.TrimRight(s, "0"), ".") + "M"
}

// Generate renders the inventory of a deployed lab and checks it with the
// inventory's own parser (platforms: the registered drivers').
func Generate(lab *containerlab.Lab, st *labrt.State, o Options, platforms ...string) ([]byte, error) {
	name := o.Name
	if name == "" {
		name = lab.Name
	}
	if st.KnownHosts == "" || st.Key == "" || st.User == "" {
		return nil, fmt.Errorf("lab %s: its state has no SSH user, key or known_hosts (deployed by an older fabricbench? redeploy it)", lab.Name)
	}
	for n := range o.GNMI {
		if nd := lab.NodeByName(n); nd == nil || !nd.IsSwitch() {
			return nil, fmt.Errorf("--gnmi %s: lab %s has no switch %s", n, lab.Name, n)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# The inventory of lab %s (%s runtime), written by fabricbench lab inventory", lab.Name, orNative(st.Runtime))
	if o.Topology != "" {
		fmt.Fprintf(&b, " from %s", o.Topology)
	}
	b.WriteString(".\n# Valid while the lab is deployed: the key and known_hosts are the lab's own.\n")
	fmt.Fprintf(&b, "name: %s\nknown_hosts: %s\n", q(name), q(st.KnownHosts))
	if o.DefaultSpeed > 0 {
		fmt.Fprintf(&b, "default_speed: %s\n", Speed(o.DefaultSpeed))
	}
	fmt.Fprintf(&b, "credentials:\n  lab: {user: %s, key: %s}\n", q(st.User), q("file:"+st.Key))
	// gNMI credential sets, one per distinct user and password.
	gnmiSet := map[[2]string]string{}
	var gnmiNodes []string
	for n := range o.GNMI {
		gnmiNodes = append(gnmiNodes, n)
	}
	sort.Strings(gnmiNodes)
	for _, n := range gnmiNodes {
		g := o.GNMI[n]
		if g.Password == "" {
			continue
		}
		user := g.User
		if user == "" {
			user = st.User
		}
		k := [2]string{user, g.Password}
		if _, ok := gnmiSet[k]; ok {
			continue
		}
		set := "gnmi"
		if len(gnmiSet) > 0 {
			set += strconv.Itoa(len(gnmiSet) + 1)
		}
		gnmiSet[k] = set
		fmt.Fprintf(&b, "  %s: {user: %s, password: %s}\n", set, q(user), q(g.Password))
	}
	// Which nodes and interfaces the links use.
	ifaces := map[string][]containerlab.Endpoint{}
	for i, l := range lab.Links {
		for _, ep := range []containerlab.Endpoint{l.A, l.B} {
			nd := lab.NodeByName(ep.Node)
			if nd == nil {
				return nil, fmt.Errorf("lab %s: link %d names no node %s", lab.Name, i, ep.Node)
			}
			if nd.Kind == "bridge" {
				return nil, fmt.Errorf("lab %s: link %s:%s -- %s:%s goes through bridge node %s: an inventory's links are point to point", lab.Name, l.A.Node, l.A.Interface, l.B.Node, l.B.Interface, nd.Name)
			}
			ifaces[ep.Node] = append(ifaces[ep.Node], ep)
		}
	}
	b.WriteString("devices:\n")
	for _, n := range lab.Devices() {
		ns, ok := st.Node(n.Name)
		if !ok {
			return nil, fmt.Errorf("lab %s: node %s is in the topology but was not deployed (redeploy with lab up)", lab.Name, n.Name)
		}
		if ns.Mgmt == "" {
			return nil, fmt.Errorf("lab %s: node %s has no management address: an inventory's devices need one", lab.Name, n.Name)
		}
		if ns.Transport != labrt.TransportSSH && (ns.Transport != labrt.TransportDocker || ns.Container == "") {
			return nil, fmt.Errorf("lab %s: node %s is reached neither over SSH nor with docker exec", lab.Name, n.Name)
		}
		role := n.Role
		switch role {
		case containerlab.RoleHost, containerlab.RoleLeaf, containerlab.RoleSpine, containerlab.RoleSuperSpine:
		default:
			return nil, fmt.Errorf("lab %s: node %s has role %q: an inventory needs host, leaf, spine or super-spine (label it fabricbench.role)", lab.Name, n.Name, role)
		}
		platform := Platform(n)
		if role == containerlab.RoleHost {
			platform = "linux"
		}
		fmt.Fprintf(&b, "  - name: %s\n    platform: %s\n    role: %s\n    mgmt: %s\n    credentials: lab\n", q(n.Name), platform, role, q(ns.Mgmt))
		if ns.Transport == labrt.TransportDocker {
			// No sshd in its image: docker exec on this machine.
			fmt.Fprintf(&b, "    container: %s\n", q(ns.Container))
		}
		if n.ASN > 0 {
			fmt.Fprintf(&b, "    asn: %d\n", n.ASN)
		}
		if n.Loopback.IsValid() {
			fmt.Fprintf(&b, "    loopback: %s\n", n.Loopback)
		}
		if n.SRv6Locator.IsValid() && role != containerlab.RoleHost {
			fmt.Fprintf(&b, "    srv6_locator: %s\n", n.SRv6Locator)
		}
		eps := ifaces[n.Name]
		sortEndpoints(eps)
		if role == containerlab.RoleHost {
			if len(eps) > 0 {
				b.WriteString("    nics:\n")
			}
			for _, ep := range eps {
				fmt.Fprintf(&b, "      - {name: %s", q(ep.Interface))
				if ep.IPv4.IsValid() {
					fmt.Fprintf(&b, ", address: %s", ep.IPv4)
				} else if ep.IPv6.IsValid() {
					fmt.Fprintf(&b, ", address: %q", ep.IPv6.String())
				}
				b.WriteString("}\n")
			}
			continue
		}
		if len(eps) > 0 {
			b.WriteString("    ports:\n")
		}
		for _, ep := range eps {
			pn, own := PortName(n.OS, ep.Interface)
			fmt.Fprintf(&b, "      - {name: %s", q(pn))
			if own != "" {
				fmt.Fprintf(&b, ", interface: %s", q(own))
			}
			b.WriteString("}\n")
		}
		if g, ok := o.GNMI[n.Name]; ok {
			fmt.Fprintf(&b, "    gnmi: {address: %s", q(g.Address))
			if g.Profile != "" {
				fmt.Fprintf(&b, ", profile: %s", q(g.Profile))
			}
			if g.Password != "" {
				user := g.User
				if user == "" {
					user = st.User
				}
				fmt.Fprintf(&b, ", credentials: %s", gnmiSet[[2]string{user, g.Password}])
			}
			switch {
			case g.CA != "":
				ca := g.CA
				if a, err := filepath.Abs(ca); err == nil {
					ca = a
				}
				fmt.Fprintf(&b, ", tls: {ca: %s}", q(ca))
			case g.SkipVerify:
				b.WriteString(", tls: {skip_verify: true}")
			default:
				b.WriteString(", insecure: true")
			}
			b.WriteString("}\n")
		}
	}
	if len(lab.Links) > 0 {
		b.WriteString("links:\n")
	}
	for _, l := range lab.Links {
		a, bb := endpointName(lab, l.A), endpointName(lab, l.B)
		switch {
		case l.RateBps > 0:
			fmt.Fprintf(&b, "  - {a: %s, b: %s, speed: %s}\n", q(a), q(bb), Speed(l.RateBps))
		case o.DefaultSpeed > 0:
			fmt.Fprintf(&b, "  - [%s, %s]\n", q(a), q(bb))
		default:
			return nil, fmt.Errorf("lab %s: link %s -- %s has no rate (vars.rate): give a default speed (--default-speed, e.g. 10G) for links without one", lab.Name, a, bb)
		}
	}
	out := []byte(b.String())
	// The inventory's own checks (tiers of links, addresses, names): a lab
	// that is no fabric is refused here, naming the field.
	file := name + ".yaml"
	if _, err := inventory.ParseHardware(file, out, platforms...); err != nil {
		return out, fmt.Errorf("lab %s does not make a valid inventory:\n%w", lab.Name, err)
	}
	return out, nil
}

func orNative(rt string) string {
	if rt == "" {
		return containerlab.RuntimeNative
	}
	return rt
}

// endpointName is a link end as the inventory names it.
func endpointName(lab *containerlab.Lab, ep containerlab.Endpoint) string {
	n := lab.NodeByName(ep.Node)
	if n == nil || !n.IsSwitch() {
		return ep.Node + ":" + ep.Interface
	}
	pn, _ := PortName(n.OS, ep.Interface)
	return ep.Node + ":" + pn
}

// sortEndpoints orders a node's interfaces by name, numbers as numbers
// (eth2 before eth10).
func sortEndpoints(eps []containerlab.Endpoint) {
	sort.SliceStable(eps, func(i, j int) bool {
		a, b := eps[i].Interface, eps[j].Interface
		pa, na := splitNum(a)
		pb, nb := splitNum(b)
		if pa != pb {
			return pa < pb
		}
		if na != nb {
			return na < nb
		}
		return a < b
	})
}

func splitNum(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, _ := strconv.Atoi(s[i:])
	return s[:i], n
}
