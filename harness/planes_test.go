package harness_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/results"
)

// The analysis names a degraded plane and a degraded rail of a multi-plane
// fabric (4 planes x (3 leaves, 2 spines), 4 hosts per leaf, PLB, an
// all-to-all): with every host's plane-2 NIC port at a quarter of its rate
// the planes group's least-loaded member is plane2; with the links of
// leaf 1's hosts (rail1: the NIC ports under leaf 1 of every plane) at half
// rate in both directions, the rails group's is rail1.
func TestDegradedPlaneAndRailNamed(t *testing.T) {
	var plane strings.Builder
	for h := 0; h < 12; h++ {
		fmt.Fprintf(&plane, "  - {kind: degrade, port: host%d:eth2, fraction: 0.25, at: 0us}\n", h)
	}
	const head = `
fabric: {spec: "leafspine:leaves=3,spines=2,hosts_per_leaf=4,links_per_spine=2,gbps=100,latency=500ns,planes=4"}
transport: {planes: plb}
jobs:
  - {name: a2a, workload: all-to-all, size: 1MiB}
faults:
`
	var rail strings.Builder
	for h := 4; h < 8; h++ {
		for pl := 0; pl < 4; pl++ {
			// Both directions of the host link.
			fmt.Fprintf(&rail, "  - {kind: degrade, port: host%d:eth%d, fraction: 0.5, at: 0us}\n", h, pl)
			fmt.Fprintf(&rail, "  - {kind: degrade, port: p%d-leaf1:Ethernet%d, fraction: 0.5, at: 0us}\n", pl, h-4)
		}
	}
	for _, c := range []struct{ name, head, faults, group, member string }{
		{"plane", head, plane.String(), "planes:fabric", "plane2"},
		// Steady state: the run stops at 400 us, before the flows finish
		// (otherwise every rail moves the same bytes of the all-to-all).
		{"rail", strings.Replace(head, "size: 1MiB", "size: 64MiB", 1), rail.String(), "rails:fabric", "rail1"},
	} {
		body := "name: " + c.name + c.head + c.faults
		if c.name == "rail" {
			body += "sim: {end: 400us}\n"
		}
		file := writeSuite(t, body)
		res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: t.TempDir(), Parallel: 1})
		if err != nil {
			t.Fatal(err)
		}
		var found *results.Imbalance
		for i, im := range res.Runs[0].Imbalances {
			if im.Group == c.group {
				found = &res.Runs[0].Imbalances[i]
			}
		}
		for _, an := range res.Runs[0].Anomalies {
			for _, v := range an.Victims {
				if v.Group == c.group {
					t.Logf("%s: anomaly %d (%s) has victim %+v", c.name, an.Rank, an.Member, v)
				}
			}
		}
		if found == nil {
			t.Fatalf("%s: no imbalance of %s in %+v", c.name, c.group, res.Runs[0].Imbalances)
		}
		t.Logf("%s: %s", c.name, found.Evidence)
		if found.MinMember != c.member {
			t.Errorf("%s: %s names %s as the least loaded, want %s", c.name, c.group, found.MinMember, c.member)
		}
	}
}

// examples/suites/spectrum-x.yaml: PLB finishes the all-to-all on the
// asymmetric planes well before Global CC; adaptive routing removes the
// leaf-uplink imbalances ECMP hashing leaves; the report has the plane and
// rail groups.
func TestSpectrumXExample(t *testing.T) {
	out := t.TempDir()
	res, err := harness.Run(context.Background(), harness.Options{SuiteFile: "../examples/suites/spectrum-x.yaml", Out: out, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]float64{}
	imb := map[string]int{}
	for _, r := range res.Runs {
		done[r.ID] = r.Jobs[0].CompletionUs
		for _, im := range r.Imbalances {
			if strings.HasPrefix(im.Group, "leaf-uplinks:") {
				imb[r.ID]++
			}
		}
	}
	t.Logf("completion (us): %v; leaf-uplink imbalances: %v", done, imb)
	for _, m := range []string{"hash", "adaptive"} {
		plb, glob := done["mode="+m+",planes=plb"], done["mode="+m+",planes=global"]
		if !(plb > 0 && plb < 0.8*glob) {
			t.Errorf("%s: PLB %.0f us, Global CC %.0f us: want PLB well ahead", m, plb, glob)
		}
	}
	if imb["mode=hash,planes=plb"] == 0 || imb["mode=adaptive,planes=plb"] != 0 {
		t.Errorf("leaf-uplink imbalances %v: want some with hashing, none with adaptive routing", imb)
	}
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"planes:fabric", "rails:fabric", "plane:plane2", "rail:p3-leaf1", "plane_share_min"} {
		if !strings.Contains(string(page), g) {
			t.Errorf("report.html does not show %s", g)
		}
	}
}
