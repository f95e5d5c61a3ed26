package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 19: -q on run prints no progress; without a matrix the run is named
// after the suite; flows.csv names the hosts; sim --tm takes host names.
func TestRunQuietNamedRunFlowHosts(t *testing.T) {
	dir := t.TempDir()
	suite := writeFile(t, dir, "tiny.yaml", tinyFabric+`jobs:
  - {name: in, workload: incast, size: 64KiB, senders: 2, receiver: host3}
kpis:
  - {metric: busbw_GBps, scope: in, min: 0.001}
`)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "run", suite, "--out", out, "-q")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	if !strings.Contains(stdout, "run tiny ") {
		t.Errorf("the run is not named after the suite:\n%s", stdout)
	}
	f, err := os.Open(filepath.Join(out, "runs", "tiny", "flows.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("flows.csv: %v, %d rows", err, len(rows))
	}
	h := rows[0]
	if h[3] != "src" || h[4] != "dst" || h[len(h)-3] != "src_host" || h[len(h)-2] != "dst_host" || h[len(h)-1] != "error" {
		t.Fatalf("header %v", h)
	}
	for _, r := range rows[1:] {
		if r[4] != "3" || r[len(r)-2] != "host3" || r[len(r)-3] != "host"+r[3] || r[len(r)-1] != "" {
			t.Errorf("row %v", r)
		}
	}

	code, stdout, stderr = runCLI(t, "sim", "--topo", "leafspine:leaves=2,spines=2,hosts_per_leaf=2", "--tm", "incast:senders=2,size=64KiB,dst=host3")
	if code != 0 || !strings.Contains(stdout, "4 hosts, 2 leaves (leaf0..leaf1), 2 spines (spine0..spine1), 8 links") || strings.Contains(stdout, "cores") {
		t.Errorf("sim with dst=host3: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
