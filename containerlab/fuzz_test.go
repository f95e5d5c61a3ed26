package containerlab

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fabricbench/fabricbench/internal/fuzzbound"
)

// ParseBytes, Lab and Marshal never panic, and what Marshal writes parses
// again.
func FuzzParse(f *testing.F) {
	f.Add([]byte(okDoc))
	f.Add([]byte("name: x\ntopology:\n  defaults: &d {kind: linux}\n  nodes:\n    a: {<<: *d, image: frr}\n    b: *d\n  links:\n    - type: veth\n      endpoints: [{node: a, interface: eth1, ipv4: 198.18.250.0/31}, {node: b, interface: eth1}]\n      vars: {rate: 1gbit}\n"))
	f.Add([]byte("name: x\ntopology:\n  nodes: {a: , b: {kind: sonic-vs}}\n  links: [{endpoints: [\"a:e\", \"b:e\"], mtu: 9000}]\nmgmt: {ipv4-subnet: auto}\nsettings: {x: [1, 2, {y: null}]}\n"))
	if b, err := os.ReadFile(filepath.Join("..", "examples", "labs", "leafspine.clab.yml")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var topo *Topology
		var err error
		fuzzbound.Default(t, func() { topo, err = ParseBytes("fuzz.clab.yml", data) })
		if err != nil {
			return
		}
		_, _ = topo.Lab(t.TempDir())
		y, err := topo.Marshal()
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		if _, err := ParseBytes("again.clab.yml", y); err != nil {
			t.Fatalf("Marshal output does not parse: %v\n%s", err, y)
		}
	})
}
