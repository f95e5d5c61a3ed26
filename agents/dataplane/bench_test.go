package dataplane

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/agents/transport"
)

// mallocs is the process's heap allocation count.
func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

// timeFlow is a benchmark's timed part: it starts (after start, e.g. the
// peer's goroutine) spec on a and waits for it to complete, then reports
// data packets per second and the process's allocations per packet over
// b.N packets; it returns how long the flow took.
func timeFlow(b *testing.B, a *Engine, spec FlowSpec, start func()) time.Duration {
	b.ReportAllocs()
	m0 := mallocs()
	b.ResetTimer()
	t0 := time.Now()
	start()
	if err := a.StartFlow(spec); err != nil {
		b.Fatal(err)
	}
	c := collect(b, a, 1, 10*time.Minute)[0]
	elapsed := time.Since(t0)
	b.StopTimer()
	m1 := mallocs()
	if c.Err != nil {
		b.Fatal(c.Err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pkts/s")
	b.ReportMetric(float64(m1-m0)/float64(b.N), "allocs/pkt")
	return elapsed
}

// BenchmarkLoopback sends one flow of b.N full packets (4 KiB payload, so
// about 1 GiB at a quarter million packets) between two engines on 127.0.0.1
// and reports data packets per second. Allocations are counted over the whole
// process: both engines, their goroutines, both directions (allocs/pkt
// counts every one, where allocs/op rounds down).
func BenchmarkLoopback(b *testing.B) {
	for _, bc := range []struct {
		name    string
		rateBps int64
		gso     bool
	}{
		{"unpaced", 0, true},
		{"unpaced-nogso", 0, false},
		{"paced-2G", 2e9, true}, // NIC pacing: achieved Mb/s (payload) vs 2 Gb/s (wire)
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := testParams(transport.NSCC, transport.ECMP)
			cfg := Config{Addr: lo4, RateBps: bc.rateBps, Params: p, RunID: 1, DisableGSO: !bc.gso, DisableGRO: !bc.gso}
			a, r := startEngine(b, cfg), startEngine(b, cfg)
			spec := FlowSpec{ID: 1, Dst: r.LocalAddr(), Size: int64(b.N) * int64(p.MTU),
				BaseRTT: 500 * transport.Microsecond, RateBps: 10e9}
			elapsed := timeFlow(b, a, spec, func() {})
			st := a.Stats()
			b.ReportMetric(float64(spec.Size)*8/elapsed.Seconds()/1e6, "Mb/s")
			b.ReportMetric(float64(st.DataRetx)/float64(b.N), "retx/pkt")
		})
	}
}

// sink is a hand-driven receiver: a plain socket that acknowledges every
// data packet it reads (the send benchmark's peer) without allocating.
type sink struct {
	conn *net.UDPConn
	buf  []byte
	ack  []byte
}

func newSink(tb testing.TB) *sink {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	_ = c.SetReadBuffer(8 << 20)
	tb.Cleanup(func() { c.Close() })
	return &sink{conn: c, buf: make([]byte, 65536), ack: make([]byte, AckHeaderLen)}
}

func (s *sink) addr() netip.AddrPort { return s.conn.LocalAddr().(*net.UDPAddr).AddrPort() }

// serve acknowledges data packets until n distinct ones arrived.
func (s *sink) serve(n int, done chan<- error) {
	var h DataHeader
	seen := 0
	for seen < n {
		k, src, err := s.conn.ReadFromUDPAddrPort(s.buf)
		if err != nil {
			done <- err
			return
		}
		if DecodeData(s.buf[:k], &h) != nil {
			continue
		}
		if !h.Retx {
			seen++
		}
		a := AckHeader{RunID: h.RunID, Flow: h.Flow, PSN: h.PSN, CumAck: 0, Entropy: h.Entropy, Route: h.Entropy, EchoTS: h.SentAt}
		EncodeAck(s.ack, &a)
		if _, err := s.conn.WriteToUDPAddrPort(s.ack, netip.AddrPortFrom(src.Addr(), h.ReplyPort)); err != nil {
			done <- err
			return
		}
	}
	done <- nil
}

// BenchmarkSend measures the engine's send path alone: one flow of b.N
// packets to a sink that acknowledges each (the ACK path of the engine is
// measured with it). allocs/pkt counts the whole process.
func BenchmarkSend(b *testing.B) {
	p := testParams(transport.NSCC, transport.ECMP)
	a := startEngine(b, Config{Addr: lo4, Params: p, RunID: 1, EntropyPorts: 1})
	s := newSink(b)
	done := make(chan error, 1)
	timeFlow(b, a, FlowSpec{ID: 1, Dst: s.addr(), Size: int64(b.N) * int64(p.MTU), BaseRTT: 500 * transport.Microsecond, RateBps: 10e9},
		func() { go s.serve(b.N, done) })
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// blaster sends the data packets of one flow to an engine as fast as the
// engine acknowledges them (a window of 256 packets), from a plain socket,
// without allocating: the receive benchmark's peer.
func blast(tb testing.TB, to netip.AddrPort, n int, mtu int, done chan<- error) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		done <- err
		return
	}
	defer c.Close()
	_ = c.SetReadBuffer(8 << 20)
	port := c.LocalAddr().(*net.UDPAddr).AddrPort().Port()
	pkt := make([]byte, DataHeaderLen+mtu)
	abuf := make([]byte, 256)
	var a AckHeader
	acked := 0
	for psn := 0; psn < n; psn++ {
		for psn-acked >= 256 {
			k, err := c.Read(abuf)
			if err != nil {
				done <- err
				return
			}
			if DecodeAck(abuf[:k], &a) == nil {
				acked++
			}
		}
		h := DataHeader{RunID: 1, Flow: 7, PSN: uint32(psn), NPkts: uint32(n), Payload: int32(mtu), Entropy: uint16(psn), ReplyPort: port, SentAt: int64(psn), Sender: 99}
		EncodeData(pkt, &h)
		if _, err := c.WriteToUDPAddrPort(pkt, to); err != nil {
			done <- err
			return
		}
	}
	for acked < n {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		k, err := c.Read(abuf)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break // lost ACKs: the engine counted the packets anyway
			}
			done <- err
			return
		}
		if DecodeAck(abuf[:k], &a) == nil {
			acked++
		}
	}
	done <- nil
}

// BenchmarkReceive measures the engine's receive path alone: b.N data
// packets from a plain socket, each answered with an ACK. allocs/pkt counts
// the whole process.
func BenchmarkReceive(b *testing.B) {
	p := testParams(transport.NSCC, transport.ECMP)
	e := startEngine(b, Config{Addr: lo4, Params: p, RunID: 1, EntropyPorts: 1})
	done := make(chan error, 1)
	b.ReportAllocs()
	m0 := mallocs()
	b.ResetTimer()
	start := time.Now()
	go blast(b, e.LocalAddr(), b.N, p.MTU, done)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	m1 := mallocs()
	st := e.Stats()
	if st.DataRecv == 0 {
		b.Fatal("nothing received")
	}
	b.ReportMetric(float64(st.DataRecv)/elapsed.Seconds(), "pkts/s")
	b.ReportMetric(float64(m1-m0)/float64(b.N), "allocs/pkt")
}

// TestNoAllocPerPacket sends a 20,000-packet flow between two engines and
// counts the process's heap allocations meanwhile: the flow's own state
// (sender, receiver, their rings) is allocated once, nothing per packet.
func TestNoAllocPerPacket(t *testing.T) {
	p := testParams(transport.NSCC, transport.ECMP)
	cfg := Config{Addr: lo4, Params: p, RunID: 1}
	a, r := startEngine(t, cfg), startEngine(t, cfg)
	// A first flow warms up what grows once (maps, queues, rings).
	for id, pkts := range []int64{2000, 20000} {
		m0 := mallocs()
		if err := a.StartFlow(FlowSpec{ID: uint32(id + 1), Dst: r.LocalAddr(), Size: pkts * int64(p.MTU), BaseRTT: 500 * transport.Microsecond, RateBps: 10e9}); err != nil {
			t.Fatal(err)
		}
		c := collect(t, a, 1, time.Minute)[0]
		m1 := mallocs()
		if c.Err != nil {
			t.Fatal(c.Err)
		}
		per := float64(m1-m0) / float64(pkts)
		t.Logf("flow of %d packets: %d allocations (%.4f per packet); %+v", pkts, m1-m0, per, c.Stats)
		if id == 1 && per > 0.02 {
			t.Errorf("%d allocations for %d packets: the data path allocates per packet", m1-m0, pkts)
		}
	}
}
