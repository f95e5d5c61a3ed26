// Package runspec holds what one run is: the RunSpec the planner resolves
// a suite's matrix point into (or the simulator CLI builds from its
// flags), with its switch features, transport, jobs, faults, path
// controller and KPIs, all typed; and the workload its jobs expand into.
// Backends get their parts (Features, Transport, Fault, Workload); the
// harness runs it in stages.
package runspec

import (
	"time"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/harness/suite"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/kpis"
)

// RunSpec is one planned run: a matrix point of a suite resolved against
// its fabric (Resolve), or what fabricbench sim builds from its flags,
// with its quantities typed (ps, bytes, bit/s) and its transport settings
// parsed (TransportParams). Validate checks the rules between its fields.
type RunSpec struct {
	ID string
	// Params are the point's matrix values (suite.Point.Params).
	Params    map[string]string
	Suite     *suite.Suite
	Fabric    *inventory.Fabric
	Features  Features
	Transport Transport
	// TransportParams are the transport's typed parameters
	// (Transport.Params, resolved and checked when the run is planned).
	TransportParams transport.Params
	Interval        time.Duration
	Paths           []string
	// Controller is the path controller of the run (nil: none).
	Controller *ControllerSpec
	// NoTelemetry runs without gNMI telemetry (telemetry.enabled: false).
	NoTelemetry bool
	Jobs        []Job
	Faults      []Fault
	KPIs        []kpis.Spec
	// Test is the suite test the point belongs to (nil: a suite without
	// tests). NotApplicable, when set, says why the backend cannot run
	// the point (tests.go): it is reported, not run.
	Test          *suite.Test
	NotApplicable []string
}

// ControllerSpec is a run's path controller (suite controller), times in
// ns; zero thresholds take pathctl's defaults.
type ControllerSpec struct {
	Kind               string
	Interval, HoldDown int64
	Rate               float64
	Queue              int64
	Trigger, Clear     int
}

// Features are the switch features of a run.
type Features struct {
	ECMPHash   []string
	ECN        bool
	KMin, KMax float64
	Trimming   bool
	QueueBytes int64 // 0: one BDP
	// QueueLongestPath is features.queue: longest-path (Spritz Sec. V-A,
	// sim.LongestPathSizing): queues of one BDP of the fabric's longest
	// source-guided path and every flow's window sized on that path.
	QueueLongestPath bool
	PFC              bool
	// PFCPriorities are features.pfc.priorities: on hardware, lossless
	// besides the agents' own class (the simulator's data class is
	// lossless whatever they are).
	PFCPriorities []int
	SRv6          bool
	// SRv6Paths pin the flows of host pairs to explicit switch sequences
	// (SRv6 micro-SID path placement).
	SRv6Paths []SRv6Path
	// SRv6Placement is the path controller (suite.SRv6PlacementDisjoint,
	// or "" for none) and SRv6Elephant its flow-size threshold in bytes.
	SRv6Placement string
	SRv6Elephant  int64
	// VRFs are the routing instances hosts belong to (features.vrfs);
	// hosts no VRF lists are in the default VRF.
	VRFs []VRF
	// Adaptive: switch adaptive routing (features.ecmp.mode: adaptive)
	// with its staleness (ps), depth quantum (bytes, 0: one packet) and
	// capacity weighting.
	Adaptive bool
	// LowDiameter is a dragonfly/slimfly routing mode (features.ecmp.mode
	// minimal, valiant, ugal-l, ugal-g or source-guided), "" for none.
	LowDiameter string
	ARStaleness int64
	ARQuantum   int64
	ARWeighted  bool
	// Simulator only: stop at this simulated time (0: when the jobs are
	// done) and the ECMP reconvergence delay after link changes.
	SimEnd, Reconverge int64
	// StallAfter ends a simulation without progress for this long (0:
	// the simulator's default, -1: never; sim.Config.StallAfter).
	StallAfter int64
	// Flowlet: switch flowlet load balancing (features.ecmp.mode flowlet)
	// with its gap (ps, 0: the default).
	Flowlet    bool
	FlowletGap int64
	// PFCWatchdogDetect and PFCWatchdogRestore (ps) run the PFC watchdog
	// (features.pfc.watchdog); 0: none.
	PFCWatchdogDetect, PFCWatchdogRestore int64
}

// SRv6Path pins the flows from host Src to host Dst (host numbers)
// through the switches Via (node IDs), in order.
type SRv6Path struct {
	Name     string
	Src, Dst int
	Via      []int
	Job      string // only that job's flows ("": every flow of the pair, both ways)
	Strict   bool   // each listed switch adjacent to the previous hop
}

// VRF is one routing instance of a run (features.vrfs): its hosts (host
// numbers) and the VRFs whose routes it leaks, both ways ("default" is
// the VRF of the hosts no VRF lists).
type VRF struct {
	Name  string
	Table int
	Hosts []int
	Leak  []string
}

// Transport configures the endpoint agents.
type Transport struct {
	CC, LB       string
	Planes       string // plane load balancing of multi-plane hosts: plb, global, entropy ("": plb)
	MTU          int
	QuickAdapt   *bool
	FastIncrease *bool
	// EntropyRun: packets per load-balancing choice (0: each packet).
	EntropyRun int
	Seed       uint64
	// Launcher starts the agents: LauncherSSH ("" too) or LauncherSrun.
	Launcher string
}

// Agent launchers (Transport.Launcher, the suite's agents.launcher).
const (
	LauncherSSH  = "ssh"
	LauncherSrun = "srun"
)

// Params returns the transport parameters of t over the defaults both
// the simulator and the agents start from.
func (t Transport) Params() (transport.Params, error) {
	p := transport.DefaultParams()
	var err error
	if p.CC, err = transport.ParseCC(t.CC); err != nil {
		return p, err
	}
	if p.LB, err = transport.ParseLB(t.LB); err != nil {
		return p, err
	}
	if t.Planes != "" {
		if p.PlaneMode, err = transport.ParsePlaneMode(t.Planes); err != nil {
			return p, err
		}
	}
	if t.MTU > 0 {
		p.MTU = t.MTU
	}
	if t.QuickAdapt != nil {
		p.QuickAdapt = *t.QuickAdapt
	}
	if t.FastIncrease != nil {
		p.FastIncrease = *t.FastIncrease
	}
	p.EntropyRun = t.EntropyRun
	p.Seed = t.Seed
	return p, nil
}

// Fault is one fault event, in time relative to the start of the jobs.
type Fault struct {
	At        int64 // ps
	Link      int   // inventory link ID
	Up        bool
	Fraction  float64 // > 0: degrade to this fraction of the rate (Up)
	Direction int     // 0 both; 1 transmit side of the link's A port; 2 of B
	// Description names the fault for reports, e.g.
	// "degrade leaf0:Ethernet4 to 50%".
	Description string
	// ID names the suite fault entry ("F1" for faults[0]); Kind is down,
	// up, degrade, restore, flap-down or flap-up; Ports are the transmit
	// sides hit ("device:port"); Host is set for a nic fault.
	ID, Kind string
	Ports    []string
	Host     string
}
