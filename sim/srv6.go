package sim

import (
	"fmt"

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
// The containers live in a table (Sim.sr.sids, Sim.sr.flow: each flow's
// current one); a packet carries only the pfSRv6 flag, its container (the
// path field, which is an explicit path's otherwise; pinned flows have
// none) and its cursor (the hop byte), so the packet stays one cache line
// and nothing is allocated per packet. RepinSRv6 gives a flow a new
// container mid-run; packets in flight keep theirs. A trimmed header travels at the trimmed size
// (no encapsulation bytes) and is decapsulated without a size change.
// The per-switch routes towards every switch are computed once, in New,
// over every link; a member whose link is down is skipped (local
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
	on     bool
	flow   []int32 // flow index -> 1 + offset into sids of [n, node...], 0: not pinned
	sids   []int32 // per container: count, then the switch node of each uN
	nodeOf map[uint16]int32
	tgt    []int32 // node -> index of its route table (switches), -1 for hosts
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
	sr := &s.sr
	sr.nodeOf = map[uint16]int32{}
	sr.tgt = make([]int32, len(f.Nodes))
	var targets []int32
	for i := range f.Nodes {
		sr.tgt[i] = -1
		if f.Nodes[i].IsSwitch() {
			sr.nodeOf[USID(f, i)] = int32(i)
			sr.tgt[i] = int32(len(targets))
			targets = append(targets, int32(i))
		}
	}
	// Shortest-path routes towards every switch, through switches.
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
	idx := make(map[int]int32, len(s.flows))
	for i, fl := range s.cfg.Matrix.Flows {
		idx[fl.ID] = int32(i)
	}
	sr.flow = make([]int32, len(s.flows))
	for k, sp := range cfg.Paths {
		name := sp.Name
		if name == "" {
			name = fmt.Sprintf("#%d", k)
		}
		if len(sp.Flows) == 0 {
			if _, err := s.srVia(name, sp.SIDs); err != nil {
				return err
			}
		}
		for _, id := range sp.Flows {
			fi, ok := idx[id]
			if !ok {
				return fmt.Errorf("sim: SRv6 path %s: flow %d is not in the traffic matrix", name, id)
			}
			if s.flows[fi].path != 0 {
				return fmt.Errorf("sim: SRv6 path %s: flow %d also has an explicit path (Config.Paths)", name, id)
			}
			if sr.flow[fi] != 0 {
				return fmt.Errorf("sim: SRv6 path %s: flow %d is already pinned by another SRv6 path", name, id)
			}
			if err := s.srPin(fi, name, sp.SIDs, sp.Strict); err != nil {
				return err
			}
		}
	}
	sr.on = true
	return nil
}

// srVia resolves a uSID list to switch nodes.
func (s *Sim) srVia(name string, sids []uint16) ([]int32, error) {
	if len(sids) == 0 {
		return nil, fmt.Errorf("sim: SRv6 path %s: no uSIDs", name)
	}
	var via []int32
	for i, sid := range sids {
		n, ok := s.sr.nodeOf[sid]
		if !ok {
			return nil, fmt.Errorf("sim: SRv6 path %s: uSID %d (%#04x) is no switch's uN", name, i, sid)
		}
		if i > 0 && via[i-1] == n {
			return nil, fmt.Errorf("sim: SRv6 path %s: uSID %d (%#04x, %s) repeats the one before", name, i, sid, s.f.Nodes[n].Name)
		}
		via = append(via, n)
	}
	return via, nil
}

// srPin checks the uSID list for flow index fi and makes it the flow's
// container (packets already sent keep theirs).
func (s *Sim) srPin(fi int32, name string, sids []uint16, strict bool) error {
	f, sr := s.f, &s.sr
	id := s.cfg.Matrix.Flows[fi].ID
	bad := func(format string, a ...any) error {
		return fmt.Errorf("sim: SRv6 path %s: %s", name, fmt.Sprintf(format, a...))
	}
	via, err := s.srVia(name, sids)
	if err != nil {
		return err
	}
	adjacent := func(a, b int32) bool {
		for _, p := range f.Nodes[a].Ports {
			if int32(f.PeerNode(p)) == b {
				return true
			}
		}
		return false
	}
	st := &s.flows[fi]
	// The decapsulating leaf: the last listed switch if the destination
	// host hangs off it, else the host's first switch.
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
		list = append(list, leaf)
	}
	if len(list)+1 > MaxUSIDs {
		return bad("flow %d: %d uSIDs (%d listed, the destination leaf's uN and uDX), a container holds %d",
			id, len(list)+1, len(via), MaxUSIDs)
	}
	first := s.ports[s.hosts[st.src].port].peerNode
	if strict {
		prev := first
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
	at := first
	for _, tn := range list {
		if at != tn && sr.gCnt[int(sr.tgt[tn])*len(f.Nodes)+int(at)] == 0 {
			return bad("flow %d: no route from %s to %s", id, f.Nodes[at].Name, f.Nodes[tn].Name)
		}
		at = tn
	}
	sr.flow[fi] = int32(len(sr.sids)) + 1
	sr.sids = append(sr.sids, int32(len(list)))
	sr.sids = append(sr.sids, list...)
	return nil
}

// RepinSRv6 changes the uSID list of flow ID flow while the run goes on
// (a path controller's reroute, e.g. from Config.OnSample): its next data
// packets take the new container; packets already sent keep theirs. The
// flow must have been pinned in Config.SRv6. The list is checked as in New.
func (s *Sim) RepinSRv6(flow int, name string, sids []uint16, strict bool) error {
	for i, fl := range s.cfg.Matrix.Flows {
		if fl.ID == flow {
			if !s.sr.on || s.sr.flow[i] == 0 {
				return fmt.Errorf("sim: SRv6 path %s: flow %d is not pinned", name, flow)
			}
			return s.srPin(int32(i), name, sids, strict)
		}
	}
	return fmt.Errorf("sim: SRv6 path %s: flow %d is not in the traffic matrix", name, flow)
}

// srEncap encapsulates a pinned flow's new data packet at the sender.
func (s *Sim) srEncap(fi int32, pkt *packet) {
	if c := s.sr.flow[fi]; c != 0 {
		pkt.flags |= pfSRv6
		pkt.path, pkt.hop = c, 0 // the container, as of sending
		pkt.size += SRv6Encap
	}
}

// srRoute is the uSID stage for an encapsulated packet at switch node: it
// shifts the container while the active uSID is this switch's uN and
// forwards towards the next one's switch; with the container down to the
// uDX it decapsulates and returns srDecap (route normally to the host).
func (s *Sim) srRoute(node int32, pkt *packet) int32 {
	sr := &s.sr
	off := pkt.path
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
		pkt.path, pkt.hop = 0, 0
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
