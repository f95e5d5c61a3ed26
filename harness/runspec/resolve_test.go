package runspec

import (
	"testing"

	"github.com/fabricbench/fabricbench/harness/suite"
	"github.com/fabricbench/fabricbench/inventory"
)

func fabric(t *testing.T) *inventory.Fabric {
	t.Helper()
	f, err := inventory.ParseSpec("leafspine:leaves=4,spines=4,hosts_per_leaf=4")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestResolveFaults(t *testing.T) {
	f := fabric(t)
	got, err := resolveFault(f, &suite.Fault{Kind: "degrade", Port: "spine2:Ethernet1", Fraction: 0.25, At: must(suite.ParseDuration("10us")), Until: must(suite.ParseDuration("20us"))}, "F1", 1)
	if err != nil {
		t.Fatal(err)
	}
	// Spine ports are the B end of leaf-spine links: transmit side = B->A.
	if len(got) != 2 || got[0].Direction != inventory.DirBA || got[0].Fraction != 0.25 || got[0].At != 10e6 || got[1].At != 20e6 || got[1].Fraction != 1 {
		t.Fatalf("%+v", got)
	}
	l := f.Links[got[0].Link]
	if f.Nodes[f.Ports[l.B].Node].Name != "spine2" || f.Ports[l.B].Name != "Ethernet1" {
		t.Fatalf("wrong link %+v", l)
	}
	flap, err := resolveFault(f, &suite.Fault{Kind: "flap", NIC: "host3", Period: must(suite.ParseDuration("10us")), Count: 3}, "F1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(flap) != 6 || flap[0].Up || !flap[1].Up || flap[1].At != 5e6 || flap[4].At != 20e6 {
		t.Fatalf("flap: %+v", flap)
	}
	if _, err := resolveFault(f, &suite.Fault{Kind: "down", Port: "leaf0:Ethernet99"}, "F1", 1); err == nil {
		t.Fatal("an unknown port was accepted")
	}
	// Random: a fraction of the switch-to-switch links, by seed, down and up.
	var fabricLinks int
	for _, l := range f.Links {
		if f.Nodes[f.Ports[l.A].Node].IsSwitch() && f.Nodes[f.Ports[l.B].Node].IsSwitch() {
			fabricLinks++
		}
	}
	rnd := func(seed uint64) []Fault {
		got, err := resolveFault(f, &suite.Fault{Kind: "random", Fraction: 0.25, At: must(suite.ParseDuration("10us")), Until: must(suite.ParseDuration("20us"))}, "F2", seed)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	r1, r2 := rnd(1), rnd(2)
	want := int(0.25*float64(fabricLinks) + 0.5)
	if len(r1) != 2*want || r1[0].Up || r1[0].At != 10e6 || !r1[1].Up || r1[1].At != 20e6 || r1[1].Link != r1[0].Link {
		t.Fatalf("random: %d events %+v, want %d links down at 10us and up at 20us", len(r1), r1, want)
	}
	same := true
	for i := range r1 {
		l := f.Links[r1[i].Link]
		if !f.Nodes[f.Ports[l.A].Node].IsSwitch() || !f.Nodes[f.Ports[l.B].Node].IsSwitch() {
			t.Fatalf("random fault on a host link: %+v", r1[i])
		}
		same = same && r1[i].Link == r2[i].Link
	}
	if same {
		t.Error("seeds 1 and 2 failed the same links")
	}
	if r3 := rnd(1); r3[0].Link != r1[0].Link {
		t.Error("the same seed failed different links")
	}
}

// Resolve takes the suite's quantities as they were decoded (typed), with
// no parsing of its own: a quantity that does not parse cannot be built.
func TestResolveUsesTypedQuantities(t *testing.T) {
	if _, err := suite.ParseDuration("soon"); err == nil || err.Error() != `"soon" is not a duration (want e.g. 100us, 1ms)` {
		t.Fatalf("ParseDuration(soon): %v", err)
	}
	s := &suite.Suite{Fabric: suite.Fabric{Spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2"}}
	s.Telemetry.Interval = must(suite.ParseInterval("1ms"))
	s.Transport.CC, s.Transport.LB = "nscc", "reps"
	s.Features.ECMP.Mode, s.Features.ECMP.FlowletGap = suite.ECMPModeFlowlet, must(suite.ParseDuration("20us"))
	s.Features.Queue = must(suite.ParseQueue("48MiB"))
	s.Sim.End = must(suite.ParseDuration("2ms"))
	p, err := Resolve(suite.Point{Suite: s}, Defaults{})
	if err != nil || p.Features.FlowletGap != 20e6 || p.Interval.Milliseconds() != 1 || p.Features.QueueBytes != 48<<20 || p.Features.SimEnd != 2e9 {
		t.Fatalf("got %+v, %v; want a 20us flowlet gap, 1ms interval, 48MiB queues, 2ms end", p, err)
	}
	s.Telemetry.Interval = must(suite.ParseInterval(suite.IntervalFastest))
	if p, err := Resolve(suite.Point{Suite: s}, Defaults{FastestInterval: 250e6}); err != nil || p.Interval.Microseconds() != 250 {
		t.Fatalf("fastest: got %+v, %v; want the backend's 250us", p, err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
