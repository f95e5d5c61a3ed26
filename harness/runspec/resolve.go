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
// controller and KPIs typed. The suite's quantities are typed when they
// are decoded (suite.Duration, suite.Size, ...): Resolve parses none of
// them again. Its errors name the field (without a position); the
// cross-field rules are Validate's.
func Resolve(sp suite.Point, d Defaults) (*RunSpec, error) {
	s := sp.Suite
	f, err := s.LoadedFabric()
	if err != nil {
		return nil, fmt.Errorf("fabric: %w", err)
	}
	p := &RunSpec{ID: sp.ID, Params: sp.Params, Suite: s, Fabric: f}
	ft := s.Features
	p.Features = Features{
		ECMPHash: words(ft.ECMP.Hash), ECN: on(ft.ECN.Enabled, d.ECN), KMin: ft.ECN.KMin, KMax: ft.ECN.KMax,
		Trimming: on(ft.Trimming.Enabled, d.Trimming),
		PFC:      ft.PFC != nil && ft.PFC.Enabled, SRv6: ft.SRv6 != nil,
		Adaptive: ft.ECMP.Mode == suite.ECMPModeAdaptive, ARWeighted: ft.ECMP.Weighted,
	}
	if m := ft.ECMP.Mode; m != suite.ECMPModeHash && m != suite.ECMPModeAdaptive && m != suite.ECMPModeFlowlet {
		p.Features.LowDiameter = string(m)
	}
	if ft.ECMP.Mode == suite.ECMPModeFlowlet {
		p.Features.Flowlet = true
		p.Features.FlowletGap = ft.ECMP.FlowletGap.Ps()
	}
	if ft.PFC != nil && ft.PFC.Enabled {
		p.Features.PFCPriorities = slices.Clone(ft.PFC.Priorities)
	}
	if ft.PFC != nil && ft.PFC.Watchdog != nil {
		w := ft.PFC.Watchdog
		p.Features.PFCWatchdogDetect = w.Detect.Ps()
		p.Features.PFCWatchdogRestore = w.Restore.Ps()
	}
	if p.Features.Adaptive {
		p.Features.ARStaleness = ft.ECMP.Staleness.Ps()
		p.Features.ARQuantum = ft.ECMP.Quantum.Bytes()
	}
	if ft.SRv6 != nil {
		if ft.SRv6.Placement == suite.SRv6PlacementDisjoint {
			p.Features.SRv6Placement, p.Features.SRv6Elephant = string(ft.SRv6.Placement), 1<<20
			if ft.SRv6.Elephant.IsSet() {
				p.Features.SRv6Elephant = ft.SRv6.Elephant.Bytes()
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
	if q := ft.Queue; q.LongestPath() {
		if !f.LowDiameter() {
			return nil, fmt.Errorf("features.queue: longest-path sizes on the source-guided paths of a dragonfly or slimfly fabric; %s is neither", f.Name)
		}
		p.Features.QueueLongestPath = true
	} else if !q.BDP() {
		p.Features.QueueBytes = q.Bytes()
	}
	p.Features.SimEnd, p.Features.Reconverge = s.Sim.End.Ps(), s.Sim.Reconverge.Ps()
	p.Features.StallAfter = s.Sim.StallAfter.Ps()
	if s.Sim.StallAfter.Off() {
		p.Features.StallAfter = -1
	}
	if p.Features.SimEnd == 0 {
		p.Features.SimEnd = 1e12 // 1 s of simulated time at most
	}
	t := s.Transport
	p.Transport = Transport{CC: string(t.CC), LB: string(t.LB), Planes: string(t.Planes), MTU: t.MTU, QuickAdapt: t.QuickAdapt, FastIncrease: t.FastIncrease, EntropyRun: t.EntropyRun, Seed: s.Seed,
		Launcher: string(s.Agents.Launcher)}
	if p.TransportParams, err = p.Transport.Params(); err != nil {
		return nil, fmt.Errorf("transport: %w", err) // the suite checked cc, lb and planes
	}
	iv := s.Telemetry.Interval.Ps()
	if s.Telemetry.Interval.Fastest() {
		iv = d.FastestInterval
	}
	p.Interval = units.Duration(iv)
	p.Paths = s.Telemetry.Paths
	p.NoTelemetry = s.Telemetry.Enabled != nil && !*s.Telemetry.Enabled

	if c := s.Controller; c != nil && c.Kind != suite.ControllerNone {
		cs := &ControllerSpec{Kind: string(c.Kind), Interval: iv / 1000, Rate: c.Thresholds.Rate, Trigger: c.Thresholds.Trigger, Clear: c.Thresholds.Clear}
		if c.Interval.IsSet() {
			cs.Interval = c.Interval.Ps() / 1000
		}
		cs.HoldDown = 10 * cs.Interval
		if c.HoldDown.IsSet() {
			cs.HoldDown = c.HoldDown.Ps() / 1000
		}
		cs.Queue = c.Thresholds.Queue.Bytes()
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
		spec := kpis.Spec{Name: k.Name, Metric: k.Metric, Scope: k.Scope, Max: k.Max, Min: k.Min, Regress: k.Regress.String()}
		if spec.Name == spec.Metric {
			spec.Name = "" // kpis names it <scope>.<metric>
		}
		p.KPIs = append(p.KPIs, spec)
	}
	return p, nil
}

func resolveJob(f *inventory.Fabric, sj *suite.Job) (Job, error) {
	j := Job{Name: sj.Name, Workload: string(sj.Workload), Reps: sj.Repetitions, Senders: sj.Senders, Window: sj.Window, Receiver: -1,
		QPs: sj.QPs, Baseline: sj.Baseline}
	j.RateFrac, j.RateBps = sj.Rate.Share(), sj.Rate.BitRate()
	j.Size, j.Start, j.Gap = sj.Size.Bytes(), sj.Start.Ps(), sj.Gap.Ps()
	var err error
	if j.Hosts, err = sj.Participants(f); err != nil {
		return j, err
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
	at, until := sf.At.Ps(), sf.Until.Ps()
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
		period := sf.Period.Ps()
		if period <= 0 {
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
	at, until := sf.At.Ps(), sf.Until.Ps()
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

// words are a suite's words as strings.
func words[S ~string](ws []S) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = string(w)
	}
	return out
}
