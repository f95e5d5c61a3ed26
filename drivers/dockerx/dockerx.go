// Package dockerx reaches a device that is a container the way
// containerlab users reach one: docker exec. It implements sshx.Shell, so
// the drivers and the agent deployment work on a containerlab node that
// runs no SSH server (the official FRR image, for one).
//
// Commands run as `docker exec CONTAINER sh -c CMD` (stdin from
// /dev/null) in the user's home directory, as an SSH session does; files are written through docker exec's stdin, never on a
// command line. There is no host key to verify: the container is on this
// machine and docker's socket is root's.
package dockerx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/drivers/sshx"
)

// Client runs commands in one container.
type Client struct {
	container string
	docker    string
	timeout   time.Duration

	mu     sync.Mutex
	closed bool
}

var _ sshx.Shell = (*Client)(nil)

// Binary is the docker command: $FABRICBENCH_DOCKER, else "docker".
func Binary() string {
	if b := os.Getenv("FABRICBENCH_DOCKER"); b != "" {
		return b
	}
	return "docker"
}

// Dial checks that cfg.Container is running and returns a client for it.
func Dial(ctx context.Context, cfg drivers.Config) (*Client, error) {
	if cfg.Container == "" {
		return nil, errors.New("dockerx: no container in the configuration")
	}
	c := &Client{container: cfg.Container, docker: Binary(), timeout: sshx.Timeout(cfg)}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, c.docker, "inspect", "--format", "{{.State.Running}}", cfg.Container).CombinedOutput()
	switch {
	case err != nil:
		return nil, fmt.Errorf("docker inspect %s: %v: %s", cfg.Container, err, sshx.Excerpt(string(out), 300))
	case strings.TrimSpace(string(out)) != "true":
		return nil, fmt.Errorf("container %s is not running", cfg.Container)
	}
	return c, nil
}

// Container is the container's name.
func (c *Client) Container() string { return c.container }

// Addr is "docker:CONTAINER".
func (c *Client) Addr() string { return "docker:" + c.container }

// Close marks the client closed (there is no connection to end).
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return nil
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Run runs cmd in the container with sh -c and returns its combined
// output; a non-zero exit is an *sshx.ExitError.
func (c *Client) Run(ctx context.Context, cmd string) (string, error) {
	return c.run(ctx, cmd, nil)
}

// Exit statuses of docker exec itself (not of the command).
const (
	dockerFailed      = 125 // the docker command failed (no such container, daemon down)
	dockerCannotExec  = 126
	dockerNotFoundCmd = 127
)

func (c *Client) run(ctx context.Context, cmd string, stdin io.Reader, args ...string) (string, error) {
	if c.isClosed() {
		return "", fmt.Errorf("%q: client for %s is closed", cmd, c.container)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	argv := []string{"exec"}
	if stdin != nil {
		argv = append(argv, "-i")
	}
	// In the user's home directory, as an SSH session starts (relative
	// paths mean the same on both transports).
	argv = append(argv, c.container, "sh", "-c", `cd "${HOME:-/}" 2>/dev/null || true; `+cmd)
	argv = append(argv, args...)
	x := exec.CommandContext(ctx, c.docker, argv...)
	var out bytes.Buffer
	x.Stdout, x.Stderr, x.Stdin = &out, &out, stdin
	err := x.Run()
	text := out.String()
	if ctx.Err() != nil {
		return text, fmt.Errorf("%q in %s: %w", cmd, c.container, ctx.Err())
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return text, nil
	case errors.As(err, &ee):
		st := ee.ExitCode()
		if engineDown(text) {
			// The docker command could not reach the engine (exit status
			// 1): the command never ran.
			return text, fmt.Errorf("docker exec into %s: the Docker engine does not answer: %s", c.container, sshx.Excerpt(text, 300))
		}
		if st == dockerFailed && (strings.Contains(text, "No such container") || strings.Contains(text, "is not running") || strings.Contains(text, "Cannot connect to the Docker daemon")) {
			return text, fmt.Errorf("%q: docker exec into %s: %s", cmd, c.container, sshx.Excerpt(text, 300))
		}
		return text, &sshx.ExitError{Cmd: cmd, Output: strings.TrimSpace(text), Status: st}
	}
	return text, fmt.Errorf("%q: docker exec into %s: %w", cmd, c.container, err)
}

// RunBatch runs cmds in one sh, each in its own subshell (see
// sshx.Client.RunBatch).
func (c *Client) RunBatch(ctx context.Context, cmds []string, stopOnError bool) ([]sshx.Result, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	script, marker := sshx.BatchScript(cmds, stopOnError)
	out, err := c.Run(ctx, script)
	if err != nil {
		return nil, fmt.Errorf("batch of %d commands (first %q): %w", len(cmds), cmds[0], err)
	}
	res, err := sshx.SplitBatch(out, marker, cmds)
	if err != nil {
		return nil, fmt.Errorf("batch of %d commands (first %q): %w", len(cmds), cmds[0], err)
	}
	return res, nil
}

// WriteFile streams r into path through docker exec's stdin (see
// sshx.Shell).
func (c *Client) WriteFile(ctx context.Context, path string, r io.Reader, size int64, mode os.FileMode) error {
	script := fmt.Sprintf(`umask 077 && t="$1.part-$$" && cat >"$t" && chmod %o "$t" && n=$(wc -c <"$t") && if [ "$2" -ge 0 ] && [ "$n" -ne "$2" ]; then rm -f "$t"; echo "short write: $n of $2 bytes" >&2; exit 1; fi && mv -f "$t" "$1"`, mode.Perm())
	if _, err := c.run(ctx, script, r, "fbwrite", path, fmt.Sprint(size)); err != nil {
		return fmt.Errorf("write %s in %s: %w", path, c.container, err)
	}
	return nil
}

// engineDown reports whether a docker command's output says it could not
// reach the Docker engine (the wording of docker 20 to 27, and of 28 on).
func engineDown(out string) bool {
	return strings.Contains(out, "Cannot connect to the Docker daemon") || strings.Contains(out, "Is the docker daemon running?") ||
		strings.Contains(out, "failed to connect to the docker API")
}
