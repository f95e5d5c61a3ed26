package linux

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/harness/bringup"
	"github.com/fabricbench/fabricbench/inventory"
)

// The SRv6 placement lab: a generated 2-leaf, 2-spine fabric with one
// host per leaf and uN locators, on its own management subnet.
const (
	placementLab  = "fbsr6"
	placementMgmt = "198.19.245.0/24"
	placementSpec = "leafspine:leaves=2,spines=2,hosts_per_leaf=1"
)

// uSIDs builds a micro-SID container in the F3216 format: the 32-bit
// block of loc followed by 16-bit micro-SIDs.
func uSIDs(loc netip.Prefix, ids ...uint16) netip.Addr {
	b := loc.Addr().As16()
	for i := 4; i < 16; i++ {
		b[i] = 0
	}
	for i, id := range ids {
		b[4+2*i], b[5+2*i] = byte(id>>8), byte(id)
	}
	return netip.AddrFrom16(b)
}

// nodeID is a switch's uN micro-SID (the 16 bits after the block).
func nodeID(loc netip.Prefix) uint16 {
	b := loc.Addr().As16()
	return uint16(b[4])<<8 | uint16(b[5])
}

// peerOf returns the endpoint of node's link to peer and the peer's end.
func peerOf(t *testing.T, lab *containerlab.Lab, node, peer string) (mine, theirs containerlab.Endpoint) {
	t.Helper()
	for _, l := range lab.Links {
		switch {
		case l.A.Node == node && l.B.Node == peer:
			return l.A, l.B
		case l.B.Node == node && l.A.Node == peer:
			return l.B, l.A
		}
	}
	t.Fatalf("lab %s has no link %s-%s", lab.Name, node, peer)
	return
}

// linkCounters are one interface's packet counters.
type linkCounters struct{ rx, tx uint64 }

// counters reads an interface's counters in a lab node (ip -s -j link in
// its namespace, through the deployer).
func counters(t *testing.T, l *testLab, node, dev string) linkCounters {
	t.Helper()
	out := l.Sh(t, node, "ip -s -j link show dev "+dev)
	var links []struct {
		Stats64 struct {
			RX struct {
				Packets uint64 `json:"packets"`
			} `json:"rx"`
			TX struct {
				Packets uint64 `json:"packets"`
			} `json:"tx"`
		} `json:"stats64"`
	}
	if err := json.Unmarshal([]byte(out), &links); err != nil || len(links) != 1 {
		t.Fatalf("%s: ip -s -j link show dev %s: %v\n%s", node, dev, err, out)
	}
	return linkCounters{rx: links[0].Stats64.RX.Packets, tx: links[0].Stats64.TX.Packets}
}

var pingStats = regexp.MustCompile(`(\d+) packets transmitted, (\d+) received`)

// TestSRv6Placement pins single flows to one spine with SRv6 micro-SIDs:
// uDX4/uDX6 SIDs on the leaves, and on host0 policy rules (fwmark 0x101
// and 0x102) with steered routes to host1 through spine0 and spine1. Marked
// pings cross one spine only, as the spines' interface counters show.
func TestSRv6Placement(t *testing.T) {
	labtest.Require(t)
	ctx := context.Background()
	fabric, err := inventory.ParseSpec(placementSpec)
	if err != nil {
		t.Fatal(err)
	}
	g, err := containerlab.Generate(fabric, containerlab.GenOptions{Name: placementLab, MgmtSubnet: netip.MustParsePrefix(placementMgmt), SRv6: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := g.Write(dir); err != nil {
		t.Fatal(err)
	}
	topo := filepath.Join(dir, g.TopologyFile)
	top, err := containerlab.Parse(topo)
	if err != nil {
		t.Fatal(err)
	}
	lab, err := top.Lab(dir)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	l := &testLab{labtest.StartLab(t, lab)} // torn down when the test ends, also on failure
	t.Logf("lab %s up in %s", lab.Name, time.Since(start).Round(time.Millisecond))

	// The uN SIDs of every switch, as `lab up` installs them (the kernel
	// data plane through the linux driver).
	target, err := bringup.FromLab(lab, l.St, topo)
	if err != nil {
		t.Fatal(err)
	}
	linuxOnly := func(_ string, cfg drivers.Config) (drivers.Driver, error) { return Open(cfg) }
	diffs, err := bringup.Apply(ctx, target, bringup.LabFeatures(lab), linuxOnly, false)
	if err != nil {
		t.Fatalf("uN SIDs: %v\n%s", err, bringup.DiffSummary(diffs))
	}
	t.Logf("uN SIDs:\n%s", bringup.DiffSummary(diffs))

	// The plan, from the generated lab.
	loc := func(n string) netip.Prefix {
		node := lab.NodeByName(n)
		if node == nil || !node.SRv6Locator.IsValid() {
			t.Fatalf("node %s has no locator", n)
		}
		return node.SRv6Locator
	}
	h0, l0 := peerOf(t, lab, "host0", "leaf0")
	h1, l1 := peerOf(t, lab, "host1", "leaf1")
	host1v4, host1v6 := h1.IPv4.Addr(), h1.IPv6.Addr()
	const dx4, dx6 = 0xe001, 0xe101 // host 1 behind its leaf
	leafSIDs := func(leaf string, host containerlab.Endpoint, port string) *drivers.DeviceFeatures {
		lc := loc(leaf)
		return &drivers.DeviceFeatures{SRv6: &drivers.SRv6{Locator: "main", Prefix: lc, BlockLen: 32, NodeLen: 16,
			SIDs: []drivers.SID{
				{Addr: lc, Behavior: "uN"},
				{Addr: netip.PrefixFrom(uSIDs(lc, nodeID(lc), dx4), 64), Behavior: "uDX4", Nexthop: host.IPv4.Addr(), Dev: port},
				{Addr: netip.PrefixFrom(uSIDs(lc, nodeID(lc), dx6), 64), Behavior: "uDX6", Nexthop: host.IPv6.Addr(), Dev: port},
			}}}
	}
	leaf0Want, leaf1Want := leafSIDs("leaf0", h0, l0.Interface), leafSIDs("leaf1", h1, l1.Interface)
	leaf1ID := nodeID(loc("leaf1"))
	via := func(spine string, id uint16) []netip.Addr {
		return []netip.Addr{uSIDs(loc(spine), nodeID(loc(spine)), leaf1ID, id)}
	}
	hostWant := &drivers.DeviceFeatures{SRv6: &drivers.SRv6{
		Rules: []drivers.PolicyRule{{Mark: 0x101, Table: 101, Priority: 101}, {Mark: 0x102, Table: 102, Priority: 102}},
		Steer: []drivers.Steer{
			{Prefix: netip.PrefixFrom(host1v4, 32), Segments: via("spine0", dx4), Dev: h0.Interface, Table: 101},
			{Prefix: netip.PrefixFrom(host1v6, 128), Segments: via("spine0", dx6), Dev: h0.Interface, Table: 101},
			{Prefix: netip.PrefixFrom(host1v4, 32), Segments: via("spine1", dx4), Dev: h0.Interface, Table: 102},
			{Prefix: netip.PrefixFrom(host1v6, 128), Segments: via("spine1", dx6), Dev: h0.Interface, Table: 102},
		},
	}}
	t.Logf("host0 steers %s via %s (0x101) and %s (0x102)", host1v4, via("spine0", dx4)[0], via("spine1", dx4)[0])

	// The fabric converges: host0 reaches host1 (IPv4 and IPv6) and the
	// locators are routed.
	host0 := l.open(t, "host0")
	deadline := time.Now().Add(90 * time.Second)
	for _, c := range []struct{ node, cmd string }{
		{"leaf0", "ip -6 route show " + loc("spine0").String()}, {"leaf0", "ip -6 route show " + loc("spine1").String()},
		{"spine0", "ip -6 route show " + loc("leaf1").String()}, {"spine1", "ip -6 route show " + loc("leaf1").String()},
		{"host0", "ping -c 1 -W 1 " + host1v4.String() + " >/dev/null && echo ok"}, {"host0", "ping -6 -c 1 -W 1 " + host1v6.String() + " >/dev/null && echo ok"},
	} {
		for {
			out, err := l.D.Exec(ctx, l.St, c.node, c.cmd)
			if err == nil && strings.TrimSpace(out) != "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("fabric not converged after 90s: %s: %s: %v %s", c.node, c.cmd, err, out)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	t.Logf("fabric converged %s after the lab was up", time.Since(start).Round(time.Millisecond))

	// The spines' uN SIDs forward: the kernel resolves a container to the
	// seg6local End route (a route through lo would be a reject route).
	for _, sp := range []string{"spine0", "spine1"} {
		in, _ := peerOf(t, lab, sp, "leaf0")
		c := uSIDs(loc(sp), nodeID(loc(sp)), nodeID(loc("leaf1")), 0xe001)
		out := l.Sh(t, sp, fmt.Sprintf("ip -6 route get %s iif %s from %s", c, in.Interface, h0.IPv6.Addr()))
		if !strings.Contains(out, "encap seg6local action End flavors next-csid lblen 32 nflen 16 dev "+srv6Dev) {
			t.Errorf("%s: uN SID does not take %s: %s", sp, c, out)
		}
	}

	// Bad input is refused before anything changes.
	bad := &drivers.DeviceFeatures{SRv6: &drivers.SRv6{SIDs: []drivers.SID{{Addr: netip.MustParsePrefix("fd00:bbbb:2:e009::/64"), Behavior: "uDX4", Nexthop: host1v4, Dev: "eth9"}}}}
	if _, err := l.open(t, "leaf1").Diff(ctx, bad); err == nil || !strings.Contains(err.Error(), "sid fd00:bbbb:2:e009::/64 uDX4: no interface eth9") {
		t.Errorf("uDX4 on a missing interface: %v", err)
	}

	// Each device: dry run, apply, apply again (nothing), verify.
	for _, c := range []struct {
		node string
		want *drivers.DeviceFeatures
		keys []string
	}{
		{"leaf0", leaf0Want, []string{"route " + leaf0Want.SRv6.SIDs[1].Addr.String()}},
		{"leaf1", leaf1Want, []string{"route " + leaf1Want.SRv6.SIDs[1].Addr.String(), "route " + leaf1Want.SRv6.SIDs[2].Addr.String()}},
		{"host0", hostWant, []string{"rule -4 fwmark 0x101", "rule -6 fwmark 0x101", "rule -4 fwmark 0x102", "rule -6 fwmark 0x102",
			fmt.Sprintf("route %s/32 table 101", host1v4), fmt.Sprintf("route %s/128 table 102", host1v6)}},
	} {
		drv := l.open(t, c.node)
		diff, err := drv.Diff(ctx, c.want)
		if err != nil {
			t.Fatalf("%s: diff: %v", c.node, err)
		}
		t.Logf("%s diff:\n%s", c.node, diff)
		keys := map[string]bool{}
		for _, ch := range diff {
			keys[ch.Key] = true
		}
		for _, k := range c.keys {
			if !keys[k] {
				t.Errorf("%s: diff lacks %s", c.node, k)
			}
		}
		if c.node == "host0" {
			if out := l.Sh(t, "host0", "ip rule show; ip -6 rule show"); strings.Contains(out, "0x101") {
				t.Fatalf("Diff changed the device:\n%s", out)
			}
		}
		applied, err := drv.Apply(ctx, c.want)
		if err != nil {
			t.Fatalf("%s: apply: %v\napplied:\n%s", c.node, err, applied)
		}
		if len(applied) != len(diff) {
			t.Errorf("%s: applied %d changes, diff had %d", c.node, len(applied), len(diff))
		}
		if d2, err := drv.Diff(ctx, c.want); err != nil || len(d2) != 0 {
			t.Errorf("%s: second diff: %v\n%s", c.node, err, d2)
		}
		if again, err := drv.Apply(ctx, c.want); err != nil || len(again) != 0 {
			t.Errorf("%s: second apply: %v\n%s", c.node, err, again)
		}
		checks, err := drv.Verify(ctx, c.want)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range checks {
			if !ch.OK {
				t.Errorf("%s: check failed: %+v", c.node, ch)
			}
			if strings.HasPrefix(ch.Name, "rule ") || strings.Contains(ch.Name, "uDX") || strings.Contains(ch.Name, " table ") {
				t.Logf("%s: %s: %s", c.node, ch.Name, ch.Evidence)
			}
		}
	}
	t.Logf("host0 rules and tables:\n%s", l.Sh(t, "host0", "ip rule show; ip -6 rule show; ip route show table 101; ip -6 route show table 101; ip route show table 102; ip -6 route show table 102"))
	t.Logf("leaf1 SIDs:\n%s", l.Sh(t, "leaf1", "ip -6 route show | grep seg6local"))

	// State reports the rules, the steered routes of their tables and the
	// SIDs.
	st, err := host0.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range []int{4, 6} {
		for _, m := range []uint32{0x101, 0x102} {
			found := false
			for _, r := range st.Rules {
				if r.Family == fam && r.Mark == m && r.Mask == 0xffffffff && r.Action == "lookup" && r.Table == int(m&0xff)+100 && r.Priority == int(m&0xff)+100 {
					found = true
				}
			}
			if !found {
				t.Errorf("State rules lack IPv%d fwmark %#x: %+v", fam, m, st.Rules)
			}
		}
	}
	for _, w := range []struct {
		p     netip.Prefix
		table int
	}{{netip.PrefixFrom(host1v4, 32), 101}, {netip.PrefixFrom(host1v6, 128), 101}, {netip.PrefixFrom(host1v4, 32), 102}, {netip.PrefixFrom(host1v6, 128), 102}} {
		found := false
		for _, r := range st.PolicyRoutes {
			if r.Prefix == w.p && r.Table == w.table && len(r.Nexthops) == 1 && r.Nexthops[0].Dev == h0.Interface {
				found = true
			}
		}
		if !found {
			t.Errorf("State policy routes lack %s table %d: %+v", w.p, w.table, st.PolicyRoutes)
		}
	}
	if _, ok := st.Route("", netip.PrefixFrom(host1v4, 32)); ok {
		t.Errorf("a policy table's route is in State.Routes")
	}
	lst, err := l.open(t, "leaf1").State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var dxFound int
	for _, s := range lst.SIDs {
		switch {
		case s.Addr == leaf1Want.SRv6.SIDs[1].Addr && s.Behavior == "End.DX4" && s.Nexthop == host1v4 && s.Dev == l1.Interface:
			dxFound++
		case s.Addr == leaf1Want.SRv6.SIDs[2].Addr && s.Behavior == "End.DX6" && s.Nexthop == host1v6 && s.Dev == l1.Interface:
			dxFound++
		}
	}
	if dxFound != 2 {
		t.Errorf("leaf1 State SIDs lack the uDX4/uDX6 SIDs: %+v", lst.SIDs)
	}

	// Placement: marked pings cross one spine only. Forward-only counters:
	// each spine's receive counter from leaf0 and transmit counter to
	// leaf1 (the echo replies take the fabric's ECMP paths back, through
	// the other ports). The other spine sees only BGP keepalives.
	type ports struct{ fromLeaf0, toLeaf1 string }
	spines := map[string]ports{}
	for _, s := range []string{"spine0", "spine1"} {
		a, _ := peerOf(t, lab, s, "leaf0")
		b, _ := peerOf(t, lab, s, "leaf1")
		spines[s] = ports{a.Interface, b.Interface}
	}
	read := func() map[string][2]uint64 {
		out := map[string][2]uint64{}
		for s, p := range spines {
			out[s] = [2]uint64{counters(t, l, s, p.fromLeaf0).rx, counters(t, l, s, p.toLeaf1).tx}
		}
		return out
	}
	const count = 200
	const noise = 40 // keepalives and neighbor discovery while the pings run
	for _, c := range []struct {
		mark       uint32
		dst        netip.Addr
		spine, not string
	}{
		{0x101, host1v4, "spine0", "spine1"},
		{0x102, host1v4, "spine1", "spine0"},
		{0x101, host1v6, "spine0", "spine1"},
		{0x102, host1v6, "spine1", "spine0"},
	} {
		before := read()
		cmd := fmt.Sprintf("ping -q -m %d -c %d -i 0.01 -W 1 %s", c.mark, count, c.dst) // iputils takes the mark in decimal
		out, err := host0.Exec(ctx, cmd)
		after := read()
		m := pingStats.FindStringSubmatch(out)
		if err != nil || m == nil {
			t.Errorf("%s: %v\n%s", cmd, err, out)
			continue
		}
		sent, _ := strconv.Atoi(m[1])
		recv, _ := strconv.Atoi(m[2])
		delta := func(s string) [2]uint64 { return [2]uint64{after[s][0] - before[s][0], after[s][1] - before[s][1]} }
		on, off := delta(c.spine), delta(c.not)
		t.Logf("fwmark %#x to %s: %d sent, %d received; %s rx from leaf0 %d, tx to leaf1 %d; %s rx from leaf0 %d, tx to leaf1 %d",
			c.mark, c.dst, sent, recv, c.spine, on[0], on[1], c.not, off[0], off[1])
		if recv < count*95/100 {
			t.Errorf("fwmark %#x to %s: %d of %d replies", c.mark, c.dst, recv, sent)
		}
		if on[0] < uint64(recv) || on[1] < uint64(recv) {
			t.Errorf("fwmark %#x to %s: %s carried %v packets, fewer than the %d answered pings", c.mark, c.dst, c.spine, on, recv)
		}
		if off[0] > noise || off[1] > noise {
			t.Errorf("fwmark %#x to %s: %s carried %v packets, want at most %d (background)", c.mark, c.dst, c.not, off, noise)
		}
	}

	// A rule changed behind the driver's back (another table at another
	// priority) shows up in Verify and Diff, and Apply puts it right.
	l.Sh(t, "host0", "ip -4 rule del pref 102 fwmark 0x102 lookup 102 && ip -4 rule add fwmark 0x102 lookup 202 pref 90")
	checks, err := host0.Verify(ctx, hostWant)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range checks {
		if ch.Name == "rule -4 fwmark 0x102 lookup 102 pref 102" && (ch.OK || ch.Evidence != "90: from all fwmark 0x102 lookup 202") {
			t.Errorf("check after a change: %+v", ch)
		}
	}
	diff, err := host0.Diff(ctx, hostWant)
	if err != nil || len(diff) != 1 || diff[0].Key != "rule -4 fwmark 0x102" || diff[0].Old != "from all fwmark 0x102 lookup 202 pref 90" || diff[0].New != "from all fwmark 0x102 lookup 102 pref 102" {
		t.Errorf("diff after a change: %v\n%s", err, diff)
	}
	if _, err := host0.Apply(ctx, hostWant); err != nil {
		t.Fatal(err)
	}
	if out := l.Sh(t, "host0", "ip rule show"); strings.Contains(out, "lookup 202") || !strings.Contains(out, "102:\tfrom all fwmark 0x102 lookup 102") {
		t.Errorf("rules after apply:\n%s", out)
	}
	if d, err := host0.Diff(ctx, hostWant); err != nil || len(d) != 0 {
		t.Errorf("diff after repair: %v\n%s", err, d)
	}
}
