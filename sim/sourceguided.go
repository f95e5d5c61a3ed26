package sim

import (
	"sort"

	"github.com/fabricbench/fabricbench/agents/transport"
)

// This file is source-guided routing (Spritz Sec. III), a routing step of
// the ingress stage for Dragonfly and Slim Fly fabrics (LowDiameter =
// SourceGuided). The 16-bit entropy a data packet carries is split in EV1
// (high byte) and EV2 (low byte). The packet's first switch (role ECMP 1)
// forwards it on its fabric port EV1 mod the number of its fabric ports
// (the identity hash of the fine-grained scheme), the second switch (ECMP
// 2) on its fabric port EV2 mod its count; 0xFF in either byte means
// default forwarding at that switch. From there on, and for ACKs, routing
// is minimal (lowdiameter.go). A port that is down loses the packet: the
// sender finds out by timeout, as with a failed link in the paper.
//
// The endpoint table is the control plane's part: sgPaths enumerates, for a
// pair of switches, the entropy values that name bounded simple paths
// between them, each with its unloaded latency and whether it is minimal;
// senders get that list (transport.Flow.Paths) and choose among it
// (agents/transport/spritz.go). On a Dragonfly a path crosses at most one
// intermediate group and two global links, never returns to the source
// group or leaves the destination group; between switches of one group
// only EV1 chooses (a local hop), EV2 is 0xFF. On a Slim Fly any first two
// hops that do not return to the source switch are listed.

// sgEV2 is the via value of a packet whose next switch has the ECMP 2 role.
const sgEV2 = 0xFFFF

// sgState holds the fabric-port tables of source-guided routing.
type sgState struct {
	fab    []int32 // fabric (switch-to-switch) ports of each switch, by port ID
	fabOff []int32 // switch index -> offset into fab
	fabCnt []uint8
	pod    []int32              // switch index -> group (pod)
	global bool                 // Dragonfly groups (inventory.Fabric.DragonflyGroups): keep to Dragonfly path shapes
	paths  [][]transport.PathEV // [srcSw*nsw+dstSw], built on first use
	// Counters: data packets steered by EV1 and by EV2.
	nEV1, nEV2 uint64
}

func (s *Sim) buildSourceGuided() {
	f := s.f
	ld := &s.ld
	sg := &s.sg
	sg.fabOff, sg.fabCnt, sg.pod = make([]int32, ld.nsw), make([]uint8, ld.nsw), make([]int32, ld.nsw)
	sg.global = ld.global
	for n := range f.Nodes {
		i := s.rt.sw[n]
		if i < 0 {
			continue
		}
		sg.pod[i] = int32(f.Nodes[n].Pod)
		sg.fabOff[i] = int32(len(sg.fab))
		var ps []int32
		for _, p := range f.Nodes[n].Ports {
			if s.rt.sw[f.PeerNode(p)] >= 0 {
				ps = append(ps, int32(p))
			}
		}
		sort.Slice(ps, func(a, b int) bool { return ps[a] < ps[b] })
		if len(ps) > 255 {
			ps = ps[:255] // 0xFF is reserved for default forwarding
		}
		sg.fabCnt[i] = uint8(len(ps))
		sg.fab = append(sg.fab, ps...)
	}
	sg.paths = make([][]transport.PathEV, ld.nsw*ld.nsw)
}

// sgRoute is the ECMP 1 / ECMP 2 step for a data packet at switch index i
// (node): the port its EV byte selects, or ok false when the switch has no
// role (default forwarding follows). -1: the selected port is down.
func (s *Sim) sgRoute(node, i int32, pkt *packet) (out int32, ok bool) {
	var ev uint16
	switch pkt.via {
	case 0:
		ev = pkt.entropy >> 8
		pkt.via = 1
		if ev != 0xFF {
			pkt.via = sgEV2
		}
	case sgEV2:
		ev = pkt.entropy & 0xFF
		pkt.via = 1
	default:
		return 0, false
	}
	if ev == 0xFF {
		return 0, false
	}
	sg := &s.sg
	n := sg.fabCnt[i]
	if n == 0 {
		return 0, false
	}
	if pkt.via == sgEV2 {
		sg.nEV1++
	} else {
		sg.nEV2++
	}
	p := sg.fab[sg.fabOff[i]+int32(ev)%int32(n)]
	if !s.ports[p].up {
		return -1, true
	}
	return p, true
}

// sgMinWalk follows minimal routing from switch node to switch index d on
// the first member of each next-hop group: its latency (links, switches
// and a full packet's serialisation per hop), global and local hops.
func (s *Sim) sgMinWalk(node int32, d int32) (lat int64, glob, loc int) {
	ld := &s.ld
	w := s.wire()
	for k := 0; k < 64; k++ {
		i := s.rt.sw[node]
		if i == d {
			return
		}
		kk := int(i)*ld.nsw + int(d)
		if ld.dCnt[kk] == 0 {
			return 1 << 50, 99, 99
		}
		p := ld.ports[ld.dOff[kk]]
		lat += s.hopLat(p, w)
		if s.f.Links[s.f.Ports[p].Link].Global {
			glob++
		} else {
			loc++
		}
		node = s.ports[p].peerNode
	}
	return 1 << 50, 99, 99
}

func (s *Sim) hopLat(p int32, wire int64) int64 {
	return s.ports[p].lat + transport.TxTime(wire, s.ports[p].nominal)
}

// sgPaths returns the endpoint table entry for switch indices (i, d): the
// paths' entropy values, latencies and minimality, sorted by EV. nil when
// i == d or routing is not source-guided.
func (s *Sim) sgPaths(i, d int32) []transport.PathEV {
	if s.ld.mode != SourceGuided || i == d {
		return nil
	}
	ld := &s.ld
	sg := &s.sg
	k := int(i)*ld.nsw + int(d)
	if sg.paths[k] != nil {
		return sg.paths[k]
	}
	w := s.wire()
	minCost := ld.dCost[k]
	var out []transport.PathEV
	isG := func(p int32) int {
		if s.f.Links[s.f.Ports[p].Link].Global {
			return 1
		}
		return 0
	}
	gi, gd := sg.pod[i], sg.pod[d]
	for a := 0; a < int(sg.fabCnt[i]); a++ {
		p1 := sg.fab[sg.fabOff[i]+int32(a)]
		n1node := s.ports[p1].peerNode
		n1 := s.rt.sw[n1node]
		l1 := s.hopLat(p1, w)
		g1 := sg.pod[n1]
		if n1 == d {
			cost := int32(isG(p1))*ldGlobal + int32(1-isG(p1))*ldLocal
			out = append(out, transport.PathEV{EV: uint16(a)<<8 | 0xFF, Latency: l1, Minimal: cost == minCost})
			continue
		}
		if sg.global && gi == gd {
			// Within a group: EV1 picks a local hop, then default forwarding.
			if g1 != gi {
				continue
			}
			ml, mg, mlo := s.sgMinWalk(n1node, d)
			cost := int32(mg)*ldGlobal + int32(mlo+1)*ldLocal
			out = append(out, transport.PathEV{EV: uint16(a)<<8 | 0xFF, Latency: l1 + ml, Minimal: cost == minCost})
			continue
		}
		for b := 0; b < int(sg.fabCnt[n1]); b++ {
			p2 := sg.fab[sg.fabOff[n1]+int32(b)]
			n2node := s.ports[p2].peerNode
			n2 := s.rt.sw[n2node]
			if n2 == i {
				continue
			}
			if sg.global {
				g2 := sg.pod[n2]
				if (g1 == gi && g2 == gi) || (g2 == gi && g1 != gi) || (g1 == gd && g2 != gd) || (g1 == gd && n2 != d) {
					continue
				}
			}
			ml, mg, mlo := s.sgMinWalk(n2node, d)
			glob := isG(p1) + isG(p2) + mg
			loc := 2 - isG(p1) - isG(p2) + mlo
			if sg.global && glob > 2 {
				continue
			}
			if glob+loc > 8 {
				continue
			}
			cost := int32(glob)*ldGlobal + int32(loc)*ldLocal
			out = append(out, transport.PathEV{EV: uint16(a)<<8 | uint16(b), Latency: l1 + s.hopLat(p2, w) + ml, Minimal: cost == minCost})
		}
	}
	sort.Slice(out, func(x, y int) bool { return out[x].EV < out[y].EV })
	if out == nil {
		out = []transport.PathEV{}
	}
	sg.paths[k] = out
	return out
}

// SourceGuidedPaths returns the endpoint table entry from host a's switch to
// host b's (nil when they share a switch or routing is not source-guided).
func (s *Sim) SourceGuidedPaths(a, b int) []transport.PathEV {
	if s.ld.mode != SourceGuided {
		return nil
	}
	return s.sgPaths(s.ld.hostSw[a], s.ld.hostSw[b])
}

// sgLongest stretches a flow's base RTT and hop count from its minimal path
// to its longest listed path (the paper sizes windows on the longest path's
// BDP), so the RTO covers queues on every hop of every path it may take.
func (s *Sim) sgLongest(rtt int64, hops int, a, b int, paths []transport.PathEV) (int64, int) {
	minLat, _, _ := s.sgMinWalk(int32(s.f.HostLeaf(a)), s.ld.hostSw[b])
	var longest int64
	for _, p := range paths {
		longest = max(longest, int64(p.Latency))
	}
	if longest > minLat {
		rtt += longest - minLat
	}
	// A listed path has at most three switch hops more than the minimal
	// one (Dragonfly: local-global-local-global-local against a single global).
	return rtt, hops + 3
}

// LongestPathRTT is the unloaded round trip of the fabric's longest
// bounded path under source-guided routing, from the first and from the
// last host to every other (Spritz's BDP "calculated based on the longest
// path for each topology"; Config.WindowRTT). 0 when routing is not
// source-guided.
func (s *Sim) LongestPathRTT() int64 {
	if s.ld.mode != SourceGuided {
		return 0
	}
	var out int64
	n := s.f.NumHosts()
	for _, a := range []int{0, n - 1} {
		for b := 0; b < n; b++ {
			if a == b {
				continue
			}
			rtt, _, _ := s.pathInfo(a, b)
			if ps := s.SourceGuidedPaths(a, b); len(ps) > 0 {
				rtt, _ = s.sgLongest(rtt, 0, a, b, ps)
			}
			out = max(out, rtt)
		}
	}
	return out
}
