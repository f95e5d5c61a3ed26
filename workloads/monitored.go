package workloads

import (
	"fmt"
	"sort"

	"github.com/fabricbench/fabricbench/inventory"
)

// Monitored is the Spritz Figure 5 microbenchmark (Sec. V-B,
// ../shared/papers/spritz-path-aware-load-balancing.txt): one monitored
// flow (flow 0, Src -> Dst) while "nearly all groups, including the
// source" are congested "by launching background flows to switches that
// connect each congested group to the destination group"; "a few groups,
// including the destination group, remain idle".
//
// Read exactly, and with explicit host lists:
//   - the destination group (Dst's) and the Free groups carry no
//     background;
//   - in every other group g (the congested ones, the source group among
//     them) the exit router is the router holding g's global link to the
//     destination group (the first such link in the fabric's link order;
//     a Dragonfly with one global link per group pair has exactly one);
//   - every host of g that is attached neither to the exit router nor is
//     the monitored sender ("many flows") sends one background flow of
//     BackgroundSize bytes to a host of the exit router, the k-th sender of
//     the group (in host order) to the exit router's (k mod n)-th host.
//
// Background flows never leave their group: they load the local links
// into the exit router and its host ports, the region the monitored flow
// crosses when it enters the destination group through g. Every flow
// starts at time 0.
type Monitored struct {
	Src, Dst       int   // monitored flow's hosts (different groups)
	Size           int64 // monitored flow's size (4 MiB in the paper)
	BackgroundSize int64 // each background flow's size
	Free           []int // groups (pod numbers) without background, besides Dst's
	// IntoDst is a variant that is not the paper's text: the background
	// goes on through the exit router's global link into the destination
	// group (to its hosts other than Dst, in turn), so that it loads the
	// global links the monitored flow needs, not only the exit routers.
	IntoDst bool
}

// MonitoredPlan is what a Monitored benchmark builds on a fabric: its
// groups by role and, per congested group, the exit router and the
// background senders and receivers (host numbers, in flow order).
type MonitoredPlan struct {
	SrcGroup, DstGroup int
	Free               []int // sorted, the destination group not included
	Congested          []MonitoredGroup
}

// MonitoredGroup is one congested group of a MonitoredPlan.
type MonitoredGroup struct {
	Group     int
	Exit      int   // node ID of the exit router
	Receivers []int // the exit router's hosts
	Senders   []int // background senders; Senders[k] sends to Receivers[k%len]
}

// FreeBefore returns the n groups preceding dst cyclically (dst-1, dst-2,
// ...), skipping src: the free groups the tests and the spec use. n is
// clamped to the groups available.
func FreeBefore(groups, src, dst, n int) []int {
	var out []int
	for g := dst - 1; len(out) < n && g != dst-groups; g-- {
		gg := ((g % groups) + groups) % groups
		if gg != src && gg != dst {
			out = append(out, gg)
		}
	}
	sort.Ints(out)
	return out
}

// Plan resolves the benchmark on fabric f (hosts grouped by their
// switch's pod).
func (mb Monitored) Plan(f *inventory.Fabric) (*MonitoredPlan, error) {
	gs, err := hostGroupsOf(f)
	if err != nil {
		return nil, err
	}
	n := f.NumHosts()
	if mb.Src < 0 || mb.Src >= n || mb.Dst < 0 || mb.Dst >= n {
		return nil, fmt.Errorf("monitored flow %d -> %d: hosts are 0..%d", mb.Src, mb.Dst, n-1)
	}
	pod := func(h int) int { return f.Nodes[f.HostLeaf(h)].Pod }
	// groups by pod number (hostGroupsOf lists them in host order)
	byPod := map[int][]int{}
	for _, hs := range gs {
		byPod[pod(hs[0])] = hs
	}
	p := &MonitoredPlan{SrcGroup: pod(mb.Src), DstGroup: pod(mb.Dst)}
	if p.SrcGroup == p.DstGroup {
		return nil, fmt.Errorf("monitored flow %d -> %d stays in group %d; it must cross groups", mb.Src, mb.Dst, p.SrcGroup)
	}
	free := map[int]bool{}
	for _, g := range mb.Free {
		if _, ok := byPod[g]; !ok {
			return nil, fmt.Errorf("free group %d: the fabric has no hosts in it", g)
		}
		if g == p.SrcGroup {
			return nil, fmt.Errorf("free group %d is the monitored sender's group, which the benchmark congests", g)
		}
		if g != p.DstGroup && !free[g] {
			free[g] = true
			p.Free = append(p.Free, g)
		}
	}
	sort.Ints(p.Free)
	// exit[g]: g's router with a global link to the destination group
	exit := map[int]int{}
	for _, l := range f.Links {
		if !l.Global {
			continue
		}
		a, b := f.Ports[l.A].Node, f.Ports[l.B].Node
		for _, xy := range [2][2]int{{a, b}, {b, a}} {
			g := f.Nodes[xy[0]].Pod
			if f.Nodes[xy[1]].Pod == p.DstGroup && g != p.DstGroup {
				if _, seen := exit[g]; !seen {
					exit[g] = xy[0]
				}
			}
		}
	}
	pods := make([]int, 0, len(byPod))
	for g := range byPod {
		pods = append(pods, g)
	}
	sort.Ints(pods)
	for _, g := range pods {
		if g == p.DstGroup || free[g] {
			continue
		}
		x, ok := exit[g]
		if !ok {
			return nil, fmt.Errorf("group %d has no global link to the destination group %d (not a Dragonfly-like fabric?)", g, p.DstGroup)
		}
		cg := MonitoredGroup{Group: g, Exit: x}
		for _, h := range byPod[g] {
			switch {
			case f.HostLeaf(h) == x:
				cg.Receivers = append(cg.Receivers, h)
			case h != mb.Src:
				cg.Senders = append(cg.Senders, h)
			}
		}
		if len(cg.Receivers) == 0 {
			return nil, fmt.Errorf("group %d: its exit router %s has no hosts", g, f.Nodes[x].Name)
		}
		p.Congested = append(p.Congested, cg)
	}
	return p, nil
}

// Matrix builds the flows: flow 0 the monitored one, then the background
// group by group.
func (mb Monitored) Matrix(f *inventory.Fabric) (*Matrix, error) {
	if mb.Size <= 0 || mb.BackgroundSize <= 0 {
		return nil, fmt.Errorf("monitored flow size %d and background size %d must be positive", mb.Size, mb.BackgroundSize)
	}
	p, err := mb.Plan(f)
	if err != nil {
		return nil, err
	}
	m := &Matrix{Name: fmt.Sprintf("monitored:size=%d,flow=%d,src=%d,dst=%d", mb.BackgroundSize, mb.Size, mb.Src, mb.Dst), Hosts: f.NumHosts()}
	m.Flows = append(m.Flows, Flow{ID: 0, Src: mb.Src, Dst: mb.Dst, Size: mb.Size, After: -1})
	var into []int // IntoDst: the destination group's hosts but Dst
	if mb.IntoDst {
		m.Name += ",into=dst"
		for h := 0; h < f.NumHosts(); h++ {
			if h != mb.Dst && f.Nodes[f.HostLeaf(h)].Pod == p.DstGroup {
				into = append(into, h)
			}
		}
		if len(into) == 0 {
			return nil, fmt.Errorf("into=dst: the destination group %d has no host but the monitored receiver", p.DstGroup)
		}
	}
	i := 0
	for _, cg := range p.Congested {
		for k, h := range cg.Senders {
			dst := cg.Receivers[k%len(cg.Receivers)]
			if mb.IntoDst {
				dst = into[i%len(into)]
				i++
			}
			m.Flows = append(m.Flows, Flow{ID: len(m.Flows), Src: h, Dst: dst, Size: mb.BackgroundSize, After: -1})
		}
	}
	return m, nil
}
