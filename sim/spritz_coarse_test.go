package sim

import (
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

// TestCoarseSpritzOnHashECMP runs the path-aware load balancers on plain
// ECMP hashing (coarse-grained Spritz, Sec. III-D: every entropy is an EV
// the switches hash onto a path the sender does not know) on a leaf-spine
// whose leaf0-spine0 uplink runs at 10%. Eight 4 MiB flows go from leaf0
// to leaf1. ECMP pins a flow onto the slow uplink; OPS keeps an eighth of
// every flow there; Spritz-Spray learns from the ECN marks which EVs hash
// onto it and moves its traffic to the others.
func TestCoarseSpritzOnHashECMP(t *testing.T) {
	f, err := inventory.ParseSpec("leafspine:leaves=4,spines=8,hosts_per_leaf=8,gbps=100")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := f.ParseLinkEvent("degrade:leaf0-spine0@0=0.1")
	if err != nil {
		t.Fatal(err)
	}
	l := f.Links[ev.Link]
	up := l.A // leaf0's transmit side of the degraded uplink
	if f.Nodes[f.Ports[up].Node].Name != "leaf0" {
		up = l.B
	}
	const size = 4 << 20
	var flows []workloads.Flow
	for i := 0; i < 8; i++ {
		flows = append(flows, workloads.Flow{ID: i, Src: i, Dst: 8 + i, Size: size, After: -1})
	}
	m := &workloads.Matrix{Hosts: f.NumHosts(), Flows: flows}
	type res struct{ max, share float64 }
	runLB := func(lb transport.LBKind) res {
		s, err := New(Config{Fabric: f, Matrix: m, Transport: htsimParams(lb), Seed: 1, Links: []LinkEvent{ev}})
		if err != nil {
			t.Fatal(err)
		}
		r := s.Run()
		st := fcts(t, r) // fails unless every flow finished
		share := float64(s.PortStats(up).OutOctets) / float64(len(flows)*size)
		t.Logf("%-12s max FCT %4.0f us, p50 %4.0f us; the 10%% uplink carried %.3f of the bytes; %d retransmissions",
			lb, st.max, st.p50, share, r.Packets.Retransmitted)
		return res{st.max, share}
	}
	ecmp, ops, spray := runLB(transport.ECMP), runLB(transport.OPS), runLB(transport.Spray)
	scout, flicr := runLB(transport.Scout), runLB(transport.Flicr)
	if ecmp.share < 0.10 || ecmp.max < 2000 {
		t.Fatalf("ecmp: no flow hashed onto the slow uplink (share %.3f, max %.0f us); the comparison needs one", ecmp.share, ecmp.max)
	}
	// Healthy capacity out of leaf0 is 7.1 x 100 Gb/s: 32 MiB take >= 378 us;
	// the slow uplink's fair share of the bytes is 10/710 = 0.014.
	if spray.share > 0.025 {
		t.Errorf("spritz-spray left %.3f of its bytes on the slow uplink, want <= 0.025 (ops %.3f)", spray.share, ops.share)
	}
	if spray.max > 0.25*ecmp.max || spray.max > 0.75*ops.max {
		t.Errorf("spritz-spray max FCT %.0f us, want <= 0.25 x ecmp's %.0f and <= 0.75 x ops' %.0f", spray.max, ecmp.max, ops.max)
	}
	for name, r := range map[string]res{"spritz-scout": scout, "flicr": flicr} {
		if r.max > 0.5*ecmp.max || r.share > ops.share {
			t.Errorf("%s: max FCT %.0f us (ecmp %.0f), slow-uplink share %.3f (ops %.3f); want it off the slow EVs", name, r.max, ecmp.max, r.share, ops.share)
		}
	}
}
