package main

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

const suites = "../../examples/suites/"

// junitCases parses junit.xml into testcase name -> "pass", "failure" or "error".
func junitCases(t *testing.T, dir string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
				Error   *struct{} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("junit.xml: %v", err)
	}
	out := map[string]string{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			v := "pass"
			if c.Failure != nil {
				v = "failure"
			} else if c.Error != nil {
				v = "error"
			}
			out[c.Name] = v
		}
	}
	return out
}

func TestRunSmokeSuite(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", suites+"smoke.yaml", "--out", dir, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, f := range []string{"results.json", "junit.xml", "report.html"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s missing or empty: %v", f, err)
		}
	}
	res, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != results.Pass || len(res.Runs) != 1 || res.Summary.KPIs == 0 || res.Summary.Passed != res.Summary.KPIs {
		t.Fatalf("status %s, summary %+v", res.Status, res.Summary)
	}
	for name, v := range junitCases(t, dir) {
		if v != "pass" {
			t.Errorf("junit case %s: %s", name, v)
		}
	}
	run := res.Runs[0]
	samples, err := telemetry.ReadStore(filepath.Join(dir, run.Files["telemetry"]))
	if err != nil {
		t.Fatal(err)
	}
	// Everything in the store came through the gNMI collector.
	if int64(len(samples)) != run.Telemetry.Samples || len(samples) == 0 {
		t.Fatalf("store has %d samples, the collector received %d", len(samples), run.Telemetry.Samples)
	}
	// Every switch port has out-octets samples at every tick.
	f, err := inventory.ParseSpec("fattree:hosts=16,tiers=3,gbps=100")
	if err != nil {
		t.Fatal(err)
	}
	perPort := map[string]int{}
	times := map[int64]bool{}
	for _, s := range samples {
		if s.Measurement == telemetry.MeasInterface && s.Field == telemetry.FieldOutOctets {
			perPort[s.Target+":"+s.Interface]++
			times[s.Time] = true
		}
	}
	ports := 0
	for _, n := range f.Nodes {
		if !n.IsSwitch() {
			continue
		}
		for _, p := range n.Ports {
			ports++
			if got := perPort[n.Name+":"+f.Ports[p].Name]; got != len(times) {
				t.Errorf("%s:%s has %d samples, want one per tick (%d)", n.Name, f.Ports[p].Name, got, len(times))
			}
		}
	}
	if ports != 80 || len(times) < 10 {
		t.Fatalf("%d switch ports, %d ticks", ports, len(times))
	}
}

func TestRunDegradedUplinkIsASymmetryAnomaly(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", suites+"degraded-uplink.yaml", "--out", dir, "--quiet")
	if code != exitFail {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	res, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	an := res.Runs[0].Anomalies
	if len(an) != 1 || an[0].Kind != results.KindSymmetry || an[0].Member != "leaf1:Ethernet5" || an[0].Group != "leaf-uplinks:leaf1" {
		t.Fatalf("anomalies %+v, want exactly leaf1:Ethernet5 in leaf-uplinks:leaf1", an)
	}
	cases := junitCases(t, dir)
	if cases["fabric.symmetry_anomalies"] != "failure" || cases["perm.slowdown_p99"] != "pass" {
		t.Fatalf("junit cases %v", cases)
	}
	if !strings.Contains(stdout, "leaf1:Ethernet5") {
		t.Errorf("the summary does not name the port:\n%s", stdout)
	}
}

func TestRunSlowNICIsAStraggler(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", suites+"slow-nic.yaml", "--out", dir, "--quiet")
	if code != exitFail {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	res, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var stragglers []string
	for _, a := range res.Runs[0].Anomalies {
		if a.Kind == results.KindStraggler {
			stragglers = append(stragglers, a.Member)
		}
	}
	if !slices.Equal(stragglers, []string{"host6"}) {
		t.Fatalf("stragglers %v, want exactly [host6]; anomalies %+v", stragglers, res.Runs[0].Anomalies)
	}
	if junitCases(t, dir)["fabric.stragglers"] != "failure" {
		t.Fatal("the stragglers KPI is not a failing JUnit case")
	}
}

func TestRunBadSuitesExit2(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := "fabric: {spec: \"leafspine:leaves=2,spines=2,hosts_per_leaf=2\"}\njobs:\n  - {name: p, workload: permutation, size: 1MiB}\n"
	cases := []struct{ name, body, want string }{
		{"unknown-key.yaml", base + "telemetri: {interval: 1ms}\n", "unknown-key.yaml:4:1: telemetri"},
		{"bad-size.yaml", "fabric: {spec: \"leafspine:leaves=2,spines=2,hosts_per_leaf=2\"}\njobs:\n  - {name: p, workload: permutation, size: 1Mib}\n", "bad-size.yaml:3:"},
		{"bad-metric.yaml", base + "kpis:\n  - {metric: goodput, min: 1}\n", `bad-metric.yaml:5:14: kpis[0].metric: unknown metric "goodput"`},
		{"vrfs.yaml", base + "features:\n  vrfs: [{name: blue, table: 10, hosts: [host0, host1]}]\n", "vrfs.yaml:3:5: jobs[0].hosts: job p sends from host"}, // across VRFs
	}
	for _, c := range cases {
		code, _, stderr := runCLI(t, "run", write(c.name, c.body), "--out", filepath.Join(dir, "out-"+c.name), "--quiet")
		if code != exitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", c.name, code, stderr, c.want)
		}
	}
}

func TestReportReRendersFromStoredResults(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI(t, "run", suites+"degraded-uplink.yaml", "--out", dir, "--quiet"); code != exitFail {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	html := filepath.Join(dir, "report.html")
	before, _ := os.ReadFile(html)
	if err := os.Remove(html); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "report", dir); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	after, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	// The footer says when the report was rendered (to the second): the
	// one thing that may differ.
	gen := regexp.MustCompile(`generated \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC`)
	before, after = gen.ReplaceAll(before, []byte("generated T")), gen.ReplaceAll(after, []byte("generated T"))
	if string(after) != string(before) || !strings.Contains(string(after), "leaf1:Ethernet5") {
		t.Fatalf("re-rendered report differs from the original (%d vs %d bytes) or lacks the anomaly", len(after), len(before))
	}
	if code, _, stderr := runCLI(t, "report", filepath.Join(dir, "nope")); code != exitBadInput || !strings.Contains(stderr, "results.json") {
		t.Fatalf("report of a missing dir: exit %d, %s", code, stderr)
	}
}

// An unreachable InfluxDB does not lose the run: the embedded store is
// analysed, the points go to the spill file and the exit status is 3 (an
// infrastructure error).
func TestRunUnreachableInfluxSpillsAndExits3(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", suites+"smoke.yaml", "--out", dir, "--quiet",
		"--influx", "http://127.0.0.1:1", "--influx-bucket", "fb/autogen", "--influx-timeout", "500ms")
	if code != exitInfra {
		t.Fatalf("exit %d, want 3\n%s\n%s", code, stdout, stderr)
	}
	res, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := res.Runs[0]
	st := run.Telemetry.InfluxStats
	if run.Status != results.Error || run.ErrorKind != results.ErrorInfrastructure || !strings.Contains(run.Error, "influxdb") || len(run.KPIs) == 0 || st == nil || st.Failed == 0 || st.Written != 0 {
		t.Fatalf("run: status %s, error %q, %d KPIs, influx stats %+v", run.Status, run.Error, len(run.KPIs), st)
	}
	spill, err := os.ReadFile(filepath.Join(dir, st.SpillFile))
	points := 0
	for _, line := range strings.Split(string(spill), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			points++
		}
	}
	if err != nil || points != int(st.Failed) {
		t.Fatalf("spill file %s: %v, %d points for %d failed", st.SpillFile, err, points, st.Failed)
	}
}

// The end-of-run summary names each culprit by rank with its cause,
// window, evidence and victim count, ties each injected fault to its
// anomaly, and gives imbalances one line each.
func TestRunSummaryLines(t *testing.T) {
	res := &results.Results{Suite: "s", Status: results.Fail,
		Summary: results.Summary{Runs: 1, KPIs: 2, Passed: 1, Failed: 1, Anomalies: 2},
		Runs: []results.Run{{ID: "r1", Status: results.Fail,
			KPIs: []results.KPI{{Name: "perm.busbw", Verdict: results.Pass}, {Name: "fabric.symmetry_anomalies", Verdict: results.Fail, Message: "2 anomalies"}},
			Anomalies: []results.Anomaly{
				{Rank: 1, Kind: results.KindSymmetry, Group: "leaf-uplinks:leaf0", Member: "leaf0:Ethernet5", Cause: results.CauseCapacity,
					StartUs: 200, EndUs: 900, Evidence: "50% of line rate while backlogged\n(more)", Faults: []string{"F1"},
					Victims: []results.Victim{{Member: "spine1"}, {Member: "host3"}, {Member: "host4"}}},
				{Rank: 2, Kind: results.KindStraggler, Group: "job:perm", Member: "host6", Cause: results.CauseSlowNIC, StartUs: 1000, EndUs: 3000,
					DetectedUs: 1100, TimeToDetectUs: 100,
					Signals: []results.Signal{{Name: "rate_util", Value: 0.4, Baseline: 0.95}}, Victims: []results.Victim{{Member: "host2"}}},
			},
			FaultMatches: []results.FaultMatch{
				{ID: "F1", Description: "degrade leaf0:Ethernet5 to 50% at 200us", StartUs: 200, EndUs: -1, Anomaly: 1},
				{ID: "F2", Description: "down spine2:Ethernet1 at 1ms", StartUs: 1000, EndUs: -1},
			},
			Imbalances: []results.Imbalance{{Group: "leaf-uplinks:leaf2", Members: 8, CV: 0.21, MaxMin: 1.9, Jain: 0.957, MaxMember: "leaf2:Ethernet1", MinMember: "leaf2:Ethernet6"}},
			CongestionTrees: []results.CongestionTree{{Root: "leaf3", RootPorts: []string{"leaf3:Ethernet0"}, RootHosts: []string{"host12"}, Cause: results.TreeIncast,
				StartUs: 0, EndUs: 200, Hops: 3, Switches: 6, PortsPaused: 11, HostsPaused: 2, PausedUs: 690, PauseFrames: 89, MaxPauseRate: 80000}},
			AnalysisNotes: []string{"no PFC counters"},
		}}}
	var b bytes.Buffer
	printRunSummary(&b, res)
	want := `s: FAIL — 1 run, 1/2 KPIs passed, 1 failed, 2 anomalies
  anomaly #1 [r1] leaf0:Ethernet5 (capacity, 200–900 µs): 50% of line rate while backlogged; 3 victims
  anomaly #2 [r1] host6 (slow-nic, 1–3 ms): rate_util 40 % (group 95 %); 1 victim; detected at 1.1 ms (100 µs to detect); matches no injected fault
  congestion tree [r1] leaf3 (incast into host12, 0–200 µs): 3 hop(s), 11 port(s) and 2 host NIC(s) paused, 690 µs paused, 89 pause frames (busiest port 80000/s)
  note [r1] no PFC counters
  fault F1 [r1] degrade leaf0:Ethernet5 to 50% at 200us -> anomaly #1
  fault F2 [r1] down spine2:Ethernet1 at 1ms -> no anomaly
  imbalance [r1] leaf-uplinks:leaf2 (8 members): CV 0.21, max/min 1.9, Jain 0.957; most loaded leaf2:Ethernet1, least loaded leaf2:Ethernet6
  KPI FAIL [r1] fabric.symmetry_anomalies: 2 anomalies
`
	if b.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", b.String(), want)
	}
}
