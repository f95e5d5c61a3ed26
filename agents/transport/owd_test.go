package transport

import "testing"

func owdSender(t *testing.T) *Sender {
	t.Helper()
	p := DefaultParams()
	p.LB, p.CC, p.MTU = OWD, DCTCP, 1024
	p.OWDPaths = 4
	return NewSender(&p, Flow{ID: 1, Size: 64 << 20, Path: Path{BaseRTT: 10 * Microsecond, RateBps: 100e9}})
}

// TestOWDProbesAndSwitches: a flow probes all its candidates at the start,
// decides when the replies are in, keeps its path unless a probe shows a
// delay below 0.8x the current one and 75 MTU times (6.5 us at 1024 + 64
// bytes and 100 Gb/s) lower, and probes every max(cwnd, 100) packets.
func TestOWDProbesAndSwitches(t *testing.T) {
	s := owdSender(t)
	var pr Probe
	var sent []Probe
	for s.NextProbe(Microsecond, &pr) {
		sent = append(sent, pr)
	}
	if len(sent) != 4 || sent[1].Entropy != 0x8000 || sent[3].Entropy != 0x8002 || sent[0].Entropy&0x8000 != 0 {
		t.Fatalf("initial probes %+v, want the shortest candidate and 0x8000..0x8002", sent)
	}
	var d Data
	if s.NextPacket(Microsecond, &d) == 0 || d.Entropy != sent[0].Entropy {
		t.Fatalf("first data packet on %04x, want the shortest candidate %04x", d.Entropy, sent[0].Entropy)
	}
	// Replies: the shortest path 10 us, candidate 2 at 1 us: better by more
	// than 6.5 us and below 0.8x.
	qd := []Time{10 * Microsecond, 5 * Microsecond, Microsecond, 9 * Microsecond}
	for i, p := range sent {
		s.OnProbeReply(20*Microsecond+Time(i), &ProbeReply{Flow: 1, ID: p.ID, Entropy: p.Entropy, QDelay: qd[i]})
	}
	if s.NextPacket(21*Microsecond, &d) == 0 || d.Entropy != 0x8001 {
		t.Fatalf("after the replies the flow sends on %04x, want 8001 (1 us)", d.Entropy)
	}
	// A current delay of 5 us (echoed in ACKs): a probe at 0 is not 6.5 us
	// better: stay.
	s.OnAck(22*Microsecond, &Ack{Flow: 1, PSN: 1, CumAck: 0, Entropy: 0x8001, EchoTS: 21 * Microsecond, QDelay: 5 * Microsecond, QDelayValid: true})
	probes, n := 0, 0
	now := 30 * Microsecond
	for i := 0; i < 1000; i++ {
		now += 100 * Nanosecond
		if s.NextPacket(now, &d) > 0 {
			n++
			s.OnAck(now, &Ack{Flow: 1, PSN: d.PSN, CumAck: 0, Entropy: d.Entropy, EchoTS: d.SentAt, QDelay: 5 * Microsecond, QDelayValid: true})
		}
		for s.NextProbe(now, &pr) {
			probes++
			s.OnProbeReply(31*Microsecond, &ProbeReply{Flow: 1, ID: pr.ID, Entropy: pr.Entropy, QDelay: 0})
		}
	}
	w := max(int(s.Cwnd())/(1024+64), 100)
	if probes < n/w-1 || probes > n/w+1 {
		t.Errorf("%d periodic probes over %d packets, want one every max(cwnd, 100) = %d", probes, n, w)
	}
	if s.NextPacket(32*Microsecond, &d); d.Entropy != 0x8001 {
		t.Errorf("switched to %04x although no probe was 6.5 us better", d.Entropy)
	}
	if s.OWDSwitches() != 1 {
		t.Errorf("%d switches, want 1", s.OWDSwitches())
	}
}

// TestGoBackN: the receiver accepts only the next PSN and answers a gap
// with one go-back NACK; the sender then resends everything outstanding
// from the gap on.
func TestGoBackN(t *testing.T) {
	p := DefaultParams()
	p.GoBackN = true
	s := NewSender(&p, Flow{ID: 1, Size: 10 * int64(p.MTU), Path: Path{BaseRTT: 10 * Microsecond, RateBps: 100e9}})
	r := NewReceiverFor(&p, 1, s.Packets())
	var ds [6]Data
	for i := range ds {
		if s.NextPacket(Time(i+1), &ds[i]) == 0 {
			t.Fatal("window")
		}
	}
	var a Ack
	// 0 arrives, 1 is lost, 2..5 arrive: one NACK (at 2), silence for 3..5.
	if send, _ := r.Receive(10, &ds[0], false, false, &a); !send || a.Nack {
		t.Fatalf("psn 0: send %v ack %+v", send, a)
	}
	s.OnAck(11, &a)
	var nacks []Ack
	for i := 2; i < 6; i++ {
		if send, _ := r.Receive(12, &ds[i], false, false, &a); send {
			nacks = append(nacks, a)
		}
	}
	if len(nacks) != 1 || !nacks[0].GoBack || nacks[0].CumAck != 1 {
		t.Fatalf("answers to 2..5: %+v, want one go-back NACK with CumAck 1", nacks)
	}
	s.OnAck(13, &nacks[0])
	var d Data
	var resent []uint32
	for s.NextPacket(14, &d) > 0 && d.Retx {
		resent = append(resent, d.PSN)
	}
	if len(resent) != 5 || resent[0] != 1 || resent[4] != 5 {
		t.Fatalf("resent %v, want 1..5", resent)
	}
}

// TestOWDPathChangeSlowStart: when a probe moves the flow to a better path
// after the initial choice, the sender waits (while packets are in flight
// on the old path) for the difference of the paths' queuing delays, then
// restarts at one packet and grows by the acknowledged bytes (doubling per
// round trip) back to the window it had, unless an ECN mark on the new path
// ends slow start first; feedback from the old path does not.
func TestOWDPathChangeSlowStart(t *testing.T) {
	s := owdSender(t)
	var pr Probe
	var sent []Probe
	for s.NextProbe(Microsecond, &pr) {
		sent = append(sent, pr)
	}
	// All candidates alike: the flow stays on the shortest path.
	for i, p := range sent {
		s.OnProbeReply(20*Microsecond+Time(i), &ProbeReply{Flow: 1, ID: p.ID, Entropy: p.Entropy, QDelay: 10 * Microsecond})
	}
	var d Data
	now := 30 * Microsecond
	var out []Data
	for s.NextPacket(now, &d) > 0 {
		out = append(out, d)
	}
	w0 := s.Cwnd()
	if len(out) < 4 || s.OWDSwitches() != 0 {
		t.Fatalf("%d packets in the first window, %d switches", len(out), s.OWDSwitches())
	}
	// The current path's delay is 20 us; a probe finds candidate 3 at 2 us.
	s.OnAck(now+Microsecond, &Ack{Flow: 1, PSN: out[0].PSN, Entropy: out[0].Entropy, EchoTS: out[0].SentAt, QDelay: 20 * Microsecond, QDelayValid: true})
	old := out[0].Entropy
	for i := 0; i < 200 && len(s.lb.ow.pending) == 0; i++ {
		s.lb.ow.sent(1)
	}
	if !s.NextProbe(now+2*Microsecond, &pr) {
		t.Fatal("no periodic probe due")
	}
	switchAt := now + 3*Microsecond
	s.OnProbeReply(switchAt, &ProbeReply{Flow: 1, ID: pr.ID, Entropy: pr.Entropy, QDelay: 2 * Microsecond})
	if s.OWDSwitches() != 1 || s.Stats.PathRestarts != 1 {
		t.Fatalf("switches %d, path restarts %d after a 10x better probe", s.OWDSwitches(), s.Stats.PathRestarts)
	}
	if got := s.Cwnd(); got != float64(s.wire) {
		t.Errorf("window %.0f after the path change, want one packet (%d)", got, s.wire)
	}
	// Packets in flight on the old path: idle for 20 - 2 = 18 us.
	if s.CanSend(switchAt + 17*Microsecond) {
		t.Error("sends before the old path drained (18 us wait)")
	}
	if !s.CanSend(switchAt + 18*Microsecond) {
		t.Error("still idle after the 18 us wait")
	}
	// ECN from the old path does not end slow start.
	s.OnAck(switchAt+18*Microsecond, &Ack{Flow: 1, PSN: out[1].PSN, Entropy: old, ECN: true, EchoTS: out[1].SentAt})
	if !s.slowStart {
		t.Fatal("an ECN mark on the old path ended slow start")
	}
	// Round trips on the new path: the window doubles, up to w0.
	now = switchAt + 20*Microsecond
	prev := s.Cwnd()
	for rt := 0; rt < 40 && s.slowStart; rt++ {
		var batch []Data
		for s.NextPacket(now, &d) > 0 {
			if d.Entropy != pr.Entropy && !d.Retx {
				t.Fatalf("new packet on %04x, want the new path %04x", d.Entropy, pr.Entropy)
			}
			batch = append(batch, d)
		}
		now += 10 * Microsecond
		for _, b := range batch {
			s.OnAck(now, &Ack{Flow: 1, PSN: b.PSN, Entropy: b.Entropy, EchoTS: b.SentAt})
		}
		// Old-path packets are acknowledged too (they arrived).
		for _, o := range out[2:] {
			s.OnAck(now, &Ack{Flow: 1, PSN: o.PSN, Entropy: o.Entropy, EchoTS: o.SentAt})
		}
		out = out[:2]
		if w := s.Cwnd(); s.slowStart && w < 1.9*prev {
			t.Errorf("round trip %d: window %.0f -> %.0f, want doubling in slow start", rt, prev, w)
		}
		prev = s.Cwnd()
	}
	if s.slowStart || s.Cwnd() < w0*0.99 || s.Cwnd() > w0*1.01+float64(s.wire) {
		t.Errorf("slow start ended %v at window %.0f, want %.0f (the window before the change)", !s.slowStart, s.Cwnd(), w0)
	}
	// An ECN mark on the new path ends slow start.
	s.pathRestart(now, 0)
	s.OnAck(now, &Ack{Flow: 1, PSN: 0, Entropy: pr.Entropy, ECN: true})
	if s.slowStart {
		t.Error("an ECN mark on the new path did not end slow start")
	}
}
