package dataplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/agents/transport"
	"golang.org/x/sys/unix"
)

type flowPlan struct {
	src, dst *Engine
	spec     FlowSpec
}

// runFlows starts every flow, waits for all completions and checks that every
// flow completed with every byte delivered exactly once, and that the
// engines' counters agree with each other and with the senders' statistics.
func runFlows(t *testing.T, engines []*Engine, plans []flowPlan, timeout time.Duration) map[uint32]Completion {
	t.Helper()
	want := map[*Engine]int{}
	for _, p := range plans {
		if err := p.src.StartFlow(p.spec); err != nil {
			t.Fatalf("StartFlow %d: %v", p.spec.ID, err)
		}
		want[p.src]++
	}
	comps := map[uint32]Completion{}
	for _, e := range engines {
		for _, c := range collect(t, e, want[e], timeout) {
			comps[c.ID] = c
		}
	}
	type agg struct {
		pkts, sent, retx, timeouts uint64
		spurious, completed        uint64
		recvFlows, recvBytes       uint64
		expectedFromPeersPkts      uint64
	}
	per := map[*Engine]*agg{}
	for _, e := range engines {
		per[e] = &agg{}
	}
	mtu := engines[0].Params().MTU
	for _, p := range plans {
		c, ok := comps[p.spec.ID]
		if !ok {
			t.Fatalf("no completion for flow %d", p.spec.ID)
		}
		if c.Err != nil {
			t.Errorf("flow %d: %v", p.spec.ID, c.Err)
			continue
		}
		npkts := uint64(transport.Packets(p.spec.Size, mtu))
		if c.FCT <= 0 || !c.End.After(c.Start) || c.End.Sub(c.Start) != c.FCT {
			t.Errorf("flow %d: FCT %v, start %v, end %v", p.spec.ID, c.FCT, c.Start, c.End)
		}
		if c.Stats.Sent != npkts {
			t.Errorf("flow %d: sent %d new packets, want %d", p.spec.ID, c.Stats.Sent, npkts)
		}
		s := per[p.src]
		s.pkts += npkts
		s.sent += c.Stats.Sent
		s.retx += c.Stats.Retx
		s.timeouts += c.Stats.Timeouts
		s.spurious += c.Stats.Spurious
		s.completed++
		d := per[p.dst]
		d.recvFlows++
		d.recvBytes += uint64(p.spec.Size)
		d.expectedFromPeersPkts += npkts
	}
	settle(t, engines...)
	for _, e := range engines {
		rs := receivers(t, e)
		for _, p := range plans {
			if p.dst != e {
				continue
			}
			r, ok := rs[p.spec.ID]
			if !ok {
				t.Errorf("flow %d: no receiver", p.spec.ID)
				continue
			}
			if r.Bytes != p.spec.Size || !r.Done || r.Src != p.src.LocalAddr() {
				t.Errorf("flow %d: receiver got %d bytes (done %v, from %v), want %d from %v",
					p.spec.ID, r.Bytes, r.Done, r.Src, p.spec.Size, p.src.LocalAddr())
			}
		}
	}
	for i, e := range engines {
		st, a := e.Stats(), per[e]
		t.Logf("engine %d stats: %+v", i, st)
		check := func(name string, got, want uint64) {
			t.Helper()
			if got != want {
				t.Errorf("engine %d: %s = %d, want %d", i, name, got, want)
			}
		}
		check("FlowsCompleted", st.FlowsCompleted, a.completed)
		check("FlowsFailed", st.FlowsFailed, 0)
		check("DataSent+DataDropped", st.DataSent+st.DataDropped, a.sent+a.retx)
		check("DataRetx", st.DataRetx+countRetxDropped(e), a.retx)
		check("Timeouts", st.Timeouts, a.timeouts)
		check("SpuriousRetx", st.SpuriousRetx, a.spurious)
		if st.SpuriousRetx > st.DataRetx+countRetxDropped(e) {
			t.Errorf("engine %d: %d spurious of %d retransmissions", i, st.SpuriousRetx, st.DataRetx)
		}
		check("RecvFlows", st.RecvFlows, a.recvFlows)
		check("RecvFlowsDone", st.RecvFlowsDone, a.recvFlows)
		check("PayloadRecv", st.PayloadRecv, a.recvBytes)
		check("DataRecv-DataDup", st.DataRecv-st.DataDup, a.expectedFromPeersPkts)
		check("AcksSent", st.AcksSent+st.NacksSent, st.DataRecv)
		check("BadPackets", st.BadPackets, 0)
		check("ForeignRun", st.ForeignRun, 0)
		check("SendErrors", st.SendErrors, 0)
		if st.AcksRecv+st.NacksRecv+st.StaleAcks > totalAcksSentTo(e, engines) {
			t.Errorf("engine %d received more ACKs (%d) than were sent to it", i, st.AcksRecv+st.StaleAcks)
		}
	}
	return comps
}

// countRetxDropped returns the retransmissions the DropData hook swallowed;
// tests that drop set it through retxDropped.
func countRetxDropped(e *Engine) uint64 {
	if v, ok := retxDropped[e]; ok {
		return v.Load()
	}
	return 0
}

var retxDropped = map[*Engine]*atomic.Uint64{}

func totalAcksSentTo(e *Engine, engines []*Engine) uint64 {
	var n uint64
	for _, o := range engines {
		if o != e {
			st := o.Stats()
			n += st.AcksSent + st.NacksSent
		}
	}
	return n
}

func mixedPlans(a, b *Engine, n int, baseRTT transport.Time, rate int64) []flowPlan {
	sizes := []int64{1, 100 << 10, 2 << 20}
	var plans []flowPlan
	for i := range n {
		src, dst := a, b
		if i%2 == 1 {
			src, dst = b, a
		}
		plans = append(plans, flowPlan{src, dst, FlowSpec{ID: uint32(i + 1), Dst: dst.LocalAddr(),
			Size: sizes[i%len(sizes)], BaseRTT: baseRTT, RateBps: rate}})
	}
	return plans
}

func TestLoopback(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cc      transport.CCKind
		lb      transport.LBKind
		rateBps int64 // NIC pacing
	}{
		{"nscc-reps", transport.NSCC, transport.REPS, 2e9},
		{"dctcp-ecmp", transport.DCTCP, transport.ECMP, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Addr: lo4, RateBps: tc.rateBps, Params: testParams(tc.cc, tc.lb), RunID: 11}
			a, b := startEngine(t, cfg), startEngine(t, cfg)
			comps := runFlows(t, []*Engine{a, b}, mixedPlans(a, b, 20, 500*transport.Microsecond, 2e9), 20*time.Second)
			var fct time.Duration
			for _, c := range comps {
				fct = max(fct, c.FCT)
			}
			t.Logf("%d flows, longest FCT %v", len(comps), fct)
		})
	}
}

func TestIPv6Loopback(t *testing.T) {
	c, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback})
	if err != nil {
		t.Skipf("skipping: no IPv6 loopback: %v", err)
	}
	c.Close()
	cfg := Config{Addr: lo6, EntropyPorts: 8, Params: testParams(transport.NSCC, transport.REPS), RunID: 6}
	a, b := startEngine(t, cfg), startEngine(t, cfg)
	if !a.LocalAddr().Addr().Is6() {
		t.Fatalf("LocalAddr %v is not IPv6", a.LocalAddr())
	}
	runFlows(t, []*Engine{a, b}, mixedPlans(a, b, 6, 500*transport.Microsecond, 2e9), 20*time.Second)
}

func TestLoss(t *testing.T) {
	cfg := Config{Addr: lo4, Params: testParams(transport.NSCC, transport.REPS), RunID: 3}
	b := startEngine(t, cfg)
	var n atomic.Uint64
	var droppedRetx atomic.Uint64
	cfg.DropData = func(d *transport.Data) bool {
		// Deterministic 5%: every 20th data packet, whatever it is.
		if n.Add(1)%20 != 7 {
			return false
		}
		if d.Retx {
			droppedRetx.Add(1)
		}
		return true
	}
	a := startEngine(t, cfg)
	retxDropped[a] = &droppedRetx
	t.Cleanup(func() { delete(retxDropped, a) })
	var plans []flowPlan
	for i := range 4 {
		plans = append(plans, flowPlan{a, b, FlowSpec{ID: uint32(100 + i), Dst: b.LocalAddr(), Size: 1 << 20,
			BaseRTT: 500 * transport.Microsecond, RateBps: 2e9}})
	}
	comps := runFlows(t, []*Engine{a, b}, plans, 20*time.Second)
	var retx, timeouts uint64
	for _, c := range comps {
		retx += c.Stats.Retx
		timeouts += c.Stats.Timeouts
	}
	st := a.Stats()
	t.Logf("dropped %d, retransmitted %d, timeouts %d", st.DataDropped, retx, timeouts)
	if st.DataDropped == 0 || st.DataRetx == 0 || retx == 0 || timeouts == 0 {
		t.Errorf("loss not recovered by retransmission: dropped %d, DataRetx %d, completion retx %d, timeouts %d",
			st.DataDropped, st.DataRetx, retx, timeouts)
	}
}

func TestFlowTimeout(t *testing.T) {
	// A peer that never answers: a socket nobody reads.
	dead, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	cfg := Config{Addr: lo4, EntropyPorts: 4, Params: testParams(transport.NSCC, transport.REPS),
		FlowTimeout: 200 * time.Millisecond}
	a := startEngine(t, cfg)
	spec := FlowSpec{ID: 1, Dst: dead.LocalAddr().(*net.UDPAddr).AddrPort(), Size: 1 << 20,
		BaseRTT: 500 * transport.Microsecond, RateBps: 2e9}
	if err := a.StartFlow(spec); err != nil {
		t.Fatal(err)
	}
	c := collect(t, a, 1, 5*time.Second)[0]
	if c.Err == nil || !strings.Contains(c.Err.Error(), "FlowTimeout") {
		t.Fatalf("want a FlowTimeout error, got %v", c.Err)
	}
	if c.FCT < 200*time.Millisecond || c.FCT > 2*time.Second {
		t.Errorf("abandoned after %v, want about 200ms", c.FCT)
	}
	st := a.Stats()
	t.Logf("%v; stats %+v", c.Err, st)
	// The RTO (7 x 200us) governs retransmission: at most a window per RTO.
	if st.Timeouts == 0 || c.Stats.Timeouts == 0 || st.FlowsFailed != 1 {
		t.Errorf("timeouts %d/%d, failed %d", st.Timeouts, c.Stats.Timeouts, st.FlowsFailed)
	}
	if st.DataSent > 3000 {
		t.Errorf("sent %d packets to a dead peer in 200ms: spinning", st.DataSent)
	}
	// Nothing more is sent after the flow was abandoned.
	time.Sleep(20 * time.Millisecond)
	before := a.Stats().DataSent
	time.Sleep(50 * time.Millisecond)
	if after := a.Stats().DataSent; after != before {
		t.Errorf("abandoned flow still sending: %d -> %d", before, after)
	}
}

func TestStopFailsRunningFlows(t *testing.T) {
	cfg := Config{Addr: lo4, EntropyPorts: 2, Params: testParams(transport.DCTCP, transport.ECMP)}
	e := newEngine(t, cfg)
	// Queued before Run: started by Run, then failed when it stops.
	spec := FlowSpec{ID: 9, Dst: netip.MustParseAddrPort("127.0.0.1:9"), Size: 1 << 30, BaseRTT: transport.Millisecond, RateBps: 1e9}
	if err := e.StartFlow(spec); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
	var got []Completion
	for c := range e.Completions() { // closed when Run returns
		got = append(got, c)
	}
	if len(got) != 1 || got[0].ID != 9 || !errors.Is(got[0].Err, ErrStopped) {
		t.Fatalf("completions %+v, want flow 9 with ErrStopped", got)
	}
	if err := e.Run(context.Background()); err == nil {
		t.Error("second Run succeeded")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.StartFlow(FlowSpec{ID: 10, Dst: spec.Dst, BaseRTT: 1, RateBps: 1}); !errors.Is(err, ErrClosed) {
		t.Errorf("StartFlow after Close: %v, want ErrClosed", err)
	}
}

func TestCloseStopsRun(t *testing.T) {
	e := newEngine(t, Config{Addr: lo4, EntropyPorts: 1})
	done := make(chan error, 1)
	go func() { done <- e.Run(context.Background()) }()
	time.Sleep(10 * time.Millisecond)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after Close")
	}
	// Closing an engine that never ran closes its Completions channel.
	e2 := newEngine(t, Config{Addr: lo4, EntropyPorts: 1})
	e2.Close()
	if _, ok := <-e2.Completions(); ok {
		t.Error("Completions of a closed engine not closed")
	}
}

func TestConfigErrors(t *testing.T) {
	a := newEngine(t, Config{Addr: lo4, EntropyPorts: 4})
	port := int(a.LocalAddr().Port())
	_, err := New(Config{Addr: lo4, Port: port, EntropyPorts: 4})
	want := fmt.Sprintf("127.0.0.1:%d (main port)", port)
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, unix.EADDRINUSE) {
		t.Errorf("port in use: %v, want an error naming %q", err, want)
	}
	_, err = New(Config{Addr: lo4, Port: port - 2, EntropyPorts: 4})
	want = fmt.Sprintf("127.0.0.1:%d (entropy port)", port)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("entropy port in use: %v, want an error naming %q", err, want)
	}
	for name, cfg := range map[string]Config{
		"no address":  {},
		"port range":  {Addr: lo4, Port: 65500, EntropyPorts: 64},
		"mtu too big": {Addr: lo4, Params: transport.Params{MTU: 65500, AckBytes: 64}},
		"bad params":  {Addr: lo4, Params: transport.Params{MTU: 10}},
		"negative":    {Addr: lo4, RateBps: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New succeeded", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	dst := netip.MustParseAddrPort("127.0.0.1:1000")
	for name, f := range map[string]FlowSpec{
		"v6 dst":    {ID: 1, Dst: netip.MustParseAddrPort("[::1]:1000"), BaseRTT: 1, RateBps: 1},
		"no dst":    {ID: 1, BaseRTT: 1, RateBps: 1},
		"no rtt":    {ID: 1, Dst: dst, RateBps: 1},
		"no rate":   {ID: 1, Dst: dst, BaseRTT: 1},
		"negative":  {ID: 1, Dst: dst, BaseRTT: 1, RateBps: 1, Size: -1},
		"too large": {ID: 1, Dst: dst, BaseRTT: 1, RateBps: 1, Size: 1 << 62},
	} {
		if err := a.StartFlow(f); err == nil {
			t.Errorf("%s: StartFlow succeeded", name)
		}
	}
	f := FlowSpec{ID: 5, Dst: dst, BaseRTT: 1, RateBps: 1}
	if err := a.StartFlow(f); err != nil {
		t.Fatal(err)
	}
	if err := a.StartFlow(f); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Errorf("duplicate flow ID: %v", err)
	}
	p := a.Params()
	if p.Entropies != 4 || p.HeaderBytes != DataHeaderLen+8+20+14 || p.AckBytes != AckHeaderLen+8+20+14 {
		t.Errorf("defaults not applied: %+v", p)
	}
}

// TestMarkedSockets checks that marked flows leave from sockets with SO_MARK
// and that the receiver answers from a socket with the same mark. That the
// marks steer packets is tested in namespaces (TestNetns).
func TestMarkedSockets(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: SO_MARK needs CAP_NET_ADMIN (not root)")
	}
	cfg := Config{Addr: lo4, EntropyPorts: 2, Params: testParams(transport.NSCC, transport.REPS)}
	a, b := startEngine(t, cfg), startEngine(t, cfg)
	plans := []flowPlan{
		{a, b, FlowSpec{ID: 1, Dst: b.LocalAddr(), Size: 300 << 10, BaseRTT: 500 * transport.Microsecond, RateBps: 2e9, Mark: 42}},
		{a, b, FlowSpec{ID: 2, Dst: b.LocalAddr(), Size: 300 << 10, BaseRTT: 500 * transport.Microsecond, RateBps: 2e9}},
	}
	runFlows(t, []*Engine{a, b}, plans, 10*time.Second)
	if r := receivers(t, b); r[1].Mark != 42 || r[2].Mark != 0 {
		t.Errorf("receiver marks %d, %d; want 42, 0", r[1].Mark, r[2].Mark)
	}
	for name, e := range map[string]*Engine{"sender": a, "receiver": b} {
		e.marksMu.Lock()
		c := e.marks[42]
		n := len(e.marks)
		e.marksMu.Unlock()
		if c == nil || n != 1 {
			t.Errorf("%s: marked sockets %d, want one for mark 42", name, n)
			continue
		}
		rc := c.rc
		var mark int
		var err error
		rc.Control(func(fd uintptr) { mark, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_MARK) })
		if err != nil || mark != 42 {
			t.Errorf("%s: SO_MARK = %d (%v), want 42", name, mark, err)
		}
	}
}
