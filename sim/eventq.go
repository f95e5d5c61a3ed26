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
// Buckets are chains of fixed-size chunks from one shared pool, returned to
// it as a bucket empties: memory follows the events pending, not the sum of
// every bucket's high-water mark (with growable slices per bucket, each of
// a dozen buckets kept room for nearly all pending events: 38 MB at 8192
// hosts instead of a few).
//
// Events with equal times pop in an order fixed by the sequence of pushes
// and pops, which is itself a pure function of the inputs and seed, so runs
// are deterministic. Nothing here allocates once the pool has grown.
type eventQueue struct {
	last   int64
	n      int
	b      [65]evBucket
	chunks []evChunk
	free   []int32 // chunks not in a bucket
}

// chunkLen is the number of events per chunk (3 KiB).
const chunkLen = 128

type evChunk struct {
	ev         [chunkLen]event
	n          int32 // events in ev[:n]
	prev, next int32 // neighbours in the bucket's chain, -1 at its ends
}

// evBucket is a chain of chunks, oldest first; -1: empty.
type evBucket struct{ head, tail int32 }

func (q *eventQueue) len() int { return q.n }

// chunk takes a chunk from the pool, growing it when empty.
func (q *eventQueue) chunk() int32 {
	if n := len(q.free); n > 0 {
		c := q.free[n-1]
		q.free = q.free[:n-1]
		return c
	}
	q.chunks = append(q.chunks, evChunk{})
	return int32(len(q.chunks) - 1)
}

// add appends e to bucket i.
func (q *eventQueue) add(i int, e event) {
	if len(q.chunks) == 0 {
		q.init() // first use of a zero eventQueue
	}
	b := &q.b[i]
	t := b.tail
	if t < 0 || q.chunks[t].n == chunkLen {
		c := q.chunk()
		ch := &q.chunks[c]
		ch.n, ch.prev, ch.next = 0, t, -1
		if t < 0 {
			b.head = c
		} else {
			q.chunks[t].next = c
		}
		b.tail, t = c, c
	}
	ch := &q.chunks[t]
	ch.ev[ch.n] = e
	ch.n++
}

// init marks every bucket empty (the zero value is a queue not yet used).
func (q *eventQueue) init() {
	for i := range q.b {
		q.b[i] = evBucket{-1, -1}
	}
}

func (q *eventQueue) push(at int64, kind evKind, a, b int32) {
	if at < q.last {
		at = q.last // never schedule into the past
	}
	q.add(bits.Len64(uint64(at^q.last)), event{at: at, kind: kind, a: a, b: b})
	q.n++
}

// pop removes and returns the earliest event. The queue must not be empty.
func (q *eventQueue) pop() event {
	if q.b[0].tail < 0 {
		i := 1
		for q.b[i].head < 0 {
			i++
		}
		bk := q.b[i]
		q.b[i] = evBucket{-1, -1}
		min := q.chunks[bk.head].ev[0].at
		for c := bk.head; c >= 0; c = q.chunks[c].next {
			ch := &q.chunks[c]
			for j := int32(0); j < ch.n; j++ {
				if ch.ev[j].at < min {
					min = ch.ev[j].at
				}
			}
		}
		q.last = min
		for c := bk.head; c >= 0; {
			// add may grow q.chunks: index, do not hold pointers across it.
			for j := int32(0); j < q.chunks[c].n; j++ {
				e := q.chunks[c].ev[j]
				q.add(bits.Len64(uint64(e.at^min)), e)
			}
			next := q.chunks[c].next
			q.free = append(q.free, c)
			c = next
		}
	}
	b := &q.b[0]
	ch := &q.chunks[b.tail]
	ch.n--
	e := ch.ev[ch.n]
	if ch.n == 0 {
		q.free = append(q.free, b.tail)
		b.tail = ch.prev
		if b.tail < 0 {
			b.head = -1
		} else {
			q.chunks[b.tail].next = -1
		}
	}
	q.n--
	return e
}
