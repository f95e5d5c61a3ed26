package containerlab

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fabricbench/fabricbench/inventory"
)

// repoRoot walks up from the test's working directory to the directory
// holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's working directory")
		}
		dir = parent
	}
}

// fabric builds a fabric from a generator spec.
func fabric(t *testing.T, spec string) *inventory.Fabric {
	t.Helper()
	f, err := inventory.Load(spec)
	if err != nil {
		t.Fatalf("inventory.Load(%q): %v", spec, err)
	}
	return f
}

// generate runs Generate and fails the test on error.
func generate(t *testing.T, spec string, opt GenOptions) *Generated {
	t.Helper()
	g, err := Generate(fabric(t, spec), opt)
	if err != nil {
		t.Fatalf("Generate(%q): %v", spec, err)
	}
	return g
}

// writeLab writes a generated lab into a temporary directory, parses it
// back and resolves it.
func writeLab(t *testing.T, g *Generated) (string, *Topology, *Lab) {
	t.Helper()
	dir := t.TempDir()
	if err := g.Write(dir); err != nil {
		t.Fatal(err)
	}
	topo, err := Parse(filepath.Join(dir, g.TopologyFile))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	lab, err := topo.Resolve("", genRuntime(g))
	if err != nil {
		t.Fatalf("Lab: %v", err)
	}
	return dir, topo, lab
}

// genRuntime is the runtime a generated lab is resolved for: SONiC labs
// need containerlab.
func genRuntime(g *Generated) string {
	for _, n := range g.Topology.Nodes {
		if n != nil && n.Kind == "sonic-vs" {
			return RuntimeContainerlab
		}
	}
	return RuntimeNative
}

// genCases are the generated labs most tests check.
var genCases = []struct {
	name string
	spec string
	opt  GenOptions
}{
	{"leafspine", "leafspine:leaves=4,spines=2,hosts_per_leaf=2", GenOptions{Name: "leafspine", RateBps: 1_000_000_000}},
	{"fattree3", "fattree:hosts=16,tiers=3", GenOptions{SRv6: true, RateBps: 200_000_000}},
	{"sonic", "leafspine:leaves=2,spines=2,hosts_per_leaf=2", GenOptions{Name: "sonic", SwitchKind: "sonic-vs"}},
	{"bundle", "leafspine:leaves=2,spines=1,hosts_per_leaf=2,links_per_spine=2", GenOptions{Name: "bundle"}},
}
