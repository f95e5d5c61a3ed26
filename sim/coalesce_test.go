package sim

import (
	"reflect"
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

// TestCoalescingScenarios runs scenarios beyond htsim's reference files with
// per-packet ACKs and in the htsim-compatible setting (no htsim figures to
// compare with here) and checks the documented direction: coalescing ACKs
// slows a permutation down a little (p50 not lower, less than 10% higher:
// fewer ACKs grow the window in coarser steps and recycle fewer REPS
// entropies), and leaves an incast's last byte where the receiver's link
// puts it. Runs are deterministic.
func TestCoalescingScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 1024-host permutation takes a few seconds")
	}
	for _, c := range []struct {
		name, spec, tm string
		incast         bool
	}{
		{"1024-host permutation", "fattree:hosts=1024,tiers=3,gbps=100,latency=1us", "permutation:size=2MB", false},
		{"4:1 oversubscribed permutation", "fattree:hosts=216,tiers=3,gbps=100,oversub=4,latency=1us", "permutation:size=2MB", false},
		{"incast 100:1", "fattree:hosts=128,tiers=3,gbps=100,latency=1us", "incast:senders=100,size=2MB,dst=5", true},
	} {
		f, err := inventory.ParseSpec(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		m, err := workloads.Load(c.tm, f, 1)
		if err != nil {
			t.Fatal(err)
		}
		pr := run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1})
		cr := run(t, Config{Fabric: f, Matrix: m, Transport: htsimCompat(transport.REPS), Seed: 1})
		ps, cs := fcts(t, pr), fcts(t, cr)
		t.Logf("%-31s REPS p50 / max us: per-packet ACKs %.1f / %.1f; htsim-compatible %.1f / %.1f (%+.1f%% / %+.1f%%)",
			c.name, ps.p50, ps.max, cs.p50, cs.max, pct(cs.p50, ps.p50), pct(cs.max, ps.max))
		if c.incast {
			// 100 x 490 packets of 4150 B through one 100 Gb/s port.
			ideal := 100 * 490 * 4150 * 8 / 1e5
			if !within(ps.max, ideal, 0.05) || !within(cs.max, ideal, 0.05) {
				t.Errorf("%s: last flow %.1f us (per-packet), %.1f us (coalesced); want both within 5%% of %.1f", c.name, ps.max, cs.max, ideal)
			}
		} else if cs.p50 < ps.p50 || cs.p50 > 1.1*ps.p50 {
			t.Errorf("%s: coalesced p50 %.1f us vs per-packet %.1f; want not lower and less than 10%% higher", c.name, cs.p50, ps.p50)
		}
		if c.name == "incast 100:1" {
			again := run(t, Config{Fabric: f, Matrix: m, Transport: htsimCompat(transport.REPS), Seed: 1})
			if !reflect.DeepEqual(flowsOf(again), flowsOf(cr)) || again.Packets != cr.Packets {
				t.Errorf("%s: two coalesced runs differ", c.name)
			}
		}
	}
}

func flowsOf(r *Result) []FlowResult { return r.Flows }

// TestCoalescingAckTimer: with a count no flow reaches between ACK requests
// and a short AckDelay, the held ACKs go out on the timer and every flow
// finishes without retransmissions, the same way twice.
func TestCoalescingAckTimer(t *testing.T) {
	f, err := inventory.ParseSpec("fattree:hosts=16,tiers=3,gbps=100")
	if err != nil {
		t.Fatal(err)
	}
	m := workloads.Permutation(f, 1<<20, 1)
	p := transport.DefaultParams()
	p.AckEvery, p.AckDelay = transport.SackBits, 2*transport.Microsecond
	a := run(t, Config{Fabric: f, Matrix: m, Transport: p, Seed: 1})
	b := run(t, Config{Fabric: f, Matrix: m, Transport: p, Seed: 1})
	s := fcts(t, a)
	t.Logf("16 x 1 MiB, ACK every 64 packets or 2 us: FCT p50 %.1f us, max %.1f us; %+v", s.p50, s.max, a.Packets)
	if a.Packets.Retransmitted != 0 {
		t.Errorf("%d retransmissions; held ACKs should go out on the 2 us timer long before any RTO", a.Packets.Retransmitted)
	}
	if !reflect.DeepEqual(a.Flows, b.Flows) || a.Events != b.Events {
		t.Error("two identical runs differ")
	}
}
