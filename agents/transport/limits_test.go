package transport

import (
	"runtime"
	"strings"
	"testing"
)

const (
	mib = int64(1) << 20
	tib = int64(1) << 40
)

// Packet counts are exact (never wrapped to 32 bits), and a flow needing more
// than MaxPackets packets is refused with an error naming the limit; the
// sender never silently simulates a smaller flow.
func TestFlowSizeLimit(t *testing.T) {
	cases := []struct {
		size    int64
		mtu     int
		packets uint64
		ok      bool
	}{
		{16*tib + mib, 4096, 1<<32 + 256, false}, // wrapped to 256 packets (1 MiB) before
		{16 * tib, 4096, 1 << 32, false},         // wrapped to 0 packets before
		{MaxFlowBytes(4096), 4096, MaxPackets, true},
		{MaxFlowBytes(4096) + 1, 4096, 1 << 32, false},
		{tib, 256, 1 << 32, false},
		{tib + 1, 256, 1<<32 + 1, false},
		{tib - 256, 256, MaxPackets, true},
		{99999 * tib, 4096, 99999 << 28, false},
		{tib, 4096, 1 << 28, true},
		{0, 4096, 1, true},
		{1, 4096, 1, true},
		{4097, 4096, 2, true},
	}
	for _, c := range cases {
		if got := Packets(c.size, c.mtu); got != c.packets {
			t.Errorf("Packets(%d, %d) = %d, want %d", c.size, c.mtu, got, c.packets)
		}
		err := CheckFlowSize(c.size, c.mtu)
		if (err == nil) != c.ok {
			t.Errorf("CheckFlowSize(%d, %d) = %v, want ok=%v", c.size, c.mtu, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "at most 4294967295 packets") {
			t.Errorf("CheckFlowSize(%d, %d): %q does not name the limit", c.size, c.mtu, err)
		}
		p := DefaultParams()
		p.MTU = c.mtu
		func() {
			defer func() {
				r := recover()
				if (r == nil) != c.ok {
					t.Errorf("NewSender(size %d, mtu %d): panic %v, want ok=%v", c.size, c.mtu, r, c.ok)
				}
			}()
			s := NewSender(&p, Flow{ID: 1, Size: c.size, Path: refPath})
			if uint64(s.Packets()) != c.packets {
				t.Errorf("sender of %d bytes at mtu %d has %d packets, want %d", c.size, c.mtu, s.Packets(), c.packets)
			}
		}()
	}
	if MaxFlowBytes(4096) != 16*tib-4096 || MaxFlowBytes(256) != tib-256 {
		t.Errorf("MaxFlowBytes: %d at 4096, %d at 256", MaxFlowBytes(4096), MaxFlowBytes(256))
	}
}

// The last packet of a flow at the limit carries the right payload and the
// flow completes when its highest PSN is acknowledged cumulatively.
func TestFlowAtLimitLastPacket(t *testing.T) {
	p := DefaultParams()
	p.MTU = 256
	size := MaxFlowBytes(256) - 100
	s := NewSender(&p, Flow{ID: 1, Size: size, Path: refPath})
	if s.Packets() != MaxPackets {
		t.Fatalf("%d packets", s.Packets())
	}
	if w := s.pktWire(MaxPackets - 1); w != 156+int64(p.HeaderBytes) {
		t.Errorf("last packet wire size %d, want %d", w, 156+p.HeaderBytes)
	}
}

type ackInFlight struct {
	at Time
	a  Ack
}

// heapAllocated returns the bytes allocated on the heap while f runs.
func heapAllocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// driveWindows runs a sender and receiver against each other for n transmissions
// over an ideal network with one RTT of delay, trimming every lossEvery-th
// data packet (0: none), and returns the largest span nextNew-base seen.
// q holds the ACKs on their way back (preallocated by the caller, so that
// only the sender and receiver allocate).
func driveWindows(t *testing.T, s *Sender, r *Receiver, n int, lossEvery int, q []ackInFlight, clock *Time) uint32 {
	t.Helper()
	q = q[:0]
	head := 0
	now := *clock
	defer func() { *clock = now }()
	var d Data
	var span uint32
	step := Time(332000) // one 4160 B packet at 100 Gb/s
	for i := 0; i < n; {
		now += step
		for head < len(q) && q[head].at <= now {
			s.OnAck(now, &q[head].a)
			head++
		}
		if s.OnTimeout(now) > 0 {
			continue
		}
		if s.NextPacket(now, &d) == 0 {
			if head == len(q) && s.NextTimeout() == 0 {
				t.Fatalf("stalled after %d packets", i)
			}
			continue
		}
		i++
		a, _ := r.OnData(&d, false, lossEvery > 0 && i%lossEvery == 0)
		q = append(q, ackInFlight{now + refPath.BaseRTT, a})
		span = max(span, s.nextNew-s.base)
	}
	return span
}

// A 1 TiB flow's sender and receiver state is O(window), not O(size): a
// few windows of it (with trims, retransmissions and reordering) allocate
// kilobytes, where the per-packet arrays of before reserved 11 bytes per
// packet (2.9 GB for 2^28 packets) up front.
func TestHugeFlowStateIsBounded(t *testing.T) {
	p := DefaultParams()
	var s *Sender
	var r *Receiver
	create := heapAllocated(func() {
		s = NewSender(&p, Flow{ID: 1, Size: tib, Path: refPath})
		r = NewReceiver(1, s.Packets())
	})
	window := int(s.Cwnd()) / int(s.wire)
	var span, span2 uint32
	q := make([]ackInFlight, 0, 200*window)
	now := Time(0)
	drove := heapAllocated(func() { span = driveWindows(t, s, r, 20*window, 37, q, &now) })
	// 200 more windows: the steady state allocates (next to) nothing more.
	more := heapAllocated(func() { span2 = driveWindows(t, s, r, 200*window, 37, q, &now) })
	span = max(span, span2)
	t.Logf("1 TiB flow (%d packets, window %d packets): %d B to create sender+receiver, %d B to drive 20 windows, %d B for 200 more (%d transmissions, %d retransmitted, max span %d packets)",
		s.Packets(), window, create, drove, more, s.Stats.Sent+s.Stats.Retx, s.Stats.Retx, span)
	if s.Stats.Retx == 0 || s.acked < uint32(200*window) {
		t.Fatalf("the drive did nothing useful: %+v", s.Stats)
	}
	// O(window): a few hundred bytes per packet of window at most.
	if limit := uint64(64 << 10); create > limit || drove > limit || more > limit {
		t.Errorf("state grows with the flow: %d B to create, %d B to drive, %d B to drive on; want at most %d B each", create, drove, more, limit)
	}
	if span > uint32(4*window) {
		t.Errorf("span %d packets for a window of %d", span, window)
	}
	// The send-order FIFO stays within a few windows too (it held an entry
	// per packet sent until 1024 were dead: 8 KB for each flow of 512 packets).
	if c := cap(s.order); c > 4*window+64 {
		t.Errorf("send-order FIFO capacity %d entries for a window of %d packets", c, window)
	}
}

// Even when the lowest packet is lost again and again while everything
// above it is delivered, the span stops at MaxSpan: the sender's ring and
// the receiver's bitmap stay bounded whatever the flow size.
func TestSpanIsCapped(t *testing.T) {
	p := DefaultParams()
	p.RTO = Second // never time out during the test
	s := NewSender(&p, Flow{ID: 1, Size: tib, Path: refPath})
	r := NewReceiver(1, s.Packets())
	var d Data
	now := Time(0)
	sent := 0
	for s.CanSend(now) {
		now += 1000
		s.NextPacket(now, &d)
		sent++
		if d.PSN == 0 {
			continue // lost
		}
		a, _ := r.OnData(&d, false, false)
		s.OnAck(now, &a)
	}
	if sent != MaxSpan || s.nextNew-s.base != MaxSpan {
		t.Fatalf("sent %d packets, span %d; want both MaxSpan = %d", sent, s.nextNew-s.base, MaxSpan)
	}
	if len(s.ring) != MaxSpan || r.got.size() != MaxSpan {
		t.Errorf("sender ring %d, receiver bitmap %d entries; want %d", len(s.ring), r.got.size(), MaxSpan)
	}
	// A packet beyond the receiver's range is NACKed, not acknowledged.
	far := Data{Flow: 1, PSN: MaxSpan, Payload: 4096}
	if a, _ := r.OnData(&far, false, false); !a.Nack || a.CumAck != 0 {
		t.Errorf("PSN %d with cum 0: %+v, want a NACK", far.PSN, a)
	}
	// The lost packet arrives at last: the receiver's cumulative point jumps
	// over the whole span and the sender goes on.
	d = Data{Flow: 1, PSN: 0, Payload: 4096, SentAt: s.slot(0).sentAt}
	a, _ := r.OnData(&d, false, false)
	if a.CumAck != MaxSpan {
		t.Fatalf("cumulative ACK %d, want %d", a.CumAck, MaxSpan)
	}
	s.OnAck(now, &a)
	if s.base != MaxSpan || !s.CanSend(now) {
		t.Errorf("base %d, can send %v", s.base, s.CanSend(now))
	}
}

// Receiver: out-of-order arrivals across ring growth and wrap-around keep
// every bit in place.
func TestReceiverRing(t *testing.T) {
	const n = 5000
	r := NewReceiver(1, n)
	// Deliver in blocks of 300, each block in reverse: the ring must grow to
	// hold a block and wrap many times.
	var got []uint32
	for b := 0; b < n; b += 300 {
		for i := min(b+300, n) - 1; i >= b; i-- {
			d := Data{PSN: uint32(i), Payload: 1}
			a, done := r.OnData(&d, false, false)
			if done != (len(got) == n-1) {
				t.Fatalf("psn %d: done %v after %d", i, done, len(got))
			}
			got = append(got, a.CumAck)
			// Duplicates change nothing.
			if b2, _ := r.OnData(&d, false, false); b2.CumAck != a.CumAck {
				t.Fatalf("duplicate %d moved cum %d -> %d", i, a.CumAck, b2.CumAck)
			}
		}
		if c := got[len(got)-1]; c != uint32(min(b+300, n)) {
			t.Fatalf("after block %d: cum %d", b, c)
		}
	}
	if r.Bytes() != n || !r.Done() || len(r.got.w) > 8 {
		t.Errorf("bytes %d done %v ring %d words", r.Bytes(), r.Done(), len(r.got.w))
	}
}
