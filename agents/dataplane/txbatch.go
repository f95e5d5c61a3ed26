package dataplane

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// txBatch collects datagrams and sends them with as few system calls as
// the kernel allows: consecutive datagrams to one destination from one
// socket, all but the last of full slot size, form one UDP GSO message
// (up to maxSegs of them); consecutive messages from one socket go in one
// sendmmsg call. Datagrams live in fixed slots of an arena whose payload
// bytes are never written (they stay zero: the agents' payload is
// padding), so a GSO message is a contiguous run of slots.
type txBatch struct {
	slot    int
	arena   []byte
	used    int // slots in use
	maxSegs int
	msgs    []txMsg
	hdrs    []unix.Mmsghdr
	iovs    []unix.Iovec
	names   []unix.RawSockaddrInet6
	ctrl    []byte
	ts      []int64 // per slot: the kernel receive time of the packet an ACK answers
	call    *mmsgCall
	v6      bool
	// The message headers grouped by socket for sendmmsg (a socket's
	// messages in one call) and the message each stands for.
	ghdrs []unix.Mmsghdr
	gmsg  []int
	done  []bool
}

// txMsg is one message: segs datagrams from slot first on.
type txMsg struct {
	s      *sock
	dst    netip.AddrPort
	first  int // slot
	segs   int
	seg    int // bytes of each segment but the last
	n      int // bytes in all
	notECT bool
	// What the datagrams are, for the counters once they went.
	pkts, retx, acks, nacks, ecn int
}

func newTxBatch(slot, slots, maxSegs int, v6 bool) *txBatch {
	b := &txBatch{slot: slot, arena: make([]byte, slot*slots), maxSegs: max(1, maxSegs),
		msgs: make([]txMsg, 0, slots), hdrs: make([]unix.Mmsghdr, slots), iovs: make([]unix.Iovec, slots),
		names: make([]unix.RawSockaddrInet6, slots), ctrl: make([]byte, txCtrlLen*slots), ts: make([]int64, slots), v6: v6}
	b.ghdrs, b.gmsg, b.done = make([]unix.Mmsghdr, slots), make([]int, slots), make([]bool, slots)
	b.call = newMmsgCall(b.ghdrs)
	return b
}

func (b *txBatch) full() bool { return b.used == len(b.ts) }

func (b *txBatch) empty() bool { return b.used == 0 }

// add reserves a slot for a datagram of n bytes to dst from s and returns
// it (n bytes, to write the header into) and its message. With gso the
// datagram joins the previous message when it can.
func (b *txBatch) add(s *sock, dst netip.AddrPort, n int, notECT, gso bool) ([]byte, *txMsg) {
	i := b.used
	b.used++
	if k := len(b.msgs) - 1; gso && k >= 0 {
		m := &b.msgs[k]
		if m.s == s && m.dst == dst && m.first+m.segs == i && m.n == m.segs*m.seg && m.seg == b.slot &&
			n <= m.seg && m.segs < b.maxSegs && m.n+n <= gsoMaxBytes && m.notECT == notECT {
			m.segs++
			m.n += n
			return b.arena[i*b.slot : i*b.slot+n], m
		}
	}
	b.msgs = append(b.msgs, txMsg{s: s, dst: dst, first: i, segs: 1, seg: n, n: n, notECT: notECT})
	return b.arena[i*b.slot : i*b.slot+n], &b.msgs[len(b.msgs)-1]
}

// drop gives back the slot add reserved last (a datagram not sent after
// all, e.g. a test hook dropped it).
func (b *txBatch) drop(m *txMsg) {
	b.used--
	if m.segs == 1 {
		b.msgs = b.msgs[:len(b.msgs)-1]
		return
	}
	m.segs--
	m.n -= m.seg // only full segments are ever followed
}

// txResult is what one flush did, for the counters.
type txResult struct {
	calls, msgs, gsoSegs int
	pkts, retx, bytes    int
	acks, nacks, ecn     int
	errPkts              int
	err                  error // the first send error
	gsoFailed            bool
}

// flush sends every message, fills in the hold times of ACK slots first
// when holdAt (CLOCK_REALTIME ns) is set, and empties the batch.
func (b *txBatch) flush(holdAt int64) txResult {
	var r txResult
	if b.used == 0 {
		return r
	}
	if holdAt != 0 {
		for i := 0; i < b.used; i++ {
			var hold uint32
			if ts := b.ts[i]; ts > 0 && holdAt > ts {
				hold = uint32(min(holdAt-ts, 1<<32-1))
			}
			binary.BigEndian.PutUint32(b.arena[i*b.slot+40:], hold)
		}
	}
	n := len(b.msgs)
	for i := range n {
		b.prepare(i, -1)
		b.done[i] = false
	}
	// Group the messages by socket, in the order each socket first
	// appears: one sendmmsg per socket.
	g := 0
	for i := range n {
		if b.done[i] {
			continue
		}
		for k := i; k < n; k++ {
			if !b.done[k] && b.msgs[k].s == b.msgs[i].s {
				b.done[k] = true
				b.ghdrs[g], b.gmsg[g] = b.hdrs[k], k
				g++
			}
		}
	}
	for i := 0; i < n; {
		j := i + 1
		for j < n && b.msgs[b.gmsg[j]].s == b.msgs[b.gmsg[i]].s {
			j++
		}
		b.sendRun(i, j, &r)
		i = j
	}
	b.used = 0
	b.msgs = b.msgs[:0]
	return r
}

// prepare fills message header i: the whole message, or only its segment
// seg (>= 0) as a datagram of its own.
func (b *txBatch) prepare(i, seg int) {
	m := &b.msgs[i]
	h := &b.hdrs[i]
	h.Hdr.Name = (*byte)(unsafe.Pointer(&b.names[i]))
	h.Hdr.Namelen = putSockaddr(&b.names[i], m.dst)
	off, n, segs := m.first*b.slot, m.n, m.segs
	if seg >= 0 {
		off += seg * m.seg
		n = min(m.seg, m.n-seg*m.seg)
		segs = 1
	}
	b.iovs[i].Base = &b.arena[off]
	b.iovs[i].SetLen(n)
	h.Hdr.Iov = &b.iovs[i]
	h.Hdr.SetIovlen(1)
	c := b.ctrl[i*txCtrlLen : (i+1)*txCtrlLen]
	cl := 0
	if segs > 1 {
		cl += putCmsg(c[cl:], unix.SOL_UDP, unix.UDP_SEGMENT, 2, m.seg)
	}
	if m.notECT {
		if b.v6 {
			cl += putCmsg(c[cl:], unix.IPPROTO_IPV6, unix.IPV6_TCLASS, 4, 0)
		} else {
			cl += putCmsg(c[cl:], unix.IPPROTO_IP, unix.IP_TOS, 4, 0)
		}
	}
	h.Hdr.Control = nil
	h.Hdr.SetControllen(0)
	if cl > 0 {
		h.Hdr.Control = &c[0]
		h.Hdr.SetControllen(cl)
	}
	h.Hdr.Flags = 0
	h.Len = 0
}

// sendRun sends the grouped messages [i, j), all from one socket, with as
// few sendmmsg calls as errors allow.
func (b *txBatch) sendRun(i, j int, r *txResult) {
	s := b.msgs[b.gmsg[i]].s
	for i < j {
		b.call.hdrs = b.ghdrs[i:j]
		n, err := b.call.sendmmsg(s.rc, j-i)
		r.calls++
		for k := i; k < i+n; k++ {
			b.sent(&b.msgs[b.gmsg[k]], r)
		}
		i += n
		if i >= j {
			break
		}
		if err == nil {
			continue
		}
		// Message i failed. A GSO message the kernel refuses (no checksum
		// offload on the route's device, a path MTU below the segment)
		// goes again datagram by datagram, and GSO stays off.
		mi := b.gmsg[i]
		m := &b.msgs[mi]
		if m.segs > 1 && isGSOError(err) {
			r.gsoFailed = true
			for seg := 0; seg < m.segs; seg++ {
				b.prepare(mi, seg)
				b.ghdrs[i] = b.hdrs[mi]
				b.call.hdrs = b.ghdrs[i : i+1]
				k, err := b.call.sendmmsg(s.rc, 1)
				r.calls++
				if k == 1 {
					r.msgs++
					continue
				}
				r.errPkts++
				if r.err == nil {
					r.err = err
				}
			}
			b.countKinds(m, r)
		} else {
			r.errPkts += m.segs
			if r.err == nil {
				r.err = err
			}
		}
		i++
	}
}

// sent counts message m as sent.
func (b *txBatch) sent(m *txMsg, r *txResult) {
	r.msgs++
	if m.segs > 1 {
		r.gsoSegs += m.segs
	}
	b.countKinds(m, r)
}

// countKinds adds m's datagrams to the counters by kind. (A segment that
// fails when a refused GSO message goes again datagram by datagram counts
// in errPkts besides.)
func (b *txBatch) countKinds(m *txMsg, r *txResult) {
	r.pkts += m.pkts
	r.retx += m.retx
	r.acks += m.acks
	r.nacks += m.nacks
	r.ecn += m.ecn
	r.bytes += m.n
}

// isGSOError reports whether a send error means the kernel cannot
// segment this message.
func isGSOError(err error) bool {
	return errors.Is(err, unix.EIO) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EMSGSIZE) ||
		errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP)
}
