package suite

import (
	"strings"
	"testing"
)

// A size or duration above the units package's maximum is an error at its
// position that names the limit.
func TestQuantityLimits(t *testing.T) {
	for _, c := range []struct{ extra, want string }{
		{"    start: 3601s\n", `big.yaml:7:12: jobs[0].start: "3601s" is too large (at most 3600s)`},
		{"features:\n  queue: 2048TiB\n", `big.yaml:8:10: features.queue: "2048TiB" is too large (at most 1024TiB)`},
		{"matrix:\n  jobs[0].size: [1MiB, 1025TiB]\n", `"1025TiB" is too large (at most 1024TiB)`},
	} {
		_, err := Parse("big.yaml", []byte(base+c.extra))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err\n%v\nwant %q", c.extra, err, c.want)
		}
	}
	if _, err := Parse("ok.yaml", []byte(base+"    start: 3600s\n")); err != nil {
		t.Errorf("3600s: %v", err)
	}
}
