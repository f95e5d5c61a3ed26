package hwbackend

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/drivers/sonic/testdouble"
	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/hostdeploy"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/inventory"
)

// parseInventory parses an inventory's text and builds its fabric.
func parseInventory(t *testing.T, text string) (*inventory.Hardware, *inventory.Fabric) {
	t.Helper()
	hw, err := inventory.ParseHardware("inv.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	f, err := hw.Fabric()
	if err != nil {
		t.Fatal(err)
	}
	return hw, f
}

// loadInventory loads an inventory file (every registered platform) and
// builds its fabric.
func loadInventory(t *testing.T, path string) (*inventory.Hardware, *inventory.Fabric) {
	t.Helper()
	hw, err := inventory.LoadHardware(path, drivers.Platforms()...)
	if err != nil {
		t.Fatal(err)
	}
	f, err := hw.Fabric()
	if err != nil {
		t.Fatal(err)
	}
	return hw, f
}

// The mapping of suite features onto one switch, without devices.
func TestDeviceFeatures(t *testing.T) {
	hw, f := parseInventory(t, doubleInventory("Ethernet0", 22, "/nonexistent/kh", "/nonexistent/key"))
	qref := QueueRefBytes(f, hostdeploy.Costs{HopPs: 1_000_000, EndpointPs: 150_000_000})
	// 100G * (150 us + 2 * 1 * 1 us) / 8 = 1.9 MB
	if qref != 1_900_000 {
		t.Errorf("reference queue %d bytes, want 1900000", qref)
	}
	leaf := hw.Device("leaf0")
	feat := runspec.Features{ECMPHash: drivers.FiveTuple(), ECN: true, KMin: 0.2, KMax: 0.8, Trimming: true,
		VRFs: []runspec.VRF{{Name: "red", Table: 10, Hosts: []int{1}}}}
	want, err := DeviceFeatures(f, hw, leaf, feat, qref)
	if err != nil {
		t.Fatal(err)
	}
	if want.ECN == nil || want.ECN.MinBytes != 380_000 || want.ECN.MaxBytes != 1_520_000 || want.ECN.MaxProbPercent != 100 || !reflect.DeepEqual(want.ECN.DSCPs, []int{0}) {
		t.Errorf("ECN %+v", want.ECN)
	}
	// Trimmed to the agents' headers: Ethernet 14 + IPv4 20 + UDP 8 + 48.
	if want.Trimming == nil || want.Trimming.Size != 90 || want.Trimming.Queue != TrimQueue {
		t.Errorf("trimming %+v", want.Trimming)
	}
	// host1 is on Ethernet4: SONiC's VRF name has its prefix.
	if len(want.VRFs) != 1 || want.VRFs[0].Name != "Vrf-red" || !reflect.DeepEqual(want.VRFs[0].Interfaces, []string{"Ethernet4"}) || want.VRFs[0].Table != 10 {
		t.Errorf("VRFs %+v", want.VRFs)
	}
	feat.VRFs[0].Leak = []string{"default"}
	_, err = DeviceFeatures(f, hw, leaf, feat, qref)
	var ce *drivers.CapabilityError
	if !errors.As(err, &ce) || ce.Device != "leaf0" || ce.Platform != "sonic" || ce.Feature != drivers.FeatVRF {
		t.Errorf("a leaking VRF: %v", err)
	}
	if !strings.Contains(refusal(err).Error(), "leaf0 (platform sonic) cannot do vrf") {
		t.Errorf("refusal: %v", refusal(err))
	}
}

// doubleInventory is an inventory of one SONiC leaf (the test double's
// sshd on loopback) and two hosts, which Configure never contacts.
func doubleInventory(hostPort string, port int, knownHosts, key string) string {
	_ = hostPort
	return fmt.Sprintf(`name: double
known_hosts: %s
default_speed: 100G
credentials:
  td: {user: %s, key: "file:%s"}
devices:
  - {name: leaf0, platform: sonic, role: leaf, mgmt: "127.0.0.1:%d", credentials: td, ports: [{name: Ethernet0}, {name: Ethernet4}]}
  - {name: host0, platform: linux, role: host, mgmt: 198.18.250.10, credentials: td, nics: [{name: eth1, address: 198.18.251.1/31}]}
  - {name: host1, platform: linux, role: host, mgmt: 198.18.250.11, credentials: td, nics: [{name: eth1, address: 198.18.251.3/31}]}
links:
  - [host0:eth1, leaf0:Ethernet0]
  - [host1:eth1, leaf0:Ethernet4]
`, knownHosts, userName(), key, port)
}

func userName() string {
	if os.Geteuid() == 0 {
		return "root"
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "nobody"
}

// The hardware backend on a SONiC-shaped switch (drivers/sonic/testdouble,
// a test double, not SONiC): ECN/WRED and trimming mapped onto CONFIG_DB;
// without --apply the diff names every change and nothing changes; with
// it the changes are applied, read back and, at Down, reverted so that
// CONFIG_DB equals what it was; VRFs on the leaf likewise; a switch whose
// ASIC cannot trim is refused naming device, platform and feature.
func TestConfigureOnSONiCDouble(t *testing.T) {
	if m := testdouble.Missing(); len(m) > 0 {
		t.Skipf("the SONiC test double needs %s", strings.Join(m, ", "))
	}
	ctx := context.Background()
	start := func(capable bool) (*testdouble.Device, string) {
		d, err := testdouble.Start(ctx, testdouble.Options{Name: "leaf0", Ports: 2, TrimmingCapable: capable, Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Stop)
		dir := t.TempDir()
		key := filepath.Join(dir, "key")
		os.WriteFile(key, d.ClientKey(), 0o600)
		_, port, _ := strings.Cut(d.Addr(), ":")
		var p int
		fmt.Sscan(port, &p)
		inv := filepath.Join(dir, "inv.yaml")
		os.WriteFile(inv, []byte(doubleInventory("", p, d.KnownHosts(), key)), 0o644)
		return d, inv
	}
	backend := func(inv, dir string, apply bool) *Backend {
		b := New()
		b.Prepare(harness.Env{Inventory: inv, Apply: apply, Dir: dir, RunID: "t", Logf: t.Logf})
		_, f := loadInventory(t, inv)
		if err := b.Up(ctx, f); err != nil {
			t.Fatal(err)
		}
		return b
	}
	feat := runspec.Features{ECMPHash: drivers.FiveTuple(), ECN: true, KMin: 0.2, KMax: 0.8, Trimming: true}

	d, inv := start(true)
	before, err := d.Dump(ctx, "CONFIG_DB")
	if err != nil {
		t.Fatal(err)
	}

	// Without --apply: exit 2's error names every change; nothing changes.
	b := backend(inv, t.TempDir(), false)
	err = b.Configure(ctx, feat)
	var ie *harness.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("without --apply: %v", err)
	}
	for _, s := range []string{"leaf0: ~ WRED_PROFILE|AZURE_LOSSLESS ecn: ecn_none -> ecn_all", "leaf0: + QUEUE|Ethernet4|1 wred_profile = AZURE_LOSSLESS",
		"leaf0: + SWITCH_TRIMMING|GLOBAL size = 90", "leaf0: + BUFFER_PROFILE|egress_lossy_profile packet_discard_action = trim",
		"leaf0: ~ SWITCH_HASH|GLOBAL ecmp_hash: DST_IP ->", "--apply"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("without --apply the error does not name %q:\n%v", s, err)
		}
	}
	if err := b.Down(ctx); err != nil {
		t.Fatal(err)
	}
	sameDB(t, "without --apply", before, d)

	// --apply: applied, read back, restored at Down.
	dir := t.TempDir()
	b = backend(inv, dir, true)
	if err := b.Configure(ctx, feat); err != nil {
		t.Fatal(err)
	}
	if h, _ := d.HGetAll(ctx, "CONFIG_DB", "WRED_PROFILE|AZURE_LOSSLESS"); h["ecn"] != "ecn_all" || h["green_min_threshold"] != "380000" || h["green_max_threshold"] != "1520000" {
		t.Errorf("WRED profile after Configure: %v", h)
	}
	if h, _ := d.HGetAll(ctx, "CONFIG_DB", "SWITCH_TRIMMING|GLOBAL"); h["size"] != "90" || h["queue_index"] != "6" || h["dscp_value"] != "46" {
		t.Errorf("trimming after Configure: %v", h)
	}
	verify, _ := os.ReadFile(filepath.Join(dir, "config-verify.txt"))
	if !strings.Contains(string(verify), "ok   WRED_PROFILE|AZURE_LOSSLESS") || strings.Contains(string(verify), "FAIL") {
		t.Errorf("config-verify.txt:\n%s", verify)
	}
	if err := b.Down(ctx); err != nil {
		t.Fatal(err)
	}
	restore, _ := os.ReadFile(filepath.Join(dir, "config-restore.txt"))
	if !strings.Contains(string(restore), "restored ~ WRED_PROFILE|AZURE_LOSSLESS ecn: ecn_all -> ecn_none") {
		t.Errorf("config-restore.txt:\n%s", restore)
	}
	sameDB(t, "after --apply and Down", before, d)

	// A second run finds the switch as it was and changes it again.
	b = backend(inv, t.TempDir(), true)
	if err := b.Configure(ctx, feat); err != nil {
		t.Fatal(err)
	}
	if err := b.Down(ctx); err != nil {
		t.Fatal(err)
	}
	sameDB(t, "second run", before, d)

	// VRFs: on the leaf, Vrf-red with host1's port; the bind removes the
	// port's address (named in the diff); all of it reverted at Down.
	dir = t.TempDir()
	b = backend(inv, dir, true)
	if err := b.Configure(ctx, runspec.Features{VRFs: []runspec.VRF{{Name: "red", Table: 10, Hosts: []int{1}}}}); err != nil {
		t.Fatal(err)
	}
	if h, _ := d.HGetAll(ctx, "CONFIG_DB", "INTERFACE|Ethernet4"); h["vrf_name"] != "Vrf-red" {
		t.Errorf("INTERFACE|Ethernet4 after Configure: %v", h)
	}
	diff, _ := os.ReadFile(filepath.Join(dir, "config-diff.txt"))
	if !strings.Contains(string(diff), "+ VRF|Vrf-red = present") || !strings.Contains(string(diff), "- INTERFACE|Ethernet4|10.0.0.2/31 (was present)") {
		t.Errorf("config-diff.txt:\n%s", diff)
	}
	if err := b.Down(ctx); err != nil {
		t.Fatal(err)
	}
	sameDB(t, "after the VRF run", before, d)

	// PFC on the agents' class (DSCP 0: traffic class 1) and the suite's
	// 3, with headroom and the watchdog, and a queue size: applied, read
	// back, restored at Down.
	dir = t.TempDir()
	b = backend(inv, dir, true)
	qos := runspec.Features{PFC: true, PFCPriorities: []int{3}, PFCWatchdogDetect: 300_000_000_000, QueueBytes: 512 << 10}
	if err := b.Configure(ctx, qos); err != nil {
		t.Fatal(err)
	}
	for key, kv := range map[string][2]string{
		"PORT_QOS_MAP|Ethernet4":                      {"pfc_enable", "1,3"},
		"BUFFER_PROFILE|fabricbench_lossless_profile": {"xoff", "43000"},
		"BUFFER_PG|Ethernet0|0":                       {"profile", "fabricbench_lossless_profile"},
		"PFC_WD|Ethernet4":                            {"detection_time", "300"},
		"BUFFER_PROFILE|fabricbench_queue_profile":    {"static_th", "524288"},
		"BUFFER_QUEUE|Ethernet0|0-2":                  {"profile", "fabricbench_queue_profile"},
	} {
		if h, _ := d.HGetAll(ctx, "CONFIG_DB", key); h[kv[0]] != kv[1] {
			t.Errorf("%s after Configure: %v, want %s=%s", key, h, kv[0], kv[1])
		}
	}
	verify, _ = os.ReadFile(filepath.Join(dir, "config-verify.txt"))
	if !strings.Contains(string(verify), "ok   PFC_WD|Ethernet0") || strings.Contains(string(verify), "FAIL") {
		t.Errorf("config-verify.txt:\n%s", verify)
	}
	if err := b.Down(ctx); err != nil {
		t.Fatal(err)
	}
	sameDB(t, "after the PFC and queue run", before, d)

	// A watchdog faster than SONiC's: refused before anything changes.
	b = backend(inv, t.TempDir(), true)
	err = b.Configure(ctx, runspec.Features{PFC: true, PFCWatchdogDetect: 200_000_000})
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "leaf0 (platform sonic) cannot do pfc-watchdog, which the suite needs: SONiC's PFC watchdog detects a storm after 100 ms to 5 s") {
		t.Errorf("a 200us watchdog on SONiC: %v", err)
	}
	b.Down(ctx)
	sameDB(t, "after the watchdog refusal", before, d)

	// An ASIC that cannot trim: refused naming device, platform, feature.
	d2, inv2 := start(false)
	before2, _ := d2.Dump(ctx, "CONFIG_DB")
	b = backend(inv2, t.TempDir(), true)
	err = b.Configure(ctx, feat)
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "leaf0 (platform sonic) cannot do trimming") || !strings.Contains(err.Error(), "SWITCH_TRIMMING_CAPABLE") {
		t.Errorf("trimming on an incapable ASIC: %v", err)
	}
	b.Down(ctx)
	sameDB(t, "after the trimming refusal", before2, d2)
}

func sameDB(t *testing.T, what string, before map[string]map[string]string, d *testdouble.Device) {
	t.Helper()
	after, err := d.Dump(context.Background(), "CONFIG_DB")
	if err != nil {
		t.Fatal(err)
	}
	var diff []string
	for k, v := range before {
		if !reflect.DeepEqual(v, after[k]) {
			diff = append(diff, fmt.Sprintf("~ %s: %v -> %v", k, v, after[k]))
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			diff = append(diff, fmt.Sprintf("+ %s %v", k, v))
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Errorf("%s: CONFIG_DB differs from before:\n%s", what, strings.Join(diff, "\n"))
	}
}

// writeSuite writes the suite file path on the inventory file inv (a
// name relative to the suite): a permutation of 256 KiB with NSCC over
// OPS, ECMP on the 5-tuple and the given lines under features (each
// "  key: value\n"). It returns path.
func writeSuite(path, inv, features string) string {
	os.WriteFile(path, []byte(`name: `+strings.TrimSuffix(filepath.Base(path), ".yaml")+`
fabric: {inventory: `+inv+`}
features:
  ecmp: {hash: [src-ip, dst-ip, protocol, src-port, dst-port]}
`+features+`transport: {cc: nscc, lb: ops, mtu: 8192}
telemetry: {interval: 5ms}
jobs:
  - {name: perm, workload: permutation, size: 256KiB}
`), 0o644)
	return path
}

// ECN and trimming follow the devices on hardware: left at their default
// they are off (with a note saying why), and a suite may turn them on.
func TestPlanECNTrimmingByDevice(t *testing.T) {
	dir := t.TempDir()
	inv := filepath.Join(dir, "inv.yaml")
	os.WriteFile(inv, []byte(doubleInventory("", 22, filepath.Join(dir, "kh"), filepath.Join(dir, "key"))), 0o644)
	write := func(name, features string) string { return writeSuite(filepath.Join(dir, name), "inv.yaml", features) }
	pl, err := harness.PlanSuite(context.Background(), write("dflt.yaml", ""), Name, "")
	if err != nil {
		t.Fatal(err)
	}
	if f := pl.Points[0].Features; f.ECN || f.Trimming {
		t.Errorf("default features on hardware: ECN %v, trimming %v", f.ECN, f.Trimming)
	}
	if notes := strings.Join(pl.Notes, "\n"); !strings.Contains(notes, "features.ecn: off (on by default, but on the hardware backend only where the devices can") {
		t.Errorf("notes:\n%s", notes)
	}
	pl, err = harness.PlanSuite(context.Background(), write("on.yaml", "  ecn: {enabled: true}\n  trimming: {enabled: true}\n"), Name, "")
	if err != nil {
		t.Fatal(err)
	}
	if f := pl.Points[0].Features; !f.ECN || !f.Trimming {
		t.Errorf("enabled features on hardware: ECN %v, trimming %v", f.ECN, f.Trimming)
	}
}

// What a switch's platform never does is refused when the suite is
// planned, naming device, platform and feature, before any device is
// reached; on SONiC the same suite plans.
func TestPlanRefusesByPlatform(t *testing.T) {
	dir := t.TempDir()
	for _, platform := range []string{"sonic", "frr"} {
		inv := filepath.Join(dir, platform+".yaml")
		text := doubleInventory("", 22, filepath.Join(dir, "kh"), filepath.Join(dir, "key"))
		os.WriteFile(inv, []byte(strings.Replace(text, "platform: sonic", "platform: "+platform, 1)), 0o644)
		suite := writeSuite(filepath.Join(dir, "s-"+platform+".yaml"), platform+".yaml", "  ecn: {enabled: true}\n  trimming: {enabled: false}\n")
		_, err := harness.PlanSuite(context.Background(), suite, Name, "")
		var ie *harness.InputError
		switch {
		case platform == "sonic" && err != nil:
			t.Errorf("ECN on SONiC: %v", err)
		case platform == "frr" && (!errors.As(err, &ie) || !strings.Contains(err.Error(), "leaf0 (platform frr) cannot do ecn-wred, which the suite needs: FRR does not configure WRED/ECN")):
			t.Errorf("ECN on FRR: %v", err)
		}
	}
}

// frrInventory is a leaf-spine of FRR routers (2 leaves, 2 spines, one
// host per leaf) with SRv6 locators; Configure never contacts it.
func frrInventory(loc1 string) string {
	return fmt.Sprintf(`name: frr
known_hosts: /nonexistent/kh
default_speed: 100G
credentials:
  c: {user: fb, key: "file:/nonexistent/key"}
devices:
  - {name: leaf0, platform: frr, role: leaf, mgmt: 198.18.250.1, credentials: c, srv6_locator: "fd00:bbbb:1::/48", ports: [{name: Ethernet0, interface: eth1}, {name: Ethernet1, interface: eth2}, {name: Ethernet2, interface: eth3}]}
  - {name: leaf1, platform: frr, role: leaf, mgmt: 198.18.250.2, credentials: c, srv6_locator: "%s", ports: [{name: Ethernet0, interface: eth1}, {name: Ethernet1, interface: eth2}, {name: Ethernet2, interface: eth3}]}
  - {name: spine0, platform: frr, role: spine, mgmt: 198.18.250.3, credentials: c, srv6_locator: "fd00:bbbb:3::/48", ports: [{name: Ethernet0, interface: eth1}, {name: Ethernet1, interface: eth2}]}
  - {name: spine1, platform: frr, role: spine, mgmt: 198.18.250.4, credentials: c, ports: [{name: Ethernet0, interface: eth1}, {name: Ethernet1, interface: eth2}]}
  - {name: host0, platform: linux, role: host, mgmt: 198.18.250.10, credentials: c, nics: [{name: eth1, address: 198.18.251.1/31}]}
  - {name: host1, platform: linux, role: host, mgmt: 198.18.250.11, credentials: c, nics: [{name: eth1, address: 198.18.251.3/31}]}
links:
  - [host0:eth1, leaf0:Ethernet0]
  - [host1:eth1, leaf1:Ethernet0]
  - [leaf0:Ethernet1, spine0:Ethernet0]
  - [leaf0:Ethernet2, spine1:Ethernet0]
  - [leaf1:Ethernet1, spine0:Ethernet1]
  - [leaf1:Ethernet2, spine1:Ethernet1]
`, loc1)
}

// SRv6 paths and VRFs on FRR/Linux devices: uN SIDs from the locators,
// uDX4 on the destination leaves, steering and rules on both hosts,
// isolation rules for VRFs (leaks open them); a path through a switch
// without a locator, and locators in two blocks, are refused naming them.
func TestDeviceFeaturesSRv6(t *testing.T) {
	load := func(loc1 string) (*inventory.Hardware, *inventory.Fabric) {
		return parseInventory(t, frrInventory(loc1))
	}
	hw, f := load("fd00:bbbb:2::/48")
	node := func(name string) int { id, _ := f.NodeByName(name); return id }
	h0, h1 := f.Host(0), f.Host(1)
	if h0.Name != "host0" || h1.Name != "host1" {
		t.Fatalf("hosts %s %s", h0.Name, h1.Name)
	}
	feat := runspec.Features{SRv6: true, SRv6Paths: []runspec.SRv6Path{{Name: "p", Src: 0, Dst: 1, Via: []int{node("spine0")}}}}
	get := func(name string, feat runspec.Features) *drivers.DeviceFeatures {
		t.Helper()
		w, err := DeviceFeatures(f, hw, hw.Device(name), feat, LinkMTU)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return w
	}
	l1 := get("leaf1", feat).SRv6
	wantL1 := &drivers.SRv6{Locator: "main", Prefix: netip.MustParsePrefix("fd00:bbbb:2::/48"), BlockLen: 32, NodeLen: 16, SIDs: []drivers.SID{
		{Addr: netip.MustParsePrefix("fd00:bbbb:2::/48"), Behavior: "uN"},
		// host1 is on leaf1's port 0: function 0xe000.
		{Addr: netip.MustParsePrefix("fd00:bbbb:2:e000::/64"), Behavior: "uDX4", Nexthop: netip.MustParseAddr("198.18.251.3"), Dev: "eth1"}}}
	if !reflect.DeepEqual(l1, wantL1) {
		t.Errorf("leaf1 SRv6 %+v, want %+v", l1, wantL1)
	}
	hs := get("host0", feat)
	if len(hs.Requested()) != 1 || hs.SRv6 == nil {
		t.Fatalf("host0 %+v", hs)
	}
	// spine0 (3), leaf1 (2), leaf1's uDX4 to host1 (e000).
	wantSteer := []drivers.Steer{{Prefix: netip.MustParsePrefix("198.18.251.3/32"), Segments: []netip.Addr{netip.MustParseAddr("fd00:bbbb:3:2:e000::")}, Dev: "eth1", Table: 100}}
	wantRules := []drivers.PolicyRule{{Mark: 0x100, Table: 100, Priority: 1000, Family: 4}}
	if !reflect.DeepEqual(hs.SRv6.Steer, wantSteer) || !reflect.DeepEqual(hs.SRv6.Rules, wantRules) || len(hs.SRv6.SIDs) != 0 {
		t.Errorf("host0 steer %+v rules %+v sids %+v", hs.SRv6.Steer, hs.SRv6.Rules, hs.SRv6.SIDs)
	}
	// The reverse: host1 back through spine0 and leaf0.
	if st := get("host1", feat).SRv6.Steer; len(st) != 1 || st[0].Segments[0] != netip.MustParseAddr("fd00:bbbb:3:1:e000::") {
		t.Errorf("host1 steer %+v", st)
	}
	if sp := get("spine1", feat); sp.SRv6 != nil {
		t.Errorf("spine1 (no locator) got SRv6 %+v", sp.SRv6)
	}
	sr, _ := planSRv6(f, hw, feat)
	if sr.marks[[2]int{0, 1}] != 0x100 || sr.marks[[2]int{1, 0}] != 0x100 {
		t.Errorf("marks %v", sr.marks)
	}
	// No SRv6: hosts get nothing.
	if w := get("host0", runspec.Features{ECMPHash: drivers.FiveTuple()}); len(w.Requested()) != 0 {
		t.Errorf("host0 without SRv6: %+v", w.Requested())
	}

	// Refusals naming the switch.
	bad := feat
	bad.SRv6Paths = []runspec.SRv6Path{{Name: "p", Src: 0, Dst: 1, Via: []int{node("spine1")}}}
	if _, err := DeviceFeatures(f, hw, hw.Device("leaf0"), bad, LinkMTU); err == nil || !strings.Contains(err.Error(), "spine1 has no srv6_locator") {
		t.Errorf("a path via spine1 without a locator: %v", err)
	}
	hw2, f2 := load("fd00:cccc:2::/48")
	if _, err := DeviceFeatures(f2, hw2, hw2.Device("leaf0"), feat, LinkMTU); err == nil || !strings.Contains(err.Error(), "leaf1: srv6_locator fd00:cccc:2::/48 is not in the uSID block of leaf0's") {
		t.Errorf("two blocks: %v", err)
	}

	// VRFs on FRR: isolation rules on the leaves' host ports.
	vf := runspec.Features{VRFs: []runspec.VRF{{Name: "red", Table: 10, Hosts: []int{0}}, {Name: "blue", Table: 20, Hosts: []int{1}}}}
	w := get("leaf0", vf)
	wantIso := []drivers.IsolationRule{{In: "eth1", To: netip.MustParsePrefix("198.18.251.3/32"), Priority: 500}}
	if !reflect.DeepEqual(w.Isolation, wantIso) || len(w.VRFs) != 0 {
		t.Errorf("leaf0 isolation %+v VRFs %+v", w.Isolation, w.VRFs)
	}
	if w := get("spine0", vf); len(w.Isolation) != 0 {
		t.Errorf("spine0 isolation %+v", w.Isolation)
	}
	vf.VRFs[0].Leak = []string{"blue"}
	vf.VRFs[1].Leak = []string{"red"}
	if w := get("leaf0", vf); len(w.Isolation) != 0 {
		t.Errorf("leaking VRFs: isolation %+v", w.Isolation)
	}
}

// SRv6 paths on an inventory are planned: a path through a switch
// without a locator is refused once, naming it and the field (exit 2);
// a path through switches with locators plans.
func TestPlanSRv6(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "inv.yaml"), []byte(frrInventory("fd00:bbbb:2::/48")), 0o644)
	for _, c := range []struct{ via, want string }{{"spine0", ""}, {"spine1", "switch spine1 has no srv6_locator"}} {
		suite := writeSuite(filepath.Join(dir, "s-"+c.via+".yaml"), "inv.yaml",
			"  ecn: {enabled: false}\n  trimming: {enabled: false}\n  srv6: {usid: true, paths: [{src: host0, dst: host1, via: ["+c.via+"]}]}\n")
		_, err := harness.PlanSuite(context.Background(), suite, Name, "")
		var ie *harness.InputError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("via %s: %v", c.via, err)
		case c.want != "" && (!errors.As(err, &ie) || strings.Count(err.Error(), c.want) != 1):
			t.Errorf("via %s: %v, want one %q", c.via, err, c.want)
		}
	}
}

// PFC, queue sizes and the ECMP mode mapped onto one switch, without
// devices.
func TestDeviceQoSFeatures(t *testing.T) {
	hw, f := parseInventory(t, doubleInventory("", 22, "/nonexistent/kh", "/nonexistent/key"))
	leaf := hw.Device("leaf0")
	feat := runspec.Features{ECMPHash: drivers.FiveTuple(), PFC: true, PFCPriorities: []int{3}, PFCWatchdogDetect: 200_000_000_000, QueueBytes: 512 << 10}
	want, err := DeviceFeatures(f, hw, leaf, feat, LinkMTU)
	if err != nil {
		t.Fatal(err)
	}
	// 100G links, latency at least 1 us: 2 * 1 us * 100 Gb/s / 8 = 25000
	// bytes in flight, plus 2 * 9000.
	wantPFC := &drivers.PFC{Priorities: []int{3}, DSCPs: []int{AgentDSCP},
		Headroom: &drivers.PFCHeadroom{Xoff: 43_000, Xon: 18_000, Size: 61_000},
		Watchdog: &drivers.PFCWatchdog{Detect: 200 * time.Millisecond, Restore: 200 * time.Millisecond}}
	if !reflect.DeepEqual(want.PFC, wantPFC) {
		t.Errorf("PFC %+v %+v, want %+v %+v", want.PFC, want.PFC.Headroom, wantPFC, wantPFC.Headroom)
	}
	if q := want.QueueSize; q == nil || q.Bytes != 512<<10 || !reflect.DeepEqual(q.DSCPs, []int{AgentDSCP}) {
		t.Errorf("queue size %+v", q)
	}
	if got := want.Requested(); !reflect.DeepEqual(got, []drivers.Feature{drivers.FeatECMPHash, drivers.FeatPFC, drivers.FeatPFCWatchdog, drivers.FeatQueueSize}) {
		t.Errorf("requested %v", got)
	}
	// A longer link needs more headroom: 10 us at 400G is 1 MB in flight.
	for i := range f.Links {
		f.Links[i].RateBps, f.Links[i].LatencyPs = 400e9, 10_000_000
	}
	if want, err = DeviceFeatures(f, hw, leaf, feat, LinkMTU); err != nil || want.PFC.Headroom.Xoff != 1_018_000 {
		t.Errorf("headroom on 400G 10us links: %+v %v", want.PFC.Headroom, err)
	}

	want, err = DeviceFeatures(f, hw, leaf, runspec.Features{Adaptive: true}, LinkMTU)
	if err != nil || want.Adaptive == nil || want.Adaptive.Mode != drivers.AdaptivePacket {
		t.Errorf("adaptive: %+v %v", want.Adaptive, err)
	}
	want, err = DeviceFeatures(f, hw, leaf, runspec.Features{Flowlet: true, FlowletGap: 50_000_000}, LinkMTU)
	if err != nil || want.Adaptive == nil || want.Adaptive.Mode != drivers.AdaptiveFlowlet || want.Adaptive.FlowletGap != 50*time.Microsecond {
		t.Errorf("flowlet: %+v %v", want.Adaptive, err)
	}
	_, err = DeviceFeatures(f, hw, leaf, runspec.Features{QueueLongestPath: true}, LinkMTU)
	var ce *drivers.CapabilityError
	if !errors.As(err, &ce) || ce.Device != "leaf0" || ce.Platform != "sonic" || ce.Feature != drivers.FeatQueueSize {
		t.Errorf("longest-path queues: %v", err)
	}
}

// PFC, queue sizes and adaptive routing at plan time: what the platform's
// driver never does is refused naming device, platform and feature; what
// it may do plans (its device is checked at Configure).
func TestPlanQoSByPlatform(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		platform, features, err string
	}{
		{"sonic", "  pfc: {enabled: true, priorities: [3], watchdog: {detect: 200ms}}\n  queue: 512KiB\n", ""},
		{"frr", "  pfc: {enabled: true}\n", "leaf0 (platform frr) cannot do pfc, which the suite needs: FRR does not configure PFC"},
		{"frr", "  queue: 512KiB\n", "leaf0 (platform frr) cannot do queue-size, which the suite needs: the linux and frr drivers do not set queue sizes"},
		{"frr", "  ecmp: {hash: [src-ip, dst-ip], mode: adaptive}\n", "leaf0 (platform frr) cannot do adaptive-routing, which the suite needs: FRR installs equal-cost routes and the Linux kernel picks"},
		{"sonic", "  ecmp: {hash: [src-ip, dst-ip], mode: flowlet}\n", "leaf0 (platform sonic) cannot do adaptive-routing, which the suite needs: the sonic driver does not write SONiC's adaptive routing tables (sonic-ars"},
	} {
		inv := filepath.Join(dir, c.platform+".yaml")
		text := doubleInventory("", 22, filepath.Join(dir, "kh"), filepath.Join(dir, "key"))
		os.WriteFile(inv, []byte(strings.Replace(text, "platform: sonic", "platform: "+c.platform, 1)), 0o644)
		suite := filepath.Join(dir, "s.yaml")
		os.WriteFile(suite, []byte(`name: s
fabric: {inventory: `+c.platform+`.yaml}
features:
`+c.features+`transport: {cc: nscc, lb: ops, mtu: 8192}
telemetry: {interval: 5ms}
jobs:
  - {name: perm, workload: permutation, size: 256KiB}
`), 0o644)
		_, err := harness.PlanSuite(context.Background(), suite, Name, "")
		var ie *harness.InputError
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s %q: %v", c.platform, c.features, err)
		case c.err != "" && (!errors.As(err, &ie) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s %q: %v, want %q", c.platform, c.features, err, c.err)
		}
	}
}

// The ECMP width of a switch is its uplinks: a leaf with two spines
// spreads over two, a spine has none to spread over.
func TestECMPWidth(t *testing.T) {
	hw, f := parseInventory(t, `name: w
known_hosts: /nonexistent/kh
default_speed: 100G
credentials:
  td: {user: u, key: "file:/nonexistent/key"}
devices:
  - {name: leaf0, platform: sonic, role: leaf, mgmt: 198.18.250.1, credentials: td, ports: [{name: Ethernet0}, {name: Ethernet4}, {name: Ethernet8}]}
  - {name: spine0, platform: frr, role: spine, mgmt: 198.18.250.2, credentials: td, ports: [{name: eth1}]}
  - {name: spine1, platform: frr, role: spine, mgmt: 198.18.250.3, credentials: td, ports: [{name: eth1}]}
  - {name: host0, platform: linux, role: host, mgmt: 198.18.250.10, credentials: td, nics: [{name: eth1, address: 198.18.251.1/31}]}
links:
  - [host0:eth1, leaf0:Ethernet0]
  - [leaf0:Ethernet4, spine0:eth1]
  - [leaf0:Ethernet8, spine1:eth1]
`)
	for dev, width := range map[string]int{"leaf0": 2, "spine0": 0} {
		want, err := DeviceFeatures(f, hw, hw.Device(dev), runspec.Features{ECMPHash: drivers.FiveTuple()}, LinkMTU)
		if err != nil {
			t.Fatal(err)
		}
		if want.ECMPWidth != width {
			t.Errorf("%s: ECMP width %d, want %d", dev, want.ECMPWidth, width)
		}
	}
}
