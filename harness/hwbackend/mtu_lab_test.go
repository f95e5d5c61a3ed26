package hwbackend

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/results"
)

// TestInventoryMTU: on a native lab whose links are at the kernel's
// default MTU (1500: `lab generate` without --mtu), lab-srv6 (transport.mtu
// 8192, SRv6 pinned paths) is refused after the bring-up checks, before
// anything changes: exit 2 naming transport.mtu at its file:line:col, a
// device and interface with its 1500-byte MTU, and the largest mtu that
// fits (1360: 1500 less IPv4, UDP and data headers and the 64-byte SRv6
// encapsulation); every device's state is as before and no point ran.
// The same suite at that largest mtu then passes on the same lab, so the
// bound is not too tight.
func TestInventoryMTU(t *testing.T) {
	h := startHWLabMTU(t, "leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=0.2", true, 0)
	ctx := context.Background()
	inv := h.srv6Inventory(ctx, t, "lab-mtu")
	before := deviceStates(t, inv)
	suiteFile, _ := filepath.Abs("../../examples/suites/lab-srv6.yaml")

	out := filepath.Join(t.TempDir(), "big")
	code, log := runCLI(t, h.bin, "run", suiteFile, "--inventory", inv, "--apply", "--out", out, "--agent-binary", h.bin)
	t.Logf("lab-srv6 at mtu 8192 on 1500-byte links: exit %d\n%s", code, log)
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if !regexp.MustCompile(`lab-srv6\.yaml:\d+:\d+: transport\.mtu: the devices cannot carry an mtu of 8192`).MatchString(log) {
		t.Errorf("the error names no transport.mtu at file:line:col")
	}
	if !regexp.MustCompile(`1500-byte MTU read on (host|leaf|spine)\d \S+`).MatchString(log) {
		t.Errorf("the error names no device, interface and MTU")
	}
	for _, w := range []string{"SRv6 encapsulation", "at most 1360", "nothing was changed"} {
		if !strings.Contains(log, w) {
			t.Errorf("the error lacks %q", w)
		}
	}
	if strings.Contains(log, "stalled") {
		t.Errorf("the run started and stalled")
	}
	res, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2 || res.Runs[0].Status != results.Error || res.Runs[0].ErrorKind != results.ErrorInput || res.Runs[1].Status != results.Skipped {
		t.Errorf("runs %+v: want the bringup run in error (input) and the point skipped", res.Runs)
	}
	if _, err := os.Stat(filepath.Join(out, "runs", res.Runs[len(res.Runs)-1].ID, "config-diff.txt")); err == nil {
		t.Errorf("the point was configured")
	}
	sameStates(t, "lab-srv6 at mtu 8192", before, deviceStates(t, inv))

	// The largest mtu that fits carries the pinned flows.
	b, err := os.ReadFile(suiteFile)
	if err != nil {
		t.Fatal(err)
	}
	fit := filepath.Join(t.TempDir(), "lab-srv6-1360.yaml")
	text := strings.Replace(string(b), "mtu: 8192", "mtu: 1360", 1)
	if text == string(b) {
		t.Fatal("lab-srv6.yaml has no mtu: 8192")
	}
	if err := os.WriteFile(fit, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(t.TempDir(), "fit")
	code, log = runCLI(t, h.bin, "run", fit, "--inventory", inv, "--apply", "--out", out, "--agent-binary", h.bin)
	t.Logf("lab-srv6 at mtu 1360: exit %d\n%s", code, log)
	if code != 0 {
		t.Errorf("lab-srv6 at mtu 1360 on 1500-byte links: exit %d, want 0", code)
	}
	sameStates(t, "lab-srv6 at mtu 1360", before, deviceStates(t, inv))
}
