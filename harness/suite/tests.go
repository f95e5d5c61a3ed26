package suite

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/fabricbench/fabricbench/internal/fileerr"
	"github.com/fabricbench/fabricbench/internal/yamlx"
	"github.com/fabricbench/fabricbench/kpis"
)

// Test is one test of a suite's tests section: a named part of a
// benchmark methodology (e.g. a section of the IETF BMWG AI-fabric draft)
// with its own jobs, KPIs, faults, settings and sweep, run on the suite's
// fabric, features and transport. A suite with tests runs every test's
// points, test by test: each point's suite is the suite's document with
// the test's jobs, kpis and faults appended to the suite's own, the Set
// values put in place (keys as in a matrix) and the test's matrix swept
// together with the suite's (a key in both is an error). Point IDs start
// with the test's name ("pfc-incast,senders=8").
type Test struct {
	// Name is required, unique and matches [A-Za-z0-9_.-]+.
	Name string `yaml:"name"`
	// Section is the methodology section the test implements (e.g. "1.1
	// Baseline Throughput"); Title a one-line description. Reports show
	// both.
	Section string `yaml:"section"`
	Title   string `yaml:"title"`
	// Set are field values of this test, keys as in a matrix
	// ("features.pfc.enabled", "jobs[name=burst].size").
	Set    map[string]any   `yaml:"set"`
	Jobs   []Job            `yaml:"jobs"`
	KPIs   []KPI            `yaml:"kpis"`
	Faults []Fault          `yaml:"faults"`
	Matrix map[string][]any `yaml:"matrix"`
	// Primary is the test's primary metric: the one its repeatability
	// statement (iterations, coefficient of variation) is about.
	Primary *Primary `yaml:"primary"`
	// Search, when set, makes the test a binary search (RFC 2544 26.1)
	// over the values of one of its matrix keys, in the order listed
	// (increasing load): the run probes the middle value, keeps the upper
	// half when every KPI of that point passes and the lower half
	// otherwise, until one value is left. Only the probed points run;
	// the result is the largest value at which the test passes.
	Search *Search `yaml:"search"`
	// Reference names the point the test's other points are compared
	// with in reports, by one matrix value (e.g. {transport.lb: ecmp}).
	Reference map[string]any `yaml:"reference"`
	// Needs lists what the test needs beyond its suite fields, checked
	// against the backend like features (harness.TestNeeds: gpu,
	// one-way-delay, ...). A test the backend cannot run is planned as
	// not applicable, with the reason, and reported so.
	Needs []string `yaml:"needs"`
	// LeakCheck samples the harness process's resources (goroutines, open
	// file descriptors, heap in use after a garbage collection) after each
	// of the test's runs and fails the test when they grow with the runs
	// (IETF BMWG draft, resource leak detection). On the simulator the
	// transport endpoints run in the harness process. Needs 4 or more runs
	// (sweep seed); run them one at a time (--parallel 1) for exact counts.
	LeakCheck bool `yaml:"leak_check"`
}

// Primary names a test's primary metric (a KPI metric and its scope: a
// job name, or fabric).
type Primary struct {
	Metric string `yaml:"metric"`
	Scope  string `yaml:"scope"`
}

// Search is a binary search over the values of a test's matrix key.
type Search struct {
	// Key is a key of the test's matrix (as written there).
	Key string `yaml:"key"`
}

// MaxTests bounds a suite's tests.
const MaxTests = 64

// testsField is the tests section's key.
const testsField = "tests"

// composeTest rewrites a freshly parsed document into the document of
// test ti: the test's jobs, kpis and faults are appended to the suite's,
// its set values put in place, its matrix merged into the suite's and the
// tests section removed. It returns the substitutions that make problems
// in the moved values report at their place in the tests section, and the
// keys of the test's matrix (for their paths in errors).
func composeTest(y *yamlx.Doc, ti int) ([]subst, map[string]string, error) {
	d := newDoc(y, nil)
	root, ok := d.resolve("", y.Body).(*ast.MappingNode)
	if !ok {
		return nil, nil, errors.New("the suite is not a mapping")
	}
	tv := findKey(d, root, testsField)
	if tv == nil {
		return nil, nil, errors.New("internal error: the tests section vanished")
	}
	seq, ok := d.resolve(testsField, tv.Value).(*ast.SequenceNode)
	if !ok || ti >= len(seq.Values) {
		return nil, nil, errors.New("internal error: the test vanished")
	}
	tpath := fileerr.Index(testsField, ti)
	tm, ok := d.resolve(tpath, seq.Values[ti]).(*ast.MappingNode)
	if !ok {
		return nil, nil, fmt.Errorf("%s is not a mapping", tpath)
	}
	var subs []subst
	// Lists appended to the suite's.
	for _, field := range []string{"jobs", "kpis", "faults"} {
		mv := findKey(d, tm, field)
		if mv == nil {
			continue
		}
		from, _ := d.resolve(tpath+"."+field, mv.Value).(*ast.SequenceNode)
		if from == nil {
			continue
		}
		to := rootList(d, root, field, nodeToken(mv.Key))
		for j, v := range from.Values {
			subs = append(subs, subst{canon: fileerr.Index(field, len(to.Values)), mpath: fileerr.Index(tpath+"."+field, j), tok: nodeToken(v)})
			to.Values = append(to.Values, v)
		}
	}
	// Set values (their substitutions first: they are more specific than
	// the lists').
	var sets []subst
	if mv := findKey(d, tm, "set"); mv != nil {
		if m, ok := d.resolve(tpath+".set", mv.Value).(*ast.MappingNode); ok {
			for _, e := range m.Values {
				key, ktok, ok := d.key(tpath+".set", e)
				if !ok {
					continue
				}
				segs, err := parseKey(key)
				if err == nil {
					err = checkSchema(segs)
				}
				if err == nil && len(segs) > 0 && segs[0].name == testsField {
					err = errors.New("a test cannot set the tests section")
				}
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %v", fileerr.Key(tpath+".set", key), err)
				}
				canon, set, err := d.locate(y.Body, segs, true, ktok)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %v", fileerr.Key(tpath+".set", key), err)
				}
				set(e.Value)
				sets = append(sets, subst{canon: canon, mpath: fileerr.Key(tpath+".set", key), tok: nodeToken(e.Value)})
			}
		}
	}
	// The test's matrix joins the suite's.
	keys := map[string]string{}
	if mv := findKey(d, tm, "matrix"); mv != nil {
		if from, ok := d.resolve(tpath+".matrix", mv.Value).(*ast.MappingNode); ok && len(from.Values) > 0 {
			to := rootMatrix(d, root, nodeToken(mv.Key))
			for _, e := range from.Values {
				key, _, ok := d.key(tpath+".matrix", e)
				if !ok {
					continue
				}
				if findKey(d, to, key) != nil {
					return nil, nil, fmt.Errorf("%s: the suite's matrix sweeps %q too", fileerr.Key(tpath+".matrix", key), key)
				}
				keys[key] = tpath + ".matrix"
				to.Values = append(to.Values, e)
			}
		}
	}
	vals := root.Values[:0]
	for _, v := range root.Values {
		if v != tv {
			vals = append(vals, v)
		}
	}
	root.Values = vals
	return append(sets, subs...), keys, nil
}

// rootList returns the root's list named field, making an empty one
// (at tok) when the suite has none.
func rootList(d *doc, root *ast.MappingNode, field string, tok *token.Token) *ast.SequenceNode {
	if mv := findKey(d, root, field); mv != nil {
		if s, ok := d.resolve(field, mv.Value).(*ast.SequenceNode); ok {
			return s
		}
		s := ast.Sequence(token.New("-", "-", posOf(tok)), false)
		mv.Value = s
		return s
	}
	s := ast.Sequence(token.New("-", "-", posOf(tok)), false)
	key := ast.String(token.String(field, field, posOf(tok)))
	root.Values = append(root.Values, ast.MappingValue(token.String(":", ":", posOf(tok)), key, s))
	return s
}

// rootMatrix returns the root's matrix mapping, making one when the
// suite has none.
func rootMatrix(d *doc, root *ast.MappingNode, tok *token.Token) *ast.MappingNode {
	if mv := findKey(d, root, "matrix"); mv != nil {
		if m, ok := d.resolve("matrix", mv.Value).(*ast.MappingNode); ok {
			return m
		}
		m := ast.Mapping(token.String("", "", posOf(tok)), false)
		mv.Value = m
		return m
	}
	m := ast.Mapping(token.String("", "", posOf(tok)), false)
	key := ast.String(token.String("matrix", "matrix", posOf(tok)))
	root.Values = append(root.Values, ast.MappingValue(token.String(":", ":", posOf(tok)), key, m))
	return m
}

// forTest returns a loader of test ti's documents.
func (ld *loader) forTest(ti int, t *Test) *loader {
	tl := *ld
	tl.test, tl.cur = ti, t
	tl.comp, tl.mprefix = nil, nil
	return &tl
}

// testPoints expands every test of a suite whose base (the document with
// its tests section) was decoded: each test's composed document is
// decoded, validated and expanded on its own. check runs on the points.
func (ld *loader) testPoints(base *Suite, check, na CheckFunc) ([]Point, ErrorList) {
	var all []Point
	var errs ErrorList
	for ti := range base.Tests {
		t := &base.Tests[ti]
		tl := ld.forTest(ti, t)
		y, perr := tl.parse()
		if perr != nil {
			errs = append(errs, perr...)
			continue
		}
		tb, d := tl.build(y, nil)
		if tb == nil || len(d.bad) > 0 || len(d.errs) > 0 {
			errs = append(errs, inTest(d.errs, t.Name)...)
			continue
		}
		tl.check, tl.na = check, na
		pts, perrs := tl.expand(y, d)
		if perrs != nil {
			errs = append(errs, inTest(perrs, t.Name)...)
			continue
		}
		for i := range pts {
			p := &pts[i]
			if len(p.Params) == 0 {
				p.ID = t.Name
			} else {
				p.ID = t.Name + "," + p.ID
			}
			if p.Params == nil {
				p.Params = map[string]string{}
			}
			p.Params[testsField] = t.Name
			p.Test = t
			if p.Suite != nil {
				p.Suite.Tests = nil
			}
		}
		all = append(all, pts...)
		if len(errs) > fileerr.MaxErrors {
			break
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if len(all) > MaxPoints {
		return nil, ErrorList{{File: ld.file, Path: testsField, Msg: fmt.Sprintf("the tests expand to %d points, more than the maximum of %d", len(all), MaxPoints)}}
	}
	return all, nil
}

// inTest says which test a problem of a composed document is in, unless
// its path says so already.
func inTest(errs ErrorList, name string) ErrorList {
	out := make(ErrorList, 0, len(errs))
	for _, e := range errs {
		c := *e
		if !strings.HasPrefix(c.Path, testsField+"[") {
			c.Msg += " (in test " + name + ")"
		}
		out = append(out, &c)
	}
	return out
}

// tests checks the tests section of a suite (its fields; the jobs, KPIs
// and faults it brings are checked in each test's points).
func (c *checker) tests() {
	s := c.s
	if len(s.Tests) == 0 {
		if c.d.has(testsField) {
			c.errf(testsField, "needs at least one test")
		}
		return
	}
	if len(s.Tests) > MaxTests {
		c.errf(testsField, "%d tests, more than the maximum of %d", len(s.Tests), MaxTests)
	}
	names := map[string]int{}
	for i := range s.Tests {
		t := &s.Tests[i]
		p := fileerr.Index(testsField, i)
		switch k, dup := names[t.Name]; {
		case t.Name == "":
			c.errf(p+".name", "required")
		case !jobNameRE.MatchString(t.Name) || t.Name == "bringup":
			c.errf(p+".name", "%q may only contain letters, digits, '_', '.' and '-' (and is not bringup)", t.Name)
		case dup:
			c.errf(p+".name", "%q is already used by tests[%d]", t.Name, k)
		default:
			names[t.Name] = i
		}
		for k := range t.Set {
			if _, ok := t.Matrix[k]; ok {
				c.errf(fileerr.Key(p+".set", k), "the test's matrix sweeps %q too", k)
			}
		}
		if t.Search != nil {
			vals, ok := t.Matrix[t.Search.Key]
			switch {
			case t.Search.Key == "":
				c.errf(p+".search.key", "required (a key of the test's matrix)")
			case !ok:
				c.errf(p+".search.key", "%q is not a key of the test's matrix (%s)", t.Search.Key, orList(mapKeys(t.Matrix)))
			case len(vals) < 2:
				c.errf(p+".search.key", "a search needs at least 2 values of %q", t.Search.Key)
			}
		}
		if len(t.Reference) > 1 {
			c.errf(p+".reference", "names one matrix value (e.g. {transport.lb: ecmp}), not %d", len(t.Reference))
		}
		for k, v := range t.Reference {
			vals, ok := t.Matrix[k]
			if !ok {
				vals, ok = s.Matrix[k]
			}
			if !ok {
				c.errf(fileerr.Key(p+".reference", k), "%q is not a matrix key of the test or the suite", k)
				continue
			}
			found := false
			for _, x := range vals {
				found = found || fmt.Sprint(x) == fmt.Sprint(v)
			}
			if !found {
				c.errf(fileerr.Key(p+".reference", k), "%v is not one of the matrix values of %q", v, k)
			}
		}
		if pr := t.Primary; pr != nil {
			if pr.Metric == "" {
				c.errf(p+".primary.metric", "required")
			} else if _, ok := kpis.Info(pr.Metric); !ok {
				c.errf(p+".primary.metric", "unknown metric %q", pr.Metric)
			}
			if pr.Scope == "" {
				pr.Scope = DefaultScope
			}
		}
		for j, n := range t.Needs {
			if strings.TrimSpace(n) == "" {
				c.errf(fileerr.Index(p+".needs", j), "empty")
			}
		}
	}
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
