package transport

import "testing"

// BenchmarkSendAckCycle measures one packet's trip through the sender and
// receiver state machines (send, receive, ACK). It must not allocate.
func BenchmarkSendAckCycle(b *testing.B) {
	p := DefaultParams()
	s := NewSender(&p, Flow{ID: 1, Size: 1 << 30, Path: refPath})
	r := NewReceiver(1, s.Packets())
	var d Data
	now := Time(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now += 332000
		if s.NextPacket(now, &d) == 0 {
			b.Fatal("window closed")
		}
		a, _ := r.OnData(&d, i%7 == 0, false)
		s.OnAck(now+refPath.BaseRTT, &a)
		if s.Done() {
			s = NewSender(&p, Flow{ID: 1, Size: 1 << 30, Path: refPath})
			r = NewReceiver(1, s.Packets())
		}
	}
}
