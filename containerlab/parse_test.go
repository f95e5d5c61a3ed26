package containerlab

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// load parses a document named bad.clab.yml and resolves it against a
// temporary directory; it returns the first error.
func load(t *testing.T, doc string) (*Lab, error) {
	t.Helper()
	topo, err := ParseBytes("bad.clab.yml", []byte(doc))
	if err != nil {
		return nil, err
	}
	return topo.Lab(t.TempDir())
}

// A minimal valid lab the error cases start from.
const okDoc = `name: t1
mgmt:
  network: fb-t1
  ipv4-subnet: 198.19.9.0/24
topology:
  nodes:
    leaf0:
      kind: linux
      image: quay.io/frrouting/frr:8.4.1
      labels:
        fabricbench.role: leaf
        fabricbench.asn: 65101
    h0:
      kind: linux
      image: alpine
  links:
    - endpoints: ["h0:eth1", "leaf0:eth1"]
`

func TestOKDoc(t *testing.T) {
	lab, err := load(t, okDoc)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{lab.Nodes[0].Name, lab.Nodes[1].Name}; !reflect.DeepEqual(got, []string{"h0", "leaf0"}) {
		t.Fatalf("nodes %v, want sorted [h0 leaf0]", got)
	}
	h0, leaf0 := lab.NodeByName("h0"), lab.NodeByName("leaf0")
	if h0.Role != "host" || h0.OS != "linux" || leaf0.Role != "leaf" || leaf0.OS != "frr" || leaf0.ASN != 65101 {
		t.Fatalf("h0 %+v\nleaf0 %+v", h0, leaf0)
	}
	// No mgmt-ipv4: .11 upward in node name order.
	if h0.Mgmt != netip.MustParseAddr("198.19.9.11") || leaf0.Mgmt != netip.MustParseAddr("198.19.9.12") {
		t.Fatalf("mgmt addresses %s %s, want .11 and .12", h0.Mgmt, leaf0.Mgmt)
	}
	if len(lab.Links) != 1 || lab.Links[0].A != (Endpoint{Node: "h0", Interface: "eth1"}) || lab.Links[0].B != (Endpoint{Node: "leaf0", Interface: "eth1"}) {
		t.Fatalf("links %+v", lab.Links)
	}
}

func TestParseAndLabErrors(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		want []string // substrings of the error text
	}{
		{"syntax", "name: t1\ntopology: [\n", []string{"bad.clab.yml:2:"}},
		{"empty file", "# nothing\n", []string{"bad.clab.yml: empty topology file"}},
		{"unknown top-level key", strings.Replace(okDoc, "topology:\n", "topolgy:\n", 1),
			[]string{`bad.clab.yml:5:1: topolgy: unknown key (not a containerlab top-level property; did you mean "topology"?)`, "topology: missing"}},
		{"unknown node key", strings.Replace(okDoc, "      image: alpine\n", "      image: alpine\n      cpux: 2\n", 1),
			[]string{`bad.clab.yml:16:7: topology.nodes.h0.cpux: unknown key (not a containerlab node property; did you mean "cpu"?)`}},
		{"unknown mgmt key", strings.Replace(okDoc, "  network: fb-t1\n", "  netwrok: fb-t1\n", 1),
			[]string{`bad.clab.yml:3:3: mgmt.netwrok: unknown key (not a containerlab mgmt property; did you mean "network"?)`}},
		{"unknown endpoint key", strings.Replace(okDoc, `    - endpoints: ["h0:eth1", "leaf0:eth1"]`, "    - type: veth\n      endpoints:\n        - {node: h0, interface: eth1, ip: 198.18.0.1/31}\n        - {node: leaf0, interface: eth1}", 1),
			[]string{`bad.clab.yml:19:39: topology.links[0].endpoints[0].ip: unknown key (not a containerlab endpoint property; did you mean "ipv4"?)`}},
		{"duplicate key", strings.Replace(okDoc, "      image: alpine\n", "      image: alpine\n      image: debian\n", 1),
			[]string{`bad.clab.yml:16:7: topology.nodes.h0.image: duplicate key (first set on line 15)`}},
		{"list wanted", strings.Replace(okDoc, "      image: alpine\n", "      image: alpine\n      binds: a:/etc/frr/frr.conf\n", 1),
			[]string{`bad.clab.yml:16:14: topology.nodes.h0.binds: want a list of strings, got "a:/etc/frr/frr.conf"`}},
		{"bad endpoint string", strings.Replace(okDoc, `"h0:eth1"`, `"h0-eth1"`, 1),
			[]string{`bad.clab.yml:17:19: topology.links[0].endpoints[0]: "h0-eth1" is not an endpoint (want "node:interface"`}},
		{"three endpoints", strings.Replace(okDoc, `"leaf0:eth1"]`, `"leaf0:eth1", "leaf0:eth2"]`, 1),
			[]string{`bad.clab.yml:17:18: topology.links[0].endpoints: want exactly 2 endpoints, got 3`}},
		{"mgmt-ipv4 not an address", strings.Replace(okDoc, "      image: alpine\n", "      image: alpine\n      mgmt-ipv4: 198.19.9.300\n", 1),
			[]string{`bad.clab.yml:16:18: topology.nodes.h0.mgmt-ipv4: "198.19.9.300" is not an IPv4 address`}},
		{"mtu out of range", strings.Replace(okDoc, `"leaf0:eth1"]`, "\"leaf0:eth1\"]\n      mtu: 70000", 1),
			[]string{`bad.clab.yml:18:12: topology.links[0].mtu: "70000" is out of range (want 1 to 65535)`}},
		{"unknown link type", strings.Replace(okDoc, `    - endpoints: ["h0:eth1", "leaf0:eth1"]`, "    - type: vethh\n      endpoints: [{node: h0, interface: eth1}, {node: leaf0, interface: eth1}]", 1),
			[]string{`bad.clab.yml:17:13: topology.links[0].type: unknown link type "vethh"`}},
		{"unknown alias", strings.Replace(okDoc, "image: alpine", "image: *img", 1),
			[]string{`bad.clab.yml:15:14: topology.nodes.h0.image: unknown alias *img`}},

		// Problems only the native deployer has (Topology.Lab).
		{"unsupported cpu", strings.Replace(okDoc, "      image: alpine\n", "      image: alpine\n      cpu: 2\n", 1),
			[]string{`bad.clab.yml:16:7: topology.nodes.h0.cpu: not supported by the native runtime`}},
		{"unsupported in defaults", strings.Replace(okDoc, "  nodes:\n", "  defaults:\n    memory: 1GB\n  nodes:\n", 1),
			[]string{`bad.clab.yml:7:5: topology.defaults.memory: not supported by the native runtime`}},
		{"settings rejected", okDoc + "settings:\n  certificate-authority: {key-size: 2048}\n",
			[]string{`bad.clab.yml:18:1: settings: not supported by the native runtime`}},
		{"ipv6 mgmt rejected", strings.Replace(okDoc, "  network: fb-t1\n", "  network: fb-t1\n  ipv6-subnet: fd00:1::/64\n", 1),
			[]string{`bad.clab.yml:4:3: mgmt.ipv6-subnet: not supported by the native runtime`}},
		{"kind frr", strings.Replace(okDoc, "      kind: linux\n      image: alpine", "      kind: frr\n      image: alpine", 1),
			[]string{`bad.clab.yml:14:13: topology.nodes.h0.kind: kind "frr" is not supported by fabricbench (it drives linux, bridge and sonic-vs nodes`}},
		{"kinds section of another kind", strings.Replace(okDoc, "  nodes:\n", "  kinds:\n    nokia_srlinux: {image: srl}\n  nodes:\n", 1),
			[]string{`bad.clab.yml:7:5: topology.kinds.nokia_srlinux: kind "nokia_srlinux" is not supported by fabricbench`}},
		{"lab name too long", strings.Replace(okDoc, "name: t1", "name: a-very-long-lab-name-x", 1),
			[]string{`bad.clab.yml:1:7: name: "a-very-long-lab-name-x" is 22 characters long; the native runtime takes at most 20`}},
		{"bad rate", strings.Replace(okDoc, `"leaf0:eth1"]`, "\"leaf0:eth1\"]\n      vars: {rate: fast}", 1),
			[]string{`bad.clab.yml:18:20: topology.links[0].vars.rate: "fast" is not a rate (want e.g. 100mbit, 1gbit or 10Gbps)`}},
		{"duplicate interface", okDoc + `    - endpoints: ["h0:eth1", "leaf0:eth2"]` + "\n",
			[]string{`bad.clab.yml:18:19: topology.links[1].endpoints[0]: interface eth1 of h0 is already used by topology.links[0].endpoints[0]`}},
		{"dangling endpoint node", okDoc + `    - endpoints: ["h1:eth1", "leaf0:eth2"]` + "\n",
			[]string{`bad.clab.yml:18:19: topology.links[1].endpoints[0]: node "h1" is not defined in topology.nodes`}},
		{"dangling extended endpoint", okDoc + "    - type: veth\n      endpoints:\n        - {node: h1, interface: eth1}\n        - {node: leaf0, interface: eth2}\n",
			[]string{`bad.clab.yml:20:18: topology.links[1].endpoints[0].node: node "h1" is not defined in topology.nodes`}},
		{"interface name too long", strings.Replace(okDoc, `"h0:eth1"`, `"h0:ethernet-1-1-long"`, 1),
			[]string{`bad.clab.yml:17:19: topology.links[0].endpoints[0]: interface name "ethernet-1-1-long" is longer than 15 characters`}},
		{"interface lo", strings.Replace(okDoc, `"h0:eth1"`, `"h0:lo"`, 1),
			[]string{`topology.links[0].endpoints[0]: interface name "lo" is reserved`}},
		{"interface mgmt0", strings.Replace(okDoc, `"h0:eth1"`, `"h0:mgmt0"`, 1),
			[]string{`topology.links[0].endpoints[0]: interface name "mgmt0" is reserved`}},
		{"mgmt-ipv4 outside subnet", strings.Replace(okDoc, "      image: alpine\n", "      image: alpine\n      mgmt-ipv4: 198.19.10.5\n", 1),
			[]string{`bad.clab.yml:16:18: topology.nodes.h0.mgmt-ipv4: 198.19.10.5 is outside the management subnet 198.19.9.0/24`}},
		{"mgmt-ipv4 twice", strings.Replace(strings.Replace(okDoc, "      image: alpine\n", "      image: alpine\n      mgmt-ipv4: 198.19.9.20\n", 1), "        fabricbench.asn: 65101\n", "        fabricbench.asn: 65101\n      mgmt-ipv4: 198.19.9.20\n", 1),
			[]string{`bad.clab.yml:13:18: topology.nodes.leaf0.mgmt-ipv4: 198.19.9.20 is also the management address of h0`}},
		{"mgmt-ipv4 gateway", strings.Replace(okDoc, "      image: alpine\n", "      image: alpine\n      mgmt-ipv4: 198.19.9.1\n", 1),
			[]string{`topology.nodes.h0.mgmt-ipv4: 198.19.9.1 is the management gateway`}},
		{"bad asn", strings.Replace(okDoc, "fabricbench.asn: 65101", "fabricbench.asn: 65101x", 1),
			[]string{`bad.clab.yml:12:26: topology.nodes.leaf0.labels["fabricbench.asn"]: "65101x" is not an AS number (want 1 to 4294967295)`}},
		{"asn too large", strings.Replace(okDoc, "fabricbench.asn: 65101", "fabricbench.asn: 4294967296", 1),
			[]string{`topology.nodes.leaf0.labels["fabricbench.asn"]: "4294967296" is not an AS number`}},
		{"bad role", strings.Replace(okDoc, "fabricbench.role: leaf", "fabricbench.role: router", 1),
			[]string{`bad.clab.yml:11:27: topology.nodes.leaf0.labels["fabricbench.role"]: "router" is not a role (want host, leaf, spine or super-spine)`}},
		{"bad os", strings.Replace(okDoc, "fabricbench.role: leaf", "fabricbench.role: leaf\n        fabricbench.os: windows", 1),
			[]string{`bad.clab.yml:12:25: topology.nodes.leaf0.labels["fabricbench.os"]: "windows" is not an OS (want frr or linux)`}},
		{"bad loopback", strings.Replace(okDoc, "fabricbench.role: leaf", "fabricbench.role: leaf\n        fabricbench.loopback: 198.19.255.1/24", 1),
			[]string{`bad.clab.yml:12:31: topology.nodes.leaf0.labels["fabricbench.loopback"]: "198.19.255.1/24" is not an IPv4 /32 prefix`}},
		{"bad locator", strings.Replace(okDoc, "fabricbench.role: leaf", "fabricbench.role: leaf\n        fabricbench.srv6-locator: fd00:bbbb:1::1/48", 1),
			[]string{`topology.nodes.leaf0.labels["fabricbench.srv6-locator"]: "fd00:bbbb:1::1/48" is not an IPv6 locator prefix`}},
		{"unknown fabricbench label", strings.Replace(okDoc, "fabricbench.role: leaf", "fabricbench.role: leaf\n        fabricbench.tier: 0", 1),
			[]string{`bad.clab.yml:12:9: topology.nodes.leaf0.labels["fabricbench.tier"]: unknown fabricbench label`}},
		{"bind onto other target", strings.Replace(okDoc, "        fabricbench.asn: 65101\n", "        fabricbench.asn: 65101\n      binds: [\"x.conf:/etc/hosts\"]\n", 1),
			[]string{`bad.clab.yml:13:15: topology.nodes.leaf0.binds[0]: `, `x.conf does not exist`}},
		{"bind source missing", strings.Replace(okDoc, "        fabricbench.asn: 65101\n", "        fabricbench.asn: 65101\n      binds: [\"leaf0/frr.conf:/etc/frr/frr.conf\"]\n", 1),
			[]string{`bad.clab.yml:13:15: topology.nodes.leaf0.binds[0]: `, `leaf0/frr.conf does not exist`}},
		{"macvlan link", okDoc + "    - type: macvlan\n      endpoint: {node: h0, interface: eth2}\n      host-interface: enp0s3\n",
			[]string{`bad.clab.yml:18:13: topology.links[1].type: "macvlan" links are not supported by the native runtime; deploy with --runtime containerlab`}},
		{"same address twice", strings.Replace(okDoc, `    - endpoints: ["h0:eth1", "leaf0:eth1"]`, "    - type: veth\n      endpoints:\n        - {node: h0, interface: eth1, ipv4: 198.18.0.1/31}\n        - {node: leaf0, interface: eth1, ipv4: 198.18.0.1/31}", 1),
			[]string{`bad.clab.yml:20:48: topology.links[0].endpoints[1].ipv4: 198.18.0.1 is also the address of topology.links[0].endpoints[0].ipv4`}},
		{"different subnets", strings.Replace(okDoc, `    - endpoints: ["h0:eth1", "leaf0:eth1"]`, "    - type: veth\n      endpoints:\n        - {node: h0, interface: eth1, ipv4: 198.18.0.1/31}\n        - {node: leaf0, interface: eth1, ipv4: 198.18.0.2/31}", 1),
			[]string{`topology.links[0].endpoints[1].ipv4: 198.18.0.1/31 and 198.18.0.2/31 are not in the same subnet`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := load(t, c.doc)
			if err == nil {
				t.Fatalf("no error for:\n%s", c.doc)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain\n\t%s\ngot:\n\t%s", w, strings.ReplaceAll(err.Error(), "\n", "\n\t"))
				}
			}
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not an ErrorList: %T", err)
			}
		})
	}
}

// Properties containerlab knows but fabricbench does not interpret parse
// into Other with their positions, and are written back by Marshal.
func TestOtherPropertiesKept(t *testing.T) {
	doc := `name: t2
topology:
  defaults:
    kind: linux
  nodes:
    n1:
      image: alpine
      cpu: 1.5
      memory: 1GB
      ports: ["8080:80"]
      healthcheck: {test: ["CMD", "true"], interval: 5}
      stages:
        create:
          wait-for:
            - node: n2
              stage: healthy
    n2:
  links:
    - endpoints: ["n1:eth1", "n2:eth1"]
      ipv4: [198.18.0.1/31, 198.18.0.0/31]
settings:
  certificate-authority: {key-size: 2048}
`
	topo, err := ParseBytes("other.clab.yml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	n1 := topo.Nodes["n1"]
	keys := sortedKeys(n1.Other)
	if want := []string{"cpu", "healthcheck", "memory", "ports", "stages"}; !reflect.DeepEqual(keys, want) {
		t.Fatalf("Other keys %v, want %v", keys, want)
	}
	if n1.Other["cpu"].Value != 1.5 || n1.Other["cpu"].Pos != (Pos{Line: 8, Column: 7}) {
		t.Fatalf("cpu = %+v", n1.Other["cpu"])
	}
	if topo.Nodes["n2"] != nil {
		t.Fatalf("n2 has no body, got %+v", topo.Nodes["n2"])
	}
	if len(topo.Links[0].IPv4) != 2 || topo.Other["settings"] == nil {
		t.Fatalf("link ipv4 or settings lost: %+v %+v", topo.Links[0].Other, topo.Other)
	}
	// Marshal and parse again: the same model.
	y, err := topo.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseBytes("again.clab.yml", y)
	if err != nil {
		t.Fatalf("re-parse: %v\n%s", err, y)
	}
	for _, k := range keys {
		if !reflect.DeepEqual(again.Nodes["n1"].Other[k].Value, n1.Other[k].Value) {
			t.Errorf("%s: %#v after marshal, was %#v", k, again.Nodes["n1"].Other[k].Value, n1.Other[k].Value)
		}
	}
	y2, err := again.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if string(y2) != string(y) {
		t.Fatalf("Marshal is not stable:\n%s\n---\n%s", y, y2)
	}
	// Lab rejects them all by name.
	_, err = topo.Lab(t.TempDir())
	if err == nil {
		t.Fatal("Lab accepted properties the native deployer does not honour")
	}
	for _, w := range []string{
		"other.clab.yml:8:7: topology.nodes.n1.cpu: not supported",
		"other.clab.yml:9:7: topology.nodes.n1.memory: not supported",
		"other.clab.yml:10:7: topology.nodes.n1.ports: not supported",
		"other.clab.yml:11:7: topology.nodes.n1.healthcheck: not supported",
		"other.clab.yml:12:7: topology.nodes.n1.stages: not supported",
		"other.clab.yml:21:1: settings: not supported",
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in\n%v", w, err)
		}
	}
}

// Defaults, kinds, groups and nodes merge as containerlab merges them.
func TestMerge(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"kind.conf", "node.conf", "daemons"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("!\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doc := `name: merge
mgmt:
  ipv4-subnet: 198.18.250.0/24
topology:
  defaults:
    kind: linux
    image: alpine
    labels: {site: lab, tier: default}
    exec: ["echo defaults"]
    sysctls: {net.ipv4.ip_forward: 1}
  kinds:
    linux:
      image: quay.io/frrouting/frr:8.4.1
      labels: {tier: kind}
      exec: ["echo kind"]
      binds: ["daemons:/etc/frr/daemons"]
  groups:
    spines:
      labels: {fabricbench.role: spine, tier: group}
      exec: ["echo group"]
  nodes:
    s1:
      group: spines
      labels: {fabricbench.asn: "65000", tier: node}
      exec: ["echo node"]
      binds: ["node.conf:/etc/frr/frr.conf"]
      mgmt-ipv4: 198.18.250.11
    h1:
      image: alpine:3.20
      labels: {fabricbench.role: host}
      binds: []
    h2:
      labels: {fabricbench.role: host, fabricbench.os: linux}
`
	topo, err := ParseBytes(filepath.Join(dir, "merge.clab.yml"), []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	_, err = topo.Lab("")
	// h2 is a plain Linux node (its label says so): the kind's FRR bind is
	// an error for it. h1 has no OS label: the bind makes it an FRR node.
	if err == nil || !strings.Contains(err.Error(), "topology.kinds.linux.binds[0]: bind onto /etc/frr/daemons needs an FRR node") || strings.Count(err.Error(), "needs an FRR node") != 1 {
		t.Fatalf("want the FRR bind rejected for plain Linux nodes, got %v", err)
	}
	topo.Kinds["linux"].Binds = nil
	topo.Nodes["s1"].Binds = append(topo.Nodes["s1"].Binds, "daemons:/etc/frr/daemons")
	lab, err := topo.Lab("")
	if err != nil {
		t.Fatal(err)
	}
	s1 := lab.NodeByName("s1")
	if s1.Image != "quay.io/frrouting/frr:8.4.1" || s1.OS != "frr" || s1.Role != "spine" || s1.ASN != 65000 {
		t.Fatalf("s1 = %+v", s1)
	}
	if s1.Labels["tier"] != "node" || s1.Labels["site"] != "lab" {
		t.Fatalf("labels %v: want node to win and defaults to be kept", s1.Labels)
	}
	if want := []string{"echo defaults", "echo kind", "echo group", "echo node"}; !reflect.DeepEqual(s1.Exec, want) {
		t.Fatalf("exec %v, want %v", s1.Exec, want)
	}
	if s1.FRRConfig != filepath.Join(dir, "node.conf") || s1.FRRDaemons != filepath.Join(dir, "daemons") {
		t.Fatalf("FRR files %q %q", s1.FRRConfig, s1.FRRDaemons)
	}
	if s1.Sysctls["net.ipv4.ip_forward"] != "1" {
		t.Fatalf("sysctls %v", s1.Sysctls)
	}
	h1, h2 := lab.NodeByName("h1"), lab.NodeByName("h2")
	if h1.Image != "alpine:3.20" || h1.OS != "linux" || h1.Labels["tier"] != "kind" {
		t.Fatalf("h1 = %+v", h1)
	}
	// h2 inherits the kind's FRR image, but an explicit fabricbench.os=linux wins.
	if h2.Image != "quay.io/frrouting/frr:8.4.1" || h2.OS != "linux" {
		t.Fatalf("h2 = %+v", h2)
	}
	// Management addresses: s1's is fixed; h1 and h2 get .12 and .13 (.11 is taken).
	if h1.Mgmt != netip.MustParseAddr("198.18.250.12") || h2.Mgmt != netip.MustParseAddr("198.18.250.13") {
		t.Fatalf("mgmt %s %s", h1.Mgmt, h2.Mgmt)
	}
	if lab.Mgmt != netip.MustParsePrefix("198.18.250.0/24") || lab.Dir != dir {
		t.Fatalf("lab %s %s", lab.Mgmt, lab.Dir)
	}
}

func TestLabDefaultsAndSonic(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config_db.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := `name: s
topology:
  nodes:
    sw:
      kind: sonic-vs
      image: docker-sonic-vs:latest
      startup-config: config_db.json
      labels: {fabricbench.role: leaf}
    r:
      kind: linux
      image: ghcr.io/example/frr-custom
      labels: {fabricbench.role: spine}
  links:
    - endpoints: [sw:eth1, r:eth1]
      mtu: 9000
      vars: {rate: 10Gbps}
`
	topo, err := ParseBytes(filepath.Join(dir, "s.clab.yml"), []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topo.Lab(""); err == nil || !strings.Contains(err.Error(), "s.clab.yml:5:13: topology.nodes.sw.kind: kind sonic-vs is not supported by the native runtime") {
		t.Fatalf("native runtime: want sonic-vs refused at its kind, got %v", err)
	}
	lab, err := topo.Resolve("", RuntimeContainerlab)
	if err != nil {
		t.Fatal(err)
	}
	if lab.Mgmt != DefaultMgmtSubnet {
		t.Fatalf("mgmt %s, want containerlab's default %s", lab.Mgmt, DefaultMgmtSubnet)
	}
	sw, r := lab.NodeByName("sw"), lab.NodeByName("r")
	if sw.OS != "sonic" || sw.FRRConfig != "" || r.OS != "frr" {
		t.Fatalf("sw %+v\nr %+v", sw, r)
	}
	if l := lab.Links[0]; l.MTU != 9000 || l.RateBps != 10_000_000_000 {
		t.Fatalf("link %+v", l)
	}
}

func TestSanitizeName(t *testing.T) {
	cases := map[string]string{
		"leafspine":  "leafspine",
		"my lab/1":   "my-lab-1",
		"-x-":        "x",
		"":           "fabric",
		"::":         "fabric",
		"fattree:16": "fattree-16",
	}
	for in, want := range cases {
		if got := SanitizeName(in); got != want {
			t.Errorf("SanitizeName(%q) = %q, want %q", in, got, want)
		}
	}
	long := SanitizeName("leafspine:leaves=4,spines=2,hosts_per_leaf=2")
	if len(long) > MaxLabName || !labNameRe.MatchString(long) || !strings.HasPrefix(long, "leafspine-") {
		t.Errorf("long name sanitised to %q", long)
	}
	if long == SanitizeName("leafspine:leaves=4,spines=2,hosts_per_leaf=3") {
		t.Errorf("different long names sanitise to the same %q", long)
	}
}
