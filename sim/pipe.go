package sim

import (
	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
)

// This file is the pipe: a link direction that carries packets from an
// egress port to the node at its far end after its latency (store and
// forward), and the link-state changes that take it down, bring it back or
// degrade it.

// transmit puts packet pi on port pid's link: the port is busy for its
// serialisation, and it arrives at the peer node a latency later (or is
// lost at once when the link is down).
func (s *Sim) transmit(pid int32, p *port, pi int32) {
	pkt := &s.pk.p[pi]
	size := int64(pkt.size)
	p.Stats.OutOctets += uint64(size)
	p.Stats.OutPkts++
	p.freeAt = s.now + transport.TxTime(size, p.rate)
	if p.up {
		if s.ld.mode == PortMSB && p.host < 0 && pkt.kind == pkData {
			s.owdQueued(pkt)
		}
		pkt.epoch, pkt.port = p.epoch, pid
		arr := p.freeAt + p.lat
		if p.xshard != 0 {
			// To another shard: copied into the outbox, merged at the barrier.
			s.sendAcross(pid, p, arr, pi)
			return
		}
		// Arrivals on one link are in transmission order (constant latency),
		// so only the head of the wire needs a scheduled event.
		if p.wire.size == 0 {
			s.q.push(arr, evArrive, pid, pi)
		}
		p.wire.push(arr, pi)
	} else {
		s.lost()
		p.Stats.Drops++
		s.pk.release(pi)
	}
}

// arrive delivers the head of port pid's wire to the node at its far end:
// a host's NIC, or a switch's ingress stage.
func (s *Sim) arrive(pid int32) {
	via := &s.ports[pid]
	pi := via.wire.pop()
	if via.wire.size > 0 {
		s.q.push(via.wire.first().at, evArrive, pid, 0)
	}
	node := via.peerNode
	pkt := &s.pk.p[pi]
	if via.epoch != pkt.epoch {
		// The link went down while the packet was on it.
		s.lost()
		via.Stats.Drops++
		s.pk.release(pi)
		return
	}
	// The far end's "in" counters are kept here, on the port already in
	// cache, not on the peer port (PortStats reads them from here).
	via.arrOctets += uint64(pkt.size)
	via.arrPkts++
	if h := s.hostOf[node]; h >= 0 {
		s.deliver(h, pi)
		return
	}
	if s.ld.mode == PortMSB {
		// The link is behind it: epoch keeps its arrival time (ns) until
		// the switch sends it on (owd.go).
		pkt.epoch = uint32(s.now / 1000)
	}
	s.ingress(node, via.peerPort, pi)
}

// reroute recomputes the ECMP groups over the links that are up.
func (s *Sim) reroute() {
	down := make([]bool, len(s.f.Links))
	for i := range s.f.Links {
		down[i] = !s.ports[s.f.Links[i].A].up
	}
	s.rt.build(s.f, down, s.cfg.Seed)
	if s.ld.mode != LowDiameterOff {
		// Low-diameter routing reconverges too (minimal tables over the
		// links that are up); flows started from now on get fresh
		// source-guided path lists.
		s.ldTables(down)
		for i := range s.sg.paths {
			s.sg.paths[i] = nil
		}
	}
	s.res.Reroutes++
	if s.ar.w != nil {
		s.arWeights()
	}
}

func (s *Sim) linkEvent(le *LinkEvent) {
	l := &s.f.Links[le.Link]
	wasUp := s.ports[l.A].up
	if s.cfg.Reconverge > 0 && wasUp != le.Up {
		s.q.push(s.now+s.cfg.Reconverge, evReroute, 0, 0)
	}
	for i, pid := range [2]int{l.A, l.B} {
		if (le.Direction == inventory.DirAB && i == 1) || (le.Direction == inventory.DirBA && i == 0) {
			continue
		}
		p := &s.ports[pid]
		if !le.Up {
			if p.up {
				p.up = false
				p.epoch++
				// Everything queued behind the dead link is lost.
				s.flush(int32(pid), p)
			}
			continue
		}
		p.up = true
		if le.RateFactor > 0 {
			p.rate = int64(float64(p.nominal) * le.RateFactor)
			if p.rate < 1 {
				p.rate = 1
			}
		} else {
			p.rate = p.nominal
		}
		s.kick(int32(pid))
	}
	if s.ar.w != nil && s.cfg.Reconverge == 0 {
		s.arWeights() // no control plane delay modelled: weights at once
	}
	if s.mp.on {
		s.mpLink(le)
	}
}
