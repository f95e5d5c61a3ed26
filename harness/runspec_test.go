package harness_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/harness"
)

// The RunSpec's rules (runspec.RunSpec.Validate) are reported at the
// suite's fields, file:line:col, like the suite checker's own errors, and
// as bad input.
func TestRunSpecRulesAtSuiteFields(t *testing.T) {
	const base = "fabric:\n  spec: leafspine:leaves=2,spines=2,hosts_per_leaf=4\njobs:\n  - name: perm\n    workload: permutation\n    size: 1MiB\n"
	for _, c := range []struct{ name, doc, want string }{
		{"path-aware lb on adaptive routing", base + "features:\n  ecmp: {mode: adaptive}\ntransport:\n  lb: spritz-spray\n",
			`:10:7: transport.lb: spritz-spray learns which entropies reach good paths, but with features.ecmp.mode: adaptive the switches choose each packet's path: use mode hash (ECMP hashing, coarse-grained) or source-guided (a dragonfly or slimfly fabric)`},
		{"path-aware lb on valiant-hop routing", "fabric:\n  spec: dragonfly:p=2,a=4,h=2\njobs:\n  - name: perm\n    workload: permutation\n    size: 1MiB\nfeatures:\n  ecmp: {mode: valiant-hop}\ntransport:\n  lb: spritz-spray\n",
			`:10:7: transport.lb: spritz-spray learns which entropies reach good paths, but with features.ecmp.mode: valiant-hop the switches choose each packet's path`},
		{"path-aware lb without src-port in the hash", base + "features:\n  ecmp: {hash: [src-ip, dst-ip]}\ntransport:\n  lb: flicr\n",
			`:10:7: transport.lb: flicr steers packets by their UDP source port (the entropy); features.ecmp.hash must include src-port`},
		{"owd without port-msb", base + "transport:\n  lb: owd\n",
			`:8:7: transport.lb: owd probes paths selected by the entropy's MSB: it needs features.ecmp.mode: port-msb (a dragonfly fabric)`},
		{"in a matrix value", base + "matrix:\n  transport.lb: [reps, spritz-spray]\nfeatures:\n  ecmp: {mode: adaptive}\n",
			`:8:24: matrix["transport.lb"][1]: spritz-spray learns which entropies reach good paths`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := harness.Plan(writeSuite(t, c.doc))
			var ie *harness.InputError
			if err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want bad input with %q", err, c.want)
			}
		})
	}
}
