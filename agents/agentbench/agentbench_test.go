package agentbench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/agents/transport"
)

// newTestChain builds a chain for a test, or skips saying why it cannot;
// the namespaces are gone at the end of the test.
func newTestChain(t *testing.T, o ChainOptions) *Chain {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: the lab path (network namespaces) needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skipf("skipping: ip (iproute2) not found: %v", err)
	}
	o.Prefix = fmt.Sprintf("fbab-%d%s", os.Getpid(), o.Prefix)
	c, err := NewChain(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	names := c.Namespaces()
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
		out, _ := exec.Command("ip", "netns", "list").Output()
		for _, ns := range names {
			if strings.Contains(string(out), ns) {
				t.Errorf("namespace %s left behind", ns)
			}
		}
	})
	if err := c.waitPing(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBench runs the bench on a small budget over the unshaped chain:
// every agent flow delivers every byte (Run checks the receiver's count),
// the agent sends with GSO and receives with GRO, its window reaches the
// path's BDP, and (subtest iperf3, skipped without iperf3) iperf3's UDP and
// TCP figures come from the same path in the same run. The speed figures
// are logged, not asserted: `fabricbench agent bench` checks them.
func TestBench(t *testing.T) {
	c := newTestChain(t, ChainOptions{})
	p := transport.DefaultParams()
	p.LB = transport.ECMP
	p.MTU = 0 // the largest the 9000-byte MTU allows
	t.Run("agent", func(t *testing.T) {
		rep, err := Run(context.Background(), c.Path(0), Options{Flows: []int{1, 2}, Bytes: 256 << 20, Params: p, Iperf3: "none", Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("\n%s", rep.Table())
		if len(rep.Results) != 2 || len(rep.Summaries) != 2 {
			t.Fatalf("%d results, %d summaries; want 2 and 2", len(rep.Results), len(rep.Summaries))
		}
		if rep.BaseRTTus <= 0 || rep.BaseRTTus > 5000 {
			t.Errorf("measured base RTT %.1f us", rep.BaseRTTus)
		}
		for _, r := range rep.Results {
			if r.Datagram != 9000-20-8 || r.GoodputGbps <= 0 || r.MinFlowGbps <= 0 || r.CPUSeconds <= 0 || r.Seconds <= 0 {
				t.Errorf("%d flows: figures %+v", r.Flows, r)
			}
			if !r.GSO || !r.GRO {
				t.Errorf("%d flows: GSO %v, GRO %v; this kernel has both", r.Flows, r.GSO, r.GRO)
			}
			if r.MinRTTus <= 0 || float64(r.MaxCwnd) < float64(r.PathBDP) {
				t.Errorf("%d flows: window up to %d B, below the path's BDP %d B (RTT %.1f us)", r.Flows, r.MaxCwnd, r.PathBDP, r.MinRTTus)
			}
			// GSO: many datagrams per system call.
			if r.SendCalls == 0 || r.Packets/r.SendCalls < 2 {
				t.Errorf("%d flows: %d data packets in %d send calls (both ends)", r.Flows, r.Packets, r.SendCalls)
			}
		}
	})
	t.Run("iperf3", func(t *testing.T) {
		if _, err := exec.LookPath("iperf3"); err != nil {
			t.Skipf("skipping: iperf3 not installed (scripts/test.sh installs it): %v", err)
		}
		rep, err := Run(context.Background(), c.Path(0), Options{Flows: []int{2}, Bytes: 128 << 20, Duration: time.Second, Params: p, Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("\n%s", rep.Table())
		tools := map[string]Result{}
		for _, r := range rep.Results {
			tools[r.Tool] = r
		}
		udp, tcp := tools[ToolIperfUDP], tools[ToolIperfTCP]
		if len(rep.Results) != 3 || udp.Flows != 2 || tcp.Flows != 2 {
			t.Fatalf("results %+v", rep.Results)
		}
		if udp.Datagram != tools[ToolAgent].Datagram || udp.SentGbps <= 0 || udp.GoodputGbps <= 0 || udp.GoodputGbps > udp.SentGbps*1.01 || udp.Packets == 0 || udp.CPUSeconds <= 0 {
			t.Errorf("iperf3 UDP: %+v", udp)
		}
		if tcp.GoodputGbps <= 0 || tcp.CPUSeconds <= 0 || tcp.MinFlowGbps <= 0 || tcp.MinFlowGbps > tcp.PerFlowGbps*1.01 {
			t.Errorf("iperf3 TCP: %+v", tcp)
		}
		if s := rep.Summaries[0]; s.AgentOverUDP <= 0 || s.AgentOverTCP <= 0 {
			t.Errorf("summary %+v", s)
		}
	})
}

// TestBenchPlanes: a chain of two planes; the agent spreads each flow over
// both (PLB), each plane carrying a share, every byte delivered.
func TestBenchPlanes(t *testing.T) {
	c := newTestChain(t, ChainOptions{Prefix: "p", Planes: 2})
	if len(c.Src) != 2 || len(c.Namespaces()) != 2+2*3 {
		t.Fatalf("addresses %v, namespaces %v", c.Src, c.Namespaces())
	}
	p := transport.DefaultParams()
	p.LB, p.PlaneMode, p.MTU = transport.ECMP, transport.PlanePLB, 0
	rep, err := Run(context.Background(), c.Path(0), Options{Flows: []int{2}, Bytes: 256 << 20, Params: p, Iperf3: "none", Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	t.Logf("%s; plane shares %v", r.line(), r.PlaneShare)
	if len(r.PlaneShare) != 2 || r.PlaneShare[0] < 0.2 || r.PlaneShare[1] < 0.2 {
		t.Errorf("plane shares %v: want both planes to carry the flows", r.PlaneShare)
	}
}
