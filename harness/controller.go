package harness

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/pathctl"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// controllerQueuePath is what the path controller subscribes to: the
// queue counters (transmit octets, backlogged time, high-water, ECN
// marks, drops) of every port of the devices it watches.
const controllerQueuePath = "/qos/interfaces/interface/output/queues/queue/state"

// startController starts the run's path controller, if it has one: a
// pathctl.Rerouter fed by a gNMI collector of its own on the run's
// targets (the devices it watches), steering through the backend. The
// collector is started under cctx, the run's collection context.
func startController(cctx context.Context, b Backend, p *runspec.RunSpec, targets []telemetry.TargetSpec, runTag string, opts Options) (*pathctl.Rerouter, *telemetry.Collector, error) {
	cs := p.Controller
	if cs == nil || p.NoTelemetry {
		return nil, nil, nil
	}
	st, ok := b.(Steerer)
	if !ok {
		return nil, nil, &InputError{fmt.Errorf("controller: the %s backend cannot steer paths", b.Name())}
	}
	var paths []pathctl.PinnedPath
	for _, sp := range p.Features.SRv6Paths {
		pp := pathctl.PinnedPath{Name: sp.Name, Src: sp.Src, Dst: sp.Dst}
		if sp.Job == "" {
			pp.Via = slices.Clone(sp.Via)
		}
		paths = append(paths, pp)
	}
	logf := func(string, ...any) {}
	if opts.Progress != nil && !opts.Bars {
		logf = func(f string, a ...any) { fmt.Fprintf(opts.Progress, p.ID+": "+f+"\n", a...) }
	}
	ctl, err := pathctl.NewRerouter(pathctl.RerouterConfig{Fabric: p.Fabric, Paths: paths, Interval: cs.Interval,
		Rate: cs.Rate, Queue: cs.Queue, Trigger: cs.Trigger, Clear: cs.Clear, HoldDown: cs.HoldDown,
		Steer: st.Steer, Logf: logf, Async: !isClock(b)})
	if err != nil {
		return nil, nil, err
	}
	watch := ctl.Targets()
	var tg []telemetry.TargetSpec
	for _, t := range targets {
		if slices.Contains(watch, t.Name) {
			tg = append(tg, t)
		}
	}
	if len(tg) == 0 {
		return nil, nil, &InputError{fmt.Errorf("controller: no pinned path through one spine to watch")}
	}
	coll := telemetry.NewCollector(tg,
		telemetry.WithPaths(controllerQueuePath),
		telemetry.WithSampleInterval(p.Interval),
		telemetry.WithRun(runTag+"-controller"),
		telemetry.WithHandler(ctl.Handle),
	)
	if err := coll.Start(cctx); err != nil {
		return nil, nil, fmt.Errorf("controller: telemetry subscribe: %w", err)
	}
	if cc, ok := b.(ControlClock); ok {
		cc.SetControlBarrier(func(ctx context.Context, timeNs int64) error {
			return ctl.Barrier(ctx, timeNs, 2*time.Minute)
		})
	}
	return ctl, coll, nil
}

func isClock(b Backend) bool {
	_, ok := b.(ControlClock)
	return ok
}

// controllerResults turns the controller's decisions into results, times
// from the start of the jobs (epochNs).
func controllerResults(p *runspec.RunSpec, ctl *pathctl.Rerouter, epochNs int64) *results.Controller {
	cs := p.Controller
	out := &results.Controller{Kind: cs.Kind, IntervalUs: float64(cs.Interval) / 1e3, HoldDownUs: float64(cs.HoldDown) / 1e3,
		Paths: ctl.Managed(), Decisions: []results.Decision{}}
	for _, d := range ctl.Decisions() {
		rd := results.Decision{AtUs: float64(d.TimeNs-epochNs) / 1e3, Path: d.Path, Src: d.Src, Dst: d.Dst,
			From: d.From, To: d.To, Error: d.Err}
		if d.AppliedNs != 0 {
			rd.AppliedAtUs = float64(d.AppliedNs-epochNs) / 1e3
		}
		for _, e := range d.Evidence {
			rd.Evidence = append(rd.Evidence, results.LinkEvidence{Link: e.Link, State: e.State, RateBps: e.RateBps,
				NominalBps: e.NominalBps, BusyFrac: e.BusyFrac, QueueHWM: e.QueueHWM, ECNMarks: e.ECNMarks, Drops: e.Drops,
				Consecutive: e.Consecutive})
		}
		out.Decisions = append(out.Decisions, rd)
	}
	return out
}
