package sonic

import (
	"net/netip"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/drivers/sonic/testdouble"
	"github.com/fabricbench/fabricbench/internal/fuzzbound"
	"github.com/scrapli/scrapligo/driver/options"
	"github.com/scrapli/scrapligo/platform"
	"github.com/scrapli/scrapligo/transport"
)

func TestParseDict(t *testing.T) {
	for _, c := range []struct {
		in   string
		want map[string]string
	}{
		{`{}`, map[string]string{}},
		{"  {}\n", map[string]string{}},
		{`{'ecmp_hash@': 'SRC_IP,DST_IP', 'lag_hash@': 'DST_IP'}`, map[string]string{"ecmp_hash@": "SRC_IP,DST_IP", "lag_hash@": "DST_IP"}},
		{`{'desc': "it's a link", 'q': '"x"'}`, map[string]string{"desc": "it's a link", "q": `"x"`}},
		{`{'a': 'it\'s', 'b': "say \"hi\""}`, map[string]string{"a": "it's", "b": `say "hi"`}},
		{`{'p': 'C:\\dir', 'n': 'a\nb\tc\r'}`, map[string]string{"p": `C:\dir`, "n": "a\nb\tc\r"}},
		{`{'x': '\x41\u00e9\U0001f600\0\101'}`, map[string]string{"x": "Aé😀\x00A"}},
		{`{'re': '\d+'}`, map[string]string{"re": `\d+`}},
		{`{'k': 'é ü'}`, map[string]string{"k": "é ü"}},
		{`{ 'a' : 'b' , }`, map[string]string{"a": "b"}},
		{"{'a': 'b',\n 'c': ''}", map[string]string{"a": "b", "c": ""}},
		{`{'a': '1', 'a': '2'}`, map[string]string{"a": "2"}},
	} {
		got, err := parseDict(c.in)
		if err != nil {
			t.Errorf("parseDict(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("parseDict(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseDictErrors(t *testing.T) {
	for _, c := range []struct{ in, msg string }{
		{``, "expected '{' at end of reply"},
		{`Could not connect to Redis`, `offset 0: expected '{' near "Could not connect to..."`},
		{`{`, "expected a quoted string at end of reply"},
		{`{'a': 'b'`, "expected ',' or '}' at end of reply"},
		{`{'a' 'b'}`, "expected ':' after key"},
		{`{'a': None}`, `expected a quoted string near "None}"`},
		{`{'a': 1}`, "expected a quoted string"},
		{`{'a': 'b}`, "offset 6: unterminated string"},
		{`{'ecmp_hash@': 'SRC_IP, 'lag_hash@': 'DST_IP'}`, "expected ',' or '}'"},
		{`{'a': 'b'} x`, "unexpected text after '}'"},
		{`{'a': 'b'}}`, "unexpected text after '}'"},
		{`{'a': '\x4'}`, `bad \x escape`},
		{`{'a': '\x`, `truncated \x escape`},
		{`{'a': '\U00110000'}`, `\U escape out of range`},
		{`{'a': '\`, "backslash at end of reply"},
		{"{'a': 'b\nc'}", "newline inside a string"},
		{`{b'a': b'b'}`, "expected a quoted string"},
		{`['a', 'b']`, "expected '{'"},
	} {
		_, err := parseDict(c.in)
		if err == nil {
			t.Errorf("parseDict(%q): no error", c.in)
		} else if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("parseDict(%q): error %q, want %q", c.in, err, c.msg)
		}
	}
}

func TestPyReprRoundTrip(t *testing.T) {
	m := map[string]string{
		"plain": "SRC_IP,DST_IP", "quote'": `both ' and "`, "dq": `"`, "ctl": "\x00\x1f\x7f\u0085",
		"uni": "é😀\u2028", "back\\slash": `\x41`, "": "",
	}
	got, err := parseDict(testdouble.PyDict(m))
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip of %s: %q, %v", testdouble.PyDict(m), got, err)
	}
}

// FuzzParseDict: any input parses or fails with an error, never panics;
// what parses survives a round trip through Python's repr.
func FuzzParseDict(f *testing.F) {
	for _, s := range []string{
		`{}`, `{'a': 'b'}`, `{'a': "it's"}`, `{'x': '\x41\u00e9\U0001f600\0'}`, `{'a': 'b',}`,
		`{'ecmp_hash@': 'SRC_IP, 'lag_hash@': 'DST_IP'}`, `{'a': '\`, `{'a': '\U0011ffff'}`, "{'a':\n'b'}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzbound.Default(t, func() {
			m, err := parseDict(s)
			if err != nil {
				if m != nil {
					t.Fatalf("error %v with a result", err)
				}
				return
			}
			for k, v := range m {
				if !utf8.ValidString(k) || !utf8.ValidString(v) {
					return // raw invalid bytes have no repr to compare with
				}
			}
			again, err := parseDict(testdouble.PyDict(m))
			if err != nil {
				t.Fatalf("repr %s of %q does not parse: %v", testdouble.PyDict(m), m, err)
			}
			if !reflect.DeepEqual(again, m) {
				t.Fatalf("round trip: %q -> %s -> %q", m, testdouble.PyDict(m), again)
			}
		})
	})
}

// FuzzDictRoundTrip: every str key and value Python can print comes back.
func FuzzDictRoundTrip(f *testing.F) {
	f.Add("ecmp_hash@", "SRC_IP,DST_IP")
	f.Add("it's", `say "hi"\n`)
	f.Add("\x00", "\u2028\U0001f600")
	f.Fuzz(func(t *testing.T, k, v string) {
		fuzzbound.Default(t, func() {
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				return
			}
			in := map[string]string{k: v}
			got, err := parseDict(testdouble.PyDict(in))
			if err != nil || !reflect.DeepEqual(got, in) {
				t.Fatalf("%s: %q, %v", testdouble.PyDict(in), got, err)
			}
		})
	})
}

func TestParseKeys(t *testing.T) {
	got, err := parseKeys("PORT|Ethernet12\nPORT|Ethernet4\n\nPORT|Ethernet0\nPORT|Ethernet4\n", "PORT|")
	if err != nil || !reflect.DeepEqual(got, []string{"Ethernet0", "Ethernet4", "Ethernet12"}) {
		t.Errorf("keys %q, %v", got, err)
	}
	if got, err := parseKeys("", "PORT|"); err != nil || len(got) != 0 {
		t.Errorf("empty: %q, %v", got, err)
	}
	if _, err := parseKeys("PORT|Ethernet0\n(error) NOAUTH Authentication required.", "PORT|"); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("bad line: %v", err)
	}
	if _, err := parseKeys("PORT|", "PORT|"); err == nil {
		t.Error("empty key name accepted")
	}
}

func TestNaturalLess(t *testing.T) {
	in := []string{"Ethernet12", "PortChannel2", "Ethernet4", "Ethernet0", "Ethernet120", "Ethernet08", "Ethernet8", "Eth", "PortChannel10"}
	sortNatural(in)
	want := []string{"Eth", "Ethernet0", "Ethernet4", "Ethernet08", "Ethernet8", "Ethernet12", "Ethernet120", "PortChannel2", "PortChannel10"}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("sorted %q, want %q", in, want)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"ecmp_hash@":     "ecmp_hash@",
		"SRC_IP,DST_IP":  "SRC_IP,DST_IP",
		"fcbb:bbbb:1::":  "fcbb:bbbb:1::",
		"":               "''",
		"a b":            "'a b'",
		"x;reboot":       "'x;reboot'",
		"it's":           `'it'\''s'`,
		"$(id)":          "'$(id)'",
		"SWITCH|GLOBAL":  "'SWITCH|GLOBAL'",
		"Ethernet0.10":   "Ethernet0.10",
		"AZURE_LOSSLESS": "AZURE_LOSSLESS",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
	if got := dbQuote("VRF|*"); got != "'VRF|*'" {
		t.Errorf("dbQuote = %s", got)
	}
}

func TestQueueRanges(t *testing.T) {
	for _, c := range []struct {
		in   []int
		want []string
	}{
		{[]int{3, 4}, []string{"3-4"}},
		{[]int{3}, []string{"3"}},
		{[]int{0, 1, 3, 5, 6, 7}, []string{"0-1", "3", "5-7"}},
		{nil, nil},
	} {
		if got := queueRanges(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("queueRanges(%v) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := ecnQueues(&drivers.ECN{}); !reflect.DeepEqual(got, []int{3, 4}) {
		t.Errorf("default queues %v", got)
	}
	if got := ecnQueues(&drivers.ECN{Queues: []int{4, 3, 4}}); !reflect.DeepEqual(got, []int{3, 4}) {
		t.Errorf("queues %v", got)
	}
}

func TestCompare(t *testing.T) {
	for _, c := range []struct {
		k          cmpKind
		have, want string
		eq         bool
	}{
		{cmpSet, "DST_IP,SRC_IP", "SRC_IP,DST_IP", true},
		{cmpSet, "src_ip, dst_ip", "SRC_IP,DST_IP", true},
		{cmpSet, "SRC_IP", "SRC_IP,DST_IP", false},
		{cmpNum, "048", "48", true},
		{cmpNum, "48", "46", false},
		{cmpNum, "dynamic", "6", false},
		{cmpAddr, "FCBB:BBBB:1::", "fcbb:bbbb:1::", true},
		{cmpAddr, "fcbb:bbbb:1:0::", "fcbb:bbbb:1::", true},
		{cmpAddr, "fcbb:bbbb:2::", "fcbb:bbbb:1::", false},
		{cmpRef, "[WRED_PROFILE|AZURE_LOSSLESS]", "AZURE_LOSSLESS", true},
		{cmpRef, "AZURE_LOSSY", "AZURE_LOSSLESS", false},
		{cmpFold, "TRIM", "trim", true},
		{cmpExact, "Vrf-Red", "Vrf-red", false},
	} {
		if got := c.k.equal(c.have, c.want); got != c.eq {
			t.Errorf("kind %d: equal(%q, %q) = %v", c.k, c.have, c.want, got)
		}
	}
}

func TestParseShowVersion(t *testing.T) {
	v, err := parseShowVersion("\nSONiC Software Version: SONiC.master.0-dirty\nPlatform: x86_64-kvm_x86_64-r0\nHwSKU: Force10-S6000\nASIC: vs\n")
	if err != nil || v != (version{Software: "SONiC.master.0-dirty", Platform: "x86_64-kvm_x86_64-r0", HwSKU: "Force10-S6000", ASIC: "vs"}) {
		t.Errorf("%+v, %v", v, err)
	}
	if _, err := parseShowVersion("Platform: x\n"); err == nil {
		t.Error("no software version accepted")
	}
}

func TestParseInterfacesStatus(t *testing.T) {
	out := strings.Join([]string{
		"  Interface    Lanes    Oper    Admin            Type",
		"-----------  -------  ------  -------  --------------",
		"  Ethernet0  0,1,2,3      up       up  QSFP28 or later",
		" Ethernet64      N/A    down     down",
		"",
	}, "\n")
	got, err := parseInterfacesStatus(out)
	want := []drivers.LinkState{{Name: "Ethernet0", Up: true, Admin: true}, {Name: "Ethernet64"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%+v, %v", got, err)
	}
	for in, msg := range map[string]string{
		"No interfaces": "no table header",
		"Interface  Oper\n---------  ----\nEthernet0  up":                        "lacks an Interface, Oper or Admin column",
		"Interface  Oper  Admin\n---------  ----  -----\nEthernet0  sort  up":    `Oper: "sort" is neither up nor down`,
		"Interface  Oper  Admin\n---------  ----  -----\n             up     up": "no interface name",
	} {
		if _, err := parseInterfacesStatus(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want %q", in, err, msg)
		}
	}
}

func TestParseInterfaceAddrs(t *testing.T) {
	got, err := parseInterfaceAddrs("INTERFACE|Ethernet0|fc00::2/126\nINTERFACE|Ethernet0|10.0.0.1/31\nVLAN_SUB_INTERFACE|Ethernet0.10|10.9.0.1/24\n")
	want := map[string][]netip.Prefix{
		"Ethernet0":    {pfx("10.0.0.1/31"), pfx("fc00::2/126")},
		"Ethernet0.10": {pfx("10.9.0.1/24")},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%v, %v", got, err)
	}
	for _, bad := range []string{"INTERFACE|Ethernet0", "INTERFACE|Ethernet0|10.0.0.300/31", "PORT|Ethernet0|x"} {
		if _, err := parseInterfaceAddrs(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Without "vrf all", FRR prints the address families at the top.
func TestParseBGPSummaryDefaultVRF(t *testing.T) {
	got, err := parseBGPSummary(`{"ipv4Unicast":{"as":65101,"vrfName":"default","peers":{
		"10.0.0.0":{"remoteAs":65000,"state":"Established","pfxRcd":6},
		"10.0.0.2":{"remoteAs":"external","state":"Connect"}}},
		"ipv6Unicast":{"as":65101,"peers":{"fc00::1":{"remoteAs":65000,"localAs":4200000000,"state":"Established","pfxRcd":2}}}}`)
	want := []drivers.BGPSession{
		{Peer: "10.0.0.0", LocalAS: 65101, RemoteAS: 65000, State: "Established", PfxReceived: 6},
		{Peer: "10.0.0.2", LocalAS: 65101, State: "Connect"},
		{Peer: "fc00::1", LocalAS: 4200000000, RemoteAS: 65000, State: "Established", PfxReceived: 2},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%+v, %v", got, err)
	}
	if got, err := parseBGPSummary("{}"); err != nil || len(got) != 0 {
		t.Errorf("no BGP: %v, %v", got, err)
	}
	for in, msg := range map[string]string{
		`% BGP instance not found`:                                      "not a JSON object",
		`{"default": [1]}`:                                              `VRF "default"`,
		`{"ipv4Unicast":{"peers":{"10.0.0.0":{"pfxRcd":-1}}}}`:          "not a non-negative integer",
		`{"ipv4Unicast":{"peers":{"10.0.0.0":{"remoteAs":1e99}}}}`:      "not a non-negative integer",
		`{"ipv4Unicast":{"peers":{"1.1.1.1":{"remoteAs":5000000000}}}}`: "out of range",
	} {
		if _, err := parseBGPSummary(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: error %v, want %q", in, err, msg)
		}
	}
}

// Without "vrf all", FRR maps prefixes to route lists at the top.
func TestParseRoutesDefaultVRF(t *testing.T) {
	got, err := parseRoutes(`{
	  "10.1.0.2/32":[
	    {"prefix":"10.1.0.2/32","protocol":"static","selected":false,"nexthops":[{"ip":"10.9.9.9","interfaceName":"Ethernet8","active":true}]},
	    {"prefix":"10.1.0.2/32","protocol":"bgp","selected":true,"vrfName":"default","nexthops":[
	      {"ip":"10.0.0.0","interfaceName":"Ethernet0","active":true},
	      {"ip":"10.0.0.2","interfaceName":"Ethernet4","active":true},
	      {"ip":"10.0.0.4","interfaceName":"Ethernet8"}]}],
	  "0.0.0.0/0":[{"protocol":"kernel","selected":true,"nexthops":[{"ip":"192.0.2.1","interfaceName":"eth0","active":true}]}]}`)
	want := []drivers.Route{
		{Prefix: pfx("0.0.0.0/0"), Protocol: "kernel", Nexthops: []drivers.Nexthop{{Via: netip.MustParseAddr("192.0.2.1"), Dev: "eth0"}}},
		{Prefix: pfx("10.1.0.2/32"), Protocol: "bgp", Nexthops: []drivers.Nexthop{
			{Via: netip.MustParseAddr("10.0.0.0"), Dev: "Ethernet0"},
			{Via: netip.MustParseAddr("10.0.0.2"), Dev: "Ethernet4"},
		}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%+v, %v", got, err)
	}
	for in, msg := range map[string]string{
		`[]`:                               "not a JSON object",
		`{"10.0.0.0/33":[]}`:               "bad prefix",
		`{"default":{"x":[]}}`:             "bad prefix",
		`{"10.0.0.0/8":7}`:                 "neither a route list nor a VRF object",
		`{"10.0.0.0/8":[{"nexthops":{}}]}`: "10.0.0.0/8",
		`{"10.0.0.0/8":[{"selected":true,"nexthops":[{"ip":"x","active":true}]}]}`: "next hop",
	} {
		if _, err := parseRoutes(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: error %v, want %q", in, err, msg)
		}
	}
}

// The prompt pattern of platform.yaml finds SONiC's bash prompts and
// nothing in the outputs the driver reads.
func TestPlatformPrompt(t *testing.T) {
	p, err := platform.NewPlatform(platformDefinition, "leaf1",
		options.WithTransportType(transport.FileTransport), options.WithFileTransportFile("testdata/idle.txt"))
	if err != nil {
		t.Fatal(err)
	}
	nd, err := p.GetNetworkDriver()
	if err != nil {
		t.Fatal(err)
	}
	if nd.DefaultDesiredPriv != "linux" || len(nd.PrivilegeLevels) != 1 {
		t.Fatalf("privilege levels %v, default %q", nd.PrivilegeLevels, nd.DefaultDesiredPriv)
	}
	re := regexp.MustCompile(nd.PrivilegeLevels["linux"].Pattern)
	for _, s := range []string{"admin@sonic:~$ ", "admin@leaf1:~$", "root@sonic:/home/admin# ", "admin@str2-7050cx3-acs-01:/var/log$ "} {
		if !re.MatchString("output\n" + s) {
			t.Errorf("prompt %q not matched", s)
		}
	}
	for _, s := range []string{
		"{'ecmp_hash@': 'SRC_IP'}", "PORT|Ethernet0", "Built by: builder@build-host-07", "# comment",
		"SRV6_MY_SIDS|loc1|fcbb:bbbb:1::/48", `"peers":{"10.0.0.0":{`, "64 bytes from 10.0.0.0: icmp_seq=1 ttl=64",
		"admin@sonic:~$ show version",
	} {
		if re.MatchString(s) {
			t.Errorf("output line %q taken for a prompt", s)
		}
	}
	fails := strings.Join(nd.FailedWhenContains, "\n")
	for _, s := range []string{"Error:", "Usage:", "command not found"} {
		if !strings.Contains(fails, s) {
			t.Errorf("failed-when-contains lacks %q", s)
		}
	}
}
