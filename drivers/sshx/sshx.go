// Package sshx is the SSH client the fabricbench drivers share
// (golang.org/x/crypto/ssh).
//
// Host keys are always verified against a known_hosts file
// (golang.org/x/crypto/ssh/knownhosts): a drivers.Config without
// KnownHosts is refused, and there is no way to turn verification off.
// Authentication comes from drivers.Auth: a private key (optionally
// passphrase-protected), a password, or the keys of the ssh-agent at
// $SSH_AUTH_SOCK. Secrets never appear in errors.
//
// A Client holds one SSH connection; every Run is a new session on it.
// When the connection has died (the device rebooted, sshd restarted) the
// next Run dials again once.
package sshx

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fabricbench/fabricbench/drivers"
)

// DefaultTimeout bounds one operation (dial, one command) when
// drivers.Config.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// ErrNoKnownHosts is returned for a configuration without a known_hosts
// file: host keys are always verified.
var ErrNoKnownHosts = errors.New("no known_hosts file configured (drivers.Config.KnownHosts): host keys are always verified")

// Client is one SSH connection to a device. It is safe for concurrent
// use: every Run opens its own session.
type Client struct {
	addr    string // host:port
	cfg     drivers.Config
	timeout time.Duration

	mu     sync.Mutex
	conn   *ssh.Client
	closed bool
}

// HostPort returns host and port from "host", "host:port" or
// "[v6]:port"; a non-zero port wins over the one in the address, and 22
// is the default.
func HostPort(addr string, port int) (string, int, error) {
	if addr == "" {
		return "", 0, errors.New("no management address")
	}
	host := addr
	if h, p, err := net.SplitHostPort(addr); err == nil {
		host = h
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return "", 0, fmt.Errorf("bad port in address %q", addr)
		}
		if port == 0 {
			port = n
		}
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]")
	}
	if port == 0 {
		port = 22
	}
	if port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("bad port %d", port)
	}
	if host == "" {
		return "", 0, fmt.Errorf("no host in address %q", addr)
	}
	return host, port, nil
}

// Timeout returns cfg's per-operation timeout (DefaultTimeout when 0).
func Timeout(cfg drivers.Config) time.Duration {
	if cfg.Timeout > 0 {
		return cfg.Timeout
	}
	return DefaultTimeout
}

// Name returns the name a device goes by in messages: cfg.Device, or the
// address when it has none.
func Name(cfg drivers.Config) string {
	if cfg.Device != "" {
		return cfg.Device
	}
	return cfg.Address
}

// Dial connects to the device of cfg and authenticates, verifying its host
// key against cfg.KnownHosts.
func Dial(ctx context.Context, cfg drivers.Config) (*Client, error) {
	if cfg.KnownHosts == "" {
		return nil, ErrNoKnownHosts
	}
	host, port, err := HostPort(cfg.Address, cfg.Port)
	if err != nil {
		return nil, err
	}
	c := &Client{addr: net.JoinHostPort(host, strconv.Itoa(port)), cfg: cfg, timeout: Timeout(cfg)}
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	c.conn = conn
	return c, nil
}

// Addr is the host:port the client connects to.
func (c *Client) Addr() string { return c.addr }

func (c *Client) dial(ctx context.Context) (*ssh.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	hostKeys, err := knownhosts.New(c.cfg.KnownHosts)
	if err != nil {
		return nil, fmt.Errorf("known_hosts %s: %w", c.cfg.KnownHosts, err)
	}
	auth, cleanup, err := AuthMethods(c.cfg.Auth)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if c.cfg.Auth.User == "" {
		return nil, errors.New("no SSH user (drivers.Auth.User)")
	}
	var d net.Dialer
	tcp, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", c.addr, err)
	}
	// The handshake is bounded by the context too.
	if dl, ok := ctx.Deadline(); ok {
		_ = tcp.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = tcp.SetDeadline(time.Now()) })
	defer stop()
	cc := &ssh.ClientConfig{
		User:              c.cfg.Auth.User,
		Auth:              auth,
		HostKeyCallback:   hostKeys,
		HostKeyAlgorithms: KnownAlgorithms(hostKeys, c.addr, tcp.RemoteAddr()),
		Timeout:           c.timeout,
	}
	sc, chans, reqs, err := ssh.NewClientConn(tcp, c.addr, cc)
	if err != nil {
		tcp.Close()
		var ke *knownhosts.KeyError
		if errors.As(err, &ke) {
			return nil, &HostKeyError{Addr: c.addr, KnownHosts: c.cfg.KnownHosts, Err: err}
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("ssh to %s: %w (%v)", c.addr, ctx.Err(), err)
		}
		return nil, fmt.Errorf("ssh to %s as %s: %w", c.addr, c.cfg.Auth.User, err)
	}
	_ = tcp.SetDeadline(time.Time{})
	return ssh.NewClient(sc, chans, reqs), nil
}

// HostKeyError is a host key that is not in the known_hosts file or does
// not match the key recorded there.
type HostKeyError struct {
	Addr, KnownHosts string
	Err              error // wraps *knownhosts.KeyError
}

func (e *HostKeyError) Error() string {
	return fmt.Sprintf("ssh to %s: host key verification against %s failed: %v", e.Addr, e.KnownHosts, e.Err)
}

func (e *HostKeyError) Unwrap() error { return e.Err }

var (
	probeKeyOnce sync.Once
	probeKey     ssh.PublicKey
)

// KnownAlgorithms returns the host key algorithms of the keys known for
// addr (host:port, and the remote address when known), so that the
// handshake negotiates a key type known_hosts can verify. It returns nil
// when the host is unknown (the handshake then fails verification).
func KnownAlgorithms(cb ssh.HostKeyCallback, addr string, remote net.Addr) []string {
	probeKeyOnce.Do(func() {
		pub, _, err := ed25519.GenerateKey(rand.Reader)
		if err == nil {
			probeKey, _ = ssh.NewPublicKey(pub)
		}
	})
	if probeKey == nil {
		return nil
	}
	if remote == nil {
		if ra, err := net.ResolveTCPAddr("tcp", addr); err == nil {
			remote = ra
		} else {
			remote = &net.TCPAddr{}
		}
	}
	// A fresh random key is never in the file: the callback answers with
	// the keys it would have accepted.
	err := cb(addr, remote, probeKey)
	var ke *knownhosts.KeyError
	if !errors.As(err, &ke) {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	add := func(a string) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	for _, k := range ke.Want {
		switch t := k.Key.Type(); t {
		case ssh.KeyAlgoRSA:
			add(ssh.KeyAlgoRSASHA512)
			add(ssh.KeyAlgoRSASHA256)
			add(ssh.KeyAlgoRSA)
		default:
			add(t)
		}
	}
	return out
}

// AuthMethods turns drivers.Auth into SSH auth methods. cleanup releases
// the ssh-agent connection; call it once the handshake is done.
func AuthMethods(a drivers.Auth) (methods []ssh.AuthMethod, cleanup func(), err error) {
	cleanup = func() {}
	if len(a.PrivateKey) > 0 {
		signer, err := parseKey(a.PrivateKey, a.Passphrase)
		if err != nil {
			return nil, cleanup, err
		}
		methods = append(methods, ssh.PublicKeys(signer))
	}
	if a.Agent {
		sock := os.Getenv("SSH_AUTH_SOCK")
		if sock == "" {
			return nil, cleanup, errors.New("ssh-agent authentication requested but SSH_AUTH_SOCK is not set")
		}
		conn, err := net.Dial("unix", sock)
		if err != nil {
			return nil, cleanup, fmt.Errorf("ssh-agent at SSH_AUTH_SOCK: %w", err)
		}
		cleanup = func() { conn.Close() }
		methods = append(methods, ssh.PublicKeysCallback(agent.NewClient(conn).Signers))
	}
	if a.Password != "" {
		pw := a.Password
		methods = append(methods, ssh.Password(pw), ssh.KeyboardInteractive(
			func(_, _ string, questions []string, echos []bool) ([]string, error) {
				answers := make([]string, len(questions))
				for i := range answers {
					answers[i] = pw
				}
				return answers, nil
			}))
	}
	if len(methods) == 0 {
		return nil, cleanup, errors.New("no SSH credentials: set a private key, a password or ssh-agent (drivers.Auth)")
	}
	return methods, cleanup, nil
}

func parseKey(key []byte, passphrase string) (ssh.Signer, error) {
	if passphrase != "" {
		s, err := ssh.ParsePrivateKeyWithPassphrase(key, []byte(passphrase))
		if err != nil {
			return nil, fmt.Errorf("private key (with passphrase): %s", keyErrText(err))
		}
		return s, nil
	}
	s, err := ssh.ParsePrivateKey(key)
	if err != nil {
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			return nil, errors.New("private key is passphrase-protected but no passphrase is set")
		}
		return nil, fmt.Errorf("private key: %s", keyErrText(err))
	}
	return s, nil
}

// keyErrText keeps key parsing errors generic: they never carry key
// material, but be sure.
func keyErrText(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// PlainPrivateKey returns key as an unencrypted PEM block (decrypting it
// with passphrase in memory), for SSH clients that take key bytes without
// a passphrase (scrapligo's standard transport).
func PlainPrivateKey(key []byte, passphrase string) ([]byte, error) {
	if passphrase == "" {
		if _, err := parseKey(key, ""); err != nil {
			return nil, err
		}
		return key, nil
	}
	raw, err := ssh.ParseRawPrivateKeyWithPassphrase(key, []byte(passphrase))
	if err != nil {
		return nil, fmt.Errorf("private key (with passphrase): %s", keyErrText(err))
	}
	block, err := ssh.MarshalPrivateKey(raw, "")
	if err != nil {
		return nil, fmt.Errorf("private key: %s", keyErrText(err))
	}
	return pem.EncodeToMemory(block), nil
}

// Session opens a new session, dialling again once when the connection
// has died.
func (c *Client) Session(ctx context.Context) (*ssh.Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("ssh client is closed")
	}
	if c.conn != nil {
		s, err := c.conn.NewSession()
		if err == nil {
			return s, nil
		}
		c.conn.Close()
		c.conn = nil
	}
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("reconnect: %w", err)
	}
	c.conn = conn
	s, err := conn.NewSession()
	if err != nil {
		return nil, fmt.Errorf("ssh session on %s: %w", c.addr, err)
	}
	return s, nil
}

// SSH returns the live SSH connection (dialling again when it died), for
// protocols on top of it such as SFTP. The client still owns it.
func (c *Client) SSH(ctx context.Context) (*ssh.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("ssh client is closed")
	}
	if c.conn != nil {
		if _, _, err := c.conn.SendRequest("keepalive@fabricbench", true, nil); err == nil || !errors.Is(err, io.EOF) {
			return c.conn, nil
		}
		c.conn.Close()
		c.conn = nil
	}
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("reconnect: %w", err)
	}
	c.conn = conn
	return conn, nil
}

// ExitError is a command that ran and failed.
type ExitError struct {
	Cmd    string
	Output string // trimmed combined output
	Status int    // exit status; -1 when killed by a signal or unknown
	Signal string
}

func (e *ExitError) Error() string {
	how := fmt.Sprintf("exit status %d", e.Status)
	if e.Signal != "" {
		how = "killed by signal " + e.Signal
	}
	if e.Output == "" {
		return fmt.Sprintf("%q: %s", e.Cmd, how)
	}
	return fmt.Sprintf("%q: %s: %s", e.Cmd, how, Excerpt(e.Output, 600))
}

// Excerpt shortens device output for error messages.
func Excerpt(s string, limit int) string {
	s = strings.TrimSpace(s)
	if len(s) > limit {
		s = s[:limit] + "..."
	}
	return s
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Run runs cmd in a new session and returns its combined output. A
// non-zero exit is an *ExitError carrying the trimmed output. The command
// is bounded by ctx and the client's timeout.
func (c *Client) Run(ctx context.Context, cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	s, err := c.Session(ctx)
	if err != nil {
		return "", err
	}
	defer s.Close()
	var out lockedBuffer
	s.Stdout, s.Stderr = &out, &out
	if err := s.Start(cmd); err != nil {
		return "", fmt.Errorf("%q: start: %w", cmd, err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = s.Signal(ssh.SIGKILL)
		s.Close()
		return out.String(), fmt.Errorf("%q: %w", cmd, ctx.Err())
	}
	text := out.String()
	if err != nil {
		var ee *ssh.ExitError
		if errors.As(err, &ee) {
			return text, &ExitError{Cmd: cmd, Output: strings.TrimSpace(text), Status: ee.ExitStatus(), Signal: ee.Signal()}
		}
		var missing *ssh.ExitMissingError
		if errors.As(err, &missing) {
			return text, &ExitError{Cmd: cmd, Output: strings.TrimSpace(text), Status: -1}
		}
		if errors.Is(err, io.EOF) {
			return text, fmt.Errorf("%q: connection lost: %w", cmd, err)
		}
		return text, fmt.Errorf("%q: %w", cmd, err)
	}
	return text, nil
}

// Close closes the connection.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.conn != nil {
		err := c.conn.Close()
		c.conn = nil
		if err != nil && !errors.Is(err, net.ErrClosed) {
			return err
		}
	}
	return nil
}

// Result is the outcome of one command of a batch.
type Result struct {
	Cmd    string
	Output string // combined output (stderr is merged into stdout on the device)
	Status int    // exit status
	Ran    bool   // false for commands after a failure when stopping on errors
}

// Err returns the command's failure as an *ExitError, or nil.
func (r Result) Err() error {
	if !r.Ran {
		return fmt.Errorf("%q: not run (an earlier command failed)", r.Cmd)
	}
	if r.Status != 0 {
		return &ExitError{Cmd: r.Cmd, Output: strings.TrimSpace(r.Output), Status: r.Status}
	}
	return nil
}

// Shell is a device's shell, however it is reached: an SSH connection
// (Client) or docker exec into the device's container
// (drivers/dockerx); drivers/remote.Dial picks one from drivers.Config.
type Shell interface {
	// Run runs cmd and returns its combined output; a non-zero exit is an
	// *ExitError carrying the trimmed output.
	Run(ctx context.Context, cmd string) (string, error)
	// RunBatch runs cmds one after the other in one shell (see
	// Client.RunBatch).
	RunBatch(ctx context.Context, cmds []string, stopOnError bool) ([]Result, error)
	// WriteFile writes size bytes from r to path on the device, with
	// mode, atomically (a temporary file renamed into place). The data
	// never appears on a command line.
	WriteFile(ctx context.Context, path string, r io.Reader, size int64, mode os.FileMode) error
	// Addr names where the shell is (host:port, or docker:CONTAINER).
	Addr() string
	Close() error
}

var _ Shell = (*Client)(nil)

// BatchScript is the shell script RunBatch runs for cmds, and the marker
// SplitBatch cuts its output at.
func BatchScript(cmds []string, stopOnError bool) (script, marker string) {
	marker = "@@fb-" + randomToken()
	var b strings.Builder
	b.WriteString("exec 2>&1\n")
	for _, cmd := range cmds {
		fmt.Fprintf(&b, "( %s\n) </dev/null; rc=$?; printf '\\n%s %%d\\n' $rc\n", cmd, marker)
		if stopOnError {
			b.WriteString("[ $rc -eq 0 ] || exit 0\n")
		}
	}
	return b.String(), marker
}

// SplitBatch cuts the output of a BatchScript into one result per
// command.
func SplitBatch(out, marker string, cmds []string) ([]Result, error) {
	return splitBatch(out, marker, cmds)
}

// WriteFile writes a file over SFTP (see Shell).
func (c *Client) WriteFile(ctx context.Context, path string, r io.Reader, size int64, mode os.FileMode) error {
	conn, err := c.SSH(ctx)
	if err != nil {
		return err
	}
	sc, err := sftp.NewClient(conn, sftp.UseConcurrentWrites(true))
	if err != nil {
		return fmt.Errorf("sftp: %w (is the sftp subsystem enabled in sshd?)", err)
	}
	defer sc.Close()
	tmp := fmt.Sprintf("%s.part-%d", path, os.Getpid())
	f, err := sc.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return fmt.Errorf("sftp create %s: %w", tmp, err)
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		_ = sc.Remove(tmp)
		return fmt.Errorf("sftp chmod %s: %w", tmp, err)
	}
	n, err := f.ReadFrom(r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil || (size >= 0 && n != size) {
		_ = sc.Remove(tmp)
		return fmt.Errorf("sftp copy to %s: %d of %d bytes: %v", tmp, n, size, err)
	}
	if err := sc.PosixRename(tmp, path); err != nil {
		_ = sc.Remove(tmp)
		return fmt.Errorf("sftp rename %s: %w", path, err)
	}
	return nil
}

// RunBatch runs cmds one after the other in one session (each in its own
// subshell, stdin from /dev/null), saving the session set-up of each (a
// login shell reads its startup files for every session). It returns one
// result per command. With stopOnError the commands after the first
// failing one are not run. The error is for the session as a whole (the
// connection, the deadline, an unreadable reply); failures of single
// commands are in their results.
func (c *Client) RunBatch(ctx context.Context, cmds []string, stopOnError bool) ([]Result, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	script, marker := BatchScript(cmds, stopOnError)
	out, err := c.Run(ctx, script)
	if err != nil {
		return nil, fmt.Errorf("batch of %d commands (first %q): %w", len(cmds), cmds[0], err)
	}
	res, err := splitBatch(out, marker, cmds)
	if err != nil {
		return nil, fmt.Errorf("batch of %d commands (first %q): %w", len(cmds), cmds[0], err)
	}
	return res, nil
}

// splitBatch cuts a batch's output at the markers.
func splitBatch(out, marker string, cmds []string) ([]Result, error) {
	res := make([]Result, len(cmds))
	rest := out
	stopped := false
	for i, cmd := range cmds {
		res[i].Cmd = cmd
		if stopped {
			continue
		}
		j := strings.Index(rest, "\n"+marker+" ")
		if j < 0 {
			return nil, fmt.Errorf("output ends before command %d (%q) finished: %q", i+1, cmd, Excerpt(rest, 200))
		}
		res[i].Output = rest[:j]
		rest = rest[j+len(marker)+2:]
		k := strings.IndexByte(rest, '\n')
		if k < 0 {
			return nil, fmt.Errorf("truncated status of command %d (%q)", i+1, cmd)
		}
		st, err := strconv.Atoi(strings.TrimSpace(rest[:k]))
		if err != nil {
			return nil, fmt.Errorf("bad status of command %d (%q): %q", i+1, cmd, rest[:k])
		}
		rest = rest[k+1:]
		res[i].Ran, res[i].Status = true, st
		if st != 0 && !strings.Contains(rest, "\n"+marker+" ") && !strings.HasPrefix(rest, marker) {
			stopped = true
		}
	}
	return res, nil
}

func randomToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}
