package dataplane

import (
	"net/netip"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/agents/transport"
)

// TestGSOGRO sends ECMP flows both ways on loopback (which segments and
// coalesces like a NIC with offloads): with GSO and GRO, data and ACKs
// leave several datagrams per message and arrive several per buffer, far
// fewer system calls than packets; with both off, one datagram each. Every
// flow completes with every byte delivered once either way.
func TestGSOGRO(t *testing.T) {
	for _, off := range []bool{false, true} {
		name := "offloads"
		if off {
			name = "no-offloads"
		}
		t.Run(name, func(t *testing.T) {
			cfg := Config{Addr: lo4, Params: testParams(transport.NSCC, transport.ECMP), RunID: 31, DisableGSO: off, DisableGRO: off}
			a, b := startEngine(t, cfg), startEngine(t, cfg)
			var plans []flowPlan
			for i := range 4 {
				src, dst := a, b
				if i%2 == 1 {
					src, dst = b, a
				}
				plans = append(plans, flowPlan{src, dst, FlowSpec{ID: uint32(i + 1), Dst: dst.LocalAddr(), Size: 8 << 20,
					BaseRTT: 200 * transport.Microsecond, RateBps: 10e9}})
			}
			runFlows(t, []*Engine{a, b}, plans, 30*time.Second)
			gso, gro := a.Offloads()
			if gso == off || gro == off {
				t.Fatalf("offloads GSO %v GRO %v, want %v", gso, gro, !off)
			}
			for i, e := range []*Engine{a, b} {
				st := e.Stats()
				sent := st.DataSent + st.AcksSent
				t.Logf("engine %d: %d datagrams in %d messages, %d send calls (%d in GSO messages); %d received in %d messages (%d from GRO buffers), %d receive calls",
					i, sent, st.SendMsgs, st.SendCalls, st.GSOSegments, st.DataRecv+st.AcksRecv, st.RecvMsgs, st.GROSegments, st.RecvCalls)
				if off {
					if st.GSOSegments != 0 || st.GROSegments != 0 || st.SendMsgs != sent {
						t.Errorf("engine %d: offloads off, yet %d GSO and %d GRO datagrams, %d messages for %d datagrams", i, st.GSOSegments, st.GROSegments, st.SendMsgs, sent)
					}
					continue
				}
				if st.GSOSegments < sent/2 || st.SendMsgs > sent/2 || st.GROSegments < (st.DataRecv+st.AcksRecv)/2 {
					t.Errorf("engine %d: %d of %d datagrams sent in GSO messages (%d messages), %d received from GRO buffers", i, st.GSOSegments, sent, st.SendMsgs, st.GROSegments)
				}
			}
		})
	}
}

// TestHoldTimeIsHostDelay delays the receiver by 2 ms before every tenth
// ACK (a receiver that is not scheduled, as on a busy host): the ACKs carry
// that hold time, so the sender's fabric RTT (kernel timestamps, hosts' delays
// out) stays far below it while its RTT estimate for the timeout, which
// must wait for the host, includes it.
func TestHoldTimeIsHostDelay(t *testing.T) {
	cfg := Config{Addr: lo4, EntropyPorts: 4, Params: testParams(transport.NSCC, transport.ECMP), RunID: 32}
	a := startEngine(t, cfg)
	cfg.DropAck = func(_ uint16, a transport.Ack) bool {
		if a.PSN%10 == 0 {
			time.Sleep(2 * time.Millisecond)
		}
		return false
	}
	b := startEngine(t, cfg)
	c := runFlows(t, []*Engine{a, b}, []flowPlan{{a, b, FlowSpec{ID: 1, Dst: b.LocalAddr(), Size: 100 * int64(cfg.Params.MTU),
		BaseRTT: 100 * transport.Microsecond, RateBps: 1e9}}}, 30*time.Second)[1]
	h := a.rttHints[lo4] // the sending goroutine has stopped writing it: the flow completed
	t.Logf("fabric RTT %v, SRTT %v, max host delay %v, %d timeouts", c.MinRTT, time.Duration(h.srtt/1000), time.Duration(a.hostMax/1000), c.Stats.Timeouts)
	if c.MinRTT <= 0 || c.MinRTT >= time.Millisecond {
		t.Errorf("fabric RTT %v: want the loopback's, without the receiver's 2 ms hold", c.MinRTT)
	}
	// A tenth of the round trips waited 2 ms: the smoothed RTT carries
	// them (about 0.2 ms on average), the host delay the whole 2 ms.
	if srtt := time.Duration(h.srtt / 1000); srtt < 100*time.Microsecond || srtt < 4*c.MinRTT || a.hostMax < 2*transport.Millisecond {
		t.Errorf("SRTT %v, host delay %v: want both to include the 2 ms holds", srtt, time.Duration(a.hostMax/1000))
	}
}

// TestPlanesLoopback runs flows over two planes (two loopback addresses
// per engine, the same ports on each): every packet of a flow goes on one
// of the planes and is acknowledged on it, both planes carry a share, the
// receiver sees one flow per sender whatever plane its packets take, and
// flows without plane destinations stay on plane 0.
func TestPlanesLoopback(t *testing.T) {
	for _, mode := range []transport.PlaneMode{transport.PlanePLB, transport.PlaneGlobal, transport.PlaneEntropy} {
		t.Run(mode.String(), func(t *testing.T) {
			p := testParams(transport.NSCC, transport.REPS)
			if mode == transport.PlaneEntropy {
				// The entropy picks the plane: REPS would keep a flow on the
				// planes of the few entropies it recycles.
				p.LB = transport.OPS
			}
			p.PlaneMode = mode
			cfg := Config{Addr: netip.MustParseAddr("127.0.0.1"), Planes: []netip.Addr{netip.MustParseAddr("127.0.0.2")}, EntropyPorts: 8, Params: p, RunID: 33}
			a := startEngine(t, cfg)
			cfg.Addr, cfg.Planes = netip.MustParseAddr("127.0.0.3"), []netip.Addr{netip.MustParseAddr("127.0.0.4")}
			b := startEngine(t, cfg)
			if a.Params().Planes != 2 || len(a.PlaneAddrs()) != 2 {
				t.Fatalf("planes %d, addresses %v", a.Params().Planes, a.PlaneAddrs())
			}
			var plans []flowPlan
			for i := range 4 {
				spec := FlowSpec{ID: uint32(i + 1), Dst: b.LocalAddr(), Size: 2 << 20, BaseRTT: 200 * transport.Microsecond, RateBps: 5e9,
					PlaneDsts: []netip.Addr{netip.MustParseAddr("127.0.0.4")}}
				plans = append(plans, flowPlan{a, b, spec})
			}
			plans = append(plans, flowPlan{a, b, FlowSpec{ID: 9, Dst: b.LocalAddr(), Size: 1 << 20, BaseRTT: 200 * transport.Microsecond, RateBps: 5e9}})
			sent0, _ := a.PlaneCounts()
			runFlows(t, []*Engine{a, b}, plans, 30*time.Second)
			sent, _ := a.PlaneCounts()
			_, recv := b.PlaneCounts()
			t.Logf("%s: data sent per plane %v (before the flows %v), received per plane %v", mode, sent, sent0, recv)
			total := sent[0] + sent[1]
			if recv[0]+recv[1] != b.Stats().DataRecv || sent[1] == 0 || float64(sent[1]) < 0.2*float64(total) || float64(sent[0]) < 0.2*float64(total) {
				t.Errorf("%s: planes carried %v of the data, received %v: want both a share", mode, sent, recv)
			}
			for _, r := range receivers(t, b) {
				if r.Src.Port() != a.LocalAddr().Port() {
					t.Errorf("receiver of flow %d: source %v", r.Flow, r.Src)
				}
			}
		})
	}
	// A flow to planes the engine does not have is refused.
	e := newEngine(t, Config{Addr: lo4, EntropyPorts: 1})
	if err := e.StartFlow(FlowSpec{ID: 1, Dst: netip.MustParseAddrPort("127.0.0.1:9"), BaseRTT: 1, RateBps: 1,
		PlaneDsts: []netip.Addr{netip.MustParseAddr("127.0.0.2")}}); err == nil {
		t.Error("a two-plane flow from a one-plane engine was accepted")
	}
}
