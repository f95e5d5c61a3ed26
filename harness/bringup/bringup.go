// Package bringup validates a fabric after bring-up, before any benchmark:
// every link up at both ends, every BGP session established, every leaf
// with an ECMP route to each remote host prefix as wide as its uplink
// count, SRv6 SIDs installed where configured, and every host reaching
// every other host. It reads the devices through drivers (FRR, Linux,
// SONiC), so the same checks run on a native lab, a containerlab lab and
// real hardware. Each failed check names the device and the evidence.
package bringup

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/results"
)

// Device is one device to validate.
type Device struct {
	Name     string
	Role     string // host, leaf, spine, super-spine
	Platform string // driver platform: frr, linux, sonic
	Config   drivers.Config
	// Locator is the device's SRv6 uN locator, when configured.
	Locator netip.Prefix
}

// IsHost reports whether the device is an end host.
func (d *Device) IsHost() bool { return d.Role == "host" }

// Endpoint is one end of a link.
type Endpoint struct {
	Device, Interface string
	IPv4, IPv6        netip.Prefix
}

// Link connects two devices.
type Link struct{ A, B Endpoint }

// Target is what to validate.
type Target struct {
	Name     string
	Topology string
	Runtime  string
	Devices  []Device
	Links    []Link
}

// Opener opens a driver for a device; the default is drivers.Open.
type Opener func(platform string, cfg drivers.Config) (drivers.Driver, error)

// Options tune Validate.
type Options struct {
	Open        Opener
	Parallel    int           // devices read at once (default 8)
	PingTimeout time.Duration // per destination (default 1s)
	// BGPWait keeps polling sessions that are not Established for up to
	// this long before failing them (default 0: one look).
	BGPWait time.Duration
}

type devState struct {
	dev   *Device
	drv   drivers.Driver
	state *drivers.State
	err   error
}

// Validate runs every check against t.
func Validate(ctx context.Context, t *Target, opt Options) (*results.Bringup, error) {
	if opt.Open == nil {
		opt.Open = drivers.Open
	}
	if opt.Parallel <= 0 {
		opt.Parallel = 8
	}
	if opt.PingTimeout <= 0 {
		opt.PingTimeout = time.Second
	}
	if err := t.check(); err != nil {
		return nil, err
	}
	out := &results.Bringup{Lab: t.Name, Topology: t.Topology, Runtime: t.Runtime}
	states := make(map[string]*devState, len(t.Devices))
	for i := range t.Devices {
		states[t.Devices[i].Name] = &devState{dev: &t.Devices[i]}
	}
	defer func() {
		for _, s := range states {
			if s.drv != nil {
				s.drv.Close()
			}
		}
	}()
	forEach(ctx, opt.Parallel, t.Devices, func(d *Device) {
		s := states[d.Name]
		s.drv, s.err = opt.Open(d.Platform, d.Config)
		if s.err == nil {
			s.state, s.err = s.drv.State(ctx)
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i := range t.Devices {
		d := &t.Devices[i]
		s := states[d.Name]
		c := results.Check{Category: results.CheckDevice, Name: "device " + d.Name, Device: d.Name, Verdict: results.Pass,
			Evidence: fmt.Sprintf("%s at %s answered", d.Platform, d.Config.Address)}
		if s.err != nil {
			c.Verdict, c.Evidence = results.Fail, s.err.Error()
		}
		out.Checks = append(out.Checks, c)
	}
	out.Checks = append(out.Checks, linkChecks(t, states)...)
	out.Checks = append(out.Checks, bgpChecks(ctx, t, states, opt)...)
	out.Checks = append(out.Checks, ecmpChecks(t, states)...)
	out.Checks = append(out.Checks, srv6Checks(t, states)...)
	out.Checks = append(out.Checks, reachChecks(ctx, t, states, opt)...)
	return out, nil
}

// Failed returns the checks that did not pass.
func Failed(b *results.Bringup) []results.Check {
	var out []results.Check
	for _, c := range b.Checks {
		if c.Verdict != results.Pass {
			out = append(out, c)
		}
	}
	return out
}

func (t *Target) check() error {
	seen := map[string]bool{}
	var errs []error
	for _, d := range t.Devices {
		if seen[d.Name] {
			errs = append(errs, fmt.Errorf("device %s listed twice", d.Name))
		}
		seen[d.Name] = true
	}
	for i, l := range t.Links {
		for _, e := range []Endpoint{l.A, l.B} {
			if !seen[e.Device] {
				errs = append(errs, fmt.Errorf("link %d: unknown device %s", i, e.Device))
			}
		}
	}
	return errors.Join(errs...)
}

func forEach(ctx context.Context, parallel int, devs []Device, fn func(*Device)) {
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := range devs {
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(d *Device) {
			defer wg.Done()
			defer func() { <-sem }()
			fn(d)
		}(&devs[i])
	}
	wg.Wait()
}

func linkOf(st *drivers.State, name string) (drivers.LinkState, bool) {
	for _, l := range st.Links {
		if l.Name == name {
			return l, true
		}
	}
	return drivers.LinkState{}, false
}

func endName(e Endpoint) string { return e.Device + ":" + e.Interface }

func linkChecks(t *Target, states map[string]*devState) []results.Check {
	var out []results.Check
	for _, l := range t.Links {
		c := results.Check{Category: results.CheckLinks, Name: "link " + endName(l.A) + " -- " + endName(l.B), Device: l.A.Device, Verdict: results.Pass}
		var ev []string
		for _, e := range []Endpoint{l.A, l.B} {
			s := states[e.Device]
			switch {
			case s.state == nil:
				ev = append(ev, endName(e)+" unknown (device unreachable)")
				c.Verdict = results.Error
			default:
				ls, ok := linkOf(s.state, e.Interface)
				switch {
				case !ok:
					ev = append(ev, endName(e)+" missing")
					c.Verdict, c.Device = results.Fail, e.Device
				case !ls.Admin:
					ev = append(ev, endName(e)+" admin down")
					c.Verdict, c.Device = results.Fail, e.Device
				case !ls.Up:
					ev = append(ev, endName(e)+" oper down")
					c.Verdict, c.Device = results.Fail, e.Device
				default:
					ev = append(ev, endName(e)+" up")
				}
			}
		}
		c.Evidence = strings.Join(ev, ", ")
		out = append(out, c)
	}
	return out
}

// bgpChecks expects a session on each switch end of every switch-switch
// link, per address family that both ends have an address in.
func bgpChecks(ctx context.Context, t *Target, states map[string]*devState, opt Options) []results.Check {
	type want struct {
		dev       string
		local     Endpoint
		peer      Endpoint
		peerAddr  netip.Addr
		afLabel   string
		checkName string
	}
	var wants []want
	isSwitch := func(name string) bool { s := states[name]; return s != nil && !s.dev.IsHost() }
	for _, l := range t.Links {
		if !isSwitch(l.A.Device) || !isSwitch(l.B.Device) {
			continue
		}
		for _, pair := range [][2]Endpoint{{l.A, l.B}, {l.B, l.A}} {
			local, peer := pair[0], pair[1]
			for _, af := range []struct {
				label   string
				l, p    netip.Prefix
				present bool
			}{{"ipv4", local.IPv4, peer.IPv4, local.IPv4.IsValid() && peer.IPv4.IsValid()},
				{"ipv6", local.IPv6, peer.IPv6, local.IPv6.IsValid() && peer.IPv6.IsValid()}} {
				if !af.present {
					continue
				}
				wants = append(wants, want{dev: local.Device, local: local, peer: peer, peerAddr: af.p.Addr(), afLabel: af.label,
					checkName: fmt.Sprintf("bgp %s %s -> %s %s", local.Device, local.Interface, peer.Device, af.p.Addr())})
			}
			if !local.IPv4.IsValid() && !local.IPv6.IsValid() { // unnumbered: match by interface
				wants = append(wants, want{dev: local.Device, local: local, peer: peer, afLabel: "unnumbered",
					checkName: fmt.Sprintf("bgp %s %s -> %s", local.Device, local.Interface, peer.Device)})
			}
		}
	}
	find := func(st *drivers.State, w want) (drivers.BGPSession, bool) {
		for _, s := range st.BGP {
			if s.VRF != "" && s.VRF != "default" {
				continue
			}
			if w.peerAddr.IsValid() {
				if a, err := netip.ParseAddr(s.Peer); err == nil && a == w.peerAddr {
					return s, true
				}
			} else if s.Interface == w.local.Interface || s.Peer == w.local.Interface {
				return s, true
			}
		}
		return drivers.BGPSession{}, false
	}
	judge := func() ([]results.Check, int) {
		var out []results.Check
		down := 0
		for _, w := range wants {
			c := results.Check{Category: results.CheckBGP, Name: w.checkName, Device: w.dev}
			st := states[w.dev]
			if st.state == nil {
				c.Verdict, c.Evidence = results.Error, "device unreachable"
				out = append(out, c)
				continue
			}
			s, ok := find(st.state, w)
			switch {
			case !ok:
				c.Verdict, c.Evidence = results.Fail, "no BGP session configured for this peer"
				down++
			case !s.Established():
				c.Verdict = results.Fail
				c.Evidence = fmt.Sprintf("state %s (remote AS %d)", s.State, s.RemoteAS)
				down++
			default:
				c.Verdict = results.Pass
				c.Evidence = fmt.Sprintf("Established, AS %d -> %d, %d prefixes received", s.LocalAS, s.RemoteAS, s.PfxReceived)
			}
			out = append(out, c)
		}
		return out, down
	}
	out, down := judge()
	deadline := time.Now().Add(opt.BGPWait)
	for down > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(500 * time.Millisecond)
		// Re-read only the devices with sessions down.
		for _, c := range out {
			if c.Verdict == results.Fail {
				s := states[c.Device]
				if st, err := s.drv.State(ctx); err == nil {
					s.state = st
				}
			}
		}
		out, down = judge()
	}
	return out
}

// hostPrefixes maps each host to the prefixes of its links.
func hostPrefixes(t *Target, states map[string]*devState) (map[string][]netip.Prefix, map[string]string) {
	pfx := map[string][]netip.Prefix{}
	attached := map[string]string{} // prefix -> the switch it hangs off
	for _, l := range t.Links {
		for _, pair := range [][2]Endpoint{{l.A, l.B}, {l.B, l.A}} {
			h, sw := pair[0], pair[1]
			if !states[h.Device].dev.IsHost() || states[sw.Device].dev.IsHost() {
				continue
			}
			for _, p := range []netip.Prefix{h.IPv4, h.IPv6} {
				if p.IsValid() {
					m := p.Masked()
					pfx[h.Device] = append(pfx[h.Device], m)
					attached[m.String()] = sw.Device
				}
			}
		}
	}
	return pfx, attached
}

func ecmpChecks(t *Target, states map[string]*devState) []results.Check {
	pfx, attached := hostPrefixes(t, states)
	uplinks := map[string][]string{}
	for _, l := range t.Links {
		for _, pair := range [][2]Endpoint{{l.A, l.B}, {l.B, l.A}} {
			lo, hi := states[pair[0].Device].dev, states[pair[1].Device].dev
			if lo.Role == "leaf" && (hi.Role == "spine" || hi.Role == "super-spine") {
				uplinks[lo.Name] = append(uplinks[lo.Name], pair[0].Interface)
			}
		}
	}
	var hosts []string
	for h := range pfx {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	var out []results.Check
	for i := range t.Devices {
		d := &t.Devices[i]
		if d.Role != "leaf" || len(uplinks[d.Name]) == 0 {
			continue
		}
		width := len(uplinks[d.Name])
		st := states[d.Name]
		for _, af := range []string{"ipv4", "ipv6"} {
			c := results.Check{Category: results.CheckECMP, Name: fmt.Sprintf("ecmp %s %s to remote hosts", d.Name, af), Device: d.Name}
			var bad []string
			n := 0
			for _, h := range hosts {
				for _, p := range pfx[h] {
					if p.Addr().Is4() != (af == "ipv4") || attached[p.String()] == d.Name {
						continue
					}
					n++
					if st.state == nil {
						continue
					}
					r, ok := st.state.Route("", p)
					switch {
					case !ok:
						bad = append(bad, fmt.Sprintf("%s (%s): no route", p, h))
					case len(r.Nexthops) != width:
						bad = append(bad, fmt.Sprintf("%s (%s): %d paths via %s, want %d", p, h, len(r.Nexthops), nexthopDevs(r), width))
					}
				}
			}
			if n == 0 {
				continue
			}
			switch {
			case st.state == nil:
				c.Verdict, c.Evidence = results.Error, "device unreachable"
			case len(bad) > 0:
				c.Verdict = results.Fail
				c.Evidence = fmt.Sprintf("%d of %d remote host prefixes not %d-way: %s", len(bad), n, width, strings.Join(bad, "; "))
			default:
				c.Verdict = results.Pass
				c.Evidence = fmt.Sprintf("%d remote host prefixes, each %d-way over %s", n, width, strings.Join(uplinks[d.Name], ","))
			}
			out = append(out, c)
		}
	}
	return out
}

func nexthopDevs(r drivers.Route) string {
	var s []string
	for _, n := range r.Nexthops {
		s = append(s, n.Dev)
	}
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ",")
}

func srv6Checks(t *Target, states map[string]*devState) []results.Check {
	var out []results.Check
	for i := range t.Devices {
		d := &t.Devices[i]
		if !d.Locator.IsValid() {
			continue
		}
		c := results.Check{Category: results.CheckSRv6, Name: fmt.Sprintf("srv6 %s uN %s", d.Name, d.Locator), Device: d.Name}
		st := states[d.Name]
		if st.state == nil {
			c.Verdict, c.Evidence = results.Error, "device unreachable"
			out = append(out, c)
			continue
		}
		c.Verdict, c.Evidence = results.Fail, "SID not installed"
		for _, s := range st.state.SIDs {
			if s.Addr == d.Locator {
				ev := fmt.Sprintf("%s %s %s", s.Addr, s.Behavior, s.Flavors)
				if strings.Contains(s.Flavors, "next-csid") || strings.EqualFold(s.Behavior, "uN") {
					c.Verdict, c.Evidence = results.Pass, ev
				} else {
					c.Evidence = "installed without the micro-SID flavor: " + ev
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// reachChecks pings from every host every other host's addresses (IPv4 and
// IPv6), all destinations of a host at once.
func reachChecks(ctx context.Context, t *Target, states map[string]*devState, opt Options) []results.Check {
	addrs := map[string][]netip.Addr{}
	var hosts []string
	for _, l := range t.Links {
		for _, e := range []Endpoint{l.A, l.B} {
			if !states[e.Device].dev.IsHost() {
				continue
			}
			for _, p := range []netip.Prefix{e.IPv4, e.IPv6} {
				if p.IsValid() {
					if len(addrs[e.Device]) == 0 {
						hosts = append(hosts, e.Device)
					}
					addrs[e.Device] = append(addrs[e.Device], p.Addr())
				}
			}
		}
	}
	sort.Strings(hosts)
	out := make([]results.Check, len(hosts))
	var wg sync.WaitGroup
	sem := make(chan struct{}, opt.Parallel)
	for i, h := range hosts {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, h string) {
			defer wg.Done()
			defer func() { <-sem }()
			c := results.Check{Category: results.CheckReachability, Name: "reach from " + h, Device: h}
			var dsts []netip.Addr
			for _, o := range hosts {
				if o != h {
					dsts = append(dsts, addrs[o]...)
				}
			}
			s := states[h]
			if s.drv == nil || s.err != nil {
				c.Verdict, c.Evidence = results.Error, "host unreachable over its management network"
				out[i] = c
				return
			}
			failed, err := pingAll(ctx, s.drv, dsts, opt.PingTimeout)
			switch {
			case err != nil:
				c.Verdict, c.Evidence = results.Error, err.Error()
			case len(failed) > 0:
				c.Verdict = results.Fail
				c.Evidence = fmt.Sprintf("%d of %d destinations unreachable: %s", len(failed), len(dsts), strings.Join(failed, ", "))
			default:
				c.Verdict = results.Pass
				c.Evidence = fmt.Sprintf("%d destinations (%d hosts) answered", len(dsts), len(hosts)-1)
			}
			out[i] = c
		}(i, h)
	}
	wg.Wait()
	return out
}

// pingAll pings every destination from a host, in parallel, and returns
// the ones that never answered (3 tries).
func pingAll(ctx context.Context, drv drivers.Driver, dsts []netip.Addr, timeout time.Duration) ([]string, error) {
	if len(dsts) == 0 {
		return nil, nil
	}
	secs := int(timeout.Round(time.Second) / time.Second)
	if secs < 1 {
		secs = 1
	}
	var b strings.Builder
	for _, a := range dsts {
		fmt.Fprintf(&b, "(ping -n -q -c 3 -i 0.2 -W %d %s >/dev/null 2>&1 && echo 'ok %s' || echo 'fail %s') & ", secs, a, a, a)
	}
	b.WriteString("wait")
	outp, err := drv.Exec(ctx, b.String())
	if err != nil {
		return nil, fmt.Errorf("ping: %v", err)
	}
	seen := map[string]bool{}
	var failed []string
	for _, l := range strings.Split(outp, "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		seen[f[1]] = true
		if f[0] == "fail" {
			failed = append(failed, f[1])
		}
	}
	for _, a := range dsts {
		if !seen[a.String()] {
			return nil, fmt.Errorf("ping reported nothing for %s: %q", a, strings.TrimSpace(outp))
		}
	}
	sort.Strings(failed)
	return failed, nil
}
