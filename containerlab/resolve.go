package containerlab

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/internal/fileerr"
	"github.com/fabricbench/fabricbench/units"
)

// Labels fabricbench reads from nodes.
const (
	LabelRole        = "fabricbench.role"         // host, leaf, spine, super-spine
	LabelOS          = "fabricbench.os"           // frr, linux
	LabelASN         = "fabricbench.asn"          // BGP AS number (uint32)
	LabelLoopback    = "fabricbench.loopback"     // router ID, IPv4 /32
	LabelSRv6Locator = "fabricbench.srv6-locator" // uN locator, IPv6 prefix
)

// Bind targets the native deployer honours.
const (
	FRRConfTarget    = "/etc/frr/frr.conf"
	FRRDaemonsTarget = "/etc/frr/daemons"
	VtyshConfTarget  = "/etc/frr/vtysh.conf"
)

// DefaultMgmtSubnet is containerlab's management subnet, used when the
// file sets no mgmt.ipv4-subnet.
var DefaultMgmtSubnet = netip.MustParsePrefix("172.20.20.0/24")

// MaxLabName is the longest lab name the native deployer accepts: network
// namespace and interface names are derived from it.
const MaxLabName = 20

// mgmtFirstHost is the host number of the first management address Lab
// assigns to nodes without mgmt-ipv4 (.11 in a /24).
const mgmtFirstHost = 11

var (
	roles   = set("host", "leaf", "spine", "super-spine")
	nodeOSs = set("frr", "linux")
	// nativeKinds are the kinds Lab resolves.
	nativeKinds = set("linux", "sonic-vs")
	fbLabels    = set(LabelRole, LabelOS, LabelASN, LabelLoopback, LabelSRv6Locator)
	bindTargets = set(FRRConfTarget, FRRDaemonsTarget, VtyshConfTarget)
	// reservedIfNames are interface names a link endpoint may not use: the
	// loopback and the management interfaces.
	reservedIfNames = set("lo", "mgmt0", "eth0")
)

const notNative = "not supported by the native deployer"

// resolver collects the problems Lab finds.
type resolver struct {
	t    *Topology
	file string
	dir  string
	errs ErrorList
	// mgmtPath is where each node's mgmt-ipv4 is written.
	mgmtPath map[string]string
}

// errf reports a problem with the value at path; errKey one with the key
// itself (an unsupported property).
func (r *resolver) errf(path, format string, args ...any) {
	r.add(path, false, fmt.Sprintf(format, args...))
}

func (r *resolver) errKey(path, format string, args ...any) {
	r.add(path, true, fmt.Sprintf(format, args...))
}

func (r *resolver) add(path string, key bool, msg string) {
	p := r.t.pos.at(path, key)
	r.errs = append(r.errs, &Error{File: r.file, Line: p.Line, Column: p.Column, Path: path, Msg: msg})
}

// layer is one node configuration that applies to a node, with its path.
type layer struct {
	path string
	c    *NodeConfig
}

// Lab resolves the topology into the deployer-facing Lab and rejects, by
// name, every property the native deployer does not honour.
//
// dir is the directory relative paths (binds, startup-config) are
// resolved against; "" means the directory of Topology.File. Every node
// is merged as containerlab does: topology.defaults, then
// topology.kinds[kind], then topology.groups[group], then the node itself;
// scalars from the most specific level that sets them, labels and sysctls
// merged key by key (most specific wins), binds merged and exec lists
// appended in that order. fabricbench labels are decoded (see the Label
// constants); a node without mgmt-ipv4 gets the next free address of the
// management subnet from .11 upward, in node name order.
//
// Problems are returned as an ErrorList, each naming the field, e.g.
//
//	lab.clab.yml:9:7: topology.nodes.leaf0.cpu: not supported by the native deployer
func (t *Topology) Lab(dir string) (*Lab, error) {
	file := t.File
	if dir == "" {
		dir = "."
		if t.File != "" {
			dir = filepath.Dir(t.File)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	r := &resolver{t: t, file: file, dir: abs, mgmtPath: map[string]string{}}
	lab := r.resolve()
	if err := r.errs.Finish(file); err != nil {
		return nil, err
	}
	return lab, nil
}

func (r *resolver) resolve() *Lab {
	t := r.t
	lab := &Lab{Name: t.Name, Dir: r.dir}
	switch {
	case t.Name == "":
		r.errf("name", "missing lab name")
	case !labNameRe.MatchString(t.Name):
		r.errf("name", "%q is not a valid lab name (want letters, digits, '-', '_' and '.', starting with a letter or digit)", t.Name)
	case len(t.Name) > MaxLabName:
		r.errf("name", "%q is %d characters long; the native deployer takes at most %d (namespace and interface names are derived from it)", t.Name, len(t.Name), MaxLabName)
	}
	if t.Prefix != nil && *t.Prefix != "" && *t.Prefix != "clab" {
		r.errf("prefix", "%q is %s (leave prefix out, or set it to \"\" or \"clab\")", *t.Prefix, notNative)
	}
	for _, k := range sortedKeys(t.Other) {
		r.errKey(k, "%s", notNative)
	}
	lab.Mgmt = r.mgmt()

	// Every node configuration, wherever it is written.
	if t.Defaults != nil {
		r.section("topology.defaults", t.Defaults)
	}
	for _, k := range sortedKeys(t.Kinds) {
		p := fileerr.Field("topology.kinds", k)
		if !nativeKinds[k] {
			r.errKey(p, "kind %q is %s (want linux, or sonic-vs)", k, notNative)
		}
		r.section(p, t.Kinds[k])
	}
	for _, k := range sortedKeys(t.Groups) {
		r.section(fileerr.Field("topology.groups", k), t.Groups[k])
	}
	for _, k := range sortedKeys(t.Nodes) {
		r.section(fileerr.Field("topology.nodes", k), t.Nodes[k])
	}

	if len(t.Nodes) == 0 {
		r.errf("topology.nodes", "the topology has no nodes")
	}
	loopbacks := map[netip.Prefix]string{}
	for _, name := range sortedKeys(t.Nodes) {
		n := r.node(name)
		if n == nil {
			continue
		}
		if n.Loopback.IsValid() {
			p := fileerr.Field(fileerr.Field("topology.nodes", name), "labels")
			if other, dup := loopbacks[n.Loopback]; dup {
				r.errf(p, "%s %s is also the loopback of %s", LabelLoopback, n.Loopback, other)
			}
			loopbacks[n.Loopback] = name
		}
		lab.Nodes = append(lab.Nodes, n)
	}
	r.mgmtAddrs(lab)
	r.links(lab)
	return lab
}

// mgmt checks the mgmt section and returns the management subnet.
func (r *resolver) mgmt() netip.Prefix {
	m := r.t.Mgmt
	if m == nil {
		return DefaultMgmtSubnet
	}
	for _, k := range sortedKeys(m.Other) {
		r.errKey("mgmt."+k, "%s", notNative)
	}
	if m.IPv6Subnet != "" {
		r.errKey("mgmt.ipv6-subnet", "%s (nodes get IPv4 management addresses only)", notNative)
	}
	if m.Bridge != "" {
		r.errKey("mgmt.bridge", "%s", notNative)
	}
	switch m.IPv4Subnet {
	case "":
		return DefaultMgmtSubnet
	case "auto":
		r.errf("mgmt.ipv4-subnet", "\"auto\" is %s (give a subnet, e.g. 172.20.20.0/24)", notNative)
		return DefaultMgmtSubnet
	}
	pf, err := netip.ParsePrefix(m.IPv4Subnet)
	switch {
	case err != nil || !pf.Addr().Is4():
		r.errf("mgmt.ipv4-subnet", "%q is not an IPv4 prefix", m.IPv4Subnet)
		return DefaultMgmtSubnet
	case pf.Masked() != pf:
		r.errf("mgmt.ipv4-subnet", "%s has host bits set (want %s)", pf, pf.Masked())
	case pf.Bits() > 28:
		r.errf("mgmt.ipv4-subnet", "%s is too small (want a /28 or larger)", pf)
	}
	return pf.Masked()
}

// section checks one node configuration as written.
func (r *resolver) section(path string, c *NodeConfig) {
	if c == nil {
		return
	}
	for _, k := range sortedKeys(c.Other) {
		r.errKey(fileerr.Field(path, k), "%s", notNative)
	}
	if len(c.Env) > 0 {
		r.errKey(path+".env", "%s (it sets no environment variables; remove env)", notNative)
	}
	if c.MgmtIPv6 != "" {
		r.errKey(path+".mgmt-ipv6", "%s (nodes get IPv4 management addresses only)", notNative)
	}
	if c.Kind != "" && !nativeKinds[c.Kind] {
		r.errf(path+".kind", "kind %q is %s (want linux, or sonic-vs)", c.Kind, notNative)
	}
	for i, b := range c.Binds {
		p := fileerr.Index(path+".binds", i)
		if _, _, err := parseBind(b); err != nil {
			r.errf(p, "%v", err)
		}
	}
	for _, k := range sortedKeys(c.Labels) {
		if strings.HasPrefix(k, "fabricbench.") {
			r.label(fileerr.Field(path+".labels", k), k, c.Labels[k])
		}
	}
	for _, k := range sortedKeys(c.Sysctls) {
		if !validSysctl(k) {
			r.errKey(fileerr.Field(path+".sysctls", k), "%q is not a sysctl name (want e.g. net.ipv4.ip_forward)", k)
		}
	}
}

func validSysctl(k string) bool {
	if k == "" || strings.Contains(k, "..") || strings.HasPrefix(k, ".") || strings.HasPrefix(k, "/") {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._-/", c)) {
			return false
		}
	}
	return true
}

// labelValues are decoded fabricbench labels.
type labelValues struct {
	role, os string
	asn      uint32
	loopback netip.Prefix
	locator  netip.Prefix
}

// label checks one fabricbench label as written.
func (r *resolver) label(path, k, v string) {
	if !fbLabels[k] {
		r.errKey(path, "unknown fabricbench label (want %s)", setKeys(fbLabels))
		return
	}
	var lv labelValues
	if err := lv.set(k, v); err != nil {
		r.errf(path, "%v", err)
	}
}

// set decodes one fabricbench label into lv.
func (lv *labelValues) set(k, v string) error {
	switch k {
	case LabelRole:
		if !roles[v] {
			return fmt.Errorf("%q is not a role (want host, leaf, spine or super-spine)", v)
		}
		lv.role = v
	case LabelOS:
		if !nodeOSs[v] {
			return fmt.Errorf("%q is not an OS (want frr or linux)", v)
		}
		lv.os = v
	case LabelASN:
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n == 0 {
			return fmt.Errorf("%q is not an AS number (want 1 to 4294967295)", v)
		}
		lv.asn = uint32(n)
	case LabelLoopback:
		p, err := netip.ParsePrefix(v)
		if err != nil || !p.Addr().Is4() || p.Bits() != 32 {
			return fmt.Errorf("%q is not an IPv4 /32 prefix (want e.g. 198.19.255.1/32)", v)
		}
		lv.loopback = p
	case LabelSRv6Locator:
		p, err := netip.ParsePrefix(v)
		if err != nil || !p.Addr().Is6() || p.Addr().Is4In6() || p.Bits() > 128-16 || p.Masked() != p {
			return fmt.Errorf("%q is not an IPv6 locator prefix (want e.g. fd00:bbbb:1::/48)", v)
		}
		lv.locator = p
	}
	return nil
}

// parseBind splits "source:target[:options]" and checks the target.
func parseBind(b string) (src, dst string, err error) {
	parts := strings.Split(b, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return "", "", fmt.Errorf("%q is not a bind (want source:target[:ro|rw])", b)
	}
	if len(parts) == 3 && parts[2] != "ro" && parts[2] != "rw" {
		return "", "", fmt.Errorf("bind options %q are %s (want ro or rw)", parts[2], notNative)
	}
	if !bindTargets[parts[1]] {
		return "", "", fmt.Errorf("bind onto %s is %s (binds may only target %s, %s or %s)", parts[1], notNative, FRRConfTarget, FRRDaemonsTarget, VtyshConfTarget)
	}
	return parts[0], parts[1], nil
}

// first returns the first non-empty value of get over the layers (most
// specific first) and the path it was set at.
func first(layers []layer, field string, get func(*NodeConfig) string) (string, string) {
	for _, l := range layers {
		if l.c == nil {
			continue
		}
		if v := get(l.c); v != "" {
			return v, l.path + "." + field
		}
	}
	return "", ""
}

// node resolves one node; nil when it cannot be resolved.
func (r *resolver) node(name string) *Node {
	t := r.t
	path := fileerr.Field("topology.nodes", name)
	nc := t.Nodes[name]
	if !labNameRe.MatchString(name) || len(name) > 63 {
		r.errKey(path, "%q is not a node name the native deployer accepts (want at most 63 letters, digits, '-', '_' and '.', starting with a letter or digit)", name)
	}
	layers := []layer{{path, nc}}
	groupName, _ := first([]layer{{path, nc}, {"topology.defaults", t.Defaults}}, "group", func(c *NodeConfig) string { return c.Group })
	if g, ok := t.Groups[groupName]; ok && groupName != "" {
		layers = append(layers, layer{fileerr.Field("topology.groups", groupName), g})
	}
	kind, _ := first(append(layers, layer{"topology.defaults", t.Defaults}), "kind", func(c *NodeConfig) string { return c.Kind })
	if kind == "" {
		r.errKey(path, "no kind (set kind on the node, or in topology.defaults)")
		return nil
	}
	if !nativeKinds[kind] {
		return nil // reported where the kind is written
	}
	if k, ok := t.Kinds[kind]; ok {
		layers = append(layers, layer{fileerr.Field("topology.kinds", kind), k})
	}
	layers = append(layers, layer{"topology.defaults", t.Defaults})

	n := &Node{Name: name, Kind: kind, Labels: map[string]string{}, Sysctls: map[string]string{}}
	n.Image, _ = first(layers, "image", func(c *NodeConfig) string { return c.Image })
	// Labels and sysctls: least specific first, so that later ones win.
	labelPath := map[string]string{}
	for i := len(layers) - 1; i >= 0; i-- {
		c := layers[i].c
		if c == nil {
			continue
		}
		for k, v := range c.Labels {
			n.Labels[k] = v
			labelPath[k] = fileerr.Field(layers[i].path+".labels", k)
		}
		for k, v := range c.Sysctls {
			n.Sysctls[k] = v
		}
		n.Exec = append(n.Exec, c.Exec...)
	}
	// Problems with label values were reported where they are written.
	var lv labelValues
	bad := false
	for _, k := range sortedKeys(n.Labels) {
		if fbLabels[k] && lv.set(k, n.Labels[k]) != nil {
			bad = true
		}
	}
	n.ASN, n.Loopback, n.SRv6Locator = lv.asn, lv.loopback, lv.locator

	switch kind {
	case "sonic-vs":
		n.OS = "sonic"
		if lv.os != "" {
			r.errf(labelPath[LabelOS], "%q does not apply to a sonic-vs node (it runs SONiC); remove the label", lv.os)
		}
	default:
		switch {
		case lv.os != "":
			n.OS = lv.os
		case strings.Contains(strings.ToLower(n.Image), "frr"):
			n.OS = "frr"
		default:
			n.OS = "linux"
		}
	}
	n.Role = lv.role
	if n.Role == "" && !bad {
		if n.OS == "linux" {
			n.Role = "host"
		} else {
			r.errKey(path, "missing label %s (want leaf, spine or super-spine for a switch)", LabelRole)
		}
	}

	// Configuration files.
	startup, startupPath := first(layers, "startup-config", func(c *NodeConfig) string { return c.StartupConfig })
	if startup != "" {
		switch n.OS {
		case "linux":
			r.errf(startupPath, "only FRR and SONiC nodes take a startup-config (this node runs plain Linux; set %s=frr or use an FRR image)", LabelOS)
		default:
			abs := r.file2abs(startupPath, startup)
			if n.OS == "frr" {
				n.FRRConfig = abs
			}
		}
	}
	targets := map[string]string{} // target -> path of the bind
	seen := map[string]bool{}
	for _, l := range layers {
		if l.c == nil {
			continue
		}
		for i, b := range l.c.Binds {
			if seen[b] {
				continue // containerlab merges identical binds
			}
			seen[b] = true
			bp := fileerr.Index(l.path+".binds", i)
			src, dst, err := parseBind(b)
			if err != nil {
				continue // reported by section
			}
			if other, dup := targets[dst]; dup {
				r.errf(bp, "a second bind onto %s (the first is %s)", dst, other)
				continue
			}
			targets[dst] = bp
			if n.OS == "linux" {
				r.errf(bp, "bind onto %s needs an FRR node (this node runs plain Linux; set %s=frr or use an FRR image)", dst, LabelOS)
				continue
			}
			abs := r.file2abs(bp, src)
			switch {
			case n.OS != "frr":
			case dst == FRRConfTarget:
				if n.FRRConfig != "" && n.FRRConfig != abs {
					r.errf(bp, "bind onto %s conflicts with startup-config %s", FRRConfTarget, n.FRRConfig)
					continue
				}
				n.FRRConfig = abs
			case dst == FRRDaemonsTarget:
				n.FRRDaemons = abs
			}
		}
	}
	if mg, mgPath := first(layers, "mgmt-ipv4", func(c *NodeConfig) string { return c.MgmtIPv4 }); mg != "" {
		a, err := netip.ParseAddr(mg)
		if err != nil || !a.Is4() {
			r.errf(mgPath, "%q is not an IPv4 address", mg)
		} else {
			n.Mgmt = a
			r.mgmtPath[name] = mgPath
		}
	}
	return n
}

// file2abs makes a file path absolute (relative to the lab directory) and
// checks that it exists.
func (r *resolver) file2abs(path, f string) string {
	if strings.HasPrefix(f, "~") {
		r.errf(path, "%q: '~' is %s (use a path relative to the topology file, or an absolute one)", f, notNative)
		return ""
	}
	if !filepath.IsAbs(f) {
		f = filepath.Join(r.dir, f)
	}
	f = filepath.Clean(f)
	if st, err := os.Stat(f); err != nil {
		r.errf(path, "%s does not exist", f)
	} else if st.IsDir() {
		r.errf(path, "%s is a directory, not a file", f)
	}
	return f
}

// mgmtAddrs checks the nodes' management addresses and assigns the
// missing ones: the next free address from .11 upward, in node name order.
func (r *resolver) mgmtAddrs(lab *Lab) {
	sub := lab.Mgmt
	if !sub.IsValid() {
		return
	}
	network := sub.Addr()
	gateway := network.Next()
	broadcast := lastAddr(sub)
	used := map[netip.Addr]string{}
	for _, n := range lab.Nodes {
		if !n.Mgmt.IsValid() {
			continue
		}
		p := r.mgmtPath[n.Name]
		switch {
		case !sub.Contains(n.Mgmt):
			r.errf(p, "%s is outside the management subnet %s", n.Mgmt, sub)
		case n.Mgmt == network || n.Mgmt == broadcast:
			r.errf(p, "%s is the network or broadcast address of %s", n.Mgmt, sub)
		case n.Mgmt == gateway:
			r.errf(p, "%s is the management gateway (the first address of %s)", n.Mgmt, sub)
		default:
			if other, dup := used[n.Mgmt]; dup {
				r.errf(p, "%s is also the management address of %s", n.Mgmt, other)
			}
			used[n.Mgmt] = n.Name
		}
	}
	next := network
	for i := 0; i < mgmtFirstHost && next.IsValid(); i++ {
		next = next.Next()
	}
	for _, n := range lab.Nodes {
		if n.Mgmt.IsValid() {
			continue
		}
		for next.IsValid() && sub.Contains(next) && next != broadcast && used[next] != "" {
			next = next.Next()
		}
		if !next.IsValid() || !sub.Contains(next) || next == broadcast {
			r.errf(fileerr.Field("topology.nodes", n.Name), "no free management address left in %s for this node (addresses are assigned from .%d upward; give mgmt.ipv4-subnet a larger subnet)", sub, mgmtFirstHost)
			return
		}
		n.Mgmt = next
		used[next] = n.Name
		next = next.Next()
	}
}

// lastAddr returns the last address of a prefix.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	bits := p.Bits()
	for i := range b {
		for j := 0; j < 8; j++ {
			if i*8+j >= bits {
				b[i] |= 0x80 >> j
			}
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// links resolves and checks the links.
func (r *resolver) links(lab *Lab) {
	t := r.t
	used := map[string]map[string]string{} // node -> interface -> path
	addrs := map[netip.Addr]string{}
	for i, l := range t.Links {
		path := fileerr.Index("topology.links", i)
		if l == nil {
			r.errf(path, "empty link")
			continue
		}
		if l.Type != "" && l.Type != "veth" {
			r.errf(path+".type", "%q links are %s (want veth links: the short form or type: veth)", l.Type, notNative)
			continue
		}
		for _, k := range sortedKeys(l.Other) {
			msg := notNative
			if k == "ipv4" || k == "ipv6" {
				msg += " (give each endpoint its address in the extended form: type: veth, endpoints: [{node, interface, " + k + "}])"
			}
			r.errKey(fileerr.Field(path, k), "%s", msg)
		}
		if len(l.Labels) > 0 {
			r.errKey(path+".labels", "%s", notNative)
		}
		link := &Link{MTU: l.MTU}
		if l.MTU != 0 && (l.MTU < 68 || l.MTU > 65535) {
			r.errf(path+".mtu", "%d is not an MTU (want 68 to 65535)", l.MTU)
		}
		for _, k := range sortedKeys(l.Vars) {
			vp := fileerr.Field(path+".vars", k)
			if k != "rate" {
				r.errKey(vp, "%s (link vars may only set rate)", notNative)
				continue
			}
			bps, err := rateValue(l.Vars[k])
			if err != nil {
				r.errf(vp, "%v", err)
				continue
			}
			link.RateBps = bps
		}
		if len(l.Endpoints) != 2 {
			r.errf(path+".endpoints", "want exactly 2 endpoints, got %d", len(l.Endpoints))
			continue
		}
		ok := true
		var eps [2]Endpoint
		for j, e := range l.Endpoints {
			ep := fileerr.Index(path+".endpoints", j)
			nodePath, ifPath := ep, ep
			if !l.short() {
				nodePath, ifPath = ep+".node", ep+".interface"
			}
			if e == nil {
				r.errf(ep, "empty endpoint")
				ok = false
				continue
			}
			if e.MAC != "" {
				r.errKey(ep+".mac", "%s", notNative)
			}
			for _, k := range sortedKeys(e.Other) {
				r.errKey(fileerr.Field(ep, k), "%s", notNative)
			}
			if lab.NodeByName(e.Node) == nil {
				if _, exists := t.Nodes[e.Node]; !exists {
					r.errf(nodePath, "node %q is not defined in topology.nodes", e.Node)
				}
				ok = false
			}
			if err := checkIfName(e.Interface); err != nil {
				r.errf(ifPath, "%v", err)
				ok = false
			} else {
				if used[e.Node] == nil {
					used[e.Node] = map[string]string{}
				}
				if other, dup := used[e.Node][e.Interface]; dup {
					r.errf(ifPath, "interface %s of %s is already used by %s", e.Interface, e.Node, other)
					ok = false
				}
				used[e.Node][e.Interface] = ep
			}
			eps[j] = Endpoint{Node: e.Node, Interface: e.Interface}
			if e.IPv4 != "" {
				eps[j].IPv4 = r.ifAddr(ep+".ipv4", e.IPv4, true, addrs)
			}
			if e.IPv6 != "" {
				eps[j].IPv6 = r.ifAddr(ep+".ipv6", e.IPv6, false, addrs)
			}
		}
		for _, fam := range []struct {
			name string
			a, b netip.Prefix
		}{{"ipv4", eps[0].IPv4, eps[1].IPv4}, {"ipv6", eps[0].IPv6, eps[1].IPv6}} {
			if fam.a.IsValid() && fam.b.IsValid() && fam.a.Masked() != fam.b.Masked() {
				r.errf(fileerr.Index(path+".endpoints", 1)+"."+fam.name, "%s and %s are not in the same subnet", fam.a, fam.b)
			}
		}
		if !ok {
			continue
		}
		link.A, link.B = eps[0], eps[1]
		lab.Links = append(lab.Links, link)
	}
}

// ifAddr parses an endpoint address and checks that it is unique.
func (r *resolver) ifAddr(path, s string, v4 bool, addrs map[netip.Addr]string) netip.Prefix {
	p, err := netip.ParsePrefix(s)
	switch {
	case err != nil:
		r.errf(path, "%q is not an address with prefix length", s)
		return netip.Prefix{}
	case v4 && !p.Addr().Is4():
		r.errf(path, "%q is not an IPv4 address", s)
		return netip.Prefix{}
	case !v4 && (!p.Addr().Is6() || p.Addr().Is4In6()):
		r.errf(path, "%q is not an IPv6 address", s)
		return netip.Prefix{}
	}
	if other, dup := addrs[p.Addr()]; dup {
		r.errf(path, "%s is also the address of %s", p.Addr(), other)
	}
	addrs[p.Addr()] = path
	return p
}

// checkIfName checks that s is a Linux interface name a link may use.
func checkIfName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("missing interface name")
	case len(s) > 15:
		return fmt.Errorf("interface name %q is longer than 15 characters (the Linux limit)", s)
	case s == "." || s == "..":
		return fmt.Errorf("%q is not a valid interface name", s)
	case reservedIfNames[s]:
		return fmt.Errorf("interface name %q is reserved (loopback or management interface); data links use eth1, eth2 and so on", s)
	}
	for _, c := range s {
		if c <= ' ' || c == '/' || c == ':' || c >= 0x7f {
			return fmt.Errorf("interface name %q contains %q (not allowed in Linux interface names)", s, c)
		}
	}
	return nil
}

// rateValue decodes a link's vars.rate: a rate string or a number of bits
// per second.
func rateValue(v any) (int64, error) {
	switch x := v.(type) {
	case string:
		return ParseRate(x)
	case int64:
		if x > 0 && x <= maxRate {
			return x, nil
		}
		return 0, fmt.Errorf("%d bit/s is out of range (want 1bit to 100tbit)", x)
	case uint64:
		if x > 0 && x <= uint64(maxRate) {
			return int64(x), nil
		}
		return 0, fmt.Errorf("%d bit/s is out of range (want 1bit to 100tbit)", x)
	}
	return 0, fmt.Errorf("%v is not a rate (want e.g. 100mbit, 1gbit or 10Gbps)", v)
}

// maxRate is the largest link rate accepted: units.MaxBitRate, 100 Tbit/s.
const maxRate = units.MaxBitRate

// ParseRate parses a link rate into bits per second with
// [units.ParseBitRate]: a decimal number with an optional unit bit, kbit,
// mbit, gbit, tbit or bps, kbps, mbps, gbps, tbps (case-insensitive; all
// decimal multiples of bits per second — unlike tc, "bps" means bits, not
// bytes; also k, M, G, T alone and b/s, e.g. 25Gb/s), e.g. "100mbit",
// "1gbit", "2.5Gbps". The result must be a whole number of bits per second
// between 1 and 100 Tbit/s.
func ParseRate(s string) (int64, error) {
	r, err := units.ParseBitRate(s)
	switch units.KindOf(err) {
	case 0:
		return r, nil
	case units.NotWhole:
		return 0, fmt.Errorf("%q is not a whole number of bits per second", s)
	case units.TooLarge, units.NotPositive:
		return 0, fmt.Errorf("%q is out of range (want 1bit to 100tbit)", s)
	}
	return 0, fmt.Errorf("%q is not a rate (want e.g. 100mbit, 1gbit or 10Gbps)", s)
}

// FormatRate writes a rate in bits per second in the largest tc unit that
// represents it exactly, e.g. 1000000000 -> "1gbit", 2500000000 ->
// "2500mbit". ParseRate(FormatRate(r)) == r.
func FormatRate(bps int64) string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}} {
		if bps >= u.mult && bps%u.mult == 0 {
			return strconv.FormatInt(bps/u.mult, 10) + u.name
		}
	}
	return strconv.FormatInt(bps, 10) + "bit"
}
