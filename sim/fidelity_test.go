package sim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/preset"
)

// Reference figures measured with htsim_uec on fat_tree_128_1os.topo
// (../shared/reference/htsim/README.md).
const (
	htsimOneFlowFCT   = 176.2
	htsimPermREPSP50  = 198.9
	htsimPermREPSMax  = 211.4
	htsimIncastREPSMx = 5229.3
)

func TestFidelityOneFlow(t *testing.T) {
	r := run(t, Config{Fabric: refFabric(t), Matrix: refMatrix(t, "one128.cm"), Transport: htsimParams(transport.REPS), Seed: 1})
	got := fcts(t, r).max
	t.Logf("one 2 MB flow: fabricbench %.2f us, htsim %.1f us; packets %+v", got, htsimOneFlowFCT, r.Packets)
	if !within(got, htsimOneFlowFCT, 0.05) {
		t.Errorf("FCT %.2f us not within 5%% of htsim's %.1f us", got, htsimOneFlowFCT)
	}
	if r.Packets.Sent != 490 || r.Packets.Retransmitted != 0 {
		t.Errorf("packets %+v, want 490 new and none retransmitted (as htsim)", r.Packets)
	}
	if r.QueueBytes != 43*4150 {
		t.Errorf("default queue %d B, want 1 BDP = 43 packets = %d B", r.QueueBytes, 43*4150)
	}
	if r.BaseRTT != 14022720 {
		t.Errorf("base RTT %d ps, want htsim's 14.02272 us", r.BaseRTT)
	}
}

func TestFidelityPermutation(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: permutation fidelity takes about a second")
	}
	f := refFabric(t)
	m := refMatrix(t, "perm_128n_128c_2MB.cm")
	reps := run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1})
	ops := run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.OPS), Seed: 1})
	rs, os := fcts(t, reps), fcts(t, ops)
	t.Logf("permutation REPS: %.1f / %.1f / %.1f / %.1f us (htsim 181.8 / 198.9 / 210.9 / 211.4), retx %d",
		rs.min, rs.p50, rs.p99, rs.max, reps.Packets.Retransmitted)
	t.Logf("permutation OPS:  %.1f / %.1f / %.1f / %.1f us (htsim 179.4 / 203.9 / 229.9 / 232.0), retx %d",
		os.min, os.p50, os.p99, os.max, ops.Packets.Retransmitted)
	if !within(rs.p50, htsimPermREPSP50, 0.10) {
		t.Errorf("REPS p50 %.1f us not within 10%% of htsim's %.1f", rs.p50, htsimPermREPSP50)
	}
	if !within(rs.max, htsimPermREPSMax, 0.10) {
		t.Errorf("REPS max %.1f us not within 10%% of htsim's %.1f", rs.max, htsimPermREPSMax)
	}
	if !(os.max > rs.max && os.p99 > rs.p99) {
		t.Errorf("OPS tail (p99 %.1f, max %.1f) is not worse than REPS (p99 %.1f, max %.1f)", os.p99, os.max, rs.p99, rs.max)
	}
	if reps.Packets.Sent != 128*490 {
		t.Errorf("REPS sent %d new packets, want %d", reps.Packets.Sent, 128*490)
	}
}

func TestFidelityIncast(t *testing.T) {
	f := refFabric(t)
	m := refMatrix(t, "incast32.cm")
	trim := run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1})
	ts := fcts(t, trim)
	t.Logf("incast 32:1 REPS, trimming: %.1f / %.1f / %.1f / %.1f us (htsim 3579.5 / 4969.6 / 5229.3 / 5229.3); %+v",
		ts.min, ts.p50, ts.p99, ts.max, trim.Packets)
	if !within(ts.max, htsimIncastREPSMx, 0.05) {
		t.Errorf("last flow %.1f us not within 5%% of htsim's %.1f", ts.max, htsimIncastREPSMx)
	}
	if trim.Packets.Trimmed == 0 || trim.Packets.Dropped != 0 {
		t.Errorf("with trimming: trimmed %d, dropped %d; want trims and no drops", trim.Packets.Trimmed, trim.Packets.Dropped)
	}

	p := htsimParams(transport.REPS)
	p.Trimming = false
	drop := run(t, Config{Fabric: f, Matrix: m, Transport: p, Seed: 1})
	ds := fcts(t, drop) // fails the test if any flow did not finish
	var timeouts uint64
	for _, fl := range drop.Flows {
		timeouts += fl.Timeouts
	}
	t.Logf("incast 32:1 REPS, no trimming: %.1f / %.1f / %.1f / %.1f us; %+v, %d timeouts",
		ds.min, ds.p50, ds.p99, ds.max, drop.Packets, timeouts)
	if drop.Packets.Trimmed != 0 || drop.Packets.Dropped == 0 || timeouts == 0 {
		t.Errorf("without trimming: trimmed %d, dropped %d, timeouts %d; want drops recovered by timeouts",
			drop.Packets.Trimmed, drop.Packets.Dropped, timeouts)
	}
}

// htsimCompat are the transport settings of the htsim-compatible setting
// (preset.HTSim: ACK every 16384 wire bytes, 256 entropies, target 6 us of
// queueing) on htsimParams' packet sizes.
func htsimCompat(lb transport.LBKind) transport.Params {
	p := htsimParams(lb)
	preset.HTSim.Transport(&p)
	p.MTU = 4086
	return p
}

// TestFidelityHTSimCompatible runs every scenario of the htsim reference
// README in the htsim-compatible setting and compares p50 and max FCT with
// htsim's. With htsim's own input files every figure but one is within 5%:
// OPS permutation max is about 10% below htsim's, whose "oblivious"
// spraying sweeps a shuffled cycle of its 256 entropies where fabricbench's
// OPS draws each at random (a load balancer difference, not an ACK one). The
// repo's fixtures are other matrices of the same shapes: their figures are
// logged and only the one-flow FCT is compared.
func TestFidelityHTSimCompatible(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: five runs of about 0.1 s")
	}
	_, err := os.Stat(filepath.Join(refDir, "perm_128n_128c_2MB.cm"))
	haveRef := err == nil
	f := refFabric(t)
	for _, c := range []struct {
		name, cm string
		lb       transport.LBKind
		p50, max float64 // htsim
		maxTol   float64
	}{
		{"one flow", "one128.cm", transport.REPS, 176.2, 176.2, 0.05},
		{"permutation REPS", "perm_128n_128c_2MB.cm", transport.REPS, 198.9, 211.4, 0.05},
		{"permutation OPS", "perm_128n_128c_2MB.cm", transport.OPS, 203.9, 232.0, 0.15},
		{"incast 32:1 REPS", "incast32.cm", transport.REPS, 4969.6, 5229.3, 0.05},
		{"incast 32:1 OPS", "incast32.cm", transport.OPS, 4767.9, 5256.3, 0.05},
	} {
		m := refMatrix(t, c.cm)
		pp := run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(c.lb), Seed: 1})
		co := run(t, Config{Fabric: f, Matrix: m, Transport: htsimCompat(c.lb), Seed: 1})
		ps, cs := fcts(t, pp), fcts(t, co)
		t.Logf("%-17s p50 / max us: htsim %.1f / %.1f; per-packet ACKs %.1f / %.1f (%+.1f%% / %+.1f%%); htsim-compatible %.1f / %.1f (%+.1f%% / %+.1f%%), retx %d",
			c.name, c.p50, c.max, ps.p50, ps.max, pct(ps.p50, c.p50), pct(ps.max, c.max), cs.p50, cs.max, pct(cs.p50, c.p50), pct(cs.max, c.max), co.Packets.Retransmitted)
		if !haveRef && c.cm != "one128.cm" {
			continue
		}
		if !within(cs.p50, c.p50, 0.05) {
			t.Errorf("%s: p50 %.1f us not within 5%% of htsim's %.1f", c.name, cs.p50, c.p50)
		}
		if !within(cs.max, c.max, c.maxTol) {
			t.Errorf("%s: max %.1f us not within %.0f%% of htsim's %.1f", c.name, cs.max, 100*c.maxTol, c.max)
		}
	}
}

func pct(got, want float64) float64 { return 100 * (got - want) / want }
