package dataplane

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/fabricbench/fabricbench/agents/transport"
	"golang.org/x/sys/unix"
)

// The sending goroutine: commands, received ACKs, timers, the send passes
// and the NIC pacing. It runs locked to its thread so that the thread's
// timer slack (set from the pacing rate) applies to its nanosleeps.

func (e *Engine) loop(ctx context.Context) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// The timer slack of this thread: how late the kernel may wake it
	// from a pacing sleep (50 us by default, far more than a batch at
	// 10 Gb/s). Failure only makes pacing burstier.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(e.slackNs), 0, 0, 0)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-e.closing:
			return nil
		default:
		}
		e.takeCommands()
		now := e.now()
		e.loopAt.Store(int64(now))
		open := e.paceSetup(now)
		e.takeAcks(now)
		e.deliverCompletions()
		retry := e.runTimers(now)
		wakeAt, more := e.sendPass(now, open)
		e.flushTx()
		if more {
			continue
		}
		next := wakeAt // pacing
		if retry > 0 && (next == 0 || retry < next) {
			next = retry
		}
		if t := e.timers.next(); t > 0 && retry == 0 && (next == 0 || t < next) {
			next = t
		}
		var wait Time = -1 // block without a deadline
		if next > 0 {
			wait = max(next-e.now(), 0)
		}
		if wait >= 0 && wait < dueSlack {
			continue // due within a few microseconds: go round again
		}
		if wait > 0 && wait <= sleepMax && (wakeAt > 0 || retry > 0) {
			// Pacing (or ACKs still on their way to a due timeout):
			// nothing that arrives meanwhile can let a packet go sooner,
			// and a Go timer would wake about a millisecond late.
			ts := unix.NsecToTimespec(int64(wait / transport.Nanosecond))
			_ = unix.Nanosleep(&ts, nil)
			continue
		}
		armed := wait > 0
		if armed {
			timer.Reset(time.Duration(wait / 1000))
		}
		var outc chan Completion
		var first Completion
		if len(e.doneQ) > 0 {
			outc, first = e.out, e.doneQ[0]
		}
		select {
		case <-e.ackReady:
		case <-e.wake:
		case <-timer.C:
			armed = false
		case outc <- first:
			e.popCompletion()
		case <-ctx.Done():
			return ctx.Err()
		case <-e.closing:
			return nil
		}
		if armed {
			timer.Stop()
		}
	}
}

// paceSetup starts a round of sending at now: each plane's token bucket
// (idle credit capped at a small burst; after a late wake-up with packets
// waiting, the missed time is caught up) and the batch it may send, the
// packets due in the next e.ahead (one GSO message at most). It returns
// how many planes may send.
func (e *Engine) paceSetup(now Time) int {
	open := 0
	for _, ps := range e.planes {
		ps.open = true
		if e.rate > 0 {
			floor := now - e.burst
			if ps.backlogged {
				floor = now - e.catchUp
			}
			ps.nicNext = max(ps.nicNext, floor)
			ps.open = ps.nicNext <= now
			ps.limit = now + e.ahead
		}
		ps.backlogged = false
		if ps.open {
			open++
		}
	}
	return open
}

// sendPass sends what the windows and the NIC pacing allow: from each flow
// in turn up to e.run packets (one GSO message), round robin over the
// flows that may send. It returns when pacing next allows a packet (0:
// nothing waits for the NIC) and whether it stopped after a full batch
// with more to send. The packets go out at flushTx (or when the batch
// fills).
func (e *Engine) sendPass(now Time, open int) (wakeAt Time, more bool) {
	if open == 0 && len(e.active) > 0 {
		return e.pacedWake(), false
	}
	gso := e.gsoProbe.Load() && !e.gsoOff.Load()
	idle := 0   // flows in a row that sent nothing but stay active
	budget := 0 // packets this pass
	for len(e.active) > 0 {
		if budget >= len(e.tx.ts) {
			return 0, true // a batch's worth: look at ACKs and commands again
		}
		if e.rr >= len(e.active) {
			e.rr = 0
		}
		f := e.active[e.rr]
		sent, blocked := e.sendFrom(f, now, e.run, gso)
		budget += sent
		switch {
		case sent > 0:
			e.rr++
			idle = 0
		case blocked:
			// Paced out on its planes: it stays active.
			e.rr++
			idle++
			if idle >= len(e.active) {
				return e.pacedWake(), false
			}
		default:
			// The window (or the end of the flow) stops it until an ACK.
			f.active = false
			last := len(e.active) - 1
			copy(e.active[e.rr:], e.active[e.rr+1:])
			e.active[last] = nil
			e.active = e.active[:last]
			idle = 0
		}
	}
	return 0, false
}

// sendFrom queues up to n packets of f at now, as its window and the NIC
// pacing allow (the batch is sent when it fills). It returns how many and
// whether the pacing stopped it.
func (e *Engine) sendFrom(f *sendFlow, now Time, n int, gso bool) (sent int, blocked bool) {
	d := &e.txData // a field: the DropData hook would make a local escape
	for sent < n && !f.done {
		if e.tx.full() {
			e.flushTx()
		}
		p := 0
		if f.multi {
			p = e.pickPlane(f, now, &blocked)
			if p < 0 {
				break
			}
		} else if !e.paceOK(e.planes[0]) {
			blocked = true
			break
		}
		var size int64
		if f.multi {
			size = f.snd.NextPacketOn(now, p, d)
		} else {
			size = f.snd.NextPacket(now, d)
		}
		if size == 0 {
			break
		}
		e.queueData(f, p, d, gso)
		if e.rate > 0 {
			e.planes[p].nicNext += size * 8 * transport.Second / e.rate
		}
		sent++
		if f.timerAt == 0 {
			e.armTimer(f)
		}
		if cw := f.snd.Cwnd(); cw > f.maxCwnd {
			f.maxCwnd = cw
		}
	}
	if f.multi && sent > 0 {
		f.pnext++ // the next run starts on the next plane
	}
	return sent, blocked
}

// paceOK reports whether plane ps's pacing lets one more packet go in this
// pass; when not, the plane is backlogged.
func (e *Engine) paceOK(ps *portSet) bool {
	if e.rate == 0 {
		return true
	}
	if !ps.open || ps.nicNext > ps.limit {
		ps.backlogged = true
		return false
	}
	return true
}

// pacedWake is the earliest time a backlogged plane's pacing lets a packet
// go (0: none is backlogged).
func (e *Engine) pacedWake() Time {
	var at Time
	for _, ps := range e.planes {
		if ps.backlogged || !ps.open {
			ps.backlogged = true
			if at == 0 || ps.nicNext < at {
				at = ps.nicNext
			}
		}
	}
	return at
}

// pickPlane chooses the plane of a multi-plane flow's next packet: the
// first, from the one its run is on, whose pacing allows a packet and on
// which the plane load balancer lets the flow send (-1: none; blocked set
// when a plane was paced out). A run stays on one plane while it may (one
// GSO message); the next run starts on the next plane.
func (e *Engine) pickPlane(f *sendFlow, now Time, blocked *bool) int {
	n := len(e.planes)
	for k := 0; k < n; k++ {
		p := (f.pnext + k) % n
		if !f.snd.CanSendOn(now, p) {
			continue
		}
		if !e.paceOK(e.planes[p]) {
			*blocked = true
			continue
		}
		f.pnext = p
		return p
	}
	return -1
}

// queueData puts data packet d of f, on plane p, into the batch.
func (e *Engine) queueData(f *sendFlow, p int, d *transport.Data, gso bool) {
	if e.cfg.DropData != nil && e.cfg.DropData(d) {
		e.c.dataDropped.Add(1)
		return
	}
	ps := e.planes[p]
	s := f.sock
	if s == nil {
		s = ps.data[int(d.Entropy)%len(ps.data)]
	}
	h := DataHeader{RunID: e.cfg.RunID, Flow: d.Flow, PSN: d.PSN, NPkts: f.npkts, Payload: d.Payload,
		Entropy: d.Entropy, ReplyPort: e.port, Mark: f.spec.Mark, SentAt: d.SentAt, Retx: d.Retx,
		AckRoute: d.AckRoute, AckRouteValid: d.AckRouteValid, Sender: e.id}
	b, m := e.tx.add(s, f.dst[p], DataHeaderLen+int(d.Payload), false, gso)
	if err := PutDataHeader(b, &h); err != nil {
		// Cannot happen: the sender respects the MTU the slots were sized for.
		e.tx.drop(m)
		e.c.sendErrors.Add(1)
		return
	}
	m.pkts++
	ps.sentPkts.Add(1)
	if d.Retx {
		m.retx++
	}
}

// flushTx sends the batch.
func (e *Engine) flushTx() {
	if e.tx.empty() {
		return
	}
	e.writeSince.Store(int64(e.now()))
	r := e.tx.flush(0)
	e.writeSince.Store(0)
	e.account(&r)
}

// account adds a flush's outcome to the counters.
func (e *Engine) account(r *txResult) {
	c := &e.c
	c.sendCalls.Add(uint64(r.calls))
	c.sendMsgs.Add(uint64(r.msgs))
	c.gsoSegs.Add(uint64(r.gsoSegs))
	if r.pkts > 0 {
		c.dataSent.Add(uint64(r.pkts))
		c.dataRetx.Add(uint64(r.retx))
		c.dataBytesSent.Add(uint64(r.bytes))
	}
	if r.acks > 0 {
		c.acksSent.Add(uint64(r.acks))
	}
	if r.nacks > 0 {
		c.nacksSent.Add(uint64(r.nacks))
	}
	if r.ecn > 0 {
		c.ecnAcksSent.Add(uint64(r.ecn))
	}
	if r.errPkts > 0 {
		c.sendErrors.Add(uint64(r.errPkts))
		e.sendError(r.err)
	}
	if r.gsoFailed && !e.gsoOff.Swap(true) {
		e.gsoWarn.Do(func() {
			e.logf("dataplane: the kernel refused a UDP GSO message (%v); sending datagram by datagram from now on", r.err)
		})
	}
}

func (e *Engine) armTimer(f *sendFlow) {
	if t := f.snd.NextTimeout(); t > 0 {
		f.timerAt = t
		e.timers.push(timerEnt{at: t, f: f})
	}
}

// runTimers fires the timers due at now. A retransmission timeout waits
// (it returns when to look again) while an ACK that arrived before it was
// due may not have reached the sender yet (acksInFlight): a timeout the
// host's own scheduling delayed is not a loss, and waiting for those ACKs
// keeps it from firing spuriously on a busy host. The wait is at most
// postponeMax.
func (e *Engine) runTimers(now Time) (retry Time) {
	for len(e.timers) > 0 && e.timers[0].at <= now {
		t := e.timers[0]
		f := t.f
		live := !f.done && (t.deadline || f.timerAt == t.at)
		if live && !t.deadline {
			if wait := e.acksInFlight(t.at); wait >= 0 {
				if e.postpone == 0 {
					e.postpone = now
				}
				if now-e.postpone < postponeMax {
					e.c.timeoutsHeld.Add(1)
					return now + wait
				}
			}
		}
		e.postpone = 0
		e.timers.pop()
		if !live {
			continue
		}
		if t.deadline {
			st := f.snd.Stats
			e.complete(f, now, fmt.Errorf("dataplane: flow %d to %v abandoned after %v (FlowTimeout): %d packets, %d sent, %d retransmitted, %d timeouts",
				f.spec.ID, f.spec.Dst, e.cfg.FlowTimeout, f.npkts, st.Sent, st.Retx, st.Timeouts))
			continue
		}
		f.timerAt = 0
		if n := f.snd.OnTimeout(now); n > 0 {
			e.c.timeouts.Add(uint64(n))
			e.activate(f)
		}
		if f.timerAt == 0 {
			e.armTimer(f)
		}
	}
	return 0
}

// acksInFlight says whether ACKs that arrived before due may still be on
// their way from the kernel to the senders, and how long to wait before
// looking again (-1: none can be). They can while ACKs are queued for the
// sending goroutine (processed at once), and, on a plane whose receiving
// goroutine has neither handed over a batch it read after due nor found
// its socket empty after due, while that goroutine holds a batch or the
// kernel holds datagrams. A batch takes microseconds: the wait ends with
// the next one handed over.
func (e *Engine) acksInFlight(due Time) Time {
	e.ackMu.Lock()
	queued := len(e.ackCur) > 0
	e.ackMu.Unlock()
	if queued {
		return 0
	}
	for _, ps := range e.planes {
		if Time(ps.rxDrained.Load()) >= due || Time(ps.rxHanded.Load()) >= due {
			continue // read after the deadline and handed over, or empty
		}
		if ps.rxBusy.Load() || unread(ps.main) {
			return 20 * transport.Microsecond
		}
	}
	return -1
}

// unread reports whether s has a datagram waiting (SIOCINQ).
func unread(s *sock) bool {
	var n int
	var err error
	if cerr := s.rc.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); cerr != nil || err != nil {
		return false
	}
	return n > 0
}

// takeAcks processes the ACKs the receiving goroutines handed over. Each
// ACK's flow sends what the ACK let it at once (ACK clocking): a load
// balancer that recycles the entropies of ACKs (REPS, Spritz) sees them
// one ACK at a time as in the simulator, not a batch's worth after
// another's, and the packets still join GSO messages in the batch.
func (e *Engine) takeAcks(now Time) {
	e.ackMu.Lock()
	q := e.ackCur
	if len(q) == 0 {
		e.ackMu.Unlock()
		return
	}
	full := len(q) >= maxAckQueue
	e.ackCur, e.ackSpare = e.ackSpare, nil
	e.ackMu.Unlock()
	if full {
		select {
		case e.ackSpace <- struct{}{}:
		default:
		}
	}
	e.c.rxBatches.Add(1)
	gso := e.gsoProbe.Load() && !e.gsoOff.Load()
	for i := range q {
		if f := e.onAck(&q[i], now); f != nil && f.active {
			e.sendFrom(f, now, e.run, gso)
		}
	}
	clear(q)
	e.ackMu.Lock()
	e.ackSpare = q[:0]
	e.ackMu.Unlock()
}

// onAck processes one ACK and returns its flow (nil: none, or it
// completed).
func (e *Engine) onAck(rec *ackRec, now Time) *sendFlow {
	h := &rec.h
	f := e.flows[h.Flow]
	if f == nil {
		e.c.staleAcks.Add(1)
		return nil
	}
	if h.Nack {
		e.c.nacksRecv.Add(1)
	} else {
		e.c.acksRecv.Add(1)
		if h.ECN {
			e.c.ecnAcks.Add(1)
		}
	}
	a := h.Transport()
	a.Plane = rec.plane
	// The hosts' share of the round trip: the receiver's hold and the time
	// the ACK waited here since the kernel received it.
	hold := Time(h.HoldNs) * transport.Nanosecond
	a.HostDelay = hold
	if now > rec.rxAt {
		a.HostDelay += now - rec.rxAt
	}
	// Every ACK times the transmission it echoes through the fabric.
	if rtt := rec.rxAt - Time(h.EchoTS) - hold; rtt > 0 && (f.minRTT == 0 || rtt < f.minRTT) {
		f.minRTT = rtt
	}
	// The largest host delay of the last rttHintAge: new flows' RTOs start
	// from it (this host stalls alike for every flow).
	if a.HostDelay > e.hostMax || now-e.hostAt > rttHintAge {
		e.hostMax, e.hostAt = a.HostDelay, now
	}
	spurious := f.snd.Stats.Spurious
	f.snd.OnAck(now, &a)
	if n := f.snd.Stats.Spurious - spurious; n > 0 {
		e.c.spurious.Add(n)
		// The late original's delay floors the RTO of every flow of this
		// engine for a while (the sender took it in: RTTEstimator).
		if est := f.snd.RTT(); est != nil && est.MaxHostDelay() > e.hostMax {
			e.hostMax, e.hostAt = est.MaxHostDelay(), now
		}
	}
	if cw := f.snd.Cwnd(); cw > f.maxCwnd {
		f.maxCwnd = cw
	}
	if f.snd.Done() {
		e.complete(f, now, nil)
		return nil
	}
	if !f.active && f.snd.CanSend(now) {
		e.activate(f)
	}
	return f
}
