package dataplane

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/agents/transport"
)

// TestStateOfAStalledFlow: a flow to a peer that never answers is reported
// by State as it is: nothing acknowledged, packets in flight, a
// retransmission timeout armed, no ACK yet, and a send loop that runs.
func TestStateOfAStalledFlow(t *testing.T) {
	dead, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	a := startEngine(t, Config{Addr: lo4, EntropyPorts: 4, Params: testParams(transport.NSCC, transport.REPS)})
	spec := FlowSpec{ID: 9, Dst: dead.LocalAddr().(*net.UDPAddr).AddrPort(), Size: 1 << 20,
		BaseRTT: 500 * transport.Microsecond, RateBps: 2e9}
	if err := a.StartFlow(spec); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st := a.State(ctx)
	t.Logf("%+v", st)
	if !st.Answered || len(st.Flows) != 1 {
		t.Fatalf("state %+v: want the sending goroutine's answer with 1 flow", st)
	}
	if st.WriteBlocked != 0 || st.LoopIdle > 2*time.Second {
		t.Errorf("loop idle %v, write blocked %v: want a running loop", st.LoopIdle, st.WriteBlocked)
	}
	f := st.Flows[0]
	if f.ID != 9 || f.Dst != spec.Dst || f.Acked != 0 || f.Packets == 0 || f.Sent == 0 || f.Timeouts == 0 {
		t.Errorf("flow %+v: want flow 9 to %v, none of its packets acknowledged, some sent and timed out", f, spec.Dst)
	}
	if f.SinceAck != -1 || f.Age < 100*time.Millisecond || f.Unsent >= f.Packets {
		t.Errorf("flow %+v: want no ACK yet, an age of 100 ms or more, packets sent", f)
	}
	if f.InflightBytes == 0 && f.QueuedRetx == 0 {
		t.Errorf("flow %+v: want packets in flight or queued for retransmission", f)
	}
	if f.InflightBytes > 0 && f.TimerIn < 0 {
		t.Errorf("flow %+v: packets in flight but no retransmission timeout armed", f)
	}
	// After Close, State does not wait for a sending goroutine that is gone.
	a.Close()
	if st := a.State(context.Background()); st.Answered && len(st.Flows) > 0 {
		t.Errorf("state after Close %+v: want no flows", st)
	}
}
