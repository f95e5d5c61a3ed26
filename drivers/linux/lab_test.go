package linux

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/drivers/sshx"
)

// The lab of this package: labtest.Tiny on its own management subnet
// (198.19.252.0/24), so that it can run next to the frr package's lab.
type testLab struct{ *labtest.Lab }

// open opens the linux driver on a lab node; it is closed when the test
// ends.
func (l *testLab) open(t *testing.T, node string) *Driver {
	t.Helper()
	return labtest.OpenDriver(t, l.Lab, node, func(c drivers.Config) (*Driver, error) { return New(context.Background(), c) }, false)
}

// TestLab runs every lab test against one lab, torn down at the end.
func TestLab(t *testing.T) {
	l := &testLab{labtest.StartTinyAt(t, "fbtest-linux", "198.19.252.0/24")}
	t.Run("Capabilities", func(t *testing.T) { testCapabilities(t, l) })
	t.Run("Facts", func(t *testing.T) { testFacts(t, l) })
	t.Run("Exec", func(t *testing.T) { testExec(t, l) })
	t.Run("ECMPHash", func(t *testing.T) { testECMPHash(t, l) })
	t.Run("SRv6", func(t *testing.T) { testSRv6(t, l) })
	t.Run("NeedsVRF", func(t *testing.T) { testNeedsVRF(t, l) })
	t.Run("State", func(t *testing.T) { testState(t, l) })
	t.Run("HostKey", func(t *testing.T) { testHostKey(t, l) })
	t.Run("Auth", func(t *testing.T) { testAuth(t, l) })
}

func testCapabilities(t *testing.T, l *testLab) {
	drv := l.open(t, "host0")
	ctx := context.Background()
	caps := labtest.Capabilities(t, ctx, drv)
	// What the kernel says, seen through the deployer (not the driver).
	vrfOut, vrfErr := l.D.Exec(ctx, l.St, "host0", "ip link add fbtvrf type vrf table 77")
	if vrfErr == nil {
		l.Sh(t, "host0", "ip link del fbtvrf")
	}
	_, csidErr := l.D.Exec(ctx, l.St, "host0", "ip -6 route add fd00:bbbb:77::/48 encap seg6local action End flavors next-csid lblen 32 nflen 16 dev lo table 77 && ip -6 route del fd00:bbbb:77::/48 table 77")
	redOut, redErr := l.D.Exec(ctx, l.St, "host0", "ip link add fbtq type veth peer name fbtqp && (tc qdisc add dev fbtq root red limit 400000 min 30000 max 90000 avpkt 1000 burst 55 probability 0.02 bandwidth 10mbit ecn; rc=$?; ip link del fbtq; exit $rc)")

	if s := caps[drivers.FeatECMPHash]; !s.Supported || s.Mode != "l4" {
		t.Errorf("ecmp-hash = %+v, want supported in mode l4", s)
	}
	if s := caps[drivers.FeatVRF]; s.Supported != (vrfErr == nil) {
		t.Errorf("vrf = %+v, but creating a VRF device in the node gave err=%v %s", s, vrfErr, vrfOut)
	} else if vrfErr != nil && !strings.Contains(s.Reason, strings.TrimSpace(vrfOut)) {
		t.Errorf("vrf reason %q does not carry the kernel's error %q", s.Reason, strings.TrimSpace(vrfOut))
	}
	if s := caps[drivers.FeatSRv6]; s.Supported != (csidErr == nil) {
		t.Errorf("srv6-usid = %+v, but a next-csid route in the node gave err=%v", s, csidErr)
	}
	// End.DX4/End.DX6 and policy rules, probed with the capabilities.
	_, dx4Err := l.D.Exec(ctx, l.St, "host0", "ip -6 route add fd00:bbbb:77::/48 encap seg6local action End.DX4 nh4 192.0.2.1 dev lo table 77 && ip -6 route del fd00:bbbb:77::/48 table 77")
	_, rulesErr := l.D.Exec(ctx, l.St, "host0", "ip -4 rule show && ip -6 rule show")
	pr, _ := drv.probes(ctx)
	if (pr.dx4 == "") != (dx4Err == nil) || (pr.rules4 == "" && pr.rules6 == "") != (rulesErr == nil) {
		t.Errorf("probes dx4=%q rules4=%q rules6=%q, but in the node End.DX4 gave %v and ip rule %v", pr.dx4, pr.rules4, pr.rules6, dx4Err, rulesErr)
	}
	if s := caps[drivers.FeatECN]; s.Supported {
		t.Errorf("ecn-wred = %+v, want unsupported", s)
	} else if redErr != nil && !strings.HasPrefix(s.Reason, reasonNoRED) {
		t.Errorf("ecn-wred reason %q, want %q (red in the node: %v %s)", s.Reason, reasonNoRED, redErr, redOut)
	}
	if s := caps[drivers.FeatPFC]; s.Supported || s.Reason != reasonPFC {
		t.Errorf("pfc = %+v", s)
	}
	if s := caps[drivers.FeatTrimming]; s.Supported || !strings.Contains(s.Reason, "switch ASIC") {
		t.Errorf("trimming = %+v", s)
	}
	// Probes leave nothing behind.
	if out := l.Sh(t, "host0", "ip -o link show"); strings.Contains(out, "fbv") || strings.Contains(out, "fbq") || strings.Contains(out, "fbd") {
		t.Errorf("probe interfaces left behind:\n%s", out)
	}
	if out := l.Sh(t, "host0", "ip -6 route show table all"); strings.Contains(out, "fdfb:") {
		t.Errorf("probe route left behind:\n%s", out)
	}
	// Cached: the second call is the same and fast.
	start := time.Now()
	caps2, err := drv.Capabilities(ctx)
	if err != nil || len(caps2) != len(caps) || time.Since(start) > 50*time.Millisecond {
		t.Errorf("second Capabilities: %v, %d features, %s", err, len(caps2), time.Since(start))
	}
}

func testFacts(t *testing.T, l *testLab) {
	drv := l.open(t, "leaf1")
	f, err := drv.Facts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", f)
	kernel := strings.TrimSpace(l.Sh(t, "leaf1", "uname -r"))
	if f.Hostname != "leaf1" || f.Platform != Platform || !strings.Contains(f.OSVersion, kernel) || f.VRFMode != "" {
		t.Errorf("facts %+v (kernel %s)", f, kernel)
	}
	if strings.Join(f.Interfaces, ",") != "mgmt0,eth1,eth2" {
		t.Errorf("interfaces %v", f.Interfaces)
	}
}

func testExec(t *testing.T, l *testLab) {
	drv := l.open(t, "host1")
	ctx := context.Background()
	out, err := drv.Exec(ctx, "echo out; echo err >&2")
	if err != nil || !strings.Contains(out, "out") || !strings.Contains(out, "err") {
		t.Errorf("Exec = %q, %v; want combined output", out, err)
	}
	_, err = drv.Exec(ctx, "echo broken; exit 3")
	var ee *sshx.ExitError
	if !errors.As(err, &ee) || ee.Status != 3 || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "broken") {
		t.Errorf("failing Exec: %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := drv.Exec(cctx, "sleep 10"); err == nil || time.Since(start) > 3*time.Second {
		t.Errorf("Exec past its deadline: %v after %s", err, time.Since(start))
	}
	// The connection still works after a cancelled command.
	if out, err := drv.Exec(ctx, "hostname"); err != nil || strings.TrimSpace(out) != "host1" {
		t.Errorf("Exec after cancel: %q, %v", out, err)
	}
}

func testECMPHash(t *testing.T, l *testLab) {
	const node = "host0" // hosts keep the kernel defaults (policy 0)
	drv := l.open(t, node)
	ctx := context.Background()
	want := &drivers.DeviceFeatures{ECMPHash: []string{"src-ip", "dst-ip", "protocol", "src-port", "dst-port"}}
	diff, _ := labtest.Diff(t, ctx, drv, want)
	if len(diff) != 2 || diff[0].Key != "sysctl net.ipv4.fib_multipath_hash_policy" || diff[0].Old != "0" || diff[0].New != "1" ||
		diff[1].Key != "sysctl net.ipv6.fib_multipath_hash_policy" || diff[1].New != "1" {
		t.Fatalf("diff on a fresh node:\n%s", diff)
	}
	if got := l.Sh(t, node, "sysctl -n net.ipv4.fib_multipath_hash_policy"); strings.TrimSpace(got) != "0" {
		t.Fatalf("Diff changed the device: policy %s", got)
	}
	applied, err := drv.Apply(ctx, want)
	if err != nil || len(applied) != 2 {
		t.Fatalf("apply: %v\n%s", err, applied)
	}
	if got := l.Sh(t, node, "sysctl -n net.ipv4.fib_multipath_hash_policy net.ipv6.fib_multipath_hash_policy"); strings.Fields(got)[0] != "1" || strings.Fields(got)[1] != "1" {
		t.Fatalf("after apply the node has policies %q", got)
	}
	labtest.CheckApplied(t, ctx, drv, want)
	checks, err := drv.Verify(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 2 {
		t.Errorf("verify: %d checks, want 2: %+v", len(checks), checks)
	}
	for _, c := range checks {
		if !c.OK || c.Device != node || c.Feature != drivers.FeatECMPHash {
			t.Errorf("check %+v", c)
		}
	}

	// A custom field set is policy 3 with the field mask.
	custom := &drivers.DeviceFeatures{ECMPHash: []string{"src-ip", "dst-ip", "flow-label"}}
	if _, err := drv.Apply(ctx, custom); err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(l.Sh(t, node, "sysctl -n net.ipv4.fib_multipath_hash_policy net.ipv4.fib_multipath_hash_fields net.ipv6.fib_multipath_hash_policy net.ipv6.fib_multipath_hash_fields"))
	if strings.Join(got, " ") != "3 3 3 11" {
		t.Errorf("custom fields: policy/fields v4 v6 = %v, want 3 3 3 11", got)
	}
	if _, err := drv.Diff(ctx, &drivers.DeviceFeatures{ECMPHash: []string{"src-mac"}}); err == nil || !strings.Contains(err.Error(), "src-mac") {
		t.Errorf("unknown field: %v", err)
	}

	// Changed behind the driver's back: Verify fails with evidence.
	if _, err := drv.Apply(ctx, want); err != nil {
		t.Fatal(err)
	}
	if _, err := drv.Exec(ctx, "sysctl -q -w net.ipv6.fib_multipath_hash_policy=0"); err != nil {
		t.Fatal(err)
	}
	checks, err = drv.Verify(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, c := range checks {
		if !c.OK {
			bad++
			if !strings.Contains(c.Evidence, "net.ipv6.fib_multipath_hash_policy = 0") {
				t.Errorf("failed check without evidence: %+v", c)
			}
		}
	}
	if bad != 1 {
		t.Errorf("verify after a change behind the driver's back: %d failed checks, want 1: %+v", bad, checks)
	}
}

func testSRv6(t *testing.T, l *testLab) {
	const node = "host1"
	drv := l.open(t, node)
	ctx := context.Background()
	p := netip.MustParsePrefix
	a := netip.MustParseAddr
	want := &drivers.DeviceFeatures{SRv6: &drivers.SRv6{
		Locator: "main", Prefix: p("fd00:bbbb:22::/48"), BlockLen: 32, NodeLen: 16,
		SIDs: []drivers.SID{
			{Addr: p("fd00:bbbb:22::/48"), Behavior: "uN"},
			{Addr: p("fd00:bbbb:22:e001::/64"), Behavior: "uA", Nexthop: a("fe80::1"), Dev: "eth1"},
		},
		Steer: []drivers.Steer{
			{Prefix: p("198.19.177.0/24"), Segments: []netip.Addr{a("fd00:bbbb:1::"), a("fd00:bbbb:2::")}, Dev: "eth1"},
			{Prefix: p("2001:db8:99::/64"), Segments: []netip.Addr{a("fd00:bbbb:1::")}, Dev: "eth1"},
		},
	}}
	diff, keys := labtest.Diff(t, ctx, drv, want)
	for _, k := range []string{"sysctl net.ipv6.conf.all.seg6_enabled", "sysctl net.ipv6.conf.eth1.seg6_enabled", "link sr0",
		"route fd00:bbbb:22::/48", "route fd00:bbbb:22:e001::/64", "route 198.19.177.0/24", "route 2001:db8:99::/64"} {
		if !keys.Has(k) {
			t.Errorf("diff lacks %s", k)
		}
	}
	if out := l.Sh(t, node, "ip -6 route show"); strings.Contains(out, "seg6local") {
		t.Fatalf("Diff changed the device:\n%s", out)
	}
	applied, err := drv.Apply(ctx, want)
	if err != nil {
		t.Fatalf("apply: %v\napplied:\n%s", err, applied)
	}
	if len(applied) != len(diff) {
		t.Errorf("applied %d changes, diff had %d", len(applied), len(diff))
	}
	out6 := l.Sh(t, node, "ip -6 route show")
	out4 := l.Sh(t, node, "ip route show 198.19.177.0/24")
	t.Logf("node routes:\n%s%s", out6, out4)
	for _, w := range []string{
		"fd00:bbbb:22::/48  encap seg6local action End flavors next-csid lblen 32 nflen 16 dev sr0",
		"fd00:bbbb:22:e001::/64  encap seg6local action End.X nh6 fe80::1 flavors next-csid lblen 32 nflen 16 dev eth1",
		"2001:db8:99::/64  encap seg6 mode encap segs 1 [ fd00:bbbb:1:: ] dev eth1",
	} {
		if !strings.Contains(out6, w) {
			t.Errorf("node lacks %q", w)
		}
	}
	if !strings.Contains(out4, "encap seg6 mode encap segs 2 [ fd00:bbbb:1:: fd00:bbbb:2:: ] dev eth1") {
		t.Errorf("steer route: %q", out4)
	}
	if got := strings.Fields(l.Sh(t, node, "sysctl -n net.ipv6.conf.all.seg6_enabled net.ipv6.conf.eth1.seg6_enabled")); strings.Join(got, " ") != "1 1" {
		t.Errorf("seg6_enabled all/eth1 = %v", got)
	}
	checks, err := drv.Verify(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	var sidCheck *drivers.Check
	for i, c := range checks {
		if !c.OK {
			t.Errorf("check failed: %+v", c)
		}
		if c.Name == "sid fd00:bbbb:22::/48 uN" {
			sidCheck = &checks[i]
		}
	}
	if sidCheck == nil || !strings.Contains(sidCheck.Evidence, "seg6local action End flavors next-csid") {
		t.Errorf("uN check %+v", sidCheck)
	}
	labtest.CheckApplied(t, ctx, drv, want)
	st, err := drv.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range st.SIDs {
		if s.Addr == p("fd00:bbbb:22::/48") && s.Behavior == "End" && s.Flavors == "next-csid" {
			found = true
		}
	}
	if !found {
		t.Errorf("State SIDs %+v lack the uN", st.SIDs)
	}
	// A route changed behind the driver's back shows up in Diff and Verify.
	l.Sh(t, node, "ip -6 route replace fd00:bbbb:22::/48 encap seg6local action End dev lo")
	diff, err = drv.Diff(ctx, want)
	if err != nil || len(diff) != 1 || diff[0].Old != "encap seg6local action End dev lo" {
		t.Errorf("diff after a change: %v\n%s", err, diff)
	}
	checks, _ = drv.Verify(ctx, want)
	for _, c := range checks {
		if c.Name == "sid fd00:bbbb:22::/48 uN" && (c.OK || !strings.Contains(c.Evidence, "action End dev lo")) {
			t.Errorf("uN check after a change: %+v", c)
		}
	}
	if _, err := drv.Apply(ctx, want); err != nil {
		t.Fatal(err)
	}
}

func testNeedsVRF(t *testing.T, l *testLab) {
	drv := l.open(t, "host1")
	ctx := context.Background()
	caps, err := drv.Capabilities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if caps[drivers.FeatVRF].Supported {
		t.Skip("this kernel makes VRF devices")
	}
	p := netip.MustParsePrefix
	want := &drivers.DeviceFeatures{SRv6: &drivers.SRv6{Locator: "main", Prefix: p("fd00:bbbb:22::/48"),
		SIDs: []drivers.SID{{Addr: p("fd00:bbbb:22:fe00::/64"), Behavior: "uDT46", VRF: "red"}}}}
	for name, call := range map[string]func() error{
		"diff":   func() error { _, err := drv.Diff(ctx, want); return err },
		"apply":  func() error { _, err := drv.Apply(ctx, want); return err },
		"verify": func() error { _, err := drv.Verify(ctx, want); return err },
	} {
		err := call()
		var ce *drivers.CapabilityError
		if !errors.As(err, &ce) || ce.Platform != Platform || ce.Feature != drivers.FeatSRv6 || !strings.Contains(ce.Reason, "VRF") {
			t.Errorf("%s uDT46: %v, want a CapabilityError naming linux, srv6 and the VRF", name, err)
		}
	}
	_, err = drv.Diff(ctx, &drivers.DeviceFeatures{VRFs: []drivers.VRF{{Name: "red", Interfaces: []string{"eth1"}}}})
	var ce *drivers.CapabilityError
	if !errors.As(err, &ce) || ce.Feature != drivers.FeatVRF || ce.Device != "host1" {
		t.Errorf("VRF: %v", err)
	}
	for _, f := range []*drivers.DeviceFeatures{{ECN: &drivers.ECN{}}, {PFC: &drivers.PFC{Priorities: []int{3}}}, {Trimming: &drivers.Trimming{Size: 256}}} {
		if _, err := drv.Apply(ctx, f); !errors.As(err, &ce) {
			t.Errorf("%v: %v, want a CapabilityError", f.Requested(), err)
		}
	}
}

func testState(t *testing.T, l *testLab) {
	drv := l.open(t, "leaf0")
	ctx := context.Background()
	st, err := drv.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Routes {
		t.Logf("route %s %s %+v", r.Prefix, r.Protocol, r.Nexthops)
	}
	r, ok := st.Route("", netip.MustParsePrefix("198.18.0.6/31"))
	if !ok || r.Protocol != "bgp" || len(r.Nexthops) != 1 || r.Nexthops[0].Via != netip.MustParseAddr("198.18.0.0") || r.Nexthops[0].Dev != "eth1" {
		t.Errorf("route to host1's link: %+v (found %v)", r, ok)
	}
	links := map[string]drivers.LinkState{}
	for _, ls := range st.Links {
		links[ls.Name] = ls
	}
	if e := links["eth1"]; !e.Up || !e.Admin || len(e.Addrs) == 0 || e.Addrs[0] != netip.MustParsePrefix("198.18.0.1/31") {
		t.Errorf("eth1: %+v", e)
	}
	if lo := links["lo"]; !lo.Up {
		t.Errorf("lo: %+v", lo)
	}
	if len(st.BGP) != 0 {
		t.Errorf("plain Linux reports BGP: %+v", st.BGP)
	}

	// Nexthop objects (as FRR installs them): a group of two paths, and
	// a route naming one object.
	l.Sh(t, "leaf0", "ip nexthop add id 901 via 198.18.0.0 dev eth1 && ip nexthop add id 902 via 198.18.0.5 dev eth2 && "+
		"ip nexthop add id 903 group 901/902 && ip route add 198.19.178.0/24 nhid 903 proto bgp && ip route add 198.19.179.0/24 nhid 901 proto bgp")
	defer l.Sh(t, "leaf0", "ip route del 198.19.178.0/24; ip route del 198.19.179.0/24; ip nexthop del id 903; ip nexthop del id 902; ip nexthop del id 901; true")
	st, err = drv.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, ok = st.Route("", netip.MustParsePrefix("198.19.178.0/24"))
	if !ok || r.Protocol != "bgp" || len(r.Nexthops) != 2 || r.Nexthops[0].Dev != "eth1" || r.Nexthops[1].Via != netip.MustParseAddr("198.18.0.5") {
		t.Errorf("ECMP route over a nexthop group: %+v", r)
	}
	r, ok = st.Route("", netip.MustParsePrefix("198.19.179.0/24"))
	if !ok || len(r.Nexthops) != 1 || r.Nexthops[0].Via != netip.MustParseAddr("198.18.0.0") {
		t.Errorf("route over a nexthop object: %+v", r)
	}
	// Link down is seen.
	l.Sh(t, "leaf0", "ip link set eth2 down")
	defer l.Sh(t, "leaf0", "ip link set eth2 up")
	ls, err := drv.Links(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ls {
		if x.Name == "eth2" && (x.Up || x.Admin) {
			t.Errorf("eth2 after link down: %+v", x)
		}
	}
}

func testHostKey(t *testing.T, l *testLab) {
	ctx := context.Background()
	cfg := l.Config(t, "leaf0")
	dir := t.TempDir()

	// leaf0's address with spine0's key.
	cfg.KnownHosts = l.MismatchedKnownHosts(t, cfg.Address)
	_, err := New(ctx, cfg)
	var ke *knownhosts.KeyError
	var he *sshx.HostKeyError
	if !errors.As(err, &ke) || len(ke.Want) == 0 || !errors.As(err, &he) || !strings.Contains(err.Error(), "host key") {
		t.Errorf("mismatching host key: %v", err)
	}
	// An unknown host.
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	cfg.KnownHosts = empty
	if _, err = New(ctx, cfg); !errors.As(err, &ke) || len(ke.Want) != 0 {
		t.Errorf("unknown host: %v", err)
	}
	// No known_hosts at all.
	cfg.KnownHosts = ""
	if _, err = New(ctx, cfg); !errors.Is(err, sshx.ErrNoKnownHosts) {
		t.Errorf("no known_hosts: %v", err)
	}
	cfg.KnownHosts = filepath.Join(dir, "missing")
	if _, err = New(ctx, cfg); err == nil {
		t.Errorf("missing known_hosts file: no error")
	}
}

func testAuth(t *testing.T, l *testLab) {
	ctx := context.Background()
	raw, err := ssh.ParseRawPrivateKey(l.Key)
	if err != nil {
		t.Fatal(err)
	}
	const pass = "s3cret-Passphrase"
	blk, err := ssh.MarshalPrivateKeyWithPassphrase(raw, "", []byte(pass))
	if err != nil {
		t.Fatal(err)
	}
	enc := pem.EncodeToMemory(blk)

	cfg := l.Config(t, "spine0")
	cfg.Auth = drivers.Auth{User: "root", PrivateKey: enc, Passphrase: pass}
	d, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("passphrase-protected key: %v", err)
	}
	d.Close()
	cfg.Auth.Passphrase = "wrong-" + pass
	if _, err := New(ctx, cfg); err == nil || strings.Contains(err.Error(), pass) {
		t.Errorf("wrong passphrase: %v", err)
	}
	cfg.Auth.Passphrase = ""
	if _, err := New(ctx, cfg); err == nil || !strings.Contains(err.Error(), "passphrase") {
		t.Errorf("encrypted key without passphrase: %v", err)
	}
	// A password the server does not accept (it only takes keys): the
	// password is not in the error.
	cfg.Auth = drivers.Auth{User: "root", Password: "Pw-" + pass}
	if _, err := New(ctx, cfg); err == nil || strings.Contains(err.Error(), pass) || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Errorf("password: %v", err)
	}
	if s := cfg.Auth.String() + cfg.Auth.GoString(); strings.Contains(s, pass) {
		t.Errorf("Auth prints its secret: %s", s)
	}

	// ssh-agent: an in-process agent holding the lab key.
	keyring := l.Agent(t)
	cfg.Auth = drivers.Auth{User: "root", Agent: true}
	d, err = New(ctx, cfg)
	if err != nil {
		t.Fatalf("agent: %v", err)
	}
	out, err := d.Exec(ctx, "hostname")
	d.Close()
	if err != nil || strings.TrimSpace(out) != "spine0" {
		t.Errorf("agent exec: %q %v", out, err)
	}
	// An agent without the right key.
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	keyring.RemoveAll()
	keyring.Add(agent.AddedKey{PrivateKey: other})
	if _, err := New(ctx, cfg); err == nil {
		t.Errorf("agent with a foreign key: no error")
	}
}
