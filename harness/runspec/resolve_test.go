package runspec

import (
	"strings"
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
	got, err := resolveFault(f, &suite.Fault{Kind: "degrade", Port: "spine2:Ethernet1", Fraction: 0.25, At: "10us", Until: "20us"}, "F1", 1)
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
	flap, err := resolveFault(f, &suite.Fault{Kind: "flap", NIC: "host3", Period: "10us", Count: 3}, "F1", 1)
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
		got, err := resolveFault(f, &suite.Fault{Kind: "random", Fraction: 0.25, At: "10us", Until: "20us"}, "F2", seed)
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

// Resolve reports a quantity it cannot parse at its field rather than
// taking it as 0 (the suite checker rejects such a suite first; a Suite
// built otherwise gets the error).
func TestResolveRefusesAnUnparsedQuantity(t *testing.T) {
	s := &suite.Suite{Fabric: suite.Fabric{Spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2"}}
	s.Telemetry.Interval = "1ms"
	s.Transport.CC, s.Transport.LB = "nscc", "reps"
	s.Features.ECMP.Mode, s.Features.ECMP.FlowletGap = suite.ECMPModeFlowlet, "soon"
	_, err := Resolve(suite.Point{Suite: s}, Defaults{})
	if err == nil || !strings.Contains(err.Error(), "features.ecmp.flowlet_gap: ") {
		t.Fatalf("got %v, want an error at features.ecmp.flowlet_gap", err)
	}
	s.Features.ECMP.FlowletGap = "20us"
	p, err := Resolve(suite.Point{Suite: s}, Defaults{})
	if err != nil || p.Features.FlowletGap != 20e6 {
		t.Fatalf("got %+v, %v; want a 20us flowlet gap", p, err)
	}
}
