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
// path's BDP, and iperf3's UDP and TCP figures come from the same path
// when iperf3 is installed. The speed figures are logged, not asserted:
// `fabricbench agent bench` checks them.
func TestBench(t *testing.T) {
	c := newTestChain(t, ChainOptions{})
	p := transport.DefaultParams()
	p.LB = transport.ECMP
	iperf := ""
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Logf("iperf3 not installed (%v): the agent alone", err)
		iperf = "none"
	}
	rep, err := Run(context.Background(), c.Path(0), Options{Flows: []int{1, 2}, Bytes: 256 << 20, Duration: time.Second, Params: p,
		Iperf3: iperf, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep.Table())
	want := 2
	if iperf == "" {
		want = 6
	}
	if len(rep.Results) != want || len(rep.Summaries) != 2 {
		t.Fatalf("%d results, %d summaries; want %d and 2", len(rep.Results), len(rep.Summaries), want)
	}
	if rep.BaseRTTus <= 0 || rep.BaseRTTus > 5000 {
		t.Errorf("measured base RTT %.1f us", rep.BaseRTTus)
	}
	for _, r := range rep.Results {
		if r.GoodputGbps <= 0 || r.PerFlowGbps <= 0 || r.MinFlowGbps <= 0 || r.CPUSeconds <= 0 || r.Seconds <= 0 {
			t.Errorf("%s with %d flows: empty figures %+v", r.Tool, r.Flows, r)
		}
		if r.Tool != ToolAgent {
			continue
		}
		if !r.GSO || !r.GRO {
			t.Errorf("agent with %d flows: GSO %v, GRO %v; this kernel has both", r.Flows, r.GSO, r.GRO)
		}
		if r.MinRTTus <= 0 || float64(r.MaxCwnd) < float64(r.PathBDP) {
			t.Errorf("agent with %d flows: window up to %d B, below the path's BDP %d B (RTT %.1f us)", r.Flows, r.MaxCwnd, r.PathBDP, r.MinRTTus)
		}
		// GSO: many datagrams per system call.
		if r.SendCalls == 0 || r.Packets/r.SendCalls < 2 {
			t.Errorf("agent with %d flows: %d data packets in %d send calls (both ends)", r.Flows, r.Packets, r.SendCalls)
		}
	}
}
