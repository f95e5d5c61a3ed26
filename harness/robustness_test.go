package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/results"
)

// A suite whose destination host is cut off (its only link down from the
// start) on the simulator: the run ends (the flow to it cannot finish,
// no flow makes progress for the stall stretch) with both flows of the pair
// incomplete, the run fails on the implicit incomplete_flows verdict
// although the suite has no KPI, and the results are on disk. Before, the
// run passed ("0/0 KPIs pass") with the flow unfinished.
func TestUnreachableDestinationFails(t *testing.T) {
	body := `name: unreachable
seed: 1
fabric: {spec: "dragonfly:p=2,a=4,h=2,gbps=400,latency=25ns,global_latency=500ns,switch_latency=500ns"}
features:
  ecmp: {mode: minimal}
transport: {cc: dctcp, lb: ops}
telemetry: {interval: 1ms}
jobs:
  - {name: pair, workload: permutation, size: 256KiB, hosts: [host0, host9]}
faults:
  - {kind: down, link: host9-router4, at: 0us}
`
	out := t.TempDir()
	res, err := harness.Run(context.Background(), harness.Options{SuiteFile: writeSuite(t, body), Out: out, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	run := res.Runs[0]
	t.Logf("status %s, sim end %.0f us, KPIs %+v", run.Status, run.SimEndUs, run.KPIs)
	if run.Status != results.Fail {
		t.Errorf("status %s, want fail", run.Status)
	}
	var k *results.KPI
	for i := range run.KPIs {
		if run.KPIs[i].Metric == "incomplete_flows" {
			k = &run.KPIs[i]
		}
	}
	if k == nil || k.Verdict != results.Fail || k.Value != 2 || !strings.Contains(k.Message, "no flow made progress") {
		t.Errorf("incomplete_flows verdict %+v, want a failure for both flows (to and from host9) naming the stall", k)
	}
	if run.SimEndUs <= 0 || run.SimEndUs >= 1e6 {
		t.Errorf("run ended at %.0f us, want after the stall stretch and before the 1 s limit", run.SimEndUs)
	}
	for _, f := range []string{"results.json", filepath.Join("runs", run.ID, "flows.csv")} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("results not on disk: %v", err)
		}
	}
	// With the stall check off (sim.stall_after: off) the run ends at
	// sim.end, and the verdict says so.
	out = t.TempDir()
	res, err = harness.Run(context.Background(), harness.Options{SuiteFile: writeSuite(t, body+"sim: {end: 5ms, stall_after: off}\n"), Out: out, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	run = res.Runs[0]
	k = nil
	for i := range run.KPIs {
		if run.KPIs[i].Metric == "incomplete_flows" {
			k = &run.KPIs[i]
		}
	}
	if run.Status != results.Fail || run.SimEndUs != 5000 || k == nil || !strings.Contains(k.Message, "time limit") {
		t.Errorf("stall_after off: status %s, sim end %.0f us, verdict %+v; want fail at 5000 us naming the time limit", run.Status, run.SimEndUs, k)
	}
}
