package sim

import (
	"math"

	"github.com/fabricbench/fabricbench/agents/transport"
)

// This file is one-way-delay path probing (the non-shortest-path paper,
// ../shared/papers/non-shortest-path-routing-lossy.txt), LowDiameter =
// PortMSB: the entropy plays the UDP source port, its MSB choosing
// shortest (0: ECMP on the other 15 bits over the minimal paths) or
// non-shortest routing (1: through the intermediate group the 15 bits
// select, modulo the groups other than the source's and destination's;
// entropy 0x8000|k is the k-th). Switches add the time every data packet
// and probe waited in their queue to its Accumulated Queuing Delay field
// (the data packet's cum, unused by data; nanoseconds, saturating); the
// receiving host echoes it in the ACK (sackHi: this mode needs per-packet
// ACKs) and answers a Path Test Message (a data packet flagged pfProbe,
// AckBytes on the wire, through the data queues) with a Path Test Reply
// (an ACK-kind packet flagged pfProbe carrying the PTM's delay in cum).
// The sender's load balancer is transport.OWD (agents/transport/owd.go).

// pfProbe marks a PTM (kind data) or PTR (kind ACK).
const pfProbe uint8 = 1 << 7

// ldMSB picks the intermediate group of a non-shortest packet at its
// source switch (index i, destination switch d).
func (s *Sim) ldMSB(i, d int32, pkt *packet) {
	ld := &s.ld
	ti, td := ld.tgt[i], ld.tgt[d]
	if ti == td || ld.nT < 3 {
		ld.nMin++
		return
	}
	t := int32(int(pkt.entropy&0x7FFF) % (ld.nT - 2))
	lo, hi := min(ti, td), max(ti, td)
	if t >= lo {
		t++
	}
	if t >= hi {
		t++
	}
	ld.nNonMin++
	pkt.via = uint16(t) + 2
}

// owdQueued adds the time packet pkt waited at this switch to its
// accumulated queuing delay: arrive stored its arrival time (switch latency
// included), in nanoseconds modulo 2^32, in pkt.epoch, which the link
// needs again only from this transmission on.
func (s *Sim) owdQueued(pkt *packet) {
	w := uint64(uint32(s.now/1000) - pkt.epoch)
	pkt.cum = uint32(min(uint64(pkt.cum)+w, math.MaxUint32))
}

// owdProbe turns a sender's PTM into a packet of flow fi.
func (s *Sim) owdProbe(fi int32, st *flowState, pr *transport.Probe) int32 {
	pi := s.pk.alloc()
	s.pk.p[pi] = packet{ts: pr.SentAt, flow: fi, dst: st.dstNode, size: int32(s.tp.AckBytes), psn: pr.ID,
		entropy: pr.Entropy, path: st.path, class: st.class, kind: pkData, flags: pfProbe}
	return pi
}

// owdDeliver handles a PTM or PTR arriving at host h.
func (s *Sim) owdDeliver(h int32, pi int32) {
	pkt := &s.pk.p[pi]
	st := &s.flows[pkt.flow]
	if pkt.kind == pkData {
		if pkt.flags&pfTrimmed != 0 {
			s.pk.release(pi) // a trimmed probe is a lost probe
			return
		}
		// The PTR: back to the sender, the PTM's delay in cum.
		port := s.ackPort(h, pkt)
		*pkt = packet{ts: pkt.ts, flow: pkt.flow, dst: st.srcNode, size: int32(s.tp.AckBytes), psn: pkt.psn,
			cum: pkt.cum, entropy: pkt.entropy, kind: pkAck, flags: pfProbe}
		s.enqueue(port, pi)
		return
	}
	r := transport.ProbeReply{Flow: uint32(pkt.flow), ID: pkt.psn, Entropy: pkt.entropy, QDelay: transport.Time(pkt.cum) * transport.Nanosecond}
	s.pk.release(pi)
	if st.fct < 0 {
		st.snd.OnProbeReply(s.now, &r)
	}
}

// OWDSwitches returns how many times the senders changed path (OWD).
func (s *Sim) OWDSwitches() int {
	n := 0
	for i := range s.flows {
		if st := &s.flows[i]; st.snd != nil {
			n += st.snd.OWDSwitches()
		}
	}
	return n
}
