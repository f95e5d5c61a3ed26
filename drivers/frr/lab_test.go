package frr

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/scrapli/scrapligo/driver/options"

	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/drivers"
)

// The lab of this package: labtest.Tiny on its own management subnet
// (198.19.253.0/24), so that it can run next to the linux package's lab.
type testLab struct{ *labtest.Lab }

// open opens the frr driver on a lab node through the registry; it is
// closed (without error) when the test ends.
func (l *testLab) open(t *testing.T, node string) *Driver {
	t.Helper()
	return labtest.OpenDriver(t, l.Lab, node, func(c drivers.Config) (*Driver, error) {
		drv, err := drivers.Open(Platform, c)
		if err != nil {
			return nil, err
		}
		return drv.(*Driver), nil
	}, true)
}

// TestLab runs every lab test against one lab, torn down at the end.
func TestLab(t *testing.T) {
	l := &testLab{labtest.StartTinyAt(t, "fbtest-frr", "198.19.253.0/24")}
	t.Run("OpenAndFacts", func(t *testing.T) { testOpenAndFacts(t, l) })
	t.Run("Capabilities", func(t *testing.T) { testCapabilities(t, l) })
	t.Run("State", func(t *testing.T) { testState(t, l) })
	t.Run("ECMP", func(t *testing.T) { testECMP(t, l) })
	t.Run("Configure", func(t *testing.T) { testConfigure(t, l) })
	t.Run("Unsupported", func(t *testing.T) { testUnsupported(t, l) })
	t.Run("SRv6", func(t *testing.T) { testSRv6(t, l) })
	t.Run("HostKey", func(t *testing.T) { testHostKey(t, l) })
	t.Run("Agent", func(t *testing.T) { testAgent(t, l) })
	t.Run("BGPDown", func(t *testing.T) { testBGPDown(t, l) })
	// Last: moving leaf1's host link into a VRF cuts host1 off.
	t.Run("VRFNetns", func(t *testing.T) { testVRFNetns(t, l) })
}

func testOpenAndFacts(t *testing.T, l *testLab) {
	drv := l.open(t, "leaf0")
	ctx := context.Background()
	out, err := drv.Vtysh(ctx, "show bgp summary")
	if err != nil || !strings.Contains(out, "198.18.0.0") {
		t.Errorf("vtysh show bgp summary: %v\n%s", err, out)
	}
	f, err := drv.Facts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", f)
	first := strings.SplitN(strings.TrimSpace(l.Sh(t, "leaf0", "vtysh -c 'show version'")), " ", 3)
	if f.Hostname != "leaf0" || f.Platform != Platform || f.OSVersion != first[0]+" "+first[1] || f.VRFMode != "netns" {
		t.Errorf("facts %+v (show version starts %q)", f, first)
	}
	if strings.Join(f.Interfaces, ",") != "mgmt0,eth1,eth2" {
		t.Errorf("interfaces %v", f.Interfaces)
	}
	// Exec is a shell on the router, not vtysh.
	if out, err := drv.Exec(ctx, "hostname; echo $0"); err != nil || !strings.HasPrefix(out, "leaf0\n") {
		t.Errorf("exec: %q %v", out, err)
	}
	if _, err := drv.Exec(ctx, "show version"); err == nil {
		t.Errorf("exec ran a vtysh command")
	}
	// A vtysh command FRR does not know is an error.
	if _, err := drv.Vtysh(ctx, "show no-such-thing"); err == nil || !strings.Contains(err.Error(), "Unknown command") {
		t.Errorf("unknown vtysh command: %v", err)
	}
	if out, err := drv.Vtysh(ctx, "show version"); err != nil || !strings.Contains(out, "FRRouting") {
		t.Errorf("vtysh after a failed command: %v", err)
	}
}

func testCapabilities(t *testing.T, l *testLab) {
	drv := l.open(t, "leaf0")
	caps := labtest.Capabilities(t, context.Background(), drv)
	want := map[drivers.Feature]string{drivers.FeatBGP: "", drivers.FeatECMPHash: "l4", drivers.FeatVRF: "netns", drivers.FeatSRv6: "kernel-seg6local"}
	for f, mode := range want {
		if s := caps[f]; !s.Supported || s.Mode != mode {
			t.Errorf("%s = %+v, want supported in mode %q", f, s, mode)
		}
	}
	for _, f := range []drivers.Feature{drivers.FeatECN, drivers.FeatPFC, drivers.FeatTrimming} {
		if s := caps[f]; s.Supported || s.Reason == "" {
			t.Errorf("%s = %+v, want unsupported with a reason", f, s)
		}
	}
	if caps[drivers.FeatTrimming].Reason != reasonTrimming {
		t.Errorf("trimming reason %q", caps[drivers.FeatTrimming].Reason)
	}
	// The netns mode is zebra's: its command line in the node says -n.
	if out := l.Sh(t, "leaf0", zebraCmdline); !strings.Contains(out, " -n ") {
		t.Errorf("zebra command line %q", out)
	}
}

func testState(t *testing.T, l *testLab) {
	drv := l.open(t, "leaf0")
	st, err := drv.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("BGP %+v", st.BGP)
	if len(st.BGP) != 1 {
		t.Fatalf("BGP sessions %+v, want one", st.BGP)
	}
	s := st.BGP[0]
	if s.Peer != "198.18.0.0" || !s.Established() || s.Interface != "eth1" || s.RemoteAS != 65000 || s.LocalAS != 65101 || s.VRF != "" || s.PfxReceived < 3 {
		t.Errorf("session %+v", s)
	}
	r, ok := st.Route("", netip.MustParsePrefix("198.18.0.6/31"))
	if !ok || r.Protocol != "bgp" || len(r.Nexthops) != 1 || r.Nexthops[0].Via != netip.MustParseAddr("198.18.0.0") || r.Nexthops[0].Dev != "eth1" {
		t.Errorf("route to host1's link: %+v (found %v)", r, ok)
	}
	r, ok = st.Route("", netip.MustParsePrefix("198.18.0.4/31"))
	if !ok || r.Protocol != "connected" || len(r.Nexthops) != 1 || r.Nexthops[0].Dev != "eth2" || r.Nexthops[0].Via.IsValid() {
		t.Errorf("connected route: %+v", r)
	}
	up := map[string]bool{}
	for _, ls := range st.Links {
		up[ls.Name] = ls.Up
	}
	if !up["eth1"] || !up["eth2"] {
		t.Errorf("links %+v", st.Links)
	}
}

func testECMP(t *testing.T, l *testLab) {
	const node = "leaf0"
	drv := l.open(t, node)
	ctx := context.Background()
	want := &drivers.DeviceFeatures{ECMPHash: []string{"src-ip", "dst-ip", "protocol", "src-port", "dst-port"}}
	diff, keys := labtest.Diff(t, ctx, drv, want)
	// The lab sets maximum-paths 64 for ipv4 unicast and the IPv4 policy;
	// the ipv6 family and the IPv6 policy are left.
	mp := keys["frr router bgp 65101 address-family ipv6 unicast maximum-paths"]
	if len(diff) != 2 || mp.New != "64" || keys["sysctl net.ipv6.fib_multipath_hash_policy"].New != "1" {
		t.Fatalf("diff:\n%s", diff)
	}
	applied, err := drv.Apply(ctx, want)
	if err != nil || len(applied) != 2 {
		t.Fatalf("apply: %v\n%s", err, applied)
	}
	cfg := l.Sh(t, node, "vtysh -c 'show running-config'")
	if !strings.Contains(cfg, " address-family ipv6 unicast\n  maximum-paths 64\n exit-address-family") {
		t.Errorf("running config after apply:\n%s", cfg)
	}
	labtest.CheckApplied(t, ctx, drv, want)
	checks, err := drv.Verify(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 4 {
		t.Errorf("%d checks, want 4 (2 maximum-paths, 2 sysctls): %+v", len(checks), checks)
	}
	for _, c := range checks {
		if !c.OK || c.Device != node {
			t.Errorf("check %+v", c)
		}
	}
	// Changed behind the driver's back.
	l.Sh(t, node, "vtysh -c 'configure terminal' -c 'router bgp 65101' -c 'address-family ipv6 unicast' -c 'maximum-paths 8'")
	checks, _ = drv.Verify(ctx, want)
	bad := 0
	for _, c := range checks {
		if !c.OK {
			bad++
			if c.Evidence != "maximum-paths 8" {
				t.Errorf("failed check evidence %q", c.Evidence)
			}
		}
	}
	if bad != 1 {
		t.Errorf("after maximum-paths 8: %d failed checks: %+v", bad, checks)
	}
	if diff, _ := drv.Diff(ctx, want); len(diff) != 1 || diff[0].Old != "8" {
		t.Errorf("diff after maximum-paths 8:\n%s", diff)
	}
	if _, err := drv.Apply(ctx, want); err != nil {
		t.Fatal(err)
	}
}

func testConfigure(t *testing.T, l *testLab) {
	drv := l.open(t, "spine0")
	ctx := context.Background()
	err := drv.Configure(ctx, []string{"router bgp 65000", "maximum-paths 9999", "exit"})
	if err == nil || !strings.Contains(err.Error(), "maximum-paths 9999") {
		t.Errorf("rejected line: %v", err)
	}
	// The session is back in exec mode and usable.
	if out, err := drv.Vtysh(ctx, "show running-config"); err != nil || strings.Contains(out, "9999") {
		t.Errorf("after a rejected line: %v", err)
	}
	if err := drv.Configure(ctx, []string{"router bgp 65000", "bgp log-neighbor-changes", "exit"}); err != nil {
		t.Errorf("good lines: %v", err)
	}
	// A command that times out leaves the session out of sync; the next
	// one reopens it.
	cctx, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	_, err = drv.Vtysh(cctx, "show bgp vrf all neighbors json")
	t.Logf("vtysh with a 1ms deadline: %v (broken: %v)", err, drv.broken)
	if err == nil {
		t.Errorf("1ms deadline: no error")
	}
	drv.mu.Lock()
	old := drv.conn
	drv.broken = errors.New("simulated loss of sync")
	drv.mu.Unlock()
	if out, err := drv.Vtysh(ctx, "show version"); err != nil || !strings.Contains(out, "FRRouting") {
		t.Errorf("after a broken session: %v", err)
	}
	if drv.conn == old || drv.broken != nil {
		t.Errorf("the broken session was not reopened")
	}
}

func testUnsupported(t *testing.T, l *testLab) {
	drv := l.open(t, "leaf0")
	ctx := context.Background()
	var ce *drivers.CapabilityError
	_, err := drv.Diff(ctx, &drivers.DeviceFeatures{Trimming: &drivers.Trimming{Size: 256, DSCP: 10, Queue: 6}})
	if !errors.As(err, &ce) || ce.Platform != Platform || ce.Feature != drivers.FeatTrimming || ce.Device != "leaf0" {
		t.Errorf("trimming: %v", err)
	}
	p := netip.MustParsePrefix
	for _, w := range []*drivers.DeviceFeatures{
		{SRv6: &drivers.SRv6{Prefix: p("fd00:bbbb:12::/48"), SIDs: []drivers.SID{{Addr: p("fd00:bbbb:12:fe00::/64"), Behavior: "uDT46", VRF: "red"}}}},
		{SRv6: &drivers.SRv6{Prefix: p("fd00:bbbb:12::/48"), Steer: []drivers.Steer{{Prefix: p("198.19.177.0/24"), Segments: []netip.Addr{netip.MustParseAddr("fd00::1")}, Dev: "eth1", VRF: "red"}}}},
	} {
		_, err := drv.Apply(ctx, w)
		if !errors.As(err, &ce) || ce.Platform != Platform || ce.Feature != drivers.FeatSRv6 || !strings.Contains(ce.Reason, "VRF device") {
			t.Errorf("%+v: %v", w.SRv6, err)
		}
	}
	for _, w := range []*drivers.DeviceFeatures{{ECN: &drivers.ECN{}}, {PFC: &drivers.PFC{Priorities: []int{3}}}} {
		if _, err := drv.Verify(ctx, w); !errors.As(err, &ce) || ce.Platform != Platform {
			t.Errorf("%v: %v", w.Requested(), err)
		}
	}
}

func testSRv6(t *testing.T, l *testLab) {
	const node = "spine0"
	drv := l.open(t, node)
	ctx := context.Background()
	p := netip.MustParsePrefix
	want := &drivers.DeviceFeatures{SRv6: &drivers.SRv6{Locator: "main", Prefix: p("fd00:bbbb:11::/48"), BlockLen: 32, NodeLen: 16,
		SIDs: []drivers.SID{{Addr: p("fd00:bbbb:11::/48"), Behavior: "uN"}}}}
	diff, keys := labtest.Diff(t, ctx, drv, want)
	if !keys.Has("route fd00:bbbb:11::/48") || !keys.Has("frr ipv6 forwarding") || keys.Has("sysctl net.ipv6.conf.all.forwarding") {
		t.Errorf("diff:\n%s", diff)
	}
	if _, err := drv.Apply(ctx, want); err != nil {
		t.Fatal(err)
	}
	if out := l.Sh(t, node, "ip -6 route show fd00:bbbb:11::/48"); !strings.Contains(out, "seg6local action End flavors next-csid lblen 32 nflen 16 dev sr0") {
		t.Errorf("route: %q", out)
	}
	if out := l.Sh(t, node, "sysctl -n net.ipv6.conf.all.forwarding"); strings.TrimSpace(out) != "1" {
		t.Errorf("ipv6 forwarding %q", out)
	}
	checks, err := drv.Verify(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if !c.OK {
			t.Errorf("check %+v", c)
		}
	}
	if diff, err := drv.Diff(ctx, want); err != nil || len(diff) != 0 {
		t.Errorf("second diff: %v\n%s", err, diff)
	}
	st, err := drv.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.SIDs) != 1 || st.SIDs[0].Addr != p("fd00:bbbb:11::/48") || st.SIDs[0].Behavior != "End" || st.SIDs[0].Flavors != "next-csid" {
		t.Errorf("SIDs %+v", st.SIDs)
	}
	// FRR sees the kernel's SID route too.
	if r, ok := st.Route("", p("fd00:bbbb:11::/48")); !ok || r.Protocol != "kernel" {
		t.Errorf("FRR's view of the SID route: %+v %v", r, ok)
	}
}

func testHostKey(t *testing.T, l *testLab) {
	ctx := context.Background()
	cfg := l.Config(t, "leaf1")
	// scrapligo's transport options that would skip verification are refused.
	cfg.Options = []any{options.WithAuthNoStrictKey()}
	if d, err := New(ctx, cfg); err == nil || !strings.Contains(err.Error(), "host key verification cannot be turned off") {
		if d != nil {
			d.Close()
		}
		t.Errorf("WithAuthNoStrictKey: %v", err)
	}
	cfg.Options = []any{"not an option"}
	if _, err := New(ctx, cfg); err == nil {
		t.Errorf("a bad option: no error")
	}
	cfg.Options = nil
	// The vtysh session itself checks the host key: leaf1's address with
	// spine0's key.
	cfg.KnownHosts = l.MismatchedKnownHosts(t, cfg.Address)
	d := &Driver{name: "leaf1", timeout: 10 * time.Second, cfg: cfg}
	if conn, err := d.openVtysh(ctx); err == nil || !strings.Contains(err.Error(), "knownhosts: key mismatch") {
		if conn != nil {
			conn.Close()
		}
		t.Errorf("vtysh session with a wrong host key: %v", err)
	}
	if _, err := New(ctx, cfg); err == nil || !strings.Contains(err.Error(), "host key") {
		t.Errorf("New with a wrong host key: %v", err)
	}
	cfg.KnownHosts = ""
	if _, err := New(ctx, cfg); err == nil || !strings.Contains(err.Error(), "known_hosts") {
		t.Errorf("New without known_hosts: %v", err)
	}
}

func testAgent(t *testing.T, l *testLab) {
	l.Agent(t)
	cfg := l.Config(t, "leaf1")
	cfg.Auth = drivers.Auth{User: "root", Agent: true}
	d, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("agent: %v", err)
	}
	defer d.Close()
	if _, ok := d.conn.Transport.Impl.(*sessionTransport); !ok {
		t.Errorf("vtysh transport %T", d.conn.Transport.Impl)
	}
	if out, err := d.Vtysh(context.Background(), "show version"); err != nil || !strings.Contains(out, "FRRouting") {
		t.Errorf("vtysh over the agent-authenticated connection: %v", err)
	}
}

func testBGPDown(t *testing.T, l *testLab) {
	const node = "leaf0"
	drv := l.open(t, node)
	ctx := context.Background()
	state := func() string {
		st, err := drv.State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range st.BGP {
			if s.Peer == "198.18.0.0" {
				return s.State
			}
		}
		return "missing"
	}
	poll := func(want func(string) bool) (string, time.Duration) {
		start := time.Now()
		var s string
		for time.Since(start) < 10*time.Second {
			if s = state(); want(s) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		return s, time.Since(start)
	}
	if s := state(); s != "Established" {
		t.Fatalf("before: %s", s)
	}
	if _, err := drv.Exec(ctx, "ip link set eth1 down"); err != nil {
		t.Fatal(err)
	}
	s, took := poll(func(s string) bool { return s != "Established" })
	t.Logf("after eth1 down: %s in %s", s, took.Round(time.Millisecond))
	if s == "Established" {
		t.Errorf("session still Established 10s after eth1 went down")
	}
	if _, err := drv.Exec(ctx, "ip link set eth1 up"); err != nil {
		t.Fatal(err)
	}
	s, took = poll(func(s string) bool { return s == "Established" })
	t.Logf("after eth1 up: %s in %s", s, took.Round(time.Millisecond))
	if s != "Established" {
		t.Errorf("session %s 10s after eth1 came back", s)
	}
}

func testVRFNetns(t *testing.T, l *testLab) {
	const node = "leaf1"
	drv := l.open(t, node)
	ctx := context.Background()
	caps, err := drv.Capabilities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s := caps[drivers.FeatVRF]; !s.Supported || s.Mode != "netns" {
		t.Fatalf("vrf %+v", s)
	}
	want := &drivers.DeviceFeatures{VRFs: []drivers.VRF{{Name: "red", Interfaces: []string{"eth2"}}}}
	diff, _ := labtest.Diff(t, ctx, drv, want)
	if len(diff) != 2 || diff[0].Key != "vrf red netns" || diff[1].Key != "vrf red member eth2" || diff[1].New != "red (198.18.0.6/31)" {
		t.Fatalf("diff:\n%s", diff)
	}
	checks, err := drv.Verify(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if c.OK {
			t.Errorf("check OK before apply: %+v", c)
		}
	}
	applied, err := drv.Apply(ctx, want)
	if err != nil || len(applied) != 2 {
		t.Fatalf("apply: %v\n%s", err, applied)
	}
	if out := l.Sh(t, node, "ip -n red -br addr show eth2"); !strings.Contains(out, "UP") || !strings.Contains(out, "198.18.0.6/31") {
		t.Errorf("eth2 in red: %q", out)
	}
	if out := l.Sh(t, node, "vtysh -c 'show vrf'"); !strings.Contains(out, "vrf red id") || !strings.Contains(out, "netns /run/netns/red") {
		t.Errorf("show vrf: %q", out)
	}
	checks, err = drv.Verify(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]drivers.Check{}
	for _, c := range checks {
		names[c.Name] = c
		if !c.OK {
			t.Errorf("check %+v", c)
		}
	}
	if c := names["vrf red in zebra"]; !strings.Contains(c.Evidence, "netns /run/netns/red") {
		t.Errorf("zebra check %+v", c)
	}
	labtest.CheckApplied(t, ctx, drv, want)
	st, err := drv.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := st.Route("red", netip.MustParsePrefix("198.18.0.6/31")); !ok || r.Protocol != "connected" || len(r.Nexthops) != 1 || r.Nexthops[0].Dev != "eth2" {
		t.Errorf("VRF red route: %+v %v", r, ok)
	}
	if _, ok := st.Route("", netip.MustParsePrefix("198.18.0.6/31")); ok {
		t.Errorf("198.18.0.6/31 still in the default VRF")
	}
	// A member that does not exist.
	if _, err := drv.Diff(ctx, &drivers.DeviceFeatures{VRFs: []drivers.VRF{{Name: "blue", Interfaces: []string{"eth9"}}}}); err == nil || !strings.Contains(err.Error(), "eth9") {
		t.Errorf("missing member: %v", err)
	}
}
