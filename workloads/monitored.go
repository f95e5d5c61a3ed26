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
	// Into is where the background goes: the exit router's hosts (the
	// paper's text, the default) or, in variants, on through its global
	// link.
	Into MonitoredInto
	// Flows, when > 0, caps the background flows of each congested group
	// at its first Flows senders (host order); 0 keeps every sender.
	Flows int
	// BackgroundMinimal marks every background flow workloads.Flow.Minimal:
	// environment traffic on the fabric's minimal routes with ECMP, the
	// same for every scheme under test, so that the congested groups stay
	// congested and the free ones free whatever the monitored flow's
	// scheme (with the run's scheme, a sprayed background also loads the
	// free groups' paths).
	BackgroundMinimal bool
}

// MonitoredInto is where a Monitored benchmark's background goes.
type MonitoredInto uint8

const (
	// IntoExit: to the exit router's hosts; the background never leaves
	// its group (the paper's text).
	IntoExit MonitoredInto = iota
	// IntoDst (not the paper's text): on through the exit router's global
	// link into the destination group, to its hosts but Dst in turn.
	IntoDst
	// IntoPeer (not the paper's text): on through the exit router's global
	// link to the hosts of the router at its far end, Dst excluded: it
	// loads the global links the monitored flow needs without loading the
	// destination group's local links.
	IntoPeer
)

// String is the spec value: exit, dst or peer.
func (i MonitoredInto) String() string {
	switch i {
	case IntoExit:
		return "exit"
	case IntoDst:
		return "dst"
	case IntoPeer:
		return "peer"
	}
	return fmt.Sprintf("MonitoredInto(%d)", uint8(i))
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
	Peer      int   // node ID of the far end of the exit router's link to the destination group
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
	exit, peer := map[int]int{}, map[int]int{}
	for _, l := range f.Links {
		if !l.Global {
			continue
		}
		a, b := f.Ports[l.A].Node, f.Ports[l.B].Node
		for _, xy := range [2][2]int{{a, b}, {b, a}} {
			g := f.Nodes[xy[0]].Pod
			if f.Nodes[xy[1]].Pod == p.DstGroup && g != p.DstGroup {
				if _, seen := exit[g]; !seen {
					exit[g], peer[g] = xy[0], xy[1]
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
		cg := MonitoredGroup{Group: g, Exit: x, Peer: peer[g]}
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
	if mb.Flows < 0 {
		return nil, fmt.Errorf("monitored: %d background flows per group, want >= 0 (0: every sender)", mb.Flows)
	}
	if mb.Into > IntoPeer {
		return nil, fmt.Errorf("monitored: unknown background destination %v", mb.Into)
	}
	p, err := mb.Plan(f)
	if err != nil {
		return nil, err
	}
	m := &Matrix{Name: fmt.Sprintf("monitored:size=%d,flow=%d,src=%d,dst=%d", mb.BackgroundSize, mb.Size, mb.Src, mb.Dst), Hosts: f.NumHosts()}
	if mb.Into != IntoExit {
		m.Name += ",into=" + mb.Into.String()
	}
	if mb.Flows > 0 {
		m.Name += fmt.Sprintf(",flows=%d", mb.Flows)
	}
	if mb.BackgroundMinimal {
		m.Name += ",bg=minimal"
	}
	m.Flows = append(m.Flows, Flow{ID: 0, Src: mb.Src, Dst: mb.Dst, Size: mb.Size, After: -1})
	// hostsBut lists the hosts whose switch passes keep, Dst excluded.
	hostsBut := func(keep func(sw int) bool) []int {
		var hs []int
		for h := 0; h < f.NumHosts(); h++ {
			if h != mb.Dst && keep(f.HostLeaf(h)) {
				hs = append(hs, h)
			}
		}
		return hs
	}
	var into []int // IntoDst: the destination group's hosts but Dst
	if mb.Into == IntoDst {
		if into = hostsBut(func(sw int) bool { return f.Nodes[sw].Pod == p.DstGroup }); len(into) == 0 {
			return nil, fmt.Errorf("into=dst: the destination group %d has no host but the monitored receiver", p.DstGroup)
		}
	}
	i := 0
	for _, cg := range p.Congested {
		rcv := cg.Receivers
		if mb.Into == IntoPeer {
			if rcv = hostsBut(func(sw int) bool { return sw == cg.Peer }); len(rcv) == 0 {
				return nil, fmt.Errorf("into=peer: group %d's exit link ends at %s, which has no host but the monitored receiver", cg.Group, f.Nodes[cg.Peer].Name)
			}
		}
		for k, h := range cg.Senders {
			if mb.Flows > 0 && k >= mb.Flows {
				break
			}
			dst := rcv[k%len(rcv)]
			if mb.Into == IntoDst {
				dst = into[i%len(into)]
				i++
			}
			m.Flows = append(m.Flows, Flow{ID: len(m.Flows), Src: h, Dst: dst, Size: mb.BackgroundSize, After: -1, Minimal: mb.BackgroundMinimal})
		}
	}
	return m, nil
}
