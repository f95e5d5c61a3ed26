// Package labtest gives tests a small real lab: FRR routers and hosts in
// network namespaces, deployed with the native deployer and always torn
// down. Tests skip with a printed reason when the machine cannot run it.
package labtest

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/native"
)

// Require skips (with the reason printed) when this machine cannot run
// a native lab.
func Require(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("native lab tests need root (network namespaces); run ./scripts/test.sh as root")
	}
	for _, p := range []string{"/usr/lib/frr/zebra", "/usr/lib/frr/bgpd", "/usr/sbin/sshd"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("native lab tests need FRR and OpenSSH server (%s missing; ./scripts/test.sh installs them)", p)
		}
	}
}

// Snapshot is what a lab must leave behind unchanged.
type Snapshot struct{ NetNS, Links, Procs string }

func TakeSnapshot(t *testing.T) Snapshot {
	t.Helper()
	ns, _ := exec.Command("ip", "netns", "list").CombinedOutput()
	links, _ := exec.Command("ip", "-o", "link", "show").CombinedOutput()
	// Link lines carry counters-free attributes only; strip the ifindex
	// numbering differences by keeping names.
	var names []string
	for _, l := range strings.Split(string(links), "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			names = append(names, f[1])
		}
	}
	sort.Strings(names)
	return Snapshot{NetNS: string(ns), Links: strings.Join(names, " "), Procs: strings.Join(labProcs(), ",")}
}

// labProcs lists the lab daemons running anywhere on the machine.
func labProcs() []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		c := procCommStr(e.Name())
		if stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); strings.Contains(string(stat), ") Z ") {
			continue // a zombie waiting for init to reap it
		}
		switch c {
		case "zebra", "bgpd", "staticd", "sshd", "sleep", "mgmtd":
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

func procCommStr(pid string) string {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "comm"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Tiny is spine0 over leaf0 and leaf1, one host behind each leaf.
func Tiny(t *testing.T, name string) *containerlab.Lab {
	t.Helper()
	dir := t.TempDir()
	p := netip.MustParsePrefix
	a := netip.MustParseAddr
	conf := func(node string, asn int, rid string, peers map[string]int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "frr defaults datacenter\nhostname %s\nip forwarding\n!\nrouter bgp %d\n bgp router-id %s\n no bgp ebgp-requires-policy\n bgp bestpath as-path multipath-relax\n", node, asn, rid)
		keys := make([]string, 0, len(peers))
		for k := range peers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, " neighbor %s remote-as %d\n neighbor %s timers 1 3\n neighbor %s timers connect 1\n", k, peers[k], k, k)
		}
		b.WriteString(" address-family ipv4 unicast\n  redistribute connected\n  maximum-paths 64\n exit-address-family\nexit\n")
		path := filepath.Join(dir, node+".conf")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	sys := map[string]string{"net.ipv4.ip_forward": "1", "net.ipv4.fib_multipath_hash_policy": "1"}
	lab := &containerlab.Lab{
		Name: name, Dir: dir, Mgmt: p("198.19.251.0/24"),
		Nodes: []*containerlab.Node{
			{Name: "host0", Kind: "linux", Role: "host", OS: "linux", Mgmt: a("198.19.251.21"),
				Exec: []string{"ip route replace 198.18.0.0/15 via 198.18.0.4 dev eth1"}},
			{Name: "host1", Kind: "linux", Role: "host", OS: "linux", Mgmt: a("198.19.251.22"),
				Exec: []string{"ip route replace 198.18.0.0/15 via 198.18.0.6 dev eth1"}},
			{Name: "leaf0", Kind: "linux", Role: "leaf", OS: "frr", Mgmt: a("198.19.251.12"), Sysctls: sys,
				FRRConfig: conf("leaf0", 65101, "198.19.255.2", map[string]int{"198.18.0.0": 65000})},
			{Name: "leaf1", Kind: "linux", Role: "leaf", OS: "frr", Mgmt: a("198.19.251.13"), Sysctls: sys,
				FRRConfig: conf("leaf1", 65102, "198.19.255.3", map[string]int{"198.18.0.2": 65000})},
			{Name: "spine0", Kind: "linux", Role: "spine", OS: "frr", Mgmt: a("198.19.251.11"), Sysctls: sys,
				FRRConfig: conf("spine0", 65000, "198.19.255.1", map[string]int{"198.18.0.1": 65101, "198.18.0.3": 65102})},
		},
		Links: []*containerlab.Link{
			{A: containerlab.Endpoint{Node: "leaf0", Interface: "eth1", IPv4: p("198.18.0.1/31")}, B: containerlab.Endpoint{Node: "spine0", Interface: "eth1", IPv4: p("198.18.0.0/31")}, RateBps: 1e9},
			{A: containerlab.Endpoint{Node: "leaf1", Interface: "eth1", IPv4: p("198.18.0.3/31")}, B: containerlab.Endpoint{Node: "spine0", Interface: "eth2", IPv4: p("198.18.0.2/31")}, RateBps: 1e9},
			{A: containerlab.Endpoint{Node: "host0", Interface: "eth1", IPv4: p("198.18.0.5/31")}, B: containerlab.Endpoint{Node: "leaf0", Interface: "eth2", IPv4: p("198.18.0.4/31")}, MTU: 9000},
			{A: containerlab.Endpoint{Node: "host1", Interface: "eth1", IPv4: p("198.18.0.7/31")}, B: containerlab.Endpoint{Node: "leaf1", Interface: "eth2", IPv4: p("198.18.0.6/31")}},
		},
	}
	return lab
}

// Start deploys lab (skipping the test when the machine cannot) and tears
// it down when the test ends, also when it fails.
func Start(t *testing.T, lab *containerlab.Lab) (*native.Deployer, *native.State) {
	t.Helper()
	Require(t)
	d := native.New(native.WithStateRoot(t.TempDir()), native.WithReadyTimeout(60*time.Second), native.WithLogf(t.Logf))
	names := make([]string, len(lab.Nodes))
	for i, n := range lab.Nodes {
		names[i] = n.Name
	}
	t.Cleanup(func() {
		if _, err := d.Destroy(context.Background(), lab.Name, names); err != nil {
			t.Errorf("destroy lab %s: %v", lab.Name, err)
		}
	})
	st, err := d.Deploy(context.Background(), lab, "")
	if err != nil {
		t.Fatalf("deploy lab %s: %v", lab.Name, err)
	}
	return d, st
}
