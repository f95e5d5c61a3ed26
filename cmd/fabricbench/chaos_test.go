package main

import (
	"bufio"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/internal/influxtest"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// Chaos test (issue 34): the results file system fills up. The results
// directory is on a real tmpfs that a filler file keeps full but for k
// pages, for k = 0, 1, 2, 3, 4, 6, 9, ... until the run fits: at every k the run exits
// 3 (or 0 once everything fits), the results line claims only files that
// are there and whole, and every file that is on disk is readable (no
// partial results.json, flows.csv or telemetry row). Between "nothing
// written" and "everything written" the partial cases show up: the
// results but not the reports.
func TestChaosResultsDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the full-disk chaos test mounts a tmpfs: it needs root (./scripts/test.sh runs as root)")
	}
	dir := t.TempDir()
	mnt := filepath.Join(dir, "fs")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=2m"); err != nil {
		t.Skipf("cannot mount a tmpfs for the full-disk test: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, 0); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	// Two points (a matrix), so that a save after the first can be the
	// "earlier save" the CLI names; at 1 Gb/s the jobs take 10-20 ms,
	// sampled every 100 µs.
	suite := writeFile(t, dir, "full.yaml", `name: full
fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=1"}
telemetry: {interval: 100us}
matrix: {"jobs[name=p].size": [1MiB, 2MiB]}
jobs:
  - {name: p, workload: permutation, size: 1MiB}
kpis:
  - {metric: completed_fraction, scope: p, min: 1}
`)
	filler := filepath.Join(mnt, "filler")
	pageSize := int64(os.Getpagesize())
	seen := map[string]int{} // results-line kind -> first k
	// k grows by half each step (0, 1, 2, 3, 4, 6, 9, 13, ...): the
	// outcomes span ranges of pages, and each step is a whole run.
	for k := int64(0); ; k = max(k+1, k*3/2) {
		if k > 1024 {
			t.Fatalf("the run did not fit in %d free pages", k)
		}
		out := filepath.Join(mnt, "out")
		if err := os.RemoveAll(out); err != nil {
			t.Fatal(err)
		}
		fill(t, filler, k*pageSize)
		code, stdout, stderr := runCLI(t, "run", suite, "--out", out, "--quiet")
		line := resultsLineOf(stdout)
		if code == exitBadInput {
			t.Fatalf("exit 2: %s", stderr)
		}
		kind := checkFullDisk(t, k, out, code, line, stderr)
		if _, ok := seen[kind]; !ok {
			seen[kind] = int(k)
			t.Logf("%d free pages: exit %d, %s\n  stderr: %s", k, code, line, firstLine(stderr))
		}
		if code == exitOK {
			break
		}
	}
	t.Logf("first free-page count of each outcome: %v", seen)
	for _, kind := range []string{"nothing", "results-only", "all"} {
		if _, ok := seen[kind]; !ok {
			t.Errorf("no run ended with %q written (outcomes %v)", kind, seen)
		}
	}
}

// fill makes the filler take every page of its file system but free.
func fill(t *testing.T, filler string, free int64) {
	t.Helper()
	os.Remove(filler)
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	var n int64
	for {
		w, err := f.Write(chunk)
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < free {
		t.Fatalf("the file system holds only %d bytes, want %d free", n, free)
	}
	if err := f.Truncate(n - free); err != nil {
		t.Fatal(err)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(filler), &st); err != nil {
		t.Fatal(err)
	}
	if got := int64(st.Bavail) * st.Bsize; got != free {
		t.Fatalf("%d bytes free after filling, want %d", got, free)
	}
}

var resultsLineRE = regexp.MustCompile(`(?m)^results: .*$`)

func resultsLineOf(stdout string) string { return resultsLineRE.FindString(stdout) }

// checkFullDisk checks one run on a file system that filled up: the exit
// status, that every file the results line claims is there and whole,
// that the line names what was not written, and that what is on disk is
// readable. It returns the outcome: nothing, earlier (an earlier
// results.json), results-only (results.json, maybe junit.xml, not the
// report), all.
func checkFullDisk(t *testing.T, k int64, out string, code int, line, stderr string) string {
	t.Helper()
	fail := func(format string, a ...any) {
		t.Helper()
		t.Errorf("%d free pages: "+format, append([]any{k}, a...)...)
	}
	resJSON := filepath.Join(out, results.FileName)
	junit := filepath.Join(out, "junit.xml")
	html := filepath.Join(out, "report.html")
	var kind string
	var claimed []string
	switch {
	case line == "results: "+html:
		kind, claimed = "all", []string{resJSON, junit, html}
		if code != exitOK {
			fail("exit %d with everything claimed written", code)
		}
	case line == "results: NOT written to "+out:
		kind = "nothing"
	case strings.HasPrefix(line, "results: NOT written to "+out+"; "+resJSON+" is an earlier save with "):
		kind, claimed = "earlier", []string{resJSON}
	case strings.HasPrefix(line, "results: "+resJSON+" as saved after the last run"):
		kind, claimed = "earlier", []string{resJSON}
	case strings.HasPrefix(line, "results: "+resJSON+", "+junit+" (report.html NOT written)"):
		kind, claimed = "results-only", []string{resJSON, junit}
	case strings.HasPrefix(line, "results: "+resJSON+" (junit.xml and report.html NOT written)"):
		kind, claimed = "results-only", []string{resJSON}
	case line == "":
		kind = "nothing" // the run could not start (its directories could not be made)
	default:
		fail("results line %q", line)
		return "unknown"
	}
	if kind != "all" {
		if code != exitInfra {
			fail("exit %d, want 3 (the results file system is full): %s", code, line)
		}
		if !strings.Contains(stderr, "no space left on device") {
			fail("stderr does not say the disk is full: %s", firstLine(stderr))
		}
		if strings.Contains(line, html) {
			fail("report.html claimed: %s", line)
		}
	}
	for _, f := range claimed {
		if _, err := os.Stat(f); err != nil {
			fail("%s claimed but not there: %v", f, err)
		}
	}
	// Whatever is on disk is whole.
	if _, err := os.Stat(resJSON); err == nil {
		res, err := results.Load(out)
		if err != nil {
			fail("results.json on disk is unreadable: %v", err)
		} else {
			checkRunFiles(t, k, out, res)
		}
	}
	if b, err := os.ReadFile(junit); err == nil {
		var v struct{}
		if err := xml.Unmarshal(b, &v); err != nil {
			fail("junit.xml on disk is not whole XML: %v", err)
		}
	}
	if b, err := os.ReadFile(html); err == nil && !strings.Contains(string(b), "</html>") {
		fail("report.html on disk is cut off (%d bytes)", len(b))
	}
	return kind
}

// checkRunFiles: every run file results.json names that is on disk is
// readable (flows.csv whole, the telemetry store's rows whole).
func checkRunFiles(t *testing.T, k int64, out string, res *results.Results) {
	t.Helper()
	for _, r := range res.Runs {
		if f := r.Files["flows"]; f != "" {
			if b, err := os.ReadFile(filepath.Join(out, f)); err == nil {
				rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
				if err != nil || len(rows) != 1+4 {
					t.Errorf("%d free pages: %s: %v, %d rows; want a header and 4 flows", k, f, err, len(rows))
				}
			}
		}
		if f := r.Files["telemetry"]; f != "" {
			if _, err := os.Stat(filepath.Join(out, f)); err == nil {
				if _, err := telemetry.ReadStore(filepath.Join(out, f)); err != nil {
					t.Errorf("%d free pages: the telemetry store %s is unreadable: %v", k, f, err)
				}
			}
		}
	}
}

// TestChaosInterruptTwice: Ctrl-C during the jobs of a netns lab run stops
// them and starts the teardown (said on stderr); Ctrl-C again exits at
// once with 130, saying that what is left is reclaimed later; lab gc then
// reclaims what the run left (its owner is gone) and nothing of the lab
// remains. The lab's management subnet is 198.19.226.0/24.
func TestChaosInterruptTwice(t *testing.T) {
	labtest.Require(t)
	if testing.Short() {
		t.Skip("lab chaos test skipped in -short mode")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "fabricbench")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // deployed to the lab's hosts too
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	suite := writeFile(t, dir, "twice.yaml", `name: twice
fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=0.05"}
`+labtest.SuiteBody("reps", "")+`jobs:
  - {name: large, workload: permutation, size: 64MiB}
`)
	state, out := t.TempDir(), filepath.Join(dir, "out")
	cmd := exec.Command(bin, "run", suite, "--backend", "netns", "--out", out)
	cmd.Env = append(os.Environ(), "FABRICBENCH_LAB_STATE="+state, "FABRICBENCH_LAB_MGMT_SUBNET=198.19.226.0/24")
	lines, logText := startLogged(t, cmd)
	lab := ""
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		// Whatever happened, nothing of the lab stays.
		runCLI(t, "lab", "gc", "--state-dir", state)
		if lab != "" {
			if s := labtest.TakeSnapshot(t, lab); !s.Empty() {
				t.Errorf("lab %s left after lab gc: %s", lab, s)
			}
		}
	})
	seen := labName(regexp.MustCompile(`deploying lab (fbn[0-9a-f]{6}) `), &lab)
	waitFor := func(what string, d time.Duration) {
		t.Helper()
		waitForLine(t, lines, logText, what, d, seen)
	}
	waitFor("routing watch: ", 4*time.Minute) // the jobs started
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	waitFor("interrupted: stopping the jobs, saving what was measured and tearing down (interrupt again to exit at once)", 30*time.Second)
	cmd.Process.Signal(os.Interrupt)
	second := time.Now()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("the run did not exit within 30 s of the second interrupt:\n%s", logText())
	}
	took := time.Since(second)
	got := logText()
	t.Logf("exit %d %v after the second interrupt:\n%s", cmd.ProcessState.ExitCode(), took.Round(time.Millisecond), got)
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit %d after two interrupts, want 130", code)
	}
	if !strings.Contains(got, "interrupted again: exiting without tearing down; the next run, lab up or `fabricbench lab gc` removes what this run left; results so far are in "+out) {
		t.Errorf("the second interrupt is not explained")
	}
	left := labtest.TakeSnapshot(t, lab)
	t.Logf("left by the run: %s", left)
	code, stdout, stderr := runCLI(t, "lab", "gc", "--state-dir", state)
	t.Logf("lab gc: exit %d\n%s%s", code, stdout, stderr)
	if code != exitOK {
		t.Errorf("lab gc: exit %d", code)
	}
	if !left.Empty() && !strings.Contains(stdout, "reclaimed lab "+lab+" ") {
		t.Errorf("lab gc does not say it reclaimed lab %s, which the run left (%s)", lab, left)
	}
	if s := labtest.TakeSnapshot(t, lab); !s.Empty() {
		t.Errorf("lab %s left after lab gc: %s", lab, s)
	}
}

// TestChaosInfluxDownForTheRun: InfluxDB is stopped before the run and
// stays down. Nothing is lost: the run is analysed from the embedded
// store, every sample is kept in runs/<id>/influx-unsent.lp for a later
// write, the run is an infrastructure error naming InfluxDB, exit 3, and
// the wait for InfluxDB is bounded by --influx-timeout. (InfluxDB stopped
// during a run and back later: TestRunInfluxOutageLosesNothing.)
func TestChaosInfluxDownForTheRun(t *testing.T) {
	srv := influxtest.Start(t, influxtest.WithoutFlux())
	srv.Stop()
	dir := t.TempDir()
	suite := writeFile(t, dir, "influx-down.yaml", `name: influx-down
fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=1"}
telemetry: {interval: 100us}
jobs:
  - {name: p, workload: permutation, size: 1MiB}
kpis:
  - {metric: completed_fraction, scope: p, min: 1}
`)
	out := filepath.Join(dir, "out")
	start := time.Now()
	code, stdout, stderr := runCLI(t, append(influxRunArgs(t, srv, suite, out), "--influx-timeout", "3s")...)
	took := time.Since(start)
	t.Logf("exit %d after %v\n%s\n%s", code, took.Round(time.Millisecond), stdout, stderr)
	if code != exitInfra || !strings.Contains(stderr, "influxdb") {
		t.Errorf("exit %d, stderr %q; want 3 naming InfluxDB", code, firstLine(stderr))
	}
	if took > time.Minute {
		t.Errorf("the run took %v with InfluxDB down; --influx-timeout 3s bounds the wait", took)
	}
	res, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	run := res.Runs[0]
	if run.Status != results.Error || run.ErrorKind != results.ErrorInfrastructure || !strings.HasPrefix(run.Error, "influxdb: ") {
		t.Errorf("run %s (%s): %q; want an infrastructure error naming InfluxDB", run.Status, run.ErrorKind, run.Error)
	}
	if len(run.KPIs) != 1 || run.KPIs[0].Verdict != results.Pass || run.Jobs[0].Completed != run.Jobs[0].Flows {
		t.Errorf("the run was not analysed from the embedded store: KPIs %+v, jobs %+v", run.KPIs, run.Jobs)
	}
	samples, err := telemetry.ReadStore(filepath.Join(out, run.Files["telemetry"]))
	if err != nil || len(samples) == 0 || int64(len(samples)) != run.Telemetry.Samples {
		t.Fatalf("the store: %d samples (%v), results.json says %d", len(samples), err, run.Telemetry.Samples)
	}
	spill, err := os.ReadFile(filepath.Join(out, "runs", run.ID, "influx-unsent.lp"))
	if err != nil {
		t.Fatalf("no influx-unsent.lp: %v", err)
	}
	lines := strings.Count(string(spill), "\n")
	t.Logf("%d samples in the store, %d points in influx-unsent.lp (%d bytes)", len(samples), lines, len(spill))
	st := run.Telemetry.InfluxStats
	if st == nil || st.Written != 0 || st.Points == 0 {
		t.Fatalf("influx stats %+v: want points, none written", st)
	}
	if int64(lines) < st.Points || !strings.Contains(run.Error, fmt.Sprintf("all %d were saved as line protocol to ", st.Points)) {
		t.Errorf("influx-unsent.lp has %d lines for %d points; run error %q", lines, st.Points, run.Error)
	}
}

// startLogged starts cmd with its output through a pipe: every line is
// kept (logText) and offered on lines, dropped when nobody is reading;
// lines is closed when the output ends.
func startLogged(t *testing.T, cmd *exec.Cmd) (lines <-chan string, logText func() string) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	var mu sync.Mutex
	var log strings.Builder
	ch := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			select {
			case ch <- sc.Text():
			default:
			}
		}
		close(ch)
	}()
	return ch, func() string { mu.Lock(); defer mu.Unlock(); return log.String() }
}

// labName is a waitForLine seen function that sets *lab to the lab name
// re's first group finds in a line.
func labName(re *regexp.Regexp, lab *string) func(string) {
	return func(l string) {
		if m := re.FindStringSubmatch(l); m != nil {
			*lab = m[1]
		}
	}
}

// waitForLine reads the run's output lines until one contains what,
// failing the test when the output ends first or d passes; seen sees
// every line read.
func waitForLine(t *testing.T, lines <-chan string, logText func() string, what string, d time.Duration, seen func(string)) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the run ended before %q:\n%s", what, logText())
			}
			seen(l)
			if strings.Contains(l, what) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q in %v:\n%s", what, d, logText())
		}
	}
}
