package kernelexp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/fabricbench/fabricbench/telemetry"
)

// Raw rtnetlink, written against golang.org/x/sys/unix rather than
// github.com/vishvananda/netlink: a tick must not allocate or parse more
// than it needs (LinkList builds a Go object per link with every
// attribute), it must read the per-qdisc xstats (ECN marks), which the
// netlink package does not decode, and it must see the NLM_F_DUMP_INTR flag
// of a dump.

// Sizes and constants of the rtnetlink ABI not (all) named by x/sys/unix.
const (
	nlmsgHdrLen   = 16 // struct nlmsghdr
	ifStatsMsgLen = 12 // struct if_stats_msg
	ifinfomsgLen  = 16 // struct ifinfomsg
	tcmsgLen      = 20 // struct tcmsg
	nlaHdrLen     = 4
	nlaTypeMask   = 0x3fff // ^(NLA_F_NESTED | NLA_F_NET_BYTEORDER)

	tcHRoot    = 0xFFFFFFFF // TC_H_ROOT: parent of a root (egress) qdisc
	tcHIngress = 0xFFFFFFF1 // TC_H_INGRESS (and TC_H_CLSACT)

	// Attributes nested in TCA_STATS2 (linux/gen_stats.h).
	tcaStatsBasic = 1
	tcaStatsQueue = 3
	tcaStatsApp   = 4
)

var native = binary.NativeEndian

// errDumpInterrupted reports a dump the kernel flagged NLM_F_DUMP_INTR: the
// set of objects changed while it was being dumped, so an object missing
// from it may still exist.
var errDumpInterrupted = errors.New("netlink dump interrupted by a concurrent change")

// nlSock is one NETLINK_ROUTE socket, used by one goroutine at a time.
type nlSock struct {
	fd  int
	seq uint32
	buf []byte // receive buffer
	req []byte // request buffer
}

// openSock opens a NETLINK_ROUTE socket in the named network namespace (""
// for the current one). groups are the multicast groups to join (0 for a
// request socket). A request socket is blocking, with a receive timeout; a
// group socket is non-blocking.
func openSock(nsName string, groups uint32) (*nlSock, error) {
	fd := -1
	err := inNetns(nsName, func() error {
		flags := unix.SOCK_RAW | unix.SOCK_CLOEXEC
		if groups != 0 {
			flags |= unix.SOCK_NONBLOCK
		}
		var err error
		fd, err = unix.Socket(unix.AF_NETLINK, flags, unix.NETLINK_ROUTE)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	s := &nlSock{fd: fd, buf: make([]byte, 64<<10), req: make([]byte, 0, 64)}
	fail := func(what string, err error) (*nlSock, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("netlink socket: %s: %w", what, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: groups}); err != nil {
		return fail("bind", err)
	}
	if groups == 0 {
		tv := unix.NsecToTimeval(int64(2 * time.Second))
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			return fail("SO_RCVTIMEO", err)
		}
	} else {
		// Events are only a hint to re-resolve names; ENOBUFS on overflow
		// is that hint too. A larger buffer makes it rarer.
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 256<<10)
	}
	return s, nil
}

func (s *nlSock) close() {
	if s != nil && s.fd >= 0 {
		unix.Close(s.fd)
		s.fd = -1
	}
}

// inNetns runs fn with the calling thread in the named network namespace
// ("" runs fn directly). fn runs on a fresh goroutine locked to its thread;
// if the thread cannot be switched back, it stays locked and the runtime
// discards it when the goroutine ends.
func inNetns(name string, fn func() error) error {
	if name == "" {
		return fn()
	}
	target, err := netns.GetFromName(name)
	if err != nil {
		return fmt.Errorf("open network namespace %q: %w", name, err)
	}
	defer target.Close()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			done <- fmt.Errorf("current network namespace: %w", err)
			return
		}
		defer orig.Close()
		if err := netns.Set(target); err != nil {
			runtime.UnlockOSThread() // still in orig
			done <- fmt.Errorf("enter network namespace %q: %w", name, err)
			return
		}
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			done <- errors.Join(ferr, fmt.Errorf("leave network namespace %q: %w", name, err))
			return
		}
		runtime.UnlockOSThread()
		done <- ferr
	}()
	return <-done
}

// recv receives one datagram into s.buf, growing the buffer (and failing
// this read) if the datagram did not fit.
func (s *nlSock) recv(flags int) (int, error) {
	for {
		// recvfrom rather than unix.Recvfrom, which allocates the
		// source address on every call; MSG_TRUNC makes it return the
		// datagram's real length.
		n, _, errno := unix.Syscall6(unix.SYS_RECVFROM, uintptr(s.fd),
			uintptr(unsafe.Pointer(&s.buf[0])), uintptr(len(s.buf)), uintptr(flags|unix.MSG_TRUNC), 0, 0)
		switch {
		case errno == unix.EINTR:
			continue
		case errno != 0:
			return 0, errno
		case int(n) > len(s.buf):
			s.buf = make([]byte, (int(n)+4095)&^4095)
			return 0, fmt.Errorf("netlink message of %d bytes truncated", n)
		}
		return int(n), nil
	}
}

// dump sends a dump request of type typ with the given body (the family
// header and any attributes) and calls fn with the type and payload of every
// message of the answer, until NLMSG_DONE. It returns errDumpInterrupted
// (after every message has been passed to fn) if the kernel flagged the
// dump as inconsistent.
func (s *nlSock) dump(typ uint16, body []byte, fn func(typ uint16, msg []byte)) error {
	s.seq++
	n := nlmsgHdrLen + len(body)
	req := append(s.req[:0], make([]byte, nlmsgHdrLen)...)
	req = append(req, body...)
	s.req = req
	native.PutUint32(req[0:], uint32(n))
	native.PutUint16(req[4:], typ)
	native.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	native.PutUint32(req[8:], s.seq)
	native.PutUint32(req[12:], 0)
	if _, err := unix.Write(s.fd, req); err != nil {
		return fmt.Errorf("netlink send: %w", err)
	}
	interrupted := false
	for {
		n, err := s.recv(0)
		if err != nil {
			return fmt.Errorf("netlink receive: %w", err)
		}
		b := s.buf[:n]
		for len(b) >= nlmsgHdrLen {
			l := int(native.Uint32(b[0:]))
			if l < nlmsgHdrLen || l > len(b) {
				return fmt.Errorf("malformed netlink message (length %d of %d)", l, len(b))
			}
			mtyp, flags, seq := native.Uint16(b[4:]), native.Uint16(b[6:]), native.Uint32(b[8:])
			msg := b[nlmsgHdrLen:l]
			if a := align4(l); a < len(b) {
				b = b[a:]
			} else {
				b = nil
			}
			if seq != s.seq {
				continue // left over from an earlier, failed request
			}
			if flags&unix.NLM_F_DUMP_INTR != 0 {
				interrupted = true
			}
			switch mtyp {
			case unix.NLMSG_DONE:
				if len(msg) >= 4 {
					if code := int32(native.Uint32(msg)); code < 0 {
						return fmt.Errorf("netlink dump: %w", unix.Errno(-code))
					}
				}
				if interrupted {
					return errDumpInterrupted
				}
				return nil
			case unix.NLMSG_ERROR:
				if len(msg) >= 4 {
					if code := int32(native.Uint32(msg)); code < 0 {
						return fmt.Errorf("netlink dump: %w", unix.Errno(-code))
					}
				}
			case unix.NLMSG_NOOP, unix.NLMSG_OVERRUN:
			default:
				fn(mtyp, msg)
			}
		}
	}
}

// pending drains a non-blocking group socket and reports whether anything
// (a message or an overflow) arrived.
func (s *nlSock) pending() bool {
	got := false
	for {
		_, err := s.recv(unix.MSG_DONTWAIT)
		switch {
		case err == nil:
			got = true
		case errors.Is(err, unix.EAGAIN):
			return got
		default:
			return true // ENOBUFS: events were lost
		}
	}
}

func align4(n int) int { return (n + 3) &^ 3 }

// attrs calls fn for every netlink attribute in b, with the type masked.
// It stops at the first malformed attribute.
func attrs(b []byte, fn func(typ uint16, val []byte)) {
	for len(b) >= nlaHdrLen {
		l := int(native.Uint16(b[0:]))
		if l < nlaHdrLen || l > len(b) {
			return
		}
		fn(native.Uint16(b[2:])&nlaTypeMask, b[nlaHdrLen:l])
		a := align4(l)
		if a >= len(b) {
			return
		}
		b = b[a:]
	}
}

// Request bodies. They are constant: zero family headers, with the stats
// filter of RTM_GETSTATS.
var (
	getLinkBody  = make([]byte, ifinfomsgLen)
	getQdiscBody = make([]byte, tcmsgLen)
	getStatsBody = func() []byte {
		b := make([]byte, ifStatsMsgLen)
		// filter_mask: IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64).
		native.PutUint32(b[8:], 1<<(unix.IFLA_STATS_LINK_64-1))
		return b
	}()
)

// linkStats are the fields of struct rtnl_link_stats64 that are served.
type linkStats struct {
	rxPackets, txPackets, rxBytes, txBytes, txDropped uint64
	rxErrors, txErrors, rxDropped                     uint64
}

// parseStatsMsg decodes an RTM_NEWSTATS message (IFLA_STATS_LINK_64 only).
func parseStatsMsg(msg []byte) (ifindex int32, st linkStats, ok bool) {
	if len(msg) < ifStatsMsgLen {
		return 0, st, false
	}
	ifindex = int32(native.Uint32(msg[4:]))
	attrs(msg[ifStatsMsgLen:], func(typ uint16, v []byte) {
		if typ != unix.IFLA_STATS_LINK_64 || len(v) < 64 {
			return
		}
		// struct rtnl_link_stats64: rx_packets, tx_packets, rx_bytes,
		// tx_bytes, rx_errors, tx_errors, rx_dropped, tx_dropped, ...
		st = linkStats{
			rxPackets: native.Uint64(v[0:]),
			txPackets: native.Uint64(v[8:]),
			rxBytes:   native.Uint64(v[16:]),
			txBytes:   native.Uint64(v[24:]),
			rxErrors:  native.Uint64(v[32:]),
			txErrors:  native.Uint64(v[40:]),
			rxDropped: native.Uint64(v[48:]),
			txDropped: native.Uint64(v[56:]),
		}
		ok = true
	})
	return ifindex, st, ok
}

// linkState is the administrative and operational state of a link.
type linkState struct {
	adminUp   bool  // IFF_UP in ifi_flags
	operstate uint8 // IFLA_OPERSTATE (RFC 2863: IF_OPER_UP...)
}

// parseLinkMsg decodes the index, name and state of an RTM_NEWLINK
// message.
func parseLinkMsg(msg []byte) (ifindex int32, name []byte, st linkState) {
	if len(msg) < ifinfomsgLen {
		return 0, nil, st
	}
	ifindex = int32(native.Uint32(msg[4:]))
	st.adminUp = native.Uint32(msg[8:])&unix.IFF_UP != 0
	attrs(msg[ifinfomsgLen:], func(typ uint16, v []byte) {
		switch typ {
		case unix.IFLA_IFNAME:
			name = cstring(v)
		case unix.IFLA_OPERSTATE:
			if len(v) >= 1 {
				st.operstate = v[0]
			}
		}
	})
	return ifindex, name, st
}

// Kernel operstates (linux/if.h: enum IF_OPER_*; golang.org/x/sys/unix
// does not define them).
const (
	ifOperUnknown        = 0
	ifOperNotPresent     = 1
	ifOperDown           = 2
	ifOperLowerLayerDown = 3
	ifOperTesting        = 4
	ifOperDormant        = 5
	ifOperUp             = 6
)

// operStatus maps a kernel operstate (RFC 2863's ifOperStatus, as in
// linux/if.h) to the served status code.
func operStatus(operstate uint8) int64 {
	switch operstate {
	case ifOperUp:
		return telemetry.StatusUp
	case ifOperDown:
		return telemetry.StatusDown
	case ifOperTesting:
		return telemetry.StatusTesting
	case ifOperDormant:
		return telemetry.StatusDormant
	case ifOperNotPresent:
		return telemetry.StatusNotPresent
	case ifOperLowerLayerDown:
		return telemetry.StatusLowerLayerDown
	}
	return telemetry.StatusUnknown
}

// qdiscMsg is what a tick uses of an RTM_NEWQDISC message. Slices point
// into the receive buffer.
type qdiscMsg struct {
	ifindex        int32
	handle, parent uint32
	kind           []byte
	backlog        uint32 // bytes queued
	drops          uint32
	xstats         []byte // qdisc-specific statistics (TCA_STATS_APP)
	hasStats       bool
}

// parseQdiscMsg decodes an RTM_NEWQDISC message. It prefers TCA_STATS2 and
// falls back to the legacy TCA_STATS/TCA_XSTATS.
func parseQdiscMsg(msg []byte) (q qdiscMsg, ok bool) {
	if len(msg) < tcmsgLen {
		return q, false
	}
	q.ifindex = int32(native.Uint32(msg[4:]))
	q.handle = native.Uint32(msg[8:])
	q.parent = native.Uint32(msg[12:])
	var legacy, legacyX []byte
	stats2 := false
	attrs(msg[tcmsgLen:], func(typ uint16, v []byte) {
		switch typ {
		case unix.TCA_KIND:
			q.kind = cstring(v)
		case unix.TCA_STATS2:
			attrs(v, func(typ uint16, v []byte) {
				switch typ {
				case tcaStatsQueue:
					// struct gnet_stats_queue: qlen, backlog, drops,
					// requeues, overlimits.
					if len(v) >= 12 {
						q.backlog = native.Uint32(v[4:])
						q.drops = native.Uint32(v[8:])
						stats2 = true
					}
				case tcaStatsApp:
					q.xstats = v
				}
			})
		case unix.TCA_STATS:
			legacy = v
		case unix.TCA_XSTATS:
			legacyX = v
		}
	})
	if !stats2 && len(legacy) >= 36 {
		// struct tc_stats: bytes (u64), packets, drops, overlimits, bps,
		// pps, qlen, backlog.
		q.drops = native.Uint32(legacy[12:])
		q.backlog = native.Uint32(legacy[32:])
		stats2 = true
	}
	if q.xstats == nil {
		q.xstats = legacyX
	}
	q.hasStats = stats2
	return q, true
}

// cstring returns b up to its first NUL.
func cstring(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

// ecnMarks returns the packets a qdisc of the given kind has ECN-marked, from
// its xstats (struct layouts of linux/pkt_sched.h), and whether the kind
// reports marks at all. The counters are the kernel's __u32 fields (u64 for
// fq) summed; codel and fq_codel count AQM marks (ecn_mark) and
// ce_threshold marks (ce_mark) separately, and both are included.
func ecnMarks(kind, x []byte) (uint64, bool) {
	u32 := func(off int) uint64 {
		if off+4 > len(x) {
			return 0
		}
		return uint64(native.Uint32(x[off:]))
	}
	switch string(kind) {
	case "red", "choke":
		// tc_red_xstats / tc_choke_xstats: early, pdrop, other, marked, ...
		return u32(12), len(x) >= 16
	case "sfb":
		// tc_sfb_xstats: earlydrop, penaltydrop, bucketdrop, queuedrop,
		// childdrop, marked, ...
		return u32(20), len(x) >= 24
	case "codel":
		// tc_codel_xstats: maxpacket, count, lastcount, ldelay, drop_next,
		// drop_overlimit, ecn_mark, dropping, ce_mark.
		return u32(24) + u32(32), len(x) >= 28
	case "fq_codel":
		// tc_fq_codel_xstats: type, then (type 0, TCA_FQ_CODEL_XSTATS_QDISC)
		// tc_fq_codel_qd_stats: maxpacket, drop_overlimit, ecn_mark,
		// new_flow_count, new_flows_len, old_flows_len, ce_mark, ...
		if len(x) < 16 || native.Uint32(x) != 0 {
			return 0, false
		}
		return u32(12) + u32(28), true
	case "pie":
		// tc_pie_xstats ends with ecn_mark in every kernel version (its
		// earlier fields changed size and number).
		if len(x) < 32 {
			return 0, false
		}
		return u32(len(x) - 4), true
	case "fq_pie":
		// tc_fq_pie_xstats: packets_in, dropped, overlimit, overmemory,
		// ecn_mark, ...
		return u32(16), len(x) >= 20
	case "fq":
		// tc_fq_qd_stats: 8 u64, 4 u32, then ce_mark (u64).
		if len(x) < 88 {
			return 0, false
		}
		return native.Uint64(x[80:]), true
	}
	return 0, false
}
