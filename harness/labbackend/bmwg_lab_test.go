package labbackend

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/report"
	"github.com/fabricbench/fabricbench/results"
)

// TestBMWGLabSubset runs the lab-capable subset of the IETF BMWG pack
// (examples/suites/bmwg/lab.yaml) on the FRR lab: the burst-absorption
// binary search runs only its probes and settles consistently with the
// qdisc drops it measured, the all-reduce and the permutation through a
// failed uplink complete, the paced-load, PFC and one-way-latency tests
// are not applicable with their reasons, and the BMWG report has every
// section. Nothing is left behind. The lab uses the
// management subnet 198.19.210.0/24, which no other test package uses.
func TestBMWGLabSubset(t *testing.T) {
	labtest.Require(t)
	prev := labMgmtSubnet
	labMgmtSubnet = func(string) netip.Prefix { return netip.MustParsePrefix("198.19.210.0/24") }
	t.Cleanup(func() { labMgmtSubnet = prev })
	res, out := runSuite(t, "../../examples/suites/bmwg/lab.yaml", Name)
	defer checkTornDown(t, out)
	if res.Status != results.Pass {
		for _, r := range res.Runs {
			t.Logf("%s: %s %s %+v", r.ID, r.Status, r.Error, r.KPIs)
		}
		t.Errorf("suite status %s", res.Status)
	}
	byID := map[string]*results.Run{}
	for i := range res.Runs {
		byID[res.Runs[i].ID] = &res.Runs[i]
	}
	// The search: at most 3 probes of 5 sizes; the value found had no
	// drop, every failed probe lies above it and dropped packets.
	var found string
	for _, tt := range res.Tests {
		if tt.Name == "burst-absorption" {
			found = tt.Found
		}
	}
	probes := 0
	for _, r := range res.Runs {
		if r.Test != "burst-absorption" || r.Status == results.NotApplicable {
			continue
		}
		probes++
		d, ok := r.Metrics["dropped"]
		t.Logf("%s: %s (search %s), %v packets dropped of %d sent", r.ID, r.Status, r.Search, d, r.Packets.Sent)
		switch {
		case !ok:
			t.Errorf("%s: no qdisc drop count", r.ID)
		case r.Search == results.SearchPass && d != 0, r.Search == results.SearchAbove && d == 0:
			t.Errorf("%s: search %s with %v drops", r.ID, r.Search, d)
		case r.Params["jobs[name=burst].size"] == found && r.Search != results.SearchPass:
			t.Errorf("%s: found but %s", r.ID, r.Search)
		}
	}
	if probes == 0 || probes > 3 {
		t.Errorf("burst absorption: %d probes", probes)
	}
	t.Logf("burst absorbed without loss: %q", found)
	for _, id := range []string{"allreduce", "link-failure"} {
		r := byID[id]
		if r == nil || r.Status != results.Pass || len(r.Jobs) == 0 || r.Jobs[0].Completed != r.Jobs[0].Flows {
			t.Errorf("%s: %+v", id, r)
			continue
		}
		t.Logf("%s: JCT %.1f ms, bus bandwidth %.1f Mb/s", id, r.Jobs[0].JCTUs/1000, r.Jobs[0].BusBWGbps*1000)
	}
	for id, why := range map[string]string{"pfc-incast": "no pause frames", "latency": "one-way", "paced-load": "jobs[].rate"} {
		if r := byID[id]; r == nil || r.Status != results.NotApplicable || !strings.Contains(r.Error, why) {
			t.Errorf("%s: want not applicable (%s): %+v", id, why, r)
		}
	}
	md, _, err := report.RenderBMWG(out)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(md)
	for _, sec := range []string{"## 1. DUT identification", "## 2. Test topology", "## 5. Test results", "## 7. Repeatability statement", "not applicable on the netns backend"} {
		if !strings.Contains(string(b), sec) {
			t.Errorf("%s lacks %q", filepath.Base(md), sec)
		}
	}
}
