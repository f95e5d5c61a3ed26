package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/harness/suite"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/kpis"
	"github.com/fabricbench/fabricbench/units"
)

// InputError is bad input: a suite, fabric or option the user must fix.
// The CLI exits with status 2 for it.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// InfraError is an infrastructure failure: the backend, the lab host, an
// agent, telemetry, InfluxDB or the results directory failed, not the
// input. The CLI exits with status 3 for it.
type InfraError struct{ Err error }

func (e *InfraError) Error() string { return e.Err.Error() }
func (e *InfraError) Unwrap() error { return e.Err }

// infra wraps err as an InfraError unless it is one, or is bad input.
func infra(err error) error {
	var ie *InputError
	var fe *InfraError
	if err == nil || errors.As(err, &ie) || errors.As(err, &fe) {
		return err
	}
	return &InfraError{err}
}

// Plan loads a suite file and resolves every matrix point. All errors are
// *InputError and name the file and field.
func Plan(file string) (*suite.Suite, []*runspec.RunSpec, error) {
	return PlanContext(context.Background(), file)
}

// planHook, when set (tests), is called after each point is resolved.
var planHook func()

// PlanContext is Plan that stops when ctx is done (Ctrl-C while a large
// matrix is planned), between steps and between points, returning
// ctx.Err(). Points with the same fabric share one *inventory.Fabric
// (read-only), so a matrix over a large fabric builds it once.
func PlanContext(ctx context.Context, file string) (*suite.Suite, []*runspec.RunSpec, error) {
	return PlanBackend(ctx, file, "")
}

// PlanBackend is PlanContext for the named backend ("" checks for none):
// every point is checked against what the backend declares it can do
// (Capabilities), and what it cannot do is bad input at the suite field
// (file:line:col), before anything is brought up.
func PlanBackend(ctx context.Context, file, backend string) (*suite.Suite, []*runspec.RunSpec, error) {
	return PlanWith(ctx, file, backend, "")
}

// PlanWith is PlanBackend with the suite's fabric replaced by a hardware
// inventory's (inv, "" for none: run --inventory).
func PlanWith(ctx context.Context, file, backend, inv string) (*suite.Suite, []*runspec.RunSpec, error) {
	pl, err := PlanSuite(ctx, file, backend, inv)
	if err != nil {
		return nil, nil, err
	}
	return pl.Suite, pl.Points, nil
}

// A SuitePlan is a suite resolved for a backend: everything a run does
// before its first side effect.
type SuitePlan struct {
	Suite   *suite.Suite
	Points  []*runspec.RunSpec
	Backend string // "" when planned for no backend
	// Caps is the backend's declaration (the zero value without one).
	Caps Capabilities
	// Notes are one line each: defaults that follow the backend, e.g. a
	// feature the suite leaves at its default that the backend cannot do
	// and that is therefore off.
	Notes []string
}

// PlanSuite is PlanWith returning the whole SuitePlan. A feature that is on by
// default (features.ecn, features.trimming) follows the backend: on where
// it can do it, off where it cannot, with a note saying so; asked for
// explicitly, what the backend cannot do is refused (bad input at the
// field).
func PlanSuite(ctx context.Context, file, backend, inv string) (*SuitePlan, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pl := &SuitePlan{Backend: backend}
	var na suite.CheckFunc
	if backend != "" {
		caps, err := BackendCapabilities(backend)
		if err != nil {
			return nil, &InputError{fmt.Errorf("--backend: %w", err)}
		}
		pl.Caps = caps
		na = allChecks(caps.check(backend), needsCheck(backend, caps))
	}
	check := allChecks(vrfCheck(), knownNeeds())
	s, err := suite.LoadWith(file, suite.Options{Inventory: inv})
	if err != nil {
		return nil, &InputError{err}
	}
	pl.Suite = s
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pts, err := s.PointsApplicable(check, na)
	if err != nil {
		return nil, &InputError{err}
	}
	fabrics := map[string]*inventory.Fabric{}
	notes := map[string]bool{}
	var pc PlanChecker
	if backend != "" {
		if b, err := newBackend(backend); err == nil {
			pc, _ = b.(PlanChecker)
		}
	}
	for _, sp := range pts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, err := resolve(sp, fabrics, pl.Caps)
		if planHook != nil {
			planHook()
		}
		if err != nil && len(sp.NotApplicable) > 0 {
			// Not run: what it cannot do may be why it does not resolve.
			p, err = &runspec.RunSpec{ID: sp.ID, Params: sp.Params, Suite: sp.Suite}, nil
		}
		if p != nil {
			p.Test, p.NotApplicable = sp.Test, sp.NotApplicable
		}
		if err != nil {
			if len(pts) > 1 {
				err = fmt.Errorf("%s: matrix point %s: %w", file, sp.ID, err)
			} else {
				err = fmt.Errorf("%s: %w", file, err)
			}
			return nil, &InputError{err}
		}
		if pc != nil {
			if err := pc.CheckPlan(p); err != nil {
				return nil, &InputError{fmt.Errorf("%s: %w", file, err)}
			}
		}
		for _, n := range defaultNotes(sp.Suite, backend, pl.Caps) {
			if !notes[n] {
				notes[n] = true
				pl.Notes = append(pl.Notes, n)
			}
		}
		pl.Points = append(pl.Points, p)
	}
	return pl, nil
}

// featureOn is whether a default-on feature is on: as the suite says, or,
// left at its default, whether the backend can do it (off where only some
// devices can: Capabilities.ByDevice).
func featureOn(enabled *bool, f Feature, caps Capabilities) bool {
	if enabled != nil {
		return *enabled
	}
	_, cannot := caps.Unsupported[f]
	_, byDevice := caps.ByDevice[f]
	return !cannot && !byDevice
}

// defaultNotes says which default-on features s leaves at their default
// and the backend cannot do, or does only where its devices can (so they
// are off), one line each.
func defaultNotes(s *suite.Suite, backend string, caps Capabilities) []string {
	var out []string
	for _, k := range FeatureKinds() {
		if k.Enabled == nil || k.Enabled(&s.Features) != nil {
			continue
		}
		if reason, cannot := caps.Unsupported[k.Feature]; cannot {
			out = append(out, fmt.Sprintf("%s: off (on by default, but the %s backend cannot do %s: %s)", k.EnabledField, backend, k.Doc, reason))
		} else if reason, some := caps.ByDevice[k.Feature]; some {
			out = append(out, fmt.Sprintf("%s: off (on by default, but on the %s backend only where the devices can: %s)", k.EnabledField, backend, reason))
		}
	}
	return out
}

// resolve resolves one point; fabrics caches fabrics by their suite
// section (nil: no cache).
func resolve(sp suite.Point, fabrics map[string]*inventory.Fabric, caps Capabilities) (*runspec.RunSpec, error) {
	s := sp.Suite
	key := s.Fabric.Spec + "\x00" + s.Fabric.File + "\x00" + s.Fabric.Inventory
	f := fabrics[key]
	if f == nil {
		var err error
		if f, err = s.LoadFabric(); err != nil {
			return nil, fmt.Errorf("fabric: %w", err)
		}
		if fabrics != nil {
			fabrics[key] = f
		}
	}
	var err error
	p := &runspec.RunSpec{ID: sp.ID, Params: sp.Params, Suite: s, Fabric: f}
	ft := s.Features
	p.Features = Features{
		ECMPHash: ft.ECMP.Hash, ECN: featureOn(ft.ECN.Enabled, FeatECN, caps), KMin: ft.ECN.KMin, KMax: ft.ECN.KMax,
		Trimming: featureOn(ft.Trimming.Enabled, FeatTrimming, caps),
		PFC:      ft.PFC != nil && ft.PFC.Enabled, SRv6: ft.SRv6 != nil,
		Adaptive: ft.ECMP.Mode == suite.ECMPModeAdaptive, ARWeighted: ft.ECMP.Weighted,
	}
	if m := ft.ECMP.Mode; m != suite.ECMPModeHash && m != suite.ECMPModeAdaptive && m != suite.ECMPModeFlowlet {
		p.Features.LowDiameter = m
	}
	if ft.ECMP.Mode == suite.ECMPModeFlowlet {
		p.Features.Flowlet = true
		if ft.ECMP.FlowletGap != "" {
			p.Features.FlowletGap, _ = units.ParsePs(ft.ECMP.FlowletGap) // validated
		}
	}
	if ft.PFC != nil && ft.PFC.Watchdog != nil {
		w := ft.PFC.Watchdog
		p.Features.PFCWatchdogDetect, _ = units.ParsePs(w.Detect) // validated
		if w.Restore != "" {
			p.Features.PFCWatchdogRestore, _ = units.ParsePs(w.Restore)
		}
	}
	if p.Features.Adaptive {
		// Validated by the suite checker.
		if ft.ECMP.Staleness != "" {
			p.Features.ARStaleness, _ = units.ParsePs(ft.ECMP.Staleness)
		}
		if ft.ECMP.Quantum != "" {
			p.Features.ARQuantum, _ = units.ParseBytes(ft.ECMP.Quantum)
		}
	}
	if ft.SRv6 != nil {
		if ft.SRv6.Placement == suite.SRv6PlacementDisjoint {
			p.Features.SRv6Placement, p.Features.SRv6Elephant = ft.SRv6.Placement, 1<<20
			if ft.SRv6.Elephant != "" {
				p.Features.SRv6Elephant, _ = units.ParseBytes(ft.SRv6.Elephant) // validated
			}
		}
		for i, sp := range ft.SRv6.Paths {
			path := SRv6Path{Name: sp.Name, Src: -1, Dst: -1, Job: sp.Job, Strict: sp.Strict}
			if n, ok := f.NodeByName(sp.Src); ok {
				path.Src = hostNumber(f, n)
			}
			if n, ok := f.NodeByName(sp.Dst); ok {
				path.Dst = hostNumber(f, n)
			}
			if path.Src < 0 || path.Dst < 0 {
				return nil, fmt.Errorf("features.srv6.paths[%d]: src and dst must be hosts", i)
			}
			for k, v := range sp.Via {
				n, ok := f.NodeByName(v)
				if !ok || !f.Nodes[n].IsSwitch() {
					return nil, fmt.Errorf("features.srv6.paths[%d].via[%d]: no switch named %q", i, k, v)
				}
				path.Via = append(path.Via, n)
			}
			if path.Name == "" {
				path.Name = fmt.Sprintf("%s-%s", sp.Src, sp.Dst)
			}
			p.Features.SRv6Paths = append(p.Features.SRv6Paths, path)
		}
	}
	if p.Features.VRFs, err = resolveVRFs(f, ft.VRFs); err != nil {
		return nil, err
	}
	if q := ft.Queue; q == "longest-path" {
		if !f.LowDiameter() {
			return nil, fmt.Errorf("features.queue: longest-path sizes on the source-guided paths of a dragonfly or slimfly fabric; %s is neither", f.Name)
		}
		p.Features.QueueLongestPath = true
	} else if q != "" && q != "bdp" {
		if p.Features.QueueBytes, err = units.ParseBytes(q); err != nil {
			return nil, fmt.Errorf("features.queue: %w", err)
		}
	}
	if p.Features.SimEnd, err = optDuration(s.Sim.End); err != nil {
		return nil, fmt.Errorf("sim.end: %w", err)
	}
	if p.Features.Reconverge, err = optDuration(s.Sim.Reconverge); err != nil {
		return nil, fmt.Errorf("sim.reconverge: %w", err)
	}
	switch s.Sim.StallAfter {
	case "off":
		p.Features.StallAfter = -1
	default:
		if p.Features.StallAfter, err = optDuration(s.Sim.StallAfter); err != nil {
			return nil, fmt.Errorf("sim.stall_after: %w", err)
		}
	}
	if p.Features.SimEnd == 0 {
		p.Features.SimEnd = 1e12 // 1 s of simulated time at most
	}
	t := s.Transport
	p.Transport = Transport{CC: t.CC, LB: t.LB, Planes: t.Planes, MTU: t.MTU, QuickAdapt: t.QuickAdapt, FastIncrease: t.FastIncrease, EntropyRun: t.EntropyRun, Seed: s.Seed,
		Launcher: s.Agents.Launcher}
	if p.TransportParams, err = p.Transport.Params(); err != nil {
		return nil, fmt.Errorf("transport: %w", err) // the suite checked cc, lb and planes
	}
	iv, err := telemetryInterval(s.Telemetry.Interval, caps)
	if err != nil {
		return nil, fmt.Errorf("telemetry.interval: %w", err)
	}
	p.Interval = time.Duration(iv / 1000)
	p.Paths = s.Telemetry.Paths
	p.NoTelemetry = s.Telemetry.Enabled != nil && !*s.Telemetry.Enabled

	if c := s.Controller; c != nil && c.Kind != suite.ControllerNone {
		cs := &ControllerSpec{Kind: c.Kind, Interval: iv / 1000, Rate: c.Thresholds.Rate, Trigger: c.Thresholds.Trigger, Clear: c.Thresholds.Clear}
		// Validated by the suite checker.
		if c.Interval != "" {
			v, _ := units.ParsePs(c.Interval)
			cs.Interval = v / 1000
		}
		cs.HoldDown = 10 * cs.Interval
		if c.HoldDown != "" {
			v, _ := units.ParsePs(c.HoldDown)
			cs.HoldDown = v / 1000
		}
		if c.Thresholds.Queue != "" {
			cs.Queue, _ = units.ParseBytes(c.Thresholds.Queue)
		}
		p.Controller = cs
	}
	names := map[string]bool{}
	for i := range s.Jobs {
		sj := &s.Jobs[i]
		j, err := resolveJob(f, sj)
		if err != nil {
			return nil, fmt.Errorf("jobs[%d] (%s): %w", i, sj.Name, err)
		}
		names[j.Name] = true
		p.Jobs = append(p.Jobs, j)
	}
	for i := range s.Faults {
		fs, err := resolveFault(f, &s.Faults[i], "F"+strconv.Itoa(i+1), s.Seed)
		if err != nil {
			return nil, fmt.Errorf("faults[%d]: %w", i, err)
		}
		p.Faults = append(p.Faults, fs...)
	}
	// The suite checked metric names and scopes (with their lines).
	for _, k := range s.KPIs {
		spec := kpis.Spec{Name: k.Name, Metric: k.Metric, Scope: k.Scope, Max: k.Max, Min: k.Min, Regress: k.Regress}
		if spec.Name == spec.Metric {
			spec.Name = "" // kpis names it <scope>.<metric>
		}
		p.KPIs = append(p.KPIs, spec)
	}
	return p, nil
}

// telemetryInterval is a suite's telemetry.interval in ps: fastest is the
// backend's shortest (its MinInterval, or the suite minimum of 100us).
func telemetryInterval(v string, caps Capabilities) (int64, error) {
	if v == suite.IntervalFastest {
		return max(int64(caps.MinInterval)*1000, 100*1_000_000), nil
	}
	return units.ParsePs(v)
}

func optDuration(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	return units.ParsePs(s)
}

func resolveJob(f *inventory.Fabric, sj *suite.Job) (Job, error) {
	j := Job{Name: sj.Name, Workload: sj.Workload, Reps: sj.Repetitions, Senders: sj.Senders, Window: sj.Window, Receiver: -1,
		QPs: sj.QPs, Baseline: sj.Baseline}
	var err error
	if sj.Rate != "" {
		if j.RateFrac, j.RateBps, err = units.ParseLoad(sj.Rate); err != nil {
			return j, fmt.Errorf("rate: %w", err)
		}
	}
	if j.Hosts, err = sj.Participants(f); err != nil {
		return j, err
	}
	if j.Size, err = units.ParseBytes(sj.Size); err != nil {
		return j, fmt.Errorf("size: %w", err)
	}
	if j.Start, err = optDuration(sj.Start); err != nil {
		return j, fmt.Errorf("start: %w", err)
	}
	if j.Gap, err = optDuration(sj.Gap); err != nil {
		return j, fmt.Errorf("gap: %w", err)
	}
	if len(j.Hosts) < 2 {
		return j, fmt.Errorf("hosts: a %s needs at least 2 participants, got %d", j.Workload, len(j.Hosts))
	}
	if j.Workload == Incast {
		j.Receiver = j.Hosts[0]
		if sj.Receiver != "" {
			n, ok := f.NodeByName(sj.Receiver)
			if !ok || f.Nodes[n].IsSwitch() {
				return j, fmt.Errorf("receiver: no host named %q", sj.Receiver)
			}
			j.Receiver = hostNumber(f, n)
		}
	}
	return j, nil
}

func hostNumber(f *inventory.Fabric, node int) int {
	for h, n := range f.Hosts {
		if n == node {
			return h
		}
	}
	return -1
}

// resolveFault turns a suite fault into link events (random faults pick
// their links with seed).
func resolveFault(f *inventory.Fabric, sf *suite.Fault, id string, seed uint64) ([]Fault, error) {
	if sf.Kind == "random" {
		return resolveRandomFault(f, sf, id, seed)
	}
	link, dir, what, err := faultTarget(f, sf)
	if err != nil {
		return nil, err
	}
	at, err := optDuration(sf.At)
	if err != nil {
		return nil, fmt.Errorf("at: %w", err)
	}
	until, err := optDuration(sf.Until)
	if err != nil {
		return nil, fmt.Errorf("until: %w", err)
	}
	// The transmit sides the fault hits: one port for a port fault, both
	// ends of the link otherwise.
	l := f.Links[link]
	var ports []string
	portName := func(p int) string { return f.Nodes[f.Ports[p].Node].Name + ":" + f.Ports[p].Name }
	if dir != inventory.DirBA {
		ports = append(ports, portName(l.A))
	}
	if dir != inventory.DirAB {
		ports = append(ports, portName(l.B))
	}
	var out []Fault
	add := func(t int64, up bool, frac float64, d int, kind, desc string) {
		out = append(out, Fault{At: t, Link: link, Up: up, Fraction: frac, Direction: d, Description: desc + " at " + units.FormatPsBrief(t),
			ID: id, Kind: kind, Ports: ports, Host: sf.NIC})
	}
	switch sf.Kind {
	case "down":
		add(at, false, 0, 0, "down", "down "+what)
		if until > 0 {
			add(until, true, 0, 0, "up", "up "+what)
		}
	case "up":
		add(at, true, 0, 0, "up", "up "+what)
	case "degrade":
		add(at, true, sf.Fraction, dir, "degrade", fmt.Sprintf("degrade %s to %s%%", what, strconv.FormatFloat(100*sf.Fraction, 'g', 4, 64)))
		if until > 0 {
			add(until, true, 1, dir, "restore", "restore "+what)
		}
	case "flap":
		period, err := optDuration(sf.Period)
		if err != nil || period <= 0 {
			return nil, fmt.Errorf("period: a flap needs a positive period")
		}
		for i := 0; i < sf.Count; i++ {
			t := at + int64(i)*period
			add(t, false, 0, 0, "flap-down", "flap down "+what)
			add(t+period/2, true, 0, 0, "flap-up", "flap up "+what)
		}
	default:
		return nil, fmt.Errorf("kind: unknown fault kind %q", sf.Kind)
	}
	return out, nil
}

// resolveRandomFault takes down Fraction of the switch-to-switch links
// (inventory.RandomLinkFailures with the suite's seed) at At, up again at Until.
func resolveRandomFault(f *inventory.Fabric, sf *suite.Fault, id string, seed uint64) ([]Fault, error) {
	at, err := optDuration(sf.At)
	if err != nil {
		return nil, fmt.Errorf("at: %w", err)
	}
	until, err := optDuration(sf.Until)
	if err != nil {
		return nil, fmt.Errorf("until: %w", err)
	}
	evs, err := f.RandomLinkFailures(sf.Fraction, seed, at)
	if err != nil {
		return nil, fmt.Errorf("fraction: %w", err)
	}
	var out []Fault
	portName := func(p int) string { return f.Nodes[f.Ports[p].Node].Name + ":" + f.Ports[p].Name }
	for _, ev := range evs {
		l := f.Links[ev.Link]
		what := "link " + f.Nodes[f.Ports[l.A].Node].Name + "-" + f.Nodes[f.Ports[l.B].Node].Name
		ports := []string{portName(l.A), portName(l.B)}
		out = append(out, Fault{At: at, Link: ev.Link, Description: "random down " + what + " at " + units.FormatPsBrief(at), ID: id, Kind: "down", Ports: ports})
		if until > 0 {
			out = append(out, Fault{At: until, Link: ev.Link, Up: true, Description: "up " + what + " at " + units.FormatPsBrief(until), ID: id, Kind: "up", Ports: ports})
		}
	}
	return out, nil
}

// faultTarget finds the link a fault hits, the direction (for a port: its
// transmit side) and a description.
func faultTarget(f *inventory.Fabric, sf *suite.Fault) (link, dir int, what string, err error) {
	switch {
	case sf.Port != "":
		dev, pname, ok := strings.Cut(sf.Port, ":")
		n, found := f.NodeByName(dev)
		if !ok || !found {
			return 0, 0, "", fmt.Errorf("port: %q is not device:port in the fabric", sf.Port)
		}
		for _, p := range f.Nodes[n].Ports {
			if f.Ports[p].Name == pname {
				l := f.Ports[p].Link
				d := inventory.DirAB
				if f.Links[l].B == p {
					d = inventory.DirBA
				}
				return l, d, sf.Port + " (transmit)", nil
			}
		}
		return 0, 0, "", fmt.Errorf("port: %s has no port %q", dev, pname)
	case sf.NIC != "":
		n, found := f.NodeByName(sf.NIC)
		if !found || f.Nodes[n].IsSwitch() || len(f.Nodes[n].Ports) == 0 {
			return 0, 0, "", fmt.Errorf("nic: no host named %q", sf.NIC)
		}
		p := f.Nodes[n].Ports[0]
		return f.Ports[p].Link, 0, sf.NIC + " NIC (" + sf.NIC + ":" + f.Ports[p].Name + ")", nil
	case sf.Link != "":
		ev, err := f.ParseLinkEvent("down:" + sf.Link + "@0")
		if err != nil {
			return 0, 0, "", errors.New("link: " + strings.TrimPrefix(err.Error(), `fault "down:`+sf.Link+`@0": `))
		}
		return ev.Link, 0, "link " + sf.Link, nil
	}
	return 0, 0, "", fmt.Errorf("names no link, port or nic")
}

// allChecks runs the checks that are not nil, in order.
func allChecks(checks ...suite.CheckFunc) suite.CheckFunc {
	return func(s *suite.Suite, errf func(path, format string, args ...any)) {
		for _, c := range checks {
			if c != nil {
				c(s, errf)
			}
		}
	}
}

// check returns the suite check of the named backend's capabilities: one
// error per field that asks for what the backend cannot do.
func (c Capabilities) check(backend string) suite.CheckFunc {
	return func(s *suite.Suite, errf func(path, format string, args ...any)) {
		cannot := func(path string, what, reason, fix string) {
			msg := fmt.Sprintf("the %s backend cannot do %s: %s", backend, what, reason)
			if fix != "" {
				msg += "; " + fix
			}
			errf(path, "%s", msg)
		}
		if l := s.Agents.Launcher; l != "" && l != suite.LauncherSSH && c.Launchers != nil && !slices.Contains(c.Launchers, l) {
			cannot("agents.launcher", "agents.launcher "+l, "it starts the agents with "+strings.Join(c.Launchers, " or "), "srun starts agents on the hardware backend (--inventory)")
		}
		if c.NeedsInventory && s.Fabric.Inventory == "" {
			errf("fabric", "the %s backend runs on the devices of a hardware inventory: give --inventory FILE or set fabric.inventory (docs/inventory.md)", backend)
		}
		// One loop over the feature registry (features.go), asking only
		// about the features the backend cannot do.
		for _, k := range FeatureKinds() {
			reason, no := c.Unsupported[k.Feature]
			if !no {
				continue
			}
			for _, a := range k.Asks(s) {
				cannot(a.Path, k.Doc, reason, a.Fix)
			}
		}
		ft := &s.Features
		for _, need := range c.ECMPHashNeeds {
			if !slices.Contains(ft.ECMP.Hash, need) {
				cannot("features.ecmp.hash", "a hash without "+need, c.ECMPHashReason, "")
				break
			}
		}
		if c.MaxMTU > 0 && s.Transport.MTU > c.MaxMTU {
			cannot("transport.mtu", fmt.Sprintf("an mtu of %d", s.Transport.MTU), c.MaxMTUReason, fmt.Sprintf("at most %d", c.MaxMTU))
		}
		if c.MinInterval > 0 && (s.Telemetry.Enabled == nil || *s.Telemetry.Enabled) {
			if iv, err := units.ParsePs(s.Telemetry.Interval); s.Telemetry.Interval != suite.IntervalFastest && err == nil && time.Duration(iv/1000) < c.MinInterval {
				cannot("telemetry.interval", "telemetry every "+s.Telemetry.Interval, c.MinIntervalReason,
					fmt.Sprintf("at least %v (or telemetry.enabled: false)", c.MinInterval))
			}
		}
		if c.Workloads != nil {
			for i, j := range s.Jobs {
				if !slices.Contains(c.Workloads, j.Workload) {
					cannot(fmt.Sprintf("jobs[%d].workload", i), "the "+j.Workload+" workload",
						"it runs "+strings.Join(c.Workloads, ", "), "")
				}
			}
		}
		if c.FaultKinds != nil {
			for i, f := range s.Faults {
				if !slices.Contains(c.FaultKinds, f.Kind) {
					cannot(fmt.Sprintf("faults[%d].kind", i), f.Kind+" faults",
						"it injects "+strings.Join(c.FaultKinds, ", "), "")
				}
			}
		}
	}
}
