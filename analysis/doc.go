// Package analysis turns the telemetry and flow records of one run into job
// results, symmetry-group statistics, ranked anomalies (culprits with their
// victims), group imbalances, fault correlation, plot data and fabric-wide metrics. [Analyze] is the entry
// point; package kpis evaluates KPIs against its [Output].
//
// # Telemetry model
//
// Switches and hosts are gNMI targets named after their node
// (inventory.Node.Name); an interface is a port (inventory.Port.Name, e.g.
// Ethernet3 or eth0). Interface counters (in/out octets and packets,
// out-discards) and queue counters (transmit-octets, dropped, ECN-marked and
// trimmed packets) are cumulative; max-queue-len is a per-interval gauge.
// [NewIndex] sorts the samples into one series per (target, measurement,
// interface, queue, field). A rate is computed per pair of consecutive
// samples, 8·Δoctets/Δt in bits per second, at the later sample's time; an
// interval in which a counter decreases (a reset) is skipped.
//
// To compare ports interval by interval, rates are placed on a common time
// axis whose step is the sample interval (the median spacing of consecutive
// samples): bucket k holds the interval ending nearest to EpochNs + k·step.
// Times in the output are µs since EpochNs (run time 0). The first sample
// of a series only starts its first interval, so the collector should take
// one at run time 0.
//
// # Symmetry groups
//
// Groups of ports that a healthy, evenly loaded fabric drives at the same
// rate, derived from the fabric:
//
//	leaf-uplinks:<leaf>      a tier-0 switch's ports towards tier 1 (Port.Uplink);
//	                         members "leaf:port", metric: out-octets rate (leaf→spine)
//	spine-downlinks:<spine>  a tier-1 switch's ports towards tier 0, out-octets rate
//	spine-uplinks:<spine>    (3 tiers) a tier-1 switch's ports towards tier 2
//	core-downlinks:<core>    (3 tiers) a tier-2 switch's ports
//	rail:<leaf>              the host NICs attached to a tier-0 switch (a rail in
//	                         a rail-optimised fabric); members are host names
//	                         ("host:port" if a host has several NICs on it),
//	                         metric: the NIC's out-octets rate on the host target
//	plane:fabric, plane:pod<N>
//	                         the tier-1 switches of a pod (2 tiers: all spines,
//	                         "fabric"); members are switch names, value: the sum
//	                         of the switch's downlink out-octets rates, i.e. each
//	                         spine's (plane's) share of the load; in a
//	                         multi-plane fabric one per plane, plane:<plane>
//	planes:fabric            (multi-plane fabrics, inventory.Fabric.Planes) one
//	                         member per plane: the host NIC ports on it and the
//	                         leaf ports facing them (both directions), i.e. the
//	                         plane's share of the hosts' traffic
//	rails:fabric             (fabrics with rails, inventory.Fabric.Rails: a
//	                         generated multi-plane fabric's leaf positions or an
//	                         inventory's declared rails) one member per rail,
//	                         likewise
//	local-links:<router>     (Dragonfly, Slim Fly: flat routers without uplinks)
//	                         a router's local (non-global) links to other routers,
//	                         out-octets rate
//	global-links:group<G>    (Dragonfly) every global link leaving group G (one
//	                         member per port), out-octets rate; minimal routing
//	                         leaves all but one idle under group-shift traffic,
//	                         Valiant and UGAL spread it
//
// A group's line rate is the mean of its members' line rates (the sum of
// the downlink rates for a plane member). Its active window is the set of
// sample intervals in which the mean rate over the members with a sample is
// at least ActiveFraction (default 0.05) of that line rate; a member's value
// is its mean rate over the active window. GroupStat reports the values, CV
// (population standard deviation / mean) and max/min. A group that was
// never active reports means over all intervals, CV and MaxMin 0, and is not
// checked; neither is a group with fewer than 3 members with samples.
//
// # Culprits
//
// Every port (switch egress ports and host NICs) is judged on its own
// signals on the common time axis: transmit rate r, queue high-water q
// (max-queue-len), and the increases of out-discards, out-pkts and the
// queue's ECN-mark and trim counters. In bucket k a port is
//
//	backlogged  q ≥ BacklogBytes (16 KiB) and it marked, dropped or trimmed
//	capped      backlogged and r < Capacity (0.8) · line rate
//	lossy       drops ≥ 2 and drops ≥ Loss (0.5) · max(out-pkts, drops),
//	            unless backlogged at or above Capacity · line rate
//
// A run of consecutive capped buckets counts only if it holds a plateau:
// MinIntervals (4) consecutive buckets whose rates lie within PlateauTol
// (1%) of line rate of each other, or within two packets per interval if
// that is more. A degraded or shaped link serves its standing queue at one
// fixed rate; a healthy port at less than line rate is partly idle and its
// rate wanders. Flagged buckets separated by at most MergeGap (2) normal
// ones form an episode; a loss episode needs MinLostPackets (8). With OPS
// (oblivious spraying, every member of a port group offered the same load)
// a member whose queue stood above every sibling's and at least twice
// their median in at least half the group's active intervals (and at least
// 2·MinIntervals of them), carrying at most 10% more bytes than the
// median, is a queue culprit: it serves its share more slowly.
//
// The verdicts become culprits: both directions of one link (overlapping
// windows) are one culprit naming the link; a host's NIC and the switch
// port towards it are a host culprit of kind straggler, cause slow-nic;
// other ports are symmetry culprits of their group. Score is the sum over
// the flagged buckets of 1 − r/line (capacity), the share of packets lost
// (loss) or 1 − median sibling queue / queue (queue). Each anomaly lists
// its signals with the median of its group's other members over the same
// window (Baseline), its window (start of the first, end of the last
// flagged bucket) and its victims.
//
// # Victims
//
// A group member is starved when its mean over the group's active window
// is a low outlier: robust z = 0.6745·(x−m)/MAD' ≤ −SymZ (3.5), with m
// the median, MAD' the median absolute deviation floored at 1% of m, and
// (m−x)/m ≥ VictimDeviation (0.1). A starved member is a victim, never a
// culprit: it is listed under the culprit whose ports touch its switch
// (else the highest-scoring one). Hosts with a flow that may cross a
// culprit port (a shortest path through it) while the culprit was
// abnormal, or that send to or receive from a host culprit, are its
// victims too. A starved member with no culprit stays unnamed; its group
// shows as an imbalance.
//
// # Imbalance
//
// Load-balanced groups (leaf-uplinks, spine-uplinks, plane, planes,
// rails) that no
// anomaly touches and whose member means have a coefficient of variation
// of at least ImbalanceCV (0.15) are reported once, with CV, max/min and
// Jain's index (ECMP hash collisions are real imbalance, not culprits).
//
// # Stragglers
//
// Jobs with at least 3 participants are checked, except incast (whose
// senders share one receiver link and so all run at a fraction of line
// rate). A job's window runs from its first flow start to its last flow end,
// or to the last sample when a flow did not finish. For each participant,
// the sample intervals lying entirely inside the window give its NIC
// transmit rate as a fraction of the NIC line rate (all NICs of the host
// summed), counted in a histogram of 10 equal bands over [0, 1] (values
// above 1 fall in the last band). Its middle fraction is the share of
// samples in [StragLow, StragHigh) (default [0.1, 0.8)). Healthy
// participants of a collective are bimodal, at line rate or idle (Spectrum-X
// paper §5.2); a host stuck in between is throttled. A participant with at
// least MinStragglerSamples samples is a candidate when
//
//	middle ≥ StragMinMiddle (0.5)  and  middle − median participant's middle ≥ 0.25
//
// (the median over participants with enough samples; at least 3 are
// needed), and that margin is at least two samples (one sample more in
// the middle bands is chance in a short job). A candidate that is a victim of a culprit or of a pause tree,
// a host culprit itself, or whose flows may cross a hot port (backlogged
// at line rate in MinIntervals intervals: oversubscribed, e.g. by ECMP
// collisions; or hot in half of its middle-band intervals, see "Routing
// and hot ports") is not reported; the others are straggler anomalies
// with cause throttle, score the middle fraction.
//
// # Congestion spreading (PFC)
//
// On a lossless fabric a port paused by its peer holds its queue without
// sending: its paused time (pfc-paused-ns) is taken off its backlogged
// time before the service-rate bound, and the OPS queue test skips the
// intervals in which it was paused, so a paused port is not a capacity
// culprit. The pause trees (pfc.go) are built per interval: a switch that
// made a neighbour pause holds a root when some egress port of it filled
// on its own (queue ≥ BacklogBytes and ≥ a quarter of the switch's largest
// egress queue, itself paused for less than 5% of the interval); one
// breadth-first walk from every root follows the pauses upstream, a
// switch joining the first tree that reaches it and a paused port or host
// NIC the tree of the switch that paused it. A root switch's intervals
// form episodes (gaps up to MergeGap), one tree each. A tree whose root
// ports include a culprit's is that culprit's: its paused ports and the
// hosts it slowed are the culprit's victims. The others are informational
// (results.CongestionTree, cause incast or hot-port); the hosts any tree
// slowed are not stragglers. Metrics: congestion_trees (informational),
// congestion_spread (largest ports+NICs paused), congestion_hops,
// pfc_pause_frames, pfc_paused_us. Input.NoPFC (a backend without PFC)
// ignores the counters and adds a note.
//
// # Routing and hot ports
//
// Which ports a flow may cross follows Input.Routing (routing.go):
// shortest paths on trees and Slim Fly minimal routing; on a Dragonfly
// minimal routing the paths with the fewest global hops, then the fewest
// local hops; on flat-router fabrics the non-minimal modes any path of at
// most twice the router diameter. A port is hot in
// an interval when it sent at Capacity or more of line rate with a
// standing, marked queue, or was held by PFC. A straggler candidate whose
// running flows may cross a hot port in at least half of its middle-band
// intervals is a victim of that congestion, not a straggler. On
// flat-router fabrics a global or local link hot in MinIntervals
// intervals makes an imbalance finding of its group with its hot members
// and victims (results.Imbalance Hot, Victims); those groups' CV alone
// makes none.
//
// # Found while the run goes
//
// Live analyses the telemetry window by window as it arrives: a window
// ends every LiveEvery intervals and is analysed, over the last
// DefaultLiveHorizon (32) intervals, with the culprit detector once every
// expected target has sent past its end, so its detections depend on the
// telemetry alone. An anomaly's DetectedUs is the end of the first window
// that reported it (matched by member, link or the link's ports),
// TimeToDetectUs that minus StartUs; a throttle straggler is detected at
// the end of its job's window. Without Input.Detections, Analyze replays
// the windows over Samples. Metric time_to_detect_max_us.
//
// # Ranking and faults
//
// Anomalies are ordered by score (then start time, then member) and
// numbered from 1. The injected fault events are grouped by suite fault
// ID; a fault matches the best-ranked anomaly whose member is one of its
// ports or its host (or whose link is the fault's link, or a host culprit
// whose NIC the fault hits) in a window overlapping the fault's, within two
// sample intervals.
//
// # Job results
//
// StartUs is the first flow start (−1 if none started). Each repetition's
// completion time runs from its first flow start to its last flow end;
// CompletionUs is the worst, and −1 (with RepetitionsUs −1 for the
// repetition) when any flow of a repetition did not finish: then AlgBW and
// BusBW are 0. FCT and slowdown (FCT / Ideal, skipped when Ideal is nil)
// quantiles are nearest-rank over the finished flows. Bandwidths follow the
// nccl-tests conventions with t the worst repetition time, S the job's size
// and n its participants:
//
//	permutation  algbw = S/t                busbw = algbw
//	incast       algbw = senders·S/t        busbw = algbw   (receiver goodput)
//	all-to-all   algbw = n·S/t              busbw = algbw·(n−1)/n
//	all-reduce   algbw = S/t                busbw = algbw·2(n−1)/n
//
// P01PairBW is the 1st percentile (nearest rank) over finished flows of
// (size·8/FCT) / min(line rate of the source and destination NICs).
//
// # Plots and metrics
//
// Plots hold a GroupSeries per group (Anomalous: the culprits of that
// group), a NICHist per participant of every straggler-checked job, an
// FCTSeries per job and, in TimeSeries, for every anomaly of a group and
// every group member a fault description names
// ("leaf0:Ethernet4", a node name or a link "leaf0-spine1"), the member's
// bandwidth and its group's median, on a panel named after the group.
// Series longer than MaxPlotPoints are averaged over consecutive intervals;
// values are Gb/s rounded to 3 decimals, NoData (−1) where no sample
// exists.
//
// Output.Metrics: anomalies, symmetry_anomalies (culprits of kind
// symmetry), stragglers (of kind straggler), unmatched_faults,
// imbalanced_groups, max_group_cv and min_group_jain (over active groups
// with at least 3 members), active_groups, telemetry_coverage
// (fraction of switch ports with samples), and drops, trims and ecn_marked:
// the summed increases, over all switch targets, of the interface
// out-discards counters and of the queue trim-pkts and ecn-marked-pkts
// counters. A multi-plane fabric adds plane_share_min (the least-loaded
// plane's share of the planes group's load times the number of planes: 1
// when the planes share equally) and plane_cv (the planes' CV, plane
// symmetry).
package analysis
