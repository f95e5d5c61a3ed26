package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/fabricbench/fabricbench/results"
)

// This file builds the PFC pause trees of a lossless fabric (see the
// package documentation, "Congestion spreading").

// pauseHeldFrac is the share of an interval an egress port must have been
// paused for its queue to count as held by its peer's pauses rather than
// built by its own service rate: such a port cannot be a tree's root.
const pauseHeldFrac = 0.05

// rootQueueShare: a root's queue high-water must be at least this share
// of the largest egress queue of its switch in the interval (and at least
// BacklogBytes). A switch that pauses because one egress port filled
// holds that port's queue near XOFF; its other ports only queue in
// passing.
const rootQueueShare = 0.25

// maxTreePorts bounds the ports listed in one tree (PortsPaused counts
// them all).
const maxTreePorts = 50

// treePort is one paused port or host of a tree under construction.
type treePort struct {
	hop      int
	pausedNs float64
	frames   float64
}

// pauseTree is one congestion tree under construction: the pauses a
// switch sent, in one episode, because some of its egress ports filled.
type pauseTree struct {
	node       int          // the switch at the root
	roots      map[int]bool // its egress ports that filled (root ports)
	first, end int          // buckets, inclusive
	ports      map[int]*treePort
	hosts      map[int]*treePort // host nodes whose NIC its leaf paused
	switches   map[int]bool      // switches that sent pause frames
	hops       int
	culprit    *culprit // the culprit whose port is a root port, nil when none
}

// rootPorts are the tree's root ports in port order.
func (t *pauseTree) rootPorts() []int {
	var out []int
	for p := range t.roots {
		out = append(out, p)
	}
	sort.Ints(out)
	return out
}

// pauseTrees builds the congestion trees from the PFC counters: in each
// bucket, from every switch holding roots (treeRoots), the pause frames
// are followed upstream (breadth first) through the switches that paused
// in turn; paused egress ports and host NICs are the tree's members, at
// their hop distance from the root switch. The buckets of one root switch
// form episodes (gaps of up to MergeGap buckets bridged), one tree each.
// A tree whose root ports include a culprit's port is that culprit's (the
// highest-scoring one).
func (a *analyzer) pauseTrees(culprits []*culprit) []*pauseTree {
	if !a.pfcActive() {
		return nil
	}
	f := a.f
	open := map[int]*pauseTree{} // root switch -> its current episode
	var all []*pauseTree
	owner := make([]*pauseTree, len(f.Nodes))
	hop := make([]int, len(f.Nodes))
	var queue []int
	for k := 0; k < a.g.n; k++ {
		clear(owner)
		queue = queue[:0]
		for ni := range f.Nodes {
			if !f.Nodes[ni].IsSwitch() {
				continue
			}
			roots := a.treeRoots(ni, k)
			if len(roots) == 0 {
				continue
			}
			t := open[ni]
			if t == nil || k-t.end-1 > a.opts.MergeGap {
				t = &pauseTree{node: ni, roots: map[int]bool{}, first: k, ports: map[int]*treePort{}, hosts: map[int]*treePort{}, switches: map[int]bool{}}
				open[ni] = t
				all = append(all, t)
			}
			t.end = k
			for _, r := range roots {
				t.roots[r] = true
			}
			owner[ni], hop[ni] = t, 0
			queue = append(queue, ni)
		}
		// One breadth-first walk from every root switch at once: a switch
		// belongs to the tree that reaches it first, a paused port to the
		// tree of the switch that paused it.
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			t := owner[x]
			for _, q := range f.Nodes[x].Ports {
				if !a.pausing(q, k) {
					continue
				}
				s := a.signals(q)
				t.switches[x] = true
				peer := f.Ports[q].Peer
				up := f.Ports[peer].Node
				h := hop[x] + 1
				t.hops = max(t.hops, h)
				if !f.Nodes[up].IsSwitch() {
					tp := t.hosts[up]
					if tp == nil {
						tp = &treePort{hop: h}
						t.hosts[up] = tp
					}
					tp.hop = min(tp.hop, h)
					tp.frames += s.pauseTx[k]
					continue
				}
				ps := a.signals(peer)
				tp := t.ports[peer]
				if tp == nil {
					tp = &treePort{hop: h}
					t.ports[peer] = tp
				}
				tp.hop = min(tp.hop, h)
				tp.pausedNs += ps.paused[k]
				tp.frames += math.Max(ps.pauseRx[k], s.pauseTx[k])
				if owner[up] == nil {
					owner[up], hop[up] = t, h
					queue = append(queue, up)
				}
			}
		}
	}
	var out []*pauseTree
	for _, t := range all {
		if len(t.ports) == 0 && len(t.hosts) == 0 {
			continue
		}
		for _, c := range culprits {
			for _, v := range c.verdicts {
				if t.roots[v.port] && (t.culprit == nil || c.score > t.culprit.score) {
					t.culprit = c
				}
			}
		}
		out = append(out, t)
	}
	slices.SortStableFunc(out, func(x, y *pauseTree) int { return x.first - y.first })
	return out
}

// treeHosts are the hosts a tree slowed: the NICs it paused, and the
// hosts with a flow that may cross one of its paused ports while the tree
// stood.
func (a *analyzer) treeHosts(t *pauseTree) map[int]string {
	out := map[int]string{}
	for h, tp := range t.hosts {
		out[a.hostNumber(h)] = fmt.Sprintf("its NIC was paused by PFC (%.0f pause frames from its leaf, %d hops from the root)", tp.frames, tp.hop)
	}
	ws, we := a.g.startNs(t.first), a.g.endNs(t.end)
	var paused []int
	for p := range t.ports {
		paused = append(paused, p)
	}
	sort.Ints(paused)
	a.flowsDuring(ws, we, func(j *JobInput, fl *FlowRecord, src, dst int) {
		for _, p := range paused {
			if a.mayCross(src, dst, p) {
				for _, h := range []int{fl.Src, fl.Dst} {
					if _, ok := out[h]; !ok {
						out[h] = fmt.Sprintf("a flow of job %s may cross %s, paused by PFC", j.Name, a.portName(p))
					}
				}
				return
			}
		}
	})
	return out
}

// hostNumber is the host number (index into Fabric.Hosts) of host node n.
func (a *analyzer) hostNumber(n int) int {
	if a.hostNum == nil {
		a.hostNum = map[int]int{}
		for i, h := range a.f.Hosts {
			a.hostNum[h] = i
		}
	}
	return a.hostNum[n]
}

// treeResult renders a tree for the results; rank is its culprit's
// anomaly rank (0: informational).
func (a *analyzer) treeResult(t *pauseTree, rank int, hosts map[int]string) results.CongestionTree {
	f := a.f
	span := float64(a.g.endNs(t.end)-a.g.startNs(t.first)) / 1e9 // seconds
	ct := results.CongestionTree{
		Root:    f.Nodes[t.node].Name,
		StartUs: round(float64(a.g.startNs(t.first)-a.in.EpochNs)/1e3, 3),
		EndUs:   round(a.g.endUs(t.end), 3),
		Hops:    t.hops, Switches: len(t.switches), PortsPaused: len(t.ports), HostsPaused: len(t.hosts),
		Anomaly: rank,
	}
	toHosts := true
	for _, r := range t.rootPorts() {
		ct.RootPorts = append(ct.RootPorts, a.portName(r))
		if peer := f.PeerNode(r); f.Nodes[peer].IsSwitch() {
			toHosts = false
		} else {
			ct.RootHosts = append(ct.RootHosts, f.Nodes[peer].Name)
		}
	}
	switch {
	case rank > 0:
		ct.Cause = results.TreeAnomaly
	case toHosts:
		ct.Cause = results.TreeIncast
	default:
		ct.Cause = results.TreeHotPort
	}
	var ports []results.PausedPort
	var pausedNs, frames float64
	for p, tp := range t.ports {
		pausedNs += tp.pausedNs
		frames += tp.frames
		ports = append(ports, results.PausedPort{Port: a.portName(p), Hop: tp.hop, PausedUs: round(tp.pausedNs/1e3, 3),
			PauseFrames: tp.frames, PauseRate: round(tp.frames/span, 0)})
	}
	for h, tp := range t.hosts {
		frames += tp.frames
		nic := f.Nodes[h].Name
		if len(f.Nodes[h].Ports) > 0 {
			nic = a.portName(f.Nodes[h].Ports[0])
		}
		ports = append(ports, results.PausedPort{Port: nic, Hop: tp.hop, PauseFrames: tp.frames, PauseRate: round(tp.frames/span, 0)})
	}
	slices.SortFunc(ports, func(x, y results.PausedPort) int {
		if x.Hop != y.Hop {
			return x.Hop - y.Hop
		}
		if x.PausedUs != y.PausedUs {
			return -cmpFloat(x.PausedUs, y.PausedUs)
		}
		return strings.Compare(x.Port, y.Port)
	})
	for _, p := range ports {
		ct.MaxPauseRate = math.Max(ct.MaxPauseRate, p.PauseRate)
	}
	if len(ports) > maxTreePorts {
		ports = ports[:maxTreePorts]
	}
	ct.Ports = ports
	ct.PausedUs = round(pausedNs/1e3, 3)
	ct.PauseFrames = frames
	var hs []int
	for h := range hosts {
		hs = append(hs, h)
	}
	sort.Ints(hs)
	for _, h := range hs {
		if len(ct.Victims) < maxTreePorts {
			ct.Victims = append(ct.Victims, f.Host(h).Name)
		}
	}
	what := "congested ports"
	switch ct.Cause {
	case results.TreeIncast:
		what = "incast receivers " + strings.Join(ct.RootHosts, ", ") + ": more traffic towards them than their links carry"
		if len(ct.RootHosts) == 1 {
			what = "an incast receiver, " + ct.RootHosts[0] + ": more traffic towards it than its link carries"
		}
	case results.TreeHotPort:
		what = "load above line rate"
	case results.TreeAnomaly:
		what = fmt.Sprintf("anomaly #%d", rank)
	}
	ct.Evidence = fmt.Sprintf("%s filled %s (%s) and sent pause frames upstream: %d switch(es) paused, %d port(s) and %d host NIC(s) paused over %d hop(s), %.1f µs paused in all, %.0f pause frames (busiest port %.0f frames/s); %d host(s) slowed",
		ct.Root, strings.Join(ct.RootPorts, ", "), what, ct.Switches, ct.PortsPaused, ct.HostsPaused, ct.Hops, ct.PausedUs, ct.PauseFrames, ct.MaxPauseRate, len(hosts))
	return ct
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// treeMetrics adds the congestion-tree metrics to m (only when the
// switches stream PFC counters).
func (a *analyzer) treeMetrics(m map[string]float64, trees []results.CongestionTree) {
	if !a.pfcStreamed() {
		return
	}
	info, spread, hops := 0, 0, 0
	for _, t := range trees {
		if t.Anomaly == 0 {
			info++
		}
		spread = max(spread, t.PortsPaused+t.HostsPaused)
		hops = max(hops, t.Hops)
	}
	var frames, paused float64
	for p := range a.f.Ports {
		if !a.f.Nodes[a.f.Ports[p].Node].IsSwitch() {
			continue
		}
		s := a.signals(p)
		for k := range s.pauseTx {
			frames += s.pauseTx[k]
			paused += s.paused[k]
		}
	}
	m[MetricCongestionTrees] = float64(info)
	m[MetricCongestionSpread] = float64(spread)
	m[MetricCongestionHops] = float64(hops)
	m[MetricPFCPauseFrames] = frames
	m[MetricPFCPausedUs] = round(paused/1e3, 3)
}

// pfcActive reports whether any switch port sent a pause frame or was
// paused.
func (a *analyzer) pfcActive() bool {
	if a.pfcOn != nil {
		return *a.pfcOn
	}
	on := false
	for p := range a.f.Ports {
		if on || !a.f.Nodes[a.f.Ports[p].Node].IsSwitch() {
			continue
		}
		s := a.signals(p)
		if !s.hasPFC {
			continue
		}
		for k := range s.pauseTx {
			if s.pauseTx[k] > 0 || s.paused[k] > 0 {
				on = true
				break
			}
		}
	}
	a.pfcOn = &on
	return on
}

// pfcStreamed reports whether the switches stream PFC counters at all
// (the simulator does; the netns lab's kernel exporter does not).
func (a *analyzer) pfcStreamed() bool {
	for p := range a.f.Ports {
		if a.f.Nodes[a.f.Ports[p].Node].IsSwitch() && a.signals(p).hasPFC {
			return true
		}
	}
	return false
}

// pausing reports whether switch port q made its peer pause in bucket k:
// q sent a pause frame, or the peer's egress (a switch port streaming PFC
// counters) was paused.
func (a *analyzer) pausing(q, k int) bool {
	if a.signals(q).pauseTx[k] > 0 {
		return true
	}
	peer := a.f.Ports[q].Peer
	if a.f.Nodes[a.f.Ports[peer].Node].IsSwitch() {
		ps := a.signals(peer)
		return ps.hasPFC && ps.paused[k] > 0
	}
	return false
}

// treeRoots returns, for bucket k, the egress ports of switch node that
// held a pause tree: when the switch made a neighbour pause, the ports
// whose queue stood at least BacklogBytes and rootQueueShare of the
// switch's largest egress queue while they were not themselves held by
// pauses (paused for less than pauseHeldFrac of the interval). A pausing
// switch without such a port only passes on pauses from downstream.
func (a *analyzer) treeRoots(node, k int) []int {
	pausing := false
	maxQ := 0.0
	for _, q := range a.f.Nodes[node].Ports {
		pausing = pausing || a.pausing(q, k)
		if s := a.signals(q); !math.IsNaN(s.queue[k]) {
			maxQ = math.Max(maxQ, s.queue[k])
		}
	}
	if !pausing {
		return nil
	}
	var out []int
	floor := math.Max(a.opts.BacklogBytes, rootQueueShare*maxQ)
	for _, r := range a.f.Nodes[node].Ports {
		s := a.signals(r)
		if math.IsNaN(s.queue[k]) || s.queue[k] < floor || s.pausedFrac(k, a.g.step) >= pauseHeldFrac {
			continue
		}
		out = append(out, r)
	}
	return out
}
