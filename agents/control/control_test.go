package control

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

type fakeAgent struct {
	mu      sync.Mutex
	started []Flow
}

func (f *fakeAgent) Health() Health { return Health{Host: "host0", RunID: 7} }
func (f *fakeAgent) Stats() Stats   { return Stats{"data_sent": 42} }
func (f *fakeAgent) Start(flows []Flow) error {
	for _, fl := range flows {
		if fl.Size < 0 {
			return fmt.Errorf("flow %d: negative size", fl.ID)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, flows...)
	return nil
}

const token = "0123456789abcdef0123"

func newServer(t *testing.T) (*Server, *fakeAgent) {
	t.Helper()
	a := &fakeAgent{}
	s, err := NewServer("127.0.0.1:0", token, a)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s, a
}

func TestAuthentication(t *testing.T) {
	s, a := newServer(t)
	ctx := context.Background()
	for _, bad := range []string{"", "wrong-token-wrong-token", token + "x"} {
		c := NewClient(s.Addr(), bad)
		if _, err := c.Health(ctx); !IsUnauthorized(err) {
			t.Errorf("token %q: want 401, got %v", bad, err)
		}
		if err := c.Start(ctx, []Flow{{ID: 1, Size: 10}}); !IsUnauthorized(err) {
			t.Errorf("token %q: start: want 401, got %v", bad, err)
		}
		if err := c.Events(ctx, 0, func(Event) {}); !IsUnauthorized(err) {
			t.Errorf("token %q: events: want 401, got %v", bad, err)
		}
	}
	if len(a.started) != 0 {
		t.Fatalf("unauthenticated requests started flows: %v", a.started)
	}
	if _, err := NewServer("127.0.0.1:0", "short", a); err == nil {
		t.Fatal("a short token was accepted")
	}
}

func TestStartHealthStats(t *testing.T) {
	s, a := newServer(t)
	c := NewClient(s.Addr(), token)
	ctx := context.Background()
	h, err := c.Health(ctx)
	if err != nil || h.Host != "host0" || h.RunID != 7 {
		t.Fatalf("health %+v, %v", h, err)
	}
	if err := c.Start(ctx, []Flow{{ID: 1, Dst: "198.18.0.3:7500", Size: 100, Mark: 0x101}}); err != nil {
		t.Fatal(err)
	}
	if len(a.started) != 1 || a.started[0].Mark != 0x101 || a.started[0].Dst != "198.18.0.3:7500" {
		t.Fatalf("started %+v", a.started)
	}
	err = c.Start(ctx, []Flow{{ID: 2, Size: -1}})
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusUnprocessableEntity {
		t.Fatalf("bad flow: want 422, got %v", err)
	}
	st, err := c.Stats(ctx)
	if err != nil || st["data_sent"] != 42 {
		t.Fatalf("stats %v, %v", st, err)
	}
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.ShutdownRequested():
	case <-time.After(time.Second):
		t.Fatal("shutdown not signalled")
	}
}

func TestEventStream(t *testing.T) {
	s, _ := newServer(t)
	c := NewClient(s.Addr(), token)
	s.Publish(Event{Flow: 1, FCTNs: 10})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan Event, 10)
	done := make(chan error, 1)
	go func() { done <- c.Events(ctx, 0, func(e Event) { got <- e }) }()
	s.Publish(Event{Flow: 2, FCTNs: 20})
	for want := 0; want < 2; want++ {
		select {
		case e := <-got:
			if e.Seq != want || int(e.Flow) != want+1 {
				t.Fatalf("event %d: %+v", want, e)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("event %d did not arrive", want)
		}
	}
	cancel()
	<-done
	// Resuming from a sequence number skips what was seen.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	var seen []Event
	go func() {
		time.Sleep(100 * time.Millisecond)
		s.Publish(Event{Flow: 3})
		time.Sleep(100 * time.Millisecond)
		_ = s.Close(context.Background())
	}()
	err := c.Events(ctx2, 1, func(e Event) { seen = append(seen, e) })
	if err == nil {
		t.Fatal("a closed stream must report its end")
	}
	if len(seen) != 2 || seen[0].Flow != 2 || seen[1].Flow != 3 {
		t.Fatalf("resumed stream: %+v", seen)
	}
}

// statingAgent reports a sending state; the server bounds its wait.
type statingAgent struct {
	fakeAgent
	deadline bool
}

func (a *statingAgent) State(ctx context.Context) State {
	_, a.deadline = ctx.Deadline()
	return State{Answered: true, LoopIdleMs: 0.5, Flows: []FlowState{{ID: 3, Packets: 10, Acked: 4, TimerInMs: -1}}}
}

// TestState: GET /v1/state needs the token, returns the agent's state and
// gives it a deadline; an agent that cannot report says so (501).
func TestState(t *testing.T) {
	a := &statingAgent{}
	s, err := NewServer("127.0.0.1:0", token, a)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	ctx := context.Background()
	if _, err := NewClient(s.Addr(), "wrong-token-wrong-token").State(ctx); !IsUnauthorized(err) {
		t.Fatalf("bad token: want 401, got %v", err)
	}
	st, err := NewClient(s.Addr(), token).State(ctx)
	if err != nil || !st.Answered || len(st.Flows) != 1 || st.Flows[0].ID != 3 || st.Flows[0].Acked != 4 || st.Flows[0].TimerInMs != -1 {
		t.Fatalf("state %+v, %v", st, err)
	}
	if !a.deadline {
		t.Error("the agent was asked without a deadline")
	}
	plain, _ := newServer(t)
	_, err = NewClient(plain.Addr(), token).State(ctx)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusNotImplemented {
		t.Fatalf("an agent without state: want 501, got %v", err)
	}
}
