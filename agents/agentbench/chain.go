// Package agentbench measures the transport agent against iperf3 on one
// host pair of a lab path: two hosts joined through a leaf, a spine and a
// leaf (network namespaces on this machine, plain kernel forwarding, veth
// links of a 9000-byte MTU, optionally tbf-shaped), or the hosts of a lab
// that is already deployed. For each number of flows it sends the agent's
// flows (the data plane of agents/dataplane, the transport of
// agents/transport), then iperf3's UDP (the agent's datagram size) and TCP
// streams over the same path, and reports per-flow goodput, loss,
// retransmissions, timeouts and CPU time per gigabyte of each.
// `fabricbench agent bench` is its command.
package agentbench

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Chain is the namespaces of the bench's own lab path: hosts h0 and h1,
// and per plane a leaf under each host and a spine between them. Plane p
// has its own switches and subnet (198.18.(250-p).0/24), and each host a
// NIC (eth(p+1)) into it.
type Chain struct {
	Prefix string // namespace name prefix (fbab-<pid>)
	Planes int
	// SrcNS and DstNS are the hosts' namespaces; Src and Dst their
	// addresses, plane 0 first.
	SrcNS, DstNS string
	Src, Dst     []netip.Addr
	names        []string
}

// ChainOptions shape the chain.
type ChainOptions struct {
	// Prefix names the namespaces (<prefix>-h0, <prefix>-p0-l0, ...);
	// "" is fbab-<pid>.
	Prefix string
	// MTU of every link; 0 is 9000.
	MTU int
	// RateBps shapes both ends of every link with tbf (a 1 ms burst, 5 ms
	// of queue); 0 leaves the links unshaped.
	RateBps int64
	// Planes is the number of parallel leaf-spine-leaf paths, each with a
	// NIC on both hosts; 0 is 1.
	Planes int
}

// MaxPlanes is the most planes a chain has.
const MaxPlanes = 8

// NewChain builds the chain, or returns an error naming what failed (and
// removes what it made). It needs root, ip and (to shape) tc. Nothing is
// created in the namespace the process runs in.
func NewChain(ctx context.Context, o ChainOptions) (*Chain, error) {
	if o.Prefix == "" {
		o.Prefix = fmt.Sprintf("fbab-%d", os.Getpid())
	}
	if o.MTU == 0 {
		o.MTU = 9000
	}
	if o.Planes == 0 {
		o.Planes = 1
	}
	switch {
	case o.Planes < 1 || o.Planes > MaxPlanes:
		return nil, fmt.Errorf("agentbench: %d planes, want 1 to %d", o.Planes, MaxPlanes)
	case o.MTU < 1280 || o.MTU > 65535:
		return nil, fmt.Errorf("agentbench: mtu %d out of range (1280 to 65535)", o.MTU)
	case o.RateBps < 0:
		return nil, fmt.Errorf("agentbench: negative link rate %d", o.RateBps)
	case len(o.Prefix) > 32 || strings.ContainsAny(o.Prefix, "/ \t\n"):
		return nil, fmt.Errorf("agentbench: namespace prefix %q: want at most 32 characters, no '/' or spaces", o.Prefix)
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("agentbench: building the lab path (network namespaces) needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("agentbench: ip (iproute2) not found: %w", err)
	}
	if o.RateBps > 0 {
		if _, err := exec.LookPath("tc"); err != nil {
			return nil, fmt.Errorf("agentbench: tc (iproute2) not found: %w", err)
		}
	}
	c := &Chain{Prefix: o.Prefix, Planes: o.Planes, SrcNS: o.Prefix + "-h0", DstNS: o.Prefix + "-h1"}
	ok := false
	defer func() {
		if !ok {
			_ = c.Close()
		}
	}()
	run := func(args ...string) error {
		out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("agentbench: %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	add := func(ns string) error {
		// A leftover of a crashed run of the same process ID.
		_ = exec.Command("ip", "netns", "del", ns).Run()
		if err := run("ip", "netns", "add", ns); err != nil {
			return err
		}
		c.names = append(c.names, ns)
		return run("ip", "-n", ns, "link", "set", "lo", "up")
	}
	for _, ns := range []string{c.SrcNS, c.DstNS} {
		if err := add(ns); err != nil {
			return nil, err
		}
	}
	mtu := strconv.Itoa(o.MTU)
	link := func(a, ifa, b, ifb string) error {
		// Created inside the namespaces: the root namespace never sees them.
		if err := run("ip", "link", "add", "name", ifa, "netns", a, "mtu", mtu, "type", "veth", "peer", "name", ifb, "netns", b, "mtu", mtu); err != nil {
			return err
		}
		for _, e := range [][2]string{{a, ifa}, {b, ifb}} {
			if o.RateBps > 0 {
				rate := o.RateBps / 8 // bytes/s
				burst := max(rate/1000, int64(4*(o.MTU+14)))
				if err := run("tc", "-n", e[0], "qdisc", "add", "dev", e[1], "root", "tbf", "rate", strconv.FormatInt(o.RateBps, 10)+"bit",
					"burst", strconv.FormatInt(burst, 10), "latency", "5ms"); err != nil {
					return err
				}
			}
			if err := run("ip", "-n", e[0], "link", "set", e[1], "up"); err != nil {
				return err
			}
		}
		return nil
	}
	for p := 0; p < o.Planes; p++ {
		l0, s0, l1 := fmt.Sprintf("%s-p%d-l0", o.Prefix, p), fmt.Sprintf("%s-p%d-s0", o.Prefix, p), fmt.Sprintf("%s-p%d-l1", o.Prefix, p)
		for _, ns := range []string{l0, s0, l1} {
			if err := add(ns); err != nil {
				return nil, err
			}
			if err := run("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_forward=1"); err != nil {
				return nil, err
			}
		}
		hif := "eth" + strconv.Itoa(p+1)
		for _, l := range [][4]string{{c.SrcNS, hif, l0, "eth1"}, {l0, "eth2", s0, "eth1"}, {s0, "eth2", l1, "eth1"}, {l1, "eth2", c.DstNS, hif}} {
			if err := link(l[0], l[1], l[2], l[3]); err != nil {
				return nil, err
			}
		}
		// 198.18.(250-p).0/24 in four /30s: h0-l0, l0-s0, s0-l1, l1-h1.
		net := netip.AddrFrom4([4]byte{198, 18, byte(250 - p), 0})
		at := func(i int) netip.Addr { b := net.As4(); b[3] = byte(i); return netip.AddrFrom4(b) }
		pfx := func(i int) string { return at(i).String() + "/30" }
		for _, a := range [][3]string{{c.SrcNS, hif, pfx(1)}, {l0, "eth1", pfx(2)}, {l0, "eth2", pfx(5)}, {s0, "eth1", pfx(6)},
			{s0, "eth2", pfx(9)}, {l1, "eth1", pfx(10)}, {l1, "eth2", pfx(13)}, {c.DstNS, hif, pfx(14)}} {
			if err := run("ip", "-n", a[0], "addr", "add", a[2], "dev", a[1]); err != nil {
				return nil, err
			}
		}
		sub := net.String() + "/24"
		for _, r := range [][3]string{
			{c.SrcNS, sub, at(2).String()}, {c.DstNS, sub, at(13).String()},
			{l0, sub, at(6).String()}, {l1, sub, at(9).String()},
			{s0, at(0).String() + "/30", at(5).String()}, {s0, at(12).String() + "/30", at(10).String()},
		} {
			if err := run("ip", "-n", r[0], "route", "add", r[1], "via", r[2]); err != nil {
				return nil, err
			}
		}
		c.Src = append(c.Src, at(1))
		c.Dst = append(c.Dst, at(14))
	}
	ok = true
	return c, nil
}

// NetnsPath is the file of a named namespace.
func NetnsPath(ns string) string { return "/var/run/netns/" + ns }

// Close deletes every namespace of the chain (and with them its veths).
func (c *Chain) Close() error {
	var errs []error
	for i := len(c.names) - 1; i >= 0; i-- {
		if out, err := exec.Command("ip", "netns", "del", c.names[i]).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ip netns del %s: %v: %s", c.names[i], err, strings.TrimSpace(string(out))))
		}
	}
	c.names = nil
	return errors.Join(errs...)
}

// Namespaces lists the chain's namespaces.
func (c *Chain) Namespaces() []string { return append([]string(nil), c.names...) }

// HopCount is the number of switches between the hosts.
const HopCount = 3

// waitPing waits until the destination answers a ping on every plane.
func (c *Chain) waitPing(ctx context.Context) error {
	deadline := time.Now().Add(5 * time.Second)
	for p := range c.Src {
		for {
			err := exec.CommandContext(ctx, "ip", "netns", "exec", c.SrcNS, "ping", "-c1", "-W1", "-q", c.Dst[p].String()).Run()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("agentbench: %s does not answer %s on plane %d: %v", c.Dst[p], c.Src[p], p, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}
