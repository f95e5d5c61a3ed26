package sim

import (
	"fmt"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/units"
)

// This file guarantees that every run ends. A run stops when every flow is
// done, at its time limit (Config.End; DefaultEnd when 0, the 1 s limit of
// the Spritz paper's experiments), or earlier when it has stalled: no flow
// made progress (an ACK that acknowledged new data, a flow's start or
// completion, a link event) for Config.StallAfter while flows were
// running and no link event was still to come. Flows that did not finish
// are reported incomplete (FCT -1, Result.Incomplete), and Result says why
// the run ended (EndReason).

// Time limits (units.Ps, picoseconds). StallRTOs x a path RTO is computed
// without overflow: an RTO above MaxEnd/StallRTOs makes the stretch MaxEnd.
const (
	// DefaultEnd is the time limit of a run whose Config.End is 0: 1 s
	// of simulated time, the limit of the Spritz paper's experiments.
	DefaultEnd units.Ps = 1_000_000_000_000
	// MaxEnd is the largest Config.End (and StallAfter): one hour, the
	// largest duration units.ParsePs accepts.
	MaxEnd units.Ps = 3600 * DefaultEnd
	// DefaultStallAfter is the shortest stretch without progress that
	// ends a run (Config.StallAfter 0); the default is the larger of this
	// and StallRTOs retransmission timeouts of the slowest flow's path.
	DefaultStallAfter units.Ps = 10_000_000_000 // 10 ms
	// StallRTOs is how many of the longest path RTO the default stall
	// stretch covers at least: a flow on a dead path has timed out and
	// retransmitted this many times without a single new ACK.
	StallRTOs = 100
)

// EndReason says why a run ended.
type EndReason uint8

const (
	// EndDone: every flow finished (or nothing was left to happen).
	EndDone EndReason = iota
	// EndLimit: the time limit (Config.End) came first.
	EndLimit
	// EndStalled: no flow made progress for the stall stretch.
	EndStalled
	// EndInterrupted: Interrupt stopped the run.
	EndInterrupted
)

func (r EndReason) String() string {
	switch r {
	case EndDone:
		return "done"
	case EndLimit:
		return "time-limit"
	case EndStalled:
		return "stalled"
	case EndInterrupted:
		return "interrupted"
	}
	return fmt.Sprintf("EndReason(%d)", uint8(r))
}

// MarshalText writes the reason's name (JSON: "stalled").
func (r EndReason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// checkLimits validates Config.End and StallAfter.
func checkLimits(cfg *Config) error {
	if cfg.End < 0 || cfg.End > MaxEnd {
		return fmt.Errorf("sim: end %d ps out of range [0, %d] (0: the default limit, %d ps)", cfg.End, MaxEnd, DefaultEnd)
	}
	if cfg.StallAfter < -1 || cfg.StallAfter > MaxEnd {
		return fmt.Errorf("sim: stall-after %d ps out of range [-1, %d] (0: the default, -1: never)", cfg.StallAfter, MaxEnd)
	}
	return nil
}

// endTime is the run's time limit.
func (s *Sim) endTime() int64 {
	if s.cfg.End > 0 {
		return s.cfg.End
	}
	return DefaultEnd
}

// stallFor is the stretch without progress that ends the run; 0: never.
func (s *Sim) stallFor() int64 {
	switch {
	case s.cfg.StallAfter < 0:
		return 0
	case s.cfg.StallAfter > 0:
		return s.cfg.StallAfter
	}
	d := DefaultStallAfter
	if r := s.maxRTO; r > 0 && r <= MaxEnd/StallRTOs {
		d = max(d, r*StallRTOs)
	} else if r > 0 {
		d = MaxEnd
	}
	return d
}

// progress notes that a flow made progress at the current time, and arms
// the stall check when none is pending.
func (s *Sim) progress() {
	s.progressAt = s.now
	if s.sh != nil {
		return // a shard: the coordinator checks at its barriers (parStalled)
	}
	if s.stallAt == 0 {
		if d := s.stallFor(); d > 0 {
			s.stallAt = transport.AddTime(s.now, d)
			s.q.push(s.stallAt, evStall, 0, 0)
		}
	}
}

// stallCheck runs at the pending stall deadline: it ends the run when
// nothing progressed since, flows are running and no link event is still
// to come; otherwise it re-arms itself.
func (s *Sim) stallCheck(at int64) {
	if at != s.stallAt {
		return
	}
	s.stallAt = 0
	d := s.stallFor()
	if d == 0 || s.started == s.done {
		return // nothing running: flows not started yet arm it when they start
	}
	next := transport.AddTime(s.progressAt, d)
	// A link that comes back (or the reroute after it) may unblock
	// flows: wait for it.
	for i := range s.cfg.Links {
		at := s.cfg.Links[i].At
		if s.cfg.Reconverge > 0 {
			at = transport.AddTime(at, s.cfg.Reconverge)
		}
		if at >= s.now {
			next = max(next, transport.AddTime(at, d))
		}
	}
	if next > s.now {
		s.stallAt = next
		s.q.push(next, evStall, 0, 0)
		return
	}
	s.halt = EndStalled
}

// parDeadline is the stall deadline of the parallel mode (which has no
// link events), read at a barrier: the latest progress of any shard plus
// the stall stretch; ok is false while no flow is running or stall
// detection is off.
func (s *Sim) parDeadline() (dl int64, ok bool) {
	last, started := s.progressAt, 0
	for _, sh := range s.par.shards {
		last = max(last, sh.progressAt)
		started += sh.started
		s.maxRTO = max(s.maxRTO, sh.maxRTO)
	}
	d := s.stallFor()
	if d == 0 || started == s.done {
		return 0, false
	}
	return transport.AddTime(last, d), true
}
