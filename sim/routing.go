package sim

import (
	"encoding/binary"

	"github.com/fabricbench/fabricbench/inventory"
)

// routing holds, for every switch and destination host, the group of
// equal-cost egress ports on shortest paths. Groups are interned, so a fat
// tree needs only a handful of distinct groups per switch.
type routing struct {
	nHosts int
	sw     []int32  // node -> switch index, -1 for hosts
	grp    []int32  // [switch*nHosts + host] -> group
	off    []int32  // group -> offset into ports
	cnt    []int32  // group -> number of ports
	ports  []int32  // concatenated group members
	salt   []uint64 // per node
}

// build computes shortest-path ECMP groups. down, when non-nil, marks links
// to leave out (a reconverged fabric).
func (r *routing) build(f *inventory.Fabric, down []bool, seed uint64) {
	nN, nH := len(f.Nodes), len(f.Hosts)
	r.nHosts = nH
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
	r.grp = make([]int32, int(nsw)*nH)
	r.off, r.cnt, r.ports = r.off[:0], r.cnt[:0], r.ports[:0]
	intern := make(map[string]int32)
	dist := make([]int32, nN)
	queue := make([]int32, 0, nN)
	var members []int32
	key := make([]byte, 0, 64)
	for h, hn := range f.Hosts {
		for i := range dist {
			dist[i] = -1
		}
		dist[hn] = 0
		queue = append(queue[:0], int32(hn))
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
			members = members[:0]
			key = key[:0]
			if dist[n] > 0 {
				for _, p := range f.Nodes[n].Ports {
					if down != nil && down[f.Ports[p].Link] {
						continue
					}
					m := f.PeerNode(p)
					if dist[m] == dist[n]-1 && (f.Nodes[m].IsSwitch() || m == hn) {
						members = append(members, int32(p))
						key = binary.LittleEndian.AppendUint32(key, uint32(p))
					}
				}
			}
			g, ok := intern[string(key)]
			if !ok {
				g = int32(len(r.off))
				intern[string(key)] = g
				r.off = append(r.off, int32(len(r.ports)))
				r.cnt = append(r.cnt, int32(len(members)))
				r.ports = append(r.ports, members...)
			}
			r.grp[int(si)*nH+h] = g
		}
	}
}

// first returns the first member of the group at node towards host dst, or -1.
func (r *routing) first(node int, dst int32) int32 {
	g := r.grp[int(r.sw[node])*r.nHosts+int(dst)]
	if r.cnt[g] == 0 {
		return -1
	}
	return r.ports[r.off[g]]
}

// pick chooses the egress port at switch node for a packet to host dst by
// hashing (flow, entropy) with the switch's salt. A member whose link is down
// is skipped (local failover); -1 means no route.
func (r *routing) pick(node int32, dst int32, flow uint32, entropy uint16, kind uint8, ports []port) int32 {
	g := r.grp[int(r.sw[node])*r.nHosts+int(dst)]
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
