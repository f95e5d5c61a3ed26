package sim

import (
	"container/heap"
	"fmt"

	"github.com/fabricbench/fabricbench/agents/transport"
)

// This file is low-diameter routing, a routing step of the ingress stage
// (doc.go) for Dragonfly and Slim Fly fabrics: Minimal routing on (global
// hops, local hops) rather than hop count, Valiant routing through a random
// intermediate group (Dragonfly) or switch (Slim Fly), and UGAL, which
// chooses per packet at the source switch between the minimal path and one
// Valiant candidate, on local queue depths (UGAL-L) or on every queue along
// both paths (UGAL-G).

// LowDiameter selects low-diameter routing (Config.LowDiameter).
type LowDiameter uint8

const (
	// LowDiameterOff leaves routing to Config.Routing (hop-count ECMP or
	// adaptive). The default.
	LowDiameterOff LowDiameter = iota
	// Minimal routes on the fewest global hops, then the fewest local
	// hops: local-global-local between Dragonfly groups, where hop-count
	// shortest paths would also take global-global detours.
	Minimal
	// Valiant sends each data packet minimally to a random intermediate
	// group (Dragonfly; a switch on fabrics without global links, such as
	// Slim Fly) chosen at the source switch, then minimally to the
	// destination.
	Valiant
	// UGALL chooses at the source switch between the minimal path and one
	// random Valiant candidate by local queue depth x path length.
	UGALL
	// UGALG chooses between them by the queued bytes along each whole path
	// (global knowledge).
	UGALG
	// SourceGuided lets the sender choose the path (sourceguided.go):
	// the first switch takes its next hop from EV1, the entropy's high
	// byte, the second from EV2, the low byte; minimal routing after.
	SourceGuided
	// PortMSB routes by the entropy's MSB (owd.go): 0 minimal, 1 through
	// the intermediate group the other 15 bits select, for every packet
	// (an ACK travels on its receiver's choice, transport.Ack.Route: MSB
	// 0 until its ACKs get lost); switches add their queuing delay to
	// data packets and probes (one-way-delay probing).
	PortMSB
	// ValiantHop is the Spritz paper's Valiant column (Sec. V-A,
	// valianthop.go, Dragonfly only): the next hop is sampled uniformly
	// and independently at each switch rather than a uniform intermediate
	// group: the source switch's own global links get more of the traffic
	// than the group's other global links.
	ValiantHop
)

func (m LowDiameter) String() string {
	switch m {
	case LowDiameterOff:
		return "off"
	case Minimal:
		return "minimal"
	case Valiant:
		return "valiant"
	case UGALL:
		return "ugal-l"
	case UGALG:
		return "ugal-g"
	case SourceGuided:
		return "source-guided"
	case PortMSB:
		return "port-msb"
	case ValiantHop:
		return "valiant-hop"
	}
	return fmt.Sprintf("LowDiameter(%d)", uint8(m))
}

// ParseLowDiameter parses minimal, valiant, valiant-hop, ugal-l, ugal-g,
// source-guided and port-msb; ok is false
// for anything else.
func ParseLowDiameter(s string) (m LowDiameter, ok bool) {
	switch s {
	case "minimal":
		return Minimal, true
	case "valiant":
		return Valiant, true
	case "valiant-hop":
		return ValiantHop, true
	case "ugal-l", "ugal":
		return UGALL, true
	case "ugal-g":
		return UGALG, true
	case "source-guided", "source", "spritz":
		return SourceGuided, true
	case "port-msb", "owd":
		return PortMSB, true
	}
	return LowDiameterOff, false
}

// Cost of a link for minimal routing: global hops first, then local.
const (
	ldLocal  = 1
	ldGlobal = 1 << 8
)

// lowDiam holds the low-diameter routing tables. Switches are numbered as
// in routing.sw. For each switch and each destination switch (d*) and each
// intermediate target (t*: a group, or a switch), the cost of the minimal
// path and its next-hop ports (offsets into ports).
type lowDiam struct {
	mode   LowDiameter
	nsw    int
	nT     int
	tgt    []int32 // switch -> its intermediate target
	hostSw []int32 // host -> the switch it hangs off
	dCost  []int32 // [sw*nsw + dstSw]
	dOff   []int32
	dCnt   []uint8
	tCost  []int32 // [sw*nT + target]
	tOff   []int32
	tCnt   []uint8
	ports  []int32
	swNode []int32 // switch index -> node
	global bool    // the fabric has global links (Dragonfly)
	// vhAll and vhGlobal are ValiantHop's candidates: each switch's
	// switch-facing ports, and its global ports (valianthop.go).
	vhAll, vhGlobal [][]int32
	// Counters: data packets sent minimally and non-minimally by the
	// source switch's decision.
	nMin, nNonMin uint64
}

type ldHeap []int64

func (h ldHeap) Len() int           { return len(h) }
func (h ldHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h ldHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *ldHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *ldHeap) Pop() any          { o := *h; x := o[len(o)-1]; *h = o[:len(o)-1]; return x }

func (s *Sim) buildLowDiameter() error {
	m := s.cfg.LowDiameter
	if (s.tp.LB == transport.OWD) != (m == PortMSB) {
		return fmt.Errorf("sim: the owd load balancer and port-msb routing go together (lb %s, routing %s)", s.tp.LB, m)
	}
	if m == LowDiameterOff {
		return nil
	}
	if m > ValiantHop {
		return fmt.Errorf("sim: unknown low-diameter routing %d", m)
	}
	if s.cfg.Routing != RoutingHash {
		return fmt.Errorf("sim: low-diameter routing (%s) replaces Routing %s; leave Routing at hash", m, s.cfg.Routing)
	}
	f := s.f
	ld := &s.ld
	ld.mode = m
	var swNode []int32
	for n := range f.Nodes {
		if s.rt.sw[n] >= 0 {
			swNode = append(swNode, int32(n))
		}
	}
	nsw := len(swNode)
	if nsw > 1<<16-2 {
		return fmt.Errorf("sim: low-diameter routing handles at most %d switches, the fabric has %d", 1<<16-2, nsw)
	}
	ld.nsw = nsw
	// Targets: Dragonfly groups (pods) on a Dragonfly, else switches (a
	// Slim Fly's global links join its two halves, not groups).
	global := f.DragonflyGroups()
	ld.tgt = make([]int32, nsw)
	podT := map[int]int32{}
	for i, n := range swNode {
		if !global {
			ld.tgt[i] = int32(i)
			continue
		}
		t, ok := podT[f.Nodes[n].Pod]
		if !ok {
			t = int32(len(podT))
			podT[f.Nodes[n].Pod] = t
		}
		ld.tgt[i] = t
	}
	ld.nT = nsw
	if global {
		ld.nT = len(podT)
	}
	ld.hostSw = make([]int32, len(f.Hosts))
	for h := range f.Hosts {
		ld.hostSw[h] = s.rt.sw[f.HostLeaf(h)]
	}
	ld.swNode, ld.global = swNode, global
	s.ldTables(nil)
	if m == SourceGuided {
		s.buildSourceGuided()
	}
	if m == ValiantHop {
		if err := s.buildValiantHop(); err != nil {
			return err
		}
	}
	if m == PortMSB {
		if ld.nT < 3 || !global {
			return fmt.Errorf("sim: port-msb routing needs a dragonfly (at least 3 groups joined by global links)")
		}
		if s.tp.Coalescing() {
			return fmt.Errorf("sim: port-msb routing echoes each data packet's queuing delay in its ACK: it needs per-packet ACKs (no coalescing)")
		}
		if s.tp.OWDPaths == 0 {
			s.tp.OWDPaths = max(ld.nT-1, 1) // the shortest path and every intermediate group
		}
	}
	return nil
}

// ldPick hashes (flow, entropy) onto the up members of a next-hop group
// at switch node; -1 when none is up.
func (s *Sim) ldPick(node int32, off int32, n uint8, pkt *packet) int32 {
	if n == 0 {
		return -1
	}
	base := s.ld.ports[off : off+int32(n)]
	x := (uint64(pkt.flow)<<17 | uint64(pkt.entropy)<<1 | uint64(pkt.kind)) ^ s.rt.salt[node]
	x ^= x >> 33
	x *= 0xFF51AFD7ED558CCD
	x ^= x >> 33
	i := int((x & 0xFFFFFFFF) * uint64(n) >> 32)
	for k := 0; k < int(n); k++ {
		if p := base[(i+k)%int(n)]; s.ports[p].up {
			return p
		}
	}
	return -1
}

// ldRoute is low-diameter routing at switch node. The packet's via says
// where it is going: 0 nowhere yet (a fresh packet: the source switch
// decides), 1 minimally to its destination, 2+t to intermediate target t.
func (s *Sim) ldRoute(node int32, pkt *packet) int32 {
	ld := &s.ld
	dh := s.hostOf[pkt.dst]
	i, d := s.rt.sw[node], ld.hostSw[dh]
	if i == d {
		return s.rt.pick(node, dh, uint32(pkt.flow), pkt.entropy, pkt.kind, s.ports)
	}
	if pkt.via == 0 && s.flows[pkt.flow].minimal {
		pkt.via = 1 // environment traffic (workloads.Flow.Minimal)
	}
	if ld.mode == SourceGuided {
		// An ACK's EV (transport.Ack.Route: the data packet's, as Spritz
		// Sec. IV assumes, unless the receiver moved off it) steers the
		// reverse path's first two hops.
		if out, ok := s.sgRoute(node, i, pkt); ok {
			return out
		}
	}
	if ld.mode == ValiantHop && (pkt.via == 0 || pkt.via == vhGlobalNext) {
		if out, ok := s.vhRoute(i, d, pkt); ok {
			return out
		}
	}
	if pkt.via == 0 {
		pkt.via = 1
		if ld.mode == PortMSB {
			if pkt.entropy&0x8000 != 0 {
				s.ldMSB(i, d, pkt)
			}
		} else if ld.mode != Minimal && ld.mode != SourceGuided && (pkt.kind == pkData || ld.mode == Valiant) {
			s.ldDecide(node, i, d, pkt)
		}
	}
	if pkt.via >= 2 {
		t := int32(pkt.via) - 2
		if ld.tgt[i] != t {
			k := int(i)*ld.nT + int(t)
			return s.ldPick(node, ld.tOff[k], ld.tCnt[k], pkt)
		}
		pkt.via = 1 // at the intermediate: on to the destination
	}
	k := int(i)*ld.nsw + int(d)
	return s.ldPick(node, ld.dOff[k], ld.dCnt[k], pkt)
}

// ldDecide picks the packet's intermediate target at its source switch
// (index i, destination switch d) for Valiant and UGAL.
func (s *Sim) ldDecide(node, i, d int32, pkt *packet) {
	ld := &s.ld
	ti, td := ld.tgt[i], ld.tgt[d]
	if ti == td || ld.nT < 3 {
		ld.nMin++
		return // same group: minimal
	}
	var t int32
	for {
		t = int32((s.random() >> 32) * uint64(ld.nT) >> 32)
		if t != ti && t != td {
			break
		}
	}
	if ld.mode == UGALL || ld.mode == UGALG {
		if s.ldCost(node, i, d, -1, pkt) <= s.ldCost(node, i, d, t, pkt) {
			ld.nMin++
			return
		}
	}
	ld.nNonMin++
	pkt.via = uint16(t) + 2
}

// ldCost is UGAL's estimate for the path from switch i to switch d, through
// target t (-1: minimal). UGAL-L: the depth of the first egress queue times
// the path's hops (the walk's length). UGAL-G: the bytes queued on every egress port along it
// (following the first up member of each group) plus one packet per hop.
func (s *Sim) ldCost(node, i, d, t int32, pkt *packet) int64 {
	ld := &s.ld
	depth := func(p int32) int64 { return s.ports[p].dataB + s.ports[p].ctrlB }
	hops := int64(0)
	var sum int64
	first := int32(-1)
	cur, curNode := i, node
	leg := t
	for cur != d && hops < 64 {
		var off int32
		var n uint8
		if leg >= 0 {
			if ld.tgt[cur] == leg {
				leg = -1
				continue
			}
			k := int(cur)*ld.nT + int(leg)
			off, n = ld.tOff[k], ld.tCnt[k]
		} else {
			k := int(cur)*ld.nsw + int(d)
			off, n = ld.dOff[k], ld.dCnt[k]
		}
		var p int32
		if first < 0 {
			p = s.ldPick(curNode, off, n, pkt)
			first = p
		} else if n > 0 {
			p = ld.ports[off]
		} else {
			p = -1
		}
		if p < 0 {
			return 1 << 62
		}
		hops++
		sum += depth(p)
		curNode = s.ports[p].peerNode
		cur = s.rt.sw[curNode]
	}
	if ld.mode == UGALL {
		return depth(first) * hops
	}
	return sum + hops*s.wire()
}

// ldTables computes the minimal-routing tables over the switch-to-switch
// links that are not down (nil: all of them): at the start, and again when
// the fabric reconverges after link changes (Config.Reconverge), as a
// routing protocol would.
func (s *Sim) ldTables(down []bool) {
	f := s.f
	ld := &s.ld
	nsw, swNode, global := ld.nsw, ld.swNode, ld.global
	ld.ports = ld.ports[:0]
	// Multi-source Dijkstra from each target set, over switch-switch links.
	cost := make([]int32, nsw)
	var hp ldHeap
	var members []int32
	tables := func(set func(i int) bool, cOut []int32, off []int32, cnt []uint8, stride, col int) {
		for i := range cost {
			cost[i] = -1
		}
		hp = hp[:0]
		for i := 0; i < nsw; i++ {
			if set(i) {
				cost[i] = 0
				hp = append(hp, int64(i))
			}
		}
		heap.Init(&hp)
		done := make([]bool, nsw)
		for hp.Len() > 0 {
			x := heap.Pop(&hp).(int64)
			i, c := int32(x&0xFFFFFFFF), int32(x>>32)
			if done[i] || c != cost[i] {
				continue
			}
			done[i] = true
			for _, p := range f.Nodes[swNode[i]].Ports {
				j := s.rt.sw[f.PeerNode(p)]
				if j < 0 || (down != nil && down[f.Ports[p].Link]) {
					continue
				}
				w := int32(ldLocal)
				if f.Links[f.Ports[p].Link].Global {
					w = ldGlobal
				}
				if nc := c + w; cost[j] < 0 || nc < cost[j] {
					cost[j] = nc
					heap.Push(&hp, int64(nc)<<32|int64(j))
				}
			}
		}
		for i := 0; i < nsw; i++ {
			k := i*stride + col
			cOut[k] = cost[i]
			members = members[:0]
			if cost[i] > 0 {
				for _, p := range f.Nodes[swNode[i]].Ports {
					j := s.rt.sw[f.PeerNode(p)]
					if j < 0 || cost[j] < 0 || (down != nil && down[f.Ports[p].Link]) {
						continue
					}
					w := int32(ldLocal)
					if f.Links[f.Ports[p].Link].Global {
						w = ldGlobal
					}
					if cost[j]+w == cost[i] && len(members) < 255 {
						members = append(members, int32(p))
					}
				}
			}
			off[k], cnt[k] = int32(len(ld.ports)), uint8(len(members))
			ld.ports = append(ld.ports, members...)
		}
	}
	if ld.dCost == nil {
		ld.dCost, ld.dOff, ld.dCnt = make([]int32, nsw*nsw), make([]int32, nsw*nsw), make([]uint8, nsw*nsw)
	}
	for d := 0; d < nsw; d++ {
		tables(func(i int) bool { return i == d }, ld.dCost, ld.dOff, ld.dCnt, nsw, d)
	}
	if global {
		if ld.tCost == nil {
			ld.tCost, ld.tOff, ld.tCnt = make([]int32, nsw*ld.nT), make([]int32, nsw*ld.nT), make([]uint8, nsw*ld.nT)
		}
		for t := 0; t < ld.nT; t++ {
			tables(func(i int) bool { return ld.tgt[i] == int32(t) }, ld.tCost, ld.tOff, ld.tCnt, ld.nT, t)
		}
	} else {
		ld.tCost, ld.tOff, ld.tCnt = ld.dCost, ld.dOff, ld.dCnt
	}
}
