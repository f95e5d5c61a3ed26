package runspec

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/harness/suite"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/kpis"
	"github.com/fabricbench/fabricbench/units"
)

// Defaults are what a backend settles for a run where the suite leaves it
// open: whether the features that are on by default (features.ecn,
// features.trimming) are on, and the telemetry interval "fastest" means
// (ps).
type Defaults struct {
	ECN, Trimming   bool
	FastestInterval int64
}

// Resolve builds the RunSpec of one checked matrix point: the fabric as
// the suite's checker loaded it (once per distinct fabric, shared
// read-only by the points), the features, transport, jobs, faults,
// controller and KPIs typed. Its errors name the field (without a
// position); the cross-field rules are Validate's.
func Resolve(sp suite.Point, d Defaults) (*RunSpec, error) {
	s := sp.Suite
	f, err := s.LoadedFabric()
	if err != nil {
		return nil, fmt.Errorf("fabric: %w", err)
	}
	// The suite checked its quantities; one that does not parse here is
	// Resolve's error at its field, not a zero.
	var q quantities
	p := &RunSpec{ID: sp.ID, Params: sp.Params, Suite: s, Fabric: f}
	ft := s.Features
	p.Features = Features{
		ECMPHash: ft.ECMP.Hash, ECN: on(ft.ECN.Enabled, d.ECN), KMin: ft.ECN.KMin, KMax: ft.ECN.KMax,
		Trimming: on(ft.Trimming.Enabled, d.Trimming),
		PFC:      ft.PFC != nil && ft.PFC.Enabled, SRv6: ft.SRv6 != nil,
		Adaptive: ft.ECMP.Mode == suite.ECMPModeAdaptive, ARWeighted: ft.ECMP.Weighted,
	}
	if m := ft.ECMP.Mode; m != suite.ECMPModeHash && m != suite.ECMPModeAdaptive && m != suite.ECMPModeFlowlet {
		p.Features.LowDiameter = m
	}
	if ft.ECMP.Mode == suite.ECMPModeFlowlet {
		p.Features.Flowlet = true
		p.Features.FlowletGap = q.ps("features.ecmp.flowlet_gap", ft.ECMP.FlowletGap)
	}
	if ft.PFC != nil && ft.PFC.Enabled {
		p.Features.PFCPriorities = slices.Clone(ft.PFC.Priorities)
	}
	if ft.PFC != nil && ft.PFC.Watchdog != nil {
		w := ft.PFC.Watchdog
		p.Features.PFCWatchdogDetect = q.ps("features.pfc.watchdog.detect", w.Detect)
		p.Features.PFCWatchdogRestore = q.ps("features.pfc.watchdog.restore", w.Restore)
	}
	if p.Features.Adaptive {
		p.Features.ARStaleness = q.ps("features.ecmp.staleness", ft.ECMP.Staleness)
		p.Features.ARQuantum = q.bytes("features.ecmp.quantum", ft.ECMP.Quantum)
	}
	if ft.SRv6 != nil {
		if ft.SRv6.Placement == suite.SRv6PlacementDisjoint {
			p.Features.SRv6Placement, p.Features.SRv6Elephant = ft.SRv6.Placement, 1<<20
			if ft.SRv6.Elephant != "" {
				p.Features.SRv6Elephant = q.bytes("features.srv6.elephant", ft.SRv6.Elephant)
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
	iv, err := telemetryInterval(s.Telemetry.Interval, d)
	if err != nil {
		return nil, fmt.Errorf("telemetry.interval: %w", err)
	}
	p.Interval = units.Duration(iv)
	p.Paths = s.Telemetry.Paths
	p.NoTelemetry = s.Telemetry.Enabled != nil && !*s.Telemetry.Enabled

	if c := s.Controller; c != nil && c.Kind != suite.ControllerNone {
		cs := &ControllerSpec{Kind: c.Kind, Interval: iv / 1000, Rate: c.Thresholds.Rate, Trigger: c.Thresholds.Trigger, Clear: c.Thresholds.Clear}
		if c.Interval != "" {
			cs.Interval = q.ps("controller.interval", c.Interval) / 1000
		}
		cs.HoldDown = 10 * cs.Interval
		if c.HoldDown != "" {
			cs.HoldDown = q.ps("controller.hold_down", c.HoldDown) / 1000
		}
		if c.Thresholds.Queue != "" {
			cs.Queue = q.bytes("controller.thresholds.queue", c.Thresholds.Queue)
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
	if q.err != nil {
		return nil, q.err
	}
	return p, nil
}

// telemetryInterval is a suite's telemetry.interval in ps: fastest is the
// backend's shortest (Defaults.FastestInterval).
func telemetryInterval(v string, d Defaults) (int64, error) {
	if v == suite.IntervalFastest {
		return d.FastestInterval, nil
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
	at, until, err := faultTimes(sf)
	if err != nil {
		return nil, err
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

// faultTimes are a fault's at and until (ps; 0 when not given).
func faultTimes(sf *suite.Fault) (at, until int64, err error) {
	if at, err = optDuration(sf.At); err != nil {
		return 0, 0, fmt.Errorf("at: %w", err)
	}
	if until, err = optDuration(sf.Until); err != nil {
		return 0, 0, fmt.Errorf("until: %w", err)
	}
	return at, until, nil
}

// resolveRandomFault takes down Fraction of the switch-to-switch links
// (inventory.RandomLinkFailures with the suite's seed) at At, up again at Until.
func resolveRandomFault(f *inventory.Fabric, sf *suite.Fault, id string, seed uint64) ([]Fault, error) {
	at, until, err := faultTimes(sf)
	if err != nil {
		return nil, err
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

// on is a default-on feature: as the suite says, else the backend's
// default.
func on(enabled *bool, def bool) bool {
	if enabled != nil {
		return *enabled
	}
	return def
}

// resolveVRFs maps the suite's VRFs onto host numbers.
func resolveVRFs(f *inventory.Fabric, vrfs []suite.VRF) ([]VRF, error) {
	var out []VRF
	for i, v := range vrfs {
		r := VRF{Name: v.Name, Table: v.Table, Leak: append([]string(nil), v.Leak...)}
		for k, h := range v.Hosts {
			n, ok := f.NodeByName(h)
			if !ok || f.Nodes[n].IsSwitch() {
				return nil, fmt.Errorf("features.vrfs[%d].hosts[%d]: no host named %q", i, k, h)
			}
			r.Hosts = append(r.Hosts, hostNumber(f, n))
		}
		out = append(out, r)
	}
	return out, nil
}

// quantities parses a suite's quantities ("" is 0), keeping the first
// error, named by its field.
type quantities struct{ err error }

func (q *quantities) ps(path, v string) int64 {
	return q.keep(path, v, units.ParsePs)
}

func (q *quantities) bytes(path, v string) int64 {
	return q.keep(path, v, units.ParseBytes)
}

func (q *quantities) keep(path, v string, parse func(string) (int64, error)) int64 {
	if v == "" {
		return 0
	}
	n, err := parse(v)
	if err != nil && q.err == nil {
		q.err = fmt.Errorf("%s: %w", path, err)
	}
	return n
}
