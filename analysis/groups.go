package analysis

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/fabricbench/fabricbench/inventory"
	"gonum.org/v1/gonum/stat"
)

// member is one member of a symmetry group: the ports whose transmit rates
// are summed (one port, except for plane members).
type member struct {
	label string
	ports []int
	rate  float64 // line rate, bps (sum over ports)
}

// group is a symmetry group.
type group struct {
	name, kind string
	members    []member
}

// buildGroups derives the symmetry groups from the fabric (see the package
// documentation), in a fixed order: by kind, then by switch.
func (a *analyzer) buildGroups() []group {
	f := a.f
	var leafUp, spineDown, spineUp, coreDown, rails, locals []group
	globals := map[int]*group{}
	var globalOrder []int
	planes := map[int]*group{}
	var planeOrder []int
	portMember := func(p int) member {
		return member{label: a.portName(p), ports: []int{p}, rate: float64(f.PortRate(p))}
	}
	for ni := range f.Nodes {
		n := &f.Nodes[ni]
		if !n.IsSwitch() {
			continue
		}
		var up, down, hostDown []int
		for _, p := range n.Ports {
			peer := &f.Nodes[f.PeerNode(p)]
			switch {
			case f.Ports[p].Uplink:
				up = append(up, p)
			case peer.IsSwitch():
				down = append(down, p)
			default:
				hostDown = append(hostDown, p)
			}
		}
		mk := func(kind string, ports []int) group {
			g := group{name: kind + ":" + n.Name, kind: kind}
			for _, p := range ports {
				g.members = append(g.members, portMember(p))
			}
			return g
		}
		switch n.Tier {
		case 0:
			if len(up) > 0 {
				leafUp = append(leafUp, mk(KindLeafUplinks, up))
			}
			if len(up) == 0 && len(down) > 0 {
				// A flat router of a low-diameter fabric: its local links,
				// and its global links into its group's.
				var loc []int
				for _, p := range down {
					if !f.Links[f.Ports[p].Link].Global {
						loc = append(loc, p)
						continue
					}
					gg, ok := globals[n.Pod]
					if !ok {
						gg = &group{name: KindGlobalLinks + ":group" + strconv.Itoa(n.Pod), kind: KindGlobalLinks}
						globals[n.Pod] = gg
						globalOrder = append(globalOrder, n.Pod)
					}
					gg.members = append(gg.members, portMember(p))
				}
				if len(loc) > 0 {
					locals = append(locals, mk(KindLocalLinks, loc))
				}
			}
			if len(hostDown) > 0 {
				rails = append(rails, a.rail(n, hostDown))
			}
		case 1:
			if len(down) > 0 {
				spineDown = append(spineDown, mk(KindSpineDownlinks, down))
				key := n.Plane<<24 | (n.Pod + 1)
				pg, ok := planes[key]
				if !ok {
					name := KindPlane + ":fabric"
					if f.Tiers > 2 && n.Pod >= 0 {
						name = KindPlane + ":pod" + strconv.Itoa(n.Pod)
					}
					if len(f.Planes) > 1 {
						// A multi-plane fabric: the spines of each plane.
						name = KindPlane + ":" + f.Planes[n.Plane]
						if f.Tiers > 2 && n.Pod >= 0 {
							name += "-pod" + strconv.Itoa(n.Pod)
						}
					}
					pg = &group{name: name, kind: KindPlane}
					planes[key] = pg
					planeOrder = append(planeOrder, key)
				}
				m := member{label: n.Name, ports: down}
				for _, p := range down {
					m.rate += float64(f.PortRate(p))
				}
				pg.members = append(pg.members, m)
			}
			if len(up) > 0 {
				spineUp = append(spineUp, mk(KindSpineUplinks, up))
			}
		case 2:
			if len(down) > 0 {
				coreDown = append(coreDown, mk(KindCoreDownlinks, down))
			}
		}
	}
	var out []group
	out = append(out, leafUp...)
	out = append(out, spineDown...)
	out = append(out, spineUp...)
	out = append(out, coreDown...)
	out = append(out, rails...)
	out = append(out, locals...)
	sort.Ints(globalOrder)
	for _, g := range globalOrder {
		out = append(out, *globals[g])
	}
	sort.Ints(planeOrder)
	for _, key := range planeOrder {
		out = append(out, *planes[key])
	}
	return append(out, a.planeGroups()...)
}

// planeGroups are the groups of a multi-plane fabric and of a fabric with
// rails: planes:fabric, one member per plane, and rails:fabric, one per
// rail; a member's ports are the host NIC ports on it and the leaf ports
// facing them (both directions of the host links), so its value is the
// plane's (rail's) share of the hosts' traffic.
func (a *analyzer) planeGroups() []group {
	f := a.f
	var out []group
	collect := func(kind string, names []string, of func(p int) int) {
		if len(names) < 2 {
			return
		}
		g := group{name: kind + ":fabric", kind: kind, members: make([]member, len(names))}
		for i, n := range names {
			g.members[i].label = n
		}
		for _, h := range f.Hosts {
			for _, p := range f.Nodes[h].Ports {
				i := of(p)
				if i < 0 || i >= len(names) {
					continue
				}
				m := &g.members[i]
				m.ports = append(m.ports, p, f.Ports[p].Peer)
				m.rate += float64(f.PortRate(p))
			}
		}
		out = append(out, g)
	}
	collect(KindPlanes, f.Planes, func(p int) int { return f.Ports[p].Plane })
	collect(KindRails, f.Rails, func(p int) int { return f.Ports[p].Rail })
	return out
}

// planeShare is the least-loaded plane's share of the planes group's
// load times the number of planes, and the group's CV.
func planeShare(st GroupStat) (share, cv float64, ok bool) {
	var sum, lo float64
	n := 0
	for _, m := range st.Means {
		if m < 0 {
			return 0, 0, false
		}
		if n == 0 || m < lo {
			lo = m
		}
		sum += m
		n++
	}
	if n < 2 || sum <= 0 {
		return 0, 0, false
	}
	return round(lo/sum*float64(n), 6), st.CV, true
}

// rail is the group of the host NICs attached to leaf n (through the leaf
// ports hostDown). Members are named after the host, or host:port when a
// host has several NICs on the leaf.
func (a *analyzer) rail(n *inventory.Node, hostDown []int) group {
	f := a.f
	g := group{name: KindRail + ":" + n.Name, kind: KindRail}
	count := map[int]int{}
	for _, p := range hostDown {
		count[f.PeerNode(p)]++
	}
	for _, p := range hostDown {
		nic := f.Ports[p].Peer
		h := f.Ports[nic].Node
		label := f.Nodes[h].Name
		if count[h] > 1 {
			label = a.portName(nic)
		}
		g.members = append(g.members, member{label: label, ports: []int{nic}, rate: float64(f.PortRate(nic))})
	}
	return g
}

// groupData is a group's member series on the grid and its active window.
type groupData struct {
	vals   [][]float64 // [member][bucket], bps, NaN missing
	active []bool      // per bucket
	nAct   int
}

func (a *analyzer) groupData(gr group) groupData {
	d := groupData{active: make([]bool, a.g.n)}
	var line float64
	for _, m := range gr.members {
		d.vals = append(d.vals, a.sumRates(m.ports))
		line += m.rate
	}
	if len(gr.members) > 0 {
		line /= float64(len(gr.members))
	}
	for i := 0; i < a.g.n; i++ {
		sum, n := 0.0, 0
		for _, v := range d.vals {
			if !math.IsNaN(v[i]) {
				sum += v[i]
				n++
			}
		}
		if n > 0 && sum/float64(n) >= a.opts.ActiveFraction*line && line > 0 {
			d.active[i] = true
			d.nAct++
		}
	}
	return d
}

// symmetry summarises a group and lists its starved members: those whose
// mean is a low outlier (robust z ≤ −SymZ) at least VictimDeviation below
// the group median.
func (a *analyzer) symmetry(gr group, d groupData) (GroupStat, []starved) {
	st := GroupStat{Name: gr.name, Kind: gr.kind, Active: d.nAct > 0, ActiveIntervals: d.nAct}
	means := make([]float64, len(gr.members))
	var valid []float64
	for mi, v := range d.vals {
		sum, n := 0.0, 0
		for i, x := range v {
			if math.IsNaN(x) || (st.Active && !d.active[i]) {
				continue
			}
			sum += x
			n++
		}
		means[mi] = math.NaN()
		if n > 0 {
			means[mi] = sum / float64(n)
			valid = append(valid, means[mi])
		}
		st.Members = append(st.Members, gr.members[mi].label)
	}
	for _, m := range means {
		if math.IsNaN(m) {
			st.Means = append(st.Means, NoData)
		} else {
			st.Means = append(st.Means, round(m, 0))
		}
	}
	if !st.Active || len(valid) == 0 {
		return st, nil
	}
	mean, std := stat.PopMeanStdDev(valid, nil)
	if mean > 0 {
		st.CV = round(std/mean, 6)
	}
	lo, hi := valid[0], valid[0]
	for _, v := range valid {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if lo > 0 {
		st.MaxMin = round(hi/lo, 6)
	}
	if len(valid) < 3 {
		return st, nil
	}
	med := median(valid)
	if med <= 0 {
		return st, nil
	}
	dev := make([]float64, len(valid))
	for i, v := range valid {
		dev[i] = math.Abs(v - med)
	}
	mad := math.Max(median(dev), 0.01*med)
	var out []starved
	for mi, x := range means {
		if math.IsNaN(x) {
			continue
		}
		z := 0.6745 * (x - med) / mad
		short := (med - x) / med
		if z > -a.opts.SymZ || short < a.opts.VictimDeviation {
			continue
		}
		m := gr.members[mi]
		node := -1
		if gr.kind == KindPlane && len(m.ports) > 0 {
			node = a.f.Ports[m.ports[0]].Node
		}
		out = append(out, starved{group: gr.name, label: m.label, ports: m.ports, node: node, short: short, z: z, mean: x, med: med})
	}
	return st, out
}

// signedPercent formats a fraction as "−51%" / "+3%".
func signedPercent(f float64) string {
	p := math.Round(f * 100)
	if p < 0 {
		return fmt.Sprintf("\u2212%.0f%%", -p)
	}
	return fmt.Sprintf("+%.0f%%", p)
}

// median of v (the mean of the two middle values for even lengths); v is
// not modified. NaN for an empty slice.
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// fmtRate renders a rate for people: Gb/s from 1 Gb/s up, Mb/s below (lab
// links run at a few hundred Mb/s).
func fmtRate(bps float64) string {
	if bps >= 1e9 || bps == 0 {
		return fmt.Sprintf("%.1f Gb/s", bps/1e9)
	}
	return fmt.Sprintf("%.1f Mb/s", bps/1e6)
}
