package containerlab

import (
	"bufio"
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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

// Bind targets with a meaning to fabricbench: FRR's configuration.
const (
	FRRDirTarget     = "/etc/frr"
	FRRConfTarget    = "/etc/frr/frr.conf"
	FRRDaemonsTarget = "/etc/frr/daemons"
	VtyshConfTarget  = "/etc/frr/vtysh.conf"
)

// DefaultMgmtSubnet is containerlab's management subnet, used when the
// file sets no mgmt.ipv4-subnet.
var DefaultMgmtSubnet = netip.MustParsePrefix("172.20.20.0/24")

// DefaultMgmtNetwork is containerlab's management network name.
const DefaultMgmtNetwork = "clab"

// MaxLabName is the longest lab name the native runtime accepts: network
// namespace and interface names are derived from it.
const MaxLabName = 20

// MaxStartupDelay bounds a node's startup-delay.
const MaxStartupDelay = time.Hour

// mgmtFirstHost is the host number of the first management address the
// native runtime assigns to nodes without mgmt-ipv4 (.11 in a /24).
const mgmtFirstHost = 11

var (
	roles   = set(RoleHost, RoleLeaf, RoleSpine, RoleSuperSpine)
	nodeOSs = set("frr", "linux")
	// labKinds are the node kinds fabricbench drives; every other kind is
	// refused on both runtimes.
	labKinds = set("linux", "bridge", "sonic-vs")
	fbLabels = set(LabelRole, LabelOS, LabelASN, LabelLoopback, LabelSRv6Locator)
	// nativeIgnored are the node properties without effect on the native
	// runtime (it runs no container).
	nativeIgnored = set("position", "image-pull-policy", "restart-policy", "auto-remove")
	// nativeLinkTypes are the link types the native runtime makes.
	nativeLinkTypes = set("", "veth", "dummy", "host", "mgmt-net")
)

const (
	notNative     = "not supported by the native runtime"
	useContainerl = "; deploy with --runtime containerlab (Docker)"
)

// resolver collects the problems Resolve finds.
type resolver struct {
	t       *Topology
	file    string
	dir     string
	runtime string
	errs    ErrorList
	// mgmtPath is where each node's mgmt-ipv4 is written.
	mgmtPath map[string]string
	// netNone are the nodes with network-mode none (no management
	// interface: eth0 is free for links).
	netNone map[string]bool
}

// errf reports a problem with the value at path; errKey one with the key
// itself (an unsupported property).
func (r *resolver) errf(path, format string, args ...any) {
	r.add(path, false, fmt.Sprintf(format, args...))
}

func (r *resolver) errKey(path, format string, args ...any) {
	r.add(path, true, fmt.Sprintf(format, args...))
}

// nativeKey and nativeVal report what only the native runtime cannot
// honour (nothing for the containerlab runtime).
func (r *resolver) nativeKey(path, format string, args ...any) {
	if r.runtime == RuntimeNative {
		r.add(path, true, fmt.Sprintf(format, args...)+useContainerl)
	}
}

func (r *resolver) nativeVal(path, format string, args ...any) {
	if r.runtime == RuntimeNative {
		r.add(path, false, fmt.Sprintf(format, args...)+useContainerl)
	}
}

func (r *resolver) native() bool { return r.runtime == RuntimeNative }

func (r *resolver) add(path string, key bool, msg string) {
	p := r.t.pos.at(path, key)
	r.errs = append(r.errs, &Error{File: r.file, Line: p.Line, Column: p.Column, Path: path, Msg: msg})
}

// layer is one node configuration that applies to a node, with its path.
type layer struct {
	path string
	c    *NodeConfig
}

// Lab resolves the topology for the native runtime; see Resolve.
func (t *Topology) Lab(dir string) (*Lab, error) { return t.Resolve(dir, RuntimeNative) }

// Resolve resolves the topology into the deployer-facing Lab for a
// runtime (RuntimeNative or RuntimeContainerlab) and rejects, by name,
// every property that runtime does not honour and every node kind
// fabricbench does not drive (linux, bridge and sonic-vs nodes; see
// docs/containerlab.md for the table).
//
// dir is the directory relative paths (binds, startup-config, env-files)
// are resolved against; "" means the directory of Topology.File. Every
// node is merged as containerlab does: topology.defaults, then
// topology.kinds[kind], then topology.groups[group], then the node itself;
// scalars from the most specific level that sets them, labels, env and
// sysctls merged key by key (most specific wins), binds merged and exec
// lists appended in that order. fabricbench labels are decoded (see the
// Label constants); nodes without a fabricbench.role label get an
// inferred role (see inferRoles). On the native runtime a node without
// mgmt-ipv4 gets the next free address of the management subnet from .11
// upward, in node name order; containerlab assigns its own.
//
// Problems are returned as an ErrorList, each naming the field, e.g.
//
//	lab.clab.yml:9:7: topology.nodes.leaf0.cpu: not supported by the native runtime; deploy with --runtime containerlab (Docker)
func (t *Topology) Resolve(dir, runtime string) (*Lab, error) {
	switch runtime {
	case RuntimeNative, RuntimeContainerlab:
	default:
		return nil, fmt.Errorf("unknown lab runtime %q (want %s or %s)", runtime, RuntimeContainerlab, RuntimeNative)
	}
	file := t.errFile
	if file == "" {
		file = t.File
	}
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
	r := &resolver{t: t, file: file, dir: abs, runtime: runtime, mgmtPath: map[string]string{}, netNone: map[string]bool{}}
	lab := r.resolve()
	if err := r.errs.Finish(file); err != nil {
		return nil, err
	}
	return lab, nil
}

func (r *resolver) resolve() *Lab {
	t := r.t
	lab := &Lab{Name: t.Name, Dir: r.dir, File: t.File, Runtime: r.runtime, Prefix: "clab", MgmtNetwork: DefaultMgmtNetwork}
	switch {
	case t.Name == "":
		r.errf("name", "missing lab name")
	case !labNameRe.MatchString(t.Name):
		r.errf("name", "%q is not a valid lab name (want letters, digits, '-', '_' and '.', starting with a letter or digit)", t.Name)
	case len(t.Name) > MaxLabName:
		r.nativeVal("name", "%q is %d characters long; the native runtime takes at most %d (namespace and interface names are derived from it)", t.Name, len(t.Name), MaxLabName)
	}
	if t.Prefix != nil {
		lab.Prefix = *t.Prefix
	}
	for _, k := range sortedKeys(t.Other) {
		if k != "debug" {
			r.nativeKey(k, "%s", notNative)
		}
	}
	lab.Mgmt, lab.MgmtIPv6 = r.mgmt()
	if t.Mgmt != nil && t.Mgmt.Network != "" {
		lab.MgmtNetwork = t.Mgmt.Network
	}

	// Every node configuration, wherever it is written.
	if t.Defaults != nil {
		r.section("topology.defaults", t.Defaults)
	}
	for _, k := range sortedKeys(t.Kinds) {
		p := fileerr.Field("topology.kinds", k)
		switch {
		case !labKinds[k]:
			r.errKey(p, "%s", kindRefusal(k))
		case k == "sonic-vs":
			r.nativeKey(p, "kind sonic-vs is %s (SONiC needs its container image)", notNative)
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
	if r.native() {
		r.mgmtAddrs(lab)
	} else {
		r.checkMgmtAddrs(lab)
	}
	r.links(lab)
	inferRoles(lab)
	return lab
}

// kindRefusal is the message for a node kind fabricbench does not drive.
func kindRefusal(kind string) string {
	return fmt.Sprintf("kind %q is not supported by fabricbench (it drives linux, bridge and sonic-vs nodes: FRR or plain Linux in linux containers; %s cannot be configured or read by its drivers)", kind, kind)
}

// mgmt checks the mgmt section and returns the management subnets.
func (r *resolver) mgmt() (v4, v6 netip.Prefix) {
	m := r.t.Mgmt
	if m == nil {
		return DefaultMgmtSubnet, netip.Prefix{}
	}
	for _, k := range sortedKeys(m.Other) {
		r.nativeKey("mgmt."+k, "%s", notNative)
	}
	if m.IPv6Subnet != "" {
		r.nativeKey("mgmt.ipv6-subnet", "%s (its nodes get IPv4 management addresses only)", notNative)
		if m.IPv6Subnet != "auto" {
			if pf, err := netip.ParsePrefix(m.IPv6Subnet); err == nil {
				v6 = pf.Masked()
			}
		}
	}
	if m.Bridge != "" {
		r.nativeKey("mgmt.bridge", "%s (it makes its own management bridge)", notNative)
	}
	switch m.IPv4Subnet {
	case "":
		return DefaultMgmtSubnet, v6
	case "auto":
		r.nativeVal("mgmt.ipv4-subnet", "\"auto\" is %s (give a subnet, e.g. 198.18.20.0/24)", notNative)
		return netip.Prefix{}, v6
	}
	pf, err := netip.ParsePrefix(m.IPv4Subnet)
	switch {
	case err != nil || !pf.Addr().Is4():
		r.errf("mgmt.ipv4-subnet", "%q is not an IPv4 prefix", m.IPv4Subnet)
		return DefaultMgmtSubnet, v6
	case pf.Masked() != pf:
		r.errf("mgmt.ipv4-subnet", "%s has host bits set (want %s)", pf, pf.Masked())
	case pf.Bits() > 28:
		r.errf("mgmt.ipv4-subnet", "%s is too small (want a /28 or larger)", pf)
	}
	return pf.Masked(), v6
}

// section checks one node configuration as written.
func (r *resolver) section(p string, c *NodeConfig) {
	if c == nil {
		return
	}
	for _, k := range sortedKeys(c.Other) {
		kp := fileerr.Field(p, k)
		switch k {
		case "startup-delay":
			r.startupDelay(kp, c.Other[k])
		case "env-files":
			r.envFiles(kp, c.Other[k])
		case "network-mode", "cmd", "entrypoint":
			if s, ok := c.Other[k].Value.(string); !ok && c.Other[k].Value != nil {
				r.errf(kp, "want a string, got %v", c.Other[k].Value)
			} else {
				r.nativeKey(kp, "%s is %s (it runs no container image: it starts FRR from the daemons file, and sshd, itself)", k, notNative)
				if k == "network-mode" && !validNetworkMode(s) {
					r.errf(kp, "%q is not a network mode (want bridge, host, none or container:NAME)", s)
				}
			}
		default:
			if !nativeIgnored[k] {
				r.nativeKey(kp, "%s", notNative)
			}
		}
	}
	if c.MgmtIPv6 != "" {
		r.nativeKey(p+".mgmt-ipv6", "%s (its nodes get IPv4 management addresses only)", notNative)
	}
	switch {
	case c.Kind == "":
	case !labKinds[c.Kind]:
		r.errf(p+".kind", "%s", kindRefusal(c.Kind))
	case c.Kind == "sonic-vs":
		r.nativeVal(p+".kind", "kind sonic-vs is %s (SONiC needs its container image)", notNative)
	}
	for i, b := range c.Binds {
		bp := fileerr.Index(p+".binds", i)
		if _, err := parseBind(b); err != nil {
			r.errf(bp, "%v", err)
		}
	}
	for _, k := range sortedKeys(c.Labels) {
		if strings.HasPrefix(k, "fabricbench.") {
			r.label(fileerr.Field(p+".labels", k), k, c.Labels[k])
		}
	}
	for _, k := range sortedKeys(c.Sysctls) {
		if !validSysctl(k) {
			r.errKey(fileerr.Field(p+".sysctls", k), "%q is not a sysctl name (want e.g. net.ipv4.ip_forward)", k)
		}
	}
}

func validNetworkMode(s string) bool {
	switch {
	case s == "", s == "bridge", s == "host", s == "none", s == "default":
		return true
	case strings.HasPrefix(s, "container:") && len(s) > len("container:"):
		return true
	}
	return false
}

// startupDelay decodes startup-delay: whole seconds.
func (r *resolver) startupDelay(p string, e *Extra) time.Duration {
	var n int64
	switch x := e.Value.(type) {
	case int64:
		n = x
	case uint64:
		n = int64(MaxStartupDelay/time.Second) + 1
		if x < uint64(n) {
			n = int64(x)
		}
	default:
		r.errf(p, "want a number of seconds, got %v", e.Value)
		return 0
	}
	if n < 0 || time.Duration(n)*time.Second > MaxStartupDelay {
		r.errf(p, "%d seconds is out of range (want 0 to %d)", n, int64(MaxStartupDelay/time.Second))
		return 0
	}
	return time.Duration(n) * time.Second
}

// envFiles checks the env-files list: each file must exist.
func (r *resolver) envFiles(p string, e *Extra) []string {
	list, ok := e.Value.([]any)
	if !ok {
		if e.Value != nil {
			r.errf(p, "want a list of files, got %v", e.Value)
		}
		return nil
	}
	var out []string
	for i, v := range list {
		s, ok := v.(string)
		ip := fileerr.Index(p, i)
		if !ok || s == "" {
			r.errf(ip, "want a file name, got %v", v)
			continue
		}
		if f := r.file2abs(ip, s, false); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// readEnvFile reads KEY=VALUE lines (blank lines and # comments skipped,
// an "export " prefix and quotes around the value allowed).
func readEnvFile(file string) (map[string]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		s = strings.TrimPrefix(s, "export ")
		k, v, ok := strings.Cut(s, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || !isNameStart(k[0]) || strings.IndexFunc(k, func(c rune) bool { return !(c < 0x80 && isNameChar(byte(c))) }) >= 0 {
			return nil, fmt.Errorf("%s:%d: want KEY=VALUE", file, line)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out[k] = v
	}
	return out, sc.Err()
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

// bindSpec is a bind as written: source:target[:options].
type bindSpec struct{ src, dst, opts string }

// parseBind splits "source:target[:options]".
func parseBind(b string) (bindSpec, error) {
	parts := strings.SplitN(b, ":", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return bindSpec{}, fmt.Errorf("%q is not a bind (want source:target[:options])", b)
	}
	s := bindSpec{src: parts[0], dst: parts[1]}
	if len(parts) == 3 {
		s.opts = parts[2]
		for _, o := range strings.Split(s.opts, ",") {
			if o == "" {
				return bindSpec{}, fmt.Errorf("%q has an empty bind option", b)
			}
		}
	}
	if !strings.HasPrefix(s.dst, "/") {
		return bindSpec{}, fmt.Errorf("bind target %q is not an absolute path", s.dst)
	}
	return s, nil
}

// frrTarget reports whether a bind target is FRR's configuration
// directory or a file in it.
func frrTarget(dst string) bool {
	d := path.Clean(dst)
	return d == FRRDirTarget || strings.HasPrefix(d, FRRDirTarget+"/")
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

// firstOther returns the first layer's value of an Other property.
func firstOther(layers []layer, key string) (*Extra, string) {
	for _, l := range layers {
		if l.c == nil || l.c.Other == nil {
			continue
		}
		if e, ok := l.c.Other[key]; ok {
			return e, fileerr.Field(l.path, key)
		}
	}
	return nil, ""
}

// node resolves one node; nil when it cannot be resolved.
func (r *resolver) node(name string) *Node {
	t := r.t
	p := fileerr.Field("topology.nodes", name)
	nc := t.Nodes[name]
	if r.native() && (!labNameRe.MatchString(name) || len(name) > 63) {
		r.errKey(p, "%q is not a node name the native runtime accepts (want at most 63 letters, digits, '-', '_' and '.', starting with a letter or digit)%s", name, useContainerl)
	}
	if reservedNodes[name] {
		r.errKey(p, "%q is a reserved endpoint name in containerlab's link short form (host, mgmt-net, macvlan); rename the node", name)
	}
	layers := []layer{{p, nc}}
	groupName, _ := first([]layer{{p, nc}, {"topology.defaults", t.Defaults}}, "group", func(c *NodeConfig) string { return c.Group })
	if g, ok := t.Groups[groupName]; ok && groupName != "" {
		layers = append(layers, layer{fileerr.Field("topology.groups", groupName), g})
	}
	kind, _ := first(append(layers, layer{"topology.defaults", t.Defaults}), "kind", func(c *NodeConfig) string { return c.Kind })
	if kind == "" {
		r.errKey(p, "no kind (set kind on the node, or in topology.defaults)")
		return nil
	}
	if !labKinds[kind] || (kind == "sonic-vs" && r.native()) {
		return nil // reported where the kind is written
	}
	if k, ok := t.Kinds[kind]; ok {
		layers = append(layers, layer{fileerr.Field("topology.kinds", kind), k})
	}
	layers = append(layers, layer{"topology.defaults", t.Defaults})

	n := &Node{Name: name, Kind: kind, Labels: map[string]string{}, Sysctls: map[string]string{}, Env: map[string]string{}}
	n.Image, _ = first(layers, "image", func(c *NodeConfig) string { return c.Image })
	// Labels, env and sysctls: least specific first, so that later ones win.
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
		if e, ok := c.Other["env-files"]; ok {
			if list, ok := e.Value.([]any); ok {
				for j, v := range list {
					s, _ := v.(string)
					if s == "" {
						continue
					}
					f := s
					if !filepath.IsAbs(f) {
						f = filepath.Join(r.dir, f)
					}
					env, err := readEnvFile(f)
					if err != nil {
						if !os.IsNotExist(err) {
							r.errf(fileerr.Index(fileerr.Field(layers[i].path, "env-files"), j), "%v", err)
						}
						continue
					}
					for k, v := range env {
						n.Env[k] = v
					}
				}
			}
		}
		for k, v := range c.Env {
			n.Env[k] = v
		}
		n.Exec = append(n.Exec, c.Exec...)
	}
	if e, _ := firstOther(layers, "startup-delay"); e != nil {
		n.StartupDelay = r.startupDelayQuiet(e)
	}
	for _, k := range []string{"cmd", "entrypoint", "network-mode"} {
		if e, _ := firstOther(layers, k); e != nil {
			s, _ := e.Value.(string)
			switch k {
			case "cmd":
				n.Cmd = s
			case "entrypoint":
				n.Entrypoint = s
			default:
				n.NetworkMode = s
			}
		}
	}
	if n.NetworkMode == "none" {
		r.netNone[name] = true
	}
	// Problems with label values were reported where they are written.
	var lv labelValues
	for _, k := range sortedKeys(n.Labels) {
		if fbLabels[k] {
			_ = lv.set(k, n.Labels[k])
		}
	}
	n.ASN, n.Loopback, n.SRv6Locator = lv.asn, lv.loopback, lv.locator

	startup, startupPath := first(layers, "startup-config", func(c *NodeConfig) string { return c.StartupConfig })
	bindPaths := r.binds(n, layers)
	switch kind {
	case "sonic-vs":
		n.OS = "sonic"
		if lv.os != "" {
			r.errf(labelPath[LabelOS], "%q does not apply to a sonic-vs node (it runs SONiC); remove the label", lv.os)
		}
	case "bridge":
		n.Role = RoleBridge
		if lv.role != "" {
			r.errf(labelPath[LabelRole], "a bridge node is a layer-2 segment, not a %s; remove the label", lv.role)
		}
	default:
		switch {
		case lv.os != "":
			n.OS = lv.os
		case strings.Contains(strings.ToLower(n.Image), "frr"), n.FRRConfig != "", n.FRRDaemons != "", n.FRRDir != "", startup != "":
			n.OS = "frr"
		default:
			n.OS = "linux"
		}
	}
	if kind != "bridge" {
		n.Role = lv.role
	}

	// Configuration files.
	if startup != "" {
		switch n.OS {
		case "linux":
			r.errf(startupPath, "only FRR and SONiC nodes take a startup-config (this node's %s label says linux)", LabelOS)
		case "frr":
			abs := r.file2abs(startupPath, startup, false)
			n.StartupConfig = abs
			if n.FRRConfig != "" && n.FRRConfig != abs {
				r.errf(startupPath, "startup-config conflicts with the bind onto %s (%s)", FRRConfTarget, n.FRRConfig)
			} else {
				n.FRRConfig = abs
			}
		default:
			r.file2abs(startupPath, startup, false)
		}
	}
	if n.OS == "linux" && r.native() {
		for i, b := range n.Binds {
			if frrTarget(b.Target) {
				r.errf(bindPaths[i], "bind onto %s needs an FRR node (this node's %s label says linux)", b.Target, LabelOS)
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
	if mg, _ := first(layers, "mgmt-ipv6", func(c *NodeConfig) string { return c.MgmtIPv6 }); mg != "" {
		if a, err := netip.ParseAddr(mg); err == nil && a.Is6() {
			n.MgmtIPv6 = a
		}
	}
	return n
}

func (r *resolver) startupDelayQuiet(e *Extra) time.Duration {
	var x int64
	switch v := e.Value.(type) {
	case int64:
		x = v
	case uint64:
		if v > uint64(MaxStartupDelay/time.Second) {
			return 0
		}
		x = int64(v)
	default:
		return 0
	}
	if x >= 0 && time.Duration(x)*time.Second <= MaxStartupDelay {
		return time.Duration(x) * time.Second
	}
	return 0
}

// binds resolves a node's binds over its layers (containerlab merges them,
// identical binds once): FRR's configuration is recognised, every other
// bind is kept for the containerlab runtime and refused by the native one.
func (r *resolver) binds(n *Node, layers []layer) (paths []string) {
	type at struct {
		path  string
		layer int
	}
	targets := map[string]at{} // target -> the bind onto it
	seen := map[string]bool{}
	for li, l := range layers {
		if l.c == nil {
			continue
		}
		for i, b := range l.c.Binds {
			if seen[b] {
				continue
			}
			seen[b] = true
			bp := fileerr.Index(l.path+".binds", i)
			s, err := parseBind(b)
			if err != nil {
				continue // reported by section
			}
			// containerlab's placeholders: the node's name, and the lab's
			// and the node's directories containerlab makes at deploy
			// (clab-LAB/ and clab-LAB/NODE/ next to the topology file).
			labDir := filepath.Join(r.dir, "clab-"+r.t.Name)
			madeByClab := strings.Contains(s.src, "__clabNodeDir__") || strings.Contains(s.src, "__clabDir__")
			s.src = strings.NewReplacer("__clabNodeName__", n.Name, "__clabNodeDir__", filepath.Join(labDir, n.Name),
				"__clabDir__", labDir).Replace(s.src)
			if madeByClab {
				if r.native() {
					r.errf(bp, "%q names a directory containerlab makes at deploy; it is %s%s", b, notNative, useContainerl)
					continue
				}
				n.Binds = append(n.Binds, Bind{Source: s.src, Target: path.Clean(s.dst), Options: s.opts})
				paths = append(paths, bp)
				targets[path.Clean(s.dst)] = at{bp, li}
				continue
			}
			dst := path.Clean(s.dst)
			if other, dup := targets[dst]; dup {
				// A more specific level's bind onto the same path wins (layers
				// are most specific first); two in one level are an error.
				if other.layer == li {
					r.errf(bp, "a second bind onto %s (the first is %s)", dst, other.path)
				}
				continue
			}
			targets[dst] = at{bp, li}
			if !frrTarget(dst) {
				r.nativeVal(bp, "bind onto %s is %s (nodes share this machine's file system; only FRR's /etc/frr is per node)", dst, notNative)
			}
			if s.opts != "" && s.opts != "ro" && s.opts != "rw" {
				r.nativeVal(bp, "bind options %q are %s (want ro or rw)", s.opts, notNative)
			}
			abs := r.file2abs(bp, s.src, true)
			if abs == "" {
				continue
			}
			st, err := os.Stat(abs)
			isDir := err == nil && st.IsDir()
			n.Binds = append(n.Binds, Bind{Source: abs, Target: dst, Options: s.opts, Dir: isDir})
			paths = append(paths, bp)
			switch {
			case dst == FRRDirTarget:
				if !isDir {
					r.errf(bp, "bind onto %s: %s is a file (bind a directory onto /etc/frr, or a file onto %s)", FRRDirTarget, abs, FRRConfTarget)
					continue
				}
				n.FRRDir = abs
			case dst == FRRConfTarget && !isDir:
				n.FRRConfig = abs
			case dst == FRRDaemonsTarget && !isDir:
				n.FRRDaemons = abs
			case frrTarget(dst) && isDir:
				r.nativeVal(bp, "a directory bound onto %s is %s (bind files into /etc/frr, or the whole directory onto /etc/frr)", dst, notNative)
			}
		}
	}
	if n.FRRDir != "" {
		if n.FRRConfig == "" {
			if f := filepath.Join(n.FRRDir, "frr.conf"); fileExists(f) {
				n.FRRConfig = f
			}
		}
		if n.FRRDaemons == "" {
			if f := filepath.Join(n.FRRDir, "daemons"); fileExists(f) {
				n.FRRDaemons = f
			}
		}
	}
	return paths
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// file2abs makes a path absolute (relative to the lab directory) and
// checks that it exists (a file, or with dirOK also a directory).
func (r *resolver) file2abs(p, f string, dirOK bool) string {
	if strings.HasPrefix(f, "~") {
		home, err := os.UserHomeDir()
		if err != nil {
			r.errf(p, "%q: cannot expand '~': %v", f, err)
			return ""
		}
		f = filepath.Join(home, strings.TrimPrefix(f, "~"))
	}
	if !filepath.IsAbs(f) {
		f = filepath.Join(r.dir, f)
	}
	f = filepath.Clean(f)
	if st, err := os.Stat(f); err != nil {
		r.errf(p, "%s does not exist", f)
		return ""
	} else if st.IsDir() && !dirOK {
		r.errf(p, "%s is a directory, not a file", f)
		return ""
	}
	return f
}

// checkMgmtAddrs checks the management addresses set in the file
// (containerlab runtime: containerlab assigns the others).
func (r *resolver) checkMgmtAddrs(lab *Lab) {
	sub := lab.Mgmt
	used := map[netip.Addr]string{}
	for _, n := range lab.Nodes {
		if !n.Mgmt.IsValid() {
			continue
		}
		p := r.mgmtPath[n.Name]
		if sub.IsValid() && !sub.Contains(n.Mgmt) {
			r.errf(p, "%s is outside the management subnet %s", n.Mgmt, sub)
		}
		if other, dup := used[n.Mgmt]; dup {
			r.errf(p, "%s is also the management address of %s", n.Mgmt, other)
		}
		used[n.Mgmt] = n.Name
	}
}

// mgmtAddrs checks the nodes' management addresses and assigns the
// missing ones: the next free address from .11 upward, in node name order
// (native runtime).
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
		if n.Mgmt.IsValid() || n.Kind == "bridge" {
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

// linkCtx is what links resolution keeps across links.
type linkCtx struct {
	used  map[string]map[string]string // node -> interface -> path
	addrs map[netip.Addr]string
}

// endpointPaths returns where an endpoint's node and interface are
// written.
func endpointPaths(ep string, short bool) (nodePath, ifPath string) {
	if short {
		return ep, ep
	}
	return ep + ".node", ep + ".interface"
}

// links resolves and checks the links.
func (r *resolver) links(lab *Lab) {
	t := r.t
	lc := &linkCtx{used: map[string]map[string]string{}, addrs: map[netip.Addr]string{}}
	for i, l := range t.Links {
		lp := fileerr.Index("topology.links", i)
		if l == nil {
			r.errf(lp, "empty link")
			continue
		}
		if !nativeLinkTypes[l.Type] {
			r.nativeVal(lp+".type", "%q links are %s", l.Type, notNative)
		}
		if l.MTU != 0 && (l.MTU < 68 || l.MTU > 65535) {
			r.errf(lp+".mtu", "%d is not an MTU (want 68 to 65535)", l.MTU)
		}
		rate := r.linkVars(lp, l)
		if singleEndpointTypes[l.Type] {
			r.stub(lab, lp, l, lc)
			continue
		}
		if len(l.Endpoints) != 2 {
			if l.Endpoints != nil {
				r.errf(lp+".endpoints", "want exactly 2 endpoints, got %d", len(l.Endpoints))
			}
			continue
		}
		short := l.short()
		// Short-form endpoints naming host, mgmt-net or macvlan make a
		// stub link of that type.
		if l.Type == "" {
			if k, ok := reservedEnd(l); ok {
				other := l.Endpoints[1-k]
				ep := fileerr.Index(lp+".endpoints", k)
				typ := l.Endpoints[k].Node
				if typ == "macvlan" {
					r.nativeVal(ep, "macvlan links are %s", notNative)
				}
				st := &LinkConfig{Type: typ, Endpoint: other, HostInterface: l.Endpoints[k].Interface, MTU: l.MTU}
				if reservedNodes[other.Node] {
					r.errf(fileerr.Index(lp+".endpoints", 1-k), "a link needs at least one node end (%s:%s and %s:%s are both reserved names)", typ, l.Endpoints[k].Interface, other.Node, other.Interface)
					continue
				}
				r.stubAt(lab, lp, fileerr.Index(lp+".endpoints", 1-k), true, st, lc)
				continue
			}
		}
		ok := true
		var eps [2]Endpoint
		for j, e := range l.Endpoints {
			ep := fileerr.Index(lp+".endpoints", j)
			if e == nil {
				r.errf(ep, "empty endpoint")
				ok = false
				continue
			}
			e2, good := r.endpoint(lab, ep, short, e, lc)
			eps[j] = e2
			ok = ok && good
		}
		for j, fam := range []struct {
			key  string
			list []string
		}{{"ipv4", l.IPv4}, {"ipv6", l.IPv6}} {
			if len(fam.list) == 0 {
				continue
			}
			fp := lp + "." + fam.key
			if len(fam.list) != 2 {
				r.errf(fp, "want one address per endpoint (2), got %d", len(fam.list))
				continue
			}
			for k := range 2 {
				pf := r.ifAddr(fileerr.Index(fp, k), fam.list[k], j == 0, lc.addrs)
				if j == 0 {
					if eps[k].IPv4.IsValid() {
						r.errf(fileerr.Index(fp, k), "endpoint %d also sets ipv4", k)
					}
					eps[k].IPv4 = pf
				} else {
					if eps[k].IPv6.IsValid() {
						r.errf(fileerr.Index(fp, k), "endpoint %d also sets ipv6", k)
					}
					eps[k].IPv6 = pf
				}
			}
		}
		for _, fam := range []struct {
			name string
			a, b netip.Prefix
		}{{"ipv4", eps[0].IPv4, eps[1].IPv4}, {"ipv6", eps[0].IPv6, eps[1].IPv6}} {
			if fam.a.IsValid() && fam.b.IsValid() && fam.a.Masked() != fam.b.Masked() {
				at := fileerr.Index(lp+".endpoints", 1) + "." + fam.name
				if short {
					at = fileerr.Index(lp+"."+fam.name, 1)
				}
				r.errf(at, "%s and %s are not in the same subnet", fam.a, fam.b)
			}
		}
		if !ok {
			continue
		}
		if eps[0].Node == eps[1].Node {
			r.errf(lp+".endpoints", "both ends are on node %s (a link joins two nodes)", eps[0].Node)
			continue
		}
		lab.Links = append(lab.Links, &Link{A: eps[0], B: eps[1], MTU: l.MTU, RateBps: rate, Type: l.Type})
	}
}

// reservedEnd returns the index of a short-form endpoint that names host,
// mgmt-net or macvlan.
func reservedEnd(l *LinkConfig) (int, bool) {
	for k, e := range l.Endpoints {
		if e != nil && reservedNodes[e.Node] {
			return k, true
		}
	}
	return 0, false
}

// linkVars reads a link's vars: fabricbench reads rate; the others are
// containerlab's (kept, no effect).
func (r *resolver) linkVars(lp string, l *LinkConfig) int64 {
	var rate int64
	for _, k := range sortedKeys(l.Vars) {
		if k != "rate" {
			continue
		}
		vp := fileerr.Field(lp+".vars", k)
		bps, err := rateValue(l.Vars[k])
		if err != nil {
			r.errf(vp, "%v", err)
			continue
		}
		rate = bps
	}
	return rate
}

// endpoint resolves one node end of a link.
func (r *resolver) endpoint(lab *Lab, ep string, short bool, e *LinkEndpoint, lc *linkCtx) (Endpoint, bool) {
	nodePath, ifPath := endpointPaths(ep, short)
	ok := true
	if lab.NodeByName(e.Node) == nil {
		if _, exists := r.t.Nodes[e.Node]; !exists {
			r.errf(nodePath, "node %q is not defined in topology.nodes", e.Node)
		}
		ok = false
	}
	if err := r.checkIfName(e.Node, e.Interface); err != nil {
		r.errf(ifPath, "%v", err)
		ok = false
	} else {
		if lc.used[e.Node] == nil {
			lc.used[e.Node] = map[string]string{}
		}
		if other, dup := lc.used[e.Node][e.Interface]; dup {
			r.errf(ifPath, "interface %s of %s is already used by %s", e.Interface, e.Node, other)
			ok = false
		}
		lc.used[e.Node][e.Interface] = ep
	}
	out := Endpoint{Node: e.Node, Interface: e.Interface, MAC: e.MAC}
	if e.IPv4 != "" {
		out.IPv4 = r.ifAddr(ep+".ipv4", e.IPv4, true, lc.addrs)
	}
	if e.IPv6 != "" {
		out.IPv6 = r.ifAddr(ep+".ipv6", e.IPv6, false, lc.addrs)
	}
	return out, ok
}

// stub resolves a single-endpoint link written in the extended form.
func (r *resolver) stub(lab *Lab, lp string, l *LinkConfig, lc *linkCtx) {
	if l.Endpoint == nil {
		return // reported by the parser
	}
	r.stubAt(lab, lp, lp+".endpoint", false, l, lc)
}

// stubAt resolves a single-endpoint link; ep is where its node end is
// written (short: in the short form).
func (r *resolver) stubAt(lab *Lab, lp, ep string, short bool, l *LinkConfig, lc *linkCtx) {
	e, ok := r.endpoint(lab, ep, short, l.Endpoint, lc)
	switch l.Type {
	case "host", "mgmt-net", "macvlan":
		if l.HostInterface == "" {
			if !short {
				r.errf(lp, "missing host-interface (the %s end's interface name)", l.Type)
			}
			ok = false
		} else if err := checkHostIfName(l.HostInterface); err != nil {
			r.errf(lp+".host-interface", "%v", err)
			ok = false
		}
	case "vxlan", "vxlan-stitch":
		if l.Remote == "" {
			r.errf(lp, "missing remote (the far VTEP's address)")
			ok = false
		}
		if l.VNI == 0 {
			r.errf(lp, "missing vni")
			ok = false
		}
	}
	if !ok {
		return
	}
	lab.Stubs = append(lab.Stubs, &Stub{Type: l.Type, Endpoint: e, HostInterface: l.HostInterface, Mode: l.Mode,
		Remote: l.Remote, VNI: l.VNI, UDPPort: l.UDPPort, MTU: l.MTU})
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

// checkIfName checks that s is a Linux interface name a link of node may
// use: not the loopback, and not the management interface (mgmt0 on the
// native runtime, eth0 unless the node has network-mode none).
func (r *resolver) checkIfName(node, s string) error {
	if err := checkHostIfName(s); err != nil {
		return err
	}
	switch {
	case s == "lo":
		return fmt.Errorf("interface name %q is reserved (the loopback)", s)
	case s == "mgmt0" && r.native():
		return fmt.Errorf("interface name %q is reserved (the native runtime's management interface); data links use eth1, eth2 and so on", s)
	case s == "eth0" && !r.netNone[node]:
		return fmt.Errorf("interface name %q is reserved (the management interface); data links use eth1, eth2 and so on", s)
	}
	return nil
}

// checkHostIfName checks a Linux interface name.
func checkHostIfName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("missing interface name")
	case len(s) > 15:
		return fmt.Errorf("interface name %q is longer than 15 characters (the Linux limit)", s)
	case s == "." || s == "..":
		return fmt.Errorf("%q is not a valid interface name", s)
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
		return units.ParseTCRate(x)
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
