package labbackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/harness/bringup"
	"github.com/fabricbench/fabricbench/harness/runspec"
)

// Per-hop costs of the lab's software data plane, used for the base RTT
// the transport's congestion control starts from and for ideal
// completion times: forwarding through a namespace (veth, FIB lookup,
// tbf) and the agents' own receive-and-reply path.
const (
	hopForwardPs = 15_000_000  // 15 µs per hop and direction
	endpointPs   = 150_000_000 // 150 µs of agent and socket time per RTT
)

// tbfCommand shapes dev to rateBps the way the native deployer does: a
// 1 ms burst (at least four full frames) and 5 ms of queue.
func tbfCommand(dev string, rateBps int64) string {
	rate := rateBps / 8
	burst := max(rate/1000, 4*(LinkMTU+14))
	limit := rate*5/1000 + burst
	return fmt.Sprintf("tc qdisc replace dev %s root handle 1: tbf rate %dbit burst %d limit %d", dev, rateBps, burst, limit)
}

// applyFault changes the kernel's links: down/up with ip link, degrade
// by re-shaping the transmit side's tbf.
func (b *Backend) applyFault(ctx context.Context, ft runspec.Fault) error {
	l := b.f.Links[ft.Link]
	type end struct{ node, dev string }
	var ends []end
	for k, p := range []int{l.A, l.B} {
		if ft.Direction != 0 && ft.Direction != k+1 && ft.Up && ft.Fraction > 0 {
			continue
		}
		n := b.f.Nodes[b.f.Ports[p].Node].Name
		ends = append(ends, end{n, b.nodes[n].ifaces[p]})
	}
	for _, e := range ends {
		var cmd string
		switch {
		case !ft.Up:
			cmd = "ip link set dev " + e.dev + " down"
		case ft.Fraction > 0:
			cmd = tbfCommand(e.dev, int64(float64(l.RateBps)*ft.Fraction))
		default:
			cmd = "ip link set dev " + e.dev + " up && " + tbfCommand(e.dev, l.RateBps)
		}
		if out, err := b.NetExec(ctx, e.node, cmd); err != nil {
			return fmt.Errorf("%s on %s: %v: %s", ft.Description, e.node, err, strings.TrimSpace(out))
		}
		b.logf("fault %q: %s: %s", ft.Description, e.node, cmd)
	}
	return nil
}

// fabricDrops sums the packets every node's qdiscs dropped (tbf drops are
// where a shaped lab link loses packets).
func (b *Backend) fabricDrops(ctx context.Context) (uint64, error) {
	var mu sync.Mutex
	var total uint64
	var errs []string
	var wg sync.WaitGroup
	for name := range b.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := b.NetExec(ctx, name, "tc -s -j qdisc show")
			var qs []struct {
				Kind  string `json:"kind"`
				Drops uint64 `json:"drops"`
			}
			if err == nil {
				err = json.Unmarshal([]byte(strings.TrimSpace(out)), &qs)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, name+": "+err.Error())
				return
			}
			for _, q := range qs {
				total += q.Drops
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return total, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return total, nil
}

// SRv6 path placement. A path from host S to host D via switches V1..Vk
// is one micro-SID container: block fd00:bbbb::/32, then the uN of each
// via switch, the uN of D's leaf and D's uDX4 function on that leaf
// (0xe000 + the leaf port index towards D), which decapsulates and
// forwards to D. Host S sends the path's flows with a firewall mark; a
// policy rule looks the mark up in the path's table, whose route to D
// encapsulates. Host D's agent answers with the same mark, through the
// reverse container, so the ACKs take the same switches.
const (
	markBase  = 0x100
	tableBase = 100
	rulePref  = 1000
	dx4Base   = 0xe000
)

func (b *Backend) configureSRv6(ctx context.Context, paths []runspec.SRv6Path) error {
	if len(paths) > 200 {
		return fmt.Errorf("features.srv6.paths: at most 200 paths")
	}
	base := bringup.LabFeatures(b.lab)
	feats := map[string]*drivers.DeviceFeatures{}
	get := func(node string) *drivers.SRv6 {
		if feats[node] == nil {
			f := &drivers.DeviceFeatures{SRv6: &drivers.SRv6{}}
			if bf := base[node]; bf != nil && bf.SRv6 != nil {
				c := *bf.SRv6
				c.SIDs = append([]drivers.SID(nil), bf.SRv6.SIDs...)
				f.SRv6 = &c
			}
			feats[node] = f
		}
		return feats[node].SRv6
	}
	b.marks = map[[2]int]uint32{}
	for k, p := range paths {
		mark, table := uint32(markBase+k), tableBase+k
		fwd, err := b.container(p.Via, p.Dst)
		if err != nil {
			return fmt.Errorf("features.srv6.paths[%d] (%s): %w", k, p.Name, err)
		}
		rev := make([]int, len(p.Via))
		for i, v := range p.Via {
			rev[len(p.Via)-1-i] = v
		}
		back, err := b.container(rev, p.Src)
		if err != nil {
			return fmt.Errorf("features.srv6.paths[%d] (%s): reverse: %w", k, p.Name, err)
		}
		for _, side := range []struct {
			host, peer int
			segs       netip.Addr
		}{{p.Src, p.Dst, fwd}, {p.Dst, p.Src, back}} {
			name := b.f.Host(side.host).Name
			sr := get(name)
			sr.Rules = append(sr.Rules, drivers.PolicyRule{Mark: mark, Table: table, Priority: rulePref + k, Family: 4})
			sr.Steer = append(sr.Steer, drivers.Steer{Prefix: netip.PrefixFrom(b.hostIP[side.peer], 32),
				Segments: []netip.Addr{side.segs}, Dev: "eth1", Table: table})
			// The peer's leaf decapsulates towards the peer.
			leaf, sid, dev := b.dx4(side.peer)
			lsr := get(leaf)
			if !hasSID(lsr.SIDs, sid) {
				lsr.SIDs = append(lsr.SIDs, drivers.SID{Addr: sid, Behavior: "uDX4", Nexthop: b.hostIP[side.peer], Dev: dev})
			}
		}
		b.marks[[2]int{p.Src, p.Dst}] = mark
		if _, set := b.marks[[2]int{p.Dst, p.Src}]; !set {
			b.marks[[2]int{p.Dst, p.Src}] = mark
		}
		b.logf("srv6 path %s: %s -> %s via %s, container %s (mark %#x, table %d)", p.Name,
			b.f.Host(p.Src).Name, b.f.Host(p.Dst).Name, b.names(p.Via), fwd, mark, table)
	}
	if _, err := bringup.Apply(ctx, b.target, feats, nil, false); err != nil {
		return fmt.Errorf("configure SRv6 paths: %w", err)
	}
	b.srFeats = feats
	// Open the steering hosts' drivers now, so that a path controller's
	// first move does not wait for SSH and the kernel probes.
	for _, p := range paths {
		for _, h := range []int{p.Src, p.Dst} {
			if _, err := b.steerDriver(ctx, b.f.Host(h).Name); err != nil {
				return fmt.Errorf("SRv6 path %s: %w", p.Name, err)
			}
		}
	}
	return nil
}

// steerDriver returns host name's driver, opened (and probed) once for
// the run; Down closes it.
func (b *Backend) steerDriver(ctx context.Context, name string) (drivers.Driver, error) {
	b.drvMu.Lock()
	defer b.drvMu.Unlock()
	if d := b.steerDrv[name]; d != nil {
		return d, nil
	}
	for i := range b.target.Devices {
		dev := &b.target.Devices[i]
		if dev.Name != name {
			continue
		}
		drv, err := drivers.Open(dev.Platform, dev.Config)
		if err != nil {
			return nil, err
		}
		if _, err := drv.Capabilities(ctx); err != nil {
			drv.Close()
			return nil, err
		}
		if b.steerDrv == nil {
			b.steerDrv = map[string]drivers.Driver{}
		}
		b.steerDrv[name] = drv
		return drv, nil
	}
	return nil, fmt.Errorf("no lab device %s", name)
}

// closeSteerDrivers closes the drivers steerDriver opened.
func (b *Backend) closeSteerDrivers() {
	b.drvMu.Lock()
	defer b.drvMu.Unlock()
	for _, d := range b.steerDrv {
		d.Close()
	}
	b.steerDrv = nil
}

// Steer implements harness.Steerer (the path controller): pinned path
// features.srv6.paths[path] is moved through the switches via by
// replacing, through the linux driver, the steering route of the path's
// table on both hosts (the source's towards the destination with the new
// container, the destination's back with the reversed one); the policy
// rules (by firewall mark) stay. New packets take the new container at
// once; the uN and uDX SIDs the containers use are installed already.
func (b *Backend) Steer(ctx context.Context, path int, via []int) error {
	if path < 0 || path >= len(b.feat.SRv6Paths) || b.srFeats == nil {
		return fmt.Errorf("no SRv6 path %d", path)
	}
	p := b.feat.SRv6Paths[path]
	fwd, err := b.container(via, p.Dst)
	if err != nil {
		return fmt.Errorf("SRv6 path %s: %w", p.Name, err)
	}
	rev := make([]int, len(via))
	for i, v := range via {
		rev[len(via)-1-i] = v
	}
	back, err := b.container(rev, p.Src)
	if err != nil {
		return fmt.Errorf("SRv6 path %s: reverse: %w", p.Name, err)
	}
	b.steerMu.Lock()
	defer b.steerMu.Unlock()
	table := tableBase + path
	sub := map[string]*drivers.DeviceFeatures{}
	for _, side := range []struct {
		host, peer int
		segs       netip.Addr
	}{{p.Src, p.Dst, fwd}, {p.Dst, p.Src, back}} {
		name := b.f.Host(side.host).Name
		f := b.srFeats[name]
		if f == nil || f.SRv6 == nil {
			return fmt.Errorf("SRv6 path %s: %s has no steering", p.Name, name)
		}
		found := false
		for i := range f.SRv6.Steer {
			st := &f.SRv6.Steer[i]
			if st.Table == table && st.Prefix == netip.PrefixFrom(b.hostIP[side.peer], 32) {
				st.Segments = []netip.Addr{side.segs}
				found = true
			}
		}
		if !found {
			return fmt.Errorf("SRv6 path %s: %s has no steering route in table %d", p.Name, name, table)
		}
		sub[name] = f
	}
	// Both hosts at once, each through its driver kept open since
	// Configure (probes cached: a move is one diff and a route replace).
	errs := make([]error, 0, 2)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, f := range sub {
		wg.Add(1)
		go func() {
			defer wg.Done()
			drv, err := b.steerDriver(ctx, name)
			if err == nil {
				_, err = drv.Apply(ctx, f)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("SRv6 path %s: steer via %s: %w", p.Name, b.names(via), err)
	}
	b.logf("controller: srv6 path %s: %s -> %s now via %s, container %s", p.Name,
		b.f.Host(p.Src).Name, b.f.Host(p.Dst).Name, b.names(via), fwd)
	return nil
}

func hasSID(sids []drivers.SID, p netip.Prefix) bool {
	for _, s := range sids {
		if s.Addr == p {
			return true
		}
	}
	return false
}

func (b *Backend) names(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = b.f.Nodes[id].Name
	}
	return strings.Join(s, ",")
}

// uN returns a switch's 16-bit micro-SID node ID (from its locator).
func (b *Backend) uN(node string) (uint16, error) {
	for _, n := range b.lab.Nodes {
		if n.Name == node {
			if !n.SRv6Locator.IsValid() {
				return 0, fmt.Errorf("switch %s has no SRv6 locator", node)
			}
			a := n.SRv6Locator.Addr().As16()
			return uint16(a[4])<<8 | uint16(a[5]), nil
		}
	}
	return 0, fmt.Errorf("no lab node %s", node)
}

// dx4 returns host h's leaf, the leaf's uDX4 SID towards h and the leaf's
// interface to h.
func (b *Backend) dx4(h int) (leaf string, sid netip.Prefix, dev string) {
	hn := b.f.Host(h)
	p := hn.Ports[0]
	peer := b.f.Ports[p].Peer
	ln := b.f.Nodes[b.f.Ports[peer].Node]
	id, _ := b.uN(ln.Name)
	var a [16]byte
	a[0], a[1], a[2], a[3] = 0xfd, 0x00, 0xbb, 0xbb
	a[4], a[5] = byte(id>>8), byte(id)
	fn := dx4Base + b.f.Ports[peer].Index
	a[6], a[7] = byte(fn>>8), byte(fn)
	return ln.Name, netip.PrefixFrom(netip.AddrFrom16(a), 64), b.nodes[ln.Name].ifaces[peer]
}

// container builds the micro-SID container from via switches to host dst.
func (b *Backend) container(via []int, dst int) (netip.Addr, error) {
	if len(via) == 0 {
		return netip.Addr{}, fmt.Errorf("no via switches")
	}
	leaf, sid, _ := b.dx4(dst)
	var ids []uint16
	for _, v := range via {
		id, err := b.uN(b.f.Nodes[v].Name)
		if err != nil {
			return netip.Addr{}, err
		}
		ids = append(ids, id)
	}
	lid, err := b.uN(leaf)
	if err != nil {
		return netip.Addr{}, err
	}
	if ids[len(ids)-1] != lid {
		ids = append(ids, lid)
	}
	s := sid.Addr().As16()
	ids = append(ids, uint16(s[6])<<8|uint16(s[7]))
	if len(ids) > 6 {
		return netip.Addr{}, fmt.Errorf("%d micro-SIDs do not fit one container (at most 6 with a 32-bit block)", len(ids))
	}
	var a [16]byte
	a[0], a[1], a[2], a[3] = 0xfd, 0x00, 0xbb, 0xbb
	for i, id := range ids {
		a[4+2*i], a[5+2*i] = byte(id>>8), byte(id)
	}
	return netip.AddrFrom16(a), nil
}
