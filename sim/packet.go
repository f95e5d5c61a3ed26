package sim

import "github.com/fabricbench/fabricbench/agents/transport"

// packet kinds
const (
	pkData uint8 = iota
	pkAck
)

// packet flags
const (
	pfECN     uint8 = 1 << iota // data: marked by a switch; ack: ECN echo
	pfTrimmed                   // data: payload trimmed away (travels as a header)
	pfNack                      // ack: NACK for a trimmed packet
	pfRetx                      // data: retransmission
	pfAckReq                    // data: the sender asks for an ACK at once (transport.Data.AckReq)
	pfPFC                       // data: counted in its switch's PFC ingress accounting (pfc.go)
	pfSRv6                      // data: SRv6-encapsulated, hop is the uSID cursor (srv6.go)
)

// packet is the simulator's wire packet. Packets live in a pool and are
// referenced by index, so nothing is allocated per packet once the pool has
// grown to the run's working set.
//
// The struct is 64 bytes, one cache line.
type packet struct {
	ts      int64 // data: sender timestamp; ack: echoed timestamp
	flow    int32
	dst     int32 // destination node
	size    int32 // bytes on the wire
	payload int32
	psn     uint32
	cum     uint32 // ack: cumulative ack
	epoch   uint32 // epoch of the port it was last sent on (link-down loss)
	port    int32  // port it was last sent on
	// Routing header, read by the switches' ingress stage: the entropy
	// (hashed by ECMP) and an optional explicit path (source routing): 1 +
	// the offset into Sim.paths of the egress ports to take, 0 for none
	// (so a zeroed packet has none); hop is the next hop's index on it.
	// An ACK takes no explicit path: its entropy is the one it travels on
	// (transport.Ack.Route) and, when the data packet's entropy it echoes
	// differs, path holds -1 minus that echoed entropy.
	// An SRv6-encapsulated packet (pfSRv6) has instead its uSID container
	// here, 1 + an offset into Sim.sr.sids, and its cursor in hop (srv6.go).
	path    int32
	entropy uint16
	hop     uint8
	class   uint8 // traffic class (data: the flow's; selects the egress queue)
	kind    uint8
	flags   uint8
	// A coalesced ACK's selective bitmap (transport.Ack.Sack) is split
	// between payload (low 32 bits, unused by ACKs) and sackHi, and its base
	// is psn - hop (hop is unused by ACKs, which take no explicit path): the
	// struct stays one cache line.
	// A data packet carries here the sender's echo of its latest ACK's
	// route (transport.Data.AckRoute) as 1<<16 | route, 0 for none.
	sackHi uint32
	// via is low-diameter routing's header (lowdiameter.go): 0 undecided,
	// 1 minimal to dst, 2+t through intermediate target t. In the
	// struct's last two bytes of padding: it stays 64 bytes.
	via uint16
}

type pool struct {
	p    []packet
	free []int32
}

func (pl *pool) alloc() int32 {
	if n := len(pl.free); n > 0 {
		i := pl.free[n-1]
		pl.free = pl.free[:n-1]
		return i
	}
	pl.p = append(pl.p, packet{})
	return int32(len(pl.p) - 1)
}

func (pl *pool) release(i int32) { pl.free = append(pl.free, i) }

// dataHeader converts a data packet to the transport's view.
func (p *packet) dataHeader() transport.Data {
	return transport.Data{Flow: uint32(p.flow), PSN: p.psn, Payload: p.payload, Entropy: p.entropy, SentAt: p.ts,
		Retx: p.flags&pfRetx != 0, AckReq: p.flags&pfAckReq != 0, AckRoute: uint16(p.sackHi), AckRouteValid: p.sackHi&(1<<16) != 0}
}

// setAckRoute records a data packet's echo of the sender's latest ACK route.
func (p *packet) setAckRoute(d *transport.Data) {
	if d.AckRouteValid {
		p.sackHi = 1<<16 | uint32(d.AckRoute)
	}
}

// setAck makes p the ACK or NACK a (ECMP-routed, no explicit path) of flow
// fi towards node dst, of size bytes.
func (p *packet) setAck(a *transport.Ack, fi, dst, size int32) {
	*p = packet{ts: a.EchoTS, flow: fi, dst: dst, size: size, psn: a.PSN, cum: a.CumAck, entropy: a.Route, kind: pkAck}
	if a.Route != a.Entropy {
		p.path = -1 - int32(a.Entropy)
	}
	if a.Sack != 0 {
		p.payload, p.sackHi = int32(uint32(a.Sack)), uint32(a.Sack>>32)
		p.hop = uint8(a.PSN - a.SackBase) // the receiver keeps PSN in the bitmap
	}
	if a.ECN {
		p.flags |= pfECN
	}
	if a.Nack {
		p.flags |= pfNack
	}
}

// ackHeader converts an ACK packet to the transport's view.
func (p *packet) ackHeader() transport.Ack {
	a := transport.Ack{Flow: uint32(p.flow), PSN: p.psn, CumAck: p.cum, Entropy: p.entropy, Route: p.entropy,
		ECN: p.flags&pfECN != 0, Nack: p.flags&pfNack != 0, EchoTS: p.ts}
	if p.path < 0 {
		a.Entropy = uint16(-1 - p.path)
	}
	if sack := uint64(uint32(p.payload)) | uint64(p.sackHi)<<32; sack != 0 {
		a.Sack, a.SackBase = sack, p.psn-uint32(p.hop)
	}
	return a
}

// ring is a growable FIFO of packet indices.
type ring struct {
	buf        []int32
	head, size int32
}

func (r *ring) push(v int32) {
	if int(r.size) == len(r.buf) {
		n := len(r.buf) * 2
		if n == 0 {
			n = 16
		}
		nb := make([]int32, n)
		for i := int32(0); i < r.size; i++ {
			nb[i] = r.buf[(r.head+i)&int32(len(r.buf)-1)]
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.size)&int32(len(r.buf)-1)] = v
	r.size++
}

func (r *ring) first() int32 { return r.buf[r.head] }

func (r *ring) pop() int32 {
	v := r.buf[r.head]
	r.head = (r.head + 1) & int32(len(r.buf)-1)
	r.size--
	return v
}

// wireEnt is a packet on a link and the time it reaches the far end.
type wireEnt struct {
	at int64
	pi int32
}

// wireRing is the FIFO of packets on a link. It keeps each packet's arrival
// time beside its index, so scheduling the next arrival does not touch the
// next packet (a cache miss at scale).
type wireRing struct {
	buf        []wireEnt
	head, size int32
}

func (r *wireRing) push(at int64, pi int32) {
	if int(r.size) == len(r.buf) {
		n := len(r.buf) * 2
		if n == 0 {
			n = 8
		}
		nb := make([]wireEnt, n)
		for i := int32(0); i < r.size; i++ {
			nb[i] = r.buf[(r.head+i)&int32(len(r.buf)-1)]
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.size)&int32(len(r.buf)-1)] = wireEnt{at: at, pi: pi}
	r.size++
}

func (r *wireRing) first() *wireEnt { return &r.buf[r.head] }

func (r *wireRing) pop() int32 {
	v := r.buf[r.head].pi
	r.head = (r.head + 1) & int32(len(r.buf)-1)
	r.size--
	return v
}
