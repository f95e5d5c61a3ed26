package harness_test

import (
	"context"
	"testing"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/results"
)

// A binary-search test (RFC 2544 26.1) on the simulator: 6 senders burst
// into one receiver through a 64 KiB queue without trimming; the search
// over the burst size runs only its probes, finds the largest size with
// zero drops, and its failed probes above that size do not fail the
// suite. The sizes found bracket the drop: the probe just above loses
// packets, the one found does not.
func TestBinarySearchTest(t *testing.T) {
	file := writeSuite(t, `
name: search
fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=4,gbps=100"}
features: {trimming: {enabled: false}, queue: 64KiB}
telemetry: {interval: 100us}
tests:
  - name: burst
    jobs:
      - {name: b, workload: incast, hosts: [host0, host1, host2, host4, host5, host6, host7], senders: 6, receiver: host0, size: 4KiB}
    kpis:
      - {metric: drop_rate_ppm, max: 0}
    matrix:
      jobs[name=b].size: [4KiB, 8KiB, 16KiB, 32KiB, 64KiB, 128KiB, 256KiB, 512KiB, 1MiB]
    search: {key: "jobs[name=b].size"}
`)
	for _, par := range []int{1, 4} {
		res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: t.TempDir(), Parallel: par})
		if err != nil {
			t.Fatal(err)
		}
		found := res.Tests[0].Found
		probes, na := 0, 0
		var pass, above []string
		for _, r := range res.Runs {
			switch r.Status {
			case results.NotApplicable:
				na++
				continue
			}
			probes++
			size := r.Params["jobs[name=b].size"]
			switch r.Search {
			case results.SearchPass:
				pass = append(pass, size)
			case results.SearchAbove:
				above = append(above, size)
				if r.Status != results.Fail || r.KPIs[0].Value <= 0 {
					t.Errorf("%s: above the limit but %s, %v ppm", r.ID, r.Status, r.KPIs[0].Value)
				}
			default:
				t.Errorf("%s: search outcome %q", r.ID, r.Search)
			}
		}
		t.Logf("parallel %d: found %s; passed %v, failed above %v; %d probes, %d not needed", par, found, pass, above, probes, na)
		if found == "" || found == "4KiB" || found == "1MiB" || len(above) == 0 {
			t.Fatalf("found %q (passed %v, failed %v): want a limit inside the range with a failed probe above it", found, pass, above)
		}
		if probes > 4 || probes+na != 9 || res.Status != results.Pass {
			t.Errorf("%d probes, %d not needed, status %s: want at most 4 probes (9 values) and a pass", probes, na, res.Status)
		}
		if pass[len(pass)-1] != found && !contains(pass, found) {
			t.Errorf("found %s was not a passing probe (%v)", found, pass)
		}
	}
}

// A search in which no value passes fails the suite: the lowest load
// already loses packets, and that is not reported as a pass.
func TestBinarySearchNothingPasses(t *testing.T) {
	file := writeSuite(t, `
name: search
fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=4,gbps=100"}
features: {trimming: {enabled: false}, queue: 64KiB}
telemetry: {interval: 100us}
tests:
  - name: burst
    jobs:
      - {name: b, workload: incast, hosts: [host0, host1, host2, host4, host5, host6, host7], senders: 6, receiver: host0, size: 4KiB}
    kpis:
      - {metric: drop_rate_ppm, max: 0}
    matrix:
      jobs[name=b].size: [512KiB, 1MiB, 2MiB]
    search: {key: "jobs[name=b].size"}
`)
	res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: t.TempDir(), Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != results.Fail || res.Tests[0].Found != "" {
		t.Fatalf("status %s, found %q: want a failed suite and nothing found", res.Status, res.Tests[0].Found)
	}
	if r := res.Runs[0]; r.Search != results.SearchFail {
		t.Errorf("lowest value: %s search %q", r.Status, r.Search)
	}
}

func contains(v []string, s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}
