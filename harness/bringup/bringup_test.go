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
// set.
type fakeDriver struct {
	drivers.Driver // unused methods panic if called
	state          *drivers.State
	reach          map[string]bool
	pings          *int
}

func (f *fakeDriver) State(context.Context) (*drivers.State, error) { return f.state, nil }
func (f *fakeDriver) Close() error                                  { return nil }
func (f *fakeDriver) Exec(_ context.Context, cmd string) (string, error) {
	*f.pings++
	var out strings.Builder
	for _, part := range strings.Split(cmd, "&") {
		i := strings.Index(part, "echo 'ok ")
		if i < 0 {
			continue
		}
		a := strings.TrimSuffix(strings.Fields(part[i+len("echo 'ok "):])[0], "'")
		if f.reach[a] {
			fmt.Fprintf(&out, "ok %s\n", a)
		} else {
			fmt.Fprintf(&out, "fail %s\n", a)
		}
	}
	return out.String(), nil
}

var pp = netip.MustParsePrefix

// fabric: spine0, spine1 over leaf0, leaf1; host0 on leaf0, host1 on leaf1.
func fabric() (*Target, map[string]*drivers.State) {
	t := &Target{Name: "t", Devices: []Device{
		{Name: "spine0", Role: "spine", Platform: "fake"},
		{Name: "spine1", Role: "spine", Platform: "fake"},
		{Name: "leaf0", Role: "leaf", Platform: "fake"},
		{Name: "leaf1", Role: "leaf", Platform: "fake", Locator: pp("fd00:bbbb:4::/48")},
		{Name: "host0", Role: "host", Platform: "fake"},
		{Name: "host1", Role: "host", Platform: "fake"},
	}}
	link := func(a, ai, a4, b, bi, b4 string) {
		t.Links = append(t.Links, Link{A: Endpoint{Device: a, Interface: ai, IPv4: pp(a4)}, B: Endpoint{Device: b, Interface: bi, IPv4: pp(b4)}})
	}
	link("leaf0", "eth1", "198.18.0.1/31", "spine0", "eth1", "198.18.0.0/31")
	link("leaf0", "eth2", "198.18.0.3/31", "spine1", "eth1", "198.18.0.2/31")
	link("leaf1", "eth1", "198.18.0.5/31", "spine0", "eth2", "198.18.0.4/31")
	link("leaf1", "eth2", "198.18.0.7/31", "spine1", "eth2", "198.18.0.6/31")
	link("host0", "eth1", "198.18.0.9/31", "leaf0", "eth3", "198.18.0.8/31")
	link("host1", "eth1", "198.18.0.11/31", "leaf1", "eth3", "198.18.0.10/31")

	st := map[string]*drivers.State{}
	for _, d := range t.Devices {
		st[d.Name] = &drivers.State{}
	}
	for _, l := range t.Links {
		for _, pair := range [][2]Endpoint{{l.A, l.B}, {l.B, l.A}} {
			s := st[pair[0].Device]
			s.Links = append(s.Links, drivers.LinkState{Name: pair[0].Interface, Up: true, Admin: true})
			if !strings.HasPrefix(pair[0].Device, "host") && !strings.HasPrefix(pair[1].Device, "host") {
				s.BGP = append(s.BGP, drivers.BGPSession{Peer: pair[1].IPv4.Addr().String(), Interface: pair[0].Interface, State: "Established", LocalAS: 1, RemoteAS: 2})
			}
		}
	}
	ecmp := func(dev string, p string) {
		st[dev].Routes = append(st[dev].Routes, drivers.Route{Prefix: pp(p), Nexthops: []drivers.Nexthop{{Dev: "eth1"}, {Dev: "eth2"}}})
	}
	ecmp("leaf0", "198.18.0.10/31")
	ecmp("leaf1", "198.18.0.8/31")
	st["leaf1"].SIDs = []drivers.SIDState{{Addr: pp("fd00:bbbb:4::/48"), Behavior: "End", Flavors: "next-csid"}}
	return t, st
}

func run(t *testing.T, tg *Target, st map[string]*drivers.State, reach map[string]bool, openErr map[string]error) *results.Bringup {
	t.Helper()
	pings := 0
	out, err := Validate(context.Background(), tg, Options{Open: func(_ string, cfg drivers.Config) (drivers.Driver, error) {
		if e := openErr[cfg.Device]; e != nil {
			return nil, e
		}
		return &fakeDriver{state: st[cfg.Device], reach: reach, pings: &pings}, nil
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
	// 6 devices, 6 links, 4 switch links x 2 ends, 2 leaves (IPv4 only), 1 SID, 2 hosts.
	want := map[string]int{"device": 6, "links": 6, "bgp": 8, "ecmp": 2, "srv6": 1, "reachability": 2}
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
		"ecmp leaf0 ipv4 to remote hosts":     "198.18.0.10/31 (host1): 1 paths via eth1, want 2",
		"srv6 leaf1 uN fd00:bbbb:4::/48":      "SID not installed",
		"reach from host0":                    "1 of 1 destinations unreachable: 198.18.0.11",
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
