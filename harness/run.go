package harness

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fabricbench/fabricbench/analysis"
	"github.com/fabricbench/fabricbench/harness/bringup"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/harness/suite"
	"github.com/fabricbench/fabricbench/internal/fileerr"
	"github.com/fabricbench/fabricbench/kpis"
	"github.com/fabricbench/fabricbench/report"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
	"github.com/fabricbench/fabricbench/units"
)

// Options control a suite run.
type Options struct {
	SuiteFile string
	// Out is the results directory (created; existing results in it are
	// replaced).
	Out     string
	Backend string // default "sim"
	// Influx, when set, overrides the suite's InfluxDB sink.
	Influx *InfluxOptions
	// Progress receives progress bars (a terminal) or lines; nil: none.
	Progress io.Writer
	// Bars draws progress bars instead of lines.
	Bars bool
	// Log receives one line per finished run; nil: none.
	Log io.Writer
	// InfluxCloseTimeout bounds the wait for InfluxDB to acknowledge every
	// point at the end of a run (default 30s; Ctrl-C cuts it to 3s).
	InfluxCloseTimeout time.Duration
	// LabStateRoot is where native labs keep their state (bring-up step
	// and the netns backend; default /run/fabricbench/labs).
	LabStateRoot string
	// AgentBinary is the fabricbench executable deployed to hosts as the
	// transport agent and telemetry exporter (default: this program).
	AgentBinary string
	// Inventory replaces the suite's fabric with a hardware inventory's
	// (run --inventory); Apply lets the backend change the devices'
	// configuration (run --apply).
	Inventory string
	Apply     bool
	// Parallel bounds how many matrix points run at the same time (0: the
	// number of CPUs, runtime.GOMAXPROCS). Backends that cannot run
	// points concurrently (see Concurrent) run one at a time whatever it
	// says. The results do not depend on it: the same runs, in matrix
	// order, with the same values.
	Parallel int
	// ServeGNMI serves each run's telemetry to outside gNMI clients (run
	// --serve-gnmi): the points run one at a time, each serving on the
	// address in turn. Only backends that implement GNMIServing can.
	ServeGNMI *ServeGNMI
	// FailFast stops the suite at the first anomaly the live analysis
	// confirms (bring-up use): that run's jobs stop, what was collected
	// is analysed and kept (status fail), the points after it are not
	// started. Points then run one at a time.
	FailFast bool
}

// parallelism is how many points Run runs at once.
func parallelism(opts Options) int {
	if ok, _ := BackendConcurrent(opts.Backend); !ok || opts.ServeGNMI != nil || opts.FailFast {
		return 1
	}
	if opts.Parallel > 0 {
		return opts.Parallel
	}
	return runtime.GOMAXPROCS(0)
}

// lockedWriter serialises writes of the points running at once; one mutex
// is shared by the writers that may be the same file.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// InfluxOptions select an InfluxDB sink.
type InfluxOptions struct {
	URL, Bucket, Org, TokenFile string
}

// Run plans the suite for the backend and runs every point, writing
// results.json, junit.xml, report.html and per-run files under opts.Out.
// What the backend cannot do is refused while planning (see
// Capabilities), before anything is brought up. It returns the results
// even when a run fails; the error is non-nil for bad input (*InputError),
// for an infrastructure failure (*InfraError, or *SaveError when the
// results could not be written), or when ctx was cancelled.
func Run(ctx context.Context, opts Options) (*results.Results, error) {
	if opts.Backend == "" {
		opts.Backend = "sim"
	}
	plan, err := PlanSuite(ctx, opts.SuiteFile, opts.Backend, opts.Inventory)
	if err != nil {
		return nil, err
	}
	if opts.ServeGNMI != nil {
		b, err := newBackend(opts.Backend)
		if err != nil {
			return nil, &InputError{err}
		}
		if gs, ok := b.(GNMIServing); !ok || !gs.ServesGNMI() {
			return nil, &InputError{fmt.Errorf("--serve-gnmi: the %s backend does not serve its telemetry itself (its devices' exporters and gNMI servers do; subscribe to them)", opts.Backend)}
		}
		if opts.ServeGNMI.Logf == nil && opts.Log != nil {
			sv := *opts.ServeGNMI
			// opts.Log is wrapped in a lock below, before any run.
			sv.Logf = func(f string, a ...any) { fmt.Fprintf(opts.Log, f+"\n", a...) }
			opts.ServeGNMI = &sv
		}
	}
	s, points := plan.Suite, plan.Points
	if opts.Log != nil {
		for _, n := range plan.Notes {
			fmt.Fprintf(opts.Log, "note: %s\n", n)
		}
	}
	// What killed runs left behind (their owner is gone) goes first.
	for _, l := range ReclaimLeftovers(ctx, opts.LabStateRoot) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "%s\n", l)
		}
	}
	if len(points) > 0 && points[0].Suite.Fabric.Inventory != "" {
		opts.Inventory = points[0].Suite.Fabric.Inventory
	}
	influx, err := influxConfig(opts.Influx, s.Telemetry.Sink.Influx)
	if err != nil {
		return nil, &InputError{err}
	}
	if err := os.MkdirAll(filepath.Join(opts.Out, "runs"), 0o755); err != nil {
		return nil, &InfraError{fmt.Errorf("results directory: %w", err)}
	}
	// Progress lines and run lines come from every running point.
	var outMu sync.Mutex
	if opts.Progress != nil && !opts.Bars {
		opts.Progress = &lockedWriter{mu: &outMu, w: opts.Progress}
	}
	if opts.Log != nil {
		opts.Log = &lockedWriter{mu: &outMu, w: opts.Log}
	}
	res := &results.Results{
		Schema: results.Schema, Suite: s.Name, SuiteFile: opts.SuiteFile, Backend: opts.Backend,
		Started: time.Now().UTC(), Status: results.Pass, Tests: testsOf(s),
	}
	for _, p := range points {
		if len(p.NotApplicable) == 0 && p.Fabric != nil {
			res.DUT, res.Topology = dutOf(opts.Backend, p), topologyOf(p.Fabric, p.Fabric.Summary())
			break
		}
	}
	prog := newProgress(ctx, opts.Progress, opts.Bars)
	// The run tag keeps runs of different invocations apart in InfluxDB.
	invocation := s.Name + "-" + res.Started.Format("20060102T150405.000Z")
	var runErr error
	stopped := ""
	if b := s.Bringup; b != nil {
		run, down, err := bringupRun(ctx, b, opts)
		defer down()
		res.Runs = append(res.Runs, *run)
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "%s\n", runLine(run, res.Backend))
		}
		if err != nil {
			runErr = err
		}
		if run.Status != results.Pass {
			stopped = "not started: bring-up validation " + run.Status
		}
	}
	if stopped == "" && runErr == nil && len(points) > 0 {
		if run, err := validateFabric(ctx, opts, s); run != nil {
			res.Runs = append(res.Runs, *run)
			if opts.Log != nil {
				fmt.Fprintf(opts.Log, "%s\n", runLine(run, res.Backend))
			}
			var le liveCheckError
			if errors.As(err, &le) {
				runErr = err // the suite asks what the devices cannot do
				stopped = "not started: " + err.Error()
			} else if err != nil {
				runErr = err
				stopped = "not started: bring-up validation failed: " + run.Error
			} else if run.Status != results.Pass {
				stopped = "not started: bring-up validation " + run.Status
			}
		}
	}
	par := parallelism(opts)
	// The runs of the points in matrix order (nil: not finished), their
	// errors, and what follows from them (res.Runs, the saved files) are
	// guarded by mu: workers finish in any order.
	base := len(res.Runs)
	runs := make([]*results.Run, len(points))
	errs := make([]error, len(points))
	var mu sync.Mutex
	collect := func() {
		res.Runs = res.Runs[:base]
		for _, r := range runs {
			if r != nil {
				res.Runs = append(res.Runs, *r)
			}
		}
	}
	// savedRuns is how many runs results.json held when it was last
	// written (guarded by mu): a full disk keeps the last whole file.
	savedRuns := 0
	save := func() error {
		err := saveAll(opts.Out, res)
		var se *SaveError
		switch {
		case err == nil:
			savedRuns = len(res.Runs)
		case errors.As(err, &se) && len(se.Written) > 0:
			savedRuns = len(res.Runs)
		case errors.As(err, &se):
			se.Earlier = savedRuns
		}
		return err
	}
	next := make(chan int)
	// done[i] is closed when point i's worker is through with it (run or
	// not started): a binary search waits for its probes.
	done := make([]chan struct{}, len(points))
	for i := range done {
		done[i] = make(chan struct{})
	}
	failStop := "" // the run --fail-fast stopped the suite at (guarded by mu)
	failStopped := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return failStop != ""
	}
	var wg sync.WaitGroup
	for range par {
		wg.Go(func() {
			for i := range next {
				if ctx.Err() != nil || failStopped() {
					close(done[i])
					continue // not started: filled in below
				}
				p := points[i]
				var run *results.Run
				var err error
				if len(p.NotApplicable) > 0 {
					run = notApplicableRun(p)
				} else {
					run, err = runPoint(ctx, opts, p, invocation+"/"+p.ID, influx, prog)
					if p.Test != nil && p.Test.LeakCheck && run != nil {
						run.Resources = sampleResources()
					}
				}
				mu.Lock()
				runs[i], errs[i] = run, err
				if opts.FailFast && failStop == "" && (len(run.Anomalies) > 0 || stoppedByFailFast(run)) {
					failStop = run.ID
				}
				if opts.Log != nil {
					fmt.Fprintf(opts.Log, "%s\n", runLine(run, res.Backend))
				}
				// Save after every run so an interrupted suite keeps what
				// it has: the finished runs, in matrix order. A failed save
				// is retried by the next one; the last one counts.
				collect()
				finish(res)
				save()
				mu.Unlock()
				close(done[i])
			}
		})
	}
	// A binary-search test runs only its probes, each search in its own
	// goroutine feeding the workers one probe at a time.
	searches, inSearch := searchGroups(points)
	var swg sync.WaitGroup
	if stopped == "" {
		for _, g := range searches {
			swg.Go(func() {
				g.run(ctx, next, done, func(i int) *results.Run {
					mu.Lock()
					defer mu.Unlock()
					return runs[i]
				}, failStopped)
			})
		}
	}
feed:
	for i := range points {
		if stopped != "" || ctx.Err() != nil || failStopped() {
			break
		}
		if inSearch[i] {
			continue
		}
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	swg.Wait()
	close(next)
	wg.Wait()
	finishSearches(searches, points, runs, res)
	finishLeakChecks(points, runs, res)
	for i, p := range points {
		if runs[i] != nil {
			continue
		}
		why := stopped
		switch {
		case why != "":
		case failStop != "":
			why = "not started: " + failFastPrefix + " after run " + failStop + " found an anomaly"
		default:
			why = "not started: the suite was interrupted"
		}
		runs[i] = &results.Run{ID: p.ID, Test: testName(p), Params: p.Params, Seed: p.Suite.Seed, Status: results.Skipped, Error: why}
	}
	collect()
	// The first error in matrix order, whichever finished first.
	for _, err := range errs {
		if err != nil && runErr == nil {
			runErr = err
		}
	}
	prog.wait()
	finish(res)
	if ctx.Err() != nil {
		res.Status = results.Interrupted
	}
	// A failed save is reported also after a failed run (a full disk
	// fails both): the CLI must not claim files it could not write.
	if err := save(); err != nil {
		runErr = errors.Join(runErr, err)
	}
	if runErr == nil && ctx.Err() != nil {
		runErr = ctx.Err()
	}
	return res, runErr
}

// SaveError is a results file that could not be written (a full disk, a
// read-only directory): Written lists what was written nevertheless
// (results.json when only the reports failed).
type SaveError struct {
	Written []string
	// Earlier is, when results.json could not be written, how many runs
	// the results.json an earlier save of this suite left holds (0: none).
	Earlier int
	Err     error
}

func (e *SaveError) Error() string { return e.Err.Error() }
func (e *SaveError) Unwrap() error { return e.Err }

// saveAll writes results.json, then junit.xml and report.html from it.
func saveAll(dir string, res *results.Results) error {
	if err := results.Save(dir, res); err != nil {
		return &SaveError{Err: fmt.Errorf("writing results: %w", err)}
	}
	junit := filepath.Join(dir, report.JUnitFile)
	before, _ := os.Stat(junit)
	if err := renderReports(dir); err != nil {
		written := []string{filepath.Join(dir, results.FileName)}
		// junit.xml is written before report.html: name it when this
		// render replaced it.
		if after, err := os.Stat(junit); err == nil && (before == nil || !os.SameFile(before, after)) {
			written = append(written, junit)
		}
		return &SaveError{Written: written, Err: fmt.Errorf("writing reports: %w", err)}
	}
	return nil
}

// renderReports is report.Render; tests replace it to fail like a full
// disk.
var renderReports = report.Render

// finish computes the summary and overall status.
func finish(res *results.Results) {
	res.Finished = time.Now().UTC()
	sum := results.Summary{Runs: len(res.Runs)}
	status := results.Pass
	bringupFailed, failFast := false, false
	failed := 0 // failed KPIs that fail the suite
	for _, r := range res.Runs {
		for _, k := range r.KPIs {
			sum.KPIs++
			switch k.Verdict {
			case results.Pass:
				sum.Passed++
			case results.Fail:
				sum.Failed++
				if r.Search != results.SearchAbove {
					failed++
				}
			case results.Skipped:
				sum.Skipped++
			default:
				sum.Errors++
			}
		}
		sum.Anomalies += len(r.Anomalies)
		if r.Bringup != nil {
			sum.Checks += len(r.Bringup.Checks)
			sum.Causes += len(r.Bringup.Causes)
			for _, c := range r.Bringup.Checks {
				if c.Verdict != results.Pass {
					sum.ChecksFailed++
				}
			}
			if r.Status == results.Fail {
				bringupFailed = true
			}
		}
		failFast = failFast || stoppedByFailFast(&r)
		switch r.Status {
		case results.NotApplicable:
			sum.RunsNotApplicable++
		case results.Error:
			status = results.Error
			sum.RunsErrored++
		case results.Interrupted, results.Skipped:
			if status != results.Error {
				status = results.Interrupted
			}
			if r.Status == results.Skipped {
				sum.RunsSkipped++
			} else {
				sum.RunsInterrupted++
			}
		}
	}
	if status == results.Pass && sum.Errors > 0 {
		status = results.Error
	}
	if status == results.Pass && failed > 0 {
		status = results.Fail
	}
	// A failed bring-up skips the runs: the suite failed, it was not
	// interrupted.
	if bringupFailed && status != results.Error {
		status = results.Fail
	}
	// So does --fail-fast at an anomaly.
	if failFast && status != results.Error {
		status = results.Fail
	}
	res.Summary, res.Status = sum, status
}

// runLine is a run's one-line summary. On the simulator it gives the
// simulated time the run covered; elsewhere only the wall time is real.
func runLine(r *results.Run, backend string) string {
	pass, fail := 0, 0
	for _, k := range r.KPIs {
		switch k.Verdict {
		case results.Pass:
			pass++
		case results.Skipped:
		default:
			fail++
		}
	}
	line := fmt.Sprintf("run %-24s %-11s %d/%d KPIs pass, %s, ",
		r.ID, r.Status, pass, pass+fail, runspec.Plural(len(r.Anomalies), "anomaly", "anomalies"))
	if backend == "" || backend == "sim" {
		line += fmt.Sprintf("%.0f µs simulated, %.1f s", r.SimEndUs, r.WallS)
	} else {
		line += fmt.Sprintf("%.1f s", r.WallS)
	}
	if r.Error != "" {
		line += ": " + r.Error
	}
	return line
}

// runPoint runs one matrix point: its stages (stages.go) in order, then
// stopped in reverse. The returned Run is always usable; err is an
// infrastructure error (or ctx's).
func runPoint(ctx context.Context, opts Options, p *runspec.RunSpec, runTag string, influx *telemetry.InfluxConfig, prog *progress) (*results.Run, error) {
	rel := filepath.Join("runs", p.ID)
	r := &pointRun{
		ctx: ctx, opts: opts, p: p, runTag: runTag, influx: influx, prog: prog,
		wall: time.Now(), rel: rel, dir: filepath.Join(opts.Out, rel),
		run: &results.Run{
			ID: p.ID, Test: testName(p), Params: p.Params, Seed: p.Suite.Seed, Status: results.Pass,
			Fabric: p.Fabric.Summary(), Config: pointConfig(p),
			Files: map[string]string{},
		},
	}
	started := 0
	defer func() {
		for i := started - 1; i >= 0; i-- {
			if stop := pointStages[i].stop; stop != nil {
				stop(r)
			}
		}
	}()
	for _, st := range pointStages {
		started++ // a stage that fails is stopped too
		if err := st.start(r); err != nil {
			return r.fail(err)
		}
	}
	return r.verdict()
}

// validateFabric runs the backend's bring-up validation (Validator) as
// the suite's "bringup" run, and after a pass its check of the suite
// against what it read (LiveChecker: the run is then in error, with an
// *InputError); nil when the backend has none.
func validateFabric(ctx context.Context, opts Options, s *suite.Suite) (*results.Run, error) {
	b, err := newBackend(opts.Backend)
	if err != nil {
		return nil, nil
	}
	v, ok := b.(Validator)
	if !ok {
		return nil, nil
	}
	start := time.Now()
	logf := func(string, ...any) {}
	if opts.Progress != nil && !opts.Bars {
		logf = func(f string, a ...any) { fmt.Fprintf(opts.Progress, "bringup: "+f+"\n", a...) }
	}
	out, err := v.ValidateFabric(ctx, Env{RunID: "bringup", Dir: filepath.Join(opts.Out, "runs", "bringup"), LabStateRoot: opts.LabStateRoot,
		AgentBinary: opts.AgentBinary, Logf: logf, Inventory: opts.Inventory, Apply: opts.Apply})
	run := &results.Run{ID: "bringup", Fabric: opts.Inventory, WallS: time.Since(start).Seconds(), Bringup: out}
	switch {
	case err != nil:
		run.Status, run.Error, run.ErrorKind = results.Error, err.Error(), results.ErrorInfrastructure
		var ie *InputError
		if errors.As(err, &ie) {
			run.ErrorKind = results.ErrorInput
			return run, err
		}
		return run, &InfraError{err}
	case len(bringup.Failed(out)) > 0:
		run.Status = results.Fail
		var why []string
		for _, c := range bringup.Failed(out) {
			why = append(why, c.Name+" ["+c.Device+"]: "+c.Evidence)
		}
		run.Error = "bring-up validation failed: " + strings.Join(why, "; ")
	default:
		run.Status = results.Pass
		if lc, ok := b.(LiveChecker); ok && s != nil {
			if _, err := s.PointsChecked(lc.LiveCheck()); err != nil {
				// The checks passed, but the suite asks what the devices
				// cannot do: bad input.
				run.Status, run.Error, run.ErrorKind = results.Error, err.Error(), results.ErrorInput
				return run, &InputError{liveCheckError{err}}
			}
		}
	}
	return run, nil
}

// liveCheckError is what a LiveChecker refused.
type liveCheckError struct{ error }

func (e liveCheckError) Unwrap() error { return e.error }

// reachedFaults lists the fault events at or before end (backend time
// when the run ended) and counts the later ones: those never happened.
func reachedFaults(faults []runspec.Fault, end int64) ([]results.Fault, int) {
	var out []results.Fault
	later := 0
	for _, ft := range faults {
		if ft.At > end {
			later++
			continue
		}
		out = append(out, results.Fault{AtUs: float64(ft.At) / 1e6, Description: ft.Description,
			ID: ft.ID, Kind: ft.Kind, Ports: ft.Ports, Host: ft.Host})
	}
	return out, later
}

// memSink keeps every sample it is given, in order, in fixed-size chunks
// (growing it never copies what it holds).
type memSink struct {
	chunks [][]telemetry.Sample
	n      int
}

const memChunk = 1 << 16

func (m *memSink) Write(batch []telemetry.Sample) error {
	m.n += len(batch)
	for len(batch) > 0 {
		if len(m.chunks) == 0 || len(m.chunks[len(m.chunks)-1]) == memChunk {
			m.chunks = append(m.chunks, make([]telemetry.Sample, 0, memChunk))
		}
		c := &m.chunks[len(m.chunks)-1]
		k := min(memChunk-len(*c), len(batch))
		*c = append(*c, batch[:k]...)
		batch = batch[k:]
	}
	return nil
}

func (m *memSink) Close(context.Context) error { return nil }

// samples returns the samples in one slice, releasing each chunk once
// copied.
func (m *memSink) samples() []telemetry.Sample {
	if m.n == 0 {
		return nil
	}
	out := make([]telemetry.Sample, 0, m.n)
	for i, c := range m.chunks {
		out = append(out, c...)
		m.chunks[i] = nil
	}
	m.chunks = nil
	return out
}

// skipTelemetryKPIs skips the KPIs of a run without telemetry that are
// computed from it (every fabric metric but the backend's counters): with
// no samples they would pass for want of evidence. kp[i] is the result of
// specs[i].
func skipTelemetryKPIs(kp []results.KPI, specs []kpis.Spec) {
	for i := range kp {
		if i >= len(specs) || !kpis.NeedsTelemetry(specs[i].Metric) {
			continue
		}
		kp[i].Verdict, kp[i].Value = results.Skipped, 0
		kp[i].Message = "not evaluated: telemetry is disabled (telemetry.enabled: false)"
	}
}

// judgeUnfinished settles the KPIs of jobs that did not finish. In an
// interrupted run they were not measured: their KPIs, and the
// incomplete_flows count, are skipped. In a run that ended on its own, a
// KPI of a job that did not finish which has no value (an FCT without a
// finished flow, a completion time of an incomplete job) fails: that is
// the fabric's verdict, not an error of the harness. kp[i] is the result
// of specs[i].
func judgeUnfinished(kp []results.KPI, specs []kpis.Spec, jobs []results.Job, interrupted bool) []results.KPI {
	scope := map[string]string{}
	for _, m := range kpis.Metrics() {
		scope[m.Name] = m.Scope
	}
	byName := map[string]*results.Job{}
	for i := range jobs {
		byName[jobs[i].Name] = &jobs[i]
	}
	for i := range kp {
		k := &kp[i]
		if i >= len(specs) || k.Verdict == results.Skipped {
			continue
		}
		switch scope[specs[i].Metric] {
		case kpis.ScopeFabric:
			if interrupted && specs[i].Metric == "incomplete_flows" {
				k.Verdict, k.Value = results.Skipped, 0
				k.Message = "not evaluated: the run was interrupted before every job finished"
			}
		case kpis.ScopeJob:
			j := byName[specs[i].Scope]
			if j == nil || j.Completed >= j.Flows {
				continue
			}
			switch {
			case interrupted:
				what := "finished"
				if j.Completed == 0 && j.StartUs < 0 {
					what = "started"
				}
				k.Verdict, k.Value = results.Skipped, 0
				k.Message = fmt.Sprintf("not evaluated: the run was interrupted before job %s %s (%d of %d flows finished)", j.Name, what, j.Completed, j.Flows)
			case k.Verdict == results.Error:
				k.Verdict, k.Value = results.Fail, 0
				k.Message = fmt.Sprintf("job %s did not finish: %d of %d flows finished, so %s has no value", j.Name, j.Completed, j.Flows, k.Metric)
			}
		}
	}
	return kp
}

// analysisOptions maps a suite's analysis section (defaults filled by
// suite.Load) onto analysis.Options.
func analysisOptions(a *suite.Analysis) analysis.Options {
	backlog := a.Culprit.Backlog.Bytes() // 0: the analysis default
	return analysis.Options{
		SymZ: a.Symmetry.Z, SymMinDeviation: a.Symmetry.MinDeviation,
		VictimDeviation: a.Symmetry.VictimDeviation, ImbalanceCV: a.Symmetry.ImbalanceCV,
		StragLow: a.Straggler.Low, StragHigh: a.Straggler.High, StragMinMiddle: a.Straggler.MinMiddle,
		BacklogBytes: float64(backlog), Capacity: a.Culprit.Capacity, Loss: a.Culprit.Loss,
		MinIntervals: a.Culprit.MinIntervals, MinBoundIntervals: a.Culprit.MinBoundIntervals, MinLostPackets: float64(a.Culprit.MinLostPackets),
		MergeGap: a.Culprit.MergeGap,
	}
}

// routingMode is the point's routing mode as analysis.Input.Routing
// names it.
func routingMode(p *runspec.RunSpec) string {
	switch {
	case p.Features.LowDiameter != "":
		return p.Features.LowDiameter
	case p.Features.Adaptive:
		return analysis.RoutingAdaptive
	}
	return analysis.RoutingHash
}

// redactURL drops a password from a URL before it is stored or shown.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// unfinishedFlowsKPI is the implicit verdict on flows that did not finish
// in a run that ended on its own (not interrupted): they fail the run,
// whatever its other KPIs say, unless the suite judges them itself with a
// KPI on incomplete_flows.
func unfinishedFlowsKPI(specs []kpis.Spec, rr *RunResult) (results.KPI, bool) {
	n := countIncomplete(rr)
	if n == 0 || rr.Interrupted {
		return results.KPI{}, false
	}
	for _, sp := range specs {
		if sp.Metric == "incomplete_flows" {
			return results.KPI{}, false
		}
	}
	msg := fmt.Sprintf("%d of %d flows did not finish by the end of the run at %s", n, len(rr.Flows), units.FormatPsBrief(rr.End))
	if rr.EndReason != "" {
		msg += ": " + rr.EndReason
	}
	return results.KPI{Name: "fabric.incomplete_flows", Metric: "incomplete_flows", Scope: "fabric", Op: "<=",
		Threshold: 0, Value: float64(n), Unit: "count", Verdict: results.Fail, Message: msg}, true
}

// flowSpan returns the span of the finished flows (ps: first start to
// last end) and their payload (bytes).
func flowSpan(rr *RunResult, w *runspec.Workload) (span, payload int64) {
	first, last := int64(-1), int64(-1)
	for i, f := range rr.Flows {
		if f.FCT < 0 || f.Start < 0 || i >= len(w.Matrix.Flows) {
			continue
		}
		if first < 0 || f.Start < first {
			first = f.Start
		}
		last = max(last, f.Start+f.FCT)
		payload += w.Matrix.Flows[i].Size
	}
	if first < 0 {
		return 0, 0
	}
	return last - first, payload
}

func countIncomplete(rr *RunResult) int {
	n := 0
	for _, f := range rr.Flows {
		if f.FCT < 0 {
			n++
		}
	}
	return n
}

func pointConfig(p *runspec.RunSpec) map[string]string {
	c := map[string]string{
		"cc": p.Transport.CC, "lb": p.Transport.LB, "mtu": strconv.Itoa(p.Transport.MTU),
		"ecn": strconv.FormatBool(p.Features.ECN), "trimming": strconv.FormatBool(p.Features.Trimming),
		"ecmp_hash": fmt.Sprint(p.Features.ECMPHash), "telemetry_interval": p.Interval.String(),
		"seed": strconv.FormatUint(p.Suite.Seed, 10),
	}
	if p.NoTelemetry {
		c["telemetry_interval"] = "off"
	}
	if p.Fabric != nil && p.Fabric.NumPlanes() > 1 {
		c["planes"] = strconv.Itoa(p.Fabric.NumPlanes())
		c["plane_lb"] = p.Transport.Planes
	}
	if p.Features.ECN {
		c["ecn_kmin"] = strconv.FormatFloat(p.Features.KMin, 'g', -1, 64)
		c["ecn_kmax"] = strconv.FormatFloat(p.Features.KMax, 'g', -1, 64)
	}
	if p.Features.QueueBytes > 0 {
		c["queue_bytes"] = strconv.FormatInt(p.Features.QueueBytes, 10)
	} else {
		c["queue_bytes"] = "bdp"
	}
	return c
}

// writeFlows stores every flow's outcome as CSV. src and dst are host
// numbers (as in traffic matrices); src_host and dst_host, after the
// columns readers by position know, their names in the fabric; error,
// last, why a flow did not complete.
func writeFlows(path string, hostName func(int) string, w *runspec.Workload, rr *RunResult) error {
	// Written whole or not at all (a full disk leaves no partial file).
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.Write([]string{"id", "job", "rep", "src", "dst", "size_bytes", "start_us", "fct_us", "ideal_us", "retransmitted", "nacks", "timeouts", "spurious_retransmits", "src_host", "dst_host", "error"})
	us := func(ps int64) string {
		if ps < 0 {
			return ""
		}
		return strconv.FormatFloat(float64(ps)/1e6, 'f', 3, 64)
	}
	for i, fl := range w.Matrix.Flows {
		o := rr.Flows[i]
		ideal := int64(-1)
		if rr.Ideal != nil {
			ideal = rr.Ideal(fl.Src, fl.Dst, fl.Size)
		}
		cw.Write([]string{strconv.Itoa(fl.ID), w.Jobs[w.FlowJob[i]].Name, strconv.Itoa(w.FlowRep[i]),
			strconv.Itoa(fl.Src), strconv.Itoa(fl.Dst), strconv.FormatInt(fl.Size, 10),
			us(o.Start), us(o.FCT), us(ideal),
			strconv.FormatUint(o.Retx, 10), strconv.FormatUint(o.Nacks, 10), strconv.FormatUint(o.Timeouts, 10),
			strconv.FormatUint(o.Spurious, 10), hostName(fl.Src), hostName(fl.Dst), o.Error})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return results.WriteFileAtomic(path, buf.Bytes())
}

// influxConfig merges the command-line InfluxDB options over the suite's
// sink and reads the token.
func influxConfig(cli *InfluxOptions, fromSuite *suite.Influx) (*telemetry.InfluxConfig, error) {
	var o InfluxOptions
	switch {
	case cli != nil && cli.URL != "":
		o = *cli
	case fromSuite != nil:
		o = InfluxOptions{URL: fromSuite.URL, Bucket: fromSuite.Bucket, Org: fromSuite.Org, TokenFile: fromSuite.TokenFile}
	}
	if o.URL == "" {
		return nil, nil
	}
	if o.Bucket == "" {
		return nil, fmt.Errorf("--influx-bucket: required with --influx (InfluxDB 1.8: db/retention, e.g. fabricbench/autogen)")
	}
	tok, err := telemetry.ReadToken(o.TokenFile)
	if err != nil {
		return nil, fmt.Errorf("influx token: %w", err)
	}
	return &telemetry.InfluxConfig{URL: o.URL, Bucket: o.Bucket, Org: o.Org, Token: tok}, nil
}

// bringupRun runs the suite's bring-up step as the run "bringup".
func bringupRun(ctx context.Context, b *suite.Bringup, opts Options) (*results.Run, func(), error) {
	start := time.Now()
	wait := b.BGPWait.Duration()
	converge := time.Duration(0)
	if b.Deploy {
		converge = time.Minute
	}
	if b.Converge.IsSet() {
		converge = b.Converge.Duration()
	}
	logf := func(string, ...any) {}
	if opts.Progress != nil {
		logf = func(f string, a ...any) { fmt.Fprintf(opts.Progress, f+"\n", a...) }
	}
	out, down, err := bringup.Step(ctx, bringup.StepOptions{Topology: b.Topology, Deploy: b.Deploy, Teardown: b.Teardown,
		Runtime: string(b.Runtime), BGPWait: wait, Converge: converge, StateRoot: opts.LabStateRoot, Logf: logf})
	run := &results.Run{ID: "bringup", Fabric: b.Topology, WallS: time.Since(start).Seconds(), Bringup: out}
	switch {
	case err != nil:
		run.Status, run.Error, run.ErrorKind = results.Error, err.Error(), results.ErrorInfrastructure
		var fe *fileerr.Error
		if errors.As(err, &fe) {
			run.ErrorKind = results.ErrorInput // the topology file
			err = &InputError{err}
		} else {
			err = &InfraError{err}
		}
	case len(bringup.Failed(out)) > 0:
		run.Status = results.Fail
	default:
		run.Status = results.Pass
	}
	return run, down, err
}

func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
