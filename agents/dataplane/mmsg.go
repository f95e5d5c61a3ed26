package dataplane

import (
	"encoding/binary"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Batched socket I/O without allocation: sendmmsg and recvmmsg over
// preallocated message headers, I/O vectors, addresses and control
// buffers, called through the socket's syscall.RawConn so that a full send
// buffer or an empty receive queue parks the goroutine in Go's network
// poller. UDP GSO (the UDP_SEGMENT control message) sends several
// equal-sized datagrams to one destination as one message; UDP GRO (the
// UDP_GRO socket option) receives a train of them as one buffer with the
// segment size in a control message.

// gsoMaxSegments is the most datagrams one GSO message carries (the
// kernel's UDP_MAX_SEGMENTS is 64 on older kernels, 128 on newer ones).
const gsoMaxSegments = 64

// gsoMaxBytes is the most payload bytes of one GSO message: what fits in one
// IPv4 datagram's length field.
const gsoMaxBytes = 65507

// Control message sizes.
var (
	cmsgSegLen = unix.CmsgSpace(2) // UDP_SEGMENT: a uint16
	cmsgTOSLen = unix.CmsgSpace(4) // IP_TOS / IPV6_TCLASS: an int
	// txCtrlLen is the control space of one sent message: its TOS and its
	// GSO segment size.
	txCtrlLen = cmsgSegLen + cmsgTOSLen
	// rxCtrlLen is the control space of one received message: TOS or
	// traffic class, the GRO segment size and the kernel timestamp, with
	// room to spare.
	rxCtrlLen = 2 * (unix.CmsgSpace(4) + unix.CmsgSpace(4) + unix.CmsgSpace(16))
)

// mmsgCall is one sendmmsg or recvmmsg call, with the closure the
// RawConn runs made once: calling it allocates nothing.
type mmsgCall struct {
	hdrs  []unix.Mmsghdr
	n     int   // messages to send or receive
	done  int   // messages sent or received
	errno error // the call's error (nil, or a syscall.Errno)
	send  func(fd uintptr) bool
	recv  func(fd uintptr) bool
}

func newMmsgCall(hdrs []unix.Mmsghdr) *mmsgCall {
	c := &mmsgCall{hdrs: hdrs}
	c.send = c.doSend
	c.recv = c.doRecv
	return c
}

func (c *mmsgCall) doSend(fd uintptr) bool {
	r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&c.hdrs[0])), uintptr(c.n), 0, 0, 0)
	if e == unix.EAGAIN {
		return false // wait until the socket is writable
	}
	c.done, c.errno = int(r), nil
	if e != 0 {
		c.done, c.errno = 0, e
	}
	return true
}

func (c *mmsgCall) doRecv(fd uintptr) bool {
	r, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&c.hdrs[0])), uintptr(c.n), 0, 0, 0)
	if e == unix.EAGAIN {
		return false // wait until a datagram arrives
	}
	c.done, c.errno = int(r), nil
	if e != 0 {
		c.done, c.errno = 0, e
	}
	return true
}

// sendmmsg sends the first n prepared messages on rc, all of them unless an
// error stops the call: it returns how many went and the error of the
// first that did not.
func (c *mmsgCall) sendmmsg(rc syscall.RawConn, n int) (int, error) {
	c.n = n
	if err := rc.Write(c.send); err != nil {
		return 0, err
	}
	return c.done, c.errno
}

// recvmmsg receives up to n messages into the prepared buffers, waiting
// for the first.
func (c *mmsgCall) recvmmsg(rc syscall.RawConn, n int) (int, error) {
	c.n = n
	if err := rc.Read(c.recv); err != nil {
		return 0, err
	}
	return c.done, c.errno
}

// putSockaddr writes ap into sa as a sockaddr_in (v4) or sockaddr_in6 and
// returns its length.
func putSockaddr(sa *unix.RawSockaddrInet6, ap netip.AddrPort) uint32 {
	a := ap.Addr()
	if a.Is4() {
		s4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		s4.Family = unix.AF_INET
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&s4.Port))[:], ap.Port())
		s4.Addr = a.As4()
		s4.Zero = [8]uint8{}
		return unix.SizeofSockaddrInet4
	}
	sa.Family = unix.AF_INET6
	binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:], ap.Port())
	sa.Flowinfo = 0
	sa.Addr = a.As16()
	sa.Scope_id = 0
	return unix.SizeofSockaddrInet6
}

// getSockaddr reads the address the kernel wrote into sa.
func getSockaddr(sa *unix.RawSockaddrInet6) netip.AddrPort {
	port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:])
	if sa.Family == unix.AF_INET {
		s4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(s4.Addr), port)
	}
	return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), port)
}

// putCmsg writes one control message with an integer payload of size
// bytes (2 or 4) at b and returns the bytes it used.
func putCmsg(b []byte, level, typ int32, size int, v int) int {
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = level, typ
	h.SetLen(unix.CmsgLen(size))
	d := b[unix.CmsgLen(0):]
	switch size {
	case 2:
		binary.NativeEndian.PutUint16(d, uint16(v))
	default:
		binary.NativeEndian.PutUint32(d, uint32(v))
	}
	return unix.CmsgSpace(size)
}

// rxMeta is what the control messages of a received message say.
type rxMeta struct {
	tos    uint8
	hasTOS bool
	gso    int   // GRO segment size; 0: one datagram
	tsNs   int64 // kernel receive time, CLOCK_REALTIME ns; 0: none
}

// parseRxCtrl reads the TOS / traffic class, the GRO segment size and the
// receive timestamp from a received message's control messages without
// allocating.
func parseRxCtrl(oob []byte) rxMeta {
	var m rxMeta
	for len(oob) >= unix.SizeofCmsghdr {
		h, data, rest, err := unix.ParseOneSocketControlMessage(oob)
		if err != nil {
			return m
		}
		switch {
		case h.Level == unix.IPPROTO_IP && (h.Type == unix.IP_TOS || h.Type == unix.IP_RECVTOS) && len(data) >= 1:
			m.tos, m.hasTOS = data[0], true
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_TCLASS && len(data) >= 4:
			m.tos, m.hasTOS = uint8(binary.NativeEndian.Uint32(data)), true
		case h.Level == unix.SOL_UDP && h.Type == unix.UDP_GRO && len(data) >= 2:
			if len(data) >= 4 {
				m.gso = int(binary.NativeEndian.Uint32(data))
			} else {
				m.gso = int(binary.NativeEndian.Uint16(data))
			}
		case h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && len(data) >= 16:
			sec := int64(binary.NativeEndian.Uint64(data))
			nsec := int64(binary.NativeEndian.Uint64(data[8:]))
			m.tsNs = sec*1e9 + nsec
		}
		oob = rest
	}
	return m
}
