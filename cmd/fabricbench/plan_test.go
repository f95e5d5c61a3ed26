package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// exampleSuites lists every suite under examples/suites, subdirectories
// included.
func exampleSuites(t testing.TB) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(suites, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no example suites found")
	}
	return out
}

// Every example suite plans cleanly (exit 0) on the backend a user gets
// by default, and the lab suites also on the netns backend they are
// written for; planning writes nothing. How long each plan took is
// logged (BenchmarkPlanExampleSuites measures it).
func TestPlanEveryExampleSuite(t *testing.T) {
	wd, _ := os.Getwd()
	before, _ := os.ReadDir(wd)
	for _, file := range exampleSuites(t) {
		runs := [][]string{{"plan", file}}
		if strings.HasPrefix(filepath.Base(file), "lab-") {
			runs = append(runs, []string{"plan", file, "--backend", "netns"})
		}
		for _, args := range runs {
			start := time.Now()
			code, stdout, stderr := runCLI(t, args...)
			took := time.Since(start)
			if code != exitOK {
				t.Errorf("%q: exit %d\n%s%s", args, code, stdout, stderr)
				continue
			}
			t.Logf("%q: %v", args, took.Round(time.Microsecond))
			for _, want := range []string{"suite ", "point 1/", "  fabric ", "  job ", "plan only: nothing was brought up, run or written"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("%q: the plan lacks %q:\n%s", args, want, stdout)
				}
			}
		}
	}
	after, _ := os.ReadDir(wd)
	if len(after) != len(before) {
		t.Errorf("planning wrote into %s: %d entries before, %d after", wd, len(before), len(after))
	}
}

func BenchmarkPlanExampleSuites(b *testing.B) {
	files := exampleSuites(b)
	for b.Loop() {
		for _, f := range files {
			if code := run([]string{"plan", f}); code != exitOK {
				b.Fatalf("plan %s: exit %d", f, code)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(files))/1e6, "ms/suite")
}

// The plan of a matrix lists every point with its parameters and what
// the backend deploys; 'run --dry-run' prints the same and runs nothing.
func TestPlanContents(t *testing.T) {
	code, stdout, stderr := runCLI(t, "plan", suites+"nightly.yaml")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"on the sim backend: 3 points",
		"point 1/3: ", "point 3/3: ",
		"  features   ecmp hash ", "  transport  cc ", "  telemetry  gNMI every ",
		"  simulate   ", "  gNMI       ",
		"  kpi        ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	code, dry, stderr := runCLI(t, "run", suites+"nightly.yaml", "--dry-run", "--out", out)
	if code != exitOK || dry != stdout {
		t.Errorf("run --dry-run: exit %d, output differs from plan's:\n%s\n%s", code, dry, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("run --dry-run created %s", out)
	}
}

// A lab suite that leaves ECN and trimming at their defaults plans (and
// so runs) on the netns backend: both off, with one note each.
func TestPlanLabDefaults(t *testing.T) {
	file := filepath.Join(t.TempDir(), "first.yaml")
	os.WriteFile(file, []byte(`fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=0.2"}
telemetry: {interval: 5ms}
jobs:
  - {name: p, workload: permutation, size: 64KiB}
`), 0o644)
	code, stdout, stderr := runCLI(t, "plan", file, "--backend", "netns")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"note: features.ecn: off (on by default, but the netns backend cannot do ECN marking (RED/WRED): ",
		"note: features.trimming: off (on by default, but the netns backend cannot do packet trimming: ",
		"ECN off; trimming off",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = runCLI(t, "plan", file)
	if code != exitOK || strings.Contains(stdout, "note:") || !strings.Contains(stdout, "ECN on (kmin 0.2, kmax 0.8); trimming on") {
		t.Errorf("sim: exit %d, want ECN and trimming on without notes:\n%s", code, stdout)
	}
}

func TestPlanBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", filepath.Join(dir, "nope.yaml")}, "nope.yaml"},
		{[]string{"plan"}, "accepts 1 arg"},
		{[]string{"plan", suites + "smoke.yaml", "--backend", "nosuch"}, `unknown backend "nosuch"`},
		{[]string{"plan", write("bad.yaml", "fabric: {spec: \"leafspine:leaves=2\"}\njobs:\n  - {name: p, workload: shuffle, size: 1KiB}\n")}, "bad.yaml:3:"},
		{[]string{"plan", write("ecn.yaml", `fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=0.2"}
features: {ecn: {enabled: true}}
telemetry: {interval: 5ms}
jobs:
  - {name: p, workload: permutation, size: 64KiB}
`), "--backend", "netns"}, "ecn.yaml:2:27: features.ecn.enabled: the netns backend cannot do ECN marking"},
		{[]string{"run", suites + "smoke.yaml", "--dry-run", "--point", "0"}, "--dry-run plans the whole suite"},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q\n%s", c.args, code, stderr, c.want, stdout)
		}
	}
}

// Every command: an unknown subcommand (of a command that has
// subcommands) and an unknown flag exit 2 with an error that says so,
// before anything runs; 'help' with an unknown command too. The names
// are ones that will never exist.
func TestUnknownCommandsAndFlagsExit2(t *testing.T) {
	var walk func(c *cobra.Command, path []string)
	var paths [][]string
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	root := newRoot()
	walk(root, nil)
	if len(paths) < 15 {
		t.Fatalf("walked only %d commands", len(paths))
	}
	parents := 0
	for _, p := range paths {
		cmd, _, err := root.Find(p)
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		if cmd.HasSubCommands() {
			parents++
			args := append(append([]string(nil), p...), "frobnicate")
			code, stdout, stderr := runCLI(t, args...)
			if code != exitBadInput || !strings.Contains(stderr, `unknown command "frobnicate"`) {
				t.Errorf("%q: exit %d, stderr %q; want 2 and unknown command\n%s", args, code, stderr, stdout)
			}
			// A parent that is a command of its own (agent runs the
			// agent; agent bench is its subcommand) runs, not helps.
			if len(p) > 0 && !cmd.Runnable() {
				code, stdout, stderr = runCLI(t, p...)
				if code != exitOK || !strings.Contains(stdout, "Available Commands:") {
					t.Errorf("%q alone: exit %d, want 0 and its help\n%s%s", p, code, stdout, stderr)
				}
			}
		}
		if cmd.Name() == "help" {
			continue // help takes command names, not flags of its own
		}
		args := append(append([]string(nil), p...), "--frobnicate")
		code, stdout, stderr := runCLI(t, args...)
		if code != exitBadInput || !strings.Contains(stderr, "unknown flag: --frobnicate") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and unknown flag\n%s", args, code, stderr, stdout)
		}
	}
	if parents < 4 { // fabricbench, lab, inventory, completion
		t.Errorf("only %d commands with subcommands", parents)
	}
	for _, args := range [][]string{{"help", "frobnicate"}, {"help", "lab", "frobnicate"}, {"lab", "frobnicate", "FILE"}} {
		if code, stdout, stderr := runCLI(t, args...); code != exitBadInput {
			t.Errorf("%q: exit %d, want 2\n%s%s", args, code, stdout, stderr)
		}
	}
	if code, stdout, _ := runCLI(t, "help", "lab"); code != exitOK || !strings.Contains(stdout, "fabricbench lab") {
		t.Errorf("help lab: exit %d\n%s", code, stdout)
	}
}
