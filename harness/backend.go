// Package harness plans a suite and runs each of its points through one
// Backend: bring the fabric up, configure it, deploy the transport agents,
// subscribe to its gNMI telemetry, inject faults, run the jobs, bring it
// down; then analyse what was collected, evaluate the KPIs and write the
// results directory.
//
// Backends (the simulator, a local FRR lab, containerlab, real hardware)
// implement Backend and register themselves with Register; the CLI imports
// the ones it ships.
package harness

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/harness/suite"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// Backend brings up and drives one fabric. The harness calls, in order: Up,
// Configure, DeployAgents, TelemetryTargets, InjectFaults, RunJobs, and
// always Down (also after an error or an interrupt). What a backend cannot
// do it declares (Capable), so that the planner refuses it before anything
// is brought up; an error from these methods is an infrastructure failure
// (InfraError), also when a probe of the host finds a capability missing
// (the error then names it).
type Backend interface {
	Name() string
	// Up builds the fabric (nodes, links) and starts the gNMI targets.
	Up(ctx context.Context, f *inventory.Fabric) error
	// Configure applies switch features (ECMP hashing, ECN, trimming, ...).
	Configure(ctx context.Context, feat runspec.Features) error
	// DeployAgents installs and starts the transport agents on the hosts.
	DeployAgents(ctx context.Context, t runspec.Transport) error
	// TelemetryTargets returns the gNMI targets to subscribe to, prepared
	// to sample at the given interval.
	TelemetryTargets(ctx context.Context, interval time.Duration) ([]telemetry.TargetSpec, error)
	// InjectFaults schedules faults relative to the start of RunJobs.
	InjectFaults(ctx context.Context, faults []runspec.Fault) error
	// RunJobs runs the workload to completion (or until ctx is done, then
	// returns what finished with Interrupted set). progress may be nil.
	RunJobs(ctx context.Context, w *runspec.Workload, progress func(Progress)) (*RunResult, error)
	// Down tears everything down; telemetry streams end here.
	Down(ctx context.Context) error
}

// Env is what the harness tells a backend about the run it serves before
// Up; backends that need it implement Preparer.
type Env struct {
	RunID        string // the matrix point (unique within the suite run)
	Dir          string // the run's results directory, for backend logs
	LabStateRoot string // native lab state
	AgentBinary  string // the fabricbench binary to deploy to hosts ("" = this one)
	Logf         func(format string, args ...any)
	// Inventory is the hardware inventory the fabric comes from (absolute
	// path; "" for a generated fabric).
	Inventory string
	// Apply allows the backend to change devices' configuration (run
	// --apply); without it a needed change is an *InputError.
	Apply bool
	// ServeGNMI, when set, asks the backend to serve the run's telemetry
	// to outside gNMI clients (run --serve-gnmi; backends that implement
	// GNMIServing).
	ServeGNMI *ServeGNMI
}

// ServeGNMI is how a backend serves a run's telemetry to outside gNMI
// clients: on Addr, with these credentials, paced to wall-clock time.
type ServeGNMI struct {
	Addr               string
	Username, Password string
	// Pace is wall-clock seconds per second of the source's time (the
	// simulator's): 1 real time, 1000 a simulated millisecond per second;
	// 0 as fast as possible.
	Pace float64
	// Logf receives where the server listens (nil: nowhere).
	Logf func(format string, args ...any)
}

// PaceText describes the pace for people.
func (s *ServeGNMI) PaceText() string {
	switch {
	case s.Pace <= 0:
		return "simulated time as fast as possible"
	case s.Pace == 1:
		return "simulated time paced to wall-clock time (real time)"
	}
	return fmt.Sprintf("simulated time paced to wall-clock time, slowed down %gx (a simulated millisecond takes %v)", s.Pace,
		time.Duration(s.Pace*float64(time.Millisecond)).Round(time.Microsecond))
}

// GNMIServing is implemented by backends that can serve a run's telemetry
// to outside gNMI clients (Env.ServeGNMI): the simulator. The labs'
// exporters and real switches serve their own gNMI.
type GNMIServing interface {
	ServesGNMI() bool
}

// StreamsOutlive is implemented by backends whose telemetry targets keep
// streaming after Down (devices' own gNMI servers): the harness then ends
// the subscriptions itself once Down has returned.
type StreamsOutlive interface {
	StreamsOutliveDown() bool
}

// Validator is implemented by backends that validate the fabric before
// the first point (bring-up checks of real hardware): the result is the
// suite's "bringup" run, and a failed check skips every point (exit
// status 1). An error is an infrastructure failure (exit status 3).
type Validator interface {
	ValidateFabric(ctx context.Context, env Env) (*results.Bringup, error)
}

// LiveChecker is implemented by Validators that check the suite against
// what ValidateFabric read from the devices (the hardware backend:
// transport.mtu against the MTUs of the hosts' NICs and the switches'
// ports). After a passing validation, before any point, its check runs on
// every point's suite, on the same backend; what it reports is bad input
// (exit 2) at the field's file:line:col, and no point runs.
type LiveChecker interface {
	LiveCheck() suite.CheckFunc
}

// PlanChecker is implemented by backends that check a planned point
// against what they know without bringing anything up (the hardware
// backend: each device's platform); an error is bad input (exit 2) naming
// what cannot be done.
type PlanChecker interface {
	CheckPlan(p *runspec.RunSpec) error
}

// Preparer is implemented by backends that want the run's Env.
type Preparer interface {
	Prepare(env Env)
}

// Progress is reported while jobs run.
type Progress struct {
	Done, Flows int
	SimNow      int64 // ps of backend time
}

// FlowOutcome is the result of one flow.
type FlowOutcome struct {
	ID                    int
	Start, FCT            int64 // ps; -1 when not started / not finished
	Retx, Nacks, Timeouts uint64
	// Spurious counts retransmitted packets whose original was acknowledged
	// after the resend (a timeout that fired too early). Backends that do
	// not detect them leave 0.
	Spurious uint64
	// Error says why a flow did not complete, when a backend knows (e.g.
	// "the agent on host3 died"); flows.csv has it.
	Error string
}

// RunResult is what RunJobs returns.
type RunResult struct {
	Flows       []FlowOutcome // in runspec.Workload.Matrix.Flows order
	Packets     results.Packets
	End         int64 // ps of backend time when the run ended
	Wall        time.Duration
	EpochNs     int64 // telemetry timestamp of time 0
	Interrupted bool
	// Ideal returns the unloaded completion time of a flow (ps), or nil.
	Ideal func(src, dst int, size int64) int64
	// Extra are backend-specific counters reported as fabric metrics.
	Extra map[string]float64
	// JobExtra are backend-specific metrics of each job (Workload.Jobs
	// order; nil or shorter: none), added to results.Job.Extra: one-way
	// latency quantiles and reordering (the simulator's delivery stage).
	JobExtra []map[string]float64
	// ECNProfile is the ECN marking profile (simulator with ECN on).
	ECNProfile *results.ECNProfile
	// Failures are infrastructure failures during the jobs (an agent that
	// died, naming its host); the flows it owed are in Flows as not
	// finished and the run is an error, but its results are kept.
	Failures []string
	// EndReason says why the backend's run ended when that was before
	// every flow finished (the simulator's time limit or stall), or "".
	EndReason string
	// FabricFaults are faults of the fabric under test the backend saw
	// during the jobs that nobody injected (a switch's routing daemon
	// died): the run fails naming them; its measurements are kept.
	FabricFaults []string
	// Notes are what the backend measured of the fabric's reaction to
	// them (BGP sessions lost, when), added to the run's notes.
	Notes []string
}

// Feature is a switch feature a suite may ask for (Capabilities).
type Feature string

// The features of a suite's features section.
const (
	FeatECN      Feature = "ecn"      // RED/ECN marking (WRED) on data queues: features.ecn
	FeatTrimming Feature = "trimming" // packet trimming on full queues: features.trimming
	FeatPFC      Feature = "pfc"      // priority flow control: features.pfc
	FeatSRv6     Feature = "srv6"     // SRv6 micro-SID path placement: features.srv6
	FeatVRF      Feature = "vrf"      // VRFs: features.vrfs
	FeatQueue    Feature = "queue"    // per-run data queue sizes: features.queue other than bdp
	FeatAdaptive Feature = "adaptive" // switch adaptive routing: features.ecmp.mode adaptive
	// FeatPlanes: multi-plane hosts (a fabric with more than one plane,
	// e.g. a generator spec with planes=N): fabric.spec or fabric.file.
	FeatPlanes Feature = "planes"
	// FeatLowDiameter: dragonfly/slimfly routing modes (features.ecmp.mode
	// minimal, valiant, ugal-l, ugal-g, source-guided).
	FeatLowDiameter Feature = "low-diameter"
	// FeatController: a path controller during the jobs (suite controller).
	FeatController Feature = "controller"
	// FeatFlowlet: switch flowlet load balancing (DLB): features.ecmp.mode
	// flowlet.
	FeatFlowlet Feature = "flowlet"
	// FeatPFCWatchdog: the PFC watchdog: features.pfc.watchdog.
	FeatPFCWatchdog Feature = "pfc-watchdog"
	// FeatPacing: senders paced at a job's rate (jobs[].rate).
	FeatPacing Feature = "pacing"
	// FeatSRv6Control: features.srv6.placement (a path controller) and
	// per-job or strict features.srv6.paths.
	FeatSRv6Control Feature = "srv6-control"
)

// Capabilities is what a backend declares it can do, before anything is
// brought up. The planner checks every point of a suite against it and
// refuses what the backend cannot do at the suite field, with the file,
// line and column, as bad input (exit status 2). What only the host can
// tell (a kernel module) is probed at Up or Configure, and is then an
// infrastructure error naming the capability.
type Capabilities struct {
	// Unsupported maps each feature the backend cannot do to the reason;
	// features not listed are supported.
	Unsupported map[Feature]string
	// ByDevice lists features the backend supports only where its
	// devices can, checked device by device (the reason says how).
	// Default-on ones (ECN, trimming) are off unless the suite turns them
	// on; PFC's reason is also why pause trees are not analysed (noPFC).
	ByDevice map[Feature]string
	// ECMPHashNeeds are fields every features.ecmp.hash must include
	// (ECMPHashReason says why); nil: any hash.
	ECMPHashNeeds  []string
	ECMPHashReason string
	// FaultKinds and Workloads list the fault kinds (down, up, degrade,
	// flap) and workloads (permutation, incast, all-to-all, all-reduce)
	// the backend runs; nil: all.
	FaultKinds, Workloads []string
	// MinInterval is the shortest telemetry interval (0: the suite's
	// 100us), MinIntervalReason why.
	MinInterval       time.Duration
	MinIntervalReason string
	// MaxMTU is the largest transport.mtu (0: the suite's 9216),
	// MaxMTUReason why.
	MaxMTU       int
	MaxMTUReason string
	// NeedsInventory: the backend runs on the devices of a hardware
	// inventory (fabric.inventory or run --inventory).
	NeedsInventory bool
	// Launchers are the agents.launcher values the backend supports
	// (nil: it does not check; the simulator has no agents).
	Launchers []string
}

// Cannot is a backend's error for a feature it cannot do, asked for by
// the suite field.
func (c Capabilities) Cannot(backend, field string, f Feature) error {
	return fmt.Errorf("the %s backend cannot do %s: %s", backend, field, c.Unsupported[f])
}

// Capable is implemented by backends that declare their capabilities.
// The suite of a backend that does not is not checked before it runs.
type Capable interface {
	Capabilities() Capabilities
}

// BackendCapabilities returns the named backend's declaration (the zero
// Capabilities, everything allowed, for a backend that makes none).
func BackendCapabilities(name string) (Capabilities, error) {
	b, err := newBackend(name)
	if err != nil {
		return Capabilities{}, err
	}
	if c, ok := b.(Capable); ok {
		return c.Capabilities(), nil
	}
	return Capabilities{}, nil
}

var (
	regMu    sync.Mutex
	registry = map[string]func() Backend{}
)

// Register makes a backend available by name. It is called from the
// backends' init functions and panics on an empty name, a nil factory or a
// name registered before: a second backend never silently replaces the
// first.
func Register(name string, factory func() Backend) {
	regMu.Lock()
	defer regMu.Unlock()
	if name == "" || factory == nil {
		panic("harness: Register needs a backend name and a factory")
	}
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("harness: backend %q registered twice", name))
	}
	registry[name] = factory
}

// Backends lists the registered backend names.
func Backends() []string {
	regMu.Lock()
	defer regMu.Unlock()
	var names []string
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func newBackend(name string) (Backend, error) {
	regMu.Lock()
	f, ok := registry[name]
	regMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown backend %q (have %v)", name, Backends())
	}
	return f(), nil
}

// Steerer is implemented by backends whose pinned paths a path controller
// (suite controller) can move while the jobs run.
type Steerer interface {
	// Steer moves Features.SRv6Paths[path], both directions, through the
	// switches via (node IDs).
	Steer(ctx context.Context, path int, via []int) error
}

// ControlClock is implemented by backends that run in a clock of their
// own (the simulator): the harness gives them the controller's barrier,
// which they call after publishing each telemetry sample (its gNMI time,
// ns) and which returns once the controller has acted on it, so the
// controller's decisions land at the sample's time.
type ControlClock interface {
	SetControlBarrier(barrier func(ctx context.Context, timeNs int64) error)
}

// Concurrent is implemented by backends whose runs are independent of
// each other, so that the harness may run several matrix points at once
// (each with its own Backend from the factory). A backend that does not
// implement it, or returns false, runs one point at a time: the netns
// backend, whose labs share the host's namespaces, subnets and ports.
type Concurrent interface {
	ConcurrentRuns() bool
}

// BackendConcurrent reports whether the named backend can run several
// points at once (see Concurrent).
func BackendConcurrent(name string) (bool, error) {
	b, err := newBackend(name)
	if err != nil {
		return false, err
	}
	c, ok := b.(Concurrent)
	return ok && c.ConcurrentRuns(), nil
}
