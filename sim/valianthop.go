package sim

import "fmt"

// ValiantHop routing (LowDiameter = ValiantHop) is the Valiant routing of
// the Spritz paper's evaluation (Sec. V-A, "our implementation of the
// Valiant routing where the next hop is sampled uniformly but
// independently at each switch"), a routing step of the ingress stage
// next to Valiant (lowdiameter.go). On a Dragonfly, for a packet whose
// destination is in another group:
//
//   - its source switch sends it on one of its switch-facing ports (local
//     and global) chosen uniformly;
//   - if that was a local port, the next switch sends it on one of its
//     global ports chosen uniformly (a global hop is necessary);
//   - from the group the global hop reached (the intermediate group, or
//     the destination's) it goes minimally to the destination.
//
// The textbook Valiant (Valiant) picks the intermediate group uniformly,
// never the source's or the destination's, so a source switch's own
// global links carry no more than any other of its group's. Here each of
// the source switch's h own global links is taken with probability 1/(a-1+h)
// and each of the other routers' with 1/((a-1+h)·h) (a routers and h global
// links per router): "paths using the direct global links will have higher
// probability compared to the other global links from the same group". A
// global hop may also lead straight into the destination's group. Down
// ports are skipped; a switch with none up falls back to minimal routing.
// Every packet kind (data, ACKs) is routed so, as with Valiant.

// vhGlobalNext is the via of a packet that took a local first hop: the
// switch it reaches picks one of its global ports.
const vhGlobalNext = 0xFFFF

func (s *Sim) buildValiantHop() error {
	ld := &s.ld
	if !ld.global || ld.nT < 3 {
		return fmt.Errorf("sim: valiant-hop routing needs a dragonfly (at least 3 groups joined by global links)")
	}
	if ld.nT+2 >= vhGlobalNext {
		return fmt.Errorf("sim: valiant-hop routing handles at most %d groups, the fabric has %d", vhGlobalNext-3, ld.nT)
	}
	ld.vhAll = make([][]int32, ld.nsw)
	ld.vhGlobal = make([][]int32, ld.nsw)
	for i, n := range ld.swNode {
		for _, p := range s.f.Nodes[n].Ports {
			fp := &s.f.Ports[p]
			if s.hostOf[s.f.Ports[fp.Peer].Node] >= 0 {
				continue
			}
			ld.vhAll[i] = append(ld.vhAll[i], int32(p))
			if s.f.Links[fp.Link].Global {
				ld.vhGlobal[i] = append(ld.vhGlobal[i], int32(p))
			}
		}
	}
	return nil
}

// vhRoute routes a packet at switch index i (destination switch d) whose
// via is 0 (at its source switch) or vhGlobalNext; ok is false where
// minimal routing takes over (pkt.via is then 1).
func (s *Sim) vhRoute(i, d int32, pkt *packet) (out int32, ok bool) {
	ld := &s.ld
	td := ld.tgt[d]
	cand := ld.vhGlobal[i]
	if pkt.via == 0 {
		if ld.tgt[i] == td {
			pkt.via = 1
			return -1, false // same group: minimal
		}
		cand = ld.vhAll[i]
	}
	p := s.vhPick(cand)
	if p < 0 {
		pkt.via = 1
		return -1, false
	}
	if pkt.via == 0 {
		ld.nNonMin++
	}
	peer := s.rt.sw[s.ports[p].peerNode]
	switch t := ld.tgt[peer]; {
	case t == ld.tgt[i]:
		pkt.via = vhGlobalNext // a local hop: the next switch takes a global one
	case t == td:
		pkt.via = 1
	default:
		pkt.via = uint16(t) + 2
	}
	return p, true
}

// vhPick is a uniformly chosen up port of cand, -1 if none is up.
func (s *Sim) vhPick(cand []int32) int32 {
	n := len(cand)
	if n == 0 {
		return -1
	}
	k := int((s.random() >> 32) * uint64(n) >> 32)
	for j := 0; j < n; j++ {
		if p := cand[(k+j)%n]; s.ports[p].up {
			return p
		}
	}
	return -1
}
