// Package yamlx is fabricbench's one strict YAML front end, shared by the
// suite, containerlab topology and hardware inventory parsers: one set of
// limits, one way of resolving anchors, aliases, tags and merge keys, one
// wording for unknown and duplicate keys (with a "did you mean"
// suggestion), and errors that are fileerr.Error values naming the file,
// line, column and field path.
//
// It has two layers. Parse checks the size, parses the text with
// goccy/go-yaml and returns the one document's body; Doc.Resolve, Budget,
// Token, Describe and KeyText are the primitives a type-driven walker over
// the AST needs (the suite loader walks the AST against its Go types and
// then decodes it with yaml.NodeToValue). Doc.Tree converts the body into
// a small resolved tree of mappings, lists and scalars with positions,
// which hand-written decoders (containerlab, inventory) read.
package yamlx

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/fabricbench/fabricbench/internal/fileerr"
)

// Limits on every YAML input file (suites, containerlab topologies,
// hardware inventories), so that no input can exhaust time or memory.
// They are the only limits: the parsers do not add their own.
const (
	// MaxBytes bounds the size of a file.
	MaxBytes = 8 << 20
	// MaxDepth bounds nesting of mappings and lists, and chains of aliases.
	MaxDepth = 64
	// MaxValues bounds the values a document expands to, counting every
	// alias as a copy of what it names, so that alias bombs ("billion
	// laughs") are rejected instead of decoded.
	MaxValues = 250_000
	// MaxMerges bounds nested "<<" merge keys.
	MaxMerges = 8
)

// Pos is a position in a file (1-based; zero when unknown).
type Pos struct{ Line, Column int }

// PosOf returns a token's position.
func PosOf(tok *token.Token) Pos {
	if tok == nil || tok.Position == nil {
		return Pos{}
	}
	return Pos{tok.Position.Line, tok.Position.Column}
}

// Errorf builds an error at a position.
func Errorf(file string, at Pos, path, format string, args ...any) *fileerr.Error {
	return &fileerr.Error{File: file, Line: at.Line, Column: at.Column, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// Doc is one parsed YAML document.
type Doc struct {
	File string
	// Body is the document's body; nil for an empty file.
	Body    ast.Node
	anchors map[string][]anchor
}

type anchor struct {
	offset int
	value  ast.Node
}

// Parse checks a file's size and syntax and returns its one document.
// what names the file in "a suite file holds one YAML document".
// An empty file gives a Doc with a nil Body; the caller decides whether
// that is an error.
func Parse(file string, data []byte, what string) (*Doc, fileerr.List) {
	if len(data) > MaxBytes {
		return nil, TooLarge(file, int64(len(data)))
	}
	f, err := parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil, fileerr.List{SyntaxError(file, err)}
	}
	d := &Doc{File: file, anchors: map[string][]anchor{}}
	for _, doc := range f.Docs {
		if doc == nil || isNil(doc.Body) {
			continue
		}
		if d.Body != nil {
			return nil, fileerr.List{Errorf(file, PosOf(Token(doc.Body)), "", "%s holds one YAML document", what)}
		}
		d.Body = doc.Body
	}
	if d.Body != nil {
		for _, n := range ast.Filter(ast.AnchorType, d.Body) {
			a := n.(*ast.AnchorNode)
			if isNil(a.Name) {
				continue
			}
			if tk := a.Name.GetToken(); tk != nil && tk.Position != nil {
				d.anchors[tk.Value] = append(d.anchors[tk.Value], anchor{offset: tk.Position.Offset, value: a.Value})
			}
		}
	}
	return d, nil
}

// TooLarge is the error for a file above MaxBytes (for callers that check
// a file's size before reading it).
func TooLarge(file string, size int64) fileerr.List {
	return fileerr.List{{File: file, Msg: fmt.Sprintf("file too large (%d bytes, at most %d)", size, MaxBytes)}}
}

// SyntaxError converts an error of the yaml parser.
func SyntaxError(file string, err error) *fileerr.Error {
	e := &fileerr.Error{File: file, Msg: err.Error()}
	var ye yaml.Error
	if errors.As(err, &ye) {
		e.Msg = ye.GetMessage()
		at := PosOf(ye.GetToken())
		e.Line, e.Column = at.Line, at.Column
	}
	return e
}

// Resolve strips anchors, tags and explicit-key markers and follows
// aliases. It returns the value (nil for null), the token to report it at
// (the alias's, when it was reached through one) and, when the value
// cannot be resolved, a problem to report at that token.
func (d *Doc) Resolve(n ast.Node) (v ast.Node, at *token.Token, problem string) {
	at = Token(n)
	aliased := false
	for i := 0; i <= MaxDepth; i++ {
		if isNil(n) {
			return nil, at, ""
		}
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
		case *ast.TagNode:
			n = x.Value
		case *ast.MappingKeyNode:
			n = x.Value
		case *ast.AliasNode:
			name := ""
			if !isNil(x.Value) {
				if tk := x.Value.GetToken(); tk != nil {
					name = tk.Value
				}
			}
			off := -1
			if tk := x.GetToken(); tk != nil && tk.Position != nil {
				off = tk.Position.Offset
			}
			// The alias names the last anchor defined before it.
			var target ast.Node
			for _, a := range d.anchors[name] {
				if a.offset < off {
					target = a.value
				}
			}
			if target == nil {
				if len(d.anchors[name]) == 0 {
					return nil, Token(x), fmt.Sprintf("unknown alias *%s", name)
				}
				return nil, Token(x), fmt.Sprintf("alias *%s is used before its anchor &%s", name, name)
			}
			if !aliased {
				at, aliased = Token(x), true
			}
			n = target
		case *ast.NullNode:
			return nil, at, ""
		default:
			if !aliased {
				at = Token(n)
			}
			return n, at, ""
		}
	}
	return nil, at, "aliases nested too deeply"
}

// Budget counts the values a walk visits against MaxValues and checks
// nesting against MaxDepth.
type Budget struct {
	left    int
	stopped bool
}

// NewBudget returns a budget of MaxValues.
func NewBudget() *Budget { return &Budget{left: MaxValues} }

// Spend counts one value at the given depth. It returns "" while within
// the limits, the problem to report the first time a limit is exceeded,
// and "" with Stopped true after that.
func (b *Budget) Spend(depth int) string {
	if b.stopped {
		return ""
	}
	b.left--
	switch {
	case b.left < 0:
		b.stopped = true
		return fmt.Sprintf("document too large (more than %d values, aliases expanded)", MaxValues)
	case depth > MaxDepth:
		b.stopped = true
		return fmt.Sprintf("nested too deeply (more than %d levels)", MaxDepth)
	}
	return ""
}

// Stopped reports whether a limit was exceeded: the walk must end.
func (b *Budget) Stopped() bool { return b.stopped }

func isNil(n ast.Node) bool {
	if n == nil {
		return true
	}
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// Token returns the token to report a node at: a block mapping at its
// first key, anything else at its own token.
func Token(n ast.Node) *token.Token {
	if isNil(n) {
		return nil
	}
	switch n := n.(type) {
	case *ast.MappingNode:
		if !n.IsFlowStyle && len(n.Values) > 0 && n.Values[0] != nil && !isNil(n.Values[0].Key) {
			return n.Values[0].Key.GetToken()
		}
		return n.Start
	case *ast.MappingValueNode:
		if isNil(n.Key) {
			return nil
		}
		return n.Key.GetToken()
	}
	return n.GetToken()
}

// Describe names a resolved value for messages: "abc" (quoted, as
// written), a mapping, a list, null.
func Describe(n ast.Node) string {
	if isNil(n) {
		return "null"
	}
	switch n := n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.LiteralNode:
		if n.Value != nil {
			return strconv.Quote(n.Value.Value)
		}
	case ast.ScalarNode:
		if tk := n.GetToken(); tk != nil {
			return strconv.Quote(tk.Value)
		}
	}
	return "a " + n.Type().YAMLName()
}

// KeyText returns a resolved mapping key as written: strings, and numbers
// and booleans (unquoted names such as 1 or true). ok is false for other
// keys, which are reported as "key X is not a string".
func KeyText(k ast.Node) (text string, ok bool) {
	switch k := k.(type) {
	case *ast.StringNode:
		return k.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		if tk := k.GetToken(); tk != nil {
			return tk.Value, true
		}
	}
	return "", false
}

// NotString is the problem for a key that is not a string.
func NotString(k ast.Node) string { return fmt.Sprintf("key %s is not a string", Describe(k)) }

// UnknownKey is the one message for a key a format does not know: with a
// "did you mean" suggestion from known when one is close, else the list
// of known keys (or, when what is set, "not WHAT", for formats with too
// many keys to list):
//
//	unknown key (did you mean "size"?)
//	unknown key (want name, workload or size)
//	unknown key (not a containerlab node property; did you mean "cpu"?)
func UnknownKey(key string, known []string, what string) string {
	s := fileerr.Suggest(key, known)
	switch {
	case what != "" && s != "":
		return fmt.Sprintf("unknown key (not %s; did you mean %q?)", what, s)
	case what != "":
		return fmt.Sprintf("unknown key (not %s)", what)
	case s != "":
		return fmt.Sprintf("unknown key (did you mean %q?)", s)
	case len(known) > 0:
		return "unknown key (want " + OrList(known) + ")"
	}
	return "unknown key"
}

// DuplicateKey is the one message for a key set twice in a mapping.
func DuplicateKey(first Pos) string {
	return fmt.Sprintf("duplicate key (first set on line %d)", first.Line)
}

// OrList formats "a, b or c".
func OrList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
