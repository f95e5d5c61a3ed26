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
