package transport

import (
	"fmt"
	"strings"
)

// This file is the plane load balancer of a multi-plane host (Spectrum-X
// §4.3): a host NIC has one port per plane (a separate switch fabric), and
// every flow is spread over the planes. Three ways, Params.PlaneMode:
//
//   - PLB, per-plane congestion control: the sender keeps a congestion
//     controller and a count of bytes in flight per plane, and a plane may
//     send while its own window allows. The driver asks per plane (a NIC
//     port pulls when it is free: CanSendOn, NextPacketOn), so a free,
//     uncongested plane takes the next packet: the rate filter and the
//     local-queue choice of the paper's Fig. 4.
//   - Global: one window over all planes (the paper's "Global CC"); any
//     plane's port takes the next packet while the shared window allows.
//   - Entropy: entropy-based source routing; the packet's entropy (chosen
//     by the load balancer, Params.LB) picks both its plane (a hash of it,
//     NextPlane) and its path inside the plane; one window.
//
// Plane exclusion: a plane whose local port goes down (PlaneDown, the NIC's
// link-down signal) is excluded at once and the packets in flight on it are
// queued for retransmission (they are lost); PlaneUp re-admits it. A plane
// with PlaneFailTimeouts consecutive timeouts (no ACK on it for an RTO:
// a remote failure) is excluded too; it then sends one probe packet per
// RTO and is re-admitted when an ACK comes back on it.

// PlaneMode selects how a multi-plane sender spreads its packets.
type PlaneMode uint8

const (
	PlanePLB     PlaneMode = iota // per-plane congestion control
	PlaneGlobal                   // one window over all planes
	PlaneEntropy                  // entropy-based source routing, one window
)

// MaxPlanes is the most planes a sender spreads over.
const MaxPlanes = 8

// PlaneFailTimeouts is how many consecutive timeouts exclude a plane.
const PlaneFailTimeouts = 2

func (m PlaneMode) String() string {
	switch m {
	case PlanePLB:
		return "plb"
	case PlaneGlobal:
		return "global"
	case PlaneEntropy:
		return "entropy"
	}
	return fmt.Sprintf("planemode(%d)", uint8(m))
}

// ParsePlaneMode parses "plb", "global" or "entropy".
func ParsePlaneMode(s string) (PlaneMode, error) {
	switch strings.ToLower(s) {
	case "plb", "per-plane":
		return PlanePLB, nil
	case "global":
		return PlaneGlobal, nil
	case "entropy", "esr":
		return PlaneEntropy, nil
	}
	return 0, fmt.Errorf("unknown plane load balancing %q (want plb, global or entropy)", s)
}

// MarshalText writes m's name.
func (m PlaneMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText parses a name as ParsePlaneMode does.
func (m *PlaneMode) UnmarshalText(b []byte) (err error) {
	*m, err = ParsePlaneMode(string(b))
	return err
}

// planes is a multi-plane sender's state.
type planes struct {
	mode     PlaneMode
	n        int
	cc       [MaxPlanes]controller // PLB: per plane
	inflight [MaxPlanes]int64      // wire bytes in flight per plane
	timeouts [MaxPlanes]int        // consecutive timeouts per plane
	probeAt  [MaxPlanes]Time       // excluded by timeouts: next probe
	excluded uint8                 // by timeouts
	down     uint8                 // local port down
	probing  uint8                 // a probe is in flight
	// Entropy mode: the next packet's entropy, drawn ahead (NextPlane).
	nextEnt  uint16
	haveNext bool
}

func newPlanes(p *Params, path Path, wire int64) *planes {
	pl := &planes{mode: p.PlaneMode, n: p.Planes}
	if pl.mode == PlanePLB {
		for i := 0; i < pl.n; i++ {
			pl.cc[i] = newController(p, path, wire)
		}
	}
	return pl
}

// planeOf is the plane entropy e selects in entropy mode.
func (pl *planes) planeOf(e uint16) int {
	x := uint32(e) * 0x9E3779B1
	return int((uint64(x>>16) * uint64(pl.n)) >> 16)
}

func (pl *planes) usable(p int) bool { return (pl.excluded|pl.down)&(1<<p) == 0 }

// Planes returns the number of planes the sender spreads over (1: one).
func (s *Sender) Planes() int {
	if s.pl == nil {
		return 1
	}
	return s.pl.n
}

// PlaneInflight returns the wire bytes in flight on plane p.
func (s *Sender) PlaneInflight(p int) int64 {
	if s.pl == nil {
		return s.inflight
	}
	return s.pl.inflight[p]
}

// PlaneWindow returns plane p's congestion window (PLB), or the shared one.
func (s *Sender) PlaneWindow(p int) float64 {
	if s.pl == nil || s.pl.mode != PlanePLB {
		return s.cc.window()
	}
	return s.pl.cc[p].window()
}

// PlaneExcluded reports whether plane p is excluded (its port is down or
// it timed out) and not yet re-admitted.
func (s *Sender) PlaneExcluded(p int) bool { return s.pl != nil && !s.pl.usable(p) }

// NextPlane returns the plane the next packet must take (entropy mode), or
// -1 when any plane may take it.
func (s *Sender) NextPlane() int {
	pl := s.pl
	if pl == nil {
		return 0
	}
	if pl.mode != PlaneEntropy {
		return -1
	}
	if !pl.haveNext {
		// Draw until the entropy lands on a usable plane (bounded: a plane
		// set with none usable takes what it drew).
		// (No time here: a path-aware balancer's timed-out paths are
		// unblocked by the next send at a known time.)
		e := s.lb.next(0)
		for k := 0; k < 4*pl.n && !pl.usable(pl.planeOf(e)); k++ {
			e = s.lb.next(0)
		}
		pl.nextEnt, pl.haveNext = e, true
	}
	return pl.planeOf(pl.nextEnt)
}

// CanSendOn reports whether plane p may take a packet at now: the plane is
// usable (or due a recovery probe), the window allows (the plane's under
// PLB, the shared one otherwise) and, in entropy mode, the next packet's
// entropy selects p. A single-plane sender answers CanSend for plane 0.
func (s *Sender) CanSendOn(now Time, p int) bool {
	pl := s.pl
	if pl == nil {
		return p == 0 && s.CanSend(now)
	}
	if p < 0 || p >= pl.n || pl.down&(1<<p) != 0 {
		return false
	}
	if s.paceBps > 0 && now < s.nextSend {
		return false
	}
	size, ok := s.eligibleSize()
	if !ok {
		return false
	}
	if pl.excluded&(1<<p) != 0 {
		// A recovery probe: one packet, once it is due.
		return pl.probing&(1<<p) == 0 && now >= pl.probeAt[p]
	}
	if pl.mode == PlaneEntropy && s.NextPlane() != p {
		return false
	}
	if s.rtoPermit && s.rtxHead < len(s.rtxq) {
		return true // the retransmission after a timeout (OnTimeout)
	}
	if pl.mode == PlanePLB {
		return pl.inflight[p] == 0 || float64(pl.inflight[p]+size) <= pl.cc[p].window()
	}
	return s.inflight == 0 || float64(s.inflight+size) <= s.cc.window()
}

// eligibleSize is the wire size of the packet that would go next.
func (s *Sender) eligibleSize() (int64, bool) {
	if s.rtxHead < len(s.rtxq) {
		return s.pktWire(s.rtxq[s.rtxHead]), true
	}
	if s.nextNew < s.npkts && s.nextNew-s.base < MaxSpan {
		return s.pktWire(s.nextNew), true
	}
	return 0, false
}

// canSendAny reports whether some plane may send (CanSend of a multi-plane
// sender).
func (s *Sender) canSendAny(now Time) bool {
	for p := 0; p < s.pl.n; p++ {
		if s.CanSendOn(now, p) {
			return true
		}
	}
	return false
}

// NextPacketOn fills d with the next packet to send on plane p at now and
// returns its wire size, or returns 0 when plane p may send nothing
// (CanSendOn). d.Plane is p. p < 0 takes the first plane that may send.
func (s *Sender) NextPacketOn(now Time, p int, d *Data) int64 {
	if s.pl == nil {
		if p > 0 {
			return 0
		}
		return s.NextPacket(now, d)
	}
	if p < 0 {
		for q := 0; q < s.pl.n; q++ {
			if s.CanSendOn(now, q) {
				p = q
				break
			}
		}
		if p < 0 {
			return 0
		}
	} else if !s.CanSendOn(now, p) {
		return 0
	}
	pl := s.pl
	if pl.excluded&(1<<p) != 0 {
		pl.probing |= 1 << p
	}
	var e uint16
	if pl.mode == PlaneEntropy && pl.haveNext {
		e, pl.haveNext = pl.nextEnt, false
	} else {
		e = s.lb.next(now)
	}
	return s.emit(now, d, e, p)
}

// planeSent accounts a packet of size bytes sent on plane p.
func (s *Sender) planeSent(p int, size int64) { s.pl.inflight[p] += size }

// planeLeft takes a packet of size bytes off plane p's flight.
func (s *Sender) planeLeft(p uint8, size int64) { s.pl.inflight[p] -= size }

// planeCC is the controller that sees feedback from plane p.
func (s *Sender) planeCC(p uint8) controller {
	if s.pl != nil && s.pl.mode == PlanePLB && int(p) < s.pl.n {
		return s.pl.cc[p]
	}
	return s.cc
}

// planeAcked notes an ACK that came back on plane p: the plane works, so
// an excluded plane is re-admitted (its probe came back).
func (s *Sender) planeAcked(p uint8) {
	pl := s.pl
	if int(p) >= pl.n {
		return
	}
	pl.timeouts[p] = 0
	pl.excluded &^= 1 << p
	pl.probing &^= 1 << p
}

// planeTimedOut notes a timeout of a packet sent on plane p at now.
func (s *Sender) planeTimedOut(now Time, p uint8) {
	pl := s.pl
	pl.probing &^= 1 << p
	pl.timeouts[p]++
	if pl.timeouts[p] >= PlaneFailTimeouts && pl.n > 1 {
		pl.excluded |= 1 << p
		pl.probeAt[p] = AddTime(now, s.rto)
	}
}

// PlaneDown excludes plane p at once (its local port went down): the
// packets in flight on it are lost and queued for retransmission on the
// others. A single-plane sender ignores it (it has nowhere else to go).
func (s *Sender) PlaneDown(now Time, p int) {
	pl := s.pl
	if pl == nil || p < 0 || p >= pl.n || pl.down&(1<<p) != 0 {
		return
	}
	pl.down |= 1 << p
	lost := false
	for q := s.base; q != s.nextNew; q++ {
		sl := s.slot(q)
		if sl.st&stOut != 0 && int(sl.plane) == p {
			s.queueRetx(q)
			lost = true
		}
	}
	if lost && pl.mode != PlanePLB {
		// The shared window saw the loss.
		s.cc.onNack(now, s.wire, s.inflight)
	}
	if pl.mode == PlaneEntropy && pl.haveNext && pl.planeOf(pl.nextEnt) == p {
		pl.haveNext = false
	}
}

// PlaneUp re-admits plane p after its port came back up.
func (s *Sender) PlaneUp(now Time, p int) {
	pl := s.pl
	if pl == nil || p < 0 || p >= pl.n {
		return
	}
	pl.down &^= 1 << p
	pl.excluded &^= 1 << p
	pl.timeouts[p] = 0
}
