package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/results"
)

// Files of a results directory whose points run apart (RunPoint) and are
// merged afterwards (Merge).
const (
	// PlanFile (in the results directory) lists the suite's points in
	// matrix order.
	PlanFile = "plan.json"
	// PointFile (in runs/<id>/) is one point's run as results.json would
	// hold it, with the plan it belongs to.
	PointFile = "run.json"

	planSchema  = "fabricbench.plan/v1"
	pointSchema = "fabricbench.point/v1"
)

// PlanRecord is plan.json: what a merge needs to know about the suite
// without reading it again.
type PlanRecord struct {
	Schema    string      `json:"schema"`
	Suite     string      `json:"suite"`
	SuiteFile string      `json:"suite_file"`
	Backend   string      `json:"backend"`
	Points    []PlanPoint `json:"points"`
	// Tests, DUT and Topology are the results' (a merge copies them).
	Tests    []results.Test    `json:"tests,omitempty"`
	DUT      *results.DUT      `json:"dut,omitempty"`
	Topology *results.Topology `json:"topology,omitempty"`
}

// PlanPoint is one matrix point of a PlanRecord.
type PlanPoint struct {
	ID     string            `json:"id"`
	Params map[string]string `json:"params,omitempty"`
	Seed   uint64            `json:"seed"`
}

// PointRecord is runs/<id>/run.json.
type PointRecord struct {
	Schema string     `json:"schema"`
	Plan   PlanRecord `json:"plan"`
	Index  int        `json:"index"` // in Plan.Points
	// Started and Finished are the wall-clock times of the point's run.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// SlurmTask is the Slurm job array task that ran the point
	// ("JOB_INDEX"), empty outside Slurm.
	SlurmTask string      `json:"slurm_task,omitempty"`
	Run       results.Run `json:"run"`
}

// PlanPoints plans the suite for the backend and returns what plan.json
// holds. A suite with a bring-up step cannot be run point by point (the
// step brings up the lab every point uses): that is bad input.
func PlanPoints(ctx context.Context, file, backend string) (*PlanRecord, []*runspec.RunSpec, error) {
	if backend == "" {
		backend = "sim"
	}
	s, points, err := PlanBackend(ctx, file, backend)
	if err != nil {
		return nil, nil, err
	}
	if s.Bringup != nil {
		return nil, nil, &InputError{fmt.Errorf("%s: the suite has a bring-up step, which every point needs: run it whole (without --point or --slurm)", file)}
	}
	pr := &PlanRecord{Schema: planSchema, Suite: s.Name, SuiteFile: file, Backend: backend, Tests: testsOf(s)}
	for _, p := range points {
		pr.Points = append(pr.Points, PlanPoint{ID: p.ID, Params: p.Params, Seed: p.Suite.Seed})
		if pr.DUT == nil && len(p.NotApplicable) == 0 && p.Fabric != nil {
			pr.DUT, pr.Topology = dutOf(backend, p), topologyOf(p.Fabric, p.Fabric.Summary())
		}
	}
	return pr, points, nil
}

// SelectPoint finds the point sel names: its 0-based index in matrix order
// or its ID (e.g. "lb=ops").
func (pr *PlanRecord) SelectPoint(sel string) (int, error) {
	for i, p := range pr.Points {
		if p.ID == sel {
			return i, nil
		}
	}
	if k, err := strconv.Atoi(sel); err == nil {
		if k >= 0 && k < len(pr.Points) {
			return k, nil
		}
		return 0, &InputError{fmt.Errorf("--point %d: the suite has %s (0 to %d)", k, runspec.Plural(len(pr.Points), "point", "points"), len(pr.Points)-1)}
	}
	var ids []string
	for _, p := range pr.Points {
		ids = append(ids, p.ID)
	}
	return 0, &InputError{fmt.Errorf("--point %q: no such point (want an index 0 to %d or one of %q)", sel, len(pr.Points)-1, ids)}
}

// WritePlan writes dir/plan.json (atomically: points running at the same
// time into one shared directory write the same content).
func WritePlan(dir string, pr *PlanRecord) error {
	data, err := json.MarshalIndent(pr, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return results.WriteFileAtomic(filepath.Join(dir, PlanFile), append(data, '\n'))
}

// LoadPlan reads dir/plan.json.
func LoadPlan(dir string) (*PlanRecord, error) {
	path := filepath.Join(dir, PlanFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pr PlanRecord
	if err := json.Unmarshal(data, &pr); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if pr.Schema != planSchema {
		return nil, fmt.Errorf("%s: schema %q is not %q", path, pr.Schema, planSchema)
	}
	return &pr, nil
}

// RunPoint runs one point of the suite's matrix, selected by sel (its
// 0-based index or its ID), into opts.Out/runs/<id>/, like Run does, and
// saves its run there as run.json, with the plan, for Merge. It writes
// opts.Out/plan.json too, but no results.json or reports: `fabricbench
// merge` makes those once the points have run. Points may run on
// different machines into a shared directory, or into copies merged into
// one directory afterwards.
func RunPoint(ctx context.Context, opts Options, sel string) (*results.Run, error) {
	pr, points, err := PlanPoints(ctx, opts.SuiteFile, opts.Backend)
	if err != nil {
		return nil, err
	}
	opts.Backend = pr.Backend
	k, err := pr.SelectPoint(sel)
	if err != nil {
		return nil, err
	}
	influx, err := influxConfig(opts.Influx, points[k].Suite.Telemetry.Sink.Influx)
	if err != nil {
		return nil, &InputError{err}
	}
	if err := WritePlan(opts.Out, pr); err != nil {
		return nil, &InfraError{fmt.Errorf("results directory: %w", err)}
	}
	if opts.Progress != nil && !opts.Bars {
		opts.Progress = &lockedWriter{mu: &sync.Mutex{}, w: opts.Progress}
	}
	rec := &PointRecord{Schema: pointSchema, Plan: *pr, Index: k, Started: time.Now().UTC(), SlurmTask: slurmTask()}
	// The run tag keeps runs apart in InfluxDB; the points of one Slurm
	// job array share the job's.
	invocation := pr.Suite + "-" + rec.Started.Format("20060102T150405.000Z")
	if j := os.Getenv("SLURM_ARRAY_JOB_ID"); j != "" {
		invocation = pr.Suite + "-slurm" + j
	}
	prog := newProgress(ctx, opts.Progress, opts.Bars)
	p := points[k]
	run, runErr := runPoint(ctx, opts, p, invocation+"/"+p.ID, influx, prog)
	prog.wait()
	if opts.Log != nil {
		fmt.Fprintf(opts.Log, "%s\n", runLine(run, pr.Backend))
	}
	rec.Finished = time.Now().UTC()
	rec.Run = *run
	if err := savePoint(filepath.Join(opts.Out, "runs", p.ID), rec); err != nil && runErr == nil {
		runErr = &SaveError{Err: fmt.Errorf("writing %s: %w", PointFile, err)}
	}
	if runErr == nil && ctx.Err() != nil {
		runErr = ctx.Err()
	}
	return run, runErr
}

// slurmTask is "JOB_INDEX" inside a Slurm job array task, else "".
func slurmTask() string {
	j, i := os.Getenv("SLURM_ARRAY_JOB_ID"), os.Getenv("SLURM_ARRAY_TASK_ID")
	if j == "" || i == "" {
		return ""
	}
	return j + "_" + i
}

func savePoint(dir string, rec *PointRecord) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return results.WriteFileAtomic(filepath.Join(dir, PointFile), append(data, '\n'))
}

// LoadPoint reads runs/<id>/run.json.
func LoadPoint(path string) (*PointRecord, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rec PointRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if rec.Schema != pointSchema {
		return nil, fmt.Errorf("%s: schema %q is not %q", path, rec.Schema, pointSchema)
	}
	return &rec, nil
}

// TaskInfo is what the scheduler says about the task that ran a point.
type TaskInfo struct {
	// State is the scheduler's state of the task, e.g. COMPLETED,
	// CANCELLED, TIMEOUT, FAILED, OUT_OF_MEMORY; "" if unknown.
	State string
	// Desc names the task, its state and its log, e.g. "Slurm task 12_1
	// CANCELLED, log out/slurm/logs/12_1.out".
	Desc string
}

// MergeOptions control Merge.
type MergeOptions struct {
	// Task, when set, describes the task that ran point index (nil:
	// nothing known). Merge uses it for points without a result and for
	// points whose run was stopped by the scheduler.
	Task func(index int) *TaskInfo
}

// Merge rebuilds a results directory from its points (runs/<id>/run.json,
// written by RunPoint): results.json with the runs in matrix order, the
// summary and status a local run computes, junit.xml and report.html.
// The plan comes from dir/plan.json, else from the runs. A point without
// run.json is a run in error (error_kind infrastructure) saying why, with
// the scheduler's task state and log when known; so is a run the
// scheduler stopped (cancelled, out of time). The error is non-nil
// (*InputError) when dir holds no plan or runs of another suite, or
// (*SaveError) when the results could not be written.
func Merge(dir string, opts MergeOptions) (*results.Results, error) {
	pr, err := LoadPlan(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, &InputError{err}
	}
	recs := map[string]*PointRecord{}
	entries, _ := os.ReadDir(filepath.Join(dir, "runs"))
	for _, e := range entries {
		path := filepath.Join(dir, "runs", e.Name(), PointFile)
		rec, err := LoadPoint(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, &InputError{err}
		}
		if pr == nil {
			pr = &rec.Plan
		}
		if !samePlan(pr, &rec.Plan) {
			return nil, &InputError{fmt.Errorf("%s: a point of another plan (suite %q, %d points) than %s (suite %q, %d points): merge the points of one suite",
				path, rec.Plan.Suite, len(rec.Plan.Points), filepath.Join(dir, PlanFile), pr.Suite, len(pr.Points))}
		}
		recs[rec.Run.ID] = rec
	}
	if pr == nil {
		return nil, &InputError{fmt.Errorf("%s: no %s and no runs/*/%s: not a directory of points run with --point or --slurm", dir, PlanFile, PointFile)}
	}
	res := &results.Results{Schema: results.Schema, Suite: pr.Suite, SuiteFile: pr.SuiteFile, Backend: pr.Backend, Status: results.Pass,
		Tests: pr.Tests, DUT: pr.DUT, Topology: pr.Topology}
	for i, p := range pr.Points {
		var task *TaskInfo
		if opts.Task != nil {
			task = opts.Task(i)
		}
		rec := recs[p.ID]
		if rec == nil {
			why := fmt.Sprintf("no result: %s is missing (the point was not run, or died before saving it)", filepath.ToSlash(filepath.Join("runs", p.ID, PointFile)))
			if task != nil {
				why = "no result: " + task.Desc
			}
			res.Runs = append(res.Runs, results.Run{ID: p.ID, Params: p.Params, Seed: p.Seed, Status: results.Error,
				ErrorKind: results.ErrorInfrastructure, Error: why})
			continue
		}
		if res.Started.IsZero() || rec.Started.Before(res.Started) {
			res.Started = rec.Started
		}
		run := rec.Run
		if run.Status == results.Interrupted && task != nil && stoppedByScheduler(task.State) {
			run.Status, run.ErrorKind = results.Error, results.ErrorInfrastructure
			run.Error = task.Desc + ": " + run.Error
		}
		res.Runs = append(res.Runs, run)
	}
	if res.Started.IsZero() {
		res.Started = time.Now().UTC()
	}
	finish(res)
	if err := saveAll(dir, res); err != nil {
		return res, err
	}
	return res, nil
}

// stoppedByScheduler: the task ended otherwise than on its own.
func stoppedByScheduler(state string) bool {
	switch state {
	case "", "COMPLETED", "RUNNING", "PENDING", "COMPLETING", "FAILED":
		return false
	}
	return true
}

func samePlan(a, b *PlanRecord) bool {
	if a.Suite != b.Suite || a.Backend != b.Backend || len(a.Points) != len(b.Points) {
		return false
	}
	for i := range a.Points {
		if a.Points[i].ID != b.Points[i].ID || a.Points[i].Seed != b.Points[i].Seed {
			return false
		}
	}
	return true
}
