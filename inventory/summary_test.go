package inventory

import "testing"

// The summary uses the fabric's own names and leaves out empty tiers
// (issue 19: no "leaves, spines, cores" for tor/agg/core, no "0 cores").
func TestSummary(t *testing.T) {
	for spec, want := range map[string]string{
		"fattree:hosts=16,tiers=3":                     "16 hosts, 8 ToRs (tor0..tor7), 8 aggs (agg0..agg7), 4 cores (core0..core3), 48 links",
		"leafspine:leaves=2,spines=1,hosts_per_leaf=1": "2 hosts, 2 leaves (leaf0..leaf1), 1 spine (spine0), 4 links",
	} {
		f, err := ParseSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Summary(); got != want {
			t.Errorf("%s: %q, want %q", spec, got, want)
		}
	}
}
