// Package results is the stored outcome of a suite run: results.json and the
// per-run plot data (runs/<id>/plots.json) that reports are rendered from.
// fabricbench report DIR reads only these files.
package results

import "time"

// Schema is the value of Results.Schema for this version of the format.
const Schema = "fabricbench.results/v1"

// Verdicts and statuses.
const (
	Pass        = "pass"
	Fail        = "fail"
	Error       = "error"       // the KPI or run could not be evaluated (infrastructure, bad data)
	Interrupted = "interrupted" // the run was stopped (Ctrl-C) before it finished
	Skipped     = "skipped"     // never started because the suite was stopped earlier; a KPI: not evaluated
	// NotApplicable is a run of a test the backend cannot do (Run.Error
	// says why; the plan said so before anything ran), or a point of a
	// binary search that the search did not need. It does not change the
	// suite's status.
	NotApplicable = "n/a"
)

// Outcomes of a binary-search probe (Run.Search).
const (
	SearchPass  = "pass"
	SearchAbove = "above-limit"
	SearchFail  = "fail"
)

// Exit statuses of fabricbench (ExitStatuses documents them).
const (
	ExitOK       = 0 // success: every KPI and check passed
	ExitFail     = 1 // a KPI or bring-up check failed
	ExitBadInput = 2 // bad input: suite, fabric, topology, flags, a feature the backend cannot do
	// ExitInfrastructure is an infrastructure failure: the backend, the
	// lab host, an agent, telemetry, InfluxDB or the results directory
	// failed, not the input.
	ExitInfrastructure = 3
	ExitInterrupted    = 130 // stopped by Ctrl-C or SIGTERM (128+SIGINT); what was collected is kept
)

// ExitStatus is one documented exit status.
type ExitStatus struct {
	Code    int
	Meaning string
}

// ExitStatuses are fabricbench's exit statuses, as the README, the --help
// texts and docs/results-schema.md list them.
var ExitStatuses = []ExitStatus{
	{ExitOK, "success (every KPI passed)"},
	{ExitFail, "a KPI or bring-up check failed"},
	{ExitBadInput, "bad input (suite, fabric, topology, flags, a feature the backend cannot do)"},
	{ExitInfrastructure, "infrastructure error (the backend, lab, agents, telemetry, InfluxDB or results directory failed)"},
	{ExitInterrupted, "interrupted (Ctrl-C; results so far are kept)"},
}

// Why a run has status error (Run.ErrorKind).
const (
	ErrorInput          = "input"          // the suite asks for something that cannot be run
	ErrorInfrastructure = "infrastructure" // the backend, lab, agents, telemetry or InfluxDB failed
)

// Anomaly kinds.
const (
	KindSymmetry  = "symmetry"
	KindStraggler = "straggler"
)

// Results is results.json.
type Results struct {
	Schema    string    `json:"schema"`
	Suite     string    `json:"suite"`      // suite name
	SuiteFile string    `json:"suite_file"` // as given on the command line
	Backend   string    `json:"backend"`
	Started   time.Time `json:"started"`
	Finished  time.Time `json:"finished"`
	// Status is pass (every KPI passed), fail (a KPI failed), error (a run
	// could not complete) or interrupted.
	Status  string  `json:"status"`
	Summary Summary `json:"summary"`
	Runs    []Run   `json:"runs"`
	// Tests describe the suite's tests (a suite with a tests section):
	// each run of a test names it in Run.Test.
	Tests []Test `json:"tests,omitempty"`
	// DUT identifies the device under test and Topology the test
	// topology (the first run's fabric), for methodology reports (IETF
	// BMWG AI-fabric draft, reporting format).
	DUT      *DUT      `json:"dut,omitempty"`
	Topology *Topology `json:"topology,omitempty"`
}

// Topology describes a fabric for reports: its tiers of nodes, top
// first, and its links grouped by the tiers they join.
type Topology struct {
	Description string      `json:"description"`
	Tiers       []TopoTier  `json:"tiers"`
	Links       []TopoLinks `json:"links"`
	Planes      int         `json:"planes,omitempty"`
}

// TopoTier is one tier of nodes (hosts, leaves, spines, cores).
type TopoTier struct {
	Role  string   `json:"role"`
	Nodes []string `json:"nodes"`
}

// TopoLinks counts the links between two roles at one rate.
type TopoLinks struct {
	From  string  `json:"from"`
	To    string  `json:"to"`
	Count int     `json:"count"`
	Gbps  float64 `json:"gbps"`
}

// Test is one test of a suite's tests section, as reports need it.
type Test struct {
	Name    string `json:"name"`
	Section string `json:"section,omitempty"`
	Title   string `json:"title,omitempty"`
	// PrimaryMetric and PrimaryScope name the test's primary metric (the
	// repeatability statement's).
	PrimaryMetric string `json:"primary_metric,omitempty"`
	PrimaryScope  string `json:"primary_scope,omitempty"`
	// SearchKey is the matrix key a binary-search test searches over, its
	// values in SearchValues (the test's points in that order); Found is
	// the largest value at which the test passed ("" when none did or the
	// search did not finish).
	SearchKey    string   `json:"search_key,omitempty"`
	SearchValues []string `json:"search_values,omitempty"`
	Found        string   `json:"found,omitempty"`
	// FoundBy is, for a search swept over other keys too, the value found
	// per combination of their values ("seed=2": "60%").
	FoundBy map[string]string `json:"found_by,omitempty"`
	// ReferenceKey and ReferenceValue name the point the others are
	// compared with.
	ReferenceKey   string `json:"reference_key,omitempty"`
	ReferenceValue string `json:"reference_value,omitempty"`
	// Needs are what the test needs beyond its fields.
	Needs []string `json:"needs,omitempty"`
	// Leak is the resource trend of a test with leak_check.
	Leak *LeakTrend `json:"leak,omitempty"`
}

// Resources are the harness process's resources after a run (garbage
// collected): goroutines, open file descriptors (-1: unknown), heap in use.
type Resources struct {
	Goroutines int    `json:"goroutines"`
	FDs        int    `json:"fds"`
	HeapBytes  uint64 `json:"heap_bytes"`
}

// LeakTrend is the growth of the harness's resources over a test's runs
// (least-squares slopes per run, the first run left out as warm-up) and
// its verdict: fail when a slope exceeds its limit.
type LeakTrend struct {
	Runs             int     `json:"runs"`
	GoroutinesPerRun float64 `json:"goroutines_per_run"`
	FDsPerRun        float64 `json:"fds_per_run"`
	HeapMiBPerRun    float64 `json:"heap_mib_per_run"`
	Verdict          string  `json:"verdict"`
	Message          string  `json:"message,omitempty"`
}

// Summary counts over all runs.
type Summary struct {
	Runs      int `json:"runs"`
	KPIs      int `json:"kpis"`
	Passed    int `json:"passed"`
	Failed    int `json:"failed"`
	Errors    int `json:"errors"`
	Skipped   int `json:"skipped,omitempty"` // KPIs not evaluated: the run was interrupted before their job finished
	Anomalies int `json:"anomalies"`
	// RunsErrored, RunsInterrupted and RunsSkipped count runs by status
	// (the others finished: pass or fail).
	RunsErrored     int `json:"runs_errored,omitempty"`
	RunsInterrupted int `json:"runs_interrupted,omitempty"`
	RunsSkipped     int `json:"runs_skipped,omitempty"`
	// RunsNotApplicable counts runs of tests the backend cannot do and
	// points a binary search did not need (status n/a).
	RunsNotApplicable int `json:"runs_not_applicable,omitempty"`
	// Checks and ChecksFailed count bring-up checks, Causes the causes
	// the failed ones are grouped into.
	Checks       int `json:"checks,omitempty"`
	ChecksFailed int `json:"checks_failed,omitempty"`
	Causes       int `json:"causes,omitempty"`
}

// Run is one point of the suite's matrix.
type Run struct {
	ID string `json:"id"` // directory name under runs/
	// Test is the test of the suite's tests section the run belongs to.
	Test string `json:"test,omitempty"`
	// Search is, for a probe of a binary-search test, its outcome:
	// SearchPass, SearchAbove (failed above the value the search found:
	// the answer, not a failure of the suite) or SearchFail (failed with
	// nothing passing below it: the suite fails).
	Search string `json:"search,omitempty"`
	// Params are the matrix values of this point, e.g. {"transport.lb": "reps"}.
	Params map[string]string `json:"params,omitempty"`
	Seed   uint64            `json:"seed"`
	Status string            `json:"status"`
	Error  string            `json:"error,omitempty"`
	// ErrorKind says why a run has status error: ErrorInput or
	// ErrorInfrastructure (empty: a KPI could not be evaluated).
	ErrorKind string `json:"error_kind,omitempty"`
	Fabric    string `json:"fabric"` // a one-line description
	// Config echoes the effective settings (cc, lb, trimming, ecn, ...).
	Config   map[string]string `json:"config,omitempty"`
	SimEndUs float64           `json:"sim_end_us"`
	WallS    float64           `json:"wall_s"`
	Packets  Packets           `json:"packets"`
	Jobs     []Job             `json:"jobs"`
	KPIs     []KPI             `json:"kpis"`
	// Anomalies are the culprits found, ranked: Anomalies[i].Rank == i+1.
	Anomalies []Anomaly `json:"anomalies"`
	// Imbalances are group-level findings: symmetry groups whose members'
	// loads spread more than a healthy group's (ECMP hash collisions),
	// without a member that a congestion signal singles out.
	Imbalances []Imbalance `json:"imbalances"`
	// CongestionTrees are the PFC pause trees of a lossless fabric: where
	// pause frames spread from a congested port (the root) upstream. A
	// tree rooted at an anomaly (a slow NIC, a degraded link) lists that
	// anomaly's rank; the others are informational (a healthy incast: a
	// property of the workload, not a fault) and are not anomalies.
	CongestionTrees []CongestionTree `json:"congestion_trees,omitempty"`
	// Notes say what the analysis could and could not see on this backend
	// (e.g. no PFC counters on the netns lab).
	AnalysisNotes []string `json:"analysis_notes,omitempty"`
	// Faults are the injected fault events, in time order: those at or
	// before the end of the run. Events planned for later (a flap that
	// outlasts the run, a fault after the jobs ended) never happened and
	// are not listed; FaultsNotReached counts them.
	Faults           []Fault `json:"faults,omitempty"`
	FaultsNotReached int     `json:"faults_not_reached,omitempty"`
	// FaultMatches tie each injected fault (one per suite fault entry) to
	// the anomaly that explains it.
	FaultMatches []FaultMatch `json:"fault_matches,omitempty"`
	Telemetry    Telemetry    `json:"telemetry"`
	// Files are paths relative to the results directory.
	Files map[string]string `json:"files,omitempty"` // e.g. "telemetry": "runs/r1/telemetry.csv"
	// Bringup holds the checks of a bring-up validation run.
	Bringup *Bringup `json:"bringup,omitempty"`
	// Controller is what a path controller (suite controller) did.
	Controller *Controller `json:"controller,omitempty"`
	// Resources are the harness's resources after the run (a test with
	// leak_check).
	Resources *Resources `json:"resources,omitempty"`
	// Metrics are the run's fabric metrics (kpis.Metrics of scope fabric
	// that the run computed: telemetry-derived and the backend's
	// counters), for reports that compute KPIs the suite did not bound.
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// ECNProfile is the ECN marking profile of the run's switch queues
	// (the simulator with ECN on): marking decisions by queue depth.
	ECNProfile *ECNProfile `json:"ecn_profile,omitempty"`
	// DUT identifies the device under test (the backend's description of
	// the fabric's devices), when the backend gives one.
	DUT *DUT `json:"dut,omitempty"`
}

// ECNProfile is an ECN marking profile: Seen[i] data packets left their
// queue i*BucketBytes to (i+1)*BucketBytes deep when dequeued, Marked[i] of
// them were marked; KMinBytes and KMaxBytes are the configured thresholds.
type ECNProfile struct {
	BucketBytes int64    `json:"bucket_bytes"`
	KMinBytes   int64    `json:"kmin_bytes"`
	KMaxBytes   int64    `json:"kmax_bytes"`
	Seen        []uint64 `json:"seen"`
	Marked      []uint64 `json:"marked"`
}

// DUT identifies the device under test, as far as the backend knows it
// (IETF BMWG AI-fabric draft, DUT identification).
type DUT struct {
	// Kind is what the fabric is: "simulated", "lab" or "hardware".
	Kind string `json:"kind"`
	// Description says what stands in for the switches (e.g. the
	// simulator's model, or the lab's FRR and kernel).
	Description string `json:"description,omitempty"`
	// BufferModel describes the switches' buffers.
	BufferModel string      `json:"buffer_model,omitempty"`
	Devices     []DUTDevice `json:"devices,omitempty"`
	// Host describes the hosts' NICs and transport.
	Host string `json:"host,omitempty"`
}

// DUTDevice is one switch (or host) of the DUT.
type DUTDevice struct {
	Name      string `json:"name"`
	Role      string `json:"role,omitempty"`
	Platform  string `json:"platform,omitempty"`
	OSVersion string `json:"os_version,omitempty"`
	ASIC      string `json:"asic,omitempty"`
	PortSpeed string `json:"port_speed,omitempty"`
}

// Controller is a path controller's run: its settings and every decision.
type Controller struct {
	Kind       string  `json:"kind"`
	IntervalUs float64 `json:"interval_us"`
	HoldDownUs float64 `json:"hold_down_us"`
	// Paths is how many pinned paths it manages (can move).
	Paths     int        `json:"paths"`
	Decisions []Decision `json:"decisions"`
}

// Decision is one re-steered path: when (the telemetry sample it was
// decided on, µs from the start of the jobs), which path and pair, the
// switches before and after, and the links' state that decided it.
type Decision struct {
	AtUs float64 `json:"at_us"`
	// AppliedAtUs is when the backend had made the move (the simulator:
	// at_us; a lab: when the hosts' routes were replaced); absent when it
	// never was.
	AppliedAtUs float64        `json:"applied_at_us,omitempty"`
	Path        string         `json:"path"`
	Src         string         `json:"src"`
	Dst         string         `json:"dst"`
	From        []string       `json:"from"`
	To          []string       `json:"to"`
	Evidence    []LinkEvidence `json:"evidence"`
	Error       string         `json:"error,omitempty"`
}

// LinkEvidence is one link of a path over the controller's last interval.
type LinkEvidence struct {
	Link       string  `json:"link"`
	State      string  `json:"state"` // degraded or clean
	RateBps    float64 `json:"rate_bps"`
	NominalBps float64 `json:"nominal_bps"`
	// BusyFrac is the backlogged fraction of the interval; -1 when the
	// telemetry has no backlogged time (the netns lab).
	BusyFrac    float64 `json:"busy_frac"`
	QueueHWM    int64   `json:"queue_hwm_bytes"`
	ECNMarks    uint64  `json:"ecn_marks"`
	Drops       uint64  `json:"drops"`
	Consecutive int     `json:"congested_intervals"`
}

// Bringup is the outcome of a bring-up validation: every check with the
// device it ran on and the evidence read back.
type Bringup struct {
	Lab      string  `json:"lab"`
	Topology string  `json:"topology,omitempty"`
	Runtime  string  `json:"runtime,omitempty"` // native, containerlab, hardware
	Checks   []Check `json:"checks"`
	// Causes group the failed checks: each cause is one thing that is
	// wrong (a link down, a miscabled port, a configuration that differs
	// from the intent, ...), its root check first, then the checks that
	// fail because of it (consequences). Every failed check belongs to at
	// least one cause.
	Causes []Cause `json:"causes,omitempty"`
}

// Cause is one root cause of failed bring-up checks.
type Cause struct {
	ID int `json:"id"` // 1-based
	// Kind (docs/results-schema.md): device, daemon, forwarding,
	// drop-route, link-down, cabling, mtu,
	// bgp-shutdown, bgp-remote-as, bgp-as, ecmp-config, address, srv6-sid,
	// gateway, bgp-missing, bgp-extra; for failures no root explains
	// bgp-session, adjacency, no-neighbour, routes, unreachable, mtu-path,
	// unexplained.
	Kind      string `json:"kind"`
	Device    string `json:"device"`
	Interface string `json:"interface,omitempty"`
	// Summary says what is wrong, naming the device and port, e.g.
	// "leaf0 eth3 reaches spine1:eth1, topology says spine0:eth1".
	Summary string `json:"summary"`
	// Checks are the indices (in Bringup.Checks) of the root check(s),
	// then of the consequences.
	Checks       []int `json:"checks"`
	Roots        int   `json:"roots"` // how many of Checks are roots
	Consequences int   `json:"consequences"`
}

// Check categories.
const (
	CheckDevice       = "device"       // the device answered
	CheckLinks        = "links"        // every link up at both ends
	CheckBGP          = "bgp"          // every BGP session established
	CheckECMP         = "ecmp"         // leaf ECMP width to remote host prefixes
	CheckSRv6         = "srv6"         // SRv6 SIDs installed
	CheckReachability = "reachability" // host-to-host pings
	CheckConfig       = "config"       // a configured feature read back
	CheckCabling      = "cabling"      // each port's neighbour is the one the topology says
	CheckMTU          = "mtu"          // link MTUs as intended; end-to-end at the lab's MTU
	CheckDrift        = "drift"        // running configuration as intended (ASNs, maximum-paths, addresses)
	CheckRouting      = "routing"      // adjacencies, routes to every host prefix
	CheckGateway      = "gateway"      // hosts route through their neighbours
)

// Check is one bring-up check.
type Check struct {
	Category string `json:"category"`
	Name     string `json:"name"`
	Device   string `json:"device"`
	// Interface is the port the check concerns, when it concerns one.
	Interface string `json:"interface,omitempty"`
	Verdict   string `json:"verdict"` // pass, fail, error
	Evidence  string `json:"evidence"`
	// Causes are the IDs of the causes a failed check belongs to.
	Causes []int `json:"causes,omitempty"`
}

// Packets are fabric-wide packet counters of a run.
type Packets struct {
	Sent          uint64 `json:"sent"`
	Retransmitted uint64 `json:"retransmitted"`
	Trimmed       uint64 `json:"trimmed"`
	Dropped       uint64 `json:"dropped"`
	ECNMarked     uint64 `json:"ecn_marked"`
}

// Fault is one injected fault event.
type Fault struct {
	AtUs        float64 `json:"at_us"`
	Description string  `json:"description"` // e.g. "degrade leaf0:Ethernet4 to 50%"
	// ID names the suite fault entry the event comes from: "F1" for
	// faults[0]; the events of a flap share it.
	ID string `json:"id,omitempty"`
	// Kind is down, up, degrade, restore, flap-down or flap-up.
	Kind string `json:"kind,omitempty"`
	// Ports are the transmit sides the event hits, "device:port": both
	// ports of a link or NIC fault, one port for a port fault.
	Ports []string `json:"ports,omitempty"`
	// Host is the host whose NIC a nic fault hits.
	Host string `json:"host,omitempty"`
}

// FaultMatch ties one injected fault (all events of one suite fault entry)
// to the anomaly that explains it.
type FaultMatch struct {
	ID          string   `json:"id"`          // "F1"
	Description string   `json:"description"` // e.g. "degrade leaf0:Ethernet5 to 50% at 200us"
	Ports       []string `json:"ports"`
	Host        string   `json:"host,omitempty"`
	StartUs     float64  `json:"start_us"`
	EndUs       float64  `json:"end_us"` // -1: never restored
	// Anomaly is the rank of the anomaly that explains the fault (its
	// culprit is one of Ports, Host or their link, in an overlapping
	// window), 0 when no anomaly does.
	Anomaly int `json:"anomaly"`
}

// Telemetry describes what was collected.
type Telemetry struct {
	IntervalUs float64 `json:"interval_us"`
	Targets    int     `json:"targets"`
	Samples    int64   `json:"samples"` // leaf values received over gNMI
	Store      string  `json:"store"`   // path of the embedded store file
	// RunTag is the value of the "run" column in the store and of the
	// "run" tag in InfluxDB: <suite>-<start time>/<run id>, unique per
	// invocation.
	RunTag string `json:"run_tag"`
	Influx string `json:"influx,omitempty"` // URL and bucket
	// InfluxStats describe the InfluxDB sink: points written, retried
	// (re-sent after a failure), failed (not written; saved to the spill
	// file) and failed write requests.
	InfluxStats *InfluxStats `json:"influx_stats,omitempty"`
	// Epoch is the timestamp (ns since the Unix epoch) of simulated time 0.
	EpochNs int64 `json:"epoch_ns"`
	// Unreachable maps each gNMI server (a device's own, hardware
	// backend) that could not be reached, refused the subscription or
	// failed during the run to why; its ports have no samples.
	Unreachable map[string]string `json:"unreachable,omitempty"`
}

// InfluxStats summarise the InfluxDB sink of a run.
type InfluxStats struct {
	Points    int64  `json:"points"`
	Written   int64  `json:"written"`
	Retried   int64  `json:"retried"`
	Failed    int64  `json:"failed"`
	Errors    int64  `json:"errors"`
	LastError string `json:"last_error,omitempty"`
	SpillFile string `json:"spill_file,omitempty"`
}

// Job is one job of a run (with all its repetitions).
type Job struct {
	Name        string  `json:"name"`
	Workload    string  `json:"workload"` // permutation, incast, all-to-all, all-reduce
	Hosts       int     `json:"hosts"`    // participants
	SizeBytes   int64   `json:"size_bytes"`
	Repetitions int     `json:"repetitions"`
	Flows       int     `json:"flows"`
	Completed   int     `json:"completed"`
	StartUs     float64 `json:"start_us"`
	// CompletionUs is the job (collective) completion time: from the first
	// flow start to the last flow end, per repetition; the worst one.
	CompletionUs  float64   `json:"completion_us"`
	RepetitionsUs []float64 `json:"repetitions_us,omitempty"`
	AlgBWGbps     float64   `json:"algbw_gbps"`
	BusBWGbps     float64   `json:"busbw_gbps"`
	FCTUs         Quantiles `json:"fct_us"`
	Slowdown      Quantiles `json:"slowdown"`
	P01PairBW     float64   `json:"p01_pair_bw"` // 1st-percentile pair bandwidth / line rate
	// JCTUs is the job completion time over every repetition: first flow
	// start to last flow end (gaps included); 0 when a flow did not
	// finish. GoodputGbps is the payload of every flow over it.
	JCTUs       float64 `json:"jct_us,omitempty"`
	GoodputGbps float64 `json:"goodput_gbps,omitempty"`
	// RooflineUs is the JCT of an ideal fabric (IETF BMWG draft, synthetic
	// JCT): every repetition at the nccl-tests bus bandwidth of the
	// slowest participant's line rate, plus the gaps (GapUs) between
	// repetitions.
	RooflineUs float64 `json:"roofline_us,omitempty"`
	GapUs      float64 `json:"gap_us,omitempty"`
	// BaselineJCTUs is the JCT of the job's baseline (the same shape run
	// alone), for its interference factor.
	BaselineJCTUs float64            `json:"baseline_jct_us,omitempty"`
	Packets       JobPackets         `json:"packets"`
	Extra         map[string]float64 `json:"extra,omitempty"`
}

// Quantiles of a distribution.
type Quantiles struct {
	Min float64 `json:"min"`
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// JobPackets are per-job transport counters.
type JobPackets struct {
	Retransmitted uint64 `json:"retransmitted"`
	Nacks         uint64 `json:"nacks"`
	Timeouts      uint64 `json:"timeouts"`
	// SpuriousRetransmits counts retransmitted packets whose original was
	// acknowledged after the resend: the timeout fired too early.
	SpuriousRetransmits uint64 `json:"spurious_retransmits"`
}

// KPI is one evaluated KPI.
type KPI struct {
	Name      string  `json:"name"`   // unique within the run, e.g. "perm.fct_slowdown_p99"
	Metric    string  `json:"metric"` // as in the suite
	Scope     string  `json:"scope"`  // job name, "fabric", a symmetry group kind...
	Op        string  `json:"op"`     // "<=", ">=", "<", ">", "=="
	Threshold float64 `json:"threshold"`
	Value     float64 `json:"value"`
	Unit      string  `json:"unit,omitempty"`
	Verdict   string  `json:"verdict"` // pass, fail, error
	Message   string  `json:"message,omitempty"`
	// Regress is the suite's regression tolerance for comparisons with
	// other runs ("5%", or an amount in Unit); empty: the default.
	Regress string `json:"regress,omitempty"`
}

// UnitSuffix is how a KPI unit reads after a number v in text meant for
// people: " µs" for "us", " packet" or " packets", " Gb/s"; nothing for the
// dimensionless units ratio, fraction and count (no "1 fraction").
func UnitSuffix(v float64, unit string) string {
	switch unit {
	case "", "ratio", "fraction", "count":
		return ""
	case "us":
		return " µs"
	case "packets":
		if v == 1 {
			return " packet"
		}
	}
	return " " + unit
}

// Anomaly causes: what the culprit's own signals showed.
const (
	CauseCapacity = "capacity" // transmitting below its line rate while its queue was backlogged
	CauseLoss     = "loss"     // dropping most of what it transmitted without a full queue (down, flapping)
	CauseSlowNIC  = "slow-nic" // a host whose own NIC or access link limits it
	CauseThrottle = "throttle" // a host NIC stuck between idle and line rate, no fabric culprit explains it
	CauseQueue    = "queue"    // queueing where its equally loaded siblings do not (spraying): serving its load more slowly
)

// Anomaly is one culprit: a port, link or host whose own signals show it
// limited traffic, with the members it slowed (its victims) under it.
type Anomaly struct {
	// Rank orders the anomalies of a run, 1 the most severe (highest
	// score, then earliest start).
	Rank  int    `json:"rank"`
	Kind  string `json:"kind"`  // symmetry (a fabric port or link) or straggler (a host)
	Group string `json:"group"` // e.g. "leaf-uplinks:leaf0" or "rail:leaf1" or "job:a2a"
	// Member is the culprit: "leaf0:Ethernet4" or a host name ("host7").
	Member string `json:"member"`
	// Link is set when both directions of a link are culprits: "leaf0-spine1".
	Link string `json:"link,omitempty"`
	// Cause is one of the Cause* constants.
	Cause string `json:"cause"`
	// Score is the severity in interval-equivalents: the sum, over the
	// sample intervals in which the culprit was abnormal, of the share of
	// its capacity lost (1 − rate/line rate, capacity and slow-nic) or of
	// the share of its packets lost (loss); for throttle the middle-band
	// fraction, for starved the shortfall from the group median.
	Score float64 `json:"score"`
	// StartUs and EndUs bound the window in which the culprit's signals
	// were abnormal, µs of run time (sample interval ends).
	StartUs float64 `json:"start_us"`
	EndUs   float64 `json:"end_us"`
	// Signals are the signals that decided, with the group's baseline.
	Signals []Signal `json:"signals"`
	// Victims are members and hosts slowed by this culprit.
	Victims []Victim `json:"victims,omitempty"`
	// Faults are the IDs of the injected faults this anomaly explains.
	Faults []string `json:"faults,omitempty"`
	// Evidence is a human-readable explanation with the numbers behind it.
	Evidence string `json:"evidence"`
	// Details are the same numbers, machine-readable.
	Details map[string]float64 `json:"details,omitempty"`
	// DetectedUs is when the analysis of the telemetry received so far
	// (one analysis per telemetry window while the run goes) first
	// confirmed the anomaly, µs of run time; TimeToDetectUs is DetectedUs
	// minus StartUs (the start of its first abnormal interval). Without a
	// window analysis (stragglers, judged once their job has ended), the
	// end of the job's window.
	DetectedUs     float64 `json:"detected_us"`
	TimeToDetectUs float64 `json:"time_to_detect_us"`
}

// Congestion tree causes (CongestionTree.Cause).
const (
	// TreeIncast: the root faces a host that more senders target than its
	// link carries (an incast receiver).
	TreeIncast = "incast"
	// TreeHotPort: the root is a fabric port at line rate whose load
	// exceeds it (oversubscription, hash collisions).
	TreeHotPort = "hot-port"
	// TreeAnomaly: the root is an anomaly (CongestionTree.Anomaly).
	TreeAnomaly = "anomaly"
)

// CongestionTree is one PFC pause tree: at its root a switch whose egress
// ports (one or more) filled while they were not themselves paused, so
// the switch sent pause frames upstream; the ports those frames paused (and the switches they
// made pause in turn) are its branches, the host NICs paused at the edge
// its leaves. The figures follow the IETF draft on benchmarking AI
// training fabrics (PFC pause count per second per port, pause duration,
// pause propagation hops).
type CongestionTree struct {
	// Root is the switch at the root, RootPorts its egress ports that
	// filled ("leaf3:Ethernet0"), RootHosts the hosts they face (incast
	// receivers).
	Root      string   `json:"root"`
	RootPorts []string `json:"root_ports"`
	RootHosts []string `json:"root_hosts,omitempty"`
	Cause     string   `json:"cause"` // incast, hot-port or anomaly
	// Anomaly is the rank of the anomaly at the root, 0 for an
	// informational tree.
	Anomaly int     `json:"anomaly,omitempty"`
	StartUs float64 `json:"start_us"`
	EndUs   float64 `json:"end_us"`
	// Hops is how far the pauses spread from the root (1: only the root
	// switch's neighbours were paused).
	Hops int `json:"hops"`
	// Switches counts the switches that sent pause frames for the tree.
	Switches    int `json:"switches"`
	PortsPaused int `json:"ports_paused"` // switch egress ports paused
	HostsPaused int `json:"hosts_paused"` // host NICs paused
	// PausedUs is the paused time summed over the paused ports, µs.
	PausedUs float64 `json:"paused_us"`
	// PauseFrames counts the pause frames sent for the tree.
	PauseFrames float64 `json:"pause_frames"`
	// MaxPauseRate is the busiest paused port's pause frames per second
	// over the tree's window.
	MaxPauseRate float64 `json:"max_pause_rate"`
	// Ports are the paused ports, nearest the root first (at most 50;
	// PortsPaused counts them all).
	Ports []PausedPort `json:"ports"`
	// Victims are the hosts the tree slowed: NICs paused, or flows that
	// crossed a paused port in its window (at most 50).
	Victims  []string `json:"victims,omitempty"`
	Evidence string   `json:"evidence"`
}

// PausedPort is one port of a congestion tree.
type PausedPort struct {
	Port string `json:"port"` // "spine0:Ethernet3", or a host NIC "host1:eth0"
	Hop  int    `json:"hop"`
	// PausedUs is the time its egress was paused (0 for a host NIC: hosts
	// stream no PFC counters; PauseFrames are then the frames its leaf sent).
	PausedUs    float64 `json:"paused_us"`
	PauseFrames float64 `json:"pause_frames"`
	// PauseRate is PauseFrames per second over the tree's window.
	PauseRate float64 `json:"pause_rate"`
}

// Signal is one telemetry signal of a culprit over its window, next to the
// median of its symmetry group's other members (Baseline, -1 when none).
type Signal struct {
	Name     string  `json:"name"` // rate_util, backlog_util, queue_bytes, loss, ecn_marks, drops, trims, bytes_share
	Value    float64 `json:"value"`
	Baseline float64 `json:"baseline"`
	Unit     string  `json:"unit,omitempty"`
}

// Victim is a member or host slowed by a culprit.
type Victim struct {
	Member string `json:"member"` // "spine0" (a plane), "leaf1:Ethernet4", "host3"
	Group  string `json:"group"`  // symmetry group, or "job:NAME" for a host
	// Why: "low bytes (−23%) with an empty queue", "flows cross the culprit", ...
	Why string `json:"why"`
}

// Imbalance is a group-level finding: a symmetry group whose members'
// loads spread more than the thresholds allow (typically ECMP hash
// collisions), reported once per group instead of once per member.
type Imbalance struct {
	Group   string  `json:"group"`
	Kind    string  `json:"kind"`
	Members int     `json:"members"`
	CV      float64 `json:"cv"`      // coefficient of variation of member loads
	MaxMin  float64 `json:"max_min"` // max/min member load, 0 when a member carried nothing
	Jain    float64 `json:"jain"`    // Jain fairness index, 1/n..1
	// MaxMember and MinMember name the most and least loaded members.
	MaxMember string `json:"max_member,omitempty"`
	MinMember string `json:"min_member,omitempty"`
	// Hot are the members that ran hot (at line rate with a standing,
	// marked queue) in at least analysis.culprit.min_intervals intervals:
	// congestion the routing explains, not a fault. Victims are hosts
	// whose flows may have crossed a hot member while it was hot (at
	// most 50).
	Hot      []string `json:"hot,omitempty"`
	Victims  []string `json:"victims,omitempty"`
	Evidence string   `json:"evidence"`
}

// Plots is runs/<id>/plots.json: the analysed series the report draws.
type Plots struct {
	Run        string        `json:"run"`
	Faults     []Fault       `json:"faults,omitempty"`
	Groups     []GroupSeries `json:"groups"`
	NICHists   []NICHist     `json:"nic_hists"`
	FCTs       []FCTSeries   `json:"fcts"`
	TimeSeries []TimeSeries  `json:"time_series"`
}

// GroupSeries is the per-member bandwidth of a symmetry group over time.
type GroupSeries struct {
	Group     string      `json:"group"` // e.g. "leaf-uplinks:leaf0"
	Kind      string      `json:"kind"`  // leaf-uplinks, spine-downlinks, rail, plane...
	Members   []string    `json:"members"`
	TimesUs   []float64   `json:"times_us"` // interval end times
	Gbps      [][]float64 `json:"gbps"`     // [member][interval]
	Anomalous []string    `json:"anomalous,omitempty"`
}

// NICHist is a per-NIC histogram of bandwidth samples during a job, in bands
// of line rate (Edges has len(Counts)+1 entries, fractions 0..1).
type NICHist struct {
	Job       string    `json:"job"`
	Host      string    `json:"host"`
	Edges     []float64 `json:"edges"`
	Counts    []int     `json:"counts"`
	Straggler bool      `json:"straggler"`
}

// FCTSeries are the sorted flow completion times of a job, for CDFs.
type FCTSeries struct {
	Job   string    `json:"job"`
	FCTUs []float64 `json:"fct_us"`
}

// TimeSeries is one bandwidth line, e.g. a faulted port and its group mean.
type TimeSeries struct {
	Name    string    `json:"name"`
	Panel   string    `json:"panel"` // series with the same panel share a plot
	TimesUs []float64 `json:"times_us"`
	Gbps    []float64 `json:"gbps"`
}
