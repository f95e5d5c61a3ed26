package sonic

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/drivers"
)

// CanRevert implements drivers.Reverter: CONFIG_DB field changes can be
// undone (HSET of the old value, HDEL of a field that was absent); VRFs
// created and interfaces bound through the config CLI cannot.
func (d *Driver) CanRevert(c drivers.Change) error {
	if c.Feature == drivers.FeatVRF {
		return fmt.Errorf("sonic %s: cannot revert %s (VRFs are created and bound through the config CLI)", d.device, c)
	}
	return nil
}

// Revert implements drivers.Reverter for changes this driver's Apply
// made, last first: the field's old value written back, or the field
// deleted when it was absent.
func (d *Driver) Revert(ctx context.Context, applied drivers.Diff) (drivers.Diff, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	done := drivers.Diff{}
	for i := len(applied) - 1; i >= 0; i-- {
		c, ok := d.applied[applied[i].Key]
		if !ok || c.cli != "" {
			return done, fmt.Errorf("sonic %s: cannot revert %s: not a CONFIG_DB field this driver changed", d.device, applied[i])
		}
		var cmd string
		if c.Old == "" {
			cmd = "sonic-db-cli CONFIG_DB HDEL " + dbQuote(c.key) + " " + shellQuote(c.dbField)
		} else {
			cmd = "sonic-db-cli CONFIG_DB HSET " + dbQuote(c.key) + " " + shellQuote(c.dbField) + " " + shellQuote(c.Old)
		}
		out, err := d.run(ctx, cmd)
		if err != nil {
			return done, err
		}
		if _, err := strconv.Atoi(strings.TrimSpace(out)); err != nil {
			return done, d.replyError(cmd, out, errors.New("expected the number of fields written"))
		}
		delete(d.applied, c.Key)
		done = append(done, c.Inverse())
	}
	return done, nil
}
