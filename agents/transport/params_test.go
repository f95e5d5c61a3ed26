package transport

import (
	"math"
	"testing"
)

// TestTargetRTTAndMaxWindowParams: Params.TargetRTT and Params.MaxWindow
// replace the SMaRTT defaults (1.5 x base RTT, 1.5 BDP) in NSCC and DCTCP;
// 0 keeps the defaults; Validate refuses values outside their ranges.
func TestTargetRTTAndMaxWindowParams(t *testing.T) {
	bdp := refPath.BDP()
	p := DefaultParams()
	p.TargetRTT, p.MaxWindow = 2, 1
	n := newNSCC(&p, refPath, wire)
	if n.trtt != 2*refPath.BaseRTT || n.qa.trtt != n.trtt {
		t.Errorf("nscc target RTT = %d (QuickAdapt %d), want 2 x base = %d", n.trtt, n.qa.trtt, 2*refPath.BaseRTT)
	}
	if !near(n.maxW, bdp) || !near(n.cwnd, bdp) {
		t.Errorf("nscc max/initial window = %v/%v, want 1 BDP = %v", n.maxW, n.cwnd, bdp)
	}
	// pi = brtt / (trtt - brtt) = 1 at a target of 2 x base, scaled by BDP.
	if !near(n.pi, bdp/RefBDP) {
		t.Errorf("pi = %v, want %v", n.pi, bdp/RefBDP)
	}
	p.CC = DCTCP
	d := newDCTCP(&p, refPath, wire)
	if d.qa.trtt != 2*refPath.BaseRTT || !near(d.maxW, bdp) {
		t.Errorf("dctcp QuickAdapt window %d, max window %v; want %d, %v", d.qa.trtt, d.maxW, 2*refPath.BaseRTT, bdp)
	}

	def := DefaultParams()
	n = newNSCC(&def, refPath, wire)
	if n.trtt != Time(TargetFactor*float64(refPath.BaseRTT)) || !near(n.maxW, MaxWindowBDP*bdp) {
		t.Errorf("defaults: target %d, max window %v", n.trtt, n.maxW)
	}

	for _, c := range []struct {
		target, maxw float64
		ok           bool
	}{
		{0, 0, true}, {1.5, 1.5, true}, {10, 100, true}, {1.01, 0.1, true},
		{1, 0, false}, {0.5, 0, false}, {11, 0, false}, {-1, 0, false}, {math.NaN(), 0, false},
		{0, -1, false}, {0, 101, false}, {0, math.NaN(), false}, {0, math.Inf(1), false},
	} {
		q := DefaultParams()
		q.TargetRTT, q.MaxWindow = c.target, c.maxw
		if err := q.Validate(); (err == nil) != c.ok {
			t.Errorf("Validate(target %v, max window %v) = %v, want ok %v", c.target, c.maxw, err, c.ok)
		}
	}
}
