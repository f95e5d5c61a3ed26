package sim

// This file keeps the window in which packets were lost to link failures
// (a packet on, queued behind or routed onto a link that is down, or a
// switch left without a route), for the failover time a link-failure test
// measures: from the failure to the last packet it cost.

type lossWindow struct {
	first, last int64
	n           uint64
}

// lost records a packet lost to a link failure now.
func (s *Sim) lost() {
	w := &s.loss
	if w.n == 0 {
		w.first = s.now
	}
	w.last = s.now
	w.n++
}

// LinkLoss returns how many packets were lost to down links and missing
// routes, and the times of the first and last of them (ps; 0 when none).
func (s *Sim) LinkLoss() (n uint64, first, last int64) {
	return s.loss.n, s.loss.first, s.loss.last
}
