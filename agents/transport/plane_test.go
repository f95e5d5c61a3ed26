package transport

import "testing"

func planeSender(t *testing.T, mode PlaneMode) *Sender {
	t.Helper()
	p := DefaultParams()
	p.Planes, p.PlaneMode = 2, mode
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return NewSender(&p, Flow{ID: 1, Size: 1 << 20, Path: Path{BaseRTT: 10 * Microsecond, RateBps: 100e9, RTO: 50 * Microsecond}})
}

// A plane that times out twice in a row is excluded, sends one probe per
// RTO and is re-admitted when the probe's ACK comes back on it; the other
// plane keeps its own window throughout.
func TestPlaneExclusionAndProbe(t *testing.T) {
	s := planeSender(t, PlanePLB)
	var d Data
	now := Time(0)
	sent := map[int][]Data{}
	for _, pl := range []int{0, 1} {
		for s.CanSendOn(now, pl) {
			if s.NextPacketOn(now, pl, &d) == 0 {
				t.Fatal("CanSendOn but no packet")
			}
			if int(d.Plane) != pl {
				t.Fatalf("packet for plane %d says plane %d", pl, d.Plane)
			}
			sent[pl] = append(sent[pl], d)
		}
	}
	if len(sent[0]) == 0 || len(sent[0]) != len(sent[1]) {
		t.Fatalf("per-plane windows: %d and %d packets", len(sent[0]), len(sent[1]))
	}
	if got := s.PlaneInflight(0) + s.PlaneInflight(1); got != s.Inflight() {
		t.Fatalf("plane inflight %d != %d", got, s.Inflight())
	}
	ack := func(at Time, dd Data, pl uint8) {
		s.OnAck(at, &Ack{Flow: 1, PSN: dd.PSN, CumAck: 0, Entropy: dd.Entropy, EchoTS: dd.SentAt, Plane: pl})
	}
	// Plane 0 is answered; plane 1 never is.
	now = 10 * Microsecond
	for _, dd := range sent[0] {
		ack(now, dd, 0)
	}
	for i := 0; i < PlaneFailTimeouts && !s.PlaneExcluded(1); i++ {
		now = s.NextTimeout()
		if s.OnTimeout(now) == 0 {
			t.Fatal("no timeout")
		}
		// Retransmissions go out where allowed; plane 1's come back unanswered.
		for s.CanSendOn(now, 1) {
			s.NextPacketOn(now, 1, &d)
		}
	}
	if !s.PlaneExcluded(1) {
		t.Fatal("plane 1 not excluded after its timeouts")
	}
	if s.CanSendOn(now, 1) {
		t.Fatal("excluded plane may send before its probe is due")
	}
	if !s.CanSendOn(now, 0) {
		t.Fatal("plane 0 stalled by plane 1's failure")
	}
	probeAt := now + s.RTO()
	if !s.CanSendOn(probeAt, 1) || s.NextPacketOn(probeAt, 1, &d) == 0 {
		t.Fatal("no recovery probe when due")
	}
	if s.CanSendOn(probeAt, 1) {
		t.Fatal("more than one probe in flight")
	}
	ack(probeAt+10*Microsecond, d, 1)
	if s.PlaneExcluded(1) {
		t.Fatal("plane 1 not re-admitted after its probe's ACK")
	}
}

// PlaneDown excludes at once and requeues what was in flight on the plane;
// PlaneUp re-admits. Global CC has one window; entropy mode sends only on
// the plane its next entropy selects.
func TestPlaneDownUpAndModes(t *testing.T) {
	s := planeSender(t, PlanePLB)
	var d Data
	for s.CanSendOn(0, 1) {
		s.NextPacketOn(0, 1, &d)
	}
	s.PlaneDown(1, 1)
	if s.PlaneInflight(1) != 0 || !s.PlaneExcluded(1) || s.CanSendOn(2, 1) {
		t.Fatalf("after PlaneDown: inflight %d excluded %v", s.PlaneInflight(1), s.PlaneExcluded(1))
	}
	if s.NextPacketOn(2, 0, &d) == 0 || !d.Retx {
		t.Fatal("plane 0 does not retransmit plane 1's lost packets first")
	}
	s.PlaneUp(3, 1)
	if s.PlaneExcluded(1) || !s.CanSendOn(3, 1) {
		t.Fatal("PlaneUp did not re-admit")
	}

	g := planeSender(t, PlaneGlobal)
	n := 0
	for g.NextPacketOn(0, n%2, &d) > 0 {
		n++
	}
	if g.CanSendOn(0, 0) || g.CanSendOn(0, 1) || float64(g.Inflight()) < g.Cwnd()-float64(g.wire) {
		t.Fatalf("global window: %d packets, inflight %d of %g", n, g.Inflight(), g.Cwnd())
	}

	e := planeSender(t, PlaneEntropy)
	for i := 0; i < 50; i++ {
		np := e.NextPlane()
		if e.CanSendOn(0, 1-np) {
			t.Fatalf("entropy mode: plane %d may send a packet whose entropy selects %d", 1-np, np)
		}
		if e.NextPacketOn(0, np, &d) == 0 {
			break
		}
		if int(d.Plane) != np || e.pl.planeOf(d.Entropy) != np {
			t.Fatalf("packet on plane %d, entropy selects %d", d.Plane, e.pl.planeOf(d.Entropy))
		}
	}
}
