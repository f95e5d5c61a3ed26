package simbackend

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/sim"
)

// Config (fabricbench sim's RunSpec) and a suite's run on the backend
// (Configure, DeployAgents, InjectFaults, then RunJobs) map a run onto the
// same sim.Config.
func TestConfigIsTheSuiteRunsMapping(t *testing.T) {
	for _, name := range []string{"dragonfly-failures", "smartt", "vrfs", "degraded-uplink"} {
		_, points, err := harness.PlanBackend(context.Background(), filepath.Join("..", "..", "examples", "suites", name+".yaml"), Name)
		if err != nil {
			t.Fatal(err)
		}
		p := points[0]
		w, err := runspec.BuildWorkload(p.Fabric, p.Jobs, p.Transport.Seed)
		if err != nil {
			t.Fatal(err)
		}
		b := New()
		ctx := context.Background()
		if err := b.Up(ctx, p.Fabric); err != nil {
			t.Fatal(err)
		}
		if err := b.Configure(ctx, p.Features); err != nil {
			t.Fatal(err)
		}
		if err := b.DeployAgents(ctx, p.Transport); err != nil {
			t.Fatal(err)
		}
		if err := b.InjectFaults(ctx, p.Faults); err != nil {
			t.Fatal(err)
		}
		suiteCfg, err := simConfig(b.f, b.feat, b.tp, b.seed, b.links, w)
		if err != nil {
			t.Fatal(err)
		}
		spec := *p
		spec.TransportParams.Seed = 0 // the simulator seeds from the run's seed
		cliCfg, err := Config(&spec, w)
		if err != nil {
			t.Fatal(err)
		}
		strip := func(c *sim.Config) { c.Delivery.GroupOf = nil }
		strip(&suiteCfg)
		strip(&cliCfg)
		if !reflect.DeepEqual(suiteCfg, cliCfg) {
			t.Errorf("%s: the suite run's\n%+v\nand Config's\n%+v\ndiffer", name, suiteCfg, cliCfg)
		}
		if name == "dragonfly-failures" && len(cliCfg.Links) == 0 {
			t.Errorf("%s: no link events", name)
		}
	}
}
