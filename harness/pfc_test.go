package harness_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fabricbench/fabricbench/harness"
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
		samples, err := telemetry.ReadStore(filepath.Join(out, r.Files["telemetry"]))
		if err != nil {
			t.Fatal(err)
		}
		last := map[telemetry.Key]int64{}
		for _, s := range samples {
			last[s.Key()] = s.Value
		}
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
