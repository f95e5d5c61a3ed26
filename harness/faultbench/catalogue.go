package faultbench

import (
	"fmt"
	"sync"

	"github.com/fabricbench/fabricbench/inventory"
)

// The catalogue's fabrics.
const (
	// LeafSpine is a 2-tier leaf-spine: 4 leaves with 4 hosts and 4
	// uplinks each (Ethernet4-7, one per spine), 4 spines.
	LeafSpine = "leafspine:leaves=4,spines=4,hosts_per_leaf=4,gbps=100"
	// FatTree is a 3-tier fat tree of K=6 building blocks with 4 pods
	// (36 hosts): 12 ToRs (tor0-11) with 3 hosts and 3 uplinks each
	// (Ethernet3-5, one per agg of the pod), 12 aggs (agg0-11) with 3
	// ToR-facing and 3 core-facing ports, 9 cores (core0-8) with one port
	// per pod.
	FatTree = "fattree:hosts=36,tiers=3,radix=6,podsize=9,gbps=100"
)

// Workloads of the catalogue over every host, sized so that every job
// lasts several telemetry intervals after the faults start (at
// 100-200us). The ring all-reduce is built per fabric by StripedRing.
var (
	Perm      = Job{Name: "perm", Workload: "permutation", Size: "8MiB"}
	PermSmall = Job{Name: "perm", Workload: "permutation", Size: "4MiB"}
	A2A       = Job{Name: "a2a", Workload: "all-to-all", Size: "512KiB"}
	AllReduce = Job{Name: "ar", Workload: "all-reduce", Size: "4MiB"}
)

// StripedRing is AllReduce over every host of f in a ring order whose
// neighbours sit under different leaves (2 tiers) or in different pods
// (3 tiers): the first host of each leaf (pod), then the second of each,
// and so on. Every ring hop then crosses the leaf uplinks (and, in a
// 3-tier tree, the agg-core links) and loads them fully, so a degraded
// fabric port slows the ring; in host order most hops would stay under
// one leaf and a fabric fault could leave the traffic untouched.
func StripedRing(f *inventory.Fabric) Job {
	group := func(h int) int {
		if f.Tiers >= 3 {
			return f.HostPod(h)
		}
		return f.HostLeaf(h)
	}
	var keys []int
	members := map[int][]int{}
	for h := range f.Hosts {
		g := group(h)
		if _, ok := members[g]; !ok {
			keys = append(keys, g)
		}
		members[g] = append(members[g], h)
	}
	j := AllReduce
	j.Label = "striped ring"
	for k := 0; len(j.Hosts) < len(f.Hosts); k++ {
		for _, g := range keys {
			if k < len(members[g]) {
				j.Hosts = append(j.Hosts, f.Host(members[g][k]).Name)
			}
		}
	}
	return j
}

var (
	fabricMu    sync.Mutex
	fabricCache = map[string]*inventory.Fabric{}
)

// Fabric builds (once) the fabric of a generator spec. The returned
// fabric is shared: do not modify it.
func Fabric(spec string) (*inventory.Fabric, error) {
	fabricMu.Lock()
	defer fabricMu.Unlock()
	if f, ok := fabricCache[spec]; ok {
		return f, nil
	}
	f, err := inventory.ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	fabricCache[spec] = f
	return f, nil
}

// topo names real ports and links of a fabric; the first lookup that
// fails is kept in err (and the name returned is empty).
type topo struct {
	f   *inventory.Fabric
	err error
}

func (t *topo) fail(format string, args ...any) string {
	if t.err == nil {
		t.err = fmt.Errorf("%s: "+format, append([]any{t.f.Name}, args...)...)
	}
	return ""
}

func (t *topo) node(name string) (*inventory.Node, bool) {
	id, ok := t.f.NodeByName(name)
	if !ok {
		return nil, false
	}
	return &t.f.Nodes[id], true
}

// uplink is the k-th (0-based) uplink port of a switch: "dev:port".
func (t *topo) uplink(dev string, k int) string {
	n, ok := t.node(dev)
	if !ok || !n.IsSwitch() {
		return t.fail("no switch %s", dev)
	}
	i := 0
	for _, p := range n.Ports {
		if t.f.Ports[p].Uplink {
			if i == k {
				return dev + ":" + t.f.Ports[p].Name
			}
			i++
		}
	}
	return t.fail("%s has no uplink #%d", dev, k)
}

// uplinkPeer is the node at the other end of a switch's k-th uplink.
func (t *topo) uplinkPeer(dev string, k int) string {
	n, ok := t.node(dev)
	if !ok {
		return t.fail("no node %s", dev)
	}
	i := 0
	for _, p := range n.Ports {
		if t.f.Ports[p].Uplink {
			if i == k {
				return t.f.Nodes[t.f.PeerNode(p)].Name
			}
			i++
		}
	}
	return t.fail("%s has no uplink #%d", dev, k)
}

// towards is the port of dev that faces peer: "dev:port".
func (t *topo) towards(dev, peer string) string {
	n, ok := t.node(dev)
	if !ok {
		return t.fail("no node %s", dev)
	}
	for _, p := range n.Ports {
		if t.f.Nodes[t.f.PeerNode(p)].Name == peer {
			return dev + ":" + t.f.Ports[p].Name
		}
	}
	return t.fail("%s has no port towards %s", dev, peer)
}

// link names the link between a and b ("a-b"), checking it exists.
func (t *topo) link(a, b string) string {
	if t.towards(a, b) == "" {
		return ""
	}
	return a + "-" + b
}

// host names a host, checking it exists.
func (t *topo) host(name string) string {
	n, ok := t.node(name)
	if !ok || n.IsSwitch() {
		return t.fail("no host %s", name)
	}
	return name
}

func degrade(port string, frac float64, at string) Fault {
	return Fault{Kind: "degrade", Port: port, Fraction: frac, At: at}
}

func degradeLink(link string, frac float64, at string) Fault {
	return Fault{Kind: "degrade", Link: link, Fraction: frac, At: at}
}

func slowNIC(host, at string) Fault {
	return Fault{Kind: "degrade", NIC: host, Fraction: 0.5, At: at}
}

func down(link, at, until string) Fault {
	return Fault{Kind: "down", Link: link, At: at, Until: until}
}

func flap(link, at, period string) Fault {
	return Fault{Kind: "flap", Link: link, At: at, Period: period, Count: 3}
}

// base is a catalogue entry before it is crossed with load balancers.
type base struct {
	class  string
	job    Job
	faults []Fault
}

// leafSpineBases are the faulted scenarios on LeafSpine.
func leafSpineBases(t *topo) []base {
	ring := StripedRing(t.f)
	return []base{
		{ClassLeafUplink, Perm, []Fault{degrade(t.uplink("leaf1", 1), 0.5, "200us")}},
		{ClassLeafUplink, A2A, []Fault{degrade(t.uplink("leaf2", 2), 0.25, "200us")}},
		{ClassLeafUplink, ring, []Fault{degrade(t.uplink("leaf3", 0), 0.5, "100us")}},
		{ClassLeafUplink, PermSmall, []Fault{degrade(t.uplink("leaf0", 3), 0.25, "100us")}},
		{ClassSpineDownlink, Perm, []Fault{degrade(t.towards("spine2", "leaf1"), 0.5, "200us")}},
		{ClassSpineDownlink, A2A, []Fault{degrade(t.towards("spine0", "leaf3"), 0.25, "200us")}},
		{ClassSpineDownlink, ring, []Fault{degrade(t.towards("spine1", "leaf2"), 0.5, "100us")}},
		{ClassSlowNIC, A2A, []Fault{slowNIC(t.host("host6"), "200us")}},
		{ClassSlowNIC, ring, []Fault{slowNIC(t.host("host9"), "100us")}},
		{ClassDouble, Perm, []Fault{
			degrade(t.uplink("leaf0", 1), 0.5, "200us"),
			degrade(t.towards("spine3", "leaf2"), 0.5, "200us"),
		}},
		{ClassDouble, A2A, []Fault{
			degrade(t.uplink("leaf1", 2), 0.25, "200us"),
			degrade(t.towards("spine0", "leaf3"), 0.5, "200us"),
		}},
		{ClassLinkDown, Perm, []Fault{down(t.link("leaf2", "spine1"), "200us", "")}},
		{ClassLinkDown, A2A, []Fault{down(t.link("leaf0", "spine3"), "200us", "")}},
		{ClassLinkDownShort, A2A, []Fault{down(t.link("leaf1", "spine3"), "200us", "500us")}},
		{ClassLinkDownShort, Perm, []Fault{down(t.link("leaf3", "spine2"), "200us", "500us")}},
		{ClassFlap, Perm, []Fault{flap(t.link("leaf3", "spine0"), "200us", "200us")}},
		{ClassFlap, ring, []Fault{flap(t.link("leaf0", "spine2"), "100us", "100us")}},
	}
}

// fatTreeBases are the faulted scenarios on FatTree.
func fatTreeBases(t *topo) []base {
	ring := StripedRing(t.f)
	return []base{
		{ClassLeafUplink, Perm, []Fault{degrade(t.uplink("tor4", 0), 0.5, "200us")}},
		{ClassLeafUplink, A2A, []Fault{degrade(t.uplink("tor7", 2), 0.25, "200us")}},
		{ClassSpineDownlink, Perm, []Fault{degrade(t.towards("agg1", "tor2"), 0.5, "200us")}},
		{ClassSpineDownlink, ring, []Fault{degrade(t.towards("agg8", "tor6"), 0.25, "100us")}},
		{ClassAggCore, Perm, []Fault{degradeLink(t.link("agg3", t.uplinkPeer("agg3", 1)), 0.5, "200us")}},
		{ClassAggCore, A2A, []Fault{degrade(t.uplink("agg7", 2), 0.25, "200us")}},
		{ClassAggCore, ring, []Fault{degrade(t.towards("core2", "agg5"), 0.5, "100us")}},
		{ClassAggCore, Perm, []Fault{degrade(t.uplink("agg10", 0), 0.5, "100us")}},
		{ClassSlowNIC, A2A, []Fault{slowNIC(t.host("host20"), "200us")}},
		{ClassSlowNIC, ring, []Fault{slowNIC(t.host("host13"), "100us")}},
		{ClassDouble, Perm, []Fault{
			degrade(t.uplink("tor1", 2), 0.5, "200us"),
			degrade(t.uplink("agg10", 0), 0.5, "200us"),
		}},
		{ClassLinkDown, Perm, []Fault{down(t.link("tor5", "agg4"), "200us", "")}},
		{ClassLinkDown, A2A, []Fault{down(t.link("agg6", t.uplinkPeer("agg6", 2)), "200us", "")}},
		{ClassLinkDownShort, Perm, []Fault{down(t.link("agg9", t.uplinkPeer("agg9", 1)), "200us", "500us")}},
		{ClassFlap, Perm, []Fault{flap(t.link("tor9", "agg10"), "200us", "100us")}},
		{ClassFlap, A2A, []Fault{flap(t.link("agg2", t.uplinkPeer("agg2", 0)), "200us", "200us")}},
	}
}

// healthyJobs are the workloads of the healthy runs.
func healthyJobs(f *inventory.Fabric) []Job { return []Job{Perm, A2A, StripedRing(f)} }

// HealthySeeds are the seeds of the healthy runs.
var HealthySeeds = []uint64{1, 2}

// Catalogue is the whole benchmark: the trees catalogue (TreeCatalogue)
// and the worlds catalogue (WorldsCatalogue).
func Catalogue() ([]Scenario, error) {
	trees, err := TreeCatalogue()
	if err != nil {
		return nil, err
	}
	worlds, err := WorldsCatalogue()
	if err != nil {
		return nil, err
	}
	return append(trees, worlds...), nil
}

// TreeCatalogue is the benchmark of lossy leaf-spine and fat-tree fabrics
// (issue 11): every faulted base scenario on both fabrics under each load
// balancer (the seed rotates through 1, 2, 3 so that each base runs once
// with each seed), then the healthy runs: both fabrics, each healthy
// workload, each load balancer, each of HealthySeeds.
func TreeCatalogue() ([]Scenario, error) {
	type fabric struct {
		spec, name, short string
		bases             func(*topo) []base
	}
	fabrics := []fabric{
		{LeafSpine, "leafspine 4x4, 16h", "ls", leafSpineBases},
		{FatTree, "fattree 3-tier, 36h", "ft", fatTreeBases},
	}
	var out []Scenario
	for _, fb := range fabrics {
		f, err := Fabric(fb.spec)
		if err != nil {
			return nil, err
		}
		t := &topo{f: f}
		bases := fb.bases(t)
		if t.err != nil {
			return nil, t.err
		}
		for i, b := range bases {
			for li, lb := range LBs {
				seed := uint64(1 + (i+li)%3)
				out = append(out, Scenario{
					ID:         fmt.Sprintf("%s%02d-%s-s%d", fb.short, i+1, lb, seed),
					Fabric:     fb.spec,
					FabricName: fb.name,
					Class:      b.class,
					Jobs:       []Job{b.job},
					Faults:     b.faults,
					LB:         lb,
					Seed:       seed,
					World:      WorldTrees,
				})
			}
		}
	}
	for _, fb := range fabrics {
		f, err := Fabric(fb.spec)
		if err != nil {
			return nil, err
		}
		for _, j := range healthyJobs(f) {
			for _, lb := range LBs {
				for _, seed := range HealthySeeds {
					out = append(out, Scenario{
						ID:         fmt.Sprintf("%s-healthy-%s-%s-s%d", fb.short, j.Name, lb, seed),
						Fabric:     fb.spec,
						FabricName: fb.name,
						Class:      Healthy,
						Jobs:       []Job{j},
						LB:         lb,
						Seed:       seed,
						World:      WorldTrees,
					})
				}
			}
		}
	}
	return out, nil
}
