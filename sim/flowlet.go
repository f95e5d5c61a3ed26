package sim

import (
	"fmt"
	"math"
)

// This file is flowlet load balancing (Routing: RoutingFlowlet), the
// dynamic load balancing (DLB) of switch ASICs, as a step of the ingress
// stage's routing: each switch keeps a flowlet table of FlowletEntries
// entries indexed by a hash of the packet's flow and entropy (the 5-tuple
// hash an ASIC uses), each holding the egress port of the flowlet and when
// it last saw a packet. A data packet whose entry saw one less than
// Config.FlowletGap ago keeps that port (so a flowlet is not reordered);
// after a longer pause, or when that port is down, the flowlet starts
// anew on the least-loaded up member of the equal-cost group (the smallest
// queue, ties at random). ACKs are hashed (ECMP). Two flows sharing an
// entry share a flowlet, as on hardware. The table is allocated in New.

const (
	// FlowletEntries is the size of each switch's flowlet table.
	FlowletEntries = 4096
	// DefaultFlowletGap is the flowlet gap with FlowletGap 0: 50 µs,
	// larger than a path's queueing delay difference on the fabrics here.
	DefaultFlowletGap = 50_000_000
)

type flowletState struct {
	on   bool
	gap  int64
	port []int32 // [switch*FlowletEntries + entry]; -1: empty
	last []int64
	// Flowlets counts new flowlets (an entry's port chosen afresh).
	flowlets uint64
}

func (s *Sim) buildFlowlet() error {
	c := &s.cfg
	if c.FlowletGap < 0 {
		return fmt.Errorf("sim: flowlet gap %d ps must be >= 0", c.FlowletGap)
	}
	fl := &s.fl
	fl.on, fl.gap = true, c.FlowletGap
	if fl.gap == 0 {
		fl.gap = DefaultFlowletGap
	}
	nsw := 0
	for _, v := range s.rt.sw {
		if v >= 0 {
			nsw++
		}
	}
	fl.port = make([]int32, nsw*FlowletEntries)
	fl.last = make([]int64, nsw*FlowletEntries)
	for i := range fl.port {
		fl.port[i] = -1
	}
	return nil
}

// flowletPick routes data packet pkt at switch node (RoutingFlowlet).
func (s *Sim) flowletPick(node int32, pkt *packet) int32 {
	r := &s.rt
	dst := s.hostOf[pkt.dst]
	g := r.group(node, dst)
	n := r.cnt[g]
	if n == 0 {
		return -1
	}
	base := r.ports[r.off[g] : r.off[g]+n]
	if n == 1 {
		if !s.ports[base[0]].up {
			return -1
		}
		return base[0]
	}
	x := (uint64(pkt.flow)<<16 | uint64(pkt.entropy)) ^ r.salt[node]
	x ^= x >> 33
	x *= 0xFF51AFD7ED558CCD
	x ^= x >> 33
	k := int(r.sw[node])*FlowletEntries + int(x&(FlowletEntries-1))
	fl := &s.fl
	if p := fl.port[k]; p >= 0 && s.now-fl.last[k] < fl.gap && s.ports[p].up && memberOf(base, p) {
		fl.last[k] = s.now
		return p
	}
	// A new flowlet: the least-loaded up member.
	best, ties := int64(math.MaxInt64), 0
	for _, p := range base {
		if !s.ports[p].up {
			continue
		}
		d := s.ports[p].dataB + s.ports[p].ctrlB
		switch {
		case d < best:
			best, ties = d, 1
		case d == best:
			ties++
		}
	}
	if ties == 0 {
		return -1
	}
	pick := 0
	if ties > 1 {
		pick = int((s.random() >> 32) * uint64(ties) >> 32)
	}
	for _, p := range base {
		if !s.ports[p].up || s.ports[p].dataB+s.ports[p].ctrlB != best {
			continue
		}
		if pick == 0 {
			fl.port[k], fl.last[k] = p, s.now
			fl.flowlets++
			return p
		}
		pick--
	}
	return -1 // not reached
}

func memberOf(ports []int32, p int32) bool {
	for _, q := range ports {
		if q == p {
			return true
		}
	}
	return false
}

// Flowlets returns how many flowlets flowlet load balancing started.
func (s *Sim) Flowlets() uint64 { return s.fl.flowlets }
