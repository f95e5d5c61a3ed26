package simbackend

import (
	"fmt"
	"math"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/sim"
)

// jobGroups puts every flow in its job's delivery group.
func jobGroups(w *runspec.Workload) []int32 {
	g := make([]int32, len(w.FlowJob))
	for i, j := range w.FlowJob {
		g[i] = int32(j)
	}
	return g
}

// LatencyQuantiles are the one-way latency quantiles the delivery stage
// reports per job, as job metrics latency_<name>_us.
var LatencyQuantiles = []struct {
	Name string
	P    float64
}{
	{"p1", 0.01}, {"p5", 0.05}, {"p10", 0.10}, {"p25", 0.25}, {"p50", 0.50}, {"p75", 0.75},
	{"p90", 0.90}, {"p95", 0.95}, {"p99", 0.99}, {"p999", 0.999},
}

// deliveryMetrics are a job's delivery-stage figures: one-way latency
// quantiles (µs), packets delivered, out of order, retransmitted.
func deliveryMetrics(d *sim.DeliveryStats) map[string]float64 {
	if d == nil {
		return nil
	}
	m := map[string]float64{
		"delivered_packets":     float64(d.Delivered),
		"ooo_packets":           float64(d.OutOfOrder),
		"retransmitted_arrived": float64(d.Retransmitted),
		"ce_packets":            float64(d.CE),
	}
	if d.Latency.N == 0 {
		return m
	}
	us := func(ps float64) float64 { return math.Round(ps/1e3) / 1e3 }
	for _, q := range LatencyQuantiles {
		m["latency_"+q.Name+"_us"] = us(d.Latency.Quantile(q.P))
	}
	m["latency_min_us"] = us(float64(d.Latency.Min))
	m["latency_max_us"] = us(float64(d.Latency.Max))
	m["latency_mean_us"] = us(d.Latency.Mean())
	return m
}

// bmwgExtras adds the fabric figures of the simulator's BMWG stages to a
// run's result: the PFC watchdog and deadlock, the loss window of link
// failures, flowlets and the ECN marking profile.
func bmwgExtras(s *sim.Sim, res *sim.Result, feat runspec.Features, links []sim.LinkEvent, out *harness.RunResult) {
	x := out.Extra
	if feat.PFC {
		ev, drops := s.PFCWatchdog()
		paused := s.PFCPausedNow()
		x["pfc_paused_at_end"] = float64(paused)
		deadlock := 0.0
		if res.EndReason == sim.EndStalled && paused > 0 && res.Incomplete > 0 {
			deadlock = 1
		}
		x["pfc_deadlock"] = deadlock
		if feat.PFCWatchdogDetect > 0 {
			x["pfc_watchdog_events"] = float64(ev)
			x["pfc_watchdog_drops"] = float64(drops)
		}
	}
	if feat.Flowlet {
		x["flowlets"] = float64(s.Flowlets())
	}
	// Failover: from the first link going down to the last packet lost to
	// a failure.
	var down int64 = -1
	for _, le := range links {
		if !le.Up && (down < 0 || le.At < down) {
			down = le.At
		}
	}
	if down >= 0 {
		n, _, last := s.LinkLoss()
		x["failover_lost_packets"] = float64(n)
		d := 0.0
		if n > 0 && last >= down {
			d = float64(last-down) / 1e6
		}
		x["loss_duration_us"] = d
	}
	if p := s.ECNProfile(); p != nil {
		out.ECNProfile = &results.ECNProfile{BucketBytes: p.BucketBytes, KMinBytes: p.KMin, KMaxBytes: p.KMax, Seen: p.Seen, Marked: p.Marked}
	}
}

// DescribeDUT implements harness.DUTDescriber: the simulated switches.
func (b *Backend) DescribeDUT(p *runspec.RunSpec) *results.DUT {
	ft := p.Features
	q := "one bandwidth-delay product per port (features.queue: bdp)"
	if ft.QueueBytes > 0 {
		q = fmt.Sprintf("%d bytes per port and class", ft.QueueBytes)
	} else if ft.QueueLongestPath {
		q = "sized for the longest path (features.queue: longest-path)"
	}
	buf := "output-queued switches, one data queue per egress port (" + q + ") and a priority control queue"
	if ft.ECN {
		buf += fmt.Sprintf("; RED/ECN marking at dequeue between kmin %g and kmax %g of the queue", ft.KMin, ft.KMax)
	}
	if ft.Trimming {
		buf += "; packet trimming on a full queue"
	}
	if ft.PFC {
		buf += "; PFC: lossless class with XOFF at the queue size plus one link's headroom, XON two MTUs below"
		if ft.PFCWatchdogDetect > 0 {
			buf += fmt.Sprintf(", watchdog detecting after %g us", float64(ft.PFCWatchdogDetect)/1e6)
		}
	}
	ver := harness.BuildVersion()
	return &results.DUT{
		Kind:        "simulated",
		Description: "fabricbench reference simulator (package sim): packet-level, deterministic, store-and-forward switches with per-node forwarding latency",
		BufferModel: buf,
		Devices:     harness.SwitchDevices(p.Fabric, "fabricbench-sim", ver, "none (simulated)"),
		Host:        harness.AgentDescription(p) + "; simulated NICs at line rate, the agents' transport state machines (agents/transport)",
	}
}
