package sim

import (
	"fmt"
	"slices"

	"github.com/fabricbench/fabricbench/inventory"
)

// SRv6 micro-SIDs (uSID, uN with the NEXT-CSID flavour), as an ingress
// routing stage.
//
// Every switch has a uN micro-SID: USID(f, node), the switch's index among
// the fabric's switches + 1, as the lab generator numbers its locators
// (block fd00:bbbb::/32, locator fd00:bbbb:<uN>::/48). A pinned flow's
// sender encapsulates its data packets in an outer IPv6 header (SRv6Encap
// bytes, added to the packet's wire size while it is encapsulated) whose
// destination address is one uSID container: the uN of each listed switch,
// then the uN of the destination host's leaf and its uDX function (which
// decapsulates towards the host), at most MaxUSIDs 16-bit uSIDs after the
// 32-bit block. A switch whose uN is the active uSID shifts the container
// (the packet's cursor advances) and forwards towards the next uSID's
// switch by normal ECMP routing over the shortest paths to that switch
// (so a list may name non-adjacent switches); other switches just route
// towards the active uSID's switch. At the destination leaf the container
// is down to the uDX: the leaf decapsulates (the size drops by SRv6Encap)
// and delivers. ACKs are routed by ECMP, unencapsulated.
//
// The container lives in a per-flow table (Sim.sr.flow -> Sim.sr.sids);
// a packet carries only the pfSRv6 flag and its cursor (the hop byte, as
// an explicit path's hop), so the packet stays one cache line and nothing
// is allocated per packet. A trimmed header travels at the trimmed size
// (no encapsulation bytes) and is decapsulated without a size change.
// The per-switch routes towards each listed switch are computed once, in
// New, over every link; a member whose link is down is skipped (local
// failover), as ECMP does, but they are not reconverged.

// SRv6Encap is the encapsulation overhead on the wire: one outer IPv6
// header (the uSID container fits in its destination address, no SRH).
const SRv6Encap = 40

// MaxUSIDs is how many 16-bit uSIDs a container holds after its 32-bit
// block (128 = 32 + 6 x 16).
const MaxUSIDs = 6

// SRv6 pins flows to uSID paths (Config.SRv6).
type SRv6 struct {
	Paths []SRv6Path
}

// SRv6Path pins flows (IDs of the traffic matrix) to a uSID list.
type SRv6Path struct {
	Name  string
	Flows []int
	// SIDs are the uN micro-SIDs of the switches to traverse, in order
	// (USID gives a switch's). The destination leaf's uN and uDX are
	// appended unless the list already ends at the leaf (then only uDX);
	// the whole container holds at most MaxUSIDs.
	SIDs []uint16
	// Strict requires every listed switch to be adjacent to the previous
	// one (the source host's leaf for the first, unless it is that leaf)
	// and the last to be adjacent to, or be, the destination leaf.
	Strict bool
}

// USID returns switch node's uN micro-SID: its index among the fabric's
// switches + 1 (0 for a host).
func USID(f *inventory.Fabric, node int) uint16 {
	if !f.Nodes[node].IsSwitch() {
		return 0
	}
	n := 0
	for i := 0; i < node; i++ {
		if f.Nodes[i].IsSwitch() {
			n++
		}
	}
	return uint16(n + 1)
}

// srv6State is the uSID stage's tables.
type srv6State struct {
	on   bool
	flow []int32 // flow index -> 1 + offset into sids of [n, node...], 0: not pinned
	sids []int32 // per container: count, then the switch node of each uN
	tgt  []int32 // node -> index of its route table, -1 if no list names it
	// Routes towards listed switches: [tgt*nodes + node] -> group in
	// gOff/gCnt over gPorts (ports on shortest paths to the target).
	gOff, gCnt []int32
	gPorts     []int32
}

func (s *Sim) buildSRv6() error {
	cfg := s.cfg.SRv6
	if len(cfg.Paths) == 0 {
		return nil
	}
	f := s.f
	nodeOf := map[uint16]int32{}
	for i := range f.Nodes {
		if f.Nodes[i].IsSwitch() {
			nodeOf[USID(f, i)] = int32(i)
		}
	}
	idx := make(map[int]int32, len(s.flows))
	for i, fl := range s.cfg.Matrix.Flows {
		idx[fl.ID] = int32(i)
	}
	sr := &s.sr
	sr.flow = make([]int32, len(s.flows))
	sr.tgt = make([]int32, len(f.Nodes))
	for i := range sr.tgt {
		sr.tgt[i] = -1
	}
	adjacent := func(a, b int32) bool {
		for _, p := range f.Nodes[a].Ports {
			if int32(f.PeerNode(p)) == b {
				return true
			}
		}
		return false
	}
	var targets []int32
	for k, sp := range cfg.Paths {
		name := sp.Name
		if name == "" {
			name = fmt.Sprintf("#%d", k)
		}
		bad := func(format string, a ...any) error {
			return fmt.Errorf("sim: SRv6 path %s: %s", name, fmt.Sprintf(format, a...))
		}
		if len(sp.SIDs) == 0 {
			return bad("no uSIDs")
		}
		var via []int32
		for i, sid := range sp.SIDs {
			n, ok := nodeOf[sid]
			if !ok {
				return bad("uSID %d (%#04x) is no switch's uN", i, sid)
			}
			if i > 0 && via[i-1] == n {
				return bad("uSID %d (%#04x, %s) repeats the one before", i, sid, f.Nodes[n].Name)
			}
			via = append(via, n)
		}
		for _, id := range sp.Flows {
			fi, ok := idx[id]
			if !ok {
				return bad("flow %d is not in the traffic matrix", id)
			}
			if s.flows[fi].path != 0 {
				return bad("flow %d also has an explicit path (Config.Paths)", id)
			}
			if sr.flow[fi] != 0 {
				return bad("flow %d is already pinned by another SRv6 path", id)
			}
			st := &s.flows[fi]
			// The decapsulating leaf: the last listed switch if the
			// destination host hangs off it, else the host's first switch.
			leaf := int32(-1)
			for _, p := range f.Nodes[st.dstNode].Ports {
				if m := int32(f.PeerNode(p)); f.Nodes[m].IsSwitch() {
					if m == via[len(via)-1] {
						leaf = m
						break
					}
					if leaf < 0 {
						leaf = m
					}
				}
			}
			if leaf < 0 {
				return bad("flow %d: destination host %d has no switch", id, st.dst)
			}
			list := via
			if list[len(list)-1] != leaf {
				list = append(slices.Clip(via), leaf)
			}
			if len(list)+1 > MaxUSIDs {
				return bad("flow %d: %d uSIDs (%d listed, the destination leaf's uN and uDX), a container holds %d",
					id, len(list)+1, len(via), MaxUSIDs)
			}
			if sp.Strict {
				prev := int32(s.ports[s.hosts[st.src].port].peerNode)
				for i, n := range via {
					if !(i == 0 && n == prev) && !adjacent(prev, n) {
						return bad("strict: hop %d, %s is not adjacent to %s", i, f.Nodes[n].Name, f.Nodes[prev].Name)
					}
					prev = n
				}
				if prev != leaf && !adjacent(prev, leaf) {
					return bad("strict: %s is not adjacent to the destination leaf %s", f.Nodes[prev].Name, f.Nodes[leaf].Name)
				}
			}
			sr.flow[fi] = int32(len(sr.sids)) + 1
			sr.sids = append(sr.sids, int32(len(list)))
			sr.sids = append(sr.sids, list...)
			for _, n := range list {
				if sr.tgt[n] < 0 {
					sr.tgt[n] = int32(len(targets))
					targets = append(targets, n)
				}
			}
		}
	}
	// Shortest-path routes towards each target switch, through switches.
	nN := len(f.Nodes)
	sr.gOff = make([]int32, len(targets)*nN)
	sr.gCnt = make([]int32, len(targets)*nN)
	dist := make([]int32, nN)
	var queue []int32
	for t, tn := range targets {
		for i := range dist {
			dist[i] = -1
		}
		dist[tn] = 0
		queue = append(queue[:0], tn)
		for qi := 0; qi < len(queue); qi++ {
			n := queue[qi]
			for _, p := range f.Nodes[n].Ports {
				m := f.PeerNode(p)
				if dist[m] < 0 && f.Nodes[m].IsSwitch() {
					dist[m] = dist[n] + 1
					queue = append(queue, int32(m))
				}
			}
		}
		for n := range f.Nodes {
			if !f.Nodes[n].IsSwitch() || dist[n] <= 0 {
				continue
			}
			g := t*nN + n
			sr.gOff[g] = int32(len(sr.gPorts))
			for _, p := range f.Nodes[n].Ports {
				if m := f.PeerNode(p); dist[m] == dist[n]-1 && f.Nodes[m].IsSwitch() {
					sr.gPorts = append(sr.gPorts, int32(p))
				}
			}
			sr.gCnt[g] = int32(len(sr.gPorts)) - sr.gOff[g]
		}
	}
	// Every listed switch must be reachable from every switch of the
	// pinned flows' paths: check from the hosts' leaves.
	for fi, off := range sr.flow {
		if off == 0 {
			continue
		}
		st := &s.flows[fi]
		at := s.ports[s.hosts[st.src].port].peerNode
		n := sr.sids[off-1]
		for _, tn := range sr.sids[off : off+n] {
			if at != tn && sr.gCnt[int(sr.tgt[tn])*nN+int(at)] == 0 {
				return fmt.Errorf("sim: SRv6: flow %d: no route from %s to %s", s.cfg.Matrix.Flows[fi].ID, f.Nodes[at].Name, f.Nodes[tn].Name)
			}
			at = tn
		}
	}
	sr.on = true
	return nil
}

// srEncap encapsulates a pinned flow's new data packet at the sender.
func (s *Sim) srEncap(fi int32, pkt *packet) {
	if s.sr.flow[fi] != 0 {
		pkt.flags |= pfSRv6
		pkt.hop = 0
		pkt.size += SRv6Encap
	}
}

// srRoute is the uSID stage for an encapsulated packet at switch node: it
// shifts the container while the active uSID is this switch's uN and
// forwards towards the next one's switch; with the container down to the
// uDX it decapsulates and returns srDecap (route normally to the host).
func (s *Sim) srRoute(node int32, pkt *packet) int32 {
	sr := &s.sr
	off := sr.flow[pkt.flow]
	n := sr.sids[off-1]
	list := sr.sids[off : off+n]
	c := int32(pkt.hop)
	for c < n && list[c] == node {
		c++ // uN with NEXT-CSID: shift and forward
	}
	pkt.hop = uint8(c)
	if c == n {
		// uDX at the destination leaf (the last uN was this switch's).
		pkt.flags &^= pfSRv6
		if pkt.flags&pfTrimmed == 0 {
			pkt.size -= SRv6Encap
		}
		pkt.hop = 0
		return srDecap
	}
	g := int(sr.tgt[list[c]])*len(s.f.Nodes) + int(node)
	cnt := sr.gCnt[g]
	if cnt == 0 {
		return -1
	}
	base := sr.gPorts[sr.gOff[g] : sr.gOff[g]+cnt]
	if cnt == 1 {
		if !s.ports[base[0]].up {
			return -1
		}
		return base[0]
	}
	// The outer header's hash: the inner flow's entropy (the flow label).
	x := (uint64(pkt.flow)<<17 | uint64(pkt.entropy)<<1) ^ s.rt.salt[node] ^ uint64(list[c])<<48
	if s.cfg.HashAddressesOnly {
		st := &s.flows[pkt.flow]
		x = (uint64(st.srcNode)<<16 ^ uint64(list[c])) ^ s.rt.salt[node]
	}
	x ^= x >> 33
	x *= 0xFF51AFD7ED558CCD
	x ^= x >> 33
	x *= 0xC4CEB9FE1A85EC53
	x ^= x >> 33
	i := int32((x & 0xFFFFFFFF) * uint64(cnt) >> 32)
	for k := int32(0); k < cnt; k++ {
		if p := base[(i+k)%cnt]; s.ports[p].up {
			return p
		}
	}
	return -1
}

// srDecap is srRoute's "decapsulated here, route to the host" result.
const srDecap = -2
