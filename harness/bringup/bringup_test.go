package bringup

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/results"
)

// fakeDriver serves a fixed state and answers pings from a reachability
// set (don't-fragment pings from their own set when one is given).
type fakeDriver struct {
	drivers.Driver // unused methods panic if called
	state          *drivers.State
	reach, reachDF map[string]bool
	pings          *int
}

func (f *fakeDriver) State(context.Context) (*drivers.State, error) { return f.state, nil }
func (f *fakeDriver) Close() error                                  { return nil }
func (f *fakeDriver) Exec(_ context.Context, cmd string) (string, error) {
	if strings.Contains(cmd, "ff02::1") {
		return "", nil // the neighbour probe
	}
	*f.pings++
	var out strings.Builder
	for _, part := range strings.Split(cmd, ") & ") {
		i := strings.Index(part, "echo 'ok ")
		if i < 0 {
			continue
		}
		a := strings.TrimSuffix(strings.Fields(part[i+len("echo 'ok "):])[0], "'")
		ok := f.reach[a]
		if strings.Contains(part, "-M do") && f.reachDF != nil {
			ok = f.reachDF[a]
		}
		if ok {
			fmt.Fprintf(&out, "ok %s\n", a)
		} else {
			fmt.Fprintf(&out, "fail %s\n", a)
		}
	}
	return out.String(), nil
}

var pp = netip.MustParsePrefix

// fabric: spine0, spine1 over leaf0, leaf1; host0 on leaf0, host1 on leaf1;
// links at MTU 9000; eBGP with ASNs (the intent), ECMP on the leaves,
// hosts routing through their leaf; every port's neighbour in the ND
// table.
func fabric() (*Target, map[string]*drivers.State) {
	asn := map[string]uint32{"spine0": 65000, "spine1": 65000, "leaf0": 65101, "leaf1": 65102}
	t := &Target{Name: "t", Devices: []Device{
		{Name: "spine0", Role: "spine", Platform: "fake", ASN: 65000},
		{Name: "spine1", Role: "spine", Platform: "fake", ASN: 65000},
		{Name: "leaf0", Role: "leaf", Platform: "fake", ASN: 65101},
		{Name: "leaf1", Role: "leaf", Platform: "fake", Locator: pp("fd00:bbbb:4::/48"), ASN: 65102},
		{Name: "host0", Role: "host", Platform: "fake"},
		{Name: "host1", Role: "host", Platform: "fake"},
	}}
	link := func(a, ai, a4, b, bi, b4 string) {
		t.Links = append(t.Links, Link{A: Endpoint{Device: a, Interface: ai, IPv4: pp(a4)}, B: Endpoint{Device: b, Interface: bi, IPv4: pp(b4)}, MTU: 9000})
	}
	link("leaf0", "eth1", "198.18.0.1/31", "spine0", "eth1", "198.18.0.0/31")
	link("leaf0", "eth2", "198.18.0.3/31", "spine1", "eth1", "198.18.0.2/31")
	link("leaf1", "eth1", "198.18.0.5/31", "spine0", "eth2", "198.18.0.4/31")
	link("leaf1", "eth2", "198.18.0.7/31", "spine1", "eth2", "198.18.0.6/31")
	link("host0", "eth1", "198.18.0.9/31", "leaf0", "eth3", "198.18.0.8/31")
	link("host1", "eth1", "198.18.0.11/31", "leaf1", "eth3", "198.18.0.10/31")

	st := map[string]*drivers.State{}
	mac := map[string]string{}
	for i, d := range t.Devices {
		st[d.Name] = &drivers.State{}
		if !d.IsHost() {
			st[d.Name].Daemons = []string{"bgpd", "staticd", "zebra"}
			st[d.Name].DaemonsEnabled = []string{"bgpd", "staticd", "zebra"}
			st[d.Name].Forwarding = &drivers.Forwarding{IPv4: true, IPv6: true}
			st[d.Name].BGPConfig = []drivers.BGPConfig{{LocalAS: d.ASN, MaxPaths: map[string]int{"ipv4 unicast": 64, "ipv6 unicast": 64}}}
		}
		for j := 1; j <= 3; j++ {
			mac[fmt.Sprintf("%s:eth%d", d.Name, j)] = fmt.Sprintf("02:00:00:00:%02x:%02x", i+1, j)
		}
	}
	for _, l := range t.Links {
		for _, pair := range [][2]Endpoint{{l.A, l.B}, {l.B, l.A}} {
			me, peer := pair[0], pair[1]
			s := st[me.Device]
			s.Links = append(s.Links, drivers.LinkState{Name: me.Interface, Up: true, Admin: true, Addrs: []netip.Prefix{me.IPv4},
				MAC: mac[endName(me)], MTU: 9000})
			s.Neighbors = append(s.Neighbors, drivers.Neighbor{Interface: me.Interface, Protocol: "nd", MAC: mac[endName(peer)], Addr: peer.IPv4.Addr()})
			if !strings.HasPrefix(me.Device, "host") && !strings.HasPrefix(peer.Device, "host") {
				s.BGP = append(s.BGP, drivers.BGPSession{Peer: peer.IPv4.Addr().String(), Interface: me.Interface, State: "Established",
					LocalAS: asn[me.Device], RemoteAS: asn[peer.Device]})
			}
		}
	}
	route := func(dev, p string, via ...string) {
		r := drivers.Route{Prefix: pp(p)}
		for _, v := range via {
			dv := strings.Split(v, " ")
			r.Nexthops = append(r.Nexthops, drivers.Nexthop{Via: netip.MustParseAddr(dv[0]), Dev: dv[1]})
		}
		st[dev].Routes = append(st[dev].Routes, r)
	}
	route("leaf0", "198.18.0.10/31", "198.18.0.0 eth1", "198.18.0.2 eth2")
	route("leaf1", "198.18.0.8/31", "198.18.0.4 eth1", "198.18.0.6 eth2")
	for _, sp := range []string{"spine0", "spine1"} {
		a0, a1 := "198.18.0.1 eth1", "198.18.0.5 eth2"
		if sp == "spine1" {
			a0, a1 = "198.18.0.3 eth1", "198.18.0.7 eth2"
		}
		route(sp, "198.18.0.8/31", a0)
		route(sp, "198.18.0.10/31", a1)
	}
	route("host0", "198.18.0.0/15", "198.18.0.8 eth1")
	route("host1", "198.18.0.0/15", "198.18.0.10 eth1")
	st["leaf1"].SIDs = []drivers.SIDState{{Addr: pp("fd00:bbbb:4::/48"), Behavior: "End", Flavors: "next-csid"}}
	return t, st
}

func run(t *testing.T, tg *Target, st map[string]*drivers.State, reach map[string]bool, openErr map[string]error) *results.Bringup {
	return runDF(t, tg, st, reach, nil, openErr)
}

func runDF(t *testing.T, tg *Target, st map[string]*drivers.State, reach, reachDF map[string]bool, openErr map[string]error) *results.Bringup {
	t.Helper()
	pings := 0
	out, err := Validate(context.Background(), tg, Options{Open: func(_ string, cfg drivers.Config) (drivers.Driver, error) {
		if e := openErr[cfg.Device]; e != nil {
			return nil, e
		}
		return &fakeDriver{state: st[cfg.Device], reach: reach, reachDF: reachDF, pings: &pings}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func withDeviceNames(tg *Target) *Target {
	for i := range tg.Devices {
		tg.Devices[i].Config.Device = tg.Devices[i].Name
	}
	return tg
}

func allReach() map[string]bool { return map[string]bool{"198.18.0.9": true, "198.18.0.11": true} }

func TestHealthyFabricPasses(t *testing.T) {
	tg, st := fabric()
	out := run(t, withDeviceNames(tg), st, allReach(), nil)
	if f := Failed(out); len(f) > 0 {
		t.Fatalf("healthy fabric failed: %+v", f)
	}
	count := map[string]int{}
	for _, c := range out.Checks {
		count[c.Category]++
	}
	// 6 devices, 4 switches' daemons; 6 links (up, cabling, MTU); 4 switch
	// links x 2 ends; every switch's routes (IPv4 only); 4 ASNs, 2 leaves'
	// maximum-paths, 6 devices' addresses, 4 switches' forwarding; 1 SID;
	// 2 hosts (gateway, reach, full-size reach).
	want := map[string]int{"device": 6 + 4, "links": 6, "cabling": 6, "mtu": 6 + 2, "bgp": 8, "ecmp": 4, "drift": 4 + 2 + 6 + 4, "srv6": 1,
		"gateway": 2, "reachability": 2}
	for k, v := range want {
		if count[k] != v {
			t.Errorf("%s checks = %d, want %d (all: %v)", k, count[k], v, count)
		}
	}
}

func TestFailuresNameDeviceAndEvidence(t *testing.T) {
	tg, st := fabric()
	// leaf0's uplink to spine1 is shut: link admin down, BGP Idle on both
	// ends, leaf0 reaches host1 over one path only.
	for i := range st["leaf0"].Links {
		if st["leaf0"].Links[i].Name == "eth2" {
			st["leaf0"].Links[i].Admin, st["leaf0"].Links[i].Up = false, false
		}
	}
	for i := range st["leaf0"].BGP {
		if st["leaf0"].BGP[i].Interface == "eth2" {
			st["leaf0"].BGP[i].State = "Idle"
		}
	}
	st["spine1"].BGP[0].State = "Active"
	st["leaf0"].Routes[0].Nexthops = st["leaf0"].Routes[0].Nexthops[:1]
	st["leaf1"].SIDs = nil
	reach := allReach()
	delete(reach, "198.18.0.11")
	out := run(t, withDeviceNames(tg), st, reach, nil)
	got := map[string]results.Check{}
	for _, c := range Failed(out) {
		got[c.Name] = c
	}
	expect := map[string]string{
		"link leaf0:eth2 -- spine1:eth1":      "leaf0:eth2 admin down",
		"bgp leaf0 eth2 -> spine1 198.18.0.2": "state Idle",
		"bgp spine1 eth1 -> leaf0 198.18.0.3": "state Active",
		"ecmp leaf0 ipv4 to remote hosts":     "198.18.0.10/31 (host1): 1 path via eth1, want 2",
		"srv6 leaf1 uN fd00:bbbb:4::/48":      "SID not installed",
		"reach from host0":                    "1 of 1 destinations unreachable: 198.18.0.11",
		"mtu path from host0":                 "198.18.0.11 (9000 bytes)",
	}
	for name, ev := range expect {
		c, ok := got[name]
		if !ok {
			t.Errorf("no failed check %q; failed: %v", name, keys(got))
			continue
		}
		if !strings.Contains(c.Evidence, ev) {
			t.Errorf("%s: evidence %q, want it to contain %q", name, c.Evidence, ev)
		}
	}
	if len(got) != len(expect) {
		t.Errorf("failed checks %v, want exactly %v", keys(got), len(expect))
	}
	// Two causes: the shut link (with the sessions over it, leaf0's
	// narrower route and host0's lost destination), and the SID.
	if len(out.Causes) != 2 || out.Causes[0].Kind != "link-down" || out.Causes[0].Device != "leaf0" || out.Causes[0].Interface != "eth2" ||
		out.Causes[0].Consequences != 5 || out.Causes[1].Kind != "srv6-sid" || out.Causes[1].Device != "leaf1" {
		t.Errorf("causes %+v", out.Causes)
	}
}

func TestUnreachableDevice(t *testing.T) {
	tg, st := fabric()
	out := run(t, withDeviceNames(tg), st, allReach(), map[string]error{"spine0": errors.New("dial tcp 198.19.1.11:22: connection refused")})
	var dev, bgpErr int
	for _, c := range out.Checks {
		if c.Category == "device" && c.Device == "spine0" && c.Verdict == results.Fail && strings.Contains(c.Evidence, "connection refused") {
			dev++
		}
		if c.Category == "bgp" && c.Device == "spine0" && c.Verdict == results.Error {
			bgpErr++
		}
	}
	if dev != 1 || bgpErr != 2 {
		t.Errorf("unreachable spine0: device fails %d (want 1), bgp errors %d (want 2)", dev, bgpErr)
	}
	if len(out.Causes) != 1 || out.Causes[0].Kind != "device" || out.Causes[0].Device != "spine0" {
		t.Errorf("causes %+v, want spine0 not answering", out.Causes)
	}
}

func TestTargetErrors(t *testing.T) {
	tg, _ := fabric()
	tg.Links = append(tg.Links, Link{A: Endpoint{Device: "leaf9", Interface: "eth1"}, B: Endpoint{Device: "spine0", Interface: "eth9"}})
	if _, err := Validate(context.Background(), tg, Options{}); err == nil || !strings.Contains(err.Error(), "unknown device leaf9") {
		t.Errorf("err = %v", err)
	}
}

func keys(m map[string]results.Check) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// fault mutates the fixture's states (and the reachability it answers).
type fault func(st map[string]*drivers.State, reach, reachDF map[string]bool)

func setLink(st *drivers.State, name string, fn func(*drivers.LinkState)) {
	for i := range st.Links {
		if st.Links[i].Name == name {
			fn(&st.Links[i])
		}
	}
}

func setBGP(st *drivers.State, ifname string, fn func(*drivers.BGPSession)) {
	for i := range st.BGP {
		if st.BGP[i].Interface == ifname {
			fn(&st.BGP[i])
		}
	}
}

var faults = map[string]struct {
	fault     fault
	kind, dev string
	ifname    string
}{
	// leaf0's two uplinks swapped: each port's neighbour entry is the
	// other spine's MAC (and each spine sees the other leaf0 port); the
	// addresses moved with the ports.
	"swapped uplinks": {func(st map[string]*drivers.State, _, _ map[string]bool) { swapLeaf0Uplinks(st) },
		"cabling", "leaf0", "eth1"},
	// The same, but leaf0 has not seen a neighbour on eth1 yet (LLDP
	// after a re-cabling): still leaf0's eth1, as the spines' views say.
	"swapped uplinks, eth1 unseen": {func(st map[string]*drivers.State, _, _ map[string]bool) {
		swapLeaf0Uplinks(st)
		l := st["leaf0"]
		for i, n := range l.Neighbors {
			if n.Interface == "eth1" {
				l.Neighbors = append(l.Neighbors[:i], l.Neighbors[i+1:]...)
				break
			}
		}
	}, "cabling", "leaf0", "eth1"},
	"mtu 1400 at one end": {func(st map[string]*drivers.State, _, df map[string]bool) {
		setLink(st["leaf1"], "eth1", func(x *drivers.LinkState) { x.MTU = 1400 })
		delete(df, "198.18.0.9")
	}, "mtu", "leaf1", "eth1"},
	"wrong remote AS": {func(st map[string]*drivers.State, _, _ map[string]bool) {
		setBGP(st["leaf1"], "eth2", func(s *drivers.BGPSession) { s.RemoteAS, s.State = 65999, "Active" })
		setBGP(st["spine1"], "eth2", func(s *drivers.BGPSession) { s.State = "Active" })
		st["leaf1"].Routes[0].Nexthops = st["leaf1"].Routes[0].Nexthops[:1]
	}, "bgp-remote-as", "leaf1", "eth2"},
	"maximum-paths 1": {func(st map[string]*drivers.State, _, _ map[string]bool) {
		st["leaf0"].BGPConfig[0].MaxPaths["ipv4 unicast"] = 1
		st["leaf0"].Routes[0].Nexthops = st["leaf0"].Routes[0].Nexthops[:1]
	}, "ecmp-config", "leaf0", ""},
	"wrong gateway": {func(st map[string]*drivers.State, reach, df map[string]bool) {
		st["host1"].Routes[0].Nexthops[0].Via = netip.MustParseAddr("198.18.0.99")
		delete(reach, "198.18.0.11")
		delete(reach, "198.18.0.9")
		delete(df, "198.18.0.11")
		delete(df, "198.18.0.9")
	}, "gateway", "host1", "eth1"},
	// bgpd stopped on leaf1: no BGP configuration or sessions there, the
	// spines' sessions to it down, no route to either host's prefix
	// across the fabric.
	"bgpd stopped": {func(st map[string]*drivers.State, reach, df map[string]bool) {
		l := st["leaf1"]
		l.Daemons = []string{"staticd", "zebra"}
		l.BGPConfig, l.BGP, l.Routes = nil, nil, nil
		for _, sp := range []string{"spine0", "spine1"} {
			setBGP(st[sp], "eth2", func(s *drivers.BGPSession) { s.State = "Active" })
			st[sp].Routes = st[sp].Routes[:1]
		}
		st["leaf0"].Routes = nil
		for _, m := range []map[string]bool{reach, df} {
			delete(m, "198.18.0.11")
			delete(m, "198.18.0.9")
		}
	}, "daemon", "leaf1", ""},
	// spine1 stops forwarding IPv4: every host pair whose pings it
	// carried fails (here both: the fake pings do not hash).
	"forwarding off": {func(st map[string]*drivers.State, reach, df map[string]bool) {
		st["spine1"].Forwarding.IPv4 = false
		for _, m := range []map[string]bool{reach, df} {
			delete(m, "198.18.0.11")
			delete(m, "198.18.0.9")
		}
	}, "forwarding", "spine1", ""},
	"session shut": {func(st map[string]*drivers.State, _, _ map[string]bool) {
		st["leaf0"].BGPConfig[0].Shutdown = []string{"198.18.0.0"}
		setBGP(st["leaf0"], "eth1", func(s *drivers.BGPSession) { s.State = "Idle (Admin)" })
		setBGP(st["spine0"], "eth1", func(s *drivers.BGPSession) { s.State = "Active" })
		st["leaf0"].Routes[0].Nexthops = st["leaf0"].Routes[0].Nexthops[1:]
	}, "bgp-shutdown", "leaf0", "eth1"},
}

// Each fault is one cause naming its device and port, every failed check
// belongs to it; all of them at once are as many causes as faults.
func TestCauses(t *testing.T) {
	names := []string{"swapped uplinks", "mtu 1400 at one end", "wrong remote AS", "maximum-paths 1", "wrong gateway", "session shut"}
	for _, name := range append(names, "swapped uplinks, eth1 unseen", "bgpd stopped", "forwarding off") {
		t.Run(name, func(t *testing.T) {
			tg, st := fabric()
			reach, df := allReach(), allReach()
			faults[name].fault(st, reach, df)
			out := runDF(t, withDeviceNames(tg), st, reach, df, nil)
			want := faults[name]
			if len(out.Causes) != 1 {
				t.Fatalf("%d causes, want 1:\n%s", len(out.Causes), causesText(out))
			}
			c := out.Causes[0]
			if c.Kind != want.kind || c.Device != want.dev || c.Interface != want.ifname {
				t.Errorf("cause %s %s %s, want %s %s %s: %s", c.Kind, c.Device, c.Interface, want.kind, want.dev, want.ifname, c.Summary)
			}
			for _, f := range Failed(out) {
				if len(f.Causes) == 0 {
					t.Errorf("failed check %q belongs to no cause", f.Name)
				}
			}
			t.Logf("%s", causesText(out))
		})
	}
	// All at once (the maximum-paths fault and the session shut both on
	// leaf0's routes: keep the narrower route once).
	tg, st := fabric()
	reach, df := allReach(), allReach()
	for _, name := range names {
		faults[name].fault(st, reach, df)
	}
	out := runDF(t, withDeviceNames(tg), st, reach, df, nil)
	if len(out.Causes) != len(names) {
		t.Errorf("%d causes for %d faults:\n%s", len(out.Causes), len(names), causesText(out))
	}
	kinds := map[string]bool{}
	for _, c := range out.Causes {
		kinds[c.Kind+" "+c.Device] = true
	}
	for _, name := range names {
		if w := faults[name]; !kinds[w.kind+" "+w.dev] {
			t.Errorf("no cause %s on %s among:\n%s", w.kind, w.dev, causesText(out))
		}
	}
}

func causesText(b *results.Bringup) string {
	var s strings.Builder
	for _, c := range b.Causes {
		fmt.Fprintf(&s, "  #%d %s [%s %s]: %s\n", c.ID, c.Kind, c.Device, c.Interface, c.Summary)
		for _, i := range c.Checks[c.Roots:] {
			fmt.Fprintf(&s, "      - %s: %s\n", b.Checks[i].Name, b.Checks[i].Evidence)
		}
	}
	return s.String()
}

// swapLeaf0Uplinks moves leaf0's uplink cables: its eth1 reaches spine1,
// its eth2 spine0, each port keeping its addresses.
func swapLeaf0Uplinks(st map[string]*drivers.State) {
	l := st["leaf0"]
	var n1, n2 int
	for i, n := range l.Neighbors {
		switch n.Interface {
		case "eth1":
			n1 = i
		case "eth2":
			n2 = i
		}
	}
	l.Neighbors[n1].MAC, l.Neighbors[n2].MAC = l.Neighbors[n2].MAC, l.Neighbors[n1].MAC
	for _, sp := range []string{"spine0", "spine1"} {
		for i, n := range st[sp].Neighbors {
			if n.Interface == "eth1" {
				if n.MAC == "02:00:00:00:03:01" {
					st[sp].Neighbors[i].MAC = "02:00:00:00:03:02"
				} else {
					st[sp].Neighbors[i].MAC = "02:00:00:00:03:01"
				}
			}
		}
	}
	setLink(l, "eth1", func(x *drivers.LinkState) { x.Addrs = []netip.Prefix{pp("198.18.0.3/31")} })
	setLink(l, "eth2", func(x *drivers.LinkState) { x.Addrs = []netip.Prefix{pp("198.18.0.1/31")} })
}

// A host pair lost with nothing to explain it: both spines are on its
// paths, so no cause names one spine alone (picked by name).
func TestCauseAmbiguousSpines(t *testing.T) {
	tg, st := fabric()
	reach, df := allReach(), allReach()
	for _, m := range []map[string]bool{reach, df} {
		delete(m, "198.18.0.11")
		delete(m, "198.18.0.9")
	}
	// Every device of this small fabric is on the lost pair's paths: the
	// cause may name all of them as candidates, never one spine alone.
	out := runDF(t, withDeviceNames(tg), st, reach, df, nil)
	if len(out.Causes) == 0 {
		t.Fatal("no cause")
	}
	t.Logf("%s", causesText(out))
	for _, c := range out.Causes {
		if c.Device == "spine0" || c.Device == "spine1" {
			t.Errorf("cause names %s alone, but both spines are on every lost path: %s", c.Device, c.Summary)
		}
	}
}
