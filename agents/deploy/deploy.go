// Package deploy installs and runs fabricbench processes (the transport
// agent, the telemetry exporter) on remote hosts over SSH, or in
// containers with docker exec (drivers.Config.Container): the binary is
// copied (SFTP, or docker exec's stdin; only when the host does not have
// that exact build yet), per-run secrets go into 0600 files, processes
// are started detached and stopped (TERM, then KILL) at the end of the
// run, also after a failure. Host keys are always verified against
// known_hosts (drivers/sshx).
package deploy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/drivers/remote"
	"github.com/fabricbench/fabricbench/drivers/sshx"
)

// Binary is a local executable to install.
type Binary struct {
	Path   string
	SHA256 string // hex
	Size   int64
}

// LocalBinary hashes the executable at p (the running fabricbench when p
// is empty).
func LocalBinary(p string) (*Binary, error) {
	if p == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("agent binary: %w", err)
		}
		p = exe
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("agent binary: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return nil, fmt.Errorf("agent binary %s: %w", p, err)
	}
	return &Binary{Path: p, SHA256: hex.EncodeToString(h.Sum(nil)), Size: n}, nil
}

// Host is the shell of one remote host (SSH, or docker exec).
type Host struct {
	Name string
	c    sshx.Shell
	home string
	run  string // run directory (relative to home)
	bin  string // installed binary (relative to home)
}

// Dir is where fabricbench keeps its files on a host, under the login
// user's home.
const Dir = ".fabricbench"

// Connect opens a host's shell; runID names its run directory.
func Connect(ctx context.Context, name string, cfg drivers.Config, runID string) (*Host, error) {
	if cfg.Device == "" {
		cfg.Device = name
	}
	c, err := remote.Dial(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	h := &Host{Name: name, c: c, run: path.Join(Dir, "run", runID)}
	out, err := c.Run(ctx, "uname -m && mkdir -p "+shq(h.run)+" && chmod 700 "+shq(Dir)+" "+shq(h.run)+" && cd && pwd")
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: prepare %s: %w", name, h.run, err)
	}
	lines := strings.Fields(out)
	if len(lines) < 2 {
		c.Close()
		return nil, fmt.Errorf("%s: unexpected reply to uname/pwd: %q", name, sshx.Excerpt(out, 200))
	}
	if want := unameArch(runtime.GOARCH); want != "" && lines[0] != want {
		c.Close()
		return nil, fmt.Errorf("%s: the host is %s but this fabricbench is built for %s (linux/%s); build one for the host", name, lines[0], want, runtime.GOARCH)
	}
	h.home = lines[len(lines)-1]
	return h, nil
}

func unameArch(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return ""
}

// Close ends the SSH session.
func (h *Host) Close() error { return h.c.Close() }

// Run runs a shell command on the host.
func (h *Host) Run(ctx context.Context, cmd string) (string, error) { return h.c.Run(ctx, cmd) }

// RunDir is the run directory on the host (absolute).
func (h *Host) RunDir() string { return path.Join(h.home, h.run) }

// Install copies b to the host unless a binary with its hash is there
// already; it returns whether it copied.
func (h *Host) Install(ctx context.Context, b *Binary) (bool, error) {
	h.bin = path.Join(Dir, "bin", "fabricbench-"+b.SHA256[:16])
	out, err := h.c.Run(ctx, "sha256sum "+shq(h.bin)+" 2>/dev/null || true")
	if err != nil {
		return false, fmt.Errorf("%s: %w", h.Name, err)
	}
	if f := strings.Fields(out); len(f) > 0 && f[0] == b.SHA256 {
		return false, nil
	}
	if _, err := h.c.Run(ctx, "mkdir -p "+shq(path.Join(h.home, Dir, "bin"))); err != nil {
		return false, fmt.Errorf("%s: mkdir: %w", h.Name, err)
	}
	local, err := os.Open(b.Path)
	if err != nil {
		return false, err
	}
	defer local.Close()
	if err := h.c.WriteFile(ctx, path.Join(h.home, h.bin), local, b.Size, 0o755); err != nil {
		return false, fmt.Errorf("%s: install %s: %w", h.Name, h.bin, err)
	}
	// Check what landed.
	out, err = h.c.Run(ctx, "sha256sum "+shq(h.bin))
	if err != nil {
		return true, fmt.Errorf("%s: %w", h.Name, err)
	}
	if f := strings.Fields(out); len(f) == 0 || f[0] != b.SHA256 {
		return true, fmt.Errorf("%s: the copied binary's checksum is %q, want %s", h.Name, sshx.Excerpt(out, 80), b.SHA256)
	}
	return true, nil
}

// WriteSecret writes data to a 0600 file in the run directory and returns
// its absolute path. The content never appears on a command line.
func (h *Host) WriteSecret(ctx context.Context, name string, data []byte) (string, error) {
	p := path.Join(h.RunDir(), name)
	if err := h.c.WriteFile(ctx, p, bytes.NewReader(data), int64(len(data)), 0o600); err != nil {
		return "", fmt.Errorf("%s: write %s: %w", h.Name, p, err)
	}
	return p, nil
}

// Proc is a process started on a host.
type Proc struct {
	Host string
	Name string
	PID  int
	Log  string // absolute path of its log on the host
}

// Start runs the installed binary with args, detached from the SSH
// session, logging to NAME.log in the run directory.
func (h *Host) Start(ctx context.Context, name string, args []string) (*Proc, error) {
	if h.bin == "" {
		return nil, fmt.Errorf("%s: no binary installed", h.Name)
	}
	log := path.Join(h.RunDir(), name+".log")
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shq(a)
	}
	cmd := fmt.Sprintf("cd %s && { setsid %s %s >%s 2>&1 </dev/null & echo $!; }",
		shq(h.RunDir()), shq(path.Join(h.home, h.bin)), strings.Join(q, " "), shq(log))
	out, err := h.c.Run(ctx, cmd)
	if err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", h.Name, name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || pid <= 1 {
		return nil, fmt.Errorf("%s: start %s: no process id in %q", h.Name, name, sshx.Excerpt(out, 200))
	}
	return &Proc{Host: h.Name, Name: name, PID: pid, Log: log}, nil
}

// Alive reports whether p still runs.
func (h *Host) Alive(ctx context.Context, p *Proc) bool {
	_, err := h.c.Run(ctx, aliveFn+"alive "+strconv.Itoa(p.PID))
	return err == nil
}

// aliveFn defines a shell function: a process is alive when it exists and
// is not a zombie (a detached process's new parent may not reap it).
const aliveFn = `alive() { [ -r /proc/$1/status ] && ! grep -q '^State:[[:space:]]*Z' /proc/$1/status; }
`

// LogTail returns the last lines of p's log.
func (h *Host) LogTail(ctx context.Context, p *Proc, lines int) string {
	out, _ := h.c.Run(ctx, fmt.Sprintf("tail -n %d %s 2>/dev/null", lines, shq(p.Log)))
	return strings.TrimSpace(out)
}

// Stop sends SIGTERM, waits up to grace for p to exit, then SIGKILLs it.
// It reports whether the process had already exited before Stop.
func (h *Host) Stop(ctx context.Context, p *Proc, grace time.Duration) (wasDead bool, err error) {
	pid := strconv.Itoa(p.PID)
	tenths := int(grace / (100 * time.Millisecond))
	if tenths < 1 {
		tenths = 1
	}
	script := aliveFn + fmt.Sprintf(`alive %[1]s || { echo gone; exit 0; }
kill -TERM %[1]s 2>/dev/null
i=0; while alive %[1]s && [ $i -lt %[2]d ]; do sleep 0.1; i=$((i+1)); done
if alive %[1]s; then kill -KILL %[1]s; echo killed; else echo stopped; fi`, pid, tenths)
	out, err := h.c.Run(ctx, script)
	if err != nil {
		return false, fmt.Errorf("%s: stop %s (pid %d): %w", h.Name, p.Name, p.PID, err)
	}
	return strings.TrimSpace(out) == "gone", nil
}

// Cleanup removes the run directory (secrets and logs).
func (h *Host) Cleanup(ctx context.Context) error {
	_, err := h.c.Run(ctx, "rm -rf "+shq(h.RunDir()))
	return err
}

// shq quotes s for a POSIX shell.
func shq(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r == '=' || r == ',' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
