package transport

import (
	"math"
	"testing"
)

// testPaths: a minimal path (EV 0x00FF, 800 ns) and three non-minimal ones.
var testPaths = []PathEV{
	{EV: 0x00FF, Latency: 800 * Nanosecond, Minimal: true},
	{EV: 0x0101, Latency: 1200 * Nanosecond},
	{EV: 0x0102, Latency: 1400 * Nanosecond},
	{EV: 0x0203, Latency: 1600 * Nanosecond},
}

func pathBalancer(t *testing.T, kind LBKind, mut func(*Params)) (*balancer, *rng) {
	t.Helper()
	p := DefaultParams()
	p.LB = kind
	if mut != nil {
		mut(&p)
	}
	r := newRNG(1, 1)
	b := newBalancer(kind, p.Entropies, p.REPSBuffer, &r, &p, testPaths)
	return &b, &r
}

func TestSpritzWeights(t *testing.T) {
	w := make([]float64, len(testPaths))
	spritzWeights(testPaths, 3, w)
	want := []float64{3 * 1600.0 / 800, 3 * 1600.0 / 1200, 3 * 1600.0 / 1400, 1}
	for i := range w {
		if math.Abs(w[i]-want[i]) > 1e-9 {
			t.Errorf("w[%d] = %g, want %g (Eq. 1 x w_scale 3, longest 1.0)", i, w[i], want[i])
		}
	}
	// Weighted OPS samples by those weights.
	b, _ := pathBalancer(t, OPSWeighted, nil)
	n := map[uint16]int{}
	const draws = 100000
	for i := 0; i < draws; i++ {
		n[b.next(0)]++
	}
	tot := 6 + 4 + 3*1600.0/1400 + 1
	for i, p := range testPaths {
		got, exp := float64(n[p.EV])/draws, want[i]/tot
		if math.Abs(got-exp) > 0.01 {
			t.Errorf("path %04x drawn %.3f of the time, want %.3f", p.EV, got, exp)
		}
	}
}

func TestSpritzSprayRecyclesOncePerGoodAck(t *testing.T) {
	b, _ := pathBalancer(t, Spray, nil)
	// Two good ACKs on 0x0102 and one ECN ACK on 0x0101: the buffer holds
	// 0x0102 twice (Algorithm 3 pushes duplicates, ignores ECN).
	b.onAck(0x0102, false)
	b.onAck(0x0101, true)
	b.onAck(0x0102, false)
	if b.sp.bN != 2 {
		t.Fatalf("buffer holds %d paths, want 2", b.sp.bN)
	}
	for i := 0; i < 2; i++ {
		if e := b.next(0); e != 0x0102 {
			t.Fatalf("send %d: entropy %04x, want the recycled 0102", i, e)
		}
	}
	if b.sp.bN != 0 {
		t.Fatalf("spray keeps %d paths after using them", b.sp.bN)
	}
	// Buffer capacity is 8.
	for i := 0; i < 20; i++ {
		b.onAck(0x0203, false)
	}
	if b.sp.bN != DefaultSpritzBuffer {
		t.Errorf("buffer holds %d, want %d", b.sp.bN, DefaultSpritzBuffer)
	}
}

func TestSpritzScoutReusesUntilECNThreshold(t *testing.T) {
	b, _ := pathBalancer(t, Scout, func(p *Params) { p.SpritzExplore = 1 << 20 })
	b.onAck(0x0203, false)
	b.onAck(0x0101, false) // shorter: goes in front
	b.onAck(0x0101, false) // already there: not added twice
	if b.sp.bN != 2 {
		t.Fatalf("buffer holds %d, want 2", b.sp.bN)
	}
	for i := 0; i < 10; i++ {
		if e := b.next(0); e != 0x0101 {
			t.Fatalf("send %d: %04x, want the cached shortest 0101", i, e)
		}
	}
	for i := 0; i < DefaultSpritzECNThreshold; i++ {
		b.onAck(0x0101, true)
	}
	if e := b.next(0); e != 0x0101 {
		t.Fatalf("after %d ECN marks the path should stay (threshold is 'more than')", DefaultSpritzECNThreshold)
	}
	b.onAck(0x0101, true)
	if e := b.next(0); e != 0x0203 {
		t.Fatalf("after %d ECN marks: %04x, want the next cached path 0203", DefaultSpritzECNThreshold+1, e)
	}
	b.onLoss(0, 0x0203, false) // NACK removes it
	if b.sp.bN != 0 {
		t.Fatalf("NACK left %d cached paths", b.sp.bN)
	}
}

func TestSpritzExploreThreshold(t *testing.T) {
	b, _ := pathBalancer(t, Scout, nil)
	b.onAck(0x0203, false)
	other := 0
	for i := 0; i < 45*10; i++ {
		if b.next(0) != 0x0203 {
			other++
		}
	}
	// One forced sample every 45 sends (count > 44): 10 samples, most of
	// them (weight 13.4 of 14.4) another path.
	if other < 6 || other > 10 {
		t.Errorf("%d of 450 sends left the cached path, want about 10 (one per 45)", other)
	}
}

func TestSpritzTimeoutBlocksPath(t *testing.T) {
	b, _ := pathBalancer(t, Spray, func(p *Params) { p.SpritzBlock = 100 * Microsecond })
	now := 10 * Microsecond
	b.onLoss(now, 0x00FF, true)
	for i := 0; i < 5000; i++ {
		if b.next(now+50*Microsecond) == 0x00FF {
			t.Fatal("a path that timed out was sampled while blocked")
		}
	}
	seen := false
	for i := 0; i < 1000 && !seen; i++ {
		seen = b.next(now+101*Microsecond) == 0x00FF
	}
	if !seen {
		t.Error("the blocked path never came back after SpritzBlock")
	}
}

func TestSpritzECNRateBiasesMinimal(t *testing.T) {
	b, _ := pathBalancer(t, Spray, nil)
	for i := 0; i < 200; i++ {
		b.onAck(0x0203, true)
	}
	if !b.sp.biased {
		t.Fatal("an all-ECN ACK stream did not set the minimal bias")
	}
	n := 0
	for i := 0; i < 10000; i++ {
		if b.next(0) == 0x00FF {
			n++
		}
	}
	// minimal weight 6 x 4 = 24 of 24 + 4 + 3.43 + 1
	if f := float64(n) / 10000; f < 0.7 {
		t.Errorf("biased: minimal path drawn %.2f of the time, want about 0.74", f)
	}
	for i := 0; i < 200; i++ {
		b.onAck(0x0203, false)
	}
	if b.sp.biased {
		t.Error("bias stayed after the ECN rate fell")
	}
}

func TestFlicrChangesPathPerCellAfterCongestion(t *testing.T) {
	b, _ := pathBalancer(t, Flicr, func(p *Params) { p.FlicrCell = 4 })
	first := b.next(0)
	for i := 1; i < 12; i++ {
		if e := b.next(0); e != first {
			t.Fatalf("send %d: %04x; without congestion Flicr keeps its path %04x", i, e, first)
		}
	}
	changed := false
	for k := 0; k < 20 && !changed; k++ {
		b.onAck(first, true)
		cell := b.next(0)
		changed = cell != first
		for i := 1; i < 4; i++ {
			if e := b.next(0); e != cell {
				t.Fatalf("path changed inside a flowcell (send %d: %04x after %04x)", i, e, cell)
			}
		}
	}
	if !changed {
		t.Error("Flicr never left a path that kept being ECN-marked")
	}
}

func TestPathListFallbacks(t *testing.T) {
	// ECMP, OPS and REPS with a path list choose from it.
	for _, k := range []LBKind{ECMP, OPS, REPS} {
		b, _ := pathBalancer(t, k, nil)
		for i := 0; i < 100; i++ {
			if e := b.next(0); b.sp.index(e) < 0 {
				t.Fatalf("%s sent entropy %04x, not on the path list", k, e)
			}
		}
	}
	// Without one they keep to the entropy space and build no list.
	for _, k := range []LBKind{ECMP, OPS, REPS} {
		p := DefaultParams()
		p.Entropies = 16
		r := newRNG(1, 1)
		b := newBalancer(k, p.Entropies, 8, &r, &p, nil)
		if b.sp != nil {
			t.Errorf("%s without a path list built one", k)
		}
		for i := 0; i < 100; i++ {
			if e := b.next(0); e >= 16 {
				t.Fatalf("%s sent entropy %d outside 16 entropies", k, e)
			}
		}
	}
}

// coarseBalancer is a path-aware balancer without a path list: the
// coarse-grained list of p.Entropies EVs.
func coarseBalancer(t *testing.T, kind LBKind, entropies uint32, mut func(*Params)) *balancer {
	t.Helper()
	p := DefaultParams()
	p.LB, p.Entropies = kind, entropies
	if mut != nil {
		mut(&p)
	}
	r := newRNG(7, 3)
	b := newBalancer(kind, p.Entropies, p.REPSBuffer, &r, &p, nil)
	if b.sp == nil || b.sp.paths != nil || b.sp.n != int(entropies) {
		t.Fatalf("%s without Flow.Paths: no coarse list of %d EVs", kind, entropies)
	}
	return &b
}

func TestCoarseListHasEqualWeights(t *testing.T) {
	const n, draws = 16, 160000
	for _, k := range []LBKind{OPSWeighted, Spray, Scout} {
		b := coarseBalancer(t, k, n, nil)
		cnt := make([]int, n)
		for i := 0; i < draws; i++ {
			e := b.next(0) // no feedback: every send samples
			if e >= n {
				t.Fatalf("%s: EV %d outside the %d entropies", k, e, n)
			}
			cnt[e]++
		}
		for e, c := range cnt {
			if f := float64(c) / draws; math.Abs(f-1.0/n) > 0.1/n {
				t.Errorf("%s: EV %d drawn %.4f of the time, want %.4f (equal weights)", k, e, f, 1.0/n)
			}
		}
	}
	// The whole 16-bit space: EV 65535 is on the list, and the list costs
	// no per-EV memory (Spray keeps neither weights nor a table).
	b := coarseBalancer(t, Spray, 1<<16, nil)
	if b.sp.index(0xFFFF) != 0xFFFF || b.sp.base != nil || b.sp.cum != nil || b.sp.ecnCnt != nil {
		t.Errorf("coarse list of 65536: index(ffff) %d, base %d, cum %d, ecn counters %d entries",
			b.sp.index(0xFFFF), len(b.sp.base), len(b.sp.cum), len(b.sp.ecnCnt))
	}
}

// coarseLoop drives a balancer in a closed loop of window packets, one send
// per microsecond, on a fabric that hashes EV e onto path e%4. fb says what
// comes back for a packet sent on path p at step i: an ACK (ecn or not) or,
// with timeout, nothing until the RTO. It returns the share of sends per path.
func coarseLoop(b *balancer, window, steps, start int, fb func(i, path int) (ecn, timeout bool)) [4]float64 {
	var share [4]float64
	inflight := make([]uint16, 0, window)
	for i := start; i < start+steps; i++ {
		now := Time(i) * Microsecond
		if len(inflight) == window {
			e := inflight[0]
			inflight = inflight[1:]
			if ecn, to := fb(i, int(e)%4); to {
				b.onLoss(now, e, true)
			} else {
				b.onAck(e, ecn)
			}
		}
		e := b.next(now)
		share[e%4]++
		inflight = append(inflight, e)
	}
	for p := range share {
		share[p] /= float64(steps)
	}
	return share
}

// TestCoarseSprayAvoidsMarkedEVs: on hash ECMP, the EVs hashed onto a
// congested path come back ECN-marked; Spray stops reusing them (OPS keeps
// a quarter of its packets there), and uses them again once they are good.
func TestCoarseSprayAvoidsMarkedEVs(t *testing.T) {
	bad := func(_, p int) (bool, bool) { return p == 2, false }
	good := func(_, _ int) (bool, bool) { return false, false }
	ops := coarseBalancer(t, OPSWeighted, 64, nil)
	spray := coarseBalancer(t, Spray, 64, nil)
	so := coarseLoop(ops, 8, 20000, 0, bad)
	ss := coarseLoop(spray, 8, 20000, 0, bad)
	t.Logf("share of sends on the marked path: ops-w %.3f, spritz-spray %.3f", so[2], ss[2])
	if so[2] < 0.22 || so[2] > 0.28 {
		t.Errorf("ops-w put %.3f of its packets on the marked path, want about 0.25 (it ignores feedback)", so[2])
	}
	// Only the forced explorations (one in 45 sends) and the samples that
	// replace them reach the marked EVs.
	if ss[2] > 0.02 {
		t.Errorf("spritz-spray put %.3f of its packets on the marked path, want under 0.02", ss[2])
	}
	// The path recovers: explorations find its EVs good again and their
	// ACKs bring them into the buffer.
	back := coarseLoop(spray, 8, 100000, 20000, good)
	late := coarseLoop(spray, 8, 20000, 120000, good)
	t.Logf("after recovery: %.3f of the next 100000 sends, %.3f of the 20000 after", back[2], late[2])
	if late[2] < 0.10 {
		t.Errorf("spritz-spray keeps avoiding a recovered path: %.3f of its sends, want >= 0.10", late[2])
	}
}

// TestCoarseTimeoutBlocksEV: an EV that timed out is not sampled for
// SpritzBlock, then explored again; with every EV blocked the sender
// still sends.
func TestCoarseTimeoutBlocksEV(t *testing.T) {
	for _, k := range []LBKind{Spray, Scout, Flicr} {
		b := coarseBalancer(t, k, 8, func(p *Params) { p.SpritzBlock = 100 * Microsecond; p.FlicrCell = 1 })
		now := 10 * Microsecond
		b.onLoss(now, 3, true)
		b.onLoss(now, 5, true)
		// send marks Flicr's path after each packet so that it samples a
		// new one for every flowcell (of one packet).
		send := func(at Time) uint16 {
			e := b.next(at)
			if k == Flicr {
				b.onAck(e, true)
			}
			return e
		}
		seen := map[uint16]int{}
		for i := 0; i < 4000; i++ {
			seen[send(now+50*Microsecond)]++
		}
		if seen[3]+seen[5] > 0 || len(seen) != 6 {
			t.Fatalf("%s: blocked EVs 3 and 5 sent %d and %d times; %d EVs used, want the other 6", k, seen[3], seen[5], len(seen))
		}
		n3 := 0
		for i := 0; i < 4000; i++ {
			if send(now+101*Microsecond) == 3 {
				n3++
			}
		}
		if n3 == 0 {
			t.Errorf("%s: EV 3 never explored again after its block ended", k)
		}
	}
	b := coarseBalancer(t, Spray, 4, nil)
	for e := uint16(0); e < 4; e++ {
		b.onLoss(Microsecond, e, true)
	}
	seen := map[uint16]bool{}
	for i := 0; i < 200; i++ {
		seen[b.next(2*Microsecond)] = true
	}
	if len(seen) != 4 {
		t.Errorf("every EV blocked: sent on %d EVs, want all 4 (fall back to equal weights)", len(seen))
	}
}

// TestCoarseSprayAvoidsTimedOutEVs: EVs hashed onto a dead path time out;
// Spray blocks them and, when the path comes back, explores them again.
func TestCoarseSprayAvoidsTimedOutEVs(t *testing.T) {
	b := coarseBalancer(t, Spray, 64, func(p *Params) { p.SpritzBlock = 200 * Microsecond })
	dead := coarseLoop(b, 8, 20000, 0, func(_, p int) (bool, bool) { return false, p == 1 })
	t.Logf("dead path: %.4f of the sends", dead[1])
	if dead[1] > 0.01 {
		t.Errorf("spritz-spray sent %.4f of its packets onto a dead path, want under 0.01", dead[1])
	}
	back := coarseLoop(b, 8, 200000, 20000, func(_, _ int) (bool, bool) { return false, false })
	if back[1] < 0.05 {
		t.Errorf("after the path came back spritz-spray sent only %.4f of its packets there", back[1])
	}
}

func TestCoarseScoutAndFlicr(t *testing.T) {
	// Scout caches good EVs in arrival order (latency unknown) and drops
	// one after more than ecn_threshold marks.
	b := coarseBalancer(t, Scout, 64, func(p *Params) { p.SpritzExplore = 1 << 20 })
	b.onAck(40, false)
	b.onAck(9, false)
	if b.next(0) != 40 || b.sp.bN != 2 {
		t.Fatalf("scout: want the first good EV 40 first, buffer of 2 (got %d)", b.sp.bN)
	}
	for i := 0; i <= DefaultSpritzECNThreshold; i++ {
		b.onAck(40, true)
	}
	if e := b.next(0); e != 9 {
		t.Fatalf("scout: after %d marks on EV 40 sent on %d, want the next cached EV 9", DefaultSpritzECNThreshold+1, e)
	}
	// Flicr keeps an EV per flowcell and leaves it after a mark.
	f := coarseBalancer(t, Flicr, 64, func(p *Params) { p.FlicrCell = 4 })
	first := f.next(0)
	for i := 1; i < 8; i++ {
		if e := f.next(0); e != first {
			t.Fatalf("flicr: send %d on EV %d, want its cell's EV %d", i, e, first)
		}
	}
	f.onAck(first, true)
	if e := f.next(0); e == first {
		t.Errorf("flicr: kept the marked EV %d for the next flowcell", first)
	}
}

func TestParseLBNames(t *testing.T) {
	for _, k := range []LBKind{ECMP, OPS, REPS, OPSWeighted, Scout, Spray, Flicr} {
		got, err := ParseLB(k.String())
		if err != nil || got != k {
			t.Errorf("ParseLB(%q) = %v, %v", k.String(), got, err)
		}
		if k.PathAware() != (k >= OPSWeighted) {
			t.Errorf("%s: PathAware %v", k, k.PathAware())
		}
	}
}

// TestECMPOnePathPerFlow is the Spritz paper's ECMP baseline (Sec. V-A:
// "each flow is assigned to a fixed path based on its five-tuple. Assigned
// paths may be minimal or non-minimal"): given a path list, every packet
// of a flow takes one EV, whatever the feedback, and across flows (seeds
// standing in for five-tuple hashes) every listed path, minimal or not,
// is drawn about equally often.
func TestECMPOnePathPerFlow(t *testing.T) {
	p := DefaultParams()
	p.LB = ECMP
	n := map[uint16]int{}
	const flows = 4000
	for seed := uint64(1); seed <= flows; seed++ {
		r := newRNG(seed, 7)
		b := newBalancer(ECMP, p.Entropies, p.REPSBuffer, &r, &p, testPaths)
		e := b.next(0)
		for i := 0; i < 50; i++ {
			b.onAck(e, i%2 == 0)
			b.onLoss(Time(i), e, i%7 == 0)
			if x := b.next(Time(i)); x != e {
				t.Fatalf("flow %d moved from path %04x to %04x", seed, e, x)
			}
		}
		n[e]++
	}
	for _, pe := range testPaths {
		if got := float64(n[pe.EV]) / flows; math.Abs(got-0.25) > 0.03 {
			t.Errorf("path %04x (minimal %v) drawn for %.3f of the flows, want 0.25", pe.EV, pe.Minimal, got)
		}
	}
}
