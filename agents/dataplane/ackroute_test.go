package dataplane

import (
	"sync"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/agents/transport"
	"golang.org/x/sys/unix"
)

// recvAckFrom reads one ACK with the UDP source port it left from and its
// TOS byte (the probe asks for IP_RECVTOS).
func (p *probe) recvAckFrom(timeout time.Duration) (AckHeader, uint16, uint8) {
	p.t.Helper()
	buf := make([]byte, 2048)
	oob := make([]byte, tosOOBLen)
	_ = p.conn.SetReadDeadline(time.Now().Add(timeout))
	n, oobn, _, src, err := p.conn.ReadMsgUDPAddrPort(buf, oob)
	if err != nil {
		p.t.Fatalf("no ACK: %v", err)
	}
	var a AckHeader
	if err := DecodeAck(buf[:n], &a); err != nil {
		p.t.Fatalf("reply is not an ACK: %v", err)
	}
	tos, ok := parseTOS(oob[:oobn])
	if !ok {
		p.t.Fatal("no TOS control message")
	}
	return a, src.Port(), tos
}

// TestAckLeavesFromRoutePort drives a receiver by hand: its ACK leaves from
// the entropy port its route names (the data entropy's, as data does), Not-ECT;
// duplicates move the route to other ports; a data packet that confirms a
// route pins the ACKs to it.
func TestAckLeavesFromRoutePort(t *testing.T) {
	const ports = 4
	e := startEngine(t, Config{Addr: lo4, EntropyPorts: ports, RunID: 5, Params: testParams(transport.NSCC, transport.REPS)})
	base := e.LocalAddr().Port() + 1
	pr := newProbe(t, lo4)
	rc, err := pr.conn.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	_ = rc.Control(func(fd uintptr) { err = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1) })
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, a AckHeader, port uint16, tos uint8) {
		t.Helper()
		if want := base + a.Route%ports; port != want {
			t.Errorf("%s: ACK (route %d) left from port %d, want %d", what, a.Route, port, want)
		}
		if tos&0x03 != 0 {
			t.Errorf("%s: ACK sent with ECN bits %#x, want Not-ECT", what, tos&0x03)
		}
	}
	h := DataHeader{RunID: 5, Flow: 9, NPkts: 3, Payload: 10, Entropy: 2, ReplyPort: pr.port(), SentAt: 100}
	pr.sendData(e.LocalAddr(), h)
	a, port, tos := pr.recvAckFrom(2 * time.Second)
	check("first", a, port, tos)
	if a.Entropy != 2 || a.Route != 2 || port != base+2 {
		t.Fatalf("first ACK: entropy %d route %d port %d, want the data entropy 2 from port %d", a.Entropy, a.Route, port, base+2)
	}
	// Duplicates: the receiver's ACKs are not getting through; it sprays.
	seen := map[uint16]bool{}
	var last AckHeader
	for i := range 8 {
		h.SentAt = 200 + int64(i)
		pr.sendData(e.LocalAddr(), h)
		a, port, tos := pr.recvAckFrom(2 * time.Second)
		check("duplicate", a, port, tos)
		if a.Entropy != 2 {
			t.Errorf("duplicate's ACK echoes entropy %d, want 2", a.Entropy)
		}
		seen[port] = true
		last = a
	}
	if len(seen) < 2 {
		t.Fatalf("ACKs after 8 duplicates left from ports %v only: the receiver does not move its ACKs", seen)
	}
	// The sender confirms the latest route: every later ACK takes it.
	h.PSN, h.SentAt, h.AckRoute, h.AckRouteValid = 1, 1000, last.Route, true
	pr.sendData(e.LocalAddr(), h)
	a, port, tos = pr.recvAckFrom(2 * time.Second)
	check("confirmed", a, port, tos)
	h.PSN, h.SentAt, h.AckRouteValid = 2, 1001, false
	pr.sendData(e.LocalAddr(), h)
	b, port2, tos := pr.recvAckFrom(2 * time.Second)
	check("after confirmation", b, port2, tos)
	if a.Route != last.Route || b.Route != last.Route || b.CumAck != 3 {
		t.Errorf("after confirming route %d: ACK routes %d, %d (cum %d)", last.Route, a.Route, b.Route, b.CumAck)
	}
}

// TestAcksAvoidDeadSourcePort drops every ACK that leaves the receiver from
// the source port of its first ACK (a reverse path that died): an ECMP flow
// keeps one entropy, so a receiver that only echoed it, or sent from one
// port, would never be heard and the flow would time out. The receiver sees
// the retransmissions, moves its ACKs to other ports, the sender confirms
// one, and the flow completes.
func TestAcksAvoidDeadSourcePort(t *testing.T) {
	cfg := Config{Addr: lo4, EntropyPorts: 8, RateBps: 2e9, Params: testParams(transport.NSCC, transport.ECMP), RunID: 23,
		FlowTimeout: 10 * time.Second}
	a := startEngine(t, cfg)
	var mu sync.Mutex
	var dead uint16
	sent := map[uint16]int{}
	dropped := 0
	cfg.DropAck = func(port uint16, _ transport.Ack) bool {
		mu.Lock()
		defer mu.Unlock()
		if dead == 0 {
			dead = port
		}
		if port == dead {
			dropped++
			return true
		}
		sent[port]++
		return false
	}
	r := startEngine(t, cfg)
	const pkts = 400
	spec := FlowSpec{ID: 1, Dst: r.LocalAddr(), Size: pkts * int64(cfg.Params.MTU), BaseRTT: 200 * transport.Microsecond}
	if err := a.StartFlow(spec); err != nil {
		t.Fatal(err)
	}
	c := collect(t, a, 1, 30*time.Second)[0]
	mu.Lock()
	defer mu.Unlock()
	if c.Err != nil {
		t.Fatalf("flow failed with every ACK from port %d dropped (%d dropped, other ports %v): %v", dead, dropped, sent, c.Err)
	}
	st := r.Stats()
	t.Logf("FCT %v; %d ACKs dropped on port %d, delivered from %d other ports %v; sender: %d retransmissions, %d timeouts; receiver: %d duplicates",
		c.FCT, dropped, dead, len(sent), sent, c.Stats.Retx, c.Stats.Timeouts, st.DataDup)
	if dropped == 0 || len(sent) == 0 || st.AcksDropped != uint64(dropped) {
		t.Errorf("dropped %d (stats %d), delivered from %v", dropped, st.AcksDropped, sent)
	}
	if dead == r.LocalAddr().Port() || dead < r.LocalAddr().Port()+1 || dead > r.LocalAddr().Port()+8 {
		t.Errorf("ACKs left from port %d, not an entropy port of %v", dead, r.LocalAddr())
	}
}
