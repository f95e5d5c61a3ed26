package inventory

import (
	"fmt"
	"strconv"
)

// This file is the multi-plane model: N parallel, disjoint switch fabrics
// (planes), every host with one NIC port in each (Spectrum-X §3.1), and the
// rails of a fabric (the host NIC ports one set of leaves serves).

// SetPlanes names the fabric's planes; SetNodePlane puts a switch in one.
func (b *Builder) SetPlanes(names []string) { b.f.Planes = append([]string(nil), names...) }

// SetNodePlane puts node n in plane pl (an index into the names given to
// SetPlanes).
func (b *Builder) SetNodePlane(n, pl int) { b.f.Nodes[n].Plane = pl }

// SetRails names the fabric's rails; SetPortRail puts a host NIC port on one.
func (b *Builder) SetRails(names []string) { b.f.Rails = append([]string(nil), names...) }

// SetPortRail puts port p (a host NIC port) on rail r.
func (b *Builder) SetPortRail(p, r int) { b.f.Ports[p].Rail = r }

// setPortPlanes derives every port's plane from its switch: a switch port
// is in its switch's plane, a host NIC port in the plane of the switch it
// attaches to.
func (f *Fabric) setPortPlanes() {
	for i := range f.Ports {
		p := &f.Ports[i]
		n := &f.Nodes[p.Node]
		if n.IsSwitch() {
			p.Plane = n.Plane
		} else {
			p.Plane = f.Nodes[f.PeerNode(i)].Plane
		}
	}
}

// validatePlanes checks the plane and rail structure: planes are disjoint
// (no link joins switches of two planes) and every host has a NIC port in
// every plane; rails index Rails.
func (f *Fabric) validatePlanes() error {
	np := f.NumPlanes()
	if np > MaxPlanes {
		return fmt.Errorf("fabric %q: %d planes, at most %d", f.Name, np, MaxPlanes)
	}
	for i := range f.Nodes {
		if n := &f.Nodes[i]; n.IsSwitch() && (n.Plane < 0 || n.Plane >= np) {
			return fmt.Errorf("fabric %q: switch %s is in plane %d, the fabric has %d", f.Name, n.Name, n.Plane, np)
		}
	}
	for i := range f.Ports {
		p := &f.Ports[i]
		if p.Rail < -1 || p.Rail >= len(f.Rails) {
			return fmt.Errorf("fabric %q: port %s:%s is on rail %d, the fabric has %d", f.Name, f.Nodes[p.Node].Name, p.Name, p.Rail, len(f.Rails))
		}
		a, b := &f.Nodes[p.Node], &f.Nodes[f.PeerNode(i)]
		if a.IsSwitch() && b.IsSwitch() && a.Plane != b.Plane {
			return fmt.Errorf("fabric %q: link %s-%s joins planes %s and %s (planes are disjoint)", f.Name, a.Name, b.Name, f.planeName(a.Plane), f.planeName(b.Plane))
		}
	}
	if np == 1 {
		return nil
	}
	for _, h := range f.Hosts {
		var have [MaxPlanes]bool
		for _, p := range f.Nodes[h].Ports {
			have[f.Ports[p].Plane] = true
		}
		for pl := 0; pl < np; pl++ {
			if !have[pl] {
				return fmt.Errorf("fabric %q: host %s has no NIC port in plane %s (every host needs one per plane)", f.Name, f.Nodes[h].Name, f.Planes[pl])
			}
		}
	}
	return nil
}

func (f *Fabric) planeName(pl int) string {
	if pl >= 0 && pl < len(f.Planes) {
		return f.Planes[pl]
	}
	return "plane" + strconv.Itoa(pl)
}

// replicatePlanes builds a fabric of n planes, each a copy of f's switches
// and links; host h has one NIC port per plane (port i on plane i, so its
// port index is its plane) where f gives it one. Switch names get a
// "p<plane>-" prefix. Planes are "plane0".."plane<n-1>"; the rails are the
// leaf positions: rail r is the host NIC ports under leaf r of every plane
// (the paper's testbed, Fig. 16, groups hosts by leaf this way).
func replicatePlanes(f *Fabric, n int) (*Fabric, error) {
	if n < 1 || n > MaxPlanes {
		return nil, fmt.Errorf("%s: planes=%d: must be between 1 and %d", f.Name, n, MaxPlanes)
	}
	for _, h := range f.Hosts {
		if len(f.Nodes[h].Ports) != 1 {
			return nil, fmt.Errorf("%s: planes need hosts with one NIC port per plane (host %s has %d)", f.Name, f.Nodes[h].Name, len(f.Nodes[h].Ports))
		}
	}
	b := NewBuilder(f.Name)
	ids := make([][]int, n) // plane -> old node -> new node
	for pl := range ids {
		ids[pl] = make([]int, len(f.Nodes))
	}
	for _, h := range f.Hosts {
		nd := &f.Nodes[h]
		id := b.AddNode(nd.Name, nd.Role, nd.Tier, nd.Pod, nd.LatencyPs)
		for pl := range ids {
			ids[pl][h] = id
		}
	}
	planes := make([]string, n)
	var leaves []int // tier-0 switches of f, in node order
	for i := range f.Nodes {
		if f.Nodes[i].IsSwitch() && f.Nodes[i].Tier == 0 {
			leaves = append(leaves, i)
		}
	}
	for pl := 0; pl < n; pl++ {
		planes[pl] = "plane" + strconv.Itoa(pl)
		for i := range f.Nodes {
			nd := &f.Nodes[i]
			if !nd.IsSwitch() {
				continue
			}
			id := b.AddNode("p"+strconv.Itoa(pl)+"-"+nd.Name, nd.Role, nd.Tier, nd.Pod, nd.LatencyPs)
			b.SetNodePlane(id, pl)
			ids[pl][i] = id
		}
	}
	b.SetPlanes(planes)
	railOf := make(map[int]int, len(leaves))
	rails := make([]string, len(leaves))
	for r, l := range leaves {
		railOf[l] = r
		rails[r] = "rail" + strconv.Itoa(r)
	}
	b.SetRails(rails)
	for pl := 0; pl < n; pl++ {
		for _, l := range f.Links {
			lo, hi := f.Ports[l.A].Node, f.Ports[l.B].Node
			lid := b.Connect(ids[pl][lo], ids[pl][hi], l.RateBps, l.LatencyPs)
			if r, ok := railOf[hi]; ok && !f.Nodes[lo].IsSwitch() {
				b.SetPortRail(b.f.Links[lid].A, r)
			}
			b.f.Links[lid].Global = l.Global
		}
	}
	return b.Fabric(f.Tiers, f.HostsPerPod)
}
