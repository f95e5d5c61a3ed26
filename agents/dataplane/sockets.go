package dataplane

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Socket options.
const (
	// minSockBuf is the smallest socket buffer the engine asks for;
	// sizeBuffers raises it from the bandwidth-delay product.
	minSockBuf = 4 << 20
	// maxSockBuf bounds what the bandwidth-delay product asks for.
	maxSockBuf = 256 << 20
	tosECT0    = 0x02 // ECN-capable transport, ECT(0)
	tosCE      = 0x03 // congestion experienced
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
func (e *Engine) listen(addr netip.Addr, port int, kind sockKind, mark uint32) (*net.UDPConn, error) {
	var conn *net.UDPConn
	err := e.inNetns(func() error {
		c, err := e.listenHere(addr, port, kind, mark)
		conn = c
		return err
	})
	return conn, err
}

func (e *Engine) listenHere(addr netip.Addr, port int, kind sockKind, mark uint32) (*net.UDPConn, error) {
	network := "udp4"
	if e.v6 {
		network = "udp6"
	}
	where := net.JoinHostPort(addr.String(), strconv.Itoa(port))
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
			return nil, fmt.Errorf("dataplane: marked socket (mark %d) on %s: %w", mark, addr, err)
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
	if kind == sockMain {
		// Kernel receive timestamps: RTT samples without this host's
		// scheduling delay (the hold time in ACKs, HostDelay at the sender).
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
			return fmt.Errorf("setsockopt SO_TIMESTAMPNS: %w", err)
		}
		// UDP GRO: a train of datagrams arrives as one buffer. Kernels
		// before 5.0 lack it; the engine then receives them one by one.
		if !e.cfg.DisableGRO && unix.SetsockoptInt(fd, unix.SOL_UDP, unix.UDP_GRO, 1) == nil {
			e.gro.Store(true)
		}
	} else if !e.cfg.DisableGSO {
		// UDP GSO (kernel 4.18 and later): probed per socket, used per
		// message (a UDP_SEGMENT control message).
		if _, err := unix.GetsockoptInt(fd, unix.SOL_UDP, unix.UDP_SEGMENT); err == nil {
			e.gsoProbe.Store(true)
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

// setBuffers asks for the socket buffers of its kind (sizeBuffers' sizes).
// Without privileges the kernel caps them at net.core.{r,w}mem_max; that
// is logged once, not an error.
func (e *Engine) setBuffers(conn *net.UDPConn, kind sockKind) {
	rc, err := conn.SyscallConn()
	if err != nil {
		return
	}
	snd, rcv := int(e.sndBuf.Load()), int(e.rcvBuf.Load())
	_ = rc.Control(func(fd uintptr) {
		e.setBuf(int(fd), unix.SO_SNDBUF, unix.SO_SNDBUFFORCE, "SO_SNDBUF", snd)
		if kind == sockMain {
			e.setBuf(int(fd), unix.SO_RCVBUF, unix.SO_RCVBUFFORCE, "SO_RCVBUF", rcv)
		}
	})
}

func (e *Engine) setBuf(fd, opt, force int, name string, want int) {
	// The kernel reports twice the size it grants.
	if got, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, opt); err == nil && got >= 2*want {
		return
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, opt, want)
	if got, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, opt); err == nil && got >= want {
		return
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, force, want); err != nil {
		e.bufWarn.Do(func() {
			got, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, opt)
			e.logf("dataplane: %s limited to %d bytes (want %d): %v; raise net.core.rmem_max/wmem_max or run with CAP_NET_ADMIN", name, got/2, want, err)
		})
	}
}

// bufferSizes returns the send and receive buffer sizes for a NIC of
// rateBps and flows whose largest window is window bytes: the receive
// buffer holds what the senders may have in flight towards this host
// (twice the largest window, or 2 ms at the NIC rate, whichever is more)
// plus what arrives while the receiving goroutine is not scheduled for
// stall (the time a busy 2-core host keeps a runnable thread waiting);
// the send buffer holds 1 ms at the NIC rate. Both are at least
// minSockBuf and at most maxSockBuf.
func bufferSizes(rateBps int64, window float64, stall time.Duration) (snd, rcv int) {
	clamp := func(v float64) int { return int(min(max(v, minSockBuf), maxSockBuf)) }
	bps := float64(rateBps) / 8
	rcv = clamp(max(2*window, bps*0.002) + bps*stall.Seconds())
	snd = clamp(bps * 0.001)
	return snd, rcv
}

// sizeBuffers grows every socket's buffers to what a NIC of rateBps and a
// window of window bytes need (bufferSizes); it never shrinks them.
func (e *Engine) sizeBuffers(rateBps int64, window float64) {
	snd, rcv := bufferSizes(rateBps, window, bufStall)
	growS, growR := int64(snd) > e.sndBuf.Load(), int64(rcv) > e.rcvBuf.Load()
	if !growS && !growR {
		return
	}
	if growS {
		e.sndBuf.Store(int64(snd))
	}
	if growR {
		e.rcvBuf.Store(int64(rcv))
	}
	for _, ps := range e.planes {
		if ps.main == nil {
			continue
		}
		e.setBuffers(ps.main.conn, sockMain)
		if growS {
			for _, s := range ps.data {
				e.setBuffers(s.conn, sockData)
			}
		}
	}
}

// bufStall is the receiving goroutine's scheduling stall the receive
// buffer absorbs at the NIC rate.
const bufStall = 5 * time.Millisecond

// RcvBufBytes returns the receive buffer the kernel granted the main
// socket of plane 0 (what SO_RCVBUF reports, halved: the kernel doubles
// the request for its bookkeeping).
func (e *Engine) RcvBufBytes() int {
	rc, err := e.planes[0].main.conn.SyscallConn()
	if err != nil {
		return 0
	}
	var got int
	_ = rc.Control(func(fd uintptr) { got, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF) })
	return got / 2
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

// tosOOBLen is room for one TOS/TCLASS control message, with slack.
var tosOOBLen = unix.CmsgSpace(4) * 2

// isClosed reports whether err means the socket was closed.
func isClosed(err error) bool { return errors.Is(err, net.ErrClosed) }
