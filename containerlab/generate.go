package containerlab

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/inventory"
)

// The addressing plan of generated labs (see docs/containerlab.md). All
// fabric addresses lie in FabricIPv4 and FabricIPv6.
var (
	// FabricIPv4 holds every IPv4 address of a generated lab: links,
	// loopbacks and (by default) the management subnet.
	FabricIPv4 = netip.MustParsePrefix("198.18.0.0/15")
	// FabricIPv6 holds every IPv6 address of a generated lab.
	FabricIPv6 = netip.MustParsePrefix("fd00::/8")

	linkIPv4     = netip.MustParsePrefix("198.18.0.0/16")   // /31 per link
	loopbackIPv4 = netip.MustParsePrefix("198.19.255.0/24") // /32 per switch
	linkIPv6     = netip.MustParsePrefix("fd00:fb:1::/64")  // /127 per link
	loopbackIPv6 = netip.MustParsePrefix("fd00:fb:ff::/64") // /128 per switch
	// fabricIPv6Connected covers the link and loopback IPv6 prefixes.
	fabricIPv6Connected = netip.MustParsePrefix("fd00:fb::/32")
	locatorBlock        = netip.MustParsePrefix("fd00:bbbb::/32") // uN block
)

// ASN plan (RFC 7938 style, 2-byte private ASNs).
const (
	// ASNSpine is shared by the spines of a 2-tier fabric and by the
	// super-spines (cores) of a 3-tier one.
	ASNSpine = 65000
	// ASNPodBase + pod is shared by the spines (aggregation switches) of
	// one pod of a 3-tier fabric.
	ASNPodBase = 64600
	// ASNLeafBase + i is leaf (ToR) i, counted in node order.
	ASNLeafBase = 65101
	maxLeaves   = 65534 - ASNLeafBase + 1
	maxPods     = ASNSpine - ASNPodBase
	maxSwitches = 254
	maxLinks    = 1 << 15 // /31s in 198.18.0.0/16
)

// Generator defaults.
const (
	DefaultFRRImage   = "quay.io/frrouting/frr:8.4.1"
	DefaultHostImage  = "nicolaka/netshoot:v0.13"
	DefaultSONiCImage = "docker-sonic-vs:latest"
)

// GenOptions tunes Generate. The zero value gives an FRR lab with
// unshaped links.
type GenOptions struct {
	// Name is the lab name (at most 20 characters); default: the fabric's
	// name with characters containerlab does not allow replaced by '-',
	// shortened with a hash suffix when longer than 20.
	Name string
	// MgmtSubnet is the management subnet; default 198.19.M.0/24 with M in
	// 1..250 a stable hash of the lab name. It must not overlap the link
	// (198.18.0.0/16) or loopback (198.19.255.0/24) ranges.
	MgmtSubnet netip.Prefix
	// SwitchKind is "frr" (default: kind linux running FRRImage) or
	// "sonic-vs".
	SwitchKind string
	// FRRImage is the image of FRR switches (default DefaultFRRImage).
	FRRImage string
	// HostImage is the image of hosts (default DefaultHostImage).
	HostImage string
	// RateBps shapes every link to this rate (link vars rate); 0 leaves
	// links unshaped.
	RateBps int64
	// LinkRates shapes every link to its own fabric rate (overrides
	// RateBps).
	LinkRates bool
	// MTU sets every link's MTU (0: the runtime default, 1500 natively,
	// 9500 in containerlab).
	MTU int
	// SRv6 gives every switch a uN locator (label fabricbench.srv6-locator),
	// advertised in BGP.
	SRv6 bool
}

// Generated is a generated lab: the topology and its files.
type Generated struct {
	Topology *Topology
	// TopologyFile is the topology file's path in Files: <name>.clab.yml.
	TopologyFile string
	// Files maps slash-separated paths relative to the output directory to
	// their contents: the topology file and the per-node configuration
	// files under <name>/<node>/.
	Files map[string][]byte
}

// Write writes every file under dir (files 0644, directories 0755).
func (g *Generated) Write(dir string) error {
	for _, name := range sortedKeys(g.Files) {
		if path.IsAbs(name) || strings.Contains("/"+name+"/", "/../") {
			return fmt.Errorf("containerlab: refusing to write %q outside %s", name, dir)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, g.Files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Lab resolves the generated topology for the native runtime; see
// Resolve.
func (g *Generated) Lab(dir string) (*Lab, error) { return g.Resolve(dir, RuntimeNative) }

// Resolve resolves the generated topology for a runtime, as
// Topology.Resolve resolves the file Write wrote (no need to parse it
// back): dir is the directory Write wrote into, and errors name the
// topology file there.
func (g *Generated) Resolve(dir, runtime string) (*Lab, error) {
	t := *g.Topology
	t.File = filepath.Join(dir, filepath.FromSlash(g.TopologyFile))
	return t.Resolve(dir, runtime)
}

// SanitizeName turns a fabric name into a lab name containerlab and the
// native deployer accept: characters other than letters, digits, '-', '_'
// and '.' become '-', and a name longer than 20 characters is cut to 11
// and given a '-' and 8 hex digits of its hash.
func SanitizeName(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range s {
		if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b.WriteRune(c)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-_.")
	if out == "" {
		out = "fabric"
	}
	if len(out) > MaxLabName {
		out = fmt.Sprintf("%s-%08x", strings.TrimRight(out[:11], "-_."), hash32(s))
	}
	return out
}

func hash32(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// hostTableBase is the routing table (and rule priority) of a host's port
// 1; port i has hostTableBase+i.
const hostTableBase = 100

// DefaultMgmtSubnetFor returns the default management subnet of a lab:
// 198.19.M.0/24, M = 1 + FNV-1a(name) mod 250.
func DefaultMgmtSubnetFor(name string) netip.Prefix {
	m := 1 + hash32(name)%250
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 19, byte(m), 0}), 24)
}

// genNode is a fabric node being generated.
type genNode struct {
	inv      *inventory.Node
	name     string
	sw       int // switch number in node order; -1 for hosts
	role     string
	asn      uint32
	lo4, lo6 netip.Prefix
	locator  netip.Prefix
	mgmt     netip.Addr
}

// genPort is one end of a link.
type genPort struct {
	node       *genNode
	ifname     string // eth<index+1>
	sonicName  string // Ethernet<4*index>
	ipv4, ipv6 netip.Prefix
	peer       *genPort
}

// Generate builds a containerlab lab for a fabric: one node per fabric
// node, one veth link per fabric link (in inventory order), addresses,
// ASNs and per-switch configuration files as docs/containerlab.md
// describes.
func Generate(f *inventory.Fabric, opt GenOptions) (*Generated, error) {
	if f == nil {
		return nil, errors.New("containerlab: no fabric")
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("containerlab: %w", err)
	}
	name := opt.Name
	if name == "" {
		name = SanitizeName(f.Name)
	}
	if !labNameRe.MatchString(name) || len(name) > MaxLabName {
		return nil, fmt.Errorf("containerlab: lab name %q: want at most %d letters, digits, '-', '_' and '.', starting with a letter or digit", name, MaxLabName)
	}
	kind := opt.SwitchKind
	switch kind {
	case "", "frr":
		kind = "frr"
	case "sonic-vs":
	default:
		return nil, fmt.Errorf("containerlab: switch kind %q: want frr or sonic-vs", opt.SwitchKind)
	}
	frrImage, hostImage := opt.FRRImage, opt.HostImage
	if frrImage == "" {
		frrImage = DefaultFRRImage
	}
	if hostImage == "" {
		hostImage = DefaultHostImage
	}
	if opt.RateBps < 0 || opt.RateBps > maxRate {
		return nil, fmt.Errorf("containerlab: rate %d bit/s out of range (0 to %d)", opt.RateBps, int64(maxRate))
	}
	if opt.MTU != 0 && (opt.MTU < 1280 || opt.MTU > 65535) {
		return nil, fmt.Errorf("containerlab: mtu %d out of range (1280 to 65535)", opt.MTU)
	}
	if opt.LinkRates {
		for _, l := range f.Links {
			if l.RateBps <= 0 || l.RateBps > maxRate {
				return nil, fmt.Errorf("containerlab: link %d rate %d bit/s out of range (1 to %d)", l.ID, l.RateBps, int64(maxRate))
			}
		}
	}
	mgmt := opt.MgmtSubnet
	if !mgmt.IsValid() {
		mgmt = DefaultMgmtSubnetFor(name)
	}
	switch {
	case !mgmt.Addr().Is4():
		return nil, fmt.Errorf("containerlab: management subnet %s is not IPv4", mgmt)
	case mgmt.Masked() != mgmt:
		return nil, fmt.Errorf("containerlab: management subnet %s has host bits set (want %s)", mgmt, mgmt.Masked())
	case mgmt.Overlaps(linkIPv4) || mgmt.Overlaps(loopbackIPv4):
		return nil, fmt.Errorf("containerlab: management subnet %s overlaps the link (%s) or loopback (%s) addresses", mgmt, linkIPv4, loopbackIPv4)
	}
	if len(f.Links) > maxLinks {
		return nil, fmt.Errorf("containerlab: %d links; the addressing plan has room for %d", len(f.Links), maxLinks)
	}

	// Nodes, switch numbers, roles and ASNs.
	nodes := make([]*genNode, len(f.Nodes))
	var switches, hosts []*genNode
	leaves := 0
	threeTier := false
	for i := range f.Nodes {
		if f.Nodes[i].IsSwitch() && f.Nodes[i].Tier == 2 {
			threeTier = true
		}
	}
	for i := range f.Nodes {
		in := &f.Nodes[i]
		g := &genNode{inv: in, name: in.Name, sw: -1}
		nodes[i] = g
		if !labNameRe.MatchString(in.Name) || len(in.Name) > 63 {
			return nil, fmt.Errorf("containerlab: node name %q is not a valid containerlab node name", in.Name)
		}
		if !in.IsSwitch() {
			g.role = "host"
			hosts = append(hosts, g)
			continue
		}
		g.sw = len(switches)
		switches = append(switches, g)
		if g.sw >= maxSwitches {
			return nil, fmt.Errorf("containerlab: more than %d switches; the loopback plan (%s) has room for %d", maxSwitches, loopbackIPv4, maxSwitches)
		}
		g.lo4 = netip.PrefixFrom(addrAdd(loopbackIPv4.Addr(), uint64(g.sw+1)), 32)
		g.lo6 = netip.PrefixFrom(addrAdd(loopbackIPv6.Addr(), uint64(g.sw+1)), 128)
		if opt.SRv6 {
			b := locatorBlock.Addr().As16()
			b[4], b[5] = byte((g.sw+1)>>8), byte(g.sw+1)
			g.locator = netip.PrefixFrom(netip.AddrFrom16(b), 48)
		}
		switch in.Tier {
		case 0:
			g.role = "leaf"
			if leaves >= maxLeaves {
				return nil, fmt.Errorf("containerlab: more than %d leaves; the ASN plan (%d + leaf) has room for %d", maxLeaves, ASNLeafBase, maxLeaves)
			}
			g.asn = uint32(ASNLeafBase + leaves)
			leaves++
		case 1:
			g.role = "spine"
			g.asn = ASNSpine
			if threeTier {
				if in.Pod < 0 || in.Pod >= maxPods {
					return nil, fmt.Errorf("containerlab: spine %s is in pod %d; the ASN plan (%d + pod) has room for pods 0 to %d", in.Name, in.Pod, ASNPodBase, maxPods-1)
				}
				g.asn = uint32(ASNPodBase + in.Pod)
			}
		case 2:
			g.role = "super-spine"
			g.asn = ASNSpine
		default:
			return nil, fmt.Errorf("containerlab: switch %s is on tier %d; only tiers 0 to 2 are supported", in.Name, in.Tier)
		}
	}
	// Management addresses: switches in node order, then hosts, from .11.
	order := append(append([]*genNode(nil), switches...), hosts...)
	next := addrAdd(mgmt.Addr(), mgmtFirstHost)
	last := lastAddr(mgmt)
	for _, g := range order {
		if !mgmt.Contains(next) || next == last {
			return nil, fmt.Errorf("containerlab: %d nodes do not fit in management subnet %s (addresses from .%d upward); give a larger MgmtSubnet", len(order), mgmt, mgmtFirstHost)
		}
		g.mgmt = next
		next = next.Next()
	}

	// Ports and link addresses: link i gets 198.18.0.0 + 2i (upper end,
	// B) and + 2i + 1 (lower end, A); the same in fd00:fb:1::/64.
	ports := make([]*genPort, len(f.Ports))
	for i := range f.Ports {
		p := &f.Ports[i]
		ports[i] = &genPort{node: nodes[p.Node], ifname: "eth" + strconv.Itoa(p.Index+1), sonicName: "Ethernet" + strconv.Itoa(4*p.Index)}
	}
	for i, l := range f.Links {
		a, b := ports[l.A], ports[l.B]
		a.peer, b.peer = b, a
		b.ipv4 = netip.PrefixFrom(addrAdd(linkIPv4.Addr(), uint64(2*i)), 31)
		a.ipv4 = netip.PrefixFrom(addrAdd(linkIPv4.Addr(), uint64(2*i+1)), 31)
		b.ipv6 = netip.PrefixFrom(addrAdd(linkIPv6.Addr(), uint64(2*i)), 127)
		a.ipv6 = netip.PrefixFrom(addrAdd(linkIPv6.Addr(), uint64(2*i+1)), 127)
	}
	nodePorts := func(g *genNode) []*genPort {
		out := make([]*genPort, len(g.inv.Ports))
		for i, p := range g.inv.Ports {
			out[i] = ports[p]
		}
		return out
	}

	t := &Topology{
		Name:  name,
		Mgmt:  &Mgmt{Network: "fb-" + name, IPv4Subnet: mgmt.String()},
		Nodes: map[string]*NodeConfig{},
	}
	files := map[string][]byte{}
	dir := name + "/"
	for _, g := range nodes {
		nc := &NodeConfig{MgmtIPv4: g.mgmt.String(), Labels: map[string]string{LabelRole: g.role}}
		t.Nodes[g.name] = nc
		ps := nodePorts(g)
		if g.sw < 0 {
			nc.Kind, nc.Image = "linux", hostImage
			if len(ps) > 0 && ps[0].peer != nil {
				up := ps[0]
				// The addresses as well as the link endpoints carry them:
				// containerlab does not configure endpoint addresses on
				// linux nodes (the runtimes do, and these are idempotent).
				nc.Exec = []string{
					fmt.Sprintf("ip addr replace %s dev %s", up.ipv4, up.ifname),
					fmt.Sprintf("ip -6 addr replace %s dev %s nodad", up.ipv6, up.ifname),
					fmt.Sprintf("ip route replace %s via %s dev %s", FabricIPv4, up.peer.ipv4.Addr(), up.ifname),
					fmt.Sprintf("ip -6 route replace %s via %s dev %s", FabricIPv6, up.peer.ipv6.Addr(), up.ifname),
				}
			}
			// A host with a NIC port per plane (or several uplinks): traffic
			// from port i's address leaves by port i, to the fabric behind
			// it (policy routing by source, table hostTableBase+i): the
			// agents bind each plane's sockets to that plane's address.
			for i, up := range ps {
				if i == 0 || up.peer == nil {
					continue
				}
				table := hostTableBase + i
				nc.Exec = append(nc.Exec,
					fmt.Sprintf("ip addr replace %s dev %s", up.ipv4, up.ifname),
					fmt.Sprintf("ip -6 addr replace %s dev %s nodad", up.ipv6, up.ifname),
					fmt.Sprintf("ip rule add from %s lookup %d priority %d", up.ipv4.Addr(), table, table),
					fmt.Sprintf("ip route replace %s via %s dev %s table %d", FabricIPv4, up.peer.ipv4.Addr(), up.ifname, table),
					fmt.Sprintf("ip -6 rule add from %s lookup %d priority %d", up.ipv6.Addr(), table, table),
					fmt.Sprintf("ip -6 route replace %s via %s dev %s table %d", FabricIPv6, up.peer.ipv6.Addr(), up.ifname, table))
			}
			continue
		}
		nc.Labels[LabelASN] = strconv.FormatUint(uint64(g.asn), 10)
		nc.Labels[LabelLoopback] = g.lo4.String()
		if g.locator.IsValid() {
			nc.Labels[LabelSRv6Locator] = g.locator.String()
		}
		ndir := dir + g.name + "/"
		if kind == "sonic-vs" {
			nc.Kind, nc.Image = "sonic-vs", DefaultSONiCImage
			nc.StartupConfig = ndir + "config_db.json"
			b, err := sonicConfig(g, ps, threeTier)
			if err != nil {
				return nil, err
			}
			files[nc.StartupConfig] = b
			continue
		}
		nc.Kind, nc.Image = "linux", frrImage
		nc.Labels[LabelOS] = "frr"
		nc.Binds = []string{ndir + "frr.conf:" + FRRConfTarget, ndir + "daemons:" + FRRDaemonsTarget}
		nc.Sysctls = map[string]string{
			"net.ipv4.ip_forward":                "1",
			"net.ipv6.conf.all.forwarding":       "1",
			"net.ipv4.fib_multipath_hash_policy": "1",
			"net.ipv6.fib_multipath_hash_policy": "1",
		}
		files[ndir+"frr.conf"] = frrConf(name, g, ps)
		files[ndir+"daemons"] = frrDaemons(g.name)
	}
	for _, l := range f.Links {
		a, b := ports[l.A], ports[l.B]
		lc := &LinkConfig{Type: "veth", Endpoints: []*LinkEndpoint{
			{Node: a.node.name, Interface: a.ifname, IPv4: a.ipv4.String(), IPv6: a.ipv6.String()},
			{Node: b.node.name, Interface: b.ifname, IPv4: b.ipv4.String(), IPv6: b.ipv6.String()},
		}}
		rate := opt.RateBps
		if opt.LinkRates {
			rate = l.RateBps
		}
		if rate > 0 {
			lc.Vars = map[string]any{"rate": FormatRate(rate)}
		}
		if opt.MTU > 0 {
			lc.MTU = opt.MTU
		}
		t.Links = append(t.Links, lc)
	}
	y, err := t.Marshal()
	if err != nil {
		return nil, fmt.Errorf("containerlab: %w", err)
	}
	topoFile := name + ".clab.yml"
	header := "# fabricbench lab " + name + ", generated from fabric " + strconv.Quote(f.Name) + " by containerlab.Generate.\n" +
		"# Addressing plan: docs/containerlab.md. Deploy with fabricbench's native deployer or containerlab.\n"
	files[topoFile] = append([]byte(header), y...)
	return &Generated{Topology: t, TopologyFile: topoFile, Files: files}, nil
}

// addrAdd adds n to an address.
func addrAdd(a netip.Addr, n uint64) netip.Addr {
	b := a.AsSlice()
	carry := n
	for i := len(b) - 1; i >= 0 && carry > 0; i-- {
		s := uint64(b[i]) + carry&0xff
		carry >>= 8
		if s > 0xff {
			carry++
		}
		b[i] = byte(s)
	}
	out, _ := netip.AddrFromSlice(b)
	return out
}

// frrConf renders a switch's frr.conf (FRR 8.4 syntax).
func frrConf(lab string, g *genNode, ports []*genPort) []byte {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("! fabricbench lab %s: %s (%s, AS %d). Generated by containerlab.Generate; do not edit.", lab, g.name, g.role, g.asn)
	w("frr version 8.4")
	w("frr defaults datacenter")
	w("hostname %s", g.name)
	w("!")
	w("ip forwarding")
	w("ipv6 forwarding")
	w("!")
	// Interface addresses are the topology's link endpoints' too (the
	// runtimes set those; zebra sets these where nothing else does, as in
	// a plain containerlab deployment).
	for _, p := range ports {
		w("interface %s", p.ifname)
		if p.peer != nil {
			w(" description %s:%s", p.peer.node.name, p.peer.ifname)
		}
		if p.ipv4.IsValid() {
			w(" ip address %s", p.ipv4)
		}
		if p.ipv6.IsValid() {
			w(" ipv6 address %s", p.ipv6)
		}
		w("exit")
		w("!")
	}
	w("interface lo")
	w(" ip address %s", g.lo4)
	w(" ipv6 address %s", g.lo6)
	w("exit")
	w("!")
	// Only fabric prefixes are redistributed: never the management network.
	w("ip prefix-list FABRIC-V4 seq 10 permit %s le 32", linkIPv4)
	w("ip prefix-list FABRIC-V4 seq 20 permit %s le 32", loopbackIPv4)
	w("!")
	w("ipv6 prefix-list FABRIC-V6 seq 10 permit %s le 128", fabricIPv6Connected)
	w("!")
	w("route-map CONNECTED-V4 permit 10")
	w(" match ip address prefix-list FABRIC-V4")
	w("exit")
	w("!")
	w("route-map CONNECTED-V6 permit 10")
	w(" match ipv6 address prefix-list FABRIC-V6")
	w("exit")
	w("!")
	w("router bgp %d", g.asn)
	w(" bgp router-id %s", g.lo4.Addr())
	w(" no bgp ebgp-requires-policy")
	w(" no bgp network import-check")
	w(" bgp bestpath as-path multipath-relax")
	var peers []*genPort
	for _, p := range ports {
		if p.peer != nil && p.peer.node.sw >= 0 {
			peers = append(peers, p.peer)
		}
	}
	for _, fam := range []bool{true, false} {
		for _, q := range peers {
			addr := q.ipv6.Addr()
			if fam {
				addr = q.ipv4.Addr()
			}
			w(" neighbor %s remote-as %d", addr, q.node.asn)
			w(" neighbor %s description %s:%s", addr, q.node.name, q.ifname)
			w(" neighbor %s timers 1 3", addr)
			w(" neighbor %s timers connect 1", addr)
		}
	}
	w(" !")
	w(" address-family ipv4 unicast")
	w("  redistribute connected route-map CONNECTED-V4")
	w("  maximum-paths 64")
	for _, q := range peers {
		w("  neighbor %s activate", q.ipv4.Addr())
	}
	for _, q := range peers {
		w("  no neighbor %s activate", q.ipv6.Addr())
	}
	w(" exit-address-family")
	w(" !")
	w(" address-family ipv6 unicast")
	w("  redistribute connected route-map CONNECTED-V6")
	w("  maximum-paths 64")
	for _, q := range peers {
		w("  neighbor %s activate", q.ipv6.Addr())
	}
	if g.locator.IsValid() {
		w("  network %s", g.locator)
	}
	w(" exit-address-family")
	w("exit")
	w("!")
	w("end")
	return []byte(b.String())
}

// frrDaemons renders a switch's FRR daemons file: zebra, bgpd and staticd.
func frrDaemons(node string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# FRR daemons for %s. Generated by fabricbench (containerlab.Generate); do not edit.\n", node)
	b.WriteString("zebra=yes\nbgpd=yes\nstaticd=yes\nbfdd=no\n")
	for _, d := range []string{"ospfd", "ospf6d", "ripd", "ripngd", "isisd", "pimd", "pim6d", "ldpd", "nhrpd", "eigrpd", "babeld", "sharpd", "pbrd", "fabricd", "vrrpd", "pathd"} {
		b.WriteString(d + "=no\n")
	}
	b.WriteString("\nvtysh_enable=yes\n")
	// The datacenter profile's timers (BGP keepalive 3 s, hold 9 s, connect
	// retry 10 s) instead of the traditional 60/180/120 s: a fabric recovers
	// in seconds from a flapped or re-cabled link, on both runtimes.
	b.WriteString("frr_profile=\"datacenter\"\n")
	// -n: VRFs are network namespaces (zebra's netns VRF mode), for kernels
	// without VRF devices; a node's (container's) /run/netns is its own.
	b.WriteString("zebra_options=\"  -A 127.0.0.1 -s 90000000 -n\"\n")
	b.WriteString("bgpd_options=\"   -A 127.0.0.1\"\n")
	b.WriteString("staticd_options=\"-A 127.0.0.1\"\n")
	return []byte(b.String())
}

// sonicConfig renders a minimal CONFIG_DB for a sonic-vs switch: device
// metadata, loopback, interface addresses and BGP neighbours. sonic-vs
// maps container interface eth<i+1> to Ethernet<4i>.
func sonicConfig(g *genNode, ports []*genPort, threeTier bool) ([]byte, error) {
	typ := map[string]string{"leaf": "ToRRouter", "spine": "SpineRouter", "super-spine": "SpineRouter"}[g.role]
	if threeTier && g.role == "spine" {
		typ = "LeafRouter"
	}
	db := map[string]map[string]map[string]string{
		"DEVICE_METADATA": {"localhost": {
			"hostname": g.name,
			"bgp_asn":  strconv.FormatUint(uint64(g.asn), 10),
			"type":     typ,
		}},
		"LOOPBACK_INTERFACE": {
			"Loopback0":                   {},
			"Loopback0|" + g.lo4.String(): {},
			"Loopback0|" + g.lo6.String(): {},
		},
		"PORT":         {},
		"INTERFACE":    {},
		"BGP_NEIGHBOR": {},
	}
	for _, p := range ports {
		db["PORT"][p.sonicName] = map[string]string{"admin_status": "up", "description": p.peer.node.name + ":" + p.peer.ifname}
		db["INTERFACE"][p.sonicName] = map[string]string{}
		db["INTERFACE"][p.sonicName+"|"+p.ipv4.String()] = map[string]string{}
		db["INTERFACE"][p.sonicName+"|"+p.ipv6.String()] = map[string]string{}
		q := p.peer
		if q.node.sw < 0 {
			continue
		}
		for _, pair := range [][2]netip.Prefix{{q.ipv4, p.ipv4}, {q.ipv6, p.ipv6}} {
			db["BGP_NEIGHBOR"][pair[0].Addr().String()] = map[string]string{
				"admin_status": "up",
				"asn":          strconv.FormatUint(uint64(q.node.asn), 10),
				"name":         q.node.name,
				"local_addr":   pair[1].Addr().String(),
				"holdtime":     "3",
				"keepalive":    "1",
			}
		}
	}
	b, err := json.MarshalIndent(db, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
