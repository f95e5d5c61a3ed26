package dataplane

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Socket options.
const (
	sockBufBytes = 4 << 20
	tosECT0      = 0x02 // ECN-capable transport, ECT(0)
	tosCE        = 0x03 // congestion experienced
)

// sockKind says what a socket is for; it selects its options.
type sockKind int

const (
	sockMain sockKind = iota // receives data and ACKs
	sockData                 // sends data and ACKs (one per entropy port)
	sockMark                 // marked: sends data and ACKs of one path class
)

func (k sockKind) String() string {
	switch k {
	case sockMain:
		return "main port"
	case sockData:
		return "entropy port"
	}
	return "marked socket"
}

// listen opens a UDP socket on addr:port with the options of its kind. It
// runs in the engine's network namespace.
func (e *Engine) listen(port int, kind sockKind, mark uint32) (*net.UDPConn, error) {
	var conn *net.UDPConn
	err := e.inNetns(func() error {
		c, err := e.listenHere(port, kind, mark)
		conn = c
		return err
	})
	return conn, err
}

func (e *Engine) listenHere(port int, kind sockKind, mark uint32) (*net.UDPConn, error) {
	network := "udp4"
	if e.v6 {
		network = "udp6"
	}
	where := net.JoinHostPort(e.cfg.Addr.String(), strconv.Itoa(port))
	var optErr error
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		err := rc.Control(func(fd uintptr) {
			optErr = e.setOptions(int(fd), kind, mark)
		})
		if err != nil {
			return err
		}
		return optErr
	}}
	pc, err := lc.ListenPacket(context.Background(), network, where)
	if err != nil {
		if kind == sockMark {
			return nil, fmt.Errorf("dataplane: marked socket (mark %d) on %s: %w", mark, e.cfg.Addr, err)
		}
		return nil, fmt.Errorf("dataplane: listen on %s (%s): %w", where, kind, err)
	}
	conn := pc.(*net.UDPConn)
	e.setBuffers(conn, kind)
	return conn, nil
}

// setOptions sets the per-kind options before bind.
func (e *Engine) setOptions(fd int, kind sockKind, mark uint32) error {
	if kind == sockMark {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_MARK, int(mark)); err != nil {
			return fmt.Errorf("setsockopt SO_MARK=%d: %w", mark, err)
		}
	}
	switch {
	case kind == sockMain && e.v6:
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_RECVTCLASS, 1); err != nil {
			return fmt.Errorf("setsockopt IPV6_RECVTCLASS: %w", err)
		}
	case kind == sockMain:
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_RECVTOS, 1); err != nil {
			return fmt.Errorf("setsockopt IP_RECVTOS: %w", err)
		}
	case e.v6:
		// Data leaves ECN-capable so the fabric marks instead of dropping.
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_TCLASS, tosECT0); err != nil {
			return fmt.Errorf("setsockopt IPV6_TCLASS: %w", err)
		}
	default:
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_TOS, tosECT0); err != nil {
			return fmt.Errorf("setsockopt IP_TOS: %w", err)
		}
	}
	return nil
}

// setBuffers asks for large socket buffers. Without privileges the kernel
// caps them at net.core.{r,w}mem_max; that is logged once, not an error.
func (e *Engine) setBuffers(conn *net.UDPConn, kind sockKind) {
	rc, err := conn.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		set := func(opt, force int, name string) {
			_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, opt, sockBufBytes)
			// The kernel reports twice the size it grants.
			if got, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, opt); err == nil && got >= sockBufBytes {
				return
			}
			if err := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, force, sockBufBytes); err != nil {
				e.bufWarn.Do(func() {
					got, _ := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, opt)
					e.logf("dataplane: %s limited to %d bytes (want %d): %v; raise net.core.rmem_max/wmem_max or run with CAP_NET_ADMIN", name, got/2, sockBufBytes, err)
				})
			}
		}
		set(unix.SO_SNDBUF, unix.SO_SNDBUFFORCE, "SO_SNDBUF")
		if kind == sockMain {
			set(unix.SO_RCVBUF, unix.SO_RCVBUFFORCE, "SO_RCVBUF")
		}
	})
}

// inNetns runs fn with the calling thread in the engine's network namespace
// (or directly when the engine has none). Sockets created by fn stay in that
// namespace. It locks a fresh goroutine to its thread; if the thread cannot
// be switched back it is left locked, so the runtime discards it.
func (e *Engine) inNetns(fn func() error) error {
	if e.nsFD < 0 {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("dataplane: open current netns: %w", err)
			return
		}
		defer unix.Close(orig)
		if err := unix.Setns(e.nsFD, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("dataplane: enter netns %s: %w", e.cfg.Netns, err)
			return
		}
		err = fn()
		if unix.Setns(orig, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

// parseTOS extracts the IPv4 TOS or IPv6 traffic class from the control
// messages of a received packet without allocating.
func parseTOS(oob []byte) (uint8, bool) {
	for len(oob) >= unix.SizeofCmsghdr {
		h, data, rest, err := unix.ParseOneSocketControlMessage(oob)
		if err != nil {
			return 0, false
		}
		switch {
		case h.Level == unix.IPPROTO_IP && (h.Type == unix.IP_TOS || h.Type == unix.IP_RECVTOS) && len(data) >= 1:
			return data[0], true
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_TCLASS && len(data) >= 4:
			return uint8(binary.NativeEndian.Uint32(data)), true
		}
		oob = rest
	}
	return 0, false
}

// notECTOOB returns the control message that sends a datagram Not-ECT
// (TOS / traffic class 0) from a socket whose default is ECT(0): ACKs leave
// from the entropy sockets but are not ECN-capable (RFC 3168 Sec. 6.1.4).
func notECTOOB(v6 bool) []byte {
	b := make([]byte, unix.CmsgSpace(4))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = unix.IPPROTO_IP, unix.IP_TOS
	if v6 {
		h.Level, h.Type = unix.IPPROTO_IPV6, unix.IPV6_TCLASS
	}
	h.SetLen(unix.CmsgLen(4)) // the data, an int, stays 0
	return b
}

// tosOOBLen is room for one TOS/TCLASS control message, with slack.
var tosOOBLen = unix.CmsgSpace(4) * 2

// isClosed reports whether err means the socket was closed.
func isClosed(err error) bool { return errors.Is(err, net.ErrClosed) }
