package containerlab

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/internal/fileerr"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

const (
	// maxFileSize bounds topology files.
	maxFileSize = 16 << 20
	// maxValues bounds the values a document may expand to (aliases
	// included), so that alias bombs are rejected instead of decoded.
	maxValues = 200_000
	// maxDepth bounds nesting.
	maxDepth = 64
)

// Name patterns containerlab accepts for lab names and node names.
var (
	labNameRe  = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)
	nodeNameRe = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._|-]*$`)
)

// Parse reads and decodes a containerlab topology file; see ParseBytes.
func Parse(path string) (*Topology, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseBytes(path, b)
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
	d := &decoder{
		file:    name,
		pos:     &positions{keys: map[string]Pos{}, vals: map[string]Pos{}},
		anchors: map[string][]anchor{},
		budget:  maxValues,
	}
	if len(b) > maxFileSize {
		d.errTok("", nil, "file too large (%d bytes, at most %d)", len(b), maxFileSize)
		return nil, d.errs.Finish(name)
	}
	f, err := parser.ParseBytes(b, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		e := &Error{File: name, Msg: err.Error()}
		var ye yaml.Error
		if errors.As(err, &ye) {
			e.Msg = ye.GetMessage()
			if tk := ye.GetToken(); tk != nil && tk.Position != nil {
				e.Line, e.Column = tk.Position.Line, tk.Position.Column
			}
		}
		return nil, ErrorList{e}
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			d.errTok("", nodeToken(doc.Body), "a topology file holds one YAML document")
			return nil, d.errs.Finish(name)
		}
		body = doc.Body
	}
	if body == nil {
		d.errTok("", nil, "empty topology file")
		return nil, d.errs.Finish(name)
	}
	for _, n := range ast.Filter(ast.AnchorType, body) {
		a := n.(*ast.AnchorNode)
		if an := anchorName(a.Name); an != "" {
			d.anchors[an] = append(d.anchors[an], anchor{offset: offsetOf(nodeToken(a)), value: a.Value})
		}
	}
	t := d.topology(body)
	if err := d.errs.Finish(name); err != nil {
		return nil, err
	}
	t.File = name
	t.pos = d.pos
	return t, nil
}

// anchor is one definition of an anchor.
type anchor struct {
	offset int
	value  ast.Node
}

// kv is one entry of a mapping.
type kv struct {
	key  string
	ktok *token.Token
	val  ast.Node
}

type decoder struct {
	file    string
	errs    ErrorList
	pos     *positions
	anchors map[string][]anchor
	budget  int
	stopped bool
}

func (d *decoder) errTok(path string, tok *token.Token, format string, args ...any) {
	e := &Error{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if tok != nil && tok.Position != nil {
		e.Line, e.Column = tok.Position.Line, tok.Position.Column
	}
	d.errs = append(d.errs, e)
}

// errAt reports a problem at the value recorded for path (or its key, or
// an ancestor).
func (d *decoder) errAt(path string, format string, args ...any) {
	p := d.pos.at(path, false)
	d.errs = append(d.errs, &Error{File: d.file, Line: p.Line, Column: p.Column, Path: path, Msg: fmt.Sprintf(format, args...)})
}

func posOf(tok *token.Token) Pos {
	if tok == nil || tok.Position == nil {
		return Pos{}
	}
	return Pos{Line: tok.Position.Line, Column: tok.Position.Column}
}

func offsetOf(tok *token.Token) int {
	if tok == nil || tok.Position == nil {
		return 0
	}
	return tok.Position.Offset
}

func anchorName(n ast.Node) string {
	if n == nil || reflect.ValueOf(n).IsNil() {
		return ""
	}
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return ""
}

// nodeToken returns the token to report a node at.
func nodeToken(n ast.Node) *token.Token {
	if n == nil || reflect.ValueOf(n).IsNil() {
		return nil
	}
	switch n := n.(type) {
	case *ast.MappingNode:
		if !n.IsFlowStyle && len(n.Values) > 0 && n.Values[0].Key != nil {
			return n.Values[0].Key.GetToken()
		}
		return n.Start
	case *ast.MappingValueNode:
		if n.Key == nil {
			return nil
		}
		return n.Key.GetToken()
	}
	return n.GetToken()
}

// spend counts one decoded value against the budget.
func (d *decoder) spend(path string, n ast.Node, depth int) bool {
	if d.stopped {
		return false
	}
	d.budget--
	if d.budget <= 0 {
		d.errTok(path, nodeToken(n), "document too large (more than %d values, aliases expanded)", maxValues)
		d.stopped = true
		return false
	}
	if depth > maxDepth {
		d.errTok(path, nodeToken(n), "nested too deeply")
		d.stopped = true
		return false
	}
	return true
}

// resolve strips anchors and tags and follows aliases. It returns nil for
// null values and reports unknown aliases. The value's position is
// recorded at path (the alias's, for aliases).
func (d *decoder) resolve(path string, n ast.Node) ast.Node {
	v, tok := d.deref(path, n)
	if v != nil {
		if _, ok := d.pos.vals[path]; !ok {
			d.pos.vals[path] = posOf(tok)
		}
	}
	return v
}

// deref strips anchors and tags and follows aliases; it returns the value
// (nil for null) and the token to report it at (the alias's, for aliases).
func (d *decoder) deref(path string, n ast.Node) (ast.Node, *token.Token) {
	first := nodeToken(n)
	alias := false
	for i := 0; i < maxDepth; i++ {
		if n == nil || reflect.ValueOf(n).IsNil() {
			return nil, nil
		}
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		case *ast.AliasNode:
			alias = true
			name := anchorName(v.Value)
			at := offsetOf(nodeToken(v))
			var target ast.Node
			for _, a := range d.anchors[name] {
				if a.offset < at {
					target = a.value
				}
			}
			if target == nil {
				d.errTok(path, nodeToken(v), "unknown alias *%s", name)
				return nil, nil
			}
			n = target
		case *ast.NullNode:
			return nil, nil
		default:
			if alias {
				return n, first
			}
			return n, nodeToken(n)
		}
	}
	d.errTok(path, first, "aliases nested too deeply")
	return nil, nil
}

// describe names a node's value for messages.
func describe(n ast.Node) string {
	switch n := n.(type) {
	case nil:
		return "null"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.LiteralNode:
		return strconv.Quote(n.Value.Value)
	case ast.ScalarNode:
		if tk := n.GetToken(); tk != nil {
			return strconv.Quote(tk.Value)
		}
	}
	return "a " + n.Type().YAMLName()
}

// entries returns a mapping's entries (merge keys expanded; explicit keys
// win over merged ones), reporting duplicate and non-string keys. A null
// value is an empty mapping. ok is false when n is not a mapping.
func (d *decoder) entries(path string, n ast.Node, depth int) (out []kv, ok bool) {
	if !d.spend(path, n, depth) {
		return nil, false
	}
	v := d.resolve(path, n)
	if v == nil {
		return nil, true
	}
	var values []*ast.MappingValueNode
	switch m := v.(type) {
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	default:
		d.errTok(path, nodeToken(v), "want a mapping, got %s", describe(v))
		return nil, false
	}
	explicit := map[string]*token.Token{}
	var merged []kv
	for _, mv := range values {
		if mv == nil || mv.Key == nil {
			continue
		}
		if mv.Key.IsMergeKey() {
			merged = append(merged, d.mergeEntries(path, mv.Value, depth+1)...)
			continue
		}
		key, ktok, ok := d.key(path, mv)
		if !ok {
			continue
		}
		if first, dup := explicit[key]; dup {
			d.errTok(fileerr.Field(path, key), ktok, "duplicate key (first set on line %d)", posOf(first).Line)
			continue
		}
		explicit[key] = ktok
		out = append(out, kv{key: key, ktok: ktok, val: mv.Value})
	}
	seen := map[string]bool{}
	for _, e := range merged {
		if explicit[e.key] != nil || seen[e.key] {
			continue
		}
		seen[e.key] = true
		out = append(out, e)
	}
	return out, true
}

// mergeEntries returns the entries a "<<" merge key brings in: from a
// mapping or alias, or a list of them (earlier ones win).
func (d *decoder) mergeEntries(path string, n ast.Node, depth int) []kv {
	if !d.spend(path, n, depth) {
		return nil
	}
	v := d.resolve(path, n)
	switch v := v.(type) {
	case nil:
		return nil
	case *ast.SequenceNode:
		var out []kv
		for _, e := range v.Values {
			out = append(out, d.mergeEntries(path, e, depth+1)...)
		}
		return out
	case *ast.MappingNode, *ast.MappingValueNode:
		es, _ := d.entries(path, v, depth+1)
		return es
	default:
		d.errTok(path, nodeToken(v), "merge key wants a mapping, got %s", describe(v))
		return nil
	}
}

// key returns a mapping entry's key, reporting keys that are not strings.
func (d *decoder) key(path string, mv *ast.MappingValueNode) (string, *token.Token, bool) {
	k, _ := d.deref(path, mv.Key)
	switch s := k.(type) {
	case *ast.StringNode:
		return s.Value, nodeToken(mv.Key), true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		// Unquoted names such as 1 or true: use them as written.
		return s.GetToken().Value, nodeToken(mv.Key), true
	}
	if k == nil {
		k = mv.Key
	}
	d.errTok(path, nodeToken(mv.Key), "key %s is not a string", describe(k))
	return "", nil, false
}

// field records a mapping entry's key position and returns its path.
func (d *decoder) field(parent string, e kv) string {
	p := fileerr.Field(parent, e.key)
	d.pos.keys[p] = posOf(e.ktok)
	return p
}

// str decodes a string value; null is "".
func (d *decoder) str(path string, n ast.Node, depth int) string {
	if !d.spend(path, n, depth) {
		return ""
	}
	switch v := d.resolve(path, n).(type) {
	case nil:
		return ""
	case *ast.StringNode:
		return v.Value
	case *ast.LiteralNode:
		return v.Value.Value
	default:
		d.errTok(path, nodeToken(v), "want a string, got %s", describe(v))
		return ""
	}
}

// scalar decodes a string, number or boolean as text (numbers and
// booleans as written). ok is false for null and non-scalars.
func (d *decoder) scalar(path string, n ast.Node, depth int, what string) (string, bool) {
	if !d.spend(path, n, depth) {
		return "", false
	}
	switch v := d.resolve(path, n).(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		return v.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return v.GetToken().Value, true
	case nil:
		d.errTok(path, nodeToken(n), "want %s, got null", what)
	default:
		d.errTok(path, nodeToken(v), "want %s, got %s", what, describe(v))
	}
	return "", false
}

// strList decodes a list of strings.
func (d *decoder) strList(path string, n ast.Node, depth int) []string {
	if !d.spend(path, n, depth) {
		return nil
	}
	v := d.resolve(path, n)
	if v == nil {
		return nil
	}
	s, ok := v.(*ast.SequenceNode)
	if !ok {
		d.errTok(path, nodeToken(v), "want a list of strings, got %s", describe(v))
		return nil
	}
	out := make([]string, 0, len(s.Values))
	for i, e := range s.Values {
		ip := fileerr.Index(path, i)
		x, ok := d.scalar(ip, e, depth+1, "a string")
		if ok {
			out = append(out, x)
		}
	}
	return out
}

// scalarMap decodes a mapping of scalars (env, labels, sysctls).
func (d *decoder) scalarMap(path string, n ast.Node, depth int, what string) map[string]string {
	es, ok := d.entries(path, n, depth)
	if !ok || len(es) == 0 {
		return nil
	}
	m := make(map[string]string, len(es))
	for _, e := range es {
		p := d.field(path, e)
		if v, ok := d.scalar(p, e.val, depth+1, what); ok {
			m[e.key] = v
		}
	}
	return m
}

// integer decodes an integer in [lo, hi].
func (d *decoder) integer(path string, n ast.Node, depth int, lo, hi int64) int64 {
	if !d.spend(path, n, depth) {
		return 0
	}
	v := d.resolve(path, n)
	i, ok := v.(*ast.IntegerNode)
	if !ok {
		d.errTok(path, nodeToken(n), "want an integer, got %s", describe(v))
		return 0
	}
	var x int64
	switch y := i.Value.(type) {
	case int64:
		x = y
	case uint64:
		if y > math.MaxInt64 {
			x = math.MaxInt64
		} else {
			x = int64(y)
		}
	}
	if x < lo || x > hi {
		d.errTok(path, nodeToken(v), "%s is out of range (want %d to %d)", describe(v), lo, hi)
		return 0
	}
	return x
}

// generic decodes any value: nil, bool, int64, uint64, float64, string,
// []any or yaml.MapSlice.
func (d *decoder) generic(path string, n ast.Node, depth int) any {
	if !d.spend(path, n, depth) {
		return nil
	}
	switch v := d.resolve(path, n).(type) {
	case nil:
		return nil
	case *ast.MappingNode, *ast.MappingValueNode:
		es, _ := d.entries(path, v, depth)
		m := yaml.MapSlice{}
		for _, e := range es {
			p := d.field(path, e)
			m = append(m, yaml.MapItem{Key: e.key, Value: d.generic(p, e.val, depth+1)})
		}
		return m
	case *ast.SequenceNode:
		out := make([]any, len(v.Values))
		for i, e := range v.Values {
			out[i] = d.generic(fileerr.Index(path, i), e, depth+1)
		}
		return out
	case *ast.StringNode:
		return v.Value
	case *ast.LiteralNode:
		return v.Value.Value
	case *ast.IntegerNode:
		return v.Value
	case *ast.FloatNode:
		return v.Value
	case *ast.BoolNode:
		return v.Value
	case ast.ScalarNode:
		return v.GetValue()
	default:
		d.errTok(path, nodeToken(v), "unexpected %s", describe(v))
		return nil
	}
}

// extra decodes a property kept in an Other map.
func (d *decoder) extra(path string, e kv, depth int) *Extra {
	return &Extra{Value: d.generic(path, e.val, depth), Pos: posOf(e.ktok)}
}

// unknown reports a key containerlab does not know.
func (d *decoder) unknown(path string, e kv, what string, known ...map[string]bool) {
	var all []string
	for _, m := range known {
		all = append(all, sortedKeys(m)...)
	}
	msg := "unknown key (not " + what + ")"
	if s := fileerr.Suggest(e.key, all); s != "" {
		msg = fmt.Sprintf("unknown key (not %s; did you mean %q?)", what, s)
	}
	d.errTok(path, e.ktok, "%s", msg)
}

// Keys this package models, per object.
var (
	modelTopLevel = set("name", "prefix", "mgmt", "topology")
	modelMgmt     = set("network", "ipv4-subnet", "ipv6-subnet", "bridge")
	modelBody     = set("defaults", "kinds", "groups", "nodes", "links")
	modelNode     = set("kind", "image", "group", "startup-config", "binds", "exec", "env", "labels", "mgmt-ipv4", "mgmt-ipv6", "sysctls")
	modelLink     = set("type", "endpoints", "mtu", "vars", "labels")
	modelEndpoint = set("node", "interface", "mac", "ipv4", "ipv6")
)

func (d *decoder) topology(body ast.Node) *Topology {
	t := &Topology{}
	es, ok := d.entries("", body, 0)
	if !ok {
		return t
	}
	var haveName, haveTopo bool
	for _, e := range es {
		p := d.field("", e)
		switch {
		case e.key == "name":
			haveName = true
			t.Name = d.str(p, e.val, 1)
			if t.Name == "" {
				d.errAt(p, "the lab name must not be empty")
			} else if !labNameRe.MatchString(t.Name) {
				d.errAt(p, "%q is not a valid lab name (want letters, digits, '-', '_' and '.', starting with a letter or digit)", t.Name)
			}
		case e.key == "prefix":
			s := d.str(p, e.val, 1)
			if s != "" && s != "__lab-name" && !labNameRe.MatchString(s) {
				d.errAt(p, "%q is not a valid prefix", s)
			}
			t.Prefix = &s
		case e.key == "mgmt":
			t.Mgmt = d.mgmt(p, e.val)
		case e.key == "topology":
			haveTopo = true
			d.body(t, p, e.val)
		case otherTopLevel[e.key]:
			if t.Other == nil {
				t.Other = map[string]*Extra{}
			}
			t.Other[e.key] = d.extra(p, e, 1)
		default:
			d.unknown(p, e, "a containerlab top-level property", modelTopLevel, otherTopLevel)
		}
	}
	if !haveName {
		d.errTok("name", nodeToken(body), "missing (every topology file names its lab)")
	}
	if !haveTopo {
		d.errTok("topology", nodeToken(body), "missing (the topology section with nodes and links)")
	}
	return t
}

func (d *decoder) mgmt(path string, n ast.Node) *Mgmt {
	m := &Mgmt{}
	es, _ := d.entries(path, n, 1)
	for _, e := range es {
		p := d.field(path, e)
		switch {
		case e.key == "network":
			m.Network = d.str(p, e.val, 2)
		case e.key == "ipv4-subnet":
			m.IPv4Subnet = d.str(p, e.val, 2)
			if m.IPv4Subnet != "" && m.IPv4Subnet != "auto" {
				if pf, err := netip.ParsePrefix(m.IPv4Subnet); err != nil || !pf.Addr().Is4() {
					d.errAt(p, "%q is not an IPv4 prefix (want e.g. 172.20.20.0/24 or auto)", m.IPv4Subnet)
				}
			}
		case e.key == "ipv6-subnet":
			m.IPv6Subnet = d.str(p, e.val, 2)
			if m.IPv6Subnet != "" && m.IPv6Subnet != "auto" {
				if pf, err := netip.ParsePrefix(m.IPv6Subnet); err != nil || !pf.Addr().Is6() || pf.Addr().Is4In6() {
					d.errAt(p, "%q is not an IPv6 prefix (want e.g. 3fff:172:20:20::/64 or auto)", m.IPv6Subnet)
				}
			}
		case e.key == "bridge":
			m.Bridge = d.str(p, e.val, 2)
		case otherMgmt[e.key]:
			if m.Other == nil {
				m.Other = map[string]*Extra{}
			}
			m.Other[e.key] = d.extra(p, e, 2)
		default:
			d.unknown(p, e, "a containerlab mgmt property", modelMgmt, otherMgmt)
		}
	}
	return m
}

func (d *decoder) body(t *Topology, path string, n ast.Node) {
	es, ok := d.entries(path, n, 1)
	if !ok {
		return
	}
	haveNodes := false
	for _, e := range es {
		p := d.field(path, e)
		switch e.key {
		case "defaults":
			t.Defaults = d.nodeConfig(p, e.val, 2)
			if t.Defaults == nil {
				t.Defaults = &NodeConfig{}
			}
		case "kinds":
			t.Kinds = d.nodeMap(p, e.val, false)
		case "groups":
			t.Groups = d.nodeMap(p, e.val, false)
		case "nodes":
			haveNodes = true
			t.Nodes = d.nodeMap(p, e.val, true)
		case "links":
			d.links(t, p, e.val)
		default:
			d.unknown(p, e, "a containerlab topology property", modelBody)
		}
	}
	if !haveNodes {
		d.errAt(fileerr.Field(path, "nodes"), "missing (the topology has no nodes)")
	}
}

// nodeMap decodes topology.nodes, kinds or groups.
func (d *decoder) nodeMap(path string, n ast.Node, nodes bool) map[string]*NodeConfig {
	es, _ := d.entries(path, n, 2)
	m := make(map[string]*NodeConfig, len(es))
	for _, e := range es {
		p := d.field(path, e)
		if nodes && !nodeNameRe.MatchString(e.key) {
			d.errTok(p, e.ktok, "%q is not a valid node name (want letters, digits, '-', '_' and '.', starting with a letter or digit)", e.key)
		}
		m[e.key] = d.nodeConfig(p, e.val, 3)
	}
	return m
}

// nodeConfig decodes a node configuration; nil for a null value.
func (d *decoder) nodeConfig(path string, n ast.Node, depth int) *NodeConfig {
	es, ok := d.entries(path, n, depth)
	if !ok || es == nil {
		if ok {
			// Keep `leaf0: {}` distinct from `leaf0:` only in the Go value.
			if v := d.resolve(path, n); v != nil {
				return &NodeConfig{}
			}
		}
		return nil
	}
	c := &NodeConfig{}
	for _, e := range es {
		p := d.field(path, e)
		switch {
		case e.key == "kind":
			c.Kind = d.str(p, e.val, depth+1)
		case e.key == "image":
			c.Image = d.str(p, e.val, depth+1)
		case e.key == "group":
			c.Group = d.str(p, e.val, depth+1)
		case e.key == "startup-config":
			c.StartupConfig = d.str(p, e.val, depth+1)
		case e.key == "binds":
			c.Binds = d.strList(p, e.val, depth+1)
			for i, b := range c.Binds {
				if strings.TrimSpace(b) == "" {
					d.errAt(fileerr.Index(p, i), "empty bind")
				}
			}
		case e.key == "exec":
			c.Exec = d.strList(p, e.val, depth+1)
		case e.key == "env":
			c.Env = d.scalarMap(p, e.val, depth+1, "a string, number or boolean")
		case e.key == "labels":
			c.Labels = d.scalarMap(p, e.val, depth+1, "a string or number")
		case e.key == "sysctls":
			c.Sysctls = d.scalarMap(p, e.val, depth+1, "a string or number")
		case e.key == "mgmt-ipv4":
			c.MgmtIPv4 = d.str(p, e.val, depth+1)
			if a, err := netip.ParseAddr(c.MgmtIPv4); c.MgmtIPv4 != "" && (err != nil || !a.Is4()) {
				d.errAt(p, "%q is not an IPv4 address", c.MgmtIPv4)
			}
		case e.key == "mgmt-ipv6":
			c.MgmtIPv6 = d.str(p, e.val, depth+1)
			if a, err := netip.ParseAddr(c.MgmtIPv6); c.MgmtIPv6 != "" && (err != nil || !a.Is6() || a.Is4In6()) {
				d.errAt(p, "%q is not an IPv6 address", c.MgmtIPv6)
			}
		case otherNode[e.key]:
			if c.Other == nil {
				c.Other = map[string]*Extra{}
			}
			c.Other[e.key] = d.extra(p, e, depth+1)
		default:
			d.unknown(p, e, "a containerlab node property", modelNode, otherNode)
		}
	}
	return c
}

func (d *decoder) links(t *Topology, path string, n ast.Node) {
	if !d.spend(path, n, 2) {
		return
	}
	v := d.resolve(path, n)
	if v == nil {
		return
	}
	s, ok := v.(*ast.SequenceNode)
	if !ok {
		d.errTok(path, nodeToken(v), "want a list of links, got %s", describe(v))
		return
	}
	for i, e := range s.Values {
		t.Links = append(t.Links, d.link(fileerr.Index(path, i), e))
	}
}

func (d *decoder) link(path string, n ast.Node) *LinkConfig {
	l := &LinkConfig{}
	es, ok := d.entries(path, n, 3)
	if !ok {
		return l
	}
	// The type decides how endpoints are read.
	for _, e := range es {
		if e.key == "type" {
			p := d.field(path, e)
			l.Type = d.str(p, e.val, 4)
			if !linkTypes[l.Type] {
				d.errAt(p, "unknown link type %q (want %s)", l.Type, setKeys(linkTypes))
			}
		}
	}
	haveEndpoints := false
	for _, e := range es {
		p := d.field(path, e)
		switch {
		case e.key == "type":
		case e.key == "endpoints":
			haveEndpoints = true
			l.Endpoints = d.endpoints(p, e.val, l.Type)
		case e.key == "mtu":
			l.MTU = int(d.integer(p, e.val, 4, 1, 65535))
		case e.key == "vars":
			if m, ok := d.generic(p, e.val, 4).(yaml.MapSlice); ok {
				l.Vars = make(map[string]any, len(m))
				for _, it := range m {
					l.Vars[it.Key.(string)] = it.Value
				}
			} else if v := d.resolve(p, e.val); v != nil {
				d.errAt(p, "want a mapping, got %s", describe(v))
			}
		case e.key == "labels":
			l.Labels = d.scalarMap(p, e.val, 4, "a string or number")
		case otherLink[e.key]:
			if l.Other == nil {
				l.Other = map[string]*Extra{}
			}
			l.Other[e.key] = d.extra(p, e, 4)
		default:
			d.unknown(p, e, "a containerlab link property", modelLink, otherLink)
		}
	}
	if (l.Type == "" || l.Type == "veth") && !haveEndpoints {
		d.errAt(path, "missing endpoints (a link joins two \"node:interface\" endpoints)")
	}
	return l
}

func (d *decoder) endpoints(path string, n ast.Node, typ string) []*LinkEndpoint {
	if !d.spend(path, n, 4) {
		return nil
	}
	v := d.resolve(path, n)
	s, ok := v.(*ast.SequenceNode)
	if !ok {
		d.errTok(path, nodeToken(n), "want a list of two endpoints, got %s", describe(v))
		return nil
	}
	if len(s.Values) != 2 {
		d.errAt(path, "want exactly 2 endpoints, got %d", len(s.Values))
	}
	var eps []*LinkEndpoint
	for i, en := range s.Values {
		ip := fileerr.Index(path, i)
		if !d.spend(ip, en, 5) {
			return eps
		}
		ev := d.resolve(ip, en)
		switch ev := ev.(type) {
		case *ast.StringNode:
			if typ != "" {
				d.errTok(ip, nodeToken(ev), "a link with type %s wants endpoints as mappings {node: ..., interface: ...}; %q is the short form, used without type", typ, ev.Value)
				continue
			}
			node, iface, ok := strings.Cut(ev.Value, ":")
			if !ok || node == "" || iface == "" || strings.ContainsAny(ev.Value, " \t\r\n") {
				d.errTok(ip, nodeToken(ev), "%q is not an endpoint (want \"node:interface\", e.g. \"leaf0:eth1\")", ev.Value)
				continue
			}
			eps = append(eps, &LinkEndpoint{Node: node, Interface: iface})
		case *ast.MappingNode, *ast.MappingValueNode:
			if typ == "" {
				d.errTok(ip, nodeToken(ev), "endpoints written as mappings need the extended link form (type: veth)")
				continue
			}
			eps = append(eps, d.endpoint(ip, ev))
		default:
			d.errTok(ip, nodeToken(en), "want an endpoint, got %s", describe(ev))
		}
	}
	return eps
}

func (d *decoder) endpoint(path string, n ast.Node) *LinkEndpoint {
	ep := &LinkEndpoint{}
	es, _ := d.entries(path, n, 5)
	for _, e := range es {
		p := d.field(path, e)
		switch {
		case e.key == "node":
			ep.Node = d.str(p, e.val, 6)
		case e.key == "interface":
			ep.Interface = d.str(p, e.val, 6)
		case e.key == "mac":
			ep.MAC = d.str(p, e.val, 6)
			if _, err := net.ParseMAC(ep.MAC); ep.MAC != "" && (err != nil || len(ep.MAC) != 17) {
				d.errAt(p, "%q is not a MAC address (want e.g. 02:00:00:00:00:01)", ep.MAC)
			}
		case e.key == "ipv4":
			ep.IPv4 = d.str(p, e.val, 6)
			if pf, err := netip.ParsePrefix(ep.IPv4); ep.IPv4 != "" && (err != nil || !pf.Addr().Is4()) {
				d.errAt(p, "%q is not an IPv4 address with prefix length (want e.g. 198.18.0.1/31)", ep.IPv4)
			}
		case e.key == "ipv6":
			ep.IPv6 = d.str(p, e.val, 6)
			if pf, err := netip.ParsePrefix(ep.IPv6); ep.IPv6 != "" && (err != nil || !pf.Addr().Is6() || pf.Addr().Is4In6()) {
				d.errAt(p, "%q is not an IPv6 address with prefix length (want e.g. fd00:fb:1::1/127)", ep.IPv6)
			}
		case otherEndpoint[e.key]:
			if ep.Other == nil {
				ep.Other = map[string]*Extra{}
			}
			ep.Other[e.key] = d.extra(p, e, 6)
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
