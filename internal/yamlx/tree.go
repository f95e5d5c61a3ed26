package yamlx

import (
	"fmt"
	"strconv"

	"github.com/goccy/go-yaml/ast"

	"github.com/fabricbench/fabricbench/internal/fileerr"
)

// Kind is the kind of a tree node.
type Kind uint8

// Node kinds.
const (
	Scalar Kind = iota + 1
	Map
	Seq
)

// Node is one non-null value of a resolved document: anchors, aliases,
// tags and merge keys are gone. A nil *Node is null.
type Node struct {
	Kind Kind
	// Pos is where to report the value: the value itself, or the alias
	// that named it.
	Pos Pos
	// Text is a scalar as written (a string's value for strings).
	Text string
	// Value is a scalar's value: string, int64, uint64, float64 or bool.
	Value any
	// Entries are a mapping's entries in order, explicit ones first, then
	// those brought in by merge keys that no explicit key overrides. Keys
	// are unique.
	Entries []Entry
	// Items are a list's elements (nil for null elements).
	Items []*Node
}

// Entry is one mapping entry.
type Entry struct {
	Key    string
	KeyPos Pos
	Value  *Node // nil: null
	Merged bool  // brought in by a "<<" merge key
}

// IsString reports whether n is a string scalar (quoted, plain or a
// block literal), as opposed to a number, boolean or mapping.
func (n *Node) IsString() bool {
	if n == nil || n.Kind != Scalar {
		return false
	}
	_, ok := n.Value.(string)
	return ok
}

// Describe names a value for messages: "abc" (quoted, as written), a
// mapping, a list, null.
func (n *Node) Describe() string {
	switch {
	case n == nil:
		return "null"
	case n.Kind == Map:
		return "a mapping"
	case n.Kind == Seq:
		return "a list"
	}
	return strconv.Quote(n.Text)
}

// Get returns the entry for key, nil when absent.
func (n *Node) Get(key string) *Entry {
	if n == nil {
		return nil
	}
	for i := range n.Entries {
		if n.Entries[i].Key == key {
			return &n.Entries[i]
		}
	}
	return nil
}

// Tree converts the document into a resolved tree, within the limits.
// Unknown aliases, duplicate keys, keys that are not strings and bad
// merge keys are reported (the offending entry or value is left out, so
// the rest can still be read). When a limit is exceeded the tree is nil.
// The tree of an empty document is nil, with no errors.
func (d *Doc) Tree() (*Node, fileerr.List) {
	if d.Body == nil {
		return nil, nil
	}
	t := &tree{d: d, b: NewBudget()}
	root := t.conv("", d.Body, 0)
	if t.b.Stopped() {
		return nil, t.errs
	}
	return root, t.errs
}

type tree struct {
	d    *Doc
	b    *Budget
	errs fileerr.List
}

func (t *tree) errf(at Pos, path, format string, args ...any) {
	t.errs = append(t.errs, Errorf(t.d.File, at, path, format, args...))
}

// spend counts a value; false when the walk must stop.
func (t *tree) spend(path string, n ast.Node, depth int) bool {
	if msg := t.b.Spend(depth); msg != "" {
		t.errf(PosOf(Token(n)), path, "%s", msg)
	}
	return !t.b.Stopped()
}

func (t *tree) conv(path string, n ast.Node, depth int) *Node {
	if !t.spend(path, n, depth) {
		return nil
	}
	v, tok, problem := t.d.Resolve(n)
	at := PosOf(tok)
	if problem != "" {
		t.errf(at, path, "%s", problem)
		return nil
	}
	switch v := v.(type) {
	case nil:
		return nil
	case *ast.MappingNode:
		y := &Node{Kind: Map, Pos: at}
		t.mapping(y, path, v.Values, depth, 0)
		return y
	case *ast.MappingValueNode:
		// A single-entry mapping in some positions.
		y := &Node{Kind: Map, Pos: at}
		t.mapping(y, path, []*ast.MappingValueNode{v}, depth, 0)
		return y
	case *ast.SequenceNode:
		y := &Node{Kind: Seq, Pos: at, Items: make([]*Node, 0, len(v.Values))}
		for i, e := range v.Values {
			y.Items = append(y.Items, t.conv(fileerr.Index(path, i), e, depth+1))
			if t.b.Stopped() {
				return nil
			}
		}
		return y
	case *ast.LiteralNode:
		s := ""
		if v.Value != nil {
			s = v.Value.Value
		}
		return &Node{Kind: Scalar, Pos: at, Text: s, Value: s}
	case *ast.StringNode:
		return &Node{Kind: Scalar, Pos: at, Text: v.Value, Value: v.Value}
	case ast.ScalarNode:
		text := ""
		if tk := v.GetToken(); tk != nil {
			text = tk.Value
		}
		return &Node{Kind: Scalar, Pos: at, Text: text, Value: v.GetValue()}
	}
	t.errf(at, path, "unsupported YAML value (%s)", v.Type().YAMLName())
	return nil
}

// mapping fills y with the entries of a mapping; merged entries come after
// the explicit ones and never override them (earlier merges win).
func (t *tree) mapping(y *Node, path string, values []*ast.MappingValueNode, depth, merges int) {
	var merged []Entry
	seen := map[string]Pos{}
	for _, mv := range values {
		if mv == nil || isNil(mv.Key) {
			continue
		}
		if mv.Key.IsMergeKey() {
			if merges >= MaxMerges {
				t.errf(PosOf(Token(mv)), path, "merge keys nested too deeply (more than %d)", MaxMerges)
				continue
			}
			merged = append(merged, t.merge(path, mv.Value, depth+1, merges+1)...)
			if t.b.Stopped() {
				return
			}
			continue
		}
		key, kpos, ok := t.key(path, mv)
		if !ok {
			continue
		}
		kp := fileerr.Field(path, key)
		if first, dup := seen[key]; dup {
			t.errf(kpos, kp, "%s", DuplicateKey(first))
			continue
		}
		seen[key] = kpos
		val := t.conv(kp, mv.Value, depth+1)
		if t.b.Stopped() {
			return
		}
		y.Entries = append(y.Entries, Entry{Key: key, KeyPos: kpos, Value: val})
	}
	for _, e := range merged {
		if _, dup := seen[e.Key]; !dup {
			seen[e.Key] = e.KeyPos
			e.Merged = true
			y.Entries = append(y.Entries, e)
		}
	}
}

// merge returns the entries a "<<" merge key brings in: from a mapping,
// or a list of them.
func (t *tree) merge(path string, n ast.Node, depth, merges int) []Entry {
	if !t.spend(path, n, depth) {
		return nil
	}
	v, tok, problem := t.d.Resolve(n)
	if problem != "" {
		t.errf(PosOf(tok), path, "%s", problem)
		return nil
	}
	switch v := v.(type) {
	case nil:
		return nil
	case *ast.MappingNode:
		y := &Node{}
		t.mapping(y, path, v.Values, depth, merges)
		return y.Entries
	case *ast.MappingValueNode:
		y := &Node{}
		t.mapping(y, path, []*ast.MappingValueNode{v}, depth, merges)
		return y.Entries
	case *ast.SequenceNode:
		var out []Entry
		for _, e := range v.Values {
			if ev, _, _ := t.d.Resolve(e); ev != nil {
				if _, ok := ev.(*ast.SequenceNode); ok {
					t.errf(PosOf(Token(e)), path, "%s", BadMerge(ev))
					continue
				}
			}
			out = append(out, t.merge(path, e, depth+1, merges)...)
			if t.b.Stopped() {
				return nil
			}
		}
		return out
	}
	t.errf(PosOf(tok), path, "%s", BadMerge(v))
	return nil
}

// BadMerge is the problem for a "<<" merge key whose value is not a
// mapping or a list of mappings.
func BadMerge(v ast.Node) string {
	return fmt.Sprintf("merge key << wants a mapping or a list of mappings, got %s", Describe(v))
}

// key returns a mapping entry's key as written, reporting keys that are
// not strings, numbers or booleans.
func (t *tree) key(path string, mv *ast.MappingValueNode) (string, Pos, bool) {
	k, tok, problem := t.d.Resolve(mv.Key)
	if problem != "" {
		t.errf(PosOf(tok), path, "%s", problem)
		return "", Pos{}, false
	}
	if s, ok := KeyText(k); ok {
		return s, PosOf(Token(mv.Key)), true
	}
	if k == nil {
		k = mv.Key
	}
	t.errf(PosOf(Token(mv.Key)), path, "%s", NotString(k))
	return "", Pos{}, false
}
