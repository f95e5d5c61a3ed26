package sim

import (
	"strconv"
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

// planeRate samples the receive rate of one host's NIC ports (all planes)
// every step ps and returns the rates in bit/s, one per interval.
type planeRate struct {
	ports []int
	last  uint64
	rates []float64
	step  int64
}

func (r *planeRate) sample(s *Sim, now int64) {
	var b uint64
	for _, p := range r.ports {
		b += s.PortStats(p).InOctets
	}
	if now > 0 {
		r.rates = append(r.rates, float64(b-r.last)*8e12/float64(r.step))
	}
	r.last = b
}

func planeFabric(t testing.TB, spec string) *inventory.Fabric {
	t.Helper()
	f, err := inventory.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// failover runs one flow host0 -> host1 and takes host0's plane-1 port
// down at 20 usec and back up at 300 usec; it returns host0's NIC rate per
// 5 usec and the flow's result.
func failover(t *testing.T, planes int, mode transport.PlaneMode) (*planeRate, FlowResult) {
	spec := "leafspine:leaves=2,spines=2,hosts_per_leaf=1,gbps=100,latency=500ns"
	if planes > 1 {
		spec += ",planes=" + itoa(planes)
	}
	f := planeFabric(t, spec)
	p := transport.DefaultParams()
	p.PlaneMode = mode
	m := &workloads.Matrix{Name: "pair", Hosts: 2, Flows: []workloads.Flow{{ID: 0, Src: 0, Dst: 1, Size: 16 << 20, After: -1}}}
	down := f.Ports[f.Host(0).Ports[min(1, planes-1)]].Link
	r := &planeRate{ports: f.Host(1).Ports, step: 5 * usec}
	s, err := New(Config{Fabric: f, Matrix: m, Transport: p, Seed: 1,
		Links:       []LinkEvent{{At: 20 * usec, Link: down}, {At: 300 * usec, Link: down, Up: true}},
		SampleEvery: r.step, OnSample: r.sample})
	if err != nil {
		t.Fatal(err)
	}
	res := s.Run()
	return r, res.Flows[0]
}

const usec = int64(1_000_000)

func itoa(n int) string { return strconv.Itoa(n) }

// TestPlaneFailover: a host port of one of 4 planes fails mid-flow; with
// PLB the host is back to >= 0.7 of its line rate (4 x 100 Gb/s) within
// 50 usec; with one plane the flow stalls until the link returns.
func TestPlaneFailover(t *testing.T) {
	r, fr := failover(t, 4, transport.PlanePLB)
	line := 4 * 100e9
	// Interval i covers [5i, 5i+5) usec; the port fails at 20 usec.
	before := r.rates[2]
	back := -1
	for i := 4; i < len(r.rates) && i < 60; i++ {
		if r.rates[i] >= 0.7*line {
			back = i
			break
		}
	}
	t.Logf("PLB, 4 planes: %.0f Gb/s before, back to >= 0.7 line rate in the interval ending %d us (%.0f Gb/s); FCT %.1f us",
		before/1e9, 5*(back+1), r.rates[max(back, 0)]/1e9, float64(fr.FCT)/1e6)
	if before < 0.9*line {
		t.Fatalf("before the failure the host sent %.0f Gb/s, want >= 0.9 x %.0f", before/1e9, line/1e9)
	}
	if back < 0 || int64(5*(back+1))*usec > 70*usec {
		t.Fatalf("PLB: not back to 0.7 x line rate within 50 us of the failure (rates %v)", gbps(r.rates[:min(20, len(r.rates))]))
	}
	if fr.FCT < 0 {
		t.Fatal("PLB flow did not complete")
	}
	// Steady state on three planes: 0.75 of line rate, nothing on the failed one.
	if mid := r.rates[20]; mid > 0.8*line || mid < 0.7*line {
		t.Fatalf("PLB on three planes at 100 us: %.0f Gb/s, want 0.7..0.8 x line", mid/1e9)
	}

	r1, fr1 := failover(t, 1, transport.PlanePLB)
	var stalled float64
	for i := 5; i < 59; i++ { // 25 .. 295 usec
		stalled += r1.rates[i]
	}
	t.Logf("one plane: %.0f Gb/s before, %.3f Gb/s mean while the link is down, FCT %.1f us", r1.rates[2]/1e9, stalled/54/1e9, float64(fr1.FCT)/1e6)
	if r1.rates[2] < 0.9*100e9 {
		t.Fatalf("single plane before the failure: %.0f Gb/s", r1.rates[2]/1e9)
	}
	if stalled > 0 {
		t.Fatalf("single plane: the host sent %.0f bits while its only port was down", stalled*5e-6)
	}
	if fr1.FCT < 0 || fr1.Start+fr1.FCT < 300*usec {
		t.Fatalf("single plane: flow finished at %d ps, want after the link returns at 300 us", fr1.Start+fr1.FCT)
	}
}

func gbps(v []float64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x / 1e9)
	}
	return out
}

// asymRun is the §6.7 testbed scaled down: 4 planes of 3 leaves and 2
// spines, 8 hosts per leaf (4 main, 4 noise) and 4 links per leaf and
// spine (non-blocking); with asym, the uplinks of leaf 1 in plane 2 and of
// leaf 2 in plane 3 run at a quarter of their rate. The main hosts under
// leaf 0 send size bytes to every main host under leaves 1 and 2
// (one-to-many); the noise hosts under leaf 0 do the same to the noise
// hosts there with 4x as many bytes (so the noise lasts). It returns the
// main senders' aggregate goodput in bit/s (their bytes over their last
// completion).
func asymRun(t *testing.T, mode transport.PlaneMode, lb transport.LBKind, asym bool, size int64) float64 {
	t.Helper()
	f := planeFabric(t, "leafspine:leaves=3,spines=2,hosts_per_leaf=8,links_per_spine=4,gbps=100,latency=500ns,planes=4")
	p := transport.DefaultParams()
	p.PlaneMode, p.LB = mode, lb
	m := &workloads.Matrix{Name: "one-to-many", Hosts: 24}
	main := 0
	for _, noise := range []bool{false, true} {
		off, sz := 0, size
		if noise {
			off, sz = 4, 4*size
		}
		for src := off; src < off+4; src++ {
			for _, leaf := range []int{1, 2} {
				for dst := leaf*8 + off; dst < leaf*8+off+4; dst++ {
					m.Flows = append(m.Flows, workloads.Flow{ID: len(m.Flows), Src: src, Dst: dst, Size: sz, After: -1})
				}
			}
		}
		if !noise {
			main = len(m.Flows)
		}
	}
	var links []LinkEvent
	if asym {
		for _, cut := range []string{"p2-leaf1", "p3-leaf2"} {
			n, ok := f.NodeByName(cut)
			if !ok {
				t.Fatalf("no %s", cut)
			}
			for _, pt := range f.Nodes[n].Ports {
				if f.Ports[pt].Uplink {
					links = append(links, LinkEvent{At: 0, Link: f.Ports[pt].Link, Up: true, RateFactor: 0.25})
				}
			}
		}
	}
	s, err := New(Config{Fabric: f, Matrix: m, Transport: p, Seed: 1, Links: links})
	if err != nil {
		t.Fatal(err)
	}
	res := s.Run()
	var end int64
	var bytes int64
	for _, fr := range res.Flows[:main] {
		if fr.FCT < 0 {
			t.Fatalf("%v asym=%v: flow %d did not finish", mode, asym, fr.ID)
		}
		end = max(end, fr.Start+fr.FCT)
		bytes += fr.Size
	}
	return float64(bytes) * 8e12 / float64(end)
}

// TestAsymmetricPlanes (Spectrum-X §6.7): with two planes' leaf uplinks
// cut to a quarter, per-plane CC keeps >= 0.95 of the symmetric
// throughput, Global CC (one window) falls to <= 0.6 of it, and entropy
// source routing stays <= 0.85 of PLB.
//
// Global CC over seeds 1-3 and 2, 4 and 8 MiB per flow: 0.57-0.61 of
// symmetric; PLB 0.955-0.993 (the test runs seed 1 at 2 MiB).
func TestAsymmetricPlanes(t *testing.T) {
	const size = 2 << 20
	sym := asymRun(t, transport.PlanePLB, transport.REPS, false, size)
	plb := asymRun(t, transport.PlanePLB, transport.REPS, true, size)
	gsym := asymRun(t, transport.PlaneGlobal, transport.REPS, false, size)
	glob := asymRun(t, transport.PlaneGlobal, transport.REPS, true, size)
	esr := asymRun(t, transport.PlaneEntropy, transport.OPS, true, size)
	esrREPS := asymRun(t, transport.PlaneEntropy, transport.REPS, true, size)
	t.Logf("one-to-many, 4 main senders x 400 Gb/s: symmetric PLB %.0f Gb/s, Global %.0f Gb/s; asymmetric PLB %.0f (%.2fx), Global %.0f (%.2fx), entropy SR spraying %.0f (%.2fx PLB), entropy SR with REPS %.0f (%.2fx PLB)",
		sym/1e9, gsym/1e9, plb/1e9, plb/sym, glob/1e9, glob/sym, esr/1e9, esr/plb, esrREPS/1e9, esrREPS/plb)
	if plb < 0.95*sym {
		t.Errorf("PLB under asymmetry: %.2f of symmetric, want >= 0.95", plb/sym)
	}
	if glob > 0.6*sym {
		t.Errorf("Global CC under asymmetry: %.2f of symmetric, want <= 0.6", glob/sym)
	}
	if esr > 0.85*plb {
		t.Errorf("entropy source routing: %.2f of PLB, want <= 0.85", esr/plb)
	}
	if esrREPS > plb {
		t.Errorf("entropy source routing with REPS beat per-plane CC: %.2f of PLB", esrREPS/plb)
	}
}

func TestPlaneDeterminism(t *testing.T) {
	a, fa := failover(t, 4, transport.PlaneEntropy)
	b, fb := failover(t, 4, transport.PlaneEntropy)
	if fa != fb || len(a.rates) != len(b.rates) {
		t.Fatalf("two runs differ: %+v vs %+v", fa, fb)
	}
	for i := range a.rates {
		if a.rates[i] != b.rates[i] {
			t.Fatalf("interval %d: %g vs %g", i, a.rates[i], b.rates[i])
		}
	}
}

// remoteFailure runs one flow host0 -> host1 over 4 planes and takes
// plane 1 away from 20 us to 400 us: with port "receiver" the receiver's
// plane-1 NIC link, with "spines" every leaf0 uplink of plane 1 (a plane
// failure the sender's NIC cannot see). It returns what host1 receives per
// 5 us.
func remoteFailure(t *testing.T, what string) (*planeRate, FlowResult) {
	t.Helper()
	f := planeFabric(t, "leafspine:leaves=2,spines=2,hosts_per_leaf=1,gbps=100,latency=500ns,planes=4")
	p := transport.DefaultParams()
	m := &workloads.Matrix{Name: "pair", Hosts: 2, Flows: []workloads.Flow{{ID: 0, Src: 0, Dst: 1, Size: 24 << 20, After: -1}}}
	var links []int
	switch what {
	case "receiver":
		links = append(links, f.Ports[f.HostPlanePort(1, 1)].Link)
	case "spines":
		n, _ := f.NodeByName("p1-leaf0")
		for _, pt := range f.Nodes[n].Ports {
			if f.Ports[pt].Uplink {
				links = append(links, f.Ports[pt].Link)
			}
		}
	}
	var ev []LinkEvent
	for _, l := range links {
		ev = append(ev, LinkEvent{At: 20 * usec, Link: l}, LinkEvent{At: 400 * usec, Link: l, Up: true})
	}
	r := &planeRate{ports: f.Host(1).Ports, step: 5 * usec}
	s, err := New(Config{Fabric: f, Matrix: m, Transport: p, Seed: 1, Links: ev, SampleEvery: r.step, OnSample: r.sample})
	if err != nil {
		t.Fatal(err)
	}
	res := s.Run()
	return r, res.Flows[0]
}

// TestRemotePlaneFailure: a plane fails where the sender's NIC cannot see
// it (the receiver's port, or the plane's leaf uplinks). PLB excludes the
// plane after two timeouts on it and goes on at 3/4 of line rate; its
// recovery probes bring the plane back after the failure ends.
func TestRemotePlaneFailure(t *testing.T) {
	line := 4 * 100e9
	for _, what := range []string{"receiver", "spines"} {
		r, fr := remoteFailure(t, what)
		back, full := -1, -1
		for i := 4; i < len(r.rates); i++ {
			if back < 0 && r.rates[i] >= 0.7*line {
				back = i
			}
			if i >= 80 && r.rates[i] >= 0.95*line {
				full = i
				break
			}
		}
		// Mean over 200..400 us: three planes.
		var mid float64
		for i := 40; i < 80; i++ {
			mid += r.rates[i] / 40
		}
		t.Logf("%s: %.0f Gb/s before; >= 0.7 line rate again from %d us; %.0f Gb/s between 200 and 400 us; >= 0.95 line rate again from %d us (plane back at 400 us); FCT %.1f us",
			what, r.rates[2]/1e9, 5*back, mid/1e9, 5*full, float64(fr.FCT)/1e6)
		if fr.FCT < 0 {
			t.Fatalf("%s: flow did not finish", what)
		}
		if back < 0 || back*5 > 200 {
			t.Errorf("%s: not back to 0.7 x line rate within 180 us of the failure", what)
		}
		if mid < 0.7*line || mid > 0.8*line {
			t.Errorf("%s: %.0f Gb/s on three planes, want 0.7..0.8 x line", what, mid/1e9)
		}
		if full < 0 || full*5 > 600 {
			t.Errorf("%s: the plane was not re-admitted within 200 us of its return", what)
		}
	}
}

// TestPlaneHotPathAllocations: the multi-plane NIC stage and the plane
// load balancer allocate nothing per packet (each mode, 64x the packets).
func TestPlaneHotPathAllocations(t *testing.T) {
	f := planeFabric(t, "leafspine:leaves=2,spines=2,hosts_per_leaf=4,gbps=100,latency=500ns,planes=4")
	for _, mode := range []transport.PlaneMode{transport.PlanePLB, transport.PlaneGlobal, transport.PlaneEntropy} {
		checkFlatAllocs(t, mode.String(), 8, 64<<10, 4<<20, func(size int64) Config {
			p := transport.DefaultParams()
			p.PlaneMode = mode
			return Config{Fabric: f, Matrix: workloads.Permutation(f, size, 1), Transport: p, Seed: 1}
		})
	}
}

// A flow that starts while one of its host's ports is down avoids that
// plane from its first packet, in every mode (entropy routing would
// otherwise wait on the dead port).
func TestPlaneDownBeforeStart(t *testing.T) {
	f := planeFabric(t, "leafspine:leaves=2,spines=1,hosts_per_leaf=1,gbps=100,latency=500ns,planes=4")
	down := f.Ports[f.HostPlanePort(0, 2)].Link
	for _, mode := range []transport.PlaneMode{transport.PlanePLB, transport.PlaneGlobal, transport.PlaneEntropy} {
		p := transport.DefaultParams()
		p.PlaneMode = mode
		m := &workloads.Matrix{Name: "late", Hosts: 2, Flows: []workloads.Flow{{ID: 0, Src: 0, Dst: 1, Size: 4 << 20, Start: 10 * usec, After: -1}}}
		s, err := New(Config{Fabric: f, Matrix: m, Transport: p, Seed: 1, Links: []LinkEvent{{At: 0, Link: down}}})
		if err != nil {
			t.Fatal(err)
		}
		fr := s.Run().Flows[0]
		ideal := float64(4<<20) * 8e12 / 300e9
		t.Logf("%v: FCT %.1f us (3 planes' serialisation %.1f us), %d timeouts", mode, float64(fr.FCT)/1e6, ideal/1e6, fr.Timeouts)
		if fr.FCT < 0 || fr.Timeouts > 0 || float64(fr.FCT) > 1.3*ideal {
			t.Errorf("%v: FCT %d ps, %d timeouts: want near %.0f ps without timeouts", mode, fr.FCT, fr.Timeouts, ideal)
		}
	}
}

// TestMinimalFlowsOnPlanes: environment flows (workloads.Flow.Minimal)
// on a multi-plane fabric get the run's transport with ECMP, planes
// included (the planes stage sets them after routing is built), and
// finish like the others.
func TestMinimalFlowsOnPlanes(t *testing.T) {
	f := planeFabric(t, "leafspine:leaves=2,spines=2,hosts_per_leaf=4,gbps=100,latency=500ns,planes=4")
	m := workloads.Permutation(f, 256<<10, 1)
	for i := range m.Flows {
		m.Flows[i].Minimal = i%2 == 0
	}
	s, err := New(Config{Fabric: f, Matrix: m, Transport: transport.DefaultParams(), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := s.tp
	want.LB = transport.ECMP
	if s.tpMinimal != want || s.tp.Planes != 4 {
		t.Fatalf("minimal flows' transport %+v, want the run's (%d planes) with ECMP", s.tpMinimal, s.tp.Planes)
	}
	for _, fr := range s.Run().Flows {
		if fr.FCT < 0 {
			t.Fatalf("flow %d did not finish", fr.ID)
		}
	}
}
