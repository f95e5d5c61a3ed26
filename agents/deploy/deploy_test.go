package deploy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/drivers/sshx"
)

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"plain-arg_1.2:3=4,5": "plain-arg_1.2:3=4,5",
		"":                    "''",
		"a b":                 "'a b'",
		"it's":                `'it'\''s'`,
		"$(reboot)":           "'$(reboot)'",
	} {
		if got := shq(in); got != want {
			t.Errorf("shq(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestDeployOnLab copies a binary to a lab host over SFTP, starts it,
// stops it, and checks host keys are verified.
func TestDeployOnLab(t *testing.T) {
	lab := labtest.StartLab(t, labtest.TinyAt(t, "fbdeploy", "198.19.244.0/24"))
	ctx := context.Background()
	cfg := lab.Config(t, "host0")

	// /bin/sleep stands in for the fabricbench binary.
	bin, err := LocalBinary("/bin/sleep")
	if err != nil {
		t.Fatal(err)
	}
	h, err := Connect(ctx, "host0", cfg, "run1")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	copied, err := h.Install(ctx, bin)
	if err != nil || !copied {
		t.Fatalf("install: copied %v, %v", copied, err)
	}
	copied, err = h.Install(ctx, bin)
	if err != nil || copied {
		t.Fatalf("second install must find the binary in place: copied %v, %v", copied, err)
	}
	p, err := h.WriteSecret(ctx, "token", []byte("s3cret-token-value"))
	if err != nil {
		t.Fatal(err)
	}
	if out := lab.Sh(t, "host0", "stat -c %a "+p+" && cat "+p); !strings.Contains(out, "600") || !strings.Contains(out, "s3cret-token-value") {
		t.Fatalf("secret file: %q", out)
	}
	proc, err := h.Start(ctx, "sleeper", []string{"30"})
	if err != nil {
		t.Fatal(err)
	}
	if !h.Alive(ctx, proc) {
		t.Fatalf("process %d not running; log: %s", proc.PID, h.LogTail(ctx, proc, 5))
	}
	// The process lives in host0's namespaces, not on this host's network.
	if out := lab.Sh(t, "host0", "cat /proc/"+strconv.Itoa(proc.PID)+"/comm"); !strings.Contains(out, "fabricbench") {
		t.Errorf("pid %d in host0 is %q", proc.PID, out)
	}
	wasDead, err := h.Stop(ctx, proc, time.Second)
	if err != nil || wasDead {
		t.Fatalf("stop: wasDead %v, %v", wasDead, err)
	}
	if h.Alive(ctx, proc) {
		t.Fatal("still running after Stop")
	}
	wasDead, err = h.Stop(ctx, proc, time.Second)
	if err != nil || !wasDead {
		t.Fatalf("second stop: wasDead %v, %v", wasDead, err)
	}
	if err := h.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	if out := lab.Sh(t, "host0", "ls -a "+filepath.Join("/root", Dir, "run")); strings.Contains(out, "run1") {
		t.Errorf("run directory left behind: %s", out)
	}

	// A host whose key is not the one in known_hosts is refused.
	other := lab.Config(t, "host1")
	bad := filepath.Join(t.TempDir(), "known_hosts")
	kh, err := os.ReadFile(cfg.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	// host1's address with host0's keys.
	var lines []string
	for _, l := range strings.Split(string(kh), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == cfg.Address {
			lines = append(lines, other.Address+" "+f[1]+" "+f[2])
		}
	}
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	other.KnownHosts = bad
	_, err = Connect(ctx, "host1", other, "run1")
	var hk *sshx.HostKeyError
	if !errors.As(err, &hk) {
		t.Fatalf("connect with a wrong host key: want HostKeyError, got %v", err)
	}
}
