package linux

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/drivers"
)

// nonSeg6 starts the Old value of a route change that replaces a route
// without seg6 encapsulation (the rest is its `ip route` line): such a
// change is named by Diff but not reverted.
const nonSeg6 = "non-seg6 route: "

// revertCmd returns the command that undoes c: sysctls back to their
// old values; the SRv6 device sr0 deleted or set down again; seg6 routes
// deleted or put back as they were; policy rules deleted and the ones
// they replaced added again; VRF devices deleted and members put back on
// their old master; isolation rules deleted.
func revertCmd(c drivers.Change) (string, error) {
	key := c.Key
	switch {
	case strings.HasPrefix(key, "sysctl "):
		name := strings.TrimPrefix(key, "sysctl ")
		if name == "" || c.Old == "" {
			break
		}
		return "sysctl -q -w " + shellQuote(name+"="+c.Old), nil
	case key == "link "+srv6Dev:
		switch c.Old {
		case "":
			// Deleting one end of a veth pair deletes its peer.
			return "ip link del " + srv6Dev, nil
		case "down":
			return "ip link set " + srv6Dev + " down", nil
		}
	case strings.HasPrefix(key, "route "):
		f := strings.Fields(strings.TrimPrefix(key, "route "))
		if len(f) != 1 && (len(f) != 3 || f[1] != "table") {
			break
		}
		p, err := netip.ParsePrefix(f[0])
		if err != nil {
			break
		}
		fam, tbl := 4, ""
		if p.Addr().Is6() {
			fam = 6
		}
		if len(f) == 3 {
			if _, err := strconv.Atoi(f[2]); err != nil {
				break
			}
			tbl = " table " + f[2]
		}
		switch {
		case strings.HasPrefix(c.Old, nonSeg6):
			return "", fmt.Errorf("cannot revert %s: it replaces a route without seg6 encapsulation (%s), which the driver does not put back", c, strings.TrimPrefix(c.Old, nonSeg6))
		case c.Old == "":
			return fmt.Sprintf("ip -%d route del %s%s", fam, p, tbl), nil
		case strings.HasPrefix(c.Old, "encap seg6"):
			return fmt.Sprintf("ip -%d route replace %s %s%s", fam, p, quoteArgs(c.Old), tbl), nil
		}
	case strings.HasPrefix(key, "rule "):
		// "rule -4 fwmark 0x101" = "from all fwmark 0x101 lookup 101 pref 1000"
		f := strings.Fields(key)
		if len(f) != 4 || (f[1] != "-4" && f[1] != "-6") || f[2] != "fwmark" {
			break
		}
		add, ok := strings.CutPrefix(c.New, "from all ")
		if !ok {
			break
		}
		cmds := []string{fmt.Sprintf("ip %s rule del %s", f[1], quoteArgs(add))}
		if c.Old != "" {
			for _, o := range strings.Split(c.Old, "; ") {
				cmds = append(cmds, fmt.Sprintf("ip %s rule add %s", f[1], quoteArgs(o)))
			}
		}
		return strings.Join(cmds, " && "), nil
	case strings.HasPrefix(key, "deny "):
		// "deny -4 iif eth1 to 10.0.0.4/32 pref 500" = "prohibit"
		f := strings.Fields(key)
		if len(f) != 8 || c.Old != "" || (f[1] != "-4" && f[1] != "-6") {
			break
		}
		return fmt.Sprintf("ip %s rule del %s %s", f[1], quoteArgs(strings.Join(f[2:], " ")), shellQuote(c.New)), nil
	case strings.HasPrefix(key, "vrf "):
		f := strings.Fields(key)
		switch {
		case len(f) == 2 && c.Old == "":
			return "ip link del " + shellQuote(f[1]), nil
		case len(f) == 4 && f[2] == "member" && c.Old == "":
			return "ip link set " + shellQuote(f[3]) + " nomaster", nil
		case len(f) == 4 && f[2] == "member":
			return "ip link set " + shellQuote(f[3]) + " master " + shellQuote(c.Old), nil
		}
	}
	return "", fmt.Errorf("cannot revert %s", c)
}

// CanRevert implements drivers.Reverter: every change the driver makes
// can be undone (sysctls, the SRv6 device, seg6 routes, policy and
// isolation rules, VRF devices and members), except a seg6 route that
// replaced a route of another kind.
func (d *Driver) CanRevert(c drivers.Change) error {
	if _, err := revertCmd(c); err != nil {
		return fmt.Errorf("linux %s: %w", d.name, err)
	}
	return nil
}

// Revert implements drivers.Reverter: every change undone, last change
// first, in one session.
func (d *Driver) Revert(ctx context.Context, applied drivers.Diff) (drivers.Diff, error) {
	d.applyM.Lock()
	defer d.applyM.Unlock()
	var items []item
	for i := len(applied) - 1; i >= 0; i-- {
		c := applied[i]
		cmd, err := revertCmd(c)
		if err != nil {
			return drivers.Diff{}, fmt.Errorf("linux %s: %w", d.name, err)
		}
		items = append(items, item{change: c.Inverse(), cmd: cmd})
	}
	return d.run(ctx, items)
}
