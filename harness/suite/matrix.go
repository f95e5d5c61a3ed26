package suite

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/internal/fileerr"
	"github.com/fabricbench/fabricbench/internal/yamlx"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// MaxPoints bounds the number of runs a matrix may expand to.
const MaxPoints = 256

// maxIDLen bounds point IDs built from parameter values.
const maxIDLen = 80

// Point is one run of a suite: one combination of matrix values.
type Point struct {
	// ID names the point in file names: without a matrix the suite's name
	// (characters other than [A-Za-z0-9._+-] become '_'; "run" when that
	// leaves nothing or more than 80 characters, or gives "bringup"); otherwise
	// the last element of each matrix key with its value, ordered by that
	// element ("lb=ops", "lb=ops,size=4MiB"; characters other than
	// [A-Za-z0-9._+-] in values become '_'), or p01, p02, ... when those
	// would clash or exceed 80 characters.
	ID string
	// Params maps each matrix key, as written, to this point's value
	// (scalars as written, lists and mappings in YAML flow form). Empty
	// without a matrix.
	Params map[string]string
	// Suite is the document re-decoded and re-validated with the values
	// substituted; its Matrix is nil.
	Suite *Suite
	// Test is the test of the suite's tests section the point belongs to
	// (nil for a suite without tests); its ID then starts with the test's
	// name and Params["tests"] is the name.
	Test *Test
	// NotApplicable lists why the point cannot run (what the check given
	// to PointsApplicable reported for it, file:line:col: path: message);
	// empty when it can.
	NotApplicable []string
}

// Points expands the matrix into its runs: the cartesian product of the
// values, keys sorted, the first key varying slowest and values in the
// order given. Without a matrix there is one point, named after the suite. Each point's
// suite is decoded and validated afresh from the document (for a Suite not
// made by Load or Parse, from its YAML encoding, where zero values count as
// unset).
func (s *Suite) Points() ([]Point, error) {
	return s.points(nil, nil)
}

func (s *Suite) points(check, na CheckFunc) ([]Point, error) {
	data := s.src
	if data == nil {
		var err error
		data, err = yaml.MarshalWithOptions(s, yaml.OmitZero())
		if err != nil {
			return nil, fmt.Errorf("suite %s: %v", s.Name, err)
		}
	}
	file := s.File
	if file == "" {
		file = s.Name + ".yaml"
	}
	ld := newLoader(file, data)
	ld.inventory = s.inventory
	if s.cache != nil {
		ld.cache = s.cache // the fabrics Load built
	}
	body, errs := ld.parse()
	if errs != nil {
		return nil, errs.Finish(file)
	}
	base, d := ld.build(body, nil)
	if base == nil || len(d.bad) > 0 {
		return nil, d.errs.Finish(file)
	}
	if len(base.Tests) > 0 {
		if len(d.errs) > 0 {
			return nil, d.errs.Finish(file)
		}
		pts, errs := ld.testPoints(base, check, na)
		if errs != nil {
			return nil, errs.Finish(file)
		}
		return pts, nil
	}
	ld.check = both(check, na) // on the points, not on the document with its matrix
	pts, errs := ld.expand(body, d)
	if errs != nil {
		return nil, errs.Finish(file)
	}
	return pts, nil
}

type selKind uint8

const (
	selNone selKind = iota
	selIndex
	selName
)

// seg is one element of a matrix key: a field name, optionally with a list
// selector ([2] or [name=perm]).
type seg struct {
	name  string
	sel   selKind
	index int
	match string
}

// mkey is one matrix key.
type mkey struct {
	key    string
	segs   []seg
	canon  string // canonical field path, selectors resolved: jobs[0].size
	short  string // the last field name, for IDs
	tok    *token.Token
	values []string // the values' text, for IDs and Params
}

// parseKey splits a matrix key into its elements.
func parseKey(k string) ([]seg, error) {
	const want = "want dotted field names with optional [N] or [name=NAME] selectors, e.g. transport.lb or jobs[name=perm].size"
	if k == "" {
		return nil, errors.New("empty key; " + want)
	}
	var segs []seg
	i := 0
	for {
		start := i
		for i < len(k) && k[i] != '.' && k[i] != '[' {
			i++
		}
		sg := seg{name: k[start:i]}
		if !fileerr.IsIdent(sg.name) {
			return nil, errors.New("malformed key; " + want)
		}
		if i < len(k) && k[i] == '[' {
			end := strings.IndexByte(k[i:], ']')
			if end < 0 {
				return nil, errors.New("unterminated [; " + want)
			}
			inner := k[i+1 : i+end]
			i += end + 1
			if n, err := strconv.Atoi(inner); err == nil && n >= 0 && inner == strconv.Itoa(n) {
				sg.sel, sg.index = selIndex, n
			} else if v, ok := strings.CutPrefix(inner, "name="); ok && v != "" {
				sg.sel, sg.match = selName, v
			} else {
				return nil, fmt.Errorf("bad selector [%s]; %s", inner, want)
			}
		}
		segs = append(segs, sg)
		if i == len(k) {
			return segs, nil
		}
		if k[i] != '.' {
			return nil, errors.New("malformed key; " + want)
		}
		i++
	}
}

// checkSchema checks that a key names a field of the suite.
func checkSchema(segs []seg) error {
	t := suiteType
	where := "the suite"
	shown := ""
	for i, sg := range segs {
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || isText(t) {
			return fmt.Errorf("%s has no fields", shown)
		}
		ft, ok := yamlFields(t)[sg.name]
		if !ok {
			return fmt.Errorf("%s has no field %q (want %s)", where, sg.name, orList(yamlNames(t)))
		}
		if i == 0 && sg.name == "matrix" {
			return errors.New("the matrix cannot sweep itself")
		}
		shown = fileerr.Field(shown, sg.name)
		switch sg.sel {
		case selIndex, selName:
			if ft.Kind() != reflect.Slice {
				return fmt.Errorf("%s is not a list", shown)
			}
			ft = ft.Elem()
			if sg.sel == selName {
				if et := ft; et.Kind() != reflect.Struct || yamlFields(et)["name"] == nil {
					return fmt.Errorf("%s entries have no name; select them by index, e.g. %s[0]", shown, shown)
				}
				shown += "[name=" + sg.match + "]"
			} else {
				shown = fileerr.Index(shown, sg.index)
			}
		}
		where = shown
		t = ft
	}
	return nil
}

// locate finds the place a key names in a document body and returns its
// canonical path. With create it makes missing mappings and keys (at tok)
// and returns a function that stores a value there; without, it only
// checks that every selected list entry exists.
func (d *doc) locate(body ast.Node, segs []seg, create bool, tok *token.Token) (string, func(ast.Node), error) {
	cur := d.resolve("", body)
	set := func(ast.Node) {}
	path := ""
	for i, sg := range segs {
		var m *ast.MappingNode
		switch v := cur.(type) {
		case nil:
			if !create {
				// The rest is absent; fine unless it selects list entries.
				for _, rest := range segs[i:] {
					path = fileerr.Field(path, rest.name)
					if rest.sel != selNone {
						return "", nil, fmt.Errorf("%s is not set", path)
					}
				}
				return path, nil, nil
			}
			m = ast.Mapping(token.String("", "", posOf(tok)), false)
			set(m)
		case *ast.MappingNode:
			m = v
		default:
			return "", nil, fmt.Errorf("%s is not a mapping", orRoot(path))
		}
		path = fileerr.Field(path, sg.name)
		mv := findKey(d, m, sg.name)
		if mv == nil {
			if sg.sel != selNone {
				return "", nil, fmt.Errorf("%s is not set", path)
			}
			if !create {
				cur = nil
				continue
			}
			key := ast.String(token.String(sg.name, sg.name, posOf(tok)))
			mv = ast.MappingValue(token.String(":", ":", posOf(tok)), key, nil)
			m.Values = append(m.Values, mv)
		}
		set = func(n ast.Node) { mv.Value = n }
		cur = d.resolve(path, mv.Value)
		if sg.sel == selNone {
			continue
		}
		seq, ok := cur.(*ast.SequenceNode)
		if !ok {
			return "", nil, fmt.Errorf("%s is not a list", path)
		}
		idx := sg.index
		if sg.sel == selIndex {
			if idx >= len(seq.Values) {
				return "", nil, fmt.Errorf("%s does not exist (%s has %s)", fileerr.Index(path, idx), path, plural(len(seq.Values), "entry", "entries"))
			}
		} else {
			idx = -1
			for k, e := range seq.Values {
				if em, ok := d.resolve(path, e).(*ast.MappingNode); ok {
					if nv := findKey(d, em, "name"); nv != nil && scalarText(d, nv.Value) == sg.match {
						idx = k
						break
					}
				}
			}
			if idx < 0 {
				return "", nil, fmt.Errorf("no entry of %s is named %q", path, sg.match)
			}
		}
		path = fileerr.Index(path, idx)
		set = func(n ast.Node) { seq.Values[idx] = n }
		cur = d.resolve(path, seq.Values[idx])
	}
	return path, set, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// posOf returns a token's position (a zero one for nil).
func posOf(tok *token.Token) *token.Position {
	if tok == nil || tok.Position == nil {
		return &token.Position{}
	}
	return tok.Position
}

func orRoot(path string) string {
	if path == "" {
		return "the document"
	}
	return path
}

// findKey finds a mapping entry by key.
func findKey(d *doc, m *ast.MappingNode, key string) *ast.MappingValueNode {
	for _, mv := range m.Values {
		if mv == nil || mv.Key == nil || mv.Key.IsMergeKey() {
			continue
		}
		if s, ok := d.resolve("", mv.Key).(*ast.StringNode); ok && s.Value == key {
			return mv
		}
	}
	return nil
}

// scalarText returns a value's text: scalars as written, collections in
// compact form.
func scalarText(d *doc, n ast.Node) string {
	v := d.resolve("", n)
	switch v := v.(type) {
	case nil:
		return "null"
	case *ast.LiteralNode:
		return v.Value.Value
	case *ast.StringNode:
		return v.Value
	case ast.ScalarNode:
		if tk := v.GetToken(); tk != nil {
			return tk.Value
		}
	}
	var x any
	if err := yaml.NodeToValue(v, &x); err == nil {
		if b, err := yaml.MarshalWithOptions(x, yaml.Flow(true)); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	return strings.Join(strings.Fields(v.String()), " ")
}

// matrixNode returns the body's matrix mapping, if any.
func matrixNode(d *doc, body ast.Node) (*ast.MappingValueNode, *ast.MappingNode) {
	root, ok := d.resolve("", body).(*ast.MappingNode)
	if !ok {
		return nil, nil
	}
	mv := findKey(d, root, "matrix")
	if mv == nil {
		return nil, nil
	}
	m, _ := d.resolve("matrix", mv.Value).(*ast.MappingNode)
	return mv, m
}

// plan checks the matrix of a (structurally valid) document.
func (d *doc) plan(body ast.Node) ([]*mkey, ErrorList) {
	saved := d.errs
	d.errs = nil
	defer func() { d.errs = saved }()
	_, m := matrixNode(d, body)
	if m == nil {
		return nil, nil
	}
	var keys []*mkey
	for _, mv := range m.Values {
		key, ktok, ok := d.key("matrix", mv)
		if !ok {
			continue
		}
		mp := fileerr.Key(d.matrixPath(key), key)
		k := &mkey{key: key, tok: ktok}
		segs, err := parseKey(key)
		if err == nil {
			err = checkSchema(segs)
		}
		if err == nil {
			k.canon, _, err = d.locate(body, segs, false, nil)
		}
		if err != nil {
			d.errTok(mp, ktok, "%v", err)
			continue
		}
		k.segs = segs
		k.short = segs[len(segs)-1].name
		seq, _ := d.resolve(mp, mv.Value).(*ast.SequenceNode)
		if seq == nil || len(seq.Values) == 0 {
			d.errf(mp, "needs at least one value")
			continue
		}
		seen := map[string]int{}
		for i, v := range seq.Values {
			text := scalarText(d, v)
			if j, dup := seen[text]; dup {
				d.errf(fileerr.Index(mp, i), "%q is already listed (%s)", text, fileerr.Index(mp, j))
			}
			seen[text] = i
			k.values = append(k.values, text)
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].key < keys[j].key })
	for i, a := range keys {
		for _, b := range keys[:i] {
			_, under1 := underPath(a.canon, b.canon)
			_, under2 := underPath(b.canon, a.canon)
			if under1 || under2 {
				d.errTok(fileerr.Key(d.matrixPath(a.key), a.key), a.tok, "overlaps %s (both set %s)", fileerr.Key(d.matrixPath(b.key), b.key), shorter(a.canon, b.canon))
			}
		}
	}
	n := 1
	for _, k := range keys {
		n *= len(k.values)
		if n > MaxPoints {
			d.errf("matrix", "expands to more than %d points", MaxPoints)
			break
		}
	}
	if len(d.errs) > 0 {
		return nil, d.errs
	}
	return keys, nil
}

// matrixPath is where a matrix key is written: the suite's matrix, or
// tests[i].matrix for a key of a composed test's matrix.
func (d *doc) matrixPath(key string) string {
	if p, ok := d.mprefix[key]; ok {
		return p
	}
	return "matrix"
}

func shorter(a, b string) string {
	if len(a) < len(b) {
		return a
	}
	return b
}

// singleID names the one point of a suite without a matrix: the suite's
// name as a file name ("run run pass" told nothing), or "run" when
// that is empty, too long or the name of the bring-up run.
func singleID(name string) string {
	id := strings.Trim(sanitize(name), "_")
	if strings.Trim(id, ".") == "" || len(id) > maxIDLen || id == "bringup" {
		return "run"
	}
	return id
}

// pointIDs names every point.
func pointIDs(keys []*mkey, choices [][]int) []string {
	ids := make([]string, len(choices))
	if len(keys) == 0 {
		ids[0] = "run"
		return ids
	}
	ok := true
	shorts := map[string]bool{}
	for _, k := range keys {
		if shorts[k.short] {
			ok = false
		}
		shorts[k.short] = true
	}
	// Name parts go by the short names, e.g. lb=ops,size=4MiB.
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return keys[order[a]].short < keys[order[b]].short })
	seen := map[string]bool{}
	for p, ch := range choices {
		parts := make([]string, len(keys))
		for j, i := range order {
			parts[j] = keys[i].short + "=" + sanitize(keys[i].values[ch[i]])
		}
		id := strings.Join(parts, ",")
		if len(id) > maxIDLen || seen[id] {
			ok = false
		}
		seen[id] = true
		ids[p] = id
	}
	if !ok {
		width := max(2, len(strconv.Itoa(len(choices))))
		for p := range ids {
			ids[p] = fmt.Sprintf("p%0*d", width, p+1)
		}
	}
	return ids
}

// sanitize keeps [A-Za-z0-9._+-] and turns each run of anything else into
// one '_' (none at the ends): "[host1, host6]" -> "host1_host6".
func sanitize(s string) string {
	var b strings.Builder
	gap := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '+' || c == '-' {
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			gap = false
			b.WriteByte(c)
		} else {
			gap = true
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// expand validates and builds every point of a document whose base was
// decoded into d.
func (ld *loader) expand(y *yamlx.Doc, d *doc) ([]Point, ErrorList) {
	keys, errs := d.plan(y.Body)
	if errs != nil {
		return nil, errs
	}
	n := 1
	for _, k := range keys {
		n *= len(k.values)
	}
	choices := make([][]int, n)
	for p := range choices {
		ch := make([]int, len(keys))
		rest := p
		for i := len(keys) - 1; i >= 0; i-- {
			ch[i] = rest % len(keys[i].values)
			rest /= len(keys[i].values)
		}
		choices[p] = ch
	}
	ids := pointIDs(keys, choices)

	type found struct {
		e     *Error
		count int
		first string
	}
	var order []*found
	byText := map[string]*found{}
	points := make([]Point, 0, n)
	for p, ch := range choices {
		fresh, perr := ld.parse()
		if perr != nil {
			return nil, perr
		}
		subst, err := ld.substitute(fresh, keys, ch)
		if err != nil {
			return nil, ErrorList{{File: ld.file, Msg: err.Error()}}
		}
		s, pd := ld.build(fresh, subst)
		var na []string
		if ld.na != nil && s != nil && len(pd.errs) == 0 {
			ld.na(s, pd.errf)
			for _, e := range pd.errs {
				na = append(na, e.Error())
			}
			pd.errs = nil
		}
		for _, e := range pd.errs {
			text := e.Error()
			f := byText[text]
			if f == nil {
				f = &found{e: e, first: ids[p]}
				byText[text] = f
				order = append(order, f)
			}
			f.count++
		}
		if len(order) > fileerr.MaxErrors {
			break
		}
		params := make(map[string]string, len(keys))
		for i, k := range keys {
			params[k.key] = k.values[ch[i]]
		}
		if s != nil {
			s.Matrix = nil
		}
		points = append(points, Point{ID: ids[p], Params: params, Suite: s, NotApplicable: na})
	}
	if len(keys) == 0 && len(points) == 1 && points[0].Suite != nil {
		points[0].ID = singleID(points[0].Suite.Name)
	}
	if len(order) > 0 {
		var out ErrorList
		for _, f := range order {
			e := *f.e
			if f.count < n && !strings.HasPrefix(e.Path, "matrix[") {
				e.Msg += " (in matrix point " + f.first + ")"
			}
			out = append(out, &e)
		}
		return nil, out
	}
	return points, nil
}

// substitute puts one value of each matrix key into a freshly parsed body
// and removes the matrix.
func (ld *loader) substitute(y *yamlx.Doc, keys []*mkey, ch []int) ([]subst, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	body := y.Body
	d := newDoc(y, nil)
	d.mprefix = ld.mprefix
	mv, m := matrixNode(d, body)
	if m == nil {
		return nil, errors.New("internal error: matrix vanished")
	}
	type target struct {
		set   func(ast.Node)
		value ast.Node
	}
	targets := make([]target, len(keys))
	subs := make([]subst, len(keys))
	for i, k := range keys {
		kv := findKey(d, m, k.key)
		if kv == nil {
			return nil, fmt.Errorf("internal error: matrix key %q vanished", k.key)
		}
		seq, _ := d.resolve("", kv.Value).(*ast.SequenceNode)
		if seq == nil || ch[i] >= len(seq.Values) {
			return nil, fmt.Errorf("internal error: matrix values of %q vanished", k.key)
		}
		value := seq.Values[ch[i]]
		canon, set, err := d.locate(body, k.segs, true, nodeToken(kv.Key))
		if err != nil {
			return nil, fmt.Errorf("matrix[%q]: %v", k.key, err)
		}
		targets[i] = target{set: set, value: value}
		tok := nodeToken(value)
		if tok == nil {
			tok = nodeToken(kv.Key)
		}
		subs[i] = subst{canon: canon, mpath: fileerr.Index(fileerr.Key(d.matrixPath(k.key), k.key), ch[i]), tok: tok}
	}
	for _, t := range targets {
		t.set(t.value)
	}
	if root, ok := d.resolve("", body).(*ast.MappingNode); ok {
		vals := root.Values[:0]
		for _, v := range root.Values {
			if v != mv {
				vals = append(vals, v)
			}
		}
		root.Values = vals
	}
	return subs, nil
}
