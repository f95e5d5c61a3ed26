package sim

import "math/bits"

// event is one scheduled action: a 24-byte value, never boxed.
type event struct {
	at   int64 // picoseconds
	a    int32 // meaning depends on kind (port, node, flow, link)
	b    int32 // meaning depends on kind (packet index, ...)
	kind evKind
}

type evKind uint8

const (
	evTxDone    evKind = iota // a = egress port: the port is free for its next packet
	evArrive                  // a = port: the head packet on its wire reaches the far end (after link and switch latency)
	evFlowStart               // a = flow
	evTimer                   // a = flow: transport timer (retransmission timeout)
	evLinkState               // a = link event index
	evReroute                 // recompute ECMP groups over the links that are up
	evSample                  // a = sampler index: periodic telemetry sample
	evAckTimer                // a = flow: the receiver's held ACK is due (transport.Params.AckDelay)
	evPause                   // a = egress port, b = class | xoff<<8 | generation<<9: a PFC frame arrives (pfc.go)
)

// eventQueue is a radix heap. A discrete-event simulation never schedules
// into the past, so every key is >= the last key popped; an event is kept in
// the bucket named by the highest bit in which its time differs from that
// last key. Popping takes from bucket 0 (time == last); when it is empty, the
// lowest non-empty bucket is scanned for its minimum, which becomes the new
// last key, and its events move to strictly lower buckets. Each event moves
// at most 64 times and in practice a few, with sequential memory access and
// no per-event comparisons against a tree.
//
// Events with equal times pop in an order fixed by the sequence of pushes
// and pops, which is itself a pure function of the inputs and seed, so runs
// are deterministic. Nothing here allocates once the buckets have grown.
type eventQueue struct {
	last    int64
	n       int
	buckets [65][]event
}

func (q *eventQueue) len() int { return q.n }

func (q *eventQueue) push(at int64, kind evKind, a, b int32) {
	if at < q.last {
		at = q.last // never schedule into the past
	}
	i := bits.Len64(uint64(at ^ q.last))
	q.buckets[i] = append(q.buckets[i], event{at: at, kind: kind, a: a, b: b})
	q.n++
}

// pop removes and returns the earliest event. The queue must not be empty.
func (q *eventQueue) pop() event {
	if len(q.buckets[0]) == 0 {
		i := 1
		for len(q.buckets[i]) == 0 {
			i++
		}
		bk := q.buckets[i]
		min := bk[0].at
		for j := 1; j < len(bk); j++ {
			if bk[j].at < min {
				min = bk[j].at
			}
		}
		q.last = min
		for j := range bk {
			k := bits.Len64(uint64(bk[j].at ^ min))
			q.buckets[k] = append(q.buckets[k], bk[j])
		}
		q.buckets[i] = bk[:0]
	}
	b0 := q.buckets[0]
	e := b0[len(b0)-1]
	q.buckets[0] = b0[:len(b0)-1]
	q.n--
	return e
}
