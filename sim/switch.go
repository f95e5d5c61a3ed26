package sim

import (
	"fmt"
	"sort"

	"github.com/fabricbench/fabricbench/workloads"
)

// This file is the switch: the ingress stage that makes the routing
// decision, and the egress scheduler that picks the next packet a port
// transmits (see doc.go for the whole pipeline).

// ingress is a switch's ingress stage for packet pi, arrived at node
// through port inPort (the node's own port on that link). Stages run in
// order; a later feature (PFC accounting, adaptive routing) is one more call
// here, not an edit to the queues.
func (s *Sim) ingress(node, inPort int32, pi int32) {
	if s.vrf.on {
		v, ok := s.vrfStage(&s.pk.p[pi])
		if !ok {
			s.vrf.drops++
			s.ports[inPort].Stats.Drops++ // no route in the packet's VRF
			s.pk.release(pi)
			return
		}
		s.vrf.cur = s.vrf.salt[v]
	}
	out := s.route(node, &s.pk.p[pi])
	if out < 0 {
		s.lost()
		s.ports[inPort].Stats.Drops++ // no route: count at the ingress
		s.pk.release(pi)
		return
	}
	if s.pfc.on && s.ports[out].up {
		s.pfcArrive(inPort, pi)
	}
	s.enqueue(out, pi)
}

// route is the routing stage: an SRv6-encapsulated packet's uSID container
// (srv6.go) until the destination leaf decapsulates it, else
// the packet's explicit path when it has one
// (source routing), else, with adaptive routing, the least-loaded member of
// the shortest-path group (arPick), else ECMP over that group, hashing
// (flow, entropy) with the switch's salt. -1: no route.
func (s *Sim) route(node int32, pkt *packet) int32 {
	if pkt.flags&pfSRv6 != 0 {
		if out := s.srRoute(node, pkt); out != srDecap {
			return out
		}
	}
	if pkt.path > 0 {
		out := s.paths[pkt.path-1+int32(pkt.hop)]
		pkt.hop++
		if !s.ports[out].up {
			return -1
		}
		return out
	}
	if s.ld.mode != LowDiameterOff {
		return s.ldRoute(node, pkt)
	}
	if s.ar.on {
		return s.arPick(node, s.hostOf[pkt.dst])
	}
	if s.fl.on && pkt.kind == pkData {
		return s.flowletPick(node, pkt)
	}
	key, ent := uint32(pkt.flow), pkt.entropy
	if s.cfg.HashAddressesOnly {
		// Without L4 ports in the hash every packet between two hosts
		// hashes alike, whatever its flow or entropy.
		st := &s.flows[pkt.flow]
		a, b := st.srcNode, st.dstNode
		if pkt.kind == pkAck {
			a, b = b, a
		}
		key, ent = uint32(a)<<16^uint32(b), 0
	}
	return s.rt.pick(node, s.hostOf[pkt.dst], key^s.vrf.cur, ent, pkt.kind, s.ports)
}

// kick makes port pid transmit what it has: at once when it is idle,
// otherwise when the current packet is done.
func (s *Sim) kick(pid int32) {
	p := &s.ports[pid]
	if p.pending {
		return
	}
	if s.now >= p.freeAt {
		s.startTx(pid)
		return
	}
	p.pending = true
	s.q.push(p.freeAt, evTxDone, pid, 0)
}

// schedule is the egress scheduler: the data class port p serves next
// (p.dataB > 0). Classes of a lower Priority go first; classes sharing
// the highest backlogged priority share by DWRR.
func (s *Sim) schedule(pid int32, p *port) int {
	if s.ncls == 1 {
		return 0
	}
	for i := 0; i < s.ncls; i++ {
		c := int(s.order[i])
		if s.classQ(pid, c).q.size == 0 || s.pfcPaused(pid, c) {
			continue
		}
		lo, hi := s.lvlLo[i], s.lvlHi[i]
		if hi-lo == 1 {
			return c
		}
		// DWRR among order[lo:hi]: the class whose turn it is sends while
		// its deficit covers its head packet; a turn adds one quantum.
		if int(p.rr) < lo || int(p.rr) >= hi {
			p.rr, p.rrFresh = int32(lo), true
		}
		for {
			k := int(s.order[p.rr])
			q := s.classQ(pid, k)
			if q.q.size > 0 && !s.pfcPaused(pid, k) {
				if p.rrFresh {
					q.deficit += s.quantum[k]
					p.rrFresh = false
				}
				if q.deficit >= int64(s.pk.p[q.q.first()].size) {
					q.deficit -= int64(s.pk.p[q.q.first()].size)
					if q.q.size == 1 {
						// The queue empties: its turn ends, unused credit is lost.
						q.deficit = 0
						s.nextTurn(p, lo, hi)
					}
					return k
				}
			} else {
				q.deficit = 0
			}
			s.nextTurn(p, lo, hi)
		}
	}
	return 0 // not reached while p.dataB > 0
}

func (s *Sim) nextTurn(p *port, lo, hi int) {
	p.rr++
	if int(p.rr) >= hi {
		p.rr = int32(lo)
	}
	p.rrFresh = true
}

// startTx starts serialising the next packet on port pid, if any: the
// control queue first, then the data class the scheduler picks, and at a
// host NIC the next packet of the host's senders. The packet's arrival at
// the peer is scheduled at once; an evTxDone is only needed when more is
// waiting behind it.
func (s *Sim) startTx(pid int32) {
	p := &s.ports[pid]
	var pi int32 = -1
	switch {
	case p.ctrl.size > 0:
		pi = p.ctrl.pop()
		p.ctrlB -= int64(s.pk.p[pi].size)
	case p.dataB > 0 && (!s.pfc.on || s.pfcSendable(pid)):
		pi = s.dequeueData(pid, p, s.schedule(pid, p))
	case p.host >= 0:
		pi = s.pullNIC(pid, p.host)
	}
	if pi < 0 {
		return
	}
	s.transmit(pid, p, pi)
	if p.ctrl.size > 0 || p.dataB > 0 || (p.host >= 0 && s.nicBacklog(pid, p.host)) {
		p.pending = true
		s.q.push(p.freeAt, evTxDone, pid, 0)
	}
}

func (s *Sim) txDone(pid int32) {
	s.ports[pid].pending = false
	s.startTx(pid)
}

// buildPipeline sets up the egress stage from the configuration: the class
// queues of every port, the scheduler's priority levels and DWRR quanta,
// and the switches' shared buffers.
func (s *Sim) buildPipeline() error {
	cls := s.cfg.Classes
	if len(cls) == 0 {
		cls = []Class{{}}
	}
	if len(cls) > 256 {
		return fmt.Errorf("sim: %d traffic classes, at most 256", len(cls))
	}
	s.ncls = len(cls)
	s.cq = make([]classQueue, len(s.ports)*(s.ncls-1))
	s.order = make([]uint8, s.ncls)
	s.quantum = make([]int64, s.ncls)
	for c := range cls {
		s.order[c] = uint8(c)
		w := cls[c].Weight
		if w < 0 {
			return fmt.Errorf("sim: traffic class %d: negative weight %d", c, w)
		}
		if w == 0 {
			w = 1
		}
		s.quantum[c] = int64(w) * s.wire()
	}
	sort.SliceStable(s.order, func(i, j int) bool { return cls[s.order[i]].Priority < cls[s.order[j]].Priority })
	s.lvlLo, s.lvlHi = make([]int, s.ncls), make([]int, s.ncls)
	for i := 0; i < s.ncls; {
		j := i
		for j < s.ncls && cls[s.order[j]].Priority == cls[s.order[i]].Priority {
			j++
		}
		for k := i; k < j; k++ {
			s.lvlLo[k], s.lvlHi[k] = i, j
		}
		i = j
	}
	s.rtoQ = s.res.QueueBytes
	b := s.cfg.Buffer
	for i := range s.ports {
		s.ports[i].buf = -1
	}
	if b.SharedBytes < 0 || b.Alpha < 0 {
		return fmt.Errorf("sim: shared buffer of %d bytes with alpha %g: both must be >= 0", b.SharedBytes, b.Alpha)
	}
	if b.SharedBytes == 0 {
		return nil
	}
	if b.Alpha == 0 {
		b.Alpha = 1
	}
	if b.SharedBytes < s.wire() {
		return fmt.Errorf("sim: shared buffer of %d bytes cannot hold one %d-byte packet", b.SharedBytes, s.wire())
	}
	// A single queue settles at alpha/(1+alpha) of the pool.
	s.rtoQ = int64(float64(b.SharedBytes) * b.Alpha / (1 + b.Alpha))
	if s.rtoQ < s.res.QueueBytes {
		s.rtoQ = s.res.QueueBytes
	}
	nb := make([]int32, len(s.f.Nodes))
	for i := range nb {
		nb[i] = -1
	}
	for i := range s.ports {
		p := &s.ports[i]
		if p.host >= 0 {
			continue // host NICs keep their own queue
		}
		if nb[p.node] < 0 {
			nb[p.node] = int32(len(s.bufs))
			s.bufs = append(s.bufs, sharedBuf{size: b.SharedBytes, alpha: b.Alpha})
		}
		p.buf = nb[p.node]
	}
	return nil
}

// addPath checks that ports lead from flow fl's sender to its receiver, one
// egress port per switch, and stores them; it returns their offset.
func (s *Sim) addPath(fl workloads.Flow, ports []int) (int32, error) {
	bad := func(format string, a ...any) (int32, error) {
		return 0, fmt.Errorf("sim: flow %d (%d->%d): explicit path: %s", fl.ID, fl.Src, fl.Dst, fmt.Sprintf(format, a...))
	}
	if len(ports) == 0 || len(ports) > 255 {
		return bad("%d hops, want 1..255", len(ports))
	}
	at := s.ports[s.hosts[fl.Src].port].peerNode
	off := int32(len(s.paths))
	for i, pid := range ports {
		if pid < 0 || pid >= len(s.ports) {
			return bad("port %d does not exist", pid)
		}
		if n := s.ports[pid].node; n != at {
			return bad("hop %d: port %d is on %s, the packet is at %s", i, pid, s.f.Nodes[n].Name, s.f.Nodes[at].Name)
		}
		at = s.ports[pid].peerNode
		if i < len(ports)-1 && s.hostOf[at] >= 0 {
			return bad("hop %d: port %d leads to a host", i, pid)
		}
		s.paths = append(s.paths, int32(pid))
	}
	if int(at) != s.f.Hosts[fl.Dst] {
		return bad("ends at %s, not at host %d", s.f.Nodes[at].Name, fl.Dst)
	}
	return off, nil
}
