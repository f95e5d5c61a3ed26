package transport

// Receiver tracks which packets of one flow arrived and produces the
// per-packet ACK or NACK for each arrival.
type Receiver struct {
	flow     uint32
	npkts    uint32
	cum      uint32 // all PSN < cum received
	got      bitset // PSN >= cum received, indexed psn-cum via ring
	received uint32 // distinct PSNs received
	bytes    int64  // distinct payload bytes received
	done     bool
}

// NewReceiver makes the receiver for a flow of npkts packets.
func NewReceiver(flow uint32, npkts uint32) *Receiver {
	return &Receiver{flow: flow, npkts: npkts}
}

// OnData processes one arriving data packet (or trimmed header when trimmed is
// set) and returns the ACK/NACK to send back. complete is true exactly once:
// on the arrival that completes the flow.
func (r *Receiver) OnData(d *Data, ecn, trimmed bool) (ack Ack, complete bool) {
	ack = Ack{Flow: r.flow, PSN: d.PSN, Entropy: d.Entropy, ECN: ecn, EchoTS: d.SentAt}
	if trimmed {
		ack.Nack = true
		ack.CumAck = r.cum
		return ack, false
	}
	if d.PSN >= r.cum && d.PSN < r.npkts && !r.got.get(d.PSN) {
		r.got.set(d.PSN)
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

// bitset is a growable bitmap over PSNs: one bit per packet of the flow,
// grown on demand up to the highest PSN seen.
type bitset struct {
	w []uint64
}

func (b *bitset) ensure(psn uint32) {
	need := int(psn>>6) + 1
	if need > len(b.w) {
		n := len(b.w) * 2
		if n < need {
			n = need
		}
		if n < 4 {
			n = 4
		}
		nw := make([]uint64, n)
		copy(nw, b.w)
		b.w = nw
	}
}

func (b *bitset) get(psn uint32) bool {
	i := int(psn >> 6)
	return i < len(b.w) && b.w[i]&(1<<(psn&63)) != 0
}

func (b *bitset) set(psn uint32) {
	b.ensure(psn)
	b.w[psn>>6] |= 1 << (psn & 63)
}

func (b *bitset) clear(psn uint32) {
	i := int(psn >> 6)
	if i < len(b.w) {
		b.w[i] &^= 1 << (psn & 63)
	}
}
