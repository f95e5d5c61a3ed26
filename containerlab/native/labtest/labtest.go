// Package labtest gives tests a small real lab: FRR routers and hosts in
// network namespaces, deployed with the native deployer and always torn
// down. Tests skip with a printed reason when the machine cannot run it.
package labtest

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/native"
	"github.com/fabricbench/fabricbench/drivers"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
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

// Snapshot is what of one lab exists on the machine: its namespaces
// (ip netns list), its interfaces in the root namespace (ip link) and the
// processes in its namespaces. Packages run in parallel, so it looks only
// at the named lab, never at the whole machine.
type Snapshot struct {
	NetNS []string
	Links []string
	PIDs  []int
}

// Empty reports whether nothing of the lab exists.
func (s Snapshot) Empty() bool { return len(s.NetNS) == 0 && len(s.Links) == 0 && len(s.PIDs) == 0 }

func (s Snapshot) String() string {
	return fmt.Sprintf("namespaces %v, root interfaces %v, processes %v", s.NetNS, s.Links, s.PIDs)
}

// TakeSnapshot records what of lab exists now.
func TakeSnapshot(t *testing.T, lab string) Snapshot {
	t.Helper()
	var s Snapshot
	out, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns list: %v %s", err, out)
	}
	inodes := map[uint64]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || !(strings.HasPrefix(f[0], "clab-"+lab+"-") || f[0] == native.MgmtNamespace(lab)) {
			continue
		}
		s.NetNS = append(s.NetNS, f[0])
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join("/run/netns", f[0]), &st) == nil {
			inodes[st.Ino] = true
		}
	}
	sort.Strings(s.NetNS)
	out, err = exec.Command("ip", "-o", "link", "show").CombinedOutput()
	if err != nil {
		t.Fatalf("ip link: %v %s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[1], native.RootInterface(lab)) {
			s.Links = append(s.Links, strings.TrimSuffix(f[1], ":"))
		}
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join("/proc", e.Name(), "ns/net"), &st) == nil && inodes[st.Ino] {
			s.PIDs = append(s.PIDs, pid)
		}
	}
	return s
}

// Alive returns the processes of pids that still run (zombies waiting for
// init to reap them do not count).
func Alive(pids []int) []string {
	var out []string
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			continue
		}
		out = append(out, fmt.Sprintf("%d (%s)", pid, procCommStr(strconv.Itoa(pid))))
	}
	return out
}

// CheckGone fails the test unless nothing of the lab is left and every
// process it had while up (up.PIDs) has ended.
func CheckGone(t *testing.T, lab string, up Snapshot) {
	t.Helper()
	if len(up.PIDs) == 0 || len(up.NetNS) == 0 || len(up.Links) == 0 {
		t.Errorf("snapshot of lab %s while up is incomplete: %s", lab, up)
	}
	if after := TakeSnapshot(t, lab); !after.Empty() {
		t.Errorf("lab %s left: %s", lab, after)
	}
	if left := Alive(up.PIDs); len(left) > 0 {
		t.Errorf("lab %s left processes running: %v", lab, left)
	}
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
	st, err := d.Deploy(context.Background(), lab)
	if err != nil {
		t.Fatalf("deploy lab %s: %v", lab.Name, err)
	}
	return d, st
}

// TinyAt is Tiny on the management /24 subnet mgmt (each node keeps its
// host part), for packages whose labs run at the same time.
func TinyAt(t *testing.T, name, mgmt string) *containerlab.Lab {
	t.Helper()
	lab := Tiny(t, name)
	p := netip.MustParsePrefix(mgmt)
	if p.Bits() != 24 || !p.Addr().Is4() {
		t.Fatalf("TinyAt wants an IPv4 /24, got %s", p)
	}
	lab.Mgmt = p
	base := p.Addr().As4()
	for _, n := range lab.Nodes {
		a := n.Mgmt.As4()
		a[0], a[1], a[2] = base[0], base[1], base[2]
		n.Mgmt = netip.AddrFrom4(a)
	}
	return lab
}

// Lab is a deployed test lab.
type Lab struct {
	D   *native.Deployer
	St  *native.State
	Key []byte // the lab's SSH client key
}

// StartLab is Start returning a Lab.
func StartLab(t *testing.T, lab *containerlab.Lab) *Lab {
	t.Helper()
	d, st := Start(t, lab)
	key, err := os.ReadFile(st.Key)
	if err != nil {
		t.Fatal(err)
	}
	return &Lab{D: d, St: st, Key: key}
}

// Config is the driver configuration of a lab node.
func (l *Lab) Config(t *testing.T, node string) drivers.Config {
	t.Helper()
	ns, ok := l.St.Node(node)
	if !ok {
		t.Fatalf("lab has no node %s", node)
	}
	return drivers.Config{Device: node, Address: ns.Mgmt, KnownHosts: l.St.KnownHosts, Timeout: 20 * time.Second,
		Auth: drivers.Auth{User: l.St.User, PrivateKey: l.Key}}
}

// Sh runs a command in a node through the deployer (not a driver).
func (l *Lab) Sh(t *testing.T, node, cmd string) string {
	t.Helper()
	out, err := l.D.Exec(context.Background(), l.St, node, cmd)
	if err != nil {
		t.Fatalf("%s: %s: %v\n%s", node, cmd, err, out)
	}
	return out
}

// Agent starts an in-process ssh-agent holding the lab's key, points
// SSH_AUTH_SOCK at it for the rest of the test and returns its keyring.
func (l *Lab) Agent(t *testing.T) agent.Agent {
	t.Helper()
	raw, err := ssh.ParseRawPrivateKey(l.Key)
	if err != nil {
		t.Fatal(err)
	}
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: raw}); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); agent.ServeAgent(keyring, c) }()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
	return keyring
}

// Proc is a running process: its PID, command line (spaces between the
// arguments) and network namespace ("net:[4026532177]").
type Proc struct {
	PID   string
	Cmd   string
	Netns string
}

// Procs lists the running (not zombie) processes whose command line
// contains substr. Test packages run in parallel and several deploy
// fabricbench into labs of their own, so a test judges what is left of
// its own run by the processes' namespaces, not by name alone.
func Procs(substr string) []Proc {
	var out []Proc
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		c := strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))
		if !strings.Contains(c, substr) || strings.Contains(string(stat), ") Z ") {
			continue
		}
		ns, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "net"))
		if err != nil {
			continue // gone meanwhile
		}
		out = append(out, Proc{PID: e.Name(), Cmd: c, Netns: ns})
	}
	return out
}

// NetnsByName maps the namespaces mounted under /run/netns whose names
// start with prefix ("" for all) to their names, keyed as /proc/PID/ns/net
// reads ("net:[4026532177]").
func NetnsByName(prefix string) map[string]string {
	m := map[string]string{}
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join("/run/netns", e.Name()), &st); err == nil {
			m[fmt.Sprintf("net:[%d]", st.Ino)] = e.Name()
		}
	}
	return m
}
