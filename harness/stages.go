package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/analysis"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/kpis"
	"github.com/fabricbench/fabricbench/pathctl"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
	"github.com/fabricbench/fabricbench/units"
)

// A run of one matrix point is a list of stages (pointStages). runPoint
// starts them in order; when one fails, or after the last, it stops every
// stage it started (also the one that failed) in reverse order, so that
// the fabric always comes down and every sink is closed. A stop is
// idempotent: a stage may have stopped what it owns on the way (the jobs
// stage takes the fabric down once the jobs are done, so that the
// telemetry streams end and the collector drains).
//
// A new stage is one stage value here and its methods on pointRun, the
// state the stages share.
type stage struct {
	name  string
	start func(*pointRun) error
	stop  func(*pointRun) // nil: nothing to stop
}

var pointStages = []stage{
	{"prepare", (*pointRun).prepare, nil},
	{"fabric", (*pointRun).fabricUp, (*pointRun).fabricDown},
	{"configure", (*pointRun).configure, nil},
	{"agents", (*pointRun).deployAgents, nil},
	{"telemetry", (*pointRun).startTelemetry, (*pointRun).stopTelemetry},
	{"controller", (*pointRun).startController, (*pointRun).stopController},
	{"jobs", (*pointRun).runJobs, nil},
	{"drain", (*pointRun).drain, nil},
	{"analysis", (*pointRun).analyse, nil},
	{"kpis", (*pointRun).judge, nil},
	{"results", (*pointRun).saveResults, nil},
}

// pointRun is the state of one matrix point's run, built up by its stages.
type pointRun struct {
	ctx    context.Context
	opts   Options
	p      *runspec.RunSpec
	runTag string
	influx *telemetry.InfluxConfig
	prog   *progress

	wall     time.Time
	rel, dir string // the run's directory, relative to opts.Out and not
	run      *results.Run
	w        *runspec.Workload

	// fabric
	b      Backend
	downed bool

	// telemetry
	targets                   []telemetry.TargetSpec
	store                     *telemetry.Store
	mem                       *memSink
	ix                        *telemetry.InfluxSink
	storeClosed, influxClosed bool
	rep                       *liveReporter
	jctx                      context.Context // the jobs' context (fail-fast cancels it)
	stopJobs                  context.CancelFunc
	live                      *liveStage
	cctx                      context.Context // the collectors' context
	cancelColl                context.CancelFunc
	coll                      *telemetry.Collector

	// controller
	ctl     *pathctl.Rerouter
	ctlColl *telemetry.Collector
	ctlDone bool

	// jobs and after
	rr                           *RunResult
	downErr, storeErr, influxErr error
	lost                         map[string]string // targets whose streams failed during the run
	lostErr                      error             // naming them, once analysed
	out                          *analysis.Output
}

// fail marks the run failed with err: the fabric comes down now, so that
// a failure to restore it is reported with the run, and err is classified
// (interrupted, input, infrastructure).
func (r *pointRun) fail(err error) (*results.Run, error) {
	run := r.run
	run.Status, run.Error = results.Error, err.Error()
	if derr := r.down(); derr != nil {
		run.Error += "; down: " + derr.Error()
		err = errors.Join(err, fmt.Errorf("down: %w", derr))
	}
	run.WallS = time.Since(r.wall).Seconds()
	if r.ctx.Err() != nil {
		run.Status = results.Interrupted
		return run, err
	}
	var ie *InputError
	if errors.As(err, &ie) {
		run.ErrorKind = results.ErrorInput
		return run, err
	}
	run.ErrorKind = results.ErrorInfrastructure
	return run, infra(err)
}

// prepare makes the run's directory and builds its workload.
func (r *pointRun) prepare() error {
	if err := os.RemoveAll(r.dir); err != nil {
		return err
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return err
	}
	w, err := runspec.BuildWorkload(r.p.Fabric, r.p.Jobs, r.p.Suite.Seed)
	if err != nil {
		return &InputError{fmt.Errorf("jobs: %w", err)}
	}
	r.w = w
	return nil
}

// logf writes a progress line of this run (none with bars or no progress).
func (r *pointRun) logf() func(string, ...any) {
	if r.opts.Progress == nil || r.opts.Bars {
		return func(string, ...any) {}
	}
	return func(f string, a ...any) { fmt.Fprintf(r.opts.Progress, r.p.ID+": "+f+"\n", a...) }
}

// fabricUp makes the backend and brings the fabric up.
func (r *pointRun) fabricUp() error {
	b, err := newBackend(r.opts.Backend)
	if err != nil {
		return err
	}
	r.b = b
	if pr, ok := b.(Preparer); ok {
		pr.Prepare(Env{RunID: r.p.ID, Dir: r.dir, LabStateRoot: r.opts.LabStateRoot, AgentBinary: r.opts.AgentBinary, Logf: r.logf(),
			Inventory: r.p.Suite.Fabric.Inventory, Apply: r.opts.Apply, ServeGNMI: r.opts.ServeGNMI})
	}
	if err := b.Up(r.ctx, r.p.Fabric); err != nil {
		return fmt.Errorf("up: %w", err)
	}
	return nil
}

// down takes the fabric down once, with its own deadline, also after an
// interrupt; later calls return nil.
func (r *pointRun) down() error {
	if r.b == nil || r.downed {
		return nil
	}
	r.downed = true
	dctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), time.Minute)
	defer cancel()
	return r.b.Down(dctx)
}

func (r *pointRun) fabricDown() { r.down() }

func (r *pointRun) configure() error {
	if err := r.b.Configure(r.ctx, r.p.Features); err != nil {
		return fmt.Errorf("configure: %w", err)
	}
	return nil
}

func (r *pointRun) deployAgents() error {
	if err := r.b.DeployAgents(r.ctx, r.p.Transport); err != nil {
		return fmt.Errorf("deploy agents: %w", err)
	}
	return nil
}

// startTelemetry subscribes to the backend's targets: the embedded store
// always, InfluxDB when configured, the live analysis; none without
// telemetry.
func (r *pointRun) startTelemetry() error {
	p, opts := r.p, r.opts
	r.jctx, r.stopJobs = context.WithCancel(r.ctx)
	r.cctx, r.cancelColl = context.WithCancel(context.WithoutCancel(r.ctx))
	if !p.NoTelemetry {
		targets, err := r.b.TelemetryTargets(r.ctx, p.Interval)
		if err != nil {
			return fmt.Errorf("telemetry targets: %w", err)
		}
		r.targets = targets
		if r.store, err = telemetry.CreateStore(filepath.Join(r.dir, "telemetry.csv.gz")); err != nil {
			return err
		}
		r.run.Files["telemetry"] = filepath.ToSlash(filepath.Join(r.rel, "telemetry.csv.gz"))
	}
	// The analysis reads what arrived through gNMI from memory: the
	// samples the store wrote, in the same order, without reading the
	// file back (on the nightly suite that took as long as a third of
	// the simulation).
	r.mem = &memSink{}
	var sink telemetry.Sink
	if r.store != nil {
		sink = telemetry.Multi(r.store, r.mem)
	}
	if r.influx != nil && !p.NoTelemetry {
		cfg := *r.influx
		cfg.SpillPath = filepath.Join(r.dir, "influx-unsent.lp")
		var iopts []telemetry.InfluxOption
		if opts.Progress != nil {
			iopts = append(iopts, telemetry.WithInfluxLogger(slog.New(slog.NewTextHandler(opts.Progress, &slog.HandlerOptions{Level: slog.LevelWarn}))))
		}
		ix, err := telemetry.NewInfluxSink(cfg, iopts...)
		if err != nil {
			return fmt.Errorf("influxdb: %w", err)
		}
		r.ix = ix
		sink = telemetry.Multi(r.store, r.mem, ix)
		r.run.Telemetry.Influx = redactURL(r.influx.URL) + " bucket " + r.influx.Bucket
	}
	// The live analysis (live.go): every telemetry window as it arrives.
	r.rep = &liveReporter{id: p.ID}
	if opts.Progress != nil {
		r.rep.out = r.prog.line
	}
	if opts.FailFast {
		r.rep.stop = r.stopJobs
	}
	live, err := startLive(p, opts.Backend, r.targets, r.rep.detect)
	if err != nil {
		return fmt.Errorf("live analysis: %w", err)
	}
	r.live = live
	if live != nil && sink != nil {
		sink = telemetry.Multi(sink, live)
	}
	if !p.NoTelemetry {
		r.coll = telemetry.NewCollector(r.targets,
			telemetry.WithPaths(p.Paths...),
			telemetry.WithSampleInterval(p.Interval),
			telemetry.WithRun(r.runTag),
			telemetry.WithHandler(sink.Write),
		)
		if err := r.coll.Start(r.cctx); err != nil {
			return fmt.Errorf("telemetry subscribe: %w", err)
		}
	}
	return nil
}

func (r *pointRun) stopTelemetry() {
	if r.cancelColl != nil {
		r.cancelColl()
	}
	r.live.finish()
	if r.stopJobs != nil {
		r.stopJobs()
	}
	r.closeInflux()
	r.closeStore()
}

func (r *pointRun) closeStore() error {
	if r.store == nil || r.storeClosed {
		return nil
	}
	r.storeClosed = true
	return r.store.Close(context.Background())
}

// closeInflux waits for InfluxDB to acknowledge everything: up to
// InfluxCloseTimeout, or a few seconds once the run is interrupted. What
// is still unwritten then goes to the spill file.
func (r *pointRun) closeInflux() error {
	if r.ix == nil || r.influxClosed {
		return nil
	}
	r.influxClosed = true
	wait := r.opts.InfluxCloseTimeout
	if wait <= 0 {
		wait = 30 * time.Second
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), wait)
	defer cancel()
	stop := context.AfterFunc(r.ctx, func() {
		time.AfterFunc(3*time.Second, cancel)
	})
	defer stop()
	err := r.ix.Close(cctx)
	st := r.ix.Stats()
	r.run.Telemetry.InfluxStats = &results.InfluxStats{Points: st.Points, Written: st.Written, Retried: st.Retried,
		Failed: st.Failed, Errors: st.Errors, LastError: st.LastError}
	if st.Spilled > 0 {
		r.run.Telemetry.InfluxStats.SpillFile = filepath.ToSlash(filepath.Join(r.rel, "influx-unsent.lp"))
	}
	return err
}

func (r *pointRun) startController() error {
	ctl, coll, err := startController(r.cctx, r.b, r.p, r.targets, r.runTag, r.opts)
	r.ctl, r.ctlColl = ctl, coll
	return err
}

// stopController ends the controller of a run that failed on the way (a
// finished run's drain stage waited for it).
func (r *pointRun) stopController() {
	if r.ctlColl != nil && !r.ctlDone {
		r.ctlDone = true
		r.cancelColl()
		r.ctlColl.Wait()
		r.ctl.Close()
	}
}

// runJobs injects the faults, runs the jobs and takes the fabric down:
// Down ends the telemetry streams, so that the collector drains.
func (r *pointRun) runJobs() error {
	if err := r.b.InjectFaults(r.ctx, r.p.Faults); err != nil {
		return fmt.Errorf("faults: %w", err)
	}
	bar := r.prog.add(r.p.ID, len(r.w.Matrix.Flows))
	rr, err := r.b.RunJobs(r.jctx, r.w, bar.update)
	bar.done(rr != nil && !rr.Interrupted)
	if err != nil {
		return fmt.Errorf("run jobs: %w", err)
	}
	r.rr = rr
	// A failed Down (a device not restored, a lab not destroyed) does not
	// lose what the run measured: the run is analysed and then marked as
	// an infrastructure error naming the failure.
	r.downErr = r.down()
	return nil
}

// drainAfterFailedDown is how long drain waits for the telemetry streams
// to end on their own after a failed Down before it ends them.
const drainAfterFailedDown = 10 * time.Second

// drain waits for the collectors and the controller, closes the sinks and
// writes flows.csv.
func (r *pointRun) drain() error {
	p, run, rr := r.p, r.run, r.rr
	var collErr error
	if so, ok := r.b.(StreamsOutlive); ok && so.StreamsOutliveDown() && r.coll != nil {
		r.coll.Stop()
	}
	if r.downErr != nil && r.coll != nil {
		// A failed Down (a lab whose container engine stopped answering)
		// may have left targets streaming that nothing will stop: what the
		// stopped ones send last arrives within the grace, then the
		// subscriptions end, keeping what was received.
		t := time.AfterFunc(drainAfterFailedDown, r.coll.Stop)
		defer t.Stop()
	}
	if r.coll != nil {
		var stats telemetry.CollectStats
		stats, collErr = r.coll.Wait()
		r.lost, collErr = lostTargets(collErr)
		for name, why := range r.lost {
			if stats.Unreachable == nil {
				stats.Unreachable = map[string]string{}
			}
			stats.Unreachable[name] = "failed during the run: " + why
		}
		run.Telemetry.IntervalUs = float64(p.Interval.Microseconds())
		run.Telemetry.Targets = len(r.targets)
		run.Telemetry.Samples = stats.Samples
		run.Telemetry.Store = run.Files["telemetry"]
		run.Telemetry.RunTag = r.runTag
		run.Telemetry.Unreachable = stats.Unreachable
		for _, dev := range sortedNames(stats.Unreachable) {
			what := "UNREACHABLE"
			if _, ok := r.lost[dev]; ok {
				what = "LOST"
			}
			if r.opts.Log != nil {
				fmt.Fprintf(r.opts.Log, "telemetry: %s: %s %s: %s\n", p.ID, dev, what, stats.Unreachable[dev])
			}
		}
	}
	if r.ctlColl != nil {
		_, cerr := r.ctlColl.Wait()
		r.ctl.Close()
		r.ctlDone = true
		run.Controller = controllerResults(p, r.ctl, rr.EpochNs)
		if err := r.ctl.Err(); err != nil && cerr == nil {
			cerr = err
		}
		if cerr != nil {
			collErr = errors.Join(collErr, fmt.Errorf("controller: %w", cerr))
		}
	}
	r.storeErr = r.closeStore()
	r.influxErr = r.closeInflux()
	run.Telemetry.EpochNs = rr.EpochNs
	run.SimEndUs = float64(rr.End) / 1e6
	run.Packets = rr.Packets
	run.Faults, run.FaultsNotReached = reachedFaults(p.Faults, rr.End)
	if err := writeFlows(filepath.Join(r.dir, "flows.csv"), func(h int) string { return p.Fabric.Host(h).Name }, r.w, rr); err != nil {
		return err
	}
	run.Files["flows"] = filepath.ToSlash(filepath.Join(r.rel, "flows.csv"))
	if r.storeErr != nil && collErr != nil && strings.Contains(collErr.Error(), r.storeErr.Error()) {
		r.storeErr = nil // the collector's sink already failed with it
	}
	if err := errors.Join(collErr, r.storeErr); err != nil {
		if r.downErr != nil {
			err = errors.Join(fmt.Errorf("down: %w", r.downErr), err)
		}
		return fmt.Errorf("telemetry: %w", err)
	}
	return nil
}

// analyse analyses what arrived through gNMI, as stored, with the flows'
// outcomes.
func (r *pointRun) analyse() error {
	p, w, rr, run := r.p, r.w, r.rr, r.run
	in := analysis.Input{
		Fabric: p.Fabric, Samples: r.mem.samples(), EpochNs: rr.EpochNs, Ideal: rr.Ideal, Faults: run.Faults,
		LB: p.Transport.LB, Routing: routingMode(p), Opts: analysisOptions(&p.Suite.Analysis),
		Detections: r.live.finish(), NoPFC: noPFC(r.opts.Backend),
	}
	for ji, j := range w.Jobs {
		jin := analysis.JobInput{Name: j.Name, Workload: j.Workload, Hosts: j.Hosts, SizeBytes: j.Size, Repetitions: j.Reps,
			GapPs: j.Gap, Baseline: j.Baseline}
		for fi, fl := range w.Matrix.Flows {
			if w.FlowJob[fi] != ji {
				continue
			}
			o := rr.Flows[fi]
			jin.Flows = append(jin.Flows, analysis.FlowRecord{ID: fl.ID, Src: fl.Src, Dst: fl.Dst, Size: fl.Size,
				Start: o.Start, FCT: o.FCT, Rep: w.FlowRep[fi], Retx: o.Retx, Nacks: o.Nacks, Timeouts: o.Timeouts,
				Spurious: o.Spurious})
		}
		in.Jobs = append(in.Jobs, jin)
	}
	out, err := analysis.Analyze(in)
	if err != nil {
		return fmt.Errorf("analysis: %w", err)
	}
	r.out = out
	run.Jobs = out.Jobs
	run.Anomalies = out.Anomalies
	if run.Anomalies == nil {
		run.Anomalies = []results.Anomaly{}
	}
	run.Imbalances = out.Imbalances
	if run.Imbalances == nil {
		run.Imbalances = []results.Imbalance{}
	}
	run.FaultMatches = out.FaultMatches
	run.CongestionTrees, run.AnalysisNotes = out.CongestionTrees, out.Notes
	addJobExtras(run.Jobs, rr.JobExtra)
	run.ECNProfile = rr.ECNProfile
	return nil
}

// judge evaluates the point's KPIs on the analysis and the backend's
// counters, and keeps the run's fabric metrics.
func (r *pointRun) judge() error {
	p, rr, run := r.p, r.rr, r.run
	extra := map[string]float64{
		"retransmitted": float64(rr.Packets.Retransmitted), "trimmed": float64(rr.Packets.Trimmed),
		"dropped": float64(rr.Packets.Dropped), "ecn_marked_packets": float64(rr.Packets.ECNMarked),
		"incomplete_flows":     float64(countIncomplete(rr)),
		kpis.MetricSentPackets: float64(rr.Packets.Sent),
	}
	if span, payload := flowSpan(rr, r.w); span > 0 {
		extra[kpis.MetricDurationUs], extra[kpis.MetricPayloadBytes] = float64(span)/1e6, float64(payload)
	}
	maps.Copy(extra, kpis.ECNExtras(rr.ECNProfile))
	maps.Copy(extra, rr.Extra)
	run.Metrics = maps.Clone(r.out.Metrics)
	if run.Metrics == nil {
		run.Metrics = map[string]float64{}
	}
	maps.Copy(run.Metrics, extra)
	run.KPIs = judgeUnfinished(kpis.Evaluate(p.KPIs, r.out, extra), p.KPIs, r.out.Jobs, rr.Interrupted)
	if k, ok := unfinishedFlowsKPI(p.KPIs, rr); ok {
		run.KPIs = append(run.KPIs, k)
	}
	if p.NoTelemetry {
		skipTelemetryKPIs(run.KPIs, p.KPIs)
	}
	return nil
}

// saveResults writes plots.json and settles the run's status.
func (r *pointRun) saveResults() error {
	p, rr, run, out := r.p, r.rr, r.run, r.out
	out.Plots.Run = p.ID
	out.Plots.Faults = run.Faults
	plotsRel := filepath.ToSlash(filepath.Join(r.rel, "plots.json"))
	if err := results.SavePlots(filepath.Join(r.opts.Out, plotsRel), &out.Plots); err != nil {
		return err
	}
	run.Files["plots"] = plotsRel
	for _, k := range run.KPIs {
		if k.Verdict == results.Fail && run.Status == results.Pass {
			run.Status = results.Fail
		}
		if k.Verdict == results.Error {
			run.Status = results.Error
		}
	}
	run.AnalysisNotes = append(run.AnalysisNotes, rr.Notes...)
	if len(rr.FabricFaults) > 0 {
		// The fabric under test failed during the jobs: the run fails.
		if run.Status == results.Pass {
			run.Status = results.Fail
		}
		run.Error = "fabric: " + strings.Join(rr.FabricFaults, "; ")
	}
	if r.influxErr != nil {
		// The embedded store is complete and was analysed; InfluxDB is not.
		run.Status, run.Error, run.ErrorKind = results.Error, "influxdb: "+r.influxErr.Error(), results.ErrorInfrastructure
	}
	if len(r.lost) > 0 {
		// What arrived was analysed; the targets that failed are named.
		r.lostErr = telemetryLostError(r.lost, out.Coverage.Stalled)
		msg := r.lostErr.Error()
		if run.Error != "" {
			msg = run.Error + "; " + msg
		}
		run.Status, run.Error, run.ErrorKind = results.Error, msg, results.ErrorInfrastructure
	}
	if len(rr.Failures) > 0 {
		msg := strings.Join(rr.Failures, "; ")
		if run.Error != "" {
			msg = run.Error + "; " + msg
		}
		run.Status, run.Error, run.ErrorKind = results.Error, msg, results.ErrorInfrastructure
	}
	if r.downErr != nil {
		msg := "down: " + r.downErr.Error()
		if run.Error != "" {
			msg = run.Error + "; " + msg
		}
		run.Status, run.Error, run.ErrorKind = results.Error, msg, results.ErrorInfrastructure
	}
	switch {
	case r.failFast():
		run.Status, run.Error, run.ErrorKind = results.Fail, r.rep.failFastError()+": results cover the time up to "+units.FormatPsBrief(rr.End), ""
	case rr.Interrupted:
		run.Status, run.Error, run.ErrorKind = results.Interrupted, "interrupted: results cover the simulated time up to "+units.FormatPsBrief(rr.End), ""
	}
	return nil
}

// failFast reports whether fail-fast (not the user) stopped the jobs.
func (r *pointRun) failFast() bool {
	return r.rr.Interrupted && r.ctx.Err() == nil && r.rep.failFastError() != ""
}

// verdict is what runPoint returns once every stage ran: the run and the
// error that stops the suite (an interrupt, an infrastructure failure).
func (r *pointRun) verdict() (*results.Run, error) {
	r.run.WallS = time.Since(r.wall).Seconds()
	switch {
	case r.rr.Interrupted && !r.failFast():
		return r.run, r.ctx.Err()
	case r.influxErr != nil:
		return r.run, &InfraError{fmt.Errorf("run %s: influxdb: %w", r.p.ID, r.influxErr)}
	case r.lostErr != nil:
		return r.run, &InfraError{fmt.Errorf("run %s: %w", r.p.ID, r.lostErr)}
	case r.downErr != nil:
		return r.run, &InfraError{fmt.Errorf("run %s: down: %w", r.p.ID, r.downErr)}
	}
	return r.run, nil
}
