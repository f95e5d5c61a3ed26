package sim

import (
	"math"

	"github.com/fabricbench/fabricbench/agents/transport"
)

// This file is the host NIC: it pulls data packets from the host's senders
// round robin whenever its port is free (after its control queue of ACKs),
// and delivers arriving packets to the endpoint state machines, turning a
// data packet into its ACK in place.

// pull asks the host's senders, round robin, for the next data packet.
func (s *Sim) pull(hn int32) int32 {
	h := &s.hosts[hn]
	var d transport.Data
	skipped := 0
	for len(h.active) > 0 {
		if h.rr >= len(h.active) {
			h.rr = 0
		}
		fi := h.active[h.rr]
		st := &s.flows[fi]
		if s.pfc.on && s.pfcPaused(h.port, int(st.class)) {
			// PFC: the NIC's class is paused; its senders wait.
			if skipped++; skipped >= len(h.active) {
				return -1
			}
			h.rr++
			continue
		}
		if s.ld.mode == PortMSB {
			var pr transport.Probe
			if st.snd.NextProbe(s.now, &pr) {
				h.rr++
				return s.owdProbe(fi, st, &pr)
			}
		}
		size := st.snd.NextPacket(s.now, &d)
		if size == 0 {
			if st.paceBps > 0 {
				s.pacedHold(fi, st)
			}
			st.active = false
			last := len(h.active) - 1
			copy(h.active[h.rr:], h.active[h.rr+1:])
			h.active = h.active[:last]
			continue
		}
		h.rr++
		pi := s.pk.alloc()
		p := &s.pk.p[pi]
		*p = packet{ts: d.SentAt, flow: fi, dst: st.dstNode, size: int32(size), payload: d.Payload, psn: d.PSN,
			entropy: d.Entropy, path: st.path, class: st.class, kind: pkData}
		if d.Retx {
			p.flags = pfRetx
		}
		if d.AckReq {
			p.flags |= pfAckReq
		}
		p.setAckRoute(&d)
		if s.sr.on {
			s.srEncap(fi, p)
		}
		if st.timerAt == 0 {
			s.armTimer(fi)
		}
		return pi
	}
	return -1
}

func (s *Sim) deliver(h int32, pi int32) {
	pkt := &s.pk.p[pi]
	fi := pkt.flow
	st := &s.flows[fi]
	if pkt.flags&pfProbe != 0 {
		s.owdDeliver(h, pi)
		return
	}
	if pkt.kind == pkData {
		if s.dl.on {
			s.deliveryStage(pkt)
		}
		d := pkt.dataHeader()
		if s.ld.mode == PortMSB {
			d.QDelay, d.QDelayValid = transport.Time(pkt.cum)*transport.Nanosecond, true
		}
		// The flow completes at the sender, when the ACK for its last packet
		// arrives (as in htsim), so the receiver's completion is not used.
		var ack transport.Ack
		send, _ := st.rcv.Receive(s.now, &d, pkt.flags&pfECN != 0, pkt.flags&pfTrimmed != 0, &ack)
		if !send {
			// A coalescing receiver holds the ACK: arm its timer, if any.
			s.pk.release(pi)
			if due := st.rcv.AckDue(); due > 0 && due != st.ackAt {
				st.ackAt = due
				s.q.push(due, evAckTimer, fi, 0)
			}
			return
		}
		// Turn the packet into its ACK in place.
		port := s.ackPort(h, pkt)
		pkt.setAck(&ack, fi, st.srcNode, int32(s.tp.AckBytes))
		if ack.QDelayValid {
			pkt.sackHi = uint32(min(ack.QDelay/transport.Nanosecond, math.MaxUint32))
		}
		s.enqueue(port, pi)
		return
	}
	a := pkt.ackHeader()
	if s.ld.mode == PortMSB {
		// sackHi carries the echoed queuing delay (no coalescing here).
		a.Sack, a.SackBase = 0, 0
		a.QDelay, a.QDelayValid = transport.Time(pkt.sackHi)*transport.Nanosecond, true
	}
	if s.mp.on {
		a.Plane = s.ackPlane(pkt)
	}
	s.pk.release(pi)
	if st.fct >= 0 {
		return
	}
	acked := st.snd.Acked()
	st.snd.OnAck(s.now, &a)
	if st.snd.Acked() != acked {
		s.progressAt = s.now
	}
	if st.snd.Done() {
		s.complete(fi)
		return
	}
	if st.snd.CanSend(s.now) {
		s.activate(fi)
	} else if st.paceBps > 0 {
		s.pacedHold(fi, st)
	}
}

// ackTimer sends a flow's held ACK when its receiver's timer is due.
func (s *Sim) ackTimer(fi int32, at int64) {
	st := &s.flows[fi]
	if st.ackAt != at {
		return // stale: re-armed since
	}
	st.ackAt = 0
	// In the parallel mode the sender's completion belongs to another
	// shard: the receiver decides on its own state (a late ACK is ignored).
	if (s.sh == nil && st.fct >= 0) || st.rcv.AckDue() != at {
		return // sent with a later arrival, or the flow is over
	}
	var ack transport.Ack
	if !st.rcv.Flush(&ack) {
		return
	}
	pi := s.pk.alloc()
	s.pk.p[pi].setAck(&ack, fi, st.srcNode, int32(s.tp.AckBytes))
	s.enqueue(s.hosts[st.dst].port, pi)
}
