package harness_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// The SRv6 path controller as a suite feature on the simulator (issue 16
// item 3): examples/suites/srv6-reroute.yaml degrades the pinned spine's
// link to half rate at 200 us of a long transfer; with telemetry every
// 100 us the controller, fed by its own gNMI subscription, moves the pair
// to another spine within 2 sampling intervals plus one RTT, and host2
// receives >= 1.35x the bytes of the run without it over the 2 ms after
// the degradation, on 2 and on 4 spines. The decision and its evidence are
// in results.json.
func TestControllerSuiteOnSim(t *testing.T) {
	out := t.TempDir()
	res, err := harness.Run(context.Background(), harness.Options{
		SuiteFile: filepath.Join("..", "examples", "suites", "srv6-reroute.yaml"), Out: out, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 4 {
		t.Fatalf("%d runs, want 4", len(res.Runs))
	}
	const deg, window, every = 200.0, 2000.0, 100.0 // µs
	delivered := map[string]float64{}               // spec (+ " ctl") -> bytes over the window
	with := map[string]*results.Run{}
	for i := range res.Runs {
		r := &res.Runs[i]
		spec := r.Params["fabric.spec"]
		f, err := inventory.ParseSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != results.Pass {
			t.Fatalf("%s: %s %s", r.ID, r.Status, r.Error)
		}
		port := ""
		leaf1, _ := f.NodeByName("leaf1")
		host2, _ := f.NodeByName("host2")
		for _, p := range f.Nodes[leaf1].Ports {
			if f.PeerNode(p) == host2 {
				port = f.Ports[p].Name
			}
		}
		samples := readTelemetry(t, out, r.Files["telemetry"])
		var at0, at1 int64 = -1, -1
		for _, s := range samples {
			if s.Target != "leaf1" || s.Interface != port || s.Measurement != telemetry.MeasInterface || s.Field != telemetry.FieldOutOctets {
				continue
			}
			switch float64(s.Time-r.Telemetry.EpochNs) / 1e3 {
			case deg:
				at0 = s.Value
			case deg + window:
				at1 = s.Value
			}
		}
		if at0 < 0 || at1 < 0 {
			t.Fatalf("%s: no host2 counters at %g and %g us", r.ID, deg, deg+window)
		}
		bytes := float64(at1 - at0)
		ctl := r.Params["controller.kind"]
		t.Logf("%s: host2 received %.0f bytes from %g to %g us", r.ID, bytes, deg, deg+window)
		if ctl == "none" {
			delivered[spec] = bytes
			if r.Controller != nil {
				t.Errorf("%s: controller results without a controller", r.ID)
			}
			continue
		}
		delivered[spec+" ctl"] = bytes
		with[spec] = r
	}
	for spec, r := range with {
		ratio := delivered[spec+" ctl"] / delivered[spec]
		c := r.Controller
		if c == nil || len(c.Decisions) != 1 {
			t.Fatalf("%s: controller results %+v, want one decision", r.ID, c)
		}
		d := c.Decisions[0]
		// One RTT host0 -> host2 -> host0: 4 links each way, each its
		// latency plus a full frame's serialisation.
		f, _ := inventory.ParseSpec(spec)
		l := f.Links[0]
		rtt := 8 * (float64(l.LatencyPs) + 9000*8e12/float64(l.RateBps)) / 1e6
		t.Logf("%s: %.2fx the bytes; RTT %.1f us; decision at %g us: %s %s -> %s, evidence %+v", r.ID, ratio, rtt, d.AtUs, d.Path, d.From, d.To, d.Evidence[0])
		if ratio < 1.35 {
			t.Errorf("%s: %.2fx the bytes of the run without the controller, want >= 1.35x", r.ID, ratio)
		}
		if lag := d.AtUs - deg; lag <= 0 || lag > 2*every+rtt {
			t.Errorf("%s: rerouted %g us after the degradation, want within 2 intervals + 1 RTT", r.ID, lag)
		}
		if d.From[0] != "spine0" || d.To[0] == "spine0" || d.AppliedAtUs != d.AtUs || d.Evidence[0].State != "degraded" ||
			!strings.Contains(d.Evidence[0].Link, "spine0") || d.Evidence[0].RateBps > 0.75*d.Evidence[0].NominalBps {
			t.Errorf("%s: decision %+v", r.ID, d)
		}
	}
	if len(with) != 2 {
		t.Errorf("%d runs with the controller, want 2", len(with))
	}
}
