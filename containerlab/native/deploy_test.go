package native_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/native"
	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
)

func TestDeployTinyLab(t *testing.T) {
	labtest.Require(t)
	d := native.New(native.WithStateRoot(t.TempDir()), native.WithReadyTimeout(60*time.Second), native.WithLogf(t.Logf))
	lab := labtest.Tiny(t, "fbtest-tiny")
	ctx := context.Background()
	t.Cleanup(func() {
		if _, err := d.Destroy(context.Background(), lab.Name, names(lab)); err != nil {
			t.Errorf("destroy: %v", err)
		}
	})
	start := time.Now()
	st, err := d.Deploy(ctx, lab)
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}
	t.Logf("deployed and ready in %s", time.Since(start))
	up := labtest.TakeSnapshot(t, lab.Name)

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

	rep, err := d.Destroy(ctx, lab.Name, names(lab))
	if err != nil {
		t.Fatalf("destroy: %v", err)
	}
	t.Logf("destroy removed: %s", rep)
	if len(rep.Namespaces) != 6 {
		t.Errorf("destroy removed namespaces %v, want 6", rep.Namespaces)
	}
	labtest.CheckGone(t, lab.Name, up)
}

// A crashed deployment (process gone, state directory lost) is found by
// lab and node names and removed by the next Destroy.
func TestDestroyLeftovers(t *testing.T) {
	labtest.Require(t)
	root := t.TempDir()
	d := native.New(native.WithStateRoot(root), native.WithReadyTimeout(60*time.Second))
	lab := labtest.Tiny(t, "fbtest-crash")
	t.Cleanup(func() { d.Destroy(context.Background(), lab.Name, names(lab)) })
	if _, err := d.Deploy(context.Background(), lab); err != nil {
		t.Fatalf("deploy: %v", err)
	}
	up := labtest.TakeSnapshot(t, lab.Name)
	if err := os.RemoveAll(filepath.Join(root, lab.Name)); err != nil {
		t.Fatal(err)
	}
	rep, err := native.New(native.WithStateRoot(root)).Destroy(context.Background(), lab.Name, names(lab))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Namespaces) != 6 || len(rep.Processes) == 0 {
		t.Errorf("leftover cleanup removed %d namespaces and %d processes: %s", len(rep.Namespaces), len(rep.Processes), rep)
	}
	labtest.CheckGone(t, lab.Name, up)
}

// A deployment that fails half way removes what it made.
func TestDeployFailureRollsBack(t *testing.T) {
	labtest.Require(t)
	d := native.New(native.WithStateRoot(t.TempDir()), native.WithReadyTimeout(30*time.Second))
	lab := labtest.Tiny(t, "fbtest-fail")
	lab.Nodes[0].Exec = append(lab.Nodes[0].Exec, "ip route add 198.18.0.0/15 via 203.0.113.1") // unreachable gateway: fails
	t.Cleanup(func() { d.Destroy(context.Background(), lab.Name, names(lab)) })
	_, err := d.Deploy(context.Background(), lab)
	if err == nil || !strings.Contains(err.Error(), "node host0: exec") {
		t.Fatalf("deploy with a failing exec: err = %v", err)
	}
	if after := labtest.TakeSnapshot(t, lab.Name); !after.Empty() {
		t.Errorf("failed deploy left: %s", after)
	}
}

func names(lab *containerlab.Lab) []string {
	var out []string
	for _, n := range lab.Nodes {
		out = append(out, n.Name)
	}
	return out
}

// copyDir copies a corpus lab into a temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestDeployBridgeLAN deploys the corpus's bridge LAN natively: a bridge
// node (a bridge in a namespace of its own), routers whose whole /etc/frr
// is a bound directory, OSPF over the LAN (readiness waits for Full
// adjacencies), hosts configured by exec reaching each other through it.
func TestDeployBridgeLAN(t *testing.T) {
	labtest.Require(t)
	dir := copyDir(t, filepath.Join("..", "testdata", "corpus", "bridge-lan"))
	top, err := containerlab.Parse(filepath.Join(dir, "bridge-lan.clab.yml"))
	if err != nil {
		t.Fatal(err)
	}
	lab, err := top.Resolve("", containerlab.RuntimeNative)
	if err != nil {
		t.Fatal(err)
	}
	d := native.New(native.WithStateRoot(t.TempDir()), native.WithReadyTimeout(90*time.Second), native.WithLogf(t.Logf))
	t.Cleanup(func() {
		if _, err := d.Destroy(context.Background(), lab.Name, names(lab)); err != nil {
			t.Errorf("destroy: %v", err)
		}
		if s := labtest.TakeSnapshot(t, lab.Name); !s.Empty() {
			t.Errorf("left behind: %s", s)
		}
	})
	ctx := context.Background()
	st, err := d.Deploy(ctx, lab)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := d.Exec(ctx, st, "gw1", "vtysh -c 'show ip ospf neighbor'"); err != nil || !strings.Contains(out, "Full") {
		t.Errorf("gw1 OSPF neighbours: %v\n%s", err, out)
	}
	// h1 and h2 are on the LAN; h3 is behind core.
	for _, dst := range []string{"198.18.1.12", "198.18.1.13"} {
		if out, err := d.Exec(ctx, st, "h1", "ping -c 2 -W 1 -i 0.2 "+dst); err != nil {
			t.Errorf("h1 -> %s: %v\n%s", dst, err, out)
		}
	}
	if br, ok := st.Node("br-lan"); !ok || br.Transport != "" || br.Mgmt != "" {
		t.Errorf("bridge node state %+v: a bridge has no management address or shell", br)
	}
}

// TestDeployStubsAndEnv: dummy and mgmt-net links, a MAC on an endpoint,
// env and env-files seen by exec, and startup-delay.
func TestDeployStubsAndEnv(t *testing.T) {
	labtest.Require(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lab.env"), []byte("# the site\nexport SITE=\"lab-a\"\nRACK=r1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := `name: fbtest-stubs
mgmt: {ipv4-subnet: 198.19.231.0/24}
topology:
  defaults: {kind: linux, image: alpine}
  nodes:
    a:
      env: {ROLE: probe}
      env-files: [lab.env]
      startup-delay: 1
      exec: ["echo $SITE-$RACK-$ROLE > /tmp/fbtest-stubs-env"]
    b: {}
  links:
    - type: veth
      endpoints:
        - {node: a, interface: eth1, mac: "02:00:00:00:0a:01", ipv4: 198.18.9.1/31}
        - {node: b, interface: eth1, ipv4: 198.18.9.0/31}
    - type: dummy
      endpoint: {node: a, interface: dummy0}
    - endpoints: ["a:eth9", "mgmt-net:a-eth9"]
`
	path := filepath.Join(dir, "stubs.clab.yml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	top, err := containerlab.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	lab, err := top.Resolve("", containerlab.RuntimeNative)
	if err != nil {
		t.Fatal(err)
	}
	d := native.New(native.WithStateRoot(t.TempDir()), native.WithReadyTimeout(60*time.Second), native.WithLogf(t.Logf))
	t.Cleanup(func() {
		if _, err := d.Destroy(context.Background(), lab.Name, names(lab)); err != nil {
			t.Errorf("destroy: %v", err)
		}
		os.Remove("/tmp/fbtest-stubs-env")
		if s := labtest.TakeSnapshot(t, lab.Name); !s.Empty() {
			t.Errorf("left behind: %s", s)
		}
	})
	ctx := context.Background()
	start := time.Now()
	st, err := d.Deploy(ctx, lab)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < time.Second {
		t.Errorf("deployed in %s despite a startup-delay of 1 s", time.Since(start))
	}
	if out, err := d.Exec(ctx, st, "a", "cat /tmp/fbtest-stubs-env"); err != nil || strings.TrimSpace(out) != "lab-a-r1-probe" {
		t.Errorf("env seen by exec: %q %v", out, err)
	}
	if out, _ := d.Exec(ctx, st, "a", "cat /sys/class/net/eth1/address"); strings.TrimSpace(out) != "02:00:00:00:0a:01" {
		t.Errorf("eth1 MAC %q", out)
	}
	if out, err := d.Exec(ctx, st, "a", "ip -br link show dummy0 && ip -br link show eth9"); err != nil || !strings.Contains(out, "UP") {
		t.Errorf("stub interfaces: %v\n%s", err, out)
	}
	if out, err := d.Exec(ctx, st, "a", "ping -c 1 -W 1 198.18.9.0"); err != nil {
		t.Errorf("a -> b: %v\n%s", err, out)
	}
}
