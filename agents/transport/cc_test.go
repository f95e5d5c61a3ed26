package transport

import (
	"math"
	"reflect"
	"testing"
)

// Path of the htsim reference tree: 100 Gb/s, base RTT 14.02272 us.
var refPath = Path{BaseRTT: 14022720, RateBps: 100e9}

const wire = 4150

func newTestNSCC(trim bool) (*nscc, *balancer) {
	p := DefaultParams()
	p.Trimming = trim
	n := newNSCC(&p, refPath, wire)
	r := newRNG(1, 1)
	lb := newBalancer(REPS, 1<<16, 8, &r, nil, nil)
	return n, &lb
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

func TestNSCCConstants(t *testing.T) {
	n, _ := newTestNSCC(true)
	bdp := refPath.BDP()
	if !near(bdp, 175284) {
		t.Fatalf("BDP = %v, want 175284", bdp)
	}
	if !near(n.maxW, 1.5*bdp) || !near(n.cwnd, 1.5*bdp) {
		t.Errorf("max/initial window = %v/%v, want 1.5 BDP = %v", n.maxW, n.cwnd, 1.5*bdp)
	}
	if n.minW != wire {
		t.Errorf("min window = %v, want one MTU %d", n.minW, wire)
	}
	if n.trtt != Time(1.5*float64(refPath.BaseRTT)) {
		t.Errorf("target RTT = %d, want 1.5 x base", n.trtt)
	}
	scale := bdp / RefBDP
	if !near(n.fi, FairIncreaseBase*scale) {
		t.Errorf("fi = %v, want %v (scaled by BDP)", n.fi, FairIncreaseBase*scale)
	}
	// pi = brtt / (trtt - brtt) = 2, scaled.
	if !near(n.pi, 2*scale) {
		t.Errorf("pi = %v, want %v", n.pi, 2*scale)
	}
}

// prime ends the first QuickAdapt measurement window so that the core cases run.
func prime(n *nscc) {
	n.qa.end = 1
}

func TestNSCCMultiplicativeDecrease(t *testing.T) {
	n, lb := newTestNSCC(true)
	prime(n)
	n.cwnd = 200000
	n.avgRTT = 30e6 // 30 us average
	rtt := Time(25e6)
	now := Time(100e6)
	// avg is updated by the EWMA first.
	avg := n.avgRTT + RTTEWMA*(float64(rtt)-n.avgRTT)
	want := 200000 * math.Max(0.5, 1-(avg-float64(n.trtt))/avg*0.8)
	n.onAck(now, rtt, true, wire, 100000, lb, 7)
	if !near(n.cwnd, want) {
		t.Fatalf("MD: cwnd = %v, want %v (Eq. 1)", n.cwnd, want)
	}
	if n.Cases[0] != 1 {
		t.Fatalf("MD case not counted: %v", n.Cases)
	}
	// A second marked, slow ACK within one base RTT does not decrease again.
	before := n.cwnd
	n.onAck(now+refPath.BaseRTT/2, rtt, true, wire, 100000, lb, 7)
	if n.cwnd != before {
		t.Fatalf("MD applied twice within a base RTT: %v -> %v", before, n.cwnd)
	}
	// After a base RTT it decreases again.
	n.onAck(now+refPath.BaseRTT, rtt, true, wire, 100000, lb, 7)
	if n.cwnd >= before {
		t.Fatalf("MD not applied after a base RTT: %v -> %v", before, n.cwnd)
	}
}

func TestNSCCMultiplicativeDecreaseFloor(t *testing.T) {
	n, lb := newTestNSCC(true)
	prime(n)
	n.cwnd = 200000
	n.avgRTT = 1e9 // enormous delay: the factor is floored at 0.5
	n.onAck(100e6, 1e9, true, wire, 100000, lb, 7)
	if !near(n.cwnd, 100000) {
		t.Fatalf("MD floor: cwnd = %v, want half of 200000", n.cwnd)
	}
}

func TestNSCCPathChangeKeepsWindow(t *testing.T) {
	n, lb := newTestNSCC(true)
	prime(n)
	n.cwnd = 150000
	n.onAck(100e6, refPath.BaseRTT+1e6, true, wire, 100000, lb, 42)
	if n.cwnd != 150000 {
		t.Fatalf("ECN with low delay changed the window: %v", n.cwnd)
	}
	if n.Cases[1] != 1 {
		t.Fatalf("path-change case not counted: %v", n.Cases)
	}
	// REPS must not recycle the marked entropy.
	lb.onAck(42, true)
	if lb.n != 0 {
		t.Fatalf("REPS recycled a marked entropy")
	}
}

func TestNSCCFairIncrease(t *testing.T) {
	n, lb := newTestNSCC(true)
	prime(n)
	n.cwnd = 100000
	rtt := n.trtt + 5e6
	want := 100000 + float64(wire)/100000*wire*n.fi
	n.onAck(100e6, rtt, false, wire, 50000, lb, 1)
	if !near(n.cwnd, want) {
		t.Fatalf("FI: cwnd = %v, want %v (Eq. 2)", n.cwnd, want)
	}
	if n.Cases[2] != 1 {
		t.Fatalf("FI case not counted: %v", n.Cases)
	}
}

func TestNSCCProportionalIncrease(t *testing.T) {
	n, lb := newTestNSCC(true)
	prime(n)
	n.cwnd = 100000
	rtt := refPath.BaseRTT + 3e6 // below target, above the fast-increase band
	pinc := float64(n.trtt-rtt) / float64(rtt) * wire / 100000 * wire * n.pi
	want := 100000 + math.Min(wire, pinc) + float64(wire)/100000*wire*n.fi
	n.onAck(100e6, rtt, false, wire, 50000, lb, 1)
	if !near(n.cwnd, want) {
		t.Fatalf("PI: cwnd = %v, want %v (Eq. 3 + fair increase)", n.cwnd, want)
	}
	if n.Cases[3] != 1 {
		t.Fatalf("PI case not counted: %v", n.Cases)
	}
}

func TestNSCCFastIncrease(t *testing.T) {
	n, lb := newTestNSCC(true)
	prime(n)
	n.cwnd = 20000
	rtt := refPath.BaseRTT // uncongested
	// Until cwnd bytes of uncongested ACKs arrived, the core cases run.
	acks := 0
	for float64(n.finc.count) <= n.cwnd {
		n.onAck(100e6, rtt, false, wire, 10000, lb, 1)
		acks++
		if acks > 100 {
			t.Fatal("fast increase never triggered")
		}
	}
	if !n.finc.active {
		t.Fatal("fast increase not active after cwnd contiguous uncongested bytes")
	}
	n.cwnd = 50000 // leave room below the 1.5 BDP clamp
	before := n.cwnd
	n.onAck(100e6, rtt, false, wire, 10000, lb, 1)
	if !near(n.cwnd, before+FastIncreaseK*wire) {
		t.Fatalf("fast increase: %v -> %v, want +%d MTU", before, n.cwnd, FastIncreaseK)
	}
	// An ECN mark ends it.
	n.onAck(100e6, rtt, true, wire, 10000, lb, 1)
	if n.finc.active || n.finc.count != 0 {
		t.Fatal("fast increase survived an ECN mark")
	}
}

func TestNSCCQuickAdaptAndIgnorePhase(t *testing.T) {
	n, lb := newTestNSCC(true)
	now := Time(0)
	// First ACK opens the first measurement window.
	n.onAck(now, refPath.BaseRTT, false, wire, 200000, lb, 1)
	if n.qa.end != now+n.trtt {
		t.Fatalf("QA window end = %d, want %d", n.qa.end, now+n.trtt)
	}
	// 5 more ACKs within the window, then a trim: QA is armed but waits
	// for the window to end.
	for i := 0; i < 5; i++ {
		n.onAck(now+Time(i+1)*1e6, refPath.BaseRTT, false, wire, 200000, lb, 1)
	}
	cw := n.cwnd
	n.onNack(now+7e6, wire, 150000)
	if !near(n.cwnd, cw-wire) {
		t.Fatalf("trim: cwnd %v -> %v, want -1 packet", cw, n.cwnd)
	}
	if !n.qa.trigger {
		t.Fatal("trim did not arm QuickAdapt")
	}
	acked := n.qa.acked
	// An ACK after the window ends runs QuickAdapt: cwnd = acked in the window.
	end := n.qa.end
	n.onAck(end, 30e6, true, wire, 120000, lb, 1)
	if n.QAs != 1 {
		t.Fatalf("QuickAdapt did not run")
	}
	want := float64(acked + wire)
	if !near(n.cwnd, want) {
		t.Fatalf("QuickAdapt cwnd = %v, want acked bytes %v", n.cwnd, want)
	}
	if n.qa.bytesToIgn != 120000 {
		t.Fatalf("ignore phase = %d bytes, want the in-flight 120000", n.qa.bytesToIgn)
	}
	// During the ignore phase marked, slow ACKs change nothing.
	cw = n.cwnd
	for i := 0; i < 20; i++ {
		n.onAck(end+Time(i)*1e6, 40e6, true, wire, 100000, lb, 1)
	}
	if n.cwnd != cw {
		t.Fatalf("window changed during the ignore phase: %v -> %v", cw, n.cwnd)
	}
	// Once the in-flight bytes have come back, reactions resume.
	for n.qa.ignoring() {
		n.onAck(end+30e6, 40e6, true, wire, 100000, lb, 1)
	}
	n.lastMD = 0
	n.mdArmed = false
	n.onAck(end+60e6, 40e6, true, wire, 100000, lb, 1)
	if n.cwnd >= cw {
		t.Fatalf("no decrease after the ignore phase: %v -> %v", cw, n.cwnd)
	}
}

func TestNSCCWindowClamp(t *testing.T) {
	n, lb := newTestNSCC(true)
	prime(n)
	n.cwnd = n.maxW
	for i := 0; i < 100; i++ {
		n.onAck(100e6, refPath.BaseRTT, false, wire, 1000, lb, 1)
	}
	if n.cwnd > n.maxW {
		t.Fatalf("cwnd %v above 1.5 BDP %v", n.cwnd, n.maxW)
	}
	for i := 0; i < 1000; i++ {
		n.onNack(100e6, wire, 0)
	}
	if n.cwnd != n.minW {
		t.Fatalf("cwnd %v, want clamped to one MTU %v", n.cwnd, n.minW)
	}
}

func TestNSCCDelayTriggersQuickAdaptWithoutTrimming(t *testing.T) {
	n, lb := newTestNSCC(false)
	n.onAck(0, refPath.BaseRTT, false, wire, 200000, lb, 1)
	// Very high RTT with little delivered arms QuickAdapt.
	n.onAck(1e6, 3*n.trtt, true, wire, 200000, lb, 1)
	if !n.qa.trigger {
		t.Fatal("high delay did not arm QuickAdapt without trimming")
	}
	n.onAck(n.qa.end, 3*n.trtt, true, wire, 200000, lb, 1)
	if n.QAs != 1 || n.cwnd > 3*wire {
		t.Fatalf("QuickAdapt without trimming: QAs=%d cwnd=%v", n.QAs, n.cwnd)
	}
}

func TestDCTCP(t *testing.T) {
	p := DefaultParams()
	p.CC = DCTCP
	p.QuickAdapt, p.FastIncrease = false, false
	d := newDCTCP(&p, refPath, wire)
	r := newRNG(1, 1)
	lb := newBalancer(ECMP, 1<<16, 8, &r, nil, nil)
	d.cwnd = 100000
	// Additive increase: 1 MTU per window of ACKs.
	before := d.cwnd
	d.onAck(0, refPath.BaseRTT, false, wire, 0, &lb, 0)
	if !near(d.cwnd, before+wire*wire/before) {
		t.Fatalf("AI: %v -> %v", before, d.cwnd)
	}
	// All-marked windows drive alpha up; the cut is at most once per RTT.
	now := Time(0)
	for i := 0; i < 200; i++ {
		now += refPath.BaseRTT / 4
		d.onAck(now, refPath.BaseRTT, true, wire, 0, &lb, 0)
	}
	if d.alpha < 0.9 {
		t.Fatalf("alpha = %v after persistent marking, want near 1", d.alpha)
	}
	if d.cwnd != d.minW {
		t.Fatalf("cwnd = %v after persistent marking, want the minimum", d.cwnd)
	}
}

func TestLoadBalancers(t *testing.T) {
	r := newRNG(1, 1)
	e := newBalancer(ECMP, 1<<16, 8, &r, nil, nil)
	first := e.next(0)
	for i := 0; i < 100; i++ {
		if e.next(0) != first {
			t.Fatal("ECMP changed entropy within a flow")
		}
	}
	o := newBalancer(OPS, 1<<16, 8, &r, nil, nil)
	seen := map[uint16]bool{}
	for i := 0; i < 100; i++ {
		seen[o.next(0)] = true
	}
	if len(seen) < 90 {
		t.Fatalf("OPS used only %d distinct entropies in 100 packets", len(seen))
	}
	rp := newBalancer(REPS, 1<<16, 4, &r, nil, nil)
	rp.onAck(11, false)
	rp.onAck(12, true) // marked: not recycled
	rp.onAck(13, false)
	if a, b := rp.next(0), rp.next(0); a != 11 || b != 13 {
		t.Fatalf("REPS reused %d,%d, want 11,13 (unmarked, in order)", a, b)
	}
	// Buffer empty: fresh random entropy.
	if x := rp.next(0); x == 11 || x == 13 {
		t.Logf("random entropy happened to equal a recycled one: %d", x)
	}
	// Overflow keeps the newest.
	for i := uint16(0); i < 6; i++ {
		rp.onAck(100+i, false)
	}
	if x := rp.next(0); x != 102 {
		t.Fatalf("REPS after overflow reused %d, want 102 (the oldest of the newest 4)", x)
	}
}

// OPS in cycle mode (Params.OPSCycle, htsim_uec's oblivious load
// balancer) uses every entropy exactly once per cycle, in an order that
// changes from cycle to cycle; with a space that is not a power of two it
// still covers exactly that space. The default OPS draws independently
// and repeats entropies within 256 packets.
func TestOPSCycle(t *testing.T) {
	for _, n := range []uint32{256, 200, 1, 1 << 16} {
		r := newRNG(7, 3)
		o := newBalancer(OPS, n, 8, &r, nil, nil)
		o.setCycle()
		var orders [][]uint16
		for c := 0; c < 3; c++ {
			seen := make(map[uint16]bool, n)
			var order []uint16
			for i := uint32(0); i < n; i++ {
				e := o.next(0)
				if uint32(e) >= n || seen[e] {
					t.Fatalf("n=%d cycle %d packet %d: entropy %d repeated or outside [0, %d)", n, c, i, e, n)
				}
				seen[e] = true
				if i < 8 {
					order = append(order, e)
				}
			}
			orders = append(orders, order)
		}
		if n >= 200 && reflect.DeepEqual(orders[0], orders[1]) && reflect.DeepEqual(orders[1], orders[2]) {
			t.Errorf("n=%d: three cycles in the same order %v; want a new order per cycle", n, orders[0])
		}
	}
	r := newRNG(7, 3)
	o := newBalancer(OPS, 256, 8, &r, nil, nil)
	seen := map[uint16]bool{}
	for i := 0; i < 256; i++ {
		seen[o.next(0)] = true
	}
	if len(seen) == 256 {
		t.Error("default OPS used all 256 entropies in 256 packets: it should draw independently")
	}
	// Only OPS walks cycles.
	r = newRNG(7, 3)
	e := newBalancer(ECMP, 256, 8, &r, nil, nil)
	e.setCycle()
	if a, b := e.next(0), e.next(0); a != b {
		t.Errorf("ECMP with setCycle changed entropy: %d then %d", a, b)
	}
}

// REPS with Params.REPSWarmup sends its first window on entropies 1, 2,
// 3, ... in turn (htsim_uec's REPS), at most Entropies of them, then
// recycles as usual; without it, the first packets draw at random.
func TestREPSWarmup(t *testing.T) {
	p := DefaultParams()
	p.Entropies, p.REPSWarmup = 16, true
	s := NewSender(&p, Flow{ID: 1, Size: 1 << 30, Path: refPath})
	if s.lb.warm != 16 {
		t.Fatalf("warm-up of %d packets, want min(initial window %.0f packets, 16 entropies) = 16", s.lb.warm, s.Cwnd()/float64(s.wire))
	}
	for i := uint32(1); i <= 16; i++ {
		if e := s.lb.next(0); uint32(e) != i%16 {
			t.Fatalf("warm-up packet %d took entropy %d, want %d", i, e, i%16)
		}
	}
	s.lb.onAck(5, false)
	if e := s.lb.next(0); e != 5 {
		t.Errorf("after the warm-up REPS took %d, want the recycled 5", e)
	}
	p.Entropies = 1 << 16
	s = NewSender(&p, Flow{ID: 1, Size: 1 << 30, Path: refPath})
	if w := uint32(s.Cwnd() / float64(s.wire)); s.lb.warm != w || w == 0 {
		t.Errorf("warm-up of %d packets, want the initial window, %d", s.lb.warm, w)
	}
	p.REPSWarmup = false
	s = NewSender(&p, Flow{ID: 1, Size: 1 << 30, Path: refPath})
	if s.lb.warm != 0 {
		t.Errorf("warm-up of %d packets without REPSWarmup", s.lb.warm)
	}
}

// TestDCTCPECNFastIncrease: with ECNFastIncrease, DCTCP's FastIncrease
// takes ACKs without an ECN mark as uncongested at any RTT (the ECN-only
// control Spritz evaluates): a flow whose ACKs come back at twice the
// base RTT (a long path and a long return) reaches FastIncrease after a
// window of them. By default the same ACKs fail the "RTT near base" test
// and it never triggers; an ECN mark ends it either way.
func TestDCTCPECNFastIncrease(t *testing.T) {
	for _, ecnOnly := range []bool{false, true} {
		p := DefaultParams()
		p.CC, p.QuickAdapt, p.FastIncrease, p.ECNFastIncrease = DCTCP, false, true, ecnOnly
		d := newDCTCP(&p, refPath, wire)
		r := newRNG(1, 1)
		bal := newBalancer(REPS, 1<<16, 8, &r, nil, nil)
		lb := &bal
		d.cwnd = 20 * wire
		rtt := 2 * refPath.BaseRTT
		acks := 0
		for ; acks < 100 && !d.finc.active; acks++ {
			d.onAck(Time(acks)*1000, rtt, false, wire, 10*wire, lb, 1)
		}
		if d.finc.active != ecnOnly {
			t.Fatalf("ECNFastIncrease %v: fast increase active %v after %d unmarked ACKs at 2x base RTT", ecnOnly, d.finc.active, acks)
		}
		if !ecnOnly {
			continue
		}
		if acks < 20 || acks > 22 {
			t.Errorf("fast increase after %d ACKs, want about one window (20)", acks)
		}
		before := d.cwnd
		d.onAck(1e9, 10*refPath.BaseRTT, false, wire, 10*wire, lb, 1)
		if !near(d.cwnd, before+FastIncreaseK*wire) {
			t.Errorf("fast increase at 10x base RTT: %v -> %v, want +%d MTU", before, d.cwnd, FastIncreaseK)
		}
		d.onAck(1e9+1000, rtt, true, wire, 10*wire, lb, 1)
		if d.finc.active || d.finc.count != 0 {
			t.Error("fast increase survived an ECN mark")
		}
	}
}

// TestEntropyRun: with Params.EntropyRun every balancer's choice holds for
// that many packets in a row (OPS: a fresh draw per run; REPS: a recycled
// entropy per run), and without it each packet is a choice of its own.
func TestEntropyRun(t *testing.T) {
	for _, lb := range []LBKind{OPS, REPS, Spray} {
		for _, run := range []int{0, 4} {
			p := DefaultParams()
			p.LB, p.EntropyRun, p.Entropies = lb, run, 256
			s := NewSender(&p, Flow{ID: 1, Size: 1 << 24, Path: refPath})
			var d Data
			var ents []uint16
			var inflight []Ack
			for i := 0; i < 400; i++ {
				if s.NextPacket(Time(i)*Microsecond, &d) == 0 {
					break
				}
				ents = append(ents, d.Entropy)
				// Acknowledged 32 packets later: REPS recycles a window's
				// entropies.
				inflight = append(inflight, Ack{Flow: 1, PSN: d.PSN, Entropy: d.Entropy, EchoTS: d.SentAt})
				if len(inflight) > 32 {
					s.OnAck(Time(i)*Microsecond, &inflight[0])
					inflight = inflight[1:]
				}
			}
			if len(ents) < 400 {
				t.Fatalf("%s run %d: only %d packets", lb, run, len(ents))
			}
			changes := 0
			for i := 1; i < len(ents); i++ {
				if ents[i] != ents[i-1] {
					changes++
					if run > 1 && i%run != 0 {
						t.Fatalf("%s run %d: entropy changed at packet %d: %v", lb, run, i, ents[:i+1])
					}
				}
			}
			switch {
			case run > 1 && lb != Spray && changes < len(ents)/run/2:
				// (Spray reuses a good path once per ACK: with every packet
				// acknowledged at once it keeps the few it found.)
				t.Errorf("%s run %d: %d changes in %d packets: not spraying", lb, run, changes, len(ents))
			case run <= 1 && changes < len(ents)/2:
				t.Errorf("%s: %d changes in %d packets, want a choice per packet", lb, changes, len(ents))
			}
		}
	}
	p := DefaultParams()
	p.EntropyRun = 1025
	if err := p.Validate(); err == nil {
		t.Error("entropy run 1025 validated")
	}
}
