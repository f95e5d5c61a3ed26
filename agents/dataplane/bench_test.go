package dataplane

import (
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/agents/transport"
)

// BenchmarkLoopback sends one flow of b.N full packets (4 KiB payload, so
// about 1 GiB at a quarter million packets) between two engines on 127.0.0.1
// and reports data packets per second. Allocations are counted over the whole
// process: both engines, their readers, both directions.
func BenchmarkLoopback(b *testing.B) {
	for _, bc := range []struct {
		name    string
		rateBps int64
	}{
		{"unpaced", 0},
		{"paced-2G", 2e9}, // NIC pacing: achieved Mb/s (payload) vs 2 Gb/s (wire)
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := testParams(transport.NSCC, transport.REPS)
			cfg := Config{Addr: lo4, RateBps: bc.rateBps, Params: p, RunID: 1}
			a, r := startEngine(b, cfg), startEngine(b, cfg)
			spec := FlowSpec{ID: 1, Dst: r.LocalAddr(), Size: int64(b.N) * int64(p.MTU),
				BaseRTT: 500 * transport.Microsecond, RateBps: 10e9}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			if err := a.StartFlow(spec); err != nil {
				b.Fatal(err)
			}
			c := collect(b, a, 1, 10*time.Minute)[0]
			elapsed := time.Since(start)
			b.StopTimer()
			if c.Err != nil {
				b.Fatal(c.Err)
			}
			st := a.Stats()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pkts/s")
			b.ReportMetric(float64(spec.Size)*8/elapsed.Seconds()/1e6, "Mb/s")
			b.ReportMetric(float64(st.DataRetx)/float64(b.N), "retx/pkt")
		})
	}
}
