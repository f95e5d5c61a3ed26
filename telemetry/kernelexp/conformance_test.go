package kernelexp

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/internal/gnmiconf"
)

// The gNMI conformance suite (OpenConfig's gnmi_cli and the gnmic API)
// against the kernel exporter serving a switch of two veth ports in a
// namespace of its own: ping keeps the first port's counters moving, and
// the suite's link flap is `ip link set x1 down` and up again, which the
// exporter serves as oper-status (and admin-status) DOWN, then UP.
func TestGNMIConformance(t *testing.T) {
	requireRoot(t)
	if testing.Short() {
		t.Skip("-short: the conformance suite builds gnmi_cli and takes about a minute")
	}
	if _, err := exec.LookPath("ping"); err != nil {
		t.Skipf("kernelexp: skipping, ping not found: %v", err)
	}
	l := newLab(t, 2)
	e, stop := startExporter(t, Config{
		Device: "leaf0", Netns: l.a, Queues: true, Interval: 10 * time.Millisecond,
		Interfaces: []Interface{{Name: "Ethernet0", Dev: l.x(1), Speed: 100e9}, {Name: "Ethernet4", Dev: l.x(2)}},
	}, nil)
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	ping := exec.CommandContext(ctx, "ip", "netns", "exec", l.a, "ping", "-q", "-i", "0.02", l.dst(1))
	if err := ping.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = ping.Wait() })

	gnmiconf.Run(t, gnmiconf.Target{
		Addr: e.Addr(), Username: testUser, Password: testPass,
		Devices: []gnmiconf.Device{{Name: "leaf0", Interfaces: []string{"Ethernet0", "Ethernet4"}, Queues: true}},
		Flap: func(t testing.TB, down bool) {
			state := "up"
			if down {
				state = "down"
			}
			run(t, "ip", "-n", l.a, "link", "set", l.x(1), state)
		},
	})
}
