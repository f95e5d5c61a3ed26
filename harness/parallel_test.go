package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// A small matrix (2 load balancers x 2 seeds) on the simulator with
// telemetry and a fault gives the same results.json (but for timestamps,
// wall-clock times and the invocation's run tags), flows.csv, plots.json
// and telemetry values with --parallel 1 and --parallel 4.
func TestParallelResultsEqualSerial(t *testing.T) {
	file := writeSuite(t, `
name: par
fabric: {spec: "leafspine:leaves=4,spines=4,hosts_per_leaf=4"}
jobs:
  - {name: perm, workload: permutation, size: 512KiB, repetitions: 2}
  - {name: ar, workload: all-reduce, size: 2MiB, hosts: 8, start: 50us}
faults:
  - {kind: degrade, link: leaf0-spine1, fraction: 0.5, at: 30us}
kpis:
  - {metric: completed_fraction, scope: ar, min: 1}
  - {metric: slowdown_p99, scope: perm, max: 100}
  - {metric: telemetry_coverage, min: 1}
matrix:
  transport.lb: [ops, reps]
  seed: [1, 2]
`)
	type outcome struct {
		json  string
		files map[string][]byte
		tele  map[string][]telemetry.Sample
		lines []string
	}
	run := func(par int) outcome {
		out := t.TempDir()
		var log bytes.Buffer
		res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: out, Parallel: par, Log: &log})
		if err != nil {
			t.Fatalf("--parallel %d: %v", par, err)
		}
		o := outcome{files: map[string][]byte{}, tele: map[string][]telemetry.Sample{}}
		for _, r := range res.Runs {
			for _, k := range []string{"flows", "plots"} {
				b, err := os.ReadFile(filepath.Join(out, r.Files[k]))
				if err != nil {
					t.Fatal(err)
				}
				o.files[r.ID+"/"+k] = b
			}
			s := readTelemetry(t, out, r.Files["telemetry"])
			for i := range s {
				s[i].Time -= r.Telemetry.EpochNs
				s[i].Run = ""
			}
			sort.Slice(s, func(i, j int) bool { return fmt.Sprint(s[i]) < fmt.Sprint(s[j]) })
			o.tele[r.ID] = s
		}
		b, err := os.ReadFile(filepath.Join(out, results.FileName))
		if err != nil {
			t.Fatal(err)
		}
		o.json = normalise(t, b)
		o.lines = strings.Split(strings.TrimSpace(log.String()), "\n")
		return o
	}
	serial, par := run(1), run(4)
	if serial.json != par.json {
		i := 0
		for i < len(serial.json) && i < len(par.json) && serial.json[i] == par.json[i] {
			i++
		}
		t.Errorf("results.json differs at byte %d:\n--parallel 1: ...%.200s\n--parallel 4: ...%.200s", i, serial.json[max(0, i-100):], par.json[max(0, i-100):])
	}
	// Matrix order: keys sorted (seed before transport.lb), the first
	// varying slowest.
	if want := `["lb=ops,seed=1","lb=reps,seed=1","lb=ops,seed=2","lb=reps,seed=2"]`; !strings.HasPrefix(par.json, want) {
		t.Errorf("runs %.80s, want %s", par.json, want)
	}
	for k, v := range serial.files {
		if !bytes.Equal(v, par.files[k]) {
			t.Errorf("%s differs", k)
		}
	}
	if fmt.Sprint(serial.files["lb=ops,seed=1/flows"]) == fmt.Sprint(serial.files["lb=ops,seed=2/flows"]) {
		t.Error("seeds 1 and 2 gave identical flows: the matrix seed was not applied")
	}
	for id, s := range serial.tele {
		if len(s) == 0 || !reflect.DeepEqual(s, par.tele[id]) {
			t.Errorf("run %s: telemetry differs (%d vs %d samples)", id, len(s), len(par.tele[id]))
		}
	}
	if len(par.lines) != 4 {
		t.Errorf("want one line per run, got %q", par.lines)
	}
}

// normalise drops what differs between invocations: timestamps, wall-clock
// times, the run tags (which hold the start time) and the telemetry epoch.
func normalise(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	results.StripVolatile(v)
	// Run IDs in order, then everything.
	var ids []string
	for _, r := range v.(map[string]any)["runs"].([]any) {
		ids = append(ids, fmt.Sprintf("%q", r.(map[string]any)["id"]))
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return "[" + strings.Join(ids, ",") + "] " + string(out)
}

// fake is a backend that runs no traffic: every flow finishes after a
// short wall-clock delay. It counts the runs in flight, fails the run
// named in fail and, for the runs named in block, waits for the context.
type fake struct {
	env   harness.Env
	f     *inventory.Fabric
	state *fakeState
}

type fakeState struct {
	concurrent            bool
	fail                  string
	block                 []string
	inFlight, maxInFlight atomic.Int32
	blocked               sync.WaitGroup
}

func (b *fake) Name() string                                          { return "fake" }
func (b *fake) Prepare(env harness.Env)                               { b.env = env }
func (b *fake) ConcurrentRuns() bool                                  { return b.state.concurrent }
func (b *fake) Up(_ context.Context, f *inventory.Fabric) error       { b.f = f; return nil }
func (b *fake) Configure(context.Context, runspec.Features) error     { return nil }
func (b *fake) DeployAgents(context.Context, runspec.Transport) error { return nil }
func (b *fake) InjectFaults(context.Context, []runspec.Fault) error   { return nil }
func (b *fake) Down(context.Context) error                            { return nil }
func (b *fake) TelemetryTargets(context.Context, time.Duration) ([]telemetry.TargetSpec, error) {
	return nil, errors.New("the fake backend has no telemetry")
}

func (b *fake) RunJobs(ctx context.Context, w *runspec.Workload, _ func(harness.Progress)) (*harness.RunResult, error) {
	st := b.state
	n := st.inFlight.Add(1)
	defer st.inFlight.Add(-1)
	for {
		m := st.maxInFlight.Load()
		if n <= m || st.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	rr := &harness.RunResult{Flows: make([]harness.FlowOutcome, len(w.Matrix.Flows)), End: 1e6}
	if slices.Contains(st.block, b.env.RunID) {
		st.blocked.Done()
		<-ctx.Done()
		for i := range rr.Flows {
			rr.Flows[i] = harness.FlowOutcome{ID: i, Start: -1, FCT: -1}
		}
		rr.Interrupted = true
		return rr, nil
	}
	time.Sleep(30 * time.Millisecond)
	if st.fail != "" && strings.Contains(b.env.RunID, st.fail) {
		return nil, errors.New("fake failure")
	}
	for i := range rr.Flows {
		rr.Flows[i] = harness.FlowOutcome{ID: i, Start: 0, FCT: 1e6}
	}
	return rr, nil
}

var fakes atomic.Int32

// registerFake registers a fake backend under a new name.
func registerFake(st *fakeState) string {
	name := fmt.Sprintf("fake%d", fakes.Add(1))
	harness.Register(name, func() harness.Backend { return &fake{state: st} })
	return name
}

const fakeSuite = `
name: fake
fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2"}
telemetry: {enabled: false}
jobs:
  - {name: perm, workload: permutation, size: 64KiB}
kpis:
  - {metric: completed_fraction, scope: perm, min: 1}
  - {metric: symmetry_anomalies, max: 0}
matrix:
  seed: [1, 2, 3, 4, 5, 6]
`

func ids(res *results.Results) string {
	var s []string
	for _, r := range res.Runs {
		s = append(s, r.ID+":"+r.Status)
	}
	return strings.Join(s, " ")
}

// --parallel bounds the runs in flight; a backend that cannot run points
// concurrently runs one at a time; an error in one point keeps the
// others' results, in matrix order.
func TestParallelBoundAndErrors(t *testing.T) {
	file := writeSuite(t, fakeSuite)
	for _, c := range []struct {
		name       string
		concurrent bool
		par, max   int32
	}{
		{"concurrent-3", true, 3, 3},
		{"concurrent-1", true, 1, 1},
		{"serial-only", false, 4, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &fakeState{concurrent: c.concurrent, fail: "seed=2"}
			name := registerFake(st)
			out := t.TempDir()
			res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: out, Backend: name, Parallel: int(c.par)})
			if err == nil || !strings.Contains(err.Error(), "fake failure") {
				t.Fatalf("err %v, want the failed point's error", err)
			}
			if got := st.maxInFlight.Load(); got != c.max {
				t.Errorf("at most %d runs in flight, want %d", got, c.max)
			}
			want := "seed=1:pass seed=2:error seed=3:pass seed=4:pass seed=5:pass seed=6:pass"
			if ids(res) != want {
				t.Errorf("runs %s, want %s", ids(res), want)
			}
			stored, err := results.Load(out)
			if err != nil || ids(stored) != want || stored.Status != results.Error {
				t.Errorf("stored: %v %s %s", err, ids(stored), stored.Status)
			}
			// Without telemetry the KPIs computed from it are skipped, not
			// passed for want of evidence.
			k := res.Runs[0].KPIs
			if len(k) != 2 || k[0].Verdict != results.Pass || k[1].Verdict != results.Skipped || !strings.Contains(k[1].Message, "telemetry is disabled") {
				t.Errorf("KPIs %+v", k)
			}
			if res.Runs[0].Config["telemetry_interval"] != "off" || res.Runs[0].Files["telemetry"] != "" {
				t.Errorf("run without telemetry: config %v files %v", res.Runs[0].Config, res.Runs[0].Files)
			}
		})
	}
}

// Ctrl-C cancels every running point; the finished ones are kept on disk,
// the running ones are interrupted and the rest skipped, in matrix order.
func TestParallelInterrupt(t *testing.T) {
	file := writeSuite(t, fakeSuite)
	st := &fakeState{concurrent: true, block: []string{"seed=3", "seed=4"}}
	st.blocked.Add(2)
	name := registerFake(st)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		st.blocked.Wait() // both workers are busy
		cancel()
	}()
	res, err := harness.Run(ctx, harness.Options{SuiteFile: file, Out: out, Backend: name, Parallel: 2})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	stored, lerr := results.Load(out)
	if lerr != nil {
		t.Fatal(lerr)
	}
	for _, r := range []*results.Results{res, stored} {
		if r.Status != results.Interrupted || len(r.Runs) != 6 {
			t.Fatalf("results %s %s", r.Status, ids(r))
		}
		want := "seed=1:pass seed=2:pass seed=3:interrupted seed=4:interrupted seed=5:skipped seed=6:skipped"
		if got := ids(r); got != want {
			t.Errorf("runs %s, want %s", got, want)
		}
	}
}
