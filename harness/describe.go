package harness

import (
	"fmt"

	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/inventory"
)

// Describer is implemented by backends that can say what a planned point
// would deploy, without side effects (fabricbench plan).
type Describer interface {
	Describe(p *runspec.RunSpec) []string
}

// DescribeDeploy returns what the named backend would deploy for p, one
// line each; nothing is created.
func DescribeDeploy(backend string, p *runspec.RunSpec) []string {
	b, err := newBackend(backend)
	if err != nil {
		return []string{err.Error()}
	}
	if d, ok := b.(Describer); ok {
		return d.Describe(p)
	}
	return []string{fmt.Sprintf("the %s backend: fabric %s, %d jobs, telemetry every %v", backend, p.Fabric.Name, len(p.Jobs), p.Interval)}
}

// FabricCounts returns the switches, hosts and links of f.
func FabricCounts(f *inventory.Fabric) (switches, hosts, links int) {
	for i := range f.Nodes {
		if f.Nodes[i].IsSwitch() {
			switches++
		}
	}
	return switches, f.NumHosts(), len(f.Links)
}
