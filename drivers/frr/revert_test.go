package frr

import (
	"slices"
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
}
