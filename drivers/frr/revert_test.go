package frr

import (
	"slices"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/drivers"
)

// The vtysh lines that undo each kind of change Apply makes.
func TestRevertLines(t *testing.T) {
	cases := []struct {
		c     drivers.Change
		lines []string
		vty   bool
	}{
		{drivers.Change{Feature: drivers.FeatECMPHash, Key: "frr router bgp 65101 address-family ipv4 unicast maximum-paths", Old: "8", New: "64"},
			[]string{"router bgp 65101", "address-family ipv4 unicast", "maximum-paths 8", "exit-address-family", "exit"}, true},
		{drivers.Change{Feature: drivers.FeatECMPHash, Key: "frr router bgp 65101 vrf red address-family ipv6 unicast maximum-paths", Old: "", New: "64"},
			[]string{"router bgp 65101 vrf red", "address-family ipv6 unicast", "no maximum-paths 64", "exit-address-family", "exit"}, true},
		{drivers.Change{Feature: drivers.FeatSRv6, Key: "frr ipv6 forwarding", Old: "no", New: "yes"}, []string{"no ipv6 forwarding"}, true},
		{drivers.Change{Feature: drivers.FeatECMPHash, Key: "sysctl net.ipv4.fib_multipath_hash_policy", Old: "0", New: "1"}, nil, false},
		// The kernel's SRv6 and isolation changes are the linux driver's.
		{drivers.Change{Feature: drivers.FeatSRv6, Key: "route fd00:bbbb:1:e001::/64", New: "encap seg6local action End.DX4 nh4 10.0.0.1 dev eth1"}, nil, false},
		{drivers.Change{Feature: drivers.FeatSRv6, Key: "link sr0", New: "dummy, up"}, nil, false},
		{drivers.Change{Feature: drivers.FeatVRFRules, Key: "deny -4 iif eth1 to 10.0.0.4/32 pref 500", New: "prohibit"}, nil, false},
	}
	for _, c := range cases {
		lines, vty, err := revertLines(c.c)
		if err != nil || vty != c.vty || !slices.Equal(lines, c.lines) {
			t.Errorf("%s: %q vty %v err %v, want %q", c.c, lines, vty, err, c.lines)
		}
	}
	if _, _, err := revertLines(drivers.Change{Feature: drivers.FeatVRF, Key: "netns red", New: "present"}); err == nil {
		t.Error("a VRF namespace counted as revertible")
	}
	for _, c := range []drivers.Change{
		{Feature: drivers.FeatVRF, Key: "vrf red netns", New: "/run/netns/red"},
		{Feature: drivers.FeatVRF, Key: "vrf red member eth1", Old: "default", New: "red (198.19.0.0/31)"},
	} {
		if _, _, err := revertLines(c); err == nil || !strings.Contains(err.Error(), "network namespace") {
			t.Errorf("%s: %v, want refused (netns VRF)", c, err)
		}
	}
}
