package faultbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/harness"
	_ "github.com/fabricbench/fabricbench/harness/labbackend" // the "netns" backend (lab runs)
	"github.com/fabricbench/fabricbench/results"
)

// TestFaultLocalisation is the benchmark: it runs the catalogue and checks
// the acceptance thresholds (MinExact, MinClassExact,
// MaxHealthyWithAnomalies). By default it runs the trees catalogue and a
// representative subset of the worlds catalogue (Representative);
// FABRICBENCH_FAULTBENCH_FULL=1 runs everything, and
// FABRICBENCH_FAULTBENCH_WORLDS (comma-separated, e.g. "lossless,dragonfly")
// keeps only those worlds, FABRICBENCH_FAULTBENCH_SEED_OFFSET=N adds N to
// every seed (the same scenarios with other traffic and hashing: a check
// that the thresholds were not tuned to the seeds).
func TestFaultLocalisation(t *testing.T) {
	scenarios, err := Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("FABRICBENCH_FAULTBENCH_FULL") == "" {
		scenarios = Representative(scenarios)
		t.Logf("representative subset (FABRICBENCH_FAULTBENCH_FULL=1 runs the whole catalogue)")
	}
	if off := os.Getenv("FABRICBENCH_FAULTBENCH_SEED_OFFSET"); off != "" {
		n, err := strconv.ParseUint(off, 10, 64)
		if err != nil {
			t.Fatalf("FABRICBENCH_FAULTBENCH_SEED_OFFSET: %v", err)
		}
		for i := range scenarios {
			scenarios[i].Seed += n
			scenarios[i].ID += fmt.Sprintf("+%d", n)
		}
		t.Logf("seeds shifted by %d", n)
	}
	if w := os.Getenv("FABRICBENCH_FAULTBENCH_WORLDS"); w != "" {
		keep := map[string]bool{}
		for _, x := range strings.Split(w, ",") {
			keep[strings.TrimSpace(x)] = true
		}
		scenarios = slices.DeleteFunc(scenarios, func(s Scenario) bool { return !keep[s.World] })
		t.Logf("worlds %s only: %d runs", w, len(scenarios))
	}
	root := t.TempDir()
	keep := os.Getenv("FABRICBENCH_FAULTBENCH_KEEP") != ""
	if keep {
		if root, err = os.MkdirTemp("", "faultbench-"); err != nil {
			t.Fatal(err)
		}
		t.Logf("keeping every run under %s", root)
	}
	par := runtime.GOMAXPROCS(0)
	var done atomic.Int64
	start := time.Now()
	rs := RunAll(context.Background(), scenarios, Options{Root: root, Parallel: par, Keep: keep,
		Done: func(Result) { done.Add(1) }})
	elapsed := time.Since(start)
	faulted, healthy := 0, 0
	for _, r := range rs {
		if r.Scenario.Class == Healthy {
			healthy++
		} else {
			faulted++
		}
	}
	t.Logf("%d runs (%d faulted, %d healthy) in %.1fs with %d at a time", done.Load(), faulted, healthy, elapsed.Seconds(), par)

	table := Markdown(rs)
	t.Log("\n" + table)
	if out := os.Getenv("FABRICBENCH_FAULTBENCH_OUT"); out != "" {
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Error(err)
		} else if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			t.Error(err)
		} else {
			t.Logf("table written to %s", out)
		}
	}
	var notExact []string
	for _, r := range rs {
		if !r.Exact && r.Scenario.Class != Healthy || r.Scenario.Class == Healthy && (r.Anomalies > 0 || r.Err != "") {
			notExact = append(notExact, r.String())
		}
	}
	if len(notExact) > 0 {
		t.Logf("%d runs not exact (healthy: with an anomaly):\n%s", len(notExact), strings.Join(notExact, "\n"))
	}

	// Assertions.
	var errs []string
	for _, r := range rs {
		if r.Err != "" {
			errs = append(errs, r.Scenario.ID+": "+r.Err)
		}
	}
	if len(errs) > 0 {
		t.Errorf("%d of %d runs did not complete:\n%s", len(errs), len(rs), strings.Join(errs, "\n"))
	}
	var trees []Result
	for _, r := range rs {
		if r.Scenario.World == WorldTrees {
			trees = append(trees, r)
		}
	}
	// The trees catalogue: per load balancer, as before.
	ts := Summarize(trees)
	for _, lb := range AssertedLBs {
		row := ts.LB(lb)
		if len(trees) == 0 {
			break
		}
		if row.Runs == 0 {
			t.Errorf("%s: no faulted runs", lb)
			continue
		}
		if row.ExactFraction() < MinExact[lb] {
			t.Errorf("fault localisation under %s: %d of %d faulted runs exact (%.0f%%), want at least %.0f%% (MinExact); "+
				"%d runs with extra anomalies (%d extras), %d runs with a missed fault; see the runs listed above",
				lb, row.Exact, row.Runs, 100*row.ExactFraction(), 100*MinExact[lb], row.WithExtras, row.Extras, row.Missed)
		}
		if row.Extras > 0 {
			t.Errorf("%s: %d anomalies name a member no fault hit (a victim named as a culprit); see the runs listed above", lb, row.Extras)
		}
		if f := row.ExactFraction(); f < GoalExact {
			t.Logf("%s: %.0f%% exact, below the goal of %.0f%%", lb, 100*f, 100*GoalExact)
		}
	}
	// Every fault class with OPS, REPS and the Spritz load balancers
	// (ECMP is recorded separately).
	s := Summarize(rs)
	for _, row := range s.ByClass[:len(s.ByClass)-1] {
		if row.Runs > 0 && row.ExactFraction() < MinClassExact {
			t.Errorf("fault class %s: %d of %d faulted runs exact (%.0f%%) with OPS, REPS and Spritz, want at least %.0f%% (MinClassExact); precision %.1f%%, recall %.1f%%",
				row.Label, row.Exact, row.Runs, 100*row.ExactFraction(), 100*MinClassExact, 100*row.Precision(), 100*row.Recall())
		}
	}
	// No anomaly on a healthy run, whatever the load balancer and world.
	for _, h := range s.Healthy[:len(s.Healthy)-1] {
		if h.WithAnomalies > MaxHealthyWithAnomalies {
			t.Errorf("false alarms under %s: %d of %d healthy runs report anomalies (%d in all), want at most %d (MaxHealthyWithAnomalies)",
				h.Label, h.WithAnomalies, h.Runs, h.Anomalies, MaxHealthyWithAnomalies)
		}
	}
}

// The catalogue names real ports and links, the harness accepts every
// generated suite, and it covers what the benchmark promises.
func TestCatalogue(t *testing.T) {
	scenarios, err := Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	perLB := map[string]int{}
	perClass := map[string]int{}
	healthy := 0
	dir := t.TempDir()
	for i, s := range scenarios {
		if ids[s.ID] {
			t.Errorf("duplicate ID %s", s.ID)
		}
		ids[s.ID] = true
		if s.Class == Healthy {
			healthy++
			if len(s.Faults) != 0 {
				t.Errorf("%s: healthy with faults", s.ID)
			}
		} else {
			perLB[s.LB]++
			perClass[s.Class]++
		}
		f, err := Fabric(s.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		for _, ft := range s.Faults {
			if _, err := ExpectedCulprits(f, ft); err != nil {
				t.Errorf("%s: %v", s.ID, err)
			}
		}
		file := filepath.Join(dir, fmt.Sprintf("%03d.yaml", i))
		if err := os.WriteFile(file, []byte(s.SuiteYAML()), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := harness.Plan(file); err != nil {
			t.Errorf("%s: the harness rejects the suite: %v\n%s", s.ID, err, s.SuiteYAML())
		}
	}
	faulted := 0
	for _, n := range perLB {
		faulted += n
	}
	if faulted < 200 || perLB["ops"] < 60 || perLB["reps"] < 40 || perLB["spritz-spray"] < 20 || perLB["spritz-scout"] < 20 || healthy < 100 {
		t.Errorf("coverage: %d faulted runs %v, %d healthy", faulted, perLB, healthy)
	}
	for _, c := range AllClasses() {
		if perClass[c] == 0 && c != ClassLabUplink {
			t.Errorf("no scenario of class %s", c)
		}
	}
	// The lab runs plan on the netns backend.
	for i, s := range LabCatalogue() {
		file := filepath.Join(dir, fmt.Sprintf("lab%03d.yaml", i))
		if err := os.WriteFile(file, []byte(s.SuiteYAML()), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := harness.PlanWith(context.Background(), file, s.Backend, ""); err != nil {
			t.Errorf("%s: the netns backend rejects the suite: %v\n%s", s.ID, err, s.SuiteYAML())
		}
	}
	// The worlds catalogue adds at least 60 runs, in every world, healthy
	// ones too; the representative subset covers every class and world.
	worlds, err := WorldsCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	if len(worlds) < 60 {
		t.Errorf("worlds catalogue: %d runs, want at least 60", len(worlds))
	}
	repClass, repHealthy := map[string]bool{}, map[string]bool{}
	for _, s := range Representative(worlds) {
		repClass[s.Class] = true
		if s.Class == Healthy {
			repHealthy[s.World] = true
		}
	}
	for _, c := range WorldClasses {
		if !repClass[c] && c != ClassLabUplink {
			t.Errorf("the representative subset has no run of class %s", c)
		}
	}
	for _, w := range Worlds[1:] {
		if !repHealthy[w] && w != WorldLab {
			t.Errorf("the representative subset has no healthy run of world %s", w)
		}
	}
}

func TestExpectedCulprits(t *testing.T) {
	ls, err := Fabric(LeafSpine)
	if err != nil {
		t.Fatal(err)
	}
	ft, err := Fabric(FatTree)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		f    string
		flt  Fault
		want string
	}{
		{LeafSpine, Fault{Port: "leaf1:Ethernet5"}, "leaf1-spine1 leaf1:Ethernet5 spine1-leaf1"},
		{LeafSpine, Fault{Port: "spine2:Ethernet1"}, "leaf1-spine2 spine2-leaf1 spine2:Ethernet1"},
		{LeafSpine, Fault{Link: "spine3-leaf0"}, "leaf0-spine3 leaf0:Ethernet7 spine3-leaf0 spine3:Ethernet0"},
		{LeafSpine, Fault{NIC: "host6"}, "host6 host6-leaf1 host6:eth0 leaf1-host6 leaf1:Ethernet2"},
		{FatTree, Fault{Link: "agg3-core3"}, "agg3-core3 agg3:Ethernet4 core3-agg3 core3:Ethernet1"},
	}
	for _, c := range cases {
		f := ls
		if c.f == FatTree {
			f = ft
		}
		got, err := ExpectedCulprits(f, c.flt)
		if err != nil {
			t.Errorf("%s: %v", c.flt.Target(), err)
			continue
		}
		if s := strings.Join(got.Sorted(), " "); s != c.want {
			t.Errorf("%s: %s, want %s", c.flt.Target(), s, c.want)
		}
	}
	for _, bad := range []Fault{{Port: "leaf9:Ethernet0"}, {Port: "leaf0:Ethernet99"}, {Link: "leaf0-leaf1"}, {NIC: "leaf0"}, {}} {
		if _, err := ExpectedCulprits(ls, bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// The evaluation rule on hand-made reports.
func TestEvaluate(t *testing.T) {
	f, err := Fabric(LeafSpine)
	if err != nil {
		t.Fatal(err)
	}
	s := Scenario{ID: "x", Class: ClassDouble, LB: "ops", Faults: []Fault{
		{Kind: "degrade", Port: "leaf0:Ethernet5", Fraction: 0.5},
		{Kind: "degrade", Port: "spine3:Ethernet2", Fraction: 0.5},
	}}
	events := []results.Fault{{ID: "F1"}, {ID: "F2"}}
	an := func(member, link string) results.Anomaly {
		return results.Anomaly{Member: member, Link: link, Kind: results.KindSymmetry}
	}

	// Both named (one through its link), nothing else: exact.
	r := Evaluate(f, s, &results.Run{Status: results.Fail, Faults: events,
		Anomalies: []results.Anomaly{an("spine3:Ethernet2", ""), an("spine1:Ethernet0", "leaf0-spine1")}})
	if !r.Exact || len(r.Extras) != 0 || len(r.Missed()) != 0 || r.CorrChecked {
		t.Errorf("exact case: %s", r)
	}
	// The wrong direction of the first fault's link without Link is an
	// extra (near the fault); the first fault is missed.
	r = Evaluate(f, s, &results.Run{Status: results.Fail, Faults: events,
		Anomalies: []results.Anomaly{an("spine1:Ethernet0", ""), an("spine3:Ethernet2", ""), an("host3", "")}})
	if r.Exact || len(r.Extras) != 2 || !r.Extras[0].Near || r.Extras[1].Near || r.Extras[1].Rank != 3 ||
		len(r.Missed()) != 1 || r.Missed()[0].ID != "F1" || r.NearExtras() != 1 {
		t.Errorf("extra case: %s", r)
	}
	// The report's correlation: F1 tied to an anomaly that does not name
	// it, F2 tied to none although #1 names it.
	r = Evaluate(f, s, &results.Run{Status: results.Fail, Faults: events,
		Anomalies:    []results.Anomaly{an("spine3:Ethernet2", ""), an("leaf0:Ethernet5", "")},
		FaultMatches: []results.FaultMatch{{ID: "F1", Anomaly: 1}, {ID: "F2", Anomaly: 0}}})
	if !r.Exact || !r.CorrChecked || len(r.Mismatches()) != 2 {
		t.Errorf("correlation case: %s", r)
	}
	r = Evaluate(f, s, &results.Run{Status: results.Fail, Faults: events,
		Anomalies:    []results.Anomaly{an("spine3:Ethernet2", ""), an("leaf0:Ethernet5", "")},
		FaultMatches: []results.FaultMatch{{ID: "F1", Anomaly: 2}, {ID: "F2", Anomaly: 1}}})
	if !r.Exact || !r.CorrChecked || len(r.Mismatches()) != 0 {
		t.Errorf("agreeing correlation: %s", r)
	}
	// A healthy run: every anomaly is extra.
	h := Scenario{ID: "h", Class: Healthy, LB: "reps"}
	r = Evaluate(f, h, &results.Run{Status: results.Pass, Anomalies: []results.Anomaly{an("leaf2:Ethernet4", "")}})
	if r.Exact || len(r.Extras) != 1 || r.Extras[0].Near {
		t.Errorf("healthy case: %s", r)
	}
	// A run that errored is never exact.
	r = Evaluate(f, h, &results.Run{Status: results.Error, Error: "boom"})
	if r.Exact || r.Err == "" {
		t.Errorf("error case: %s", r)
	}
	// The table counts them.
	md := Markdown([]Result{Evaluate(f, s, &results.Run{Status: results.Fail, Faults: events,
		Anomalies: []results.Anomaly{an("spine3:Ethernet2", ""), an("leaf0:Ethernet5", "")}}), r})
	for _, want := range []string{"| ops | 1 | 1 | 100% | 0 | 0 (0) | 0 | n/a |", "| reps | 1 | 0 | 0 | 0 |", "1 runs did not complete"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
}

func TestMain(m *testing.M) { labtest.Main(m) }

// TestFaultLocalisationLab runs the lab part of the benchmark
// (LabCatalogue) on the netns backend's FRR lab: the same analysis on
// kernel counters (rates, qdisc backlog, drops; no ECN, no PFC). It needs
// root and takes a few minutes, so it runs only with
// FABRICBENCH_FAULTBENCH_LAB=1. Every run must be exact or, healthy,
// without anomalies, and say that the lab has no PFC.
func TestFaultLocalisationLab(t *testing.T) {
	if os.Getenv("FABRICBENCH_FAULTBENCH_LAB") == "" {
		t.Skip("lab runs of the fault-localisation benchmark take minutes: set FABRICBENCH_FAULTBENCH_LAB=1 (root) to run them")
	}
	labtest.Require(t)
	scenarios := LabCatalogue()
	keep := os.Getenv("FABRICBENCH_FAULTBENCH_KEEP") != ""
	root := t.TempDir()
	if keep {
		var err error
		if root, err = os.MkdirTemp("", "faultbench-lab-"); err != nil {
			t.Fatal(err)
		}
		t.Logf("keeping every run under %s", root)
	}
	rs := RunAll(context.Background(), scenarios, Options{Root: root, Parallel: 1, Keep: true,
		AgentBinary: labtest.Fabricbench(t), LabStateRoot: t.TempDir()})
	t.Log("\n" + Markdown(rs))
	for i, r := range rs {
		t.Log(r.String())
		if r.Err != "" || r.Scenario.Class != Healthy && !r.Exact || r.Scenario.Class == Healthy && r.Anomalies > 0 {
			t.Errorf("%s: not exact (healthy: with anomalies)", r.Scenario.ID)
		}
		res, err := results.Load(filepath.Join(root, fmt.Sprintf("%03d-%s", i, r.Scenario.ID), "out"))
		if err != nil {
			t.Errorf("%s: %v", r.Scenario.ID, err)
			continue
		}
		for _, a := range res.Runs[0].Anomalies {
			t.Logf("%s: anomaly #%d %s (%s): %s; detected at %g µs (%g µs to detect)", r.Scenario.ID, a.Rank, a.Member, a.Cause, a.Evidence, a.DetectedUs, a.TimeToDetectUs)
		}
		if notes := res.Runs[0].AnalysisNotes; len(notes) == 0 || !strings.Contains(notes[0], "no PFC") {
			t.Errorf("%s: analysis notes %q do not say the lab has no PFC", r.Scenario.ID, notes)
		}
	}
}
