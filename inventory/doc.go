// Package inventory describes a fabric: switches, hosts, their ports and the
// links between them. The same model is produced by the generators (leaf-spine,
// fat tree), by importing htsim .topo files and (later) by real-hardware
// inventories, and is consumed by the simulator, the drivers and the analysis.
//
// # Loading a fabric
//
// [Load] accepts either the path of an htsim .topo file or a generator spec:
//
//	fabricbench sim --topo fat_tree_128_1os.topo ...
//	fabricbench sim --topo fattree:hosts=128 ...
//	fabricbench sim --topo leafspine:leaves=4,spines=2,hosts_per_leaf=2 ...
//
// An argument that names an existing file ending in .topo is read with
// [LoadTopo]; otherwise an argument containing ':' is a spec for [ParseSpec].
//
// # Generator specs
//
// Grammar:
//
//	spec     = kind ":" [ param { "," param } ]
//	kind     = "fattree" | "leafspine" | "dragonfly" | "slimfly"
//	param    = key "=" value
//	integer  = digit { digit }
//	rate     = decimal [ "gbps" ]             Gbps, up to 3 decimals (1 Mbps)
//	duration = decimal unit | "0"
//	unit     = "ps" | "ns" | "us" | "µs" | "ms" | "s"
//	decimal  = digit { digit } [ "." digit { digit } ]
//
// Kinds and keys are case-insensitive; blanks around keys and values are
// ignored. Every key may appear once; unknown keys, malformed values and
// values out of range are errors naming the key. Durations must be whole
// picoseconds and at most 1s; rates are at most 100000 Gbps.
//
// fattree: an htsim-style fat tree.
//
//	fattree:hosts=N[,tiers=3][,gbps=100][,oversub=1][,oversub1=1]
//	       [,latency=1us][,switch_latency=0][,podsize=P][,radix=K]
//
//	hosts           number of hosts (required)
//	tiers           2 or 3 switching tiers (default 3)
//	gbps            rate of every link (default 100, htsim's default)
//	oversub         tier-0 oversubscription O: each ToR has O times more
//	                host-facing than uplink bandwidth (default 1)
//	oversub1        tier-1 oversubscription O1 (3 tiers only): each agg has
//	                O1 times more ToR-facing than core-facing bandwidth
//	latency         latency of every link (default 1us, htsim's default;
//	                must be positive)
//	switch_latency  forwarding latency of every switch (default 0)
//	podsize         hosts per pod (3 tiers; for 2 tiers only = hosts)
//	radix           K of the K-ary building blocks (even)
//
// Without oversubscription a 3-tier tree is the K-ary fat tree htsim builds
// when it is given no .topo file: hosts = K³/4; K pods of K/2 ToRs with K/2
// hosts each; K/2 aggs per pod; (K/2)² cores. Every ToR connects to every
// agg of its pod, and the agg at pod position p connects to cores p,
// p+K/2, p+2·K/2, ... (so core c reaches agg c mod K/2 of every pod). Valid
// sizes are 2, 16, 54, 128, 250, 432, 686, 1024, 1458, 2000, 2662, 3456, ...
// (K = 2, 4, 6, ...). A 2-tier tree is htsim's leaf-spine: hosts = K²/2; K
// leaves of K/2 hosts, each connected to all K/2 spines.
//
// Oversubscription keeps the switching structure of the K-ary tree (every ToR
// has K/2 uplinks, one to each of the K/2 aggs of its pod; every agg has K/2
// uplinks to cores) and adds hosts: oversub=O gives every ToR O·K/2 hosts,
// and oversub1=O1 gives every pod O1·K/2 ToRs. A 3-tier tree then has
// O·O1·K³/4 hosts in pods of O·O1·(K/2)² hosts; a 2-tier tree O·K²/2 hosts.
// For example fattree:hosts=512,oversub=4 is the K=8 tree with 16 hosts and
// 4 uplinks per ToR.
//
// Other host counts need radix or podsize:
//
//   - radix=K fixes K/2 ToR uplinks and K/2 aggs per pod. podsize defaults to
//     a full pod, O·O1·(K/2)²; a smaller podsize gives partially populated
//     pods (a multiple of the O·K/2 hosts per ToR, with the number of ToRs per
//     pod a multiple of O1). Each agg has (ToRs per pod)/O1 uplinks, one to
//     each of its cores. hosts must be a multiple of podsize and the tree has
//     hosts/podsize pods, at most K (the core radix). With tiers=2, hosts must
//     be a multiple of O·K/2 and there are at most K leaves.
//   - podsize=P alone must be a full pod for some K, O·O1·(K/2)²; hosts must
//     be a multiple of it and the tree has hosts/podsize pods, any number
//     (every core then has one link per pod).
//
// leafspine: a 2-tier leaf-spine in which every leaf connects to every spine.
//
//	leafspine:leaves=L,spines=S,hosts_per_leaf=H[,gbps=100][,uplink_gbps=G]
//	         [,links_per_spine=1][,latency=1us][,switch_latency=0]
//
//	leaves, spines, hosts_per_leaf   counts (required)
//	gbps             rate of host links (default 100)
//	uplink_gbps      rate of leaf-spine links (default gbps)
//	links_per_spine  parallel links between each leaf and each spine
//	latency          latency of every link (default 1us)
//	switch_latency   forwarding latency of every switch (default 0)
//
// planes (fattree and leafspine): planes=N (1..8, inventory.MaxPlanes)
// builds N parallel copies of the fabric's switches and links (planes
// "plane0".., switch names prefixed "p<plane>-": p0-leaf0), every host
// with one NIC port per plane, port i (eth<i>) on plane i, as Spectrum-X's
// multi-plane hosts (Node.Plane, Port.Plane). Rails are the leaf
// positions: rail r ("rail<r>", Port.Rail) holds the host NIC ports under
// leaf r of every plane. planes=1 is the single-plane fabric with
// prefixed names, planes and rails set.
//
// dragonfly: a Dragonfly (Kim et al., ISCA 2008).
//
//	dragonfly:p=P,a=A,h=H[,gbps=100][,latency=1us][,local_gbps=G][,local_latency=D]
//	         [,global_gbps=G][,global_latency=D][,switch_latency=0]
//
//	p, a, h          hosts per router, routers per group, global links per router
//	gbps, latency    host links (and the default for local and global links)
//	local_*          router-router links inside a group (all-to-all)
//	global_*         links between groups (Link.Global set)
//
// There are g = A*H+1 groups and exactly one global link per pair of groups,
// arranged as htsim's DragonFlyTopology arranges them, so results compare:
// group G numbers its global links t = 0..A*H-1 (router t/H, its port t%H)
// and link t leads to group t when t < G, else t+1; the link between groups
// G < T lands on router G/H of T. Routers are router0.. (tier 0, Pod = group),
// hosts host0.. in router order. p=4,a=8,h=4 is Spritz's 1056 hosts, 264
// routers, 33 groups.
//
// slimfly: a Slim Fly (Besta and Hoefler, SC 2014), the MMS graph of
// diameter 2 for a prime power Q = 4w+d, d in {-1,0,1} (GF(p^k) built from
// the first irreducible polynomial, so q=4, 8, 9, 25, 27... work).
//
//	slimfly:q=Q,p=P[,gbps=100][,latency=1us][,local_gbps=G][,local_latency=D][,switch_latency=0]
//
// 2Q^2 routers of network degree (3Q-d)/2, P hosts each; Pod is the router's
// row (2Q groups of Q routers). q=9,p=7 is Spritz's 1134 hosts, 162 routers,
// degree 13. Neither kind is an htsim .topo tree: they are built directly.
//
// Generators do not wire fabrics themselves: they build the equivalent htsim
// tier description (as a .topo file would give it) and run the importer's
// derivation, consistency checks and builder, so a spec and the equivalent
// .topo file give identical fabrics. The only exception is a leafspine that
// htsim cannot describe (uplink_gbps different from gbps, or hosts_per_leaf
// not a multiple of spines × links_per_spine, i.e. an undersubscribed leaf):
// its counts are set directly and it goes through the same builder.
//
// # htsim .topo files
//
// [ParseTopo] and [LoadTopo] read the fat-tree descriptions of htsim (the UEC
// packet-level simulator, FatTreeTopologyCfg::read_cfg) and build the tree
// htsim builds from them (set_custom_params and the FatTreeTopology
// constructor):
//
//	# comment                 (also after a value)
//	Nodes 128                 header: number of hosts
//	Tiers 3                   header: 2 or 3
//	Podsize 16                header: hosts per pod
//	Tier 0                    one block per tier, in order 0, 1[, 2]
//	Downlink_speed_Gbps 100   rate of the links below this tier (required)
//	Radix_Down 4              down ports (required)
//	Radix_Up 4                up ports (required, except on the top tier)
//	Downlink_Latency_ns 1000  latency of the links below this tier (required, > 0)
//	Switch_Latency_ns 0       forwarding latency of this tier's switches
//	Oversubscribed 1          default 1
//	Bundle 1                  parallel links to each switch below (default 1)
//	Queue_Up, Queue_Down      buffer sizes in bytes: accepted and ignored
//
// Keys are case-insensitive; values are decimal integers. The tree is
// derived as htsim does: pods = Nodes/Podsize; Radix_Down[0] hosts per ToR;
// ToR uplinks = Nodes·speed[0]/(speed[1]·Oversubscribed[0]); aggs per pod A =
// ToR uplinks/(pods·Radix_Down[1]); with 3 tiers, agg uplinks = ToR
// uplinks·speed[1]/(speed[2]·Oversubscribed[1]) and cores = agg
// uplinks/Radix_Down[2]. Host h attaches to ToR h/Radix_Down[0]; with 3 tiers
// each ToR connects to the A aggs of its pod and the agg at pod position p to
// cores p + A·l for l < Radix_Up[1]/Bundle[2]; with 2 tiers (one pod, as in
// htsim) each ToR connects to every agg. Bundle[t] parallel links join each
// tier-t switch to each tier-(t-1) switch it is wired to.
//
// htsim's consistency checks are enforced, with a precise error instead of
// an exit or assertion: Radix_Down[t] a multiple of Bundle[t] and Radix_Up[t]
// of Bundle[t+1]; Nodes a multiple of Podsize and Podsize of Radix_Down[0];
// Radix_Down[0] = Oversubscribed[0]·Radix_Up[0]; A·Bundle[1] = Radix_Up[0];
// cores a multiple of A and cores·Bundle[2]/A = Radix_Up[1]. Every division
// htsim truncates or asserts on must be exact. Stricter than htsim: unknown
// keys (in the header too), duplicate keys, extra tokens after a value,
// non-integer, zero or negative values, tier blocks missing, out of order or
// beyond Tiers, header keys after the first Tier block, and Radix_Up,
// Queue_Up or an Oversubscribed other than 1 on the top tier, which has no
// uplinks, are errors (htsim rejects Radix_Up and Queue_Up on tier 2 and
// silently ignores the others). Bundle on Tier 0 must be 1, as htsim asserts.
// Like htsim, the radices of tiers 1 and 2 only serve to derive switch
// counts: when link speeds differ between tiers the built aggs can have a
// different number of ports than Radix_Down[1] says.
//
// # Built fabrics
//
// Host h is node h and Fabric.Hosts[h] = h; then come the ToRs, aggs and
// cores. Names: host<i>, tor<i>, agg<i>, core<i> (3 tiers); host<i>, leaf<i>,
// spine<i> (2 tiers), numbered as in htsim. Roles: ToRs [RoleLeaf] (tier 0),
// aggs/spines [RoleSpine] (tier 1), cores [RoleCore] (tier 2). Pods: with 3
// tiers hosts, ToRs and aggs carry their pod and cores -1; with 2 tiers
// everything is pod 0 and HostsPerPod is the number of hosts. A link below
// tier t has rate speed[t] and latency latency[t] in both directions; tier-t
// switches have LatencyPs = switch latency[t]. A switch's ports are in htsim's
// order: down ports first (by the node below), then up ports.
//
// Sizes are capped (see [MaxHosts], [MaxSwitches], [MaxLinks]; .topo files at
// 1 MiB), so no input can exhaust memory, and no input makes the parsers
// panic.
package inventory
