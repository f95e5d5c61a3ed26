package suite

import (
	"strings"
	"testing"
)

// Quantities that expand into memory up front (flap events, repetitions,
// flows) have documented maxima; above them Load fails at the field's
// position, naming the limit.
func TestExpansionLimits(t *testing.T) {
	cases := []struct{ name, extra, want string }{
		{"flap-count", "faults:\n  - {kind: flap, link: leaf0-spine0, period: 10us, count: 2147483648}\n",
			"big.yaml:8:59: faults[0].count: 2147483648 flap cycles is more than the maximum of 10000"},
		{"repetitions", "    repetitions: 1000000000\n",
			"big.yaml:7:18: jobs[0].repetitions: 1000000000 is more than the maximum of 10000"},
		// 8 hosts, all-to-all: 56 flows a repetition; 56*10000 = 560000 is
		// fine, but two such jobs and a permutation exceed 1048576.
		{"flows", "  - {name: a, workload: all-to-all, size: 1KiB, repetitions: 10000}\n  - {name: b, workload: all-to-all, size: 1KiB, repetitions: 10000}\n",
			"big.yaml:8:62: jobs[2].repetitions: the run would have 1120008 flows (jobs[2]: 10000 repetitions of 56 flows), more than the maximum of 1048576"},
		// One repetition of an all-to-all over 2000 hosts: no repetitions
		// key, so the job itself is named.
		{"hosts", "!fabric: {spec: \"fattree:hosts=2000,tiers=3,radix=20\"}\njobs:\n  - {name: a, workload: all-to-all, size: 1KiB}\n",
			"big.yaml:3:5: jobs[0].hosts: the run would have 3998000 flows (jobs[0]: 3998000 flows), more than the maximum of 1048576"},
		// A matrix value is named where it is written.
		{"matrix", "matrix:\n  jobs[0].repetitions: [1, 20000]\n",
			`big.yaml:8:28: matrix["jobs[0].repetitions"][1]: 20000 is more than the maximum of 10000`},
	}
	for _, c := range cases {
		doc := base + c.extra
		if rest, ok := strings.CutPrefix(c.extra, "!"); ok {
			doc = rest
		}
		_, err := Parse("big.yaml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err\n%v\nwant %q", c.name, err, c.want)
		}
	}
	// At the limits the suite loads.
	ok := base + "    repetitions: 10000\nfaults:\n  - {kind: flap, link: leaf0-spine0, period: 10us, count: 10000}\n"
	if _, err := Parse("ok.yaml", []byte(ok)); err != nil {
		t.Errorf("at the limits: %v", err)
	}
}
