// Package fleet runs a traffic matrix on real transport agents: it starts
// each flow on its source host's agent when the flow's start time or
// dependency is due, follows every agent's completion stream, and keeps
// what finished when an agent dies (the flows it still owed are reported as
// failed, naming the host).
//
// Scheduling follows workloads.Flow exactly as the simulator does: a flow
// with After >= 0 starts Start after that flow completes, one with
// AfterGroup > 0 starts Start after the last flow of that group completes,
// any other at Start after time 0. A failed flow releases its dependents
// too, so one dead host does not stall the rest of the run.
package fleet

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fabricbench/fabricbench/agents/control"
	"github.com/fabricbench/fabricbench/workloads"
)

// Agent is the control API of one agent (control.Client implements it).
type Agent interface {
	Start(ctx context.Context, flows []control.Flow) error
	Events(ctx context.Context, from int, fn func(control.Event)) error
	Health(ctx context.Context) (control.Health, error)
}

// Host is the agent of one host.
type Host struct {
	Name  string
	Agent Agent
}

// Options tune Run.
type Options struct {
	// Flow builds the control request of a flow (destination address, base
	// RTT, path class); its ID must be the flow's index in the matrix.
	Flow func(i int, fl workloads.Flow) control.Flow
	// Stall ends the run when no flow completes for this long while flows
	// are outstanding (default 60s); the outstanding flows fail.
	Stall time.Duration
	// Progress is called after every completion (may be nil).
	Progress func(done, total int)
	// HealthTries is how many failed health checks (500 ms apart) declare
	// an agent dead after its event stream broke (default 4).
	HealthTries int
	Logf        func(format string, args ...any)
	// Epoch, when set, is the run's time zero (flows' Start offsets count
	// from it), so that a caller timing other events (faults) from its own
	// clock reading shares the run's zero; default: when Run starts.
	Epoch time.Time
}

// Outcome is one flow's result.
type Outcome struct {
	Start    time.Duration // dispatch time after the run epoch; -1: never started
	FCT      time.Duration // -1: did not complete
	Sent     uint64
	Retx     uint64
	Nacks    uint64
	Timeouts uint64
	ECNAcks  uint64
	Spurious uint64 // retransmissions proven unneeded (the original was acknowledged)
	Error    string
}

// Result is what Run returns.
type Result struct {
	Epoch       time.Time
	End         time.Duration
	Flows       []Outcome // in matrix order
	Failures    []string  // one line per failed host or stall, naming it
	Interrupted bool
}

// Run runs m on hosts (indexed by host number) and returns when every flow
// has completed or failed, or ctx is done (Interrupted).
func Run(ctx context.Context, hosts []Host, m *workloads.Matrix, opt Options) (*Result, error) {
	if opt.Flow == nil {
		return nil, errors.New("fleet: no Flow builder")
	}
	if opt.Stall <= 0 {
		opt.Stall = 60 * time.Second
	}
	if opt.HealthTries <= 0 {
		opt.HealthTries = 4
	}
	if opt.Logf == nil {
		opt.Logf = func(string, ...any) {}
	}
	for _, fl := range m.Flows {
		if fl.Src < 0 || fl.Src >= len(hosts) || fl.Dst < 0 || fl.Dst >= len(hosts) {
			return nil, fmt.Errorf("fleet: flow %d: host out of range (have %d agents)", fl.ID, len(hosts))
		}
	}
	r := newRun(hosts, m, opt)
	return r.run(ctx)
}

type event struct {
	host int
	ev   control.Event
	dead error // the host's agent is gone
}

type run struct {
	hosts []Host
	m     *workloads.Matrix
	opt   Options
	res   *Result

	state      []uint8 // 0 waiting, 1 queued, 2 started, 3 finished
	dependents [][]int // flow -> flows with After == flow
	groupLeft  map[int]int
	groupWait  map[int][]int
	dead       []bool
	done       int
	pending    releaseHeap
	events     chan event
	lastChange time.Time
}

const (
	stWaiting uint8 = iota
	stQueued
	stStarted
	stFinished
)

func newRun(hosts []Host, m *workloads.Matrix, opt Options) *run {
	n := len(m.Flows)
	r := &run{hosts: hosts, m: m, opt: opt, state: make([]uint8, n), dependents: make([][]int, n),
		groupLeft: map[int]int{}, groupWait: map[int][]int{}, dead: make([]bool, len(hosts)),
		events: make(chan event, 1024)}
	r.res = &Result{Flows: make([]Outcome, n)}
	for i := range r.res.Flows {
		r.res.Flows[i] = Outcome{Start: -1, FCT: -1}
	}
	for i, fl := range m.Flows {
		if fl.Group > 0 {
			r.groupLeft[fl.Group]++
		}
		switch {
		case fl.After >= 0:
			r.dependents[fl.After] = append(r.dependents[fl.After], i)
		case fl.AfterGroup > 0:
			r.groupWait[fl.AfterGroup] = append(r.groupWait[fl.AfterGroup], i)
		}
	}
	return r
}

func (r *run) now() time.Duration { return time.Since(r.res.Epoch) }

func (r *run) release(i int, at time.Duration) {
	if r.state[i] != stWaiting {
		return
	}
	r.state[i] = stQueued
	heap.Push(&r.pending, release{at: at, flow: i})
}

func (r *run) run(ctx context.Context) (*Result, error) {
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	r.res.Epoch = time.Now()
	if !r.opt.Epoch.IsZero() {
		r.res.Epoch = r.opt.Epoch
	}
	r.lastChange = time.Now()
	var wg sync.WaitGroup
	for h := range r.hosts {
		wg.Add(1)
		go func() { defer wg.Done(); r.follow(sctx, h) }()
	}
	defer wg.Wait()
	defer stop()
	for i, fl := range r.m.Flows {
		if fl.After < 0 && fl.AfterGroup <= 0 {
			r.release(i, time.Duration(fl.Start/1000)) // ps -> ns
		}
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for r.done < len(r.m.Flows) {
		r.dispatchDue(ctx)
		if r.done == len(r.m.Flows) {
			break
		}
		wait := r.opt.Stall - time.Since(r.lastChange)
		if r.pending.Len() > 0 {
			if d := r.pending[0].at - r.now(); d < wait {
				wait = d
			}
		}
		if wait < 0 {
			wait = 0
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			r.res.Interrupted = true
			r.res.End = r.now()
			return r.res, nil
		case e := <-r.events:
			r.handle(e)
		case <-timer.C:
			if time.Since(r.lastChange) >= r.opt.Stall && r.outstanding() > 0 {
				r.stall()
			}
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
	r.res.End = r.now()
	return r.res, nil
}

// outstanding counts started flows that have not finished.
func (r *run) outstanding() int {
	n := 0
	for _, s := range r.state {
		if s == stStarted {
			n++
		}
	}
	return n
}

func (r *run) stall() {
	var ids []string
	var stalled []int
	for i, s := range r.state {
		if s == stStarted {
			stalled = append(stalled, i)
		}
	}
	why := r.senderStates(stalled)
	for _, i := range stalled {
		ids = append(ids, fmt.Sprint(i))
		msg := "no completion within the stall limit " + r.opt.Stall.String()
		if w := why[i]; w != "" {
			msg += "; " + w
		}
		r.finish(i, msg)
	}
	r.res.Failures = append(r.res.Failures, fmt.Sprintf("stalled: no flow completed for %v; %d flows abandoned (%s)",
		r.opt.Stall, len(ids), abbreviate(ids, 10)))
}

// StateReader is an Agent that reports its sending state
// (control.Client does): a stall then says, per abandoned flow, what its
// sender was doing.
type StateReader interface {
	State(ctx context.Context) (control.State, error)
}

// stateWait bounds the state requests of a stall report.
const stateWait = 5 * time.Second

// senderStates asks the agents of the flows' sources (in parallel, within
// stateWait) for their sending state and describes each flow's sender.
func (r *run) senderStates(flows []int) map[int]string {
	byHost := map[int][]int{}
	for _, i := range flows {
		byHost[r.m.Flows[i].Src] = append(byHost[r.m.Flows[i].Src], i)
	}
	type answer struct {
		host int
		st   control.State
		err  error
	}
	ctx, cancel := context.WithTimeout(context.Background(), stateWait)
	defer cancel()
	ch := make(chan answer, len(byHost))
	asked := 0
	for h := range byHost {
		sr, ok := r.hosts[h].Agent.(StateReader)
		if !ok || r.dead[h] {
			continue
		}
		asked++
		go func() {
			st, err := sr.State(ctx)
			ch <- answer{h, st, err}
		}()
	}
	out := map[int]string{}
	for range asked {
		a := <-ch
		name := r.hosts[a.host].Name
		for _, i := range byHost[a.host] {
			out[i] = "sender on " + name + ": " + describeSender(a.st, a.err, r.opt.Flow(i, r.m.Flows[i]).ID)
		}
	}
	return out
}

// describeSender says what a stalled flow's sender was doing.
func describeSender(st control.State, err error, id uint32) string {
	if err != nil {
		return "its agent did not report its state (" + err.Error() + ")"
	}
	loop := ""
	if st.WriteBlockedMs > 0 {
		loop = fmt.Sprintf("its send loop has waited %.1f s for a socket to take a batch", st.WriteBlockedMs/1e3)
	}
	if !st.Answered {
		if loop == "" {
			loop = fmt.Sprintf("its send loop did not answer (it last went round %.1f s ago)", st.LoopIdleMs/1e3)
		}
		return loop
	}
	for _, f := range st.Flows {
		if f.ID != id {
			continue
		}
		timer := "no retransmission timeout armed"
		if f.TimerInMs >= 0 {
			timer = fmt.Sprintf("retransmission timeout due in %.1f ms", f.TimerInMs)
		}
		ack := "no ACK yet"
		if f.SinceAckMs >= 0 {
			ack = fmt.Sprintf("last ACK %.1f s ago", f.SinceAckMs/1e3)
		}
		rr := "out of the send round robin"
		if f.Active {
			rr = "in the send round robin"
		}
		d := fmt.Sprintf("%d of %d packets acknowledged, %d never sent, %d queued for retransmission, %d B in flight of a %d B window, %s, %s, %s; %d sent, %d retransmitted, %d timeouts",
			f.Acked, f.Packets, f.Unsent, f.QueuedRetx, f.InflightBytes, f.CwndBytes, rr, timer, ack, f.Sent, f.Retx, f.Timeouts)
		if loop != "" {
			d = loop + "; " + d
		}
		return d
	}
	if loop != "" {
		return loop
	}
	return "the flow is not running there (finished, or never started)"
}

func abbreviate(s []string, n int) string {
	if len(s) <= n {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:n], ", ") + fmt.Sprintf(", ... (%d more)", len(s)-n)
}

// dispatchDue starts every flow whose time has come, one request per
// source host.
func (r *run) dispatchDue(ctx context.Context) {
	now := r.now()
	batch := map[int][]int{}
	for r.pending.Len() > 0 && r.pending[0].at <= now {
		rel := heap.Pop(&r.pending).(release)
		fl := r.m.Flows[rel.flow]
		switch {
		case r.dead[fl.Src]:
			r.finish(rel.flow, "not started: the agent on "+r.hosts[fl.Src].Name+" is gone")
		case r.dead[fl.Dst]:
			r.finish(rel.flow, "not started: the agent on "+r.hosts[fl.Dst].Name+" is gone")
		default:
			batch[fl.Src] = append(batch[fl.Src], rel.flow)
		}
	}
	if len(batch) == 0 {
		return
	}
	srcs := make([]int, 0, len(batch))
	for h := range batch {
		srcs = append(srcs, h)
	}
	sort.Ints(srcs)
	type reply struct {
		host int
		err  error
	}
	replies := make(chan reply, len(srcs))
	for _, h := range srcs {
		req := make([]control.Flow, len(batch[h]))
		for k, i := range batch[h] {
			req[k] = r.opt.Flow(i, r.m.Flows[i])
			r.state[i] = stStarted
			r.res.Flows[i].Start = now
		}
		go func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			replies <- reply{h, r.hosts[h].Agent.Start(cctx, req)}
		}()
	}
	for range srcs {
		rp := <-replies
		if rp.err != nil {
			r.opt.Logf("fleet: start flows on %s: %v", r.hosts[rp.host].Name, rp.err)
			for _, i := range batch[rp.host] {
				r.finish(i, fmt.Sprintf("start on %s failed: %v", r.hosts[rp.host].Name, rp.err))
			}
		}
	}
}

// follow streams host h's completions, reconnecting while the agent
// answers health checks, and reports the agent dead when it stops.
func (r *run) follow(ctx context.Context, h int) {
	next := 0
	for ctx.Err() == nil {
		err := r.hosts[h].Agent.Events(ctx, next, func(e control.Event) {
			next = e.Seq + 1
			select {
			case r.events <- event{host: h, ev: e}:
			case <-ctx.Done():
			}
		})
		if ctx.Err() != nil {
			return
		}
		alive := false
		var herr error
		for try := 0; try < r.opt.HealthTries && ctx.Err() == nil; try++ {
			hc, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, herr = r.hosts[h].Agent.Health(hc)
			cancel()
			if herr == nil {
				alive = true
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
		if !alive {
			select {
			case r.events <- event{host: h, dead: fmt.Errorf("event stream: %v; health: %v", err, herr)}:
			case <-ctx.Done():
			}
			return
		}
	}
}

func (r *run) handle(e event) {
	if e.dead != nil {
		if r.dead[e.host] {
			return
		}
		r.dead[e.host] = true
		name := r.hosts[e.host].Name
		var lost []string
		for i, fl := range r.m.Flows {
			if r.state[i] == stStarted && (fl.Src == e.host || fl.Dst == e.host) {
				r.finish(i, "the agent on "+name+" died")
				lost = append(lost, fmt.Sprintf("%d (%s->%s)", fl.ID, r.hosts[fl.Src].Name, r.hosts[fl.Dst].Name))
			}
		}
		line := fmt.Sprintf("agent on %s died %v into the run (%v); %d flows in progress lost", name, r.now().Round(time.Millisecond), e.dead, len(lost))
		if len(lost) > 0 {
			line += ": " + abbreviate(lost, 10)
		}
		r.res.Failures = append(r.res.Failures, line)
		return
	}
	i := int(e.ev.Flow)
	if i < 0 || i >= len(r.m.Flows) || r.state[i] != stStarted || r.m.Flows[i].Src != e.host {
		return // not ours (or already failed)
	}
	o := &r.res.Flows[i]
	o.Sent, o.Retx, o.Nacks, o.Timeouts, o.ECNAcks = e.ev.Sent, e.ev.Retx, e.ev.Nacks, e.ev.Timeouts, e.ev.ECNAcks
	o.Spurious = e.ev.Spurious
	if e.ev.Error != "" || e.ev.FCTNs < 0 {
		r.finish(i, e.ev.Error)
		return
	}
	o.FCT = time.Duration(e.ev.FCTNs)
	r.finish(i, "")
}

// finish marks flow i finished (failed when why is set) and releases its
// dependents.
func (r *run) finish(i int, why string) {
	if r.state[i] == stFinished {
		return
	}
	if r.state[i] == stQueued {
		r.pending.remove(i)
	}
	r.state[i] = stFinished
	r.done++
	r.lastChange = time.Now()
	if why != "" {
		r.res.Flows[i].Error = why
		r.res.Flows[i].FCT = -1
	}
	now := r.now()
	for _, d := range r.dependents[i] {
		r.release(d, now+time.Duration(r.m.Flows[d].Start/1000))
	}
	if g := r.m.Flows[i].Group; g > 0 {
		r.groupLeft[g]--
		if r.groupLeft[g] == 0 {
			for _, d := range r.groupWait[g] {
				r.release(d, now+time.Duration(r.m.Flows[d].Start/1000))
			}
		}
	}
	if r.opt.Progress != nil {
		r.opt.Progress(r.done, len(r.m.Flows))
	}
}

type release struct {
	at   time.Duration
	flow int
}

type releaseHeap []release

func (h releaseHeap) Len() int { return len(h) }
func (h releaseHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].flow < h[j].flow
}
func (h releaseHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *releaseHeap) Push(x any)   { *h = append(*h, x.(release)) }
func (h *releaseHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (h *releaseHeap) remove(flow int) {
	for k, rel := range *h {
		if rel.flow == flow {
			heap.Remove(h, k)
			return
		}
	}
}
