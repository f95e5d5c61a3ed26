package sim

import (
	"encoding/binary"
	"slices"

	"github.com/fabricbench/fabricbench/inventory"
)

// routing holds, for every switch and destination, the group of
// equal-cost egress ports on shortest paths. Hosts attached to the same set
// of switches share their routes everywhere except at those switches, so
// the table is indexed by that set (a destination class: a ToR in a fat
// tree), not by host: memory grows with switches x ToRs, not switches x
// hosts. At a switch the destination host hangs off, its direct ports are
// the group. Groups are interned, so a fat tree needs only a handful of
// distinct groups per switch.
type routing struct {
	nDst int     // destination classes
	sw   []int32 // node -> switch index, -1 for hosts
	dst  []int32 // host -> destination class
	grp  []int32 // [switch*nDst + class] -> group, direct: the host's own
	// grp16 replaces grp when every group number fits in 16 bits (always
	// in fat trees up to hundreds of thousands of hosts): half the table,
	// which is read once per hop at a random place. It holds group + 1, so
	// direct is 0.
	grp16  []uint16
	attOff []int32  // host -> its pairs in att are att[attOff[h]:attOff[h+1]]
	att    []int32  // (switch node, group) pairs: the host's direct ports there
	off    []int32  // group -> offset into ports
	cnt    []int32  // group -> number of ports
	ports  []int32  // concatenated group members
	salt   []uint64 // per node
}

// direct marks a table entry whose group is the destination host's own
// (the switch is attached to it).
const direct = -1

// build computes shortest-path ECMP groups. down, when non-nil, marks links
// to leave out (a reconverged fabric).
func (r *routing) build(f *inventory.Fabric, down []bool, seed uint64) {
	nN, nH := len(f.Nodes), len(f.Hosts)
	r.sw = make([]int32, nN)
	nsw := int32(0)
	for i := range f.Nodes {
		if f.Nodes[i].IsSwitch() {
			r.sw[i] = nsw
			nsw++
		} else {
			r.sw[i] = -1
		}
	}
	r.salt = make([]uint64, nN)
	x := seed ^ 0xD1B54A32D192ED03
	for i := range r.salt {
		x += 0x9E3779B97F4A7C15
		z := x
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		r.salt[i] = z ^ (z >> 31)
	}
	r.off, r.cnt, r.ports = r.off[:0], r.cnt[:0], r.ports[:0]
	intern := make(map[string]int32)
	var members []int32
	key := make([]byte, 0, 64)
	group := func() int32 {
		g, ok := intern[string(key)]
		if !ok {
			g = int32(len(r.off))
			intern[string(key)] = g
			r.off = append(r.off, int32(len(r.ports)))
			r.cnt = append(r.cnt, int32(len(members)))
			r.ports = append(r.ports, members...)
		}
		return g
	}
	// Destination classes: hosts by the switches they reach over links
	// that are up; and each host's direct ports at those switches.
	r.dst = make([]int32, nH)
	r.attOff = make([]int32, nH+1)
	r.att = r.att[:0]
	classOf := make(map[string]int32)
	var seeds [][]int32 // class -> attached switch nodes
	var sk []byte
	for h, hn := range f.Hosts {
		sk = sk[:0]
		var at []int32
		r.attOff[h] = int32(len(r.att))
		for _, p := range f.Nodes[hn].Ports {
			if down != nil && down[f.Ports[p].Link] {
				continue
			}
			m := int32(f.PeerNode(p))
			if !f.Nodes[m].IsSwitch() || slices.Contains(at, m) {
				continue
			}
			at = append(at, m)
			sk = binary.LittleEndian.AppendUint32(sk, uint32(m))
			// The switch's ports to this host, in port order.
			members, key = members[:0], key[:0]
			for _, q := range f.Nodes[m].Ports {
				if down != nil && down[f.Ports[q].Link] {
					continue
				}
				if f.PeerNode(q) == hn {
					members = append(members, int32(q))
					key = binary.LittleEndian.AppendUint32(key, uint32(q))
				}
			}
			r.att = append(r.att, m, group())
		}
		c, ok := classOf[string(sk)]
		if !ok {
			c = int32(len(seeds))
			classOf[string(sk)] = c
			seeds = append(seeds, at)
		}
		r.dst[h] = c
	}
	r.attOff[nH] = int32(len(r.att))
	r.nDst = len(seeds)
	r.grp = make([]int32, int(nsw)*r.nDst)
	dist := make([]int32, nN)
	queue := make([]int32, 0, nN)
	for c, at := range seeds {
		// Distances to the class's hosts: 1 at the switches they hang off
		// (hosts are never transit nodes).
		for i := range dist {
			dist[i] = -1
		}
		queue = queue[:0]
		for _, m := range at {
			dist[m] = 1
			queue = append(queue, m)
		}
		for qi := 0; qi < len(queue); qi++ {
			n := queue[qi]
			for _, p := range f.Nodes[n].Ports {
				if down != nil && down[f.Ports[p].Link] {
					continue
				}
				m := f.PeerNode(p)
				if dist[m] < 0 && f.Nodes[m].IsSwitch() {
					dist[m] = dist[n] + 1
					queue = append(queue, int32(m))
				}
			}
		}
		for n := range f.Nodes {
			si := r.sw[n]
			if si < 0 {
				continue
			}
			if dist[n] == 1 {
				r.grp[int(si)*r.nDst+c] = direct
				continue
			}
			members, key = members[:0], key[:0]
			if dist[n] > 1 {
				for _, p := range f.Nodes[n].Ports {
					if down != nil && down[f.Ports[p].Link] {
						continue
					}
					m := f.PeerNode(p)
					if dist[m] == dist[n]-1 && f.Nodes[m].IsSwitch() {
						members = append(members, int32(p))
						key = binary.LittleEndian.AppendUint32(key, uint32(p))
					}
				}
			}
			r.grp[int(si)*r.nDst+c] = group()
		}
	}
	r.grp16 = nil
	if len(r.off) < 0xFFFF {
		r.grp16 = make([]uint16, len(r.grp))
		for i, g := range r.grp {
			r.grp16[i] = uint16(g + 1) // direct (-1) becomes 0
		}
		r.grp = nil
	}
}

// entry returns the table entry of switch index si for destination class c:
// a group, or direct.
func (r *routing) entry(si, c int) int32 {
	i := si*r.nDst + c
	if r.grp16 != nil {
		return int32(r.grp16[i]) - 1
	}
	return r.grp[i]
}

// group returns the group at switch node towards host dst.
func (r *routing) group(node int32, dst int32) int32 {
	g := r.entry(int(r.sw[node]), int(r.dst[dst]))
	if g == direct {
		a := r.att[r.attOff[dst]:r.attOff[dst+1]]
		for i := 0; i < len(a); i += 2 {
			if a[i] == node {
				return a[i+1]
			}
		}
	}
	return g
}

// first returns the first member of the group at node towards host dst, or -1.
func (r *routing) first(node int, dst int32) int32 {
	g := r.group(int32(node), dst)
	if r.cnt[g] == 0 {
		return -1
	}
	return r.ports[r.off[g]]
}

// pick chooses the egress port at switch node for a packet to host dst by
// hashing (flow, entropy) with the switch's salt. A member whose link is down
// is skipped (local failover); -1 means no route.
func (r *routing) pick(node int32, dst int32, flow uint32, entropy uint16, kind uint8, ports []port) int32 {
	g := r.group(node, dst)
	n := r.cnt[g]
	if n == 0 {
		return -1
	}
	base := r.ports[r.off[g]:]
	if n == 1 {
		return base[0]
	}
	x := (uint64(flow)<<17 | uint64(entropy)<<1 | uint64(kind)) ^ r.salt[node]
	x ^= x >> 33
	x *= 0xFF51AFD7ED558CCD
	x ^= x >> 33
	x *= 0xC4CEB9FE1A85EC53
	x ^= x >> 33
	i := int32((x & 0xFFFFFFFF) * uint64(n) >> 32)
	for k := int32(0); k < n; k++ {
		p := base[(i+k)%n]
		if ports[p].up {
			return p
		}
	}
	return -1
}
