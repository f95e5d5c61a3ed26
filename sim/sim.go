package sim

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/units"
	"github.com/fabricbench/fabricbench/workloads"
)

// LinkEvent changes a link at a point in simulated time (an
// inventory.LinkEvent: inventory.ParseLinkEvent and
// inventory.RandomLinkFailures make them).
type LinkEvent = inventory.LinkEvent

// Config is everything a run needs.
type Config struct {
	Fabric    *inventory.Fabric
	Matrix    *workloads.Matrix
	Transport transport.Params
	// QueueBytes is the data queue of every switch port; 0 means one BDP of
	// the longest unloaded path, rounded up to whole packets.
	QueueBytes int64
	// KMin and KMax are the RED ECN thresholds as fractions of the queue
	// (defaults 0.2 and 0.8). ECN disables marking when false.
	KMin, KMax float64
	NoECN      bool
	// End stops the run at this simulated time, in picoseconds, if flows
	// are still running: 0 is DefaultEnd (1 s), at most MaxEnd (1 h).
	End units.Ps
	// StallAfter ends the run earlier when no flow has made progress for
	// this long (termination.go): 0 is the larger of DefaultStallAfter
	// (10 ms) and StallRTOs (100) retransmission timeouts of the slowest
	// path, -1 never; at most MaxEnd.
	StallAfter units.Ps
	Seed       uint64
	Links      []LinkEvent
	// Reconverge, when > 0, is how long after a link goes down (or comes
	// back up) the fabric recomputes its ECMP groups without (with) it, as a
	// routing protocol would. Until then only the switch at either end of the
	// link avoids it (local failover) and other switches keep hashing
	// packets onto paths through it, where they are lost. Low-diameter
	// routing recomputes its minimal tables then too. 0 never reconverges.
	Reconverge int64
	// Progress, when set, is called about once a second of wall time.
	Progress func(Progress)
	// SampleEvery, when > 0, calls OnSample every SampleEvery picoseconds
	// of simulated time (at 0, SampleEvery, 2*SampleEvery, ...) while flows
	// are running, and once more when the run ends. Telemetry reads the
	// counters from there (PortStats, QueueBytes, TakeQueueHighWater).
	SampleEvery int64
	OnSample    func(s *Sim, now int64)
	// HashAddressesOnly makes switches hash only the source and destination
	// addresses (an ECMP hash without L4 ports): all packets between two
	// hosts take one path, whatever the load balancer's entropy.
	HashAddressesOnly bool

	// Classes are the traffic classes of every port's data queues, class
	// 0 first (see doc.go). Empty means one class: a single data queue.
	Classes []Class
	// ClassOf returns a flow's traffic class (an index into Classes); nil
	// puts every flow in class 0. It is called once per flow, in New.
	ClassOf func(workloads.Flow) int
	// Buffer selects the switches' buffer accounting; the zero value is a
	// static QueueBytes per data queue.
	Buffer Buffer
	// Paths pins flows to explicit paths (source routing): flow ID -> the
	// egress port (inventory port ID) to take at each switch from the
	// sender's first switch to the receiver's last. Data packets of such a
	// flow follow it, and are lost where a link on it is down; ACKs are
	// routed by ECMP.
	Paths map[int][]int

	// Routing selects how switches choose among equal-cost egress ports:
	// RoutingHash (ECMP, the default) or RoutingAdaptive (per-packet
	// join-shortest-queue, adaptive.go). Adaptive routing ignores the
	// packets' entropy, so the endpoint load balancer's choice (ECMP, OPS,
	// REPS) no longer picks paths; explicit paths (Paths) still win.
	Routing Routing
	// ARStaleness is how old the queue depths adaptive routing decides on
	// are, in picoseconds: each switch snapshots its ports' depths and
	// refreshes the snapshot once it is ARStaleness old. 0: live depths.
	ARStaleness int64
	// ARQuantum quantises queue depths for adaptive routing, in bytes (ports
	// whose depths fall in the same step tie); 0 is one full-size packet.
	ARQuantum int64
	// ARWeighted weighs adaptive routing's choice by the capacity left
	// downstream of each port (weighted AR after link failures or
	// degradation; see arWeights).
	ARWeighted bool
	// LowDiameter selects Dragonfly/Slim Fly routing (lowdiameter.go):
	// Minimal on (global hops, local hops), Valiant, UGALL or UGALG.
	// LowDiameterOff (the default) leaves routing to Routing.
	LowDiameter LowDiameter
	// WindowRTT, when above a flow's own base RTT, is the base RTT its
	// transport sizes the window on (initial and maximum window, QuickAdapt
	// and FastIncrease targets, RTO): Spritz sizes every flow's window on
	// the longest path of the topology (Sec. V-A; LongestPathRTT). 0: each
	// flow's own path (the longest listed path under source-guided routing).
	WindowRTT int64
	// PFC makes traffic classes lossless with priority flow control
	// (pfc.go); the zero value is off.
	PFC PFC
	// Delivery records one-way latency and reordering per group of flows
	// at the receiving NIC (delivery.go); the zero value is off.
	Delivery Delivery
	// ECNProfile records, at every marking decision, the queue depth and
	// whether the packet was marked (ecnprofile.go).
	ECNProfile bool
	// FlowletGap is flowlet load balancing's idle gap (Routing:
	// RoutingFlowlet, flowlet.go), in ps: a flow's packets stay on their
	// port until the flow pauses this long. 0 with RoutingFlowlet is
	// DefaultFlowletGap.
	FlowletGap int64
	// SRv6 pins flows to SRv6 micro-SID paths (srv6.go); the zero value
	// pins none.
	SRv6 SRv6
	// VRF puts hosts into routing instances (vrf.go); the zero value is
	// one routing table.
	VRF VRF

	// Shards, when > 1, runs the conservative parallel mode (parallel.go):
	// the fabric is cut into this many shards (at most 255), each with its
	// own event queue, packet pool and random stream, run in lock-step
	// windows as long as the shortest link between two shards. Results
	// depend on Shards (same-time events and ECN draws are ordered per
	// shard) but not on Workers. 0 or 1 is the classic serial simulator.
	// New refuses Shards > 1 with a feature that reads or changes state
	// across shards (see ParallelUnsupported).
	Shards int
	// Workers is how many goroutines run the shards (0: GOMAXPROCS, at
	// most Shards). It does not change results.
	Workers int
}

// Class is a traffic class of the egress scheduler.
type Class struct {
	// Priority orders classes strictly: a port serves the backlogged
	// classes with the lowest Priority first.
	Priority int
	// Weight shares a port between backlogged classes of the same
	// Priority by deficit weighted round robin, a quantum of Weight
	// full-size packets per round; 0 means 1.
	Weight int
}

// Buffer is the switches' data-buffer accounting.
type Buffer struct {
	// SharedBytes, when > 0, gives every switch one pool of this many
	// bytes shared by the data queues of all its ports and classes, with
	// dynamic thresholds (Choudhury and Hahne): a queue admits a packet
	// while it then holds at most Alpha times the pool's free bytes. Config
	// QueueBytes still sets the ECN thresholds. 0 gives every data queue a
	// static QueueBytes.
	SharedBytes int64
	// Alpha is the dynamic-threshold factor (default 1): one congested queue
	// settles at Alpha/(1+Alpha) of the pool, n of them at Alpha/(1+n Alpha)
	// each, so a busy port takes more than a static share and never all.
	Alpha float64
}

// Progress reports how far a run is.
type Progress struct {
	SimNow    int64
	Done      int
	Flows     int
	Events    uint64
	WallSoFar time.Duration
}

// FlowResult is the outcome of one flow.
type FlowResult struct {
	ID       int
	Src, Dst int
	Size     int64
	Start    int64 // actual start (ps); -1 if it never started
	FCT      int64 // ps; -1 if it did not finish
	Retx     uint64
	Nacks    uint64
	Timeouts uint64
}

// Counters are fabric-wide packet counters.
type Counters struct {
	Sent          uint64 // new data packets
	Retransmitted uint64
	Trimmed       uint64
	Dropped       uint64 // queue overflow without trimming, control-queue overflow, lost on a down link
	ECNMarked     uint64
	// Unreachable counts packets a switch dropped for want of a route in
	// their VRF (VRF.DropUnreachable; included in Dropped).
	Unreachable uint64
}

// Result is the outcome of a run.
type Result struct {
	Flows      []FlowResult
	Packets    Counters
	SimEnd     int64
	Events     uint64
	Wall       time.Duration
	QueueBytes int64
	BaseRTT    int64 // of the longest unloaded path
	Incomplete int
	Reroutes   int // ECMP recomputations after link changes (Config.Reconverge)
	// Interrupted is set when Interrupt stopped the run early.
	Interrupted bool
	// Parallel mode (Config.Shards > 1): shards, worker goroutines and the
	// lookahead (window) in picoseconds; 0 in the serial mode.
	Shards, Workers int
	Lookahead       int64
	// EndReason says why the run ended: every flow done, the time limit,
	// a stall (no progress for StallAfter) or an interrupt.
	EndReason EndReason
	// StallAfter is the stall stretch the run used (0: none).
	StallAfter int64
}

type flowState struct {
	snd     *transport.Sender
	rcv     *transport.Receiver
	src     int32 // host numbers
	dst     int32
	srcNode int32
	dstNode int32
	start   int64
	fct     int64
	timerAt int64
	ackAt   int64 // pending evAckTimer (the receiver's AckDue), 0 if none
	active  bool
	succ    []int32
	group   int32 // barrier group (workloads.Flow.Group), 0 if none
	path    int32 // explicit path: 1 + offset into Sim.paths, 0 if none
	class   uint8 // traffic class
	minimal bool  // workloads.Flow.Minimal: ECMP on minimal routes
	paceBps int64 // workloads.Flow.Rate: sender pacing (pace.go), 0: none
	paceAt  int64 // pending evPace, 0 if none
}

type hostState struct {
	port   int32
	active []int32
	rr     int
}

// Sim is one simulation run.
type Sim struct {
	cfg    Config
	f      *inventory.Fabric
	tp     transport.Params
	now    int64
	q      eventQueue
	pk     pool
	ports  []port
	hosts  []hostState
	hostOf []int32 // node -> host number or -1
	flows  []flowState
	rt     routing
	ar     adaptive
	ld     lowDiam
	mp     planeState
	sg     sgState // source-guided routing (sourceguided.go)
	pfc    pfcState
	dl     deliveryState // NIC delivery stage (delivery.go)
	ecnp   ecnProfile    // ECN marking profile (ecnprofile.go)
	fl     flowletState  // flowlet load balancing (flowlet.go)
	loss   lossWindow    // packets lost to link failures (failover.go)
	sr     srv6State
	vrf    vrfState
	// tpMinimal is tp with ECMP, for workloads.Flow.Minimal flows.
	tpMinimal transport.Params
	// Egress pipeline: per-port class queues, scheduler tables, buffers.
	ncls    int
	cq      []classQueue // [port*(ncls-1) + class-1], classes 1..ncls-1
	order   []uint8      // classes by priority (stable)
	lvlLo   []int        // [i]: first position in order of order[i]'s priority level
	lvlHi   []int        // [i]: one past its last
	quantum []int64      // per class, DWRR bytes per turn
	bufs    []sharedBuf  // per switch with a shared buffer
	rtoQ    int64        // the largest a data queue can grow (for the RTO bound)
	paths   []int32      // explicit paths, concatenated egress port IDs
	rng     uint64
	done    int
	events  uint64
	res     Result
	// Barrier groups: flows still running per group, flows waiting for it.
	groupLeft map[int]int
	groupWait map[int][]int32
	stop      *atomic.Bool
	// Parallel mode (parallel.go): par on the coordinator, sh on a shard.
	par *parallel
	sh  *shard
	// Termination (termination.go).
	progressAt int64     // last time a flow made progress
	stallAt    int64     // pending stall check, 0 if none
	started    int       // flows started
	maxRTO     int64     // largest path RTO of the flows started
	halt       EndReason // set (non-zero) to end the run at once
}

// Interrupt asks a running Run to stop at the next check (every few
// thousand events); it is safe to call from another goroutine. The result
// then has Interrupted set and the flows still running count as incomplete.
func (s *Sim) Interrupt() { s.stop.Store(true) }

// IdealFCT is the completion time of a flow of size bytes from host src to
// host dst on an idle fabric: the unloaded RTT of the first packet plus the
// serialisation of the rest at the path's bottleneck rate.
func (s *Sim) IdealFCT(src, dst int, size int64) int64 {
	rtt, rate, _ := s.pathInfo(src, dst)
	mtu := int64(s.tp.MTU)
	pkts := (size + mtu - 1) / mtu
	rest := size + pkts*int64(s.tp.HeaderBytes) - s.wire()
	if rest < 0 {
		rest = 0
	}
	ser := float64(rest) * 8e12 / float64(rate)
	if ser >= math.MaxInt64 {
		return math.MaxInt64
	}
	return transport.AddTime(rtt, int64(ser))
}

// New validates the configuration and prepares a run.
func New(cfg Config) (*Sim, error) {
	if cfg.Fabric == nil {
		return nil, errors.New("sim: no fabric")
	}
	if cfg.Matrix == nil {
		return nil, errors.New("sim: no traffic matrix")
	}
	if err := cfg.Transport.Validate(); err != nil {
		return nil, fmt.Errorf("sim: transport: %w", err)
	}
	if err := checkLimits(&cfg); err != nil {
		return nil, err
	}
	if cfg.Matrix.Hosts > cfg.Fabric.NumHosts() {
		return nil, fmt.Errorf("sim: traffic matrix is for %d hosts but the fabric has %d", cfg.Matrix.Hosts, cfg.Fabric.NumHosts())
	}
	if err := cfg.Matrix.Validate(); err != nil {
		return nil, err
	}
	for i := range cfg.Matrix.Flows {
		fl := &cfg.Matrix.Flows[i]
		if err := transport.CheckFlowSize(fl.Size, cfg.Transport.MTU); err != nil {
			return nil, fmt.Errorf("sim: flow %d (%d->%d): %w", fl.ID, fl.Src, fl.Dst, err)
		}
	}
	if cfg.KMin == 0 && cfg.KMax == 0 {
		cfg.KMin, cfg.KMax = 0.2, 0.8
	}
	if cfg.SampleEvery < 0 || (cfg.SampleEvery > 0 && cfg.OnSample == nil) {
		return nil, fmt.Errorf("sim: sampling every %d ps needs a positive interval and an OnSample function", cfg.SampleEvery)
	}
	if cfg.Reconverge < 0 {
		return nil, fmt.Errorf("sim: negative reconvergence time")
	}
	if cfg.KMin < 0 || cfg.KMax > 1 || cfg.KMin > cfg.KMax {
		return nil, fmt.Errorf("sim: ECN thresholds kmin=%g kmax=%g must satisfy 0 <= kmin <= kmax <= 1", cfg.KMin, cfg.KMax)
	}
	for i, le := range cfg.Links {
		if le.Link < 0 || le.Link >= len(cfg.Fabric.Links) {
			return nil, fmt.Errorf("sim: link event %d: link %d does not exist (fabric has %d links)", i, le.Link, len(cfg.Fabric.Links))
		}
		if le.Direction != inventory.DirBoth && (!le.Up || le.Direction < 0 || le.Direction > inventory.DirBA) {
			return nil, fmt.Errorf("sim: link event %d: a direction applies only to up/degrade events (1 or 2), got %d", i, le.Direction)
		}
		if le.RateFactor < 0 || le.RateFactor > 1 {
			return nil, fmt.Errorf("sim: link event %d: rate factor %g outside [0, 1]", i, le.RateFactor)
		}
	}
	if cfg.Shards < 0 || cfg.Shards > maxShards || cfg.Workers < 0 {
		return nil, fmt.Errorf("sim: %d shards and %d workers: want 0..%d shards and workers >= 0", cfg.Shards, cfg.Workers, maxShards)
	}
	if cfg.Shards > 1 {
		if why := ParallelUnsupported(&cfg); why != "" {
			return nil, fmt.Errorf("sim: the parallel mode (%d shards) does not support %s", cfg.Shards, why)
		}
	}
	s := &Sim{cfg: cfg, f: cfg.Fabric, tp: cfg.Transport, stop: new(atomic.Bool)}
	s.tp.Seed = cfg.Seed
	s.rng = cfg.Seed*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
	s.buildPorts()
	s.rt.build(s.f, nil, cfg.Seed)
	if err := s.buildLowDiameter(); err != nil {
		return nil, err
	}
	if err := s.buildAdaptive(); err != nil {
		return nil, err
	}
	if err := s.sizeQueues(); err != nil {
		return nil, err
	}
	if err := s.buildPipeline(); err != nil {
		return nil, err
	}
	if err := s.buildPFC(); err != nil {
		return nil, err
	}
	if err := s.buildPlanes(); err != nil {
		return nil, err
	}
	if err := s.buildFlows(); err != nil {
		return nil, err
	}
	if err := s.buildSRv6(); err != nil {
		return nil, err
	}
	if err := s.buildVRF(); err != nil {
		return nil, err
	}
	if err := s.buildDelivery(); err != nil {
		return nil, err
	}
	if err := s.buildECNProfile(); err != nil {
		return nil, err
	}
	// After every stage that adjusts tp (low-diameter routing, planes).
	s.tpMinimal = s.tp
	s.tpMinimal.LB = transport.ECMP
	if cfg.Shards > 1 {
		if err := s.buildShards(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Sim) buildPorts() {
	f := s.f
	s.hostOf = make([]int32, len(f.Nodes))
	for i := range s.hostOf {
		s.hostOf[i] = -1
	}
	for h, n := range f.Hosts {
		s.hostOf[n] = int32(h)
	}
	s.ports = make([]port, len(f.Ports))
	s.hosts = make([]hostState, len(f.Hosts))
	for i := range s.hosts {
		s.hosts[i].port = -1
	}
	for i := range f.Ports {
		fp := &f.Ports[i]
		l := &f.Links[fp.Link]
		peer := f.Ports[fp.Peer].Node
		p := &s.ports[i]
		p.rate, p.nominal = l.RateBps, l.RateBps
		p.lat = l.LatencyPs + f.Nodes[peer].LatencyPs
		p.peerNode, p.peerPort, p.node = int32(peer), int32(fp.Peer), int32(fp.Node)
		p.host = s.hostOf[fp.Node]
		p.up = true
		if p.host >= 0 && s.hosts[p.host].port < 0 {
			s.hosts[p.host].port = int32(i)
		}
	}
}

// wire returns the wire size of a full data packet.
func (s *Sim) wire() int64 { return int64(s.tp.MTU + s.tp.HeaderBytes) }

// pathInfo walks the first ECMP choice from host a to host b and returns the
// unloaded RTT (data packet out, ACK back), the bottleneck rate and the hop count.
func (s *Sim) pathInfo(a, b int) (rtt int64, rate int64, hops int) {
	dataW, ackW := s.wire(), int64(s.tp.AckBytes)
	walk := func(from, to int, size int64) (t int64, r int64, n int) {
		node := s.f.Hosts[from]
		dst := int32(to)
		r = 1 << 62
		for n = 0; n < 64; n++ {
			var pid int32
			if h := s.hostOf[node]; h >= 0 {
				if n > 0 {
					return
				}
				pid = s.hosts[h].port
			} else {
				pid = s.rt.first(node, dst)
				if pid < 0 {
					return
				}
			}
			p := &s.ports[pid]
			t += transport.TxTime(size, p.nominal) + p.lat
			if p.nominal < r {
				r = p.nominal
			}
			node = int(p.peerNode)
			if node == s.f.Hosts[to] {
				n++
				return
			}
		}
		return
	}
	t1, r1, n1 := walk(a, b, dataW)
	t2, _, _ := walk(b, a, ackW)
	return t1 + t2, r1, n1
}

func (s *Sim) sizeQueues() error {
	w := s.wire()
	q := s.cfg.QueueBytes
	if q == 0 {
		// One BDP of the longest unloaded path, in whole packets.
		var maxRTT, rate int64
		n := s.f.NumHosts()
		for _, src := range []int{0, n - 1} {
			for dst := 0; dst < n; dst++ {
				if dst == src {
					continue
				}
				rtt, r, _ := s.pathInfo(src, dst)
				if rtt > maxRTT {
					maxRTT, rate = rtt, r
				}
			}
		}
		if maxRTT == 0 {
			return errors.New("sim: fabric has no path between hosts")
		}
		bdp := float64(rate) * float64(maxRTT) / 8e12
		pk := int64(bdp / float64(w))
		if float64(pk*w) < bdp {
			pk++
		}
		q = pk * w
		s.res.BaseRTT = maxRTT
	}
	if q < w {
		return fmt.Errorf("sim: queue of %d bytes cannot hold one %d-byte packet", q, w)
	}
	s.res.QueueBytes = q
	pk := float64(q) / float64(w)
	ceilPk := func(frac float64) int64 {
		v := frac * pk
		n := int64(v)
		if float64(n) < v {
			n++
		}
		return n * w
	}
	kmin, kmax := ceilPk(s.cfg.KMin), ceilPk(s.cfg.KMax)
	for i := range s.ports {
		p := &s.ports[i]
		p.capB, p.kmin, p.kmax = q, kmin, kmax
	}
	return nil
}

func (s *Sim) buildFlows() error {
	m := s.cfg.Matrix
	s.flows = make([]flowState, len(m.Flows))
	s.groupLeft = make(map[int]int)
	s.groupWait = make(map[int][]int32)
	idx := make(map[int]int32, len(m.Flows)) // flow ID -> index
	for i, fl := range m.Flows {
		idx[fl.ID] = int32(i)
	}
	pinned := 0
	for i, fl := range m.Flows {
		st := &s.flows[i]
		st.src, st.dst = int32(fl.Src), int32(fl.Dst)
		st.srcNode, st.dstNode = int32(s.f.Hosts[fl.Src]), int32(s.f.Hosts[fl.Dst])
		st.start, st.fct = -1, -1
		st.group = int32(fl.Group)
		st.minimal = fl.Minimal
		if fl.Rate < 0 {
			return fmt.Errorf("sim: flow %d: negative rate %d", fl.ID, fl.Rate)
		}
		st.paceBps = fl.Rate
		if fl.Rate > 0 && s.mp.on {
			return fmt.Errorf("sim: flow %d: paced senders on multi-plane hosts are not supported", fl.ID)
		}
		if s.cfg.ClassOf != nil {
			c := s.cfg.ClassOf(fl)
			if c < 0 || c >= s.ncls {
				return fmt.Errorf("sim: flow %d: traffic class %d, want 0..%d", fl.ID, c, s.ncls-1)
			}
			st.class = uint8(c)
		}
		if p, ok := s.cfg.Paths[fl.ID]; ok {
			off, err := s.addPath(fl, p)
			if err != nil {
				return err
			}
			st.path = off + 1
			pinned++
		}
		if fl.Group > 0 {
			s.groupLeft[fl.Group]++
		}
		switch {
		case fl.After >= 0:
			j := idx[fl.After]
			s.flows[j].succ = append(s.flows[j].succ, int32(i))
		case fl.AfterGroup > 0:
			s.groupWait[fl.AfterGroup] = append(s.groupWait[fl.AfterGroup], int32(i))
		default:
			s.q.push(fl.Start, evFlowStart, int32(i), 0)
		}
	}
	if pinned < len(s.cfg.Paths) {
		missing := -1
		for id := range s.cfg.Paths {
			if _, ok := idx[id]; !ok && (missing < 0 || id < missing) {
				missing = id
			}
		}
		return fmt.Errorf("sim: explicit path for flow %d, which the traffic matrix does not have", missing)
	}
	for i := range s.cfg.Links {
		s.q.push(s.cfg.Links[i].At, evLinkState, int32(i), 0)
	}
	if s.cfg.SampleEvery > 0 && s.cfg.OnSample != nil {
		s.q.push(0, evSample, 0, 0)
	}
	return nil
}

// Run executes the simulation to completion (or End) and returns the result.
func (s *Sim) Run() *Result {
	if s.par != nil {
		return s.runParallel()
	}
	wall := time.Now()
	lastReport := wall
	end := s.endTime()
	total := len(s.flows)
	for s.q.len() > 0 && s.done < total && s.halt == EndDone {
		if s.events&0xFFF == 0 && s.stop.Load() {
			s.res.Interrupted = true
			s.halt = EndInterrupted
			break
		}
		e := s.q.pop()
		if e.at > end {
			s.now = end
			s.halt = EndLimit
			break
		}
		s.now = e.at
		s.events++
		if !s.local(e) {
			s.global(e)
		}
		if s.events&0xFFFF == 0 && s.cfg.Progress != nil {
			if t := time.Now(); t.Sub(lastReport) >= time.Second {
				lastReport = t
				s.cfg.Progress(Progress{SimNow: s.now, Done: s.done, Flows: total, Events: s.events, WallSoFar: t.Sub(wall)})
			}
		}
	}
	if s.halt == EndDone && s.done < total {
		s.halt = EndStalled // nothing left to happen, flows unfinished
	}
	if s.cfg.OnSample != nil {
		s.cfg.OnSample(s, s.now) // the final counters
	}
	return s.finish(time.Since(wall))
}

// global handles the events that concern the whole fabric: link state,
// rerouting, PFC frames, the stall check and telemetry samples (serial
// mode only).
func (s *Sim) global(e event) {
	switch e.kind {
	case evLinkState:
		s.linkEvent(&s.cfg.Links[e.a])
		s.progress()
	case evReroute:
		s.reroute()
		s.progress()
	case evPause:
		s.pause(e.a, e.b)
	case evStall:
		s.stallCheck(e.at)
	case evPFCWatch:
		s.pfcWatch(e.a, e.b, e.at)
	case evSample:
		s.cfg.OnSample(s, s.now)
		// Keep sampling only while something else can still happen.
		if s.q.len() > 0 {
			s.q.push(s.now+s.cfg.SampleEvery, evSample, 0, 0)
		}
	}
}

// local handles the events that touch one shard only (packets on ports,
// flows' timers and starts), for the serial loop and the parallel mode's
// windows (parallel.go) alike; it reports false for any other kind.
func (s *Sim) local(e event) bool {
	switch e.kind {
	case evTxDone:
		s.txDone(e.a)
	case evArrive:
		s.arrive(e.a)
	case evTimer:
		s.timer(e.a, e.at)
	case evAckTimer:
		s.ackTimer(e.a, e.at)
	case evFlowStart:
		s.startFlow(e.a)
	case evPace:
		s.paceWake(e.a, e.at)
	default:
		return false
	}
	return true
}

func (s *Sim) finish(wall time.Duration) *Result {
	r := &s.res
	r.Wall = wall
	r.Events = s.events
	r.SimEnd = s.now
	r.EndReason = s.halt
	if r.EndReason == EndLimit && s.done == len(s.flows) {
		r.EndReason = EndDone
	}
	r.StallAfter = s.stallFor()
	m := s.cfg.Matrix
	r.Flows = make([]FlowResult, len(s.flows))
	for i := range s.flows {
		st := &s.flows[i]
		fr := FlowResult{ID: m.Flows[i].ID, Src: m.Flows[i].Src, Dst: m.Flows[i].Dst, Size: m.Flows[i].Size, Start: st.start, FCT: st.fct}
		if st.snd != nil {
			fr.Retx, fr.Nacks, fr.Timeouts = st.snd.Stats.Retx, st.snd.Stats.Nacks, st.snd.Stats.Timeouts
			r.Packets.Sent += st.snd.Stats.Sent
			r.Packets.Retransmitted += st.snd.Stats.Retx
		}
		if fr.FCT < 0 {
			r.Incomplete++
		}
		r.Flows[i] = fr
	}
	for i := range s.ports {
		ps := &s.ports[i].Stats
		r.Packets.Trimmed += ps.Trims
		r.Packets.Dropped += ps.Drops
		r.Packets.ECNMarked += ps.ECNMarked
	}
	r.Packets.Unreachable = s.vrf.drops
	return r
}

// PortStats returns the counters of port p (an inventory port ID).
func (s *Sim) PortStats(p int) PortStats {
	st := s.ports[p].Stats
	peer := &s.ports[s.ports[p].peerPort]
	st.InOctets, st.InPkts = peer.arrOctets, peer.arrPkts
	return st
}

// TakeQueueHighWater returns the data-queue high-water mark of port p since
// the previous call (or the start) and starts a new interval at the current
// occupancy.
func (s *Sim) TakeQueueHighWater(p int) int64 {
	st := &s.ports[p].Stats
	v := st.IntervalMaxQueue
	st.IntervalMaxQueue = s.ports[p].dataB
	return v
}

// BackloggedNs returns the time, in nanoseconds, port p's data queue has
// held at least one packet waiting behind the one being transmitted since
// the start. While it does, the port transmits back to back, so the bytes
// sent over an interval, divided by the interval's backlogged time, bound
// the port's service rate from above.
func (s *Sim) BackloggedNs(p int) int64 {
	pt := &s.ports[p]
	ps := pt.Stats.BackloggedPs
	if pt.dataB > 0 {
		ps += uint64(s.now - pt.occSince)
	}
	return int64(ps / 1000)
}

// QueueBytes returns the current data-queue occupancy of port p.
func (s *Sim) QueueBytes(p int) int64 { return s.ports[p].dataB }

// Now returns the current simulated time.
func (s *Sim) Now() int64 { return s.now }

func (s *Sim) random() uint64 {
	s.rng += 0x9E3779B97F4A7C15
	z := s.rng
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func (s *Sim) startFlow(fi int32) {
	st := &s.flows[fi]
	mf := &s.cfg.Matrix.Flows[fi]
	rtt, rate, hops := s.pathInfo(mf.Src, mf.Dst)
	tp := &s.tp
	var paths []transport.PathEV
	if st.minimal {
		tp = &s.tpMinimal
	} else {
		paths = s.SourceGuidedPaths(mf.Src, mf.Dst)
	}
	if len(paths) > 0 {
		rtt, hops = s.sgLongest(rtt, hops, mf.Src, mf.Dst, paths)
	}
	rtt = max(rtt, s.cfg.WindowRTT)
	path := transport.Path{BaseRTT: rtt, RateBps: rate, RTO: s.pathRTO(rtt, rate, hops)}
	s.maxRTO = max(s.maxRTO, path.RTO)
	st.snd = transport.NewSender(tp, transport.Flow{ID: uint32(fi), Size: mf.Size, Path: path, Paths: paths})
	s.pace(st, st.snd)
	st.rcv = transport.NewReceiverFor(tp, uint32(fi), st.snd.Packets())
	// The receiver's own paths towards the sender, for when its ACKs on
	// the data packets' entropies get lost (transport's ackroute.go).
	if !st.minimal {
		st.rcv.SetAckPaths(s.SourceGuidedPaths(mf.Dst, mf.Src))
	}
	st.start = s.now
	s.started++
	s.progress()
	s.activate(fi)
}

// pathRTO is the retransmission timeout of a path: it covers the worst
// queueing the fabric can add, a full data queue at every hop, on top of the
// base RTT. hops*QueueBytes*8e12 does not fit in 64 bits at high rates (a
// BDP queue at 800 Gb/s), so TxTime computes it in 128 bits.
func (s *Sim) pathRTO(rtt, rate int64, hops int) int64 {
	queued := s.rtoQ * int64(hops)
	if hops > 0 && queued/int64(hops) != s.rtoQ {
		queued = math.MaxInt64
	}
	return transport.AddTime(rtt, transport.TxTime(queued, rate))
}

// activate puts a flow on its host's NIC list and kicks the NIC.
func (s *Sim) activate(fi int32) {
	if s.mp.on {
		s.mpActivate(fi)
		return
	}
	st := &s.flows[fi]
	if !st.active {
		st.active = true
		h := &s.hosts[st.src]
		h.active = append(h.active, fi)
	}
	s.kick(s.hosts[st.src].port)
}

func (s *Sim) armTimer(fi int32) {
	st := &s.flows[fi]
	if t := st.snd.NextTimeout(); t > 0 {
		st.timerAt = t
		s.q.push(t, evTimer, fi, 0)
	}
}

func (s *Sim) timer(fi int32, at int64) {
	st := &s.flows[fi]
	if st.timerAt != at || st.fct >= 0 {
		return
	}
	st.timerAt = 0
	if st.snd.OnTimeout(s.now) > 0 {
		s.activate(fi)
	}
	if st.timerAt == 0 {
		s.armTimer(fi)
	}
}

func (s *Sim) complete(fi int32) {
	st := &s.flows[fi]
	st.fct = s.now - st.start
	s.done++
	s.progress()
	if s.sh != nil {
		// Successors and barrier groups are global: the coordinator
		// starts them at the next barrier, in a fixed order.
		s.sh.completed = append(s.sh.completed, fi)
		return
	}
	for _, nx := range st.succ {
		s.q.push(s.now+s.cfg.Matrix.Flows[nx].Start, evFlowStart, nx, 0)
	}
	if g := int(st.group); g > 0 {
		s.groupLeft[g]--
		if s.groupLeft[g] == 0 {
			for _, nx := range s.groupWait[g] {
				s.q.push(s.now+s.cfg.Matrix.Flows[nx].Start, evFlowStart, nx, 0)
			}
		}
	}
}

// PortUp reports whether port p's link is up in both directions (the
// interface's operational state: a link taken down is down at both ends; a
// degraded direction is still up).
func (s *Sim) PortUp(p int) bool {
	pt := &s.ports[p]
	return pt.up && s.ports[pt.peerPort].up
}
