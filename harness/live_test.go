package harness_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/results"
)

// The live analysis shows the anomaly in the progress output, and the
// results carry its time to detect: the degraded uplink is abnormal from
// 200 µs and the window ending at 300 µs reports it. (That it does so
// while the run goes, TestFailFastStopsTheSuite shows: the run stops.)
func TestLiveAnalysisReportsWhileTheRunGoes(t *testing.T) {
	file := writeSuite(t, `
name: live
fabric: {spec: "leafspine:leaves=4,spines=4,hosts_per_leaf=4,gbps=100"}
telemetry: {interval: 100us}
jobs:
  - {name: perm, workload: permutation, size: 8MiB}
faults:
  - {kind: degrade, port: "leaf1:Ethernet5", fraction: 0.5, at: 200us}
`)
	var prog bytes.Buffer
	res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: t.TempDir(), Progress: &prog})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Runs[0]
	if len(r.Anomalies) != 1 {
		t.Fatalf("%d anomalies, want 1: %+v", len(r.Anomalies), r.Anomalies)
	}
	a := r.Anomalies[0]
	if a.Member != "leaf1:Ethernet5" || a.StartUs != 200 || a.DetectedUs != 300 || a.TimeToDetectUs != 100 {
		t.Errorf("anomaly %s from %g µs detected at %g µs (time to detect %g µs), want leaf1:Ethernet5 from 200, detected at 300 (100)",
			a.Member, a.StartUs, a.DetectedUs, a.TimeToDetectUs)
	}
	line := "run live: anomaly confirmed at 300 µs of run time (abnormal from 200 µs): leaf1:Ethernet5 (capacity)"
	if !strings.Contains(prog.String(), line) {
		t.Errorf("progress output lacks %q:\n%s", line, prog.String())
	}
}

// --fail-fast stops the suite at the first confirmed anomaly: the run
// that found it stops its jobs, keeps and analyses what it collected and
// fails; the next point is not started; the suite fails (exit 1), it was
// not interrupted.
func TestFailFastStopsTheSuite(t *testing.T) {
	file := writeSuite(t, `
name: ff
fabric: {spec: "leafspine:leaves=4,spines=4,hosts_per_leaf=4,gbps=100"}
telemetry: {interval: 100us}
jobs:
  - {name: perm, workload: permutation, size: 32MiB}
faults:
  - {kind: degrade, port: "leaf1:Ethernet5", fraction: 0.5, at: 200us}
matrix:
  transport.lb: [ops, reps]
`)
	out := t.TempDir()
	res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: out, FailFast: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2 {
		t.Fatalf("%d runs", len(res.Runs))
	}
	first, second := res.Runs[0], res.Runs[1]
	if first.Status != results.Fail || !strings.HasPrefix(first.Error, "stopped by --fail-fast at the first confirmed anomaly, leaf1:Ethernet5 (capacity), detected at 300 µs") {
		t.Errorf("first run: %s: %s", first.Status, first.Error)
	}
	if len(first.Anomalies) == 0 || first.Anomalies[0].Member != "leaf1:Ethernet5" {
		t.Errorf("first run's anomalies: %+v", first.Anomalies)
	}
	// 32 MiB flows take over 2.6 ms; the run stopped well before.
	if first.SimEndUs <= 300 || first.SimEndUs > 2000 {
		t.Errorf("first run ended at %g µs, want soon after the detection at 300 µs", first.SimEndUs)
	}
	if second.Status != results.Skipped || !strings.Contains(second.Error, "--fail-fast") {
		t.Errorf("second run: %s: %s", second.Status, second.Error)
	}
	if res.Status != results.Fail || results.ExitCode(res) != results.ExitFail {
		t.Errorf("suite %s, exit %d: want fail, 1", res.Status, results.ExitCode(res))
	}
	saved, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(saved.Runs) != 2 || len(saved.Runs[0].Anomalies) == 0 {
		t.Errorf("results.json: %d runs, anomalies %v", len(saved.Runs), saved.Runs[0].Anomalies)
	}
}

// Without an anomaly --fail-fast changes nothing: every point runs.
func TestFailFastWithoutAnomalies(t *testing.T) {
	file := writeSuite(t, `
name: ffok
fabric: {spec: "leafspine:leaves=4,spines=4,hosts_per_leaf=4,gbps=100"}
telemetry: {interval: 100us}
jobs:
  - {name: perm, workload: permutation, size: 2MiB}
matrix:
  transport.lb: [ops, reps]
`)
	res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: t.TempDir(), FailFast: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Runs {
		if r.Status != results.Pass || len(r.Anomalies) != 0 {
			t.Errorf("%s: %s %s, %d anomalies", r.ID, r.Status, r.Error, len(r.Anomalies))
		}
	}
	if res.Status != results.Pass {
		t.Errorf("suite %s", res.Status)
	}
}
