package containerlab

import (
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
)

// Topology is a containerlab topology file (*.clab.yml) as written: the
// model Parse fills and Generate builds. Topology.Lab resolves it into the
// deployer-facing Lab.
//
// The model covers the subset of the format fabricbench uses (see
// docs/containerlab.md). Every other property containerlab itself knows
// (cpu, memory, ports, healthcheck, stages, settings, ...) is kept in the
// Other map of the object it belongs to, with its position, so that a file
// round-trips and still deploys with real containerlab; Lab rejects those
// properties by name. Keys containerlab does not know are parse errors.
type Topology struct {
	// Name is the lab name (name).
	Name string
	// Prefix is the container name prefix (prefix); nil when absent.
	Prefix *string
	// Mgmt is the management network (mgmt); nil when absent.
	Mgmt *Mgmt
	// Defaults, Kinds, Groups and Nodes are topology.defaults,
	// topology.kinds, topology.groups and topology.nodes. A node written
	// without a body (`leaf0:`) has a nil *NodeConfig.
	Defaults *NodeConfig
	Kinds    map[string]*NodeConfig
	Groups   map[string]*NodeConfig
	Nodes    map[string]*NodeConfig
	// Links is topology.links in file order.
	Links []*LinkConfig
	// Other holds the top-level keys containerlab knows that this model
	// does not interpret (settings, debug).
	Other map[string]*Extra

	// File is the name Parse was given ("" for topologies built in
	// memory); errors name it.
	File string
	// Source is the rendered document ParseFile decoded (nil for
	// ParseBytes and topologies built in memory).
	Source *Rendered

	// errFile names the file in errors: File, or "File (rendered)".
	errFile string

	pos *positions
}

// Mgmt is the mgmt section.
type Mgmt struct {
	Network    string // network
	IPv4Subnet string // ipv4-subnet, e.g. 198.19.7.0/24 or "auto"
	IPv6Subnet string // ipv6-subnet
	Bridge     string // bridge
	// Other holds ipv4-gw, ipv4-range, mtu, external-access, ... .
	Other map[string]*Extra
}

// NodeConfig is containerlab's node configuration, as used in
// topology.defaults, topology.kinds.<kind>, topology.groups.<group> and
// topology.nodes.<node>.
type NodeConfig struct {
	Kind          string // kind
	Image         string // image
	Group         string // group
	StartupConfig string // startup-config
	Binds         []string
	Exec          []string
	// Env, Labels and Sysctls hold the values as written (numbers and
	// booleans as their YAML text).
	Env      map[string]string
	Labels   map[string]string
	MgmtIPv4 string // mgmt-ipv4
	MgmtIPv6 string // mgmt-ipv6
	Sysctls  map[string]string
	// Other holds the containerlab node properties this model does not
	// interpret (cpu, memory, ports, healthcheck, stages, type, ...).
	Other map[string]*Extra
}

// LinkConfig is one entry of topology.links: the short form (Type "",
// endpoints written "node:interface", where the reserved node names host,
// mgmt-net and macvlan stand for this machine, the management network and
// a macvlan parent interface) or an extended form: Type veth or
// veth-stitch with two Endpoints, or one of the single-endpoint types
// host, mgmt-net, macvlan, dummy, vxlan and vxlan-stitch with Endpoint.
type LinkConfig struct {
	Type      string
	Endpoints []*LinkEndpoint
	// Endpoint is the node end of a single-endpoint link.
	Endpoint *LinkEndpoint
	// HostInterface is the interface on this machine (host, mgmt-net) or
	// the macvlan parent (macvlan).
	HostInterface string
	Mode          string // macvlan mode
	Remote        string // vxlan remote VTEP
	VNI           int    // vxlan VNI
	UDPPort       int    // vxlan UDP port
	// IPv4 and IPv6 are link-level address lists (one per endpoint, in
	// order), the short form's way of addressing a link.
	IPv4, IPv6 []string
	MTU        int // 0: not set
	// Vars is the link's vars mapping (fabricbench reads rate); values as
	// decoded (strings, numbers, nested yaml.MapSlice, ...).
	Vars   map[string]any
	Labels map[string]string
	// Other holds the link properties this model does not interpret
	// (the vxlan dst-port and src-port).
	Other map[string]*Extra
}

// LinkEndpoint is one end of a link. In the short form only Node and
// Interface are set.
type LinkEndpoint struct {
	Node      string
	Interface string
	MAC       string // mac
	IPv4      string // ipv4: address with prefix length, e.g. 198.18.0.1/31
	IPv6      string // ipv6: e.g. fd00:fb:1::1/127
	// Other holds the endpoint's vars.
	Other map[string]*Extra
}

// Extra is the value of a property containerlab knows that this model
// does not interpret, and where it was written.
type Extra struct {
	// Value is the decoded YAML value: nil, bool, int64, uint64, float64,
	// string, []any or yaml.MapSlice.
	Value any
	Pos   Pos
}

// Marshal renders the topology as YAML with goccy/go-yaml. The output is
// stable: keys in a fixed order (the order of this package's types, then
// other properties sorted), nodes, kinds, groups and map entries sorted by
// name, links in order.
func (t *Topology) Marshal() ([]byte, error) {
	return yaml.MarshalWithOptions(t, yaml.Indent(2), yaml.IndentSequence(true))
}

// MarshalYAML implements yaml.InterfaceMarshaler; see Marshal.
func (t *Topology) MarshalYAML() (any, error) {
	var top yaml.MapSlice
	top = append(top, yaml.MapItem{Key: "name", Value: t.Name})
	if t.Prefix != nil {
		top = append(top, yaml.MapItem{Key: "prefix", Value: *t.Prefix})
	}
	if t.Mgmt != nil {
		var m yaml.MapSlice
		m = addStr(m, "network", t.Mgmt.Network)
		m = addStr(m, "ipv4-subnet", t.Mgmt.IPv4Subnet)
		m = addStr(m, "ipv6-subnet", t.Mgmt.IPv6Subnet)
		m = addStr(m, "bridge", t.Mgmt.Bridge)
		m = addOther(m, t.Mgmt.Other)
		top = append(top, yaml.MapItem{Key: "mgmt", Value: m})
	}
	var body yaml.MapSlice
	if t.Defaults != nil {
		body = append(body, yaml.MapItem{Key: "defaults", Value: t.Defaults.mapSlice()})
	}
	for _, sec := range []struct {
		key string
		m   map[string]*NodeConfig
	}{{"kinds", t.Kinds}, {"groups", t.Groups}, {"nodes", t.Nodes}} {
		if len(sec.m) == 0 && sec.key != "nodes" {
			continue
		}
		var s yaml.MapSlice
		for _, name := range sortedKeys(sec.m) {
			s = append(s, yaml.MapItem{Key: name, Value: sec.m[name].mapSlice()})
		}
		if s == nil {
			s = yaml.MapSlice{}
		}
		body = append(body, yaml.MapItem{Key: sec.key, Value: s})
	}
	if len(t.Links) > 0 {
		links := make([]any, len(t.Links))
		for i, l := range t.Links {
			links[i] = l.mapSlice()
		}
		body = append(body, yaml.MapItem{Key: "links", Value: links})
	}
	top = append(top, yaml.MapItem{Key: "topology", Value: body})
	top = addOther(top, t.Other)
	return top, nil
}

func (n *NodeConfig) mapSlice() yaml.MapSlice {
	m := yaml.MapSlice{}
	if n == nil {
		return m
	}
	m = addStr(m, "kind", n.Kind)
	m = addStr(m, "image", n.Image)
	m = addStr(m, "group", n.Group)
	m = addStr(m, "startup-config", n.StartupConfig)
	if len(n.Binds) > 0 {
		m = append(m, yaml.MapItem{Key: "binds", Value: n.Binds})
	}
	if len(n.Exec) > 0 {
		m = append(m, yaml.MapItem{Key: "exec", Value: n.Exec})
	}
	m = addMap(m, "env", n.Env)
	m = addMap(m, "labels", n.Labels)
	m = addStr(m, "mgmt-ipv4", n.MgmtIPv4)
	m = addStr(m, "mgmt-ipv6", n.MgmtIPv6)
	m = addMap(m, "sysctls", n.Sysctls)
	return addOther(m, n.Other)
}

// short reports whether a link is written in the short form.
func (l *LinkConfig) short() bool {
	if l.Type != "" || l.Endpoint != nil {
		return false
	}
	for _, e := range l.Endpoints {
		if e != nil && (e.MAC != "" || e.IPv4 != "" || e.IPv6 != "" || len(e.Other) > 0) {
			return false
		}
	}
	return true
}

func (l *LinkConfig) mapSlice() yaml.MapSlice {
	m := yaml.MapSlice{}
	short := l.short()
	if !short {
		typ := l.Type
		if typ == "" {
			typ = "veth"
		}
		m = append(m, yaml.MapItem{Key: "type", Value: typ})
	}
	if l.Endpoint != nil {
		m = append(m, yaml.MapItem{Key: "endpoint", Value: l.Endpoint.mapSlice()})
	}
	if l.Endpoints != nil {
		eps := make([]any, len(l.Endpoints))
		for i, e := range l.Endpoints {
			if e == nil {
				e = &LinkEndpoint{}
			}
			if short {
				eps[i] = e.Node + ":" + e.Interface
				continue
			}
			eps[i] = e.mapSlice()
		}
		m = append(m, yaml.MapItem{Key: "endpoints", Value: eps})
	}
	m = addStr(m, "host-interface", l.HostInterface)
	m = addStr(m, "mode", l.Mode)
	m = addStr(m, "remote", l.Remote)
	if l.VNI != 0 {
		m = append(m, yaml.MapItem{Key: "vni", Value: l.VNI})
	}
	if l.UDPPort != 0 {
		m = append(m, yaml.MapItem{Key: "udp-port", Value: l.UDPPort})
	}
	if len(l.IPv4) > 0 {
		m = append(m, yaml.MapItem{Key: "ipv4", Value: l.IPv4})
	}
	if len(l.IPv6) > 0 {
		m = append(m, yaml.MapItem{Key: "ipv6", Value: l.IPv6})
	}
	if l.MTU != 0 {
		m = append(m, yaml.MapItem{Key: "mtu", Value: l.MTU})
	}
	if len(l.Vars) > 0 {
		var v yaml.MapSlice
		for _, k := range sortedKeys(l.Vars) {
			v = append(v, yaml.MapItem{Key: k, Value: l.Vars[k]})
		}
		m = append(m, yaml.MapItem{Key: "vars", Value: v})
	}
	m = addMap(m, "labels", l.Labels)
	return addOther(m, l.Other)
}

func (e *LinkEndpoint) mapSlice() yaml.MapSlice {
	var em yaml.MapSlice
	em = append(em, yaml.MapItem{Key: "node", Value: e.Node}, yaml.MapItem{Key: "interface", Value: e.Interface})
	em = addStr(em, "mac", e.MAC)
	em = addStr(em, "ipv4", e.IPv4)
	em = addStr(em, "ipv6", e.IPv6)
	return addOther(em, e.Other)
}

func addStr(m yaml.MapSlice, key, v string) yaml.MapSlice {
	if v == "" {
		return m
	}
	return append(m, yaml.MapItem{Key: key, Value: v})
}

func addMap(m yaml.MapSlice, key string, v map[string]string) yaml.MapSlice {
	if len(v) == 0 {
		return m
	}
	var s yaml.MapSlice
	for _, k := range sortedKeys(v) {
		s = append(s, yaml.MapItem{Key: k, Value: v[k]})
	}
	return append(m, yaml.MapItem{Key: key, Value: s})
}

func addOther(m yaml.MapSlice, other map[string]*Extra) yaml.MapSlice {
	for _, k := range sortedKeys(other) {
		var v any
		if e := other[k]; e != nil {
			v = e.Value
		}
		m = append(m, yaml.MapItem{Key: k, Value: v})
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Property names containerlab knows besides the ones this package models.
// They parse into the Other maps; Topology.Lab rejects them by name.
var (
	otherTopLevel = set("settings", "debug")
	otherMgmt     = set("ipv4-gw", "ipv6-gw", "ipv4-range", "ipv6-range", "mtu",
		"external-access", "skip-when-unused", "driver-opts")
	otherNode = set("image-pull-policy", "restart-policy", "license", "type",
		"startup-delay", "enforce-startup-config", "suppress-startup-config",
		"auto-remove", "volumes", "ports", "credentials", "env-files", "user",
		"hostname", "entrypoint", "cmd", "runtime", "network-mode",
		"link-apply-mode", "cpu", "memory", "cpu-set", "extras", "config",
		"stages", "dns", "certificate", "healthcheck", "components", "aliases",
		"shm-size", "cap-add", "privileged", "cgroupns-mode", "cgroup-parent",
		"pid-mode", "tmpfs", "security-opts", "devices", "position")
	// otherLink are the link properties this model keeps as they are.
	otherLink     = set("dst-port", "src-port")
	otherEndpoint = set("vars")
	linkTypes     = set("veth", "veth-stitch", "mgmt-net", "macvlan", "host", "vxlan", "vxlan-stitch", "dummy")
	// singleEndpointTypes are the link types with one node endpoint.
	singleEndpointTypes = set("mgmt-net", "macvlan", "host", "vxlan", "vxlan-stitch", "dummy")
	// reservedNodes are the short form's endpoint names that are not
	// nodes: "host:IF", "mgmt-net:IF" and "macvlan:PARENT".
	reservedNodes = set("host", "mgmt-net", "macvlan")
)

func set(items ...string) map[string]bool {
	m := make(map[string]bool, len(items))
	for _, s := range items {
		m[s] = true
	}
	return m
}

// setKeys lists a set's members sorted, for messages.
func setKeys(m map[string]bool) string {
	return strings.Join(sortedKeys(m), ", ")
}
