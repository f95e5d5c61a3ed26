// Package bringup validates a fabric after bring-up, before any benchmark,
// and says what is wrong first and what follows from it second.
//
// It reads every device through its driver (FRR, Linux, SONiC; over SSH
// or docker exec) and checks:
//
//   - devices: each answers;
//   - links: up at both ends;
//   - cabling: each port's neighbour (LLDP where the node runs lldpd, else
//     the kernel's ARP/ND entries resolved by MAC address) is the port the
//     topology says;
//   - MTU: both ends of each link at the intended MTU, and every host
//     reaching every other with don't-fragment packets of the path's MTU;
//   - configuration drift against the intent (a generated lab's labels, an
//     inventory): each switch's AS number, each session's remote AS, BGP
//     neighbours shut down, eBGP maximum-paths below the fabric's parallel
//     paths, link addresses;
//   - routing: every BGP session (expected per switch-switch link when the
//     intent is known, every configured one otherwise), OSPF and IS-IS
//     adjacencies, every switch's route to every remote host prefix with
//     as many paths as the fabric has equal-cost next hops;
//   - SRv6 micro-SIDs installed where configured;
//   - hosts: routes through a neighbour's address, and every host reaching
//     every other.
//
// Failed checks are then grouped into causes (causes.go): a miscabled
// port, a link down, a configuration that differs from the intent is a
// cause; a session down, a narrower ECMP route, an unreachable host that
// such a cause explains is a consequence listed under it. What no cause
// explains is a cause of its own. The same checks run on a native lab, a
// containerlab lab and real hardware.
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
	Role     string // host, leaf, spine, super-spine, switch
	Platform string // driver platform: frr, linux, sonic
	Config   drivers.Config
	// Locator is the device's SRv6 uN locator, when configured.
	Locator netip.Prefix
	// ASN is the device's intended BGP AS number (0: not known).
	ASN uint32
}

// IsHost reports whether the device is an end host.
func (d *Device) IsHost() bool { return d.Role == "host" }

// Endpoint is one end of a link.
type Endpoint struct {
	Device, Interface string
	IPv4, IPv6        netip.Prefix
}

// Link connects two devices.
type Link struct {
	A, B Endpoint
	// MTU is the link's intended MTU (0: not known; then both ends must
	// merely agree).
	MTU int
}

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
	// Converge re-validates while checks fail, every 2 s for up to this
	// long (routing that is still converging after a bring-up: OSPF's
	// first SPF, BGP's best paths); the last validation is the result
	// (default 0: one validation).
	Converge time.Duration
	// Logf, when set, is told about each re-validation.
	Logf func(format string, args ...any)
	// OnState, when set, is given each device's state as read (links
	// with their MTUs, routes, ...), one device at a time, before the
	// checks; a converging validation gives those of its last look.
	OnState func(device string, st *drivers.State)
}

type devState struct {
	dev   *Device
	drv   drivers.Driver
	state *drivers.State
	err   error
}

// validation is one run of Validate: the target, what was read, the
// checks and what each failed check says for the grouping into causes.
type validation struct {
	t      *Target
	opt    Options
	states map[string]*devState
	out    *results.Bringup
	finds  []finding
	g      *graph
}

// add appends a check and, for a failed one, its finding.
func (v *validation) add(c results.Check, f *finding) {
	v.out.Checks = append(v.out.Checks, c)
	if c.Verdict != results.Pass {
		if f == nil {
			f = &finding{kind: kUnexplained, link: -1}
		}
		f.check = len(v.out.Checks) - 1
		if f.dev == "" {
			f.dev = c.Device
		}
		if f.ifname == "" {
			f.ifname = c.Interface
		}
		v.finds = append(v.finds, *f)
	}
}

// Validate runs every check against t and groups the failures into
// causes.
func Validate(ctx context.Context, t *Target, opt Options) (*results.Bringup, error) {
	deadline := time.Now().Add(opt.Converge)
	for {
		b, err := validate(ctx, t, opt)
		if err != nil || len(Failed(b)) == 0 || !time.Now().Before(deadline) {
			return b, err
		}
		if opt.Logf != nil {
			opt.Logf("lab %s: %d checks failed; validating again until %s (converge)", t.Name, len(Failed(b)), deadline.Format(time.TimeOnly))
		}
		select {
		case <-ctx.Done():
			return b, nil
		case <-time.After(2 * time.Second):
		}
	}
}

func validate(ctx context.Context, t *Target, opt Options) (*results.Bringup, error) {
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
	v := &validation{t: t, opt: opt, states: make(map[string]*devState, len(t.Devices)),
		out: &results.Bringup{Lab: t.Name, Topology: t.Topology, Runtime: t.Runtime}}
	for i := range t.Devices {
		v.states[t.Devices[i].Name] = &devState{dev: &t.Devices[i]}
	}
	defer func() {
		for _, s := range v.states {
			if s.drv != nil {
				s.drv.Close()
			}
		}
	}()
	v.g = newGraph(t)
	forEach(ctx, opt.Parallel, t.Devices, func(d *Device) {
		s := v.states[d.Name]
		s.drv, s.err = opt.Open(d.Platform, d.Config)
		if s.err != nil {
			return
		}
		// Refresh the neighbour tables of the lab's ports (IPv6 all-nodes
		// on each), so that cabling can be read even where no LLDP runs.
		probeNeighbors(ctx, s.drv, v.g.ports[d.Name])
		s.state, s.err = s.drv.State(ctx)
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opt.OnState != nil {
		for _, d := range t.Devices {
			if s := v.states[d.Name]; s.state != nil {
				opt.OnState(d.Name, s.state)
			}
		}
	}
	v.deviceChecks()
	v.daemonChecks()
	v.forwardingChecks()
	v.linkChecks()
	v.cablingChecks()
	v.mtuChecks()
	v.driftChecks()
	v.bgpChecks(ctx)
	v.adjacencyChecks()
	v.routeChecks()
	v.srv6Checks()
	v.gatewayChecks()
	v.reachChecks(ctx)
	v.out.Causes = groupCauses(v)
	return v.out, nil
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

// probeNeighbors pings the IPv6 all-nodes address out of each port once
// (in parallel), so that the kernel's neighbour table holds whoever is at
// the other end. Devices without a shell (or without IPv6) answer nothing;
// that is fine: LLDP or the existing entries are read either way.
func probeNeighbors(ctx context.Context, drv drivers.Driver, ports []string) {
	if len(ports) == 0 || drv == nil {
		return
	}
	var b strings.Builder
	for _, p := range ports {
		if !safeIfName(p) {
			continue
		}
		fmt.Fprintf(&b, "ping -6 -n -q -c 1 -W 1 ff02::1%%%s >/dev/null 2>&1 & ", p)
	}
	b.WriteString("wait")
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, _ = drv.Exec(pctx, b.String())
}

// safeIfName reports whether an interface name can go into a shell
// command as it is.
func safeIfName(s string) bool {
	if s == "" || len(s) > 15 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '@') {
			return false
		}
	}
	return true
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

// graph is the intended topology as a graph of devices: adjacency, the
// links between each pair, each device's ports, and hop distances.
type graph struct {
	t     *Target
	adj   map[string][]string
	links map[[2]string][]int // ordered pair -> link indices
	ports map[string][]string // device -> its link interfaces
	dist  map[string]map[string]int
}

func newGraph(t *Target) *graph {
	g := &graph{t: t, adj: map[string][]string{}, links: map[[2]string][]int{}, ports: map[string][]string{}}
	for i, l := range t.Links {
		a, b := l.A.Device, l.B.Device
		if len(g.links[[2]string{a, b}]) == 0 {
			g.adj[a] = append(g.adj[a], b)
			g.adj[b] = append(g.adj[b], a)
		}
		g.links[[2]string{a, b}] = append(g.links[[2]string{a, b}], i)
		g.links[[2]string{b, a}] = append(g.links[[2]string{b, a}], i)
		g.ports[a] = append(g.ports[a], l.A.Interface)
		g.ports[b] = append(g.ports[b], l.B.Interface)
	}
	for k := range g.adj {
		sort.Strings(g.adj[k])
	}
	g.dist = map[string]map[string]int{}
	for _, d := range t.Devices {
		g.dist[d.Name] = g.bfs(d.Name)
	}
	return g
}

// bfs gives the hop distance from src to every device, through switches
// only (a host does not forward).
func (g *graph) bfs(src string) map[string]int {
	isHost := map[string]bool{}
	for _, d := range g.t.Devices {
		isHost[d.Name] = d.IsHost()
	}
	d := map[string]int{src: 0}
	q := []string{src}
	for len(q) > 0 {
		cur := q[0]
		q = q[1:]
		if cur != src && isHost[cur] {
			continue
		}
		for _, n := range g.adj[cur] {
			if _, ok := d[n]; !ok {
				d[n] = d[cur] + 1
				q = append(q, n)
			}
		}
	}
	return d
}

// pathLinks are the links on any shortest path between a and b (and the
// devices on them), in the intended topology.
func (g *graph) pathLinks(a, b string) (map[int]bool, map[string]bool) {
	links, devs := map[int]bool{}, map[string]bool{a: true, b: true}
	da, db := g.dist[a], g.dist[b]
	total, ok := da[b]
	if !ok {
		return links, devs
	}
	for pair, ls := range g.links {
		u, w := pair[0], pair[1]
		du, ok1 := da[u]
		dw, ok2 := db[w]
		if ok1 && ok2 && du+1+dw == total {
			for _, l := range ls {
				links[l] = true
			}
			devs[u], devs[w] = true, true
		}
	}
	return links, devs
}

// nextHops are the neighbours of dev on a shortest path to dst.
func (g *graph) nextHops(dev, dst string) []string {
	total, ok := g.dist[dev][dst]
	if !ok {
		return nil
	}
	var out []string
	for _, n := range g.adj[dev] {
		if dn, ok := g.dist[n][dst]; ok && dn == total-1 {
			out = append(out, n)
		}
	}
	return out
}

// peerEnd returns the other end of the link whose end is dev:ifname.
func (g *graph) peerEnd(dev, ifname string) (Endpoint, int, bool) {
	for i, l := range g.t.Links {
		switch {
		case l.A.Device == dev && l.A.Interface == ifname:
			return l.B, i, true
		case l.B.Device == dev && l.B.Interface == ifname:
			return l.A, i, true
		}
	}
	return Endpoint{}, -1, false
}
