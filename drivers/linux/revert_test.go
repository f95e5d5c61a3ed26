package linux

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/drivers"
)

// The command that undoes each kind of change the driver makes, and the
// changes it refuses to revert.
func TestRevertCmd(t *testing.T) {
	cases := []struct {
		c   drivers.Change
		cmd string
	}{
		{drivers.Change{Key: "sysctl net.ipv6.conf.eth1.seg6_enabled", Old: "0", New: "1"}, "sysctl -q -w net.ipv6.conf.eth1.seg6_enabled=0"},
		{drivers.Change{Key: "link sr0", New: "dummy, up"}, "ip link del sr0"},
		{drivers.Change{Key: "link sr0", Old: "down", New: "up"}, "ip link set sr0 down"},
		{drivers.Change{Key: "route fd00:bbbb:1:e001::/64", New: "encap seg6local action End.DX4 nh4 10.0.0.1 dev eth1"}, "ip -6 route del fd00:bbbb:1:e001::/64"},
		{drivers.Change{Key: "route 10.0.0.7/32 table 101", New: "encap seg6 mode encap segs fd00:bbbb:2:1:e002:: dev eth1"}, "ip -4 route del 10.0.0.7/32 table 101"},
		{drivers.Change{Key: "route 10.0.0.7/32 table 101", Old: "encap seg6 mode encap segs fd00:bbbb:3:1:e002:: dev eth1", New: "encap seg6 mode encap segs fd00:bbbb:2:1:e002:: dev eth1"},
			"ip -4 route replace 10.0.0.7/32 encap seg6 mode encap segs fd00:bbbb:3:1:e002:: dev eth1 table 101"},
		{drivers.Change{Key: "rule -4 fwmark 0x107", New: "from all fwmark 0x107 lookup 107 pref 107"}, "ip -4 rule del fwmark 0x107 lookup 107 pref 107"},
		{drivers.Change{Key: "rule -4 fwmark 0x103", Old: "from all fwmark 0x103 blackhole pref 103", New: "from all fwmark 0x103 lookup 103 pref 103"},
			"ip -4 rule del fwmark 0x103 lookup 103 pref 103 && ip -4 rule add from all fwmark 0x103 blackhole pref 103"},
		{drivers.Change{Key: "deny -4 iif eth1 to 10.0.0.4/32 pref 500", New: "prohibit"}, "ip -4 rule del iif eth1 to 10.0.0.4/32 pref 500 prohibit"},
		{drivers.Change{Key: "vrf red", New: "vrf device table 10"}, "ip link del red"},
		{drivers.Change{Key: "vrf red member eth1", New: "red"}, "ip link set eth1 nomaster"},
		{drivers.Change{Key: "vrf red member eth1", Old: "blue", New: "red"}, "ip link set eth1 master blue"},
	}
	for _, c := range cases {
		got, err := revertCmd(c.c)
		if err != nil || got != c.cmd {
			t.Errorf("%s: %q (%v), want %q", c.c, got, err, c.cmd)
		}
	}
	d := &Driver{name: "leaf0"}
	for _, c := range []drivers.Change{
		{Key: "route 10.0.0.7/32", Old: nonSeg6 + "10.0.0.7 proto bgp metric 20", New: "encap seg6 mode encap segs fd00:bbbb:2:1:e002:: dev eth1"},
		{Key: "sysctl net.ipv4.x", New: "1"},
		{Key: "route nonsense", New: "encap seg6"},
		{Key: "deny -4 iif eth1 to 10.0.0.4/32 pref 500", Old: "prohibit", New: ""},
		{Key: "netns red", New: "present"},
	} {
		if err := d.CanRevert(c); err == nil {
			t.Errorf("%s counted as revertible", c)
		} else if !strings.Contains(err.Error(), "leaf0") {
			t.Errorf("%s: %v does not name the device", c, err)
		}
	}
}

// Isolation rules: the ones installed are checks, the missing ones
// changes; a seg6 route that would replace another kind is named in the
// diff with the route it replaces.
func TestIsolationPlan(t *testing.T) {
	d := &Driver{name: "leaf0"}
	rules4 := `[{"priority":0,"src":"all","table":"255"},` +
		`{"priority":500,"src":"all","dst":"10.0.0.4","dstlen":32,"iif":"eth1","action":"8"},` +
		`{"priority":32766,"src":"all","table":"254"}]`
	ctx := snapCtx(map[string]string{rulesCmd(4): rules4, rulesCmd(6): "[]"})
	p := &plan{}
	err := d.isolationPlan(ctx, p, []drivers.IsolationRule{
		{In: "eth1", To: netip.MustParsePrefix("10.0.0.4/32"), Priority: 500},
		{In: "eth1", To: netip.MustParsePrefix("10.0.0.5/32"), Priority: 500},
		{In: "eth1", To: netip.MustParsePrefix("10.0.0.5/32"), Priority: 500}, // twice: once
	})
	if err != nil {
		t.Fatal(err)
	}
	want := drivers.Diff{{Feature: drivers.FeatVRFRules, Key: "deny -4 iif eth1 to 10.0.0.5/32 pref 500", New: "prohibit"}}
	if got := p.diff(); got.String() != want.String() {
		t.Errorf("diff %s, want %s", got, want)
	}
	if len(p.items) != 1 || p.items[0].cmd != "ip -4 rule add pref 500 iif eth1 to 10.0.0.5/32 prohibit" {
		t.Errorf("items %+v", p.items)
	}
	cs := p.result("leaf0")
	if len(cs) != 2 || !cs[0].OK || cs[0].Evidence != "500: from all to 10.0.0.4/32 iif eth1 prohibit" || cs[1].OK {
		t.Errorf("checks %+v", cs)
	}
	for _, bad := range []drivers.IsolationRule{{In: "", To: netip.MustParsePrefix("10.0.0.5/32"), Priority: 500}, {In: "eth1", Priority: 500},
		{In: "eth1", To: netip.MustParsePrefix("10.0.0.5/32"), Priority: 40000}} {
		if err := d.isolationPlan(ctx, &plan{}, []drivers.IsolationRule{bad}); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
