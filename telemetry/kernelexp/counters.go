package kernelexp

import "math"

// counter turns a kernel counter, which may wrap (32-bit fields) or start
// again from zero (its interface or qdisc was recreated, a driver reset
// it), into a monotonic total. The first value observed is taken as is, so
// that a served counter equals the kernel's until the first reset.
type counter struct {
	last   uint64 // last raw kernel value
	total  uint64 // served value
	primed bool   // last is valid
}

// counterEvent is what update observed.
type counterEvent uint8

const (
	evNone  counterEvent = iota
	evWrap               // the counter wrapped at 2^32 (or 2^64)
	evReset              // the counter went back: counting again from its new value
)

// update folds the kernel value raw into the total.
//
// A decrease is a wrap if the previous value was in the top quarter of the
// 32-bit (or 64-bit) range and the new one in the bottom quarter: the
// counter overflowed its kernel field. Any other decrease is a reset: the
// object was recreated or its counters cleared, and everything counted
// since, raw, is added.
func (c *counter) update(raw uint64) counterEvent {
	if !c.primed {
		c.total += raw
		c.last, c.primed = raw, true
		return evNone
	}
	last := c.last
	c.last = raw
	switch {
	case raw >= last:
		c.total += raw - last
		return evNone
	case last <= math.MaxUint32 && last >= 3<<30 && raw < 1<<30:
		c.total += raw + (1 << 32) - last
		return evWrap
	case last >= 3<<62 && raw < 1<<62:
		c.total += raw - last // modulo 2^64
		return evWrap
	default:
		c.total += raw
		return evReset
	}
}

// rebase makes the next update count its value from zero, for a counter
// whose object has been replaced by a new one.
func (c *counter) rebase() { c.primed = false }

// qdState tracks one qdisc of a served interface.
type qdState struct {
	handle, parent uint32
	kind           string
	root           bool
	drops, marks   counter
	seen           bool // in the current dump
}

// ifState is one served interface.
type ifState struct {
	name, dev string
	ifindex   int32 // 0: not present (yet)
	known     bool  // the device has been present at some point

	rxBytes, txBytes, rxPkts, txPkts, txDropped counter
	rxErrors, txErrors, rxDropped               counter
	linkSeen                                    bool // in the current stats dump
	// The link's state as of the last link dump (a link event makes the
	// next tick dump again).
	adminUp bool
	oper    int64 // telemetry status code

	// Qdiscs on the device. Drops count at the root qdisc only (a root
	// qdisc's drops include its children's); ECN marks are summed over every
	// qdisc (only the marking AQM, usually a leaf, counts a mark). The
	// totals of qdiscs that went away stay in the bases.
	qds                  []qdState
	dropsBase, marksBase uint64
	backlog              uint64 // root qdisc backlog, bytes, last read
	hwm                  uint64 // backlog high-water since the last published tick

	logged uint8 // logOnce bits

	// Positions of the served values, -1 if not served.
	idx [16]int
}

// Bits of ifState.logged.
const (
	logWrap uint8 = 1 << iota
	logReset
	logRecreated
	logVanished
)

// rebase forgets the device's current kernel objects: its link counters
// and qdiscs belong to a device that no longer exists.
func (s *ifState) rebase() {
	for _, c := range []*counter{&s.rxBytes, &s.txBytes, &s.rxPkts, &s.txPkts, &s.txDropped, &s.rxErrors, &s.txErrors, &s.rxDropped} {
		c.rebase()
	}
	for i := range s.qds {
		s.retire(i)
	}
	s.qds = s.qds[:0]
	s.backlog = 0
}

// retire moves qdisc i's totals into the bases.
func (s *ifState) retire(i int) {
	q := &s.qds[i]
	s.marksBase += q.marks.total
	if q.root {
		s.dropsBase += q.drops.total
	}
}

// qdisc returns the state of the qdisc identified by m, adding it if new.
func (s *ifState) qdisc(m *qdiscMsg) *qdState {
	for i := range s.qds {
		q := &s.qds[i]
		if q.handle == m.handle && q.parent == m.parent && q.kind == string(m.kind) {
			return q
		}
	}
	s.qds = append(s.qds, qdState{handle: m.handle, parent: m.parent, kind: string(m.kind), root: m.parent == tcHRoot})
	return &s.qds[len(s.qds)-1]
}

// sweep retires the qdiscs not seen in the last (complete) dump and clears
// the seen marks.
func (s *ifState) sweep() {
	kept := s.qds[:0]
	for i := range s.qds {
		if !s.qds[i].seen {
			s.retire(i)
			continue
		}
		s.qds[i].seen = false
		kept = append(kept, s.qds[i])
	}
	clear(s.qds[len(kept):])
	s.qds = kept
}

// discards returns tx_dropped plus the root qdisc's drops.
func (s *ifState) discards() uint64 {
	d := s.txDropped.total + s.dropsBase
	for i := range s.qds {
		if s.qds[i].root {
			d += s.qds[i].drops.total
		}
	}
	return d
}

// ecnMarked returns the ECN marks of all the device's qdiscs.
func (s *ifState) ecnMarked() uint64 {
	m := s.marksBase
	for i := range s.qds {
		m += s.qds[i].marks.total
	}
	return m
}
