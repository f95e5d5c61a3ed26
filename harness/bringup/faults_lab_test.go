package bringup_test

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/containerlab"
	_ "github.com/fabricbench/fabricbench/containerlab/clabrt"
	"github.com/fabricbench/fabricbench/containerlab/labrt"
	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	_ "github.com/fabricbench/fabricbench/drivers/frr"
	_ "github.com/fabricbench/fabricbench/drivers/linux"
	"github.com/fabricbench/fabricbench/harness/bringup"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
)

// labFault is a fault the way labs break, injected into a running lab by
// hand (as a user would), and what bring-up validation must name: one
// cause of kind, on device and port.
type labFault struct {
	name, kind, dev, ifname string
	inject, revert          func(t *testing.T, l *faultLab)
}

// faultLab is a deployed generated lab (4 leaves, 2 spines, 8 hosts, links
// at MTU 9000, SRv6 locators) with helpers to break it.
type faultLab struct {
	rt     labrt.Runtime
	lab    *containerlab.Lab
	st     *labrt.State
	target *bringup.Target
}

func (l *faultLab) net(t *testing.T, node, script string) {
	t.Helper()
	if out, err := l.rt.NetExec(context.Background(), l.st, node, script); err != nil {
		t.Fatalf("%s: %s: %v\n%s", node, script, err, out)
	}
}

func (l *faultLab) vtysh(t *testing.T, node string, lines ...string) {
	t.Helper()
	args := []string{"vtysh", "-c", "'conf t'"}
	for _, ln := range lines {
		args = append(args, "-c", "'"+ln+"'")
	}
	if out, err := l.rt.Exec(context.Background(), l.st, node, strings.Join(args, " ")); err != nil {
		t.Fatalf("%s: vtysh %v: %v\n%s", node, lines, err, out)
	}
}

// endpoint returns a link end's intended addresses.
func (l *faultLab) endpoint(t *testing.T, node, ifname string) containerlab.Endpoint {
	t.Helper()
	for _, k := range l.lab.Links {
		for _, e := range []containerlab.Endpoint{k.A, k.B} {
			if e.Node == node && e.Interface == ifname {
				return e
			}
		}
	}
	t.Fatalf("no link end %s:%s", node, ifname)
	return containerlab.Endpoint{}
}

// rewire replaces the veth pairs of leaf:ifA and leaf:ifB with pairs from
// leaf:ifA to peerB and from leaf:ifB to peerA (and back when swapped is
// false): a moved cable, each port keeping its name and addresses.
func (l *faultLab) rewire(t *testing.T, leaf, ifA, ifB string, peerA, peerB [2]string, swapped bool) {
	t.Helper()
	pid := func(node string) string {
		ns, _ := l.st.Node(node)
		return strconv.Itoa(ns.Init)
	}
	l.net(t, leaf, fmt.Sprintf("ip link del %s; ip link del %s", ifA, ifB))
	pairs := [][2][2]string{{{leaf, ifA}, peerA}, {{leaf, ifB}, peerB}}
	if swapped {
		pairs = [][2][2]string{{{leaf, ifA}, peerB}, {{leaf, ifB}, peerA}}
	}
	for i, p := range pairs {
		a, b := p[0], p[1]
		ta, tb := fmt.Sprintf("fbta%d", i), fmt.Sprintf("fbtb%d", i)
		if out, err := exec.Command("ip", "link", "add", ta, "netns", pid(a[0]), "mtu", "9000", "type", "veth", "peer", "name", tb, "netns", pid(b[0]), "mtu", "9000").CombinedOutput(); err != nil {
			t.Fatalf("veth %v -- %v: %v %s", a, b, err, out)
		}
		for _, end := range []struct{ node, tmp, name string }{{a[0], ta, a[1]}, {b[0], tb, b[1]}} {
			e := l.endpoint(t, end.node, end.name)
			l.net(t, end.node, fmt.Sprintf("ip link set %s name %s && ip addr replace %s dev %s && ip -6 addr replace %s dev %s nodad && ip link set %s up",
				end.tmp, end.name, e.IPv4, end.name, e.IPv6, end.name, end.name))
		}
	}
}

// labFaults are the faults of issue 27 on the generated lab: port names
// follow containerlab.Generate (hosts on eth1, eth2; leaf uplinks eth3 to
// spine0 and eth4 to spine1; spine port i to leaf i-1).
var labFaults = []labFault{
	{"BGP session shut", "bgp-shutdown", "leaf1", "eth3",
		func(t *testing.T, l *faultLab) {
			l.vtysh(t, "leaf1", "router bgp 65102", "neighbor "+l.endpoint(t, "spine0", "eth2").IPv4.Addr().String()+" shutdown")
		},
		func(t *testing.T, l *faultLab) {
			l.vtysh(t, "leaf1", "router bgp 65102", "no neighbor "+l.endpoint(t, "spine0", "eth2").IPv4.Addr().String()+" shutdown")
		}},
	{"maximum-paths 1", "ecmp-config", "leaf3", "",
		func(t *testing.T, l *faultLab) {
			l.vtysh(t, "leaf3", "router bgp 65104", "address-family ipv4 unicast", "maximum-paths 1")
		},
		func(t *testing.T, l *faultLab) {
			l.vtysh(t, "leaf3", "router bgp 65104", "address-family ipv4 unicast", "maximum-paths 64")
		}},
	{"wrong host gateway", "gateway", "host5", "eth1",
		func(t *testing.T, l *faultLab) {
			l.net(t, "host5", "ip route replace 198.18.0.0/15 via 198.18.0.99 dev eth1 onlink")
		},
		func(t *testing.T, l *faultLab) {
			l.net(t, "host5", "ip route replace 198.18.0.0/15 via "+l.endpoint(t, "leaf2", "eth2").IPv4.Addr().String()+" dev eth1")
		}},
	{"MTU 1400 at one end", "mtu", "leaf0", "eth3",
		func(t *testing.T, l *faultLab) { l.net(t, "leaf0", "ip link set dev eth3 mtu 1400") },
		func(t *testing.T, l *faultLab) { l.net(t, "leaf0", "ip link set dev eth3 mtu 9000") }},
	{"swapped uplinks", "cabling", "leaf2", "eth3",
		func(t *testing.T, l *faultLab) {
			l.rewire(t, "leaf2", "eth3", "eth4", [2]string{"spine0", "eth3"}, [2]string{"spine1", "eth3"}, true)
		},
		func(t *testing.T, l *faultLab) {
			l.rewire(t, "leaf2", "eth3", "eth4", [2]string{"spine0", "eth3"}, [2]string{"spine1", "eth3"}, false)
		}},
	{"link down", "link-down", "spine1", "eth1",
		func(t *testing.T, l *faultLab) { l.net(t, "spine1", "ip link set dev eth1 down") },
		func(t *testing.T, l *faultLab) { l.net(t, "spine1", "ip link set dev eth1 up") }},
	{"wrong remote AS", "bgp-remote-as", "spine0", "eth4",
		func(t *testing.T, l *faultLab) {
			l.vtysh(t, "spine0", "router bgp 65000", "neighbor "+l.endpoint(t, "leaf3", "eth3").IPv6.Addr().String()+" remote-as 65199")
		},
		func(t *testing.T, l *faultLab) {
			l.vtysh(t, "spine0", "router bgp 65000", "neighbor "+l.endpoint(t, "leaf3", "eth3").IPv6.Addr().String()+" remote-as 65104")
		}},
	{"missing SRv6 SID", "srv6-sid", "spine0", "",
		func(t *testing.T, l *faultLab) {
			l.net(t, "spine0", "ip -6 route del "+l.lab.NodeByName("spine0").SRv6Locator.String())
		},
		func(t *testing.T, l *faultLab) {
			if _, err := bringup.Apply(context.Background(), l.target, bringup.LabFeatures(l.lab), nil, false); err != nil {
				t.Fatal(err)
			}
		}},
}

// TestFaultsAreCauses injects each fault above into a running lab, then
// all of them at once, on both runtimes: each is named as a cause with
// its device and port, its consequences grouped under it, as many causes
// as faults; the healthy lab (before, between and after) has no failed
// check.
func TestFaultsAreCauses(t *testing.T) {
	for _, c := range []struct{ rt, name, mgmt string }{
		{containerlab.RuntimeNative, "fbflt-n", "198.19.229.0/24"},
		{containerlab.RuntimeContainerlab, "fbflt-c", "198.19.228.0/24"},
	} {
		t.Run(c.rt, func(t *testing.T) {
			frr, host := "", ""
			if c.rt == containerlab.RuntimeNative {
				labtest.Require(t)
			} else {
				frr, host = labtest.RequireContainerlab(t)
			}
			l := deployFaultLab(t, c.rt, c.name, c.mgmt, frr, host)
			waitHealthy(t, l, "at start")
			for _, f := range labFaults {
				t.Run(strings.ReplaceAll(f.name, " ", "-"), func(t *testing.T) {
					f.inject(t, l)
					b := waitFor(t, l, func(b *results.Bringup) bool {
						return len(b.Causes) == 1 && b.Causes[0].Kind == f.kind && b.Causes[0].Device == f.dev && b.Causes[0].Interface == f.ifname
					})
					t.Logf("%s: %d checks, %d failed, one cause:\n%s", f.name, len(b.Checks), len(bringup.Failed(b)), causes(b))
					f.revert(t, l)
					waitHealthy(t, l, "after "+f.name)
				})
			}
			t.Run("all-together", func(t *testing.T) {
				for _, f := range labFaults {
					f.inject(t, l)
				}
				b := waitFor(t, l, func(b *results.Bringup) bool {
					if len(b.Causes) != len(labFaults) {
						return false
					}
					for _, f := range labFaults {
						found := false
						for _, c := range b.Causes {
							found = found || (c.Kind == f.kind && c.Device == f.dev && c.Interface == f.ifname)
						}
						if !found {
							return false
						}
					}
					return true
				})
				t.Logf("all %d faults: %d checks, %d failed, %d causes:\n%s", len(labFaults), len(b.Checks), len(bringup.Failed(b)), len(b.Causes), causes(b))
				for _, f := range labFaults {
					f.revert(t, l)
				}
				waitHealthy(t, l, "after all faults")
			})
		})
	}
}

func deployFaultLab(t *testing.T, runtime, name, mgmt, frrImage, hostImage string) *faultLab {
	t.Helper()
	f, err := inventory.Load("leafspine:leaves=4,spines=2,hosts_per_leaf=2")
	if err != nil {
		t.Fatal(err)
	}
	g, err := containerlab.Generate(f, containerlab.GenOptions{Name: name, MgmtSubnet: netipPrefix(t, mgmt), SRv6: true, MTU: 9000,
		FRRImage: frrImage, HostImage: hostImage})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := g.Write(dir); err != nil {
		t.Fatal(err)
	}
	lab, err := g.Resolve(dir, runtime)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := labrt.Open(runtime, labrt.Options{StateRoot: t.TempDir(), ReadyTimeout: 3 * time.Minute, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(lab.Nodes))
	for i, n := range lab.Nodes {
		names[i] = n.Name
	}
	t.Cleanup(func() {
		if _, err := rt.Destroy(context.Background(), lab.Name, names); err != nil {
			t.Errorf("destroy: %v", err)
		}
		if s := labtest.TakeSnapshot(t, lab.Name); !s.Empty() {
			t.Errorf("left behind: %s", s)
		}
		if runtime == containerlab.RuntimeContainerlab {
			if left := labtest.ContainerlabLeft(t, lab.Name, "fb-"+lab.Name); len(left) > 0 {
				t.Errorf("left behind: %s", strings.Join(left, ", "))
			}
		}
	})
	st, err := rt.Deploy(context.Background(), lab)
	if err != nil {
		t.Fatal(err)
	}
	target, err := bringup.FromLab(lab, st, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bringup.Apply(context.Background(), target, bringup.LabFeatures(lab), nil, false); err != nil {
		t.Fatal(err)
	}
	return &faultLab{rt: rt, lab: lab, st: st, target: target}
}

// waitFor validates until ok holds (the routing protocols take a few
// seconds to react to a fault or its repair), up to 90 s.
func waitFor(t *testing.T, l *faultLab, ok func(*results.Bringup) bool) *results.Bringup {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		b, err := bringup.Validate(context.Background(), l.target, bringup.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if ok(b) {
			return b
		}
		if time.Now().After(deadline) {
			// What the kernels hold, for the next one who reads this
			// failure: routes and neighbours of every node.
			for _, n := range l.lab.Nodes {
				out, _ := l.rt.NetExec(context.Background(), l.st, n.Name, "ip -br link; ip route; ip -6 route; ip neigh; ip -6 neigh")
				t.Logf("%s:\n%s", n.Name, out)
			}
			t.Fatalf("not reached in 90 s; last validation: %d checks, %d failed, %d causes:\n%s", len(b.Checks), len(bringup.Failed(b)), len(b.Causes), causes(b))
		}
		time.Sleep(2 * time.Second)
	}
}

func waitHealthy(t *testing.T, l *faultLab, when string) {
	t.Helper()
	b := waitFor(t, l, func(b *results.Bringup) bool { return len(bringup.Failed(b)) == 0 })
	t.Logf("healthy %s: %d checks, 0 failed", when, len(b.Checks))
}

func causes(b *results.Bringup) string {
	var s strings.Builder
	for _, c := range b.Causes {
		fmt.Fprintf(&s, "  CAUSE %d [%s %s] %s: %s\n", c.ID, c.Device, c.Interface, c.Kind, c.Summary)
		for _, i := range c.Checks[c.Roots:] {
			fmt.Fprintf(&s, "      because of it: %s [%s]: %s\n", b.Checks[i].Name, b.Checks[i].Device, b.Checks[i].Evidence)
		}
	}
	return s.String()
}

func netipPrefix(t *testing.T, s string) netip.Prefix {
	t.Helper()
	p, err := netip.ParsePrefix(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
