package harness_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// scripted is a backend whose RunJobs outcome a test decides: every flow
// of the jobs in started starts at 0 and, when the job is in finished,
// ends 10 us later; the others never start (Start -1) or never end.
type scripted struct {
	started, finished map[string]bool
	interrupt         func() // called from RunJobs before it returns Interrupted
	end               int64
}

var script *scripted

func init() {
	harness.Register("scripted-test", func() harness.Backend { return script })
}

func (b *scripted) Name() string                                          { return "scripted-test" }
func (b *scripted) Up(context.Context, *inventory.Fabric) error           { return nil }
func (b *scripted) Configure(context.Context, runspec.Features) error     { return nil }
func (b *scripted) DeployAgents(context.Context, runspec.Transport) error { return nil }
func (b *scripted) TelemetryTargets(context.Context, time.Duration) ([]telemetry.TargetSpec, error) {
	return nil, nil
}
func (b *scripted) InjectFaults(context.Context, []runspec.Fault) error { return nil }
func (b *scripted) Down(context.Context) error                          { return nil }
func (b *scripted) RunJobs(ctx context.Context, w *runspec.Workload, _ func(harness.Progress)) (*harness.RunResult, error) {
	rr := &harness.RunResult{End: b.end, Ideal: func(int, int, int64) int64 { return 5e6 }}
	for i := range w.Matrix.Flows {
		job := w.Jobs[w.FlowJob[i]].Name
		o := harness.FlowOutcome{ID: i, Start: -1, FCT: -1}
		if b.started[job] {
			o.Start = 0
			if b.finished[job] {
				o.FCT = 10e6
			}
		}
		rr.Flows = append(rr.Flows, o)
	}
	if b.interrupt != nil {
		b.interrupt()
		rr.Interrupted = true
	}
	return rr, nil
}

const twoJobs = `
fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2"}
jobs:
  - {name: early, workload: permutation, size: 64KiB}
  - {name: late, workload: permutation, size: 64KiB, start: 10ms}
kpis:
  - {metric: completed_fraction, scope: early, min: 1}
  - {metric: completed_fraction, scope: late, min: 1}
  - {metric: fct_p99_us, scope: late, max: 100}
  - {metric: incomplete_flows, max: 0}
`

// checkVerdicts fails the test unless each KPI of want has its verdict
// in r.
func checkVerdicts(t *testing.T, r *results.Run, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, k := range r.KPIs {
		got[k.Name] = k.Verdict
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("KPI %s: %s, want %s (all: %+v)", k, got[k], v, r.KPIs)
		}
	}
}

// Ctrl-C before the second job started: that job's KPIs were not
// measured, so they are skipped, not failed; what finished is judged.
func TestInterruptedJobThatNeverStartedIsNotAFailedKPI(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	script = &scripted{started: map[string]bool{"early": true}, finished: map[string]bool{"early": true}, interrupt: cancel, end: 2e9}
	out := t.TempDir()
	res, err := harness.Run(ctx, harness.Options{SuiteFile: writeSuite(t, twoJobs), Out: out, Backend: "scripted-test"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	run := res.Runs[0]
	checkVerdicts(t, &run, map[string]string{"early.completed_fraction": results.Pass, "late.completed_fraction": results.Skipped,
		"late.fct_p99_us": results.Skipped, "fabric.incomplete_flows": results.Skipped})
	if run.Status != results.Interrupted || res.Status != results.Interrupted || res.Summary.Failed != 0 || res.Summary.Errors != 0 {
		t.Fatalf("run %s, suite %s, summary %+v", run.Status, res.Status, res.Summary)
	}
	for _, k := range run.KPIs {
		if k.Verdict == results.Skipped && !strings.Contains(k.Message, "interrupted") {
			t.Errorf("skipped KPI %s says %q", k.Name, k.Message)
		}
	}
	if results.ExitCode(res) != 130 {
		t.Errorf("exit code %d, want 130", results.ExitCode(res))
	}
}

// A job that ran to the end of the run without finishing a single flow
// failed its KPIs (exit 1): that is the fabric's verdict, not an error of
// the harness.
func TestZeroFinishedFlowsIsAFailedKPI(t *testing.T) {
	script = &scripted{started: map[string]bool{"early": true, "late": true}, finished: map[string]bool{"early": true}, end: 20e9}
	res, err := harness.Run(context.Background(), harness.Options{SuiteFile: writeSuite(t, twoJobs), Out: t.TempDir(), Backend: "scripted-test"})
	if err != nil {
		t.Fatal(err)
	}
	run := res.Runs[0]
	checkVerdicts(t, &run, map[string]string{"early.completed_fraction": results.Pass, "late.completed_fraction": results.Fail,
		"late.fct_p99_us": results.Fail, "fabric.incomplete_flows": results.Fail})
	for _, k := range run.KPIs {
		if k.Name == "late.fct_p99_us" && !strings.Contains(k.Message, "0 of 4 flows finished, so fct_p99_us has no value") {
			t.Errorf("message %q", k.Message)
		}
	}
	if run.Status != results.Fail || res.Status != results.Fail || results.ExitCode(res) != 1 {
		t.Fatalf("run %s, suite %s: want fail (exit 1)", run.Status, res.Status)
	}
}

// Flap events after the run ended never happened: they are not listed as
// injected, and the run says how many there were.
func TestFaultsAfterTheRunEndAreNotListed(t *testing.T) {
	file := writeSuite(t, `
fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2"}
jobs:
  - {name: p, workload: permutation, size: 64KiB}
faults:
  - {kind: flap, link: leaf0-spine0, at: 0, period: 10us, count: 10000}
  - {kind: down, link: leaf1-spine1, at: 900ms}
`)
	out := t.TempDir()
	res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	run := res.Runs[0]
	end := run.SimEndUs
	if len(run.Faults) == 0 || len(run.Faults) > int(end/10*2)+2 {
		t.Fatalf("%d fault events listed in a %.0f us run", len(run.Faults), end)
	}
	for _, f := range run.Faults {
		if f.AtUs > end {
			t.Errorf("fault event at %.0f us listed, after the run ended at %.0f us", f.AtUs, end)
		}
	}
	if run.FaultsNotReached != 20001-len(run.Faults) {
		t.Errorf("faults_not_reached %d, want %d", run.FaultsNotReached, 20001-len(run.Faults))
	}
	for _, m := range run.FaultMatches {
		if m.ID == "F2" {
			t.Errorf("fault F2 (at 900ms) never happened but has a match: %+v", m)
		}
	}
	st, err := os.Stat(filepath.Join(out, "results.json"))
	if err != nil || st.Size() > 1<<20 {
		t.Fatalf("results.json: %v, %d bytes", err, st.Size())
	}
}

// A full disk while the reports are written: Run says so with a
// *SaveError that lists what was written (results.json), so the CLI does
// not claim a report it never wrote.
func TestFullDiskIsASaveError(t *testing.T) {
	render := *harness.RenderReports
	defer func() { *harness.RenderReports = render }()
	*harness.RenderReports = func(dir string) error {
		return &os.PathError{Op: "write", Path: filepath.Join(dir, ".report.html.tmp1"), Err: syscall.ENOSPC}
	}
	script = &scripted{started: map[string]bool{"early": true, "late": true}, finished: map[string]bool{"early": true, "late": true}, end: 20e9}
	out := t.TempDir()
	res, err := harness.Run(context.Background(), harness.Options{SuiteFile: writeSuite(t, twoJobs), Out: out, Backend: "scripted-test"})
	var se *harness.SaveError
	if !errors.As(err, &se) || !errors.Is(err, syscall.ENOSPC) || res == nil {
		t.Fatalf("err %v, want a SaveError wrapping ENOSPC", err)
	}
	if len(se.Written) != 1 || se.Written[0] != filepath.Join(out, results.FileName) {
		t.Fatalf("written %v, want only results.json", se.Written)
	}
	if _, err := results.Load(out); err != nil {
		t.Fatal(err)
	}
}
