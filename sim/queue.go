package sim

// This file is the egress port's queueing element: per-class data queues, a
// control queue, and the buffer accounting that admits packets into them
// (static per queue, or a switch-wide shared pool with dynamic thresholds).

// port is one egress port: a link direction with its queues. Its class 0
// data queue is inline (one cache line fewer per packet in the default
// single-class configuration), classes 1.. are in Sim.cq (Sim.classQ).
type port struct {
	rate     int64 // bits per second
	nominal  int64
	lat      int64 // link latency + latency of the node it leads to
	peerNode int32
	peerPort int32
	node     int32
	host     int32 // host number if this is a host NIC, else -1
	buf      int32 // shared buffer pool (Sim.bufs) of its switch, -1: static
	rr       int32 // DWRR: position in Sim.order of the class whose turn it is
	up       bool
	pending  bool  // an evTxDone is scheduled at freeAt
	rrFresh  bool  // DWRR: the class at rr has not had its quantum this turn
	xshard   uint8 // parallel mode: 1 + the shard of the far end when it is another shard's, else 0
	freeAt   int64 // the port is serialising until this time
	epoch    uint32
	q0       classQueue
	ctrl     ring
	wire     wireRing // packets on the link, in arrival order; only the head has an event
	// arrOctets and arrPkts count what arrived at the far end of this
	// port's link: the peer port's PortStats.InOctets and InPkts.
	arrOctets uint64
	arrPkts   uint64
	dataB     int64 // bytes in all data queues
	occSince  int64 // when dataB last became non-zero (valid while dataB > 0)
	ctrlB     int64
	capB      int64 // static capacity of each data queue (and half the control queue's)
	kmin      int64
	kmax      int64
	Stats     PortStats
}

// PortStats are per-port counters, as exported by telemetry. "out" counts
// what this port transmitted, "in" what arrived on it from its peer.
type PortStats struct {
	OutOctets, OutPkts uint64
	InOctets, InPkts   uint64
	Drops              uint64 // queue overflow and link loss at this port
	Trims              uint64
	ECNMarked          uint64
	MaxQueue           int64 // data queue high-water mark, bytes
	// IntervalMaxQueue is the high-water mark since the last TakeQueueHighWater.
	IntervalMaxQueue int64
	// BackloggedPs is the time the data queue held a packet waiting behind
	// the one being transmitted, up to the last time the queue emptied
	// (BackloggedNs adds the current stretch).
	BackloggedPs uint64
}

// classQueue is one traffic class's data queue at one port.
type classQueue struct {
	q       ring
	bytes   int64
	deficit int64 // DWRR deficit, bytes
	Stats   ClassStats
}

// ClassStats are the counters of one traffic class's data queue at a port.
type ClassStats struct {
	OutOctets, OutPkts uint64
	Drops, Trims       uint64 // refused by the buffer (dropped, or trimmed to a header)
	ECNMarked          uint64
	MaxQueue           int64 // high-water mark, bytes
}

// sharedBuf is one switch's shared data buffer.
type sharedBuf struct {
	size, used int64
	alpha      float64
}

// ClassStats returns the counters of traffic class c's data queue at port p.
func (s *Sim) ClassStats(p, c int) ClassStats { return s.classQ(int32(p), c).Stats }

// ClassQueueBytes returns the occupancy of traffic class c's data queue at port p.
func (s *Sim) ClassQueueBytes(p, c int) int64 { return s.classQ(int32(p), c).bytes }

// classQ returns traffic class c's data queue at port pid.
func (s *Sim) classQ(pid int32, c int) *classQueue {
	if c == 0 {
		return &s.ports[pid].q0
	}
	return &s.cq[int(pid)*(s.ncls-1)+c-1]
}

// SharedBufferUsed returns the bytes in use in the shared buffer of the
// switch that port p belongs to (0 without a shared buffer).
func (s *Sim) SharedBufferUsed(p int) int64 {
	if b := s.ports[p].buf; b >= 0 {
		return s.bufs[b].used
	}
	return 0
}

// admit is the buffer accounting: whether data queue q of port p can take
// size more bytes. With a shared pool it reserves them.
func (s *Sim) admit(p *port, q *classQueue, size int64) bool {
	if p.buf < 0 {
		return q.bytes+size <= p.capB
	}
	b := &s.bufs[p.buf]
	free := b.size - b.used
	if size > free || float64(q.bytes+size) > b.alpha*float64(free) {
		return false
	}
	b.used += size
	return true
}

// enqueue is the egress stage's admission: packet pi joins a queue of port
// pid (its class's data queue; the control queue for ACKs, NACKs and
// trimmed headers) or is trimmed or dropped, and the port is kicked.
func (s *Sim) enqueue(pid int32, pi int32) {
	p := &s.ports[pid]
	pkt := &s.pk.p[pi]
	if !p.up {
		s.lost()
		p.Stats.Drops++
		s.pk.release(pi)
		return
	}
	if pkt.kind == pkData && pkt.flags&pfTrimmed == 0 {
		q := s.classQ(pid, int(pkt.class))
		size := int64(pkt.size)
		if s.admit(p, q, size) || s.pfcAdmit(p, pkt) {
			q.q.push(pi)
			q.bytes += size
			if q.bytes > q.Stats.MaxQueue {
				q.Stats.MaxQueue = q.bytes
			}
			if p.dataB == 0 {
				p.occSince = s.now
			}
			p.dataB += size
			if p.dataB > p.Stats.IntervalMaxQueue {
				p.Stats.IntervalMaxQueue = p.dataB
				if p.dataB > p.Stats.MaxQueue {
					p.Stats.MaxQueue = p.dataB
				}
			}
			s.kick(pid)
			return
		}
		if !s.tp.Trimming {
			p.Stats.Drops++
			q.Stats.Drops++
			s.pk.release(pi)
			return
		}
		// Trim: cut the payload, keep a header that travels on the control queue.
		pkt.flags |= pfTrimmed
		pkt.size = int32(s.tp.AckBytes)
		p.Stats.Trims++
		q.Stats.Trims++
	}
	if p.ctrlB+int64(pkt.size) > 2*p.capB {
		p.Stats.Drops++
		s.pk.release(pi)
		return
	}
	p.ctrl.push(pi)
	p.ctrlB += int64(pkt.size)
	s.kick(pid)
}

// dequeueData takes the head of data queue c of port pid and accounts for it.
func (s *Sim) dequeueData(pid int32, p *port, c int) int32 {
	q := s.classQ(pid, c)
	pi := q.q.pop()
	pkt := &s.pk.p[pi]
	size := int64(pkt.size)
	q.bytes -= size
	p.dataB -= size
	if pkt.flags&pfPFC != 0 {
		s.pfcLeave(pkt)
	}
	if p.buf >= 0 {
		s.bufs[p.buf].used -= size
	}
	if p.dataB == 0 {
		p.Stats.BackloggedPs += uint64(s.now - p.occSince)
	}
	// RED ECN marking at dequeue on the queue left behind.
	if !s.cfg.NoECN && q.bytes > p.kmin {
		mark := q.bytes >= p.kmax
		if !mark {
			// probability (q - kmin) / (kmax - kmin)
			r := s.random() >> 11
			mark = float64(r) < float64(q.bytes-p.kmin)/float64(p.kmax-p.kmin)*(1<<53)
		}
		if mark {
			pkt.flags |= pfECN
			p.Stats.ECNMarked++
			q.Stats.ECNMarked++
		}
		if s.ecnp.on && p.host < 0 {
			s.ecnRecord(q.bytes, mark)
		}
	} else if s.ecnp.on && !s.cfg.NoECN && p.host < 0 {
		s.ecnRecord(q.bytes, false)
	}
	q.Stats.OutOctets += uint64(size)
	q.Stats.OutPkts++
	return pi
}

// flush drops everything queued at port p (its link went down).
func (s *Sim) flush(pid int32, p *port) {
	for c := 0; c < s.ncls; c++ {
		q := s.classQ(pid, c)
		for q.q.size > 0 {
			pi := q.q.pop()
			if s.pk.p[pi].flags&pfPFC != 0 {
				s.pfcLeave(&s.pk.p[pi])
			}
			s.pk.release(pi)
			s.lost()
			p.Stats.Drops++
			q.Stats.Drops++
		}
		if p.buf >= 0 {
			s.bufs[p.buf].used -= q.bytes
		}
		q.bytes, q.deficit = 0, 0
	}
	for p.ctrl.size > 0 {
		s.pk.release(p.ctrl.pop())
		s.lost()
		p.Stats.Drops++
	}
	if p.dataB > 0 {
		p.Stats.BackloggedPs += uint64(s.now - p.occSince)
	}
	p.dataB, p.ctrlB = 0, 0
}
