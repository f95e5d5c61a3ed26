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
// undone (HSET of the old value, HDEL of a field that was absent), and so
// can the config CLI's VRFs: a VRF created is deleted (`config vrf del`),
// an interface bound is unbound (or bound back to its earlier VRF) and
// its entry's fields and the addresses the bind removed are written back.
func (d *Driver) CanRevert(c drivers.Change) error {
	if c.Feature != drivers.FeatVRF {
		return nil
	}
	switch {
	case strings.HasPrefix(c.Key, "VRF|") && c.Old == "" && c.New == "present":
	case strings.HasSuffix(c.Key, " vrf_name") && c.New != "":
	case strings.Count(c.Key, "|") == 2 && c.Old == "present" && c.New == "":
	default:
		return fmt.Errorf("sonic %s: cannot revert %s (not a VRF, bind or address removal this driver makes)", d.device, c)
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
		if !ok {
			return done, fmt.Errorf("sonic %s: cannot revert %s: not a change this driver made", d.device, applied[i])
		}
		if c.cli != "" || c.implied {
			if err := d.revertCLI(ctx, c); err != nil {
				return done, err
			}
			delete(d.applied, c.Key)
			done = append(done, c.Inverse())
			continue
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

// revertCLI undoes a config CLI change: a VRF is deleted; a bind is
// undone (unbind, or bind to the earlier VRF) and the interface entry's
// other fields written back; an address the bind removed is written back.
func (d *Driver) revertCLI(ctx context.Context, c change) error {
	var cmds []string
	// hset writes fields back; an interface entry's vrf_name and NULL
	// are the bind's and unbind's own, an address entry is written even
	// when empty (NULL=NULL: it exists).
	hset := func(key string, m map[string]string, entry bool) {
		var args []string
		for _, k := range sortedKeys(m) {
			if entry && (k == "vrf_name" || k == "NULL") {
				continue
			}
			args = append(args, shellQuote(k), shellQuote(m[k]))
		}
		if len(args) == 0 && entry {
			return
		}
		if len(args) == 0 {
			args = []string{"NULL", "NULL"}
		}
		cmds = append(cmds, "sonic-db-cli CONFIG_DB HSET "+dbQuote(key)+" "+strings.Join(args, " "))
	}
	switch {
	case c.vrfAdd:
		cmds = append(cmds, "sudo config vrf del "+shellQuote(strings.TrimPrefix(c.key, "VRF|")))
	case c.bind && c.Old == "":
		cmds = append(cmds, "sudo config interface vrf unbind "+shellQuote(c.iface))
		hset(c.key, c.restore, true)
	case c.bind:
		cmds = append(cmds, "sudo config interface vrf bind "+shellQuote(c.iface)+" "+shellQuote(c.Old))
		hset(c.key, c.restore, true)
	case c.implied:
		hset(c.key, c.restore, false)
	default:
		return fmt.Errorf("sonic %s: cannot revert %s", d.device, c.Change)
	}
	for _, cmd := range cmds {
		if _, err := d.run(ctx, cmd); err != nil {
			return err
		}
	}
	return nil
}
