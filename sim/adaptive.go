package sim

import (
	"fmt"
	"math"
)

// This file is the adaptive-routing step of the ingress stage (doc.go):
// per-packet join-shortest-queue among the equal-cost egress ports, on
// quantised queue depths seen a configurable staleness ago, with weights
// for ports whose downstream capacity shrank (weighted AR).

// Routing selects how switches choose among equal-cost egress ports.
type Routing uint8

const (
	// RoutingHash hashes (flow, entropy) with a per-switch salt (ECMP; the
	// endpoint load balancer's entropy decides the path). The default.
	RoutingHash Routing = iota
	// RoutingAdaptive sends every packet to the equal-cost port with the
	// smallest quantised queue depth (join-shortest-queue, random
	// tie-break); the entropy is ignored.
	RoutingAdaptive
	// RoutingFlowlet is flowlet load balancing (DLB, flowlet.go): a
	// flowlet keeps its port; after an idle gap it moves to the
	// least-loaded one.
	RoutingFlowlet
)

func (r Routing) String() string {
	switch r {
	case RoutingHash:
		return "hash"
	case RoutingAdaptive:
		return "adaptive"
	case RoutingFlowlet:
		return "flowlet"
	}
	return fmt.Sprintf("Routing(%d)", uint8(r))
}

// ParseRouting parses "hash" (or "ecmp") and "adaptive" (or "ar").
func ParseRouting(s string) (Routing, error) {
	switch s {
	case "hash", "ecmp", "":
		return RoutingHash, nil
	case "adaptive", "ar":
		return RoutingAdaptive, nil
	case "flowlet", "dlb":
		return RoutingFlowlet, nil
	}
	return RoutingHash, fmt.Errorf("unknown routing %q (want hash, adaptive or flowlet)", s)
}

// weightOne is a weight of 1 in the fixed point of adaptive.w.
const weightOne = 1 << 16

// adaptive is the adaptive-routing state.
type adaptive struct {
	on      bool
	stale   int64   // ps; 0: live queue depths
	quantum int64   // bytes per depth step
	snapAt  []int64 // per switch index: when its snapshot was taken
	snap    []int64 // per port: its queue bytes at its switch's snapAt
	// w, with ARWeighted, is per (destination class, port) the fraction of
	// capacity left downstream of the port towards the class, in
	// 1/weightOne (w[class*len(ports)+port]). nil: every port weighs 1.
	w   []uint32
	rt0 routing // fault-free routing table: nominal group capacities
	rep []int32 // destination class -> a host in it (scratch)
}

func (s *Sim) buildAdaptive() error {
	c := &s.cfg
	switch c.Routing {
	case RoutingHash, RoutingFlowlet:
		if c.ARStaleness != 0 || c.ARQuantum != 0 || c.ARWeighted {
			return fmt.Errorf("sim: adaptive-routing settings (staleness, quantum, weights) need Routing: RoutingAdaptive")
		}
		if c.Routing == RoutingFlowlet {
			return s.buildFlowlet()
		}
		if c.FlowletGap != 0 {
			return fmt.Errorf("sim: a flowlet gap needs Routing: RoutingFlowlet")
		}
		return nil
	case RoutingAdaptive:
	default:
		return fmt.Errorf("sim: unknown routing %d", c.Routing)
	}
	if c.ARStaleness < 0 || c.ARQuantum < 0 {
		return fmt.Errorf("sim: adaptive routing: staleness %d ps and quantum %d B must be >= 0", c.ARStaleness, c.ARQuantum)
	}
	a := &s.ar
	a.on, a.stale, a.quantum = true, c.ARStaleness, c.ARQuantum
	if a.quantum == 0 {
		a.quantum = s.wire()
	}
	if a.stale > 0 {
		nsw := 0
		for _, v := range s.rt.sw {
			if v >= 0 {
				nsw++
			}
		}
		a.snapAt = make([]int64, nsw)
		for i := range a.snapAt {
			a.snapAt[i] = math.MinInt64 / 2
		}
		a.snap = make([]int64, len(s.ports))
	}
	if c.ARWeighted {
		a.rt0.build(s.f, nil, c.Seed) // its own arrays: reroute rebuilds s.rt in place
		s.arWeights()
	}
	return nil
}

// arDepth returns the queue depth (data and control bytes) of port pid at
// switch node as the adaptive-routing engine sees it: live, or in the
// switch's snapshot, which is refreshed once it is stale ago (lazily, on the
// first packet after that, so an idle switch costs nothing).
func (s *Sim) arDepth(node, pid int32) int64 {
	a := &s.ar
	if a.stale == 0 {
		p := &s.ports[pid]
		return p.dataB + p.ctrlB
	}
	sw := s.rt.sw[node]
	if s.now-a.snapAt[sw] >= a.stale {
		a.snapAt[sw] = s.now
		for _, q := range s.f.Nodes[node].Ports {
			p := &s.ports[q]
			a.snap[q] = p.dataB + p.ctrlB
		}
	}
	return a.snap[pid]
}

// arPick is adaptive routing at switch node for a packet to host dst:
// join-shortest-queue among the up members of the equal-cost group on
// quantised depths, ties broken at random; with weights (ARWeighted), the
// tie-break picks a port with probability proportional to the capacity
// left downstream of it (WCMP among the least-loaded ports), and ports with
// nothing left are skipped. -1: no usable port.
func (s *Sim) arPick(node int32, dst int32) int32 {
	r := &s.rt
	g := r.group(node, dst)
	n := r.cnt[g]
	if n == 0 {
		return -1
	}
	base := r.ports[r.off[g] : r.off[g]+n]
	a := &s.ar
	var w []uint32
	c := int(r.dst[dst])
	if a.w != nil {
		w = a.w[c*len(s.ports) : (c+1)*len(s.ports)]
	}
	best, sum := int64(math.MaxInt64), uint64(0)
	for _, p := range base {
		if !s.ports[p].up {
			continue
		}
		wt := uint64(weightOne)
		if w != nil {
			if wt = uint64(w[p]); wt == 0 {
				continue
			}
		}
		d := s.arDepth(node, p) / a.quantum
		switch {
		case d < best:
			best, sum = d, wt
		case d == best:
			sum += wt
		}
	}
	if sum == 0 {
		return -1
	}
	var k uint64
	if sum > weightOne {
		k = (s.random() >> 32) * sum >> 32
	}
	for _, p := range base {
		if !s.ports[p].up || s.arDepth(node, p)/a.quantum != best {
			continue
		}
		wt := uint64(weightOne)
		if w != nil {
			if wt = uint64(w[p]); wt == 0 {
				continue
			}
		}
		if k < wt {
			return p
		}
		k -= wt
	}
	return -1 // not reached
}

// arWeights recomputes the weighted-AR table (Config.ARWeighted). A switch
// port's capacity fraction towards a destination class is its own rate
// over its nominal rate (0 when down) times the capacity its peer switch
// has left towards the class: the summed rates of the peer's group members
// that are up over the summed nominal rates of its fault-free group. One
// level deep: that covers the leaf's choice of spine in a leaf-spine and
// the edge's choice of aggregation switch in a fat tree; deeper losses are
// left to the queues. Hosts and the last hop weigh 1. This is the
// control-plane's job (BGP in the paper), so it runs when the fabric
// reconverges (Config.Reconverge) or, without reconvergence, at the link
// event itself.
func (s *Sim) arWeights() {
	a := &s.ar
	r := &s.rt
	nDst := r.nDst
	np := len(s.ports)
	if cap(a.w) < np*nDst {
		a.w = make([]uint32, np*nDst)
	}
	a.w = a.w[:np*nDst]
	a.rep = a.rep[:0]
	for c := 0; c < nDst; c++ {
		a.rep = append(a.rep, -1)
	}
	for h, c := range r.dst {
		if a.rep[c] < 0 {
			a.rep[c] = int32(h)
		}
	}
	// down returns the capacity fraction switch m has left towards class c.
	down := func(m int32, c int) float64 {
		h := a.rep[c]
		if h < 0 {
			return 0
		}
		g := r.group(m, h)
		if r.entry(int(r.sw[m]), c) == direct {
			return 1 // the last hop: the host's own link
		}
		var up, nom int64
		for _, q := range r.ports[r.off[g] : r.off[g]+r.cnt[g]] {
			if s.ports[q].up {
				up += s.ports[q].rate
			}
		}
		g0 := a.rt0.group(m, h)
		for _, q := range a.rt0.ports[a.rt0.off[g0] : a.rt0.off[g0]+a.rt0.cnt[g0]] {
			nom += s.ports[q].nominal
		}
		if nom == 0 {
			return 0
		}
		return math.Min(1, float64(up)/float64(nom))
	}
	for pid := range s.ports {
		p := &s.ports[pid]
		local := 0.0
		if p.up {
			local = float64(p.rate) / float64(p.nominal)
		}
		for c := 0; c < nDst; c++ {
			frac := local
			if p.host < 0 && s.hostOf[p.peerNode] < 0 {
				frac *= down(p.peerNode, c)
			}
			a.w[c*np+pid] = uint32(math.Round(frac * weightOne))
		}
	}
}
