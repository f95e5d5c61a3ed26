package sim

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/fabricbench/fabricbench/inventory"
)

// This file is the conservative parallel mode (Config.Shards > 1): the
// fabric is cut into shards, each a copy of the Sim that shares the
// fabric-wide arrays (ports, hosts, flows, routing tables) but has its own
// event queue, packet pool, random stream and counters. Every node belongs to
// one shard, and so do the egress ports on it; a shard only runs events of
// its own nodes, ports, senders (the flow's source host) and receivers (its
// destination host).
//
// The shards run in windows [T, T+L), T the earliest pending event of any
// shard and L the lookahead: the shortest latency of a link whose ends are
// in different shards. A packet sent over such a link at time t >= T
// arrives at t + serialisation + latency >= T+L, so no shard can receive
// anything inside the window it is running (YAWNS). Inside a window the
// shards run independently, on Workers goroutines; a packet for another
// shard is copied into the sender shard's outbox (its pool slot is freed at
// once: packets are never shared). At the barrier each shard takes its
// inbound packets, source shard by source shard and in sending order, into
// its own pool and onto the link's wire (scheduling the arrival of the
// wire's head), and the coordinator takes the flows completed in the
// window, in (completion time, flow) order, to start their successors and
// close barrier groups (a dependent flow starts at its start offset after
// its predecessor, but no earlier than the barrier: at most L later than in
// the serial mode). Every step is a pure function of the shard count and
// the inputs, so results are the same for any number of workers.
//
// They differ from the serial mode's: events at the same time run in a
// per-shard order, RED ECN draws come from a stream per shard, and a
// coalescing receiver sends a held ACK even when its flow has completed at
// the sender (another shard) in the meantime (the sender ignores it).
//
// Partition: hosts in contiguous blocks of host numbers (a fat tree's pods,
// a leaf-spine's leaf groups), then switches tier by tier away from the
// hosts: a switch goes with the strict majority of its neighbours one tier
// down (a fat tree's leaves and aggregation switches stay in their pod's
// shard), otherwise round robin (core switches, spines).

const maxShards = 255

// ParallelMinHosts is the fabric size from which the command line runs
// the parallel mode by default (smaller fabrics fit the caches: the serial
// mode is as fast and keeps the serial reference results).
const ParallelMinHosts = 2048

// DefaultShards is the command line's shard count in the parallel mode
// for a fabric of hosts hosts: one shard per 256 hosts, 2 to 255. It
// depends on the fabric, not on the machine's CPU count, so results do
// not depend on the machine. Many more shards than workers pay even on
// one core: within a window a shard's ports, wires, queues and packets
// are a small working set that stays in cache (the serial simulator's
// event order walks the whole fabric's), and workers taking shards as
// they free up even out uneven windows. 8192-host permutation on 2
// workers, loaded machine: 8 shards 99 CPU-s, 16: 73, 32: 57 (212 MB),
// 64: 49 (236 MB), 128: 55 (252 MB); serial 167 CPU-s.
func DefaultShards(hosts int) int {
	return min(max(hosts/256, 2), maxShards)
}

// ParallelUnsupported returns why a configuration cannot run in the
// parallel mode (a feature reading or changing state across shards in the
// middle of a window), or "" when it can.
func ParallelUnsupported(cfg *Config) string {
	switch {
	case len(cfg.Links) > 0 || cfg.Reconverge > 0:
		return "link events (faults, flaps, reconvergence)"
	case cfg.SampleEvery > 0 || cfg.OnSample != nil:
		return "telemetry sampling (OnSample)"
	case cfg.Routing != RoutingHash:
		return "adaptive routing (or flowlet)"
	case cfg.Delivery.Enabled || cfg.ECNProfile:
		return "the delivery stage and the ECN profile"
	case cfg.LowDiameter != LowDiameterOff:
		return "low-diameter routing (minimal, Valiant, UGAL, source-guided, port-msb)"
	case cfg.PFC.Enabled:
		return "PFC"
	case len(cfg.SRv6.Paths) > 0:
		return "SRv6 paths"
	case len(cfg.VRF.Of) > 0:
		return "VRFs"
	case cfg.Fabric != nil && cfg.Fabric.NumPlanes() > 1:
		return "multi-plane fabrics"
	}
	return ""
}

// shard is a shard's own bookkeeping (Sim.sh).
type shard struct {
	id        int
	out       [][]xpkt // packets for other shards, by target shard
	completed []int32  // flows completed in this window
}

// xpkt is a packet crossing to another shard: a copy of it, the port it was
// sent on and its arrival time at the far end.
type xpkt struct {
	at  int64
	pid int32
	pkt packet
}

// doneRec is a flow completed in a window.
type doneRec struct {
	at int64
	fi int32
}

type parallel struct {
	shards []*Sim
	L      int64 // lookahead, ps
	W      int   // workers
	// The current phase, set by the coordinator before it hands out work.
	kind int
	wend int64
	next atomic.Int32 // next shard to take in this phase
	work chan struct{}
	done chan struct{}
	cbuf []doneRec
	ns   []uint8 // node -> shard
}

const (
	phaseRun = iota
	phaseMerge
)

// partition assigns each node of f to one of n shards (see above).
func partition(f *inventory.Fabric, n int) []uint8 {
	sh := make([]int, len(f.Nodes))
	level := make([]int, len(f.Nodes))
	for i := range sh {
		sh[i], level[i] = -1, -1
	}
	H := len(f.Hosts)
	frontier := make([]int, 0, H)
	for h, node := range f.Hosts {
		sh[node], level[node] = h*n/H, 0
		frontier = append(frontier, node)
	}
	rr := 0
	count := make([]int, n)
	for d := 1; len(frontier) > 0; d++ {
		var nextLevel []int
		for _, node := range frontier {
			for _, pid := range f.Nodes[node].Ports {
				peer := f.Ports[f.Ports[pid].Peer].Node
				if level[peer] < 0 {
					level[peer] = d
					nextLevel = append(nextLevel, peer)
				}
			}
		}
		slices.Sort(nextLevel)
		for _, node := range nextLevel {
			clear(count)
			total := 0
			for _, pid := range f.Nodes[node].Ports {
				peer := f.Ports[f.Ports[pid].Peer].Node
				if level[peer] == d-1 {
					count[sh[peer]]++
					total++
				}
			}
			best := 0
			for k := range count {
				if count[k] > count[best] {
					best = k
				}
			}
			if 2*count[best] > total {
				sh[node] = best
			} else {
				sh[node] = rr % n
				rr++
			}
		}
		frontier = nextLevel
	}
	out := make([]uint8, len(sh))
	for i, k := range sh {
		if k > 0 {
			out[i] = uint8(k)
		}
	}
	return out
}

// buildShards cuts the prepared run into Config.Shards shards.
func (s *Sim) buildShards() error {
	n := s.cfg.Shards
	if s.mp.on || s.sr.on || s.vrf.on || s.pfc.on || s.ar.on || s.ld.mode != LowDiameterOff {
		return errors.New("sim: the parallel mode does not support this configuration's features")
	}
	ns := partition(s.f, n)
	L := int64(math.MaxInt64 / 4)
	for i := range s.ports {
		p := &s.ports[i]
		if a, b := ns[p.node], ns[p.peerNode]; a != b {
			p.xshard = b + 1
			L = min(L, p.lat)
		}
	}
	if L <= 0 {
		return fmt.Errorf("sim: the parallel mode needs a positive latency on every link between shards (lookahead), got %d ps", L)
	}
	par := &parallel{L: L, ns: ns}
	base := s.rng
	for k := 0; k < n; k++ {
		sh := new(Sim)
		*sh = *s
		sh.q, sh.pk = eventQueue{}, pool{}
		sh.par, sh.sh = nil, &shard{id: k, out: make([][]xpkt, n)}
		sh.rng = base + uint64(k+1)*0xD1B54A32D192ED03
		par.shards = append(par.shards, sh)
	}
	// The flows' starts, queued by buildFlows, go to their senders' shards.
	for s.q.len() > 0 {
		e := s.q.pop()
		if e.kind != evFlowStart {
			return fmt.Errorf("sim: the parallel mode cannot start with event kind %d", e.kind)
		}
		par.shards[ns[s.flows[e.a].srcNode]].q.push(e.at, e.kind, e.a, e.b)
	}
	s.q = eventQueue{}
	s.par = par
	return nil
}

// sendAcross puts packet pi, sent on port pid towards another shard and
// arriving there at arr, into the outbox, and frees its slot here.
func (s *Sim) sendAcross(pid int32, p *port, arr int64, pi int32) {
	o := &s.sh.out[p.xshard-1]
	*o = append(*o, xpkt{at: arr, pid: pid, pkt: s.pk.p[pi]})
	s.pk.release(pi)
}

// runWindow runs a shard's events before wend.
func (s *Sim) runWindow(wend int64) {
	for {
		e, ok := s.q.popBefore(wend)
		if !ok {
			return
		}
		s.now = e.at
		s.events++
		s.local(e) // only these kinds are queued in a shard
	}
}

// merge takes shard t's inbound packets onto their wires.
func (par *parallel) merge(t int) {
	sh := par.shards[t]
	for _, src := range par.shards {
		in := src.sh.out[t]
		for i := range in {
			x := &in[i]
			pi := sh.pk.alloc()
			sh.pk.p[pi] = x.pkt
			p := &sh.ports[x.pid]
			if p.wire.size == 0 {
				sh.q.push(x.at, evArrive, x.pid, pi)
			}
			p.wire.push(x.at, pi)
		}
		src.sh.out[t] = in[:0]
	}
}

func (par *parallel) do(i int) {
	if par.kind == phaseRun {
		par.shards[i].runWindow(par.wend)
	} else {
		par.merge(i)
	}
}

// drain takes shards of the current phase until none is left.
func (par *parallel) drain() {
	for {
		i := int(par.next.Add(1)) - 1
		if i >= len(par.shards) {
			return
		}
		par.do(i)
	}
}

func (par *parallel) worker() {
	for range par.work {
		par.drain()
		par.done <- struct{}{}
	}
}

// phase runs one phase on every shard, on the workers and the caller.
func (par *parallel) phase(kind int, wend int64) {
	par.kind, par.wend = kind, wend
	par.next.Store(0)
	for i := 1; i < par.W; i++ {
		par.work <- struct{}{}
	}
	par.drain()
	for i := 1; i < par.W; i++ {
		<-par.done
	}
}

func cmpDone(a, b doneRec) int {
	if a.at != b.at {
		if a.at < b.at {
			return -1
		}
		return 1
	}
	return int(a.fi - b.fi)
}

// collect takes the flows completed in the window ending at wend, in
// (completion time, flow) order, and starts their successors.
func (s *Sim) collect(wend int64) {
	par := s.par
	cs := par.cbuf[:0]
	for _, sh := range par.shards {
		for _, fi := range sh.sh.completed {
			st := &s.flows[fi]
			cs = append(cs, doneRec{at: st.start + st.fct, fi: fi})
		}
		sh.sh.completed = sh.sh.completed[:0]
	}
	if len(cs) > 1 {
		slices.SortFunc(cs, cmpDone)
	}
	for _, c := range cs {
		s.done++
		s.now = max(s.now, c.at)
		st := &s.flows[c.fi]
		for _, nx := range st.succ {
			s.startAfter(c.at, nx, wend)
		}
		if g := int(st.group); g > 0 {
			s.groupLeft[g]--
			if s.groupLeft[g] == 0 {
				for _, nx := range s.groupWait[g] {
					s.startAfter(c.at, nx, wend)
				}
			}
		}
	}
	par.cbuf = cs
}

// startAfter schedules flow nx, whose predecessor completed at at, on its
// sender's shard: its start offset later, but not before the barrier wend.
func (s *Sim) startAfter(at int64, nx int32, wend int64) {
	t := max(at+s.cfg.Matrix.Flows[nx].Start, wend)
	s.par.shards[s.par.ns[s.flows[nx].srcNode]].q.push(t, evFlowStart, nx, 0)
}

// runParallel is Run in the parallel mode: windows of the lookahead, each
// run by every shard and closed by a barrier.
func (s *Sim) runParallel() *Result {
	wall := time.Now()
	lastReport := wall
	par := s.par
	par.W = s.cfg.Workers
	if par.W <= 0 {
		par.W = runtime.GOMAXPROCS(0)
	}
	par.W = min(par.W, len(par.shards))
	if par.W > 1 {
		par.work, par.done = make(chan struct{}), make(chan struct{})
		for i := 1; i < par.W; i++ {
			go par.worker()
		}
		defer close(par.work)
	}
	end := s.endTime()
	total := len(s.flows)
	idle := false
	for s.done < total {
		if s.stop.Load() {
			s.res.Interrupted = true
			s.halt = EndInterrupted
			break
		}
		t := int64(math.MaxInt64)
		for _, sh := range par.shards {
			if sh.q.len() > 0 {
				t = min(t, sh.q.peek())
			}
		}
		if t == math.MaxInt64 {
			idle = true
			break
		}
		// Every event before t has run: stop at the stall deadline or
		// the time limit when t lies beyond it (termination.go).
		if dl, ok := s.parDeadline(); ok && dl < end && t > dl {
			s.now, s.halt = dl, EndStalled
			break
		}
		if t > end {
			s.now, s.halt = end, EndLimit
			break
		}
		wend := int64(math.MaxInt64)
		if t < math.MaxInt64-par.L {
			wend = t + par.L
		}
		if end > 0 && wend > end {
			wend = end + 1
		}
		par.phase(phaseRun, wend)
		par.phase(phaseMerge, 0)
		s.collect(wend)
		if s.cfg.Progress != nil {
			if now := time.Now(); now.Sub(lastReport) >= time.Second {
				lastReport = now
				s.cfg.Progress(Progress{SimNow: t, Done: s.done, Flows: total, Events: s.shardEvents(), WallSoFar: now.Sub(wall)})
			}
		}
	}
	if idle && s.done < total {
		s.halt = EndStalled // nothing left to happen, flows unfinished
	}
	if idle || s.res.Interrupted {
		// Nothing left to run (flows that cannot finish) or stopped: the
		// time of the last event run.
		for _, sh := range par.shards {
			s.now = max(s.now, sh.now)
		}
	}
	s.events = s.shardEvents()
	s.res.Shards, s.res.Workers, s.res.Lookahead = len(par.shards), par.W, par.L
	return s.finish(time.Since(wall))
}

func (s *Sim) shardEvents() uint64 {
	var n uint64
	for _, sh := range s.par.shards {
		n += sh.events
	}
	return n
}
