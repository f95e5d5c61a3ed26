package linux

import (
	"context"
	"fmt"
	"strings"

	"github.com/fabricbench/fabricbench/drivers"
)

// CanRevert implements drivers.Reverter: sysctl changes can be undone;
// routes, SIDs, rules and VRF devices cannot (yet).
func (d *Driver) CanRevert(c drivers.Change) error {
	if name, ok := strings.CutPrefix(c.Key, "sysctl "); ok && c.Old != "" && name != "" {
		return nil
	}
	return fmt.Errorf("linux %s: cannot revert %s (only sysctl changes are reverted)", d.name, c)
}

// Revert implements drivers.Reverter: every sysctl back to its old value,
// last change first, in one session.
func (d *Driver) Revert(ctx context.Context, applied drivers.Diff) (drivers.Diff, error) {
	d.applyM.Lock()
	defer d.applyM.Unlock()
	var items []item
	for i := len(applied) - 1; i >= 0; i-- {
		c := applied[i]
		if err := d.CanRevert(c); err != nil {
			return drivers.Diff{}, err
		}
		name := strings.TrimPrefix(c.Key, "sysctl ")
		items = append(items, item{change: c.Inverse(), cmd: "sysctl -q -w " + shellQuote(name+"="+c.Old)})
	}
	return d.run(ctx, items)
}
