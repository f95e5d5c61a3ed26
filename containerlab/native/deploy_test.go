package native

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fabricbench/fabricbench/containerlab"
)

// requireLab skips (with the reason printed) when this machine cannot run
// a native lab.
func requireLab(t *testing.T) {
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

// snapshot is what a lab must leave behind unchanged.
type snapshot struct{ netns, links, procs string }

func takeSnapshot(t *testing.T) snapshot {
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
	return snapshot{netns: string(ns), links: strings.Join(names, " "), procs: strings.Join(labProcs(), ",")}
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

// tinyLab is spine0 over leaf0 and leaf1, one host behind each leaf.
func tinyLab(t *testing.T, name string) *containerlab.Lab {
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

func TestDeployTinyLab(t *testing.T) {
	requireLab(t)
	before := takeSnapshot(t)
	d := New(WithStateRoot(t.TempDir()), WithReadyTimeout(60*time.Second), WithLogf(t.Logf))
	lab := tinyLab(t, "fbtest-tiny")
	ctx := context.Background()
	t.Cleanup(func() {
		if _, err := d.Destroy(context.Background(), lab.Name, nodeNames(lab)); err != nil {
			t.Errorf("destroy: %v", err)
		}
	})
	start := time.Now()
	st, err := d.Deploy(ctx, lab, "")
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}
	t.Logf("deployed and ready in %s", time.Since(start))

	if os.Getenv("FB_DEBUG_HOLD") != "" {
		time.Sleep(120 * time.Second)
	}
	// Host to host across the fabric.
	out, err := d.Exec(ctx, st, "host0", "ping -c 2 -W 1 -i 0.2 198.18.0.7")
	if err != nil {
		t.Fatalf("ping host0 -> host1: %v\n%s", err, out)
	}
	// Each node has its own hostname.
	if out, err := d.Exec(ctx, st, "leaf1", "hostname"); err != nil || strings.TrimSpace(out) != "leaf1" {
		t.Errorf("hostname in leaf1 = %q, %v", out, err)
	}
	// tbf shaping on the spine links, MTU on the host link.
	if out, _ := d.Exec(ctx, st, "spine0", "tc qdisc show dev eth1"); !strings.Contains(out, "tbf") || !strings.Contains(out, "rate 1Gbit") {
		t.Errorf("spine0 eth1 qdisc: %s", out)
	}
	if out, _ := d.Exec(ctx, st, "host0", "cat /sys/class/net/eth1/mtu"); strings.TrimSpace(out) != "9000" {
		t.Errorf("host0 eth1 mtu = %q", out)
	}
	// SSH with host key verification against the lab's known_hosts.
	sshRun := func(node, cmd string) (string, error) {
		ns, _ := st.Node(node)
		key, err := os.ReadFile(st.Key)
		if err != nil {
			return "", err
		}
		signer, err := ssh.ParsePrivateKey(key)
		if err != nil {
			return "", err
		}
		hk, err := knownhosts.New(st.KnownHosts)
		if err != nil {
			return "", err
		}
		c, err := ssh.Dial("tcp", net.JoinHostPort(ns.Mgmt, "22"), &ssh.ClientConfig{
			User: st.User, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)}, HostKeyCallback: hk, Timeout: 5 * time.Second,
		})
		if err != nil {
			return "", err
		}
		defer c.Close()
		s, err := c.NewSession()
		if err != nil {
			return "", err
		}
		defer s.Close()
		b, err := s.CombinedOutput(cmd)
		return string(b), err
	}
	out, err = sshRun("leaf0", "hostname; vtysh -c 'show bgp summary json'")
	if err != nil {
		t.Fatalf("ssh leaf0: %v", err)
	}
	if !strings.HasPrefix(out, "leaf0\n") || !strings.Contains(out, `"state":"Established"`) {
		t.Errorf("ssh leaf0 output:\n%s", out)
	}
	// A host key that does not match is refused: present spine0's address
	// with leaf0's entry removed from a copy of known_hosts.
	kh, _ := os.ReadFile(st.KnownHosts)
	var other []string
	for _, l := range strings.Split(strings.TrimSpace(string(kh)), "\n") {
		if !strings.HasPrefix(l, "leaf0,") {
			other = append(other, l)
		}
	}
	bad := filepath.Join(t.TempDir(), "known_hosts")
	os.WriteFile(bad, []byte(strings.Join(other, "\n")+"\n"), 0o644)
	st2 := *st
	st2.KnownHosts = bad
	st = &st2
	if _, err := sshRun("leaf0", "true"); err == nil || !strings.Contains(err.Error(), "knownhosts") {
		t.Errorf("ssh to leaf0 without its known_hosts entry: err = %v, want a knownhosts error", err)
	}

	rep, err := d.Destroy(ctx, lab.Name, nodeNames(lab))
	if err != nil {
		t.Fatalf("destroy: %v", err)
	}
	t.Logf("destroy removed: %s", rep)
	if len(rep.Namespaces) != 6 {
		t.Errorf("destroy removed namespaces %v, want 6", rep.Namespaces)
	}
	after := takeSnapshot(t)
	if after != before {
		t.Errorf("lab left traces:\nnetns before %q after %q\nlinks before %q\nafter  %q\nprocs before %q after %q",
			before.netns, after.netns, before.links, after.links, before.procs, after.procs)
	}
}

// A crashed deployment (process gone, state directory lost) is found by
// lab and node names and removed by the next Destroy.
func TestDestroyLeftovers(t *testing.T) {
	requireLab(t)
	before := takeSnapshot(t)
	root := t.TempDir()
	d := New(WithStateRoot(root), WithReadyTimeout(60*time.Second))
	lab := tinyLab(t, "fbtest-crash")
	t.Cleanup(func() { d.Destroy(context.Background(), lab.Name, nodeNames(lab)) })
	if _, err := d.Deploy(context.Background(), lab, ""); err != nil {
		t.Fatalf("deploy: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(root, lab.Name)); err != nil {
		t.Fatal(err)
	}
	rep, err := New(WithStateRoot(root)).Destroy(context.Background(), lab.Name, nodeNames(lab))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Namespaces) != 6 || len(rep.Processes) == 0 {
		t.Errorf("leftover cleanup removed %d namespaces and %d processes: %s", len(rep.Namespaces), len(rep.Processes), rep)
	}
	if after := takeSnapshot(t); after != before {
		t.Errorf("leftovers remain: netns %q links %q procs %q", after.netns, after.links, after.procs)
	}
}

// A deployment that fails half way removes what it made.
func TestDeployFailureRollsBack(t *testing.T) {
	requireLab(t)
	before := takeSnapshot(t)
	d := New(WithStateRoot(t.TempDir()), WithReadyTimeout(30*time.Second))
	lab := tinyLab(t, "fbtest-fail")
	lab.Nodes[0].Exec = append(lab.Nodes[0].Exec, "ip route add 198.18.0.0/15 via 203.0.113.1") // unreachable gateway: fails
	t.Cleanup(func() { d.Destroy(context.Background(), lab.Name, nodeNames(lab)) })
	_, err := d.Deploy(context.Background(), lab, "")
	if err == nil || !strings.Contains(err.Error(), "node host0: exec") {
		t.Fatalf("deploy with a failing exec: err = %v", err)
	}
	if after := takeSnapshot(t); after != before {
		t.Errorf("failed deploy left traces: netns %q links %q procs %q", after.netns, after.links, after.procs)
	}
}
