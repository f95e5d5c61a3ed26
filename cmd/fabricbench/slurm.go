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
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/harness/slurm"
	"github.com/fabricbench/fabricbench/results"
)

// slurmOpts are run's flags for running points apart: --point, and
// --slurm with its sbatch settings.
type slurmOpts struct {
	point                     string
	slurm, wait, dryRun       bool
	partition, account, limit string
	arrayLimit                int
	poll                      time.Duration
}

func addSlurmFlags(f *pflag.FlagSet, o *slurmOpts) {
	f.StringVar(&o.point, "point", "", "run only this matrix point (0-based index in matrix order, or its ID such as lb=ops) into DIR/runs/<id>/; `fabricbench merge DIR` then writes the results")
	f.BoolVar(&o.slurm, "slurm", false, "submit the points as a Slurm job array, one task per point, and a dependent job that merges them")
	f.StringVar(&o.partition, "partition", "", "with --slurm: sbatch --partition")
	f.StringVar(&o.account, "account", "", "with --slurm: sbatch --account")
	f.StringVar(&o.limit, "time", "", "with --slurm: sbatch --time, per task and for the merge job (e.g. 30:00)")
	f.IntVar(&o.arrayLimit, "array-limit", 0, "with --slurm: run at most N tasks at once (sbatch --array=...%N; 0: no limit)")
	f.BoolVar(&o.wait, "wait", false, "with --slurm: follow the jobs until the merge is done, then print the summary and exit with its status")
	f.BoolVar(&o.dryRun, "dry-run", false, "plan only: print the plan (as 'fabricbench plan') and run nothing; with --slurm: print the array's batch script and submit nothing")
	f.DurationVar(&o.poll, "slurm-poll", 5*time.Second, "with --slurm --wait: how often to ask squeue")
	_ = f.MarkHidden("slurm-poll")
}

// check refuses flag combinations that mean nothing.
func (o *slurmOpts) check(f *pflag.FlagSet) error {
	if !o.slurm {
		for _, n := range []string{"partition", "account", "time", "array-limit", "wait"} {
			if f.Changed(n) {
				return badInput(fmt.Errorf("--%s needs --slurm", n))
			}
		}
	}
	if o.dryRun && !o.slurm && f.Changed("point") {
		return badInput(errors.New("--dry-run plans the whole suite; it takes no --point"))
	}
	if o.slurm && f.Changed("point") {
		return badInput(errors.New("--point and --slurm: the Slurm tasks pass --point themselves; give one of them"))
	}
	if o.arrayLimit < 0 {
		return badInput(fmt.Errorf("--array-limit: %d is not a number of tasks (want 1 or more, 0 for no limit)", o.arrayLimit))
	}
	return nil
}

// runOnePoint is run --point: one point into DIR/runs/<id>/, exit status
// as for the whole suite of that one run.
func runOnePoint(ctx context.Context, stdout, stderr io.Writer, file string, o runOpts, sel string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.out == "" {
		return badInput(errors.New("--point needs --out DIR (the results directory the points share)"))
	}
	opts := harness.Options{SuiteFile: file, Out: o.out, Backend: o.backend, Log: stdout, InfluxCloseTimeout: o.influxTimeout,
		LabStateRoot: labStateRoot(), AgentBinary: o.agentBinary}
	if o.influx != "" {
		opts.Influx = &harness.InfluxOptions{URL: o.influx, Bucket: o.influxBucket, Org: o.influxOrg, TokenFile: o.tok}
	}
	if !o.quiet {
		opts.Progress = stderr
		opts.Bars = isTerminal(stderr)
	}
	run, err := harness.RunPoint(ctx, opts, sel)
	var ie *harness.InputError
	switch {
	case run == nil && errors.As(err, &ie):
		return badInput(err)
	case ctx.Err() != nil:
		return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted; what the run has is in %s", o.out)}
	case errors.As(err, &ie):
		return badInput(err)
	case err != nil:
		return infraError(err)
	}
	fmt.Fprintf(stdout, "point saved: %s (merge with: fabricbench merge %s)\n", filepath.Join(o.out, "runs", run.ID, harness.PointFile), o.out)
	res := &results.Results{Status: run.Status, Runs: []results.Run{*run}}
	if run.Status == results.Pass && anyKPI(run, results.Error) {
		res.Status = results.Error
	}
	if code := results.ExitCode(res); code != exitOK {
		return &exitError{code: code, err: fmt.Errorf("point %s: %s", run.ID, run.Status)}
	}
	return nil
}

func anyKPI(r *results.Run, verdict string) bool {
	for _, k := range r.KPIs {
		if k.Verdict == verdict {
			return true
		}
	}
	return false
}

// submitSlurm is run --slurm.
func submitSlurm(ctx context.Context, stdout, stderr io.Writer, file string, o runOpts, so slurmOpts) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.out == "" {
		base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		o.out = filepath.Join("runs", base+"-"+time.Now().Format("20060102-150405"))
	}
	if o.influx != "" || o.influxBucket != "" || o.tok != "" {
		return badInput(errors.New("--slurm: --influx is not passed to the tasks; give the InfluxDB sink in the suite (telemetry.sink.influx)"))
	}
	pr, _, err := harness.PlanPoints(ctx, file, o.backend)
	if err != nil {
		var ie *harness.InputError
		if errors.As(err, &ie) {
			return badInput(err)
		}
		return infraError(err)
	}
	sopts := slurm.Options{SuiteFile: file, Out: o.out, Backend: pr.Backend, Partition: so.partition, Account: so.account,
		Time: so.limit, ArrayLimit: so.arrayLimit, Plan: pr}
	if exe, err := os.Executable(); err == nil && strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return badInput(fmt.Errorf("--slurm: this fabricbench is a temporary build of go run (%s), gone once it exits; build one the nodes can run (go build -o bin/fabricbench ./cmd/fabricbench)", exe))
	}
	if so.dryRun {
		script, err := slurm.Script(sopts)
		if err != nil {
			return badInput(err)
		}
		fmt.Fprint(stdout, script)
		return nil
	}
	job, err := slurm.Submit(ctx, sopts)
	if err != nil {
		var ie *harness.InputError
		if errors.As(err, &ie) {
			return badInput(err)
		}
		return infraError(err)
	}
	fmt.Fprintf(stdout, "submitted: array job %s (%s), merge job %s (afterany); logs in %s\n",
		job.ArrayJob, runspec.Plural(job.Points, "task", "tasks"), job.MergeJob, job.LogDir)
	if !so.wait {
		fmt.Fprintf(stdout, "results: %s once merge job %s has run\n", filepath.Join(o.out, "report.html"), job.MergeJob)
		return nil
	}
	progress := stderr
	if o.quiet {
		progress = io.Discard
	}
	if err := slurm.Wait(ctx, job, o.out, progress, so.poll); err != nil {
		if ctx.Err() != nil {
			return &exitError{code: exitInterrupted, err: fmt.Errorf("stopped following; the jobs go on (scancel %s %s to stop them)", job.ArrayJob, job.MergeJob)}
		}
		return infraError(err)
	}
	res, err := results.Load(o.out)
	if err != nil {
		return infraError(fmt.Errorf("the merge job %s left no results (log %s): %w", job.MergeJob,
			filepath.Join(job.LogDir, "merge_"+job.MergeJob+".out"), err))
	}
	printRunSummary(stdout, res)
	fmt.Fprintf(stdout, "results: %s\n", filepath.Join(o.out, "report.html"))
	if code := results.ExitCode(res); code != exitOK {
		return &exitError{code: code, err: fmt.Errorf("suite %s: %s", res.Suite, res.Status)}
	}
	return nil
}
