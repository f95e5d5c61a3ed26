package inventory

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The fabric model built from a hardware inventory (Hardware.Fabric).

// Fabric builds the fabric model of the inventory, for the same analysis
// as simulated fabrics. Nodes: the hosts, ordered by name (digit runs
// compare as numbers: host2 before host10), then the leaves (tier 0,
// RoleLeaf), spines (tier 1, RoleSpine) and super-spines (tier 2,
// RoleCore), each ordered by name. Fabric.Hosts[h] = h. Pods are the
// devices' pods (-1 when not set; a host without a pod takes its leaves'
// pod when they agree); HostsPerPod is set when every host has a pod and
// all pods have as many hosts. Ports keep the inventory's names and a
// device's ports are in declaration order (undeclared ones after, by
// name). Links have the inventory's resolved rates and latency 0. Tiers is
// one more than the highest switch tier.
func (h *Hardware) Fabric() (*Fabric, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", h.File, fmt.Sprintf(format, args...))
	}
	order := make([]int, len(h.Devices))
	for i := range order {
		order[i] = i
	}
	rank := func(d *Device) int {
		if d.Role == DeviceHost {
			return -1
		}
		return d.Role.Tier()
	}
	for i := range h.Devices {
		d := &h.Devices[i]
		if !contains(deviceRoles, string(d.Role)) {
			return nil, fail("device %s has unknown role %q", d.Name, d.Role)
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := &h.Devices[order[i]], &h.Devices[order[j]]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		return naturalLess(a.Name, b.Name)
	})
	byName := make(map[string]*Device, len(h.Devices))
	for i := range h.Devices {
		d := &h.Devices[i]
		if _, dup := byName[d.Name]; dup {
			return nil, fail("device name %s used twice", d.Name)
		}
		byName[d.Name] = d
	}
	// Host pods default to the pod of their leaves.
	pods := make(map[string]int, len(h.Devices))
	for i := range h.Devices {
		pods[h.Devices[i].Name] = h.Devices[i].Pod
	}
	leafPods := map[string]map[int]bool{}
	for _, c := range h.Links {
		for _, pair := range [][2]Endpoint{{c.A, c.B}, {c.B, c.A}} {
			hd, sd := byName[pair[0].Device], byName[pair[1].Device]
			if hd == nil || sd == nil || hd.Role != DeviceHost || hd.Pod >= 0 {
				continue
			}
			if leafPods[hd.Name] == nil {
				leafPods[hd.Name] = map[int]bool{}
			}
			leafPods[hd.Name][sd.Pod] = true
		}
	}
	for name, ps := range leafPods {
		if len(ps) == 1 {
			for pod := range ps {
				pods[name] = pod
			}
		}
	}
	b := NewBuilder(h.Name)
	ids := make(map[string]int, len(h.Devices))
	tiers := 1
	perPod := map[int]int{}
	allPodded := true
	for _, i := range order {
		d := &h.Devices[i]
		ids[d.Name] = b.AddNode(d.Name, d.Role.Role(), d.Role.Tier(), pods[d.Name], 0)
		if d.Role.IsSwitch() {
			tiers = max(tiers, d.Role.Tier()+1)
		} else if pods[d.Name] >= 0 {
			perPod[pods[d.Name]]++
		} else {
			allPodded = false
		}
	}
	type names struct{ lo, hi string }
	portNames := make([]names, 0, len(h.Links))
	for i, c := range h.Links {
		da, db := byName[c.A.Device], byName[c.B.Device]
		if da == nil || db == nil {
			return nil, fail("links[%d]: unknown device", i)
		}
		lo, hi := c.A, c.B
		if da.Role.Tier() > db.Role.Tier() {
			lo, hi = hi, lo
			da, db = db, da
		}
		if da.Role.Tier() == db.Role.Tier() {
			return nil, fail("links[%d] joins two devices of the same tier (%s and %s)", i, c.A.Device, c.B.Device)
		}
		if c.RateBps <= 0 {
			return nil, fail("links[%d] (%s - %s) has no speed", i, c.A, c.B)
		}
		b.Connect(ids[lo.Device], ids[hi.Device], c.RateBps, 0)
		portNames = append(portNames, names{lo.Port, hi.Port})
	}
	hostsPerPod := 0
	if allPodded && len(perPod) > 0 {
		for _, n := range perPod {
			if hostsPerPod == 0 {
				hostsPerPod = n
			} else if n != hostsPerPod {
				hostsPerPod = 0
				break
			}
		}
	}
	f, err := b.Fabric(tiers, hostsPerPod)
	if err != nil {
		return nil, fail("%v", err)
	}
	for lid, n := range portNames {
		f.Ports[f.Links[lid].A].Name = n.lo
		f.Ports[f.Links[lid].B].Name = n.hi
	}
	// Order every node's ports as the inventory declares them.
	for ni := range f.Nodes {
		node := &f.Nodes[ni]
		d := byName[node.Name]
		decl := map[string]int{}
		if d.Role == DeviceHost {
			for j, n := range d.NICs {
				decl[n.Name] = j
			}
		} else {
			for j, pt := range d.Ports {
				decl[pt.Name] = j
			}
		}
		sort.SliceStable(node.Ports, func(i, j int) bool {
			a, b := f.Ports[node.Ports[i]].Name, f.Ports[node.Ports[j]].Name
			ia, oka := decl[a]
			ib, okb := decl[b]
			switch {
			case oka && okb:
				return ia < ib
			case oka != okb:
				return oka
			}
			return naturalLess(a, b)
		})
		for idx, pid := range node.Ports {
			f.Ports[pid].Index = idx
		}
	}
	h.carryRailsPlanes(f, byName)
	return f, nil
}

// carryRailsPlanes puts the inventory's rails on the fabric (Fabric.Rails
// "rail<index>", Port.Rail of every host NIC on a declared rail) and its
// planes when they are real planes: every switch in one, no link between
// two, every host with a NIC in each (a multi-plane fabric). Planes that
// only group spines stay the inventory's (Hardware.Planes).
func (h *Hardware) carryRailsPlanes(f *Fabric, byName map[string]*Device) {
	if len(h.Rails) > 0 {
		idx := map[int]int{}
		for i, r := range h.Rails {
			idx[r.Index] = i
			f.Rails = append(f.Rails, "rail"+strconv.Itoa(r.Index))
		}
		for _, hn := range f.Hosts {
			d := byName[f.Nodes[hn].Name]
			for _, p := range f.Nodes[hn].Ports {
				for _, nic := range d.NICs {
					if nic.Name == f.Ports[p].Name && nic.Rail >= 0 {
						if i, ok := idx[nic.Rail]; ok {
							f.Ports[p].Rail = i
						}
					}
				}
			}
		}
	}
	if len(h.Planes) < 2 || len(h.Planes) > MaxPlanes {
		return
	}
	plane := map[string]int{}
	for i, pl := range h.Planes {
		for _, sw := range pl.Switches {
			plane[sw] = i
		}
	}
	g := *f
	g.Nodes = append([]Node(nil), f.Nodes...)
	g.Ports = append([]Port(nil), f.Ports...)
	g.Planes = make([]string, len(h.Planes))
	for i, pl := range h.Planes {
		g.Planes[i] = pl.Name
	}
	for i := range g.Nodes {
		if g.Nodes[i].IsSwitch() {
			pl, ok := plane[g.Nodes[i].Name]
			if !ok {
				return
			}
			g.Nodes[i].Plane = pl
		}
	}
	g.setPortPlanes()
	if g.validatePlanes() != nil {
		return
	}
	*f = g
}

// naturalLess orders strings with digit runs compared as numbers: host2
// before host10, Ethernet8 before Ethernet16.
func naturalLess(a, b string) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			na := strings.TrimLeft(a[si:i], "0")
			nb := strings.TrimLeft(b[sj:j], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			if i-si != j-sj { // same number, fewer leading zeros first
				return i-si < j-sj
			}
			continue
		}
		if ca != cb {
			return ca < cb
		}
		i++
		j++
	}
	return len(a)-i < len(b)-j
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
