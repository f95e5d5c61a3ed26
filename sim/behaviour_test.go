package sim

import (
	"bytes"
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

func reportBytes(t *testing.T, r *Result) []byte {
	t.Helper()
	rep := BuildReport(ReportConfig{}, r)
	// Wall-clock fields (and the parallel mode's worker count) legitimately differ between runs.
	rep.Summary.WallS, rep.Summary.EventsPerS, rep.Summary.PeakRSSBytes, rep.Summary.Workers = 0, 0, 0, 0
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDeterminism(t *testing.T) {
	f := refFabric(t)
	m := workloads.Permutation(f, 1<<20, 3)
	inc, err := workloads.Incast(f, 16, -1, 1<<20, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		m    *workloads.Matrix
		lb   transport.LBKind
	}{{"perm-ops", m, transport.OPS}, {"incast-reps", inc, transport.REPS}} {
		cfg := Config{Fabric: f, Matrix: tc.m, Transport: htsimParams(tc.lb), Seed: 42}
		a, b := run(t, cfg), run(t, cfg)
		ja, jb := reportBytes(t, a), reportBytes(t, b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("%s: two runs with seed 42 differ", tc.name)
		}
		for i := range a.Flows {
			if a.Flows[i] != b.Flows[i] {
				t.Fatalf("%s: flow %d differs: %+v vs %+v", tc.name, i, a.Flows[i], b.Flows[i])
			}
		}
		if a.Events != b.Events || a.Packets != b.Packets {
			t.Errorf("%s: events/packets differ: %d %+v vs %d %+v", tc.name, a.Events, a.Packets, b.Events, b.Packets)
		}
		cfg.Seed = 43
		c := run(t, cfg)
		if bytes.Equal(ja, reportBytes(t, c)) {
			t.Errorf("%s: seeds 42 and 43 gave identical results; the seed is not used", tc.name)
		}
	}
}

// uplinkBytes returns the data bytes each uplink of host h's leaf sent.
func uplinkBytes(s *Sim, f *inventory.Fabric, h int) []uint64 {
	leaf := f.HostLeaf(h)
	var out []uint64
	for _, p := range f.Nodes[leaf].Ports {
		if f.Ports[p].Uplink {
			out = append(out, s.PortStats(p).OutOctets)
		}
	}
	return out
}

func TestECMPPinsAFlowOPSSpraysIt(t *testing.T) {
	f := refFabric(t)
	m := &workloads.Matrix{Hosts: 128, Flows: []workloads.Flow{{ID: 0, Src: 0, Dst: 127, Size: 4 << 20, After: -1}}}
	for _, lb := range []transport.LBKind{transport.ECMP, transport.OPS} {
		s, err := New(Config{Fabric: f, Matrix: m, Transport: htsimParams(lb), Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		s.Run()
		// 4 MiB spread evenly is 1 MiB per uplink; count an uplink as used
		// when it carried at least an eighth of the flow.
		used := 0
		for _, b := range uplinkBytes(s, f, 0) {
			if b > 512<<10 {
				used++
			}
		}
		switch lb {
		case transport.ECMP:
			if used != 1 {
				t.Errorf("ECMP: %d leaf uplinks carried the flow, want exactly 1", used)
			}
		case transport.OPS:
			if used != 4 {
				t.Errorf("OPS: %d of 4 leaf uplinks carried the flow, want all", used)
			}
		}
	}
}

func TestECNMarkingAndQueueBound(t *testing.T) {
	f := refFabric(t)
	m, err := workloads.Incast(f, 8, 5, 1<<20, 1)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run()
	if r.Packets.ECNMarked == 0 {
		t.Fatal("an 8:1 incast produced no ECN marks")
	}
	// The port into the incast receiver marks; no queue ever exceeds its size.
	into := f.Ports[f.Nodes[f.Hosts[5]].Ports[0]].Peer
	if s.PortStats(into).ECNMarked == 0 {
		t.Error("the receiver's leaf port marked nothing")
	}
	for p := range f.Ports {
		if q := s.PortStats(p).MaxQueue; q > r.QueueBytes {
			t.Fatalf("port %d queue reached %d > capacity %d", p, q, r.QueueBytes)
		}
	}
	noecn := run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1, NoECN: true})
	if noecn.Packets.ECNMarked != 0 {
		t.Errorf("marking disabled but %d packets were marked", noecn.Packets.ECNMarked)
	}
	fcts(t, noecn) // still completes
}

func TestLinkDownLosesPacketsAndFlowsRecover(t *testing.T) {
	f := refFabric(t)
	m := &workloads.Matrix{Hosts: 128, Flows: []workloads.Flow{{ID: 0, Src: 0, Dst: 127, Size: 4 << 20, After: -1}}}
	// Take down one agg-core link in the receiver's pod at 50 us: the core
	// has no other way into that pod, so packets hashed through it towards
	// the receiver are blackholed (there is no control-plane reconvergence).
	dstLeaf := f.HostLeaf(127)
	var agg int
	for _, p := range f.Nodes[dstLeaf].Ports {
		if f.Ports[p].Uplink {
			agg = f.PeerNode(p)
			break
		}
	}
	link := -1
	for _, p := range f.Nodes[agg].Ports {
		if f.Ports[p].Uplink {
			link = f.Ports[p].Link
			break
		}
	}
	down := []LinkEvent{{At: 50e6, Link: link, Up: false}}
	healthy := fcts(t, run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.OPS), Seed: 1})).max
	ops := run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.OPS), Seed: 1, Links: down})
	reps := run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1, Links: down})
	so, sr := fcts(t, ops), fcts(t, reps) // both must finish
	t.Logf("4 MiB flow, core link down at 50 us: OPS %.1f us (%d dropped, %d timeouts), REPS %.1f us (%d dropped); healthy OPS %.1f us",
		so.max, ops.Packets.Dropped, ops.Flows[0].Timeouts, sr.max, reps.Packets.Dropped, healthy)
	if ops.Packets.Dropped == 0 || ops.Flows[0].Timeouts == 0 || ops.Packets.Retransmitted == 0 {
		t.Errorf("OPS through a dead link: dropped %d, timeouts %d, retx %d; want losses recovered by timeout",
			ops.Packets.Dropped, ops.Flows[0].Timeouts, ops.Packets.Retransmitted)
	}
	if so.max <= healthy {
		t.Errorf("the failure did not slow the OPS flow: %.1f vs %.1f us", so.max, healthy)
	}
	if reps.Packets.Dropped >= ops.Packets.Dropped {
		t.Errorf("REPS lost %d packets, OPS %d: REPS should keep to recycled good paths", reps.Packets.Dropped, ops.Packets.Dropped)
	}
	// The link comes back: a later event restores it and traffic completes.
	up := append(down, LinkEvent{At: 60e6, Link: link, Up: true})
	fcts(t, run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.OPS), Seed: 1, Links: up}))
}

func TestDegradedLinkSlowsPinnedFlow(t *testing.T) {
	f := refFabric(t)
	m := &workloads.Matrix{Hosts: 128, Flows: []workloads.Flow{{ID: 0, Src: 0, Dst: 127, Size: 8 << 20, After: -1}}}
	host0 := f.Nodes[f.Hosts[0]].Ports[0]
	base := fcts(t, run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.ECMP), Seed: 1})).max
	slow := fcts(t, run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.ECMP), Seed: 1,
		Links: []LinkEvent{{At: 0, Link: f.Ports[host0].Link, Up: true, RateFactor: 0.5}}})).max
	t.Logf("8 MiB flow: %.1f us at 100 Gb/s, %.1f us with the sender NIC at 50%%", base, slow)
	if slow < 1.8*base || slow > 2.2*base {
		t.Errorf("halving the NIC rate took the FCT from %.1f to %.1f us, want about double", base, slow)
	}
}

func TestEndCutsRunAndReportsUnfinished(t *testing.T) {
	f := refFabric(t)
	m := refMatrix(t, "one128.cm")
	r := run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1, End: 100e6})
	if r.Incomplete != 1 || r.Flows[0].FCT != -1 || r.SimEnd != 100e6 {
		t.Fatalf("end at 100 us: incomplete %d, fct %d, sim end %d", r.Incomplete, r.Flows[0].FCT, r.SimEnd)
	}
	rep := BuildReport(ReportConfig{}, r)
	if rep.Flows[0].FCTUs != nil || rep.Summary.Incomplete != 1 || rep.Summary.FCTUs.Max != nil {
		t.Fatalf("report of an unfinished flow: %+v %+v", rep.Flows[0], rep.Summary)
	}
}

func TestDependentFlowsStartAfterTheirPredecessor(t *testing.T) {
	f := refFabric(t)
	m := workloads.AllToAll(f, 64<<10, 2, 1)
	r := run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1})
	fcts(t, r)
	byID := map[int]FlowResult{}
	for _, fr := range r.Flows {
		byID[fr.ID] = fr
	}
	for _, fl := range m.Flows {
		if fl.After < 0 {
			continue
		}
		pre := byID[fl.After]
		if got := byID[fl.ID].Start; got != pre.Start+pre.FCT {
			t.Fatalf("flow %d started at %d, want when flow %d finished (%d)", fl.ID, got, fl.After, pre.Start+pre.FCT)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	f := refFabric(t)
	m := refMatrix(t, "one128.cm")
	bad := []Config{
		{Matrix: m, Transport: htsimParams(transport.REPS)},
		{Fabric: f, Transport: htsimParams(transport.REPS)},
		{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Links: []LinkEvent{{Link: 99999}}},
		{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), KMin: 0.9, KMax: 0.1},
		{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), QueueBytes: 100},
		{Fabric: f, Matrix: &workloads.Matrix{Hosts: 500, Flows: []workloads.Flow{{Src: 0, Dst: 400, Size: 1, After: -1}}}, Transport: htsimParams(transport.REPS)},
	}
	for i, c := range bad {
		if _, err := New(c); err == nil {
			t.Errorf("config %d: no error", i)
		} else {
			t.Logf("config %d: %v", i, err)
		}
	}
}
