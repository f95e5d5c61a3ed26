package containerlab

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/inventory"
)

var update = flag.Bool("update", false, "rewrite the generated example lab in examples/labs")

var tierRole = map[int]string{0: "leaf", 1: "spine", 2: "super-spine"}

// Generate -> Write -> Parse -> Lab keeps everything the plan says.
func TestRoundTrip(t *testing.T) {
	for _, c := range genCases {
		t.Run(c.name, func(t *testing.T) {
			f := fabric(t, c.spec)
			g, err := Generate(f, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			dir, _, lab := writeLab(t, g)
			if lab.Dir != dir {
				t.Errorf("Lab.Dir %s, want %s", lab.Dir, dir)
			}
			if len(lab.Nodes) != len(f.Nodes) {
				t.Fatalf("%d nodes, want %d", len(lab.Nodes), len(f.Nodes))
			}
			if !sort.SliceIsSorted(lab.Nodes, func(i, j int) bool { return lab.Nodes[i].Name < lab.Nodes[j].Name }) {
				t.Error("nodes not sorted by name")
			}
			mgmt := c.opt.MgmtSubnet
			if !mgmt.IsValid() {
				mgmt = DefaultMgmtSubnetFor(lab.Name)
			}
			if lab.Mgmt != mgmt || !FabricIPv4.Contains(mgmt.Addr()) {
				t.Errorf("mgmt subnet %s, want %s inside %s", lab.Mgmt, mgmt, FabricIPv4)
			}
			// Roles, OS, ASNs, loopbacks, management addresses.
			sw, leaf := 0, 0
			var order []*inventory.Node
			for i := range f.Nodes {
				if f.Nodes[i].IsSwitch() {
					order = append(order, &f.Nodes[i])
				}
			}
			for i := range f.Nodes {
				if !f.Nodes[i].IsSwitch() {
					order = append(order, &f.Nodes[i])
				}
			}
			for k, in := range order {
				n := lab.NodeByName(in.Name)
				if n == nil {
					t.Fatalf("node %s missing", in.Name)
				}
				if want := addrAdd(mgmt.Addr(), uint64(11+k)); n.Mgmt != want {
					t.Errorf("%s: mgmt %s, want %s", n.Name, n.Mgmt, want)
				}
				if !in.IsSwitch() {
					if n.Role != "host" || n.OS != "linux" || n.Kind != "linux" || n.ASN != 0 {
						t.Errorf("host %s: %+v", n.Name, n)
					}
					continue
				}
				if n.Role != tierRole[in.Tier] {
					t.Errorf("%s: role %q, want %q", n.Name, n.Role, tierRole[in.Tier])
				}
				wantOS, wantKind := "frr", "linux"
				if c.opt.SwitchKind == "sonic-vs" {
					wantOS, wantKind = "sonic", "sonic-vs"
				}
				if n.OS != wantOS || n.Kind != wantKind {
					t.Errorf("%s: OS %s kind %s, want %s %s", n.Name, n.OS, n.Kind, wantOS, wantKind)
				}
				var asn uint32
				switch {
				case in.Tier == 0:
					asn = uint32(65101 + leaf)
					leaf++
				case in.Tier == 1 && f.Tiers == 3:
					asn = uint32(64600 + in.Pod)
				default:
					asn = 65000
				}
				if n.ASN != asn {
					t.Errorf("%s: ASN %d, want %d", n.Name, n.ASN, asn)
				}
				if want := netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 19, 255, byte(sw + 1)}), 32); n.Loopback != want {
					t.Errorf("%s: loopback %s, want %s", n.Name, n.Loopback, want)
				}
				wantLoc := netip.Prefix{}
				if c.opt.SRv6 {
					wantLoc = netip.MustParsePrefix(fmt.Sprintf("fd00:bbbb:%x::/48", sw+1))
				}
				if n.SRv6Locator != wantLoc {
					t.Errorf("%s: locator %s, want %s", n.Name, n.SRv6Locator, wantLoc)
				}
				sw++
				switch n.OS {
				case "frr":
					for _, p := range []string{n.FRRConfig, n.FRRDaemons} {
						if !filepath.IsAbs(p) || !strings.HasPrefix(p, dir) {
							t.Errorf("%s: FRR file %q not an absolute path in %s", n.Name, p, dir)
						} else if _, err := os.Stat(p); err != nil {
							t.Errorf("%s: %v", n.Name, err)
						}
					}
					if n.Sysctls["net.ipv4.fib_multipath_hash_policy"] != "1" || n.Sysctls["net.ipv6.conf.all.forwarding"] != "1" {
						t.Errorf("%s: sysctls %v", n.Name, n.Sysctls)
					}
				case "sonic":
					b, err := os.ReadFile(filepath.Join(dir, lab.Name, n.Name, "config_db.json"))
					if err != nil {
						t.Fatal(err)
					}
					var db map[string]map[string]map[string]string
					if err := json.Unmarshal(b, &db); err != nil {
						t.Fatalf("%s: config_db.json: %v", n.Name, err)
					}
					md := db["DEVICE_METADATA"]["localhost"]
					if md["hostname"] != n.Name || md["bgp_asn"] != strconv.FormatUint(uint64(n.ASN), 10) {
						t.Errorf("%s: DEVICE_METADATA %v", n.Name, md)
					}
					if _, ok := db["LOOPBACK_INTERFACE"]["Loopback0|"+n.Loopback.String()]; !ok {
						t.Errorf("%s: loopback missing from %v", n.Name, db["LOOPBACK_INTERFACE"])
					}
				}
			}
			// Links: inventory order, lower end first, addresses by the plan.
			if len(lab.Links) != len(f.Links) {
				t.Fatalf("%d links, want %d", len(lab.Links), len(f.Links))
			}
			for i, fl := range f.Links {
				l := lab.Links[i]
				pa, pb := &f.Ports[fl.A], &f.Ports[fl.B]
				wantA := Endpoint{Node: f.Nodes[pa.Node].Name, Interface: "eth" + strconv.Itoa(pa.Index+1),
					IPv4: netip.PrefixFrom(addrAdd(netip.MustParseAddr("198.18.0.0"), uint64(2*i+1)), 31),
					IPv6: netip.PrefixFrom(addrAdd(netip.MustParseAddr("fd00:fb:1::"), uint64(2*i+1)), 127)}
				wantB := Endpoint{Node: f.Nodes[pb.Node].Name, Interface: "eth" + strconv.Itoa(pb.Index+1),
					IPv4: netip.PrefixFrom(addrAdd(netip.MustParseAddr("198.18.0.0"), uint64(2*i)), 31),
					IPv6: netip.PrefixFrom(addrAdd(netip.MustParseAddr("fd00:fb:1::"), uint64(2*i)), 127)}
				if l.A != wantA || l.B != wantB {
					t.Errorf("link %d: %+v / %+v, want %+v / %+v", i, l.A, l.B, wantA, wantB)
				}
				if l.RateBps != c.opt.RateBps || l.MTU != 0 {
					t.Errorf("link %d: rate %d mtu %d, want rate %d", i, l.RateBps, l.MTU, c.opt.RateBps)
				}
			}
			// Hosts route the fabric via their first NIC's leaf.
			for _, h := range f.Hosts {
				in := &f.Nodes[h]
				peer := f.Ports[f.Ports[in.Ports[0]].Peer]
				link := lab.Links[peer.Link]
				want := []string{
					"ip addr replace " + link.A.IPv4.String() + " dev eth1",
					"ip -6 addr replace " + link.A.IPv6.String() + " dev eth1 nodad",
					"ip route replace 198.18.0.0/15 via " + link.B.IPv4.Addr().String() + " dev eth1",
					"ip -6 route replace fd00::/8 via " + link.B.IPv6.Addr().String() + " dev eth1",
				}
				if got := lab.NodeByName(in.Name).Exec; strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%s: exec %q, want %q", in.Name, got, want)
				}
			}
		})
	}
}

// No two interfaces share an address, and every address lies in
// 198.18.0.0/15 or fd00::/8.
func TestAddressing(t *testing.T) {
	for _, c := range genCases {
		t.Run(c.name, func(t *testing.T) {
			_, _, lab := writeLab(t, generate(t, c.spec, c.opt))
			seen := map[netip.Addr]string{}
			add := func(p netip.Prefix, who string) {
				t.Helper()
				if !p.IsValid() {
					t.Errorf("%s: no address", who)
					return
				}
				if !FabricIPv4.Contains(p.Addr()) && !FabricIPv6.Contains(p.Addr()) {
					t.Errorf("%s: %s outside %s and %s", who, p, FabricIPv4, FabricIPv6)
				}
				if other, dup := seen[p.Addr()]; dup {
					t.Errorf("%s: %s also used by %s", who, p.Addr(), other)
				}
				seen[p.Addr()] = who
			}
			for i, l := range lab.Links {
				for _, e := range []Endpoint{l.A, l.B} {
					who := fmt.Sprintf("link %d %s:%s", i, e.Node, e.Interface)
					add(e.IPv4, who)
					add(e.IPv6, who)
				}
				if l.A.IPv4.Masked() != l.B.IPv4.Masked() || l.A.IPv4.Bits() != 31 || l.A.IPv6.Masked() != l.B.IPv6.Masked() || l.A.IPv6.Bits() != 127 {
					t.Errorf("link %d: ends not on one /31 and /127: %+v %+v", i, l.A, l.B)
				}
			}
			for _, n := range lab.Nodes {
				add(netip.PrefixFrom(n.Mgmt, 32), n.Name+" mgmt")
				if n.Role != "host" {
					add(n.Loopback, n.Name+" loopback")
				}
				if n.SRv6Locator.IsValid() {
					if !netip.MustParsePrefix("fd00:bbbb::/32").Contains(n.SRv6Locator.Addr()) || n.SRv6Locator.Bits() != 48 {
						t.Errorf("%s: locator %s", n.Name, n.SRv6Locator)
					}
					add(n.SRv6Locator, n.Name+" locator")
				}
			}
		})
	}
}

// neighborRe matches the neighbour definitions of an frr.conf.
var neighborRe = regexp.MustCompile(`(?m)^ neighbor (\S+) remote-as (\d+)$`)

func TestFRRConfLeaf(t *testing.T) {
	g := generate(t, "leafspine:leaves=4,spines=2,hosts_per_leaf=2", GenOptions{Name: "leafspine"})
	conf := string(g.Files["leafspine/leaf0/frr.conf"])
	ns := neighborRe.FindAllStringSubmatch(conf, -1)
	if len(ns) != 2*2 { // 2 uplinks, IPv4 and IPv6 session each
		t.Fatalf("%d neighbours, want 4:\n%s", len(ns), conf)
	}
	want := map[string]string{"198.18.0.16": "65000", "198.18.0.18": "65000", "fd00:fb:1::10": "65000", "fd00:fb:1::12": "65000"}
	for _, m := range ns {
		if want[m[1]] != m[2] {
			t.Errorf("neighbor %s remote-as %s unexpected", m[1], m[2])
		}
	}
	for _, line := range []string{
		"frr defaults datacenter", "hostname leaf0", "ip forwarding", "ipv6 forwarding",
		"router bgp 65101", " bgp router-id 198.19.255.1", " no bgp ebgp-requires-policy",
		" no bgp network import-check", " bgp bestpath as-path multipath-relax",
		" neighbor 198.18.0.16 description spine0:eth1", " neighbor 198.18.0.16 timers 1 3",
		" neighbor 198.18.0.16 timers connect 1", " neighbor fd00:fb:1::12 description spine1:eth1",
		"interface lo", " ip address 198.19.255.1/32", " ipv6 address fd00:fb:ff::1/128",
		"interface eth3", " description spine0:eth1",
	} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(line) + `$`).MatchString(conf) {
			t.Errorf("frr.conf lacks line %q", line)
		}
	}
	if n := strings.Count(conf, "\n  maximum-paths 64\n"); n != 2 {
		t.Errorf("maximum-paths 64 appears %d times, want 2 (IPv4 and IPv6)", n)
	}
	if n := strings.Count(conf, "\n  redistribute connected"); n != 2 {
		t.Errorf("redistribute connected appears %d times, want 2", n)
	}
	// Link addresses are configured on the interfaces (as the endpoints
	// say), for deployments where nothing else sets them.
	for _, iface := range []string{"eth1", "eth2"} {
		if !regexp.MustCompile(`(?m)^interface ` + iface + `\n description [^\n]+\n ip address 198\.18\.\d+\.\d+/31\n ipv6 address fd00:fb:1:[0-9a-f:]*/127\nexit$`).MatchString(conf) {
			t.Errorf("frr.conf: %s has no link addresses:\n%s", iface, conf)
		}
	}
	for _, bad := range []string{"no ipv6 forwarding", "bfd", "network fd00:bbbb"} {
		if strings.Contains(conf, bad) {
			t.Errorf("frr.conf contains %q", bad)
		}
	}
	// IPv4 sessions only in the IPv4 family, IPv6 sessions only in IPv6.
	v4 := section(conf, " address-family ipv4 unicast", " exit-address-family")
	v6 := section(conf, " address-family ipv6 unicast", " exit-address-family")
	for _, s := range []string{"  neighbor 198.18.0.16 activate", "  neighbor 198.18.0.18 activate", "  no neighbor fd00:fb:1::10 activate", "  no neighbor fd00:fb:1::12 activate"} {
		if !strings.Contains(v4, s+"\n") {
			t.Errorf("IPv4 family lacks %q:\n%s", s, v4)
		}
	}
	if strings.Contains(v6, "198.18.") || !strings.Contains(v6, "  neighbor fd00:fb:1::10 activate\n") || !strings.Contains(v6, "  neighbor fd00:fb:1::12 activate\n") {
		t.Errorf("IPv6 family:\n%s", v6)
	}
	// A spine peers with all four leaves.
	if n := len(neighborRe.FindAllString(string(g.Files["leafspine/spine0/frr.conf"]), -1)); n != 8 {
		t.Errorf("spine0 has %d neighbours, want 8", n)
	}
	// With SRv6 the locator is advertised.
	g6 := generate(t, "leafspine:leaves=4,spines=2,hosts_per_leaf=2", GenOptions{Name: "leafspine", SRv6: true})
	if v6 := section(string(g6.Files["leafspine/leaf0/frr.conf"]), " address-family ipv6 unicast", " exit-address-family"); !strings.Contains(v6, "  network fd00:bbbb:1::/48\n") {
		t.Errorf("SRv6 locator not advertised:\n%s", v6)
	}
	d := string(g.Files["leafspine/leaf0/daemons"])
	for _, line := range []string{"bgpd=yes", "zebra=yes", "staticd=yes", "bfdd=no", "ospfd=no", "vtysh_enable=yes", `frr_profile="datacenter"`,
		`zebra_options="  -A 127.0.0.1 -s 90000000 -n"`, `bgpd_options="   -A 127.0.0.1"`, `staticd_options="-A 127.0.0.1"`} {
		if !strings.Contains("\n"+d, "\n"+line+"\n") {
			t.Errorf("daemons lacks %q:\n%s", line, d)
		}
	}
}

// section returns the text between the lines start and end.
func section(s, start, end string) string {
	i := strings.Index(s, "\n"+start+"\n")
	if i < 0 {
		return ""
	}
	s = s[i+len(start)+2:]
	if j := strings.Index(s, "\n"+end+"\n"); j >= 0 {
		s = s[:j+1]
	}
	return s
}

// The ASN plan gives ECMP: a path-vector simulation of eBGP (loop
// prevention by AS_PATH, shortest AS_PATH wins, equal lengths are
// multipath) finds, at every leaf, each remote leaf through all of its
// uplinks, and at every spine of a 3-tier fabric each leaf of another pod
// through all of its core uplinks.
func TestASNPlanECMP(t *testing.T) {
	for _, spec := range []string{
		"leafspine:leaves=4,spines=2,hosts_per_leaf=2",
		"leafspine:leaves=3,spines=2,hosts_per_leaf=2,links_per_spine=2",
		"fattree:hosts=16,tiers=3",
		"fattree:hosts=54,tiers=3",
	} {
		t.Run(spec, func(t *testing.T) {
			_, _, lab := writeLab(t, generate(t, spec, GenOptions{Name: "ecmp"}))
			type adj struct {
				peer string
				link int
			}
			nbrs := map[string][]adj{}
			asn := map[string]uint32{}
			tier := map[string]int{"leaf": 0, "spine": 1, "super-spine": 2}
			role := map[string]string{}
			for _, n := range lab.Nodes {
				if n.Role != "host" {
					asn[n.Name], role[n.Name] = n.ASN, n.Role
				}
			}
			for i, l := range lab.Links {
				if role[l.A.Node] == "" || role[l.B.Node] == "" {
					continue
				}
				nbrs[l.A.Node] = append(nbrs[l.A.Node], adj{l.B.Node, i})
				nbrs[l.B.Node] = append(nbrs[l.B.Node], adj{l.A.Node, i})
			}
			rib := map[string]map[string]*ribEntry{}
			for sw := range asn {
				rib[sw] = map[string]*ribEntry{}
				if role[sw] == "leaf" {
					rib[sw][sw] = &ribEntry{paths: map[string][]uint32{"": nil}}
				}
			}
			for round := 0; round < 16; round++ {
				next := map[string]map[string]*ribEntry{}
				changed := false
				for u := range asn {
					next[u] = map[string]*ribEntry{}
					if role[u] == "leaf" {
						next[u][u] = rib[u][u]
					}
					for _, a := range nbrs[u] {
						for dst, b := range rib[a.peer] {
							if dst == u {
								continue
							}
							for _, p := range b.paths {
								np := append([]uint32{asn[a.peer]}, p...)
								loop := false
								for _, x := range np {
									loop = loop || x == asn[u]
								}
								if loop {
									continue
								}
								cur := next[u][dst]
								if cur != nil && len(np) > len(firstPath(cur.paths)) {
									continue
								}
								if cur == nil || len(np) < len(firstPath(cur.paths)) {
									cur = &ribEntry{paths: map[string][]uint32{}, hops: map[int]bool{}}
									next[u][dst] = cur
								}
								cur.paths[fmt.Sprint(np)] = np
								cur.hops[a.link] = true
							}
						}
					}
					if ribText(next[u]) != ribText(rib[u]) {
						changed = true
					}
				}
				rib = next
				if !changed {
					break
				}
			}
			for u := range asn {
				for v := range asn {
					if role[v] != "leaf" || u == v {
						continue
					}
					b := rib[u][v]
					if b == nil {
						t.Errorf("%s has no route to %s", u, v)
						continue
					}
					var up []int
					direct := false
					for _, a := range nbrs[u] {
						if tier[role[a.peer]] > tier[role[u]] {
							up = append(up, a.link)
						}
						direct = direct || a.peer == v
					}
					// Leaves, and spines for leaves they do not reach
					// directly, must spread over every uplink.
					if role[u] == "super-spine" || direct {
						continue
					}
					var hops []int
					for h := range b.hops {
						hops = append(hops, h)
					}
					sort.Ints(hops)
					if fmt.Sprint(hops) != fmt.Sprint(up) {
						t.Errorf("%s -> %s: ECMP over links %v, want all uplinks %v (paths %v)", u, v, hops, up, b.paths)
					}
				}
			}
		})
	}
}

// ribEntry is a simulated switch's best routes to one leaf.
type ribEntry struct {
	paths map[string][]uint32 // AS paths, by text
	hops  map[int]bool        // next-hop links
}

func firstPath(m map[string][]uint32) []uint32 {
	for _, p := range m {
		return p
	}
	return nil
}

// ribText renders a RIB canonically, to detect convergence.
func ribText(r map[string]*ribEntry) string {
	var b strings.Builder
	for _, dst := range sortedKeys(r) {
		e := r[dst]
		fmt.Fprintf(&b, "%s:%v:", dst, sortedKeys(e.paths))
		var hops []int
		for h := range e.hops {
			hops = append(hops, h)
		}
		sort.Ints(hops)
		fmt.Fprintf(&b, "%v;", hops)
	}
	return b.String()
}

// frrBinaries returns the paths of FRR 8.4's bgpd and vtysh, or skips.
func frrBinaries(t *testing.T) (bgpd, vtysh string) {
	t.Helper()
	bgpd = "/usr/lib/frr/bgpd"
	if _, err := os.Stat(bgpd); err != nil {
		t.Skipf("FRR is not installed (%v); frr.conf dry-run skipped", err)
	}
	vtysh, err := exec.LookPath("vtysh")
	if err != nil {
		t.Skipf("FRR's vtysh is not installed (%v); frr.conf dry-run skipped", err)
	}
	return bgpd, vtysh
}

// zebraOnly are the frr.conf lines bgpd does not know because zebra owns
// them; bgpd's dry run reports them as unknown commands.
var zebraOnly = []string{"ip forwarding", "ipv6 forwarding", "ip address ", "ipv6 address "}

var configLineRe = regexp.MustCompile(`(No such command|Config Failed|Ambiguous command|Unknown command)[^\n]*? on config line (\d+): ?(.*)`)

// frrDryRun checks a config file with FRR itself:
//
//	vtysh -C -f FILE         every line is valid FRR 8.4 syntax (all daemons);
//	bgpd -C -Z -S -n -p 0 -f FILE -i PIDFILE --vty_socket DIR
//	                         bgpd applies the file in dry-run mode: no
//	                         command fails ("Config Failed", e.g. activating
//	                         an undefined neighbour) and the only unknown
//	                         commands are zebra's.
func frrDryRun(t *testing.T, bgpd, vtysh, file string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, vtysh, "-C", "-f", file).CombinedOutput()
	if err != nil {
		return fmt.Errorf("vtysh -C -f %s: %v\n%s", file, err, out)
	}
	tmp := t.TempDir()
	cmd := exec.CommandContext(ctx, bgpd, "-C", "-Z", "-S", "-n", "-p", "0", "-f", file,
		"-i", filepath.Join(tmp, "bgpd.pid"), "--vty_socket", tmp)
	out, err = cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("bgpd -C -f %s: %v\n%s", file, err, out)
	}
	var bad []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "%") {
			bad = append(bad, line)
			continue
		}
		m := configLineRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		text := strings.TrimSpace(m[3])
		zebra := false
		for _, z := range zebraOnly {
			zebra = zebra || strings.HasPrefix(text+" ", z)
		}
		if m[1] != "No such command" || !zebra {
			bad = append(bad, line)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("bgpd -C -f %s:\n%s", file, strings.Join(bad, "\n"))
	}
	return nil
}

// The generated frr.conf files load in real FRR 8.4.
func TestFRRConfDryRun(t *testing.T) {
	bgpd, vtysh := frrBinaries(t)
	checked := 0
	for _, c := range genCases {
		if c.opt.SwitchKind == "sonic-vs" {
			continue
		}
		g := generate(t, c.spec, c.opt)
		dir := t.TempDir()
		if err := g.Write(dir); err != nil {
			t.Fatal(err)
		}
		for _, name := range sortedKeys(g.Files) {
			if !strings.HasSuffix(name, "/frr.conf") {
				continue
			}
			if err := frrDryRun(t, bgpd, vtysh, filepath.Join(dir, name)); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no frr.conf checked")
	}
	t.Logf("%d frr.conf files accepted by FRR (vtysh -C and bgpd -C)", checked)
}

// The dry run must be able to fail.
func TestFRRDryRunRejectsBrokenConfig(t *testing.T) {
	bgpd, vtysh := frrBinaries(t)
	g := generate(t, "leafspine:leaves=2,spines=2,hosts_per_leaf=1", GenOptions{Name: "neg", SRv6: true})
	good := string(g.Files["neg/leaf0/frr.conf"])
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := frrDryRun(t, bgpd, vtysh, write("good.conf", good)); err != nil {
		t.Fatalf("unbroken config rejected: %v", err)
	}
	for _, c := range []struct{ name, old, new string }{
		{"misspelt command", "  maximum-paths 64\n", "  maximum-pathz 64\n"},
		{"bad timer value", " timers 1 3\n", " timers 1 70000\n"},
		{"neighbour never defined", "  maximum-paths 64\n", "  maximum-paths 64\n  neighbor 198.18.99.99 activate\n"},
		{"bgp command at top level", "router bgp ", "bgp router-id 1.2.3.4\nrouter bgp "},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(good, c.old) {
				t.Fatalf("test bug: %q not in frr.conf", c.old)
			}
			bad := strings.Replace(good, c.old, c.new, 1)
			if err := frrDryRun(t, bgpd, vtysh, write("bad.conf", bad)); err == nil {
				t.Fatalf("broken config (%s) accepted", c.name)
			} else {
				t.Logf("rejected as expected: %v", err)
			}
		})
	}
}

// examplePaths lists the files of the committed example lab.
func examplePaths(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	if _, err := os.Stat(filepath.Join(root, "leafspine.clab.yml")); err == nil {
		out = append(out, "leafspine.clab.yml")
	}
	err := filepath.WalkDir(filepath.Join(root, "leafspine"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// exampleLab is how examples/labs/leafspine is generated.
func exampleLab(t *testing.T) *Generated {
	return generate(t, "leafspine:leaves=4,spines=2,hosts_per_leaf=2", GenOptions{Name: "leafspine", RateBps: 1_000_000_000})
}

// examples/labs holds exactly what the generator writes; go test
// ./containerlab -run TestExampleLabUpToDate -update rewrites it.
func TestExampleLabUpToDate(t *testing.T) {
	root := filepath.Join(repoRoot(t), "examples", "labs")
	g := exampleLab(t)
	if *update {
		for _, p := range examplePaths(t, root) {
			if err := os.Remove(filepath.Join(root, filepath.FromSlash(p))); err != nil {
				t.Fatal(err)
			}
		}
		if err := g.Write(root); err != nil {
			t.Fatal(err)
		}
	}
	got := examplePaths(t, root)
	want := sortedKeys(g.Files)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("examples/labs holds\n\t%s\nthe generator writes\n\t%s\n(run go test ./containerlab -run TestExampleLabUpToDate -update)",
			strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	for _, p := range want {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, g.Files[p]) {
			t.Errorf("examples/labs/%s differs from the generator's output (run go test ./containerlab -run TestExampleLabUpToDate -update)", p)
		}
	}
	// The committed example resolves in place.
	topo, err := Parse(filepath.Join(root, "leafspine.clab.yml"))
	if err != nil {
		t.Fatal(err)
	}
	lab, err := topo.Lab("")
	if err != nil {
		t.Fatal(err)
	}
	if len(lab.Nodes) != 14 || len(lab.Links) != 16 || lab.Links[0].RateBps != 1_000_000_000 {
		t.Fatalf("example lab: %d nodes, %d links, rate %d", len(lab.Nodes), len(lab.Links), lab.Links[0].RateBps)
	}
}

// TestGeneratedLabEqualsParsed: resolving a generated topology directly
// gives the Lab that parsing its written file gives.
func TestGeneratedLabEqualsParsed(t *testing.T) {
	cases := append(slices.Clone(genCases), genCases[0])
	cases[len(cases)-1].name = "netns" // as the netns backend generates
	cases[len(cases)-1].opt = GenOptions{Name: "fbn123456", MgmtSubnet: netip.MustParsePrefix("198.19.150.0/24"),
		LinkRates: true, MTU: 9000, SRv6: true}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := generate(t, c.spec, c.opt)
			dir, _, parsed := writeLab(t, g)
			direct, err := g.Resolve(dir, genRuntime(g))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(direct, parsed) {
				t.Errorf("direct Lab differs from the parsed file's:\n direct %+v\n parsed %+v", direct, parsed)
			}
		})
	}
}

// TestPlaneHostsRouteBySource: on a multi-plane fabric a host has a NIC
// port per plane; traffic from port i's address (plane i's agent sockets)
// leaves by port i, towards that plane's leaf, through a policy rule and
// a table of its own, in IPv4 and IPv6. Port 0 keeps the main table.
func TestPlaneHostsRouteBySource(t *testing.T) {
	f := fabric(t, "leafspine:leaves=2,spines=1,hosts_per_leaf=1,planes=2")
	g, err := Generate(f, GenOptions{Name: "planes"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, lab := writeLab(t, g)
	for _, h := range f.Hosts {
		in := &f.Nodes[h]
		if len(in.Ports) != 2 {
			t.Fatalf("%s has %d ports", in.Name, len(in.Ports))
		}
		var want []string
		for i, p := range in.Ports {
			l := lab.Links[f.Ports[p].Link]
			self, peer := l.A, l.B
			if self.Node != in.Name {
				self, peer = l.B, l.A
			}
			if f.Ports[p].Plane != i || self.Interface != "eth"+strconv.Itoa(i+1) {
				t.Fatalf("%s port %d: plane %d, interface %s", in.Name, i, f.Ports[p].Plane, self.Interface)
			}
			want = append(want, "ip addr replace "+self.IPv4.String()+" dev eth"+strconv.Itoa(i+1),
				"ip -6 addr replace "+self.IPv6.String()+" dev eth"+strconv.Itoa(i+1)+" nodad")
			if i == 0 {
				want = append(want, "ip route replace 198.18.0.0/15 via "+peer.IPv4.Addr().String()+" dev eth1",
					"ip -6 route replace fd00::/8 via "+peer.IPv6.Addr().String()+" dev eth1")
				continue
			}
			want = append(want, "ip rule add from "+self.IPv4.Addr().String()+" lookup 101 priority 101",
				"ip route replace 198.18.0.0/15 via "+peer.IPv4.Addr().String()+" dev eth2 table 101",
				"ip -6 rule add from "+self.IPv6.Addr().String()+" lookup 101 priority 101",
				"ip -6 route replace fd00::/8 via "+peer.IPv6.Addr().String()+" dev eth2 table 101")
		}
		if got := lab.NodeByName(in.Name).Exec; strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: exec\n%s\nwant\n%s", in.Name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
