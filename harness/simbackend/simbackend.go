// Package simbackend runs suites on the reference simulator (package sim).
// Its switches and host NICs are served as gNMI targets on loopback, one
// target per device, streaming counters sampled in simulated time, so the
// harness collects telemetry through the same gNMI path as on hardware.
package simbackend

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/harness/suite"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/kpis"
	"github.com/fabricbench/fabricbench/pathctl"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/sim"
	"github.com/fabricbench/fabricbench/telemetry"
	"github.com/fabricbench/fabricbench/workloads"
)

// Name is the backend's registry name.
const Name = "sim"

func init() { harness.Register(Name, func() harness.Backend { return New() }) }

// Backend is the simulator backend.
type Backend struct {
	f      *inventory.Fabric
	feat   runspec.Features
	tp     transport.Params
	seed   uint64
	links  []sim.LinkEvent
	srv    *telemetry.Server
	every  int64 // sample interval, ps
	pub    *Publisher
	serve  *harness.ServeGNMI // serve outside clients (run --serve-gnmi)
	epoch  int64
	pubErr error
	// The path controller (harness.Steerer, harness.ControlClock): the
	// flows each features.srv6.paths entry pins (forward, reverse), the
	// barrier called after each sample and the moves it queued.
	pathFlows [][2][]int
	barrier   func(ctx context.Context, timeNs int64) error
	steerMu   sync.Mutex
	steers    []steer
}

type steer struct {
	path int
	via  []int
}

// New returns an idle simulator backend.
func New() *Backend { return &Backend{} }

// Name implements harness.Backend.
func (b *Backend) Name() string { return Name }

// Up prepares the fabric and lists the gNMI devices: every switch with its
// ports and their data queues, and every host with its NIC.
func (b *Backend) Up(ctx context.Context, f *inventory.Fabric) error {
	b.f = f
	b.pub = NewPublisher(f)
	return nil
}

// Prepare implements harness.Preparer: the run's request to serve its
// telemetry to outside clients.
func (b *Backend) Prepare(env harness.Env) { b.serve = env.ServeGNMI }

// ServesGNMI implements harness.GNMIServing: a run serves its telemetry
// on the address of run --serve-gnmi, to the harness's collector and to
// outside clients alike.
func (b *Backend) ServesGNMI() bool { return true }

// capabilities is what the simulator models: ECMP (5-tuple or
// address-only hashing) or switch adaptive routing, ECN marking, trimming, PFC
// (features.pfc: the one data class every flow runs in becomes lossless,
// sim.PFC with its default thresholds), queue sizes, SRv6 micro-SID paths
// (features.srv6: paths per host pair or per job, and the disjoint
// placement controller, sim.SRv6 and package pathctl), VRFs (features.vrfs:
// a routing table per VRF with route leaks and per-VRF ECMP, sim.VRF), every fault kind
// and workload, telemetry at any interval the suite allows.
var capabilities = harness.Capabilities{
	ECMPHashNeeds:  []string{"src-ip", "dst-ip"},
	ECMPHashReason: "the simulator always hashes on src-ip and dst-ip; it can add L4 ports (or the flow label) or not",
}

// Capabilities implements harness.Capable.
func (b *Backend) Capabilities() harness.Capabilities { return capabilities }

// Configure records the features. The planner has refused what the
// simulator does not model (Capabilities); Configure refuses it too, for
// callers that did not plan.
func (b *Backend) Configure(ctx context.Context, feat runspec.Features) error {
	switch {
	case !slices.Contains(feat.ECMPHash, "src-ip") || !slices.Contains(feat.ECMPHash, "dst-ip"):
		return unsupported("features.ecmp.hash", capabilities.ECMPHashReason)
	}
	feat.ECMPHash = slices.Clone(feat.ECMPHash)
	feat.SRv6Paths = slices.Clone(feat.SRv6Paths)
	b.feat = feat
	return nil
}

// DeployAgents sets the transport the simulated hosts run: the same
// agents/transport state machine as the UDP agent.
func (b *Backend) DeployAgents(ctx context.Context, t runspec.Transport) error {
	p, err := t.Params()
	if err != nil {
		return err
	}
	p.Seed = 0 // the simulator seeds each run from b.seed
	b.tp, b.seed = p, t.Seed
	return nil
}

// TelemetryTargets starts the gNMI server on loopback; it publishes a sample
// every interval of simulated time.
func (b *Backend) TelemetryTargets(ctx context.Context, interval time.Duration) ([]telemetry.TargetSpec, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("telemetry interval must be positive")
	}
	opts := []telemetry.ServerOption{telemetry.WithBaseInterval(interval)}
	if sv := b.serve; sv != nil {
		opts = append(opts, telemetry.WithListenAddress(sv.Addr), telemetry.WithCredentials(sv.Username, sv.Password))
		b.pub.Pace = sv.Pace
	}
	srv, err := telemetry.NewServer(b.pub.Devices(), opts...)
	if err != nil {
		return nil, fmt.Errorf("gNMI server: %w", err)
	}
	b.srv = srv
	b.pub.Serve(srv)
	b.every = interval.Nanoseconds() * 1000
	b.epoch = time.Now().Truncate(time.Millisecond).UnixNano()
	b.pub.Epoch = b.epoch
	if sv := b.serve; sv != nil && sv.Logf != nil {
		sv.Logf("gNMI: serving %d targets (the fabric's switches and hosts) on %s, %s", len(b.pub.Devices()), srv.Addr(), sv.PaceText())
	}
	user, pass := srv.Credentials()
	specs := make([]telemetry.TargetSpec, len(b.pub.Devices()))
	for i, d := range b.pub.Devices() {
		specs[i] = telemetry.TargetSpec{Name: d.Name, Address: srv.Addr(), Username: user, Password: pass}
	}
	return specs, nil
}

// InjectFaults turns faults into link events of the run.
func (b *Backend) InjectFaults(ctx context.Context, faults []runspec.Fault) error {
	for _, ft := range faults {
		if ft.Link < 0 || ft.Link >= len(b.f.Links) {
			return fmt.Errorf("fault %q: link %d out of range", ft.Description, ft.Link)
		}
		b.links = append(b.links, linkEvent(ft))
	}
	return nil
}

// linkEvent is a fault as the simulator's link event.
func linkEvent(ft runspec.Fault) sim.LinkEvent {
	return sim.LinkEvent{At: ft.At, Link: ft.Link, Up: ft.Up, RateFactor: ft.Fraction, Direction: ft.Direction}
}

// RunJobs simulates the workload. Telemetry is published from the
// simulator's sampling hook; Publish blocks while a collector is behind, so
// no sample is lost and the simulation stays deterministic.
func (b *Backend) RunJobs(ctx context.Context, w *runspec.Workload, progress func(harness.Progress)) (*harness.RunResult, error) {
	cfg, err := simConfig(b.f, b.feat, b.tp, b.seed, b.links, w)
	if err != nil {
		return nil, err
	}
	if b.feat.SRv6 {
		sr, err := b.srv6(w)
		if err != nil {
			return nil, err
		}
		cfg.SRv6 = sr
	}
	if progress != nil {
		cfg.Progress = func(p sim.Progress) { progress(harness.Progress{Done: p.Done, Flows: p.Flows, SimNow: p.SimNow}) }
	}
	if b.srv != nil {
		if err := b.srv.WaitSubscribers(ctx, len(b.pub.Devices())); err != nil {
			return nil, fmt.Errorf("waiting for gNMI subscribers: %w", err)
		}
		cfg.SampleEvery = b.every
		cfg.OnSample = b.sample(ctx)
	}
	s, err := sim.New(cfg)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, s.Interrupt)
	defer stop()
	res := s.Run()
	if b.pubErr != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("publishing telemetry: %w", b.pubErr)
	}
	out := &harness.RunResult{
		Flows: make([]harness.FlowOutcome, len(res.Flows)),
		Packets: results.Packets{Sent: res.Packets.Sent, Retransmitted: res.Packets.Retransmitted,
			Trimmed: res.Packets.Trimmed, Dropped: res.Packets.Dropped, ECNMarked: res.Packets.ECNMarked},
		End: res.SimEnd, Wall: res.Wall, EpochNs: b.epoch, Interrupted: res.Interrupted,
		Ideal: s.IdealFCT, EndReason: endReason(res),
		Extra: map[string]float64{"sim_events": float64(res.Events), "reroutes": float64(res.Reroutes)},
	}
	if len(b.feat.VRFs) > 0 {
		out.Extra["vrf_unreachable_packets"] = float64(res.Packets.Unreachable)
	}
	for i, fr := range res.Flows {
		out.Flows[i] = harness.FlowOutcome{ID: fr.ID, Start: fr.Start, FCT: fr.FCT, Retx: fr.Retx, Nacks: fr.Nacks, Timeouts: fr.Timeouts}
	}
	bmwgExtras(s, res, b.feat, b.links, out)
	var ce, delivered uint64
	for j := range w.Jobs {
		d := s.Delivery(j)
		out.JobExtra = append(out.JobExtra, deliveryMetrics(d))
		if d != nil {
			ce, delivered = ce+d.CE, delivered+d.Delivered+d.Retransmitted
		}
	}
	out.Extra[kpis.MetricCEPackets], out.Extra[kpis.MetricDeliveredPkts] = float64(ce), float64(delivered)
	return out, nil
}

// Config is the simulator configuration of a run that fabricbench sim
// builds from its flags: the same mapping (simConfig) as a suite's run on
// this backend, with the RunSpec's typed transport parameters and its
// faults as link events. w is the run's traffic (a workload without jobs:
// a traffic matrix).
func Config(p *runspec.RunSpec, w *runspec.Workload) (sim.Config, error) {
	var links []sim.LinkEvent
	for _, ft := range p.Faults {
		links = append(links, linkEvent(ft))
	}
	return simConfig(p.Fabric, p.Features, p.TransportParams, p.Transport.Seed, links, w)
}

// simConfig maps a run onto the simulator: its fabric, switch features,
// transport (trimming is the switches'), seed, link events and workload.
// The delivery stage (every job's one-way latency and reordering) and the
// ECN profile record what the analysis reports of jobs; a workload
// without jobs has none. Settings of a routing mode other than the run's
// (adaptive routing's staleness, say) reach the simulator, which refuses
// them.
func simConfig(f *inventory.Fabric, feat runspec.Features, tp transport.Params, seed uint64, links []sim.LinkEvent, w *runspec.Workload) (sim.Config, error) {
	tp.Trimming = feat.Trimming
	cfg := sim.Config{
		Fabric: f, Matrix: w.Matrix, Transport: tp, Seed: seed,
		QueueBytes: feat.QueueBytes, KMin: feat.KMin, KMax: feat.KMax, NoECN: !feat.ECN,
		Links: links, End: feat.SimEnd, StallAfter: feat.StallAfter, Reconverge: feat.Reconverge,
		HashAddressesOnly: !hasL4(feat.ECMPHash),
		PFC:               sim.PFC{Enabled: feat.PFC, WatchdogDetect: feat.PFCWatchdogDetect, WatchdogRestore: feat.PFCWatchdogRestore},
		ARStaleness:       feat.ARStaleness, ARQuantum: feat.ARQuantum, ARWeighted: feat.ARWeighted,
	}
	if len(w.Jobs) > 0 {
		cfg.Delivery = sim.Delivery{Enabled: true, GroupOf: jobGroups(w), Groups: len(w.Jobs)}
		cfg.ECNProfile = feat.ECN
	}
	if feat.Flowlet {
		cfg.Routing, cfg.FlowletGap = sim.RoutingFlowlet, feat.FlowletGap
	}
	if feat.QueueLongestPath {
		rtt, q, err := sim.LongestPathSizing(f, tp)
		if err != nil {
			return cfg, err
		}
		cfg.QueueBytes, cfg.WindowRTT = q, rtt
	}
	if feat.LowDiameter != "" {
		m, ok := sim.ParseLowDiameter(feat.LowDiameter)
		if !ok {
			return cfg, fmt.Errorf("unknown low-diameter routing %q", feat.LowDiameter)
		}
		cfg.LowDiameter = m
	}
	if len(feat.VRFs) > 0 {
		m := runspec.NewVRFMap(f.NumHosts(), feat.VRFs)
		cfg.VRF = sim.VRF{Of: m.Of, Reach: m.Reach, Names: m.Names}
	}
	if feat.Adaptive {
		cfg.Routing = sim.RoutingAdaptive
	}
	return cfg, nil
}

// srv6 maps the suite's SRv6 paths onto the workload's flows: a path
// pins the flows from Src to Dst (of its job only, when it names one) to
// the uN of each Via switch, and, unless another path covers them, the
// flows from Dst to Src to the reversed switches, as the lab does. With
// the disjoint controller the elephants left over are then placed by
// pathctl.Disjoint, once for the whole run (every job at its start).
func (b *Backend) srv6(w *runspec.Workload) (sim.SRv6, error) {
	var out sim.SRv6
	f := b.f
	type key struct{ src, dst int }
	explicit := map[key]bool{}
	for _, p := range b.feat.SRv6Paths {
		explicit[key{p.Src, p.Dst}] = true
	}
	pinned := map[int]bool{}
	b.pathFlows = make([][2][]int, len(b.feat.SRv6Paths))
	for k, p := range b.feat.SRv6Paths {
		fwd := sim.SRv6Path{Name: p.Name, Strict: p.Strict}
		rev := sim.SRv6Path{Name: p.Name + " (reverse)", Strict: p.Strict}
		for i, n := range p.Via {
			fwd.SIDs = append(fwd.SIDs, sim.USID(f, n))
			rev.SIDs = append(rev.SIDs, sim.USID(f, p.Via[len(p.Via)-1-i]))
		}
		for i, fl := range w.Matrix.Flows {
			if pinned[fl.ID] || (p.Job != "" && (i >= len(w.FlowJob) || w.Jobs[w.FlowJob[i]].Name != p.Job)) {
				continue
			}
			switch {
			case fl.Src == p.Src && fl.Dst == p.Dst:
				fwd.Flows = append(fwd.Flows, fl.ID)
			case fl.Src == p.Dst && fl.Dst == p.Src && !explicit[key{p.Dst, p.Src}]:
				rev.Flows = append(rev.Flows, fl.ID)
			default:
				continue
			}
			pinned[fl.ID] = true
		}
		b.pathFlows[k] = [2][]int{fwd.Flows, rev.Flows}
		for _, sp := range []sim.SRv6Path{fwd, rev} {
			if len(sp.Flows) > 0 {
				out.Paths = append(out.Paths, sp)
			}
		}
	}
	if b.feat.SRv6Placement == suite.SRv6PlacementDisjoint {
		var rest []workloads.Flow
		for _, fl := range w.Matrix.Flows {
			if !pinned[fl.ID] {
				rest = append(rest, fl)
			}
		}
		pl := pathctl.Disjoint(f, rest, b.feat.SRv6Elephant)
		out.Paths = append(out.Paths, placedPaths(f, pl.Placed)...)
	}
	return out, nil
}

// placedPaths turns the placements of pathctl.Disjoint into the
// simulator's strict uSID paths.
func placedPaths(f *inventory.Fabric, placed []pathctl.Placement) []sim.SRv6Path {
	out := make([]sim.SRv6Path, len(placed))
	for i, p := range placed {
		sids := make([]uint16, len(p.Via))
		for k, n := range p.Via {
			sids[k] = sim.USID(f, n)
		}
		out[i] = sim.SRv6Path{Name: fmt.Sprintf("placed-flow%d", p.Flow), Flows: []int{p.Flow}, SIDs: sids, Strict: true}
	}
	return out
}

func hasL4(hash []string) bool {
	return slices.Contains(hash, "src-port") || slices.Contains(hash, "dst-port") || slices.Contains(hash, "flow-label")
}

// sample reads every port's counters into the published values.
func (b *Backend) sample(ctx context.Context) func(*sim.Sim, int64) {
	return func(s *sim.Sim, now int64) {
		if b.pubErr != nil {
			return
		}
		if err := b.pub.Publish(ctx, s, now); err != nil {
			b.pubErr = err
			s.Interrupt()
			return
		}
		if b.barrier == nil || now%b.every != 0 {
			// Off the grid (the sample at the end of the run) no
			// subscription at the base interval is due.
			return
		}
		// The controller acts on this sample before the run goes on: its
		// moves take effect at the sample's time.
		if err := b.barrier(ctx, b.epoch+now/1000); err != nil {
			b.pubErr = fmt.Errorf("path controller: %w", err)
			s.Interrupt()
			return
		}
		if err := b.applySteers(s); err != nil {
			b.pubErr = err
			s.Interrupt()
		}
	}
}

// SetControlBarrier implements harness.ControlClock.
func (b *Backend) SetControlBarrier(barrier func(ctx context.Context, timeNs int64) error) {
	b.barrier = barrier
}

// Steer implements harness.Steerer: it queues the move of pinned path
// features.srv6.paths[path] onto the switches via, applied to the
// simulation (sim.Sim.RepinSRv6 of the path's flows, the reverse ones
// through the reversed switches) once the controller's barrier returns.
func (b *Backend) Steer(ctx context.Context, path int, via []int) error {
	if path < 0 || path >= len(b.feat.SRv6Paths) {
		return fmt.Errorf("no SRv6 path %d", path)
	}
	if len(via) == 0 {
		return fmt.Errorf("SRv6 path %s: no switches to steer through", b.feat.SRv6Paths[path].Name)
	}
	for _, n := range via {
		if n < 0 || n >= len(b.f.Nodes) || !b.f.Nodes[n].IsSwitch() {
			return fmt.Errorf("SRv6 path %s: node %d is not a switch", b.feat.SRv6Paths[path].Name, n)
		}
	}
	b.steerMu.Lock()
	b.steers = append(b.steers, steer{path, slices.Clone(via)})
	b.steerMu.Unlock()
	return nil
}

// applySteers repins the flows of the paths the controller moved.
func (b *Backend) applySteers(s *sim.Sim) error {
	b.steerMu.Lock()
	moves := b.steers
	b.steers = nil
	b.steerMu.Unlock()
	for _, m := range moves {
		p := b.feat.SRv6Paths[m.path]
		fwd := make([]uint16, len(m.via))
		rev := make([]uint16, len(m.via))
		for i, n := range m.via {
			fwd[i] = sim.USID(b.f, n)
			rev[len(m.via)-1-i] = fwd[i]
		}
		if m.path >= len(b.pathFlows) {
			continue
		}
		for dir, sids := range [2][]uint16{fwd, rev} {
			for _, fl := range b.pathFlows[m.path][dir] {
				if err := s.RepinSRv6(fl, p.Name+" (controller)", sids, p.Strict); err != nil {
					return fmt.Errorf("path controller: %w", err)
				}
			}
		}
	}
	return nil
}

// Down ends the telemetry streams (after every queued sample is sent) and
// stops the gNMI server.
func (b *Backend) Down(ctx context.Context) error {
	if b.srv == nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := b.srv.Close(cctx)
	b.srv = nil
	return err
}

// ConcurrentRuns implements harness.Concurrent: each run has its own
// simulator, its own gNMI server on a free loopback port and no global
// state, so matrix points may run at the same time.
func (b *Backend) ConcurrentRuns() bool { return true }

func unsupported(field, reason string) error {
	return fmt.Errorf("the %s backend cannot do %s: %s", Name, field, reason)
}

// endReason describes why a simulation ended, for the harness's verdict on
// unfinished flows.
func endReason(res *sim.Result) string {
	switch res.EndReason {
	case sim.EndLimit:
		return "the simulated-time limit (sim.end; default 1 s) was reached"
	case sim.EndStalled:
		return fmt.Sprintf("no flow made progress for %s of simulated time (the stall limit)", time.Duration(res.StallAfter/1000))
	}
	return ""
}

// Describe implements harness.Describer: what a run of p simulates.
func (b *Backend) Describe(p *runspec.RunSpec) []string {
	sw, hosts, links := harness.FabricCounts(p.Fabric)
	out := []string{fmt.Sprintf("simulate   %d switches, %d hosts, %d links in the reference simulator (seed %d, at most %v of simulated time)",
		sw, hosts, links, p.Transport.Seed, time.Duration(p.Features.SimEnd/1000))}
	if !p.NoTelemetry {
		out = append(out, fmt.Sprintf("gNMI       %d targets (every switch and host NIC) on one loopback server, a sample every %v of simulated time",
			len(p.Fabric.Nodes), p.Interval))
	}
	return out
}
