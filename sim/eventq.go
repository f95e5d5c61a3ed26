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
	evStall                   // the stall check is due (termination.go)
	evPFCWatch                // a = egress port, b = class | restore<<8: the PFC watchdog checks a pause (pfcwd.go)
	evPace                    // a = flow: a paced sender may send again (pace.go)
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
	last int64
	n    int
	b    [65]evBucket
	free *evChunk // chunks not in a bucket, linked by next
	made int      // chunks allocated
}

// chunkLen is the number of events per chunk (3 KiB).
const chunkLen = 128

// evChunk is a run of events of one bucket. Chunks are allocated one by one
// (only while the pool is empty), so pointers to them stay valid.
type evChunk struct {
	ev         [chunkLen]event
	n          uint32 // events in ev[:n]
	prev, next *evChunk
}

// evBucket is a chain of chunks, oldest first; the zero value is empty.
type evBucket struct{ head, tail *evChunk }

func (q *eventQueue) len() int { return q.n }

// push schedules an event. The common case, room in the bucket's last
// chunk, is inlined at the call sites.
func (q *eventQueue) push(at int64, kind evKind, a, b int32) {
	if at < q.last {
		at = q.last // never schedule into the past
	}
	q.n++
	i := bits.Len64(uint64(at ^ q.last))
	if t := q.b[i].tail; t != nil && t.n < chunkLen {
		t.ev[t.n%chunkLen] = event{at: at, kind: kind, a: a, b: b}
		t.n++
		return
	}
	q.grow(i, event{at: at, kind: kind, a: a, b: b})
}

// grow chains a new chunk to bucket i, from the pool (allocated when the
// pool is empty), and puts e in it. Kept out of line, so that push and put
// inline.
//
//go:noinline
func (q *eventQueue) grow(i int, e event) {
	ch := q.free
	if ch != nil {
		q.free = ch.next
	} else {
		ch = new(evChunk)
		q.made++
	}
	b := &q.b[i]
	ch.ev[0], ch.n, ch.prev, ch.next = e, 1, b.tail, nil
	if b.tail == nil {
		b.head = ch
	} else {
		b.tail.next = ch
	}
	b.tail = ch
}

// release returns a chunk to the pool.
func (q *eventQueue) release(ch *evChunk) {
	ch.prev, ch.next = nil, q.free
	q.free = ch
}

// peek returns the time of the earliest event without moving the queue's
// base (events can still be pushed at any time >= the last one popped).
// The queue must not be empty.
func (q *eventQueue) peek() int64 {
	if q.b[0].tail != nil {
		return q.last
	}
	_, min := q.lowest()
	return min
}

// popBefore pops the earliest event if it is due before limit; otherwise
// it leaves the queue as it is (the parallel mode's windows: events from
// other shards may still come before the next one here).
func (q *eventQueue) popBefore(limit int64) (event, bool) {
	if q.n == 0 {
		return event{}, false
	}
	if q.b[0].tail == nil {
		i, min := q.lowest()
		if min >= limit {
			return event{}, false
		}
		q.spread(i, min)
	} else if q.last >= limit {
		return event{}, false
	}
	return q.pop(), true
}

// pop removes and returns the earliest event. The queue must not be empty.
func (q *eventQueue) pop() event {
	if q.b[0].tail == nil {
		q.refill()
	}
	b := &q.b[0]
	ch := b.tail
	ch.n--
	e := ch.ev[ch.n%chunkLen]
	if ch.n == 0 {
		b.tail = ch.prev
		if b.tail == nil {
			b.head = nil
		} else {
			b.tail.next = nil
		}
		q.release(ch)
	}
	q.n--
	return e
}

// refill empties the lowest non-empty bucket into lower ones (bucket 0
// gets the events at its minimum time), keeping their order.
func (q *eventQueue) refill() {
	q.spread(q.lowest())
}

// lowest returns the lowest non-empty bucket and its earliest time.
func (q *eventQueue) lowest() (int, int64) {
	i := 1
	for q.b[i].head == nil {
		i++
	}
	bk := &q.b[i]
	min := bk.head.ev[0].at
	for ch := bk.head; ch != nil; ch = ch.next {
		for _, e := range ch.ev[:ch.n] {
			if e.at < min {
				min = e.at
			}
		}
	}
	return i, min
}

// spread moves bucket i's events, whose earliest time is min, into lower
// buckets with min as the new last key.
func (q *eventQueue) spread(i int, min int64) {
	bk := q.b[i]
	q.b[i] = evBucket{}
	q.last = min
	for ch := bk.head; ch != nil; {
		for _, e := range ch.ev[:ch.n] {
			// put, inlined by hand (the hot loop of the queue)
			k := bits.Len64(uint64(e.at ^ min))
			if t := q.b[k].tail; t != nil && t.n < chunkLen {
				t.ev[t.n%chunkLen] = e
				t.n++
			} else {
				q.grow(k, e)
			}
		}
		next := ch.next
		q.release(ch)
		ch = next
	}
}
