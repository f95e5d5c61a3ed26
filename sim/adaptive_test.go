package sim

import (
	"sort"
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

// arSpec is the 64-host, 1:1 leaf-spine of the adaptive-routing tests.
const arSpec = "leafspine:leaves=8,spines=8,hosts_per_leaf=8,gbps=100"

func arFabric(t testing.TB, spec string) *inventory.Fabric {
	t.Helper()
	f, err := inventory.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// arOut is what an adaptive-routing experiment measures.
type arOut struct {
	r    *Result
	s    *Sim
	bw   []float64 // per flow, ideal FCT / FCT: the fraction of an unloaded pair's bandwidth, sorted
	qavg float64   // mean data+control bytes per fabric (switch-to-switch) port over the samples
	qup  float64   // the same for the ports where adaptive routing chooses: leaf uplinks
}

// arRun runs m on f with the given routing and endpoint load balancer.
func arRun(t testing.TB, f *inventory.Fabric, m *workloads.Matrix, lb transport.LBKind, mod func(*Config)) arOut {
	t.Helper()
	tp := transport.DefaultParams()
	tp.LB = lb
	var o arOut
	var fabricPorts []int32
	var up []bool
	var sum, sumUp float64
	var samples int
	cfg := Config{Fabric: f, Matrix: m, Transport: tp, Seed: 1, SampleEvery: 200e3,
		OnSample: func(s *Sim, now int64) {
			if fabricPorts == nil {
				for i := range s.ports {
					p := &s.ports[i]
					if p.host < 0 && s.hostOf[p.peerNode] < 0 {
						fabricPorts = append(fabricPorts, int32(i))
						leaf := false
						for _, q := range s.f.Nodes[p.node].Ports {
							leaf = leaf || s.hostOf[s.ports[q].peerNode] >= 0
						}
						up = append(up, leaf)
					}
				}
			}
			var b, bu int64
			var nu int
			for i, pid := range fabricPorts {
				d := s.ports[pid].dataB + s.ports[pid].ctrlB
				b += d
				if up[i] {
					bu += d
					nu++
				}
			}
			sum += float64(b) / float64(len(fabricPorts))
			sumUp += float64(bu) / float64(nu)
			samples++
		}}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o.s, o.r = s, s.Run()
	for _, fl := range o.r.Flows {
		if fl.FCT < 0 {
			t.Fatalf("flow %d (%d->%d) did not finish", fl.ID, fl.Src, fl.Dst)
		}
		o.bw = append(o.bw, float64(s.IdealFCT(fl.Src, fl.Dst, fl.Size))/float64(fl.FCT))
	}
	sort.Float64s(o.bw)
	if samples > 0 {
		o.qavg = sum / float64(samples)
		o.qup = sumUp / float64(samples)
	}
	return o
}

func withAR(stale int64) func(*Config) {
	return func(c *Config) { c.Routing, c.ARStaleness = RoutingAdaptive, stale }
}

func (o arOut) p(q float64) float64 { return Quantile(o.bw, q) }

// arFast is the 64-host, 1:1 leaf-spine at 400 Gb/s, the paper's NIC speed.
const arFast = "leafspine:leaves=8,spines=8,hosts_per_leaf=8,gbps=400"

// TestARPermutationVsECMP: a permutation on a 1:1 leaf-spine. ECMP pins each
// flow to one path and colliding flows share links; adaptive routing sprays
// every packet onto the least-loaded uplink (paper §6.2, Fig. 8a: ETH median
// 300 and minimum 25 of 400 Gb/s, SPX p01 377 Gb/s, 98%).
func TestARPermutationVsECMP(t *testing.T) {
	f := arFabric(t, arFast)
	m := workloads.Permutation(f, 4<<20, 1)
	ecmp := arRun(t, f, m, transport.ECMP, nil)
	ar := arRun(t, f, m, transport.ECMP, withAR(100e3))
	live := arRun(t, f, m, transport.ECMP, withAR(0))
	reps := arRun(t, f, m, transport.REPS, nil)
	for _, c := range []struct {
		name string
		o    arOut
	}{{"ECMP (hash, one entropy per flow)", ecmp}, {"AR, 100 ns staleness", ar}, {"AR, live depths", live}, {"REPS (hash, endpoint LB)", reps}} {
		t.Logf("%-34s pair bandwidth / unloaded pair: min %.3f p01 %.3f median %.3f (wall %v)", c.name, c.o.bw[0], c.o.p(0.01), c.o.p(0.5), c.o.r.Wall)
	}
	if ecmp.p(0.5) > 0.85 || ecmp.bw[0] > 0.3 {
		t.Errorf("ECMP median %.3f, minimum %.3f: want <= 0.85 and <= 0.3 (collisions)", ecmp.p(0.5), ecmp.bw[0])
	}
	if ar.p(0.01) < 0.94 {
		t.Errorf("AR p01 %.3f, want >= 0.94", ar.p(0.01))
	}
}

// TestARStaleness: the mean queue at the ports where adaptive routing
// chooses (leaf uplinks) grows with the age of the depths it decides on, and
// at 2.5 us it is about that of oblivious spraying (paper Fig. 1b: ~5x from
// 100 ns to 1 us, random in practice at 2.5 us).
func TestARStaleness(t *testing.T) {
	f := arFabric(t, arFast)
	m := workloads.Permutation(f, 4<<20, 1)
	q := map[string]float64{}
	for _, c := range []struct {
		name string
		lb   transport.LBKind
		mod  func(*Config)
	}{
		{"AR live", transport.ECMP, withAR(0)},
		{"AR 100ns", transport.ECMP, withAR(100e3)},
		{"AR 1us", transport.ECMP, withAR(1e6)},
		{"AR 2.5us", transport.ECMP, withAR(2.5e6)},
		{"OPS", transport.OPS, nil},
	} {
		o := arRun(t, f, m, c.lb, c.mod)
		q[c.name] = o.qup
		t.Logf("%-9s mean uplink queue %6.0f B (%.1f packets), all fabric ports %6.0f B; pair bandwidth p01 %.3f, trimmed %d",
			c.name, o.qup, o.qup/4160, o.qavg, o.p(0.01), o.r.Packets.Trimmed)
	}
	if r := q["AR 1us"] / q["AR 100ns"]; r < 3 {
		t.Errorf("queue at 1 us staleness is %.1fx that at 100 ns, want >= 3x", r)
	}
	if r := q["AR 2.5us"] / q["OPS"]; r < 0.5 || r > 2 {
		t.Errorf("queue at 2.5 us staleness is %.2fx that of oblivious spraying (OPS), want 0.5x..2x", r)
	}
}

// TestWeightedARLinkRemoval: 10% of the leaf-spine links removed (one of ten
// uplinks of every leaf). Weighted AR shifts traffic towards the spines with
// more capacity left to the destination leaf, and the p01 pair bandwidth
// drops about as much as the capacity (paper §6.4: -11% for -10%).
func TestWeightedARLinkRemoval(t *testing.T) {
	f := arFabric(t, "leafspine:leaves=8,spines=2,links_per_spine=5,hosts_per_leaf=10,gbps=400")
	m := workloads.Permutation(f, 4<<20, 1)
	var links []LinkEvent
	for i, ls := range spineLinks(f) {
		links = append(links, LinkEvent{Link: ls[(i%2)*5]}) // leaf i loses a link to spine i%2
	}
	loss := float64(len(links)) / float64(8*10)
	coarse := func(weighted bool) func(*Config) {
		return func(c *Config) { withAR(100e3)(c); c.ARWeighted = weighted; c.ARQuantum = 32 * 4160 }
	}
	var got float64
	for _, c := range []struct {
		name string
		lb   transport.LBKind
		mod  func(*Config)
	}{
		{"ECMP", transport.ECMP, nil},
		{"AR", transport.ECMP, withAR(100e3)},
		{"AR, 32-packet quantum", transport.ECMP, coarse(false)},
		{"weighted AR, 32-packet quantum", transport.ECMP, coarse(true)},
	} {
		base := arRun(t, f, m, c.lb, c.mod)
		deg := arRun(t, f, m, c.lb, func(cf *Config) {
			if c.mod != nil {
				c.mod(cf)
			}
			cf.Links = links
		})
		d := 1 - deg.p(0.01)/base.p(0.01)
		t.Logf("%-31s p01 pair bandwidth %.3f -> %.3f (-%.1f%% for -%.0f%% links), median %.3f -> %.3f",
			c.name, base.p(0.01), deg.p(0.01), 100*d, 100*loss, base.p(0.5), deg.p(0.5))
		got = d
	}
	if got > 1.3*loss {
		t.Errorf("weighted AR: p01 bandwidth loss %.1f%%, more than 1.3x the %.0f%% capacity loss", 100*got, 100*loss)
	}
}

// TestARVictimUnderNoise: an all-to-all among two hosts per leaf next to
// bisection noise from the other six (a permutation between leaves, paper
// §6.3: 16 victim and 48 noise nodes). ECMP collides victim flows with noise
// flows; AR keeps the victim near its bandwidth alone. Incast noise is logged.
func TestARVictimUnderNoise(t *testing.T) {
	f := arFabric(t, arFast)
	for _, noise := range []string{"perm", "incast"} {
		for _, c := range []struct {
			name string
			mod  func(*Config)
		}{{"ECMP", nil}, {"AR", withAR(100e3)}} {
			ma, nv := victimMatrix(t, f, victimSize, "", 0)
			mn, _ := victimMatrix(t, f, victimSize, noise, 64<<20)
			a := victimBW(arRun(t, f, ma, transport.ECMP, c.mod), nv)
			n := victimBW(arRun(t, f, mn, transport.ECMP, c.mod), nv)
			t.Logf("%s noise, %-4s: victim all-to-all alone %.0f Gb/s, with noise %.0f Gb/s: %.2fx", noise, c.name, a, n, n/a)
			if noise != "perm" {
				continue
			}
			if c.mod == nil && n/a > 0.6 {
				t.Errorf("ECMP: the victim keeps %.2fx of its bandwidth alone under noise, want <= 0.6x", n/a)
			}
			if c.mod != nil && n/a < 0.9 {
				t.Errorf("AR: the victim keeps %.2fx of its bandwidth alone under noise, want >= 0.9x", n/a)
			}
		}
	}
}

const victimSize = 1 << 20

// TestARDeterminism: adaptive routing draws its tie-breaks from the run's
// seeded generator; two runs are identical.
func TestARDeterminism(t *testing.T) {
	f := arFabric(t, arSpec)
	m := workloads.Permutation(f, 256<<10, 1)
	a := arRun(t, f, m, transport.ECMP, withAR(1e6))
	b := arRun(t, f, m, transport.ECMP, withAR(1e6))
	if a.r.Events != b.r.Events || a.r.SimEnd != b.r.SimEnd || a.r.Packets != b.r.Packets {
		t.Errorf("two identical AR runs differ: %d/%d events, end %d/%d", a.r.Events, b.r.Events, a.r.SimEnd, b.r.SimEnd)
	}
}

// victimMatrix: an all-to-all among the first four hosts of every leaf
// (flows 0..), optionally next to noise from the other four.
func victimMatrix(t testing.TB, f *inventory.Fabric, size int64, noise string, noiseSize int64) (*workloads.Matrix, int) {
	const perLeaf, leaves, nvh = 8, 8, 2
	m := &workloads.Matrix{Hosts: f.NumHosts()}
	var victims []int
	for l := 0; l < leaves; l++ {
		for h := 0; h < nvh; h++ {
			victims = append(victims, l*perLeaf+h)
		}
	}
	for _, a := range victims {
		for _, b := range victims {
			if a != b {
				m.Flows = append(m.Flows, workloads.Flow{ID: len(m.Flows), Src: a, Dst: b, Size: size, After: -1})
			}
		}
	}
	nv := len(m.Flows)
	add := func(a, b int) {
		m.Flows = append(m.Flows, workloads.Flow{ID: len(m.Flows), Src: a, Dst: b, Size: noiseSize, After: -1})
	}
	switch noise {
	case "incast":
		// Every noise host of leaves 1..7 sends to a noise host of leaf 0: four 7:1 incasts.
		for l := 1; l < leaves; l++ {
			for h := nvh; h < perLeaf; h++ {
				add(l*perLeaf+h, h)
			}
		}
	case "perm":
		for l := 0; l < leaves; l++ {
			for h := nvh; h < perLeaf; h++ {
				add(l*perLeaf+h, ((l+1)%leaves)*perLeaf+h)
			}
		}
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m, nv
}

func victimBW(o arOut, nv int) float64 {
	var end int64
	var bytes int64
	for _, fl := range o.r.Flows[:nv] {
		if e := fl.Start + fl.FCT; e > end {
			end = e
		}
		bytes += fl.Size
	}
	return float64(bytes) * 8e12 / float64(end) / 1e9
}

// spineLinks returns, per leaf (a switch with hosts), its links to spines.
func spineLinks(f *inventory.Fabric) [][]int {
	var out [][]int
	for n := range f.Nodes {
		if !f.Nodes[n].IsSwitch() {
			continue
		}
		var ls []int
		leaf := false
		for _, p := range f.Nodes[n].Ports {
			m := f.PeerNode(p)
			if f.Nodes[m].IsSwitch() {
				ls = append(ls, f.Ports[p].Link)
			} else {
				leaf = true
			}
		}
		if leaf {
			out = append(out, ls)
		}
	}
	return out
}
