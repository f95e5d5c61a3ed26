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
