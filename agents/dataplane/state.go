package dataplane

import (
	"context"
	"net/netip"
	"sort"
	"time"
)

// State is what a stalled run needs to tell why a flow made no progress:
// whether the sending goroutine still runs, and each sending flow's
// transport state. The harness asks for it when no flow completed for its
// stall limit and reports it with the abandoned flows.
type State struct {
	// LoopIdle is how long ago the sending goroutine last went round its
	// loop; it stays small while the engine runs (the loop blocks only
	// while it has nothing to do, and then LoopIdle grows, but so does
	// every flow's SinceAck).
	LoopIdle time.Duration
	// WriteBlocked is how long the sending goroutine has been waiting for
	// a socket to take its batch (0: it is not in a socket write).
	WriteBlocked time.Duration
	// Answered reports whether the sending goroutine answered in time;
	// Flows is empty when it did not.
	Answered bool
	Flows    []FlowState
}

// FlowState is a sending flow's state.
type FlowState struct {
	ID      uint32
	Dst     netip.AddrPort
	Mark    uint32
	Packets uint32 // in the flow
	Acked   uint32
	Unsent  uint32 // never sent yet
	// QueuedRetx packets wait for retransmission; InflightBytes are on
	// their way (wire bytes), CwndBytes is the window.
	QueuedRetx    int
	InflightBytes int64
	CwndBytes     int64
	// Active reports whether the flow is in the sending round robin (it is
	// taken out while its window, pacing or end allows nothing, until an
	// ACK or a timeout); TimerIn is when its retransmission timeout is due
	// (-1: none armed).
	Active  bool
	TimerIn time.Duration
	// SinceAck is the time since its latest ACK or NACK (-1: none yet);
	// Age since it started.
	SinceAck, Age        time.Duration
	Sent, Retx, Timeouts uint64
}

// State returns the engine's state. The flows come from the sending
// goroutine, which owns them; when it does not answer before ctx is done
// (it is stuck), State returns with Answered false and the liveness
// fields only.
func (e *Engine) State(ctx context.Context) State {
	now := e.now()
	st := State{}
	if at := Time(e.loopAt.Load()); at > 0 {
		st.LoopIdle = time.Duration((now - at) / 1000)
	}
	if at := Time(e.writeSince.Load()); at > 0 {
		st.WriteBlocked = time.Duration((now - at) / 1000)
	}
	ch := make(chan []FlowState, 1)
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return st
	}
	e.queries = append(e.queries, ch)
	e.mu.Unlock()
	e.notify()
	select {
	case fl := <-ch:
		st.Answered, st.Flows = true, fl
	case <-ctx.Done():
	}
	return st
}

// answer gives every queued State query the flows' state (sending
// goroutine).
func (e *Engine) answer(qs []chan []FlowState, now Time) {
	fl := make([]FlowState, 0, len(e.flows))
	dur := func(t Time) time.Duration { return time.Duration(t / 1000) }
	for _, f := range e.flows {
		if f.done || f.snd == nil {
			continue
		}
		s := f.snd
		fs := FlowState{ID: f.spec.ID, Dst: f.spec.Dst, Mark: f.spec.Mark, Packets: s.Packets(), Acked: s.Acked(),
			Unsent: s.Unsent(), QueuedRetx: s.QueuedRetx(), InflightBytes: s.Inflight(), CwndBytes: int64(s.Cwnd()),
			Active: f.active, TimerIn: -1, SinceAck: -1, Age: dur(now - f.start),
			Sent: s.Stats.Sent, Retx: s.Stats.Retx, Timeouts: s.Stats.Timeouts}
		if f.timerAt > 0 {
			fs.TimerIn = dur(max(f.timerAt-now, 0))
		}
		if la := s.LastAck(); la > 0 {
			fs.SinceAck = dur(now - la)
		}
		fl = append(fl, fs)
	}
	sort.Slice(fl, func(i, j int) bool { return fl[i].ID < fl[j].ID })
	for _, q := range qs {
		q <- fl
	}
}
