package transport

// This file is telemetry-based path selection by one-way queuing delay
// (../shared/papers/non-shortest-path-routing-lossy.txt, Sec. III), load
// balancer OWD. Every flow uses one path at a time (LERP's fast
// retransmission needs in-order delivery per path). Switches add their
// queuing delay to a field of every data packet and probe, and the
// receiver echoes it in ACKs and probe replies (PTR), so the sender
// compares the forward paths' queuing delays, not RTTs. The entropy plays
// the UDP source port: its MSB 0 asks for a shortest path (the other 15
// bits hashed onto them), 1 for a non-shortest path through the
// intermediate group the 15 bits select.
//
// Candidates: one shortest path and Params.OWDPaths-1 non-shortest ones
// (entropies 0x8000|k: with |G| groups, |G|-2 intermediate groups, so
// OWDPaths = |G|-1 covers them all). At the start the sender uses the
// shortest candidate and probes every candidate (PTM); the first reply
// comes R after the probes left, and it decides when all replies are in or
// at 3R, whichever is first. After that a PTM goes every max(cwnd,
// OWDDelta3) data packets to the next candidate, round robin. A candidate
// is better than the current path when its delay is below the current
// delay x OWDDelta1 and the difference exceeds OWDDelta2 MTU transmission
// times. The current path's delay is the latest echo in ACKs (EWMA 1/4).

// OWD defaults (the paper's Sec. III).
const (
	DefaultOWDDelta1 = 0.8
	DefaultOWDDelta2 = 75.0 // MTU transmission times
	DefaultOWDDelta3 = 100  // data packets between probes (at least)
	DefaultOWDPaths  = 8    // candidates when the driver does not say
	MaxOWDPaths      = 1 << 15
)

// Probe is a Path Test Message.
type Probe struct {
	Flow    uint32
	ID      uint32
	Entropy uint16
	SentAt  Time
}

// ProbeReply is a Path Test Reply: the probe's accumulated queuing delay.
type ProbeReply struct {
	Flow    uint32
	ID      uint32
	Entropy uint16
	QDelay  Time
}

type owdState struct {
	cands    []uint16
	cur      int
	curQD    float64 // ps, EWMA of echoed delays on the current path
	curValid bool
	mtuT     float64 // ps to send one MTU at the path rate
	d1, d2   float64
	d3       int

	pending []int // candidates to probe, FIFO
	sentAt  []Time
	id      []uint32
	nextID  uint32
	since   int // data packets since the last periodic probe
	rr      int

	// initial exploration
	init      bool
	initAt    Time
	r         Time // first reply's delay after initAt; 0: none yet
	replies   int
	initQD    []Time
	initValid []bool

	// Stats
	Switches int
}

func newOWD(p *Params, f Flow, r *rng) *owdState {
	n := p.OWDPaths
	if n <= 0 {
		n = DefaultOWDPaths
	}
	o := &owdState{d1: p.OWDDelta1, d2: p.OWDDelta2, d3: p.OWDDelta3}
	if o.d1 <= 0 {
		o.d1 = DefaultOWDDelta1
	}
	if o.d2 <= 0 {
		o.d2 = DefaultOWDDelta2
	}
	if o.d3 <= 0 {
		o.d3 = DefaultOWDDelta3
	}
	if f.Path.RateBps > 0 {
		o.mtuT = float64(TxTime(int64(p.MTU+p.HeaderBytes), f.Path.RateBps))
	}
	o.cands = make([]uint16, n)
	o.cands[0] = uint16(r.intn(1 << 15))
	for k := 1; k < n; k++ {
		o.cands[k] = 0x8000 | uint16(k-1)
	}
	o.sentAt, o.id = make([]Time, n), make([]uint32, n)
	o.initQD, o.initValid = make([]Time, n), make([]bool, n)
	o.init = true
	// Periodic probes start at a random candidate, so flows that start
	// together do not all try the same path first.
	o.rr = int(r.intn(uint32(n)))
	for k := 0; k < n; k++ {
		o.pending = append(o.pending, k)
	}
	return o
}

func (o *owdState) index(e uint16) int {
	for i, c := range o.cands {
		if c == e {
			return i
		}
	}
	return -1
}

// better reports whether delay alt beats the current path's cur.
func (o *owdState) better(alt, cur float64) bool {
	return alt < cur*o.d1 && cur-alt > o.d2*o.mtuT
}

// decide ends the initial exploration: the best candidate that replied,
// if it beats the current path's reply (or the current path did not
// reply).
func (o *owdState) decide() {
	o.init = false
	best := -1
	for i, ok := range o.initValid {
		if ok && (best < 0 || o.initQD[i] < o.initQD[best]) {
			best = i
		}
	}
	if best < 0 || best == o.cur {
		return
	}
	if !o.initValid[o.cur] || o.better(float64(o.initQD[best]), float64(o.initQD[o.cur])) {
		o.switchTo(best, float64(o.initQD[best]))
	}
}

func (o *owdState) switchTo(i int, qd float64) {
	o.cur, o.curQD, o.curValid = i, qd, true
	o.Switches++
}

// tick ends the initial exploration at 3R.
func (o *owdState) tick(now Time) {
	if o.init && o.r > 0 && now >= o.initAt+3*o.r {
		o.decide()
	}
}

// sent counts a data packet; every max(cwnd, d3) packets a probe is due.
func (o *owdState) sent(cwndPkts int) {
	if o.init {
		return
	}
	o.since++
	if o.since >= max(cwndPkts, o.d3) && len(o.cands) > 1 {
		o.since = 0
		o.rr = (o.rr + 1) % len(o.cands)
		if o.rr == o.cur {
			o.rr = (o.rr + 1) % len(o.cands)
		}
		o.pending = append(o.pending, o.rr)
	}
}

func (o *owdState) ack(e uint16, qd Time) {
	if e != o.cands[o.cur] {
		return
	}
	if !o.curValid {
		o.curQD, o.curValid = float64(qd), true
		return
	}
	o.curQD += (float64(qd) - o.curQD) / 4
}

// NextProbe fills pr with a Path Test Message to send at now, if one is
// due (OWD only; other balancers never probe).
func (s *Sender) NextProbe(now Time, pr *Probe) bool {
	o := s.lb.ow
	if o == nil {
		return false
	}
	o.tick(now)
	if len(o.pending) == 0 || s.Done() {
		return false
	}
	k := o.pending[0]
	o.pending = o.pending[1:]
	if o.init && o.initAt == 0 {
		o.initAt = max(now, 1)
	}
	o.nextID++
	o.id[k], o.sentAt[k] = o.nextID, now
	*pr = Probe{Flow: s.f.ID, ID: o.nextID, Entropy: o.cands[k], SentAt: now}
	s.Stats.Probes++
	return true
}

// OnProbeReply processes a Path Test Reply arriving at now.
func (s *Sender) OnProbeReply(now Time, r *ProbeReply) {
	o := s.lb.ow
	if o == nil {
		return
	}
	k := o.index(r.Entropy)
	if k < 0 || o.id[k] != r.ID {
		return // unknown or stale
	}
	if o.init {
		if o.r == 0 {
			o.r = max(now-o.initAt, 1)
		}
		if !o.initValid[k] {
			o.initValid[k], o.initQD[k] = true, r.QDelay
			o.replies++
		}
		if o.replies == len(o.cands) || now >= o.initAt+3*o.r {
			o.decide()
		}
		return
	}
	if k != o.cur && o.curValid && o.better(float64(r.QDelay), o.curQD) {
		old := o.curQD
		o.switchTo(k, float64(r.QDelay))
		s.pathRestart(now, Time(max(old-float64(r.QDelay), 0)))
	}
}

// Path change (the paper's Sec. III, lossy version): "the sender simply
// stops using the old path and starts using the new path with slow-start",
// after waiting idle for the difference between the old and the new path's
// latency so that the new path's packets do not overtake the old one's.
// The sender knows the paths' queuing delays, not their base latencies
// (it is topology-unaware): it waits for the difference of the queuing
// delays, and stops waiting as soon as nothing is in flight on the old
// path. Slow start begins at one packet and adds every newly acknowledged
// byte (doubling per RTT) up to the window before the change
// (ssthresh); an ECN mark or a NACK of a packet on the new path, or a
// timeout, ends it, and the congestion control goes on from where it is.
//
// The initial choice after the probes (decide) is not a path change in
// this sense: the flow has just begun at its initial window.

// pathRestart starts the wait and slow start after a path change at now.
func (s *Sender) pathRestart(now, wait Time) {
	if s.pl != nil {
		return // multi-plane senders do not use OWD
	}
	s.ssthresh = s.cc.window()
	s.cc.setWindow(float64(s.wire))
	// Bytes in flight on earlier paths: every packet sent after the
	// change takes the new path's entropy.
	cur := s.lb.ow.cands[s.lb.ow.cur]
	s.oldIn = 0
	for q := s.base; q != s.nextNew; q++ {
		if sl := s.slot(q); sl.st&stOut != 0 && sl.ent != cur {
			s.oldIn += s.pktWire(q)
		}
	}
	s.slowStart = true
	s.idleUntil = AddTime(now, wait)
	s.Stats.PathRestarts++
}

// onCurPath reports whether entropy e is the OWD sender's current path
// (feedback from packets still on the old path does not end slow start).
func (s *Sender) onCurPath(e uint16) bool {
	return s.lb.ow == nil || e == s.lb.ow.cands[s.lb.ow.cur]
}

// leftOld accounts a packet that left the flight (acknowledged or queued
// for retransmission) against the earlier paths' bytes after a path change.
func (s *Sender) leftOld(sl *slot, psn uint32) {
	if s.oldIn > 0 && !s.onCurPath(sl.ent) {
		s.oldIn = max(s.oldIn-s.pktWire(psn), 0)
	}
}

// slowStartAck grows the window in slow start by newly acknowledged bytes.
func (s *Sender) slowStartAck(ecn bool, newly int64) {
	if ecn {
		s.slowStart = false
		return
	}
	if newly == 0 {
		return
	}
	w := min(s.cc.window()+float64(newly), s.ssthresh)
	s.cc.setWindow(w)
	if w >= s.ssthresh {
		s.slowStart = false
	}
}

// OWDSwitches returns how often an OWD sender changed its path.
func (s *Sender) OWDSwitches() int {
	if s.lb.ow == nil {
		return 0
	}
	return s.lb.ow.Switches
}
