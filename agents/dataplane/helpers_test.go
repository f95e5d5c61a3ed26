package dataplane

import (
	"context"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/agents/transport"
)

var (
	lo4 = netip.MustParseAddr("127.0.0.1")
	lo6 = netip.MustParseAddr("::1")
)

// testParams are transport parameters for loopback tests: the engine fills
// in the header sizes and the entropy space.
func testParams(cc transport.CCKind, lb transport.LBKind) transport.Params {
	p := transport.DefaultParams()
	p.CC, p.LB = cc, lb
	p.HeaderBytes, p.AckBytes, p.Entropies = 0, 0, 0
	p.Trimming = false
	p.Seed = 7
	return p
}

// safeLog forwards engine diagnostics to t until the test ends.
type safeLog struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (l *safeLog) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.t.Logf(format, args...)
	}
}

// freePorts is the free-port helper: Port 0 makes New pick a free block of
// 1+EntropyPorts consecutive ports (race-free, unlike probing then binding).
const freePorts = 0

// newEngine creates an engine on free ports, closed at the end of the test.
func newEngine(t testing.TB, cfg Config) *Engine {
	t.Helper()
	l := &safeLog{t: t}
	if cfg.Logf == nil {
		cfg.Logf = l.logf
	}
	if cfg.Port == 0 {
		cfg.Port = freePorts
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		l.mu.Lock()
		l.done = true
		l.mu.Unlock()
	})
	return e
}

// startEngine creates an engine and runs it until the end of the test.
func startEngine(t testing.TB, cfg Config) *Engine {
	t.Helper()
	e := newEngine(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && err != context.Canceled {
			t.Errorf("Run: %v", err)
		}
	})
	return e
}

// collect waits for n completions of e.
func collect(t testing.TB, e *Engine, n int, timeout time.Duration) []Completion {
	t.Helper()
	var out []Completion
	deadline := time.After(timeout)
	for len(out) < n {
		select {
		case c, ok := <-e.Completions():
			if !ok {
				t.Fatalf("Completions closed after %d of %d", len(out), n)
			}
			out = append(out, c)
		case <-deadline:
			t.Fatalf("%d of %d flows completed within %v; stats %+v", len(out), n, timeout, e.Stats())
		}
	}
	return out
}

func receivers(t testing.TB, e *Engine) map[uint32]ReceiverInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rs, err := e.Receivers(ctx)
	if err != nil {
		t.Fatalf("Receivers: %v", err)
	}
	m := map[uint32]ReceiverInfo{}
	for _, r := range rs {
		if _, dup := m[r.Flow]; dup {
			t.Fatalf("two receivers for flow %d", r.Flow)
		}
		m[r.Flow] = r
	}
	return m
}

// waitStats waits until ok accepts e's counters (the engine counts an ACK
// after writing it, so a peer can see the ACK first) and returns them.
func waitStats(t testing.TB, e *Engine, ok func(Stats) bool) Stats {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		st := e.Stats()
		if ok(st) || time.Now().After(deadline) {
			return st
		}
		time.Sleep(time.Millisecond)
	}
}

// settle waits until the counters of every engine stop changing: packets
// still in flight when the last flow completed (duplicates) are counted.
func settle(t testing.TB, engines ...*Engine) {
	t.Helper()
	snap := func() []Stats {
		var s []Stats
		for _, e := range engines {
			s = append(s, e.Stats())
		}
		return s
	}
	prev := snap()
	for range 100 {
		time.Sleep(20 * time.Millisecond)
		cur := snap()
		if slices.Equal(prev, cur) {
			return
		}
		prev = cur
	}
	t.Fatalf("counters still changing after 2s: %+v", prev)
}
