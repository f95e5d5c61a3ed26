package transport

import "testing"

// coalescing receiver of a 20-packet flow, an ACK every 4 packets.
func coalescing(every, bytes int, delay Time) (*Params, *Receiver) {
	p := DefaultParams()
	p.AckEvery, p.AckEveryBytes, p.AckDelay = every, bytes, delay
	return &p, NewReceiverFor(&p, 1, 20)
}

func data(psn uint32) *Data {
	return &Data{Flow: 1, PSN: psn, Payload: 4096, Entropy: uint16(100 + psn), SentAt: Time(psn) * Microsecond}
}

// TestReceiverCoalesces: AckEvery 4 answers the first packet at once, then
// every fourth arrival, with a bitmap of exactly the packets held since the
// previous ACK; ECN, AckReq and the completing packet answer at once.
func TestReceiverCoalesces(t *testing.T) {
	_, r := coalescing(4, 0, 0)
	var a Ack
	if send, _ := r.Receive(0, data(0), false, false, &a); !send || a.Sack != 1 || a.SackBase != 0 || a.CumAck != 1 {
		t.Fatalf("first packet: send %v, %+v; want an ACK at once covering PSN 0", send, a)
	}
	for psn := uint32(1); psn <= 3; psn++ {
		if send, _ := r.Receive(0, data(psn), false, false, &a); send {
			t.Fatalf("PSN %d answered at once: %+v", psn, a)
		}
	}
	// Out of order: 5 before 4.
	send, _ := r.Receive(0, data(5), false, false, &a)
	if !send || a.PSN != 5 || a.SackBase != 1 || a.Sack != 0b10111 || a.CumAck != 4 || a.Entropy != 105 {
		t.Fatalf("4th held packet: send %v, %+v; want PSN 5, base 1, bitmap 10111, cum 4", send, a)
	}
	// ECN-marked: at once, covering what is held.
	r.Receive(0, data(6), false, false, &a)
	if send, _ := r.Receive(0, data(4), true, false, &a); !send || !a.ECN || a.SackBase != 4 || a.Sack != 0b101 || a.CumAck != 7 {
		t.Fatalf("ECN: send %v, %+v", send, a)
	}
	// AckReq: at once.
	d := data(7)
	d.AckReq = true
	if send, _ := r.Receive(0, d, false, false, &a); !send || a.Sack != 1 || a.SackBase != 7 {
		t.Fatalf("AckReq: send %v, %+v", send, a)
	}
	// A trimmed header: NACK at once, held arrivals stay held.
	r.Receive(0, data(8), false, false, &a)
	if send, _ := r.Receive(0, data(9), false, true, &a); !send || !a.Nack || a.Sack != 0 {
		t.Fatalf("trimmed: send %v, %+v", send, a)
	}
	// A duplicate: answered at once, PSN only.
	if send, _ := r.Receive(0, data(2), false, false, &a); !send || a.Sack != 0 || a.CumAck != 9 {
		t.Fatalf("duplicate: send %v, %+v", send, a)
	}
	for psn := uint32(9); psn < 19; psn++ {
		r.Receive(0, data(psn), false, false, &a)
	}
	send, complete := r.Receive(0, data(19), false, false, &a)
	if !send || !complete || a.CumAck != 20 {
		t.Fatalf("last packet: send %v complete %v, %+v", send, complete, a)
	}
}

// TestReceiverCoalesceBytesAndTimer: AckEveryBytes counts wire bytes (4096 +
// 64 per packet: 16384 B is 4 packets, as in htsim); AckDelay arms AckDue
// at the first held arrival and Flush sends the held ACK.
func TestReceiverCoalesceBytesAndTimer(t *testing.T) {
	_, r := coalescing(0, 16384, 5*Microsecond)
	var a Ack
	r.Receive(0, data(0), false, false, &a)
	n := 0
	for psn := uint32(1); psn <= 4; psn++ {
		if send, _ := r.Receive(Time(psn)*Microsecond, data(psn), false, false, &a); send {
			n++
			if psn != 4 || a.Sack != 0b1111 || a.SackBase != 1 {
				t.Fatalf("PSN %d: %+v; want one ACK at PSN 4 covering 1-4", psn, a)
			}
		}
	}
	if n != 1 || r.AckDue() != 0 {
		t.Fatalf("%d ACKs, AckDue %d after the threshold; want 1, 0", n, r.AckDue())
	}
	r.Receive(10*Microsecond, data(5), false, false, &a)
	r.Receive(11*Microsecond, data(6), false, false, &a)
	if got := r.AckDue(); got != 15*Microsecond {
		t.Fatalf("AckDue %d, want 15 us (first held arrival + AckDelay)", got)
	}
	if !r.Flush(&a) || a.PSN != 6 || a.SackBase != 5 || a.Sack != 0b11 || a.EchoTS != 6*Microsecond || r.AckDue() != 0 {
		t.Fatalf("Flush: %+v, AckDue %d", a, r.AckDue())
	}
	if r.Flush(&a) {
		t.Fatal("second Flush sent an ACK with nothing held")
	}
}

// TestReceiverCoalesceSpan: an arrival that does not fit in one bitmap with
// the held ones is answered alone, at once; the held ones stay held.
func TestReceiverCoalesceSpan(t *testing.T) {
	p := DefaultParams()
	p.AckEvery = 8
	r := NewReceiverFor(&p, 1, 200)
	var a Ack
	r.Receive(0, data(0), false, false, &a)
	r.Receive(0, data(10), false, false, &a)
	if send, _ := r.Receive(0, data(10+SackBits), false, false, &a); !send || a.Sack != 0 || a.PSN != 10+SackBits {
		t.Fatalf("far arrival: send %v, %+v; want a PSN-only ACK", send, a)
	}
	// Below the held one, within span: rebased.
	r.Receive(0, data(5), false, false, &a)
	if !r.Flush(&a) || a.SackBase != 5 || a.Sack != 1|1<<5 {
		t.Fatalf("rebased bitmap: %+v", a)
	}
}

// TestSenderCoalescedAck: one ACK covering several packets acknowledges
// them all, takes them out of flight and gives the congestion control their
// bytes in one call.
func TestSenderCoalescedAck(t *testing.T) {
	p := DefaultParams()
	p.AckEvery = 4
	s := NewSender(&p, Flow{ID: 1, Size: 8 * 4096, Path: refPath})
	r := NewReceiverFor(&p, 1, s.Packets())
	var d Data
	var sent []Data
	for s.NextPacket(0, &d) > 0 {
		sent = append(sent, d)
	}
	if len(sent) != 8 || !sent[7].AckReq || sent[3].AckReq {
		t.Fatalf("sent %d packets, AckReq on the last %v, on PSN 3 %v; want 8, true, false", len(sent), sent[7].AckReq, sent[3].AckReq)
	}
	acks := 0
	for i := range sent {
		var a Ack
		if send, _ := r.Receive(Microsecond, &sent[i], false, false, &a); send {
			acks++
			s.OnAck(15*Microsecond, &a)
		}
	}
	if acks != 3 || !s.Done() || s.Inflight() != 0 {
		t.Fatalf("%d ACKs (want 3: first, 5th, last), done %v, inflight %d", acks, s.Done(), s.Inflight())
	}
	if s.Stats.Retx != 0 || s.Stats.Spurious != 0 {
		t.Fatalf("stats %+v", s.Stats)
	}
}

// TestCoalescingParams: Validate bounds the coalescing settings.
func TestCoalescingParams(t *testing.T) {
	for _, c := range []struct {
		every, bytes int
		delay        Time
		ok           bool
	}{{0, 0, 0, true}, {1, 0, 0, true}, {4, 0, 0, true}, {SackBits, 0, 0, true}, {0, 16384, Microsecond, true},
		{-1, 0, 0, false}, {SackBits + 1, 0, 0, false}, {0, -1, 0, false}, {0, 0, -1, false}, {0, 0, 2 * Second, false}} {
		p := DefaultParams()
		p.AckEvery, p.AckEveryBytes, p.AckDelay = c.every, c.bytes, c.delay
		if err := p.Validate(); (err == nil) != c.ok {
			t.Errorf("Validate(every %d, bytes %d, delay %d) = %v, want ok %v", c.every, c.bytes, c.delay, err, c.ok)
		}
	}
	p := DefaultParams()
	if p.Coalescing() || NewReceiverFor(&p, 1, 1).Coalescing() {
		t.Error("the default receiver coalesces; want per-packet ACKs")
	}
}

// TestReceiverFarAheadIsNotDuplicate: a packet more than the receiver's
// ring above the cumulative point (heavy reordering, e.g. two planes with
// different delays) is new, even when the PSN one ring below it arrived:
// it must not be taken for a duplicate and acknowledged unrecorded.
func TestReceiverFarAheadIsNotDuplicate(t *testing.T) {
	r := NewReceiver(1, 4096)
	// PSN 0 is late; 1..300 arrive, growing the ring past 256 bits.
	for psn := uint32(1); psn <= 300; psn++ {
		r.OnData(&Data{Flow: 1, PSN: psn, Payload: 100}, false, false)
	}
	// Far ahead: one ring (and more) above PSNs that arrived.
	for _, psn := range []uint32{513, 301 + 512, 1000, 1025} {
		before := r.Bytes()
		r.OnData(&Data{Flow: 1, PSN: psn, Payload: 100}, false, false)
		if r.Bytes() != before+100 {
			t.Fatalf("PSN %d (cum %d) taken for a duplicate", psn, r.cum)
		}
	}
	r.OnData(&Data{Flow: 1, PSN: 0, Payload: 100}, false, false)
	if r.cum != 301 || r.received != 305 {
		t.Fatalf("cum %d received %d, want 301 and 305", r.cum, r.received)
	}
}
