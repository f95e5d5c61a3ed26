package sonic

import (
	"context"
	"testing"

	"github.com/fabricbench/fabricbench/drivers"
)

// Revert writes back the value a field had (HSET) and deletes the fields
// Apply added (HDEL), last change first.
func TestRevert(t *testing.T) {
	ctx := context.Background()
	want := &drivers.DeviceFeatures{ECMPHash: []string{"src-ip", "dst-ip"}}

	d := openTranscript(t, "revert_plain.txt")
	applied, err := d.Apply(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	undone, err := d.Revert(ctx, applied)
	if err != nil {
		t.Fatal(err)
	}
	checkDiff(t, undone, drivers.Diff{
		{Feature: drivers.FeatECMPHash, Key: "SWITCH_HASH|GLOBAL ecmp_hash", Old: "SRC_IP,DST_IP", New: "SRC_IP"},
	})
	checkCommands(t, d, "revert_plain.txt", []string{
		"sonic-db-cli CONFIG_DB HGETALL 'SWITCH_HASH|GLOBAL'",
		"sonic-db-cli CONFIG_DB HSET 'SWITCH_HASH|GLOBAL' ecmp_hash SRC_IP,DST_IP",
		"sonic-db-cli CONFIG_DB HSET 'SWITCH_HASH|GLOBAL' ecmp_hash SRC_IP",
	})

	d = openTranscript(t, "revert_fresh.txt")
	applied, err = d.Apply(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 2 {
		t.Fatalf("applied %v", applied)
	}
	undone, err = d.Revert(ctx, applied)
	if err != nil {
		t.Fatal(err)
	}
	if len(undone) != 2 || undone[0].New != "" || undone[1].New != "" {
		t.Errorf("undone %v: want both fields removed", undone)
	}
	checkCommands(t, d, "revert_fresh.txt", []string{
		"sonic-db-cli CONFIG_DB HGETALL 'SWITCH_HASH|GLOBAL'",
		"sonic-db-cli CONFIG_DB HSET 'SWITCH_HASH|GLOBAL' ecmp_hash@ SRC_IP,DST_IP lag_hash@ SRC_IP,DST_IP",
		"sonic-db-cli CONFIG_DB HDEL 'SWITCH_HASH|GLOBAL' lag_hash@",
		"sonic-db-cli CONFIG_DB HDEL 'SWITCH_HASH|GLOBAL' ecmp_hash@",
	})
	// Nothing this driver did not change is reverted.
	if _, err := d.Revert(ctx, applied); err == nil {
		t.Error("a second Revert of the same changes was accepted")
	}
	// VRFs made through the config CLI are revertible; a VRF removal is
	// not something this driver does.
	if err := d.CanRevert(drivers.Change{Feature: drivers.FeatVRF, Key: "VRF|Vrf-red", New: "present"}); err != nil {
		t.Errorf("a VRF the driver adds: %v", err)
	}
	if err := d.CanRevert(drivers.Change{Feature: drivers.FeatVRF, Key: "VRF|Vrf-red", Old: "present"}); err == nil {
		t.Error("a VRF removal counted as revertible")
	}
}
