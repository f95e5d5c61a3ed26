package fleet

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/agents/control"
	"github.com/fabricbench/fabricbench/workloads"
)

// fakeAgent completes each flow after size microseconds.
type fakeAgent struct {
	mu      sync.Mutex
	events  []control.Event
	notify  chan struct{}
	dead    bool
	started map[uint32]time.Time
	dieAt   int // die when asked to start this many flows (0: never)
	starts  int
}

func newFake() *fakeAgent {
	return &fakeAgent{notify: make(chan struct{}), started: map[uint32]time.Time{}}
}

func (a *fakeAgent) Start(ctx context.Context, flows []control.Flow) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.dead {
		return errors.New("connection refused")
	}
	for _, f := range flows {
		a.starts++
		if a.dieAt > 0 && a.starts >= a.dieAt {
			a.dead = true
			close(a.notify)
			return nil
		}
		a.started[f.ID] = time.Now()
		go func() {
			time.Sleep(time.Duration(f.Size) * time.Microsecond)
			a.mu.Lock()
			defer a.mu.Unlock()
			if a.dead {
				return
			}
			a.events = append(a.events, control.Event{Seq: len(a.events), Flow: f.ID, FCTNs: f.Size * 1000, Sent: 1})
			close(a.notify)
			a.notify = make(chan struct{})
		}()
	}
	return nil
}

func (a *fakeAgent) Events(ctx context.Context, from int, fn func(control.Event)) error {
	for {
		a.mu.Lock()
		evs := append([]control.Event(nil), a.events[min(from, len(a.events)):]...)
		ch, dead := a.notify, a.dead
		a.mu.Unlock()
		if dead {
			return errors.New("connection reset by peer")
		}
		for _, e := range evs {
			fn(e)
		}
		from += len(evs)
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (a *fakeAgent) Health(ctx context.Context) (control.Health, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.dead {
		return control.Health{}, errors.New("connection refused")
	}
	return control.Health{}, nil
}

func hostsOf(agents ...*fakeAgent) []Host {
	var hs []Host
	for i, a := range agents {
		hs = append(hs, Host{Name: "host" + string(rune('0'+i)), Agent: a})
	}
	return hs
}

func opts() Options {
	return Options{Flow: func(i int, fl workloads.Flow) control.Flow {
		return control.Flow{ID: uint32(i), Size: fl.Size}
	}, Stall: 5 * time.Second}
}

func TestDependenciesAndGroups(t *testing.T) {
	a, b, c := newFake(), newFake(), newFake()
	ms := int64(1e9) // 1 ms in ps
	m := &workloads.Matrix{Hosts: 3, Flows: []workloads.Flow{
		{ID: 0, Src: 0, Dst: 1, Size: 20000, After: -1, Group: 1},               // 20 ms
		{ID: 1, Src: 1, Dst: 2, Size: 5000, After: -1, Group: 1},                // 5 ms
		{ID: 2, Src: 2, Dst: 0, Size: 1000, After: 1, Start: 3 * ms},            // after flow 1 + 3 ms
		{ID: 3, Src: 0, Dst: 2, Size: 1000, After: -1, AfterGroup: 1, Group: 2}, // after group 1
		{ID: 4, Src: 1, Dst: 0, Size: 1000, After: -1, Start: 2 * ms},
	}}
	res, err := Run(context.Background(), hostsOf(a, b, c), m, opts())
	if err != nil {
		t.Fatal(err)
	}
	f := res.Flows
	for i, o := range f {
		if o.FCT < 0 || o.Error != "" {
			t.Fatalf("flow %d: %+v", i, o)
		}
	}
	if f[2].Start < f[1].Start+5*time.Millisecond+3*time.Millisecond {
		t.Errorf("flow 2 started at %v, before flow 1 (%v) + 5 ms + 3 ms", f[2].Start, f[1].Start)
	}
	if f[3].Start < f[0].Start+20*time.Millisecond {
		t.Errorf("flow 3 started at %v, before group 1 finished (%v + 20 ms)", f[3].Start, f[0].Start)
	}
	// Flow 4 depends on nothing: it starts at 2 ms, not after group 1's
	// 20 ms flow. Judged against that flow's own end rather than a wall
	// clock bound, so that a loaded runner (16.75 ms seen) cannot fail it.
	if f[4].Start < 2*time.Millisecond || f[4].Start >= f[0].Start+f[0].FCT {
		t.Errorf("flow 4 started at %v, want 2 ms and before group 1 ended (%v)", f[4].Start, f[0].Start+f[0].FCT)
	}
	if len(res.Failures) != 0 {
		t.Errorf("failures: %v", res.Failures)
	}
}

func TestDeadAgentKeepsPartialResults(t *testing.T) {
	a, b, c := newFake(), newFake(), newFake()
	b.dieAt = 2 // host1 dies when its second flow starts
	m := &workloads.Matrix{Hosts: 3}
	for i := 0; i < 9; i++ {
		start := int64(i) * 5e9 // 5 ms apart
		if i >= 6 {
			start = 2e12 + int64(i)*5e9 // after the death was detected
		}
		m.Flows = append(m.Flows, workloads.Flow{ID: i, Src: i % 3, Dst: (i + 1) % 3, Size: 2000, After: -1, Start: start})
	}
	o := opts()
	o.HealthTries = 2
	res, err := Run(context.Background(), hostsOf(a, b, c), m, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || !strings.Contains(res.Failures[0], "host1") {
		t.Fatalf("failures %q: want one naming host1", res.Failures)
	}
	ok, failed := 0, 0
	for _, fl := range res.Flows {
		if fl.FCT >= 0 {
			ok++
		} else {
			failed++
			if fl.Error == "" {
				t.Errorf("failed flow without a reason: %+v", fl)
			}
		}
	}
	if ok < 4 || failed != 3 {
		t.Fatalf("%d completed, %d failed: want partial results (%+v)", ok, failed, res.Flows)
	}
	for _, i := range []int{6, 7} { // after the crash, from and to host1
		if !strings.Contains(res.Flows[i].Error, "host1 is gone") {
			t.Errorf("flow %d: %+v, want not started because host1 is gone", i, res.Flows[i])
		}
	}
	// Flows between the live hosts still completed.
	if res.Flows[0].FCT < 0 {
		t.Errorf("flow 0 (host0 -> host1, before the crash) should have completed: %+v", res.Flows[0])
	}
}

func TestInterrupt(t *testing.T) {
	a, b := newFake(), newFake()
	m := &workloads.Matrix{Hosts: 2, Flows: []workloads.Flow{
		{ID: 0, Src: 0, Dst: 1, Size: 1000, After: -1},
		{ID: 1, Src: 1, Dst: 0, Size: 1000, After: -1, Start: 10e12}, // 10 s
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := Run(ctx, hostsOf(a, b), m, opts())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Flows[0].FCT < 0 || res.Flows[1].Start >= 0 {
		t.Fatalf("interrupted run: %+v", res)
	}
}

func TestStall(t *testing.T) {
	a, b := newFake(), newFake()
	m := &workloads.Matrix{Hosts: 2, Flows: []workloads.Flow{
		{ID: 0, Src: 0, Dst: 1, Size: 10_000_000, After: -1}, // 10 s
	}}
	o := opts()
	o.Stall = 200 * time.Millisecond
	res, err := Run(context.Background(), hostsOf(a, b), m, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Flows[0].FCT >= 0 || len(res.Failures) != 1 || !strings.Contains(res.Failures[0], "stalled") {
		t.Fatalf("stall: %+v", res)
	}
}

// TestEpochOption: with Options.Epoch the run counts from the caller's
// time zero (the one its fault timers use): Result.Epoch is it, and a flow
// released at 0 starts at least as long after it as the caller waited.
func TestEpochOption(t *testing.T) {
	a, b := newFake(), newFake()
	m := &workloads.Matrix{Hosts: 2, Flows: []workloads.Flow{{ID: 0, Src: 0, Dst: 1, Size: 1000, After: -1}}}
	o := opts()
	o.Epoch = time.Now()
	time.Sleep(30 * time.Millisecond) // the caller's set-up between its zero and the run
	res, err := Run(context.Background(), hostsOf(a, b), m, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Epoch.Equal(o.Epoch) {
		t.Errorf("run epoch %v, want the caller's %v", res.Epoch, o.Epoch)
	}
	if s := res.Flows[0].Start; s < 30*time.Millisecond {
		t.Errorf("flow 0 started %v after the caller's zero, want >= 30 ms", s)
	}
}

// statingAgent is a fake agent that reports a sending state.
type statingAgent struct {
	*fakeAgent
	st control.State
}

func (a statingAgent) State(ctx context.Context) (control.State, error) { return a.st, nil }

// TestStallNamesTheSenderState: an abandoned flow's error says what its
// sender was doing, from its agent's state; a stuck send loop is named.
func TestStallNamesTheSenderState(t *testing.T) {
	m := &workloads.Matrix{Hosts: 3, Flows: []workloads.Flow{
		{ID: 0, Src: 0, Dst: 1, Size: 10_000_000, After: -1},
		{ID: 1, Src: 2, Dst: 1, Size: 10_000_000, After: -1},
	}}
	a := statingAgent{newFake(), control.State{Answered: true, LoopIdleMs: 0.2, Flows: []control.FlowState{
		{ID: 0, Packets: 6144, Acked: 4120, Unsent: 1000, InflightBytes: 0, CwndBytes: 12000, TimerInMs: -1, SinceAckMs: 58200, Sent: 5144, Retx: 3, Timeouts: 2},
	}}}
	c := statingAgent{newFake(), control.State{Answered: false, LoopIdleMs: 61000, WriteBlockedMs: 60900}}
	o := opts()
	o.Stall = 200 * time.Millisecond
	res, err := Run(context.Background(), []Host{{Name: "host0", Agent: a}, {Name: "host1", Agent: newFake()}, {Name: "host2", Agent: c}}, m, o)
	if err != nil {
		t.Fatal(err)
	}
	want0 := "sender on host0: 4120 of 6144 packets acknowledged, 1000 never sent, 0 queued for retransmission, 0 B in flight of a 12000 B window, out of the send round robin, no retransmission timeout armed, last ACK 58.2 s ago; 5144 sent, 3 retransmitted, 2 timeouts"
	if e := res.Flows[0].Error; !strings.Contains(e, want0) || !strings.HasPrefix(e, "no completion within the stall limit") {
		t.Errorf("flow 0 error %q, want it to contain %q", e, want0)
	}
	if e := res.Flows[1].Error; !strings.Contains(e, "sender on host2: its send loop has waited 60.9 s for a socket to take a batch") {
		t.Errorf("flow 1 error %q, want the blocked send loop named", e)
	}
}
