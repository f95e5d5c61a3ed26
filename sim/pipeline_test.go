package sim

import (
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

// manyToOne is a leaf-spine fabric with flows from hosts on other leaves into
// host 0, one per sender, with the given sizes; they all start at 0.
func manyToOne(t *testing.T, sizes ...int64) (*inventory.Fabric, *workloads.Matrix) {
	t.Helper()
	f, err := inventory.ParseSpec("leafspine:leaves=4,spines=2,hosts_per_leaf=4,gbps=100")
	if err != nil {
		t.Fatal(err)
	}
	m := &workloads.Matrix{Hosts: f.NumHosts()}
	for i, size := range sizes {
		m.Flows = append(m.Flows, workloads.Flow{ID: i, Src: 4 + i, Dst: 0, Size: size, After: -1})
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return f, m
}

// hostDownlink returns the switch port that leads to host h.
func hostDownlink(s *Sim, h int) int {
	return int(s.ports[s.hosts[h].port].peerPort)
}

func TestStrictPriorityServesClass0First(t *testing.T) {
	f, m := manyToOne(t, 4<<20, 4<<20)
	cfg := Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1,
		Classes: []Class{{Priority: 0}, {Priority: 1}},
		ClassOf: func(fl workloads.Flow) int { return fl.ID % 2 }}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run()
	hi, lo := r.Flows[0], r.Flows[1]
	ideal := s.IdealFCT(hi.Src, hi.Dst, hi.Size)
	t.Logf("class 0 FCT %.1f us (ideal alone %.1f), class 1 FCT %.1f us", us(hi.FCT), us(ideal), us(lo.FCT))
	if hi.FCT < 0 || lo.FCT < 0 {
		t.Fatal("a flow did not finish")
	}
	// Class 0 runs as if alone; class 1 gets the link only after it.
	if float64(hi.FCT) > 1.1*float64(ideal) {
		t.Errorf("class 0 FCT %.1f us, want within 10%% of the ideal %.1f us", us(hi.FCT), us(ideal))
	}
	if float64(lo.FCT) < 1.8*float64(ideal) {
		t.Errorf("class 1 FCT %.1f us: it should have waited for class 0 (ideal alone %.1f us)", us(lo.FCT), us(ideal))
	}
	down := hostDownlink(s, 0)
	c0, c1 := s.ClassStats(down, 0), s.ClassStats(down, 1)
	if c0.MaxQueue > c1.MaxQueue {
		t.Errorf("class 0 queued up to %d B, more than class 1's %d B", c0.MaxQueue, c1.MaxQueue)
	}
}

func TestDWRRSharesByWeight(t *testing.T) {
	// Four senders per class into one host: both class queues of the
	// receiver's downlink stay backlogged. Count each class's bytes sent
	// over the sampling intervals that begin and end with both backlogged.
	f, m := manyToOne(t, 4<<20, 4<<20, 4<<20, 4<<20, 4<<20, 4<<20, 4<<20, 4<<20)
	p := htsimParams(transport.REPS)
	var s *Sim
	var down int
	var prev [2]uint64
	var got [2]uint64
	prevBoth := false
	cfg := Config{Fabric: f, Matrix: m, Transport: p, Seed: 1, NoECN: true, QueueBytes: 1 << 20,
		Classes:     []Class{{Weight: 3}, {Weight: 1}},
		ClassOf:     func(fl workloads.Flow) int { return fl.ID % 2 },
		SampleEvery: 2e6, // 2 us
		OnSample: func(_ *Sim, _ int64) {
			both := s.ClassQueueBytes(down, 0) > 0 && s.ClassQueueBytes(down, 1) > 0
			var cur [2]uint64
			for c := range cur {
				cur[c] = s.ClassStats(down, c).OutOctets
			}
			if prevBoth && both {
				for c := range cur {
					got[c] += cur[c] - prev[c]
				}
			}
			prev, prevBoth = cur, both
		}}
	var err error
	s, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	down = hostDownlink(s, 0)
	r := s.Run()
	if r.Incomplete > 0 {
		t.Fatalf("%d flows did not finish", r.Incomplete)
	}
	if got[1] == 0 || got[0]+got[1] < 8<<20 {
		t.Fatalf("both classes backlogged for only %d + %d bytes", got[0], got[1])
	}
	ratio := float64(got[0]) / float64(got[1])
	t.Logf("while both backlogged: class 0 sent %d B, class 1 %d B: %.3f:1", got[0], got[1], ratio)
	if ratio < 3*0.95 || ratio > 3*1.05 {
		t.Errorf("DWRR share %.3f:1, want 3:1 within 5%%", ratio)
	}
}

func TestSharedBufferDynamicThreshold(t *testing.T) {
	// Six senders into host 0 congest its downlink; one more flow goes from
	// host 8 to host 1, through another downlink of the same leaf.
	f, m := manyToOne(t, 1<<20, 1<<20, 1<<20, 1<<20, 1<<20, 1<<20)
	m.Flows = append(m.Flows, workloads.Flow{ID: 6, Src: 12, Dst: 1, Size: 1 << 20, After: -1})
	p := htsimParams(transport.REPS)
	p.Trimming = false
	const pool = 1 << 20
	res := map[bool]*Result{}
	var congested, other [2]PortStats
	for i, shared := range []bool{false, true} {
		cfg := Config{Fabric: f, Matrix: m, Transport: p, Seed: 1, NoECN: true}
		if shared {
			cfg.Buffer = Buffer{SharedBytes: pool, Alpha: 1}
		}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		res[shared] = s.Run()
		congested[i], other[i] = s.PortStats(hostDownlink(s, 0)), s.PortStats(hostDownlink(s, 1))
		if i == 1 {
			leaf := s.ports[hostDownlink(s, 0)].node
			static := int64(pool / len(f.Nodes[leaf].Ports))
			t.Logf("static share %d B, static queue %d B; congested port peaked at %d B (static queues: %d B); other port %d B",
				static, res[true].QueueBytes, congested[1].MaxQueue, congested[0].MaxQueue, other[1].MaxQueue)
			if congested[1].MaxQueue <= static || congested[1].MaxQueue <= res[true].QueueBytes {
				t.Errorf("the congested port peaked at %d B: no more than a static share (%d B) or queue (%d B)", congested[1].MaxQueue, static, res[true].QueueBytes)
			}
			if congested[1].MaxQueue > pool*6/10 {
				t.Errorf("the congested port took %d B of a %d B pool, want <= alpha/(1+alpha) = 1/2 (plus a packet)", congested[1].MaxQueue, pool)
			}
			if other[1].Drops > 0 {
				t.Errorf("the other port dropped %d packets: starved by the congested one", other[1].Drops)
			}
			if s.SharedBufferUsed(hostDownlink(s, 0)) != 0 {
				t.Errorf("shared buffer still holds %d B at the end", s.SharedBufferUsed(hostDownlink(s, 0)))
			}
		}
	}
	if res[true].Incomplete > 0 {
		t.Fatalf("%d flows did not finish", res[true].Incomplete)
	}
	if congested[1].Drops >= congested[0].Drops {
		t.Errorf("the congested port dropped %d packets with the shared buffer, %d with static queues: want fewer", congested[1].Drops, congested[0].Drops)
	}
	if fo := res[true].Flows[6].FCT; float64(fo) > 1.2*float64(res[false].Flows[6].FCT) {
		t.Errorf("the other port's flow took %.1f us with the shared buffer, %.1f us without", us(fo), us(res[false].Flows[6].FCT))
	}
}

func TestExplicitPathPinsFlow(t *testing.T) {
	f, m := manyToOne(t, 1<<20)
	s0, err := New(Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.OPS), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// host 4 -> leaf1 -> spine1 -> leaf0 -> host 0.
	leaf1 := s0.ports[s0.hosts[4].port].peerNode
	leaf0 := s0.ports[s0.hosts[0].port].peerNode
	var up, downSpine int = -1, -1
	for _, pid := range f.Nodes[leaf1].Ports {
		if n := s0.ports[pid].peerNode; f.Nodes[n].IsSwitch() && f.Nodes[n].Name == "spine1" {
			up = pid
			for _, q := range f.Nodes[n].Ports {
				if s0.ports[q].peerNode == leaf0 {
					downSpine = q
				}
			}
		}
	}
	if up < 0 || downSpine < 0 {
		t.Fatal("no spine1 in the fabric")
	}
	path := []int{up, downSpine, hostDownlink(s0, 0)}
	s, err := New(Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.OPS), Seed: 1, Paths: map[int][]int{0: path}})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run()
	if r.Incomplete > 0 {
		t.Fatal("the pinned flow did not finish")
	}
	for _, pid := range f.Nodes[leaf1].Ports {
		if n := s.ports[pid].peerNode; f.Nodes[n].IsSwitch() {
			st := s.PortStats(pid)
			if pid == up && st.OutPkts < 256 {
				t.Errorf("the pinned uplink sent %d packets, want all 256", st.OutPkts)
			}
			if pid != up && st.OutPkts > 0 {
				t.Errorf("uplink to %s sent %d packets off the explicit path", f.Nodes[n].Name, st.OutPkts)
			}
		}
	}
	// A path that does not lead to the receiver is refused.
	if _, err := New(Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.OPS), Seed: 1, Paths: map[int][]int{0: path[:2]}}); err == nil {
		t.Error("a path ending at a switch was accepted")
	}
	if _, err := New(Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.OPS), Seed: 1, Paths: map[int][]int{7: path}}); err == nil {
		t.Error("a path for a flow that does not exist was accepted")
	}
}

func TestPipelineConfigValidation(t *testing.T) {
	f, m := manyToOne(t, 64<<10)
	for name, cfg := range map[string]Config{
		"class out of range": {Classes: []Class{{}, {}}, ClassOf: func(workloads.Flow) int { return 2 }},
		"negative weight":    {Classes: []Class{{Weight: -1}}},
		"negative pool":      {Buffer: Buffer{SharedBytes: -1}},
		"tiny pool":          {Buffer: Buffer{SharedBytes: 100}},
	} {
		cfg.Fabric, cfg.Matrix, cfg.Transport = f, m, transport.DefaultParams()
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
