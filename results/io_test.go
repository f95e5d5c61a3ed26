package results

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sample() *Results {
	t0 := time.Date(2025, 3, 14, 2, 0, 0, 0, time.UTC)
	return &Results{
		Schema: Schema, Suite: "nightly", SuiteFile: "suites/nightly.yaml", Backend: "sim",
		Started: t0, Finished: t0.Add(90 * time.Second), Status: Fail,
		Summary: Summary{Runs: 1, KPIs: 2, Passed: 1, Failed: 1, Anomalies: 1},
		Runs: []Run{{
			ID: "r1", Params: map[string]string{"transport.lb": "reps"}, Seed: 1 << 60, Status: Fail,
			Fabric: "leafspine 4×2", Config: map[string]string{"cc": "nscc"}, SimEndUs: 1234.5, WallS: 3.25,
			Packets: Packets{Sent: 1000, Retransmitted: 3, Trimmed: 2, Dropped: 1, ECNMarked: 17},
			Jobs: []Job{{Name: "perm", Workload: "permutation", Hosts: 8, SizeBytes: 2 << 20, Repetitions: 2, Flows: 16, Completed: 16,
				CompletionUs: 800, RepetitionsUs: []float64{790, 800}, AlgBWGbps: 42, BusBWGbps: 42,
				FCTUs: Quantiles{Min: 1, P50: 2, P99: 3, Max: 4}, Slowdown: Quantiles{P99: 1.5}, P01PairBW: 0.5,
				Packets: JobPackets{Retransmitted: 1, Nacks: 2, Timeouts: 3}, Extra: map[string]float64{"x": 1}}},
			KPIs: []KPI{
				{Name: "perm.busbw", Metric: "busbw", Scope: "perm", Op: ">=", Threshold: 80, Value: 42, Unit: "Gb/s", Verdict: Fail, Message: "low"},
				{Name: "perm.slowdown", Metric: "slowdown_p99", Scope: "perm", Op: "<=", Threshold: 2, Value: 1.5, Verdict: Pass},
			},
			Anomalies:  []Anomaly{{Kind: KindStraggler, Group: "job:perm", Member: "host3", Score: 0.7, Evidence: "slow", Details: map[string]float64{"f": 0.7}}},
			Imbalances: []Imbalance{}, // stored as [], read back as an empty slice
			Faults:     []Fault{{AtUs: 50, Description: "down leaf0-spine1"}},
			Telemetry:  Telemetry{IntervalUs: 10, Targets: 6, Samples: 1234, Store: "runs/r1/t.db", EpochNs: 1700000000000000000},
			Files:      map[string]string{"plots": "runs/r1/plots.json"},
		}},
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out") // Save creates it
	want := sample()
	if err := Save(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the results:\n got %+v\nwant %+v", got, want)
	}
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "{\n  \"schema\": \"fabricbench.results/v1\",") {
		t.Errorf("results.json is not indented JSON starting with the schema:\n%.200s", data)
	}
	// No temporary files are left behind.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("dir holds %d entries after Save, want only results.json", len(ents))
	}
	// Saving again replaces the file.
	want.Status = Pass
	if err := Save(dir, want); err != nil {
		t.Fatal(err)
	}
	if got, err := Load(dir); err != nil || got.Status != Pass {
		t.Errorf("after second Save: status %v, err %v", got, err)
	}
}

func TestSaveFillsSchemaWithoutChangingInput(t *testing.T) {
	dir := t.TempDir()
	r := sample()
	r.Schema = ""
	if err := Save(dir, r); err != nil {
		t.Fatal(err)
	}
	if r.Schema != "" {
		t.Errorf("Save changed its input's Schema to %q", r.Schema)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Schema != Schema {
		t.Errorf("schema %q, want %q", got.Schema, Schema)
	}
}

func TestSaveRejectsNaN(t *testing.T) {
	r := sample()
	r.Runs[0].KPIs[1].Value = math.NaN()
	dir := t.TempDir()
	err := Save(dir, r)
	if err == nil || !strings.Contains(err.Error(), "runs[0].kpis[1].value is NaN") {
		t.Fatalf("Save with a NaN KPI value: err = %v, want one naming runs[0].kpis[1].value", err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); !os.IsNotExist(err) {
		t.Errorf("a failed Save left a file: %v", err)
	}
	p := &Plots{Groups: []GroupSeries{{Group: "g", Gbps: [][]float64{{1, math.Inf(1)}}}}}
	err = SavePlots(filepath.Join(dir, "p.json"), p)
	if err == nil || !strings.Contains(err.Error(), "groups[0].gbps[0][1] is +Inf") {
		t.Fatalf("SavePlots with +Inf: err = %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name, content string
		want          []string // substrings of the error
	}{
		{"missing", "", []string{"results.json", "no results file"}},
		{"empty", " \n", []string{"results.json", "empty file"}},
		{"syntax", "{\n  \"schema\": \"fabricbench.results/v1\",\n  \"suite\": nope\n}", []string{"results.json:3:13", "malformed JSON"}},
		{"truncated", "{\n  \"schema\": \"fabricbench.results/v1\",\n", []string{"results.json:3:1", "malformed JSON"}},
		{"no schema", `{"suite": "x"}`, []string{"results.json", `no "schema" field`}},
		{"wrong schema", `{"schema": "fabricbench.results/v0"}`, []string{"results.json", `"fabricbench.results/v0"`, "fabricbench.results/v1"}},
		{"not an object", `[1, 2]`, []string{"results.json:1:1", "where", "expected"}},
		{"wrong type", "{\"schema\": \"fabricbench.results/v1\",\n \"runs\": [{\"seed\": \"one\"}]}", []string{"results.json:2:", "runs.seed", "string"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.name != "missing" {
				if err := os.WriteFile(filepath.Join(dir, FileName), []byte(c.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r, err := Load(dir)
			if err == nil {
				t.Fatalf("Load succeeded: %+v", r)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLineCol(t *testing.T) {
	data := []byte("ab\ncd\n\nef")
	for _, c := range []struct {
		off       int64
		atEnd     bool
		line, col int
	}{{1, false, 1, 1}, {2, false, 1, 2}, {4, false, 2, 1}, {5, false, 2, 2}, {7, false, 3, 1}, {9, false, 4, 2},
		{100, false, 4, 3}, {9, true, 4, 3}, {0, false, 1, 1}} {
		if l, col := lineCol(data, c.off, c.atEnd); l != c.line || col != c.col {
			t.Errorf("lineCol(%d) = %d:%d, want %d:%d", c.off, l, col, c.line, c.col)
		}
	}
}

func TestPlotsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs", "r1", "plots.json")
	want := &Plots{
		Run:    "r1",
		Faults: []Fault{{AtUs: 5, Description: "d"}},
		Groups: []GroupSeries{{Group: "leaf-uplinks:leaf0", Kind: "leaf-uplinks", Members: []string{"a", "b"},
			TimesUs: []float64{10, 20}, Gbps: [][]float64{{1, 2}, {3, 4}}, Anomalous: []string{"b"}}},
		NICHists:   []NICHist{{Job: "j", Host: "h", Edges: []float64{0, 0.5, 1}, Counts: []int{3, 4}, Straggler: true}},
		FCTs:       []FCTSeries{{Job: "j", FCTUs: []float64{1, 2, 3}}},
		TimeSeries: []TimeSeries{{Name: "p", Panel: "x", TimesUs: []float64{1}, Gbps: []float64{2}}},
	}
	if err := SavePlots(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := LoadPlots(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("plots round trip:\n got %+v\nwant %+v", got, want)
	}
	var raw map[string]any
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &raw); err != nil || raw["run"] != "r1" {
		t.Errorf("plots.json is not the expected JSON: %v %v", raw, err)
	}
}

func TestLoadPlotsErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadPlots(filepath.Join(dir, "none.json")); err == nil || !strings.Contains(err.Error(), "none.json: no plots file") {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{\"run\": \"r1\",\n\"groups\": [}"), 0o644)
	if _, err := LoadPlots(bad); err == nil || !strings.Contains(err.Error(), "bad.json:2:12") {
		t.Errorf("malformed file: %v", err)
	}
	typ := filepath.Join(dir, "typ.json")
	os.WriteFile(typ, []byte(`{"groups": [{"gbps": [["x"]]}]}`), 0o644)
	if _, err := LoadPlots(typ); err == nil || !strings.Contains(err.Error(), "typ.json:1:") || !strings.Contains(err.Error(), "groups.gbps") {
		t.Errorf("wrong type: %v", err)
	}
}

func TestExitCode(t *testing.T) {
	// Interrupted is 130 (128+SIGINT), as the CLI and docs/results-schema.md
	// say; a suite whose run errored is 3 (infrastructure) unless the run
	// could not be run as asked (2, bad input).
	for status, want := range map[string]int{Pass: 0, Fail: 1, Error: 3, Interrupted: 130, "": 3, "bogus": 3} {
		if got := ExitCode(&Results{Status: status}); got != want {
			t.Errorf("ExitCode(status %q) = %d, want %d", status, got, want)
		}
	}
	if got := ExitCode(nil); got != 3 {
		t.Errorf("ExitCode(nil) = %d, want 3", got)
	}
	infra := &Results{Status: Error, Runs: []Run{{Status: Pass}, {Status: Error, ErrorKind: ErrorInfrastructure, Error: "up: deploy lab: ssh: connection refused"}}}
	if got := ExitCode(infra); got != ExitInfrastructure {
		t.Errorf("ExitCode(a run with an infrastructure error) = %d, want 3", got)
	}
	input := &Results{Status: Error, Runs: []Run{{Status: Error, ErrorKind: ErrorInfrastructure}, {Status: Error, ErrorKind: ErrorInput}}}
	if got := ExitCode(input); got != ExitBadInput {
		t.Errorf("ExitCode(a run with an input error) = %d, want 2", got)
	}
}

func TestWriteFileAtomicReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	for _, content := range []string{"first", "second, longer content"} {
		if err := WriteFileAtomic(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Errorf("file holds %q (err %v), want %q", got, err, content)
		}
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d entries in dir, want 1 (temporary files left?)", len(ents))
	}
	if err := WriteFileAtomic(filepath.Join(dir, "no", "such", "dir", "f"), []byte("x")); err == nil {
		t.Error("WriteFileAtomic into a missing directory succeeded")
	}
}

// StripVolatile deletes the wall-clock fields at every depth and keeps
// everything else.
func TestStripVolatile(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{"suite": "s", "started": "t0", "runs": [{"id": "r", "wall_s": 1.5, "run_tag": "x",
		"jobs": [{"name": "j", "finished": "t1", "epoch_ns": 7, "fct": 3}]}]}`), &v); err != nil {
		t.Fatal(err)
	}
	StripVolatile(v)
	want := map[string]any{"suite": "s", "runs": []any{map[string]any{"id": "r", "jobs": []any{map[string]any{"name": "j", "fct": 3.0}}}}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("stripped %v, want %v", v, want)
	}
	if !Volatile("wall_s") || Volatile("fct") {
		t.Error("Volatile")
	}
}
