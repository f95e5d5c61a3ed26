package sonic_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/drivers/sonic/testdouble"
)

// PFC (priorities, headroom, watchdog) and a queue size on a SONiC-shaped
// device: the agents' DSCP 0 is traffic class 1 by the AZURE map, so PFC
// is enabled on 1 besides the suite's 3; the headroom profile goes on the
// priority groups of 1 and 3 (the device's entries 0 and 3-4, not new
// overlapping ones), the queue profile on the queue of DSCP 0 (entry 0-2).
// Diff writes nothing; Apply writes the diff, by the YANG names; Verify
// passes; Revert restores CONFIG_DB key for key.
func TestDoubleQoS(t *testing.T) {
	d, drv := startDouble(t, testdouble.Options{Name: "leaf0", Ports: 4, TrimmingCapable: true})
	ctx := context.Background()
	y := loadYANGNames(t)
	before := dump(t, d, "CONFIG_DB")
	want := &drivers.DeviceFeatures{
		PFC: &drivers.PFC{Priorities: []int{3}, DSCPs: []int{0},
			Headroom: &drivers.PFCHeadroom{Xoff: 118000, Xon: 18000, Size: 136000},
			Watchdog: &drivers.PFCWatchdog{Detect: 300 * time.Millisecond, Restore: 400 * time.Millisecond}},
		QueueSize: &drivers.QueueSize{Bytes: 500_000, DSCPs: []int{0}},
	}
	diff, err := drv.Diff(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("diff:\n%s", diff)
	keys := map[string]drivers.Change{}
	for _, c := range diff {
		keys[c.Key] = c
	}
	for k, v := range map[string]string{
		"PORT_QOS_MAP|Ethernet12 pfc_enable":                 "1,3",
		"BUFFER_PROFILE|fabricbench_lossless_profile pool":   "ingress_lossless_pool",
		"BUFFER_PROFILE|fabricbench_lossless_profile xoff":   "118000",
		"BUFFER_PROFILE|fabricbench_lossless_profile xon":    "18000",
		"BUFFER_PROFILE|fabricbench_lossless_profile size":   "136000",
		"BUFFER_PG|Ethernet0|0 profile":                      "fabricbench_lossless_profile",
		"BUFFER_PG|Ethernet4|3-4 profile":                    "fabricbench_lossless_profile",
		"PFC_WD|Ethernet8 detection_time":                    "300",
		"PFC_WD|Ethernet8 restoration_time":                  "400",
		"BUFFER_PROFILE|fabricbench_queue_profile pool":      "egress_lossless_pool",
		"BUFFER_PROFILE|fabricbench_queue_profile static_th": "500000",
		"BUFFER_QUEUE|Ethernet12|0-2 profile":                "fabricbench_queue_profile",
	} {
		if c, ok := keys[k]; !ok || c.New != v {
			t.Errorf("diff: %s = %q, want %q", k, c.New, v)
		}
	}
	if len(keys) != len(diff) {
		t.Errorf("the diff changes a key twice")
	}
	if c := keys["BUFFER_PG|Ethernet0|0 profile"]; c.Old != "ingress_lossy_profile" {
		t.Errorf("BUFFER_PG|Ethernet0|0 was %q", c.Old)
	}
	for k := range keys {
		if strings.HasPrefix(k, "BUFFER_PG|Ethernet0|1") || strings.HasPrefix(k, "BUFFER_QUEUE|Ethernet0|1 ") || strings.HasPrefix(k, "PFC_WD|Ethernet0 action") {
			t.Errorf("diff writes %s (an overlapping entry, or a field the device has)", k)
		}
	}

	applied := applyDiff(ctx, t, d, drv, y, want, diff)
	if h := hget(t, d, "BUFFER_PROFILE|fabricbench_lossless_profile"); h["dynamic_th"] != "3" || h["xoff"] != "118000" {
		t.Errorf("lossless profile %v (dynamic_th from ingress_lossless_profile)", h)
	}
	if h := hget(t, d, "PFC_WD|Ethernet4"); h["action"] != "drop" || h["detection_time"] != "300" {
		t.Errorf("PFC_WD %v", h)
	}
	verifyApplied(ctx, t, drv, want, true)
	// Drift: the headroom profile changed behind the driver's back.
	if err := d.HSet(ctx, "CONFIG_DB", "BUFFER_PG|Ethernet8|0", "profile", "ingress_lossy_profile"); err != nil {
		t.Fatal(err)
	}
	checks, _ := drv.Verify(ctx, want)
	bad := 0
	for _, c := range checks {
		if !c.OK {
			bad++
			if c.Name != "BUFFER_PG|Ethernet8|0" {
				t.Errorf("drift check %s: %s", c.Name, c.Evidence)
			}
		}
	}
	if bad != 1 {
		t.Errorf("%d failed checks after one drift", bad)
	}
	if err := d.HSet(ctx, "CONFIG_DB", "BUFFER_PG|Ethernet8|0", "profile", "fabricbench_lossless_profile"); err != nil {
		t.Fatal(err)
	}

	if undone := revertAll(ctx, t, d, drv, y, applied, before); len(undone) != len(applied) {
		t.Errorf("reverted %d of %d changes", len(undone), len(applied))
	}

	// PFC alone: the lossless classes' egress queues (1 in 0-2; 3 in
	// 3-4, already lossless) go on the device's egress lossless profile,
	// so that they do not drop what their ingress pauses for.
	want.QueueSize = nil
	applied, err = drv.Apply(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	var egress []string
	for _, c := range applied {
		if strings.HasPrefix(c.Key, "BUFFER_QUEUE|") {
			egress = append(egress, c.String())
		}
	}
	if len(egress) != 4 || egress[0] != "~ BUFFER_QUEUE|Ethernet0|0-2 profile: egress_lossy_profile -> egress_lossless_profile" {
		t.Errorf("egress queues of the lossless classes: %q", egress)
	}
	checks, err = drv.Verify(ctx, want)
	if err != nil || len(checks) == 0 {
		t.Errorf("verify: %v %v", checks, err)
	}
	for _, c := range checks {
		if !c.OK {
			t.Errorf("verify %s: %s", c.Name, c.Evidence)
		}
	}
	revertAll(ctx, t, d, drv, y, applied, before) // the PFC run

	// A queue size with trimming (no PFC): the agents' queue, now on the
	// queue profile, trims what it would drop, as the lossy profiles do.
	tq := &drivers.DeviceFeatures{QueueSize: &drivers.QueueSize{Bytes: 500_000, DSCPs: []int{0}}, Trimming: &drivers.Trimming{Size: 90, DSCP: 46, Queue: 6}}
	d.ResetWrites()
	applied, err = drv.Apply(ctx, tq)
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := d.Writes()
	checkWrites(t, y, ws)
	if h := hget(t, d, "BUFFER_PROFILE|fabricbench_queue_profile"); h["packet_discard_action"] != "trim" || h["pool"] != "egress_lossy_pool" {
		t.Errorf("queue profile with trimming: %v", h)
	}
	revertAll(ctx, t, d, drv, y, applied, before) // the trimming run

	// What SONiC cannot do is a *drivers.CapabilityError naming the
	// feature, before anything is written.
	d.ResetWrites()
	for _, c := range []struct {
		want   *drivers.DeviceFeatures
		feat   drivers.Feature
		reason string
	}{
		{&drivers.DeviceFeatures{PFC: &drivers.PFC{DSCPs: []int{0}, Watchdog: &drivers.PFCWatchdog{Detect: 200 * time.Microsecond, Restore: 200 * time.Microsecond}}},
			drivers.FeatPFCWatchdog, "100 ms to 5 s"},
		{&drivers.DeviceFeatures{PFC: &drivers.PFC{DSCPs: []int{0}, Watchdog: &drivers.PFCWatchdog{Detect: 150 * time.Millisecond, Restore: 150 * time.Millisecond}}},
			drivers.FeatPFCWatchdog, "POLL_INTERVAL is 200 ms"},
		{&drivers.DeviceFeatures{QueueSize: &drivers.QueueSize{Bytes: 64 << 20, DSCPs: []int{0}}}, drivers.FeatQueueSize, "does not fit BUFFER_POOL|egress_lossy_pool"},
		{&drivers.DeviceFeatures{Adaptive: &drivers.Adaptive{Mode: drivers.AdaptivePacket}}, drivers.FeatAdaptive, "ARS_PROFILE"},
	} {
		_, err := drv.Diff(ctx, c.want)
		var ce *drivers.CapabilityError
		if !errors.As(err, &ce) || ce.Feature != c.feat || ce.Device != "leaf0" || !strings.Contains(ce.Reason, c.reason) {
			t.Errorf("%s: %v, want a capability error with %q", c.feat, err, c.reason)
		}
	}
	if ws, _ := d.Writes(); len(ws) > 0 {
		t.Errorf("refused requests wrote: %+v", ws)
	}
}
