package transport

import "testing"

func newTestSender(size int64, lb LBKind) (*Sender, *Receiver) {
	p := DefaultParams()
	p.MTU = 4086
	p.LB = lb
	s := NewSender(&p, Flow{ID: 3, Size: size, Path: refPath})
	return s, NewReceiver(3, s.Packets())
}

func TestPacketization(t *testing.T) {
	s, _ := newTestSender(2000000, ECMP)
	if s.Packets() != 490 {
		t.Fatalf("2,000,000 B at 4086 B payload = %d packets, want 490", s.Packets())
	}
	var d Data
	now := Time(0)
	for s.NextPacket(now, &d) != 0 {
		now++
	}
	// The initial window (1.5 BDP) limits the burst.
	if s.Inflight() > int64(1.5*refPath.BDP())+4150 {
		t.Fatalf("in flight %d exceeds the initial window", s.Inflight())
	}
	if d.PSN+1 != uint32(s.Stats.Sent) {
		t.Fatalf("PSNs not sequential")
	}
}

// deliverAll sends everything the window allows and feeds the ACKs back,
// optionally trimming or dropping chosen PSNs the first time they are sent.
func drive(t *testing.T, s *Sender, r *Receiver, trim, drop map[uint32]bool) (completions int, now Time) {
	var d Data
	rtt := refPath.BaseRTT
	type inflight struct {
		d       Data
		trimmed bool
	}
	for step := 0; step < 100000 && !s.Done(); step++ {
		var batch []inflight
		for {
			if s.NextPacket(now, &d) == 0 {
				break
			}
			if drop[d.PSN] && !d.Retx {
				continue
			}
			batch = append(batch, inflight{d, trim[d.PSN] && !d.Retx})
		}
		now += rtt
		for _, b := range batch {
			ack, complete := r.OnData(&b.d, false, b.trimmed)
			if complete {
				completions++
			}
			s.OnAck(now, &ack)
		}
		if len(batch) == 0 {
			if tm := s.NextTimeout(); tm > 0 {
				now = tm
				s.OnTimeout(now)
			}
		}
	}
	return completions, now
}

func TestTrimmedPacketsAreRetransmittedSelectively(t *testing.T) {
	s, r := newTestSender(200000, ECMP)
	trim := map[uint32]bool{3: true, 17: true, 40: true}
	c, _ := drive(t, s, r, trim, nil)
	if !s.Done() || !r.Done() || c != 1 {
		t.Fatalf("done=%v/%v completions=%d", s.Done(), r.Done(), c)
	}
	if s.Stats.Nacks != 3 || s.Stats.Retx != 3 || s.Stats.Timeouts != 0 {
		t.Fatalf("nacks=%d retx=%d timeouts=%d, want 3/3/0", s.Stats.Nacks, s.Stats.Retx, s.Stats.Timeouts)
	}
	if r.Bytes() != 200000 {
		t.Fatalf("receiver got %d bytes", r.Bytes())
	}
}

func TestLostPacketsRecoverByTimeout(t *testing.T) {
	s, r := newTestSender(100000, REPS)
	drop := map[uint32]bool{0: true, 24: true}
	c, _ := drive(t, s, r, nil, drop)
	if !s.Done() || c != 1 {
		t.Fatalf("flow did not complete after losses")
	}
	if s.Stats.Timeouts < 2 || s.Stats.Retx < 2 {
		t.Fatalf("timeouts=%d retx=%d, want >= 2 each", s.Stats.Timeouts, s.Stats.Retx)
	}
	if s.rto != refPath.BaseRTT*7 {
		t.Fatalf("default rto = %d, want 7 base RTTs", s.rto)
	}
}

func TestCumulativeAckCoversLostAcks(t *testing.T) {
	s, r := newTestSender(5*4086, ECMP)
	var ds [5]Data
	for i := range ds {
		if s.NextPacket(Time(i), &ds[i]) == 0 {
			t.Fatal("window too small")
		}
	}
	var last Ack
	for i := range ds {
		last, _ = r.OnData(&ds[i], false, false)
	}
	// Only the last ACK arrives; its cumulative point covers the rest.
	s.OnAck(100, &last)
	if !s.Done() || s.Inflight() != 0 {
		t.Fatalf("done=%v inflight=%d after a cumulative ACK", s.Done(), s.Inflight())
	}
}

func TestReceiverDuplicatesAndCompletion(t *testing.T) {
	r := NewReceiver(1, 3)
	d := Data{Flow: 1, PSN: 1, Payload: 100}
	a, c := r.OnData(&d, true, false)
	if c || !a.ECN || a.CumAck != 0 || a.PSN != 1 {
		t.Fatalf("first ack %+v complete=%v", a, c)
	}
	if _, c = r.OnData(&d, false, false); c || r.Bytes() != 100 {
		t.Fatalf("duplicate counted: bytes=%d", r.Bytes())
	}
	tr := Data{Flow: 1, PSN: 0, Payload: 100}
	if a, _ = r.OnData(&tr, false, true); !a.Nack {
		t.Fatal("trimmed packet not NACKed")
	}
	r.OnData(&Data{PSN: 0, Payload: 100}, false, false)
	a, c = r.OnData(&Data{PSN: 2, Payload: 50}, false, false)
	if !c || a.CumAck != 3 || !r.Done() {
		t.Fatalf("completion: %+v complete=%v", a, c)
	}
	if _, c = r.OnData(&Data{PSN: 2, Payload: 50}, false, false); c {
		t.Fatal("completion reported twice")
	}
}

func TestStaleNackIgnored(t *testing.T) {
	s, _ := newTestSender(3*4086, ECMP)
	var d Data
	s.NextPacket(10, &d)
	nack := Ack{PSN: d.PSN, Nack: true, EchoTS: d.SentAt}
	s.OnAck(20, &nack)
	s.NextPacket(30, &d) // retransmission
	if !d.Retx {
		t.Fatal("NACKed packet not retransmitted first")
	}
	// A second NACK for the old copy must not queue another retransmission.
	s.OnAck(40, &nack)
	if s.Stats.Nacks != 1 {
		t.Fatalf("stale NACK counted: %d", s.Stats.Nacks)
	}
}

func TestPacing(t *testing.T) {
	s, _ := newTestSender(10*4086, ECMP)
	s.SetPacing(1e9) // 1 Gb/s
	var d Data
	if s.NextPacket(0, &d) == 0 {
		t.Fatal("first packet refused")
	}
	if s.NextPacket(1, &d) != 0 {
		t.Fatal("pacing allowed a back-to-back packet")
	}
	gap := Time(4150 * 8 * 1000) // 4150 B at 1 Gb/s in ps
	if s.NextSendTime() != gap {
		t.Fatalf("next send at %d, want %d", s.NextSendTime(), gap)
	}
	if s.NextPacket(gap, &d) == 0 {
		t.Fatal("paced packet refused at its time")
	}
}
