package hwbackend

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/inventory"
)

// SRv6 micro-SID path placement on an inventory's devices, as the netns
// lab does it (harness/labbackend/paths.go), with the locators the
// inventory lists (devices[].srv6_locator, F3216: a 32-bit block shared
// by every switch and a 16-bit node ID):
//
//   - every switch with a locator gets its uN SID (End with the
//     next-csid flavor) when the suite asks for SRv6;
//   - a path from host S to host D via switches V1..Vk is one micro-SID
//     container: the block, the uN IDs of V1..Vk and of D's leaf, and
//     D's uDX4 (uDX6 for an IPv6 host) function on that leaf, 0xe000 +
//     the leaf's port index towards D, which decapsulates and forwards
//     to D;
//   - host S sends the path's flows with firewall mark 0x100+k (the
//     agents set it per destination); a policy rule (priority 1000+k)
//     looks the mark up in table 100+k, whose route to D encapsulates
//     with the container. D answers through the reversed container, so
//     both directions cross the same switches.
const (
	srMarkBase  = 0x100
	srTableBase = 100
	srRulePref  = 1000
	srDXBase    = 0xe000
	// srMaxPaths bounds features.srv6.paths on hardware (marks and
	// tables 100+k stay below the kernel's reserved tables).
	srMaxPaths = 100
)

// srv6Plan is the SRv6 configuration of every device of a run.
type srv6Plan struct {
	dev   map[string]*drivers.SRv6
	marks map[[2]int]uint32
	block [4]byte
}

// planSRv6 maps features.srv6 onto the inventory's devices; nil when
// the run asks for no SRv6.
func planSRv6(f *inventory.Fabric, hw *inventory.Hardware, feat runspec.Features) (*srv6Plan, error) {
	if !feat.SRv6 && len(feat.SRv6Paths) == 0 {
		return nil, nil
	}
	if len(feat.SRv6Paths) > srMaxPaths {
		return nil, fmt.Errorf("features.srv6.paths: %d paths, at most %d on hardware", len(feat.SRv6Paths), srMaxPaths)
	}
	p := &srv6Plan{dev: map[string]*drivers.SRv6{}, marks: map[[2]int]uint32{}}
	var blockOf string
	for i := range hw.Devices {
		d := &hw.Devices[i]
		if d.Role == inventory.DeviceHost || !d.SRv6Locator.IsValid() {
			continue
		}
		a := d.SRv6Locator.Addr().As16()
		switch {
		case blockOf == "":
			copy(p.block[:], a[:4])
			blockOf = d.Name
		case [4]byte(a[:4]) != p.block:
			return nil, fmt.Errorf("%s: srv6_locator %s is not in the uSID block of %s's (%s): a micro-SID container names every switch in one block",
				d.Name, d.SRv6Locator, blockOf, netip.PrefixFrom(netip.AddrFrom16([16]byte{p.block[0], p.block[1], p.block[2], p.block[3]}), 32))
		}
		p.dev[d.Name] = &drivers.SRv6{Locator: "main", Prefix: d.SRv6Locator, BlockLen: 32, NodeLen: 16,
			SIDs: []drivers.SID{{Addr: d.SRv6Locator, Behavior: "uN"}}}
	}
	if blockOf == "" {
		return nil, fmt.Errorf("features.srv6: no switch of %s lists an srv6_locator (devices[].srv6_locator, e.g. fd00:bbbb:1::/48)", hw.File)
	}
	hostIP := func(h int) (netip.Addr, string, error) {
		d := hw.Device(f.Host(h).Name)
		if d != nil {
			for _, nic := range d.NICs {
				if nic.Address.IsValid() {
					return nic.Address.Addr(), nic.Name, nil
				}
			}
		}
		return netip.Addr{}, "", fmt.Errorf("host %s lists no NIC with an address", f.Host(h).Name)
	}
	get := func(name string) *drivers.SRv6 {
		if p.dev[name] == nil {
			p.dev[name] = &drivers.SRv6{BlockLen: 32, NodeLen: 16}
		}
		return p.dev[name]
	}
	for k, sp := range feat.SRv6Paths {
		mark, table := uint32(srMarkBase+k), srTableBase+k
		rev := make([]int, len(sp.Via))
		for i, v := range sp.Via {
			rev[len(sp.Via)-1-i] = v
		}
		for _, side := range []struct {
			host, peer int
			via        []int
		}{{sp.Src, sp.Dst, sp.Via}, {sp.Dst, sp.Src, rev}} {
			segs, err := p.container(f, hw, side.via, side.peer)
			if err != nil {
				return nil, fmt.Errorf("features.srv6.paths[%d] (%s): %w", k, sp.Name, err)
			}
			_, nic, err := hostIP(side.host)
			if err != nil {
				return nil, fmt.Errorf("features.srv6.paths[%d] (%s): %w", k, sp.Name, err)
			}
			peerIP, _, err := hostIP(side.peer)
			if err != nil {
				return nil, fmt.Errorf("features.srv6.paths[%d] (%s): %w", k, sp.Name, err)
			}
			fam := 4
			if peerIP.Is6() {
				fam = 6
			}
			sr := get(f.Host(side.host).Name)
			sr.Rules = append(sr.Rules, drivers.PolicyRule{Mark: mark, Table: table, Priority: srRulePref + k, Family: fam})
			sr.Steer = append(sr.Steer, drivers.Steer{Prefix: netip.PrefixFrom(peerIP, peerIP.BitLen()), Segments: []netip.Addr{segs}, Dev: nic, Table: table})
			// The peer's leaf decapsulates towards the peer.
			leaf, sid, dev, err := p.dx(f, hw, side.peer)
			if err != nil {
				return nil, fmt.Errorf("features.srv6.paths[%d] (%s): %w", k, sp.Name, err)
			}
			lsr := get(leaf)
			behavior := "uDX4"
			if peerIP.Is6() {
				behavior = "uDX6"
			}
			have := false
			for _, s := range lsr.SIDs {
				have = have || s.Addr == sid
			}
			if !have {
				lsr.SIDs = append(lsr.SIDs, drivers.SID{Addr: sid, Behavior: behavior, Nexthop: peerIP, Dev: dev})
			}
		}
		p.marks[[2]int{sp.Src, sp.Dst}] = mark
		if _, set := p.marks[[2]int{sp.Dst, sp.Src}]; !set {
			p.marks[[2]int{sp.Dst, sp.Src}] = mark
		}
	}
	return p, nil
}

// of is a device's SRv6 configuration (nil: none).
func (p *srv6Plan) of(name string) *drivers.SRv6 {
	if p == nil {
		return nil
	}
	return p.dev[name]
}

// uN is a switch's 16-bit micro-SID node ID (from its locator).
func uN(hw *inventory.Hardware, name string) (uint16, error) {
	d := hw.Device(name)
	if d == nil || !d.SRv6Locator.IsValid() {
		return 0, fmt.Errorf("switch %s has no srv6_locator in %s (devices[].srv6_locator): the path names it", name, hw.File)
	}
	a := d.SRv6Locator.Addr().As16()
	return uint16(a[4])<<8 | uint16(a[5]), nil
}

// dx returns host h's leaf, the leaf's uDX SID towards h (a /64 behind
// the leaf's uN) and the leaf's interface to h.
func (p *srv6Plan) dx(f *inventory.Fabric, hw *inventory.Hardware, h int) (string, netip.Prefix, string, error) {
	hn := f.Host(h)
	if len(hn.Ports) == 0 {
		return "", netip.Prefix{}, "", fmt.Errorf("host %s has no link", hn.Name)
	}
	peer := f.Ports[hn.Ports[0]].Peer
	leaf := f.Nodes[f.Ports[peer].Node].Name
	id, err := uN(hw, leaf)
	if err != nil {
		return "", netip.Prefix{}, "", err
	}
	var a [16]byte
	copy(a[:4], p.block[:])
	a[4], a[5] = byte(id>>8), byte(id)
	fn := srDXBase + f.Ports[peer].Index
	a[6], a[7] = byte(fn>>8), byte(fn)
	return leaf, netip.PrefixFrom(netip.AddrFrom16(a), 64), hw.Device(leaf).Interface(f.Ports[peer].Name), nil
}

// container builds the micro-SID container from via switches to host dst.
func (p *srv6Plan) container(f *inventory.Fabric, hw *inventory.Hardware, via []int, dst int) (netip.Addr, error) {
	if len(via) == 0 {
		return netip.Addr{}, fmt.Errorf("no via switches")
	}
	leaf, sid, _, err := p.dx(f, hw, dst)
	if err != nil {
		return netip.Addr{}, err
	}
	var ids []uint16
	var names []string
	for _, v := range via {
		id, err := uN(hw, f.Nodes[v].Name)
		if err != nil {
			return netip.Addr{}, err
		}
		ids = append(ids, id)
		names = append(names, f.Nodes[v].Name)
	}
	lid, _ := uN(hw, leaf)
	if ids[len(ids)-1] != lid {
		ids = append(ids, lid)
	}
	s := sid.Addr().As16()
	ids = append(ids, uint16(s[6])<<8|uint16(s[7]))
	if len(ids) > 6 {
		return netip.Addr{}, fmt.Errorf("via %s: %d micro-SIDs do not fit one container (at most 6 with a 32-bit block)", strings.Join(names, ","), len(ids))
	}
	var a [16]byte
	copy(a[:4], p.block[:])
	for i, id := range ids {
		a[4+2*i], a[5+2*i] = byte(id>>8), byte(id)
	}
	return netip.AddrFrom16(a), nil
}

// vrfByRules reports whether a platform's VRFs are isolation rules: FRR
// and Linux routers here share one underlay routing table (no per-VRF
// BGP), so a suite's VRFs are kept apart where their traffic enters the
// fabric, as on the netns lab.
func vrfByRules(platform string) bool { return platform == "frr" || platform == "linux" }

// vrfRulePref is the priority of the isolation rules (before the main
// table's 32766 and the SRv6 rules' 1000+).
const vrfRulePref = 500

// leafIsolation are a leaf's isolation rules: for each host port, one
// rule per host the attached host's VRF does not reach (leaks counted),
// ip rule add pref 500 iif PORT to ADDR/32 prohibit.
func leafIsolation(f *inventory.Fabric, hw *inventory.Hardware, dev *inventory.Device, vrfs []runspec.VRF) ([]drivers.IsolationRule, error) {
	id, ok := f.NodeByName(dev.Name)
	if !ok {
		return nil, fmt.Errorf("the fabric has no node %s", dev.Name)
	}
	n := f.NumHosts()
	ips := make([]netip.Addr, n)
	for h := range n {
		if d := hw.Device(f.Host(h).Name); d != nil {
			for _, nic := range d.NICs {
				if nic.Address.IsValid() {
					ips[h] = nic.Address.Addr()
					break
				}
			}
		}
		if !ips[h].IsValid() {
			return nil, fmt.Errorf("features.vrfs: host %s lists no NIC with an address", f.Host(h).Name)
		}
	}
	m := runspec.NewVRFMap(n, vrfs)
	var out []drivers.IsolationRule
	for h := range n {
		for _, p := range f.Host(h).Ports {
			peer := f.Ports[p].Peer
			if f.Ports[peer].Node != id {
				continue
			}
			in := dev.Interface(f.Ports[peer].Name)
			for d := range n {
				if d == h || m.Reachable(h, d) {
					continue
				}
				out = append(out, drivers.IsolationRule{In: in, To: netip.PrefixFrom(ips[d], ips[d].BitLen()), Priority: vrfRulePref})
			}
		}
	}
	return out, nil
}

// Steer implements harness.Steerer (the path controller): pinned path
// features.srv6.paths[path] is moved through the switches via by
// replacing, through the linux driver, the steering route of the path's
// table on both hosts (the source's towards the destination with the new
// container, the destination's back with the reversed one); the rules
// stay, and the uN and uDX SIDs the containers use are installed already
// (every switch with a locator has its uN). Each move is a change of the
// run like the others: added to what Down reverts (last first), so the
// hosts end as they were. It needs --apply, as every change does.
func (b *Backend) Steer(ctx context.Context, path int, via []int) error {
	if !b.env.Apply {
		return fmt.Errorf("moving SRv6 path %d changes the hosts' steering routes: run with --apply", path)
	}
	if b.sr == nil || path < 0 || path >= len(b.feat.SRv6Paths) {
		return fmt.Errorf("no SRv6 path %d", path)
	}
	sp := b.feat.SRv6Paths[path]
	rev := make([]int, len(via))
	for i, v := range via {
		rev[len(via)-1-i] = v
	}
	table := srTableBase + path
	type move struct {
		host string
		want *drivers.DeviceFeatures
	}
	var moves []move
	for _, side := range []struct {
		host, peer int
		via        []int
	}{{sp.Src, sp.Dst, via}, {sp.Dst, sp.Src, rev}} {
		segs, err := b.sr.container(b.f, b.hw, side.via, side.peer)
		if err != nil {
			return fmt.Errorf("SRv6 path %s: %w", sp.Name, err)
		}
		name := b.f.Host(side.host).Name
		cur := b.steer[name]
		if cur == nil || cur.SRv6 == nil {
			return fmt.Errorf("SRv6 path %s: %s has no steering", sp.Name, name)
		}
		// A copy: the applied features change only once the move is made.
		w := *cur.SRv6
		w.Steer = append([]drivers.Steer(nil), cur.SRv6.Steer...)
		found := false
		for i := range w.Steer {
			if w.Steer[i].Table == table {
				w.Steer[i].Segments = []netip.Addr{segs}
				found = true
			}
		}
		if !found {
			return fmt.Errorf("SRv6 path %s: %s has no steering route in table %d", sp.Name, name, table)
		}
		moves = append(moves, move{name, &drivers.DeviceFeatures{SRv6: &w}})
	}
	var wg sync.WaitGroup
	errs := make([]error, len(moves))
	for i, m := range moves {
		wg.Add(1)
		go func() {
			defer wg.Done()
			drv, err := b.driver(m.host)
			if err != nil {
				errs[i] = err
				return
			}
			done, err := drv.Apply(ctx, m.want)
			b.appM.Lock()
			if len(done) > 0 {
				if b.applied == nil {
					b.applied = map[string]drivers.Diff{}
				}
				b.applied[m.host] = append(b.applied[m.host], done...)
				b.steer[m.host] = m.want
			}
			b.appM.Unlock()
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", m.host, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("SRv6 path %s: steer: %w", sp.Name, err)
	}
	names := make([]string, len(via))
	for i, v := range via {
		names[i] = b.f.Nodes[v].Name
	}
	b.logf("controller: srv6 path %s: %s -> %s now via %s", sp.Name, b.f.Host(sp.Src).Name, b.f.Host(sp.Dst).Name, strings.Join(names, ","))
	return nil
}

var _ harness.Steerer = (*Backend)(nil)
