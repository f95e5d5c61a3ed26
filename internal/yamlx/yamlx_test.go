package yamlx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/internal/fuzzbound"
)

func parseTree(t *testing.T, src string) (*Node, string) {
	t.Helper()
	d, errs := Parse("t.yaml", []byte(src), "a test file")
	if errs != nil {
		return nil, errs.Error()
	}
	n, errs := d.Tree()
	return n, errs.Error()
}

// bomb is a billion-laughs document: 10 levels of 10 aliases each.
func bomb() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		ref := fmt.Sprintf("*a%d", i-1)
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(ref+", ", 10), ", "))
	}
	return b.String()
}

func TestErrors(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"duplicate", "a: 1\nb: 2\na: 3\n", "t.yaml:3:1: a: duplicate key (first set on line 1)"},
		{"unknown alias", "a: *x\n", "t.yaml:1:4: a: unknown alias *x"},
		{"alias before anchor", "a: *x\nb: &x 1\n", "t.yaml:1:4: a: alias *x is used before its anchor &x"},
		{"two documents", "a: 1\n---\nb: 2\n", "t.yaml:3:1: a test file holds one YAML document"},
		{"bad merge", "a: {<<: 5}\n", `t.yaml:1:9: a: merge key << wants a mapping or a list of mappings, got "5"`},
		{"key not a string", "a: {~: 1}\n", `t.yaml:1:5: a: key "~" is not a string`},
		{"syntax", "a: [\n", "t.yaml:"},
		{"too deep", strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2), "nested too deeply (more than 64 levels)"},
		{"alias bomb", bomb(), "document too large (more than 250000 values, aliases expanded)"},
		{"recursive alias", "a: &a [*a]\n", "nested too deeply"},
	} {
		_, err := parseTree(t, c.src)
		if err == "" || !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want %q", c.name, err, c.want)
		}
	}
	if _, errs := Parse("big.yaml", make([]byte, MaxBytes+1), "x"); errs == nil || !strings.Contains(errs.Error(), "big.yaml: file too large") {
		t.Errorf("big file: %v", errs)
	}
}

func TestTree(t *testing.T) {
	n, err := parseTree(t, "base: &b {x: 1, y: two}\nm:\n  <<: *b\n  y: 3\nl: [a, ~, 'q']\ne: {}\nz:\n")
	if err != "" {
		t.Fatal(err)
	}
	m := n.Get("m").Value
	if len(m.Entries) != 2 || m.Entries[0].Key != "y" || m.Entries[0].Value.Value != uint64(3) && m.Entries[0].Value.Value != int64(3) ||
		m.Entries[1].Key != "x" || !m.Entries[1].Merged {
		t.Errorf("merged mapping %+v", m.Entries)
	}
	l := n.Get("l").Value
	if len(l.Items) != 3 || l.Items[1] != nil || !l.Items[2].IsString() || l.Items[2].Text != "q" || l.Items[0].Pos != (Pos{5, 5}) {
		t.Errorf("list %+v", l.Items)
	}
	if e := n.Get("e"); e.Value == nil || e.Value.Kind != Map || len(e.Value.Entries) != 0 {
		t.Errorf("empty mapping %+v", e)
	}
	if z := n.Get("z"); z == nil || z.Value != nil {
		t.Errorf("null %+v", z)
	}
	if d, _ := Parse("e.yaml", []byte("# nothing\n"), "x"); d.Body != nil {
		t.Error("empty document has a body")
	}
}

func TestUnknownKey(t *testing.T) {
	known := []string{"name", "size", "workload"}
	for _, c := range []struct{ key, what, want string }{
		{"sise", "", `unknown key (did you mean "size"?)`},
		{"colour", "", "unknown key (want name, size or workload)"},
		{"cpux", "a node property", `unknown key (not a node property)`},
		{"nme", "a node property", `unknown key (not a node property; did you mean "name"?)`},
	} {
		if got := UnknownKey(c.key, known, c.what); got != c.want {
			t.Errorf("UnknownKey(%q, %q) = %q, want %q", c.key, c.what, got, c.want)
		}
	}
}

// FuzzTree checks that no input panics, that every error names the file,
// and that one input stays within the time and memory bounds.
func FuzzTree(f *testing.F) {
	for _, s := range []string{
		"a: 1\n", "a: &x {b: [1, 2]}\nc: *x\nd: {<<: *x, e: f}\n", bomb(), "a: &a [*a]\n",
		strings.Repeat("[", 80), "a: {<<: [*x]}\n", "? [1]\n: 2\n", "!!binary a: 1\n", "a: |\n  x\n", "---\n...\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbound.Default(t, func() {
			d, errs := Parse("f.yaml", data, "a fuzz file")
			if errs == nil {
				_, errs = d.Tree()
			}
			for _, e := range errs {
				if e.File != "f.yaml" || e.Msg == "" {
					t.Fatalf("bad error %+v", e)
				}
			}
		})
	})
}
