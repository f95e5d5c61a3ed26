package inventory

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/internal/fuzzbound"
)

func loadHW(t *testing.T, path string, platforms ...string) *Hardware {
	t.Helper()
	hw, err := LoadHardware(path, platforms...)
	if err != nil {
		t.Fatalf("LoadHardware(%s): %v", path, err)
	}
	return hw
}

func hwFabric(t *testing.T, hw *Hardware) *Fabric {
	t.Helper()
	f, err := hw.Fabric()
	if err != nil {
		t.Fatalf("Fabric(): %v", err)
	}
	if err := f.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	return f
}

// portsOf describes a node's ports in order: "name>peer@Gbps" with a ^
// for uplinks.
func portsOf(f *Fabric, name string) []string {
	id, ok := f.NodeByName(name)
	if !ok {
		return nil
	}
	var out []string
	for i, p := range f.Nodes[id].Ports {
		pt := f.Ports[p]
		if pt.Index != i || pt.Node != id {
			return []string{"bad index or node"}
		}
		s := pt.Name + ">" + f.Nodes[f.PeerNode(p)].Name + "@" + itoa(f.PortRate(p)/1e9)
		if pt.Uplink {
			s += "^"
		}
		out = append(out, s)
	}
	return out
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func roleCounts(f *Fabric) map[Role]int {
	c := map[Role]int{}
	for i := range f.Nodes {
		c[f.Nodes[i].Role]++
	}
	return c
}

func TestHardwareExample(t *testing.T) {
	path := filepath.Join("..", "examples", "inventory", "lab-a.yaml")
	hw := loadHW(t, path)
	abs, _ := filepath.Abs(filepath.Join("..", "examples", "inventory"))
	if hw.Name != "lab-a" || hw.Dir != abs || hw.KnownHosts != filepath.Join(abs, "known_hosts") {
		t.Errorf("name %q dir %q known_hosts %q", hw.Name, hw.Dir, hw.KnownHosts)
	}
	if hw.DefaultSpeed != "400G" || hw.DefaultRateBps != 400e9 || hw.Timeout != 45*time.Second {
		t.Errorf("default speed %q/%d timeout %v", hw.DefaultSpeed, hw.DefaultRateBps, hw.Timeout)
	}
	wantCreds := map[string]Credential{
		"sonic": {Name: "sonic", User: "admin", Password: "env:FB_SONIC_PASSWORD"},
		"frr":   {Name: "frr", User: "fabricbench", Key: "file:~/.ssh/fabricbench_ed25519", Passphrase: "env:FB_KEY_PASSPHRASE"},
		"hosts": {Name: "hosts", User: "root", SSHAgent: true},
	}
	if len(hw.Credentials) != len(wantCreds) {
		t.Errorf("%d credential sets, want %d", len(hw.Credentials), len(wantCreds))
	}
	for name, want := range wantCreds {
		if got := hw.Credentials[name]; got == nil || *got != want {
			t.Errorf("credentials %s = %+v, want %+v", name, got, want)
		}
	}
	if len(hw.Devices) != 8 || len(hw.Links) != 12 {
		t.Fatalf("%d devices, %d links", len(hw.Devices), len(hw.Links))
	}
	s1 := hw.Device("spine1")
	if s1 == nil || s1.Platform != "frr" || s1.Role != DeviceSpine || s1.MgmtHost != "198.18.200.22" || s1.MgmtPort != 2222 ||
		s1.ASN != 65000 || s1.Loopback != netip.MustParsePrefix("198.18.201.22/32") || s1.Timeout != 2*time.Minute || s1.DeclaresPorts || s1.Pod != -1 {
		t.Errorf("spine1 = %+v", s1)
	}
	h3 := hw.Device("host3")
	if h3 == nil || h3.MgmtHost != "host3.lab-a.example.net" || h3.MgmtPort != 0 || !h3.DeclaresNICs ||
		!reflect.DeepEqual(h3.NICs, []NIC{
			{Name: "eth1", Rail: 0, Address: netip.MustParsePrefix("198.18.202.7/31")},
			{Name: "eth2", Rail: 1, Address: netip.MustParsePrefix("198.18.203.7/31")},
		}) {
		t.Errorf("host3 = %+v", h3)
	}
	if l := hw.Device("leaf0"); l == nil || len(l.Ports) != 6 || l.Ports[4] != (DevicePort{Name: "Ethernet32", Speed: "800G", RateBps: 800e9}) {
		t.Errorf("leaf0 = %+v", l)
	}
	if hw.Device("nope") != nil {
		t.Error("Device(nope) found something")
	}
	if c := hw.Links[10]; c.A != (Endpoint{"leaf0", "Ethernet40"}) || c.B != (Endpoint{"spine1", "swp1"}) || c.Speed != "800G" || c.RateBps != 800e9 {
		t.Errorf("links[10] = %+v", c)
	}
	if c := hw.Links[8]; c.Speed != "" || c.RateBps != 800e9 {
		t.Errorf("links[8] (speed from the ports) = %+v", c)
	}
	if c := hw.Links[0]; c.RateBps != 400e9 || c.A.String() != "host0:eth1" {
		t.Errorf("links[0] (default speed) = %+v", c)
	}
	if !reflect.DeepEqual(hw.Planes, []Plane{{Name: "spines", Switches: []string{"spine0", "spine1"}}}) {
		t.Errorf("planes = %+v", hw.Planes)
	}
	if !reflect.DeepEqual(hw.Rails, []Rail{{0, []string{"leaf0"}}, {1, []string{"leaf1"}}}) {
		t.Errorf("rails = %+v", hw.Rails)
	}

	f := hwFabric(t, hw)
	if f.Name != "lab-a" || f.Tiers != 2 || f.HostsPerPod != 0 || len(f.Links) != 12 {
		t.Errorf("fabric %s: tiers %d, hosts per pod %d, %d links", f.Name, f.Tiers, f.HostsPerPod, len(f.Links))
	}
	if c := roleCounts(f); c[RoleHost] != 4 || c[RoleLeaf] != 2 || c[RoleSpine] != 2 || c[RoleCore] != 0 {
		t.Errorf("roles %v", c)
	}
	for h, id := range f.Hosts {
		if id != h || f.Nodes[id].Name != "host"+itoa(int64(h)) || f.Nodes[id].Tier != -1 {
			t.Errorf("Hosts[%d] = node %d %s", h, id, f.Nodes[id].Name)
		}
	}
	for _, n := range f.Nodes {
		wantTier := map[Role]int{RoleHost: -1, RoleLeaf: 0, RoleSpine: 1}[n.Role]
		if n.Tier != wantTier || n.Pod != -1 {
			t.Errorf("%s: role %v tier %d pod %d", n.Name, n.Role, n.Tier, n.Pod)
		}
	}
	want := map[string][]string{
		"host0":  {"eth1>leaf0@400^", "eth2>leaf1@400^"},
		"leaf0":  {"Ethernet0>host0@400", "Ethernet8>host1@400", "Ethernet16>host2@400", "Ethernet24>host3@400", "Ethernet32>spine0@800^", "Ethernet40>spine1@800^"},
		"spine0": {"Ethernet0>leaf0@800", "Ethernet8>leaf1@800"},
		"spine1": {"swp1>leaf0@800", "swp2>leaf1@800"},
	}
	for name, w := range want {
		if got := portsOf(f, name); !reflect.DeepEqual(got, w) {
			t.Errorf("%s ports:\n got %v\nwant %v", name, got, w)
		}
	}
	if f.HostLeaf(2) != mustNode(t, f, "leaf0") {
		t.Errorf("host2's first leaf is %d", f.HostLeaf(2))
	}
}

func mustNode(t *testing.T, f *Fabric, name string) int {
	t.Helper()
	id, ok := f.NodeByName(name)
	if !ok {
		t.Fatalf("no node %s", name)
	}
	return id
}

func TestHardwareThreeTier(t *testing.T) {
	hw := loadHW(t, filepath.Join("testdata", "hw-3tier.yaml"))
	if hw.KnownHosts != "/etc/fabricbench/known_hosts" {
		t.Errorf("known_hosts %q", hw.KnownHosts)
	}
	// Merge keys fill in the shared fields.
	if d := hw.Device("leaf3"); d == nil || d.Platform != "sonic" || d.Role != DeviceLeaf || d.Credentials != "switches" || d.Pod != 1 {
		t.Errorf("leaf3 = %+v", d)
	}
	if d := hw.Device("spine0"); d == nil || d.Platform != "frr" || d.MgmtHost != "fd00::20" || d.MgmtPort != 2222 {
		t.Errorf("spine0 = %+v", d)
	}
	if d := hw.Device("spine1"); d == nil || d.MgmtHost != "fd00::21" || d.MgmtPort != 0 {
		t.Errorf("spine1 = %+v", d)
	}
	f := hwFabric(t, hw)
	if f.Tiers != 3 || f.HostsPerPod != 2 || len(f.Links) != 16 {
		t.Errorf("tiers %d, hosts per pod %d, %d links", f.Tiers, f.HostsPerPod, len(f.Links))
	}
	if c := roleCounts(f); c[RoleHost] != 4 || c[RoleLeaf] != 4 || c[RoleSpine] != 4 || c[RoleCore] != 2 {
		t.Errorf("roles %v", c)
	}
	var names []string
	for i := range f.Nodes {
		names = append(names, f.Nodes[i].Name)
	}
	wantNames := []string{"host1", "host2", "host3", "host10", "leaf0", "leaf1", "leaf2", "leaf3", "spine0", "spine1", "spine2", "spine3", "ss0", "ss1"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("node order %v, want %v", names, wantNames)
	}
	// Hosts take their leaf's pod; super-spines have none.
	wantPod := map[string]int{"host1": 0, "host2": 0, "host3": 1, "host10": 1, "leaf2": 1, "spine1": 0, "ss0": -1}
	for name, pod := range wantPod {
		if n := f.Nodes[mustNode(t, f, name)]; n.Pod != pod {
			t.Errorf("%s pod %d, want %d", name, n.Pod, pod)
		}
	}
	ss1 := f.Nodes[mustNode(t, f, "ss1")]
	if ss1.Role != RoleCore || ss1.Tier != 2 {
		t.Errorf("ss1 role %v tier %d", ss1.Role, ss1.Tier)
	}
	want := map[string][]string{
		// Undeclared ports in name order: Ethernet4 before Ethernet8.
		"leaf0":  {"Ethernet0>host1@100", "Ethernet4>spine1@100^", "Ethernet8>spine0@100^"},
		"spine0": {"Ethernet0>leaf0@100", "Ethernet4>leaf1@100", "Ethernet8>ss0@400^"},
		"ss1":    {"Ethernet0>spine1@400", "Ethernet4>spine3@400"},
		"host10": {"eth0>leaf3@100^"},
	}
	for name, w := range want {
		if got := portsOf(f, name); !reflect.DeepEqual(got, w) {
			t.Errorf("%s ports:\n got %v\nwant %v", name, got, w)
		}
	}
	if len(hw.Planes) != 2 || hw.Planes[1].Name != "plane1" || !reflect.DeepEqual(hw.Planes[1].Switches, []string{"spine1", "spine3", "ss1"}) {
		t.Errorf("planes %+v", hw.Planes)
	}
}

// hwDoc joins lines into a document.
func hwDoc(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// hwHead is the first lines of most test documents: lines 1-5.
var hwHead = []string{
	"name: lab",
	"known_hosts: kh",
	"credentials:",
	"  sw: {user: admin, password: env:PW}",
	"devices:",
}

// Lines 6-8: a leaf, a spine and a host.
var hwDevs = []string{
	"  - {name: leaf0, platform: sonic, role: leaf, mgmt: 10.0.0.1, credentials: sw}",
	"  - {name: spine0, platform: sonic, role: spine, mgmt: 10.0.0.2, credentials: sw}",
	"  - {name: host0, platform: linux, role: host, mgmt: 10.0.0.3, credentials: sw}",
}

func withHead(lines ...string) string {
	return hwDoc(append(append([]string(nil), hwHead...), lines...)...)
}

func withDevs(lines ...string) string {
	return withHead(append(append([]string(nil), hwDevs...), lines...)...)
}

func TestHardwareValidMinimal(t *testing.T) {
	src := withDevs("links:", "  - {a: host0:eth0, b: leaf0:Ethernet0, speed: 100G}", "  - {a: leaf0:Ethernet1, b: spine0:Ethernet0, speed: 100G}")
	hw, err := ParseHardware("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	f := hwFabric(t, hw)
	if f.Tiers != 2 || len(f.Nodes) != 3 || f.PortRate(f.Nodes[0].Ports[0]) != 100e9 {
		t.Errorf("fabric %s", f.Summary())
	}
}

func TestHardwareErrors(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string // substrings of the error, each must appear
	}{
		{"unknown top-level key", withDevs("colour: blue"),
			[]string{`t.yaml:9:1: colour: unknown key (want name, known_hosts, default_speed, timeout, credentials, devices, links, planes or rails)`}},
		{"misspelt key", withDevs("defualt_speed: 100G"),
			[]string{`t.yaml:9:1: defualt_speed: unknown key (did you mean "default_speed"?)`}},
		{"unknown device key", withHead("  - {name: leaf0, platform: sonic, role: leaf, mgmt: 10.0.0.1, credentials: sw, vendor: x}"),
			[]string{`t.yaml:6:81: devices[0].vendor: unknown key (want name, platform, role, mgmt, credentials, asn, loopback, srv6_locator, pod, timeout, ports, nics, gnmi, slurm_node or container)`}},
		{"unknown credential key", hwDoc("name: lab", "known_hosts: kh", "credentials:", "  sw: {user: admin, pasword: env:PW}", "devices:", hwDevs[0]),
			[]string{`t.yaml:4:21: credentials.sw.pasword: unknown key (did you mean "password"?)`}},
		{"duplicate key", withDevs("name: other"),
			[]string{`t.yaml:9:1: name: duplicate key (first set on line 1)`}},
		{"missing name and known_hosts", hwDoc(hwHead[2:]...) + hwDoc(hwDevs[0]),
			[]string{`t.yaml:1:1: name: required`, `t.yaml:1:1: known_hosts: required (the known_hosts file`}},
		{"empty name", hwDoc(append([]string{`name: ""`}, hwHead[1:]...)...) + hwDoc(hwDevs[0]),
			[]string{`t.yaml:1:7: name: required`}},
		{"null known_hosts", hwDoc(append([]string{"name: lab", "known_hosts:"}, hwHead[2:]...)...) + hwDoc(hwDevs[0]),
			[]string{`t.yaml:2:1: known_hosts: required`}},
		{"missing devices", hwDoc(hwHead[:4]...),
			[]string{`t.yaml:1:1: devices: required`}},
		{"device missing everything", withHead("  - {asn: 65000}"),
			[]string{
				`t.yaml:6:5: devices[0].name: required`,
				`t.yaml:6:5: devices[0].platform: required (one of frr, linux or sonic)`,
				`t.yaml:6:5: devices[0].role: required (leaf, spine, super-spine or host)`,
				`t.yaml:6:5: devices[0].mgmt: required`,
				`t.yaml:6:5: devices[0].credentials: required`,
			}},
		{"block device missing mgmt", withHead("  - name: leaf0", "    platform: sonic", "    role: leaf", "    credentials: sw"),
			[]string{`t.yaml:6:5: devices[0].mgmt: required`}},
		{"device not a mapping", withHead("  - leaf0"),
			[]string{`t.yaml:6:5: devices[0]: want a mapping, got "leaf0"`}},
		{"duplicate device", withHead(hwDevs[0], "  - {name: leaf0, platform: sonic, role: leaf, mgmt: 10.0.0.9, credentials: sw}"),
			[]string{`t.yaml:7:12: devices[1].name: leaf0 is already used by devices[0]`}},
		{"unknown credential set", withHead("  - {name: leaf0, platform: sonic, role: leaf, mgmt: 10.0.0.1, credentials: switches}"),
			[]string{`t.yaml:6:77: devices[0].credentials: unknown credential set "switches" (have sw)`}},
		{"unknown platform", withHead("  - {name: leaf0, platform: eos, role: leaf, mgmt: 10.0.0.1, credentials: sw}"),
			[]string{`t.yaml:6:29: devices[0].platform: unknown platform "eos" (want frr, linux or sonic)`}},
		{"platform case", withHead("  - {name: leaf0, platform: SONiC, role: leaf, mgmt: 10.0.0.1, credentials: sw}"),
			[]string{`t.yaml:6:29: devices[0].platform: unknown platform "SONiC" (did you mean sonic?)`}},
		{"unknown role", withHead("  - {name: leaf0, platform: sonic, role: tor, mgmt: 10.0.0.1, credentials: sw}"),
			[]string{`t.yaml:6:42: devices[0].role: unknown role "tor" (want leaf, spine, super-spine or host)`}},
		{"literal password", hwDoc("name: lab", "known_hosts: kh", "credentials:", "  sw: {user: admin, password: hunter2}", "devices:", hwDevs[0]),
			[]string{`t.yaml:4:31: credentials.sw.password: password must be a reference (env:NAME or file:PATH), not a literal`}},
		{"numeric password", hwDoc("name: lab", "known_hosts: kh", "credentials:", "  sw: {user: admin, password: 123456}", "devices:", hwDevs[0]),
			[]string{`t.yaml:4:31: credentials.sw.password: password must be a reference (env:NAME or file:PATH), not a literal`}},
		{"empty env ref", hwDoc("name: lab", "known_hosts: kh", "credentials:", "  sw: {user: admin, password: 'env:'}", "devices:", hwDevs[0]),
			[]string{`t.yaml:4:31: credentials.sw.password: password: env: needs a variable name (env:NAME)`}},
		{"bad env name", hwDoc("name: lab", "known_hosts: kh", "credentials:", "  sw: {user: admin, password: 'env:MY PW'}", "devices:", hwDevs[0]),
			[]string{`credentials.sw.password: password: env:NAME needs an environment variable name`}},
		{"literal key path", hwDoc("name: lab", "known_hosts: kh", "credentials:", "  sw: {user: admin, key: /home/me/.ssh/id}", "devices:", hwDevs[0]),
			[]string{`t.yaml:4:26: credentials.sw.key: key must be a reference (env:NAME or file:PATH), not a literal`}},
		{"tilde user", hwDoc("name: lab", "known_hosts: kh", "credentials:", "  sw: {user: admin, key: 'file:~bob/id'}", "devices:", hwDevs[0]),
			[]string{`t.yaml:4:26: credentials.sw.key: key: file:~user/... is not supported`}},
		{"vault ref", hwDoc("name: lab", "known_hosts: kh", "credentials:", "  sw: {user: admin, passphrase: 'vault:x', key: env:K}", "devices:", hwDevs[0]),
			[]string{`t.yaml:4:33: credentials.sw.passphrase: passphrase must be a reference (env:NAME or file:PATH), not a literal`}},
		{"passphrase without key", hwDoc("name: lab", "known_hosts: kh", "credentials:", "  sw: {user: admin, password: env:PW, passphrase: env:PP}", "devices:", hwDevs[0]),
			[]string{`t.yaml:4:51: credentials.sw.passphrase: a passphrase needs a key`}},
		{"no secret at all", hwDoc("name: lab", "known_hosts: kh", "credentials:", "  sw: {user: admin, ssh_agent: false}", "devices:", hwDevs[0]),
			[]string{`t.yaml:4:7: credentials.sw: needs password, key or ssh_agent: true`}},
		{"ssh_agent not a bool", hwDoc("name: lab", "known_hosts: kh", "credentials:", "  sw: {user: admin, ssh_agent: yes}", "devices:", hwDevs[0]),
			[]string{`t.yaml:4:32: credentials.sw.ssh_agent: want true or false, got "yes"`}},
		{"credential without user", hwDoc("name: lab", "known_hosts: kh", "credentials:", "  sw: {password: env:PW}", "devices:", hwDevs[0]),
			[]string{`t.yaml:4:7: credentials.sw.user: required (the SSH user)`}},
		{"bad default speed", withDevs("default_speed: 400"),
			[]string{`t.yaml:9:16: default_speed: "400" is not a speed (want e.g. 400G`}},
		{"bad port speed", withHead("  - {name: leaf0, platform: sonic, role: leaf, mgmt: 10.0.0.1, credentials: sw, ports: [{name: E0, speed: fast}]}"),
			[]string{`t.yaml:6:107: devices[0].ports[0].speed: "fast" is not a speed`}},
		{"zero link speed", withDevs("links:", "  - {a: host0:eth0, b: leaf0:E0, speed: 0G}"),
			[]string{`t.yaml:10:41: links[0].speed: "0G": a speed must be positive`}},
		{"bad mgmt", withHead("  - {name: leaf0, platform: sonic, role: leaf, mgmt: 10.0.0.256, credentials: sw}"),
			[]string{`t.yaml:6:54: devices[0].mgmt: "10.0.0.256": "10.0.0.256" is neither an IP address nor a DNS name`}},
		{"bad mgmt port", withHead("  - {name: leaf0, platform: sonic, role: leaf, mgmt: '[fd00::1]:99999', credentials: sw}"),
			[]string{`t.yaml:6:54: devices[0].mgmt: "[fd00::1]:99999": port "99999" is not a number in 1..65535`}},
		{"ipv4 in brackets", withHead("  - {name: leaf0, platform: sonic, role: leaf, mgmt: '[10.0.0.1]:22', credentials: sw}"),
			[]string{`devices[0].mgmt: "[10.0.0.1]:22": "10.0.0.1" in brackets is not an IPv6 address`}},
		{"duplicate mgmt", withHead(hwDevs[0], "  - {name: leaf1, platform: sonic, role: leaf, mgmt: '10.0.0.1:22', credentials: sw}"),
			[]string{`t.yaml:7:54: devices[1].mgmt: 10.0.0.1:22 is already the management address of leaf0 (devices[0].mgmt)`}},
		{"bad srv6 locator", withHead("  - {name: leaf0, platform: frr, role: leaf, mgmt: 10.0.0.1, credentials: sw, srv6_locator: 10.1.0.0/16}"),
			[]string{`devices[0].srv6_locator: "10.1.0.0/16" is not an IPv6 prefix`}},
		{"srv6 locator not a /48", withHead("  - {name: leaf0, platform: frr, role: leaf, mgmt: 10.0.0.1, credentials: sw, srv6_locator: \"fd00:bbbb:1::/64\"}"),
			[]string{`devices[0].srv6_locator: "fd00:bbbb:1::/64": want a /48 micro-SID locator`}},
		{"bad loopback", withHead("  - {name: leaf0, platform: sonic, role: leaf, mgmt: 10.0.0.1, credentials: sw, loopback: 10.1.0.1}"),
			[]string{`t.yaml:6:91: devices[0].loopback: "10.1.0.1" is not an address with a prefix length (want e.g. 10.1.0.1/32)`}},
		{"bad nic address", withHead(hwDevs[0], "  - {name: host0, platform: linux, role: host, mgmt: 10.0.0.3, credentials: sw, nics: [{name: eth0, address: foo}]}", "links: [[host0:eth0, leaf0:E0]]", "default_speed: 1G"),
			[]string{`t.yaml:7:110: devices[1].nics[0].address: "foo" is not an address with a prefix length (want e.g. 10.2.0.1/31)`}},
		{"duplicate address", withHead(
			"  - {name: leaf0, platform: sonic, role: leaf, mgmt: 10.0.0.1, credentials: sw, loopback: 10.1.0.1/32}",
			"  - {name: leaf1, platform: sonic, role: leaf, mgmt: 10.0.0.2, credentials: sw, loopback: 10.1.0.1/32}"),
			[]string{`t.yaml:7:91: devices[1].loopback: 10.1.0.1 is already used by leaf0 loopback (devices[0].loopback)`}},
		{"bad asn and pod", withHead("  - {name: leaf0, platform: sonic, role: leaf, mgmt: 10.0.0.1, credentials: sw, asn: 0, pod: x}"),
			[]string{`t.yaml:6:86: devices[0].asn: 0 is out of range (want 1..4294967295)`, `t.yaml:6:94: devices[0].pod: want an integer, got "x"`}},
		{"bad timeout", withDevs("timeout: 0s"),
			[]string{`t.yaml:9:10: timeout: "0s" is not a positive duration (want e.g. 30s, 2m)`}},
		{"link to unknown device", withDevs("default_speed: 100G", "links:", "  - [host0:eth0, leaf9:Ethernet0]"),
			[]string{`t.yaml:11:18: links[0][1]: no device named "leaf9"`}},
		{"endpoint without port", withDevs("default_speed: 100G", "links:", "  - [host0:eth0, leaf0]"),
			[]string{`t.yaml:11:18: links[0][1]: "leaf0": want DEVICE:PORT, e.g. leaf0:Ethernet0`}},
		{"link with three ends", withDevs("default_speed: 100G", "links:", "  - [host0:eth0, leaf0:E0, spine0:E0]"),
			[]string{`t.yaml:11:5: links[0]: want two endpoints [DEVICE:PORT, DEVICE:PORT], got 3`}},
		{"link not a list", withDevs("default_speed: 100G", "links:", "  - host0:eth0"),
			[]string{`t.yaml:11:5: links[0]: want [DEVICE:PORT, DEVICE:PORT] or {a: DEVICE:PORT, b: DEVICE:PORT, speed: SPEED}, got "host0:eth0"`}},
		{"link missing b", withDevs("default_speed: 100G", "links:", "  - {a: host0:eth0}"),
			[]string{`t.yaml:11:5: links[0].b: required (DEVICE:PORT)`}},
		{"undeclared port", withHead("  - {name: leaf0, platform: sonic, role: leaf, mgmt: 10.0.0.1, credentials: sw, ports: [{name: Ethernet0}]}",
			hwDevs[2], "default_speed: 100G", "links:", "  - [host0:eth0, leaf0:Ethernet8]"),
			[]string{`t.yaml:10:18: links[0][1]: leaf0 has no port "Ethernet8" (not in devices[0].ports)`}},
		{"undeclared nic", withHead(hwDevs[0], "  - {name: host0, platform: linux, role: host, mgmt: 10.0.0.3, credentials: sw, nics: [{name: eth1}]}",
			"default_speed: 100G", "links:", "  - [host0:eth1, leaf0:E0]", "  - {b: host0:eth2, a: leaf0:E1}"),
			[]string{`t.yaml:11:9: links[1].b: host0 has no NIC "eth2" (not in devices[1].nics)`}},
		{"port used twice", withDevs("default_speed: 100G", "links:", "  - [host0:eth0, leaf0:E0]", "  - [leaf0:E0, spine0:E0]"),
			[]string{`t.yaml:12:6: links[1][0]: leaf0:E0 is already used by links[0][1]`}},
		{"link to itself", withDevs("default_speed: 100G", "links:", "  - [leaf0:E0, leaf0:E0]"),
			[]string{`t.yaml:11:16: links[0][1]: leaf0:E0 is linked to itself`}},
		{"loop on a device", withDevs("default_speed: 100G", "links:", "  - [leaf0:E0, leaf0:E1]"),
			[]string{`t.yaml:11:5: links[0]: links leaf0 to itself`}},
		{"two hosts", withDevs("  - {name: host1, platform: linux, role: host, mgmt: 10.0.0.4, credentials: sw}", "default_speed: 100G", "links:", "  - [host0:eth0, host1:eth0]"),
			[]string{`t.yaml:12:5: links[0]: links two hosts (host0 and host1): hosts connect to leaves`}},
		{"host to spine", withDevs("default_speed: 100G", "links:", "  - [spine0:E0, host0:eth0]"),
			[]string{`t.yaml:11:5: links[0]: links host host0 to spine0, a spine: hosts connect to leaves`}},
		{"same tier", withDevs("  - {name: leaf1, platform: sonic, role: leaf, mgmt: 10.0.0.4, credentials: sw}", "default_speed: 100G", "links:", "  - [leaf0:E0, leaf1:E0]"),
			[]string{`t.yaml:12:5: links[0]: links two leafs (leaf0 and leaf1): links join different tiers`}},
		{"no speed", withDevs("links:", "  - [host0:eth0, leaf0:E0]"),
			[]string{`t.yaml:10:5: links[0]: no speed: set speed on the link or its ports, or default_speed`}},
		{"speed mismatch", withHead("  - {name: leaf0, platform: sonic, role: leaf, mgmt: 10.0.0.1, credentials: sw, ports: [{name: E0, speed: 100G}]}",
			hwDevs[2], "links:", "  - {a: host0:eth0, b: leaf0:E0, speed: 400G}"),
			[]string{`t.yaml:9:41: links[0].speed: 400G does not match the speed of leaf0:E0 (100G, devices[0].ports[0].speed)`}},
		{"port speeds differ", withHead("  - {name: leaf0, platform: sonic, role: leaf, mgmt: 10.0.0.1, credentials: sw, ports: [{name: E0, speed: 100G}]}",
			"  - {name: host0, platform: linux, role: host, mgmt: 10.0.0.3, credentials: sw, nics: [{name: eth0, speed: 25G}]}",
			"links:", "  - [host0:eth0, leaf0:E0]"),
			[]string{`t.yaml:9:5: links[0]: the ports' speeds differ: host0:eth0 is 25G (devices[1].nics[0].speed), leaf0:E0 is 100G (devices[0].ports[0].speed)`}},
		{"nic not on a link", withHead(hwDevs[0], "  - {name: host0, platform: linux, role: host, mgmt: 10.0.0.3, credentials: sw, nics: [{name: eth0}, {name: eth1}]}",
			"default_speed: 100G", "links: [[host0:eth0, leaf0:E0]]"),
			[]string{`t.yaml:7:109: devices[1].nics[1].name: host0:eth1 is on no link (every declared NIC must be cabled)`}},
		{"nics on a switch", withHead("  - {name: leaf0, platform: sonic, role: leaf, mgmt: 10.0.0.1, credentials: sw, nics: []}"),
			[]string{`t.yaml:6:87: devices[0].nics: only hosts have nics; list a switch's interfaces under ports`}},
		{"ports on a host", withHead("  - {name: host0, platform: linux, role: host, mgmt: 10.0.0.1, credentials: sw, ports: []}"),
			[]string{`t.yaml:6:88: devices[0].ports: hosts list their interfaces under nics (with their rails), not ports`}},
		{"duplicate rail on a host", withHead(hwDevs[0], "  - {name: host0, platform: linux, role: host, mgmt: 10.0.0.3, credentials: sw, nics: [{name: eth0, rail: 0}, {name: eth1, rail: 0}]}"),
			[]string{`t.yaml:7:130: devices[1].nics[1].rail: rail 0 is already used by devices[1].nics[0]`}},
		{"plane with unknown and host", withDevs("planes:", "  p0: [spine0, spine9, host0]"),
			[]string{`t.yaml:10:16: planes.p0[1]: no device named "spine9"`, `t.yaml:10:24: planes.p0[2]: host0 is a host, not a switch`}},
		{"switch in two planes", withDevs("planes:", "  p0: [spine0]", "  p1: [spine0]"),
			[]string{`t.yaml:11:8: planes.p1[0]: spine0 is already in plane p0`}},
		{"plane not a list", withDevs("planes:", "  p0: spine0"),
			[]string{`t.yaml:10:7: planes.p0: want a list of switches, got "spine0"`}},
		{"rails naming unknown, host and spine", withDevs("default_speed: 1G", "links: [[host0:eth0, leaf0:E0]]", "rails:", "  0: [leaf9, host0, spine0]"),
			[]string{`t.yaml:12:7: rails.0[0]: no device named "leaf9"`, `t.yaml:12:14: rails.0[1]: host0 is a host, not a switch`,
				`t.yaml:12:21: rails.0[2]: spine0 is a spine, not a leaf (rails list the leaves that host NICs attach to)`}},
		{"rail key not a number", withDevs("rails:", "  first: [leaf0]"),
			[]string{`t.yaml:10:3: rails.first: rail "first" is not a rail number (0, 1, ...)`}},
		{"rail leaf mismatch", withHead(hwDevs[0],
			"  - {name: leaf1, platform: sonic, role: leaf, mgmt: 10.0.0.2, credentials: sw}",
			"  - {name: host0, platform: linux, role: host, mgmt: 10.0.0.3, credentials: sw, nics: [{name: eth0, rail: 0}, {name: eth1, rail: 1}, {name: eth2}]}",
			"default_speed: 1G",
			"links: [[host0:eth0, leaf0:E0], [host0:eth1, leaf0:E1], [host0:eth2, leaf1:E2]]",
			"rails: {0: [leaf1], 3: [leaf0]}"),
			[]string{
				`t.yaml:8:107: devices[2].nics[0].rail: host0:eth0 is on rail 0 but links to leaf0, which rails.0 does not list (leaf1)`,
				`t.yaml:8:130: devices[2].nics[1].rail: rail 1 is not declared under rails`,
				`t.yaml:8:134: devices[2].nics[2].rail: required: the inventory declares rails`,
				`t.yaml:11:21: rails.3: no host NIC is on rail 3`,
			}},
		{"syntax error", withDevs("links: [host0:eth0"),
			[]string{`t.yaml:9:`}},
		{"two documents", withDevs("---", "name: b"),
			[]string{`t.yaml:10:1: an inventory file holds one YAML document`}},
		{"empty", "", []string{`t.yaml:1:1: empty inventory`}},
		{"not a mapping", "- a\n- b\n", []string{`t.yaml:1:1: want a mapping, got a list`}},
		{"unknown alias", withDevs("timeout: *t"),
			[]string{`t.yaml:9:10: timeout: unknown alias *t`}},
		{"wrong types", withDevs("links: {a: b}", "planes: [x]"),
			[]string{`t.yaml:9:8: links: want a list, got a mapping`, `t.yaml:10:9: planes: want a mapping, got a list`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hw, err := ParseHardware("t.yaml", []byte(c.src))
			if err == nil {
				t.Fatalf("no error; parsed %+v", hw)
			}
			if hw != nil {
				t.Errorf("a Hardware came back with the error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nlacks\n%s", err, w)
				}
			}
			var list HardwareErrors
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is %T, want HardwareErrors", err)
			}
			var one *HardwareError
			if !errors.As(err, &one) || one.File != "t.yaml" {
				t.Errorf("errors.As(*HardwareError) = %v", one)
			}
		})
	}
}

// A literal secret never appears in an error.
func TestHardwareErrorsHideSecrets(t *testing.T) {
	for _, field := range []string{"password", "key", "passphrase"} {
		secretText := "Sup3r-Secret-Value"
		src := hwDoc("name: lab", "known_hosts: kh", "credentials:",
			"  sw: {user: admin, key: env:K, "+field+": "+secretText+"}", "devices:", hwDevs[0])
		if field == "key" {
			src = hwDoc("name: lab", "known_hosts: kh", "credentials:",
				"  sw: {user: admin, key: "+secretText+"}", "devices:", hwDevs[0])
		}
		_, err := ParseHardware("t.yaml", []byte(src))
		if err == nil {
			t.Fatalf("%s: no error", field)
		}
		if strings.Contains(err.Error(), secretText) || strings.Contains(err.Error(), "Sup3r") {
			t.Errorf("%s: the error shows the secret: %v", field, err)
		}
		if !strings.Contains(err.Error(), field+" must be a reference (env:NAME or file:PATH), not a literal") {
			t.Errorf("%s: error %v", field, err)
		}
	}
}

func TestHardwareErrorOrderAndLimit(t *testing.T) {
	// Errors are sorted by position and capped.
	var lines []string
	for i := 0; i < 30; i++ {
		lines = append(lines, "  - {name: d"+itoa(int64(i))+", platform: eos, role: leaf, mgmt: 10.0.0."+itoa(int64(i+1))+", credentials: sw}")
	}
	_, err := ParseHardware("t.yaml", []byte(withHead(lines...)))
	var list HardwareErrors
	if !errors.As(err, &list) {
		t.Fatalf("error %v", err)
	}
	if len(list) != 21 || list[20].Msg != "too many errors (10 more not shown)" {
		t.Fatalf("%d errors, last %v", len(list), list[len(list)-1])
	}
	for i := 1; i < 20; i++ {
		if list[i].Line <= list[i-1].Line {
			t.Errorf("errors out of order: %v then %v", list[i-1], list[i])
		}
	}
	if got := strings.Count(err.Error(), "\n"); got != 20 {
		t.Errorf("%d lines", got+1)
	}
}

func TestHardwarePlatforms(t *testing.T) {
	src := withHead("  - {name: leaf0, platform: eos, role: leaf, mgmt: 10.0.0.1, credentials: sw}")
	if _, err := ParseHardware("t.yaml", []byte(src), "eos", "sonic"); err != nil {
		t.Errorf("platform eos from the list: %v", err)
	}
	_, err := ParseHardware("t.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), `unknown platform "eos" (want frr, linux or sonic)`) {
		t.Errorf("default platforms: %v", err)
	}
	_, err = ParseHardware("t.yaml", []byte(withHead(hwDevs[0])), "eos")
	if err == nil || !strings.Contains(err.Error(), `unknown platform "sonic" (want eos)`) {
		t.Errorf("platform list eos: %v", err)
	}
}

func TestHardwareAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString(withDevs())
	b.WriteString("x0: &a0 [leaf0, leaf0, leaf0, leaf0, leaf0, leaf0, leaf0, leaf0, leaf0, leaf0]\n")
	for i := 1; i < 12; i++ {
		prev := "*a" + itoa(int64(i-1))
		b.WriteString("x" + itoa(int64(i)) + ": &a" + itoa(int64(i)) + " [" + strings.Repeat(prev+", ", 9) + prev + "]\n")
	}
	start := time.Now()
	_, err := ParseHardware("t.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "document too large") {
		t.Errorf("error %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestHardwareLoadErrors(t *testing.T) {
	if _, err := LoadHardware(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !os.IsNotExist(errors.Unwrap(err)) && !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "lab.yaml")
	if err := os.WriteFile(path, []byte(withHead("  - {name: leaf0}")), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadHardware(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":6:5: ") || !strings.Contains(err.Error(), path+":6:5: devices[0].platform: required") {
		t.Errorf("error %v", err)
	}
}

func TestHardwareFabricErrors(t *testing.T) {
	// A host without links parses but is not a fabric.
	hw, err := ParseHardware("t.yaml", []byte(withDevs("default_speed: 1G", "links: [[leaf0:E0, spine0:E0]]")))
	if err != nil {
		t.Fatal(err)
	}
	_, err = hw.Fabric()
	if err == nil || !strings.HasPrefix(err.Error(), `t.yaml: fabric "lab": host host0 has no link`) {
		t.Errorf("error %v", err)
	}
	// Disconnected hosts.
	hw, err = ParseHardware("t.yaml", []byte(withDevs(
		"  - {name: leaf1, platform: sonic, role: leaf, mgmt: 10.0.0.4, credentials: sw}",
		"  - {name: host1, platform: linux, role: host, mgmt: 10.0.0.5, credentials: sw}",
		"default_speed: 1G", "links: [[host0:eth0, leaf0:E0], [host1:eth0, leaf1:E0]]")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err = hw.Fabric(); err == nil || !strings.Contains(err.Error(), "is not connected") {
		t.Errorf("error %v", err)
	}
	// A hand-built Hardware with a link between two leaves.
	bad := &Hardware{Name: "x", File: "x.yaml", Devices: []Device{
		{Name: "a", Role: DeviceLeaf}, {Name: "b", Role: DeviceLeaf},
	}, Links: []Cable{{A: Endpoint{"a", "p"}, B: Endpoint{"b", "p"}, RateBps: 1}}}
	if _, err := bad.Fabric(); err == nil || !strings.Contains(err.Error(), "same tier") {
		t.Errorf("error %v", err)
	}
}

func TestParseMgmt(t *testing.T) {
	good := []struct {
		in   string
		host string
		port int
	}{
		{"10.0.0.1", "10.0.0.1", 0},
		{"10.0.0.1:2222", "10.0.0.1", 2222},
		{"fd00::1", "fd00::1", 0},
		{"[fd00::1]", "fd00::1", 0},
		{"[fd00::1]:22", "fd00::1", 22},
		{"leaf0.lab.example.com", "leaf0.lab.example.com", 0},
		{"leaf0:830", "leaf0", 830},
		{"sw-1.", "sw-1.", 0},
	}
	for _, g := range good {
		host, port, err := parseMgmt(g.in)
		if err != nil || host != g.host || port != g.port {
			t.Errorf("parseMgmt(%q) = %q, %d, %v", g.in, host, port, err)
		}
	}
	for _, s := range []string{"", " 10.0.0.1", "10.0.0.256", "10.0.0.1:0", "10.0.0.1:65536", "10.0.0.1:x", "10.0.0.1:", "[fd00::1", "[fd00::1]22",
		"[10.0.0.1]", "fd00::g", "-leaf", "leaf_0", "a..b", "host:+22", "[fd00::1]:"} {
		if h, p, err := parseMgmt(s); err == nil {
			t.Errorf("parseMgmt(%q) = %q, %d; want an error", s, h, p)
		}
	}
}

func TestNaturalLess(t *testing.T) {
	in := []string{"host10", "host2", "host1", "Ethernet16", "Ethernet8", "host01", "host", "a"}
	want := []string{"Ethernet8", "Ethernet16", "a", "host", "host1", "host01", "host2", "host10"}
	got := append([]string(nil), in...)
	sortNatural(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func sortNatural(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && naturalLess(s[j], s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestHardwarePath(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	hw := &Hardware{Dir: "/lab"}
	for in, want := range map[string]string{"kh": "/lab/kh", "../x": "/x", "/etc/kh": "/etc/kh", "~/.ssh/id": filepath.Join(home, ".ssh/id")} {
		if got, err := hw.Path(in); err != nil || got != want {
			t.Errorf("Path(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := hw.Path("~bob/x"); err == nil {
		t.Error("Path(~bob/x) did not fail")
	}
}

func FuzzParseHardware(f *testing.F) {
	for _, p := range []string{filepath.Join("..", "examples", "inventory", "lab-a.yaml"), filepath.Join("testdata", "hw-3tier.yaml")} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(withDevs("links: [[host0:eth0, leaf0:E0]]", "rails: {0: [leaf0]}", "planes: {p: [spine0]}")))
	f.Add([]byte("a: &x [*x]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var hw *Hardware
		var err error
		fuzzbound.Default(t, func() { hw, err = ParseHardware("f.yaml", b) })
		if err != nil {
			if hw != nil {
				t.Fatal("Hardware and error")
			}
			return
		}
		if fab, err := hw.Fabric(); err == nil {
			if err := fab.Validate(); err != nil {
				t.Fatalf("Fabric() passed but Validate fails: %v", err)
			}
		}
	})
}

// The example in docs/inventory.md is valid.
func TestHardwareDocExample(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "inventory.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "## Example")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	src, _, ok3 := strings.Cut(rest, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("no yaml block after ## Example")
	}
	hw, err := ParseHardware(filepath.Join("..", "docs", "example.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	// Every documented key is used by the example.
	for _, keys := range [][]string{topKeys, credentialKeys, deviceKeys, portKeys, nicKeys, linkKeys} {
		for _, k := range keys {
			if !strings.Contains(src, k+":") {
				t.Errorf("the example does not use %q", k)
			}
		}
	}
	f := hwFabric(t, hw)
	if c := roleCounts(f); c[RoleHost] != 1 || c[RoleLeaf] != 1 || c[RoleSpine] != 2 || len(f.Links) != 3 {
		t.Errorf("fabric %s", f.Summary())
	}
	if got := portsOf(f, "leaf0"); !reflect.DeepEqual(got, []string{"Ethernet0>host0@400", "Ethernet32>spine0@800^", "Ethernet40>spine1@800^"}) {
		t.Errorf("leaf0 ports %v", got)
	}
}

func TestHardwareMergeKeys(t *testing.T) {
	src := withHead(
		"  - <<: [&a {platform: frr, role: spine, mgmt: 10.0.0.9}, &b {platform: sonic, role: leaf, credentials: sw}]",
		"    name: leaf0",
		"    mgmt: 10.0.0.1",
		"  - {<<: *b, name: leaf1, mgmt: 10.0.0.2, role: spine}",
	)
	hw, err := ParseHardware("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	// Earlier merged mappings win over later ones; the mapping's own keys
	// win over all.
	if d := hw.Device("leaf0"); d.Platform != "frr" || d.Role != DeviceSpine || d.MgmtHost != "10.0.0.1" || d.Credentials != "sw" {
		t.Errorf("leaf0 = %+v", d)
	}
	if d := hw.Device("leaf1"); d.Platform != "sonic" || d.Role != DeviceSpine || d.MgmtHost != "10.0.0.2" {
		t.Errorf("leaf1 = %+v", d)
	}
	// A merged key that is unknown is reported at its definition.
	_, err = ParseHardware("t.yaml", []byte(withHead(
		"  - <<: {colour: red, platform: sonic}",
		"    name: leaf0")))
	if err == nil || !strings.Contains(err.Error(), `t.yaml:6:10: devices[0].colour: unknown key (want name, platform`) {
		t.Errorf("unknown merged key: %v", err)
	}
	for src, want := range map[string]string{
		withHead("  - {<<: 5, name: leaf0}"):                `t.yaml:6:10: devices[0]: merge key << wants a mapping or a list of mappings, got "5"`,
		withHead("  - {<<: [5], name: leaf0}"):              `t.yaml:6:11: devices[0]: merge key << wants a mapping or a list of mappings, got "5"`,
		withDevs("timeout: &t 1m", "x: *t"):                 `t.yaml:10:1: x: unknown key (want name, known_hosts, default_speed, timeout, credentials, devices, links, planes or rails)`,
		withDevs("planes: {p: *later}", "rails: &later {}"): `t.yaml:9:13: planes.p: alias *later is used before its anchor &later`,
	} {
		// Problems the YAML conversion reports are the only ones at and
		// below their paths (no "required" or "got null" follow-ups).
		_, err := ParseHardware("t.yaml", []byte(src))
		if err == nil || err.Error() != want {
			t.Errorf("error\n%v\nwant\n%s", err, want)
		}
	}
}

// A device's gnmi server: address, profile, credentials and TLS, checked
// at their positions.
func TestHardwareGNMI(t *testing.T) {
	dir := t.TempDir()
	src := withHead(
		"  - {name: leaf0, platform: sonic, role: leaf, mgmt: 10.0.0.1, credentials: sw, gnmi: {address: '10.0.0.1:8080', profile: sonic, tls: {ca: ./ca.pem, server_name: leaf0}}}",
		"  - {name: spine0, platform: frr, role: spine, mgmt: 10.0.0.2, credentials: sw, gnmi: {address: '10.0.0.2:9339', insecure: true}, ports: [{name: Ethernet4, interface: eth5}]}",
		"  - {name: host0, platform: linux, role: host, mgmt: 10.0.0.3, credentials: sw}",
	)
	if err := os.WriteFile(filepath.Join(dir, "t.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	hw := loadHW(t, filepath.Join(dir, "t.yaml"))
	g := hw.Device("leaf0").GNMI
	if g == nil || g.Address != "10.0.0.1:8080" || g.Profile != ProfileSONiC || g.CA != filepath.Join(dir, "ca.pem") ||
		g.ServerName != "leaf0" || g.Insecure || g.Credentials != "sw" {
		t.Errorf("leaf0 gnmi %+v", g)
	}
	if g := hw.Device("spine0").GNMI; g == nil || !g.Insecure || g.Profile != ProfileOpenConfig {
		t.Errorf("spine0 gnmi %+v", g)
	}
	if hw.Device("host0").GNMI != nil {
		t.Error("host0 has a gnmi server")
	}
	if got := hw.Device("spine0").Interface("Ethernet4"); got != "eth5" {
		t.Errorf("spine0 Ethernet4 interface %q", got)
	}
	if got := hw.Device("leaf0").Interface("Ethernet0"); got != "Ethernet0" {
		t.Errorf("leaf0 Ethernet0 interface %q", got)
	}
	bad := []struct{ gnmi, want string }{
		{"{address: '10.0.0.1:8080'}", "t.yaml:6:87: devices[0].gnmi: needs tls (ca: FILE, or skip_verify: true) or, for plain-text gRPC, insecure: true"},
		{"{address: 10.0.0.1, insecure: true}", "t.yaml:6:97: devices[0].gnmi.address: \"10.0.0.1\" has no port"},
		{"{address: '10.0.0.1:1', insecure: true, profile: eos}", "devices[0].gnmi.profile: unknown profile \"eos\" (want openconfig or sonic)"},
		{"{address: '10.0.0.1:1', insecure: true, tls: {skip_verify: true}}", "devices[0].gnmi.insecure: insecure: true is plain-text gRPC; it cannot be combined with tls"},
		{"{address: '10.0.0.1:1', tls: {ca: x.pem, skip_verify: true}}", "devices[0].gnmi.tls.skip_verify: set either ca"},
		{"{address: '10.0.0.1:1', tls: {server_name: x}}", "devices[0].gnmi.tls: needs ca"},
		{"{address: '10.0.0.1:1', insecure: true, credentials: nope}", "devices[0].gnmi.credentials: unknown credential set \"nope\""},
		{"{address: '10.0.0.1:1', insecure: true, port: 3}", "devices[0].gnmi.port: unknown key"},
	}
	for _, c := range bad {
		src := withHead("  - {name: leaf0, platform: sonic, role: leaf, mgmt: 10.0.0.1, credentials: sw, gnmi: "+c.gnmi+"}", hwDevs[1], hwDevs[2])
		_, err := ParseHardware("t.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("gnmi %s: error %v, want %s", c.gnmi, err, c.want)
		}
	}
}
