package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the command in-process and captures its output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.Execute()
	code = exitOK
	if err != nil {
		code = exitCode(err)
		errb.WriteString(err.Error())
	}
	return code, out.String(), errb.String()
}

func TestSimJSONSchema(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r", "run.json")
	code, stdout, stderr := runCLI(t, "sim", "--topo", "fattree:hosts=16,tiers=3,gbps=100", "--tm", "permutation:size=256KiB", "--json", out, "--seed", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"16 hosts", "16/16 completed", "FCT µs min", "events/s"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	doc := readJSONDoc(t, out)
	flows := doc["flows"].([]any)
	if len(flows) != 16 {
		t.Fatalf("%d flows in JSON", len(flows))
	}
	f0 := flows[0].(map[string]any)
	for _, k := range []string{"id", "src", "dst", "size_bytes", "start_us", "fct_us"} {
		if _, ok := f0[k]; !ok {
			t.Errorf("flow lacks %q: %v", k, f0)
		}
	}
	sum := doc["summary"].(map[string]any)
	for _, k := range []string{"fct_us", "packets", "sim_end_us", "wall_s", "events", "events_per_s", "peak_rss_bytes"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary lacks %q", k)
		}
	}
	for _, k := range []string{"min", "p50", "p99", "max"} {
		if _, ok := sum["fct_us"].(map[string]any)[k]; !ok {
			t.Errorf("fct_us lacks %q", k)
		}
	}
	for _, k := range []string{"sent", "retransmitted", "trimmed", "dropped", "ecn_marked"} {
		if _, ok := sum["packets"].(map[string]any)[k]; !ok {
			t.Errorf("packets lacks %q", k)
		}
	}
	if sum["peak_rss_bytes"].(float64) <= 0 {
		t.Error("peak RSS not measured")
	}
}

func TestSimUnfinishedFlowsAreNull(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := runCLI(t, "sim", "--topo", "fattree:hosts=16,tiers=3", "--tm", "incast:senders=8,size=4MiB,dst=0", "--end", "50us", "--json", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "0/8 completed (8 unfinished") {
		t.Errorf("summary does not report unfinished flows:\n%s", stdout)
	}
	data, _ := os.ReadFile(out)
	if !bytes.Contains(data, []byte(`"fct_us": null`)) || !bytes.Contains(data, []byte(`"incomplete": 8`)) {
		t.Errorf("JSON does not report null FCTs and the count:\n%.600s", data)
	}
}

func TestSimBadInput(t *testing.T) {
	dir := t.TempDir()
	badCM := filepath.Join(dir, "bad.cm")
	os.WriteFile(badCM, []byte("Nodes 16\nConnections 1\n0->40 id 1 start 0 size 100\n"), 0o644)
	badTopo := filepath.Join(dir, "bad.topo")
	os.WriteFile(badTopo, []byte("Nodes 16\nTiers 2\nPodsize 16\nRadix_Side 4\n"), 0o644)
	emptyCM := filepath.Join(dir, "empty.cm")
	os.WriteFile(emptyCM, []byte("Nodes 16\nConnections 0\n"), 0o644)
	topo := "fattree:hosts=16,tiers=3"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--topo", topo}, `required flag(s) "tm" not set`},
		{[]string{"sim", "--topo", "fattree:hosts=17", "--tm", "permutation:size=1MB"}, "hosts"},
		{[]string{"sim", "--topo", "fattree:hosts=16,gbps=fast", "--tm", "permutation:size=1MB"}, "gbps"},
		{[]string{"sim", "--topo", badTopo, "--tm", "permutation:size=1MB"}, "bad.topo:4"},
		{[]string{"sim", "--topo", topo, "--tm", badCM}, "bad.cm:3"},
		{[]string{"sim", "--topo", topo, "--tm", emptyCM}, "empty.cm"},
		{[]string{"sim", "--topo", topo, "--tm", "permutation:size=1 parsec"}, "size"},
		{[]string{"sim", "--topo", topo, "--tm", "permutation:size=1MB", "--cc", "cubic"}, "--cc"},
		{[]string{"sim", "--topo", topo, "--tm", "permutation:size=1MB", "--lb", "x"}, "--lb"},
		{[]string{"sim", "--topo", topo, "--tm", "permutation:size=1MB", "--end", "soon"}, "--end"},
		{[]string{"sim", "--topo", topo, "--tm", "permutation:size=1MB", "--mtu", "10"}, "mtu"},
		{[]string{"sim", "--topo", topo, "--tm", "permutation:size=1MB", "--kmin", "0.9", "--kmax", "0.1"}, "kmin"},
		{[]string{"sim", "--topo", "nosuchfile.topo", "--tm", "permutation:size=1MB"}, "nosuchfile.topo"},
		{[]string{"sim", "--topo", topo, "--tm", "permutation:size=1MB", "--bogus"}, "unknown flag"},
		{[]string{"sim", "--topo", topo, "--tm", "permutation:size=1MB", "--shards", "256"}, "--shards"},
		{[]string{"sim", "--topo", topo, "--tm", "permutation:size=1MB", "--workers", "-1"}, "--workers"},
		{[]string{"sim", "--topo", topo, "--tm", "permutation:size=1MB", "--shards", "2", "--routing", "adaptive"}, "parallel mode (2 shards) does not support adaptive routing"},
		// The RunSpec's rules (runspec.RunSpec.Validate, the suite's), named by flag.
		{[]string{"sim", "--topo", topo, "--tm", "permutation:size=1MB", "--lb", "owd"}, "--lb: owd probes paths selected by the entropy's MSB: it needs --routing port-msb"},
		{[]string{"sim", "--topo", topo, "--tm", "permutation:size=1MB", "--lb", "spritz-spray", "--routing", "adaptive"}, "--lb: spritz-spray learns which entropies reach good paths, but with --routing adaptive the switches choose"},
		{[]string{"sim", "--topo", topo, "--tm", "permutation:size=1MB", "--go-back-n", "--ack-every", "4"}, "transport: go-back-n"},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(t, c.args...)
		if code != exitBadInput {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, code, exitBadInput, stderr)
			continue
		}
		if !strings.Contains(stderr, c.want) {
			t.Errorf("%v: error %q does not mention %q", c.args, stderr, c.want)
		}
	}
}

// TestSimShardsAndWorkers: --shards runs the parallel mode; --workers does
// not change its results.
func TestSimShardsAndWorkers(t *testing.T) {
	var flows []any
	for _, w := range []string{"1", "2"} {
		out := filepath.Join(t.TempDir(), "run.json")
		code, stdout, stderr := runCLI(t, "sim", "-q", "--topo", "fattree:hosts=16,tiers=3,gbps=100", "--tm", "permutation:size=256KiB",
			"--json", out, "--seed", "5", "--shards", "4", "--workers", w)
		if code != 0 {
			t.Fatalf("--workers %s: exit %d: %s", w, code, stderr)
		}
		if !strings.Contains(stdout, "parallel: 4 shards on "+w+" workers") {
			t.Errorf("--workers %s: summary does not name the parallel mode:\n%s", w, stdout)
		}
		doc := readJSONDoc(t, out)
		if got := doc["summary"].(map[string]any)["shards"]; got != 4.0 {
			t.Errorf("--workers %s: summary shards %v, want 4", w, got)
		}
		if flows == nil {
			flows = doc["flows"].([]any)
			continue
		}
		a, _ := json.Marshal(flows)
		b, _ := json.Marshal(doc["flows"])
		if string(a) != string(b) {
			t.Errorf("--workers 1 and 2 give different flows:\n%s\n%s", a, b)
		}
	}
}

// readJSONDoc reads a results file written with --json.
func readJSONDoc(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}
