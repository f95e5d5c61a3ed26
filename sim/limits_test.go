package sim

import (
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

// smarttSpec is the SMaRTT paper's fabric at a given rate: 600 ns links,
// 400 ns switches.
func smarttSpec(gbps string) string {
	return "fattree:hosts=128,tiers=3,gbps=" + gbps + ",latency=600ns,switch_latency=400ns"
}

func oneFlow(hosts, src, dst int, size int64) *workloads.Matrix {
	return &workloads.Matrix{Name: "one", Hosts: hosts, Flows: []workloads.Flow{{ID: 0, Src: src, Dst: dst, Size: size, After: -1}}}
}

// A flow needing more than transport.MaxPackets packets is refused by New,
// naming the flow and the limit, instead of being simulated as a wrapped,
// smaller flow (16 TiB + 1 MiB used to run as 1 MiB, 16 TiB as 0 packets).
func TestNewRefusesOversizedFlows(t *testing.T) {
	f, err := inventory.ParseSpec("fattree:hosts=16,tiers=3,gbps=100")
	if err != nil {
		t.Fatal(err)
	}
	const tib = int64(1) << 40
	for _, c := range []struct {
		size int64
		mtu  int
		ok   bool
	}{
		{16*tib + 1<<20, 4096, false},
		{16 * tib, 4096, false},
		{16*tib - 4096, 4096, true},
		{tib, 256, false},
		{tib - 256, 256, true},
		{99999 * tib, 4096, false},
	} {
		p := transport.DefaultParams()
		p.MTU = c.mtu
		_, err := New(Config{Fabric: f, Matrix: oneFlow(16, 0, 15, c.size), Transport: p, Seed: 1})
		if (err == nil) != c.ok {
			t.Errorf("size %d at mtu %d: err %v, want ok=%v", c.size, c.mtu, err, c.ok)
		}
		if err != nil && !(strings.Contains(err.Error(), "flow 0 (0->15)") && strings.Contains(err.Error(), "at most 4294967295 packets")) {
			t.Errorf("size %d at mtu %d: error %q names neither the flow nor the limit", c.size, c.mtu, err)
		}
	}
}

// The RTO (base RTT plus a full queue at every hop) is computed without
// overflow at any rate: hops*QueueBytes*8e12 exceeds int64 from about
// 400 Gb/s, where it used to wrap below the base RTT or negative.
func TestPathRTONoOverflow(t *testing.T) {
	for _, g := range []string{"100", "200", "400", "800", "1600"} {
		f, err := inventory.ParseSpec(smarttSpec(g))
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Fabric: f, Matrix: oneFlow(128, 0, 127, 2<<20), Transport: transport.DefaultParams(), Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		rtt, rate, hops := s.pathInfo(0, 127)
		got := s.pathRTO(rtt, rate, hops)
		want := float64(rtt) + float64(hops)*float64(s.res.QueueBytes)*8e12/float64(rate)
		t.Logf("%s Gb/s: base RTT %.3f us, queue %d B, %d hops: RTO %.3f us", g, float64(rtt)/1e6, s.res.QueueBytes, hops, float64(got)/1e6)
		if d := float64(got) - want; d > 1 || d < -1 || got <= rtt {
			t.Errorf("%s Gb/s: RTO %d ps, want %.0f ps (base RTT %d ps)", g, got, want, rtt)
		}
	}
}

// On the SMaRTT fabric at 800 Gb/s an unloaded 2 MiB flow completes in the
// ideal time (it took 55.1 us instead of 32.7 us, every packet timing out,
// when the RTO overflowed below the base RTT).
func TestSMaRTT800GUnloadedFlow(t *testing.T) {
	f, err := inventory.ParseSpec(smarttSpec("800"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Fabric: f, Matrix: oneFlow(128, 0, 127, 2<<20), Transport: transport.DefaultParams(), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ideal := s.IdealFCT(0, 127, 2<<20)
	r := s.Run()
	fl := r.Flows[0]
	pktTime := transport.TxTime(s.wire(), 800e9)
	t.Logf("800 Gb/s, 2 MiB unloaded: FCT %.3f us, ideal %.3f us; %d timeouts, %d retransmissions", float64(fl.FCT)/1e6, float64(ideal)/1e6, fl.Timeouts, fl.Retx)
	if d := fl.FCT - ideal; d < 0 || d > pktTime {
		t.Errorf("FCT %d ps, ideal %d ps: more than a packet time (%d ps) apart", fl.FCT, ideal, pktTime)
	}
	if fl.Timeouts != 0 || fl.Retx != 0 || r.Packets.Retransmitted != 0 {
		t.Errorf("%d timeouts, %d retransmissions on an idle fabric", fl.Timeouts, fl.Retx)
	}
}

// An 8:1 oversubscribed permutation at 800 Gb/s congests the core: packets
// are trimmed and retransmitted on NACKs, but no retransmission timer fires
// (the RTO covers a full queue at every hop). With the overflowed RTO it had
// 107709 timeouts and 80671 retransmissions for 45020 trims.
func TestSMaRTT800GOversubscribedPermutation(t *testing.T) {
	f, err := inventory.ParseSpec(smarttSpec("800") + ",oversub=8")
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, Config{Fabric: f, Matrix: workloads.Permutation(f, 2<<20, 1), Transport: transport.DefaultParams(), Seed: 1})
	var timeouts uint64
	for _, fl := range r.Flows {
		timeouts += fl.Timeouts
	}
	st := fcts(t, r)
	t.Logf("800 Gb/s 8:1 permutation: FCT min/p50/p99/max %.1f / %.1f / %.1f / %.1f us; %+v; %d timeouts",
		st.min, st.p50, st.p99, st.max, r.Packets, timeouts)
	if timeouts != 0 {
		t.Errorf("%d timeouts: the RTO fires before a packet can have crossed the full queues", timeouts)
	}
	if r.Packets.Retransmitted > r.Packets.Trimmed {
		t.Errorf("%d retransmissions for %d trims: some were spurious", r.Packets.Retransmitted, r.Packets.Trimmed)
	}
	if r.Packets.Trimmed == 0 {
		t.Errorf("no trims: the permutation did not congest the 8:1 core")
	}
}
