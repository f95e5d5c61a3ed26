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
