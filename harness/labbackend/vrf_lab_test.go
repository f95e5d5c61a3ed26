package labbackend

import (
	"context"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
)

// TestVRFIsolationOnLab brings examples/suites/vrfs.yaml's fabric up with
// its two VRFs: every host reaches (ping) exactly the hosts the planner's
// VRF map says it reaches (its own VRF's), the leaves' prohibit rules
// refuse the rest (ICMP administratively prohibited), and the suite's jobs, one inside each VRF, complete on
// the lab as they do on the simulator (harness TestVRFsOnSim).
func TestVRFIsolationOnLab(t *testing.T) {
	labtest.Require(t)
	_, pts, err := harness.PlanBackend(context.Background(), "../../examples/suites/vrfs.yaml", Name)
	if err != nil {
		t.Fatal(err)
	}
	p := pts[0]
	f := p.Fabric
	b := upLab(t, "vrfs", f)
	ctx := context.Background()
	if err := b.Configure(ctx, p.Features); err != nil {
		t.Fatal(err)
	}
	m := runspec.NewVRFMap(f.NumHosts(), p.Features.VRFs)
	// BGP may still be converging: a reachable pair gets a few tries.
	reached, refused, filtered := 0, 0, 0
	for h := 0; h < f.NumHosts(); h++ {
		for d := 0; d < f.NumHosts(); d++ {
			if h == d {
				continue
			}
			want := m.Reachable(h, d)
			tries := 1
			if want {
				tries = 10
			}
			var out string
			var err error
			for i := 0; i < tries; i++ {
				out, err = b.Exec(ctx, f.Host(h).Name, "ping -n -c1 -W1 "+b.hostIP[d].String())
				if err == nil {
					break
				}
			}
			got := err == nil
			if got != want {
				t.Errorf("%s (VRF %s) -> %s (VRF %s): ping ok=%v, want %v: %s", f.Host(h).Name, m.VRFOf(h), f.Host(d).Name, m.VRFOf(d), got, want, strings.TrimSpace(out))
			}
			if got {
				reached++
			} else {
				refused++
				// ICMP administratively prohibited from the leaf (iputils:
				// "Packet filtered"); the kernel rate-limits ICMP errors,
				// so not every refused ping gets one.
				if strings.Contains(out, "Packet filtered") {
					filtered++
				}
			}
		}
	}
	t.Logf("ping: %d pairs reach each other, %d refused, %d of them answered by the leaf's prohibit (VRF map: %v)", reached, refused, filtered, m.Of)
	if filtered == 0 {
		t.Error("no refused ping was answered administratively prohibited: the leaves' VRF rules did not refuse them")
	}
	if err := b.DeployAgents(ctx, p.Transport); err != nil {
		t.Fatal(err)
	}
	w, err := runspec.BuildWorkload(f, p.Jobs, p.Suite.Seed)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := b.RunJobs(ctx, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, fl := range w.Matrix.Flows {
		if rr.Flows[i].FCT < 0 {
			t.Errorf("flow %d %s -> %s (job %s) did not complete", i, f.Host(fl.Src).Name, f.Host(fl.Dst).Name, w.Jobs[w.FlowJob[i]].Name)
		}
	}
}
