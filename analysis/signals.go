package analysis

import (
	"math"

	"github.com/fabricbench/fabricbench/telemetry"
)

// portSignals are one port's telemetry on the common grid: per bucket,
// the transmit rate, the queue high-water and the counter increases. A
// bucket without a sample is NaN (rate, queue) or 0 (counters, with
// has[k] false).
type portSignals struct {
	rate  []float64 // bps, NaN missing
	queue []float64 // bytes (max-queue-len high-water), NaN missing or no queue leaf
	drops []float64 // out-discards increase
	pkts  []float64 // out-pkts increase
	marks []float64 // ECN-marked packets
	trims []float64 // trimmed packets
	busy  []float64 // backlogged-ns increase: time the port sent back to back
	// PFC (pfc-* queue counters): pause frames the port sent (its
	// switch's ingress buffer for traffic arriving through it was full)
	// and received, and the time its egress was paused, ns.
	pauseTx, pauseRx, paused []float64
	has                      []bool  // an interval of the out-octets counter ends in the bucket
	line                     float64 // nominal line rate, bps
	// hasQueue: the port streams a queue high-water (switch ports on the
	// simulator, every shaped veth in the lab).
	hasQueue bool
	// hasBusy: the port streams backlogged-ns (the simulator does).
	hasBusy bool
	// hasPFC: the port streams the PFC counters (the simulator does,
	// zero without features.pfc; the kernel exporter does not).
	hasPFC bool
}

// minBusyFraction is the least share of an interval a port must have been
// backlogged for its service-rate bound to count: shorter stretches hold
// too few packets for a whole-packet counter to measure a rate.
const minBusyFraction = 0.1

// serviceRate is the upper bound on port's service rate in bucket k, bps:
// the bits it sent in the interval over the time it was backlogged (it
// sends back to back all that time). ok is false when the bucket has no
// rate or the port was backlogged for less than minBusyFraction of it.
//
// A port whose egress class was paused by its peer (PFC) held its queue
// without sending for the paused time: that time is not service, so it is
// taken off the backlogged time first. A port paused for the time it did
// not send is a victim of congestion downstream, not a slow link.
func (s *portSignals) serviceRate(k int, stepNs int64) (bps float64, ok bool) {
	if !s.hasBusy || math.IsNaN(s.rate[k]) || stepNs <= 0 {
		return 0, false
	}
	busy := s.busy[k] - s.paused[k]
	if busy < minBusyFraction*float64(stepNs) {
		return 0, false
	}
	return s.rate[k] * float64(stepNs) / busy, true
}

// pausedFrac is the share of bucket k's interval that port p's egress was
// paused (PFC), 0 without PFC counters.
func (s *portSignals) pausedFrac(k int, stepNs int64) float64 {
	if !s.hasPFC || stepNs <= 0 {
		return 0
	}
	return math.Min(1, s.paused[k]/float64(stepNs))
}

// signals returns (and caches) port p's signals.
func (a *analyzer) signals(p int) *portSignals {
	if s, ok := a.sigs[p]; ok {
		return s
	}
	ps := a.portSeries(p)
	s := &portSignals{line: float64(a.f.PortRate(p))}
	s.rate = a.outRate(p)
	s.has = make([]bool, a.g.n)
	for i, v := range s.rate {
		s.has[i] = !math.IsNaN(v)
	}
	s.drops = a.g.placeDelta(a.clip(ps.drops))
	s.pkts = a.g.placeDelta(a.clip(ps.pkts))
	s.marks = a.g.placeDelta(a.clip(ps.marks))
	s.trims = a.g.placeDelta(a.clip(ps.trims))
	busy := a.clip(ps.busy)
	s.hasBusy = busy != nil && len(busy.T) > 1 && a.busyStreamed()
	s.busy = a.g.placeDelta(busy)
	pz := a.clip(ps.paused)
	s.hasPFC = pz != nil && len(pz.T) > 1 && a.in.NoPFC == ""
	s.paused = a.g.placeDelta(pz)
	s.pauseTx = a.g.placeDelta(a.clip(ps.pauseTx))
	s.pauseRx = a.g.placeDelta(a.clip(ps.pauseRx))
	hw := a.clip(ps.hw)
	s.hasQueue = hw != nil && len(hw.T) > 1
	s.queue = a.g.placeGauge(hw)
	a.sigs[p] = s
	return s
}

// queueName is the name of the (first) queue the device streams for an
// interface, "" when it streams none.
func (a *analyzer) queueName(dev, iface string) string {
	if a.queues == nil {
		a.queues = map[[2]string]string{}
		for _, k := range a.idx.Keys() {
			if k.Measurement != telemetry.MeasQueue {
				continue
			}
			id := [2]string{k.Target, k.Interface}
			if _, ok := a.queues[id]; !ok {
				a.queues[id] = k.Queue
			}
		}
	}
	return a.queues[[2]string{dev, iface}]
}

// placeDelta puts the increases of a cumulative counter onto the grid: the
// increase over each sample interval lands in the bucket of the interval's
// end (a decrease, i.e. a reset, counts as 0). Buckets without an
// interval hold 0.
func (g grid) placeDelta(s *Series) []float64 {
	out := make([]float64, g.n)
	if s == nil {
		return out
	}
	for i := 1; i < len(s.T); i++ {
		d := s.V[i] - s.V[i-1]
		if d <= 0 {
			continue
		}
		k := g.bucket(s.T[i]) - g.k0
		if k < 0 || k >= g.n {
			continue
		}
		out[k] += float64(d)
	}
	return out
}

// placeGauge puts a per-interval gauge (a high-water mark reported at the
// interval's end) onto the grid, the largest value per bucket; NaN where
// no sample ends in the bucket. The first sample only opens the series.
func (g grid) placeGauge(s *Series) []float64 {
	out := make([]float64, g.n)
	for i := range out {
		out[i] = math.NaN()
	}
	if s == nil {
		return out
	}
	for i := 1; i < len(s.T); i++ {
		k := g.bucket(s.T[i]) - g.k0
		if k < 0 || k >= g.n {
			continue
		}
		if v := float64(s.V[i]); math.IsNaN(out[k]) || v > out[k] {
			out[k] = v
		}
	}
	return out
}

// busyStreamed reports whether the telemetry's backlogged-ns counters
// count: some switch port's counter increased by the end of the analysed
// window. An exporter with no source for the leaf (the netns lab's kernel
// exporter) serves it as a constant 0; the capacity test then infers the
// service rate from a rate plateau instead. Once true it stays true (a
// window analysis keeps it for the later windows).
func (a *analyzer) busyStreamed() bool {
	if a.busyOK != nil {
		return *a.busyOK
	}
	end := int64(math.MaxInt64)
	if a.win != nil {
		end = a.win[1]
	}
	ok := false
	for k, s := range a.idx.series {
		if ok || k.Measurement != telemetry.MeasQueue || k.Field != telemetry.FieldBackloggedNs {
			continue
		}
		for i := 1; i < len(s.T) && s.T[i] <= end; i++ {
			if s.V[i] > s.V[0] {
				ok = true
				break
			}
		}
	}
	a.busyOK = &ok
	return ok
}

// portSeries are the telemetry series of one port (nil where it streams
// none).
type portSeries struct {
	out, drops, pkts                                 *Series
	marks, trims, busy, hw, paused, pauseTx, pauseRx *Series
}

// portSeries looks up (and caches, once the port streams out-octets) the
// series of port p: a window analysis (live.go) shares the cache across
// windows, so that each window does not hash every key again.
func (a *analyzer) portSeries(p int) *portSeries {
	if a.pser != nil && a.pser[p] != nil {
		return a.pser[p]
	}
	pt := &a.f.Ports[p]
	dev := a.f.Nodes[pt.Node].Name
	q := a.queueName(dev, pt.Name)
	qk := func(field string) *Series {
		return a.idx.Get(telemetry.Key{Target: dev, Measurement: telemetry.MeasQueue, Interface: pt.Name, Queue: q, Field: field})
	}
	ps := &portSeries{
		out:   a.idx.Interface(dev, pt.Name, telemetry.FieldOutOctets),
		drops: a.idx.Interface(dev, pt.Name, telemetry.FieldOutDiscards),
		pkts:  a.idx.Interface(dev, pt.Name, telemetry.FieldOutPkts),
		marks: qk(telemetry.FieldECNMarkedPkts), trims: qk(telemetry.FieldTrimPkts),
		busy: qk(telemetry.FieldBackloggedNs), hw: qk(telemetry.FieldMaxQueueLen),
		paused: qk(telemetry.FieldPFCPausedNs), pauseTx: qk(telemetry.FieldPFCPauseTx), pauseRx: qk(telemetry.FieldPFCPauseRx),
	}
	if a.pser == nil {
		a.pser = make([]*portSeries, len(a.f.Ports))
	}
	if ps.out != nil {
		a.pser[p] = ps
	}
	return ps
}
