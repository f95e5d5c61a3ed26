package suite

import "github.com/fabricbench/fabricbench/inventory"

// Suite is a parsed suite file before matrix expansion.
//
// Load and Parse fill in the defaults documented on each field. String
// fields take their default when empty; numbers and booleans when the key is
// absent, so that an explicit 0 or false is kept (and validated).
type Suite struct {
	// Name defaults to the file's base name without its extension.
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Seed is the simulator/random seed (default 1).
	Seed uint64 `yaml:"seed"`
	// Preset names a setting (package preset): "smartt" is the SMaRTT
	// paper's (Sec. IV), "spritz" the Spritz paper's (Sec. V-A, on a
	// dragonfly spec only). It adds its link rate and latencies to
	// fabric.spec where the spec does not set them (a fabric.file is
	// refused) and sets features.ecn, features.trimming, features.queue,
	// transport.mtu (and, spritz, transport.cc) where the suite leaves
	// them out. Stored in
	// canonical form after Load; default none.
	Preset    string    `yaml:"preset"`
	Fabric    Fabric    `yaml:"fabric"`
	Features  Features  `yaml:"features"`
	Transport Transport `yaml:"transport"`
	Agents    Agents    `yaml:"agents"`
	Telemetry Telemetry `yaml:"telemetry"`
	Jobs      []Job     `yaml:"jobs"`
	Faults    []Fault   `yaml:"faults"`
	KPIs      []KPI     `yaml:"kpis"`
	Analysis  Analysis  `yaml:"analysis"`
	Sim       Sim       `yaml:"sim"`
	// Controller, when set, runs a path controller during the jobs.
	Controller *Controller `yaml:"controller"`
	// Bringup, when set, validates a lab before the first run; a failed
	// check stops the suite (its runs are skipped, exit status 1).
	Bringup *Bringup `yaml:"bringup"`
	// Baseline names the results the run is compared with at the end,
	// besides its absolute thresholds: a results directory, or
	// "latest-in DIR" for the newest results directory under DIR of the
	// same suite whose runs all finished and which did not itself regress
	// against its baseline. Paths are relative to the suite file; Load
	// makes them absolute. A regression fails the suite (exit status 1).
	Baseline string `yaml:"baseline"`
	// Matrix maps a field path (e.g. "transport.lb", "jobs[0].size",
	// "jobs[name=perm].size") to the values to sweep. Every combination is
	// one run (at most 256); see Points.
	Matrix map[string][]any `yaml:"matrix"`
	// Tests, when set, make the suite a set of tests (tests.go): each
	// test's points run the suite with the test's jobs, KPIs, faults,
	// settings and sweep. The suite's own jobs and KPIs then apply to
	// every test (and may be left out).
	Tests []Test `yaml:"tests"`

	// File is the path the suite was loaded from (set by Load).
	File string `yaml:"-"`
	// Test is, in a point of a suite with tests, the test it belongs to.
	Test *Test `yaml:"-"`

	// src is the document as read, for Points.
	src []byte
	// inventory replaces the fabric of every point (Options.Inventory).
	inventory string
	// fab is the fabric the checker loaded (nil when it did not load);
	// cache holds the fabrics the loader built, shared with Points.
	fab   *inventory.Fabric
	cache map[string]fabricResult
}

// Fabric is exactly one of Spec (a generator spec, e.g.
// "leafspine:leaves=4,spines=4,hosts_per_leaf=4,gbps=100"), File (an
// htsim .topo file, relative to the suite file) or Inventory (a hardware
// inventory, docs/inventory.md, relative to the suite file: the suite
// runs on those devices with the hardware backend). Load replaces File
// and Inventory with their absolute paths; Suite.LoadFabric builds any.
// `fabricbench run --inventory FILE` replaces the suite's fabric with
// the inventory's.
type Fabric struct {
	Spec      string `yaml:"spec"`
	File      string `yaml:"file"`
	Inventory string `yaml:"inventory"`
}

// Features are switch features. Backends honour what they model and reject
// the rest with an error naming the feature.
//
// A suite's quantities (durations, sizes, rates) decode into the types of
// quantity.go (Duration, Size, Elephant, Queue, Interval, StallAfter,
// Pace, WallTime, Tolerance) and its closed sets of words into those of
// enums.go, at their positions.
type Features struct {
	ECMP     ECMP     `yaml:"ecmp"`
	ECN      ECN      `yaml:"ecn"`
	Trimming Trimming `yaml:"trimming"`
	PFC      *PFC     `yaml:"pfc"`
	SRv6     *SRv6    `yaml:"srv6"`
	VRFs     []VRF    `yaml:"vrfs"`
	// QueueBytes is the per-port data queue size ("bdp", a size like
	// 512KiB, or longest-path: Spritz's sizing on a dragonfly/slimfly,
	// sim.LongestPathSizing; default bdp).
	Queue Queue `yaml:"queue"`
}

// ECMP selects the hash fields. Default: the 5-tuple.
type ECMP struct {
	// Hash lists fields from src-ip, dst-ip, src-port, dst-port, protocol,
	// flow-label; non-empty, no duplicates (default src-ip, dst-ip,
	// src-port, dst-port, protocol).
	Hash []HashField `yaml:"hash"`
	// Mode is hash (ECMP: the hash picks one port per flow; the default),
	// adaptive (switch adaptive routing: per packet, the equal-cost port
	// with the shortest queue; simulator only) or flowlet (switch dynamic
	// load balancing: per flowlet, the least-loaded port; simulator only),
	// or on dragonfly and
	// slimfly fabrics (simulator only) the low-diameter routing minimal,
	// valiant, ugal-l, ugal-g or source-guided (the sender's entropy picks
	// the first two hops; pair it with transport.lb spritz-spray,
	// spritz-scout, ops-w or flicr, which on hash and minimal run
	// coarse-grained, every entropy an equal-weight EV).
	Mode ECMPMode `yaml:"mode"`
	// Adaptive routing's knobs (mode adaptive only). Staleness: how old
	// the queue depths it decides on are (default 100ns; 0 live; at most
	// 1ms). Quantum: the queue-depth step it tells apart (default one
	// packet, i.e. 0; at most 16MiB). Weighted: weigh the choice by the
	// capacity left downstream after a link went down or degraded
	// (default false).
	Staleness Duration `yaml:"staleness"`
	Quantum   Size     `yaml:"quantum"`
	Weighted  bool     `yaml:"weighted"`
	// FlowletGap is mode flowlet's idle gap (switch dynamic load
	// balancing, simulator only: a flowlet keeps its port until its flow
	// pauses this long, then moves to the least-loaded one; default 50us,
	// 100ns..10ms).
	FlowletGap Duration `yaml:"flowlet_gap"`
}

// ECN configures RED/ECN marking on switch data queues.
type ECN struct {
	Enabled *bool   `yaml:"enabled"` // default: true where the backend can mark ECN (harness.PlanSuite)
	KMin    float64 `yaml:"kmin"`    // fraction of the queue (default 0.2); 0 <= kmin < kmax
	KMax    float64 `yaml:"kmax"`    // (default 0.8); kmax <= 1
}

// Trimming configures packet trimming on full queues.
type Trimming struct {
	Enabled *bool `yaml:"enabled"` // default: true where the backend can trim (harness.PlanSuite)
}

// PFC configures priority flow control.
type PFC struct {
	Enabled    bool  `yaml:"enabled"`
	Priorities []int `yaml:"priorities"` // 0..7, no duplicates
	// Watchdog, when set, runs the PFC watchdog (the simulator; SONiC
	// switches on an inventory, between 100 ms and 5 s): a
	// priority paused for Detect without a resume is a pause storm; its
	// queue is dropped and pause frames ignored for Restore.
	Watchdog *PFCWatchdog `yaml:"watchdog"`
}

// PFCWatchdog configures the PFC watchdog. Detect is required (10us to
// 10s); Restore defaults to Detect (at most 10s).
type PFCWatchdog struct {
	Detect  Duration `yaml:"detect"`
	Restore Duration `yaml:"restore"`
}

// SRv6 configures segment routing (micro-SID).
type SRv6 struct {
	Locator string `yaml:"locator"` // an IPv6 prefix, e.g. fcbb:bb00::/32
	USID    bool   `yaml:"usid"`
	// Paths pin host pairs to explicit switch sequences.
	Paths []SRv6Path `yaml:"paths"`
	// Placement is the path controller: "" or none (only Paths), or
	// disjoint: at job start, every flow of at least Elephant bytes not
	// pinned by Paths is placed on the spine whose links carry the fewest
	// elephants already placed (package pathctl). Simulator only.
	Placement Placement `yaml:"placement"`
	// Elephant is the placement's flow-size threshold (default 1MiB).
	Elephant Elephant `yaml:"elephant"`
}

// SRv6 placement controllers (SRv6.Placement).
const (
	SRv6PlacementNone     = "none"
	SRv6PlacementDisjoint = "disjoint"
)

// SRv6Path is one explicit path from host Src to host Dst through the
// switches Via (at least one). Names, when set, are unique.
type SRv6Path struct {
	Src  string   `yaml:"src"`
	Dst  string   `yaml:"dst"`
	Via  []string `yaml:"via"`
	Name string   `yaml:"name"`
	// Job, when set, limits the path to that job's flows (simulator only);
	// otherwise it pins every flow between the two hosts, and the reverse
	// direction through the reversed switches.
	Job string `yaml:"job"`
	// Strict requires each listed switch to be adjacent to the previous
	// hop (simulator only; the lab routes between listed switches).
	Strict bool `yaml:"strict"`
}

// VRF is one routing instance. Names are non-empty and unique (not
// "default": the hosts no VRF lists are in the default VRF), Table is
// positive and unique, Hosts are host names of the fabric, each in at most
// one VRF. Hosts of two VRFs reach each other only when one of them lists
// the other in Leak (route leaking, both ways); "default" names the
// default VRF there. A job with a flow between unreachable hosts is
// refused at plan time, naming the pair.
type VRF struct {
	Name  string   `yaml:"name"`
	Table int      `yaml:"table"`
	Hosts []string `yaml:"hosts"`
	Leak  []string `yaml:"leak"`
}

// Controller is a path controller that watches the run's gNMI telemetry
// and re-steers traffic while the jobs run (package pathctl).
type Controller struct {
	// Kind is srv6-reroute: the host pairs pinned by features.srv6.paths
	// (through one spine, not per job) move to another spine when a link
	// of their path congests; none: no controller. Required.
	Kind ControllerKind `yaml:"kind"`
	// Interval is how often it decides: a multiple of telemetry.interval
	// (default telemetry.interval), at most 10s.
	Interval Duration `yaml:"interval"`
	// HoldDown is how long a moved pair stays put (default 10 intervals;
	// at most 60s).
	HoldDown   Duration             `yaml:"hold_down"`
	Thresholds ControllerThresholds `yaml:"thresholds"`
}

// ControllerThresholds say when a link of a path is congested.
type ControllerThresholds struct {
	// Rate: a backlogged link that delivers under this fraction of its
	// nominal rate is congested (0 < rate <= 1; default 0.75).
	Rate float64 `yaml:"rate"`
	// Queue: the queue high-water that counts as backlogged where the
	// telemetry has no backlogged time (a size; default 64KiB).
	Queue Size `yaml:"queue"`
	// Trigger congested intervals in a row make a link degraded, Clear
	// clean ones make it usable again (1..1000; defaults 1 and 3).
	Trigger int `yaml:"trigger"`
	Clear   int `yaml:"clear"`
}

// Controller kinds: none runs without one (for a matrix that compares).
const (
	ControllerSRv6Reroute = "srv6-reroute"
	ControllerNone        = "none"
)

// DefaultVRF is the VRF of the hosts no features.vrfs entry lists.
const DefaultVRF = "default"

// Transport configures the endpoints.
type Transport struct {
	// CC, LB and Planes are stored in canonical form (transport.CCKind,
	// LBKind, PlaneMode String) when they are decoded.
	CC           CongestionControl `yaml:"cc"`  // nscc (default), dctcp
	LB           LoadBalancer      `yaml:"lb"`  // ecmp, ops, reps (default)
	MTU          int               `yaml:"mtu"` // payload bytes per packet, 256..9216 (default 4096)
	QuickAdapt   *bool             `yaml:"quick_adapt"`
	FastIncrease *bool             `yaml:"fast_increase"`
	// Planes is how multi-plane hosts (a fabric with planes=N) spread each
	// flow over their planes: plb (per-plane congestion control, the
	// default), global (one window over all planes) or entropy (entropy-
	// based source routing: the entropy picks the plane, one window).
	// Single-plane fabrics ignore it.
	Planes PlaneMode `yaml:"planes"`
	// EntropyRun makes the load balancer's choice hold for this many
	// consecutive packets of a flow (transport.Params.EntropyRun): the
	// agents send a run as one UDP GSO message. 0 or 1 (default): a
	// choice per packet. At most 1024.
	EntropyRun int `yaml:"entropy_run"`
}

// Agents says how the transport agents are started on the hosts.
type Agents struct {
	// Launcher is ssh (default: copied and started over SSH with the
	// inventory's credentials) or srun (one agent per host with `srun
	// --nodelist HOST` inside the Slurm allocation the run is in; the
	// hardware backend).
	Launcher Launcher `yaml:"launcher"`
}

// Agent launchers (Agents.Launcher).
const (
	LauncherSSH  = "ssh"
	LauncherSrun = "srun"
)

// Telemetry configures collection.
type Telemetry struct {
	// Enabled subscribes to gNMI telemetry (default true). false runs
	// the jobs without it, e.g. to measure what telemetry costs: no
	// telemetry.csv, and the KPIs computed from telemetry are skipped.
	Enabled *bool `yaml:"enabled"`
	// Interval is the gNMI sample interval, 100us to 10ms (default 100us),
	// or fastest: the backend's shortest (100us on the simulator, 1ms on
	// the labs), for suites that run on several backends.
	Interval Interval `yaml:"interval"`
	// Paths are the subscribed paths, each starting with "/" (default:
	// interface counters and queue state, see DefaultPaths).
	Paths []string `yaml:"paths"`
	Sink  Sink     `yaml:"sink"`
}

// IntervalFastest is the telemetry.interval that follows the backend.
const IntervalFastest = "fastest"

// Sink selects where samples go besides the embedded store (always written).
type Sink struct {
	Influx *Influx `yaml:"influx"`
}

// Influx is an InfluxDB v2 write endpoint (InfluxDB 1.8 accepts it with
// bucket "db/rp"). The token is read from TokenFile or the
// FABRICBENCH_INFLUX_TOKEN environment variable, never from the suite.
type Influx struct {
	URL    string `yaml:"url"`    // http:// or https:// (required)
	Bucket string `yaml:"bucket"` // required
	Org    string `yaml:"org"`
	// TokenFile is relative to the suite file; Load makes it absolute. Its
	// existence is checked when the run starts, not by Load.
	TokenFile string `yaml:"token_file"`
}

// Job is one workload. Fields that do not apply to the workload (Senders
// and Receiver outside incast, Window outside all-to-all) are errors.
type Job struct {
	// Name is required, unique and matches [A-Za-z0-9_.-]+.
	Name string `yaml:"name"`
	// Workload is permutation, incast, all-to-all, all-reduce (ring),
	// all-gather (ring), reduce-scatter (ring) or group-shift (each
	// participant to the one in the same position of the next group, the
	// adversarial pattern of low-diameter fabrics).
	Workload Workload `yaml:"workload"`
	// Size is the message size per flow (permutation, incast, all-to-all)
	// or, as nccl-tests counts it, the buffer size (all-reduce) or the
	// total size over all ranks (all-gather: the output, reduce-scatter:
	// the input), e.g. 2MiB. Required, positive.
	Size Size `yaml:"size"`
	// Hosts selects participants: "all" (default), a count N (the first N
	// hosts), or a list of host names. After Load it is the string "all",
	// an int or a []string; Participants resolves it.
	Hosts any `yaml:"hosts"`
	// Start is when the first repetition starts (default 0).
	Start Duration `yaml:"start"`
	// Repetitions run back to back (default 1, at most MaxRepetitions,
	// 10000); Gap separates them (default 0). All flows of a run are
	// built before it starts: every repetition of every job together has
	// at most MaxFlows (1048576) flows.
	Repetitions int      `yaml:"repetitions"`
	Gap         Duration `yaml:"gap"`
	// Senders is the incast fan-in (default, or 0: every other participant).
	Senders int `yaml:"senders"`
	// Receiver is the incast destination, a participant's host name
	// (default: the first participant).
	Receiver string `yaml:"receiver"`
	// Window is how many all-to-all flows a sender keeps outstanding
	// (default, or 0: all at once).
	Window int `yaml:"window"`
	// QPs splits every flow of a permutation or incast into this many
	// flows between the same hosts (queue pairs, each Size/QPs bytes and
	// its own ECMP entropy), 1 to 256 (default 1).
	QPs int `yaml:"qps"`
	// Rate paces every sender of the job: a share of its NIC's line rate
	// ("80%") or a bit rate ("40Gbps"), split evenly over its flows that
	// run at once (QPs). Default: unpaced (the congestion control sets the
	// rate). The offered load of a throughput search.
	Rate Pace `yaml:"rate"`
	// Baseline names another job of the suite: this job run with the same
	// shape while other traffic shares the fabric. Its interference factor
	// (KPI interference_factor) is its JCT over the baseline's.
	Baseline string `yaml:"baseline"`
}

// Fault is one fault. Kind is down, up, flap, degrade or random; exactly
// one of Link ("A-B", a link between two nodes, "/N" for the Nth parallel
// link), Port ("device:port", its transmit direction) or NIC (a host name:
// its link to the leaf, both directions) names what it hits, except for
// random: Fraction (0 < f <= 0.5) of the switch-to-switch links, chosen with
// the suite's seed, go down at At (up again at Until). Durations are
// written like "100us".
type Fault struct {
	Kind  FaultKind `yaml:"kind"`
	Link  string    `yaml:"link"`
	Port  string    `yaml:"port"`
	NIC   string    `yaml:"nic"`
	At    Duration  `yaml:"at"`    // default 0
	Until Duration  `yaml:"until"` // restore at this time, after At (default: never)
	// Fraction is the share of the rate a degraded link keeps, 0 < f <= 1
	// (degrade), or the share of the switch-to-switch links that fail,
	// 0 < f <= 0.5 (random); required there, an error elsewhere.
	Fraction float64 `yaml:"fraction"`
	// Flap: the link goes down at At, up Period/2 later, Count times.
	// Both are required for flap (Period > 0, 1 <= Count <= MaxFlapCount,
	// 10000) and errors elsewhere. Cycles after the run has ended never
	// happen and are not listed in the results.
	Period Duration `yaml:"period"`
	Count  int      `yaml:"count"`
}

// KPI is one check. Exactly one of Max or Min is set. Metric names are
// checked by the harness, not by Load.
type KPI struct {
	Name   string   `yaml:"name"` // default: Metric
	Metric string   `yaml:"metric"`
	Scope  string   `yaml:"scope"` // a job name or "fabric" (default)
	Max    *float64 `yaml:"max"`
	Min    *float64 `yaml:"min"`
	// Regress is how much worse the KPI may get than in the baseline
	// before it counts as a regression (fabricbench compare, Baseline):
	// a percentage of the baseline value ("5%") or an amount in the
	// metric's unit ("2"). Default: 5% for a KPI with min, 10% with max.
	Regress Tolerance `yaml:"regress"`
}

// Analysis tunes anomaly detection.
type Analysis struct {
	Symmetry  SymmetryOpts  `yaml:"symmetry"`
	Straggler StragglerOpts `yaml:"straggler"`
	Culprit   CulpritOpts   `yaml:"culprit"`
}

// CulpritOpts tune culprit detection: the per-interval tests on a port's
// own signals (package analysis documents them; the defaults come from the
// fault-localisation benchmark, harness/faultbench).
type CulpritOpts struct {
	// Backlog is the queue high-water that counts as backlogged (16KiB;
	// 1B..1GiB).
	Backlog Size `yaml:"backlog"`
	// Capacity: a backlogged port transmitting below this fraction of its
	// line rate is capped (0.8; 0 < capacity <= 1).
	Capacity float64 `yaml:"capacity"`
	// Loss: an interval in which a port drops at least this share of what
	// it transmits, without being backlogged at line rate, is lossy (0.5;
	// 0 < loss <= 1).
	Loss float64 `yaml:"loss"`
	// MinIntervals consecutive capped intervals on a rate plateau make a
	// capacity episode (4; 1..1000).
	MinIntervals int `yaml:"min_intervals"`
	// MinBoundIntervals intervals whose service-rate bound (a port that
	// streams backlogged-ns: bytes sent over time backlogged) is below
	// Capacity make a capacity episode (1; 1..1000). The bound is a
	// measurement, not a guess: no healthy port of the benchmark came
	// within 0.6% of line rate below it.
	MinBoundIntervals int `yaml:"min_bound_intervals"`
	// MinLostPackets lost in an episode make a loss episode (8; 1..1e9).
	MinLostPackets int `yaml:"min_lost_packets"`
	// MergeGap: normal intervals bridged inside one episode (2; 1..1000).
	MergeGap int `yaml:"merge_gap"`
}

// SymmetryOpts tune symmetry-group outliers.
type SymmetryOpts struct {
	// Z is the robust z-score above which a member is an outlier (3.5).
	Z float64 `yaml:"z"` // > 0
	// MinDeviation is the smallest relative shortfall from the group median
	// that counts (0.2).
	MinDeviation float64 `yaml:"min_deviation"` // 0 < d < 1
	// VictimDeviation is the smallest shortfall that makes a low member a
	// victim listed under a culprit (0.1; 0 < v < 1).
	VictimDeviation float64 `yaml:"victim_deviation"`
	// ImbalanceCV is the coefficient of variation of member loads above
	// which a load-balanced group (leaf or spine uplinks, planes) is
	// reported as imbalanced (0.15; 0 < cv <= 100).
	ImbalanceCV float64 `yaml:"imbalance_cv"`
}

// StragglerOpts tune straggler detection.
type StragglerOpts struct {
	// Low and High bound the middle bands, as fractions of line rate (0.1,
	// 0.8); 0 <= low < high <= 1.
	Low  float64 `yaml:"low"`
	High float64 `yaml:"high"`
	// MinMiddle is the fraction of active samples in the middle bands that
	// makes a straggler (0.5).
	MinMiddle float64 `yaml:"min_middle"` // 0 < m <= 1
}

// Sim holds simulator-only settings.
type Sim struct {
	End        Duration `yaml:"end"`        // stop at this simulated time, > 0 (default: when all flows finish, at most 1s)
	Reconverge Duration `yaml:"reconverge"` // ECMP recomputation delay after link changes
	// StallAfter ends the run when no flow has made progress for this
	// long of simulated time, > 0, at most 3600s (default: the larger of
	// 10ms and 100 path RTOs; "off": never).
	StallAfter StallAfter `yaml:"stall_after"`
}

// Bringup is the bring-up validation step of a suite.
type Bringup struct {
	// Topology is a containerlab topology file, relative to the suite.
	Topology string `yaml:"topology"`
	// Deploy brings the lab up before validating it; otherwise it must be
	// running already (fabricbench lab up).
	Deploy bool `yaml:"deploy"`
	// Runtime deploys it: auto (default: containerlab when it and Docker
	// are present, else native), containerlab or native.
	Runtime Runtime `yaml:"runtime"`
	// Teardown removes the lab after the suite (only with deploy).
	Teardown bool `yaml:"teardown"`
	// BGPWait keeps polling BGP sessions that are not established for this
	// long before failing them (e.g. "10s"; default 0).
	BGPWait WallTime `yaml:"bgp_wait"`
	// Converge re-validates while checks fail, for up to this long, so
	// that routing still converging is not reported as broken (e.g. "60s";
	// default 60s when the step deploys the lab, else 0; at most 10m).
	Converge WallTime `yaml:"converge"`
}
