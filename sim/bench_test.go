package sim

import (
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

func benchPermutation(b *testing.B, spec string, shards int) {
	f, err := inventory.ParseSpec(spec)
	if err != nil {
		b.Fatal(err)
	}
	m := workloads.Permutation(f, 2<<20, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := New(Config{Fabric: f, Matrix: m, Transport: transport.DefaultParams(), Seed: 1, Shards: shards})
		if err != nil {
			b.Fatal(err)
		}
		r := s.Run()
		b.ReportMetric(float64(r.Events)/r.Wall.Seconds(), "events/s")
		b.ReportMetric(float64(r.Events), "events")
	}
}

// BenchmarkPermutation128: 128-host fat tree, 2 MiB permutation.
func BenchmarkPermutation128(b *testing.B) {
	benchPermutation(b, "fattree:hosts=128,tiers=3,gbps=100", 0)
}

// BenchmarkPermutation1024 is the benchmark (also run by task bench
// through the CLI, which reports peak RSS).
func BenchmarkPermutation1024(b *testing.B) {
	if testing.Short() {
		b.Skip("-short: the 1024-host benchmark takes a few seconds")
	}
	benchPermutation(b, "fattree:hosts=1024,tiers=3,gbps=100", 0)
}

// BenchmarkPermutation1024Parallel: the same in the parallel mode, 8
// shards on GOMAXPROCS workers.
func BenchmarkPermutation1024Parallel(b *testing.B) {
	if testing.Short() {
		b.Skip("-short: the 1024-host benchmark takes a few seconds")
	}
	benchPermutation(b, "fattree:hosts=1024,tiers=3,gbps=100", 8)
}

// checkFlatAllocs fails the test when a stage allocates per packet: it
// counts the allocations of a run (testing.AllocsPerRun, 3 runs) of
// cfg(small) and of cfg(large), and allows the large flows 40 more per
// flow (the transport's per-flow arrays grow in a few allocations). what
// names the stage.
func checkFlatAllocs(t *testing.T, what string, flows int, small, large int64, cfg func(size int64) Config) {
	t.Helper()
	allocs := func(size int64) float64 {
		c := cfg(size)
		return testing.AllocsPerRun(3, func() {
			s, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			s.Run()
		})
	}
	a, b := allocs(small), allocs(large)
	t.Logf("%s: allocations per run: %.0f for %d KiB flows, %.0f for %d KiB flows", what, a, small>>10, b, large>>10)
	if b-a > 40*float64(flows) {
		t.Errorf("%s allocates per packet: %.0f extra allocations for %dx the packets", what, b-a, large/small)
	}
}

// TestHotPathAllocations: once the packet pool, queues and heap have grown,
// the event loop allocates nothing per packet or event. A second identical
// traffic phase must allocate (almost) nothing beyond the per-flow state.
func TestHotPathAllocations(t *testing.T) {
	f, err := inventory.ParseSpec("fattree:hosts=16,tiers=3,gbps=100")
	if err != nil {
		t.Fatal(err)
	}
	small := workloads.Permutation(f, 64<<10, 1)
	big := workloads.Permutation(f, 8<<20, 1)
	// Per-packet ACKs (the default), and coalesced ACKs with the ACK timer.
	coalesced := transport.DefaultParams()
	coalesced.AckEvery, coalesced.AckDelay = 4, 2*transport.Microsecond
	for i, tp := range []transport.Params{transport.DefaultParams(), coalesced, transport.DefaultParams(), coalesced} {
		allocs := func(m *workloads.Matrix) float64 {
			return testing.AllocsPerRun(3, func() {
				cfg := Config{Fabric: f, Matrix: m, Transport: tp, Seed: 1}
				if i == 2 { // adaptive routing on stale, weighted depths
					cfg.Routing, cfg.ARStaleness, cfg.ARWeighted = RoutingAdaptive, 1e6, true
				}
				if i == 3 { // the parallel mode: 4 shards on 2 workers
					cfg.Shards, cfg.Workers = 4, 2
				}
				s, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				s.Run()
			})
		}
		a, b := allocs(small), allocs(big)
		// 128x more packets; per-flow arrays (sent state per packet) grow in a
		// few allocations per flow, so the difference must stay tiny.
		t.Logf("case %d, ack every %d: allocations per run: %.0f for 16 x 64 KiB flows, %.0f for 16 x 8 MiB flows", i, tp.AckEvery, a, b)
		if b-a > 40*16 {
			t.Errorf("case %d, ack every %d: the event loop allocates per packet: %.0f extra allocations for 128x the packets", i, tp.AckEvery, b-a)
		}
	}
}
