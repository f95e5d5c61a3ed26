package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/hwbackend"    // the "hardware" backend
	_ "github.com/fabricbench/fabricbench/harness/labbackend" // the "netns" backend
	"github.com/fabricbench/fabricbench/harness/runspec"
	_ "github.com/fabricbench/fabricbench/harness/simbackend" // the "sim" backend
	"github.com/fabricbench/fabricbench/harness/suite"
	"github.com/fabricbench/fabricbench/report"
	"github.com/fabricbench/fabricbench/results"
)

const exitInterrupted = results.ExitInterrupted // stopped by Ctrl-C (130); what was collected is kept

type runOpts struct {
	out, backend, agentBinary            string
	influx, influxBucket, influxOrg, tok string
	quiet                                bool
	influxTimeout                        time.Duration
	parallel                             int
	parallelSet                          bool
	inventory                            string
	apply, backendSet                    bool
	serve                                serveOpts
	failFast                             bool
}

func newRunCmd() *cobra.Command {
	var o runOpts
	var so slurmOpts
	cmd := &cobra.Command{
		Use:   "run SUITE",
		Short: "Run a suite: bring up the fabric, run its jobs, collect gNMI telemetry, judge KPIs and write reports",
		Long: `Run a suite file (YAML; see examples/suites/ and docs/suites.md).

Every point of the suite's matrix runs on the backend: fabric up, features
configured, transport agents deployed, gNMI telemetry subscribed, faults
injected, jobs run, fabric down. The results directory then holds
results.json, junit.xml, report.html and, per run, runs/<id>/telemetry.csv.gz
(the embedded telemetry store), flows.csv and plots.json.

Independent matrix points run concurrently, up to --parallel at once (the
sim backend; the netns backend runs one at a time). The results are those
of a serial run: the same values, runs listed in matrix order.

What the backend cannot do (a feature, fault kind, workload, telemetry
interval or MTU) is refused before anything is brought up, at the suite
field's file:line:col.

--inventory FILE (or a suite's fabric.inventory) runs the suite on the
real devices of a hardware inventory (docs/inventory.md) with the
"hardware" backend: bring-up checks first (a failed one stops the suite,
exit 1), then per point the configuration Diff of every switch (a needed
change without --apply is an error naming device and setting, exit 2,
before anything is changed; with --apply it is applied and restored at
the end, also after a failure or Ctrl-C), agents deployed over SSH (or
srun), telemetry from the switches' own gNMI servers and the kernel
exporter elsewhere. A device that could not be restored makes the run an
error naming it (exit 3).

--serve-gnmi ADDR (sim backend) serves each run's simulated telemetry live
to outside gNMI clients on ADDR, paced by --gnmi-pace (realtime, asap or a
slow-down factor); the points then run one at a time, each serving on ADDR
in turn (clients reconnect between points). See 'fabricbench sim --help'
and docs/telemetry.md.
While the jobs run, every telemetry window is analysed as it arrives:
each anomaly it confirms is shown in the progress output at once, with
the run time it was found at, and carries its time to detect in the
results. --fail-fast stops the suite at the first one (bring-up use): the
run's jobs stop, what was collected is analysed and kept (the run fails),
the points after it are skipped (exit 1).

` + exitStatusHelp(exitOK, exitFail, exitBadInput, exitInfra, exitInterrupted),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.parallelSet = cmd.Flags().Changed("parallel")
			o.backendSet = cmd.Flags().Changed("backend")
			if err := so.check(cmd.Flags()); err != nil {
				return err
			}
			if err := o.serve.check(cmd.Flags()); err != nil {
				return err
			}
			if o.serve.addr != "" && (so.slurm || cmd.Flags().Changed("point")) {
				return badInput(errors.New("--serve-gnmi serves the runs of this process; it does not go with --slurm or --point"))
			}
			if (so.slurm || cmd.Flags().Changed("point")) && (o.inventory != "" || o.apply || o.backend == hwbackend.Name) {
				return badInput(errors.New("--slurm and --point split a suite's points across machines; a suite on hardware runs its points one after the other on the same devices: run it as one job (e.g. sbatch --wrap 'fabricbench run SUITE --inventory FILE'), with agents: {launcher: srun} to start its agents in the allocation"))
			}
			switch {
			case so.dryRun && !so.slurm:
				return planSuite(cmd.Context(), cmd.OutOrStdout(), args[0], o)
			case so.slurm:
				return submitSlurm(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], o, so)
			case cmd.Flags().Changed("point"):
				return runOnePoint(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], o, so.point)
			}
			return runSuite(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "results directory (default runs/<suite>-<time>)")
	f.StringVar(&o.backend, "backend", "sim", "backend: "+strings.Join(harness.Backends(), ", "))
	f.StringVar(&o.influx, "influx", "", "also write telemetry to InfluxDB at this URL (v2 write API; InfluxDB 1.8 works)")
	f.StringVar(&o.influxBucket, "influx-bucket", "", "InfluxDB bucket (InfluxDB 1.8: database/retention-policy)")
	f.StringVar(&o.influxOrg, "influx-org", "", "InfluxDB organisation (ignored by InfluxDB 1.8)")
	f.StringVar(&o.tok, "influx-token-file", "", "file holding the InfluxDB token (default: $FABRICBENCH_INFLUX_TOKEN)")
	f.DurationVar(&o.influxTimeout, "influx-timeout", 30*time.Second, "at the end of each run, wait this long for InfluxDB to take every point; the rest is saved to runs/<id>/influx-unsent.lp")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress output (the summary, failures and errors still print)")
	f.IntVar(&o.parallel, "parallel", 0, "run up to N matrix points at once (default: the number of CPUs); backends that cannot, such as netns, run one at a time")
	f.StringVar(&o.agentBinary, "agent-binary", "", "fabricbench binary to deploy to hosts as agent and exporter (netns and hardware backends; default: this one)")
	f.StringVar(&o.inventory, "inventory", "", "run on the devices of this hardware inventory (docs/inventory.md): the hardware backend")
	f.BoolVar(&o.apply, "apply", false, "with --inventory: change the devices' configuration where the suite needs it (restored at the end of each run)")
	f.BoolVar(&o.failFast, "fail-fast", false, "stop the suite at the first anomaly the live analysis confirms (bring-up use): that run's jobs stop, what was collected is analysed and kept, later points are skipped; exit 1")
	addSlurmFlags(f, &so)
	addServeFlags(f, &o.serve, false)
	return cmd
}

func runSuite(ctx context.Context, stdout, stderr io.Writer, file string, o runOpts) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.out == "" {
		base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		o.out = filepath.Join("runs", base+"-"+time.Now().Format("20060102-150405"))
	}
	ctx, stop := interruptContext(ctx, stderr, o.out)
	defer stop()
	if err := pickHardware(file, &o); err != nil {
		return err
	}
	if o.parallelSet && o.parallel < 1 {
		return badInput(fmt.Errorf("--parallel: %d is not a number of points (want 1 or more)", o.parallel))
	}
	if o.parallel > 1 {
		if ok, err := harness.BackendConcurrent(o.backend); err == nil && !ok {
			fmt.Fprintf(stderr, "note: --parallel %d: the %s backend cannot run points concurrently; running them one at a time\n", o.parallel, o.backend)
			o.parallel = 1
		}
	}
	opts := harness.Options{SuiteFile: file, Out: o.out, Backend: o.backend, Log: stdout, InfluxCloseTimeout: o.influxTimeout,
		LabStateRoot: labStateRoot(), AgentBinary: o.agentBinary, Parallel: o.parallel, Inventory: o.inventory, Apply: o.apply,
		FailFast: o.failFast}
	if o.influx != "" {
		opts.Influx = &harness.InfluxOptions{URL: o.influx, Bucket: o.influxBucket, Org: o.influxOrg, TokenFile: o.tok}
	} else if o.influxBucket != "" || o.tok != "" {
		return badInput(errors.New("--influx-bucket and --influx-token-file need --influx URL"))
	}
	if !o.quiet {
		opts.Progress = stderr
		opts.Bars = isTerminal(stderr)
	}
	if o.serve.addr != "" {
		sv, cleanup, err := o.serve.resolve(stderr)
		defer cleanup()
		if err != nil {
			return err
		}
		sv.Logf = func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }
		opts.ServeGNMI = sv
		if o.parallel > 1 && o.parallelSet {
			fmt.Fprintf(stderr, "note: --parallel %d: with --serve-gnmi the points run one at a time, each serving on %s\n", o.parallel, o.serve.addr)
		}
	}
	res, err := harness.Run(ctx, opts)
	var ie *harness.InputError
	if errors.As(err, &ie) && res == nil {
		return badInput(err)
	}
	if res == nil && ctx.Err() != nil {
		return &exitError{code: exitInterrupted, err: errors.New("interrupted while planning the suite; nothing was run")}
	}
	var se *harness.SaveError
	saveFailed := errors.As(err, &se)
	if res != nil {
		printRunSummary(stdout, res)
		fmt.Fprintln(stdout, resultsLine(o.out, se, len(res.Runs)))
	}
	switch {
	case ctx.Err() != nil && saveFailed:
		return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted, and the results could not be saved: %w", err)}
	case ctx.Err() != nil:
		return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted; results so far are in %s", o.out)}
	case errors.As(err, &ie):
		return badInput(err)
	case err != nil:
		// The backend, lab, agents, telemetry, InfluxDB or the results
		// directory failed (harness.InfraError, harness.SaveError).
		return infraError(err)
	}
	// A suite with a baseline also judges itself against it (baseline.go);
	// a failure of the run itself takes precedence.
	if err := compareWithBaseline(stdout, file, o.out, res); err != nil && results.ExitCode(res) == exitOK {
		return err
	}
	if code := results.ExitCode(res); code != exitOK {
		return &exitError{code: code, err: fmt.Errorf("suite %s: %s", res.Suite, res.Status)}
	}
	return nil
}

// printRunSummary prints the end-of-run summary: the suite's verdict, then
// per run its culprits by rank (with when the live analysis detected
// each), its congestion trees (lossless fabrics) and analysis notes, the
// injected faults with the anomaly that explains each, its imbalances and
// the KPIs that did not pass, one line each.
func printRunSummary(w io.Writer, res *results.Results) {
	fmt.Fprintln(w, summaryLine(res))
	for _, r := range res.Runs {
		if b := r.Bringup; b != nil {
			for _, c := range b.Causes {
				fmt.Fprintf(w, "  cause %d [%s] %s %s: %s (%d consequences)\n", c.ID, r.ID, strings.TrimSpace(c.Device+" "+c.Interface), c.Kind, c.Summary, c.Consequences)
			}
		}
		matched := map[int]bool{}
		for _, m := range r.FaultMatches {
			matched[m.Anomaly] = true
		}
		for i, a := range r.Anomalies {
			rank := a.Rank
			if rank <= 0 {
				rank = i + 1
			}
			line := fmt.Sprintf("  anomaly #%d [%s] %s", rank, r.ID, report.Culprit(&a))
			ev := a.Evidence
			if ev == "" {
				ev = report.Signals(a.Signals)
			}
			if j := strings.IndexByte(ev, '\n'); j >= 0 {
				ev = ev[:j]
			}
			if ev != "" {
				line += ": " + ev
			}
			// Victims lists at most 50; victims_total counts them all.
			n := len(a.Victims)
			if t, ok := a.Details["victims_total"]; ok && int(t) > n {
				n = int(t)
			}
			switch n {
			case 0:
			case 1:
				line += "; 1 victim"
			default:
				line += fmt.Sprintf("; %d victims", n)
			}
			if d := report.Detected(&a); d != "" {
				line += "; " + d
			}
			if len(r.FaultMatches) > 0 && !matched[rank] && len(a.Faults) == 0 {
				line += "; matches no injected fault"
			}
			fmt.Fprintln(w, line)
		}
		for _, ct := range r.CongestionTrees {
			fmt.Fprintf(w, "  congestion tree [%s] %s\n", r.ID, report.TreeLine(&ct))
		}
		for _, n := range r.AnalysisNotes {
			fmt.Fprintf(w, "  note [%s] %s\n", r.ID, n)
		}
		for _, m := range r.FaultMatches {
			to := "no anomaly"
			if m.Anomaly > 0 {
				to = fmt.Sprintf("anomaly #%d", m.Anomaly)
			}
			fmt.Fprintf(w, "  fault %s [%s] %s -> %s\n", m.ID, r.ID, m.Description, to)
		}
		for _, im := range r.Imbalances {
			fmt.Fprintf(w, "  imbalance [%s] %s\n", r.ID, report.ImbalanceLine(&im))
		}
		for _, k := range r.KPIs {
			if k.Verdict != results.Pass {
				fmt.Fprintf(w, "  KPI %s [%s] %s: %s\n", strings.ToUpper(k.Verdict), r.ID, k.Name, k.Message)
			}
		}
	}
}

// summaryLine is the suite's verdict with its counts: the runs (how many
// finished, were in error, interrupted or skipped, when not all finished),
// the KPIs by verdict and the anomalies, e.g.
//
//	nightly: INTERRUPTED — 3 runs (1 finished, 1 interrupted, 1 skipped), 4/4 KPIs passed, 0 failed, 2 not evaluated, 1 anomaly
func summaryLine(res *results.Results) string {
	sm := res.Summary
	runs := runspec.Plural(sm.Runs, "run", "runs")
	if notFinished := sm.RunsErrored + sm.RunsInterrupted + sm.RunsSkipped; notFinished > 0 {
		var parts []string
		if n := sm.Runs - notFinished; n > 0 {
			parts = append(parts, fmt.Sprintf("%d finished", n))
		}
		if sm.RunsErrored > 0 {
			parts = append(parts, runspec.Plural(sm.RunsErrored, "error", "errors"))
		}
		if sm.RunsInterrupted > 0 {
			parts = append(parts, fmt.Sprintf("%d interrupted", sm.RunsInterrupted))
		}
		if sm.RunsSkipped > 0 {
			parts = append(parts, fmt.Sprintf("%d skipped", sm.RunsSkipped))
		}
		runs += " (" + strings.Join(parts, ", ") + ")"
	}
	kpis := fmt.Sprintf("%d/%d KPIs passed, %d failed", sm.Passed, sm.KPIs, sm.Failed)
	if sm.Errors > 0 {
		kpis += ", " + runspec.Plural(sm.Errors, "KPI error", "KPI errors")
	}
	if sm.Skipped > 0 {
		kpis += fmt.Sprintf(", %d not evaluated", sm.Skipped)
	}
	line := fmt.Sprintf("%s: %s — %s, %s, %s", res.Suite, strings.ToUpper(res.Status), runs, kpis,
		runspec.Plural(sm.Anomalies, "anomaly", "anomalies"))
	if sm.ChecksFailed > 0 {
		line += fmt.Sprintf(", bring-up: %d of %d checks failed, %s", sm.ChecksFailed, sm.Checks, runspec.Plural(sm.Causes, "cause", "causes"))
	}
	return line
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newReportCmd() *cobra.Command {
	format := "html"
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Re-render junit.xml and report.html from a results directory (--format bmwg: the IETF BMWG AI-fabric report)",
		Long: `Re-render junit.xml and report.html from a results directory.

--format bmwg also writes the report of the IETF BMWG AI-fabric draft
(draft-calabria-bmwg-ai-fabric-training-bench, Reporting Format) as
DIR/bmwg.md and DIR/bmwg.json, with a plot of each test's primary metric
(DIR/bmwg-TEST.svg): DUT identification, test topology, test and host
configuration, results per test, anomalies and the repeatability
statement (docs/bmwg.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "html" && format != "bmwg" {
				return badInput(fmt.Errorf("--format: unknown format %q (want html or bmwg)", format))
			}
			if err := report.Render(args[0]); err != nil {
				return badInput(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s and %s\n", filepath.Join(args[0], "junit.xml"), filepath.Join(args[0], "report.html"))
			if format == "bmwg" {
				md, js, err := report.RenderBMWG(args[0])
				if err != nil {
					return badInput(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s and %s\n", md, js)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", format, "html (report.html and junit.xml) or bmwg (also bmwg.md and bmwg.json: the IETF BMWG AI-fabric reporting format)")
	return cmd
}

// pickHardware selects the hardware backend for --inventory or a suite
// whose fabric is an inventory, unless --backend says otherwise.
func pickHardware(file string, o *runOpts) error {
	if o.apply && o.inventory == "" && o.backend != hwbackend.Name {
		if s, err := suite.Load(file); err != nil || s.Fabric.Inventory == "" {
			return badInput(errors.New("--apply changes the devices of a hardware inventory: give --inventory FILE (or set fabric.inventory in the suite)"))
		}
	}
	if o.backendSet {
		return nil
	}
	if o.inventory != "" {
		o.backend = hwbackend.Name
		return nil
	}
	if s, err := suite.Load(file); err == nil && s.Fabric.Inventory != "" {
		o.backend = hwbackend.Name
	}
	return nil
}

// resultsLine says where the results are: report.html when everything was
// saved; after a failed save (se: a full disk, a read-only directory) only
// the files that were written, and which were not.
func resultsLine(out string, se *harness.SaveError, runs int) string {
	if se == nil {
		return "results: " + filepath.Join(out, report.HTMLFile)
	}
	written := map[string]bool{}
	for _, w := range se.Written {
		written[filepath.Base(w)] = true
	}
	var not []string
	for _, f := range []string{results.FileName, report.JUnitFile, report.HTMLFile} {
		if !written[f] {
			not = append(not, f)
		}
	}
	switch {
	case len(se.Written) > 0:
		return fmt.Sprintf("results: %s (%s NOT written)", strings.Join(se.Written, ", "), strings.Join(not, " and "))
	case se.Earlier >= runs:
		return fmt.Sprintf("results: %s as saved after the last run (its final save and %s NOT written)",
			filepath.Join(out, results.FileName), strings.Join(not[1:], " and "))
	case se.Earlier > 0:
		return fmt.Sprintf("results: NOT written to %s; %s is an earlier save with %d of the %d runs",
			out, filepath.Join(out, results.FileName), se.Earlier, runs)
	}
	return "results: NOT written to " + out
}

// hardExit ends the process on a second interrupt (a variable for tests).
var hardExit = os.Exit

// interruptContext is cancelled by the first interrupt (Ctrl-C, SIGTERM):
// the run stops its jobs, analyses and saves what it has and tears its
// lab down. A second interrupt while that goes on exits at once with
// status 130: what the run deployed is left, but its owner is then gone,
// so the next run, lab up or fabricbench lab gc reclaims it; the results
// of the points that ended are already on disk. stop releases the
// signals.
func interruptContext(parent context.Context, stderr io.Writer, out string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			fmt.Fprintf(stderr, "%s: stopping the jobs, saving what was measured and tearing down (interrupt again to exit at once)\n", sigName(s))
			cancel()
		case <-done:
			return
		}
		select {
		case s := <-sigs:
			fmt.Fprintf(stderr, "%s again: exiting without tearing down; the next run, lab up or `fabricbench lab gc` removes what this run left; results so far are in %s\n", sigName(s), out)
			hardExit(exitInterrupted)
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
			cancel()
		})
	}
}

func sigName(s os.Signal) string {
	if s == os.Interrupt {
		return "interrupted"
	}
	return s.String()
}
