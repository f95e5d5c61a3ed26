package bringup

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/results"
)

func (v *validation) deviceChecks() {
	for i := range v.t.Devices {
		d := &v.t.Devices[i]
		s := v.states[d.Name]
		where := d.Config.Address
		if d.Config.Container != "" {
			where = "container " + d.Config.Container
		}
		c := results.Check{Category: results.CheckDevice, Name: "device " + d.Name, Device: d.Name, Verdict: results.Pass,
			Evidence: fmt.Sprintf("%s at %s answered", d.Platform, where)}
		if s.err != nil {
			c.Verdict, c.Evidence = results.Fail, s.err.Error()
		}
		v.add(c, &finding{kind: kDevice, link: -1})
	}
}

// daemonChecks: on a device whose configuration says which routing
// daemons it starts (FRR's daemons file), every one of them runs.
func (v *validation) daemonChecks() {
	for i := range v.t.Devices {
		d := &v.t.Devices[i]
		s := v.states[d.Name]
		if s.state == nil || s.state.DaemonsEnabled == nil {
			continue
		}
		running := map[string]bool{}
		for _, dm := range s.state.Daemons {
			running[dm] = true
		}
		var missing []string
		for _, dm := range s.state.DaemonsEnabled {
			if !running[dm] {
				missing = append(missing, dm)
			}
		}
		c := results.Check{Category: results.CheckDevice, Name: "daemons " + d.Name, Device: d.Name, Verdict: results.Pass,
			Evidence: strings.Join(s.state.DaemonsEnabled, ", ") + " running, as its daemons file says"}
		if len(missing) > 0 {
			c.Verdict = results.Fail
			c.Evidence = fmt.Sprintf("%s not running (its daemons file starts %s; running: %s)", strings.Join(missing, ", "),
				strings.Join(s.state.DaemonsEnabled, ", "), orText(strings.Join(s.state.Daemons, ", "), "none"))
			v.add(c, &finding{kind: kDaemon, link: -1})
			continue
		}
		v.add(c, nil)
	}
}

// forwardingChecks: every switch forwards the address families its links
// carry.
func (v *validation) forwardingChecks() {
	for i := range v.t.Devices {
		d := &v.t.Devices[i]
		s := v.states[d.Name]
		if d.IsHost() || s.state == nil || s.state.Forwarding == nil {
			continue
		}
		// The families of the lab's ports (not the management port's).
		lab := map[string]bool{}
		for _, p := range v.g.ports[d.Name] {
			lab[p] = true
		}
		var v4, v6 bool
		for _, l := range s.state.Links {
			if !lab[l.Name] {
				continue
			}
			for _, a := range l.Addrs {
				if a.Addr().IsLoopback() || a.Addr().IsLinkLocalUnicast() {
					continue
				}
				v4 = v4 || a.Addr().Is4()
				v6 = v6 || a.Addr().Is6()
			}
		}
		var off []string
		if v4 && !s.state.Forwarding.IPv4 {
			off = append(off, "IPv4 (net.ipv4.ip_forward = 0)")
		}
		if v6 && !s.state.Forwarding.IPv6 {
			off = append(off, "IPv6 (net.ipv6.conf.all.forwarding = 0)")
		}
		c := results.Check{Category: results.CheckDrift, Name: "forwarding " + d.Name, Device: d.Name, Verdict: results.Pass,
			Evidence: "forwards the address families of its ports"}
		if len(off) > 0 {
			c.Verdict, c.Evidence = results.Fail, "does not forward "+strings.Join(off, " nor ")
			v.add(c, &finding{kind: kForwarding, link: -1})
			continue
		}
		v.add(c, nil)
	}
}

func (v *validation) linkChecks() {
	for i, l := range v.t.Links {
		c := results.Check{Category: results.CheckLinks, Name: "link " + endName(l.A) + " -- " + endName(l.B), Device: l.A.Device,
			Interface: l.A.Interface, Verdict: results.Pass}
		var ev []string
		f := &finding{kind: kLinkDown, link: i}
		for _, e := range []Endpoint{l.A, l.B} {
			s := v.states[e.Device]
			if s.state == nil {
				ev = append(ev, endName(e)+" unknown (device unreachable)")
				if c.Verdict == results.Pass {
					c.Verdict = results.Error
					f.kind, f.dev = kUnexplained, e.Device
				}
				continue
			}
			ls, ok := linkOf(s.state, e.Interface)
			bad := ""
			switch {
			case !ok:
				bad = "missing"
			case !ls.Admin:
				bad = "admin down"
			case !ls.Up:
				bad = "oper down"
			}
			if bad == "" {
				ev = append(ev, endName(e)+" up")
				continue
			}
			ev = append(ev, endName(e)+" "+bad)
			// The cause is where the link was taken down (admin down,
			// missing) rather than the end that merely lost its carrier.
			if c.Verdict != results.Fail || bad != "oper down" {
				c.Device, c.Interface = e.Device, e.Interface
			}
			c.Verdict, f.kind = results.Fail, kLinkDown
		}
		c.Evidence = strings.Join(ev, ", ")
		v.add(c, f)
	}
}

// port is a device's interface.
type port struct{ dev, ifname string }

func (p port) String() string { return p.dev + ":" + p.ifname }

// observed is what one end of a link sees at the other end.
type observed struct {
	port port
	via  string // lldp, nd
}

// macIndex maps every interface MAC of every device read to its port.
func (v *validation) macIndex() map[string]port {
	idx := map[string]port{}
	for name, s := range v.states {
		if s.state == nil {
			continue
		}
		for _, l := range s.state.Links {
			if l.MAC != "" && l.MAC != "00:00:00:00:00:00" {
				idx[l.MAC] = port{name, l.Name}
			}
		}
	}
	return idx
}

// deviceByName resolves an LLDP system name to a device: exact, case-
// insensitively, or without a domain.
func (v *validation) deviceByName(sys string) string {
	if _, ok := v.states[sys]; ok {
		return sys
	}
	short := strings.SplitN(sys, ".", 2)[0]
	for name := range v.states {
		if strings.EqualFold(name, short) || strings.EqualFold(name, sys) {
			return name
		}
	}
	return ""
}

// seenAt returns the neighbour the device's port sees: LLDP first, else
// the neighbour table entries resolved by MAC (the one other device seen
// there; ambiguous entries give nothing).
func (v *validation) seenAt(p port, macs map[string]port) (observed, bool) {
	s := v.states[p.dev]
	if s == nil || s.state == nil {
		return observed{}, false
	}
	// LLDP when it names exactly one neighbour on the port (after an
	// interface is renamed lldpd can list a neighbour under the wrong
	// name for a while); else the neighbour table.
	var lldp []drivers.Neighbor
	for _, n := range s.state.Neighbors {
		if n.Interface == p.ifname && n.Protocol == "lldp" {
			lldp = append(lldp, n)
		}
	}
	if len(lldp) == 1 {
		n := lldp[0]
		dev := v.deviceByName(n.System)
		if dev == "" {
			if q, ok := macs[n.PortMAC]; ok {
				return observed{q, "lldp"}, true
			}
			return observed{port{n.System, n.Port}, "lldp"}, true
		}
		ifname := n.Port
		if ds := v.states[dev]; ds != nil && ds.state != nil {
			if _, ok := linkOf(ds.state, ifname); !ok {
				if q, ok := macs[n.PortMAC]; ok && q.dev == dev {
					ifname = q.ifname
				}
			}
		}
		return observed{port{dev, ifname}, "lldp"}, true
	}
	found := map[port]bool{}
	for _, n := range s.state.Neighbors {
		if n.Interface != p.ifname || n.Protocol != "nd" {
			continue
		}
		if q, ok := macs[n.MAC]; ok && q.dev != p.dev {
			found[q] = true
		}
	}
	if len(found) == 1 {
		for q := range found {
			return observed{q, "nd"}, true
		}
	}
	return observed{}, false
}

// cablingChecks compare, for every link, what each end sees with what the
// topology says. A link neither end can tell anything about (no LLDP, no
// neighbour entry) is not checked.
func (v *validation) cablingChecks() {
	macs := v.macIndex()
	for i, l := range v.t.Links {
		want := map[port]port{{l.A.Device, l.A.Interface}: {l.B.Device, l.B.Interface}, {l.B.Device, l.B.Interface}: {l.A.Device, l.A.Interface}}
		c := results.Check{Category: results.CheckCabling, Name: "cabling " + endName(l.A) + " -- " + endName(l.B), Device: l.A.Device,
			Interface: l.A.Interface}
		var ev []string
		var wrong []cablingMiss
		right := 0
		for _, e := range []Endpoint{l.A, l.B} {
			me := port{e.Device, e.Interface}
			o, ok := v.seenAt(me, macs)
			if !ok {
				continue
			}
			if o.port == want[me] {
				right++
				ev = append(ev, fmt.Sprintf("%s sees %s (%s)", me, o.port, o.via))
				continue
			}
			wrong = append(wrong, cablingMiss{at: me, found: o.port, want: want[me]})
			ev = append(ev, fmt.Sprintf("%s reaches %s, topology says %s (%s)", me, o.port, want[me], o.via))
		}
		switch {
		case len(wrong) > 0:
			c.Verdict = results.Fail
			c.Device, c.Interface = wrong[0].at.dev, wrong[0].at.ifname
			c.Evidence = strings.Join(ev, "; ")
			v.add(c, &finding{kind: kCabling, link: i, misses: wrong})
		case right > 0:
			c.Verdict, c.Evidence = results.Pass, strings.Join(ev, "; ")
			v.add(c, nil)
		case v.linkDown(i):
			c.Verdict, c.Evidence = results.Fail, "no neighbour seen at either end (the link is down)"
			v.add(c, &finding{kind: kNoNeighbor, link: i})
		}
	}
}

// cablingMiss is one port that sees another port than the topology says.
type cablingMiss struct{ at, found, want port }

// linkDown reports whether either end of link i is down (as read).
func (v *validation) linkDown(i int) bool {
	l := v.t.Links[i]
	for _, e := range []Endpoint{l.A, l.B} {
		s := v.states[e.Device]
		if s.state == nil {
			continue
		}
		if ls, ok := linkOf(s.state, e.Interface); !ok || !ls.Up {
			return true
		}
	}
	return false
}

// mtuChecks compare both ends of every link with the intended MTU (when
// known; else with each other).
func (v *validation) mtuChecks() {
	for i, l := range v.t.Links {
		var mtu [2]int
		ok := true
		for k, e := range []Endpoint{l.A, l.B} {
			s := v.states[e.Device]
			if s.state == nil {
				ok = false
				continue
			}
			ls, found := linkOf(s.state, e.Interface)
			if !found || ls.MTU <= 0 {
				ok = false
				continue
			}
			mtu[k] = ls.MTU
		}
		if !ok {
			continue
		}
		c := results.Check{Category: results.CheckMTU, Name: "mtu " + endName(l.A) + " -- " + endName(l.B), Device: l.A.Device, Interface: l.A.Interface}
		want := l.MTU
		wantText := fmt.Sprintf("topology: %d", want)
		if want == 0 {
			wantText = "the topology sets none: both ends must agree"
		}
		switch {
		case mtu[0] == mtu[1] && (want == 0 || mtu[0] == want):
			c.Verdict, c.Evidence = results.Pass, fmt.Sprintf("MTU %d at both ends (%s)", mtu[0], wantText)
			v.add(c, nil)
			continue
		case want != 0 && mtu[0] == want:
			c.Device, c.Interface = l.B.Device, l.B.Interface
		}
		c.Verdict = results.Fail
		c.Evidence = fmt.Sprintf("MTU %d at %s, %d at %s (%s)", mtu[0], endName(l.A), mtu[1], endName(l.B), wantText)
		v.add(c, &finding{kind: kMTU, link: i})
	}
}

// intent reports whether the lab says which AS each switch is (then BGP
// sessions and ASNs are checked against it).
func (v *validation) intent() bool {
	for _, d := range v.t.Devices {
		if d.ASN != 0 {
			return true
		}
	}
	return false
}

// bgpConfig is a device's default-VRF BGP instance (nil when none).
func bgpConfig(st *drivers.State) *drivers.BGPConfig {
	for i := range st.BGPConfig {
		if st.BGPConfig[i].VRF == "" || st.BGPConfig[i].VRF == "default" {
			return &st.BGPConfig[i]
		}
	}
	return nil
}

// driftChecks compare the running configuration with the intent: each
// switch's AS number, eBGP maximum-paths against the fabric's parallel
// paths, and the link addresses.
func (v *validation) driftChecks() {
	for i := range v.t.Devices {
		d := &v.t.Devices[i]
		s := v.states[d.Name]
		if s.state == nil {
			continue
		}
		cfg := bgpConfig(s.state)
		if d.ASN != 0 && cfg == nil && runs(s.state, "bgpd") {
			v.add(results.Check{Category: results.CheckDrift, Name: "bgp as " + d.Name, Device: d.Name, Verdict: results.Fail,
				Evidence: fmt.Sprintf("%s has no BGP instance configured, the lab says AS %d", d.Name, d.ASN)},
				&finding{kind: kASN, link: -1})
		}
		if d.ASN != 0 && cfg != nil {
			c := results.Check{Category: results.CheckDrift, Name: "bgp as " + d.Name, Device: d.Name}
			if cfg.LocalAS == d.ASN {
				c.Verdict, c.Evidence = results.Pass, fmt.Sprintf("router bgp %d as intended", d.ASN)
				v.add(c, nil)
			} else {
				c.Verdict, c.Evidence = results.Fail, fmt.Sprintf("%s runs BGP AS %d, the lab says %d", d.Name, cfg.LocalAS, d.ASN)
				v.add(c, &finding{kind: kASN, link: -1})
			}
		}
		if cfg != nil && !d.IsHost() {
			width := v.maxWidth(d.Name)
			if width > 1 {
				c := results.Check{Category: results.CheckDrift, Name: "bgp maximum-paths " + d.Name, Device: d.Name}
				var bad []string
				for _, af := range []string{"ipv4 unicast", "ipv6 unicast"} {
					if n, ok := cfg.MaxPaths[af]; ok && n < width {
						bad = append(bad, fmt.Sprintf("maximum-paths %d (%s)", n, af))
					}
				}
				if len(bad) == 0 {
					c.Verdict, c.Evidence = results.Pass, fmt.Sprintf("eBGP maximum-paths allow the fabric's %d equal-cost paths", width)
					v.add(c, nil)
				} else {
					c.Verdict = results.Fail
					c.Evidence = fmt.Sprintf("%s has %s, the fabric has %d equal-cost paths", d.Name, strings.Join(bad, ", "), width)
					v.add(c, &finding{kind: kMaxPaths, link: -1})
				}
			}
		}
	}
	// Addresses: every link end the topology gives an address.
	byDev := map[string][]Endpoint{}
	for _, l := range v.t.Links {
		for _, e := range []Endpoint{l.A, l.B} {
			if e.IPv4.IsValid() || e.IPv6.IsValid() {
				byDev[e.Device] = append(byDev[e.Device], e)
			}
		}
	}
	owner := map[netip.Prefix]string{}
	for _, l := range v.t.Links {
		for _, e := range []Endpoint{l.A, l.B} {
			for _, p := range []netip.Prefix{e.IPv4, e.IPv6} {
				if p.IsValid() {
					owner[p] = endName(e)
				}
			}
		}
	}
	for i := range v.t.Devices {
		d := &v.t.Devices[i]
		s := v.states[d.Name]
		if s.state == nil || len(byDev[d.Name]) == 0 {
			continue
		}
		good := 0
		for _, e := range byDev[d.Name] {
			ls, ok := linkOf(s.state, e.Interface)
			var missing, foreign []string
			for _, p := range []netip.Prefix{e.IPv4, e.IPv6} {
				if p.IsValid() && (!ok || !hasAddr(ls.Addrs, p)) {
					missing = append(missing, p.String())
				}
			}
			// Addresses the topology gives another port.
			if ok {
				for _, a := range ls.Addrs {
					if o, taken := owner[a]; taken && o != endName(e) {
						foreign = append(foreign, fmt.Sprintf("%s is %s's", a, o))
					}
				}
			}
			if len(missing)+len(foreign) == 0 {
				good++
				continue
			}
			has := "no address"
			if ok {
				var as []string
				for _, a := range ls.Addrs {
					if !a.Addr().IsLinkLocalUnicast() {
						as = append(as, a.String())
					}
				}
				if len(as) > 0 {
					has = strings.Join(as, ", ")
				}
			}
			c := results.Check{Category: results.CheckDrift, Name: "addresses " + endName(e), Device: d.Name, Interface: e.Interface,
				Verdict: results.Fail, Evidence: fmt.Sprintf("%s: want %s, it has %s", endName(e), joinAddrs(e), has)}
			if len(missing) > 0 {
				c.Evidence += "; missing " + strings.Join(missing, ", ")
			}
			if len(foreign) > 0 {
				c.Evidence += "; in the topology " + strings.Join(foreign, ", ")
			}
			_, li, _ := v.g.peerEnd(e.Device, e.Interface)
			v.add(c, &finding{kind: kAddress, link: li})
		}
		if good > 0 {
			v.add(results.Check{Category: results.CheckDrift, Name: "addresses " + d.Name, Device: d.Name, Verdict: results.Pass,
				Evidence: fmt.Sprintf("%d link interfaces have their topology addresses", good)}, nil)
		}
	}
}

func joinAddrs(e Endpoint) string {
	var s []string
	for _, p := range []netip.Prefix{e.IPv4, e.IPv6} {
		if p.IsValid() {
			s = append(s, p.String())
		}
	}
	return strings.Join(s, " and ")
}

func hasAddr(as []netip.Prefix, p netip.Prefix) bool {
	for _, a := range as {
		if a == p {
			return true
		}
	}
	return false
}

// maxWidth is the most equal-cost next hops dev has towards any host.
func (v *validation) maxWidth(dev string) int {
	w := 0
	for _, h := range v.t.Devices {
		if h.IsHost() {
			if n := len(v.g.nextHops(dev, h.Name)); n > w {
				w = n
			}
		}
	}
	return w
}

// bgpWant is one BGP session a device is expected to have.
type bgpWant struct {
	dev, peer      string
	local, peerEnd Endpoint
	peerAddr       netip.Addr
	link           int
	name           string
	configured     *drivers.BGPSession // config mode: the session as read
}

// bgpChecks: with the intent known, a session on each switch end of every
// switch-switch link per address family both ends have an address in (by
// interface when unnumbered); otherwise every session the devices have
// configured. A session that is down is classified by the configuration:
// shut down, remote AS other than the peer's, else down.
func (v *validation) bgpChecks(ctx context.Context) {
	var wants []bgpWant
	isSwitch := func(name string) bool { s := v.states[name]; return s != nil && !s.dev.IsHost() }
	if v.intent() {
		for i, l := range v.t.Links {
			if !isSwitch(l.A.Device) || !isSwitch(l.B.Device) {
				continue
			}
			for _, pair := range [][2]Endpoint{{l.A, l.B}, {l.B, l.A}} {
				local, peer := pair[0], pair[1]
				for _, af := range []struct {
					l, p    netip.Prefix
					present bool
				}{{local.IPv4, peer.IPv4, local.IPv4.IsValid() && peer.IPv4.IsValid()},
					{local.IPv6, peer.IPv6, local.IPv6.IsValid() && peer.IPv6.IsValid()}} {
					if !af.present {
						continue
					}
					wants = append(wants, bgpWant{dev: local.Device, peer: peer.Device, local: local, peerEnd: peer, peerAddr: af.p.Addr(), link: i,
						name: fmt.Sprintf("bgp %s %s -> %s %s", local.Device, local.Interface, peer.Device, af.p.Addr())})
				}
				if !local.IPv4.IsValid() && !local.IPv6.IsValid() {
					wants = append(wants, bgpWant{dev: local.Device, peer: peer.Device, local: local, peerEnd: peer, link: i,
						name: fmt.Sprintf("bgp %s %s -> %s", local.Device, local.Interface, peer.Device)})
				}
			}
		}
	} else {
		for _, d := range v.t.Devices {
			s := v.states[d.Name]
			if s.state == nil {
				continue
			}
			for i := range s.state.BGP {
				b := &s.state.BGP[i]
				if b.VRF != "" && b.VRF != "default" {
					continue
				}
				w := bgpWant{dev: d.Name, configured: b, link: -1, local: Endpoint{Device: d.Name, Interface: b.Interface}}
				if pe, li, ok := v.g.peerEnd(d.Name, b.Interface); ok {
					w.peer, w.peerEnd, w.link = pe.Device, pe, li
				}
				if a, err := netip.ParseAddr(b.Peer); err == nil {
					w.peerAddr = a
				}
				peerName := w.peer
				if peerName == "" {
					peerName = b.Peer
				}
				w.name = fmt.Sprintf("bgp %s %s -> %s %s", d.Name, orText(b.Interface, "?"), peerName, b.Peer)
				wants = append(wants, w)
			}
		}
	}
	find := func(st *drivers.State, w bgpWant) (drivers.BGPSession, bool) {
		if w.configured != nil {
			for _, s := range st.BGP {
				if s.Peer == w.configured.Peer && s.VRF == w.configured.VRF {
					return s, true
				}
			}
			return drivers.BGPSession{}, false
		}
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
	judge := func() ([]results.Check, []*finding, int) {
		var out []results.Check
		var fs []*finding
		down := 0
		for _, w := range wants {
			c := results.Check{Category: results.CheckBGP, Name: w.name, Device: w.dev, Interface: w.local.Interface}
			st := v.states[w.dev]
			f := &finding{kind: kBGPDown, link: w.link}
			if st.state == nil {
				c.Verdict, c.Evidence = results.Error, "device unreachable"
				out, fs = append(out, c), append(fs, f)
				continue
			}
			s, ok := find(st.state, w)
			switch {
			case !ok:
				c.Verdict, c.Evidence = results.Fail, "no BGP session configured for this peer"
				f.kind = kBGPMissing
				down++
			case !s.Established():
				c.Verdict = results.Fail
				c.Evidence = fmt.Sprintf("state %s (remote AS %d)", s.State, s.RemoteAS)
				down++
				peerASN := uint32(0)
				if ps := v.states[w.peer]; ps != nil {
					peerASN = ps.dev.ASN
				}
				switch {
				case shutDown(st.state, s):
					f.kind = kBGPShutdown
					c.Evidence += "; the neighbour is shut down in the configuration"
				case peerASN != 0 && s.RemoteAS != 0 && s.RemoteAS != peerASN:
					f.kind = kRemoteAS
					c.Evidence += fmt.Sprintf("; configured remote-as %d, %s is AS %d", s.RemoteAS, w.peer, peerASN)
				}
			default:
				c.Verdict = results.Pass
				c.Evidence = fmt.Sprintf("Established, AS %d -> %d, %d prefixes received", s.LocalAS, s.RemoteAS, s.PfxReceived)
			}
			out, fs = append(out, c), append(fs, f)
		}
		return out, fs, down
	}
	out, fs, down := judge()
	deadline := time.Now().Add(v.opt.BGPWait)
	for down > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(500 * time.Millisecond)
		// Re-read only the devices with sessions down.
		for _, c := range out {
			if c.Verdict == results.Fail {
				s := v.states[c.Device]
				if st, err := s.drv.State(ctx); err == nil {
					s.state = st
				}
			}
		}
		out, fs, down = judge()
	}
	for i := range out {
		v.add(out[i], fs[i])
	}
	if v.intent() {
		v.extraSessions(wants)
	}
}

// extraSessions: with the intent known, a BGP neighbour a switch has
// configured that no link of the topology gives it is configuration
// drift.
func (v *validation) extraSessions(wants []bgpWant) {
	want := map[string]bool{}
	for _, w := range wants {
		if w.peerAddr.IsValid() {
			want[w.dev+" "+w.peerAddr.String()] = true
		} else {
			want[w.dev+" "+w.local.Interface] = true
		}
	}
	owner := map[netip.Addr]Endpoint{}
	for _, l := range v.t.Links {
		for _, e := range []Endpoint{l.A, l.B} {
			for _, p := range []netip.Prefix{e.IPv4, e.IPv6} {
				if p.IsValid() {
					owner[p.Addr()] = e
				}
			}
		}
	}
	for _, d := range v.t.Devices {
		s := v.states[d.Name]
		if s.state == nil || d.IsHost() {
			continue
		}
		for _, b := range s.state.BGP {
			if b.VRF != "" && b.VRF != "default" {
				continue
			}
			if want[d.Name+" "+b.Peer] || (b.Interface != "" && want[d.Name+" "+b.Interface]) {
				continue
			}
			ev := fmt.Sprintf("%s has a BGP neighbour %s (remote AS %d, %s) that the topology does not give it", d.Name, b.Peer, b.RemoteAS, b.State)
			li := -1
			if a, err := netip.ParseAddr(b.Peer); err == nil {
				if e, ok := owner[a]; ok {
					ev += fmt.Sprintf(" (%s is %s's address)", a, endName(e))
				}
			}
			v.add(results.Check{Category: results.CheckDrift, Name: fmt.Sprintf("bgp neighbours %s %s", d.Name, b.Peer), Device: d.Name,
				Interface: b.Interface, Verdict: results.Fail, Evidence: ev}, &finding{kind: kBGPExtra, link: li})
		}
	}
}

// shutDown reports whether the session's neighbour is configured shut
// down.
func shutDown(st *drivers.State, s drivers.BGPSession) bool {
	cfg := bgpConfig(st)
	if cfg == nil {
		return strings.Contains(s.State, "Admin")
	}
	for _, n := range cfg.Shutdown {
		if n == s.Peer || (s.Interface != "" && n == s.Interface) {
			return true
		}
	}
	return strings.Contains(s.State, "Admin")
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// adjacencyChecks: every OSPF, OSPFv3 and IS-IS adjacency a device has is
// complete, and on every switch-switch link whose two ends run the same
// link-state daemon there is one.
func (v *validation) adjacencyChecks() {
	daemon := map[string]string{"ospf": "ospfd", "ospf6": "ospf6d", "isis": "isisd"}
	for i, l := range v.t.Links {
		a, b := v.states[l.A.Device], v.states[l.B.Device]
		if a.state == nil || b.state == nil || a.dev.IsHost() || b.dev.IsHost() {
			continue
		}
		for _, proto := range []string{"ospf", "ospf6", "isis"} {
			if !runs(a.state, daemon[proto]) || !runs(b.state, daemon[proto]) {
				continue
			}
			c := results.Check{Category: results.CheckRouting, Name: fmt.Sprintf("%s %s -- %s", proto, endName(l.A), endName(l.B)),
				Device: l.A.Device, Interface: l.A.Interface}
			var ev []string
			up := 0
			for _, e := range []Endpoint{l.A, l.B} {
				st := v.states[e.Device].state
				found := false
				for _, adj := range st.Adjacencies {
					if adj.Protocol == proto && adj.Interface == e.Interface {
						found = true
						ev = append(ev, fmt.Sprintf("%s: %s %s", endName(e), adj.Neighbor, adj.State))
						if adj.Up {
							up++
						} else if c.Device == l.A.Device && up == 0 {
							c.Device, c.Interface = e.Device, e.Interface
						}
					}
				}
				if !found {
					ev = append(ev, endName(e)+": no adjacency")
				}
			}
			c.Evidence = strings.Join(ev, "; ")
			if up == 2 {
				c.Verdict = results.Pass
				v.add(c, nil)
			} else {
				c.Verdict = results.Fail
				v.add(c, &finding{kind: kAdjDown, link: i})
			}
		}
	}
}

func runs(st *drivers.State, daemon string) bool {
	for _, d := range st.Daemons {
		if d == daemon {
			return true
		}
	}
	return false
}

// dynamic reports whether a device runs a dynamic routing protocol (its
// routes then follow the fabric's equal-cost paths).
func dynamic(st *drivers.State, platform string) bool {
	if platform == "sonic" {
		return true
	}
	for _, d := range []string{"bgpd", "ospfd", "ospf6d", "isisd"} {
		if runs(st, d) {
			return true
		}
	}
	return len(st.BGP) > 0
}

// hostPrefixes maps each host to the prefixes of its links: the topology's
// addresses, else the addresses read from the host.
func (v *validation) hostPrefixes() map[string][]netip.Prefix {
	pfx := map[string][]netip.Prefix{}
	seen := map[string]bool{}
	for _, l := range v.t.Links {
		for _, pair := range [][2]Endpoint{{l.A, l.B}, {l.B, l.A}} {
			h, sw := pair[0], pair[1]
			hs, ss := v.states[h.Device], v.states[sw.Device]
			if !hs.dev.IsHost() || ss.dev.IsHost() {
				continue
			}
			var ps []netip.Prefix
			for _, p := range []netip.Prefix{h.IPv4, h.IPv6} {
				if p.IsValid() {
					ps = append(ps, p)
				}
			}
			if len(ps) == 0 && hs.state != nil {
				if ls, ok := linkOf(hs.state, h.Interface); ok {
					for _, a := range ls.Addrs {
						if !a.Addr().IsLinkLocalUnicast() && !a.Addr().IsLoopback() {
							ps = append(ps, a)
						}
					}
				}
			}
			for _, p := range ps {
				m := p.Masked()
				if k := h.Device + m.String(); !seen[k] {
					seen[k] = true
					pfx[h.Device] = append(pfx[h.Device], m)
				}
			}
		}
	}
	return pfx
}

// lookup is the longest-prefix match of a in a device's routes (default
// VRF).
func lookup(routes []drivers.Route, a netip.Addr) (drivers.Route, bool) {
	best, found := drivers.Route{}, false
	for _, r := range routes {
		if r.VRF != "" || !r.Prefix.Contains(a) {
			continue
		}
		if !found || r.Prefix.Bits() > best.Prefix.Bits() {
			best, found = r, true
		}
	}
	return best, found
}

// routeChecks: every switch has a route to every host prefix it is not
// attached to, as wide as the fabric's equal-cost next hops (when it runs
// a dynamic routing protocol and there are several).
func (v *validation) routeChecks() {
	pfx := v.hostPrefixes()
	var hosts []string
	for h := range pfx {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for i := range v.t.Devices {
		d := &v.t.Devices[i]
		if d.IsHost() {
			continue
		}
		st := v.states[d.Name]
		var drops []string
		drop := &finding{kind: kDrop, link: -1}
		for _, af := range []string{"ipv4", "ipv6"} {
			c := results.Check{Category: results.CheckECMP, Name: fmt.Sprintf("ecmp %s %s to remote hosts", d.Name, af), Device: d.Name}
			var bad []string
			f := &finding{kind: kECMP, link: -1}
			n, widest := 0, 0
			for _, h := range hosts {
				if len(v.g.adj[h]) > 0 && v.g.dist[d.Name][h] == 1 {
					continue // attached
				}
				if _, ok := v.g.dist[d.Name][h]; !ok {
					continue
				}
				want := len(v.g.nextHops(d.Name, h))
				for _, p := range pfx[h] {
					if p.Addr().Is4() != (af == "ipv4") {
						continue
					}
					n++
					if st.state == nil {
						continue
					}
					if !dynamic(st.state, d.Platform) {
						want = 1
					}
					widest = max(widest, want)
					r, ok := lookup(st.state.Routes, p.Addr())
					switch {
					case ok && r.Drop != "":
						bad = append(bad, fmt.Sprintf("%s (%s): %s route %s", p, h, r.Drop, r.Prefix))
						f.items = append(f.items, item{d.Name, h})
						drops = append(drops, fmt.Sprintf("%s (%s) matches %s route %s (%s)", p, h, r.Drop, r.Prefix, orText(r.Protocol, "?")))
						drop.items = append(drop.items, item{d.Name, h})
					case !ok || len(r.Nexthops) == 0:
						bad = append(bad, fmt.Sprintf("%s (%s): no route", p, h))
						f.items = append(f.items, item{d.Name, h})
					case want > 1 && len(r.Nexthops) < want:
						bad = append(bad, fmt.Sprintf("%s (%s): %s via %s, want %d", p, h, countOf(len(r.Nexthops), "path"), nexthopDevs(r), want))
						f.items = append(f.items, item{d.Name, h})
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
				c.Evidence = fmt.Sprintf("%d of %d remote host prefixes short of their paths: %s", len(bad), n, strings.Join(bad, "; "))
			default:
				c.Verdict = results.Pass
				if widest > 1 {
					c.Evidence = fmt.Sprintf("%d remote host prefixes, each with all its equal-cost paths (up to %d)", n, widest)
				} else {
					c.Evidence = fmt.Sprintf("%d remote host prefixes, each with a route", n)
				}
			}
			v.add(c, f)
		}
		// A route that discards traffic for a host is a fault by itself
		// (a static blackhole, a leftover kernel route).
		if len(drops) > 0 {
			v.add(results.Check{Category: results.CheckDrift, Name: "drop routes " + d.Name, Device: d.Name, Verdict: results.Fail,
				Evidence: fmt.Sprintf("%s discards traffic to hosts: %s", d.Name, strings.Join(drops, "; "))}, drop)
		}
	}
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

func (v *validation) srv6Checks() {
	for i := range v.t.Devices {
		d := &v.t.Devices[i]
		if !d.Locator.IsValid() {
			continue
		}
		c := results.Check{Category: results.CheckSRv6, Name: fmt.Sprintf("srv6 %s uN %s", d.Name, d.Locator), Device: d.Name}
		st := v.states[d.Name]
		if st.state == nil {
			c.Verdict, c.Evidence = results.Error, "device unreachable"
			v.add(c, &finding{kind: kUnexplained, link: -1})
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
		v.add(c, &finding{kind: kSRv6, link: -1})
	}
}

// hostAddrs are the addresses of each host's link interfaces: the
// topology's, else those read.
func (v *validation) hostAddrs() (map[string][]netip.Addr, []string) {
	addrs := map[string][]netip.Addr{}
	for h, ps := range v.hostPrefixesExact() {
		for _, p := range ps {
			addrs[h] = append(addrs[h], p.Addr())
		}
	}
	var hosts []string
	for h := range addrs {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	return addrs, hosts
}

// hostPrefixesExact is hostPrefixes with the host's own addresses.
func (v *validation) hostPrefixesExact() map[string][]netip.Prefix {
	out := map[string][]netip.Prefix{}
	for _, l := range v.t.Links {
		for _, e := range []Endpoint{l.A, l.B} {
			s := v.states[e.Device]
			if !s.dev.IsHost() {
				continue
			}
			var ps []netip.Prefix
			for _, p := range []netip.Prefix{e.IPv4, e.IPv6} {
				if p.IsValid() {
					ps = append(ps, p)
				}
			}
			if len(ps) == 0 && s.state != nil {
				if ls, ok := linkOf(s.state, e.Interface); ok {
					for _, a := range ls.Addrs {
						if !a.Addr().IsLinkLocalUnicast() && !a.Addr().IsLoopback() {
							ps = append(ps, a)
						}
					}
				}
			}
			out[e.Device] = append(out[e.Device], ps...)
		}
	}
	return out
}

// gatewayChecks: a host's route to every other host goes through an
// address of a neighbour on the link it leaves by (or is on-link).
func (v *validation) gatewayChecks() {
	addrs, hosts := v.hostAddrs()
	for _, h := range hosts {
		s := v.states[h]
		if s.state == nil {
			continue
		}
		// The addresses of h's neighbours, per interface of h.
		neigh := map[string]map[netip.Addr]string{}
		for _, ifname := range v.g.ports[h] {
			pe, _, ok := v.g.peerEnd(h, ifname)
			if !ok {
				continue
			}
			m := map[netip.Addr]string{}
			for _, p := range []netip.Prefix{pe.IPv4, pe.IPv6} {
				if p.IsValid() {
					m[p.Addr()] = pe.Device
				}
			}
			if ps := v.states[pe.Device]; ps != nil && ps.state != nil {
				if ls, ok := linkOf(ps.state, pe.Interface); ok {
					for _, a := range ls.Addrs {
						m[a.Addr()] = pe.Device
					}
				}
			}
			neigh[ifname] = m
		}
		c := results.Check{Category: results.CheckGateway, Name: "gateway of " + h, Device: h}
		var bad []string
		ifbad := ""
		n := 0
		for _, o := range hosts {
			if o == h {
				continue
			}
			for _, a := range addrs[o] {
				n++
				r, ok := lookup(s.state.Routes, a)
				if !ok || len(r.Nexthops) == 0 {
					bad = append(bad, fmt.Sprintf("%s (%s): no route", a, o))
					continue
				}
				for _, nh := range r.Nexthops {
					if !nh.Via.IsValid() {
						continue // on-link
					}
					ns, known := neigh[nh.Dev]
					if !known {
						if nh.Dev != "" && len(neigh) > 0 {
							bad = append(bad, fmt.Sprintf("%s (%s): via %s dev %s, not a fabric link", a, o, nh.Via, nh.Dev))
							ifbad = orText(ifbad, nh.Dev)
						}
						continue
					}
					if _, isNeigh := ns[nh.Via]; !isNeigh {
						var want []string
						for na, nd := range ns {
							if na.Is4() == nh.Via.Is4() && !na.IsLinkLocalUnicast() {
								want = append(want, fmt.Sprintf("%s %s", nd, na))
							}
						}
						sort.Strings(want)
						bad = append(bad, fmt.Sprintf("%s (%s) via %s, not its neighbour's address on %s (%s)", a, o, nh.Via, nh.Dev, strings.Join(want, ", ")))
						ifbad = orText(ifbad, nh.Dev)
					}
				}
			}
		}
		if n == 0 {
			continue
		}
		if len(bad) == 0 {
			c.Verdict, c.Evidence = results.Pass, fmt.Sprintf("routes to %d host addresses through its neighbours", n)
			v.add(c, nil)
			continue
		}
		c.Verdict, c.Interface = results.Fail, ifbad
		c.Evidence = fmt.Sprintf("%s routes %d of %d host addresses wrongly: %s", h, len(bad), n, strings.Join(dedupe(bad), "; "))
		v.add(c, &finding{kind: kGateway, link: -1})
	}
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// reachChecks ping from every host every other host's addresses (IPv4 and
// IPv6), and every other host's IPv4 address with don't-fragment packets
// as large as the path's MTU, all destinations of a host at once.
func (v *validation) reachChecks(ctx context.Context) {
	addrs, hosts := v.hostAddrs()
	owner := map[netip.Addr]string{}
	for h, as := range addrs {
		for _, a := range as {
			owner[a] = h
		}
	}
	type res struct {
		plain, mtu results.Check
		pf, mf     *finding
		doMTU      bool
	}
	out := make([]res, len(hosts))
	var wg sync.WaitGroup
	sem := make(chan struct{}, v.opt.Parallel)
	for i, h := range hosts {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, h string) {
			defer wg.Done()
			defer func() { <-sem }()
			c := results.Check{Category: results.CheckReachability, Name: "reach from " + h, Device: h}
			mc := results.Check{Category: results.CheckMTU, Name: "mtu path from " + h, Device: h}
			pf, mf := &finding{kind: kUnreach, link: -1}, &finding{kind: kUnreachMTU, link: -1}
			var dsts []netip.Addr
			var big []sized
			for _, o := range hosts {
				if o == h {
					continue
				}
				dsts = append(dsts, addrs[o]...)
				if mtu := v.pathMTU(h, o); mtu > 1280 {
					for _, a := range addrs[o] {
						if a.Is4() {
							big = append(big, sized{a, mtu})
						}
					}
				}
			}
			s := v.states[h]
			if s.drv == nil || s.err != nil {
				c.Verdict, c.Evidence = results.Error, "host unreachable over its management network"
				out[i] = res{plain: c, pf: &finding{kind: kUnexplained, link: -1}}
				return
			}
			failed, err := pingAll(ctx, s.drv, dsts, v.opt.PingTimeout)
			switch {
			case err != nil:
				c.Verdict, c.Evidence = results.Error, err.Error()
				pf.kind = kUnexplained
			case len(failed) > 0:
				c.Verdict = results.Fail
				c.Evidence = fmt.Sprintf("%d of %d destinations unreachable: %s", len(failed), len(dsts), strings.Join(failed, ", "))
				for _, a := range failed {
					if ad, err := netip.ParseAddr(a); err == nil {
						pf.items = append(pf.items, item{h, owner[ad]})
					}
				}
			default:
				c.Verdict = results.Pass
				c.Evidence = fmt.Sprintf("%d destinations (%d hosts) answered", len(dsts), len(hosts)-1)
			}
			r := res{plain: c, pf: pf}
			if len(big) > 0 {
				r.doMTU = true
				failedBig, err := pingDF(ctx, s.drv, big, v.opt.PingTimeout)
				switch {
				case err != nil:
					mc.Verdict, mc.Evidence = results.Error, err.Error()
					mf.kind = kUnexplained
				case len(failedBig) > 0:
					mc.Verdict = results.Fail
					mc.Evidence = fmt.Sprintf("%d of %d destinations unreachable with don't-fragment packets of the path MTU: %s", len(failedBig), len(big), strings.Join(failedBig, ", "))
					for _, a := range failedBig {
						ad, _ := netip.ParseAddr(strings.SplitN(a, " ", 2)[0])
						mf.items = append(mf.items, item{h, owner[ad]})
					}
				default:
					mc.Verdict = results.Pass
					mc.Evidence = fmt.Sprintf("%d destinations answered don't-fragment packets of their path's MTU (%s)", len(big), sizesText(big))
				}
				r.mtu, r.mf = mc, mf
			}
			out[i] = r
		}(i, h)
	}
	wg.Wait()
	for _, r := range out {
		v.add(r.plain, r.pf)
		if r.doMTU {
			v.add(r.mtu, r.mf)
		}
	}
}

// sized is a destination and the MTU of the path to it.
type sized struct {
	addr netip.Addr
	mtu  int
}

func sizesText(s []sized) string {
	seen := map[int]bool{}
	var out []string
	for _, x := range s {
		if !seen[x.mtu] {
			seen[x.mtu] = true
			out = append(out, fmt.Sprint(x.mtu))
		}
	}
	sort.Strings(out)
	return "MTU " + strings.Join(out, ", ")
}

// pathMTU is the smallest intended MTU of the links on the shortest paths
// between two hosts (0 when no link says).
func (v *validation) pathMTU(a, b string) int {
	links, _ := v.g.pathLinks(a, b)
	mtu := 0
	for l := range links {
		if m := v.t.Links[l].MTU; m > 0 && (mtu == 0 || m < mtu) {
			mtu = m
		}
	}
	return mtu
}

// pingAll pings every destination from a host, in parallel, and returns
// the ones that never answered (3 tries).
func pingAll(ctx context.Context, drv drivers.Driver, dsts []netip.Addr, timeout time.Duration) ([]string, error) {
	if len(dsts) == 0 {
		return nil, nil
	}
	secs := max(int(timeout.Round(time.Second)/time.Second), 1)
	var b strings.Builder
	for _, a := range dsts {
		fmt.Fprintf(&b, "(ping -n -q -c 3 -i 0.2 -W %d %s >/dev/null 2>&1 && echo 'ok %s' || echo 'fail %s') & ", secs, a, a, a)
	}
	b.WriteString("wait")
	return runPings(ctx, drv, b.String(), dsts)
}

// pingDF pings destinations with don't-fragment IPv4 packets filling the
// path's MTU.
func pingDF(ctx context.Context, drv drivers.Driver, dsts []sized, timeout time.Duration) ([]string, error) {
	secs := max(int(timeout.Round(time.Second)/time.Second), 1)
	var b strings.Builder
	// Forget path MTUs learnt earlier (a fixed MTU fault would otherwise
	// still shrink the packets for minutes).
	b.WriteString("ip route flush cache >/dev/null 2>&1; ip -6 route flush cache >/dev/null 2>&1; ")
	var as []netip.Addr
	for _, d := range dsts {
		fmt.Fprintf(&b, "(ping -n -q -M do -s %d -c 3 -i 0.2 -W %d %s >/dev/null 2>&1 && echo 'ok %s' || echo 'fail %s') & ", d.mtu-28, secs, d.addr, d.addr, d.addr)
		as = append(as, d.addr)
	}
	b.WriteString("wait")
	failed, err := runPings(ctx, drv, b.String(), as)
	if err != nil {
		return nil, err
	}
	mtu := map[string]int{}
	for _, d := range dsts {
		mtu[d.addr.String()] = d.mtu
	}
	for i, f := range failed {
		failed[i] = fmt.Sprintf("%s (%d bytes)", f, mtu[f])
	}
	return failed, nil
}

func runPings(ctx context.Context, drv drivers.Driver, script string, dsts []netip.Addr) ([]string, error) {
	outp, err := drv.Exec(ctx, script)
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
	return dedupe(failed), nil
}

// countOf says "1 path", "2 paths".
func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
