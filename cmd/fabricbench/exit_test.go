package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// A feature the netns backend cannot do is refused while planning: exit 2
// within a second, at the field's file:line:col, and no namespace made.
// Guard: PATH is empty for the test, so were the suite not refused while
// planning, the lab's preflight would fail (no vtysh) before any namespace
// exists.
func TestRunNetnsUnsupportedFeatureExit2AtPlan(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	before := netnsNames(t)
	dir := t.TempDir()
	suite := filepath.Join(dir, "lab.yaml")
	os.WriteFile(suite, []byte(`fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=0.2"}
features:
  ecn: {enabled: true}
  trimming: {enabled: false}
telemetry: {interval: 5ms}
jobs:
  - {name: p, workload: permutation, size: 64KiB}
`), 0o644)
	start := time.Now()
	code, stdout, stderr := runCLI(t, "run", suite, "--backend", "netns", "--out", filepath.Join(dir, "out"), "--quiet",
		"--agent-binary", "/nonexistent")
	took := time.Since(start)
	want := "lab.yaml:3:18: features.ecn.enabled: the netns backend cannot do ECN marking (RED/WRED)"
	if code != exitBadInput || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, stderr %q; want 2 and %q\n%s", code, stderr, want, stdout)
	}
	if took > time.Second {
		t.Errorf("took %v, want under a second", took)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Errorf("a results directory was made; nothing may run")
	}
	if after := netnsNames(t); after != before {
		t.Errorf("network namespaces changed: %q -> %q", before, after)
	}
}

func netnsNames(t *testing.T) string {
	ents, err := os.ReadDir("/run/netns")
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// brokenLab is a backend whose fabric does not come up.
type brokenLab struct{}

func (brokenLab) Name() string { return "broken-lab-test" }
func (brokenLab) Up(context.Context, *inventory.Fabric) error {
	return errors.New("deploy lab fbn000001: ssh leaf0: connection refused")
}
func (brokenLab) Configure(context.Context, runspec.Features) error     { return nil }
func (brokenLab) DeployAgents(context.Context, runspec.Transport) error { return nil }
func (brokenLab) InjectFaults(context.Context, []runspec.Fault) error   { return nil }
func (brokenLab) Down(context.Context) error                            { return nil }
func (brokenLab) TelemetryTargets(context.Context, time.Duration) ([]telemetry.TargetSpec, error) {
	return nil, nil
}
func (brokenLab) RunJobs(context.Context, *runspec.Workload, func(harness.Progress)) (*harness.RunResult, error) {
	return nil, errors.New("not up")
}

func init() { harness.Register("broken-lab-test", func() harness.Backend { return brokenLab{} }) }

// A lab that does not come up is an infrastructure error: exit 3, the
// run in error with error_kind infrastructure, the summary counting it.
func TestRunInfrastructureFailureExit3(t *testing.T) {
	dir := t.TempDir()
	suite := filepath.Join(dir, "s.yaml")
	os.WriteFile(suite, []byte(`fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2"}
jobs:
  - {name: p, workload: permutation, size: 64KiB}
`), 0o644)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "run", suite, "--backend", "broken-lab-test", "--out", out, "--quiet")
	if code != exitInfra || !strings.Contains(stderr, "connection refused") {
		t.Fatalf("exit %d, stderr %q; want 3\n%s", code, stderr, stdout)
	}
	if !strings.Contains(stdout, "s: ERROR — 1 run (1 error), 0/0 KPIs passed, 0 failed, 0 anomalies") {
		t.Errorf("summary:\n%s", stdout)
	}
	res, err := results.Load(out)
	if err != nil || res.Runs[0].ErrorKind != results.ErrorInfrastructure || results.ExitCode(res) != exitInfra {
		t.Fatalf("results %v %+v", err, res)
	}
}

// The summary counts what it has: an errored run, runs that were
// interrupted or skipped after Ctrl-C, KPI errors; "1 run", "2 runs".
func TestRunSummaryCounts(t *testing.T) {
	for _, c := range []struct {
		sum  results.Summary
		st   string
		want string
	}{
		{results.Summary{Runs: 1, RunsErrored: 1}, results.Error, "s: ERROR — 1 run (1 error), 0/0 KPIs passed, 0 failed, 0 anomalies"},
		{results.Summary{Runs: 3, KPIs: 4, Passed: 4, Skipped: 2, Anomalies: 1, RunsInterrupted: 1, RunsSkipped: 1}, results.Interrupted,
			"s: INTERRUPTED — 3 runs (1 finished, 1 interrupted, 1 skipped), 4/4 KPIs passed, 0 failed, 2 not evaluated, 1 anomaly"},
		{results.Summary{Runs: 3, RunsSkipped: 3}, results.Interrupted, "s: INTERRUPTED — 3 runs (3 skipped), 0/0 KPIs passed, 0 failed, 0 anomalies"},
		{results.Summary{Runs: 2, KPIs: 3, Passed: 1, Failed: 1, Errors: 1, RunsErrored: 1}, results.Error,
			"s: ERROR — 2 runs (1 finished, 1 error), 1/3 KPIs passed, 1 failed, 1 KPI error, 0 anomalies"},
		{results.Summary{Runs: 2, KPIs: 2, Passed: 2, Anomalies: 2}, results.Pass, "s: PASS — 2 runs, 2/2 KPIs passed, 0 failed, 2 anomalies"},
	} {
		if got := summaryLine(&results.Results{Suite: "s", Status: c.st, Summary: c.sum}); got != c.want {
			t.Errorf("summary\n got %s\nwant %s", got, c.want)
		}
	}
}

// The exit statuses the code uses are the ones documented, in the README,
// the --help texts and docs/results-schema.md.
func TestExitStatusesDocumented(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	codes := map[int]bool{}
	for _, s := range results.ExitStatuses {
		codes[s.Code] = true
	}
	for _, c := range []int{exitOK, exitFail, exitBadInput, exitInfra, exitInterrupted} {
		if !codes[c] {
			t.Errorf("exit status %d is used but not in results.ExitStatuses", c)
		}
	}
	// The README's exit status section and the schema's list every status
	// with its meaning; the run help lists them all, the lab help all but
	// 130.
	readme := read(filepath.Join("..", "..", "README.md"))
	sec := regexp.MustCompile(`(?s)\n#+ Exit status\n(.*?)\n#`).FindStringSubmatch(readme)
	if sec == nil {
		t.Fatal("README has no \"Exit status\" section")
	}
	schema := read(filepath.Join("..", "..", "docs", "results-schema.md"))
	ssec := regexp.MustCompile(`(?s)## Exit status\n(.*?)(\n## |$)`).FindStringSubmatch(schema)
	if ssec == nil {
		t.Fatal("docs/results-schema.md has no \"## Exit status\" section")
	}
	runHelp, labHelp := newRunCmd().Long, newLabCmd().Long
	for _, s := range results.ExitStatuses {
		row := "| " + strconv.Itoa(s.Code) + " | " + s.Meaning + " |"
		if !strings.Contains(sec[1], row) {
			t.Errorf("README exit status section lacks %q", row)
		}
		if !strings.Contains(ssec[1], row) {
			t.Errorf("docs/results-schema.md exit status section lacks %q", row)
		}
		if !strings.Contains(runHelp, strconv.Itoa(s.Code)+" "+s.Meaning) {
			t.Errorf("run --help lacks %d %s", s.Code, s.Meaning)
		}
		if s.Code != exitInterrupted && !strings.Contains(labHelp, strconv.Itoa(s.Code)+" "+s.Meaning) {
			t.Errorf("lab --help lacks %d %s", s.Code, s.Meaning)
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^\| (\d+) \|`).FindAllStringSubmatch(sec[1]+ssec[1], -1) {
		if c, _ := strconv.Atoi(m[1]); !codes[c] {
			t.Errorf("documented exit status %d is not in results.ExitStatuses", c)
		}
	}
}
