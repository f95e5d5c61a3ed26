package sonic_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/drivers/sonic"
	"github.com/fabricbench/fabricbench/drivers/sonic/testdouble"
)

// TestMain lets this test binary be the SONiC test double's commands: the
// device's bin/ links sonic-db-cli, config, show and sudo to it.
func TestMain(m *testing.M) {
	if testdouble.IsTool(os.Args[0]) {
		os.Exit(testdouble.Main(os.Args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// startDouble starts a SONiC-shaped test device (redis-server, sshd) and
// opens the sonic driver on it over SSH; both end with the test.
func startDouble(t *testing.T, o testdouble.Options) (*testdouble.Device, *sonic.Driver) {
	t.Helper()
	if m := testdouble.Missing(); len(m) > 0 {
		t.Skipf("the SONiC test double needs %s (scripts/test.sh installs redis-server and openssh-server)", strings.Join(m, ", "))
	}
	o.Logf = t.Logf
	d, err := testdouble.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	drv, err := sonic.Open(d.Config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drv.Close() })
	return d, drv.(*sonic.Driver)
}

func dump(t *testing.T, d *testdouble.Device, db string) map[string]map[string]string {
	t.Helper()
	m, err := d.Dump(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// dbDiff lists the keys whose hashes differ.
func dbDiff(a, b map[string]map[string]string) []string {
	var out []string
	for k, va := range a {
		if vb, ok := b[k]; !ok {
			out = append(out, "- "+k)
		} else if !reflect.DeepEqual(va, vb) {
			out = append(out, fmt.Sprintf("~ %s: %v -> %v", k, va, vb))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, fmt.Sprintf("+ %s %v", k, b[k]))
		}
	}
	sort.Strings(out)
	return out
}

// verifyApplied fails the test unless every Verify check of want passes
// and, with again, a second Diff finds nothing left to change.
func verifyApplied(ctx context.Context, t *testing.T, drv *sonic.Driver, want *drivers.DeviceFeatures, again bool) {
	t.Helper()
	checks, err := drv.Verify(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if !c.OK {
			t.Errorf("verify %s: %s", c.Name, c.Evidence)
		}
	}
	if !again {
		return
	}
	if left, err := drv.Diff(ctx, want); err != nil || len(left) > 0 {
		t.Errorf("second diff: %v %v", left, err)
	}
}

func hget(t *testing.T, d *testdouble.Device, key string) map[string]string {
	t.Helper()
	m, err := d.HGetAll(context.Background(), "CONFIG_DB", key)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// applyDiff checks that Diff wrote nothing, applies want and checks that
// Apply made exactly the diff, every write by SONiC's YANG names; it
// returns what was applied.
func applyDiff(ctx context.Context, t *testing.T, d *testdouble.Device, drv *sonic.Driver, y *yangNames, want *drivers.DeviceFeatures, diff drivers.Diff) drivers.Diff {
	t.Helper()
	if ws, _ := d.Writes(); len(ws) > 0 {
		t.Fatalf("Diff wrote: %+v", ws)
	}
	applied, err := drv.Apply(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if applied.String() != diff.String() {
		t.Errorf("Apply changed\n%s\nnot the diff\n%s", applied, diff)
	}
	ws, err := d.Writes()
	if err != nil {
		t.Fatal(err)
	}
	checkWrites(t, y, ws)
	return applied
}

// revertAll reverts applied (each change revertible), writing by the
// YANG names, and checks that CONFIG_DB is as before, key for key; it
// returns what was undone.
func revertAll(ctx context.Context, t *testing.T, d *testdouble.Device, drv *sonic.Driver, y *yangNames, applied drivers.Diff, before map[string]map[string]string) drivers.Diff {
	t.Helper()
	for _, c := range applied {
		if err := drv.CanRevert(c); err != nil {
			t.Errorf("CanRevert %s: %v", c, err)
		}
	}
	d.ResetWrites()
	undone, err := drv.Revert(ctx, applied)
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := d.Writes()
	checkWrites(t, y, ws)
	if got := dbDiff(before, dump(t, d, "CONFIG_DB")); len(got) > 0 {
		t.Errorf("CONFIG_DB after Revert differs from before:\n%s", strings.Join(got, "\n"))
	}
	return undone
}

// features are one of each feature the driver configures (VRFs apart:
// TestDoubleVRF).
func features() *drivers.DeviceFeatures {
	loc := netip.MustParsePrefix("fd00:bbbb:1::/48")
	return &drivers.DeviceFeatures{
		ECMPHash: drivers.FiveTuple(),
		SRv6: &drivers.SRv6{Locator: "loc1", Prefix: loc, BlockLen: 32, NodeLen: 16, SIDs: []drivers.SID{
			{Addr: loc, Behavior: "uN"},
			{Addr: netip.MustParsePrefix("fd00:bbbb:1:e000::/64"), Behavior: "uDT46", VRF: "default"},
		}},
		ECN:      &drivers.ECN{MinBytes: 150_000, MaxBytes: 1_500_000, MaxProbPercent: 20},
		PFC:      &drivers.PFC{Priorities: []int{3}},
		Trimming: &drivers.Trimming{Size: 256, DSCP: 12, Queue: 6},
	}
}

// The driver's features on a SONiC-shaped device: the diff names every
// change and writes nothing; Apply writes exactly it (every CONFIG_DB
// write checked against SONiC's YANG model names); Verify reads it back;
// a second Diff is empty; Revert restores CONFIG_DB key for key; drift
// behind the driver's back fails Verify naming the key.
func TestDoubleFeatures(t *testing.T) {
	d, drv := startDouble(t, testdouble.Options{Name: "leaf0", TrimmingCapable: true})
	ctx := context.Background()
	y := loadYANGNames(t)
	caps, err := drv.Capabilities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []drivers.Feature{drivers.FeatECMPHash, drivers.FeatVRF, drivers.FeatSRv6, drivers.FeatECN, drivers.FeatPFC, drivers.FeatTrimming} {
		if !caps[f].Supported {
			t.Errorf("capability %s: %+v", f, caps[f])
		}
	}
	facts, err := drv.Facts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(facts.Interfaces) != 8 || !strings.Contains(facts.OSVersion, "testdouble") {
		t.Errorf("facts %+v", facts)
	}
	before := dump(t, d, "CONFIG_DB")
	want := features()

	diff, err := drv.Diff(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("diff:\n%s", diff)
	keys := map[string]bool{}
	for _, c := range diff {
		keys[c.Key] = true
	}
	for _, k := range []string{
		"SWITCH_HASH|GLOBAL ecmp_hash", "SWITCH_HASH|GLOBAL lag_hash",
		"SRV6_MY_LOCATORS|loc1 prefix", "SRV6_MY_SIDS|loc1|fd00:bbbb:1::/48 action", "SRV6_MY_SIDS|loc1|fd00:bbbb:1:e000::/64 decap_vrf",
		"WRED_PROFILE|AZURE_LOSSLESS ecn", "WRED_PROFILE|AZURE_LOSSLESS green_min_threshold", "QUEUE|Ethernet28|3-4 wred_profile",
		"PORT_QOS_MAP|Ethernet0 pfc_enable", "SWITCH_TRIMMING|GLOBAL size", "BUFFER_PROFILE|egress_lossy_profile packet_discard_action",
	} {
		if !keys[k] {
			t.Errorf("the diff does not name %s", k)
		}
	}
	if keys["BUFFER_PROFILE|ingress_lossy_profile packet_discard_action"] {
		t.Error("trimming on an ingress profile")
	}
	if got := dbDiff(before, dump(t, d, "CONFIG_DB")); len(got) > 0 {
		t.Fatalf("Diff changed CONFIG_DB: %v", got)
	}

	applied := applyDiff(ctx, t, d, drv, y, want, diff)
	if h := hget(t, d, "SWITCH_HASH|GLOBAL"); h["ecmp_hash@"] != "SRC_IP,DST_IP,L4_SRC_PORT,L4_DST_PORT,IP_PROTOCOL" {
		t.Errorf("SWITCH_HASH|GLOBAL %v", h)
	}
	if h := hget(t, d, "SRV6_MY_LOCATORS|loc1"); h["prefix"] != "fd00:bbbb:1::" || h["block_len"] != "32" || h["node_len"] != "16" {
		t.Errorf("SRV6_MY_LOCATORS|loc1 %v", h)
	}
	if h := hget(t, d, "SRV6_MY_SIDS|loc1|fd00:bbbb:1:e000::/64"); h["action"] != "uDT46" || h["decap_vrf"] != "default" {
		t.Errorf("uDT46 SID %v", h)
	}
	if h := hget(t, d, "WRED_PROFILE|AZURE_LOSSLESS"); h["ecn"] != "ecn_all" || h["green_max_threshold"] != "1500000" || h["green_drop_probability"] != "20" {
		t.Errorf("WRED_PROFILE %v", h)
	}
	if h := hget(t, d, "QUEUE|Ethernet4|3-4"); h["wred_profile"] != "AZURE_LOSSLESS" || h["scheduler"] != "scheduler.1" {
		t.Errorf("QUEUE|Ethernet4|3-4 %v", h)
	}
	if h := hget(t, d, "PORT_QOS_MAP|Ethernet8"); h["pfc_enable"] != "3" {
		t.Errorf("PORT_QOS_MAP %v", h)
	}
	if h := hget(t, d, "SWITCH_TRIMMING|GLOBAL"); h["size"] != "256" || h["dscp_value"] != "12" || h["queue_index"] != "6" {
		t.Errorf("SWITCH_TRIMMING %v", h)
	}
	if h := hget(t, d, "BUFFER_PROFILE|egress_lossy_profile"); h["packet_discard_action"] != "trim" {
		t.Errorf("egress lossy profile %v", h)
	}

	verifyApplied(ctx, t, drv, want, true)

	// Drift: someone turns ECN off behind the driver's back.
	if err := d.HSet(ctx, "CONFIG_DB", "WRED_PROFILE|AZURE_LOSSLESS", "ecn", "ecn_none"); err != nil {
		t.Fatal(err)
	}
	checks, _ := drv.Verify(ctx, want)
	failed := 0
	for _, c := range checks {
		if !c.OK {
			failed++
			if c.Name != "WRED_PROFILE|AZURE_LOSSLESS" || !strings.Contains(c.Evidence, `ecn="ecn_none"`) {
				t.Errorf("drift check %s: %s", c.Name, c.Evidence)
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d failed checks after one drift", failed)
	}
	if err := d.HSet(ctx, "CONFIG_DB", "WRED_PROFILE|AZURE_LOSSLESS", "ecn", "ecn_all"); err != nil {
		t.Fatal(err)
	}

	// Revert: CONFIG_DB as before, key for key.
	if undone := revertAll(ctx, t, d, drv, y, applied, before); len(undone) != len(applied) {
		t.Errorf("reverted %d of %d changes", len(undone), len(applied))
	}
}

// VRFs through SONiC's config CLI: the VRF is created, the interface
// bound (its addresses go, as on SONiC, and the diff names them), all
// written by the YANG names; Revert unbinds, writes the addresses back and
// deletes the VRF.
func TestDoubleVRF(t *testing.T) {
	d, drv := startDouble(t, testdouble.Options{Name: "leaf1"})
	ctx := context.Background()
	before := dump(t, d, "CONFIG_DB")
	want := &drivers.DeviceFeatures{
		VRFs: []drivers.VRF{{Name: "Vrf-red", Interfaces: []string{"Ethernet4"}}},
		SRv6: &drivers.SRv6{Locator: "loc1", Prefix: netip.MustParsePrefix("fd00:bbbb:2::/48"), SIDs: []drivers.SID{
			{Addr: netip.MustParsePrefix("fd00:bbbb:2:e001::/64"), Behavior: "uDT46", VRF: "Vrf-red"},
		}},
	}
	diff, err := drv.Diff(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("diff:\n%s", diff)
	if !strings.Contains(diff.String(), "+ VRF|Vrf-red = present") || !strings.Contains(diff.String(), "+ INTERFACE|Ethernet4 vrf_name = Vrf-red") ||
		!strings.Contains(diff.String(), "- INTERFACE|Ethernet4|10.0.0.2/31 (was present)") {
		t.Errorf("diff %s", diff)
	}
	applied, err := drv.Apply(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if h := hget(t, d, "VRF|Vrf-red"); len(h) == 0 {
		t.Error("VRF|Vrf-red not created")
	}
	if h := hget(t, d, "INTERFACE|Ethernet4"); h["vrf_name"] != "Vrf-red" {
		t.Errorf("INTERFACE|Ethernet4 %v", h)
	}
	if h := hget(t, d, "INTERFACE|Ethernet4|10.0.0.2/31"); len(h) != 0 {
		t.Errorf("Ethernet4 kept its address after the bind: %v", h)
	}
	if h := hget(t, d, "SRV6_MY_SIDS|loc1|fd00:bbbb:2:e001::/64"); h["decap_vrf"] != "Vrf-red" {
		t.Errorf("uDT46 SID %v", h)
	}
	ws, _ := d.Writes()
	checkWrites(t, loadYANGNames(t), ws)
	verifyApplied(ctx, t, drv, want, true)
	// Revert: the interface unbound, its address written back, the VRF
	// deleted: CONFIG_DB as before, key for key.
	undone := revertAll(ctx, t, d, drv, loadYANGNames(t), applied, before)
	t.Logf("reverted:\n%s", undone)
}

// Without SWITCH_TRIMMING_CAPABLE in STATE_DB, trimming is a capability
// error quoting STATE_DB, before anything is written.
func TestDoubleTrimmingNotCapable(t *testing.T) {
	d, drv := startDouble(t, testdouble.Options{Name: "leaf2"})
	ctx := context.Background()
	_, err := drv.Apply(ctx, &drivers.DeviceFeatures{Trimming: &drivers.Trimming{Size: 256, DSCP: 12, Queue: 6}})
	var ce *drivers.CapabilityError
	if !errors.As(err, &ce) || ce.Feature != drivers.FeatTrimming || !strings.Contains(ce.Reason, `SWITCH_TRIMMING_CAPABLE="false"`) || ce.Device != "leaf2" {
		t.Errorf("trimming on an incapable switch: %v", err)
	}
	if ws, _ := d.Writes(); len(ws) > 0 {
		t.Errorf("written: %+v", ws)
	}
	caps, err := drv.Capabilities(ctx)
	if err != nil || caps[drivers.FeatTrimming].Supported {
		t.Errorf("capabilities %v %v", caps, err)
	}
}

// WRED on the queues the device's own QoS maps give the traffic's DSCPs:
// with SONiC's AZURE maps DSCP 0 is queue 1 and DSCP 46 queue 5.
func TestDoubleECNByDSCP(t *testing.T) {
	d, drv := startDouble(t, testdouble.Options{Name: "leaf3", Ports: 2})
	ctx := context.Background()
	want := &drivers.DeviceFeatures{ECN: &drivers.ECN{MinBytes: 10_000, MaxBytes: 40_000, MaxProbPercent: 100, DSCPs: []int{0, 46}}}
	diff, err := drv.Apply(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"QUEUE|Ethernet0|1 wred_profile", "QUEUE|Ethernet0|5 wred_profile", "QUEUE|Ethernet4|1 wred_profile", "QUEUE|Ethernet4|5 wred_profile"} {
		if !strings.Contains(diff.String(), k) {
			t.Errorf("applied %s, not %s", diff, k)
		}
	}
	if strings.Contains(diff.String(), "3-4") {
		t.Errorf("WRED on the RoCE queues, which DSCP 0 and 46 do not use: %s", diff)
	}
	if h := hget(t, d, "QUEUE|Ethernet4|1"); h["wred_profile"] != "AZURE_LOSSLESS" || h["scheduler"] != "scheduler.0" {
		t.Errorf("QUEUE|Ethernet4|1 %v", h)
	}
	verifyApplied(ctx, t, drv, want, false)
	ws, _ := d.Writes()
	checkWrites(t, loadYANGNames(t), ws)
}
