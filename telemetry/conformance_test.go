package telemetry

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/internal/gnmiconf"
)

// liveSource publishes ticks to a Server every few milliseconds of wall
// time until stopped: counters grow with the tick, the first device's
// first interface can be taken down.
type liveSource struct {
	srv  *Server
	devs []Device
	down atomic.Bool
	stop chan struct{}
	done sync.WaitGroup
}

func startLiveSource(t *testing.T, srv *Server, devs []Device, every time.Duration) *liveSource {
	ls := &liveSource{srv: srv, devs: devs, stop: make(chan struct{})}
	vals := make([][]int64, len(devs))
	for d := range devs {
		vals[d] = make([]int64, ValuesPerDevice(devs[d]))
	}
	ls.done.Add(1)
	go func() {
		defer ls.done.Done()
		tk := time.NewTicker(every)
		defer tk.Stop()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { <-ls.stop; cancel() }()
		for tick := int64(0); ; tick++ {
			for d := range devs {
				n := counterValues(&devs[d])
				for i := range n {
					vals[d][i] = tick*1000 + int64(i)
				}
				for ifn := range devs[d].Interfaces {
					oper := StatusUp
					if d == 0 && ifn == 0 && ls.down.Load() {
						oper = StatusDown
					}
					vals[d][n+2*ifn], vals[d][n+2*ifn+1] = oper, StatusUp
				}
			}
			if err := srv.Publish(ctx, testEpoch+tick*srv.base, vals); err != nil {
				return
			}
			select {
			case <-tk.C:
			case <-ls.stop:
				return
			}
		}
	}()
	t.Cleanup(func() { close(ls.stop); ls.done.Wait() })
	return ls
}

// The gNMI conformance suite (OpenConfig's gnmi_cli and the gnmic API)
// against the shared server: many devices (the simulator's shape: the
// empty target is every device) and one device (the kernel exporter's:
// the empty target is the device).
func TestGNMIConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the conformance suite builds gnmi_cli and takes about a minute")
	}
	devs := []Device{
		{Name: "leaf0", Interfaces: []string{"Ethernet0", "Ethernet4"}, Queues: true, Speeds: []int64{100e9, 400e9}},
		{Name: "host0", Interfaces: []string{"nic0"}, Speeds: []int64{100e9}},
		{Name: "spine0", Interfaces: []string{"Ethernet0", "Ethernet4", "Ethernet8"}, Queues: true},
	}
	for _, c := range []struct {
		name string
		devs []Device
	}{{"fabric", devs}, {"one device", devs[:1]}} {
		t.Run(c.name, func(t *testing.T) {
			srv := startServer(t, c.devs)
			src := startLiveSource(t, srv, c.devs, 10*time.Millisecond)
			user, pass := srv.Credentials()
			tg := gnmiconf.Target{Addr: srv.Addr(), Username: user, Password: pass,
				Flap: func(t testing.TB, down bool) { src.down.Store(down) }}
			for _, d := range c.devs {
				tg.Devices = append(tg.Devices, gnmiconf.Device{Name: d.Name, Interfaces: d.Interfaces, Queues: d.Queues})
			}
			gnmiconf.Run(t, tg)
		})
	}
}
