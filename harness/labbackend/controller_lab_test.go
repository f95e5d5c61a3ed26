package labbackend

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// TestControllerReroutesOnLab runs examples/suites/lab-srv6-reroute.yaml
// on the FRR lab: host0 <-> host3 pinned to spine1, the spine1-leaf1 link
// re-shaped to half rate at 400 ms. The controller (fed by the exporters'
// gNMI streams) moves the pair to spine0; the kernel counters (via gNMI)
// show the traffic leave spine1 for spine0, host3's goodput recovers, and
// the decision with its evidence is in the results.
func TestControllerReroutesOnLab(t *testing.T) {
	sameVerdicts(t, forEachLab(t, controllerReroutes))
}

func controllerReroutes(t *testing.T, backend string) *results.Results {
	res, out := runSuite(t, "../../examples/suites/lab-srv6-reroute.yaml", backend)
	defer checkTornDown(t, out)
	run := &res.Runs[0]
	if run.Jobs[0].Completed != run.Jobs[0].Flows {
		t.Fatalf("job: %d of %d flows completed (%s)", run.Jobs[0].Completed, run.Jobs[0].Flows, run.Error)
	}
	c := run.Controller
	if c == nil || len(c.Decisions) == 0 {
		t.Fatalf("controller results %+v: want a decision", c)
	}
	d := c.Decisions[0]
	t.Logf("decision at %.0f ms: %s %s -> %s; evidence %+v", d.AtUs/1e3, d.Path, d.From, d.To, d.Evidence)
	if d.From[0] != "spine1" || d.To[0] != "spine0" || d.Error != "" || d.AtUs < 400e3 {
		t.Fatalf("decision %+v: want spine1 -> spine0 after the degradation at 400 ms", d)
	}
	if d.Evidence[0].State != "degraded" || !strings.Contains(d.Evidence[0].Link, "spine1") {
		t.Errorf("evidence %+v", d.Evidence[0])
	}
	samples, err := telemetry.ReadStore(filepath.Join(out, run.Files["telemetry"]))
	if err != nil {
		t.Fatal(err)
	}
	// Per device (spine0, spine1) and for host3's access port, the bytes
	// sent in a window: [from, to) in µs from the start of the jobs.
	type key struct{ target, iface string }
	series := map[key][][2]int64{}
	for _, s := range samples {
		if s.Measurement != telemetry.MeasInterface || s.Field != telemetry.FieldOutOctets {
			continue
		}
		k := key{s.Target, s.Interface}
		series[k] = append(series[k], [2]int64{(s.Time - run.Telemetry.EpochNs) / 1000, s.Value})
	}
	at := func(k key, us float64) float64 {
		pts := series[k]
		sort.Slice(pts, func(i, j int) bool { return pts[i][0] < pts[j][0] })
		v := float64(0)
		for _, p := range pts {
			if float64(p[0]) > us {
				break
			}
			v = float64(p[1])
		}
		return v
	}
	sent := func(pred func(key) bool, from, to float64) float64 {
		sum := 0.0
		for k := range series {
			if pred(k) {
				sum += at(k, to) - at(k, from)
			}
		}
		return sum
	}
	spine := func(n string) func(key) bool { return func(k key) bool { return k.target == n } }
	host3 := func(k key) bool { return k.target == "leaf1" && k.iface == portTo(t, "leaf1", "host3") }
	// Before the move: from the start of the job to the decision (the
	// two hosts' routes change in parallel, one may switch before the
	// other is done); after it: from 100 ms after both were replaced to
	// the end of the job. Whole stretches, not fixed windows: on a loaded
	// runner the agents' first packets can leave a second late, and a
	// window with no traffic in it shows no move.
	deg, dec, applied := 400e3, d.AtUs, d.AppliedAtUs
	if applied < dec {
		t.Fatalf("decision %+v: not applied after it was made", d)
	}
	job := run.Jobs[0]
	jobEnd := job.StartUs + job.CompletionUs
	t.Logf("degraded at %.0f ms, decided at %.0f ms, applied at %.0f ms, job %.0f-%.0f ms", deg/1e3, dec/1e3, applied/1e3, job.StartUs/1e3, jobEnd/1e3)
	before := [2]float64{job.StartUs, dec}
	after, end := applied+100e3, max(jobEnd, applied+600e3)
	s0b, s1b := sent(spine("spine0"), before[0], before[1]), sent(spine("spine1"), before[0], before[1])
	s0a, s1a := sent(spine("spine0"), after, end), sent(spine("spine1"), after, end)
	gBefore := sent(host3, before[0], before[1]) * 8 / ((before[1] - before[0]) / 1e6)
	gAfter := sent(host3, after, end) * 8 / ((end - after) / 1e6)
	// The pair's goodput on the healthy fabric, on this machine under its
	// present load (the agents pace in user space: on a loaded 2-core
	// runner they reach well under the 200 Mb/s line rate).
	healthy := [2]float64{100e3, deg - 10e3}
	gHealthy := sent(host3, healthy[0], healthy[1]) * 8 / ((healthy[1] - healthy[0]) / 1e6)
	t.Logf("spine0/spine1 bytes: %.0f/%.0f while degraded, %.0f/%.0f after the move; host3 goodput %.1f Mb/s healthy, %.1f Mb/s degraded, %.1f Mb/s after (line 200)",
		s0b, s1b, s0a, s1a, gHealthy/1e6, gBefore/1e6, gAfter/1e6)
	// The pair's traffic, not the routing protocols' few hundred bytes:
	// the decision needed a backlog on spine1 (64 KiB), and most of the
	// 96 MiB the pair moves is left after a move in its first second.
	if s1b < 64<<10 || s1b < 4*s0b || s0a < 8<<20 || s0a < 4*s1a {
		t.Errorf("kernel counters do not show the traffic move from spine1 to spine0")
	}
	// Goodput after the move is logged, not asserted: the agents pace in
	// user space, and on a loaded 2-core runner the pair reached 186 Mb/s
	// after the move on a quiet machine but 63-106 Mb/s with the rest of
	// the test suite and CPU hogs running (the routes were replaced up to
	// 1.2 s after the decision). What is asserted is what the controller
	// does: the decision, its evidence and the traffic moving off spine1.
	if degRate := d.Evidence[0].RateBps; gAfter <= degRate || gAfter < 0.6*gHealthy {
		t.Logf("note: goodput %.1f Mb/s after the move (%.1f healthy), the degraded link delivered %.1f (CPU load on this runner)",
			gAfter/1e6, gHealthy/1e6, degRate/1e6)
	}
	if run.Status != results.Pass {
		t.Errorf("status %s: %s", run.Status, run.Error)
	}
	return res
}

// portTo names device's port towards peer in the lab-srv6-reroute fabric.
func portTo(t *testing.T, device, peer string) string {
	t.Helper()
	f, err := inventory.Load("leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=0.2")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := f.NodeByName(device)
	p, _ := f.NodeByName(peer)
	for _, q := range f.Nodes[d].Ports {
		if f.PeerNode(q) == p {
			return f.Ports[q].Name
		}
	}
	t.Fatalf("no port %s -> %s", device, peer)
	return ""
}
