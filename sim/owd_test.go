package sim

import (
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

// TestOWDADV1 is the non-shortest-path paper's Fig. 5b on D1 (9 groups of
// 4 switches, 2 hosts and 2 global links per switch, 72 hosts, 100 Gb/s):
// ADV1, 64 flows of 8 MiB from group 0 to group 5, throughput while every
// connection is active (payload delivered to group 5's hosts from 1.5 to
// 3 ms, when the run stops and no flow has finished: the paths have
// converged; probes go every max(cwnd, 100) data packets, so the flows
// crowded on the direct link take a few hundred microseconds). Shortest paths only (minimal routing) share the one
// global link between the groups: ~100 Gb/s. One-way-delay probing
// (port-msb routing, OWD balancer: the paper's delta1 0.8, delta2 75 MTU
// times, delta3 100 packets) spreads the flows over the direct link and
// the 7 intermediate groups: >= 640 Gb/s [paper: the 800 Gb/s bound]. RoCE's
// 1024-byte MTU (delta2 = 6.5 us) and 512 KiB queues, so that queuing
// delays can differ by 75 MTU times.
func TestOWDADV1(t *testing.T) {
	f, err := inventory.ParseSpec("dragonfly:p=2,a=4,h=2,gbps=100")
	if err != nil {
		t.Fatal(err)
	}
	m, err := workloads.GroupPairs(f, workloads.ADV1, 8<<20, 64, 0, 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	var toDst []int // switch ports facing group 5's hosts
	for h := 0; h < f.NumHosts(); h++ {
		if f.Nodes[f.HostLeaf(h)].Pod == 5 {
			toDst = append(toDst, f.Ports[f.Nodes[f.Hosts[h]].Ports[0]].Peer)
		}
	}
	const end = 3_000_000_000 // 3 ms: every flow is still active
	run := func(mode LowDiameter, lb transport.LBKind) (gbps float64, s *Sim, r *Result) {
		tp := transport.DefaultParams()
		tp.CC, tp.LB = transport.DCTCP, lb
		tp.MTU = 1024
		type pt struct{ at, bytes int64 }
		var series []pt
		cfg := Config{Fabric: f, Matrix: m, Transport: tp, Seed: 1, LowDiameter: mode, QueueBytes: 512 << 10, End: end,
			SampleEvery: 10_000_000, OnSample: func(s *Sim, now int64) {
				var b int64
				for _, p := range toDst {
					b += int64(s.PortStats(p).OutOctets)
				}
				series = append(series, pt{now, b})
			}}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r = s.Run()
		for _, fr := range r.Flows {
			if fr.FCT >= 0 {
				t.Fatalf("%s: flow %d finished before %d us: not all connections active", mode, fr.ID, int64(end)/1e6)
			}
		}
		// From 1.5 ms to the end: the paths have converged.
		var from, to pt
		for _, x := range series {
			if x.at <= end/2 {
				from = x
			}
			to = x
		}
		if to.at <= from.at {
			t.Fatalf("%s: no samples", mode)
		}
		payload := float64(tp.MTU) / float64(tp.MTU+tp.HeaderBytes)
		return float64((to.bytes-from.bytes)*8) / float64(to.at-from.at) * 1e3 * payload, s, r
	}
	short, _, _ := run(Minimal, transport.ECMP)
	owd, s, r := run(PortMSB, transport.OWD)
	var probes uint64
	for i := range s.flows {
		probes += s.flows[i].snd.Stats.Probes
	}
	t.Logf("ADV1 on D1, 64 connections active, 1.5-3 ms: shortest paths %.0f Gb/s; one-way-delay probing %.0f Gb/s (%d path switches, %d probes, %d trims) [paper: 100 and 800]",
		short, owd, s.OWDSwitches(), probes, r.Packets.Trimmed)
	if short < 85 || short > 101 {
		t.Errorf("shortest paths: %.0f Gb/s, want ~100 (one global link)", short)
	}
	if owd < 640 {
		t.Errorf("one-way-delay probing: %.0f Gb/s, want >= 640", owd)
	}
}
