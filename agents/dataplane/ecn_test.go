package dataplane

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/agents/transport"
	"golang.org/x/sys/unix"
)

// probe is a hand-driven peer: a plain UDP socket that sends encoded packets
// to an engine with a chosen TOS / traffic class and reads what comes back.
type probe struct {
	t    *testing.T
	conn *net.UDPConn
	v6   bool
}

func newProbe(t *testing.T, addr netip.Addr) *probe {
	t.Helper()
	network := "udp4"
	if addr.Is6() {
		network = "udp6"
	}
	c, err := net.ListenUDP(network, net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, 0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &probe{t: t, conn: c, v6: addr.Is6()}
}

func (p *probe) port() uint16 { return p.conn.LocalAddr().(*net.UDPAddr).AddrPort().Port() }

// setTOS sets the whole TOS byte (or IPv6 traffic class), ECN bits included.
func (p *probe) setTOS(tos int) {
	p.t.Helper()
	rc, err := p.conn.SyscallConn()
	if err != nil {
		p.t.Fatal(err)
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		if p.v6 {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_TCLASS, tos)
		} else {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS, tos)
		}
	})
	if err != nil || serr != nil {
		p.t.Fatalf("set TOS %d: %v %v", tos, err, serr)
	}
}

func (p *probe) send(to netip.AddrPort, b []byte) {
	p.t.Helper()
	if _, err := p.conn.WriteToUDPAddrPort(b, to); err != nil {
		p.t.Fatal(err)
	}
}

func (p *probe) sendData(to netip.AddrPort, h DataHeader) {
	p.t.Helper()
	buf := make([]byte, DataHeaderLen+int(h.Payload))
	n, err := EncodeData(buf, &h)
	if err != nil {
		p.t.Fatal(err)
	}
	p.send(to, buf[:n])
}

// recvAck reads one ACK/NACK, or returns false after timeout.
func (p *probe) recvAck(timeout time.Duration) (AckHeader, bool) {
	p.t.Helper()
	buf := make([]byte, 2048)
	_ = p.conn.SetReadDeadline(time.Now().Add(timeout))
	n, err := p.conn.Read(buf)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return AckHeader{}, false
		}
		p.t.Fatal(err)
	}
	var a AckHeader
	if err := DecodeAck(buf[:n], &a); err != nil {
		p.t.Fatalf("reply is not an ACK: %v", err)
	}
	return a, true
}

func TestECN(t *testing.T) {
	for _, addr := range []netip.Addr{lo4, lo6} {
		t.Run(addr.String(), func(t *testing.T) {
			if addr.Is6() {
				if c, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback}); err != nil {
					t.Skipf("skipping: no IPv6 loopback: %v", err)
				} else {
					c.Close()
				}
			}
			e := startEngine(t, Config{Addr: addr, EntropyPorts: 1, RunID: 5})
			for i, tc := range []struct {
				tos     int
				wantECN bool
			}{
				{tosCE, true},    // congestion experienced
				{tosECT0, false}, // ECN-capable, not marked
				{0, false},       // not ECN-capable
				{0xb8 | tosCE, true},
			} {
				pr := newProbe(t, addr)
				pr.setTOS(tc.tos)
				h := DataHeader{RunID: 5, Flow: uint32(50 + i), PSN: 0, NPkts: 2, Payload: 100, Entropy: 3,
					ReplyPort: pr.port(), SentAt: 123456789}
				pr.sendData(e.LocalAddr(), h)
				a, ok := pr.recvAck(2 * time.Second)
				if !ok {
					t.Fatalf("tos %#x: no ACK", tc.tos)
				}
				want := AckHeader{RunID: 5, Flow: h.Flow, PSN: 0, CumAck: 1, Entropy: 3, Route: 3, EchoTS: 123456789, ECN: tc.wantECN}
				// The hold time is the receiver's, from the kernel's receive
				// timestamp to the ACK's send: more than nothing, far less
				// than the test's timeout.
				if a.HoldNs == 0 || a.HoldNs >= uint32(2*time.Second) {
					t.Errorf("tos %#x: ACK hold time %d ns", tc.tos, a.HoldNs)
				}
				a.HoldNs = 0
				if a != want {
					t.Errorf("tos %#x: ACK %+v, want %+v", tc.tos, a, want)
				}
			}
			st := waitStats(t, e, func(st Stats) bool { return st.AcksSent == 4 })
			if st.ECNMarked != 2 || st.ECNAcksSent != 2 || st.AcksSent != 4 || st.DataRecv != 4 {
				t.Errorf("stats %+v: want 2 CE-marked of 4", st)
			}
		})
	}
}

// TestDataIsECT checks that the engine's own data packets leave ECT(0).
func TestDataIsECT(t *testing.T) {
	pr := newProbe(t, lo4)
	rc, _ := pr.conn.SyscallConn()
	rc.Control(func(fd uintptr) { _ = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1) })
	e := startEngine(t, Config{Addr: lo4, EntropyPorts: 2, Params: testParams(transport.NSCC, transport.REPS)})
	if err := e.StartFlow(FlowSpec{ID: 1, Dst: pr.conn.LocalAddr().(*net.UDPAddr).AddrPort(), Size: 10,
		BaseRTT: transport.Millisecond, RateBps: 1e9}); err != nil {
		t.Fatal(err)
	}
	buf, oob := make([]byte, 9000), make([]byte, 128)
	_ = pr.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, oobn, _, src, err := pr.conn.ReadMsgUDPAddrPort(buf, oob)
	if err != nil {
		t.Fatal(err)
	}
	var h DataHeader
	if err := DecodeData(buf[:n], &h); err != nil {
		t.Fatal(err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 || len(msgs[0].Data) < 1 {
		t.Fatalf("control messages %v %v", msgs, err)
	}
	if tos := msgs[0].Data[0]; tos&3 != tosECT0 {
		t.Errorf("data TOS %#x, want ECT(0)", tos)
	}
	if tos, ok := parseTOS(oob[:oobn]); !ok || tos != msgs[0].Data[0] {
		t.Errorf("parseTOS = %#x %v, ParseSocketControlMessage %#x", tos, ok, msgs[0].Data[0])
	}
	lo, hi := int(e.LocalAddr().Port())+1, int(e.LocalAddr().Port())+2
	if p := int(src.Port()); p < lo || p > hi || int(h.Entropy)%2 != p-lo {
		t.Errorf("entropy %d sent from port %d, want port %d", h.Entropy, p, lo+int(h.Entropy)%2)
	}
	if h.ReplyPort != e.LocalAddr().Port() || h.NPkts != 1 || h.Payload != 10 || n != DataHeaderLen+10 {
		t.Errorf("data header %+v (%d bytes)", h, n)
	}
}

func TestTrimmedGetsNack(t *testing.T) {
	e := startEngine(t, Config{Addr: lo4, EntropyPorts: 1, RunID: 2})
	pr := newProbe(t, lo4)
	h := DataHeader{RunID: 2, Flow: 1, PSN: 3, NPkts: 10, Payload: 4000, ReplyPort: pr.port(), SentAt: 77}
	buf := make([]byte, DataHeaderLen+4000)
	if _, err := EncodeData(buf, &h); err != nil {
		t.Fatal(err)
	}
	pr.send(e.LocalAddr(), buf[:DataHeaderLen+100]) // the fabric cut the payload
	a, ok := pr.recvAck(2 * time.Second)
	if !ok || !a.Nack || a.PSN != 3 || a.CumAck != 0 || a.EchoTS != 77 {
		t.Fatalf("reply %+v (%v), want a NACK for PSN 3", a, ok)
	}
	if st := waitStats(t, e, func(st Stats) bool { return st.NacksSent == 1 }); st.Trimmed != 1 || st.NacksSent != 1 || st.PayloadRecv != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestForeignRunAndBadPackets(t *testing.T) {
	e := startEngine(t, Config{Addr: lo4, EntropyPorts: 1, RunID: 1000, Params: testParams(transport.NSCC, transport.REPS)})
	pr := newProbe(t, lo4)
	h := DataHeader{RunID: 1001, Flow: 1, NPkts: 1, Payload: 10, ReplyPort: pr.port()}
	pr.sendData(e.LocalAddr(), h) // another run
	ack := make([]byte, AckHeaderLen)
	EncodeAck(ack, &AckHeader{RunID: 999, Flow: 1})
	pr.send(e.LocalAddr(), ack)                      // another run's ACK
	pr.send(e.LocalAddr(), []byte("hello, fabric!")) // garbage
	pr.send(e.LocalAddr(), make([]byte, 60000))      // larger than any packet: truncated
	bad := make([]byte, DataHeaderLen+10)
	EncodeData(bad, &DataHeader{RunID: 1000, Flow: 1, NPkts: 1, Payload: 10})
	bad[2] = 9
	pr.send(e.LocalAddr(), bad) // unknown version
	if a, ok := pr.recvAck(300 * time.Millisecond); ok {
		t.Fatalf("got a reply %+v to foreign or bad packets", a)
	}
	h.RunID = 1000
	pr.sendData(e.LocalAddr(), h)
	if a, ok := pr.recvAck(2 * time.Second); !ok || a.RunID != 1000 || a.CumAck != 1 {
		t.Fatalf("reply to this run's packet: %+v %v", a, ok)
	}
	st := waitStats(t, e, func(st Stats) bool { return st.AcksSent == 1 })
	if st.ForeignRun != 2 || st.DataRecv != 1 || st.AcksSent != 1 || st.RecvFlows != 1 {
		t.Errorf("stats %+v: want 2 foreign-run packets and one flow", st)
	}
	if st.BadPackets < 2 { // the oversized datagram may not fit loopback's MTU
		t.Errorf("BadPackets = %d, want >= 2", st.BadPackets)
	}
	// An ACK of this run for a flow the engine does not run is stale.
	EncodeAck(ack, &AckHeader{RunID: 1000, Flow: 4242})
	pr.send(e.LocalAddr(), ack)
	if st := waitStats(t, e, func(st Stats) bool { return st.StaleAcks == 1 }); st.StaleAcks != 1 {
		t.Errorf("StaleAcks = %d, want 1", st.StaleAcks)
	}
}
