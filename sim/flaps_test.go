package sim

import (
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/workloads"
)

// TestARLinkFlaps (Spectrum-X §6.5-6.6: fabric flaps are absorbed by the
// switches' local reaction): 10% of the leaf-spine links (one of ten
// uplinks of every leaf) flap, down 20 us in every 100 us, with no control
// plane (the switches at either end skip the link while it is down; others
// keep sending towards it). Every flow finishes; with adaptive routing the
// p01 pair bandwidth stays within 15% of the run without flaps.
func TestARLinkFlaps(t *testing.T) {
	f := arFabric(t, "leafspine:leaves=8,spines=2,links_per_spine=5,hosts_per_leaf=10,gbps=400")
	m := workloads.Permutation(f, 4<<20, 1)
	var flaps []LinkEvent
	for i, ls := range spineLinks(f) {
		l := ls[(i%2)*5]
		for at := int64(10e6); at < 2000e6; at += 100e6 {
			flaps = append(flaps, LinkEvent{At: at + int64(i)*7e6, Link: l}, LinkEvent{At: at + int64(i)*7e6 + 20e6, Link: l, Up: true})
		}
	}
	var ar arOut
	for _, c := range []struct {
		name string
		mod  func(*Config)
	}{{"ECMP", nil}, {"AR", withAR(100e3)}} {
		base := arRun(t, f, m, transport.ECMP, c.mod)
		flap := arRun(t, f, m, transport.ECMP, func(cf *Config) {
			if c.mod != nil {
				c.mod(cf)
			}
			cf.Links = flaps
		})
		t.Logf("%-4s p01 pair bandwidth %.3f -> %.3f with flaps, median %.3f -> %.3f; %d packets dropped, %d retransmitted, %d timeouts",
			c.name, base.p(0.01), flap.p(0.01), base.p(0.5), flap.p(0.5), flap.r.Packets.Dropped, flap.r.Packets.Retransmitted, timeouts(flap.r))
		ar = flap
		if c.name == "AR" && flap.p(0.01) < 0.85*base.p(0.01) {
			t.Errorf("AR under flaps: p01 pair bandwidth %.3f, want >= 0.85 x %.3f", flap.p(0.01), base.p(0.01))
		}
	}
	if ar.r.Packets.Dropped == 0 {
		t.Error("no packet was lost to a flap: the flaps did not hit traffic")
	}
}

func timeouts(r *Result) uint64 {
	var n uint64
	for _, f := range r.Flows {
		n += f.Timeouts
	}
	return n
}
