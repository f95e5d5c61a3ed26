package sim

import (
	"math/bits"
	"testing"
)

// sliceQueue is the radix heap with one growable slice per bucket, the
// eventQueue's former layout: the chunked queue must pop the same events
// in the same order (ties included), so results stay byte-identical.
type sliceQueue struct {
	last    int64
	buckets [65][]event
}

func (q *sliceQueue) push(at int64, kind evKind, a, b int32) {
	if at < q.last {
		at = q.last
	}
	i := bits.Len64(uint64(at ^ q.last))
	q.buckets[i] = append(q.buckets[i], event{at: at, kind: kind, a: a, b: b})
}

func (q *sliceQueue) pop() event {
	if len(q.buckets[0]) == 0 {
		i := 1
		for len(q.buckets[i]) == 0 {
			i++
		}
		bk := q.buckets[i]
		min := bk[0].at
		for _, e := range bk {
			if e.at < min {
				min = e.at
			}
		}
		q.last = min
		for _, e := range bk {
			k := bits.Len64(uint64(e.at ^ min))
			q.buckets[k] = append(q.buckets[k], e)
		}
		q.buckets[i] = bk[:0]
	}
	b0 := q.buckets[0]
	e := b0[len(b0)-1]
	q.buckets[0] = b0[:len(b0)-1]
	return e
}

func TestEventQueueOrderMatchesSliceRadixHeap(t *testing.T) {
	var q eventQueue
	var ref sliceQueue
	x := uint64(12345)
	rnd := func() uint64 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return x
	}
	pending, id := 0, int32(0)
	var now int64
	for step := 0; step < 400000; step++ {
		// Bursts of pushes (many ties, a spread of horizons) and pops.
		if pending == 0 || rnd()%3 != 0 {
			var at int64
			switch rnd() % 4 {
			case 0:
				at = now // a tie with the current time
			case 1:
				at = now + int64(rnd()%16)
			case 2:
				at = now + int64(rnd()%100000)
			default:
				at = now + int64(rnd()%(1<<40))
			}
			id++
			q.push(at, evKind(id%7), id, -id)
			ref.push(at, evKind(id%7), id, -id)
			pending++
			continue
		}
		got, want := q.pop(), ref.pop()
		pending--
		if got != want {
			t.Fatalf("step %d: popped %+v, the slice radix heap pops %+v", step, got, want)
		}
		if got.at < now {
			t.Fatalf("step %d: time went back from %d to %d", step, now, got.at)
		}
		now = got.at
		if q.len() != pending {
			t.Fatalf("step %d: len %d, want %d", step, q.len(), pending)
		}
	}
	for pending > 0 {
		if got, want := q.pop(), ref.pop(); got != want {
			t.Fatalf("drain: popped %+v, want %+v", got, want)
		}
		pending--
	}
	// The pool holds what was pending at the peak, not a bucket's worth per
	// bucket: every chunk is back in the free list.
	free := 0
	for ch := q.free; ch != nil; ch = ch.next {
		free++
	}
	if free != q.made || q.made > 2*400000/chunkLen {
		t.Errorf("%d chunks allocated, %d free after draining", q.made, free)
	}
}
