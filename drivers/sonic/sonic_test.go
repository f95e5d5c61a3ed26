package sonic

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/scrapli/scrapligo/driver/options"
	"github.com/scrapli/scrapligo/transport"
)

const prompt = "admin@leaf1:~$ "

// transcriptConfig is leaf1 replaying testdata/name, each operation
// bounded by timeout.
func transcriptConfig(name string, timeout time.Duration) drivers.Config {
	return drivers.Config{
		Device:  "leaf1",
		Address: "192.0.2.10",
		Timeout: timeout,
		Options: []any{
			options.WithTransportType(transport.FileTransport),
			options.WithFileTransportFile(filepath.Join("testdata", name)),
			options.WithReadDelay(0),
		},
	}
}

// openTranscript opens a driver that replays testdata/name.
func openTranscript(t *testing.T, name string) *Driver {
	t.Helper()
	d, err := open(transcriptConfig(name, 5*time.Second))
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// wantSent fails the test unless the driver sent exactly want (sent).
func wantSent(t *testing.T, d *Driver, want ...string) {
	t.Helper()
	if got := sent(t, d); !reflect.DeepEqual(got, want) {
		t.Errorf("sent %q, want %q", got, want)
	}
}

// sent returns the commands the driver wrote to the transport after the
// on-open "export PAGER=cat" (bare returns left out).
func sent(t *testing.T, d *Driver) []string {
	t.Helper()
	f, ok := d.conn.Transport.Impl.(*transport.File)
	if !ok {
		t.Fatalf("transport is %T, not the file transport", d.conn.Transport.Impl)
	}
	var cmds []string
	for _, w := range f.Writes {
		if string(w) != "\n" {
			cmds = append(cmds, string(w))
		}
	}
	if len(cmds) == 0 || cmds[0] != "export PAGER=cat" {
		t.Fatalf("session did not start with export PAGER=cat: %q", cmds)
	}
	return cmds[1:]
}

// transcriptCommands returns the commands echoed after the prompt in a
// transcript, without the on-open "export PAGER=cat".
func transcriptCommands(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, line := range strings.Split(string(b), "\n") {
		if c, ok := strings.CutPrefix(line, prompt); ok && c != "" {
			cmds = append(cmds, c)
		}
	}
	if len(cmds) == 0 || cmds[0] != "export PAGER=cat" {
		t.Fatalf("%s does not start with export PAGER=cat", name)
	}
	return cmds[1:]
}

// checkCommands asserts the driver sent exactly want, and that the
// transcript holds exactly these commands (so it was replayed to its end
// and in step).
func checkCommands(t *testing.T, d *Driver, transcript string, want []string) {
	t.Helper()
	got := sent(t, d)
	if len(got) == 0 && len(want) == 0 {
		got = want // nil and empty are the same here
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("commands sent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if tc := transcriptCommands(t, transcript); !reflect.DeepEqual(tc, want) && len(tc)+len(want) > 0 {
		t.Errorf("transcript %s holds commands:\n%s\nwant:\n%s", transcript, strings.Join(tc, "\n"), strings.Join(want, "\n"))
	}
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// wantAll asks for every feature.
func wantAll() *drivers.DeviceFeatures {
	return &drivers.DeviceFeatures{
		ECMPHash: []string{"src-ip", "dst-ip", "protocol", "src-port", "dst-port", "flow-label"},
		VRFs:     []drivers.VRF{{Name: "Vrf-red", Interfaces: []string{"Ethernet4"}}},
		SRv6: &drivers.SRv6{
			Locator: "loc1", Prefix: pfx("fcbb:bbbb:1::/48"), BlockLen: 32, NodeLen: 16,
			SIDs: []drivers.SID{
				{Addr: pfx("fcbb:bbbb:1::/48"), Behavior: "uN"},
				{Addr: pfx("fcbb:bbbb:1:fe00::/64"), Behavior: "uDT46", VRF: "Vrf-red"},
			},
		},
		ECN:      &drivers.ECN{MinBytes: 500000, MaxBytes: 2000000, MaxProbPercent: 5},
		PFC:      &drivers.PFC{Priorities: []int{4, 3}},
		Trimming: &drivers.Trimming{Size: 256, DSCP: 48, Queue: 6},
	}
}

const allHash = "SRC_IP,DST_IP,IP_PROTOCOL,L4_SRC_PORT,L4_DST_PORT,IPV6_FLOW_LABEL"

var (
	capsRead  = []string{"sonic-db-cli STATE_DB HGETALL 'SWITCH_CAPABILITY|switch'"}
	portsRead = []string{"sonic-db-cli CONFIG_DB KEYS 'PORT|*'"}
	// reads of wantAll after the capability and port reads, on a device
	// without SIDs (freshReads) or with both SIDs (sidReads, upper case
	// when the keys are stored so).
	freshReads = []string{
		"sonic-db-cli CONFIG_DB HGETALL 'SWITCH_HASH|GLOBAL'",
		"sonic-db-cli CONFIG_DB HGETALL 'VRF|Vrf-red'",
		"sonic-db-cli CONFIG_DB HGETALL 'INTERFACE|Ethernet4'",
		"sonic-db-cli CONFIG_DB KEYS 'INTERFACE|Ethernet4|*'",
		"sonic-db-cli CONFIG_DB HGETALL 'INTERFACE|Ethernet4|10.0.0.3/31'",
		"sonic-db-cli CONFIG_DB HGETALL 'SRV6_MY_LOCATORS|loc1'",
		"sonic-db-cli CONFIG_DB KEYS 'SRV6_MY_SIDS|loc1|*'",
		"sonic-db-cli CONFIG_DB HGETALL 'WRED_PROFILE|AZURE_LOSSLESS'",
		"sonic-db-cli CONFIG_DB HGETALL 'QUEUE|Ethernet0|3-4'",
		"sonic-db-cli CONFIG_DB HGETALL 'QUEUE|Ethernet4|3-4'",
		"sonic-db-cli CONFIG_DB HGETALL 'PORT_QOS_MAP|Ethernet0'",
		"sonic-db-cli CONFIG_DB HGETALL 'PORT_QOS_MAP|Ethernet4'",
		"sonic-db-cli CONFIG_DB HGETALL 'SWITCH_TRIMMING|GLOBAL'",
		"sonic-db-cli CONFIG_DB KEYS 'BUFFER_PROFILE|*'",
		"sonic-db-cli CONFIG_DB HGETALL 'BUFFER_PROFILE|egress_lossy_profile'",
	}
	allWrites = []string{
		"sonic-db-cli CONFIG_DB HSET 'SWITCH_HASH|GLOBAL' ecmp_hash@ " + allHash + " lag_hash@ " + allHash,
		"sudo config vrf add Vrf-red",
		"sudo config interface vrf bind Ethernet4 Vrf-red",
		"sonic-db-cli CONFIG_DB HSET 'SRV6_MY_LOCATORS|loc1' prefix fcbb:bbbb:1:: block_len 32 node_len 16 func_len 16 arg_len 0",
		"sonic-db-cli CONFIG_DB HSET 'SRV6_MY_SIDS|loc1|fcbb:bbbb:1::/48' action uN",
		"sonic-db-cli CONFIG_DB HSET 'SRV6_MY_SIDS|loc1|fcbb:bbbb:1:fe00::/64' action uDT46 decap_vrf Vrf-red",
		"sonic-db-cli CONFIG_DB HSET 'WRED_PROFILE|AZURE_LOSSLESS' ecn ecn_all wred_green_enable true green_min_threshold 500000 green_max_threshold 2000000",
		"sonic-db-cli CONFIG_DB HSET 'QUEUE|Ethernet0|3-4' wred_profile AZURE_LOSSLESS",
		"sonic-db-cli CONFIG_DB HSET 'QUEUE|Ethernet4|3-4' wred_profile AZURE_LOSSLESS",
		"sonic-db-cli CONFIG_DB HSET 'PORT_QOS_MAP|Ethernet0' pfc_enable 3,4",
		"sonic-db-cli CONFIG_DB HSET 'PORT_QOS_MAP|Ethernet4' pfc_enable 3,4",
		"sonic-db-cli CONFIG_DB HSET 'SWITCH_TRIMMING|GLOBAL' size 256 dscp_value 48 queue_index 6",
		"sonic-db-cli CONFIG_DB HSET 'BUFFER_PROFILE|egress_lossy_profile' packet_discard_action trim",
	}
)

// sidReads are the reads of wantAll on a device that has both SIDs, keyed
// as sidKeys[0] (uN) and sidKeys[1] (uDT46), with profile the lossy buffer
// profile; Ethernet4 is already bound (its addresses are not read).
func sidReads(sidKeys [2]string, profile string) []string {
	r := append([]string(nil), freshReads[:3]...)
	r = append(r, freshReads[5:7]...)
	r = append(r,
		"sonic-db-cli CONFIG_DB HGETALL 'SRV6_MY_SIDS|loc1|"+sidKeys[0]+"'",
		"sonic-db-cli CONFIG_DB HGETALL 'SRV6_MY_SIDS|loc1|"+sidKeys[1]+"'")
	r = append(r, freshReads[7:14]...)
	return append(r, "sonic-db-cli CONFIG_DB HGETALL 'BUFFER_PROFILE|"+profile+"'")
}

var freshDiff = drivers.Diff{
	{Feature: drivers.FeatECMPHash, Key: "SWITCH_HASH|GLOBAL ecmp_hash", New: allHash},
	{Feature: drivers.FeatECMPHash, Key: "SWITCH_HASH|GLOBAL lag_hash", New: allHash},
	{Feature: drivers.FeatVRF, Key: "VRF|Vrf-red", New: "present"},
	{Feature: drivers.FeatVRF, Key: "INTERFACE|Ethernet4|10.0.0.3/31", Old: "present"},
	{Feature: drivers.FeatVRF, Key: "INTERFACE|Ethernet4 vrf_name", New: "Vrf-red"},
	{Feature: drivers.FeatSRv6, Key: "SRV6_MY_LOCATORS|loc1 prefix", New: "fcbb:bbbb:1::"},
	{Feature: drivers.FeatSRv6, Key: "SRV6_MY_LOCATORS|loc1 block_len", New: "32"},
	{Feature: drivers.FeatSRv6, Key: "SRV6_MY_LOCATORS|loc1 node_len", New: "16"},
	{Feature: drivers.FeatSRv6, Key: "SRV6_MY_LOCATORS|loc1 func_len", New: "16"},
	{Feature: drivers.FeatSRv6, Key: "SRV6_MY_LOCATORS|loc1 arg_len", New: "0"},
	{Feature: drivers.FeatSRv6, Key: "SRV6_MY_SIDS|loc1|fcbb:bbbb:1::/48 action", New: "uN"},
	{Feature: drivers.FeatSRv6, Key: "SRV6_MY_SIDS|loc1|fcbb:bbbb:1:fe00::/64 action", New: "uDT46"},
	{Feature: drivers.FeatSRv6, Key: "SRV6_MY_SIDS|loc1|fcbb:bbbb:1:fe00::/64 decap_vrf", New: "Vrf-red"},
	{Feature: drivers.FeatECN, Key: "WRED_PROFILE|AZURE_LOSSLESS ecn", Old: "ecn_none", New: "ecn_all"},
	{Feature: drivers.FeatECN, Key: "WRED_PROFILE|AZURE_LOSSLESS wred_green_enable", Old: "false", New: "true"},
	{Feature: drivers.FeatECN, Key: "WRED_PROFILE|AZURE_LOSSLESS green_min_threshold", Old: "250000", New: "500000"},
	{Feature: drivers.FeatECN, Key: "WRED_PROFILE|AZURE_LOSSLESS green_max_threshold", Old: "2097152", New: "2000000"},
	{Feature: drivers.FeatECN, Key: "QUEUE|Ethernet0|3-4 wred_profile", New: "AZURE_LOSSLESS"},
	{Feature: drivers.FeatECN, Key: "QUEUE|Ethernet4|3-4 wred_profile", New: "AZURE_LOSSLESS"},
	{Feature: drivers.FeatPFC, Key: "PORT_QOS_MAP|Ethernet0 pfc_enable", New: "3,4"},
	{Feature: drivers.FeatPFC, Key: "PORT_QOS_MAP|Ethernet4 pfc_enable", Old: "4", New: "3,4"},
	{Feature: drivers.FeatTrimming, Key: "SWITCH_TRIMMING|GLOBAL size", New: "256"},
	{Feature: drivers.FeatTrimming, Key: "SWITCH_TRIMMING|GLOBAL dscp_value", New: "48"},
	{Feature: drivers.FeatTrimming, Key: "SWITCH_TRIMMING|GLOBAL queue_index", New: "6"},
	{Feature: drivers.FeatTrimming, Key: "BUFFER_PROFILE|egress_lossy_profile packet_discard_action", New: "trim"},
}

func checkDiff(t *testing.T, got, want drivers.Diff) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
}

func TestRegistered(t *testing.T) {
	found := false
	for _, p := range drivers.Platforms() {
		found = found || p == "sonic"
	}
	if !found {
		t.Fatalf("sonic not registered: %v", drivers.Platforms())
	}
	d, err := drivers.Open("sonic", transcriptConfig("idle.txt", 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Platform() != "sonic" {
		t.Errorf("Platform() = %q", d.Platform())
	}
}

func TestDiffFresh(t *testing.T) {
	d := openTranscript(t, "diff_fresh.txt")
	diff, err := d.Diff(context.Background(), wantAll())
	if err != nil {
		t.Fatal(err)
	}
	checkDiff(t, diff, freshDiff)
	checkCommands(t, d, "diff_fresh.txt", concat(capsRead, portsRead, freshReads))
}

func TestApplyFreshThenAgain(t *testing.T) {
	d := openTranscript(t, "apply_twice.txt")
	ctx := context.Background()
	diff, err := d.Apply(ctx, wantAll())
	if err != nil {
		t.Fatal(err)
	}
	checkDiff(t, diff, freshDiff)
	again, err := d.Apply(ctx, wantAll())
	if err != nil {
		t.Fatal(err)
	}
	checkDiff(t, again, drivers.Diff{})
	checkCommands(t, d, "apply_twice.txt", concat(
		capsRead, portsRead, freshReads, allWrites,
		capsRead, portsRead, sidReads([2]string{"fcbb:bbbb:1::/48", "fcbb:bbbb:1:fe00::/64"}, "egress_lossy_profile"),
	))
}

// A device configured by someone else, with the values stored in other
// spellings: hash fields in another order, upper-case SRv6 addresses and
// keys, the old [TABLE|name] reference, TRIM in capitals, another lossy
// profile name.
func TestConfiguredDiffApplyVerify(t *testing.T) {
	d := openTranscript(t, "configured.txt")
	ctx := context.Background()
	diff, err := d.Diff(ctx, wantAll())
	if err != nil {
		t.Fatal(err)
	}
	checkDiff(t, diff, drivers.Diff{})
	applied, err := d.Apply(ctx, wantAll())
	if err != nil {
		t.Fatal(err)
	}
	checkDiff(t, applied, drivers.Diff{})
	checks, err := d.Verify(ctx, wantAll())
	if err != nil {
		t.Fatal(err)
	}
	reads := concat(capsRead, portsRead, sidReads([2]string{"FCBB:BBBB:1::/48", "FCBB:BBBB:1:FE00::/64"}, "q_lossy_profile"))
	checkCommands(t, d, "configured.txt", concat(reads, reads, reads))

	wantNames := []string{
		"SWITCH_HASH|GLOBAL", "VRF|Vrf-red", "INTERFACE|Ethernet4",
		"SRV6_MY_LOCATORS|loc1", "SRV6_MY_SIDS|loc1|FCBB:BBBB:1::/48", "SRV6_MY_SIDS|loc1|FCBB:BBBB:1:FE00::/64",
		"WRED_PROFILE|AZURE_LOSSLESS", "QUEUE|Ethernet0|3-4", "QUEUE|Ethernet4|3-4",
		"PORT_QOS_MAP|Ethernet0", "PORT_QOS_MAP|Ethernet4",
		"SWITCH_TRIMMING|GLOBAL", "BUFFER_PROFILE|q_lossy_profile",
	}
	var names []string
	features := map[drivers.Feature]bool{}
	for _, c := range checks {
		names = append(names, c.Name)
		features[c.Feature] = true
		if !c.OK {
			t.Errorf("check %s failed: %s", c.Name, c.Evidence)
		}
		if c.Device != "leaf1" {
			t.Errorf("check %s: device %q", c.Name, c.Device)
		}
	}
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("checks %q, want %q", names, wantNames)
	}
	for _, f := range wantAll().Requested() {
		if !features[f] {
			t.Errorf("no check for %s", f)
		}
	}
	evidence := map[string]string{}
	for _, c := range checks {
		evidence[c.Name] = c.Evidence
	}
	for name, frag := range map[string]string{
		"SWITCH_HASH|GLOBAL":          `ecmp_hash@="DST_IP,SRC_IP,IP_PROTOCOL,L4_DST_PORT,L4_SRC_PORT,IPV6_FLOW_LABEL"`,
		"VRF|Vrf-red":                 `exists: {NULL="NULL"}`,
		"INTERFACE|Ethernet4":         `vrf_name="Vrf-red"`,
		"SRV6_MY_LOCATORS|loc1":       `prefix="FCBB:BBBB:1::"`,
		"QUEUE|Ethernet4|3-4":         `wred_profile="[WRED_PROFILE|AZURE_LOSSLESS]"`,
		"PORT_QOS_MAP|Ethernet4":      `pfc_enable="4,3"`,
		"WRED_PROFILE|AZURE_LOSSLESS": `green_min_threshold="500000"`,
		"SWITCH_TRIMMING|GLOBAL":      `size="256" dscp_value="48" queue_index="6"`,
	} {
		if !strings.Contains(evidence[name], frag) {
			t.Errorf("evidence of %s = %q, want it to contain %q", name, evidence[name], frag)
		}
	}
}

func TestVerifyDrift(t *testing.T) {
	d := openTranscript(t, "verify_drift.txt")
	checks, err := d.Verify(context.Background(), wantAll())
	if err != nil {
		t.Fatal(err)
	}
	// Ethernet4 is in another VRF: a bind would be needed, so its
	// addresses are read (it has none).
	reads := sidReads([2]string{"fcbb:bbbb:1::/48", "fcbb:bbbb:1:fe00::/64"}, "egress_lossy_profile")
	reads = concat(reads[:3], []string{"sonic-db-cli CONFIG_DB KEYS 'INTERFACE|Ethernet4|*'"}, reads[3:])
	checkCommands(t, d, "verify_drift.txt", concat(capsRead, portsRead, reads))
	failed := map[string]string{}
	passed := map[drivers.Feature]int{}
	for _, c := range checks {
		if c.OK {
			passed[c.Feature]++
		} else {
			failed[c.Name] = c.Evidence
		}
	}
	want := map[string][]string{
		"SWITCH_HASH|GLOBAL":                      {`lag_hash@="SRC_IP,DST_IP"`, `want lag_hash="` + allHash + `"`},
		"INTERFACE|Ethernet4":                     {`vrf_name="Vrf-blue"`, `want vrf_name="Vrf-red"`},
		"SRV6_MY_SIDS|loc1|fcbb:bbbb:1:fe00::/64": {`decap_vrf="Vrf-blue"`, `want decap_vrf="Vrf-red"`},
		"WRED_PROFILE|AZURE_LOSSLESS":             {`green_max_threshold="2097152"`, `want green_max_threshold="2000000"`},
		"PORT_QOS_MAP|Ethernet4":                  {`pfc_enable="3"`, `want pfc_enable="3,4"`},
		"SWITCH_TRIMMING|GLOBAL":                  {`dscp_value="46"`, `want dscp_value="48"`},
	}
	if len(failed) != len(want) {
		t.Errorf("failed checks %v, want %d", failed, len(want))
	}
	for name, frags := range want {
		ev, ok := failed[name]
		if !ok {
			t.Errorf("check %s did not fail", name)
			continue
		}
		for _, f := range frags {
			if !strings.Contains(ev, f) {
				t.Errorf("evidence of %s = %q, want it to contain %q", name, ev, f)
			}
		}
	}
	// the undrifted keys of every feature still pass
	for _, f := range []drivers.Feature{drivers.FeatVRF, drivers.FeatSRv6, drivers.FeatECN, drivers.FeatPFC, drivers.FeatTrimming} {
		if passed[f] == 0 {
			t.Errorf("no passing check for %s", f)
		}
	}
}

// The device keeps the hash list under the plain field name: the driver
// compares against it and writes it there.
func TestECMPHashPlainField(t *testing.T) {
	d := openTranscript(t, "ecmp_plain.txt")
	want := &drivers.DeviceFeatures{ECMPHash: []string{"src-ip", "dst-ip", "src-ip"}}
	diff, err := d.Apply(context.Background(), want)
	if err != nil {
		t.Fatal(err)
	}
	checkDiff(t, diff, drivers.Diff{
		{Feature: drivers.FeatECMPHash, Key: "SWITCH_HASH|GLOBAL ecmp_hash", Old: "SRC_IP", New: "SRC_IP,DST_IP"},
	})
	checkCommands(t, d, "ecmp_plain.txt", []string{
		"sonic-db-cli CONFIG_DB HGETALL 'SWITCH_HASH|GLOBAL'",
		"sonic-db-cli CONFIG_DB HSET 'SWITCH_HASH|GLOBAL' ecmp_hash SRC_IP,DST_IP",
	})
}

// Disabling PFC (no priorities) removes pfc_enable with HDEL.
func TestPFCDisable(t *testing.T) {
	d := openTranscript(t, "pfc_disable.txt")
	diff, err := d.Apply(context.Background(), &drivers.DeviceFeatures{PFC: &drivers.PFC{}})
	if err != nil {
		t.Fatal(err)
	}
	checkDiff(t, diff, drivers.Diff{
		{Feature: drivers.FeatPFC, Key: "PORT_QOS_MAP|Ethernet4 pfc_enable", Old: "3,4"},
	})
	checkCommands(t, d, "pfc_disable.txt", []string{
		"sonic-db-cli CONFIG_DB KEYS 'PORT|*'",
		"sonic-db-cli CONFIG_DB HGETALL 'PORT_QOS_MAP|Ethernet0'",
		"sonic-db-cli CONFIG_DB HGETALL 'PORT_QOS_MAP|Ethernet4'",
		"sonic-db-cli CONFIG_DB HDEL 'PORT_QOS_MAP|Ethernet4' pfc_enable",
	})
}

func checkTrimCapErr(t *testing.T, err error, evidence string) {
	t.Helper()
	var ce *drivers.CapabilityError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T), want a *drivers.CapabilityError", err, err)
	}
	if ce.Platform != "sonic" || ce.Device != "leaf1" || ce.Feature != drivers.FeatTrimming {
		t.Errorf("capability error %+v, want sonic/leaf1/trimming", ce)
	}
	if !strings.Contains(ce.Reason, evidence) {
		t.Errorf("reason %q does not quote %q", ce.Reason, evidence)
	}
	for _, s := range []string{"leaf1", "sonic", "trimming"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}
}

// STATE_DB says SWITCH_TRIMMING_CAPABLE is false: Apply refuses before
// reading or writing anything else.
func TestTrimmingNotCapable(t *testing.T) {
	d := openTranscript(t, "trim_false.txt")
	diff, err := d.Apply(context.Background(), wantAll())
	checkTrimCapErr(t, err, `SWITCH_CAPABILITY|switch has SWITCH_TRIMMING_CAPABLE="false"`)
	if len(diff) != 0 {
		t.Errorf("Apply returned changes %v", diff)
	}
	caps, err := d.Capabilities(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s := caps[drivers.FeatTrimming]; s.Supported || !strings.Contains(s.Reason, `SWITCH_TRIMMING_CAPABLE="false"`) {
		t.Errorf("trimming support %+v", s)
	}
	checkCommands(t, d, "trim_false.txt", concat(capsRead, capsRead))
}

// STATE_DB has no SWITCH_TRIMMING_CAPABLE field (older image): the same.
func TestTrimmingCapabilityAbsent(t *testing.T) {
	d := openTranscript(t, "trim_absent.txt")
	ctx := context.Background()
	_, err := d.Diff(ctx, &drivers.DeviceFeatures{Trimming: &drivers.Trimming{Size: 256, DSCP: 48, Queue: 6}})
	checkTrimCapErr(t, err, "SWITCH_CAPABILITY|switch has no SWITCH_TRIMMING_CAPABLE field")
	_, err = d.Verify(ctx, &drivers.DeviceFeatures{Trimming: &drivers.Trimming{Size: 256, DSCP: 48, Queue: 6}})
	checkTrimCapErr(t, err, "has no SWITCH_TRIMMING_CAPABLE field")
	caps, err := d.Capabilities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s := caps[drivers.FeatTrimming]; s.Supported {
		t.Errorf("trimming supported: %+v", s)
	}
	err = drivers.CheckCapabilities("sonic", "leaf1", caps, &drivers.DeviceFeatures{Trimming: &drivers.Trimming{}})
	checkTrimCapErr(t, err, "no SWITCH_TRIMMING_CAPABLE field")
	checkCommands(t, d, "trim_absent.txt", concat(capsRead, capsRead, capsRead))
}

func TestCapabilities(t *testing.T) {
	d := openTranscript(t, "caps.txt")
	caps, err := d.Capabilities(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range drivers.AllFeatures {
		if f == drivers.FeatAdaptive {
			if caps[f].Supported || !strings.Contains(caps[f].Reason, "ARS") {
				t.Errorf("adaptive routing: %+v", caps[f])
			}
			continue
		}
		if !caps[f].Supported && f != drivers.FeatVRFRules {
			t.Errorf("%s not supported: %+v", f, caps[f])
		}
	}
	if s := caps[drivers.FeatVRFRules]; s.Supported || s.Reason == "" {
		t.Errorf("vrf-rules on SONiC: %+v, want unsupported with a reason", s)
	}
	if caps[drivers.FeatVRF].Mode != "vrf-device" {
		t.Errorf("VRF mode %q", caps[drivers.FeatVRF].Mode)
	}
	if err := drivers.CheckCapabilities("sonic", "leaf1", caps, wantAll()); err != nil {
		t.Error(err)
	}
	checkCommands(t, d, "caps.txt", capsRead)
}

func TestFacts(t *testing.T) {
	d := openTranscript(t, "facts.txt")
	f, err := d.Facts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := &drivers.Facts{
		Hostname:   "leaf1",
		Platform:   "x86_64-mlnx_msn2700-r0 (HwSKU ACS-MSN2700)",
		OSVersion:  "SONiC.202411.0-a1b2c3d4e",
		Interfaces: []string{"Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12", "Ethernet124"},
		VRFMode:    "vrf-device",
	}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("facts %+v\nwant %+v", f, want)
	}
	checkCommands(t, d, "facts.txt", []string{"show version", "hostname", "sonic-db-cli CONFIG_DB KEYS 'PORT|*'"})
}

func TestState(t *testing.T) {
	d := openTranscript(t, "state.txt")
	st, err := d.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkCommands(t, d, "state.txt", []string{
		"show interfaces status",
		"sonic-db-cli CONFIG_DB KEYS '*INTERFACE|*|*'",
		"vtysh -c 'show bgp vrf all summary json'",
		"vtysh -c 'show ip route vrf all json'",
		"vtysh -c 'show ipv6 route vrf all json'",
		"sonic-db-cli CONFIG_DB KEYS 'SRV6_MY_SIDS|*'",
		"sonic-db-cli CONFIG_DB HGETALL 'SRV6_MY_SIDS|loc1|fcbb:bbbb:1::/48'",
		"sonic-db-cli CONFIG_DB HGETALL 'SRV6_MY_SIDS|loc1|fcbb:bbbb:1:fe00::/64'",
		"sonic-db-cli APPL_DB KEYS 'LLDP_ENTRY_TABLE:*'",
		"sonic-db-cli APPL_DB HGETALL 'LLDP_ENTRY_TABLE:Ethernet0'",
		"sonic-db-cli APPL_DB HGETALL 'LLDP_ENTRY_TABLE:Ethernet4'",
		"sonic-db-cli APPL_DB HGETALL 'LLDP_ENTRY_TABLE:eth0'",
	})
	wantNbrs := []drivers.Neighbor{
		{Interface: "Ethernet0", Protocol: "lldp", System: "spine1", Port: "Ethernet8"},
		{Interface: "Ethernet4", Protocol: "lldp", System: "spine2.lab.example", Port: "swp1", PortMAC: "52:54:00:aa:bb:cd"},
		{Interface: "eth0", Protocol: "lldp", System: "oob-switch", Port: "ge-0/0/12"},
	}
	if !reflect.DeepEqual(st.Neighbors, wantNbrs) {
		t.Errorf("neighbours %+v\nwant %+v", st.Neighbors, wantNbrs)
	}

	wantLinks := []drivers.LinkState{
		{Name: "Ethernet0", Up: true, Admin: true, Addrs: []netip.Prefix{pfx("10.0.0.1/31"), pfx("fc00::2/126")}, MTU: 9100},
		{Name: "Ethernet4", Up: true, Admin: true, Addrs: []netip.Prefix{pfx("10.0.0.3/31")}, MTU: 9100},
		{Name: "Ethernet8", Up: false, Admin: true, MTU: 9100},
		{Name: "Ethernet12", Up: false, Admin: false, MTU: 9100},
		{Name: "PortChannel101", Up: true, Admin: true, Addrs: []netip.Prefix{pfx("10.0.1.1/31")}, MTU: 9100},
	}
	if !reflect.DeepEqual(st.Links, wantLinks) {
		t.Errorf("links %+v\nwant %+v", st.Links, wantLinks)
	}

	wantBGP := []drivers.BGPSession{
		{Peer: "10.0.0.0", LocalAS: 65101, RemoteAS: 65000, State: "Established", PfxReceived: 6},
		{Peer: "10.0.0.2", LocalAS: 65101, RemoteAS: 65000, State: "Active"},
		{Peer: "Ethernet8", Interface: "Ethernet8", LocalAS: 65101, RemoteAS: 65001, State: "Established", PfxReceived: 7},
		{Peer: "fc00::1", LocalAS: 65101, RemoteAS: 65000, State: "Established", PfxReceived: 4},
		{VRF: "Vrf-red", Peer: "10.10.0.1", LocalAS: 65101, RemoteAS: 65200, State: "Established", PfxReceived: 1},
	}
	if !reflect.DeepEqual(st.BGP, wantBGP) {
		t.Errorf("bgp %+v\nwant %+v", st.BGP, wantBGP)
	}

	ecmp, ok := st.Route("", pfx("10.1.0.2/32"))
	if !ok {
		t.Fatalf("no route 10.1.0.2/32 in %+v", st.Routes)
	}
	wantECMP := drivers.Route{Prefix: pfx("10.1.0.2/32"), Protocol: "bgp", Nexthops: []drivers.Nexthop{
		{Via: netip.MustParseAddr("10.0.0.0"), Dev: "Ethernet0"},
		{Via: netip.MustParseAddr("10.0.0.2"), Dev: "Ethernet4"},
	}}
	if !reflect.DeepEqual(ecmp, wantECMP) {
		t.Errorf("ECMP route %+v, want %+v", ecmp, wantECMP)
	}
	var got []string
	for _, r := range st.Routes {
		got = append(got, r.VRF+"/"+r.Prefix.String()+"/"+r.Protocol)
	}
	wantRoutes := []string{
		"/10.0.0.0/31/connected", "/10.1.0.1/32/connected", "/10.1.0.2/32/bgp", "/10.2.0.0/24/bgp",
		"/fc00::/126/connected", "/fcbb:bbbb:2::/48/bgp",
		"Vrf-red/10.10.0.0/31/connected", "Vrf-red/192.168.10.0/24/bgp",
	}
	if !reflect.DeepEqual(got, wantRoutes) {
		t.Errorf("routes %q\nwant %q", got, wantRoutes)
	}
	conn, _ := st.Route("", pfx("10.0.0.0/31"))
	if len(conn.Nexthops) != 1 || conn.Nexthops[0].Via.IsValid() || conn.Nexthops[0].Dev != "Ethernet0" {
		t.Errorf("connected route next hops %+v", conn.Nexthops)
	}
	// a route whose selected entry has one inactive next hop keeps the active one
	v6, _ := st.Route("", pfx("fcbb:bbbb:2::/48"))
	if want := []drivers.Nexthop{{Via: netip.MustParseAddr("fe80::1"), Dev: "Ethernet8"}}; !reflect.DeepEqual(v6.Nexthops, want) {
		t.Errorf("fcbb:bbbb:2::/48 next hops %+v, want %+v", v6.Nexthops, want)
	}

	wantSIDs := []drivers.SIDState{
		{Addr: pfx("fcbb:bbbb:1::/48"), Behavior: "uN"},
		{Addr: pfx("fcbb:bbbb:1:fe00::/64"), Behavior: "uDT46"},
	}
	if !reflect.DeepEqual(st.SIDs, wantSIDs) {
		t.Errorf("SIDs %+v, want %+v", st.SIDs, wantSIDs)
	}
}

func TestExec(t *testing.T) {
	d := openTranscript(t, "exec.txt")
	ctx := context.Background()
	out, err := d.Exec(ctx, "ping -c 2 -W 1 10.0.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "2 packets transmitted, 2 received, 0% packet loss") || strings.Contains(out, prompt) {
		t.Errorf("ping output %q", out)
	}
	out, err = d.Exec(ctx, "iperf3 -c 10.0.0.0")
	if err == nil || !strings.Contains(err.Error(), "iperf3 -c 10.0.0.0") || !strings.Contains(err.Error(), "command not found") {
		t.Errorf("missing command: err %v", err)
	}
	if !strings.Contains(out, "command not found") {
		t.Errorf("output %q", out)
	}
	if _, err := d.Exec(ctx, "echo a\necho b"); err == nil {
		t.Error("multi-line command accepted")
	}
	checkCommands(t, d, "exec.txt", []string{"ping -c 2 -W 1 10.0.0.0", "iperf3 -c 10.0.0.0"})
}

// Bad device replies give errors naming the command and the reply; the
// session stays usable for the next operation.
func TestMalformedReplies(t *testing.T) {
	d := openTranscript(t, "malformed.txt")
	ctx := context.Background()
	expect := func(what string, err error, frags ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		for _, f := range frags {
			if !strings.Contains(err.Error(), f) {
				t.Errorf("%s: error %q does not contain %q", what, err, f)
			}
		}
	}
	_, err := d.Diff(ctx, &drivers.DeviceFeatures{ECMPHash: []string{"src-ip"}})
	expect("truncated dict", err, `sonic-db-cli CONFIG_DB HGETALL 'SWITCH_HASH|GLOBAL'`, "unparseable", "leaf1", `'ecmp_hash@': 'SRC_IP`)
	_, err = d.Capabilities(ctx)
	expect("capabilities", err, "STATE_DB HGETALL", "unparseable", "Could not connect to Redis")
	_, err = d.Facts(ctx)
	expect("show version", err, `"show version"`, "SONiC Software Version")
	_, err = d.Apply(ctx, &drivers.DeviceFeatures{PFC: &drivers.PFC{Priorities: []int{3}}})
	expect("keys", err, `KEYS 'PORT|*'`, `"Ethernet0"`)
	_, err = d.Apply(ctx, &drivers.DeviceFeatures{VRFs: []drivers.VRF{{Name: "Vrf-red"}}})
	expect("config error", err, "sudo config vrf add Vrf-red", "failed", "Error: VRF Vrf-red")
	_, err = d.Apply(ctx, &drivers.DeviceFeatures{Trimming: &drivers.Trimming{Size: 256, DSCP: 48, Queue: 6}})
	expect("hset reply", err, "HSET 'SWITCH_TRIMMING|GLOBAL'", "WRONGTYPE")
	_, err = d.State(ctx)
	expect("interfaces table", err, `"show interfaces status"`, "Oper")
	checkCommands(t, d, "malformed.txt", []string{
		"sonic-db-cli CONFIG_DB HGETALL 'SWITCH_HASH|GLOBAL'",
		"sonic-db-cli STATE_DB HGETALL 'SWITCH_CAPABILITY|switch'",
		"show version",
		"sonic-db-cli CONFIG_DB KEYS 'PORT|*'",
		"sonic-db-cli CONFIG_DB HGETALL 'VRF|Vrf-red'",
		"sudo config vrf add Vrf-red",
		"sonic-db-cli STATE_DB HGETALL 'SWITCH_CAPABILITY|switch'",
		"sonic-db-cli CONFIG_DB HGETALL 'SWITCH_TRIMMING|GLOBAL'",
		"sonic-db-cli CONFIG_DB KEYS 'BUFFER_PROFILE|*'",
		"sonic-db-cli CONFIG_DB HGETALL 'BUFFER_PROFILE|egress_lossy_profile'",
		"sonic-db-cli CONFIG_DB HSET 'SWITCH_TRIMMING|GLOBAL' size 256 dscp_value 48 queue_index 6",
		"show interfaces status",
	})
}

// Bad BGP and route JSON from vtysh are errors naming the command.
func TestMalformedFRRJSON(t *testing.T) {
	d := openTranscript(t, "malformed_frr.txt")
	_, err := d.State(context.Background())
	if err == nil || !strings.Contains(err.Error(), "vtysh -c 'show bgp vrf all summary json'") || !strings.Contains(err.Error(), "unparseable") {
		t.Errorf("bad BGP JSON: error %v", err)
	}
	_, err = d.State(context.Background())
	if err == nil || !strings.Contains(err.Error(), "vtysh -c 'show ip route vrf all json'") || !strings.Contains(err.Error(), "10.1.0.300") {
		t.Errorf("bad route JSON: error %v", err)
	}
	first := []string{"show interfaces status", "sonic-db-cli CONFIG_DB KEYS '*INTERFACE|*|*'", "vtysh -c 'show bgp vrf all summary json'"}
	checkCommands(t, d, "malformed_frr.txt", concat(first, first, []string{"vtysh -c 'show ip route vrf all json'"}))
}

// Requests the driver refuses before sending anything.
func TestValidation(t *testing.T) {
	d := openTranscript(t, "idle.txt")
	ctx := context.Background()
	bad := map[string]struct {
		want    *drivers.DeviceFeatures
		capErr  bool
		contain string
	}{
		"vrf name":      {&drivers.DeviceFeatures{VRFs: []drivers.VRF{{Name: "red"}}}, false, `VRF name "red"`},
		"vrf too long":  {&drivers.DeviceFeatures{VRFs: []drivers.VRF{{Name: "Vrf-0123456789ab"}}}, false, "Vrf-0123456789ab"},
		"vrf twice":     {&drivers.DeviceFeatures{VRFs: []drivers.VRF{{Name: "Vrf-a"}, {Name: "Vrf-a"}}}, false, "twice"},
		"interface":     {&drivers.DeviceFeatures{VRFs: []drivers.VRF{{Name: "Vrf-a", Interfaces: []string{"eth0; reboot"}}}}, false, "not valid"},
		"hash field":    {&drivers.DeviceFeatures{ECMPHash: []string{"src-mac"}}, false, `"src-mac"`},
		"steering":      {&drivers.DeviceFeatures{SRv6: &drivers.SRv6{Locator: "loc1", Prefix: pfx("fcbb:bbbb:1::/48"), Steer: []drivers.Steer{{Prefix: pfx("10.9.0.0/24")}}}}, true, "steering"},
		"uA":            {&drivers.DeviceFeatures{SRv6: &drivers.SRv6{Locator: "loc1", Prefix: pfx("fcbb:bbbb:1::/48"), SIDs: []drivers.SID{{Addr: pfx("fcbb:bbbb:1:e001::/64"), Behavior: "uA"}}}}, true, `"uA"`},
		"locator len":   {&drivers.DeviceFeatures{SRv6: &drivers.SRv6{Locator: "loc1", Prefix: pfx("fcbb:bbbb:1::/64")}}, false, "block 32 + node 16"},
		"sid outside":   {&drivers.DeviceFeatures{SRv6: &drivers.SRv6{Locator: "loc1", Prefix: pfx("fcbb:bbbb:1::/48"), SIDs: []drivers.SID{{Addr: pfx("fcbb:bbbb:2::/48"), Behavior: "uN"}}}}, false, "outside locator"},
		"udt46 no vrf":  {&drivers.DeviceFeatures{SRv6: &drivers.SRv6{Locator: "loc1", Prefix: pfx("fcbb:bbbb:1::/48"), SIDs: []drivers.SID{{Addr: pfx("fcbb:bbbb:1:fe00::/64"), Behavior: "uDT46"}}}}, false, "needs a VRF"},
		"ecn order":     {&drivers.DeviceFeatures{ECN: &drivers.ECN{MinBytes: 10, MaxBytes: 5}}, false, "min (10) <= max (5)"},
		"pfc priority":  {&drivers.DeviceFeatures{PFC: &drivers.PFC{Priorities: []int{8}}}, false, "priority 8"},
		"trimming dscp": {&drivers.DeviceFeatures{Trimming: &drivers.Trimming{Size: 256, DSCP: 64}}, false, "DSCP 64"},
	}
	for name, c := range bad {
		for op, f := range map[string]func(context.Context, *drivers.DeviceFeatures) error{
			"Diff":   func(ctx context.Context, w *drivers.DeviceFeatures) error { _, err := d.Diff(ctx, w); return err },
			"Apply":  func(ctx context.Context, w *drivers.DeviceFeatures) error { _, err := d.Apply(ctx, w); return err },
			"Verify": func(ctx context.Context, w *drivers.DeviceFeatures) error { _, err := d.Verify(ctx, w); return err },
		} {
			err := f(ctx, c.want)
			if err == nil || !strings.Contains(err.Error(), c.contain) {
				t.Errorf("%s %s: error %v, want one containing %q", op, name, err, c.contain)
				continue
			}
			var ce *drivers.CapabilityError
			if isCap := errors.As(err, &ce); isCap != c.capErr {
				t.Errorf("%s %s: capability error %v, want %v", op, name, isCap, c.capErr)
			} else if isCap && (ce.Platform != "sonic" || ce.Device != "leaf1" || ce.Feature != drivers.FeatSRv6) {
				t.Errorf("%s %s: %+v", op, name, ce)
			}
		}
	}
	// nothing asked for: nothing sent
	if diff, err := d.Diff(ctx, &drivers.DeviceFeatures{}); err != nil || len(diff) != 0 {
		t.Errorf("empty features: %v %v", diff, err)
	}
	if diff, err := d.Apply(ctx, nil); err != nil || len(diff) != 0 {
		t.Errorf("nil features: %v %v", diff, err)
	}
	checkCommands(t, d, "idle.txt", nil)
}

func TestContextAndClose(t *testing.T) {
	d := openTranscript(t, "idle.txt")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Capabilities(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := d.Exec(context.Background(), "true"); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Exec after Close: %v", err)
	}
	wantSent(t, d, "exit") // nothing but the logout
}

// A reply that never comes (the transcript ends) times out, and the
// session is not used again: a late reply would be taken for the answer to
// the next command.
func TestTimeoutBreaksSession(t *testing.T) {
	d, err := open(transcriptConfig("idle.txt", 300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Exec(context.Background(), "show version"); err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("no timeout: %v", err)
	}
	if _, err := d.Exec(context.Background(), "hostname"); err == nil || !strings.Contains(err.Error(), "unusable") {
		t.Errorf("second command after a timeout: %v", err)
	}
	wantSent(t, d, "show version")
}

func TestOpenRefusesUnverifiedSSH(t *testing.T) {
	base := drivers.Config{Device: "leaf1", Address: "192.0.2.10", Auth: drivers.Auth{User: "admin", Password: "x"}, Timeout: time.Second}

	_, err := Open(base)
	if err == nil || !strings.Contains(err.Error(), "known_hosts") {
		t.Errorf("no known_hosts: %v", err)
	}

	missing := base
	missing.KnownHosts = filepath.Join(t.TempDir(), "nope")
	_, err = Open(missing)
	if err == nil || !strings.Contains(err.Error(), "known_hosts file") {
		t.Errorf("missing known_hosts file: %v", err)
	}

	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	noStrict := base
	noStrict.KnownHosts = kh
	noStrict.Options = []any{options.WithAuthNoStrictKey()}
	_, err = Open(noStrict)
	if err == nil || !strings.Contains(err.Error(), "host key verification cannot be turned off") {
		t.Errorf("WithAuthNoStrictKey: %v", err)
	}

	agent := base
	agent.KnownHosts = kh
	agent.Auth = drivers.Auth{User: "admin", Agent: true}
	_, err = Open(agent)
	if err == nil || !strings.Contains(err.Error(), "ssh-agent") {
		t.Errorf("agent only: %v", err)
	}

	badOpt := base
	badOpt.KnownHosts = kh
	badOpt.Options = []any{"file"}
	_, err = Open(badOpt)
	if err == nil || !strings.Contains(err.Error(), "Options[0]") {
		t.Errorf("non-option: %v", err)
	}

	badKey := base
	badKey.KnownHosts = kh
	badKey.Auth.PrivateKey = []byte("not a key")
	_, err = Open(badKey)
	if err == nil || !strings.Contains(err.Error(), "private key") || strings.Contains(err.Error(), "not a key") {
		t.Errorf("bad key: %v", err)
	}
}
