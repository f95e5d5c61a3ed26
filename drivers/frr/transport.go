package frr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/scrapli/scrapligo/transport"
	"golang.org/x/crypto/ssh"

	"github.com/fabricbench/fabricbench/drivers/sshx"
)

// sessionTransport is a scrapligo transport that runs the interactive
// shell on a session of an existing, host-key-verified SSH connection
// (the linux driver's). It is used for ssh-agent authentication, which
// scrapligo's standard transport does not do.
type sessionTransport struct {
	ctx    context.Context
	client *sshx.Client
	sess   *ssh.Session
	w      io.WriteCloser
	r      io.Reader
	alive  atomic.Bool
}

var _ transport.Implementation = (*sessionTransport)(nil)

// Open starts a shell with a pty of the size scrapligo asks for.
func (t *sessionTransport) Open(a *transport.Args) error {
	s, err := t.client.Session(t.ctx)
	if err != nil {
		return err
	}
	modes := ssh.TerminalModes{ssh.ECHO: 1, ssh.TTY_OP_ISPEED: 115200, ssh.TTY_OP_OSPEED: 115200}
	if err := s.RequestPty("xterm", a.TermHeight, a.TermWidth, modes); err != nil {
		s.Close()
		return fmt.Errorf("pty: %w", err)
	}
	w, err := s.StdinPipe()
	if err != nil {
		s.Close()
		return err
	}
	r, err := s.StdoutPipe()
	if err != nil {
		s.Close()
		return err
	}
	if err := s.Shell(); err != nil {
		s.Close()
		return fmt.Errorf("shell: %w", err)
	}
	t.sess, t.w, t.r = s, w, r
	t.alive.Store(true)
	return nil
}

// Close ends the session (not the connection, which the linux driver owns).
func (t *sessionTransport) Close() error {
	if !t.alive.Swap(false) {
		return nil
	}
	err := t.sess.Close()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return err
}

// IsAlive reports whether the session is open.
func (t *sessionTransport) IsAlive() bool { return t.alive.Load() }

// Read reads up to n bytes.
func (t *sessionTransport) Read(n int) ([]byte, error) {
	if t.r == nil {
		return nil, io.EOF
	}
	b := make([]byte, n)
	n, err := t.r.Read(b)
	if err != nil {
		return nil, err
	}
	return b[:n], nil
}

// Write writes b.
func (t *sessionTransport) Write(b []byte) error {
	if t.w == nil {
		return io.ErrClosedPipe
	}
	_, err := t.w.Write(b)
	return err
}
