package sim

import (
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

// pfcFabric is a leaf-spine with one spine and 400G uplinks, so no uplink
// is a bottleneck: leaf0 hosts 0-3, leaf1 4-7, leaf2 8-11, leaf3 12-15.
const pfcFabric = "leafspine:leaves=4,spines=1,hosts_per_leaf=4,gbps=100,uplink_gbps=400"

// pfcIncast is an 8:1 incast into host 12 (leaf3) from hosts 1-3 (leaf0),
// 5-6 (leaf1) and 9-11 (leaf2), and, when victim, flow 8: host 0 -> host
// 4 (leaf0 -> spine -> leaf1), which shares no bottleneck with the incast:
// only host 0's leaf0 uplink to the spine (400G, carrying at most 400G).
// victimAlone: the victim flow only.
func pfcIncast(t testing.TB, size int64, incast, victim bool) (*inventory.Fabric, *workloads.Matrix) {
	t.Helper()
	f, err := inventory.ParseSpec(pfcFabric)
	if err != nil {
		t.Fatal(err)
	}
	m := &workloads.Matrix{Hosts: f.NumHosts()}
	if incast {
		for i, src := range []int{1, 2, 3, 5, 6, 9, 10, 11} {
			m.Flows = append(m.Flows, workloads.Flow{ID: i, Src: src, Dst: 12, Size: size, After: -1})
		}
	}
	if victim {
		m.Flows = append(m.Flows, workloads.Flow{ID: 8, Src: 0, Dst: 4, Size: size, Start: 20e6, After: -1})
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return f, m
}

type pfcRun struct {
	s         *Sim
	r         *Result
	victimFCT int64
	incastMax int64
}

func runPFC(t *testing.T, cc transport.CCKind, pfc bool, noECN bool, incast, victim bool) pfcRun {
	t.Helper()
	f, m := pfcIncast(t, 2<<20, incast, victim)
	p := htsimParams(transport.REPS)
	p.CC = cc
	cfg := Config{Fabric: f, Matrix: m, Transport: p, Seed: 1, NoECN: noECN, PFC: PFC{Enabled: pfc}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run()
	out := pfcRun{s: s, r: r, victimFCT: -1}
	for _, fr := range r.Flows {
		if fr.FCT < 0 {
			t.Fatalf("flow %d (%d->%d) did not finish", fr.ID, fr.Src, fr.Dst)
		}
		if fr.ID == 8 {
			out.victimFCT = fr.FCT
		} else if fr.FCT > out.incastMax {
			out.incastMax = fr.FCT
		}
	}
	return out
}

// pauses sums the PFC counters of the ports of node n (by name).
func pauses(s *Sim, name string) PFCStats {
	var t PFCStats
	n, _ := s.f.NodeByName(name)
	for _, p := range s.f.Nodes[n].Ports {
		st := s.PortPFC(p)
		t.PauseTx += st.PauseTx
		t.PauseRx += st.PauseRx
		t.PausedPs += st.PausedPs
	}
	return t
}

// portTo returns node a's port that leads to node b.
func portTo(s *Sim, a, b string) int {
	na, _ := s.f.NodeByName(a)
	nb, _ := s.f.NodeByName(b)
	for _, p := range s.f.Nodes[na].Ports {
		if s.f.PeerNode(p) == nb {
			return p
		}
	}
	return -1
}

// TestPFCIncastVictim is the acceptance of issue 14 item 3: an 8:1 incast
// with PFC (NSCC without ECN, so only the pauses hold the queues back)
// loses nothing, its pauses propagate upstream (leaf3 -> spine -> source
// leaves -> sender NICs), and a victim flow that shares no bottleneck with
// it is slowed by head-of-line blocking at its paused leaf0 uplink. Without
// PFC the incast is trimmed and the victim runs as if alone.
func TestPFCIncastVictim(t *testing.T) {
	lossyAlone := runPFC(t, transport.NSCC, false, true, false, true)
	lossy := runPFC(t, transport.NSCC, false, true, true, true)
	pfcAlone := runPFC(t, transport.NSCC, true, true, false, true)
	pfc := runPFC(t, transport.NSCC, true, true, true, true)
	s := pfc.s
	ideal := s.IdealFCT(1, 12, 8*2<<20)
	t.Logf("no PFC: victim %.1f us (alone %.1f), incast done %.1f us (ideal %.1f), %d trimmed, %d dropped",
		us(lossy.victimFCT), us(lossyAlone.victimFCT), us(lossy.incastMax), us(ideal), lossy.r.Packets.Trimmed, lossy.r.Packets.Dropped)
	t.Logf("PFC:    victim %.1f us (alone %.1f), incast done %.1f us, %d trimmed, %d dropped, headroom exceeded %d",
		us(pfc.victimFCT), us(pfcAlone.victimFCT), us(pfc.incastMax), pfc.r.Packets.Trimmed, pfc.r.Packets.Dropped, s.PFCHeadroomExceeded())
	for i := range s.f.Nodes {
		if st := pauses(s, s.f.Nodes[i].Name); st.PauseRx+st.PauseTx > 0 {
			t.Logf("  %s: pause frames tx %d rx %d, paused %.1f us", s.f.Nodes[i].Name, st.PauseTx, st.PauseRx, us(int64(st.PausedPs)))
		}
	}

	// Without PFC: the incast is trimmed, the victim is not slowed.
	if lossy.r.Packets.Trimmed == 0 {
		t.Error("no PFC: the incast was not trimmed")
	}
	if float64(lossy.victimFCT) > 1.05*float64(lossyAlone.victimFCT) {
		t.Errorf("no PFC: victim FCT %.1f us, want within 5%% of %.1f us alone", us(lossy.victimFCT), us(lossyAlone.victimFCT))
	}
	for p := range lossy.s.ports {
		if st := lossy.s.PortPFC(p); st != (PFCStats{}) {
			t.Fatalf("no PFC: port %d has PFC counters %+v", p, st)
		}
	}

	// With PFC: lossless, pauses propagate, the victim is slowed.
	if pfc.r.Packets.Trimmed != 0 || pfc.r.Packets.Dropped != 0 || pfc.r.Packets.Retransmitted != 0 {
		t.Errorf("PFC: %d trimmed, %d dropped, %d retransmitted; want none", pfc.r.Packets.Trimmed, pfc.r.Packets.Dropped, pfc.r.Packets.Retransmitted)
	}
	if n := s.PFCHeadroomExceeded(); n != 0 {
		t.Errorf("PFC: headroom exceeded %d times", n)
	}
	hops := []struct{ from, to string }{
		{"leaf3", "spine0"},                      // the incast's last hop pauses the spine
		{"spine0", "leaf0"}, {"spine0", "leaf2"}, // the spine pauses the source leaves
		{"leaf0", "host1"}, {"leaf0", "host0"}, // leaf0 pauses a sender NIC, and the victim's
	}
	for _, h := range hops {
		tx, rx := portTo(s, h.from, h.to), portTo(s, h.to, h.from)
		a, b := s.PortPFC(tx), s.PortPFC(rx)
		t.Logf("  %s -> %s: %d pause frames sent, %d received, %s paused %.1f us", h.from, h.to, a.PauseTx, b.PauseRx, h.to, us(int64(b.PausedPs)))
		if a.PauseTx == 0 || b.PauseRx != a.PauseTx || b.PausedPs == 0 {
			t.Errorf("PFC: %s -> %s: %d pause frames sent, %d received, paused %d ps; want pauses to propagate", h.from, h.to, a.PauseTx, b.PauseRx, b.PausedPs)
		}
	}
	if float64(pfc.victimFCT) < 1.5*float64(pfcAlone.victimFCT) {
		t.Errorf("PFC: victim FCT %.1f us, want head-of-line blocking to slow it well beyond %.1f us alone", us(pfc.victimFCT), us(pfcAlone.victimFCT))
	}
	if pfcAlone.victimFCT != lossyAlone.victimFCT {
		t.Errorf("victim alone: %d ps with PFC, %d ps without; an uncongested flow should not notice PFC", pfcAlone.victimFCT, lossyAlone.victimFCT)
	}
	if float64(pfc.incastMax) > 1.05*float64(ideal) {
		t.Errorf("PFC: incast done at %.1f us, want within 5%% of the ideal %.1f us", us(pfc.incastMax), us(ideal))
	}
}

// TestPFCWithDCTCPLikeRoCE: PFC with DCTCP and ECN, as RoCE runs (DCQCN):
// the incast completes near the ideal, lossless, and the CC keeps the
// queues below XOFF, so pauses are few and stop once it has converged.
func TestPFCWithDCTCPLikeRoCE(t *testing.T) {
	f, m := pfcIncast(t, 2<<20, true, true)
	p := htsimParams(transport.REPS)
	p.CC = transport.DCTCP
	var s *Sim
	var tx []uint64 // pause frames sent by the whole fabric, per 100 us
	cfg := Config{Fabric: f, Matrix: m, Transport: p, Seed: 1, PFC: PFC{Enabled: true},
		SampleEvery: 100e6, OnSample: func(_ *Sim, _ int64) {
			var n uint64
			for i := range s.ports {
				n += s.PortPFC(i).PauseTx
			}
			tx = append(tx, n)
		}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run()
	noCC := runPFC(t, transport.NSCC, true, true, true, true)
	var noCCPauses uint64
	for i := range noCC.s.ports {
		noCCPauses += noCC.s.PortPFC(i).PauseTx
	}
	var incastMax, victim int64
	for _, fr := range r.Flows {
		if fr.FCT < 0 {
			t.Fatalf("flow %d did not finish", fr.ID)
		}
		if fr.ID == 8 {
			victim = fr.FCT
		} else if fr.FCT > incastMax {
			incastMax = fr.FCT
		}
	}
	ideal := s.IdealFCT(1, 12, 8*2<<20)
	total := tx[len(tx)-1]
	late := total - tx[3] // after 300 us
	t.Logf("PFC + DCTCP: incast done %.1f us (ideal %.1f), victim %.1f us, %d trimmed, %d dropped; pause frames %d (%d after 300 us) vs %d with PFC and no ECN; per 100 us: %v",
		us(incastMax), us(ideal), us(victim), r.Packets.Trimmed, r.Packets.Dropped, total, late, noCCPauses, tx)
	if r.Packets.Trimmed != 0 || r.Packets.Dropped != 0 || s.PFCHeadroomExceeded() != 0 {
		t.Errorf("%d trimmed, %d dropped, headroom exceeded %d: want lossless", r.Packets.Trimmed, r.Packets.Dropped, s.PFCHeadroomExceeded())
	}
	if float64(incastMax) > 1.1*float64(ideal) {
		t.Errorf("incast done at %.1f us, want within 10%% of the ideal %.1f us", us(incastMax), us(ideal))
	}
	if 3*total > noCCPauses {
		t.Errorf("%d pause frames with DCTCP, want far fewer than the %d without ECN", total, noCCPauses)
	}
	if 4*late > total {
		t.Errorf("%d of %d pause frames after 300 us: want them to stop once DCTCP has converged", late, total)
	}
}

// TestPFCDeterministic: two runs with PFC give the same result.
func TestPFCDeterministic(t *testing.T) {
	a := runPFC(t, transport.NSCC, true, true, true, true)
	b := runPFC(t, transport.NSCC, true, true, true, true)
	if a.r.Events != b.r.Events || a.victimFCT != b.victimFCT || a.incastMax != b.incastMax {
		t.Errorf("runs differ: %d/%d events, victim %d/%d ps", a.r.Events, b.r.Events, a.victimFCT, b.victimFCT)
	}
}

// TestPFCHotPathAllocations: the PFC stage allocates nothing per packet.
func TestPFCHotPathAllocations(t *testing.T) {
	checkFlatAllocs(t, "PFC", 9, 64<<10, 4<<20, func(size int64) Config {
		f, m := pfcIncast(t, size, true, true)
		return Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1, NoECN: true, PFC: PFC{Enabled: true}}
	})
}

func TestPFCConfig(t *testing.T) {
	f, m := pfcIncast(t, 64<<10, true, false)
	p := htsimParams(transport.REPS)
	for _, c := range []struct {
		pfc  PFC
		want string
	}{
		{PFC{Enabled: true, Lossless: []int{1}}, "lossless class 1"},
		{PFC{Enabled: true, Buffer: 10000}, "leaves no room above"},
		{PFC{Enabled: true, XOff: 100000, XOn: 100000}, "xon 100000 must be below xoff"},
		{PFC{Enabled: true, XOff: -1}, "negative"},
	} {
		_, err := New(Config{Fabric: f, Matrix: m, Transport: p, PFC: c.pfc})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.pfc, err, c.want)
		}
	}
	// A lossy class beside a lossless one keeps trimming.
	cfg := Config{Fabric: f, Matrix: m, Transport: p, Seed: 1, NoECN: true,
		Classes: []Class{{}, {}}, ClassOf: func(fl workloads.Flow) int { return fl.ID % 2 },
		PFC: PFC{Enabled: true, Lossless: []int{0}}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Run()
	down := portTo(s, "leaf3", "host12")
	c0, c1 := s.ClassStats(down, 0), s.ClassStats(down, 1)
	t.Logf("lossless class 0: %d trimmed; lossy class 1: %d trimmed", c0.Trims, c1.Trims)
	if c0.Trims+c0.Drops != 0 || c1.Trims == 0 {
		t.Errorf("lossless class 0: %d trims %d drops (want 0); lossy class 1: %d trims (want some)", c0.Trims, c0.Drops, c1.Trims)
	}
}
