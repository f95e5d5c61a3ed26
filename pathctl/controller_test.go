package pathctl

import (
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/sim"
	"github.com/fabricbench/fabricbench/workloads"
)

// TestControllerReroutesDegradedSpine is the simulator half of issue 16
// item 3: a long transfer pinned to a spine whose link to the destination
// leaf degrades to half rate at 200 us; with telemetry every 100 us the
// controller repins it to another spine, and the flow delivers >= 1.35x
// the bytes of the run without a controller over the next millisecond.
func TestControllerReroutesDegradedSpine(t *testing.T) {
	f, err := inventory.ParseSpec("leafspine:leaves=2,spines=4,hosts_per_leaf=2")
	if err != nil {
		t.Fatal(err)
	}
	m := &workloads.Matrix{Hosts: 4, Flows: []workloads.Flow{{ID: 1, Src: 0, Dst: 2, Size: 64 << 20, After: -1}}}
	pl := Disjoint(f, m.Flows, 1<<20)
	if len(pl.Placed) != 1 {
		t.Fatalf("placed %+v", pl)
	}
	spine := pl.Placed[0].Via[0]
	leaf1, _ := f.NodeByName("leaf1")
	host2, _ := f.NodeByName("host2")
	const at, every, window = 200_000_000, 100_000_000, 1_000_000_000 // ps
	deg := sim.LinkEvent{At: at, Link: f.Ports[link(f, spine, leaf1)].Link, Up: true, RateFactor: 0.5}
	down := link(f, leaf1, host2)
	run := func(ctl bool) (delivered uint64, c *Controller, rtt int64) {
		c = NewController(f, m.Flows, pl.Placed)
		var start, end uint64
		tp := transport.DefaultParams()
		tp.LB = transport.ECMP
		cfg := sim.Config{Fabric: f, Matrix: m, Transport: tp, Seed: 1, Links: []sim.LinkEvent{deg},
			SRv6: sim.SRv6{Paths: SRv6(f, pl.Placed)}, SampleEvery: every,
			OnSample: func(s *sim.Sim, now int64) {
				if ctl {
					c.OnSample(s, now)
				}
				switch now {
				case at:
					start = s.PortStats(down).OutOctets
				case at + window:
					end = s.PortStats(down).OutOctets
				}
			}}
		s, err := sim.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := s.Run()
		if c.Err != nil {
			t.Fatal(c.Err)
		}
		return end - start, c, r.BaseRTT
	}
	base, _, _ := run(false)
	got, c, rtt := run(true)
	ratio := float64(got) / float64(base)
	t.Logf("delivered over %d us after the degradation: %d bytes without the controller, %d with (%.2fx); reroutes %+v; base RTT %d ns",
		window/1_000_000, base, got, ratio, c.Reroutes, rtt/1000)
	if ratio < 1.35 {
		t.Errorf("controller: %.2fx the bytes, want >= 1.35x", ratio)
	}
	if len(c.Reroutes) != 1 || c.Reroutes[0].From != spine || c.Reroutes[0].To == spine {
		t.Fatalf("reroutes %+v, want one away from node %d", c.Reroutes, spine)
	}
	if d := c.Reroutes[0].At - at; d > 2*every+rtt {
		t.Errorf("rerouted %d ns after the degradation, want within 2 intervals + 1 RTT (%d ns)", d/1000, (2*every+rtt)/1000)
	}
}
