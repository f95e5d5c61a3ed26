package sim

import "fmt"

// This file is the PFC watchdog, a stage of the egress port next to the
// PFC stage (pfc.go), as switch ASICs and SONiC run it: a lossless class
// that stays paused for PFC.WatchdogDetect without a resume is in a pause
// storm (a misbehaving peer, or a deadlock of cyclic buffer dependencies);
// the watchdog then drops what the class has queued at the port, ignores
// pause frames for it during PFC.WatchdogRestore (the queue forwards, and
// what arrives is not held), and afterwards listens again: if the peer
// still holds the class in XOFF, the pause applies again and the
// watchdog watches it anew. Dropped lossless packets are recovered by the
// transport (retransmission), which is what breaks a deadlock. Each check
// is one event scheduled when a pause starts; nothing is allocated per
// packet.

// DefaultWatchdogRestore is the restore time when PFC.WatchdogDetect is set
// and PFC.WatchdogRestore is 0: as long as the detection time.
const DefaultWatchdogRestore = 0

type pfcWatchdog struct {
	detect, restore int64
	until           []int64 // [port*ncls+c]: pause frames ignored until then
	events          uint64
	drops           uint64
}

func (s *Sim) buildPFCWatchdog() error {
	c := s.cfg.PFC
	if c.WatchdogDetect == 0 && c.WatchdogRestore == 0 {
		return nil
	}
	if !c.Enabled {
		return fmt.Errorf("sim: the PFC watchdog needs PFC")
	}
	if c.WatchdogDetect <= 0 || c.WatchdogRestore < 0 {
		return fmt.Errorf("sim: PFC watchdog detection %d ps and restoration %d ps: detection must be > 0, restoration >= 0", c.WatchdogDetect, c.WatchdogRestore)
	}
	w := &s.pfc.wd
	w.detect, w.restore = c.WatchdogDetect, c.WatchdogRestore
	if w.restore == 0 {
		w.restore = w.detect
	}
	w.until = make([]int64, len(s.ports)*s.ncls)
	return nil
}

// pfcWatchStart arms the watchdog for class c, paused at egress port pid
// from now on.
func (s *Sim) pfcWatchStart(pid int32, c uint8) {
	if s.pfc.wd.detect > 0 {
		s.q.push(s.now+s.pfc.wd.detect, evPFCWatch, pid, int32(c))
	}
}

// pfcIgnored reports whether pause frames for class c at egress port pid
// are being ignored (the watchdog's restoration period).
func (s *Sim) pfcIgnored(pid int32, c uint8) bool {
	w := &s.pfc.wd
	return w.until != nil && s.now < w.until[int(pid)*s.ncls+int(c)]
}

// pfcWatch is the watchdog's check (event evPFCWatch at time at): b is
// the class, with bit 8 set at the end of a restoration period.
func (s *Sim) pfcWatch(pid int32, b int32, at int64) {
	pf := &s.pfc
	w := &pf.wd
	c := uint8(b)
	k := int(pid)*s.ncls + int(c)
	bit := uint64(1) << c
	if b&(1<<8) != 0 {
		// Restoration over: listen again. A peer still in XOFF for the
		// class (its ingress accounting has not resumed it) pauses it.
		peer := int(s.ports[pid].peerPort)*s.ncls + int(c)
		if pf.sent[peer] && pf.mask[pid]&bit == 0 {
			pf.mask[pid] |= bit
			pf.since[k] = s.now
			s.pfcWatchStart(pid, c)
		}
		return
	}
	// A storm: paused all along since at - detect, with no resume.
	if pf.mask[pid]&bit == 0 || pf.since[k] != at-w.detect {
		return
	}
	w.events++
	pf.mask[pid] &^= bit
	pf.stats[k].PausedPs += uint64(s.now - pf.since[k])
	w.until[k] = s.now + w.restore
	s.q.push(w.until[k], evPFCWatch, pid, int32(c)|1<<8)
	// Drop what the class holds at the port.
	p := &s.ports[pid]
	q := s.classQ(pid, int(c))
	for q.q.size > 0 {
		pi := q.q.pop()
		pkt := &s.pk.p[pi]
		size := int64(pkt.size)
		q.bytes -= size
		p.dataB -= size
		if p.buf >= 0 {
			s.bufs[p.buf].used -= size
		}
		if pkt.flags&pfPFC != 0 {
			s.pfcLeave(pkt)
		}
		s.pk.release(pi)
		p.Stats.Drops++
		q.Stats.Drops++
		w.drops++
	}
	if p.dataB == 0 {
		p.Stats.BackloggedPs += uint64(s.now - p.occSince)
	}
	q.deficit = 0
	s.kick(pid)
}

// PFCWatchdog returns how often the PFC watchdog found a pause storm and
// how many packets it dropped.
func (s *Sim) PFCWatchdog() (events, drops uint64) { return s.pfc.wd.events, s.pfc.wd.drops }

// PFCPausedNow counts the (port, class) pairs paused at this moment: after
// a run that stalled, a deadlock's.
func (s *Sim) PFCPausedNow() int {
	if !s.pfc.on {
		return 0
	}
	n := 0
	for _, m := range s.pfc.mask {
		for ; m != 0; m &= m - 1 {
			n++
		}
	}
	return n
}
