package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/history"
	"github.com/fabricbench/fabricbench/results"
)

// junitXSD is the Jenkins xunit plugin's junit-10.xsd (MIT; see
// testdata/junit-10.xsd.LICENSE), the schema junit.xml and compare.xml
// must satisfy.
const junitXSD = "testdata/junit-10.xsd"

// xsdNode is a generic XML element tree.
type xsdNode struct {
	Name     string
	Attrs    map[string]string
	Children []*xsdNode
	Text     string // character data directly inside the element
}

func parseXMLTree(r io.Reader) (*xsdNode, error) {
	dec := xml.NewDecoder(r)
	var stack []*xsdNode
	var root *xsdNode
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &xsdNode{Name: t.Name.Local, Attrs: map[string]string{}}
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" || a.Name.Local == "xmlns" {
					continue
				}
				n.Attrs[a.Name.Local] = a.Value
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.Children = append(p.Children, n)
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].Text += string(t)
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("no root element")
	}
	return root, nil
}

// xsdSchema is the subset of XML Schema junit-10.xsd uses: global
// elements of a simple type (xs:string) or a complex type (named or
// anonymous; mixed or not; a content model of sequence, choice and
// element refs or local elements with minOccurs/maxOccurs; attributes
// with use="required" and types xs:string or a simple type restricted by
// a pattern). A construct outside the subset fails the test rather than
// being ignored.
type xsdSchema struct {
	elements map[string]*xsdNode // global xs:element by name
	types    map[string]*xsdNode // named xs:complexType
	patterns map[string]*regexp.Regexp
}

func loadXSD(t *testing.T, path string) *xsdSchema {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	root, err := parseXMLTree(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	s := &xsdSchema{elements: map[string]*xsdNode{}, types: map[string]*xsdNode{}, patterns: map[string]*regexp.Regexp{}}
	for _, c := range root.Children {
		switch c.Name {
		case "element":
			s.elements[c.Attrs["name"]] = c
		case "complexType":
			s.types[c.Attrs["name"]] = c
		case "simpleType":
			for _, r := range c.Children {
				if r.Name != "restriction" || r.Attrs["base"] != "xs:string" || len(r.Children) != 1 || r.Children[0].Name != "pattern" {
					t.Fatalf("%s: simple type %s is outside the supported subset", path, c.Attrs["name"])
				}
				s.patterns[c.Attrs["name"]] = regexp.MustCompile(`^(?:` + r.Children[0].Attrs["value"] + `)$`)
			}
		default:
			t.Fatalf("%s: top-level <xs:%s> is outside the supported subset", path, c.Name)
		}
	}
	return s
}

// validate checks doc against the schema; it returns every violation,
// each naming the element's path.
func (s *xsdSchema) validate(doc *xsdNode) []string {
	var errs []string
	decl, ok := s.elements[doc.Name]
	if !ok {
		return []string{fmt.Sprintf("root element <%s> is not declared", doc.Name)}
	}
	s.element(doc, decl, "/"+doc.Name, &errs)
	return errs
}

// element validates n against its declaration decl.
func (s *xsdSchema) element(n, decl *xsdNode, where string, errs *[]string) {
	fail := func(format string, args ...any) {
		*errs = append(*errs, where+": "+fmt.Sprintf(format, args...))
	}
	var ct *xsdNode
	switch typ := decl.Attrs["type"]; {
	case typ == "xs:string":
		if len(n.Children) > 0 {
			fail("a string element has child element <%s>", n.Children[0].Name)
		}
		if len(n.Attrs) > 0 {
			fail("a string element has attributes %v", n.Attrs)
		}
		return
	case typ != "":
		if ct = s.types[typ]; ct == nil {
			fail("unknown type %s", typ)
			return
		}
	default:
		for _, c := range decl.Children {
			if c.Name == "complexType" {
				ct = c
			}
		}
		if ct == nil {
			fail("declaration has no type")
			return
		}
	}
	// Attributes.
	declared := map[string]*xsdNode{}
	var model *xsdNode
	for _, c := range ct.Children {
		switch c.Name {
		case "attribute":
			declared[c.Attrs["name"]] = c
		case "sequence", "choice":
			model = c
		default:
			fail("<xs:%s> in a complex type is outside the supported subset", c.Name)
		}
	}
	for name, v := range n.Attrs {
		a, ok := declared[name]
		if !ok {
			fail("attribute %q is not allowed", name)
			continue
		}
		if re := s.patterns[a.Attrs["type"]]; re != nil && !re.MatchString(v) {
			fail("attribute %s=%q does not match type %s", name, v, a.Attrs["type"])
		}
	}
	for name, a := range declared {
		if _, ok := n.Attrs[name]; !ok && a.Attrs["use"] == "required" {
			fail("required attribute %q is missing", name)
		}
	}
	if ct.Attrs["mixed"] != "true" && strings.TrimSpace(n.Text) != "" {
		fail("text %.40q in element-only content", strings.TrimSpace(n.Text))
	}
	// Children: the content model as a regular expression over the
	// sequence of child names.
	locals := map[string]*xsdNode{}
	expr := "^$"
	if model != nil {
		e, err := s.particle(model, locals)
		if err != nil {
			fail("%v", err)
			return
		}
		expr = "^" + e + "$"
	}
	var seq strings.Builder
	for _, c := range n.Children {
		seq.WriteString("<" + c.Name + ">")
	}
	if !regexp.MustCompile(expr).MatchString(seq.String()) {
		fail("children %s do not match the content model %s", seq.String(), expr)
		return
	}
	for i, c := range n.Children {
		d := locals[c.Name]
		if d == nil {
			d = s.elements[c.Name]
		}
		if d == nil {
			fail("child <%s> has no declaration", c.Name)
			continue
		}
		s.element(c, d, fmt.Sprintf("%s/%s[%d]", where, c.Name, i), errs)
	}
}

// particle translates a content-model particle into a regular expression
// over "<name>" tokens; local element declarations go into locals.
func (s *xsdSchema) particle(p *xsdNode, locals map[string]*xsdNode) (string, error) {
	var e string
	switch p.Name {
	case "element":
		name := p.Attrs["ref"]
		if name == "" {
			name = p.Attrs["name"]
			locals[name] = p
		}
		e = regexp.QuoteMeta("<" + name + ">")
	case "sequence", "choice":
		var parts []string
		for _, c := range p.Children {
			ce, err := s.particle(c, locals)
			if err != nil {
				return "", err
			}
			parts = append(parts, ce)
		}
		sep := ""
		if p.Name == "choice" {
			sep = "|"
		}
		e = "(?:" + strings.Join(parts, sep) + ")"
	default:
		return "", fmt.Errorf("<xs:%s> in a content model is outside the supported subset", p.Name)
	}
	min, max := p.Attrs["minOccurs"], p.Attrs["maxOccurs"]
	if min == "" {
		min = "1"
	}
	switch {
	case max == "unbounded":
		return fmt.Sprintf("(?:%s){%s,}", e, min), nil
	case max == "":
		max = "1"
	}
	return fmt.Sprintf("(?:%s){%s,%s}", e, min, max), nil
}

// checkJUnitSchema validates one document with the Go checker and, when
// it is installed, with xmllint (Debian's libxml2-utils, which
// scripts/test.sh installs).
func checkJUnitSchema(t *testing.T, name string, doc []byte) {
	t.Helper()
	s := loadXSD(t, junitXSD)
	root, err := parseXMLTree(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("%s does not parse: %v", name, err)
	}
	for _, e := range s.validate(root) {
		t.Errorf("%s: %s", name, e)
	}
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Logf("xmllint not installed (Debian: libxml2-utils; scripts/test.sh installs it): %s checked by the Go schema checker only", name)
		return
	}
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(xmllint, "--noout", "--schema", junitXSD, file).CombinedOutput()
	if err != nil {
		t.Errorf("xmllint --schema %s %s: %v\n%s", junitXSD, name, err, out)
	}
}

// The Go checker must reject what the schema rejects, or a passing
// schema test would prove nothing.
func TestJUnitSchemaCheckerRejects(t *testing.T) {
	s := loadXSD(t, junitXSD)
	for _, c := range []struct{ name, doc, want string }{
		{"skipped on testsuites", `<testsuites skipped="0"><testsuite name="a" tests="0" failures="0" errors="0"/></testsuites>`, `attribute "skipped" is not allowed`},
		{"missing tests", `<testsuites><testsuite name="a" failures="0" errors="0"/></testsuites>`, `required attribute "tests" is missing`},
		{"bad time", `<testsuites time="1.5s"/>`, `does not match type SUREFIRE_TIME`},
		{"properties in a testcase", `<testsuites><testsuite name="a" tests="1" failures="0" errors="0"><testcase name="k"><properties/></testcase></testsuite></testsuites>`, `do not match the content model`},
		{"property without value", `<testsuites><testsuite name="a" tests="0" failures="0" errors="0"><properties><property name="x"/></properties></testsuite></testsuites>`, `required attribute "value" is missing`},
		{"text in testsuites", `<testsuites>hello</testsuites>`, `element-only content`},
		{"child of system-out", `<testsuites><testsuite name="a" tests="0" failures="0" errors="0"><system-out><b/></system-out></testsuite></testsuites>`, `string element has child element`},
	} {
		root, err := parseXMLTree(strings.NewReader(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		errs := s.validate(root)
		if !strings.Contains(strings.Join(errs, "\n"), c.want) {
			t.Errorf("%s: errors %q, want one containing %q", c.name, errs, c.want)
		}
	}
	// And it accepts a minimal valid document.
	root, _ := parseXMLTree(strings.NewReader(`<testsuites name="x" time="1,234.5"><testsuite name="a" tests="1" failures="1" errors="0" skipped="0" time="0.1"><properties><property name="p" value="v"/></properties><testcase name="k" classname="c" time="0"><failure message="m" type="t">text</failure><system-out>o</system-out></testcase><system-out>s</system-out><system-err>e</system-err></testsuite></testsuites>`))
	if errs := s.validate(root); len(errs) > 0 {
		t.Errorf("valid document rejected: %q", errs)
	}
}

// junit.xml of every shape the fixture covers (failures with culprits,
// errors, skipped KPIs, runs in error, interrupted and skipped runs,
// bring-up checks, a baseline comparison) and compare.xml satisfy the
// Jenkins junit-10 schema.
func TestJUnitValidAgainstJenkinsSchema(t *testing.T) {
	render := func(r *results.Results, extra []junitSuite) []byte {
		var b bytes.Buffer
		if err := junitWith(&b, r, extra); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	r, _ := fixture()
	checkJUnitSchema(t, "junit.xml", render(r, nil))

	r, _ = fixture()
	r.Runs[1].Status = results.Error
	r.Runs[1].Error = "sim: topology has no route from host3 to host9\n(details)"
	r.Runs[1].KPIs = append(r.Runs[1].KPIs, results.KPI{Name: "x.skipped", Verdict: results.Skipped}, results.KPI{Name: "x.odd", Verdict: "maybe"})
	r.Runs = append(r.Runs, results.Run{ID: "r3", Status: results.Skipped}, results.Run{ID: "r4", Status: results.Interrupted})
	checkJUnitSchema(t, "junit-errors.xml", render(r, nil))

	checkJUnitSchema(t, "junit-bringup.xml", render(bringupResults(), nil))

	c := compareFixture()
	checkJUnitSchema(t, "junit-baseline.xml", render(r, []junitSuite{compareSuite(c)}))
	var b bytes.Buffer
	if err := CompareJUnit(&b, c); err != nil {
		t.Fatal(err)
	}
	checkJUnitSchema(t, "compare.xml", b.Bytes())
}

// compareFixture is a comparison with a row of every status.
func compareFixture() *history.Comparison {
	v := func(x float64) *float64 { return &x }
	return &history.Comparison{
		Base: history.Side{Dir: "runs/n1", Suite: "nightly"},
		New:  history.Side{Dir: "runs/n2", Suite: "nightly"},
		Rows: []history.Row{
			{Point: "r1", KPI: "perm.busbw", Metric: "busbw", Scope: "perm", Unit: "Gbps", Op: ">=", Threshold: 80, Base: v(95), New: v(70), Delta: v(-25), Rel: v(-0.263), Tolerance: "5%", Status: history.Regressed},
			{Point: "r1", KPI: "perm.fct_p99_us", Metric: "fct_p99_us", Scope: "perm", Unit: "us", Op: "<=", Threshold: 500, Base: v(300), New: v(290), Tolerance: "default", Status: history.Improved},
			{Point: "r1", KPI: "a2a.completion", Metric: "completion", Scope: "a2a", Unit: "us", Op: "<=", Threshold: 3000, New: v(100), Tolerance: "default", Status: history.New},
			{Point: "r2", KPI: "fabric.drops", Metric: "drops", Scope: "fabric", Op: "==", Threshold: 0, Base: v(0), NewVerdict: results.Error, Tolerance: "default", Status: history.NotComparable, Note: "the new run has no value"},
		},
	}
}
