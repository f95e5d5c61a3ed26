package frr

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/internal/fuzzbound"
)

// Replies of FRR 8.4.4 on the lab's nodes (trimmed to the fields read).
const (
	neighborsJSON = `{
"default":{
  "vrfId":0,
  "vrfName":"default",
  "198.18.0.1":{"remoteAs":65101,"localAs":65000,"bgpState":"Established","addressFamilyInfo":{"ipv4Unicast":{"acceptedPrefixCounter":3},"ipv6Unicast":{"acceptedPrefixCounter":2}}},
  "198.18.0.3":{"remoteAs":65102,"localAs":65000,"bgpState":"Active","addressFamilyInfo":{"ipv4Unicast":{}}}
},
"red":{"vrfId":1,"vrfName":"red",
  "swp1":{"remoteAs":"1.10","localAs":"65000","bgpState":"Established","addressFamilyInfo":{"ipv4Unicast":{"acceptedPrefixCounter":1}}}
}}`
	// Two VRFs: two JSON objects one after the other, as FRR prints them.
	routesJSON = `{"198.18.0.0/31":[{"prefix":"198.18.0.0/31","prefixLen":31,"protocol":"bgp","vrfId":0,"vrfName":"default","selected":true,"destSelected":true,"distance":20,"metric":0,"installed":true,"table":254,"nexthops":[{"flags":3,"fib":true,"ip":"198.18.0.2","afi":"ipv4","interfaceIndex":3,"interfaceName":"eth1","active":true,"weight":1}]}],` +
		`"198.18.0.2/31":[{"prefix":"198.18.0.2/31","prefixLen":31,"protocol":"connected","vrfId":0,"vrfName":"default","selected":true,"destSelected":true,"installed":true,"nexthops":[{"flags":3,"fib":true,"directlyConnected":true,"interfaceIndex":3,"interfaceName":"eth1","active":true}]}],` +
		`"198.19.0.0/24":[{"prefix":"198.19.0.0/24","protocol":"bgp","vrfName":"default","selected":false,"nexthops":[{"ip":"198.19.9.9","active":true}]},` +
		`{"prefix":"198.19.0.0/24","protocol":"bgp","vrfName":"default","selected":true,"installed":true,"nexthops":[` +
		`{"ip":"198.18.0.0","interfaceName":"eth1","active":true},{"ip":"198.18.0.2","interfaceName":"eth2","active":true},{"ip":"198.18.0.8","interfaceName":"eth3","active":false}]}],` +
		`"198.19.1.0/24":[{"prefix":"198.19.1.0/24","protocol":"bgp","vrfName":"default","selected":true,"installed":true,"nexthops":[` +
		`{"ip":"192.0.2.1","active":true,"recursive":true},{"ip":"198.18.0.0","interfaceName":"eth1","active":true,"resolver":true}]}],` +
		`"198.19.2.0/24":[{"prefix":"198.19.2.0/24","protocol":"bgp","vrfName":"default","nexthops":[{"ip":"192.0.2.9","active":false}]}]}
{"198.18.0.6/31":[{"prefix":"198.18.0.6/31","prefixLen":31,"protocol":"connected","vrfId":1,"vrfName":"red","selected":true,"destSelected":true,"installed":true,"nexthops":[{"flags":3,"fib":true,"directlyConnected":true,"interfaceIndex":4,"interfaceName":"eth2","active":true}]}]}
`
	runningConfig = `Building configuration...

Current configuration:
!
frr version 8.4.4
frr defaults datacenter
hostname leaf0
no ipv6 forwarding
service integrated-vtysh-config
!
router bgp 65101
 bgp router-id 198.19.255.2
 neighbor 198.18.0.0 remote-as 65000
 !
 address-family ipv4 unicast
  redistribute connected
  maximum-paths 64
  maximum-paths ibgp 32
 exit-address-family
 !
 address-family ipv6 unicast
  maximum-paths 8
 exit-address-family
exit
!
router bgp 65101 vrf red
 maximum-paths 16
!
end`
	showZebra = ` OS                             Linux(6.18.44-fc-v669)   
 ECMP Maximum                   256                      
 VRF                            Namespaces               
 ASIC offload                   Unavailable              

                            Route      Route      Neighbor   LSP        LSP
VRF                         Installs   Removals    Updates   Installs   Removals
default                            8          0          0          0          0`
)

func TestBGPNeighbors(t *testing.T) {
	got, err := parseBGPNeighbors(neighborsJSON)
	if err != nil {
		t.Fatal(err)
	}
	want := []drivers.BGPSession{
		{Peer: "198.18.0.1", LocalAS: 65000, RemoteAS: 65101, State: "Established", PfxReceived: 5},
		{Peer: "198.18.0.3", LocalAS: 65000, RemoteAS: 65102, State: "Active"},
		{VRF: "red", Peer: "swp1", Interface: "swp1", LocalAS: 65000, RemoteAS: 65546, State: "Established", PfxReceived: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sessions:\n got %+v\nwant %+v", got, want)
	}
	links := []drivers.LinkState{{Name: "eth1", Addrs: []netip.Prefix{netip.MustParsePrefix("198.18.0.0/31")}}, {Name: "eth2", Addrs: []netip.Prefix{netip.MustParsePrefix("198.18.0.2/31")}}}
	if i := sessionInterface("198.18.0.3", links); i != "eth2" {
		t.Errorf("interface of 198.18.0.3: %q", i)
	}
	if i := sessionInterface("10.0.0.1", links); i != "" {
		t.Errorf("interface of 10.0.0.1: %q", i)
	}
	for _, bad := range []string{"", "[]", `{"default":[]}`, `{"default":{"198.19.9.9":{"remoteAs":"x","bgpState":"Idle"}}}`, `{"default":{"198.19.9.9":{"remoteAs":1}}}`, `{"default":{"198.19.9.9":{"bgpState":7}}}`} {
		if _, err := parseBGPNeighbors(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestRoutes(t *testing.T) {
	got, err := parseRoutes(routesJSON)
	if err != nil {
		t.Fatal(err)
	}
	a := netip.MustParseAddr
	p := netip.MustParsePrefix
	want := []drivers.Route{
		{Prefix: p("198.18.0.0/31"), Protocol: "bgp", Nexthops: []drivers.Nexthop{{Via: a("198.18.0.2"), Dev: "eth1"}}},
		{Prefix: p("198.18.0.2/31"), Protocol: "connected", Nexthops: []drivers.Nexthop{{Dev: "eth1"}}},
		{Prefix: p("198.19.0.0/24"), Protocol: "bgp", Nexthops: []drivers.Nexthop{{Via: a("198.18.0.0"), Dev: "eth1"}, {Via: a("198.18.0.2"), Dev: "eth2"}}},
		{Prefix: p("198.19.1.0/24"), Protocol: "bgp", Nexthops: []drivers.Nexthop{{Via: a("198.18.0.0"), Dev: "eth1"}}},
		{VRF: "red", Prefix: p("198.18.0.6/31"), Protocol: "connected", Nexthops: []drivers.Nexthop{{Dev: "eth2"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("routes:\n got %+v\nwant %+v", got, want)
	}
	if r, err := parseRoutes("{}"); err != nil || len(r) != 0 {
		t.Errorf("no routes: %v %v", r, err)
	}
	for _, bad := range []string{"", "% Unknown command", `{"x":[{"prefix":"nope","selected":true}]}`, `{"198.19.0.0/16":[{"selected":true,"nexthops":[{"ip":"x","active":true}]}]}`, `{"a":{}}`, `{} {`} {
		if _, err := parseRoutes(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestBGPConfig(t *testing.T) {
	got := parseBGPConfig(runningConfig)
	want := []bgpInstance{
		{Header: "router bgp 65101", MaxPaths: map[string]string{"ipv4 unicast": "64", "ipv6 unicast": "8"}, AFs: map[string]bool{"ipv4 unicast": true, "ipv6 unicast": true}},
		{Header: "router bgp 65101 vrf red", MaxPaths: map[string]string{"ipv4 unicast": "16"}, AFs: map[string]bool{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("bgp config:\n got %+v\nwant %+v", got, want)
	}
	d := &Driver{name: "leaf0"}
	p := &fplan{drop: map[string]bool{}}
	if err := d.maxPathsPlan(p, runningConfig, 256, 4); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, it := range p.vty {
		keys = append(keys, it.change.String())
	}
	wantKeys := []string{
		"~ frr router bgp 65101 address-family ipv6 unicast maximum-paths: 8 -> 64",
		"~ frr router bgp 65101 vrf red address-family ipv4 unicast maximum-paths: 16 -> 64",
		"+ frr router bgp 65101 vrf red address-family ipv6 unicast maximum-paths = 64",
	}
	if !reflect.DeepEqual(keys, wantKeys) || len(p.checks) != 4 || !p.checks[0].OK || p.checks[3].Evidence != "no maximum-paths line (default 256)" {
		t.Errorf("plan %v\nchecks %+v", keys, p.checks)
	}
	if l := p.vty[0].lines; !reflect.DeepEqual(l, []string{"router bgp 65101", "address-family ipv6 unicast", "maximum-paths 64", "exit-address-family", "exit"}) {
		t.Errorf("lines %q", l)
	}
	// maximum-paths equal to the ECMP maximum is not shown by FRR.
	p = &fplan{}
	if err := d.maxPathsPlan(p, "router bgp 1\nexit\n", 64, 0); err != nil || len(p.vty) != 0 || len(p.checks) != 2 {
		t.Errorf("default 64: %+v %v", p, err)
	}
	// A fabric wider than 64 paths: maximum-paths is its width; wider
	// than zebra's ECMP maximum: refused, naming device and feature.
	p = &fplan{}
	if err := d.maxPathsPlan(p, "router bgp 1\nexit\n", 256, 100); err != nil || len(p.vty) != 2 || p.vty[0].change.New != "100" {
		t.Errorf("width 100: %+v %v", p.vty, err)
	}
	err := d.maxPathsPlan(&fplan{}, "router bgp 1\nexit\n", 16, 32)
	var ce *drivers.CapabilityError
	if !errors.As(err, &ce) || ce.Device != "leaf0" || ce.Feature != drivers.FeatECMPHash || !strings.Contains(ce.Reason, "32 equal-cost uplinks, but zebra installs at most 16") {
		t.Errorf("width 32 over zebra's 16: %v", err)
	}
	p = &fplan{drop: map[string]bool{}}
	d.forwardingPlan(p, runningConfig)
	if len(p.vty) != 1 || !p.drop["sysctl net.ipv6.conf.all.forwarding"] {
		t.Errorf("forwarding plan %+v", p)
	}
}

func TestZebraAndVRF(t *testing.T) {
	if m, netns := parseZebra(showZebra); m != 256 || !netns {
		t.Errorf("show zebra: %d %v", m, netns)
	}
	if _, netns := parseZebra(" VRF                            l3mdev Available\n"); netns {
		t.Errorf("l3mdev taken for netns")
	}
	v := parseShowVRF("netns-based vrfs\nvrf red id 1 netns /run/netns/red\nvrf blue id 2 netns /run/netns/blue\n")
	if len(v) != 2 || v["red"].Netns != "/run/netns/red" || v["red"].ID != "1" {
		t.Errorf("show vrf: %+v", v)
	}
	if n := parseNetnsList("red (id: 4)\nblue\n\n"); len(n) != 2 || !n["red"] || !n["blue"] {
		t.Errorf("netns list %v", n)
	}
	if v := parseVersion("FRRouting 8.4.4 (leaf0) on Linux(6.18.44-fc-v669).\nCopyright 1996-2005\n"); v != "FRRouting 8.4.4" {
		t.Errorf("version %q", v)
	}
}

func FuzzNeighbors(f *testing.F) {
	f.Add(neighborsJSON)
	f.Add(`{"default":{"a":{"remoteAs":"1.","bgpState":"x"}}}`)
	f.Fuzz(func(t *testing.T, in string) {
		fuzzbound.Default(t, func() {
			ss, err := parseBGPNeighbors(in)
			if err != nil {
				return
			}
			for _, s := range ss {
				_ = sessionInterface(s.Peer, nil)
			}
		})
	})
}

func FuzzRoutes(f *testing.F) {
	f.Add(routesJSON)
	f.Fuzz(func(t *testing.T, in string) {
		fuzzbound.Default(t, func() {
			_, _ = parseRoutes(in)
		})
	})
}

func FuzzTextReplies(f *testing.F) {
	f.Add(runningConfig)
	f.Add(showZebra)
	f.Add("vrf red id 1 netns /run/netns/red\n")
	f.Fuzz(func(t *testing.T, in string) {
		fuzzbound.Default(t, func() {
			d := &Driver{name: "x"}
			_ = d.maxPathsPlan(&fplan{drop: map[string]bool{}}, in, 64, 4)
			d.forwardingPlan(&fplan{drop: map[string]bool{}}, in)
			_, _ = parseZebra(in)
			_ = parseShowVRF(in)
			_ = parseNetnsList(in)
			_ = parseVersion(in)
		})
	})
}

func TestDaemonsFile(t *testing.T) {
	in := "# comment\nbgpd=yes\nospfd=no\nisisd=\"yes\"\nbfdd=no\nvtysh_enable=yes\nzebra_options=\"  -A 127.0.0.1\"\nfrr_profile=\"datacenter\"\n  ospf6d = yes\n"
	got := parseDaemonsFile(in)
	want := []string{"bgpd", "isisd", "ospf6d", "staticd", "zebra"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseDaemonsFile: %v, want %v", got, want)
	}
	// vtysh's show daemons (FRR 8.4).
	if got := parseDaemons(" zebra bgpd staticd\n"); !reflect.DeepEqual(got, []string{"bgpd", "staticd", "zebra"}) {
		t.Errorf("parseDaemons: %v", got)
	}
}

// A kernel blackhole route FRR selects over BGP's (FRR 8.4's JSON).
func TestBlackholeRoute(t *testing.T) {
	in := `{"198.18.0.12/31":[{"prefix":"198.18.0.12/31","protocol":"kernel","vrfName":"default","selected":true,"installed":true,
"nexthops":[{"flags":3,"fib":true,"unreachable":true,"blackhole":true,"active":true}]},
{"prefix":"198.18.0.12/31","protocol":"bgp","vrfName":"default","nexthops":[{"ip":"198.18.0.31","interfaceName":"eth4","active":true}]}]}`
	rs, err := parseRoutes(in)
	if err != nil || len(rs) != 1 || rs[0].Drop != "blackhole" || len(rs[0].Nexthops) != 0 || rs[0].Protocol != "kernel" {
		t.Errorf("blackhole route: %+v %v", rs, err)
	}
}
