package sim

import (
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/workloads"
)

func TestSamplingInSimulatedTime(t *testing.T) {
	f := refFabric(t)
	m := &workloads.Matrix{Hosts: 128, Flows: []workloads.Flow{{ID: 0, Src: 0, Dst: 127, Size: 2000000, After: -1}}}
	nic := f.Nodes[f.Hosts[0]].Ports[0]
	var times []int64
	var out []uint64
	cfg := Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1,
		SampleEvery: 10e6, // 10 us
		OnSample: func(s *Sim, now int64) {
			times = append(times, now)
			out = append(out, s.PortStats(nic).OutOctets)
		}}
	r := run(t, cfg)
	// 176.2 us run: samples at 0, 10, ..., 170 us, plus the final one.
	if len(times) != 19 || times[0] != 0 || times[17] != 170e6 || times[18] != r.SimEnd {
		t.Fatalf("sample times %v (end %d)", times, r.SimEnd)
	}
	// Between samples the NIC sends at line rate: 10 us x 100 Gb/s = 125,000 B.
	for i := 2; i < 15; i++ {
		if d := out[i] - out[i-1]; d < 120000 || d > 130000 {
			t.Fatalf("NIC sent %d B between samples %d and %d, want about 125,000", d, i-1, i)
		}
	}
	if out[len(out)-1] != 489*4150+2010 {
		t.Fatalf("final NIC out-octets %d, want every packet once (%d)", out[len(out)-1], 489*4150+2010)
	}
}

func TestQueueHighWaterPerInterval(t *testing.T) {
	f := refFabric(t)
	m, err := workloads.Incast(f, 8, 5, 1<<20, 1)
	if err != nil {
		t.Fatal(err)
	}
	into := f.Ports[f.Nodes[f.Hosts[5]].Ports[0]].Peer
	var marks []int64
	cfg := Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1, SampleEvery: 20e6,
		OnSample: func(s *Sim, now int64) { marks = append(marks, s.TakeQueueHighWater(into)) }}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run()
	var peak int64
	for _, v := range marks {
		if v > peak {
			peak = v
		}
	}
	if marks[0] != 0 || peak == 0 || peak != s.PortStats(into).MaxQueue || peak > r.QueueBytes {
		t.Fatalf("interval high-water marks %v, lifetime max %d, capacity %d", marks, s.PortStats(into).MaxQueue, r.QueueBytes)
	}
	if _, err := New(Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), SampleEvery: 5}); err == nil {
		t.Fatal("sampling without OnSample accepted")
	}
}

// BackloggedNs is the time the queue held a packet waiting: under an
// 8-to-1 incast the port into the receiver is backlogged almost the whole
// time it sends, and while it is, it sends back to back at line rate, so
// bytes sent over backlogged time is at least the line rate (and never
// the time more than the elapsed time). Idle ports stay at 0.
func TestBackloggedTime(t *testing.T) {
	f := refFabric(t)
	m, err := workloads.Incast(f, 8, 5, 1<<20, 1)
	if err != nil {
		t.Fatal(err)
	}
	into := f.Ports[f.Nodes[f.Hosts[5]].Ports[0]].Peer
	idle := f.Ports[f.Nodes[f.Hosts[100]].Ports[0]].Peer
	type point struct{ now, busy, octets int64 }
	var pts []point
	cfg := Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1, SampleEvery: 20e6,
		OnSample: func(s *Sim, now int64) {
			pts = append(pts, point{now, s.BackloggedNs(into), int64(s.PortStats(into).OutOctets)})
			if s.BackloggedNs(idle) != 0 {
				t.Errorf("idle port backlogged %d ns", s.BackloggedNs(idle))
			}
		}}
	r := run(t, cfg)
	line := float64(f.PortRate(into)) // bit/s
	var total int64
	for i := 1; i < len(pts); i++ {
		busy := pts[i].busy - pts[i-1].busy
		elapsedNs := (pts[i].now - pts[i-1].now) / 1000
		if busy < 0 || busy > elapsedNs {
			t.Fatalf("interval %d: backlogged %d ns of %d", i, busy, elapsedNs)
		}
		total += busy
		if busy >= elapsedNs/10 {
			// Bound: bits over busy time, with one 4 KiB packet of slack
			// for the packet in flight at an interval's edge.
			bound := float64(pts[i].octets-pts[i-1].octets+4200) * 8 / (float64(busy) / 1e9)
			if bound < line {
				t.Errorf("interval %d: %.1f Gb/s over the backlogged time, below line rate %.0f Gb/s", i, bound/1e9, line/1e9)
			}
		}
	}
	t.Logf("%d samples, backlogged %d ns of a %d ps run", len(pts), total, r.SimEnd)
	// 8 MiB into one 100 Gb/s port takes about 670 µs; most of it backlogged.
	if sec := float64(total) / 1e9; sec < 0.5*float64(r.SimEnd)/1e12 {
		t.Errorf("backlogged %.0f µs of a %.0f µs run", sec*1e6, float64(r.SimEnd)/1e6)
	}
}
