// Package workloads produces traffic matrices: permutation, incast N:1,
// all-to-all with a bounded number of outstanding flows per sender, and
// htsim connection matrices (.cm), both imported and exported.
//
// # Workload specs
//
// A workload is named either by the path of an htsim connection matrix
// (anything ending in ".cm", see below) or by a spec (see [ParseSpec] and
// [Load]):
//
//	spec  = kind [ ":" param { "," param } ]
//	param = key "=" value
//
// Spaces around kinds, keys and values are ignored. Every key may appear at
// most once. The kinds and their keys are:
//
//	permutation:size=SIZE[,start=DURATION]
//	    Every host sends SIZE bytes to exactly one other host and receives
//	    from exactly one (a random derangement). Receivers are outside the
//	    sender's pod when the fabric has several pods and no pod holds more
//	    than half of the hosts; otherwise outside the sender's leaf when no
//	    leaf holds more than half of the hosts; otherwise the only guarantee
//	    is that no host sends to itself (the generator still avoids the
//	    sender's leaf and pod where it can).
//
//	incast:senders=N,size=SIZE[,dst=HOST][,start=DURATION]
//	    N distinct random senders each send SIZE bytes to host dst. Senders
//	    are drawn from outside dst's leaf first. Without dst the
//	    destination is random. 1 <= N <= hosts-1; HOST is a host number,
//	    0 <= HOST < hosts, or a host's name in the fabric (host5), as
//	    suites name hosts.
//
//	alltoall:size=SIZE[,k=K][,start=DURATION]
//	    Every host sends SIZE bytes to every other host: hosts(hosts-1)
//	    flows. Destinations follow a shifted schedule over a random ring
//	    of the hosts, so that at each step every host is the receiver of
//	    exactly one sender. With K > 0 each sender has at most K flows
//	    outstanding: its flow j >= K starts when its flow j-K completes.
//	    K = 0 (the default) starts every flow at once. Specs are limited to
//	    2^25 flows (about 5,800 hosts).
//
//	groupshift:size=SIZE[,shift=S][,start=DURATION]
//	    The adversarial pattern of low-diameter fabrics: the k-th host of
//	    group g (the pod of its switch; a Dragonfly group) sends to the k-th
//	    host of group g+S (default 1), modulo the number of groups.
//
//	unf|adv1|adv2:size=SIZE[,flows=N][,src_group=G][,dst_group=G][,start=DURATION]
//	    The non-shortest-path paper's pairings, N random pairs each: UNF
//	    (default N hosts) any source, a destination outside its group;
//	    ADV1 (default N per-group hosts squared) sources in one group,
//	    destinations in another (src_group, dst_group, random unless
//	    given); ADV2 (default N (groups-1) x per-group squared) sources
//	    anywhere outside dst_group, destinations in it.
//
//	monitored:size=SIZE[,flow=SIZE][,src=HOST][,dst=HOST][,free=N][,into=exit|dst|peer][,flows=N][,bg=scheme|minimal][,start=DURATION]
//	    Spritz's Figure 5 / Table III microbenchmark (Monitored): flow 0
//	    is the monitored flow src -> dst (default host 0 to the last host,
//	    4MiB); the N groups before dst's group (default 1, cyclically,
//	    skipping src's) and dst's group stay idle; in every other group
//	    each host not on the exit router (the router with the group's
//	    global link to dst's group) sends SIZE bytes to the exit router's
//	    hosts in turn. Variants, not the paper's text: into=dst sends the
//	    background on through the exit router into dst's group (its hosts
//	    but dst, in turn); into=peer sends it over the exit router's
//	    global link to the hosts of the router at its far end (dst
//	    excluded); flows=N keeps each congested group's first N senders
//	    (0, the default: all); bg=minimal makes the background
//	    environment traffic on minimal routes with ECMP (Flow.Minimal)
//	    instead of the run's scheme. Deterministic: the seed plays no part.
//
// The seed passed along with the spec makes the random choices
// reproducible: the same spec, fabric and seed always give the same matrix.
//
// SIZE is a non-negative decimal number with an optional unit: none or B
// (bytes), KB, MB, GB, TB (powers of 1000; "kB" is accepted for KB) or KiB,
// MiB, GiB, TiB (powers of 1024), e.g. 2MiB, 2MB, 1.5KiB, 2000000. The
// result must be a whole number of bytes, at most 1 PiB (1024TiB), and flow
// sizes must be positive. See units.ParseBytes.
//
// DURATION is a non-negative decimal number with a unit: ps, ns, us (or µs),
// ms or s, e.g. 10us, 2.5ms, at most 1 hour (3600s). See units.ParsePs. start=DURATION delays
// every flow that does not wait for another flow (After == -1); dependent
// flows keep starting when their predecessor completes.
//
// Unknown kinds and keys, missing required keys and bad values are errors
// that name the offending key and list the valid ones.
//
// # htsim connection matrices
//
// [ParseCM], [LoadCM] and [WriteCM] read and write htsim's .cm format:
//
//	# comment
//	Nodes 128
//	Connections 3
//	Triggers 1
//	42->5 id 1 start 0 size 2000000 send_done_trigger 1
//	7->5 id 2 start 12.5 size 2000000
//	5->9 id 3 trigger 1 size 4096
//	trigger id 1 oneshot
//
// Header lines ("Nodes", "Connections", optional "Triggers") come first, in
// any order. "Nodes" is the number of hosts (at most 2^20); "Connections"
// (at most 2^24) and "Triggers" must equal the number of connection and
// trigger lines that follow. Blank lines are allowed and '#' starts a
// comment that runs to the end of the line (htsim itself only accepts
// whole-line comments before the first connection; WriteCM writes none
// elsewhere).
//
// A connection line is "src->dst" followed by keyword/value pairs in any
// order:
//
//   - id I: the connection id, 1 <= I < 2^31 (htsim forbids 0). The flow
//     gets Flow.ID = I-1, so that matrices read from files and matrices
//     made by the generators both number their flows from 0. Without an
//     id the connection's 1-based position among the connection lines is
//     used, so Flow.ID is its 0-based position.
//   - size S: payload bytes, required, positive.
//   - start T: start time in microseconds, decimal, with at most six
//     decimals (whole picoseconds). htsim truncates start times to whole
//     microseconds when it loads a file; fabricbench keeps the full
//     precision. Without start and trigger the flow starts at 0.
//   - trigger T: the connection starts when trigger T fires. Together
//     with start, the start time is a delay after the trigger fires (a
//     fabricbench extension: htsim rejects start on a triggered
//     connection).
//   - send_done_trigger T: when the connection completes it fires
//     trigger T.
//   - prio P: accepted and ignored (fabricbench has no flow priorities).
//
// recv_done_trigger is rejected: fabricbench dependencies start a flow
// when its predecessor completes at the sender, which is
// send_done_trigger. htsim's "addon" flag, "Failures" header and
// "failure" lines are rejected too.
//
// A trigger line declares a trigger used by connections:
// "trigger id T oneshot", "trigger id T multishot" or
// "trigger id T barrier count C". A flow can wait for a single predecessor
// ([Flow.After]), so a trigger may be fired by one connection only, and
// one that connections wait for must be fired by exactly one; a multishot
// trigger may have only one waiting connection and a barrier must have
// count 1. Every trigger referenced by a connection must be declared.
//
// WriteCM writes a flow with After >= 0 as "trigger T" with T = the file
// id of its predecessor, gives that predecessor "send_done_trigger T" and
// declares "trigger id T oneshot" after the connection lines. Files
// written by WriteCM therefore load in htsim unless a dependent flow has a
// non-zero delay (see trigger above) or a size of 2^31 bytes or more
// (htsim reads sizes as 32-bit integers).
package workloads
