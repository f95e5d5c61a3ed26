package labtest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/drivers"
)

// StartTinyAt deploys TinyAt(name, mgmt) (skipping when the machine cannot
// run a lab), logs how long it took, and tears it down when the test ends.
// The driver packages run their lab tests on it.
func StartTinyAt(t *testing.T, name, mgmt string) *Lab {
	t.Helper()
	Require(t)
	lab := TinyAt(t, name, mgmt)
	start := time.Now()
	l := StartLab(t, lab)
	t.Logf("lab up in %s", time.Since(start).Round(time.Millisecond))
	return l
}

// OpenDriver opens a driver on node with open (a failure fails the test)
// and closes it when the test ends; with strictClose a Close error fails
// the test too.
func OpenDriver[D io.Closer](t *testing.T, l *Lab, node string, open func(drivers.Config) (D, error), strictClose bool) D {
	t.Helper()
	d, err := open(l.Config(t, node))
	if err != nil {
		t.Fatalf("open %s: %v", node, err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil && strictClose {
			t.Errorf("close %s: %v", node, err)
		}
	})
	return d
}

// Capabilities reads drv's capabilities and logs each feature's; an error
// fails the test.
func Capabilities(t *testing.T, ctx context.Context, drv drivers.Driver) drivers.Capabilities {
	t.Helper()
	caps, err := drv.Capabilities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range drivers.AllFeatures {
		t.Logf("%-10s %+v", f, caps[f])
	}
	return caps
}

// Changes are a diff's changes by key.
type Changes map[string]drivers.Change

// Has reports whether the diff changes key.
func (c Changes) Has(key string) bool {
	_, ok := c[key]
	return ok
}

// Diff is drv.Diff(ctx, want), logged, with its changes by key; an error
// fails the test.
func Diff(t *testing.T, ctx context.Context, drv drivers.Driver, want *drivers.DeviceFeatures) (drivers.Diff, Changes) {
	t.Helper()
	diff, err := drv.Diff(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("diff:\n%s", diff)
	keys := Changes{}
	for _, c := range diff {
		keys[c.Key] = c
	}
	return diff, keys
}

// CheckApplied fails the test unless, once want is applied, a second Diff
// and a second Apply change nothing (the driver contract: applying the
// same features twice changes nothing).
func CheckApplied(t *testing.T, ctx context.Context, drv drivers.Driver, want *drivers.DeviceFeatures) {
	t.Helper()
	if diff, err := drv.Diff(ctx, want); err != nil || len(diff) != 0 {
		t.Errorf("second diff: %v\n%s", err, diff)
	}
	if again, err := drv.Apply(ctx, want); err != nil || len(again) != 0 {
		t.Errorf("second apply: %v\n%s", err, again)
	}
}

// MismatchedKnownHosts writes a known_hosts file (in a temporary directory
// of the test) that gives addr spine0's host key: a client that verifies
// host keys must refuse the node at addr with it.
func (l *Lab) MismatchedKnownHosts(t *testing.T, addr string) string {
	t.Helper()
	kh, err := os.ReadFile(l.St.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	var spineKey string
	for _, line := range strings.Split(string(kh), "\n") {
		if strings.HasPrefix(line, "spine0,") {
			spineKey = strings.SplitN(line, " ", 2)[1]
		}
	}
	if spineKey == "" {
		t.Fatalf("no spine0 entry in %s", kh)
	}
	wrong := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(wrong, []byte(addr+" "+spineKey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return wrong
}
