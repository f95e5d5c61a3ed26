package harness_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/harness"
)

// A job whose flows need more packets than a flow may have (32-bit PSNs:
// transport.MaxPackets) is bad input naming the field, exit status 2 in the
// CLI, and nothing runs. Before, 16 TiB + 1 MiB ran as a 1 MiB flow (and
// exactly 16 TiB as 0 packets) and the suite passed.
func TestOversizedFlowIsBadInput(t *testing.T) {
	const head = "name: big\nfabric: {spec: \"leafspine:leaves=2,spines=2,hosts_per_leaf=2\"}\n"
	cases := []struct{ body, want string }{
		{"jobs:\n  - {name: p, workload: permutation, size: 16777217MiB}\n",
			`suite.yaml:4:44: jobs[0].size: "16777217MiB" is more than the maximum flow size of 17592186040320 bytes (4294967295 packets of transport.mtu 4096)`},
		{"jobs:\n  - {name: p, workload: permutation, size: 16TiB}\n",
			`suite.yaml:4:44: jobs[0].size: "16TiB" is more than the maximum flow size of 17592186040320 bytes`},
		{"transport: {mtu: 256}\njobs:\n  - {name: p, workload: incast, size: 1TiB}\n",
			`suite.yaml:5:39: jobs[0].size: "1TiB" is more than the maximum flow size of 1099511627520 bytes (4294967295 packets of transport.mtu 256)`},
		{"transport: {mtu: 256}\njobs:\n  - {name: p, workload: permutation, size: 1MiB}\nmatrix:\n  jobs[0].size: [1MiB, 2TiB]\n",
			`matrix["jobs[0].size"][1]: "2TiB" is more than the maximum flow size of 1099511627520 bytes`},
	}
	for _, c := range cases {
		out := t.TempDir()
		res, err := harness.Run(context.Background(), harness.Options{SuiteFile: writeSuite(t, head+c.body), Out: out})
		var ie *harness.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error\n%v\nwant an input error containing\n%s", err, c.want)
		}
		if res != nil {
			t.Errorf("results %+v for a refused suite", res)
		}
		if _, err := os.Stat(filepath.Join(out, "results.json")); err == nil {
			t.Errorf("results.json written for a refused suite")
		}
	}
	// Just under the limit at mtu 256 the suite is accepted (planned, not
	// run: 2^32-1 packets take hours to simulate).
	ok := writeSuite(t, head+"transport: {mtu: 256}\njobs:\n  - {name: p, workload: permutation, size: 1099511627520B}\n")
	if _, _, err := harness.Plan(ok); err != nil {
		t.Errorf("at the limit: %v", err)
	}
}
