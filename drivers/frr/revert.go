package frr

import (
	"context"
	"fmt"
	"strings"

	"github.com/fabricbench/fabricbench/drivers"
)

// revertLines returns the vtysh lines that undo c, or ok false when c is
// the kernel's (the linux driver reverts it).
func revertLines(c drivers.Change) (lines []string, ok bool, err error) {
	if strings.HasPrefix(c.Key, "vrf ") && (strings.HasSuffix(c.Key, " netns") || c.Old == "default") {
		// zebra's netns VRFs: moving a port back out of the namespace
		// would not restore it (the kernel drops its qdiscs, e.g. a
		// link's tbf shaper, and its neighbours; its BGP session resets).
		return nil, false, fmt.Errorf("cannot revert %s: a port moved into a VRF's network namespace does not come back as it was (the kernel drops its qdiscs and neighbours)", c)
	}
	for _, k := range []string{"sysctl ", "route ", "rule ", "deny ", "link ", "vrf "} {
		if strings.HasPrefix(c.Key, k) {
			return nil, false, nil // the kernel's: the linux driver's
		}
	}
	if c.Key == "frr ipv6 forwarding" && c.Old == "no" {
		return []string{"no ipv6 forwarding"}, true, nil
	}
	if rest, found := strings.CutPrefix(c.Key, "frr "); found {
		if body, found := strings.CutSuffix(rest, " maximum-paths"); found {
			header, af, found := strings.Cut(body, " address-family ")
			if found && strings.HasPrefix(header, "router bgp ") {
				line := "maximum-paths " + c.Old
				if c.Old == "" {
					line = "no maximum-paths " + c.New
				}
				return []string{header, "address-family " + af, line, "exit-address-family", "exit"}, true, nil
			}
		}
	}
	return nil, false, fmt.Errorf("cannot revert %s", c)
}

// CanRevert implements drivers.Reverter: maximum-paths, ipv6 forwarding
// and what the linux driver changes in the kernel (sysctls, seg6 routes
// and SIDs, policy and isolation rules, VRF devices) can be undone;
// zebra's netns VRFs cannot.
func (d *Driver) CanRevert(c drivers.Change) error {
	_, vty, err := revertLines(c)
	if err != nil {
		return fmt.Errorf("frr %s: %w", d.name, err)
	}
	if !vty {
		return d.lx.CanRevert(c)
	}
	return nil
}

// Revert implements drivers.Reverter: the kernel's changes first (they
// were applied last), then the vtysh configuration, last change first.
func (d *Driver) Revert(ctx context.Context, applied drivers.Diff) (drivers.Diff, error) {
	var kernel, vty drivers.Diff
	var lines []string
	for i := len(applied) - 1; i >= 0; i-- {
		c := applied[i]
		l, isVty, err := revertLines(c)
		if err != nil {
			return drivers.Diff{}, fmt.Errorf("frr %s: %w", d.name, err)
		}
		if isVty {
			lines = append(lines, l...)
			vty = append(vty, c.Inverse())
		} else {
			kernel = append(drivers.Diff{c}, kernel...)
		}
	}
	done := drivers.Diff{}
	if len(kernel) > 0 {
		kd, err := d.lx.Revert(ctx, kernel)
		done = append(done, kd...)
		if err != nil {
			return done, d.wrapLinux(err)
		}
	}
	if len(lines) > 0 {
		d.applyMu.Lock()
		defer d.applyMu.Unlock()
		if err := d.Configure(ctx, lines); err != nil {
			return done, err
		}
		done = append(done, vty...)
	}
	return done, nil
}
