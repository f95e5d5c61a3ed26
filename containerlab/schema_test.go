package containerlab

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// clabSchema compiles containerlab's JSON schema from
// ../shared/reference/containerlab/clab.schema.json next to the
// repository; the test is skipped when it is absent.
func clabSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	p := filepath.Join(repoRoot(t), "..", "shared", "reference", "containerlab", "clab.schema.json")
	f, err := os.Open(p)
	if err != nil {
		t.Skipf("containerlab JSON schema not available (%v); schema validation skipped", err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	c := jsonschema.NewCompiler()
	url := "file://" + filepath.ToSlash(p)
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("containerlab schema does not compile: %v", err)
	}
	return s
}

// validateYAML converts a YAML document to JSON and validates it.
func validateYAML(s *jsonschema.Schema, y []byte) error {
	var v any
	if err := yaml.Unmarshal(y, &v); err != nil {
		return err
	}
	j, err := json.Marshal(v)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

func TestSchemaGeneratedTopologies(t *testing.T) {
	s := clabSchema(t)
	for _, c := range genCases {
		t.Run(c.name, func(t *testing.T) {
			g := generate(t, c.spec, c.opt)
			if err := validateYAML(s, g.Files[g.TopologyFile]); err != nil {
				t.Fatalf("generated %s does not validate against containerlab's schema:\n%v", g.TopologyFile, err)
			}
		})
	}
}

// The schema check must be able to fail: deliberately broken topologies
// are rejected.
func TestSchemaRejectsBrokenTopologies(t *testing.T) {
	s := clabSchema(t)
	g := generate(t, "leafspine:leaves=2,spines=1,hosts_per_leaf=1", GenOptions{Name: "broken"})
	good := string(g.Files[g.TopologyFile])
	if err := validateYAML(s, []byte(good)); err != nil {
		t.Fatalf("the unbroken topology must validate: %v", err)
	}
	// Each case breaks the topology in one place; where is the instance
	// location the validator must blame. (Short-form endpoint patterns,
	// "^\S+:\S+$", are not checked: the schema declares draft-07 but
	// writes them with the 2020-12 keyword prefixItems, which draft-07
	// validators ignore; ParseBytes checks them.)
	cases := []struct {
		name, old, new, where string
	}{
		{"kind frr", "kind: linux\n      image: quay.io/frrouting/frr", "kind: frr\n      image: quay.io/frrouting/frr", "/topology/nodes/leaf0/kind"},
		{"unknown node property", "      mgmt-ipv4:", "      cpux: 2\n      mgmt-ipv4:", "/topology/nodes/host0"},
		{"bad mgmt-ipv4", "mgmt-ipv4: 198.19.", "mgmt-ipv4: x198.19.", "/topology/nodes/host0/mgmt-ipv4"},
		{"empty label", "fabricbench.role: leaf", "fabricbench.role: \"\"", "/topology/nodes/leaf0/labels/fabricbench.role"},
		{"endpoint without interface", "          interface: eth1\n", "          intf: eth1\n", "/topology/links/0"},
		{"bad endpoint ipv4", "ipv4: 198.18.0.1/31", "ipv4: 198.18.0.1", "/topology/links/0"},
		{"no name", "name: broken\n", "", "missing property 'name'"},
		{"mtu 0", "          ipv6: fd00:fb:1::/127\n", "          ipv6: fd00:fb:1::/127\n      mtu: 0\n", "/topology/links/0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(good, c.old) {
				t.Fatalf("test bug: %q not in the generated topology", c.old)
			}
			bad := strings.Replace(good, c.old, c.new, 1)
			err := validateYAML(s, []byte(bad))
			if err == nil {
				t.Fatalf("broken topology (%s) passed schema validation:\n%s", c.name, bad)
			}
			if !strings.Contains(err.Error(), c.where) {
				t.Fatalf("schema error does not mention %s:\n%v", c.where, err)
			}
		})
	}
}
