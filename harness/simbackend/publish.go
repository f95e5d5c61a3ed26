package simbackend

import (
	"context"
	"time"

	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/sim"
	"github.com/fabricbench/fabricbench/telemetry"
)

// Publisher serves a simulated fabric's telemetry through a gNMI server:
// every switch (its ports and their data queues) and every host NIC is a
// target named after its node, and each sample of the simulation
// (sim.Config.OnSample) publishes every port's counters, queue state and
// link state. The backend's runs and `fabricbench sim --serve-gnmi` use
// it.
type Publisher struct {
	devices []telemetry.Device
	ports   [][]int // device -> port IDs, in interface order
	values  [][]int64
	srv     *telemetry.Server
	// Epoch is the wall-clock time (ns since the Unix epoch) of simulated
	// time 0: a sample at simulated time t is published with the
	// timestamp Epoch + t.
	Epoch int64
	// Pace, when positive, paces the simulation to wall-clock time: a
	// sample at simulated time t is published no earlier than Pace*t
	// after the first sample (1: real time; 1000: a simulated millisecond
	// takes a second). 0: as fast as possible.
	Pace  float64
	start time.Time // wall time of the first paced sample
}

// NewPublisher lists the gNMI devices of f: every node, with its ports
// (their link rates as port-speed) and, for a switch, their data queues.
func NewPublisher(f *inventory.Fabric) *Publisher {
	p := &Publisher{}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		d := telemetry.Device{Name: n.Name, Queues: n.IsSwitch()}
		var ps []int
		for _, port := range n.Ports {
			d.Interfaces = append(d.Interfaces, f.Ports[port].Name)
			d.Speeds = append(d.Speeds, f.Links[f.Ports[port].Link].RateBps)
			ps = append(ps, port)
		}
		p.devices = append(p.devices, d)
		p.ports = append(p.ports, ps)
		p.values = append(p.values, make([]int64, telemetry.ValuesPerDevice(d)))
	}
	return p
}

// Devices are the gNMI devices (read-only).
func (p *Publisher) Devices() []telemetry.Device { return p.devices }

// Serve sets the server the samples are published to.
func (p *Publisher) Serve(srv *telemetry.Server) { p.srv = srv }

// Publish reads every port of s at simulated time now (ps) and publishes
// the values, after waiting for the pace. It blocks while a subscriber is
// behind (Server.Publish); an error ends the publishing (ctx done, the
// server closed).
func (p *Publisher) Publish(ctx context.Context, s *sim.Sim, now int64) error {
	for d := range p.devices {
		v := p.values[d]
		k := 0
		for _, port := range p.ports[d] {
			st := s.PortStats(port)
			v[k+0] = int64(st.InOctets)
			v[k+1] = int64(st.OutOctets)
			v[k+2] = int64(st.InPkts)
			v[k+3] = int64(st.OutPkts)
			v[k+4] = int64(st.Drops)
			// in-discards, in-errors, out-errors: the simulator drops at
			// egress only, and corrupts nothing.
			v[k+5], v[k+6], v[k+7] = 0, 0, 0
			k += len(telemetry.InterfaceFields)
			if p.devices[d].Queues {
				v[k+0] = int64(st.OutOctets)
				v[k+1] = int64(st.Drops)
				v[k+2] = int64(st.ECNMarked)
				v[k+3] = int64(st.Trims)
				v[k+4] = s.TakeQueueHighWater(port)
				v[k+5] = s.BackloggedNs(port)
				pfc := s.PortPFC(port)
				v[k+6] = int64(pfc.PauseTx)
				v[k+7] = int64(pfc.PauseRx)
				v[k+8] = int64(pfc.PausedPs / 1000)
				v[k+9] = int64(st.OutPkts)
				k += len(telemetry.QueueFields)
			}
		}
		// oper-status follows the link (a link fault takes it down); the
		// simulator never shuts a port administratively.
		for _, port := range p.ports[d] {
			v[k] = telemetry.StatusDown
			if s.PortUp(port) {
				v[k] = telemetry.StatusUp
			}
			v[k+1] = telemetry.StatusUp
			k += len(telemetry.StatusFields)
		}
	}
	if p.Pace > 0 {
		if p.start.IsZero() {
			p.start = time.Now()
		}
		due := p.start.Add(time.Duration(p.Pace * float64(now) / 1000))
		if wait := time.Until(due); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
		}
	}
	return p.srv.Publish(ctx, p.Epoch+now/1000, p.values)
}
