package sim

import "github.com/fabricbench/fabricbench/agents/transport"

// This file is sender pacing at the host NIC (workloads.Flow.Rate): a
// paced flow's sender sends no faster than its rate (transport.Sender
// SetPacing), an offered load below what its congestion control would
// take, as a throughput search or a burst test asks. When pacing, not the
// window, holds a flow back, the NIC parks it and an evPace event puts it
// back on the NIC's list when its next packet is due; one event per gap,
// nothing allocated.

// pacedHold handles a flow whose sender had nothing to send at now: when
// pacing holds it back, it schedules the flow's wake-up and reports true.
func (s *Sim) pacedHold(fi int32, st *flowState) bool {
	if st.paceBps == 0 || st.snd == nil || st.snd.Done() {
		return false
	}
	at := st.snd.NextSendTime()
	if at <= s.now {
		return false
	}
	if st.paceAt == at {
		return true
	}
	// Paced: would the window allow it then? A window-limited flow is
	// woken by its ACKs instead.
	if !st.snd.CanSend(at) {
		return false
	}
	st.paceAt = at
	s.q.push(at, evPace, fi, 0)
	return true
}

// paceWake is event evPace: a paced flow's next packet is due.
func (s *Sim) paceWake(fi int32, at int64) {
	st := &s.flows[fi]
	if st.paceAt != at || st.fct >= 0 {
		return
	}
	st.paceAt = 0
	if st.snd != nil && st.snd.CanSend(s.now) {
		s.activate(fi)
	}
}

// pace sets a flow's pacing when it starts.
func (s *Sim) pace(st *flowState, snd *transport.Sender) {
	if st.paceBps > 0 {
		snd.SetPacing(st.paceBps)
	}
}
