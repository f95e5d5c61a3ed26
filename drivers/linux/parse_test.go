package linux

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/internal/fuzzbound"
)

// Replies captured from iproute2 6.1 on the lab's nodes.
const (
	routes4JSON = `[{"dst":"198.19.0.0/24","nhid":11,"gateway":"198.18.0.4","dev":"eth1","flags":[]},` +
		`{"dst":"198.19.1.0/24","nhid":13,"protocol":"bgp","flags":[],"nexthops":[{"gateway":"198.18.0.4","dev":"eth1","weight":1,"flags":[]},{"gateway":"198.18.0.8","dev":"eth1","weight":1,"flags":["onlink"]}]},` +
		`{"dst":"198.19.2.0/24","protocol":"static","flags":[],"nexthops":[{"gateway":"198.18.0.4","dev":"eth1","weight":1,"flags":[]},{"gateway":"198.18.0.8","dev":"eth1","weight":1,"flags":["onlink"]}]},` +
		`{"dst":"198.18.0.0/15","gateway":"198.18.0.4","dev":"eth1","flags":[]},` +
		`{"dst":"198.18.0.4/31","dev":"eth1","protocol":"kernel","scope":"link","prefsrc":"198.18.0.5","flags":[]},` +
		`{"dst":"198.19.3.0/24","encap":"seg6","mode":"encap","segs":["fd00:bbbb:1::"],"dev":"eth1","scope":"link","flags":[]},` +
		`{"dst":"default","via":{"family":"inet6","host":"fe80::1"},"dev":"eth1","protocol":"bgp","metric":20,"flags":[]},` +
		`{"dst":"198.19.4.0/24","nhid":30,"protocol":"bgp","metric":20,"flags":[]},` +
		`{"type":"unreachable","dst":"198.19.5.1","protocol":"static","flags":[]}]`
	nexthopsJSON = `[{"id":11,"gateway":"198.18.0.4","dev":"eth1","scope":"link","flags":[]},{"id":12,"gateway":"198.18.0.8","dev":"eth1","scope":"link","flags":["onlink"]},` +
		`{"id":13,"group":[{"id":11},{"id":12}],"flags":[]},{"id":30,"group":[{"id":11,"weight":2},{"id":12}],"flags":[]}]`
	routes6JSON = `[{"dst":"2001:db8:1::/64","encap":"seg6","mode":"encap","segs":["fd00:bbbb:1::","fd00:bbbb:2::"],"dev":"eth1","metric":1024,"flags":[],"pref":"medium"},` +
		`{"dst":"fd00:bbbb:1:e001::/64","encap":"seg6local","action":"End.X","nh6":"fe80::1","flavors":["next-csid"],"lblen":32,"nflen":16,"dev":"eth1","metric":1024,"flags":[],"pref":"medium"},` +
		`{"dst":"fd00:bbbb:1::/48","encap":"seg6local","action":"End","flavors":["next-csid"],"lblen":32,"nflen":16,"dev":"lo","metric":1024,"flags":[],"pref":"medium"},` +
		`{"dst":"fe80::/64","dev":"mgmt0","protocol":"kernel","metric":256,"flags":[],"pref":"medium"}]`
	routes6Text = `2001:db8:1::/64  encap seg6 mode encap segs 2 [ fd00:bbbb:1:: fd00:bbbb:2:: ] dev eth1 metric 1024 pref medium
fd00:bbbb:1:e001::/64  encap seg6local action End.X nh6 fe80::1 flavors next-csid lblen 32 nflen 16 dev eth1 metric 1024 pref medium
fd00:bbbb:1::/48  encap seg6local action End flavors next-csid lblen 32 nflen 16 dev lo metric 1024 pref medium
fe80::/64 dev mgmt0 proto kernel metric 256 pref medium
`
	addrJSON = `[{"ifindex":1,"ifname":"lo","flags":["LOOPBACK","UP","LOWER_UP"],"mtu":65536,"qdisc":"noqueue","operstate":"UNKNOWN","group":"default","txqlen":1000,"link_type":"loopback","address":"00:00:00:00:00:00","broadcast":"00:00:00:00:00:00","addr_info":[{"family":"inet","local":"127.0.0.1","prefixlen":8,"scope":"host","label":"lo","valid_life_time":4294967295,"preferred_life_time":4294967295},{"family":"inet6","local":"::1","prefixlen":128,"scope":"host","valid_life_time":4294967295,"preferred_life_time":4294967295}]},` +
		`{"ifindex":4,"link_index":3,"ifname":"eth2","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],"mtu":1500,"qdisc":"noqueue","operstate":"UP","group":"default","link_type":"ether","address":"9e:f2:2a:34:d5:0b","broadcast":"ff:ff:ff:ff:ff:ff","link_netnsid":2,"addr_info":[{"family":"inet","local":"198.18.0.6","prefixlen":31,"scope":"global","label":"eth2","valid_life_time":4294967295,"preferred_life_time":4294967295},{"family":"inet6","local":"fe80::9cf2:2aff:fe34:d50b","prefixlen":64,"scope":"link","valid_life_time":4294967295,"preferred_life_time":4294967295}]},` +
		`{"ifindex":5,"ifname":"eth3","flags":["BROADCAST","MULTICAST"],"mtu":1500,"operstate":"DOWN","addr_info":[]},` +
		`{"ifindex":6,"ifname":"eth4","flags":["NO-CARRIER","BROADCAST","MULTICAST","UP"],"mtu":1500,"operstate":"LOWERLAYERDOWN","addr_info":[]}]`
)

var (
	pfx = netip.MustParsePrefix
	ip  = netip.MustParseAddr
)

func TestRoutes(t *testing.T) {
	rs, err := parseRoutes(routes4JSON)
	if err != nil {
		t.Fatal(err)
	}
	if !needsNHObjects(rs) {
		t.Fatal("route 198.19.4.0/24 names nhid 30 only: nexthop objects are needed")
	}
	if _, err := toRoutes(rs, false, "", nil); err == nil || !strings.Contains(err.Error(), "nexthop id 30") {
		t.Errorf("nhid without nexthop objects: %v", err)
	}
	objs, err := parseNexthopObjects(nexthopsJSON)
	if err != nil {
		t.Fatal(err)
	}
	got, err := toRoutes(rs, false, "", objs)
	if err != nil {
		t.Fatal(err)
	}
	nh := func(via, dev string) drivers.Nexthop {
		n := drivers.Nexthop{Dev: dev}
		if via != "" {
			n.Via = ip(via)
		}
		return n
	}
	two := []drivers.Nexthop{nh("198.18.0.4", "eth1"), nh("198.18.0.8", "eth1")}
	want := []drivers.Route{
		{Prefix: pfx("198.19.0.0/24"), Protocol: "boot", Nexthops: []drivers.Nexthop{nh("198.18.0.4", "eth1")}},
		{Prefix: pfx("198.19.1.0/24"), Protocol: "bgp", Nexthops: two},
		{Prefix: pfx("198.19.2.0/24"), Protocol: "static", Nexthops: two},
		{Prefix: pfx("198.18.0.0/15"), Protocol: "boot", Nexthops: []drivers.Nexthop{nh("198.18.0.4", "eth1")}},
		{Prefix: pfx("198.18.0.4/31"), Protocol: "kernel", Nexthops: []drivers.Nexthop{nh("", "eth1")}},
		{Prefix: pfx("198.19.3.0/24"), Protocol: "boot", Nexthops: []drivers.Nexthop{nh("", "eth1")}},
		{Prefix: pfx("0.0.0.0/0"), Protocol: "bgp", Nexthops: []drivers.Nexthop{nh("fe80::1", "eth1")}},
		{Prefix: pfx("198.19.4.0/24"), Protocol: "bgp", Nexthops: two},
		{Prefix: pfx("198.19.5.1/32"), Protocol: "static", Drop: "unreachable"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("routes:\n got %+v\nwant %+v", got, want)
	}
}

// seg6Routes are the seg6 routes of `ip -j -d -6 route` output, each
// read in full from the JSON.
func seg6Routes(t *testing.T, routesJSON string) []seg6Route {
	t.Helper()
	rs, err := parseRoutes(routesJSON)
	if err != nil {
		t.Fatal(err)
	}
	var out []seg6Route
	for _, r := range rs {
		s, ok, full, err := seg6FromJSON(r, true)
		if err != nil || !full {
			t.Fatalf("%+v: %v full=%v", r, err, full)
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

func TestSeg6JSONAndText(t *testing.T) {
	fromJSON := seg6Routes(t, routes6JSON)
	fromText, lines, err := parseSeg6Text(routes6Text, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(fromJSON) != 3 || !reflect.DeepEqual(fromJSON, fromText) {
		t.Errorf("JSON and text disagree:\n%+v\n%+v", fromJSON, fromText)
	}
	un := seg6Route{Prefix: pfx("fd00:bbbb:1::/48"), Encap: "seg6local", Action: "End", Flavors: "next-csid", LBLen: 32, NFLen: 16, Dev: "lo"}
	if fromJSON[2] != un {
		t.Errorf("uN %+v", fromJSON[2])
	}
	if got := un.args(); got != "encap seg6local action End flavors next-csid lblen 32 nflen 16 dev lo" {
		t.Errorf("args %q", got)
	}
	if l := lines[pfx("fe80::/64")]; !strings.HasPrefix(l, "fe80::/64 dev mgmt0") {
		t.Errorf("line %q", l)
	}
	steer := seg6Route{Prefix: pfx("2001:db8:1::/64"), Encap: "seg6", Mode: "encap", Segs: "fd00:bbbb:1::,fd00:bbbb:2::", Dev: "eth1"}
	if fromText[0] != steer || steer.args() != "encap seg6 mode encap segs fd00:bbbb:1::,fd00:bbbb:2:: dev eth1" {
		t.Errorf("steer %+v", fromText[0])
	}
	// JSON of an iproute2 that names the encapsulation only: incomplete.
	rs, _ := parseRoutes(`[{"dst":"fd00::/48","encap":"seg6local","dev":"lo"}]`)
	if _, ok, full, err := seg6FromJSON(rs[0], true); !ok || full || err != nil {
		t.Errorf("encap without details: ok=%v full=%v err=%v", ok, full, err)
	}
	// Host routes print without /128.
	routes, _, err := parseSeg6Text("fd00::1  encap seg6local action End dev lo metric 1024\n", true)
	if err != nil || len(routes) != 1 || routes[0].Prefix != pfx("fd00::1/128") {
		t.Errorf("host route: %+v %v", routes, err)
	}
}

func TestLinkStates(t *testing.T) {
	links, err := parseLinks(addrJSON)
	if err != nil {
		t.Fatal(err)
	}
	got, err := linkStates(links)
	if err != nil {
		t.Fatal(err)
	}
	want := []drivers.LinkState{
		{Name: "lo", Up: true, Admin: true, Addrs: []netip.Prefix{pfx("127.0.0.1/8"), pfx("::1/128")}, MTU: 65536},
		{Name: "eth2", Up: true, Admin: true, Addrs: []netip.Prefix{pfx("198.18.0.6/31"), pfx("fe80::9cf2:2aff:fe34:d50b/64")},
			MAC: "9e:f2:2a:34:d5:0b", MTU: 1500},
		{Name: "eth3", MTU: 1500},
		{Name: "eth4", Admin: true, MTU: 1500},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("links:\n got %+v\nwant %+v", got, want)
	}
}

func TestBadReplies(t *testing.T) {
	for _, in := range []string{"", "Error: something", `{"dst":"x"}`, `[1,2]`, `[{"dst":5}]`, `[{"flags":[]}]`, `[{"dst":"300.1.1.1/24"}]`, `[{"dst":"10.0.0.0/8","gateway":"nope"}]`} {
		rs, err := parseRoutes(in)
		if err == nil {
			_, err = toRoutes(rs, false, "", nil)
		}
		if err == nil {
			t.Errorf("routes %q: no error", in)
		}
	}
	for _, in := range []string{"", "null x", `[{"ifname":""}]`, `[{"ifname":"a","addr_info":[{"local":"1.2.3.4","prefixlen":99}]}]`, `[{"ifname":"a","addr_info":[{"local":"x","prefixlen":8}]}]`} {
		ls, err := parseLinks(in)
		if err == nil {
			_, err = linkStates(ls)
		}
		if err == nil {
			t.Errorf("links %q: no error", in)
		}
	}
	objs, err := parseNexthopObjects(`[{"id":1,"group":[{"id":1}]}]`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resolveNHID(1, objs, 0); err == nil {
		t.Errorf("a group containing itself: no error")
	}
	for _, in := range []string{"fd00::/48 encap seg6local action", "fd00::/48 encap seg6 mode encap segs 2 [ fd00::1", "fd00::/48 encap seg6local action End lblen x", "garbage here"} {
		if _, _, err := parseSeg6Text(in, true); err == nil {
			t.Errorf("text %q: no error", in)
		}
	}
	if _, err := parseSysctlDump("no tab here\n"); err == nil {
		t.Errorf("sysctl dump without a tab: no error")
	}
	if _, err := parseFacts("only-one-line"); err == nil {
		t.Errorf("facts: no error")
	}
}

func TestSysctlDump(t *testing.T) {
	m, err := parseSysctlDump("net/ipv4/fib_multipath_hash_policy\t1\nnet/ipv4/fib_multipath_hash_fields\t-\nnet/ipv6/conf/eth1.100/seg6_enabled\t0\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || m["net/ipv4/fib_multipath_hash_policy"] != "1" || m["net/ipv6/conf/eth1.100/seg6_enabled"] != "0" {
		t.Errorf("%v", m)
	}
	s := mkSysctl("net", "ipv6", "conf", "eth1.100", "seg6_enabled")
	if s.name != "net.ipv6.conf.eth1/100.seg6_enabled" || s.path != "net/ipv6/conf/eth1.100/seg6_enabled" {
		t.Errorf("%+v", s)
	}
}

func TestFacts(t *testing.T) {
	f, err := parseFacts("leaf0\n6.18.44\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n")
	if err != nil || f.Hostname != "leaf0" || f.OSVersion != "Debian GNU/Linux 12 (bookworm), kernel 6.18.44" {
		t.Errorf("%+v %v", f, err)
	}
}

func TestECMPSettings(t *testing.T) {
	set, err := ecmpSettings([]string{"dst-port", "src-ip", "dst-ip", "protocol", "src-port"}, false)
	if err != nil || len(set) != 2 || set[0].value != "1" || set[1].s != hashPolicy6 {
		t.Errorf("5-tuple: %+v %v", set, err)
	}
	set, err = ecmpSettings([]string{"src-ip", "dst-ip", "flow-label", "src-port"}, true)
	if err != nil || len(set) != 4 || set[1].value != "19" || set[3].value != "27" || set[0].value != "3" {
		t.Errorf("custom: %+v %v", set, err)
	}
	if _, err := ecmpSettings([]string{"src-ip"}, false); err == nil {
		t.Errorf("custom fields without the sysctl: no error")
	}
	if _, err := ecmpSettings([]string{"src-mac"}, true); err == nil {
		t.Errorf("unknown field: no error")
	}
}

func TestSRv6Routes(t *testing.T) {
	srv6 := &drivers.SRv6{Prefix: pfx("fd00:bbbb:1::/48"),
		SIDs: []drivers.SID{
			{Addr: pfx("fd00:bbbb:1::/48"), Behavior: "uN"},
			{Addr: pfx("fd00:bbbb:1:e001::/64"), Behavior: "uA", Nexthop: ip("fe80::1"), Dev: "eth1"},
			{Addr: pfx("fd00:bbbb:1:fe00::/64"), Behavior: "uDT46", VRF: "red"},
		},
		Steer: []drivers.Steer{{Prefix: pfx("10.0.0.0/24"), Segments: []netip.Addr{ip("fd00:bbbb:2::")}, Dev: "eth1", VRF: "red"}},
	}
	rs, err := srv6Routes(srv6, map[string]int{"red": 1001})
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, r := range rs {
		args = append(args, r.route.String())
	}
	want := []string{
		"fd00:bbbb:1::/48 encap seg6local action End flavors next-csid lblen 32 nflen 16 dev sr0",
		"fd00:bbbb:1:e001::/64 encap seg6local action End.X nh6 fe80::1 flavors next-csid lblen 32 nflen 16 dev eth1",
		"fd00:bbbb:1:fe00::/64 encap seg6local action End.DT46 vrftable 1001 dev red",
		"10.0.0.0/24 encap seg6 mode encap segs fd00:bbbb:2:: dev eth1",
	}
	if !reflect.DeepEqual(args, want) || rs[3].table != 1001 || rs[3].family != 4 {
		t.Errorf("routes:\n%s", strings.Join(args, "\n"))
	}
	for name, bad := range map[string]drivers.SRv6{
		"v4 sid":    {SIDs: []drivers.SID{{Addr: pfx("10.0.0.0/8"), Behavior: "uN"}}},
		"behavior":  {SIDs: []drivers.SID{{Addr: pfx("fd00::/48"), Behavior: "uX"}}},
		"ua no nh":  {SIDs: []drivers.SID{{Addr: pfx("fd00::/48"), Behavior: "uA", Dev: "eth1"}}},
		"dt46 vrf":  {SIDs: []drivers.SID{{Addr: pfx("fd00::/48"), Behavior: "uDT46", VRF: "blue"}}},
		"twice":     {SIDs: []drivers.SID{{Addr: pfx("fd00::/48"), Behavior: "uN"}, {Addr: pfx("fd00::/48"), Behavior: "End"}}},
		"no segs":   {Steer: []drivers.Steer{{Prefix: pfx("10.0.0.0/8"), Dev: "eth1"}}},
		"no dev":    {Steer: []drivers.Steer{{Prefix: pfx("10.0.0.0/8"), Segments: []netip.Addr{ip("fd00::1")}}}},
		"v4 seg":    {Steer: []drivers.Steer{{Prefix: pfx("10.0.0.0/8"), Segments: []netip.Addr{ip("10.0.0.1")}, Dev: "eth1"}}},
		"bad block": {BlockLen: 30, NodeLen: 16},
	} {
		if _, err := srv6Routes(&bad, map[string]int{"red": 1001}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func FuzzRoutes(f *testing.F) {
	f.Add(routes4JSON, nexthopsJSON, false)
	f.Add(routes6JSON, "[]", true)
	f.Add(`[{"dst":"default","nhid":1}]`, `[{"id":1,"group":[{"id":2}]},{"id":2,"blackhole":true}]`, false)
	f.Fuzz(func(t *testing.T, routes, nexthops string, v6 bool) {
		fuzzbound.Default(t, func() {
			rs, err := parseRoutes(routes)
			if err != nil {
				return
			}
			objs, _ := parseNexthopObjects(nexthops)
			_, _ = toRoutes(rs, v6, "", objs)
			for _, r := range rs {
				if s, ok, full, err := seg6FromJSON(r, v6); ok && full && err == nil {
					_ = s.args()
				}
			}
		})
	})
}

func FuzzSeg6Text(f *testing.F) {
	f.Add(routes6Text, true)
	f.Add("198.19.3.0/24  encap seg6 mode encap segs 1 [ fd00:bbbb:1:: ] dev eth1 scope link\nunreachable 10.0.0.0/8\n", false)
	f.Fuzz(func(t *testing.T, text string, v6 bool) {
		fuzzbound.Default(t, func() {
			routes, lines, err := parseSeg6Text(text, v6)
			if err != nil {
				return
			}
			for _, r := range routes {
				if _, ok := lines[r.Prefix]; !ok {
					t.Errorf("route %s without its line", r.Prefix)
				}
			}
		})
	})
}

func FuzzLinks(f *testing.F) {
	f.Add(addrJSON)
	f.Add(`[{"ifname":"x","addr_info":[{"local":"::1","prefixlen":-1}]}]`)
	f.Fuzz(func(t *testing.T, in string) {
		fuzzbound.Default(t, func() {
			links, err := parseLinks(in)
			if err != nil {
				return
			}
			_, _ = linkStates(links)
		})
	})
}

func FuzzSysctlAndFacts(f *testing.F) {
	f.Add("net/ipv4/fib_multipath_hash_policy\t1\n")
	f.Add("leaf0\n6.1\nPRETTY_NAME=x\n")
	f.Fuzz(func(t *testing.T, in string) {
		fuzzbound.Default(t, func() {
			_, _ = parseSysctlDump(in)
			_, _ = parseFacts(in)
		})
	})
}
