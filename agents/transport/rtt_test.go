package transport

import (
	"sort"
	"testing"
)

func TestRTTEstimatorRFC6298(t *testing.T) {
	e := NewRTTEstimator(RTTConfig{Initial: 40 * Millisecond, Granularity: Millisecond})
	if e.RTO() != 40*Millisecond || e.Samples() != 0 || e.SRTT() != 0 {
		t.Fatalf("before samples: rto %d srtt %d", e.RTO(), e.SRTT())
	}
	// 2.2: SRTT = R, RTTVAR = R/2, RTO = SRTT + max(G, 4 RTTVAR) = 3R.
	e.Sample(0, 10*Millisecond)
	if e.SRTT() != 10*Millisecond || e.RTTVar() != 5*Millisecond || e.RTO() != 30*Millisecond {
		t.Fatalf("first sample: srtt %d rttvar %d rto %d", e.SRTT(), e.RTTVar(), e.RTO())
	}
	// 2.3: RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R'|, then SRTT = 7/8 SRTT + 1/8 R'.
	e.Sample(1, 18*Millisecond)
	wantVar := (3*5*Millisecond + 8*Millisecond) / 4
	wantSRTT := (7*10*Millisecond + 18*Millisecond) / 8
	if e.RTTVar() != wantVar || e.SRTT() != wantSRTT || e.RTO() != wantSRTT+4*wantVar {
		t.Fatalf("second sample: srtt %d (want %d) rttvar %d (want %d) rto %d", e.SRTT(), wantSRTT, e.RTTVar(), wantVar, e.RTO())
	}
	// Constant samples, one per round trip: RTTVAR decays, G bounds the
	// variance term.
	for i := range 200 {
		e.Sample(Time(i+1)*20*Millisecond, 10*Millisecond)
	}
	if e.RTO() != e.SRTT()+Millisecond || e.SRTT() < 10*Millisecond || e.SRTT() > 10*Millisecond+Microsecond {
		t.Fatalf("steady: srtt %d rttvar %d rto %d, want srtt 10 ms and rto srtt + G", e.SRTT(), e.RTTVar(), e.RTO())
	}
	e.Sample(5*Second, 0)
	e.Sample(5*Second, -5)
	if e.Samples() != 202 {
		t.Fatalf("non-positive samples taken: %d", e.Samples())
	}
}

func TestRTTVarFallsOncePerRoundTrip(t *testing.T) {
	e := NewRTTEstimator(RTTConfig{})
	e.Sample(0, 10*Millisecond)
	e.Sample(Millisecond, 30*Millisecond) // a spike raises RTTVAR at once
	spike := e.RTTVar()
	if spike <= 5*Millisecond {
		t.Fatalf("rttvar %d after a spike, want above 5 ms", spike)
	}
	// A burst of ACKs within one round trip lowers it once, not per ACK.
	for i := range 50 {
		e.Sample(2*Millisecond+Time(i)*Microsecond, 10*Millisecond)
	}
	if v := e.RTTVar(); v < spike/2 {
		t.Fatalf("rttvar fell from %d to %d within one round trip", spike, v)
	}
	// Round trip after round trip it decays.
	for i := range 100 {
		e.Sample(Time(i+1)*20*Millisecond, 10*Millisecond)
	}
	if v := e.RTTVar(); v > Millisecond {
		t.Fatalf("rttvar %d after 100 calm round trips", v)
	}
}

func TestRTTEstimatorFloorBackoffCap(t *testing.T) {
	e := NewRTTEstimator(RTTConfig{Initial: 10 * Millisecond, MinRTO: 10 * Millisecond, MaxRTO: 100 * Millisecond})
	for i := range 50 {
		e.Sample(Time(i), Millisecond)
	}
	if e.RTO() != 10*Millisecond {
		t.Fatalf("rto %d below the floor", e.RTO())
	}
	want := []Time{20, 40, 80, 100, 100}
	for i, w := range want {
		e.Backoff()
		if e.RTO() != w*Millisecond {
			t.Fatalf("after %d timeouts rto %d, want %d ms", i+1, e.RTO(), w)
		}
	}
	for range 100 {
		e.Backoff() // no overflow however long the outage
	}
	if e.RTO() != 100*Millisecond {
		t.Fatalf("long outage: rto %d", e.RTO())
	}
	e.Sample(100, Millisecond) // 5.7: a sample ends the backoff
	if e.RTO() != 10*Millisecond {
		t.Fatalf("after a new sample rto %d, want the floor", e.RTO())
	}
}

func TestRTTEstimatorMinFilter(t *testing.T) {
	e := NewRTTEstimator(RTTConfig{MinRTTWindow: Second})
	e.Sample(0, 5*Millisecond)
	e.Sample(10*Millisecond, 3*Millisecond)
	e.Sample(20*Millisecond, 9*Millisecond)
	if e.MinRTT() != 3*Millisecond || e.MaxRTT() != 9*Millisecond {
		t.Fatalf("min %d max %d", e.MinRTT(), e.MaxRTT())
	}
	// The minimum expires after the window: the path may have changed.
	e.Sample(2*Second, 7*Millisecond)
	if e.MinRTT() != 7*Millisecond {
		t.Fatalf("min %d after the window, want the new sample", e.MinRTT())
	}
}

func TestSpuriousRetransmissionDetected(t *testing.T) {
	for _, measure := range []bool{false, true} {
		p := DefaultParams()
		p.MeasureRTO = measure
		s := NewSender(&p, Flow{ID: 1, Size: 2 * int64(p.MTU), Path: refPath})
		r := NewReceiver(1, s.Packets())
		var d0, d1, rx0, rx1dummy Data
		s.NextPacket(0, &d0)
		s.NextPacket(1, &d1)
		// Packet 0 is late, not lost: its timer fires and it is resent,
		// then the ACK of the original arrives. Both packets are past the
		// RTO: the model's timer resends both, the measured one (RFC 6298
		// 5.4) the earliest and backs off.
		at := s.NextTimeout() + 1
		at0 := at
		want := 2
		if measure {
			want = 1
		}
		if n := s.OnTimeout(at); n != want {
			t.Fatalf("measure=%v: %d packets timed out, want %d", measure, n, want)
		}
		if s.NextPacket(at, &rx0) == 0 || !rx0.Retx || rx0.PSN != 0 {
			t.Fatalf("measure=%v: no retransmission of packet 0: %+v", measure, rx0)
		}
		a, _ := r.OnData(&d0, false, false)
		s.OnAck(at+10, &a)
		if s.Stats.Spurious != 1 {
			t.Fatalf("measure=%v: spurious %d after the original's ACK, want 1", measure, s.Stats.Spurious)
		}
		// The ACK of the (duplicate) retransmission adds nothing.
		a, _ = r.OnData(&rx0, false, false)
		s.OnAck(at+20, &a)
		// Packet 1 was really lost: only its retransmission is acknowledged.
		if measure {
			// Its own (backed-off, then measured) timeout comes later.
			if s.NextPacket(at+25, &rx1dummy) != 0 {
				t.Fatalf("measure=%v: packet 1 resent before its timeout", measure)
			}
			at = s.NextTimeout() - 30
			if n := s.OnTimeout(at + 30); n != 1 {
				t.Fatalf("measure=%v: %d packets timed out the second time, want packet 1", measure, n)
			}
		}
		var rx1 Data
		s.NextPacket(at+30, &rx1)
		a, _ = r.OnData(&rx1, false, false)
		s.OnAck(at+40, &a)
		if !s.Done() || s.Stats.Spurious != 1 || s.Stats.Retx != 2 {
			t.Fatalf("measure=%v: done %v spurious %d retx %d, want done, 1, 2", measure, s.Done(), s.Stats.Spurious, s.Stats.Retx)
		}
		if measure {
			// The original's sample (longer than the RTO) raised the RTO.
			if got := s.RTT().MaxRTT(); got < at0+10 {
				t.Fatalf("max sample %d, want at least the late original's %d", got, at0+10)
			}
			if s.RTO() <= RTOFor(refPath) {
				t.Fatalf("rto %d not above the model's %d after a late ACK", s.RTO(), RTOFor(refPath))
			}
		} else if s.RTT() != nil || s.RTO() != RTOFor(refPath) {
			t.Fatal("fixed RTO changed without MeasureRTO")
		}
	}
}

// slowHostRun sends a flow over a path whose RTT is the model's plus a host
// delay the model does not know (with jitter), losing nothing, and returns
// the sender.
func slowHostRun(t *testing.T, measure bool, extra Time) *Sender {
	t.Helper()
	p := DefaultParams()
	p.MeasureRTO = measure
	path := Path{BaseRTT: 100 * Microsecond, RateBps: 10e9}
	s := NewSender(&p, Flow{ID: 7, Size: 4 << 20, Path: path})
	s.SetPacing(path.RateBps)
	r := NewReceiver(7, s.Packets())
	type ev struct {
		at  Time
		ack Ack
	}
	var q []ev
	rng := newRNG(1, 2)
	now := Time(0)
	var d Data
	for step := 0; !s.Done(); step++ {
		if step > 1e6 {
			t.Fatalf("measure=%v: no progress", measure)
		}
		for s.NextPacket(now, &d) != 0 {
			a, _ := r.OnData(&d, false, false)
			jitter := Time(rng.next() % uint64(extra/4))
			q = append(q, ev{now + path.BaseRTT + extra + jitter, a})
		}
		sort.Slice(q, func(i, j int) bool { return q[i].at < q[j].at })
		next := Time(-1)
		if len(q) > 0 {
			next = q[0].at
		}
		if tm := s.NextTimeout(); tm > 0 && (next < 0 || tm < next) {
			next = tm
		}
		if ns := s.NextSendTime(); ns > now && s.hasEligible() && (next < 0 || ns < next) {
			next = ns
		}
		if next < 0 {
			t.Fatalf("measure=%v: stalled", measure)
		}
		now = max(now, next)
		for len(q) > 0 && q[0].at <= now {
			s.OnAck(now, &q[0].ack)
			q = q[1:]
		}
		if tm := s.NextTimeout(); tm > 0 && tm <= now {
			s.OnTimeout(now)
		}
	}
	return s
}

func TestMeasuredRTOAvoidsSpuriousTimeouts(t *testing.T) {
	// The host adds 5 ms to a 100 us path: the model's RTO (700 us) fires
	// for every packet.
	fixed := slowHostRun(t, false, 5*Millisecond)
	measured := slowHostRun(t, true, 5*Millisecond)
	t.Logf("fixed RTO: %+v", fixed.Stats)
	t.Logf("measured RTO: %+v, srtt %d rttvar %d min %d rto %d", measured.Stats,
		measured.RTT().SRTT(), measured.RTT().RTTVar(), measured.RTT().MinRTT(), measured.RTO())
	if fixed.Stats.Spurious == 0 || fixed.Stats.Spurious > fixed.Stats.Retx {
		t.Fatalf("fixed RTO: spurious %d of %d retransmissions, want some, at most all", fixed.Stats.Spurious, fixed.Stats.Retx)
	}
	if measured.Stats.Spurious > measured.Stats.Retx {
		t.Fatalf("measured RTO: spurious %d of %d retransmissions", measured.Stats.Spurious, measured.Stats.Retx)
	}
	// Only the first window can time out before the first sample arrives.
	if measured.Stats.Timeouts*10 > fixed.Stats.Timeouts || measured.Stats.Retx*10 > fixed.Stats.Retx {
		t.Fatalf("measured RTO: %d timeouts, %d retransmissions; fixed: %d, %d; want a tenth or less",
			measured.Stats.Timeouts, measured.Stats.Retx, fixed.Stats.Timeouts, fixed.Stats.Retx)
	}
	if m := measured.RTT().MinRTT(); m < 5100*Microsecond || m > 6400*Microsecond {
		t.Fatalf("min RTT %d, want the path plus the host delay (5.1-6.35 ms)", m)
	}
}

func TestSeededEstimator(t *testing.T) {
	e := NewRTTEstimator(RTTConfig{Initial: 10 * Millisecond, MinRTO: 10 * Millisecond})
	e.Seed(20*Millisecond, 5*Millisecond)
	if e.RTO() != 40*Millisecond || e.Samples() != 0 {
		t.Fatalf("seeded rto %d, want 40 ms", e.RTO())
	}
	e.Sample(Millisecond, 20*Millisecond) // 2.3, not 2.2: the seed is kept
	if e.SRTT() != 20*Millisecond || e.RTTVar() != 3750*Microsecond {
		t.Fatalf("after a sample: srtt %d rttvar %d, want 20 ms, 3.75 ms", e.SRTT(), e.RTTVar())
	}
	e.Seed(Millisecond, 0) // too late: the flow has its own samples
	if e.SRTT() != 20*Millisecond {
		t.Fatal("a seed replaced measured samples")
	}
	low := NewRTTEstimator(RTTConfig{Initial: 10 * Millisecond, MinRTO: 10 * Millisecond})
	low.Seed(Millisecond, 0)
	if low.RTO() != 10*Millisecond {
		t.Fatalf("seed below the floor: rto %d", low.RTO())
	}
	p := DefaultParams()
	s := NewSender(&p, Flow{ID: 1, Size: 1 << 20, Path: refPath})
	s.SeedRTT(Second, 0)
	if s.RTO() != RTOFor(refPath) {
		t.Fatal("SeedRTT changed a fixed RTO")
	}
	p.MeasureRTO = true
	s = NewSender(&p, Flow{ID: 1, Size: 1 << 20, Path: refPath})
	s.SeedRTT(100*Millisecond, 0)
	if s.RTO() != 100*Millisecond+DefaultRTOGranularity {
		t.Fatalf("seeded sender rto %d", s.RTO())
	}
}

// TestHostDelayIsNotQueuing drives two senders over the same ACK stream
// whose round trips are ten base RTTs, nine of them spent in the hosts
// (Ack.HostDelay, as the UDP agent measures it from kernel timestamps).
// The sender told the hosts' share keeps its window (the fabric RTT is the
// base RTT); the one that is not sees heavy queuing and cuts it. Both
// retransmission timeouts follow the whole round trip.
func TestHostDelayIsNotQueuing(t *testing.T) {
	for _, cc := range []CCKind{NSCC, DCTCP} {
		p := DefaultParams()
		p.CC, p.Trimming, p.MeasureRTO = cc, false, true
		path := Path{BaseRTT: 20 * Microsecond, RateBps: 100e9}
		told := NewSender(&p, Flow{ID: 1, Size: 1 << 30, Path: path})
		blind := NewSender(&p, Flow{ID: 1, Size: 1 << 30, Path: path})
		start := told.Cwnd()
		rtt := 10 * path.BaseRTT
		// Paced below the path rate, so ACKs come back evenly spread.
		told.SetPacing(10e9)
		blind.SetPacing(10e9)
		type pending struct {
			at Time
			a  Ack
		}
		var q [2][]pending
		var d Data
		for now := Time(0); now < 200*rtt; now += 100 * Nanosecond {
			for i, s := range []*Sender{told, blind} {
				for len(q[i]) > 0 && q[i][0].at <= now {
					s.OnAck(now, &q[i][0].a)
					q[i] = q[i][1:]
				}
				if s.NextPacket(now, &d) == 0 {
					continue
				}
				a := Ack{Flow: 1, PSN: d.PSN, CumAck: d.PSN + 1, Entropy: d.Entropy, EchoTS: d.SentAt}
				if s == told {
					a.HostDelay = rtt - path.BaseRTT
				}
				q[i] = append(q[i], pending{now + rtt, a})
			}
		}
		t.Logf("%s: window %.0f B at start; told of host delay %.0f B, blind %.0f B; RTO %d / %d ps", cc, start, told.Cwnd(), blind.Cwnd(), told.RTO(), blind.RTO())
		if told.Cwnd() < start {
			t.Errorf("%s: the sender told of the hosts' delay cut its window from %.0f to %.0f", cc, start, told.Cwnd())
		}
		if blind.Cwnd() >= start/2 {
			t.Errorf("%s: the blind sender kept %.0f of %.0f: the test does not show queuing", cc, blind.Cwnd(), start)
		}
		if told.RTT().SRTT() < rtt*9/10 || blind.RTT().SRTT() < rtt*9/10 {
			t.Errorf("%s: SRTT %d / %d, want the whole round trip %d", cc, told.RTT().SRTT(), blind.RTT().SRTT(), rtt)
		}
	}
}

// TestInitialMeasuredRTO: before its first sample a measuring sender
// waits InitialMeasuredRTO, or the model's RTO when that is longer; the
// model's RTO stays the floor once samples arrive.
func TestInitialMeasuredRTO(t *testing.T) {
	p := DefaultParams()
	p.MeasureRTO = true
	short := Path{BaseRTT: 10 * Microsecond, RateBps: 100e9}
	s := NewSender(&p, Flow{ID: 1, Size: 1 << 20, Path: short})
	if s.RTO() != InitialMeasuredRTO {
		t.Fatalf("initial RTO %d, want %d", s.RTO(), InitialMeasuredRTO)
	}
	var d Data
	s.NextPacket(0, &d)
	s.OnAck(20*Microsecond, &Ack{Flow: 1, PSN: d.PSN, CumAck: 1, EchoTS: d.SentAt})
	if want := 20*Microsecond + DefaultRTOGranularity; s.RTO() != want {
		t.Fatalf("RTO after a 20 us sample %d, want %d", s.RTO(), want)
	}
	long := Path{BaseRTT: 5 * Millisecond, RateBps: 100e9}
	if s := NewSender(&p, Flow{ID: 2, Size: 1 << 20, Path: long}); s.RTO() != RTOFor(long) {
		t.Fatalf("initial RTO %d, want the model's %d", s.RTO(), RTOFor(long))
	}
	p.MeasureRTO = false
	if s := NewSender(&p, Flow{ID: 3, Size: 1 << 20, Path: short}); s.RTO() != RTOFor(short) {
		t.Fatalf("fixed RTO %d, want the model's %d", s.RTO(), RTOFor(short))
	}
}

// TestHostDelayFloorsRTO: the largest host delay of the window floors the
// RTO's variance term, so a stall seen once lengthens the timeout until it
// leaves the window; without host delays (the simulator) RFC 6298 holds.
func TestHostDelayFloorsRTO(t *testing.T) {
	p := DefaultParams()
	p.MeasureRTO = true
	path := Path{BaseRTT: 20 * Microsecond, RateBps: 100e9}
	s := NewSender(&p, Flow{ID: 1, Size: 1 << 30, Path: path})
	var d Data
	ack := func(at, host Time) {
		s.NextPacket(at-100*Microsecond, &d)
		s.OnAck(at, &Ack{Flow: 1, PSN: d.PSN, CumAck: d.PSN + 1, EchoTS: d.SentAt, HostDelay: host})
	}
	now := Time(0)
	for range 50 {
		now += 100 * Microsecond
		ack(now, 10*Microsecond)
	}
	calm := s.RTO()
	if calm > 100*Microsecond+DefaultRTOGranularity+10*Microsecond {
		t.Fatalf("calm RTO %d", calm)
	}
	now += 100 * Microsecond
	ack(now, 3*Millisecond) // one ACK waited 3 ms in a stalled host
	for range 200 {
		now += 100 * Microsecond
		ack(now, 10*Microsecond)
	}
	if got := s.RTO(); got < 3*Millisecond || got > 4*Millisecond {
		t.Fatalf("RTO %d after a 3 ms stall and 200 calm round trips, want SRTT + 3 ms", got)
	}
	s2 := NewSender(&p, Flow{ID: 2, Size: 1 << 30, Path: path})
	s2.SeedRTT(s.RTT().SRTT(), s.RTT().RTTVar())
	s2.SeedHostDelay(now, s.RTT().MaxHostDelay())
	if s2.RTO() < 3*Millisecond {
		t.Fatalf("seeded RTO %d, want the stall's floor", s2.RTO())
	}
	// The stall leaves the window.
	now += DefaultMinRTTWindow + Millisecond
	ack(now, 10*Microsecond)
	ack(now+100*Microsecond, 10*Microsecond)
	if got := s.RTO(); got > Millisecond+200*Microsecond {
		t.Fatalf("RTO %d a window after the stall", got)
	}
}

// TestTimeoutProbeWhenSilent: a measuring sender whose flow heard nothing
// since its earliest overdue packet left resends that one only (a stalled
// host is likelier than a lost window); one that still hears ACKs lost
// what timed out and resends all of it. The fixed RTO resends all.
func TestTimeoutProbeWhenSilent(t *testing.T) {
	for _, measure := range []bool{false, true} {
		for _, silent := range []bool{true, false} {
			p := DefaultParams()
			p.MeasureRTO = measure
			s := NewSender(&p, Flow{ID: 1, Size: 8 * int64(p.MTU), Path: refPath})
			var d [4]Data
			for i := range d {
				s.NextPacket(Time(i), &d[i])
			}
			if !silent {
				// The last one got through: 0-2 were lost.
				s.OnAck(100*Microsecond, &Ack{Flow: 1, PSN: d[3].PSN, CumAck: 0, EchoTS: d[3].SentAt})
			}
			n := s.OnTimeout(s.NextTimeout() + 10)
			want := 3
			if silent {
				want = 4
				if measure {
					want = 1
				}
			}
			if n != want {
				t.Errorf("measure %v silent %v: %d packets timed out, want %d", measure, silent, n, want)
			}
		}
	}
}

// TestSpuriousRaisesRTOFloor: an original acknowledged after its
// retransmission (late, not lost) floors the measured RTO's variance term
// by its lateness for the window, so the same delay does not fool the
// timer again once RTTVAR has settled.
func TestSpuriousRaisesRTOFloor(t *testing.T) {
	p := DefaultParams()
	p.MeasureRTO = true
	path := Path{BaseRTT: 20 * Microsecond, RateBps: 100e9}
	s := NewSender(&p, Flow{ID: 1, Size: 1 << 30, Path: path})
	var d Data
	now := Time(0)
	ack := func(rtt Time) {
		now += 100 * Microsecond
		s.NextPacket(now, &d)
		s.OnAck(now+rtt, &Ack{Flow: 1, PSN: d.PSN, CumAck: d.PSN + 1, EchoTS: d.SentAt})
		now += rtt
	}
	for range 50 {
		ack(50 * Microsecond)
	}
	// A packet is late by 5 ms: its timer fires, it is resent, then the
	// original's ACK arrives.
	now += 100 * Microsecond
	s.NextPacket(now, &d)
	late := d
	at := s.NextTimeout() + 1
	if s.OnTimeout(at) != 1 {
		t.Fatal("no timeout")
	}
	var rx Data
	s.NextPacket(at, &rx)
	now = late.SentAt + 5*Millisecond
	s.OnAck(now, &Ack{Flow: 1, PSN: late.PSN, CumAck: late.PSN + 1, EchoTS: late.SentAt})
	if s.Stats.Spurious != 1 {
		t.Fatalf("spurious %d", s.Stats.Spurious)
	}
	for range 300 {
		ack(50 * Microsecond)
	}
	if got := s.RTO(); got < 4*Millisecond {
		t.Fatalf("RTO %d after a 5 ms late original and 300 calm round trips, want it above the lateness", got)
	}
}

// TestLostWindowRecovers: a measuring sender whose whole window is lost
// (a path move drops everything in flight) resends on every timeout, the
// window notwithstanding (RFC 6298 5.4), and recovers the window in a few
// backed-off RTOs. Before, the probe waited behind the packets still
// counted in flight until each had timed out in turn: one packet per RTO
// of up to a second, about a minute of silence for this window.
func TestLostWindowRecovers(t *testing.T) {
	p := DefaultParams()
	p.MeasureRTO = true
	s := NewSender(&p, Flow{ID: 1, Size: 4096 * int64(p.MTU), Path: refPath})
	r := NewReceiver(1, s.Packets())
	var d Data
	now := Time(0)
	// Fill the window; everything sent is lost.
	for s.NextPacket(now, &d) > 0 {
		now++
	}
	lost := s.Stats.Sent
	if lost < 8 {
		t.Fatalf("only %d packets in the first window", lost)
	}
	// From here every packet arrives after 10 us and is acknowledged
	// 10 us later.
	rtt := 20 * Microsecond
	type ev struct {
		at Time
		a  Ack
	}
	var acks []ev
	for now < 30*Second && s.Acked() < uint32(lost) {
		next := s.NextTimeout()
		if len(acks) > 0 && (next == 0 || acks[0].at <= next) {
			now = acks[0].at
			s.OnAck(now, &acks[0].a)
			acks = acks[1:]
		} else if next > 0 {
			now = next
			if s.OnTimeout(now) > 0 && s.NextPacket(now, &d) == 0 {
				t.Fatalf("at %v: a timeout but no retransmission (%d in flight, window %.0f)", now, s.Inflight(), s.Cwnd())
			}
			if d.Retx {
				a, _ := r.OnData(&d, false, false)
				acks = append(acks, ev{now + rtt, a})
			}
		} else {
			t.Fatalf("at %v: nothing in flight, no timer, %d of %d acknowledged", now, s.Acked(), lost)
		}
		for s.NextPacket(now, &d) > 0 {
			a, _ := r.OnData(&d, false, false)
			acks = append(acks, ev{now + rtt, a})
		}
	}
	t.Logf("%d lost packets recovered at %.3f s with %d timeouts", lost, float64(now)/float64(Second), s.Stats.Timeouts)
	if s.Acked() < uint32(lost) || now > 3*Second {
		t.Fatalf("%d of %d lost packets acknowledged at %.3f s: want all within 3 s", s.Acked(), lost, float64(now)/float64(Second))
	}
}
