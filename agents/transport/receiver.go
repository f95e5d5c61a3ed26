package transport

// Receiver tracks which packets of one flow arrived and produces the
// per-packet ACK or NACK for each arrival. Its memory does not depend on the
// flow size: a cumulative point plus a ring bitmap of the arrivals above it,
// grown on demand up to MaxSpan packets.
type Receiver struct {
	flow     uint32
	npkts    uint32
	cum      uint32   // all PSN < cum received
	got      ringBits // PSN in [cum, cum+got.size()) received
	received uint32   // distinct PSNs received
	bytes    int64    // distinct payload bytes received
	done     bool
}

// NewReceiver makes the receiver for a flow of npkts packets.
func NewReceiver(flow uint32, npkts uint32) *Receiver {
	return &Receiver{flow: flow, npkts: npkts}
}

// OnData processes one arriving data packet (or trimmed header when trimmed is
// set) and returns the ACK/NACK to send back. complete is true exactly once:
// on the arrival that completes the flow.
//
// A packet MaxSpan or more above the cumulative point (which a Sender never
// sends) is not recorded: it is NACKed so that it is sent again later.
func (r *Receiver) OnData(d *Data, ecn, trimmed bool) (ack Ack, complete bool) {
	ack = Ack{Flow: r.flow, PSN: d.PSN, Entropy: d.Entropy, ECN: ecn, EchoTS: d.SentAt}
	if trimmed || (d.PSN >= r.cum && d.PSN < r.npkts && d.PSN-r.cum >= MaxSpan) {
		ack.Nack = true
		ack.CumAck = r.cum
		return ack, false
	}
	if d.PSN >= r.cum && d.PSN < r.npkts && !r.got.get(d.PSN) {
		r.got.set(d.PSN, r.cum)
		r.received++
		r.bytes += int64(d.Payload)
		for r.cum < r.npkts && r.got.get(r.cum) {
			r.got.clear(r.cum)
			r.cum++
		}
		if r.received == r.npkts && !r.done {
			r.done = true
			complete = true
		}
	}
	ack.CumAck = r.cum
	return ack, complete
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
