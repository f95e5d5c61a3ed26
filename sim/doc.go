// Package sim is fabricbench's reference simulator: a deterministic,
// discrete-event, packet-level model of a fabric, driving the same endpoint
// state machines (agents/transport) that the real UDP agents run.
//
// Time is integer picoseconds. The model is split into elements the way
// htsim's are, but without an interface call per hop: packets live in an
// index pool (packet.go), events are 24-byte values in a radix heap
// (eventq.go), and each element is a set of functions over flat arrays.
//
//	host NIC (nic.go)          pipe (pipe.go)             switch (switch.go, queue.go)
//	+------------------+       +----------------+       +-----------------------------------------------+
//	| senders, round   |       | serialise at   |       | ingress stage      egress port (per port)     |
//	| robin (pull)     |--tx-->| rate, latency, |--arr->|  route:            +-- ctrl queue (ACK/NACK/  |
//	| ctrl queue first |       | store and      |       |   explicit path    |   trimmed hdr), first    |
//	| deliver: data -> |<------| forward; down: |<------|   or ECMP hash     +-- admit (buffer):        |
//	| ACK in place     |       | lost, epochs   |       |   (entropy, salt)  |   static per queue, or   |
//	+------------------+       +----------------+       |  [PFC, adaptive    |   shared pool + dynamic  |
//	                                                    |   routing: more    |   threshold; full: trim  |
//	                                                    |   stages here]     |   or drop                |
//	                                                    |        |           +-- class queues 0..n-1    |
//	                                                    |        +--------> |   RED ECN at dequeue     |
//	                                                    |                    +-- scheduler: strict      |
//	                                                    |                        priority, DWRR within  |
//	                                                    |                        a priority --> pipe    |
//	                                                    +-----------------------------------------------+
//
// Packet header: flow, destination, size, sequence numbers, timestamps, a
// traffic class (Config.ClassOf, per flow) and a routing header (entropy,
// set by the load balancer, and an optional explicit path, Config.Paths).
//
// Ingress (Sim.ingress) makes the routing decision: a packet with an
// explicit path takes its next hop from it, others are hashed onto the
// switch's equal-cost group towards the destination ((flow, entropy) with
// a per-switch salt; members whose link is down are skipped). With
// Config.Routing = RoutingAdaptive the hash step is replaced by adaptive
// routing (adaptive.go): join-shortest-queue among the group's up members
// on queue depths quantised to ARQuantum and seen up to ARStaleness ago
// (each switch snapshots its ports' depths and refreshes the snapshot on
// the first packet after it is ARStaleness old), ties broken by the run's
// seeded generator; with ARWeighted the tie-break is weighted by the
// capacity left downstream of each port, recomputed at link changes (at
// reconvergence when Config.Reconverge is set). Adaptive routing ignores
// the entropy, so the endpoint load balancer's choice no longer matters;
// ECMP (one entropy per flow) is the natural pairing. With Config.PFC
// (pfc.go) a further step of this stage counts the lossless classes'
// bytes per ingress port and sends pause and resume frames upstream at
// XOFF and XON (control events arriving after the link latency); a paused
// egress class is skipped by the scheduler, a paused host NIC stops
// pulling that class, and lossless classes are never trimmed or dropped.
//
// Stages for benchmarking methodologies (the IETF BMWG AI-fabric draft),
// each off by default and allocation-free per packet: the PFC watchdog
// (pfcwd.go, PFC.WatchdogDetect: a class paused that long without a
// resume is a storm; its queue is dropped and pauses ignored for
// WatchdogRestore), flowlet load balancing (flowlet.go, RoutingFlowlet:
// the DLB of switch ASICs, a hashed flowlet table per switch), sender
// pacing at the NIC (pace.go, workloads.Flow.Rate), the NIC delivery stage
// (delivery.go, Config.Delivery: one-way latency histograms and reordering
// per group of flows), the ECN marking profile (ecnprofile.go) and the
// window of packets lost to link failures (failover.go). The simulator
// does not model credit-based flow control (CBFC), link-layer retry or
// bit errors.
//
// With Config.SRv6 (srv6.go) the stage first serves SRv6 micro-SIDs: a
// pinned flow's sender encapsulates its data packets (SRv6Encap = 40 bytes,
// one outer IPv6 header, added to the packet's wire size, which is what
// serialisation, queues and port octet counters all count) with a uSID
// container, at most MaxUSIDs uN SIDs (USID: switch index + 1) ending in
// the destination leaf's uN and uDX; the containers are a table and the
// packet carries a flag, its container (the explicit-path field) and a
// cursor (the hop byte), so Sim.RepinSRv6 can repin a flow mid-run. A switch whose uN
// is active shifts (advances the cursor) and forwards towards the next
// uSID's switch over the shortest paths to it by ECMP; the destination leaf
// decapsulates. Lists are checked in New (unknown uSID, too long, strict
// hops not adjacent: errors naming the path).
//
// With Config.LowDiameter set (lowdiameter.go, for dragonfly and slimfly
// fabrics), low-diameter routing replaces the hash step. Minimal routes on
// (global hops, local hops), not hop count: between Dragonfly groups that is
// local-global-local, where hop-count ECMP also takes the equally short
// global-global paths through a third group. Valiant sends each packet
// (ACKs too) minimally to a random intermediate group (a switch on fabrics
// without global links, Slim Fly) and then minimally on; ValiantHop
// (valianthop.go, Dragonfly) samples the next hop uniformly at the source
// switch and, after a local hop, a global port at the next; UGAL-L chooses per
// data packet at the source switch between the minimal path and one
// Valiant candidate by first-queue depth x hops, UGAL-G by the bytes queued
// along each whole path; their ACKs route minimally. The choice rides in
// the packet's via field (2 bytes of padding). Source-guided routing
// (sourceguided.go) steers the first two hops of data packets and of ACKs
// (which echo the data packet's entropy) by EV1 and EV2.
//
// Deadlock: the simulator's data class is lossy (full queues trim or drop),
// so no routing here needs virtual channels. Under PFC (lossless) a cyclic
// buffer dependency can deadlock, and a lossless class needs virtual
// channels (a class per phase, raised as the packet moves on): Minimal on a
// Dragonfly 2 (the local hop after the global hop one VC up), Valiant and
// UGAL 3 (local hops in the source, intermediate and destination groups on
// VCs 0, 1, 2; the two global hops on 0 and 1), as Kim et al. (ISCA 2008)
// give them; on a Slim Fly one VC per hop: 2 minimal, 4 with Valiant. This
// is for the PFC work to enforce; nothing here changes classes.
//
// Egress (Sim.enqueue, Sim.startTx) has per port a control queue, served
// first (ACKs, NACKs and trimmed headers; up to twice the data queue), and
// one data queue per traffic class (Config.Classes). Buffer accounting
// (Config.Buffer) admits a data packet when its class queue stays within a
// static QueueBytes, or, with a shared buffer per switch, within Alpha
// times the pool's free bytes (dynamic thresholds, as switch ASICs do). A
// refused packet is trimmed to a header on the control queue or dropped.
// The scheduler serves the backlogged classes of the lowest Priority first;
// classes of equal priority share by deficit weighted round robin (a
// quantum of Weight full packets per turn). RED ECN marks at dequeue on
// the class queue left behind, between Kmin and Kmax of QueueBytes.
//
// The default configuration, one class and a static per-port QueueBytes,
// is the simulator as it was before the pipeline was split: same events,
// same results.
//
// Hosts pull packets from their senders round robin whenever the NIC is
// free, with ACKs first; a host's NIC has no class queues (under PFC it
// skips the senders of a paused class).
//
// Parallel mode (parallel.go, Config.Shards > 1): a conservative, windowed
// (YAWNS) simulation of the same pipeline. Hosts are cut into contiguous
// blocks (a fat tree's pods, a leaf-spine's leaf groups) and switches
// follow the majority of their neighbours one tier down (core switches
// and spines round robin). Each shard is a copy of the Sim sharing the
// fabric-wide arrays, with its own event queue, packet pool, ECN random
// stream and counters; a node's ports, a flow's sender (at its source
// host) and its receiver (at its destination) belong to one shard each.
// Windows are as long as the lookahead L, the shortest latency of a link
// between shards (1 us on the benchmark's trees): within [T, T+L) shards
// run independently on Workers goroutines, and the pipe stage copies a
// packet for another shard into an outbox instead of onto its wire; at
// the barrier each shard takes its inbound packets onto the wires (source
// shard by source shard, in sending order) and the coordinator starts
// successors of the flows completed in the window, in (time, flow) order,
// at the barrier at the earliest. Results depend on the shard count, not
// on the workers. Features that read or change state across shards in
// mid-window are refused (ParallelUnsupported): link events and
// reconvergence, telemetry sampling, adaptive and low-diameter routing,
// PFC, SRv6, VRFs and multi-plane fabrics run serially.
package sim
