package sim

import "github.com/fabricbench/fabricbench/agents/transport"

// This file is the host NIC: it pulls data packets from the host's senders
// round robin whenever its port is free (after its control queue of ACKs),
// and delivers arriving packets to the endpoint state machines, turning a
// data packet into its ACK in place.

// pull asks the host's senders, round robin, for the next data packet.
func (s *Sim) pull(hn int32) int32 {
	h := &s.hosts[hn]
	var d transport.Data
	for len(h.active) > 0 {
		if h.rr >= len(h.active) {
			h.rr = 0
		}
		fi := h.active[h.rr]
		st := &s.flows[fi]
		size := st.snd.NextPacket(s.now, &d)
		if size == 0 {
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
	if pkt.kind == pkData {
		d := pkt.dataHeader()
		// The flow completes at the sender, when the ACK for its last packet
		// arrives (as in htsim), so the receiver's completion is not used.
		ack, _ := st.rcv.OnData(&d, pkt.flags&pfECN != 0, pkt.flags&pfTrimmed != 0)
		// Turn the packet into its ACK in place (ECMP-routed, no explicit path).
		*pkt = packet{ts: ack.EchoTS, flow: fi, dst: st.srcNode, size: int32(s.tp.AckBytes), psn: ack.PSN, cum: ack.CumAck, entropy: ack.Entropy, kind: pkAck}
		if ack.ECN {
			pkt.flags |= pfECN
		}
		if ack.Nack {
			pkt.flags |= pfNack
		}
		s.enqueue(s.hosts[h].port, pi)
		return
	}
	a := transport.Ack{Flow: uint32(fi), PSN: pkt.psn, CumAck: pkt.cum, Entropy: pkt.entropy, ECN: pkt.flags&pfECN != 0, Nack: pkt.flags&pfNack != 0, EchoTS: pkt.ts}
	s.pk.release(pi)
	if st.fct >= 0 {
		return
	}
	st.snd.OnAck(s.now, &a)
	if st.snd.Done() {
		s.complete(fi)
		return
	}
	if st.snd.CanSend(s.now) {
		s.activate(fi)
	}
}
