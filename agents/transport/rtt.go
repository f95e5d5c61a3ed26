package transport

// RTT estimation and the measured retransmission timeout (RFC 6298).
//
// The simulator knows its fabric exactly, so a sender there can take its RTO
// from the model (RTOFor: 7 base RTTs). On a real host the model misses what
// the host adds: scheduling delay, timer slack, syscalls, queues in the
// kernel. A fixed RTO then fires while the original packet is still on its
// way, the retransmission is spurious, and the timeout response collapses the
// window for nothing. With Params.MeasureRTO a sender measures instead:
//
//   - every ACK echoes the timestamp of the transmission it acknowledges, so
//     every first ACK of a packet is an unambiguous RTT sample, including the
//     ACK of an original that arrives after its retransmission (Karn's rule
//     would have to discard exactly those samples, the ones that show the RTO
//     is too short);
//   - SRTT and RTTVAR follow RFC 6298 section 2; RTO = SRTT + max(G,
//     4·RTTVAR), at least the floor, at most MaxRTO. RFC 6298 assumes one
//     sample per round trip; here every packet's ACK is one, so RTTVAR would
//     forget a delay spike within a few packets. It therefore rises with
//     every sample but falls at most once per SRTT, as it would with one
//     sample per round trip;
//   - a timeout doubles the RTO (exponential backoff, section 5.5) until the
//     next sample;
//   - the smallest sample of a sliding window is the measured base RTT;
//   - an ACK for an earlier transmission than the latest one means the
//     retransmission was spurious (the Eifel detection of RFC 3522, with
//     the echoed timestamp); SenderStats.Spurious counts them;
//   - when the driver measures the hosts' share of each round trip
//     (Ack.HostDelay: the receiver's hold and the sender's wait, from
//     kernel timestamps), the largest of a sliding window is a floor of
//     the variance term: RTO = SRTT + max(G, 4·RTTVAR, host delay). A
//     host that stalled its threads for some milliseconds once will do it
//     again, and RTTVAR forgets a stall within a few round trips; a
//     timeout that fires while the ACK waits in a stalled host resends
//     a whole window for nothing. A spurious retransmission's original,
//     late by more than SRTT, counts likewise (the Eifel response of RFC
//     4015: the RTO grows past the delay that fooled it).

// Defaults of the measured RTO.
const (
	// DefaultRTOGranularity is G of RFC 6298 for hosts whose timers wake
	// up to about a millisecond late (a Go timer on Linux).
	DefaultRTOGranularity = Millisecond
	// DefaultMaxRTO caps the backed-off RTO.
	DefaultMaxRTO = Second
	// DefaultMinRTTWindow is how long a minimum RTT sample stays the base
	// RTT when no smaller one arrives.
	DefaultMinRTTWindow = 10 * Second
	// InitialMeasuredRTO is the least RTO of a measuring sender before its
	// first sample (and without a seed): a host's first packets can take
	// milliseconds (a thread to wake, buffers to fault in, a cold
	// receiver), and a timeout then resends the whole first window for
	// nothing. RFC 6298 starts from 1 s; the fabric model's RTO is the
	// initial value when it is longer.
	InitialMeasuredRTO = 10 * Millisecond
)

// RTTConfig configures an RTTEstimator. Zero fields take the defaults above;
// a zero Initial or MinRTO is 1 s and 0 as in RFC 6298 (callers pass the
// model's RTO for both).
type RTTConfig struct {
	Initial      Time // RTO before the first sample
	MinRTO       Time // floor of the RTO
	MaxRTO       Time // cap of the RTO, also after backoff
	Granularity  Time // G: the smallest variance term
	MinRTTWindow Time // base RTT: minimum over this window of time
}

// RTTEstimator is the RTT estimator of one flow. The zero value is not
// usable; use NewRTTEstimator.
type RTTEstimator struct {
	cfg     RTTConfig
	srtt    Time
	rttvar  Time
	rto     Time // before backoff
	decayAt Time // RTTVAR may fall again from this time
	backoff uint // timeouts since the last sample
	samples uint64

	minRTT   Time // base RTT: the smallest sample in the window
	minAt    Time // when minRTT was taken
	hostMax  Time // the largest host delay in the window
	hostAt   Time // when hostMax was seen
	maxRTT   Time
	timeouts uint64
}

// NewRTTEstimator returns an estimator with no samples.
func NewRTTEstimator(cfg RTTConfig) *RTTEstimator {
	if cfg.Initial <= 0 {
		cfg.Initial = Second
	}
	if cfg.MaxRTO <= 0 {
		cfg.MaxRTO = DefaultMaxRTO
	}
	if cfg.Granularity <= 0 {
		cfg.Granularity = DefaultRTOGranularity
	}
	if cfg.MinRTTWindow <= 0 {
		cfg.MinRTTWindow = DefaultMinRTTWindow
	}
	cfg.MinRTO = max(cfg.MinRTO, 0)
	cfg.MaxRTO = max(cfg.MaxRTO, cfg.MinRTO)
	return &RTTEstimator{cfg: cfg, rto: cfg.Initial}
}

// Sample adds an RTT sample measured at now. Non-positive samples are
// ignored (clock steps, corrupt echoes).
func (e *RTTEstimator) Sample(now, rtt Time) {
	if rtt <= 0 {
		return
	}
	if e.srtt == 0 {
		// RFC 6298 (2.2): the first measurement R.
		e.srtt = rtt
		e.rttvar = rtt / 2
	} else {
		// RFC 6298 (2.3) with alpha = 1/8, beta = 1/4.
		d := e.srtt - rtt
		if d < 0 {
			d = -d
		}
		if v := e.rttvar + (d-e.rttvar)/4; v >= e.rttvar {
			e.rttvar = v
		} else if now >= e.decayAt {
			e.rttvar = v
			e.decayAt = now + e.srtt
		}
		e.srtt += (rtt - e.srtt) / 8
	}
	e.samples++
	e.backoff = 0 // 5.7: a new sample recomputes the RTO
	e.rto = e.srtt + max(e.cfg.Granularity, 4*e.rttvar, e.hostMax)
	if e.minRTT == 0 || rtt <= e.minRTT || now-e.minAt > e.cfg.MinRTTWindow {
		e.minRTT, e.minAt = rtt, now
	}
	e.maxRTT = max(e.maxRTT, rtt)
}

// HostDelay notes the hosts' share d of a round trip measured at now
// (Ack.HostDelay): the largest of the last MinRTTWindow floors the RTO's
// variance term. It takes effect with the next sample.
func (e *RTTEstimator) HostDelay(now, d Time) {
	if d > e.hostMax || now-e.hostAt > e.cfg.MinRTTWindow {
		e.hostMax, e.hostAt = max(d, 0), now
	}
}

// MaxHostDelay returns the largest host delay of the window (0 when the
// driver reports none).
func (e *RTTEstimator) MaxHostDelay() Time { return e.hostMax }

// SeedHostDelay starts the host delay window from another flow's at now
// (a flow of the same host: the same host stalls).
func (e *RTTEstimator) SeedHostDelay(now, d Time) {
	if d > e.hostMax {
		e.hostMax, e.hostAt = d, now
		if e.srtt > 0 {
			e.rto = e.srtt + max(e.cfg.Granularity, 4*e.rttvar, e.hostMax)
		}
	}
}

// Seed starts an estimator that has no samples from an estimate of the same
// or a similar path (a flow of the same host that finished recently), as
// TCP's per-destination metrics cache does: until its own samples arrive,
// the flow's RTO is that estimate's rather than the initial one, never below
// the floor. Samples then continue from it (RFC 6298 2.3).
func (e *RTTEstimator) Seed(srtt, rttvar Time) {
	if e.samples > 0 || srtt <= 0 || rttvar < 0 {
		return
	}
	e.srtt, e.rttvar = srtt, rttvar
	e.rto = srtt + max(e.cfg.Granularity, 4*rttvar, e.hostMax)
}

// Backoff doubles the RTO after a timeout (RFC 6298 5.5), up to MaxRTO.
func (e *RTTEstimator) Backoff() {
	e.timeouts++
	if e.backoff < 32 {
		e.backoff++
	}
}

// RTO returns the retransmission timeout in effect: the measured (or
// initial) RTO, backed off, within [MinRTO, MaxRTO].
func (e *RTTEstimator) RTO() Time {
	rto := max(e.rto, e.cfg.MinRTO)
	for i := uint(0); i < e.backoff && rto < e.cfg.MaxRTO; i++ {
		rto *= 2
	}
	return min(rto, e.cfg.MaxRTO)
}

// SRTT returns the smoothed RTT (0 before the first sample).
func (e *RTTEstimator) SRTT() Time { return e.srtt }

// RTTVar returns the RTT variation (0 before the first sample).
func (e *RTTEstimator) RTTVar() Time { return e.rttvar }

// MinRTT returns the measured base RTT: the smallest sample of the window (0
// before the first sample).
func (e *RTTEstimator) MinRTT() Time { return e.minRTT }

// MaxRTT returns the largest sample so far.
func (e *RTTEstimator) MaxRTT() Time { return e.maxRTT }

// Samples returns the number of samples taken.
func (e *RTTEstimator) Samples() uint64 { return e.samples }

// rttConfig is the estimator configuration of a sender whose model RTO is
// rto: the model RTO is the floor, so the measurement only ever lengthens
// the timeout beyond what the fabric model derives, and the initial RTO
// unless InitialMeasuredRTO is longer.
func (p *Params) rttConfig(rto Time) RTTConfig {
	return RTTConfig{Initial: max(rto, InitialMeasuredRTO), MinRTO: rto, MaxRTO: max(p.MaxRTO, 0), Granularity: p.RTOGranularity}
}

// onFreshAck is called with the first ACK of a packet whose latest
// transmission left at sentAt. It feeds the estimator and detects spurious
// retransmissions: the ACK echoes an earlier transmission than the latest,
// so the original arrived and the resend was not needed.
func (s *Sender) onFreshAck(now Time, a *Ack, sentAt Time) {
	if a.EchoTS < sentAt {
		s.Stats.Spurious++
	}
	if s.est == nil || a.EchoTS > now {
		return
	}
	if a.HostDelay > 0 {
		s.est.HostDelay(now, a.HostDelay)
	}
	if a.EchoTS < sentAt && s.est.srtt > 0 {
		// Eifel response (RFC 4015): the original was late, not lost. Its
		// lateness beyond SRTT, a delay this path or host showed once and
		// will show again, floors the RTO's variance term for the window
		// as a host delay does (a stalled forwarding CPU, not only a host).
		s.est.HostDelay(now, now-a.EchoTS-s.est.srtt)
	}
	s.est.Sample(now, now-a.EchoTS)
	s.rto = s.est.RTO()
}

// onRTOExpired backs the measured RTO off after a timeout.
func (s *Sender) onRTOExpired() {
	if s.est == nil {
		return
	}
	s.est.Backoff()
	s.rto = s.est.RTO()
}

// SeedRTT starts the sender's RTT estimate from another flow's (see
// RTTEstimator.Seed); nothing happens without Params.MeasureRTO.
func (s *Sender) SeedRTT(srtt, rttvar Time) {
	if s.est == nil {
		return
	}
	s.est.Seed(srtt, rttvar)
	s.rto = s.est.RTO()
}

// SeedHostDelay starts the sender's host delay window (see
// RTTEstimator.HostDelay) from another flow's largest; nothing happens
// without Params.MeasureRTO.
func (s *Sender) SeedHostDelay(now, d Time) {
	if s.est == nil {
		return
	}
	s.est.SeedHostDelay(now, d)
	s.rto = s.est.RTO()
}

// RTO returns the sender's retransmission timeout in effect.
func (s *Sender) RTO() Time { return s.rto }

// RTT returns the sender's RTT estimator, or nil when Params.MeasureRTO is
// off.
func (s *Sender) RTT() *RTTEstimator { return s.est }
