package containerlab

import (
	"math"
	"net"
	"net/netip"
	"os"
	"regexp"
	"strings"

	"github.com/fabricbench/fabricbench/internal/fileerr"
	"github.com/fabricbench/fabricbench/internal/yamlx"
	"github.com/goccy/go-yaml"
)

// Topology files are read within yamlx's limits (size, depth, alias
// expansion), shared with suites and inventories.

// Name patterns containerlab accepts for lab names and node names.
var (
	labNameRe  = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)
	nodeNameRe = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._|-]*$`)
)

// Parse reads, renders and decodes a containerlab topology file; see
// ParseFile.
func Parse(path string) (*Topology, error) { return ParseFile(path, RenderOptions{}) }

// ParseFile reads a containerlab topology file, renders it as containerlab
// does (templates with the variables file, environment variables: see
// Render) and decodes the result (see ParseBytes). When rendering changed
// the number of lines, positions in errors refer to the rendered text,
// and the file is named "FILE (rendered)" in them; `fabricbench lab check
// --rendered` prints that text.
func ParseFile(path string, opt RenderOptions) (*Topology, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > yamlx.MaxBytes {
		return nil, yamlx.TooLarge(path, st.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := Render(path, b, opt)
	if err != nil {
		return nil, err
	}
	name := path
	if r.Shifted {
		name = path + " (rendered)"
	}
	t, err := ParseBytes(name, r.Text)
	if err != nil {
		return nil, err
	}
	t.File, t.errFile, t.Source = path, name, r
	return t, nil
}

// ParseBytes decodes a containerlab topology document. name is the file
// name used in errors and stored as Topology.File.
//
// Every property of containerlab's topology format is accepted: the ones
// this package models decode into their fields, the others into the Other
// map of their object. Keys containerlab does not know, values of the
// wrong type, malformed addresses and prefixes, endpoints that are not
// "node:interface" and duplicate keys are errors. Problems are returned as
// an ErrorList, each naming the file, line, column and field path:
//
//	lab.clab.yml:12:7: topology.nodes.leaf0.cpux: unknown key (not a containerlab node property; did you mean "cpu"?)
//
// Parse does not check what only the native deployer needs (supported
// kinds and properties, fabricbench labels, link rates, interface
// names); Topology.Lab does.
func ParseBytes(name string, b []byte) (*Topology, error) {
	doc, errs := yamlx.Parse(name, b, "a topology file")
	if errs != nil {
		return nil, errs.Finish(name)
	}
	d := &decoder{file: name, pos: &positions{keys: map[string]Pos{}, vals: map[string]Pos{}}}
	if doc.Body == nil {
		d.errPos("", Pos{}, "empty topology file")
		return nil, d.errs.Finish(name)
	}
	root, errs := doc.Tree()
	d.errs = append(d.errs, errs...)
	if root == nil {
		return nil, d.errs.Finish(name)
	}
	t := d.topology(root)
	if err := d.errs.Finish(name); err != nil {
		return nil, err
	}
	t.File = name
	t.pos = d.pos
	return t, nil
}

// The document is read from yamlx's resolved tree: anchors, aliases, tags
// and merge keys are resolved, duplicate keys reported and the limits
// enforced there.
type (
	node = yamlx.Node
	kv   = yamlx.Entry
)

type decoder struct {
	file string
	errs ErrorList
	pos  *positions
}

func (d *decoder) errPos(path string, at Pos, format string, args ...any) {
	d.errs = append(d.errs, yamlx.Errorf(d.file, at, path, format, args...))
}

// errAt reports a problem at the value recorded for path (or its key, or
// an ancestor).
func (d *decoder) errAt(path string, format string, args ...any) {
	d.errPos(path, d.pos.at(path, false), format, args...)
}

// val records where path's value is and returns it.
func (d *decoder) val(path string, n *node) *node {
	if n != nil {
		if _, ok := d.pos.vals[path]; !ok {
			d.pos.vals[path] = n.Pos
		}
	}
	return n
}

// entries returns a mapping's entries. A null value is an empty mapping.
// ok is false when n is not a mapping.
func (d *decoder) entries(path string, n *node) (out []kv, ok bool) {
	v := d.val(path, n)
	if v == nil {
		return nil, true
	}
	if v.Kind != yamlx.Map {
		d.errPos(path, v.Pos, "want a mapping, got %s", v.Describe())
		return nil, false
	}
	return v.Entries, true
}

// field records a mapping entry's key position and returns its path.
func (d *decoder) field(parent string, e kv) string {
	p := fileerr.Field(parent, e.Key)
	d.pos.keys[p] = e.KeyPos
	return p
}

// str decodes a string value; null is "".
func (d *decoder) str(path string, n *node) string {
	switch v := d.val(path, n); {
	case v == nil:
		return ""
	case v.IsString():
		return v.Text
	default:
		d.errPos(path, v.Pos, "want a string, got %s", v.Describe())
		return ""
	}
}

// scalar decodes a string, number or boolean as text (numbers and
// booleans as written). ok is false for null and non-scalars.
func (d *decoder) scalar(path string, n *node, what string) (string, bool) {
	switch v := d.val(path, n); {
	case v == nil:
		d.errAt(path, "want %s, got null", what)
	case v.Kind == yamlx.Scalar:
		return v.Text, true
	default:
		d.errPos(path, v.Pos, "want %s, got %s", what, v.Describe())
	}
	return "", false
}

// strList decodes a list of strings.
func (d *decoder) strList(path string, n *node) []string {
	v := d.val(path, n)
	if v == nil {
		return nil
	}
	if v.Kind != yamlx.Seq {
		d.errPos(path, v.Pos, "want a list of strings, got %s", v.Describe())
		return nil
	}
	out := make([]string, 0, len(v.Items))
	for i, e := range v.Items {
		if x, ok := d.scalar(fileerr.Index(path, i), e, "a string"); ok {
			out = append(out, x)
		}
	}
	return out
}

// scalarMap decodes a mapping of scalars (env, labels, sysctls).
func (d *decoder) scalarMap(path string, n *node, what string) map[string]string {
	es, ok := d.entries(path, n)
	if !ok || len(es) == 0 {
		return nil
	}
	m := make(map[string]string, len(es))
	for _, e := range es {
		p := d.field(path, e)
		if v, ok := d.scalar(p, e.Value, what); ok {
			m[e.Key] = v
		}
	}
	return m
}

// integer decodes an integer in [lo, hi].
func (d *decoder) integer(path string, n *node, lo, hi int64) int64 {
	v := d.val(path, n)
	var x int64
	switch y := nodeValue(v).(type) {
	case int64:
		x = y
	case uint64:
		x = math.MaxInt64
		if y < math.MaxInt64 {
			x = int64(y)
		}
	default:
		if v == nil {
			d.errAt(path, "want an integer, got null")
		} else {
			d.errPos(path, v.Pos, "want an integer, got %s", v.Describe())
		}
		return 0
	}
	if x < lo || x > hi {
		d.errPos(path, v.Pos, "%s is out of range (want %d to %d)", v.Describe(), lo, hi)
		return 0
	}
	return x
}

func nodeValue(n *node) any {
	if n == nil || n.Kind != yamlx.Scalar {
		return nil
	}
	return n.Value
}

// generic decodes any value: nil, bool, int64, uint64, float64, string,
// []any or yaml.MapSlice.
func (d *decoder) generic(path string, n *node) any {
	v := d.val(path, n)
	switch {
	case v == nil:
		return nil
	case v.Kind == yamlx.Map:
		m := yaml.MapSlice{}
		for _, e := range v.Entries {
			p := d.field(path, e)
			m = append(m, yaml.MapItem{Key: e.Key, Value: d.generic(p, e.Value)})
		}
		return m
	case v.Kind == yamlx.Seq:
		out := make([]any, len(v.Items))
		for i, e := range v.Items {
			out[i] = d.generic(fileerr.Index(path, i), e)
		}
		return out
	}
	return v.Value
}

// extra decodes a property kept in an Other map.
func (d *decoder) extra(path string, e kv) *Extra {
	return &Extra{Value: d.generic(path, e.Value), Pos: e.KeyPos}
}

// unknown reports a key containerlab does not know.
func (d *decoder) unknown(path string, e kv, what string, known ...map[string]bool) {
	var all []string
	for _, m := range known {
		all = append(all, sortedKeys(m)...)
	}
	d.errPos(path, e.KeyPos, "%s", yamlx.UnknownKey(e.Key, all, what))
}

// Keys this package models, per object.
var (
	modelTopLevel = set("name", "prefix", "mgmt", "topology")
	modelMgmt     = set("network", "ipv4-subnet", "ipv6-subnet", "bridge")
	modelBody     = set("defaults", "kinds", "groups", "nodes", "links")
	modelNode     = set("kind", "image", "group", "startup-config", "binds", "exec", "env", "labels", "mgmt-ipv4", "mgmt-ipv6", "sysctls")
	modelLink     = set("type", "endpoints", "endpoint", "host-interface", "mode", "remote", "vni", "udp-port", "ipv4", "ipv6", "mtu", "vars", "labels")
	modelEndpoint = set("node", "interface", "mac", "ipv4", "ipv6")
)

func (d *decoder) topology(body *node) *Topology {
	t := &Topology{}
	es, ok := d.entries("", body)
	if !ok {
		return t
	}
	var haveName, haveTopo bool
	for _, e := range es {
		p := d.field("", e)
		switch {
		case e.Key == "name":
			haveName = true
			t.Name = d.str(p, e.Value)
			if t.Name == "" {
				d.errAt(p, "the lab name must not be empty")
			} else if !labNameRe.MatchString(t.Name) {
				d.errAt(p, "%q is not a valid lab name (want letters, digits, '-', '_' and '.', starting with a letter or digit)", t.Name)
			}
		case e.Key == "prefix":
			s := d.str(p, e.Value)
			if s != "" && s != "__lab-name" && !labNameRe.MatchString(s) {
				d.errAt(p, "%q is not a valid prefix", s)
			}
			t.Prefix = &s
		case e.Key == "mgmt":
			t.Mgmt = d.mgmt(p, e.Value)
		case e.Key == "topology":
			haveTopo = true
			d.body(t, p, e.Value)
		case otherTopLevel[e.Key]:
			if t.Other == nil {
				t.Other = map[string]*Extra{}
			}
			t.Other[e.Key] = d.extra(p, e)
		default:
			d.unknown(p, e, "a containerlab top-level property", modelTopLevel, otherTopLevel)
		}
	}
	if !haveName {
		d.errPos("name", body.Pos, "missing (every topology file names its lab)")
	}
	if !haveTopo {
		d.errPos("topology", body.Pos, "missing (the topology section with nodes and links)")
	}
	return t
}

func (d *decoder) mgmt(path string, n *node) *Mgmt {
	m := &Mgmt{}
	es, _ := d.entries(path, n)
	for _, e := range es {
		p := d.field(path, e)
		switch {
		case e.Key == "network":
			m.Network = d.str(p, e.Value)
		case e.Key == "ipv4-subnet":
			m.IPv4Subnet = d.str(p, e.Value)
			if m.IPv4Subnet != "" && m.IPv4Subnet != "auto" {
				if pf, err := netip.ParsePrefix(m.IPv4Subnet); err != nil || !pf.Addr().Is4() {
					d.errAt(p, "%q is not an IPv4 prefix (want e.g. 172.20.20.0/24 or auto)", m.IPv4Subnet)
				}
			}
		case e.Key == "ipv6-subnet":
			m.IPv6Subnet = d.str(p, e.Value)
			if m.IPv6Subnet != "" && m.IPv6Subnet != "auto" {
				if pf, err := netip.ParsePrefix(m.IPv6Subnet); err != nil || !pf.Addr().Is6() || pf.Addr().Is4In6() {
					d.errAt(p, "%q is not an IPv6 prefix (want e.g. 3fff:172:20:20::/64 or auto)", m.IPv6Subnet)
				}
			}
		case e.Key == "bridge":
			m.Bridge = d.str(p, e.Value)
		case otherMgmt[e.Key]:
			if m.Other == nil {
				m.Other = map[string]*Extra{}
			}
			m.Other[e.Key] = d.extra(p, e)
		default:
			d.unknown(p, e, "a containerlab mgmt property", modelMgmt, otherMgmt)
		}
	}
	return m
}

func (d *decoder) body(t *Topology, path string, n *node) {
	es, ok := d.entries(path, n)
	if !ok {
		return
	}
	haveNodes := false
	for _, e := range es {
		p := d.field(path, e)
		switch e.Key {
		case "defaults":
			t.Defaults = d.nodeConfig(p, e.Value)
			if t.Defaults == nil {
				t.Defaults = &NodeConfig{}
			}
		case "kinds":
			t.Kinds = d.nodeMap(p, e.Value, false)
		case "groups":
			t.Groups = d.nodeMap(p, e.Value, false)
		case "nodes":
			haveNodes = true
			t.Nodes = d.nodeMap(p, e.Value, true)
		case "links":
			d.links(t, p, e.Value)
		default:
			d.unknown(p, e, "a containerlab topology property", modelBody)
		}
	}
	if !haveNodes {
		d.errAt(fileerr.Field(path, "nodes"), "missing (the topology has no nodes)")
	}
}

// nodeMap decodes topology.nodes, kinds or groups.
func (d *decoder) nodeMap(path string, n *node, nodes bool) map[string]*NodeConfig {
	es, _ := d.entries(path, n)
	m := make(map[string]*NodeConfig, len(es))
	for _, e := range es {
		p := d.field(path, e)
		if nodes && !nodeNameRe.MatchString(e.Key) {
			d.errPos(p, e.KeyPos, "%q is not a valid node name (want letters, digits, '-', '_' and '.', starting with a letter or digit)", e.Key)
		}
		m[e.Key] = d.nodeConfig(p, e.Value)
	}
	return m
}

// nodeConfig decodes a node configuration; nil for a null value.
func (d *decoder) nodeConfig(path string, n *node) *NodeConfig {
	es, ok := d.entries(path, n)
	if !ok || n == nil {
		// `leaf0: {}` is an empty NodeConfig, `leaf0:` nil.
		return nil
	}
	c := &NodeConfig{}
	for _, e := range es {
		p := d.field(path, e)
		switch {
		case e.Key == "kind":
			c.Kind = d.str(p, e.Value)
		case e.Key == "image":
			c.Image = d.str(p, e.Value)
		case e.Key == "group":
			c.Group = d.str(p, e.Value)
		case e.Key == "startup-config":
			c.StartupConfig = d.str(p, e.Value)
		case e.Key == "binds":
			c.Binds = d.strList(p, e.Value)
			for i, b := range c.Binds {
				if strings.TrimSpace(b) == "" {
					d.errAt(fileerr.Index(p, i), "empty bind")
				}
			}
		case e.Key == "exec":
			c.Exec = d.strList(p, e.Value)
		case e.Key == "env":
			c.Env = d.scalarMap(p, e.Value, "a string, number or boolean")
		case e.Key == "labels":
			c.Labels = d.scalarMap(p, e.Value, "a string or number")
		case e.Key == "sysctls":
			c.Sysctls = d.scalarMap(p, e.Value, "a string or number")
		case e.Key == "mgmt-ipv4":
			c.MgmtIPv4 = d.str(p, e.Value)
			if a, err := netip.ParseAddr(c.MgmtIPv4); c.MgmtIPv4 != "" && (err != nil || !a.Is4()) {
				d.errAt(p, "%q is not an IPv4 address", c.MgmtIPv4)
			}
		case e.Key == "mgmt-ipv6":
			c.MgmtIPv6 = d.str(p, e.Value)
			if a, err := netip.ParseAddr(c.MgmtIPv6); c.MgmtIPv6 != "" && (err != nil || !a.Is6() || a.Is4In6()) {
				d.errAt(p, "%q is not an IPv6 address", c.MgmtIPv6)
			}
		case otherNode[e.Key]:
			if c.Other == nil {
				c.Other = map[string]*Extra{}
			}
			c.Other[e.Key] = d.extra(p, e)
		default:
			d.unknown(p, e, "a containerlab node property", modelNode, otherNode)
		}
	}
	return c
}

func (d *decoder) links(t *Topology, path string, n *node) {
	v := d.val(path, n)
	if v == nil {
		return
	}
	if v.Kind != yamlx.Seq {
		d.errPos(path, v.Pos, "want a list of links, got %s", v.Describe())
		return
	}
	for i, e := range v.Items {
		t.Links = append(t.Links, d.link(fileerr.Index(path, i), e))
	}
}

func (d *decoder) link(path string, n *node) *LinkConfig {
	l := &LinkConfig{}
	es, ok := d.entries(path, n)
	if !ok {
		return l
	}
	// The type decides how endpoints are read.
	for _, e := range es {
		if e.Key == "type" {
			p := d.field(path, e)
			l.Type = d.str(p, e.Value)
			if !linkTypes[l.Type] {
				d.errAt(p, "unknown link type %q (want %s)", l.Type, setKeys(linkTypes))
			}
		}
	}
	single := singleEndpointTypes[l.Type]
	haveEndpoints, haveEndpoint := false, false
	for _, e := range es {
		p := d.field(path, e)
		switch {
		case e.Key == "type":
		case e.Key == "endpoints":
			haveEndpoints = true
			if single {
				d.errPos(p, e.KeyPos, "a %s link has one endpoint: write endpoint: {node: ..., interface: ...}", l.Type)
				continue
			}
			l.Endpoints = d.endpoints(p, e.Value, l.Type)
		case e.Key == "endpoint":
			haveEndpoint = true
			if !single {
				typ := l.Type
				if typ == "" {
					typ = "short-form"
				}
				d.errPos(p, e.KeyPos, "a %s link has two endpoints (endpoints: [...]); endpoint is for the link types %s", typ, setKeys(singleEndpointTypes))
				continue
			}
			if v := d.val(p, e.Value); v == nil || v.Kind != yamlx.Map {
				d.errAt(p, "want an endpoint {node: ..., interface: ...}, got %s", v.Describe())
				continue
			}
			l.Endpoint = d.endpoint(p, e.Value)
		case e.Key == "host-interface":
			l.HostInterface = d.str(p, e.Value)
		case e.Key == "mode":
			l.Mode = d.str(p, e.Value)
		case e.Key == "remote":
			l.Remote = d.str(p, e.Value)
			if a, err := netip.ParseAddr(l.Remote); l.Remote != "" && (err != nil || !a.IsValid()) {
				d.errAt(p, "%q is not an IP address", l.Remote)
			}
		case e.Key == "vni":
			l.VNI = int(d.integer(p, e.Value, 1, 1<<24-1))
		case e.Key == "udp-port":
			l.UDPPort = int(d.integer(p, e.Value, 1, 65535))
		case e.Key == "ipv4" || e.Key == "ipv6":
			list := d.strList(p, e.Value)
			for i, a := range list {
				pf, err := netip.ParsePrefix(a)
				if err != nil || pf.Addr().Is4() != (e.Key == "ipv4") || pf.Addr().Is4In6() {
					d.errAt(fileerr.Index(p, i), "%q is not an %s address with prefix length", a, map[bool]string{true: "IPv4", false: "IPv6"}[e.Key == "ipv4"])
				}
			}
			if e.Key == "ipv4" {
				l.IPv4 = list
			} else {
				l.IPv6 = list
			}
		case e.Key == "mtu":
			l.MTU = int(d.integer(p, e.Value, 1, 65535))
		case e.Key == "vars":
			if m, ok := d.generic(p, e.Value).(yaml.MapSlice); ok {
				l.Vars = make(map[string]any, len(m))
				for _, it := range m {
					l.Vars[it.Key.(string)] = it.Value
				}
			} else if e.Value != nil {
				d.errAt(p, "want a mapping, got %s", e.Value.Describe())
			}
		case e.Key == "labels":
			l.Labels = d.scalarMap(p, e.Value, "a string or number")
		case otherLink[e.Key]:
			if l.Other == nil {
				l.Other = map[string]*Extra{}
			}
			l.Other[e.Key] = d.extra(p, e)
		default:
			d.unknown(p, e, "a containerlab link property", modelLink, otherLink)
		}
	}
	switch {
	case single && !haveEndpoint && !haveEndpoints:
		d.errAt(path, "missing endpoint (a %s link has one endpoint: {node: ..., interface: ...})", l.Type)
	case !single && !haveEndpoints && !haveEndpoint:
		d.errAt(path, "missing endpoints (a link joins two \"node:interface\" endpoints)")
	}
	return l
}

func (d *decoder) endpoints(path string, n *node, typ string) []*LinkEndpoint {
	v := d.val(path, n)
	if v == nil || v.Kind != yamlx.Seq {
		d.errAt(path, "want a list of two endpoints, got %s", v.Describe())
		return nil
	}
	if len(v.Items) != 2 {
		d.errAt(path, "want exactly 2 endpoints, got %d", len(v.Items))
	}
	var eps []*LinkEndpoint
	for i, en := range v.Items {
		ip := fileerr.Index(path, i)
		ev := d.val(ip, en)
		switch {
		case ev.IsString():
			if typ != "" {
				d.errPos(ip, ev.Pos, "a link with type %s wants endpoints as mappings {node: ..., interface: ...}; %q is the short form, used without type", typ, ev.Text)
				continue
			}
			node, iface, ok := strings.Cut(ev.Text, ":")
			if !ok || node == "" || iface == "" || strings.ContainsAny(ev.Text, " \t\r\n") {
				d.errPos(ip, ev.Pos, "%q is not an endpoint (want \"node:interface\", e.g. \"leaf0:eth1\")", ev.Text)
				continue
			}
			eps = append(eps, &LinkEndpoint{Node: node, Interface: iface})
		case ev != nil && ev.Kind == yamlx.Map:
			if typ == "" {
				d.errPos(ip, ev.Pos, "endpoints written as mappings need the extended link form (type: veth)")
				continue
			}
			eps = append(eps, d.endpoint(ip, ev))
		default:
			d.errAt(ip, "want an endpoint, got %s", ev.Describe())
		}
	}
	return eps
}

func (d *decoder) endpoint(path string, n *node) *LinkEndpoint {
	ep := &LinkEndpoint{}
	es, _ := d.entries(path, n)
	for _, e := range es {
		p := d.field(path, e)
		switch {
		case e.Key == "node":
			ep.Node = d.str(p, e.Value)
		case e.Key == "interface":
			ep.Interface = d.str(p, e.Value)
		case e.Key == "mac":
			ep.MAC = d.str(p, e.Value)
			if _, err := net.ParseMAC(ep.MAC); ep.MAC != "" && (err != nil || len(ep.MAC) != 17) {
				d.errAt(p, "%q is not a MAC address (want e.g. 02:00:00:00:00:01)", ep.MAC)
			}
		case e.Key == "ipv4":
			ep.IPv4 = d.str(p, e.Value)
			if pf, err := netip.ParsePrefix(ep.IPv4); ep.IPv4 != "" && (err != nil || !pf.Addr().Is4()) {
				d.errAt(p, "%q is not an IPv4 address with prefix length (want e.g. 198.18.0.1/31)", ep.IPv4)
			}
		case e.Key == "ipv6":
			ep.IPv6 = d.str(p, e.Value)
			if pf, err := netip.ParsePrefix(ep.IPv6); ep.IPv6 != "" && (err != nil || !pf.Addr().Is6() || pf.Addr().Is4In6()) {
				d.errAt(p, "%q is not an IPv6 address with prefix length (want e.g. fd00:fb:1::1/127)", ep.IPv6)
			}
		case otherEndpoint[e.Key]:
			if ep.Other == nil {
				ep.Other = map[string]*Extra{}
			}
			ep.Other[e.Key] = d.extra(p, e)
		default:
			d.unknown(p, e, "a containerlab endpoint property", modelEndpoint, otherEndpoint)
		}
	}
	if ep.Node == "" {
		d.errAt(path, "missing node")
	}
	if ep.Interface == "" {
		d.errAt(path, "missing interface")
	}
	return ep
}
