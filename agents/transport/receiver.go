package transport

import "math/bits"

// Receiver tracks which packets of one flow arrived and decides when to
// acknowledge them. Its memory does not depend on the flow size: a
// cumulative point plus a ring bitmap of the arrivals above it, grown on
// demand up to MaxSpan packets.
//
// A receiver from NewReceiver, or from NewReceiverFor with per-packet
// Params (the default), answers every data packet with its ACK or NACK. With
// Params.AckEvery or AckEveryBytes it coalesces: Receive holds arrivals back
// and answers once per threshold, with a selective bitmap of the packets the
// ACK covers, or at once when a packet asks for it (see Params); AckDue and
// Flush implement the optional AckDelay timer.
type Receiver struct {
	flow     uint32
	npkts    uint32
	cum      uint32   // all PSN < cum received
	got      ringBits // PSN in [cum, cum+got.size()) received
	received uint32   // distinct PSNs received
	bytes    int64    // distinct payload bytes received
	done     bool

	// ACK coalescing policy (0: per-packet ACKs).
	every  int32 // packets per ACK (> 1), or 0
	everyB int64 // wire bytes per ACK, or 0
	delay  Time  // hold limit, or 0
	hdr    int64 // header bytes per data packet (wire = payload + hdr)

	// Held arrivals: received and not yet acknowledged. They lie in
	// [pbase, pbase+SackBits); bit i of pbits is pbase+i.
	pbase   uint32
	pbits   uint64
	pn      int32
	pbytes  int64
	due     Time // when the held ACK must go (0: none held, or no timer)
	lastPSN uint32
	lastEnt uint16
	lastTS  Time
	started bool // a data packet arrived
	ackReq  bool // an AckReq arrived with gaps below it: answer again when they fill

	// Go-back-N (Params.GoBackN): only the expected PSN is accepted; the
	// first packet past a gap draws one go-back NACK (nak set until the
	// gap fills), the rest are discarded silently.
	gbn bool
	nak bool

	// ar chooses the entropy each ACK travels on (ackroute.go).
	ar ackRouter
}

// NewReceiver makes the receiver for a flow of npkts packets. It
// acknowledges every data packet.
func NewReceiver(flow uint32, npkts uint32) *Receiver {
	return &Receiver{flow: flow, npkts: npkts, ar: newAckRouter(&Params{}, flow)}
}

// NewReceiverFor makes the receiver for a flow of npkts packets that
// acknowledges as p says (Params.AckEvery, AckEveryBytes, AckDelay).
func NewReceiverFor(p *Params, flow uint32, npkts uint32) *Receiver {
	r := NewReceiver(flow, npkts)
	r.ar = newAckRouter(p, flow)
	r.gbn = p.GoBackN
	if p.Coalescing() {
		if p.AckEvery > 1 {
			r.every = int32(p.AckEvery)
		}
		r.everyB = int64(p.AckEveryBytes)
		r.delay = p.AckDelay
		r.hdr = int64(p.HeaderBytes)
	}
	return r
}

// Coalescing reports whether the receiver holds ACKs back.
func (r *Receiver) Coalescing() bool { return r.every > 0 || r.everyB > 0 }

// OnData processes one arriving data packet (or trimmed header when trimmed is
// set) and returns the per-packet ACK/NACK to send back, whatever the
// receiver's coalescing policy (drivers that coalesce call Receive). complete
// is true exactly once: on the arrival that completes the flow.
//
// A packet MaxSpan or more above the cumulative point (which a Sender never
// sends) is not recorded: it is NACKed so that it is sent again later.
func (r *Receiver) OnData(d *Data, ecn, trimmed bool) (ack Ack, complete bool) {
	ack = Ack{Flow: r.flow, PSN: d.PSN, Entropy: d.Entropy, ECN: ecn, EchoTS: d.SentAt, QDelay: d.QDelay, QDelayValid: d.QDelayValid}
	if trimmed || r.tooFar(d.PSN) {
		ack.Nack = true
		ack.CumAck = r.cum
		r.ar.observe(d, false)
		ack.Route = r.ar.route(ack.Entropy)
		return ack, false
	}
	dup := r.duplicate(d.PSN)
	if !dup {
		complete = r.record(d)
	}
	ack.CumAck = r.cum
	r.ar.observe(d, dup)
	ack.Route = r.ar.route(ack.Entropy)
	return ack, complete
}

func (r *Receiver) tooFar(psn uint32) bool {
	return psn >= r.cum && psn < r.npkts && psn-r.cum >= MaxSpan
}

func (r *Receiver) duplicate(psn uint32) bool {
	// The ring covers [cum, cum+size): a PSN beyond it is new (its bit
	// would be another PSN's, one ring below).
	return psn < r.cum || psn >= r.npkts || (psn-r.cum < r.got.size() && r.got.get(psn))
}

// record marks a new PSN received and reports whether it completed the flow.
func (r *Receiver) record(d *Data) bool {
	r.got.set(d.PSN, r.cum)
	r.received++
	r.bytes += int64(d.Payload)
	for r.cum < r.npkts && r.got.get(r.cum) {
		r.got.clear(r.cum)
		r.cum++
	}
	if r.received == r.npkts && !r.done {
		r.done = true
		return true
	}
	return false
}

// Receive processes one data packet (or trimmed header) arriving at now. It
// returns send when an ACK or NACK must go back now, filled into ack, and
// complete exactly once, on the arrival that completes the flow. A receiver
// without a coalescing policy sends on every arrival (as OnData). A
// coalescing one holds the ACK of an arrival until a threshold is reached,
// and answers at once on an ECN mark, AckReq, the flow's first or completing
// packet, a duplicate or a trimmed header (NACK, which leaves held arrivals
// held), or an arrival too far from the held ones for one bitmap (an ACK for
// that packet alone). When it holds an ACK and has a timer, AckDue says when
// Flush must send it.
func (r *Receiver) Receive(now Time, d *Data, ecn, trimmed bool, ack *Ack) (send, complete bool) {
	if r.gbn {
		return r.receiveGBN(d, ecn, trimmed, ack)
	}
	if !r.Coalescing() {
		*ack, complete = r.OnData(d, ecn, trimmed)
		return true, complete
	}
	psn := d.PSN
	*ack = Ack{Flow: r.flow, PSN: psn, Entropy: d.Entropy, ECN: ecn, EchoTS: d.SentAt, QDelay: d.QDelay, QDelayValid: d.QDelayValid}
	if trimmed || r.tooFar(psn) {
		ack.Nack = true
		ack.CumAck = r.cum
		r.ar.observe(d, false)
		ack.Route = r.ar.route(ack.Entropy)
		return true, false
	}
	if r.duplicate(psn) {
		ack.CumAck = r.cum
		r.ar.observe(d, true)
		ack.Route = r.ar.route(ack.Entropy)
		return true, false
	}
	r.ar.observe(d, false)
	complete = r.record(d)
	first := !r.started
	r.started = true
	if !r.hold(psn) {
		ack.CumAck = r.cum
		ack.Route = r.ar.route(ack.Entropy)
		return true, complete
	}
	r.pbytes += int64(d.Payload) + r.hdr
	r.lastPSN, r.lastEnt, r.lastTS = psn, d.Entropy, d.SentAt
	force := ecn || first || complete || d.AckReq
	gaps := r.received != r.cum
	if d.AckReq && gaps {
		r.ackReq = true
	} else if r.ackReq && !gaps {
		r.ackReq = false
		force = true
	}
	if force || (r.every > 0 && r.pn >= r.every) || (r.everyB > 0 && r.pbytes >= r.everyB) {
		r.take(ack)
		ack.Route = r.ar.route(ack.Entropy)
		return true, complete
	}
	if r.pn == 1 && r.delay > 0 {
		r.due = AddTime(now, r.delay)
	}
	return false, complete
}

// hold adds psn to the held arrivals, unless it does not fit in one
// bitmap with them.
func (r *Receiver) hold(psn uint32) bool {
	switch {
	case r.pn == 0:
		r.pbase, r.pbits = psn, 1
	case psn >= r.pbase:
		if psn-r.pbase >= SackBits {
			return false
		}
		r.pbits |= 1 << (psn - r.pbase)
	default:
		top := r.pbase + uint32(bits.Len64(r.pbits)) - 1
		if top-psn >= SackBits {
			return false
		}
		r.pbits = r.pbits<<(r.pbase-psn) | 1
		r.pbase = psn
	}
	r.pn++
	return true
}

// take completes ack (whose PSN is one of the held arrivals) with the
// cumulative point and the bitmap of every held arrival, and releases them.
func (r *Receiver) take(ack *Ack) {
	ack.CumAck = r.cum
	ack.SackBase, ack.Sack = r.pbase, r.pbits
	r.pn, r.pbits, r.pbytes, r.due = 0, 0, 0, 0
}

// AckDue returns the time at which a held ACK must be sent (Flush), or 0
// when none is held or the receiver has no timer (Params.AckDelay).
func (r *Receiver) AckDue() Time { return r.due }

// Flush fills ack with the held ACK, if any, releasing the arrivals it
// covers, and reports whether there was one. Its reference is the latest
// held arrival (entropy and timestamp echoed; not ECN-marked, as marked
// packets are answered at once).
func (r *Receiver) Flush(ack *Ack) bool {
	if r.pn == 0 {
		return false
	}
	*ack = Ack{Flow: r.flow, PSN: r.lastPSN, Entropy: r.lastEnt, EchoTS: r.lastTS}
	r.take(ack)
	ack.Route = r.ar.route(ack.Entropy)
	return true
}

// Done reports whether every packet arrived.
func (r *Receiver) Done() bool { return r.done }

// Bytes returns the distinct payload bytes received.
func (r *Receiver) Bytes() int64 { return r.bytes }

// ringBits is a bitmap over a sliding range of PSNs [cum, cum+size()): bit
// psn&(size()-1) stands for psn. Bits below cum must be cleared as cum
// passes them, so a bit is only ever set for one PSN of the range.
type ringBits struct {
	w []uint64 // len is a power of two
}

func (b *ringBits) size() uint32 { return uint32(len(b.w)) * 64 }

func (b *ringBits) get(psn uint32) bool {
	if len(b.w) == 0 {
		return false
	}
	i := psn & (b.size() - 1)
	return b.w[i>>6]&(1<<(i&63)) != 0
}

// set marks psn, which must be in [cum, cum+MaxSpan), growing the ring to
// cover it.
func (b *ringBits) set(psn, cum uint32) {
	if len(b.w) == 0 || psn-cum >= b.size() {
		b.grow(psn-cum+1, cum)
	}
	i := psn & (b.size() - 1)
	b.w[i>>6] |= 1 << (i & 63)
}

func (b *ringBits) clear(psn uint32) {
	if len(b.w) == 0 {
		return
	}
	i := psn & (b.size() - 1)
	b.w[i>>6] &^= 1 << (i & 63)
}

// grow makes the ring cover at least need PSNs from cum, keeping its bits.
func (b *ringBits) grow(need, cum uint32) {
	n := 4 // words
	for n < len(b.w)*2 || uint32(n)*64 < need {
		n *= 2
	}
	nb := ringBits{w: make([]uint64, n)}
	for q, end := cum, cum+b.size(); q != end; q++ {
		if b.get(q) {
			i := q & (nb.size() - 1)
			nb.w[i>>6] |= 1 << (i & 63)
		}
	}
	*b = nb
}

// receiveGBN is a go-back-N receiver (RoCE without selective repeat): it
// accepts the expected PSN only. A packet past a gap, or the expected one
// trimmed, draws one NACK with GoBack set (the sender resends everything
// from CumAck); later ones are discarded without an answer until the gap
// fills.
func (r *Receiver) receiveGBN(d *Data, ecn, trimmed bool, ack *Ack) (send, complete bool) {
	*ack = Ack{Flow: r.flow, PSN: d.PSN, Entropy: d.Entropy, ECN: ecn, EchoTS: d.SentAt, QDelay: d.QDelay, QDelayValid: d.QDelayValid}
	dup := false
	switch {
	case !trimmed && d.PSN == r.cum && d.PSN < r.npkts:
		complete = r.record(d)
		r.nak = false
	case d.PSN < r.cum || d.PSN >= r.npkts:
		// a duplicate: acknowledged again
		dup = d.PSN < r.cum
	default:
		r.ar.observe(d, false)
		if r.nak {
			return false, false
		}
		r.nak = true
		ack.Nack, ack.GoBack = true, true
		ack.CumAck = r.cum
		ack.Route = r.ar.route(ack.Entropy)
		return true, false
	}
	r.ar.observe(d, dup)
	ack.CumAck = r.cum
	ack.Route = r.ar.route(ack.Entropy)
	return true, complete
}
