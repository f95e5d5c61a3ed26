package harness_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// features.pfc reaches the simulator: an incast without ECN is trimmed on
// a lossy fabric and lossless with PFC, whose pause frames and paused time
// reach the telemetry store over gNMI.
func TestPFCFromSuite(t *testing.T) {
	file := writeSuite(t, `
name: pfc
fabric: {spec: "leafspine:leaves=4,spines=1,hosts_per_leaf=4,uplink_gbps=400"}
features: {ecn: {enabled: false}}
telemetry: {interval: 100us}
jobs:
  - {name: in, workload: incast, size: 1MiB, senders: 8, receiver: host12}
matrix:
  features.pfc.enabled: [false, true]
`)
	out := t.TempDir()
	res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: out, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2 {
		t.Fatalf("%d runs", len(res.Runs))
	}
	for i, r := range res.Runs {
		pfc := i == 1
		last := lastValues(readTelemetry(t, out, r.Files["telemetry"]))
		var tx, rx, ns int64
		for k, v := range last {
			switch k.Field {
			case telemetry.FieldPFCPauseTx:
				tx += v
			case telemetry.FieldPFCPauseRx:
				rx += v
			case telemetry.FieldPFCPausedNs:
				ns += v
			}
		}
		p := r.Packets
		t.Logf("%s: %s, %d trimmed, %d dropped; pause frames tx %d rx %d (switch ports), paused %d ns",
			r.ID, r.Status, p.Trimmed, p.Dropped, tx, rx, ns)
		if !pfc && (p.Trimmed == 0 || tx+rx+ns != 0) {
			t.Errorf("%s: %d trimmed, pause counters %d/%d/%d: want trims and no pauses", r.ID, p.Trimmed, tx, rx, ns)
		}
		if pfc && (p.Trimmed != 0 || p.Dropped != 0 || tx == 0 || rx == 0 || ns == 0) {
			t.Errorf("%s: %d trimmed, %d dropped, pause counters %d/%d/%d: want lossless with pauses in the telemetry", r.ID, p.Trimmed, p.Dropped, tx, rx, ns)
		}
	}
}

// On a lossless fabric the root of congestion spreading is named, not its
// victims: a host NIC at 40% under an all-to-all is the one anomaly, the
// tree of pauses rooted at its leaf port lists the ports and hosts it
// paused as its victims; a healthy 8:1 incast beside a permutation is an
// informational congestion tree rooted at the receiver's port, with no
// anomaly, and the spread KPI judges it.
func TestPFCRootNotVictims(t *testing.T) {
	file := writeSuite(t, `
name: pfcroot
fabric: {spec: "leafspine:leaves=4,spines=4,hosts_per_leaf=4,gbps=100"}
features: {pfc: {enabled: true}}
telemetry: {interval: 100us}
jobs:
  - {name: a2a, workload: all-to-all, size: 512KiB}
faults:
  - {kind: degrade, nic: host6, fraction: 0.4, at: 200us}
kpis:
  - {metric: symmetry_anomalies, max: 0}
`)
	res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Runs[0]
	if len(r.Anomalies) != 1 || r.Anomalies[0].Member != "host6" || r.Anomalies[0].Cause != results.CauseSlowNIC {
		t.Fatalf("anomalies %+v, want host6 (slow-nic) alone", r.Anomalies)
	}
	var tree *results.CongestionTree
	for i := range r.CongestionTrees {
		if r.CongestionTrees[i].Anomaly == 1 {
			tree = &r.CongestionTrees[i]
		}
	}
	if tree == nil || tree.Root != "leaf1" || !slices.Contains(tree.RootPorts, "leaf1:Ethernet2") || tree.PortsPaused == 0 || tree.PausedUs <= 0 {
		t.Fatalf("no tree rooted at host6's leaf port: %+v", r.CongestionTrees)
	}
	paused := 0
	for _, v := range r.Anomalies[0].Victims {
		if strings.Contains(v.Why, "paused by PFC") {
			paused++
		}
	}
	if paused == 0 {
		t.Errorf("host6's victims name no paused port: %+v", r.Anomalies[0].Victims)
	}
	t.Logf("tree: %s", tree.Evidence)

	file = writeSuite(t, `
name: pfcincast
fabric: {spec: "leafspine:leaves=4,spines=4,hosts_per_leaf=4,gbps=100"}
features: {pfc: {enabled: true}}
telemetry: {interval: 100us}
jobs:
  - {name: perm, workload: permutation, size: 8MiB}
  - {name: inc, workload: incast, size: 2MiB, senders: 8, receiver: host12, hosts: [host0, host1, host4, host5, host8, host9, host2, host6, host12]}
kpis:
  - {metric: symmetry_anomalies, max: 0}
  - {metric: stragglers, max: 0}
  - {metric: congestion_spread, max: 1}
`)
	res, err = harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r = res.Runs[0]
	if len(r.Anomalies) != 0 {
		t.Fatalf("healthy incast: anomalies %+v", r.Anomalies)
	}
	var incast *results.CongestionTree
	for i := range r.CongestionTrees {
		ct := &r.CongestionTrees[i]
		if ct.Cause == results.TreeIncast && slices.Contains(ct.RootHosts, "host12") {
			incast = ct
		}
	}
	if incast == nil || incast.Anomaly != 0 || incast.PortsPaused == 0 || incast.MaxPauseRate <= 0 {
		t.Fatalf("no informational incast tree at host12: %+v", r.CongestionTrees)
	}
	verdict := map[string]string{}
	for _, k := range r.KPIs {
		verdict[k.Metric] = k.Verdict
	}
	if verdict["symmetry_anomalies"] != results.Pass || verdict["stragglers"] != results.Pass || verdict["congestion_spread"] != results.Fail {
		t.Errorf("KPIs %v: want symmetry_anomalies and stragglers to pass, congestion_spread (max 1) to fail", verdict)
	}
	t.Logf("incast tree: %s", incast.Evidence)
}
