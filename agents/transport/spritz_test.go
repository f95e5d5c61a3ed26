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
	// Path-aware balancers without a list spray random entropies.
	p := DefaultParams()
	r := newRNG(1, 1)
	b := newBalancer(Spray, p.Entropies, 8, &r, &p, nil)
	b.onAck(5, false)
	b.onLoss(0, 5, true)
	if a, c := b.next(0), b.next(0); a == c {
		t.Errorf("no path list: entropies %d and %d should be random", a, c)
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
