package sim

import (
	"fmt"

	"github.com/fabricbench/fabricbench/agents/transport"
)

// This file is priority flow control (IEEE 802.1Qbb): lossless traffic
// classes, as RoCE fabrics run them. It is two pipeline stages and a
// control event, not edits to the queues:
//
//   - ingress accounting (pfcArrive, in the switch's ingress stage, and
//     pfcLeave, when the packet leaves the switch's egress queue): per
//     (switch ingress port, lossless class), the bytes buffered in the switch
//     that arrived through that port. When they reach XOFF the switch sends
//     a pause frame for the class out of that port; when they fall to XON,
//     a resume frame.
//   - pause frames (evPause) are control events, not data packets: they
//     reach the peer's egress port after the link's latency (plus the
//     serialisation of a 64-byte frame; the frame does not wait for a data
//     packet being sent), and carry the new state (XOFF, as pause quanta of
//     0xffff refreshed while needed, or XON, quanta 0), so a state change is
//     one event. A paused egress class keeps its queue and sends nothing;
//     the scheduler skips it (schedule, startTx), a host NIC stops pulling
//     from the senders of that class (pull). Other classes and the control
//     queue (ACKs, NACKs) keep going.
//   - headroom: after XOFF the upstream port keeps sending until the frame
//     arrives (one link latency), what it sent in that time is still on the
//     wire (another), plus the packet it is serialising and the one that
//     crossed XOFF: headroom = 2 x latency x rate + 2 MTU. A lossless class
//     is never trimmed or dropped by the buffer: its egress admission is
//     bounded by the ingress accounting instead. Per ingress port and class
//     the lossless buffer is PFC.Buffer, XOFF = buffer - headroom (by
//     default QueueBytes + headroom: XOFF = QueueBytes), XON = XOFF - 2 MTU. Bytes above XOFF + headroom at an
//     ingress port mean the headroom was too small: PFCHeadroomExceeded
//     counts them (a bug, or thresholds set by hand too high).
//
// Lossy classes are unchanged (trimming or drops). With PFC off nothing
// here runs and the simulator is as before, event for event.

// PFC configures priority flow control (Config.PFC).
type PFC struct {
	Enabled bool
	// Lossless lists the lossless traffic classes (indices into
	// Config.Classes); empty means every class. At most 64 classes.
	Lossless []int
	// Buffer is the lossless buffer of each switch ingress port and class,
	// in bytes; XOFF is Buffer - the headroom of the port's link. 0 sizes
	// it QueueBytes + headroom: XOFF is the run's QueueBytes. XOff, when >
	// 0, sets the pause threshold directly (the headroom is still reserved
	// above it); XOn, when > 0, the resume threshold (default XOff - 2
	// MTU).
	Buffer, XOff, XOn int64
	// WatchdogDetect, when > 0, runs the PFC watchdog (pfcwd.go): a class
	// paused this long without a resume is a storm; the watchdog drops its
	// queue and ignores pause frames for WatchdogRestore (0: as long as
	// WatchdogDetect). In ps.
	WatchdogDetect, WatchdogRestore int64
}

// PFCStats are the PFC counters of one port and class.
type PFCStats struct {
	// PauseTx counts pause frames (XOFF) the port sent for the class
	// (its switch's ingress buffer for the class was full).
	PauseTx uint64
	// PauseRx counts pause frames the port received: its egress class was
	// stopped by the peer.
	PauseRx uint64
	// PausedPs is the time the port's egress class was paused, up to the
	// last resume (PFCPausedNs adds the current pause).
	PausedPs uint64
}

// pfcState is the PFC stage's state; nil slices while PFC is off.
type pfcState struct {
	on       bool
	lossless uint64  // bit c: class c is lossless
	ing      []int64 // [port*ncls+c]: bytes in the switch that arrived on ingress port `port`
	xoff     []int64 // per port: pause threshold of the ingress port
	xon      []int64 // per port: resume threshold
	limit    []int64 // per port: xoff + headroom
	sent     []bool  // [port*ncls+c]: an XOFF is in force (sent, no XON since)
	gen      []uint32
	mask     []uint64 // per egress port: bit c: class c is paused
	applied  []uint32 // [port*ncls+c]: generation of the last frame applied at this egress port
	since    []int64  // [port*ncls+c]: when the egress class was paused
	stats    []PFCStats
	exceeded uint64
	wd       pfcWatchdog
}

// pfcGenBits is the width of a pause frame's generation number in the
// event (the class takes 8 bits and the state 1).
const pfcGenBits = 22

// buildPFC sets up the PFC stage (after buildPipeline).
func (s *Sim) buildPFC() error {
	c := s.cfg.PFC
	if !c.Enabled {
		if c.WatchdogDetect != 0 || c.WatchdogRestore != 0 {
			return fmt.Errorf("sim: the PFC watchdog needs PFC")
		}
		return nil
	}
	if s.ncls > 64 {
		return fmt.Errorf("sim: PFC supports at most 64 traffic classes, have %d", s.ncls)
	}
	pf := &s.pfc
	if len(c.Lossless) == 0 {
		pf.lossless = 1<<uint(s.ncls) - 1
		if s.ncls == 64 {
			pf.lossless = ^uint64(0)
		}
	}
	for _, k := range c.Lossless {
		if k < 0 || k >= s.ncls {
			return fmt.Errorf("sim: PFC lossless class %d, want 0..%d", k, s.ncls-1)
		}
		pf.lossless |= 1 << uint(k)
	}
	if c.Buffer < 0 || c.XOff < 0 || c.XOn < 0 {
		return fmt.Errorf("sim: PFC buffer %d, xoff %d, xon %d: negative", c.Buffer, c.XOff, c.XOn)
	}
	w := s.wire()
	buf := c.Buffer
	n := len(s.ports)
	pf.ing = make([]int64, n*s.ncls)
	pf.sent = make([]bool, n*s.ncls)
	pf.gen = make([]uint32, n*s.ncls)
	pf.applied = make([]uint32, n*s.ncls)
	pf.since = make([]int64, n*s.ncls)
	pf.stats = make([]PFCStats, n*s.ncls)
	pf.mask = make([]uint64, n)
	pf.xoff, pf.xon, pf.limit = make([]int64, n), make([]int64, n), make([]int64, n)
	for i := range s.ports {
		hr := s.pfcHeadroom(int32(i))
		xoff := c.XOff
		switch {
		case xoff > 0:
		case buf == 0:
			xoff = s.res.QueueBytes // the buffer is QueueBytes + headroom
		default:
			xoff = buf - hr
			if xoff < 2*w {
				return fmt.Errorf("sim: PFC buffer of %d bytes leaves no room above the %d-byte headroom of port %s (2 x latency x rate + 2 MTU): at least %d bytes", buf, hr, s.f.Ports[i].Name, hr+2*w)
			}
		}
		xon := c.XOn
		if xon == 0 {
			xon = xoff - 2*w
			if xon < 0 {
				xon = 0
			}
		}
		if xon >= xoff {
			return fmt.Errorf("sim: PFC xon %d must be below xoff %d", xon, xoff)
		}
		pf.xoff[i], pf.xon[i], pf.limit[i] = xoff, xon, xoff+hr
	}
	// The RTO bound (pathRTO) covers a full queue per hop; a lossless
	// egress queue can hold what every other ingress port of its switch
	// may buffer, XOFF + headroom each, so spurious timeouts would resend
	// packets that are only paused.
	deg := make([]int64, len(s.f.Nodes))
	var maxLim int64
	for i := range s.ports {
		deg[s.ports[i].node]++
		if pf.limit[i] > maxLim {
			maxLim = pf.limit[i]
		}
	}
	for n, d := range deg {
		if s.hostOf[n] < 0 && (d-1)*maxLim > s.rtoQ {
			s.rtoQ = (d - 1) * maxLim
		}
	}
	pf.on = true
	return s.buildPFCWatchdog()
}

// pfcHeadroom is the headroom of switch ingress port pid: what its peer can
// still send after pid's switch sends XOFF, 2 x latency x rate + 2 MTU.
func (s *Sim) pfcHeadroom(pid int32) int64 {
	up := &s.ports[s.ports[pid].peerPort]
	lat := s.ports[pid].lat + up.lat // frame out, data back
	return int64(float64(lat)*float64(up.nominal)/8e12+0.999999) + 2*s.wire()
}

func (s *Sim) pfcLossless(c uint8) bool { return s.pfc.lossless>>c&1 != 0 }

// pfcArrive is the ingress stage's PFC accounting for data packet pi of a
// lossless class, arrived through ingress port in and routed to egress port
// out (which is up).
func (s *Sim) pfcArrive(in int32, pi int32) {
	pkt := &s.pk.p[pi]
	if pkt.kind != pkData || pkt.flags&pfTrimmed != 0 || !s.pfcLossless(pkt.class) {
		return
	}
	pf := &s.pfc
	k := int(in)*s.ncls + int(pkt.class)
	pkt.flags |= pfPFC
	pf.ing[k] += int64(pkt.size)
	if pf.ing[k] > pf.limit[in] {
		pf.exceeded++
	}
	if !pf.sent[k] && pf.ing[k] >= pf.xoff[in] {
		pf.sent[k] = true
		s.pfcSend(in, pkt.class, true)
	}
}

// pfcLeave undoes the accounting of packet pkt as it leaves its switch
// (dequeued for transmission, or flushed).
func (s *Sim) pfcLeave(pkt *packet) {
	pkt.flags &^= pfPFC
	pf := &s.pfc
	in := s.ports[pkt.port].peerPort
	k := int(in)*s.ncls + int(pkt.class)
	pf.ing[k] -= int64(pkt.size)
	if pf.sent[k] && pf.ing[k] <= pf.xon[in] {
		pf.sent[k] = false
		s.pfcSend(in, pkt.class, false)
	}
}

// pfcSend sends a pause (xoff) or resume frame for class c out of port in;
// it reaches the peer's egress port after the link latency.
func (s *Sim) pfcSend(in int32, c uint8, xoff bool) {
	pf := &s.pfc
	k := int(in)*s.ncls + int(c)
	pf.gen[k]++
	b := int32(c) | int32(pf.gen[k]&(1<<pfcGenBits-1))<<9
	if xoff {
		b |= 1 << 8
		pf.stats[k].PauseTx++
	}
	p := &s.ports[in]
	s.q.push(s.now+transport.TxTime(64, p.rate)+p.lat, evPause, p.peerPort, b)
}

// pause applies a pause frame at egress port pid (event evPause).
func (s *Sim) pause(pid int32, b int32) {
	pf := &s.pfc
	c := uint8(b)
	gen := uint32(b>>9) & (1<<pfcGenBits - 1)
	k := int(pid)*s.ncls + int(c)
	// Frames of one class on one link arrive in order, except two sent in
	// the same picosecond, which the event queue may swap: apply only newer.
	if d := (gen - pf.applied[k]) & (1<<pfcGenBits - 1); d == 0 || d >= 1<<(pfcGenBits-1) {
		return
	}
	pf.applied[k] = gen
	bit := uint64(1) << c
	if b&(1<<8) != 0 {
		pf.stats[k].PauseRx++
		if pf.mask[pid]&bit == 0 && !s.pfcIgnored(pid, c) {
			pf.mask[pid] |= bit
			pf.since[k] = s.now
			s.pfcWatchStart(pid, c)
		}
		return
	}
	if pf.mask[pid]&bit != 0 {
		pf.mask[pid] &^= bit
		pf.stats[k].PausedPs += uint64(s.now - pf.since[k])
		s.kick(pid)
	}
}

// pfcSendable reports whether port pid has a data packet in a class that is
// not paused.
func (s *Sim) pfcSendable(pid int32) bool {
	m := s.pfc.mask[pid]
	for c := 0; c < s.ncls; c++ {
		if m>>uint(c)&1 == 0 && s.classQ(pid, c).q.size > 0 {
			return true
		}
	}
	return false
}

// pfcPaused reports whether class c is paused at egress port pid.
func (s *Sim) pfcPaused(pid int32, c int) bool {
	return s.pfc.on && s.pfc.mask[pid]>>uint(c)&1 != 0
}

// PFCStats returns the PFC counters of port p and traffic class c (zero
// without PFC).
func (s *Sim) PFCStats(p, c int) PFCStats {
	if !s.pfc.on {
		return PFCStats{}
	}
	k := p*s.ncls + c
	st := s.pfc.stats[k]
	if s.pfc.mask[p]>>uint(c)&1 != 0 {
		st.PausedPs += uint64(s.now - s.pfc.since[k])
	}
	return st
}

// PortPFC returns the PFC counters of port p summed over its classes.
func (s *Sim) PortPFC(p int) PFCStats {
	var t PFCStats
	for c := 0; c < s.ncls && s.pfc.on; c++ {
		st := s.PFCStats(p, c)
		t.PauseTx += st.PauseTx
		t.PauseRx += st.PauseRx
		t.PausedPs += st.PausedPs
	}
	return t
}

// PFCHeadroomExceeded counts lossless packets that arrived at a switch
// ingress port holding more than XOFF + headroom for their class: the
// headroom did not cover what was in flight (0 when it is sized right).
func (s *Sim) PFCHeadroomExceeded() uint64 { return s.pfc.exceeded }

// PFCIngressBytes returns the lossless bytes of class c buffered in port
// p's switch that arrived through p.
func (s *Sim) PFCIngressBytes(p, c int) int64 {
	if !s.pfc.on {
		return 0
	}
	return s.pfc.ing[p*s.ncls+c]
}

// pfcAdmit is the buffer accounting of the lossless classes: a packet the
// ingress accounting counted (pfPFC) is never refused at egress; what it
// can hold is bounded by XOFF + headroom per ingress port instead. With a
// shared pool the bytes are still reserved in it.
func (s *Sim) pfcAdmit(p *port, pkt *packet) bool {
	if pkt.flags&pfPFC == 0 {
		return false
	}
	if p.buf >= 0 {
		s.bufs[p.buf].used += int64(pkt.size)
	}
	return true
}
