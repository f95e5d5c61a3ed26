package linux

import (
	"context"
	"fmt"
)

// Every SSH session costs a login shell start on the device (often 100 ms
// or more), so the driver reads what an operation needs in one batch
// first: prefetch runs the commands in one session and stores the replies
// in the context, and query answers from there. A command that was not
// prefetched simply runs on its own.

type snapKey struct{}

type snapshot map[string]result

type result struct {
	out string
	err error
}

// prefetch runs read-only cmds in one session and returns a context that
// answers them.
func (d *Driver) prefetch(ctx context.Context, cmds ...string) (context.Context, error) {
	seen := map[string]bool{}
	var uniq []string
	for _, c := range cmds {
		if c != "" && !seen[c] {
			seen[c] = true
			uniq = append(uniq, c)
		}
	}
	res, err := d.sh.RunBatch(ctx, uniq, false)
	if err != nil {
		return nil, fmt.Errorf("linux %s: %w", d.name, err)
	}
	snap := snapshot{}
	if prev, ok := ctx.Value(snapKey{}).(snapshot); ok {
		for k, v := range prev {
			snap[k] = v
		}
	}
	for _, r := range res {
		var e error
		if err := r.Err(); err != nil {
			e = fmt.Errorf("linux %s: %w", d.name, err)
		}
		snap[r.Cmd] = result{out: r.Output, err: e}
	}
	return context.WithValue(ctx, snapKey{}, snap), nil
}

// read runs a read-only command, or answers it from a prefetched batch.
func (d *Driver) read(ctx context.Context, cmd string) (string, error) {
	if snap, ok := ctx.Value(snapKey{}).(snapshot); ok {
		if r, ok := snap[cmd]; ok {
			return r.out, r.err
		}
	}
	return d.Exec(ctx, cmd)
}

// query reads cmd and parses its reply.
func query[T any](ctx context.Context, d *Driver, cmd string, parse func(string) (T, error)) (T, error) {
	var zero T
	out, err := d.read(ctx, cmd)
	if err != nil {
		return zero, err
	}
	v, err := parse(out)
	if err != nil {
		return zero, d.badReply(cmd, out, err)
	}
	return v, nil
}

// Commands the driver reads.
const (
	cmdLinks     = "ip -j link show"
	cmdAddrs     = "ip -j addr show"
	cmdVRFs      = "ip -j -d link show type vrf"
	cmdNexthops  = "ip -j nexthop show"
	cmdFactsBase = "hostname; uname -r; cat /etc/os-release 2>/dev/null; true"
	cmdNeigh     = "ip -j neigh show"
	// cmdLLDP reads lldpd's neighbours when lldpd runs: at its usual
	// socket, or at the one fabricbench's native runtime gives each node.
	// Without lldpd the reply is empty.
	// cmdForwarding reads whether the kernel forwards IPv4 and IPv6.
	cmdForwarding = "cat /proc/sys/net/ipv4/ip_forward /proc/sys/net/ipv6/conf/all/forwarding"
	cmdLLDP       = "for s in /run/lldpd/lldpd.socket /run/lldpd.socket /var/run/lldpd.socket; do if [ -S $s ]; then lldpcli -u $s -f json0 show neighbors 2>/dev/null; exit 0; fi; done; true"
)

func routesJSONCmd(family, table int) string {
	if table != 0 {
		return tableRead(fmt.Sprintf("ip -j -%d route show table %d", family, table), "[]")
	}
	return fmt.Sprintf("ip -j -%d route show", family)
}

func routesTextCmd(family, table int) string {
	if table != 0 {
		return tableRead(fmt.Sprintf("ip -%d route show table %d", family, table), "")
	}
	return fmt.Sprintf("ip -%d route show", family)
}

// tableRead wraps the read of one routing table: a table that does not
// exist yet (no route was ever added to it; the kernel says "FIB table
// does not exist") reads as empty.
func tableRead(cmd, empty string) string {
	return fmt.Sprintf(`out=$(%s 2>&1); rc=$?; if [ $rc -ne 0 ] && printf '%%s' "$out" | grep -q 'table does not exist'; then echo '%s'; else printf '%%s\n' "$out"; exit $rc; fi`, cmd, empty)
}
