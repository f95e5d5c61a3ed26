package sim

import (
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

func TestParseFault(t *testing.T) {
	f, err := inventory.ParseSpec("fattree:hosts=16,tiers=3")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := ParseFault(f, "degrade:host3-tor1@1.5us=0.25", workloads.ParseDuration)
	if err != nil {
		t.Fatal(err)
	}
	l := f.Links[ev.Link]
	names := f.Nodes[f.Ports[l.A].Node].Name + "-" + f.Nodes[f.Ports[l.B].Node].Name
	if names != "host3-tor1" || ev.At != 1500000 || !ev.Up || ev.RateFactor != 0.25 {
		t.Fatalf("parsed %+v (%s)", ev, names)
	}
	if ev, err = ParseFault(f, "down:agg0-tor0@0", workloads.ParseDuration); err != nil || ev.Up {
		t.Fatalf("down: %+v %v", ev, err)
	}
	for in, want := range map[string]string{
		"down:tor0-agg0":          "missing @TIME",
		"down:tor0@1us":           "must name two nodes",
		"down:tor0-nosuch@1us":    `no node named "nosuch"`,
		"down:tor0-core0@1us":     "not linked",
		"down:tor0-agg0/3@1us":    "index 3 is out of range",
		"down:tor0-agg0@soon":     "time",
		"degrade:tor0-agg0@1us":   "needs =FRAC",
		"degrade:tor0-agg0@1us=0": "must be a number in (0, 1]",
		"cut:tor0-agg0@1us":       "unknown kind",
		"tor0-agg0@1us":           "want down:A-B@TIME",
	} {
		if _, err := ParseFault(f, in, workloads.ParseDuration); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to mention %q", in, err, want)
		}
	}
}

func TestReconvergenceStopsBlackholing(t *testing.T) {
	f, err := inventory.ParseSpec("fattree:hosts=16,tiers=3")
	if err != nil {
		t.Fatal(err)
	}
	m := workloads.Permutation(f, 1<<20, 1)
	ev, err := ParseFault(f, "down:tor0-agg0@10us", workloads.ParseDuration)
	if err != nil {
		t.Fatal(err)
	}
	base := Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.OPS), Seed: 1, Links: []LinkEvent{ev}}
	never := run(t, base)
	base.Reconverge = 5e6
	fast := run(t, base)
	n, r := fcts(t, never), fcts(t, fast)
	t.Logf("tor0-agg0 down at 10 us, OPS: no reconvergence max FCT %.1f us (%d dropped); reconverged after 5 us: %.1f us (%d dropped)",
		n.max, never.Packets.Dropped, r.max, fast.Packets.Dropped)
	if never.Reroutes != 0 || fast.Reroutes != 1 {
		t.Errorf("reroutes: %d without reconvergence, %d with; want 0 and 1", never.Reroutes, fast.Reroutes)
	}
	if fast.Packets.Dropped >= never.Packets.Dropped || r.max >= n.max {
		t.Errorf("reconvergence did not help: drops %d -> %d, max FCT %.1f -> %.1f", never.Packets.Dropped, fast.Packets.Dropped, n.max, r.max)
	}
}
