package sim

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

// TestParallelSameForAnyWorkers: the parallel mode's results depend on the
// shard count, never on how many goroutines run the shards.
func TestParallelSameForAnyWorkers(t *testing.T) {
	f := refFabric(t)
	perm := workloads.Permutation(f, 512<<10, 3)
	inc, err := workloads.Incast(f, 16, -1, 256<<10, 3)
	if err != nil {
		t.Fatal(err)
	}
	coalesced := htsimParams(transport.REPS)
	coalesced.AckEvery, coalesced.AckDelay = 4, 2*transport.Microsecond
	for _, tc := range []struct {
		name   string
		m      *workloads.Matrix
		tp     transport.Params
		shards int
	}{
		{"perm-reps-4", perm, htsimParams(transport.REPS), 4},
		{"perm-ops-3", perm, htsimParams(transport.OPS), 3},
		{"incast-coalesced-8", inc, coalesced, 8},
	} {
		var ref []byte
		var refRes *Result
		for _, w := range []int{1, 2, 3, tc.shards} {
			r := run(t, Config{Fabric: f, Matrix: tc.m, Transport: tc.tp, Seed: 7, Shards: tc.shards, Workers: w})
			if r.Shards != tc.shards || r.Workers != min(w, tc.shards) || r.Lookahead != 1e6 {
				t.Fatalf("%s: %d shards, %d workers, lookahead %d ps; want %d, %d, 1 us", tc.name, r.Shards, r.Workers, r.Lookahead, tc.shards, w)
			}
			fcts(t, r) // every flow finished
			j := reportBytes(t, r)
			if ref == nil {
				ref, refRes = j, r
				t.Logf("%s: %d events, %+v, sim end %.1f us", tc.name, r.Events, r.Packets, float64(r.SimEnd)/1e6)
				continue
			}
			if !bytes.Equal(j, ref) || r.Events != refRes.Events || r.Packets != refRes.Packets || r.SimEnd != refRes.SimEnd {
				t.Errorf("%s: %d workers differ from 1: %d events %+v end %d vs %d events %+v end %d",
					tc.name, w, r.Events, r.Packets, r.SimEnd, refRes.Events, refRes.Packets, refRes.SimEnd)
			}
			for i := range r.Flows {
				if r.Flows[i] != refRes.Flows[i] {
					t.Fatalf("%s: %d workers: flow %d %+v, with 1 worker %+v", tc.name, w, i, r.Flows[i], refRes.Flows[i])
				}
			}
		}
	}
}

// TestParallelDependenciesAndGroups: successors and barrier groups start
// after their predecessors at the first barrier at or after the serial
// mode's start (at most the lookahead later), the same for any workers.
func TestParallelDependenciesAndGroups(t *testing.T) {
	f := refFabric(t)
	chain := workloads.AllToAll(f, 64<<10, 2, 1)
	// Two barrier groups: every host sends to its neighbour, then (group 2,
	// after all of group 1) to the host 64 further on.
	groups := &workloads.Matrix{Hosts: 128}
	for h := 0; h < 128; h++ {
		groups.Flows = append(groups.Flows, workloads.Flow{ID: h, Src: h, Dst: (h + 1) % 128, Size: 128 << 10, After: -1, Group: 1})
	}
	for h := 0; h < 128; h++ {
		groups.Flows = append(groups.Flows, workloads.Flow{ID: 128 + h, Src: h, Dst: (h + 64) % 128, Size: 128 << 10, After: -1, Group: 2, AfterGroup: 1, Start: 3e6})
	}
	for _, m := range []*workloads.Matrix{chain, groups} {
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		var ref *Result
		for _, w := range []int{1, 2} {
			r := run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1, Shards: 2, Workers: w})
			fcts(t, r)
			if ref != nil {
				for i := range r.Flows {
					if r.Flows[i] != ref.Flows[i] {
						t.Fatalf("workers 1 and 2 differ at flow %d: %+v vs %+v", i, ref.Flows[i], r.Flows[i])
					}
				}
				continue
			}
			ref = r
			byID := map[int]FlowResult{}
			var group1End int64
			for _, fr := range r.Flows {
				byID[fr.ID] = fr
				if fr.ID < 128 && m == groups {
					group1End = max(group1End, fr.Start+fr.FCT)
				}
			}
			for _, fl := range m.Flows {
				var after int64 = -1
				switch {
				case fl.After >= 0:
					pre := byID[fl.After]
					after = pre.Start + pre.FCT
				case fl.AfterGroup > 0:
					after = group1End
				default:
					continue
				}
				want := after + fl.Start
				if got := byID[fl.ID].Start; got < want || got >= want+r.Lookahead {
					t.Fatalf("flow %d started at %d, want in [%d, %d + lookahead %d)", fl.ID, got, want, want, r.Lookahead)
				}
			}
		}
	}
}

func TestParallelEndAndUnsupported(t *testing.T) {
	f := refFabric(t)
	m := refMatrix(t, "one128.cm")
	r := run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1, End: 100e6, Shards: 2})
	if r.Incomplete != 1 || r.Flows[0].FCT != -1 || r.SimEnd != 100e6 {
		t.Fatalf("end at 100 us: incomplete %d, fct %d, sim end %d", r.Incomplete, r.Flows[0].FCT, r.SimEnd)
	}
	for _, c := range []struct {
		name string
		set  func(*Config)
	}{
		{"link events", func(c *Config) { c.Links = []LinkEvent{{At: 1e6, Link: 0}} }},
		{"telemetry sampling", func(c *Config) { c.SampleEvery, c.OnSample = 1e6, func(*Sim, int64) {} }},
		{"adaptive routing", func(c *Config) { c.Routing = RoutingAdaptive }},
		{"PFC", func(c *Config) { c.PFC.Enabled = true }},
	} {
		cfg := Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1, Shards: 2}
		c.set(&cfg)
		if ParallelUnsupported(&cfg) == "" {
			t.Errorf("%s: ParallelUnsupported says supported", c.name)
		}
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s with 2 shards: error %v, want one naming it", c.name, err)
		}
		cfg.Shards = 0
		if _, err := New(cfg); err != nil {
			t.Errorf("%s in the serial mode: %v", c.name, err)
		}
	}
	cfg := Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1, Shards: 256}
	if _, err := New(cfg); err == nil {
		t.Errorf("256 shards accepted")
	}
}

// TestPartitionFollowsPods: on a fat tree every pod (its hosts, leaves and
// aggregation switches) lands in one shard, pods are spread evenly, and
// the core switches are spread evenly over the shards.
func TestPartitionFollowsPods(t *testing.T) {
	f, err := inventory.ParseSpec("fattree:hosts=1024,tiers=3,gbps=100")
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	ns := partition(f, n)
	podShard := map[int]uint8{}
	pods := make([]int, n)
	cores := make([]int, n)
	for i, nd := range f.Nodes {
		if nd.Pod < 0 {
			if nd.Tier == 2 {
				cores[ns[i]]++
			}
			continue
		}
		k, ok := podShard[nd.Pod]
		if !ok {
			podShard[nd.Pod] = ns[i]
			pods[ns[i]]++
			continue
		}
		if k != ns[i] {
			t.Fatalf("pod %d is split: %s in shard %d, others in %d", nd.Pod, nd.Name, ns[i], k)
		}
	}
	for k := 0; k < n; k++ {
		if pods[k] != pods[0] || cores[k] != cores[0] || cores[k] == 0 {
			t.Fatalf("uneven shards: pods %v, core switches %v", pods, cores)
		}
	}
	t.Logf("%d shards: pods %v, core switches %v", n, pods, cores)
}
