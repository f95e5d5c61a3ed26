package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/results"
)

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const tinyFabric = "fabric: {spec: \"leafspine:leaves=2,spines=2,hosts_per_leaf=2\"}\n"

// A run that ends (sim.end) before a single flow finished failed its job
// KPIs: exit 1, not an error (2).
func TestRunZeroFinishedFlowsIsAFailure(t *testing.T) {
	dir := t.TempDir()
	suite := writeFile(t, dir, "zero.yaml", tinyFabric+`jobs:
  - {name: p, workload: permutation, size: 64KiB}
kpis:
  - {metric: fct_p99_us, scope: p, max: 1000}
  - {metric: completed_fraction, scope: p, min: 1}
sim: {end: 1us}
`)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "run", suite, "--out", out, "--quiet")
	if code != exitFail {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	res, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range res.Runs[0].KPIs {
		if k.Verdict != results.Fail {
			t.Errorf("KPI %s: %s (%s), want fail", k.Name, k.Verdict, k.Message)
		}
	}
	if !strings.Contains(stdout, "KPI FAIL [zero] p.fct_p99_us: job p did not finish: 0 of 4 flows finished") {
		t.Errorf("summary:\n%s", stdout)
	}
}

// Limits on what a suite expands into: exit 2 with the file, line,
// column, field and the limit, before anything is expanded.
func TestRunExpansionLimitsExit2(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, body, want string }{
		{"flap.yaml", tinyFabric + "jobs:\n  - {name: p, workload: permutation, size: 64KiB}\nfaults:\n  - {kind: flap, link: leaf0-spine0, period: 10us, count: 2147483648}\n",
			"flap.yaml:5:59: faults[0].count: 2147483648 flap cycles is more than the maximum of 10000"},
		{"reps.yaml", tinyFabric + "jobs:\n  - {name: p, workload: permutation, size: 64KiB, repetitions: 1000000000}\n",
			"reps.yaml:3:64: jobs[0].repetitions: 1000000000 is more than the maximum of 10000"},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(t, "run", writeFile(t, dir, c.name, c.body), "--out", filepath.Join(dir, "out-"+c.name), "--quiet")
		if code != exitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", c.name, code, stderr, c.want)
		}
	}
}

// A report that could not be written (here: report.html is taken by a
// directory, as good as a full disk for the rename that replaces it) is
// not printed as written, and the exit status is 2.
func TestRunUnwrittenReportIsNotPrinted(t *testing.T) {
	dir := t.TempDir()
	suite := writeFile(t, dir, "ok.yaml", tinyFabric+"jobs:\n  - {name: p, workload: permutation, size: 64KiB}\n")
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(filepath.Join(out, "report.html", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "run", suite, "--out", out, "--quiet")
	if code != exitInfra {
		t.Fatalf("exit %d, want 3 (the results directory failed)\n%s\n%s", code, stdout, stderr)
	}
	// junit.xml is written before report.html, so it is named as written.
	if strings.Contains(stdout, "report.html\n") || !strings.Contains(stdout, "junit.xml (report.html NOT written)") {
		t.Errorf("stdout claims or does not deny the report:\n%s", stdout)
	}
	if !strings.Contains(stderr, "writing reports") || !strings.Contains(stderr, "report.html") {
		t.Errorf("stderr %q does not say which file failed", stderr)
	}
	if _, err := results.Load(out); err != nil {
		t.Errorf("results.json, which could be written: %v", err)
	}
}

// Interrupted suites exit 130, as the CLI help, the README and
// docs/results-schema.md say; results.ExitCode agrees.
func TestInterruptedExitStatusIsDocumented(t *testing.T) {
	if got := results.ExitCode(&results.Results{Status: results.Interrupted}); got != exitInterrupted || exitInterrupted != 130 {
		t.Fatalf("results.ExitCode(interrupted) = %d, CLI %d; want 130 both", got, exitInterrupted)
	}
	doc, err := os.ReadFile("../../docs/results-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	status := regexp.MustCompile("(?m)^\\| `status` \\| string \\| `pass` \\(every KPI.*$").Find(doc)
	if !strings.Contains(string(status), "130 interrupted") || strings.Contains(string(status), "2 error/interrupted") {
		t.Errorf("docs/results-schema.md status row: %s", status)
	}
	// Ctrl-C before planning finished: 130, and nothing claimed.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	suite := writeFile(t, dir, "ok.yaml", tinyFabric+"jobs:\n  - {name: p, workload: permutation, size: 64KiB}\n")
	var out, errb strings.Builder
	err = runSuite(ctx, &out, &errb, suite, runOpts{out: filepath.Join(dir, "out"), quiet: true})
	if exitCode(err) != 130 || strings.Contains(out.String(), "results:") {
		t.Fatalf("exit %d (%v), stdout %q", exitCode(err), err, out.String())
	}
}
