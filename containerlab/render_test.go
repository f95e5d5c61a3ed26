package containerlab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	env := map[string]string{"LAB": "ci", "EMPTY": "", "N": "4"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cases := map[string]string{
		"name: ${LAB}":                "name: ci",
		"name: $LAB-x":                "name: ci-x",
		"name: ${MISSING}":            "name: $MISSING",
		"name: $MISSING":              "name: $MISSING",
		"name: ${EMPTY}":              "name: $EMPTY",
		"name: ${MISSING:=dflt}":      "name: dflt",
		"name: ${MISSING:-dflt}":      "name: dflt",
		"name: ${EMPTY:-dflt}":        "name: dflt",
		"name: ${EMPTY-dflt}":         "name: ",
		"name: ${LAB:=dflt}":          "name: ci",
		"name: ${LAB:+set}":           "name: set",
		"name: ${MISSING:+set}":       "name: ",
		"cost: $$5":                   "cost: $5",
		`sh -c "echo $1 ${1}"`:        `sh -c "echo $1 ${1}"`,
		"a: ${MISSING:-${LAB}-x}":     "a: ci-x",
		"open: ${LAB":                 "open: ${LAB",
		"n: ${N}0":                    "n: 40",
		"p4ss: P4s$w0rd":              "p4ss: P4s$w0rd",
		"price: 5$":                   "price: 5$",
		"mixed: ${LAB}/${MISSING:=x}": "mixed: ci/x",
	}
	for in, want := range cases {
		if got := Expand(in, lookup); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRenderTemplate(t *testing.T) {
	dir := t.TempDir()
	topo := filepath.Join(dir, "fab.clab.yml")
	doc := `name: {{ .name }}
topology:
  nodes:
{{- range $i := seq 1 .leaves }}
    leaf{{ $i }}: {kind: linux, image: alpine}
{{- end }}
    extra: {kind: linux, image: alpine, labels: {n: "{{ add .leaves 1 }}", j: '{{ ToJSON .list }}', s: "{{ strings.ReplaceAll "-" "_" .name }}", c: "{{ conv.Join .list "," }}", r: "{{ rem 7 3 }}"}}
`
	if err := os.WriteFile(topo, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	// containerlab's variables file: the topology path minus its last
	// extension, then _vars.yaml.
	if err := os.WriteFile(filepath.Join(dir, "fab.clab_vars.yaml"), []byte("name: my-lab\nleaves: 3\nlist: [a, b]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	top, err := ParseFile(topo, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if top.Name != "my-lab" || len(top.Nodes) != 4 || top.Nodes["leaf3"] == nil {
		t.Fatalf("rendered topology: name %q, nodes %v", top.Name, sortedKeys(top.Nodes))
	}
	if top.Source == nil || top.Source.VarsFile != filepath.Join(dir, "fab.clab_vars.yaml") || !top.Source.Changed || !top.Source.Shifted {
		t.Fatalf("source %+v", top.Source)
	}
	l := top.Nodes["extra"].Labels
	if l["n"] != "4" || l["j"] != `["a","b"]` || l["s"] != "my_lab" || l["c"] != "a,b" || l["r"] != "1" {
		t.Fatalf("template functions: %v", l)
	}
	// Errors in the rendered text name it, so that nobody looks for line
	// 9 in the file as written.
	bad := strings.Replace(doc, "image: alpine}\n{{- end }}", "imag: alpine}\n{{- end }}", 1)
	if err := os.WriteFile(topo, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ParseFile(topo, RenderOptions{})
	if err == nil || !strings.Contains(err.Error(), "fab.clab.yml (rendered):5:") {
		t.Fatalf("want an error in the rendered text named so, got %v", err)
	}
	// Template errors are positioned in the file as written (1-based
	// columns).
	if err := os.WriteFile(topo, []byte("name: x\n  {{ nosuch }}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ParseFile(topo, RenderOptions{})
	var list ErrorList
	if !errors.As(err, &list) || list[0].Line != 2 || !strings.Contains(err.Error(), `function "nosuch" not defined`) {
		t.Fatalf("template error: %v", err)
	}
}

func TestSeqAndArith(t *testing.T) {
	for _, c := range []struct {
		args []any
		want string
	}{
		{[]any{3}, "[1 2 3]"}, {[]any{4, 8}, "[4 5 6 7 8]"}, {[]any{4, 8, 2}, "[4 6 8]"},
		{[]any{8, 4, 2}, "[8 6 4]"}, {[]any{"2", "4"}, "[2 3 4]"}, {[]any{5, 5}, "[5]"},
	} {
		got, err := seq(c.args...)
		if err != nil || fmt.Sprint(got) != c.want {
			t.Errorf("seq(%v) = %v, %v; want %s", c.args, got, err, c.want)
		}
	}
	if _, err := seq(1, 1e9); err == nil {
		t.Error("seq of a billion numbers must be refused")
	}
	if _, err := arith(int64(1)<<61, int64(1)<<61, '+'); err != nil {
		t.Errorf("2^61 + 2^61: %v", err)
	}
	if _, err := arith(int64(1)<<62, int64(1)<<62, '+'); err == nil {
		t.Error("2^62 + 2^62 must overflow")
	}
	if _, err := arith(int64(1)<<62, int64(1)<<62, '*'); err == nil {
		t.Error("2^62 * 2^62 must overflow")
	}
	if v, err := arith(1.5, 2, '+'); err != nil || v != 3.5 {
		t.Errorf("1.5 + 2 = %v, %v", v, err)
	}
	if _, err := arith("x", 2, '-'); err == nil {
		t.Error(`"x" - 2 must be refused`)
	}
	fm := templateFuncs()
	div := fm["div"].(func(a, b any) (any, error))
	rem := fm["rem"].(func(a, b any) (any, error))
	if v, err := div(7, 2); err != nil || v != 3.5 {
		t.Errorf("div 7 2 = %v, %v", v, err)
	}
	if v, err := rem(7, "3"); err != nil || v != int64(1) {
		t.Errorf("rem 7 3 = %v (%T), %v", v, v, err)
	}
	for _, c := range []struct {
		f    func(a, b any) (any, error)
		a, b any
	}{{div, 1, 0}, {div, "x", 1}, {div, 1, "y"}, {rem, 1, 0}, {rem, "x", 1}, {rem, 1, "y"}} {
		if v, err := c.f(c.a, c.b); err == nil {
			t.Errorf("%v, %v: %v, want an error", c.a, c.b, v)
		}
	}
}

// Roles come from the graph when no label gives them.
func TestInferRoles(t *testing.T) {
	doc := `name: roles
mgmt: {ipv4-subnet: 198.18.210.0/24}
topology:
  defaults: {kind: linux, image: alpine}
  nodes:
    core: {image: quay.io/frrouting/frr:8.4.1}
    agg: {image: quay.io/frrouting/frr:8.4.1}
    tor: {image: quay.io/frrouting/frr:8.4.1}
    fw: {exec: ["sysctl -w net.ipv4.ip_forward=1", "ip route add 198.19.0.0/16 via 198.18.0.1"]}
    br0: {kind: bridge}
    h1: {}
    h2: {}
    h3: {labels: {fabricbench.role: leaf}}
    lonely: {image: quay.io/frrouting/frr:8.4.1}
    peer: {image: quay.io/frrouting/frr:8.4.1}
  links:
    - endpoints: [h1:eth1, br0:p1]
    - endpoints: [h2:eth1, br0:p2]
    - endpoints: [tor:eth1, br0:p3]
    - endpoints: [tor:eth2, agg:eth1]
    - endpoints: [agg:eth2, core:eth1]
    - endpoints: [fw:eth1, h2:eth2]
    - endpoints: [fw:eth2, core:eth2]
    - endpoints: [h3:eth1, core:eth3]
    - endpoints: [lonely:eth1, peer:eth1]
`
	top, err := ParseBytes("roles.clab.yml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	lab, err := top.Resolve(t.TempDir(), RuntimeContainerlab)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"h1": RoleHost, "h2": RoleHost, "br0": RoleBridge, "tor": RoleLeaf, "fw": RoleLeaf,
		"agg": RoleSpine, "core": RoleSpine, "h3": RoleLeaf, "lonely": RoleSwitch, "peer": RoleSwitch}
	for name, role := range want {
		n := lab.NodeByName(name)
		if n.Role != role {
			t.Errorf("%s: role %s, want %s", name, n.Role, role)
		}
		if name == "h3" && n.RoleInferred {
			t.Error("h3's role comes from its label, not inferred")
		}
	}
}
