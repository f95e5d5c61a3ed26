package suite

import (
	"encoding"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"

	"github.com/fabricbench/fabricbench/internal/fileerr"
	"github.com/fabricbench/fabricbench/internal/yamlx"
	"github.com/fabricbench/fabricbench/kpis"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// Suite files are read within yamlx's limits (size, depth, alias
// expansion), shared with topologies and inventories.

// entry is a value node recorded at a field path.
type entry struct {
	node ast.Node     // the value (anchors, tags and aliases resolved)
	tok  *token.Token // where to report it: the value, or the alias naming it
}

// subst is one matrix value substituted into a point's document.
type subst struct {
	canon string       // canonical field path, e.g. jobs[0].size
	mpath string       // matrix["jobs[name=perm].size"][1]
	tok   *token.Token // the matrix value
}

// doc indexes one document body by field path and collects its problems.
type doc struct {
	file   string
	y      *yamlx.Doc
	body   ast.Node
	nodes  map[string]entry
	keys   map[string]*token.Token
	byPos  map[[2]int]string // token line/column -> field path
	budget *yamlx.Budget
	subst  []subst
	errs   ErrorList
	// mprefix maps the matrix keys of a composed test to their place
	// (tests[i].matrix); other keys are in the suite's matrix.
	mprefix map[string]string

	// Problems found by walk mark their paths bad; drops then remove those
	// values so that the rest still decodes and validates, and validation
	// problems at, above or below a bad path are not reported.
	bad        map[string]bool
	drops      []func()
	validating bool
	// undecoded are the paths of values that did not decode (a quantity
	// or word, decodeText): dropped like bad ones, but the rest of the
	// document is still validated (and its matrix expanded), as when the
	// checker parsed them; only problems at or below them are not
	// reported.
	undecoded map[string]bool
}

func newDoc(y *yamlx.Doc, subst []subst) *doc {
	return &doc{
		file:      y.File,
		y:         y,
		body:      y.Body,
		nodes:     make(map[string]entry),
		keys:      make(map[string]*token.Token),
		byPos:     make(map[[2]int]string),
		bad:       make(map[string]bool),
		undecoded: make(map[string]bool),
		budget:    yamlx.NewBudget(),
		subst:     subst,
	}
}

// has reports whether the document sets path to a non-null value.
func (d *doc) has(path string) bool {
	_, ok := d.nodes[path]
	return ok
}

// errf reports a problem at path, positioned at the path's value or, when
// the path is not set, at its nearest ancestor that is.
func (d *doc) errf(path, format string, args ...any) {
	p := path
	var tok *token.Token
	for {
		if e, ok := d.nodes[p]; ok {
			tok = e.tok
			break
		}
		if k, ok := d.keys[p]; ok {
			tok = k
			break
		}
		if p == "" {
			break
		}
		p = fileerr.Parent(p)
	}
	d.add(path, p, tok, fmt.Sprintf(format, args...))
}

// errTok reports a problem at path, positioned at tok.
func (d *doc) errTok(path string, tok *token.Token, format string, args ...any) {
	d.add(path, path, tok, fmt.Sprintf(format, args...))
}

// errEntry reports a mapping entry that is dropped (a bad or duplicate
// key) without marking its path bad.
func (d *doc) errEntry(path string, tok *token.Token, format string, args ...any) {
	wasBad := d.bad[path]
	d.errTok(path, tok, format, args...)
	d.bad[path] = wasBad
}

// duplicate reports a key seen before in the same mapping.
func (d *doc) duplicate(seen map[string]*token.Token, path, key string, tok *token.Token) bool {
	first, dup := seen[key]
	if !dup {
		seen[key] = tok
		return false
	}
	line := 0
	if first != nil && first.Position != nil {
		line = first.Position.Line
	}
	d.errEntry(path, tok, "%s", yamlx.DuplicateKey(yamlx.Pos{Line: line}))
	return true
}

// add records a problem. found is the path tok belongs to; paths inside a
// substituted matrix value are reported as that value's matrix path.
func (d *doc) add(path, found string, tok *token.Token, msg string) {
	if d.validating {
		// Problems at or around a value that did not decode are most
		// likely its consequences.
		for b := range d.bad {
			_, below := underPath(path, b)
			_, above := underPath(b, path)
			if below || above && path != "" {
				return
			}
		}
		for u := range d.undecoded {
			if _, below := underPath(path, u); below {
				return
			}
		}
	} else {
		d.bad[path] = true
	}
	for _, s := range d.subst {
		rest, ok := underPath(path, s.canon)
		if !ok {
			continue
		}
		path = s.mpath + rest
		if _, inside := underPath(found, s.canon); !inside || tok == nil {
			tok = s.tok
		}
		break
	}
	e := &Error{File: d.file, Path: path, Msg: msg}
	if tok != nil && tok.Position != nil {
		e.Line, e.Column = tok.Position.Line, tok.Position.Column
	}
	d.errs = append(d.errs, e)
}

// underPath reports whether path is base or lies below it, and returns the
// remainder (".x", "[2]" or "").
func underPath(path, base string) (string, bool) {
	if !strings.HasPrefix(path, base) {
		return "", false
	}
	rest := path[len(base):]
	if rest == "" || rest[0] == '.' || rest[0] == '[' {
		return rest, true
	}
	return "", false
}

// nodeToken returns the token to report a node at.
func nodeToken(n ast.Node) *token.Token { return yamlx.Token(n) }

// resolve strips anchors and tags and follows aliases. It returns nil for
// null values and reports unknown aliases.
func (d *doc) resolve(path string, n ast.Node) ast.Node {
	v, tok, problem := d.y.Resolve(n)
	if problem != "" {
		d.errTok(path, tok, "%s", problem)
		return nil
	}
	return v
}

// describe names a node's value for messages: "abc" (quoted), a mapping, a
// list.
func describe(n ast.Node) string { return yamlx.Describe(n) }

var errStop = errors.New("stop")

// spend counts a value against the limits; errStop ends the walk.
func (d *doc) spend(path string, n ast.Node, depth int) error {
	if msg := d.budget.Spend(depth); msg != "" {
		d.errTok(path, nodeToken(n), "%s", msg)
	}
	if d.budget.Stopped() {
		return errStop
	}
	return nil
}

// walk checks a node against the Go type it decodes into: unknown keys,
// value kinds, non-string keys, nesting and size limits. It records every
// non-null value by field path.
func (d *doc) walk(path string, n ast.Node, t reflect.Type, depth int) error {
	if err := d.spend(path, n, depth); err != nil {
		return err
	}
	tok := nodeToken(n)
	_, isAlias := n.(*ast.AliasNode)
	v := d.resolve(path, n)
	if v == nil {
		return nil
	}
	if !isAlias {
		tok = nodeToken(v)
	}
	d.nodes[path] = entry{node: v, tok: tok}
	if vt := nodeToken(v); vt != nil && vt.Position != nil {
		k := [2]int{vt.Position.Line, vt.Position.Column}
		if _, ok := d.byPos[k]; !ok {
			d.byPos[k] = path
		}
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if isText(t) {
		d.decodeText(path, v, tok, t)
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(*ast.MappingNode)
		if !ok {
			d.errTok(path, tok, "want a mapping, got %s", describe(v))
			return nil
		}
		return d.walkStruct(path, m, t, depth, 0)
	case reflect.Map:
		m, ok := v.(*ast.MappingNode)
		if !ok {
			d.errTok(path, tok, "want a mapping, got %s", describe(v))
			return nil
		}
		seen := map[string]*token.Token{}
		for _, mv := range m.Values {
			key, ktok, ok := d.key(path, mv)
			if !ok {
				d.dropEntry(m, mv)
				continue
			}
			kp := fileerr.Key(path, key)
			if d.duplicate(seen, kp, key, ktok) {
				d.dropEntry(m, mv)
				continue
			}
			d.keys[kp] = ktok
			if err := d.walk(kp, mv.Value, t.Elem(), depth+1); err != nil {
				return err
			}
			if d.dropped(kp) {
				d.dropEntry(m, mv)
			}
		}
	case reflect.Slice:
		s, ok := v.(*ast.SequenceNode)
		if !ok {
			d.errTok(path, tok, "want a list, got %s", describe(v))
			return nil
		}
		for i, e := range s.Values {
			ip := fileerr.Index(path, i)
			if err := d.walk(ip, e, t.Elem(), depth+1); err != nil {
				return err
			}
			if d.dropped(ip) {
				d.dropElem(s, i)
			}
		}
	case reflect.Interface:
		switch v := v.(type) {
		case *ast.MappingNode:
			seen := map[string]*token.Token{}
			for _, mv := range v.Values {
				key, ktok, ok := d.key(path, mv)
				if !ok {
					d.dropEntry(v, mv)
					continue
				}
				kp := fileerr.Field(path, key)
				if d.duplicate(seen, kp, key, ktok) {
					d.dropEntry(v, mv)
					continue
				}
				d.keys[kp] = ktok
				if err := d.walk(kp, mv.Value, t, depth+1); err != nil {
					return err
				}
			}
		case *ast.SequenceNode:
			for i, e := range v.Values {
				if err := d.walk(fileerr.Index(path, i), e, t, depth+1); err != nil {
					return err
				}
			}
		}
	case reflect.String:
		switch v.(type) {
		case *ast.MappingNode, *ast.SequenceNode, *ast.MergeKeyNode:
			d.errTok(path, tok, "want a string, got %s", describe(v))
		}
	case reflect.Int, reflect.Int64, reflect.Uint64:
		i, ok := v.(*ast.IntegerNode)
		if !ok {
			d.errTok(path, tok, "want an integer, got %s", describe(v))
			return nil
		}
		switch x := i.Value.(type) {
		case int64:
			if t.Kind() == reflect.Uint64 && x < 0 {
				d.errTok(path, tok, "want a non-negative integer, got %s", describe(v))
			}
		case uint64:
			if t.Kind() != reflect.Uint64 && x > math.MaxInt64 {
				d.errTok(path, tok, "%s is too large", describe(v))
			}
		default:
			d.errTok(path, tok, "%s is not a valid integer", describe(v))
		}
	case reflect.Float64:
		switch v.(type) {
		case *ast.IntegerNode, *ast.FloatNode:
		default:
			d.errTok(path, tok, "want a number, got %s%s", describe(v), d.boundHint(path))
		}
	case reflect.Bool:
		if _, ok := v.(*ast.BoolNode); !ok {
			d.errTok(path, tok, "want true or false, got %s", describe(v))
		}
	}
	return nil
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// isText reports whether a field of type t decodes from text (a quantity
// of quantity.go): it is a scalar, not a mapping.
func isText(t reflect.Type) bool {
	return t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && reflect.PointerTo(t).Implements(textUnmarshaler)
}

// decodeText decodes a scalar into a text type (a quantity): validating
// is decoding. A value that does not decode is reported at its position,
// with the type's message, and dropped.
func (d *doc) decodeText(path string, v ast.Node, tok *token.Token, t reflect.Type) {
	switch v.(type) {
	case *ast.MappingNode, *ast.SequenceNode, *ast.MergeKeyNode:
		d.errTok(path, tok, "want a string, got %s", describe(v))
		return
	}
	var text string
	if err := yaml.NodeToValue(v, &text); err != nil {
		d.errTok(path, tok, "want a string, got %s", describe(v))
		return
	}
	x := reflect.New(t).Interface().(encoding.TextUnmarshaler)
	if err := x.UnmarshalText([]byte(text)); err != nil {
		wasBad := d.bad[path]
		d.errTok(path, tok, "%s", err.Error())
		if !wasBad {
			delete(d.bad, path)
		}
		d.undecoded[path] = true
	}
}

// walkStruct checks a mapping's keys against a struct's yaml tags.
func (d *doc) walkStruct(path string, m *ast.MappingNode, t reflect.Type, depth, merges int) error {
	fields := yamlFields(t)
	seen := map[string]*token.Token{}
	for _, mv := range m.Values {
		if mv.Key != nil && mv.Key.IsMergeKey() {
			if merges >= yamlx.MaxMerges {
				d.errTok(path, nodeToken(mv), "merge keys nested too deeply (more than %d)", yamlx.MaxMerges)
				continue
			}
			if err := d.walkMerge(path, mv.Value, t, depth, merges+1); err != nil {
				return err
			}
			continue
		}
		key, ktok, ok := d.key(path, mv)
		if !ok {
			d.dropEntry(m, mv)
			continue
		}
		kp := fileerr.Field(path, key)
		if d.duplicate(seen, kp, key, ktok) {
			d.dropEntry(m, mv)
			continue
		}
		ft, ok := fields[key]
		if !ok {
			d.errTok(kp, ktok, "%s", yamlx.UnknownKey(key, yamlNames(t), ""))
			d.dropEntry(m, mv)
			continue
		}
		d.keys[kp] = ktok
		if err := d.walk(kp, mv.Value, ft, depth+1); err != nil {
			return err
		}
		if d.dropped(kp) {
			d.dropEntry(m, mv)
		}
	}
	return nil
}

// dropped reports whether the value at path is removed before decoding:
// it is bad or did not decode.
func (d *doc) dropped(path string) bool { return d.bad[path] || d.undecoded[path] }

// dropEntry schedules the removal of a mapping entry.
func (d *doc) dropEntry(m *ast.MappingNode, mv *ast.MappingValueNode) {
	d.drops = append(d.drops, func() {
		vals := m.Values[:0]
		for _, v := range m.Values {
			if v != mv {
				vals = append(vals, v)
			}
		}
		m.Values = vals
	})
}

// dropElem schedules replacing a list element with null.
func (d *doc) dropElem(s *ast.SequenceNode, i int) {
	d.drops = append(d.drops, func() {
		s.Values[i] = ast.Null(token.New("null", "null", posOf(nodeToken(s.Values[i]))))
	})
}

// walkMerge checks the value of a "<<" merge key: a mapping or alias, or a
// list of them.
func (d *doc) walkMerge(path string, n ast.Node, t reflect.Type, depth, merges int) error {
	if err := d.spend(path, n, depth); err != nil {
		return err
	}
	v := d.resolve(path, n)
	switch v := v.(type) {
	case nil:
		return nil
	case *ast.MappingNode:
		return d.walkStruct(path, v, t, depth+1, merges)
	case *ast.SequenceNode:
		for _, e := range v.Values {
			if err := d.walkMerge(path, e, t, depth+1, merges); err != nil {
				return err
			}
		}
		return nil
	default:
		d.errTok(path, nodeToken(v), "%s", yamlx.BadMerge(v))
		return nil
	}
}

// key returns a mapping entry's key, reporting keys that are not strings.
func (d *doc) key(path string, mv *ast.MappingValueNode) (string, *token.Token, bool) {
	if mv == nil || mv.Key == nil {
		return "", nil, false
	}
	k := d.resolve(path, mv.Key)
	if s, ok := k.(*ast.StringNode); ok {
		return s.Value, nodeToken(mv.Key), true
	}
	if k == nil {
		k = mv.Key
	}
	d.errEntry(path, nodeToken(mv.Key), "%s", yamlx.NotString(k))
	return "", nil, false
}

// yamlFields maps a struct's yaml names to field types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	m := make(map[string]reflect.Type, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if name := yamlName(f); name != "" {
			m[name] = f.Type
		}
	}
	return m
}

// yamlNames lists a struct's yaml names in declaration order.
func yamlNames(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		if name := yamlName(t.Field(i)); name != "" {
			names = append(names, name)
		}
	}
	return names
}

func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" || name == "" {
		return ""
	}
	return name
}

// orList formats "a, b or c".
func orList(items []string) string { return yamlx.OrList(items) }

// decodeError converts an error from the yaml package into an Error with
// the field path of its token.
func (d *doc) decodeError(err error) {
	var ye yaml.Error
	if errors.As(err, &ye) {
		tok := ye.GetToken()
		path := ""
		if tok != nil && tok.Position != nil {
			path = d.byPos[[2]int{tok.Position.Line, tok.Position.Column}]
		}
		d.errTok(path, tok, "%s", ye.GetMessage())
		return
	}
	d.errTok("", nil, "%v", err)
}

// kpiBound matches the path of a KPI's bound: kpis[3].min.
var kpiBound = regexp.MustCompile(`^kpis\[\d+\]\.(max|min)$`)

// boundHint explains, for a KPI bound that is not a number ("60Gbps"), that
// bounds are plain numbers in the metric's unit, naming the unit when the
// KPI's metric is known.
func (d *doc) boundHint(path string) string {
	if !kpiBound.MatchString(path) {
		return ""
	}
	// The KPI's mapping is recorded before its values: its metric may
	// come after the bound.
	var metric string
	if e, ok := d.nodes[fileerr.Parent(path)]; ok {
		if m, isMap := e.node.(*ast.MappingNode); isMap {
			for _, mv := range m.Values {
				if mv.Key != nil && mv.Key.String() == "metric" {
					if sn, isStr := mv.Value.(*ast.StringNode); isStr {
						metric = sn.Value
					}
				}
			}
		}
	}
	if m, known := kpis.Info(metric); known {
		unit := "in " + m.Unit
		switch m.Unit {
		case "us":
			unit = "in µs"
		case "ratio", "fraction", "count":
			unit = "a " + m.Unit
		}
		return fmt.Sprintf(": a KPI bound is a plain number in the metric's unit, without the unit (%s is %s)", m.Name, unit)
	}
	return ": a KPI bound is a plain number in the metric's unit, without the unit (see the metric table in docs/suites.md)"
}
