package sim

import (
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

// connected reports whether nodes a and b are joined by links that are
// not in down (a breadth-first search of the fabric's graph).
func connected(f *inventory.Fabric, down map[int]bool, a, b int) bool {
	seen := map[int]bool{a: true}
	q := []int{a}
	for len(q) > 0 {
		n := q[0]
		q = q[1:]
		if n == b {
			return true
		}
		for _, p := range f.Nodes[n].Ports {
			if down[f.Ports[p].Link] {
				continue
			}
			if m := f.PeerNode(p); !seen[m] {
				seen[m] = true
				q = append(q, m)
			}
		}
	}
	return false
}

func downSet(evs []LinkEvent) map[int]bool {
	d := map[int]bool{}
	for _, e := range evs {
		if !e.Up {
			d[e.Link] = true
		}
	}
	return d
}

// TestFailuresEveryFlowFinishes: with 5% of the 72-host Dragonfly's
// router-to-router links down (seeds 1-3), every flow of a 1 MiB
// permutation finishes with Spritz-Spray, Spritz-Scout and weighted OPS
// on source-guided routing and with Valiant routing, unless its hosts are
// disconnected in the fabric's graph (then it must be reported incomplete).
// Before the receiver chose its ACKs' entropy, two flows of seed 1
// (host17 <-> host68) never finished with the Spritz balancers: every EV
// whose data path lived had a dead reverse path, and the ACK took the
// data packet's EV.
func TestFailuresEveryFlowFinishes(t *testing.T) {
	f := spritzDragonfly(t, 2, 4, 2, 400)
	for seed := uint64(1); seed <= 3; seed++ {
		fails, err := f.RandomLinkFailures(0.05, seed, 0)
		if err != nil {
			t.Fatal(err)
		}
		down := downSet(fails)
		m := workloads.Permutation(f, 1<<20, seed)
		for _, sc := range []spritzScheme{
			{name: "Spray", mode: SourceGuided, lb: transport.Spray},
			{name: "Scout", mode: SourceGuided, lb: transport.Scout},
			{name: "OPS-w", mode: SourceGuided, lb: transport.OPSWeighted},
			{name: "Valiant", mode: Valiant, lb: transport.OPS},
			{name: "OWD", mode: PortMSB, lb: transport.OWD},
		} {
			_, r := runSpritz(t, f, m, sc, seed, func(c *Config) { c.Links = fails })
			moved := 0
			for _, fr := range r.Flows {
				cut := !connected(f, down, f.Hosts[fr.Src], f.Hosts[fr.Dst])
				if (fr.FCT < 0) != cut {
					t.Errorf("seed %d %s: flow %d (host%d->host%d) FCT %d ps, hosts disconnected %v", seed, sc.name, fr.ID, fr.Src, fr.Dst, fr.FCT, cut)
				}
				if fr.Timeouts > 0 {
					moved++
				}
			}
			t.Logf("seed %d %-7s %d links down: %d/%d flows done, %d with timeouts, p99 FCT %.0f us, sim end %.0f us, %d events, end %s",
				seed, sc.name, len(fails), len(r.Flows)-r.Incomplete, len(r.Flows), moved, p99(r), float64(r.SimEnd)/1e6, r.Events, r.EndReason)
			if r.Incomplete == 0 && r.EndReason != EndDone {
				t.Errorf("seed %d %s: every flow done but the run ended by %s", seed, sc.name, r.EndReason)
			}
		}
	}
}

func p99(r *Result) float64 {
	v, _ := p99FCTUs(r)
	return v
}

// minimalLive reports whether minimal routing has a path from switch
// node a to the switch of host h over links that are up: some member of
// each next-hop group on the way is up and leads on.
func (s *Sim) minimalLive(node int32, d int32, seen map[int32]bool) bool {
	i := s.rt.sw[node]
	if i == d {
		return true
	}
	if seen[node] {
		return false
	}
	seen[node] = true
	k := int(i)*s.ld.nsw + int(d)
	for _, p := range s.ld.ports[s.ld.dOff[k] : s.ld.dOff[k]+int32(s.ld.dCnt[k])] {
		if s.ports[p].up && s.minimalLive(s.ports[p].peerNode, d, seen) {
			return true
		}
	}
	return false
}

// TestFailuresStalledRunsEnd: OPS under random link failures ends. With
// source-guided routing every flow finishes (the run ended at 187 ms of
// simulated time after 100 s of wall time in the suite before the fix,
// and the run of seed 1 reached the 1 s limit with two flows unfinished).
// With Minimal routing (static tables, no reconvergence) the host pairs
// whose minimal path crosses a dead link in either direction cannot
// finish: the run ends once no flow made progress for the stall stretch
// (10 ms), long before the 1 s limit, and reports exactly those flows
// incomplete, checked against the routing tables. When the fabric
// reconverges (Config.Reconverge) the minimal tables avoid the dead links
// and every flow finishes, with Minimal and UGAL-L routing (before, the
// low-diameter tables ignored reconvergence).
func TestFailuresStalledRunsEnd(t *testing.T) {
	f := spritzDragonfly(t, 2, 4, 2, 400)
	for seed := uint64(1); seed <= 3; seed++ {
		fails, _ := f.RandomLinkFailures(0.05, seed, 0)
		m := workloads.Permutation(f, 1<<20, seed)
		_, r := runSpritz(t, f, m, spritzScheme{name: "OPS", mode: SourceGuided, lb: transport.OPS}, seed, func(c *Config) { c.Links = fails })
		t.Logf("seed %d OPS source-guided: %d incomplete, sim end %.0f us, %s", seed, r.Incomplete, float64(r.SimEnd)/1e6, r.EndReason)
		if r.Incomplete != 0 || r.EndReason != EndDone {
			t.Errorf("seed %d OPS source-guided: %d flows unfinished, ended by %s", seed, r.Incomplete, r.EndReason)
		}
		s, r := runSpritz(t, f, m, spritzScheme{name: "OPS", mode: Minimal, lb: transport.OPS}, seed, func(c *Config) { c.Links = fails })
		want := 0
		for _, fr := range r.Flows {
			src, dst := int32(f.HostLeaf(fr.Src)), int32(f.HostLeaf(fr.Dst))
			live := s.minimalLive(src, s.ld.hostSw[fr.Dst], map[int32]bool{}) && s.minimalLive(dst, s.ld.hostSw[fr.Src], map[int32]bool{})
			if !live {
				want++
			}
			if (fr.FCT < 0) == live {
				t.Errorf("seed %d minimal: flow %d FCT %d ps, minimal paths both ways live %v", seed, fr.ID, fr.FCT, live)
			}
		}
		t.Logf("seed %d OPS minimal: %d incomplete (%d pairs without a live minimal path), sim end %.1f us, stall %.0f us, %d events, %s",
			seed, r.Incomplete, want, float64(r.SimEnd)/1e6, float64(r.StallAfter)/1e6, r.Events, r.EndReason)
		if want == 0 {
			t.Errorf("seed %d: no pair lost its minimal path; the test does not exercise a stall", seed)
		}
		if r.EndReason != EndStalled || r.SimEnd >= DefaultEnd/10 {
			t.Errorf("seed %d minimal: ended by %s at %d ps, want a stall well before the %d ps limit", seed, r.EndReason, r.SimEnd, DefaultEnd)
		}
		// With reconvergence (1 us after the failures) the minimal
		// tables avoid the dead links: every flow finishes.
		for _, sc := range []spritzScheme{{name: "Minimal", mode: Minimal, lb: transport.OPS}, {name: "UGAL-L", mode: UGALL, lb: transport.OPS}} {
			_, r = runSpritz(t, f, m, sc, seed, func(c *Config) { c.Links, c.Reconverge = fails, 1_000_000 })
			t.Logf("seed %d OPS %s, reconverged after 1 us: %d incomplete, sim end %.1f us, %d reroutes", seed, sc.name, r.Incomplete, float64(r.SimEnd)/1e6, r.Reroutes)
			if r.Incomplete != 0 || r.Reroutes == 0 {
				t.Errorf("seed %d %s with reconvergence: %d flows unfinished, %d reroutes", seed, sc.name, r.Incomplete, r.Reroutes)
			}
		}
	}
}

// TestUnreachableEndsAtLimit: a flow whose destination's only link is
// down never finishes. With stall detection off the run ends at the
// default limit (1 s) and reports it incomplete; by default it ends once
// no flow progressed for the stall stretch; an explicit End is kept. Before
// the limit existed, Config.End 0 ran such a run for ever (every RTO a
// retransmission keeps the event queue non-empty).
func TestUnreachableEndsAtLimit(t *testing.T) {
	f := spritzDragonfly(t, 2, 4, 2, 400)
	m := &workloads.Matrix{Name: "x", Hosts: f.NumHosts(), Flows: []workloads.Flow{
		{ID: 0, Src: 0, Dst: 9, Size: 1 << 20, After: -1},
		{ID: 1, Src: 1, Dst: 20, Size: 1 << 20, After: -1},
	}}
	hl := f.Ports[f.Nodes[f.Hosts[9]].Ports[0]].Link
	cut := []LinkEvent{{At: 0, Link: hl}}
	for _, c := range []struct {
		name       string
		end, stall int64
		reason     EndReason
		at         int64
	}{
		{"no stall check", 0, -1, EndLimit, DefaultEnd},
		{"explicit end", 5_000_000_000, -1, EndLimit, 5_000_000_000},
		{"default", 0, 0, EndStalled, 0},
	} {
		_, r := runSpritz(t, f, m, spritzScheme{name: "OPS", mode: Minimal, lb: transport.OPS}, 1, func(cf *Config) {
			cf.Links, cf.End, cf.StallAfter = cut, c.end, c.stall
		})
		t.Logf("%s: ended by %s at %.1f us, %d incomplete, %d timeouts, %d events", c.name, r.EndReason, float64(r.SimEnd)/1e6, r.Incomplete, r.Flows[0].Timeouts, r.Events)
		if r.Incomplete != 1 || r.Flows[0].FCT >= 0 || r.Flows[1].FCT < 0 {
			t.Errorf("%s: flows %+v, want flow 0 (to the cut-off host) incomplete and flow 1 done", c.name, r.Flows)
		}
		if r.EndReason != c.reason {
			t.Errorf("%s: ended by %s, want %s", c.name, r.EndReason, c.reason)
		}
		if c.at > 0 && r.SimEnd != c.at {
			t.Errorf("%s: ended at %d ps, want %d", c.name, r.SimEnd, c.at)
		}
		if c.reason == EndStalled && (r.SimEnd < DefaultStallAfter || r.SimEnd > 2*DefaultStallAfter) {
			t.Errorf("%s: stalled run ended at %d ps, want within [%d, %d]", c.name, r.SimEnd, DefaultStallAfter, 2*DefaultStallAfter)
		}
	}
}

// TestEndLimits: End and StallAfter are checked.
func TestEndLimits(t *testing.T) {
	f := spritzDragonfly(t, 2, 4, 2, 400)
	m := workloads.Permutation(f, 4096, 1)
	for _, c := range []struct {
		end, stall int64
		ok         bool
	}{{0, 0, true}, {MaxEnd, MaxEnd, true}, {-1, 0, false}, {MaxEnd + 1, 0, false}, {0, -2, false}, {0, MaxEnd + 1, false}, {0, -1, true}} {
		_, err := New(Config{Fabric: f, Matrix: m, Transport: spritzParams(transport.OPS), End: c.end, StallAfter: c.stall})
		if (err == nil) != c.ok {
			t.Errorf("End %d StallAfter %d: error %v, want ok %v", c.end, c.stall, err, c.ok)
		}
	}
}

// TestStallBothModes: the stall check ends a run in the serial and the
// parallel mode alike, at the latest progress plus StallAfter (here 1 ns
// after the flow's start, before its first ACK), and the time limit
// reports as such.
func TestStallBothModes(t *testing.T) {
	f := refFabric(t)
	m := refMatrix(t, "one128.cm")
	for _, shards := range []int{0, 2} {
		r := run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1, StallAfter: 1000, Shards: shards})
		if r.EndReason != EndStalled || r.SimEnd != 1000 || r.Incomplete != 1 {
			t.Errorf("%d shards, stall after 1 ns: ended by %s at %d ps with %d incomplete, want stalled at 1000", shards, r.EndReason, r.SimEnd, r.Incomplete)
		}
		r = run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1, End: 100e6, Shards: shards})
		if r.EndReason != EndLimit || r.SimEnd != 100e6 {
			t.Errorf("%d shards, end 100 us: ended by %s at %d ps", shards, r.EndReason, r.SimEnd)
		}
		r = run(t, Config{Fabric: f, Matrix: m, Transport: htsimParams(transport.REPS), Seed: 1, Shards: shards})
		if r.EndReason != EndDone || r.Incomplete != 0 {
			t.Errorf("%d shards: ended by %s with %d incomplete, want done", shards, r.EndReason, r.Incomplete)
		}
	}
}
