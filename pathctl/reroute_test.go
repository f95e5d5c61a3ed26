package pathctl

import (
	"context"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/telemetry"
)

// TestRerouterHysteresisAndHoldDown feeds the controller synthetic queue
// telemetry: the pinned path's spine0 -> leaf1 link delivers half its rate
// while backlogged. With trigger 2 it moves the pair only on the second
// congested interval; when spine1 congests in turn it waits out the hold
// down, and goes back to spine0 only once spine0 has been clean for
// clear (2) intervals.
func TestRerouterHysteresisAndHoldDown(t *testing.T) {
	f, err := inventory.ParseSpec("leafspine:leaves=2,spines=2,hosts_per_leaf=1")
	if err != nil {
		t.Fatal(err)
	}
	sp0, _ := f.NodeByName("spine0")
	sp1, _ := f.NodeByName("spine1")
	leaf1, _ := f.NodeByName("leaf1")
	var steered [][]int
	const tick = 100_000 // ns
	c, err := NewRerouter(RerouterConfig{Fabric: f, Paths: []PinnedPath{{Name: "p", Src: 0, Dst: 1, Via: []int{sp0}}},
		Interval: tick, Trigger: 2, Clear: 2, HoldDown: 3 * tick,
		Steer: func(_ context.Context, path int, via []int) error {
			steered = append(steered, via)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Managed() != 1 || len(c.Targets()) != 4 {
		t.Fatalf("managed %d, targets %v", c.Managed(), c.Targets())
	}
	// congested(spine, k): does spine's link to leaf1 run at half rate,
	// backlogged, during interval k (ending at tick k)?
	congested := func(sp, k int) bool {
		switch sp {
		case sp0:
			return k == 1 || k == 2
		case sp1:
			return k >= 3
		}
		return false
	}
	out := map[int]int64{}
	busy := map[int]int64{}
	for k := 0; k <= 6; k++ {
		var batch []telemetry.Sample
		for _, l := range c.links {
			from := f.Ports[l.port].Node
			if k > 0 && f.PeerNode(l.port) == leaf1 && congested(from, k) {
				out[l.port] += int64(0.5 * l.nominal / 8 * tick / 1e9)
				busy[l.port] += tick
			}
			for _, fv := range []struct {
				field string
				v     int64
			}{{telemetry.FieldTransmitOctets, out[l.port]}, {telemetry.FieldBackloggedNs, busy[l.port]}} {
				batch = append(batch, telemetry.Sample{Time: int64(k) * tick, Target: l.target, Measurement: telemetry.MeasQueue,
					Interface: l.iface, Queue: "0", Field: fv.field, Value: fv.v})
			}
		}
		if err := c.Handle(batch); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := c.Barrier(ctx, int64(k)*tick, time.Second); err != nil {
			t.Fatalf("barrier at tick %d: %v", k, err)
		}
		cancel()
	}
	ds := c.Decisions()
	for _, d := range ds {
		t.Logf("at %d us: %s -> %s, evidence %+v", d.TimeNs/1000, d.From, d.To, d.Evidence[0])
	}
	if len(ds) != 2 || len(steered) != 2 || ds[0].AppliedNs != ds[0].TimeNs {
		t.Fatalf("%d decisions, %d steers, want 2", len(ds), len(steered))
	}
	if ds[0].TimeNs != 2*tick || ds[0].From[0] != "spine0" || ds[0].To[0] != "spine1" || steered[0][0] != sp1 {
		t.Errorf("first decision %+v, want spine0 -> spine1 at the second congested interval (200 us)", ds[0])
	}
	// spine1 is degraded from tick 4 (trigger 2); the hold down ends at
	// tick 5, and spine0, clean at ticks 3 and 4, is usable again.
	if ds[1].TimeNs != 5*tick || ds[1].To[0] != "spine0" || steered[1][0] != sp0 {
		t.Errorf("second decision %+v, want spine1 -> spine0 at 500 us, after the hold down", ds[1])
	}
	if ev := ds[0].Evidence[0]; ev.State != "degraded" || ev.BusyFrac < 0.99 || ev.RateBps > 0.51*ev.NominalBps || ev.Consecutive != 2 {
		t.Errorf("evidence %+v", ev)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.Barrier(ctx, 7*tick, time.Minute); err == nil {
		t.Error("barrier for a sample not yet seen returned")
	}
}
