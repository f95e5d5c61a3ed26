package sim

import (
	"fmt"
	"math"
	"math/bits"
)

// This file is the NIC's delivery stage (Config.Delivery): a probe at the
// receiving host that sees every data packet the NIC delivers, before the
// endpoint state machine, and records, per group of flows (a job), the
// packet's one-way fabric latency (arrival time minus the sender's
// timestamp: the simulator has one clock) in a fixed log-linear histogram,
// and whether it arrived out of order (a first transmission with a PSN
// below one the flow's receiver has already seen: a later packet overtook
// it). Retransmissions and trimmed headers are counted apart: they are
// loss recovery, not fabric latency or reordering. The histograms are
// arrays sized in New; the stage allocates nothing per packet.

// Delivery configures the delivery stage.
type Delivery struct {
	Enabled bool
	// GroupOf maps flow indices (Matrix.Flows order) to groups (0..n-1);
	// nil puts every flow in group 0.
	GroupOf []int32
	// Groups is the number of groups (at least 1 when enabled).
	Groups int
}

// histSub is the number of linear sub-buckets per power of two: a relative
// resolution of 1/histSub (1.6%).
const (
	histSubBits = 6
	histSub     = 1 << histSubBits
	// histBuckets covers 0 .. 2^48 ps (281 s): values below histSub ps get
	// a bucket each, then histSub per power of two.
	histBuckets = (48-histSubBits+1)*histSub + histSub
)

// LatencyHist is a histogram of one-way latencies in picoseconds, with a
// relative bucket width of 1/64.
type LatencyHist struct {
	Counts   [histBuckets]uint64
	N        uint64
	Min, Max int64
	Sum      float64
}

func histBucket(v int64) int {
	if v < histSub {
		return int(max(v, 0))
	}
	e := 63 - bits.LeadingZeros64(uint64(v)) // v in [2^e, 2^(e+1))
	sub := int(v>>(e-histSubBits)) - histSub // 0..histSub-1
	b := (e-histSubBits+1)*histSub + sub
	return min(b, histBuckets-1)
}

// histLow is the smallest value of bucket b.
func histLow(b int) int64 {
	if b < histSub {
		return int64(b)
	}
	e := b/histSub + histSubBits - 1
	sub := b % histSub
	return int64(histSub+sub) << (e - histSubBits)
}

// Add records one latency.
func (h *LatencyHist) Add(v int64) {
	h.Counts[histBucket(v)]++
	if h.N == 0 || v < h.Min {
		h.Min = v
	}
	if v > h.Max {
		h.Max = v
	}
	h.N++
	h.Sum += float64(v)
}

// Quantile returns the p-quantile (0 <= p <= 1) by nearest rank, as the
// midpoint of its bucket clamped to [Min, Max]; NaN when empty.
func (h *LatencyHist) Quantile(p float64) float64 {
	if h.N == 0 {
		return math.NaN()
	}
	rank := uint64(math.Ceil(p*float64(h.N) - 1e-9))
	rank = min(max(rank, 1), h.N)
	var seen uint64
	for b := range h.Counts {
		seen += h.Counts[b]
		if seen >= rank {
			lo := histLow(b)
			hi := lo
			if b+1 < histBuckets {
				hi = histLow(b+1) - 1
			}
			mid := (float64(lo) + float64(hi)) / 2
			return math.Min(math.Max(mid, float64(h.Min)), float64(h.Max))
		}
	}
	return float64(h.Max)
}

// Mean returns the mean latency (NaN when empty).
func (h *LatencyHist) Mean() float64 {
	if h.N == 0 {
		return math.NaN()
	}
	return h.Sum / float64(h.N)
}

// DeliveryStats are one group's delivery counters.
type DeliveryStats struct {
	// Latency holds the one-way latency of first transmissions.
	Latency LatencyHist
	// Delivered counts data packets delivered (first transmissions),
	// OutOfOrder those of them that arrived after a higher PSN of their
	// flow, Retransmitted and Trimmed the rest.
	Delivered, OutOfOrder, Retransmitted, Trimmed uint64
	// CE counts the delivered data packets (first transmissions and
	// retransmissions, not trimmed headers) that arrived ECN-marked:
	// the end-to-end ECN marking ratio is CE / (Delivered +
	// Retransmitted).
	CE uint64
}

type deliveryState struct {
	on     bool
	groups []DeliveryStats
	of     []int32  // flow index -> group
	maxPSN []uint32 // flow index -> 1 + highest PSN delivered (0: none)
}

func (s *Sim) buildDelivery() error {
	c := s.cfg.Delivery
	if !c.Enabled {
		return nil
	}
	n := max(c.Groups, 1)
	if n > 1<<16 {
		return fmt.Errorf("sim: %d delivery groups, at most 65536", n)
	}
	if c.GroupOf != nil && len(c.GroupOf) != len(s.cfg.Matrix.Flows) {
		return fmt.Errorf("sim: delivery groups for %d flows, the matrix has %d", len(c.GroupOf), len(s.cfg.Matrix.Flows))
	}
	for i, g := range c.GroupOf {
		if g < 0 || int(g) >= n {
			return fmt.Errorf("sim: flow %d in delivery group %d, want 0..%d", i, g, n-1)
		}
	}
	d := &s.dl
	d.on = true
	d.groups = make([]DeliveryStats, n)
	d.of = c.GroupOf
	d.maxPSN = make([]uint32, len(s.cfg.Matrix.Flows))
	return nil
}

// deliveryStage records data packet pkt arriving at its receiver.
func (s *Sim) deliveryStage(pkt *packet) {
	d := &s.dl
	g := int32(0)
	if d.of != nil {
		g = d.of[pkt.flow]
	}
	st := &d.groups[g]
	switch {
	case pkt.flags&pfTrimmed != 0:
		st.Trimmed++
		return
	}
	if pkt.flags&pfECN != 0 {
		st.CE++
	}
	switch {
	case pkt.flags&pfRetx != 0:
		st.Retransmitted++
		return
	}
	st.Delivered++
	st.Latency.Add(s.now - pkt.ts)
	if m := &d.maxPSN[pkt.flow]; pkt.psn+1 > *m {
		*m = pkt.psn + 1
	} else {
		st.OutOfOrder++
	}
}

// Delivery returns the delivery stage's counters of group g (nil when the
// stage is off or g is out of range).
func (s *Sim) Delivery(g int) *DeliveryStats {
	if !s.dl.on || g < 0 || g >= len(s.dl.groups) {
		return nil
	}
	return &s.dl.groups[g]
}
