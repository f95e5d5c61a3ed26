package transport

import "math/bits"

// balancer chooses the entropy value of every data packet and learns from
// the feedback that comes back on ACKs, NACKs and timeouts.
type balancer struct {
	kind      LBKind
	entropies uint32 // size of the entropy space
	fixed     uint16 // ECMP: the flow's single entropy
	rng       *rng

	// OPS cycle (Params.OPSCycle): the next index of the walk over
	// [0, cmask], XORed with cxor, a random mask drawn anew for every cycle.
	cycle bool
	cidx  uint32
	cxor  uint32
	cmask uint32

	// REPS warm-up (Params.REPSWarmup): the first warm packets take
	// entropies 1, 2, ... in turn (sent counts them, crt is the last).
	warm, sent, crt uint32

	// REPS: circular buffer of entropies that came back unmarked.
	ring []uint16
	head int // next slot to read
	tail int // next slot to write
	n    int // entries held; with none, REPS sprays fresh random entropies

	// sp is the path list (spritz.go): a source-guided fabric's, or for
	// the path-aware balancers without one the coarse-grained list of
	// every entropy; nil otherwise.
	sp *spritzState
	// ow is the OWD balancer's state (owd.go), nil for the others.
	ow *owdState

	// Params.EntropyRun: the entropy cur holds for left more packets.
	run  int
	left int
	cur  uint16
}

func newBalancer(kind LBKind, entropies uint32, bufSize int, r *rng, p *Params, paths []PathEV) balancer {
	b := balancer{kind: kind, entropies: entropies, rng: r}
	if b.entropies == 0 || b.entropies > 1<<16 {
		b.entropies = 1 << 16
	}
	switch kind {
	case ECMP:
		b.fixed = uint16(r.intn(b.entropies))
	case REPS:
		if bufSize <= 0 {
			bufSize = 8
		}
		b.ring = make([]uint16, bufSize)
	}
	b.initPaths(p, paths)
	if p != nil && p.EntropyRun > 1 {
		b.run = p.EntropyRun
	}
	return b
}

// setCycle makes OPS walk cycles over its entropies (Params.OPSCycle), as
// htsim_uec's oblivious load balancer does: within a cycle the entropies
// are i XOR x for i = 0, 1, 2, ... over the smallest power of two that
// holds them (values outside the space are skipped), so every entropy is
// used once per cycle, and x is drawn again at the start of every cycle.
// A flow's packets thus spread over its paths in fixed shares per cycle
// (the switches' hash maps each entropy to one port), where independent
// draws balance them only on average.
func (b *balancer) setCycle() {
	if b.kind != OPS {
		return
	}
	b.cycle = true
	b.cmask = 1<<bits.Len32(b.entropies-1) - 1
	b.cxor = b.rng.intn(b.cmask + 1)
}

// nextInCycle returns the next entropy of the OPS cycle.
func (b *balancer) nextInCycle() uint16 {
	for {
		v := (b.cidx ^ b.cxor) & b.cmask
		if b.cidx == b.cmask {
			b.cidx = 0
			b.cxor = b.rng.intn(b.cmask + 1)
		} else {
			b.cidx++
		}
		if v < b.entropies {
			return uint16(v)
		}
	}
}

// next returns the entropy for the next packet sent at now: a new choice
// every packet, or every Params.EntropyRun packets.
func (b *balancer) next(now Time) uint16 {
	if b.run > 1 {
		if b.left > 0 {
			b.left--
			return b.cur
		}
		b.cur, b.left = b.choose(now), b.run-1
		return b.cur
	}
	return b.choose(now)
}

// choose is the load balancer's choice of an entropy at now.
func (b *balancer) choose(now Time) uint16 {
	if b.ow != nil {
		return b.ow.cands[b.ow.cur]
	}
	if b.sp != nil {
		if b.kind.isPathAware() {
			return b.nextPathAware(now)
		}
		if b.kind == OPS || (b.kind == REPS && b.n == 0) {
			return b.sp.paths[b.rng.intn(uint32(len(b.sp.paths)))].EV
		}
	}
	switch b.kind {
	case ECMP:
		return b.fixed
	case OPS:
		if b.cycle {
			return b.nextInCycle()
		}
	case REPS:
		if b.sent < b.warm {
			b.sent++
			if b.crt++; b.crt == b.entropies {
				b.crt = 0
			}
			return uint16(b.crt)
		}
		if b.n > 0 {
			e := b.ring[b.head]
			b.head = (b.head + 1) % len(b.ring)
			b.n--
			return e
		}
	}
	return uint16(b.rng.intn(b.entropies))
}

// onAck learns from an ACK that carried entropy e.
func (b *balancer) onAck(e uint16, ecn bool) {
	if b.sp != nil && b.kind.isPathAware() {
		b.ackPathAware(e, ecn)
		return
	}
	if b.kind != REPS || ecn {
		return
	}
	// Recycle the good entropy. When the buffer is full the oldest entry is
	// overwritten, so the freshest good paths are the ones reused.
	if b.n == len(b.ring) {
		b.head = (b.head + 1) % len(b.ring)
		b.n--
	}
	b.ring[b.tail] = e
	b.tail = (b.tail + 1) % len(b.ring)
	b.n++
}

// pathChange is the NSCC "ECN with low delay" case: the congestion control
// asks the load balancer to move away from the path that was marked. REPS
// already does so by not recycling marked entropies; ECMP has no choice;
// OPS sprays anyway.
func (b *balancer) pathChange(e uint16) {}

// onLoss learns from a NACK (timeout false) or a timeout at now on entropy
// e. REPS simply does not recycle it: the next packet takes a recycled good
// entropy or a fresh one. The path-aware balancers drop the path from their
// buffer and, on a timeout, block it for a while (spritz.go).
func (b *balancer) onLoss(now Time, e uint16, timeout bool) {
	if b.sp != nil && b.kind.isPathAware() {
		b.lossPathAware(now, e, timeout)
	}
}
