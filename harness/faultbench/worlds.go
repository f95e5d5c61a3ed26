package faultbench

import "fmt"

// The worlds catalogue (issue 28): faults and healthy runs on lossless
// (PFC), low-diameter and multi-plane fabrics and through coarser
// telemetry, where congestion spreads or routing detours and the root
// must be named, not its victims.

// Fabrics of the worlds catalogue.
const (
	// Dragonfly is the 72-host Dragonfly of the non-shortest-path paper
	// (9 groups of 4 routers, 2 hosts and 2 global links per router),
	// 100 Gb/s: router0..3 form group 0, router0's global links lead to
	// router4 (group 1) and router8 (group 2).
	Dragonfly = "dragonfly:p=2,a=4,h=2"
	// SlimFly is a 100-host Slim Fly (q=5: 50 routers in 10 groups of 5,
	// 2 hosts each, diameter 2), 100 Gb/s: router0's local links go to
	// router1 and router4, its global links to router25, 30, 35, 40, 45.
	SlimFly = "slimfly:q=5,p=2"
	// MultiPlane is LeafSpine in 4 planes: every host has one 100 Gb/s
	// NIC port per plane (eth0..eth3), plane p's switches are
	// p<p>-leaf0..3 and p<p>-spine0..3.
	MultiPlane = "leafspine:leaves=4,spines=4,hosts_per_leaf=4,gbps=100,planes=4"
	// LeafSpine10 is LeafSpine at 10 Gb/s, for the 10 ms telemetry runs
	// (jobs lasting 100s of ms with a tenth of the packets).
	LeafSpine10 = "leafspine:leaves=4,spines=4,hosts_per_leaf=4,gbps=10"
)

// Worlds: a scenario's fabric and features, for tables and the healthy
// false-positive counts.
const (
	WorldTrees     = "trees"       // leaf-spine and fat tree, lossy (issue 11)
	WorldPFC       = "lossless"    // features.pfc
	WorldDragonfly = "dragonfly"   // Dragonfly, UGAL-L or source-guided
	WorldSlimFly   = "slim fly"    // Slim Fly, UGAL-L or source-guided
	WorldPlanes    = "multi-plane" // 4 planes
	WorldTelemetry = "telemetry"   // 1 ms and 10 ms sample intervals
)

// Worlds lists the worlds in table order.
var Worlds = []string{WorldTrees, WorldPFC, WorldDragonfly, WorldSlimFly, WorldPlanes, WorldTelemetry, WorldLab}

// Fault classes of the worlds catalogue.
const (
	ClassPFCSlowNIC     = "pfc-slow-nic"     // lossless: a host NIC at 40%
	ClassPFCLink        = "pfc-link"         // lossless: a degraded fabric port
	ClassPFCIncastFault = "pfc-incast+fault" // lossless: a healthy incast plus a fault elsewhere
	ClassDFGlobal       = "dragonfly-global" // a degraded global link
	ClassDFLocal        = "dragonfly-local"  // a degraded local link
	ClassSFGlobal       = "slimfly-global"   // a degraded global link
	ClassSFLocal        = "slimfly-local"    // a degraded local link
	ClassPlaneUplink    = "plane-uplink"     // a degraded leaf uplink in one plane
	ClassPlaneDown      = "plane-down"       // one plane's link down: a host's NIC port or a leaf uplink
	ClassTelemetry1ms   = "telemetry-1ms"    // a degraded uplink or slow NIC seen through 1 ms telemetry
	ClassTelemetry10ms  = "telemetry-10ms"   // the same through 10 ms telemetry (10 Gb/s fabric)
)

// WorldClasses lists the worlds catalogue's fault classes in table order.
var WorldClasses = []string{
	ClassPFCSlowNIC, ClassPFCLink, ClassPFCIncastFault,
	ClassDFGlobal, ClassDFLocal, ClassSFGlobal, ClassSFLocal,
	ClassPlaneUplink, ClassPlaneDown, ClassTelemetry1ms, ClassTelemetry10ms, ClassLabUplink,
}

// SpritzLBs are the Spritz paper's path-aware load balancers, run where
// the routing lets them (hash ECMP coarse-grained, source-guided routing
// fine-grained; UGAL routes per packet in the switches and refuses them).
var SpritzLBs = []string{"spritz-spray", "spritz-scout"}

// worldBase is a worlds-catalogue entry before it is crossed with load
// balancers.
type worldBase struct {
	class, world string
	spec, name   string
	jobs         []Job
	faults       []Fault
	set          Settings
	lbs          []string
}

var (
	allLBs   = []string{"ecmp", "ops", "reps", "spritz-spray", "spritz-scout"}
	ugalLBs  = []string{"ecmp", "ops", "reps"}
	guideLBs = []string{"ecmp", "ops", "spritz-spray", "spritz-scout"}
)

// incast8 is an 8:1 incast of 4 MiB flows into host12 (under leaf3)
// from two hosts of every other leaf and host2, host6, starting at 50 µs.
var incast8 = Job{Name: "inc", Workload: "incast", Size: "4MiB", Senders: 8, Receiver: "host12",
	Hosts: []string{"host0", "host1", "host4", "host5", "host8", "host9", "host2", "host6", "host12"}, Start: "50us"}

// worldBases are the worlds catalogue's faulted and healthy entries.
func worldBases() ([]worldBase, error) {
	ls, err := Fabric(LeafSpine)
	if err != nil {
		return nil, err
	}
	ft, err := Fabric(FatTree)
	if err != nil {
		return nil, err
	}
	tl, tf := &topo{f: ls}, &topo{f: ft}
	df, err := Fabric(Dragonfly)
	if err != nil {
		return nil, err
	}
	sf, err := Fabric(SlimFly)
	if err != nil {
		return nil, err
	}
	mp, err := Fabric(MultiPlane)
	if err != nil {
		return nil, err
	}
	td, ts, tm := &topo{f: df}, &topo{f: sf}, &topo{f: mp}
	pfc := Settings{PFC: true}
	pfcDCTCP := Settings{PFC: true, CC: "dctcp"}
	ugal := Settings{Routing: "ugal-l"}
	guided := Settings{Routing: "source-guided"}
	ms1 := Settings{Interval: "1ms", End: "200ms"}
	ms10 := Settings{Interval: "10ms", End: "2s"}
	perm4 := Job{Name: "perm", Workload: "permutation", Size: "4MiB"}
	a2a256 := Job{Name: "a2a", Workload: "all-to-all", Size: "256KiB"}
	permMP := Job{Name: "perm", Workload: "permutation", Size: "32MiB"}
	a2aMP := Job{Name: "a2a", Workload: "all-to-all", Size: "2MiB"}
	perm1ms := Job{Name: "perm", Workload: "permutation", Size: "64MiB"}
	a2a1ms := Job{Name: "a2a", Workload: "all-to-all", Size: "4MiB"}
	perm10ms := Job{Name: "perm", Workload: "permutation", Size: "128MiB"}
	a2a10ms := Job{Name: "a2a", Workload: "all-to-all", Size: "8MiB"}
	nic := func(h string, frac float64, at string) Fault {
		return Fault{Kind: "degrade", NIC: h, Fraction: frac, At: at}
	}
	down := func(port, at string) Fault { return Fault{Kind: "down", Port: port, At: at} }
	lsName, ftName := "leafspine 4x4, 16h", "fattree 3-tier, 36h"
	dfName, sfName, mpName := "dragonfly 9x4, 72h", "slim fly q=5, 100h", "leafspine 4x4, 4 planes"
	b := []worldBase{
		// Lossless: the root of the pause tree, not the ports it paused.
		{ClassPFCSlowNIC, WorldPFC, LeafSpine, lsName, []Job{A2A}, []Fault{nic(tl.host("host6"), 0.4, "200us")}, pfc, allLBs},
		{ClassPFCSlowNIC, WorldPFC, LeafSpine, lsName, []Job{StripedRing(ls)}, []Fault{nic(tl.host("host9"), 0.4, "100us")}, pfc, allLBs},
		{ClassPFCSlowNIC, WorldPFC, LeafSpine, lsName, []Job{A2A}, []Fault{nic(tl.host("host10"), 0.4, "200us")}, pfcDCTCP, allLBs},
		{ClassPFCSlowNIC, WorldPFC, FatTree, ftName, []Job{A2A}, []Fault{nic(tf.host("host20"), 0.4, "200us")}, pfc, allLBs},
		{ClassPFCLink, WorldPFC, LeafSpine, lsName, []Job{Perm}, []Fault{degrade(tl.uplink("leaf1", 1), 0.5, "200us")}, pfc, allLBs},
		{ClassPFCLink, WorldPFC, LeafSpine, lsName, []Job{A2A}, []Fault{degrade(tl.uplink("leaf2", 2), 0.25, "200us")}, pfc, allLBs},
		{ClassPFCLink, WorldPFC, LeafSpine, lsName, []Job{Perm}, []Fault{degrade(tl.towards("spine2", "leaf1"), 0.5, "200us")}, pfcDCTCP, allLBs},
		{ClassPFCLink, WorldPFC, FatTree, ftName, []Job{Perm}, []Fault{degrade(tf.uplink("agg3", 1), 0.5, "200us")}, pfc, allLBs},
		{ClassPFCIncastFault, WorldPFC, LeafSpine, lsName, []Job{Perm, incast8}, []Fault{degrade(tl.uplink("leaf0", 2), 0.5, "200us")}, pfc, allLBs},
		{ClassPFCIncastFault, WorldPFC, LeafSpine, lsName, []Job{Perm, incast8}, []Fault{degrade(tl.towards("spine1", "leaf3"), 0.5, "200us")}, pfc, allLBs},
		{ClassPFCIncastFault, WorldPFC, LeafSpine, lsName, []Job{Perm, incast8}, []Fault{nic(tl.host("host3"), 0.4, "200us")}, pfcDCTCP, allLBs},
		{Healthy, WorldPFC, LeafSpine, lsName, []Job{Perm, incast8}, nil, pfc, allLBs},
		{Healthy, WorldPFC, LeafSpine, lsName, []Job{Perm, incast8}, nil, pfcDCTCP, allLBs},
		{Healthy, WorldPFC, LeafSpine, lsName, []Job{A2A}, nil, pfc, allLBs},
		{Healthy, WorldPFC, LeafSpine, lsName, []Job{StripedRing(ls)}, nil, pfc, allLBs},
		{Healthy, WorldPFC, FatTree, ftName, []Job{A2A}, nil, pfc, allLBs},

		// Dragonfly: hosts behind a hot link are its victims.
		{ClassDFGlobal, WorldDragonfly, Dragonfly, dfName, []Job{perm4}, []Fault{degradeLink(td.link("router0", "router4"), 0.5, "100us")}, ugal, ugalLBs},
		{ClassDFGlobal, WorldDragonfly, Dragonfly, dfName, []Job{a2a256}, []Fault{degradeLink(td.link("router13", "router17"), 0.5, "100us")}, ugal, ugalLBs},
		{ClassDFGlobal, WorldDragonfly, Dragonfly, dfName, []Job{a2a256}, []Fault{degradeLink(td.link("router0", "router4"), 0.5, "100us")}, guided, guideLBs},
		{ClassDFLocal, WorldDragonfly, Dragonfly, dfName, []Job{perm4}, []Fault{degradeLink(td.link("router1", "router2"), 0.5, "100us")}, ugal, ugalLBs},
		{ClassDFLocal, WorldDragonfly, Dragonfly, dfName, []Job{a2a256}, []Fault{degrade(td.towards("router21", "router22"), 0.25, "100us")}, ugal, ugalLBs},
		{ClassDFLocal, WorldDragonfly, Dragonfly, dfName, []Job{a2a256}, []Fault{degradeLink(td.link("router1", "router2"), 0.5, "100us")}, guided, guideLBs},
		{Healthy, WorldDragonfly, Dragonfly, dfName, []Job{perm4}, nil, ugal, ugalLBs},
		{Healthy, WorldDragonfly, Dragonfly, dfName, []Job{{Name: "perm", Workload: "permutation", Size: "2MiB"}}, nil, ugal, ugalLBs},
		{Healthy, WorldDragonfly, Dragonfly, dfName, []Job{a2a256}, nil, guided, guideLBs},

		// Slim Fly.
		{ClassSFGlobal, WorldSlimFly, SlimFly, sfName, []Job{perm4}, []Fault{degradeLink(ts.link("router0", "router25"), 0.5, "100us")}, ugal, ugalLBs},
		{ClassSFGlobal, WorldSlimFly, SlimFly, sfName, []Job{a2a256}, []Fault{degradeLink(ts.link("router0", "router25"), 0.5, "100us")}, guided, guideLBs},
		{ClassSFLocal, WorldSlimFly, SlimFly, sfName, []Job{a2a256}, []Fault{degradeLink(ts.link("router0", "router1"), 0.5, "100us")}, ugal, ugalLBs},
		{ClassSFLocal, WorldSlimFly, SlimFly, sfName, []Job{a2a256}, []Fault{degradeLink(ts.link("router0", "router1"), 0.5, "100us")}, guided, guideLBs},
		{Healthy, WorldSlimFly, SlimFly, sfName, []Job{perm4}, nil, ugal, ugalLBs},
		{Healthy, WorldSlimFly, SlimFly, sfName, []Job{a2a256}, nil, guided, guideLBs},

		// Multi-plane.
		{ClassPlaneUplink, WorldPlanes, MultiPlane, mpName, []Job{permMP}, []Fault{degrade(tm.uplink("p2-leaf1", 1), 0.5, "100us")}, Settings{}, allLBs},
		{ClassPlaneUplink, WorldPlanes, MultiPlane, mpName, []Job{a2aMP}, []Fault{degrade(tm.uplink("p0-leaf3", 2), 0.25, "100us")}, Settings{}, allLBs},
		{ClassPlaneDown, WorldPlanes, MultiPlane, mpName, []Job{permMP}, []Fault{down("host5:eth2", "100us")}, Settings{}, allLBs},
		{ClassPlaneDown, WorldPlanes, MultiPlane, mpName, []Job{a2aMP}, []Fault{down(tm.uplink("p1-leaf0", 0), "100us")}, Settings{}, allLBs},
		{Healthy, WorldPlanes, MultiPlane, mpName, []Job{permMP}, nil, Settings{}, allLBs},
		{Healthy, WorldPlanes, MultiPlane, mpName, []Job{a2aMP}, nil, Settings{}, allLBs},

		// Coarser telemetry.
		{ClassTelemetry1ms, WorldTelemetry, LeafSpine, lsName, []Job{perm1ms}, []Fault{degrade(tl.uplink("leaf1", 1), 0.5, "1ms")}, ms1, allLBs},
		{ClassTelemetry1ms, WorldTelemetry, LeafSpine, lsName, []Job{a2a1ms}, []Fault{nic(tl.host("host6"), 0.5, "1ms")}, ms1, allLBs},
		{ClassTelemetry10ms, WorldTelemetry, LeafSpine10, "leafspine 4x4 10G, 16h", []Job{perm10ms}, []Fault{degrade("leaf2:Ethernet6", 0.5, "10ms")}, ms10, allLBs},
		{ClassTelemetry10ms, WorldTelemetry, LeafSpine10, "leafspine 4x4 10G, 16h", []Job{a2a10ms}, []Fault{nic("host9", 0.5, "10ms")}, ms10, allLBs},
		{Healthy, WorldTelemetry, LeafSpine, lsName, []Job{a2a1ms}, nil, ms1, allLBs},
		{Healthy, WorldTelemetry, LeafSpine10, "leafspine 4x4 10G, 16h", []Job{a2a10ms}, nil, ms10, allLBs},
	}
	for _, t := range []*topo{tl, tf, td, ts, tm} {
		if t.err != nil {
			return nil, t.err
		}
	}
	return b, nil
}

// WorldsCatalogue is the worlds benchmark: every faulted entry under each
// of its load balancers, the seed rotating through 1, 2 and 3 so that
// each entry runs with each seed; every healthy entry under each load
// balancer with the seeds HealthySeeds.
func WorldsCatalogue() ([]Scenario, error) {
	bases, err := worldBases()
	if err != nil {
		return nil, err
	}
	var out []Scenario
	n := map[string]int{}
	repTaken := map[string]bool{}
	for i, b := range bases {
		if _, err := Fabric(b.spec); err != nil {
			return nil, err
		}
		short := worldShort[b.world]
		n[b.world]++
		// The representative subset: the first entry of each fault class
		// and of each world's healthy runs, under a load balancer that
		// rotates from entry to entry.
		key := b.class + "|" + b.world
		first := !repTaken[key]
		repTaken[key] = true
		rep := b.lbs[i%len(b.lbs)]
		for li, lb := range b.lbs {
			seeds := []uint64{uint64(1 + (i+li)%3)}
			if b.class == Healthy {
				seeds = HealthySeeds
			}
			for _, seed := range seeds {
				kind := "f"
				if b.class == Healthy {
					kind = "h"
				}
				out = append(out, Scenario{
					ID:         fmt.Sprintf("%s%s%02d-%s-s%d", short, kind, n[b.world], lb, seed),
					Fabric:     b.spec,
					FabricName: b.name,
					Class:      b.class,
					World:      b.world,
					Jobs:       b.jobs,
					Faults:     b.faults,
					LB:         lb,
					Seed:       seed,
					Settings:   b.set,
					Rep:        first && lb == rep && (b.class != Healthy || seed == 1),
				})
			}
		}
	}
	return out, nil
}

var worldShort = map[string]string{WorldPFC: "pfc", WorldDragonfly: "df", WorldSlimFly: "sf", WorldPlanes: "mp", WorldTelemetry: "tm"}

// Representative is the subset of a catalogue the default test runs
// (FABRICBENCH_FAULTBENCH_FULL=1 runs everything): the trees catalogue
// whole, and of the worlds catalogue the first entry of each fault class
// and of each world's healthy runs, once, under one of its load balancers
// (rotating from entry to entry), healthy ones with seed 1.
func Representative(scenarios []Scenario) []Scenario {
	var out []Scenario
	for _, s := range scenarios {
		if s.World == WorldTrees || s.Rep {
			out = append(out, s)
		}
	}
	return out
}

// LabSpec is the FRR lab fabric of the lab runs (the netns backend): 2
// leaves with 4 hosts each and 4 spines, 50 Mb/s links (tbf), as
// examples/suites/lab-degraded.yaml: leaf0's uplinks are Ethernet4-7.
const LabSpec = "leafspine:leaves=2,spines=4,hosts_per_leaf=4,gbps=0.05"

// WorldLab are the runs on the netns backend's FRR lab (kernel counters,
// qdisc backlog and drops; no ECN, trimming or PFC there).
const WorldLab = "lab"

// ClassLabUplink is a leaf uplink shaped to 10% on the lab.
const ClassLabUplink = "lab-uplink"

// LabCatalogue is the lab part of the benchmark, run by
// TestFaultLocalisationLab (root, FABRICBENCH_FAULTBENCH_LAB=1): a leaf
// uplink shaped to 10% under a permutation with seeds 1-3, and healthy
// runs: the permutation (seeds 1, 2) and the permutation beside a 3:1
// incast into host7, whose congestion must not make stragglers. OPS:
// REPS keeps one or two entropies per flow without ECN, and the
// path-aware load balancers move the traffic off a degraded link, so
// that it carries nothing to measure.
func LabCatalogue() []Scenario {
	set := Settings{NoECN: true, NoTrim: true, MTU: 8192, Interval: "5ms"}
	perm := Job{Name: "perm", Workload: "permutation", Size: "4MiB"}
	inc := Job{Name: "inc", Workload: "incast", Size: "2MiB", Senders: 3, Receiver: "host7",
		Hosts: []string{"host0", "host1", "host2", "host7"}}
	var out []Scenario
	add := func(id, class string, jobs []Job, faults []Fault, seed uint64) {
		out = append(out, Scenario{ID: id, Fabric: LabSpec, FabricName: "FRR lab 2x4, 8h, 50 Mb/s", Class: class, World: WorldLab,
			Jobs: jobs, Faults: faults, LB: "ops", Seed: seed, Settings: set, Backend: "netns"})
	}
	for seed := uint64(1); seed <= 3; seed++ {
		add(fmt.Sprintf("lab-uplink-s%d", seed), ClassLabUplink, []Job{perm},
			[]Fault{{Kind: "degrade", Port: "leaf0:Ethernet4", Fraction: 0.1, At: "0s"}}, seed)
	}
	for seed := uint64(1); seed <= 2; seed++ {
		add(fmt.Sprintf("lab-healthy-perm-s%d", seed), Healthy, []Job{perm}, nil, seed)
	}
	add("lab-healthy-incast-s1", Healthy, []Job{perm, inc}, nil, 1)
	return out
}
