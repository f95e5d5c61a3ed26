package sim

// event is one scheduled action. Events are 24-byte values kept in a
// slice-backed 4-ary min-heap ordered by time. Events at the same time pop in
// an order fixed by the sequence of pushes and pops, which is itself a pure
// function of the inputs and seed, so runs are deterministic without a
// tie-breaking sequence number. Nothing here allocates once the heap has
// grown to its working size.
type event struct {
	at   int64 // picoseconds
	a    int32 // meaning depends on kind (port, node, flow, link)
	b    int32 // meaning depends on kind (packet index, ...)
	kind evKind
}

type evKind uint8

const (
	evTxDone    evKind = iota // a = egress port: head packet finished serialising
	evArrive                  // a = port: the head packet on its wire reaches the far end (after link and switch latency)
	evFlowStart               // a = flow
	evTimer                   // a = flow: transport timer (retransmission timeout, pacing)
	evLinkState               // a = link, b = 0 down / 1 up
	evReroute                 // recompute ECMP groups over the links that are up
	evSample                  // a = sampler index: periodic telemetry sample
)

type eventQueue struct {
	h []event
}

func (q *eventQueue) len() int { return len(q.h) }

func (q *eventQueue) push(at int64, kind evKind, a, b int32) {
	e := event{at: at, kind: kind, a: a, b: b}
	h := append(q.h, e)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) >> 2
		if e.at >= h[p].at {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
	q.h = h
}

// pop removes and returns the earliest event. The queue must not be empty.
func (q *eventQueue) pop() event {
	h := q.h
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	if n > 0 {
		i := 0
		for {
			c := 4*i + 1
			if c >= n {
				break
			}
			m := c
			end := c + 4
			if end > n {
				end = n
			}
			for j := c + 1; j < end; j++ {
				if h[j].at < h[m].at {
					m = j
				}
			}
			if h[m].at >= last.at {
				break
			}
			h[i] = h[m]
			i = m
		}
		h[i] = last
	}
	q.h = h
	return top
}
