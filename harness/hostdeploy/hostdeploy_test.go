package hostdeploy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/agents/fleet"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/inventory"
)

// fabric is a small leaf-spine: 4 hosts, 2 leaves, 2 spines.
var fabric = func() *inventory.Fabric {
	f, err := inventory.ParseSpec("leafspine:leaves=2,spines=2,hosts_per_leaf=2")
	if err != nil {
		panic(err)
	}
	return f
}()

func TestFaultsSet(t *testing.T) {
	f := fabric
	var fs Faults
	ok := []runspec.Fault{{Link: 0, Description: "a"}, {Link: len(f.Links) - 1, Description: "b"}}
	if err := fs.Set(f, ok); err != nil || len(fs) != 2 {
		t.Fatalf("Set: %v, %d faults", err, len(fs))
	}
	err := fs.Set(f, []runspec.Fault{{Link: len(f.Links), Description: "gone"}})
	if err == nil || !strings.Contains(err.Error(), `fault "gone": link`) || len(fs) != 2 {
		t.Errorf("out-of-range link: %v (faults kept %d, want the previous 2)", err, len(fs))
	}
}

func TestNodeExporter(t *testing.T) {
	f := fabric
	for id, n := range f.Nodes {
		e := NodeExporter(f, id, "10.0.0.1:9339", time.Millisecond, "pw", func(p int, name string) string { return "k-" + name })
		if e.Node != n.Name || e.Device != n.Name || e.Queues != n.IsSwitch() || len(e.Interfaces) != len(n.Ports) {
			t.Fatalf("node %s: exporter %+v", n.Name, e)
		}
		for i, p := range n.Ports {
			if e.Interfaces[i] != [2]string{f.Ports[p].Name, "k-" + f.Ports[p].Name} {
				t.Errorf("node %s port %d: %v", n.Name, i, e.Interfaces[i])
			}
		}
	}
}

// TestRunJobsRefusesMinimalFlows: minimal-routed environment traffic
// (workloads.Flow.Minimal) is the simulator's; on agents it is refused
// before anything starts, naming the flow.
func TestRunJobsRefusesMinimalFlows(t *testing.T) {
	w, err := runspec.BuildWorkload(fabric, []runspec.Job{{Name: "p", Workload: "permutation", Hosts: []int{0, 1, 2, 3}, Size: 1 << 20}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	w.Matrix.Flows[2].Minimal = true
	_, err = RunJobs(context.Background(), Jobs{Agents: make([]fleet.Host, 4), Fabric: fabric}, w, nil)
	if err == nil || !strings.Contains(err.Error(), "flow 2 is minimal-routed") {
		t.Fatalf("RunJobs with a minimal flow: %v", err)
	}
}
