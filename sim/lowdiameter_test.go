package sim

import (
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

// smallDragonfly has 9 groups of 4 routers, 2 hosts per router and 36
// global links: 72 global-link directions.
const smallDragonfly = "dragonfly:p=2,a=4,h=2"

// nextGroup is the adversarial pattern: every host sends to the host in
// the same position of the next group.
func nextGroup(f *inventory.Fabric, size int64) *workloads.Matrix {
	n := f.NumHosts()
	per := f.HostsPerPod
	m := &workloads.Matrix{Name: "next-group", Hosts: n}
	for h := 0; h < n; h++ {
		m.Flows = append(m.Flows, workloads.Flow{ID: h, Src: h, Dst: (h + per) % n, Size: size, After: -1})
	}
	return m
}

// globalDataDirections counts the directions of global links that carried
// data (average packet above 512 bytes: not just ACKs).
func globalDataDirections(s *Sim, f *inventory.Fabric) (used, total int) {
	for _, l := range f.Links {
		if !l.Global {
			continue
		}
		for _, p := range []int{l.A, l.B} {
			total++
			st := s.PortStats(p)
			if st.OutPkts > 0 && st.OutOctets/st.OutPkts > 512 {
				used++
			}
		}
	}
	return used, total
}

type ldRun struct {
	s   *Sim
	r   *Result
	gbs float64 // aggregate goodput, Gb/s: payload bytes over the makespan
}

func runLD(t *testing.T, f *inventory.Fabric, m *workloads.Matrix, mode LowDiameter) ldRun {
	t.Helper()
	tp := transport.DefaultParams()
	tp.LB = transport.ECMP
	s, err := New(Config{Fabric: f, Matrix: m, Transport: tp, Seed: 7, LowDiameter: mode})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run()
	var bytes int64
	var end int64
	for _, fr := range r.Flows {
		if fr.FCT < 0 {
			t.Fatalf("%s: flow %d did not finish", mode, fr.ID)
		}
		bytes += fr.Size
		end = max(end, fr.Start+fr.FCT)
	}
	return ldRun{s, r, float64(bytes*8) / float64(end) * 1e12 / 1e9}
}

// TestDragonflyMinimalIsNotHopCount is issue 17's warning as a test: with
// every group sending to the next, minimal routing (local-global-local)
// puts each group pair's traffic on its one global link, 9 of 72
// directions, where hop-count ECMP also takes global-global paths.
func TestDragonflyMinimalIsNotHopCount(t *testing.T) {
	f, err := inventory.ParseSpec(smallDragonfly)
	if err != nil {
		t.Fatal(err)
	}
	m := nextGroup(f, 256<<10)
	res := map[LowDiameter]ldRun{}
	for _, mode := range []LowDiameter{LowDiameterOff, Minimal, Valiant, UGALL, UGALG} {
		res[mode] = runLD(t, f, m, mode)
		used, total := globalDataDirections(res[mode].s, f)
		name := mode.String()
		if mode == LowDiameterOff {
			name = "hop-count ECMP"
		}
		t.Logf("next group, %s: %d of %d global-link directions carry data, %.0f Gb/s aggregate", name, used, total, res[mode].gbs)
		switch mode {
		case Minimal:
			if used != 9 || total != 72 {
				t.Errorf("minimal: %d of %d global-link directions carry data, want 9 of 72", used, total)
			}
		case Valiant:
			if used < 60 {
				t.Errorf("valiant: only %d of %d global-link directions carry data", used, total)
			}
		}
	}
	if res[Valiant].gbs < 1.5*res[Minimal].gbs || res[UGALL].gbs < 1.2*res[Minimal].gbs || res[UGALG].gbs < 1.2*res[Minimal].gbs {
		t.Errorf("adversarial: non-minimal routing should beat minimal: minimal %.0f, valiant %.0f, ugal-l %.0f, ugal-g %.0f Gb/s",
			res[Minimal].gbs, res[Valiant].gbs, res[UGALL].gbs, res[UGALG].gbs)
	}
	// Uniform: all-to-all. Minimal should be best (or equal).
	u := workloads.AllToAll(f, 16<<10, 0, 3)
	var mn float64
	for _, mode := range []LowDiameter{Minimal, Valiant, UGALL, UGALG} {
		r := runLD(t, f, u, mode)
		t.Logf("all-to-all, %s: %.0f Gb/s aggregate, %d non-minimal of %d decided", mode, r.gbs, r.s.ld.nNonMin, r.s.ld.nMin+r.s.ld.nNonMin)
		if mode == Minimal {
			mn = r.gbs
		} else if mode == Valiant && r.gbs > 1.05*mn {
			t.Errorf("all-to-all: valiant %.0f Gb/s beats minimal %.0f", r.gbs, mn)
		}
	}
}

func TestLowDiameterDeterministicSlimFly(t *testing.T) {
	f, err := inventory.ParseSpec("slimfly:q=5,p=2")
	if err != nil {
		t.Fatal(err)
	}
	m := workloads.Permutation(f, 128<<10, 1)
	for _, mode := range []LowDiameter{Minimal, Valiant, UGALL, UGALG} {
		a, b := runLD(t, f, m, mode), runLD(t, f, m, mode)
		if a.r.Events != b.r.Events || a.r.SimEnd != b.r.SimEnd {
			t.Fatalf("%s: two runs differ: %d/%d events, end %d/%d", mode, a.r.Events, b.r.Events, a.r.SimEnd, b.r.SimEnd)
		}
		t.Logf("slimfly q=5 permutation, %s: %.0f Gb/s", mode, a.gbs)
	}
	// Minimal on a Slim Fly is at most 2 router hops: the unloaded path
	// RTT of every flow is bounded, and Valiant took detours.
	if v := runLD(t, f, m, Valiant); v.s.ld.nNonMin == 0 {
		t.Fatal("valiant never took a detour")
	}
}

func TestLowDiameterAllocations(t *testing.T) {
	f, err := inventory.ParseSpec(smallDragonfly)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []LowDiameter{Valiant, UGALG} {
		allocs := func(size int64) float64 {
			m := nextGroup(f, size)
			return testing.AllocsPerRun(2, func() {
				s, err := New(Config{Fabric: f, Matrix: m, Transport: transport.DefaultParams(), Seed: 1, LowDiameter: mode})
				if err != nil {
					t.Fatal(err)
				}
				s.Run()
			})
		}
		a, b := allocs(64<<10), allocs(2<<20)
		t.Logf("%s: %.0f allocations for 64 KiB flows, %.0f for 2 MiB", mode, a, b)
		if b-a > 40*float64(f.NumHosts()) {
			t.Errorf("%s: the event loop allocates per packet: %.0f extra", mode, b-a)
		}
	}
}

func TestLowDiameterConfig(t *testing.T) {
	f, _ := inventory.ParseSpec(smallDragonfly)
	m := nextGroup(f, 4096)
	if _, err := New(Config{Fabric: f, Matrix: m, Transport: transport.DefaultParams(), LowDiameter: Valiant, Routing: RoutingAdaptive}); err == nil {
		t.Fatal("valiant with adaptive routing accepted")
	}
	for _, s := range []string{"minimal", "valiant", "ugal-l", "ugal-g"} {
		if m, ok := ParseLowDiameter(s); !ok || m.String() != s {
			t.Fatalf("%s: %v %v", s, m, ok)
		}
	}
}

// TestMinimalFlowsStayMinimal: flows marked workloads.Flow.Minimal
// (environment traffic) take the minimal routes whatever the routing
// mode and load balancer: with every group sending to the next, they use
// the 9 global-link directions minimal routing uses, where the same
// flows unmarked spread over many more.
func TestMinimalFlowsStayMinimal(t *testing.T) {
	f, err := inventory.ParseSpec(smallDragonfly)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mode LowDiameter
		lb   transport.LBKind
	}{{Valiant, transport.ECMP}, {UGALL, transport.OPS}, {ValiantHop, transport.OPS}, {SourceGuided, transport.Spray}, {SourceGuided, transport.OPSWeighted}} {
		for _, minimal := range []bool{false, true} {
			m := nextGroup(f, 256<<10)
			for i := range m.Flows {
				m.Flows[i].Minimal = minimal
			}
			tp := transport.DefaultParams()
			tp.LB = c.lb
			s, err := New(Config{Fabric: f, Matrix: m, Transport: tp, Seed: 3, LowDiameter: c.mode})
			if err != nil {
				t.Fatal(err)
			}
			r := s.Run()
			for _, fr := range r.Flows {
				if fr.FCT < 0 {
					t.Fatalf("%s/%s minimal=%v: flow %d did not finish", c.mode, c.lb, minimal, fr.ID)
				}
			}
			used, total := globalDataDirections(s, f)
			t.Logf("%s, %s, minimal flows %v: %d of %d global-link directions carried data", c.mode, c.lb, minimal, used, total)
			if minimal && used != 9 {
				t.Errorf("%s/%s: minimal flows used %d global-link directions, want 9", c.mode, c.lb, used)
			}
			if !minimal && used <= 9 {
				t.Errorf("%s/%s: unmarked flows used only %d global-link directions: the check cannot tell", c.mode, c.lb, used)
			}
		}
	}
}

// TestSlimFlyMinimalWithGlobalLinks: with its links between the two
// halves tagged global, a Slim Fly's minimal routing (fewest global hops,
// then fewest local) still reaches every router in at most 2 hops (its
// diameter), and Valiant still detours through a random switch, not a
// group: a Slim Fly's groups are not a Dragonfly's.
func TestSlimFlyMinimalWithGlobalLinks(t *testing.T) {
	for _, spec := range []string{"slimfly:q=5,p=1", "slimfly:q=9,p=1"} {
		f, err := inventory.ParseSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		m := &workloads.Matrix{Name: "one", Hosts: f.NumHosts(), Flows: []workloads.Flow{{ID: 0, Src: 0, Dst: 1, Size: 1, After: -1}}}
		s, err := New(Config{Fabric: f, Matrix: m, Transport: transport.DefaultParams(), LowDiameter: Valiant})
		if err != nil {
			t.Fatal(err)
		}
		ld := &s.ld
		if ld.global || ld.nT != ld.nsw {
			t.Fatalf("%s: Valiant targets %d of %d switches (global %v): want every switch", spec, ld.nT, ld.nsw, ld.global)
		}
		hist := map[int32]int{}
		for i := 0; i < ld.nsw; i++ {
			for d := 0; d < ld.nsw; d++ {
				c := ld.dCost[i*ld.nsw+d]
				g, l := c/ldGlobal, c%ldGlobal
				if i != d && (c <= 0 || g+l > 2) {
					t.Fatalf("%s: switch %d -> %d: minimal path of %d global and %d local hops, want at most 2 hops", spec, i, d, g, l)
				}
				hist[c]++
			}
		}
		t.Logf("%s: minimal paths by (global, local) cost: %v", spec, hist)
		if hist[2*ldGlobal] == 0 || hist[ldGlobal+ldLocal] == 0 {
			t.Errorf("%s: no 2-global or global+local minimal paths: are the halves' links global?", spec)
		}
	}
}
