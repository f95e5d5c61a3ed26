package transport

import (
	"fmt"
	"math/bits"
)

// Params are the transport settings shared by every flow of a run. In
// JSON (the agent's configuration) CC and LB are names ("nscc", "reps")
// and times are picoseconds (the keys ending in _ps).
type Params struct {
	MTU         int    `json:"mtu"`          // payload bytes per full data packet
	HeaderBytes int    `json:"header_bytes"` // header bytes on every data packet (wire size = payload + header)
	AckBytes    int    `json:"ack_bytes"`    // wire size of ACKs, NACKs and trimmed headers
	CC          CCKind `json:"cc"`
	LB          LBKind `json:"lb"`
	// QuickAdapt and FastIncrease apply to DCTCP; NSCC always uses both.
	QuickAdapt   bool `json:"quick_adapt"`
	FastIncrease bool `json:"fast_increase"`
	// ECNFastIncrease makes DCTCP's FastIncrease count every ACK without an
	// ECN mark as uncongested, whatever its RTT, instead of only those with
	// an RTT near the base RTT: the ECN-only congestion control Spritz
	// evaluates (Sec. V-A: "using only the ECN signal ... preferred due to
	// variable-length paths"). With one base RTT and paths (and ACK return
	// paths) of different lengths, the delay test never passes for ACKs of
	// the longer paths, and each such ACK restarts FastIncrease's count.
	// NSCC ignores it.
	ECNFastIncrease bool `json:"ecn_fast_increase"`
	// TargetRTT is the target RTT as a multiple of the path's base RTT
	// (trtt, SMaRTT Sec. III-J; NSCC's core cases and the QuickAdapt window
	// of NSCC and DCTCP); 0: TargetFactor (1.5). Otherwise in (1, 10].
	TargetRTT float64 `json:"target_rtt"`
	// MaxWindow is the largest congestion window (and the initial one) in
	// path BDPs (Sec. III-J); 0: MaxWindowBDP (1.5). Otherwise in (0, 100].
	MaxWindow float64 `json:"max_window"`
	// Trimming tells the congestion control whether the fabric trims. When it
	// does not, QuickAdapt is triggered by delay instead of by NACKs.
	Trimming bool `json:"trimming"`
	// RTO is the retransmission timeout; 0 derives it from the path (see RTOFor).
	RTO Time `json:"rto_ps"`
	// MeasureRTO makes every sender measure its RTT and derive its RTO from
	// it (RFC 6298; see RTTEstimator in rtt.go). The fixed RTO above (or the
	// path's) is then the initial RTO and the floor. The simulator leaves it
	// off (its model RTO is exact there); the UDP agent turns it on, because
	// the host adds latency no fabric model knows.
	MeasureRTO bool `json:"measure_rto"`
	// RTOGranularity is G of RFC 6298 for MeasureRTO; 0: DefaultRTOGranularity.
	RTOGranularity Time `json:"rto_granularity_ps"`
	// MaxRTO caps the measured, backed-off RTO; 0: DefaultMaxRTO.
	MaxRTO Time `json:"max_rto_ps"`
	// Entropies is the size of the entropy space (at most 65536).
	Entropies uint32 `json:"entropies"`
	// EntropyRun makes the load balancer's choice hold for this many
	// consecutive packets of a flow (a flowcell, as Flicr's, for every
	// balancer); 0 or 1: a choice per packet. A real host's kernel sends
	// a run on one path as one UDP GSO message (agents/dataplane), so
	// spraying costs it a packet per run instead of per packet. At most
	// 1024.
	EntropyRun int `json:"entropy_run"`
	// OPSCycle makes OPS walk every entropy once per cycle, in an order
	// shuffled anew each cycle (htsim_uec's "oblivious" load balancer),
	// instead of drawing each packet's entropy independently at random (the
	// default, the textbook oblivious packet spraying). Other load
	// balancers ignore it.
	OPSCycle bool `json:"ops_cycle"`
	// REPSWarmup makes REPS send its first window (the initial window's
	// packets, at most Entropies of them) on entropies 1, 2, 3, ... in turn,
	// as htsim_uec's REPS does, before it recycles entropies or draws fresh
	// ones at random (the default draws at random from the first packet).
	REPSWarmup bool `json:"reps_warmup"`
	// REPSBuffer is the number of recycled entropies REPS keeps.
	REPSBuffer int `json:"reps_buffer"`
	// Path-aware load balancing (spritz.go); 0 takes the paper's default.
	SpritzBuffer       int     `json:"spritz_buffer"`        // cached good paths (8)
	SpritzExplore      int     `json:"spritz_explore"`       // packets between forced explorations (44)
	SpritzECNThreshold int     `json:"spritz_ecn_threshold"` // ECN marks before Scout drops a path (8)
	SpritzWeightScale  float64 `json:"spritz_weight_scale"`  // w_scale on the shorter paths' weights (3)
	SpritzBlock        Time    `json:"spritz_block_ps"`      // a path that timed out is not sampled for this long (500 us)
	SpritzUniform      bool    `json:"spritz_uniform"`       // every path weight 1 (the paper's "(u)" variants) instead of Eq. 1
	FlicrCell          int     `json:"flicr_cell"`           // Flicr flowcell, packets (16)
	// AckMinimal makes a receiver that has a path list towards the sender
	// (source-guided routing) send its ACKs on the minimal paths of its
	// list instead of on the data packet's entropy (ackroute.go), as
	// Spritz's BDP (the longest data path plus a minimal return) suggests.
	// The ACK echoes the data entropy either way. Off by default: with
	// failed links a dead minimal reverse path loses every ACK of the flow
	// (not only those of the data paths whose reverse is dead) until the
	// receiver sees a duplicate, and Spritz blocks every path that timed out.
	AckMinimal bool `json:"ack_minimal"`
	// OWD path selection (owd.go); 0 takes the paper's default.
	OWDPaths  int     `json:"owd_paths"`  // candidates: 1 shortest + OWDPaths-1 non-shortest (8)
	OWDDelta1 float64 `json:"owd_delta1"` // switch when the delay is below the current x this (0.8)
	OWDDelta2 float64 `json:"owd_delta2"` // and lower by more than this many MTU times (75)
	OWDDelta3 int     `json:"owd_delta3"` // a probe every max(cwnd, this) data packets (100)
	// GoBackN replaces selective repeat (LERP: SACK, per-packet NACKs) by
	// go-back-N, as RoCE without it: the receiver accepts only the next
	// PSN, and the sender, told of a gap (a go-back NACK) or on a timeout,
	// resends every outstanding packet from the gap on. Needs per-packet
	// ACKs.
	GoBackN bool   `json:"go_back_n"`
	Seed    uint64 `json:"seed"`

	// ACK coalescing (Receiver). With AckEvery and AckEveryBytes both 0 the
	// receiver acknowledges every data packet (the default). Otherwise it
	// holds its ACK until AckEvery packets, or AckEveryBytes wire bytes,
	// arrived since its previous ACK, and answers at once on an ECN-marked
	// packet, a packet with AckReq, the first packet of the flow, the packet
	// that completes it, a duplicate or a trimmed header (NACK), as htsim's
	// UEC sink does (its default: 16384 bytes, no timer). The ACK then
	// carries a selective bitmap of the packets it covers (Ack.Sack).
	AckEvery      int `json:"ack_every"`       // packets per ACK, at most SackBits; 0 or 1: every packet
	AckEveryBytes int `json:"ack_every_bytes"` // wire bytes per ACK; 0: no byte threshold
	// AckDelay, when > 0, bounds how long a coalescing receiver holds an
	// ACK: it is sent AckDelay after the first arrival it covers.
	AckDelay Time `json:"ack_delay_ps"`

	// Planes is the number of planes a sender spreads each flow over (its
	// NIC's ports, one per plane; plane.go); 0 or 1: a single plane. At
	// most MaxPlanes.
	Planes int `json:"planes"`
	// PlaneMode is how (plb, global or entropy; PLB by default).
	PlaneMode PlaneMode `json:"plane_mode"`
}

// Coalescing reports whether receivers coalesce ACKs.
func (p *Params) Coalescing() bool { return p.AckEvery > 1 || p.AckEveryBytes > 0 }

// DefaultParams returns the defaults used by the simulator and the agent.
func DefaultParams() Params {
	return Params{MTU: 4096, HeaderBytes: 64, AckBytes: 64, CC: NSCC, LB: REPS, Trimming: true,
		QuickAdapt: true, FastIncrease: true, Entropies: 1 << 16, REPSBuffer: 8}
}

// Validate checks the parameters.
func (p *Params) Validate() error {
	switch {
	case p.MTU < 64 || p.MTU > 1<<20:
		return fmt.Errorf("mtu %d out of range [64, 1048576]", p.MTU)
	case p.HeaderBytes < 0 || p.HeaderBytes > 1024:
		return fmt.Errorf("header size %d out of range [0, 1024]", p.HeaderBytes)
	case p.AckBytes < 1 || p.AckBytes > 1024:
		return fmt.Errorf("ack size %d out of range [1, 1024]", p.AckBytes)
	case p.RTO < 0:
		return fmt.Errorf("negative rto")
	case p.RTOGranularity < 0 || p.MaxRTO < 0:
		return fmt.Errorf("negative rto granularity or max rto")
	case p.TargetRTT != 0 && !(p.TargetRTT > 1 && p.TargetRTT <= 10):
		return fmt.Errorf("target rtt %g x base rtt out of range (1, 10]", p.TargetRTT)
	case p.MaxWindow != 0 && !(p.MaxWindow > 0 && p.MaxWindow <= 100):
		return fmt.Errorf("max window %g x bdp out of range (0, 100]", p.MaxWindow)
	case p.AckEvery < 0 || p.AckEvery > SackBits:
		return fmt.Errorf("ack every %d packets out of range [0, %d]", p.AckEvery, SackBits)
	case p.AckEveryBytes < 0 || p.AckEveryBytes > 1<<26:
		return fmt.Errorf("ack every %d bytes out of range [0, %d]", p.AckEveryBytes, 1<<26)
	case p.AckDelay < 0 || p.AckDelay > Second:
		return fmt.Errorf("ack delay %d ps out of range [0, 1s]", p.AckDelay)
	case p.Planes < 0 || p.Planes > MaxPlanes:
		return fmt.Errorf("planes %d out of range [0, %d]", p.Planes, MaxPlanes)
	case p.PlaneMode > PlaneEntropy:
		return fmt.Errorf("unknown plane mode %d", p.PlaneMode)
	case p.SpritzBuffer < 0 || p.SpritzBuffer > 1024:
		return fmt.Errorf("spritz buffer %d paths out of range [0, 1024]", p.SpritzBuffer)
	case p.SpritzExplore < 0 || p.SpritzExplore > 1<<20:
		return fmt.Errorf("spritz explore threshold %d packets out of range [0, %d]", p.SpritzExplore, 1<<20)
	case p.SpritzECNThreshold < 0 || p.SpritzECNThreshold > 254:
		return fmt.Errorf("spritz ecn threshold %d packets out of range [0, 254]", p.SpritzECNThreshold)
	case p.SpritzWeightScale < 0 || p.SpritzWeightScale > 1000 || p.SpritzWeightScale != p.SpritzWeightScale:
		return fmt.Errorf("spritz weight scale %g out of range [0, 1000]", p.SpritzWeightScale)
	case p.SpritzBlock < 0 || p.SpritzBlock > Second:
		return fmt.Errorf("spritz block %d ps out of range [0, 1s]", p.SpritzBlock)
	case p.GoBackN && p.Coalescing():
		return fmt.Errorf("go-back-n needs per-packet ACKs (no ack coalescing)")
	case p.OWDPaths < 0 || p.OWDPaths > MaxOWDPaths:
		return fmt.Errorf("owd paths %d out of range [0, %d]", p.OWDPaths, MaxOWDPaths)
	case p.OWDDelta1 < 0 || p.OWDDelta1 > 1 || p.OWDDelta1 != p.OWDDelta1:
		return fmt.Errorf("owd delta1 %g out of range [0, 1]", p.OWDDelta1)
	case p.OWDDelta2 < 0 || p.OWDDelta2 > 1e6 || p.OWDDelta2 != p.OWDDelta2:
		return fmt.Errorf("owd delta2 %g MTU times out of range [0, 1e6]", p.OWDDelta2)
	case p.OWDDelta3 < 0 || p.OWDDelta3 > 1<<20:
		return fmt.Errorf("owd delta3 %d packets out of range [0, %d]", p.OWDDelta3, 1<<20)
	case p.EntropyRun < 0 || p.EntropyRun > 1024:
		return fmt.Errorf("entropy run %d packets out of range [0, 1024]", p.EntropyRun)
	case p.FlicrCell < 0 || p.FlicrCell > 1<<20:
		return fmt.Errorf("flicr cell %d packets out of range [0, %d]", p.FlicrCell, 1<<20)
	}
	return nil
}

// targetFactor is the target RTT over the base RTT (TargetRTT or its default).
func (p *Params) targetFactor() float64 {
	if p.TargetRTT > 0 {
		return p.TargetRTT
	}
	return TargetFactor
}

// maxWindowBDPs is the window clamp in BDPs (MaxWindow or its default).
func (p *Params) maxWindowBDPs() float64 {
	if p.MaxWindow > 0 {
		return p.MaxWindow
	}
	return MaxWindowBDP
}

// Path describes what the sender knows of its path.
type Path struct {
	BaseRTT Time  // unloaded round-trip time
	RateBps int64 // line rate of the bottleneck (the sender NIC)
	// RTO is the retransmission timeout for this path; 0 derives one (RTOFor).
	RTO Time
}

// BDP returns the bandwidth-delay product in bytes.
func (p Path) BDP() float64 { return float64(p.RateBps) * float64(p.BaseRTT) / 8e12 }

// Flow is what a sender needs to know about its flow.
type Flow struct {
	ID   uint32
	Size int64 // payload bytes
	Path Path
	// Paths, on a source-guided fabric, are the paths towards the
	// destination's switch, sorted by EV (spritz.go); shared read-only
	// between flows. Nil elsewhere: the path-aware load balancers then use
	// the coarse-grained list of Params.Entropies equal-weight EVs.
	Paths []PathEV
}

// Packets returns the number of data packets a flow of size bytes needs at
// mtu payload bytes per packet (0 for a non-positive mtu). The count is
// exact; more than MaxPackets is more than a flow may have (CheckFlowSize).
func Packets(size int64, mtu int) uint64 {
	if size <= 0 {
		return 1
	}
	if mtu <= 0 {
		return 0
	}
	return uint64(size-1)/uint64(mtu) + 1
}

// MaxSpan is the most packets a sender keeps between its lowest
// unacknowledged PSN and its next new one: it sends no new packet beyond
// base+MaxSpan-1, and a receiver tracks arrivals up to MaxSpan packets above
// its cumulative point. Per-flow state is sized by the span actually used
// (a few windows; it grows by doubling), never by the flow size, and is at
// most MaxSpan entries.
const MaxSpan = 1 << 18

// maxRTO bounds the RTO so that a send time plus the RTO cannot overflow.
const maxRTO = Time(1) << 60

// slot is the sender's state of one packet in [base, nextNew).
type slot struct {
	sentAt Time   // latest transmission
	ent    uint16 // its entropy
	st     uint8  // stSent, stAcked, stOut, stRtxQ
	plane  uint8  // plane it was sent on (multi-plane senders)
}

// entry state bits.
const (
	stSent  uint8 = 1 << iota // transmitted at least once
	stAcked                   // acknowledged
	stOut                     // counted in flight
	stRtxQ                    // waiting in the retransmission queue
)

// Sender is the sending side of one flow.
type Sender struct {
	p       *Params
	f       Flow
	npkts   uint32
	last    int32 // payload of the last packet
	wire    int64 // wire size of a full packet
	rto     Time
	paceBps int64

	nextNew uint32 // next never-sent PSN
	base    uint32 // lowest unacknowledged PSN
	// ring holds the packets in [base, nextNew) at index psn&mask; its
	// length is a power of two, grown on demand up to MaxSpan.
	ring    []slot
	mask    uint32
	rtxq    []uint32 // FIFO of PSNs to retransmit
	rtxHead int

	// send-order FIFO for timeouts: (psn, sentAt) in transmission order;
	// stale entries (acked or re-sent since) are dropped lazily.
	order     []orderEnt
	orderHead int

	inflight int64 // wire bytes in flight
	acked    uint32
	nextSend Time // pacing: earliest next transmission
	cc       controller
	lb       balancer
	rng      rng
	est      *RTTEstimator // nil unless Params.MeasureRTO
	pl       *planes       // nil unless Params.Planes > 1 (plane.go)
	// The route entropy of the latest ACK received, echoed in data
	// packets (Data.AckRoute; ackroute.go).
	ackRoute    uint16
	hasAckRoute bool
	// Slow start after an OWD path change (owd.go): the window grows
	// from one packet by the acknowledged bytes up to ssthresh; no packet
	// leaves before idleUntil while packets are in flight on the old path.
	slowStart bool
	ssthresh  float64
	idleUntil Time
	// Bytes still in flight on earlier paths after a path change: they
	// do not count against the new path's window.
	oldIn int64
	// lastAck is when the latest ACK or NACK arrived (0: none yet).
	lastAck Time
	// rtoPermit lets the next retransmission go whatever the window says
	// (measured RTO only; see OnTimeout).
	rtoPermit bool

	Stats SenderStats
}

type orderEnt struct {
	psn uint32
	at  Time
}

// SenderStats counts what a sender did.
type SenderStats struct {
	Sent      uint64 // new data packets
	Retx      uint64 // retransmitted data packets
	Nacks     uint64
	Timeouts  uint64
	ECNAcks   uint64
	Completed Time   // time the last ACK arrived (0 while running)
	Spurious  uint64 // retransmitted packets whose first ACK echoed an earlier transmission (rtt.go); at most Retx
	Probes    uint64 // path test messages sent (OWD)
	// PathRestarts counts OWD path changes that restarted slow start.
	PathRestarts uint64
}

// NewSender creates the sender for f. Its memory does not depend on the
// flow size (see MaxSpan). It panics when f.Size needs more than MaxPackets
// packets: callers refuse such flows first (CheckFlowSize).
func NewSender(p *Params, f Flow) *Sender {
	n64 := Packets(f.Size, p.MTU)
	if n64 == 0 || n64 > MaxPackets {
		panic(fmt.Sprintf("transport: flow %d: %v", f.ID, CheckFlowSize(f.Size, p.MTU)))
	}
	n := uint32(n64)
	s := &Sender{p: p, f: f, npkts: n}
	s.last = int32(f.Size - int64(n-1)*int64(p.MTU))
	if f.Size <= 0 {
		s.last = 0
	}
	s.wire = int64(p.MTU + p.HeaderBytes)
	c := uint32(64)
	for c > 1 && c/2 >= n {
		c /= 2
	}
	s.ring, s.mask = make([]slot, c), c-1
	s.rng = newRNG(p.Seed, uint64(f.ID)+1)
	s.lb = newBalancer(p.LB, p.Entropies, p.REPSBuffer, &s.rng, p, f.Paths)
	if p.OPSCycle {
		s.lb.setCycle()
	}
	if p.LB == OWD {
		s.lb.ow = newOWD(p, f, &s.rng)
	}
	if p.Planes > 1 {
		// Per plane the path is the flow's path (Path.RateBps: one NIC
		// port's rate); a shared window spans all planes.
		s.pl = newPlanes(p, f.Path, s.wire)
		all := f.Path
		all.RateBps *= int64(p.Planes)
		s.cc = newController(p, all, s.wire)
	} else {
		s.cc = newController(p, f.Path, s.wire)
	}
	if p.REPSWarmup && p.LB == REPS {
		w := s.cc.window() / float64(s.wire)
		s.lb.warm = s.lb.entropies
		if w < float64(s.lb.entropies) {
			s.lb.warm = uint32(w)
		}
	}
	s.rto = p.RTO
	if s.rto <= 0 {
		s.rto = f.Path.RTO
	}
	if s.rto <= 0 {
		s.rto = RTOFor(f.Path)
	}
	s.rto = min(s.rto, maxRTO)
	if p.MeasureRTO {
		s.est = NewRTTEstimator(p.rttConfig(s.rto))
		s.rto = s.est.RTO()
	}
	return s
}

// RTOFor derives a retransmission timeout for a path when the fabric's queue
// sizes are unknown: 7 base RTTs, the worst case the SMaRTT paper derives
// (6 BDPs of queues plus 1 BDP in flight), with a 10 us floor.
func RTOFor(p Path) Time {
	rto := 7 * p.BaseRTT
	if rto < 10*Microsecond {
		rto = 10 * Microsecond
	}
	return rto
}

// SetPacing limits the sender to rateBps (0 = unpaced, the NIC paces).
func (s *Sender) SetPacing(rateBps int64) { s.paceBps = rateBps }

// Packets returns the number of data packets in the flow.
func (s *Sender) Packets() uint32 { return s.npkts }

// Acked returns the number of packets acknowledged so far.
func (s *Sender) Acked() uint32 { return s.acked }

// Done reports whether every packet has been acknowledged.
func (s *Sender) Done() bool { return s.acked == s.npkts }

// Cwnd returns the congestion window in bytes.
func (s *Sender) Cwnd() float64 {
	if s.pl != nil && s.pl.mode == PlanePLB {
		w := 0.0
		for i := 0; i < s.pl.n; i++ {
			w += s.pl.cc[i].window()
		}
		return w
	}
	return s.cc.window()
}

// Inflight returns the wire bytes in flight.
func (s *Sender) Inflight() int64 { return s.inflight }

// QueuedRetx returns the number of packets waiting for retransmission.
func (s *Sender) QueuedRetx() int { return len(s.rtxq) - s.rtxHead }

// LastAck returns when the latest ACK or NACK arrived (0: none yet).
func (s *Sender) LastAck() Time { return s.lastAck }

// Unsent returns the number of packets never sent yet.
func (s *Sender) Unsent() uint32 { return s.npkts - s.nextNew }

// slot returns the state of psn, which must be in [base, nextNew).
func (s *Sender) slot(psn uint32) *slot { return &s.ring[psn&s.mask] }

// grow doubles the ring, keeping the packets in [base, nextNew).
func (s *Sender) grow() {
	n := uint32(len(s.ring)) * 2
	nr := make([]slot, n)
	for q := s.base; q != s.nextNew; q++ {
		nr[q&(n-1)] = s.ring[q&s.mask]
	}
	s.ring, s.mask = nr, n-1
}

func (s *Sender) pktWire(psn uint32) int64 {
	if psn == s.npkts-1 {
		return int64(s.last) + int64(s.p.HeaderBytes)
	}
	return s.wire
}

// CanSend reports whether a packet may be sent at now (window and pacing).
func (s *Sender) CanSend(now Time) bool {
	if s.pl != nil {
		return s.canSendAny(now)
	}
	if s.paceBps > 0 && now < s.nextSend {
		return false
	}
	if now < s.idleUntil && s.oldIn > 0 {
		return false // a path change: the old path drains first (owd.go)
	}
	return s.hasEligible()
}

func (s *Sender) hasEligible() bool {
	if s.rtxHead < len(s.rtxq) {
		return s.rtoPermit || s.windowAllows(s.pktWire(s.rtxq[s.rtxHead]))
	}
	if s.nextNew < s.npkts && s.nextNew-s.base < MaxSpan {
		return s.windowAllows(s.pktWire(s.nextNew))
	}
	return false
}

func (s *Sender) windowAllows(size int64) bool {
	in := s.inflight - s.oldIn // after a path change, the new path's (owd.go)
	return in == 0 || float64(in+size) <= s.cc.window()
}

// NextSendTime returns when pacing next allows a transmission (0 if unpaced).
func (s *Sender) NextSendTime() Time { return s.nextSend }

// NextPacket fills d with the next packet to transmit at now and returns its
// wire size, or returns 0 when the window (or pacing) allows nothing.
func (s *Sender) NextPacket(now Time, d *Data) int64 {
	if s.pl != nil {
		return s.NextPacketOn(now, -1, d)
	}
	if !s.CanSend(now) {
		return 0
	}
	e := s.lb.next(now)
	if s.lb.ow != nil {
		s.lb.ow.sent(int(s.cc.window() / float64(s.wire)))
	}
	return s.emit(now, d, e, 0)
}

// emit sends the next packet (a retransmission first) with entropy e on
// plane p.
func (s *Sender) emit(now Time, d *Data, e uint16, p int) int64 {
	var psn uint32
	retx := false
	if s.rtxHead < len(s.rtxq) {
		psn = s.rtxq[s.rtxHead]
		s.rtxHead++
		if s.rtxHead == len(s.rtxq) {
			s.rtxq, s.rtxHead = s.rtxq[:0], 0
		}
		s.slot(psn).st &^= stRtxQ
		retx = true
		s.rtoPermit = false
		s.Stats.Retx++
	} else {
		psn = s.nextNew
		if psn-s.base == uint32(len(s.ring)) {
			s.grow()
		}
		*s.slot(psn) = slot{}
		s.nextNew++
		s.Stats.Sent++
	}
	size := s.pktWire(psn)
	sl := s.slot(psn)
	sl.st |= stSent | stOut
	sl.sentAt = now
	sl.ent = e
	sl.plane = uint8(p)
	s.inflight += size
	if s.pl != nil {
		s.planeSent(p, size)
	}
	// Drop stale entries first, so the FIFO stays bounded by what is
	// outstanding even for a driver that never asks for timeouts.
	s.cleanOrder()
	s.order = append(s.order, orderEnt{psn, now})
	if s.paceBps > 0 {
		s.nextSend = AddTime(now, TxTime(size, s.paceBps))
	}
	payload := int32(s.p.MTU)
	if psn == s.npkts-1 {
		payload = s.last
	}
	// Ask a coalescing receiver for an ACK at once when nothing may follow
	// soon: the last packet, a retransmission, or a full window (htsim's
	// AR rule).
	ackReq := retx || psn == s.npkts-1 || float64(s.inflight+size) >= s.cc.window()
	*d = Data{Flow: s.f.ID, PSN: psn, Payload: payload, Entropy: e, SentAt: now, Retx: retx, AckReq: ackReq, Plane: uint8(p),
		AckRoute: s.ackRoute, AckRouteValid: s.hasAckRoute}
	return size
}

// OnAck processes an ACK or NACK arriving at now. An ACK acknowledges its
// PSN, the PSNs of its selective bitmap (a coalesced ACK) and every PSN
// below its cumulative point. The congestion control sees one ACK carrying
// the wire bytes of the packets it newly acknowledges explicitly (PSN and
// bitmap; those known only from the cumulative point had their ACK lost or
// overtaken, and are not counted, as before coalescing), the RTT sample of
// its PSN and its ECN echo; REPS recycles its entropy once.
func (s *Sender) OnAck(now Time, a *Ack) {
	if a.PSN >= s.nextNew {
		return // never sent
	}
	s.ackRoute, s.hasAckRoute = a.Route, true
	s.lastAck = now
	if a.Nack {
		s.onNack(now, a)
		return
	}
	psn := a.PSN
	// Below base everything is acknowledged (and its slot reused).
	fresh := psn >= s.base && s.slot(psn).st&stAcked == 0
	var sentAt Time
	var newly int64
	if fresh {
		sentAt = s.slot(psn).sentAt
		s.onFreshAck(now, a, sentAt)
		newly = s.pktWire(psn)
		s.markAcked(psn)
	}
	for b := a.Sack; b != 0; b &= b - 1 {
		q := a.SackBase + uint32(bits.TrailingZeros64(b))
		if q >= s.base && q < s.nextNew && s.slot(q).st&stAcked == 0 {
			newly += s.pktWire(q)
			s.markAcked(q)
		}
	}
	// Cumulative information covers ACKs that were lost.
	for q := s.base; q < a.CumAck && q < s.nextNew; q++ {
		if s.slot(q).st&stAcked == 0 {
			s.markAcked(q)
		}
	}
	for s.base < s.nextNew && s.slot(s.base).st&stAcked != 0 {
		s.base++
	}
	if a.ECN {
		s.Stats.ECNAcks++
	}
	s.lb.onAck(a.Entropy, a.ECN)
	if o := s.lb.ow; o != nil {
		o.tick(now)
		if a.QDelayValid {
			o.ack(a.Entropy, a.QDelay)
		}
	}
	if s.pl != nil {
		s.planeAcked(a.Plane)
	}
	if newly > 0 {
		s.rtoPermit = false // progress: the window governs again
		// Only an ACK for the latest transmission gives a valid RTT sample.
		rtt := Time(-1)
		if fresh && a.EchoTS == sentAt {
			rtt = fabricRTT(now, a)
		}
		if s.pl != nil && s.pl.mode == PlanePLB {
			// Per-plane CC: the ACK's plane's controller sees it.
			s.planeCC(a.Plane).onAck(now, rtt, a.ECN, newly, s.pl.inflight[a.Plane], &s.lb, a.Entropy)
		} else {
			s.cc.onAck(now, rtt, a.ECN, newly, s.inflight, &s.lb, a.Entropy)
		}
	}
	if s.slowStart {
		s.slowStartAck(a.ECN && s.onCurPath(a.Entropy), newly)
	}
	if s.acked == s.npkts && s.Stats.Completed == 0 {
		s.Stats.Completed = now
	}
}

func (s *Sender) markAcked(psn uint32) {
	sl := s.slot(psn)
	st := sl.st
	if st&stOut != 0 {
		s.inflight -= s.pktWire(psn)
		if s.pl != nil {
			s.planeLeft(sl.plane, s.pktWire(psn))
		}
		s.leftOld(sl, psn)
	}
	sl.st = (st | stAcked) &^ (stOut | stRtxQ)
	s.acked++
	if st&stRtxQ != 0 {
		// Acknowledged while queued for retransmission (the original was
		// only delayed): drop it from the queue.
		s.dropFromRtxq(psn)
	}
}

func (s *Sender) dropFromRtxq(psn uint32) {
	for i := s.rtxHead; i < len(s.rtxq); i++ {
		if s.rtxq[i] == psn {
			copy(s.rtxq[i:], s.rtxq[i+1:])
			s.rtxq = s.rtxq[:len(s.rtxq)-1]
			return
		}
	}
}

func (s *Sender) onNack(now Time, a *Ack) {
	if a.GoBack {
		s.goBack(now, a)
		return
	}
	psn := a.PSN
	if psn < s.base {
		return // acknowledged
	}
	sl := s.slot(psn)
	if sl.st&stAcked != 0 || a.EchoTS != sl.sentAt {
		return // stale: a newer copy is already out or it was acknowledged
	}
	s.Stats.Nacks++
	size := s.pktWire(psn)
	s.queueRetx(psn)
	s.lb.onLoss(now, a.Entropy, false)
	if s.pl != nil && s.pl.mode == PlanePLB {
		s.planeCC(sl.plane).onNack(now, size, s.pl.inflight[sl.plane])
	} else {
		s.cc.onNack(now, size, s.inflight)
		s.slowStart = s.slowStart && !s.onCurPath(a.Entropy)
	}
}

func (s *Sender) queueRetx(psn uint32) {
	sl := s.slot(psn)
	st := sl.st
	if st&stOut != 0 {
		s.inflight -= s.pktWire(psn)
		if s.pl != nil {
			s.planeLeft(sl.plane, s.pktWire(psn))
		}
		s.leftOld(sl, psn)
	}
	if st&stRtxQ == 0 {
		s.rtxq = append(s.rtxq, psn)
	}
	sl.st = (st | stRtxQ) &^ stOut
}

// NextTimeout returns the time at which OnTimeout must be called, or 0.
func (s *Sender) NextTimeout() Time {
	s.cleanOrder()
	if s.orderHead == len(s.order) {
		return 0
	}
	return s.order[s.orderHead].at + s.rto
}

// cleanOrder drops stale send-order entries from the front.
func (s *Sender) cleanOrder() {
	for s.orderHead < len(s.order) {
		e := s.order[s.orderHead]
		if e.psn >= s.base {
			if sl := s.slot(e.psn); sl.st&stOut != 0 && sl.sentAt == e.at {
				break
			}
		}
		s.orderHead++
	}
	if s.orderHead == len(s.order) {
		s.order, s.orderHead = s.order[:0], 0
	} else if s.orderHead >= 32 && s.orderHead >= len(s.order)-s.orderHead {
		// Slide the live entries to the front once the dead prefix is as
		// long as they are (each dead entry pays for one copy), so the FIFO
		// stays within a few times what is outstanding: a flow of 512
		// packets no longer keeps an entry per packet it ever sent.
		n := copy(s.order, s.order[s.orderHead:])
		s.order, s.orderHead = s.order[:n], 0
	}
}

// OnTimeout retransmits every packet outstanding for longer than the RTO.
// With a measured RTO (Params.MeasureRTO), when nothing at all was
// acknowledged since the earliest of them left, only that one times out
// (a probe, as RFC 6298 5.4 resends the earliest) and the RTO backs off:
// on a host, a silent flow is most often a host (the sender's or the
// receiver's) that did not run for longer than the RTO, not a lost window,
// and then one packet is resent for nothing instead of every one in
// flight; the others time out in turn unless an ACK comes first. A flow
// that still hears ACKs lost what timed out, and resends all of it.
// With a measured RTO the first retransmission after a timeout goes out
// whatever the window says (RFC 6298 5.4: the earliest unacknowledged
// packet is retransmitted when the timer expires). Without that, a probe
// waits behind the packets still counted in flight, each of which then
// has to time out in turn, with the RTO backed off to a second: a window
// of 60 lost packets was a minute of silence (a path move on the
// containerlab lab, in CI). The simulator's modelled RTO times out every
// due packet at once and keeps the window's rule.
// It returns the number of packets that timed out.
func (s *Sender) OnTimeout(now Time) int {
	n := 0
	probe := false
	for {
		s.cleanOrder()
		if s.orderHead == len(s.order) {
			break
		}
		e := s.order[s.orderHead]
		if e.at+s.rto > now {
			break
		}
		if n == 0 {
			probe = s.est != nil && s.lastAck <= e.at
		}
		s.orderHead++
		s.queueRetx(e.psn)
		s.lb.onLoss(now, s.slot(e.psn).ent, true)
		if s.pl != nil {
			pl := s.slot(e.psn).plane
			if s.pl.mode == PlanePLB && s.pl.timeouts[pl] == 0 {
				s.pl.cc[pl].onTimeout(now, s.pl.inflight[pl])
			}
			s.planeTimedOut(now, pl)
		}
		n++
		if probe {
			break // a silent flow: the earliest outstanding packet only
		}
	}
	if n > 0 && s.p.GoBackN {
		s.resendFrom(s.base)
	}
	if n > 0 {
		s.rtoPermit = s.est != nil
		s.Stats.Timeouts += uint64(n)
		if s.pl == nil || s.pl.mode != PlanePLB {
			s.cc.onTimeout(now, s.inflight)
			s.slowStart = false
		}
		s.onRTOExpired()
	}
	return n
}

// goBack is go-back-N's answer to a gap: everything below CumAck is
// acknowledged, everything outstanding from there on is sent again.
func (s *Sender) goBack(now Time, a *Ack) {
	for q := s.base; q < a.CumAck && q < s.nextNew; q++ {
		if s.slot(q).st&stAcked == 0 {
			s.markAcked(q)
		}
	}
	for s.base < s.nextNew && s.slot(s.base).st&stAcked != 0 {
		s.base++
	}
	if s.acked == s.npkts && s.Stats.Completed == 0 {
		s.Stats.Completed = now
		return
	}
	s.Stats.Nacks++
	s.resendFrom(s.base)
	s.lb.onLoss(now, a.Entropy, false)
	s.cc.onNack(now, s.pktWire(s.base), s.inflight)
	s.slowStart = false
}

// resendFrom queues every outstanding packet from psn on for retransmission,
// in PSN order (go-back-N).
func (s *Sender) resendFrom(psn uint32) {
	for q := max(psn, s.base); q < s.nextNew; q++ {
		if st := s.slot(q).st; st&stAcked == 0 && st&stRtxQ == 0 {
			s.queueRetx(q)
		}
	}
}
