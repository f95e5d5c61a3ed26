package bringup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/labrt"
	"github.com/fabricbench/fabricbench/drivers"
)

// platformOf maps a lab node's OS to its driver platform.
func platformOf(os string) string {
	switch os {
	case "frr":
		return "frr"
	case "sonic":
		return "sonic"
	}
	return "linux"
}

// FromLab builds the validation target of a deployed lab (either
// runtime): every node reached the way the runtime recorded, over SSH on
// its management address with the lab's key and host keys checked
// against the lab's known_hosts, or with docker exec into its container.
// Bridge nodes are layer-2 segments, not devices: links to them are left
// out.
func FromLab(lab *containerlab.Lab, st *labrt.State, topology string) (*Target, error) {
	key, err := os.ReadFile(st.Key)
	if err != nil {
		return nil, fmt.Errorf("lab %s: SSH key: %w", lab.Name, err)
	}
	t := &Target{Name: lab.Name, Topology: topology, Runtime: st.Runtime}
	for _, n := range lab.Devices() {
		ns, ok := st.Node(n.Name)
		if !ok {
			return nil, fmt.Errorf("lab %s: node %s is in the topology but was not deployed (redeploy with lab up)", lab.Name, n.Name)
		}
		role := n.Role
		if role == "" {
			role = "host"
			if n.OS != "linux" {
				role = "switch"
			}
		}
		cfg := drivers.Config{Device: n.Name, Address: ns.Mgmt, Port: 22, KnownHosts: st.KnownHosts,
			Auth: drivers.Auth{User: st.User, PrivateKey: key}}
		if ns.Transport == labrt.TransportDocker {
			cfg = drivers.Config{Device: n.Name, Container: ns.Container, Address: ns.Mgmt}
		}
		t.Devices = append(t.Devices, Device{
			Name: n.Name, Role: role, Platform: platformOf(n.OS), Locator: n.SRv6Locator, Config: cfg, ASN: n.ASN,
		})
	}
	for _, l := range lab.Links {
		if a, b := lab.NodeByName(l.A.Node), lab.NodeByName(l.B.Node); a == nil || b == nil || a.Kind == "bridge" || b.Kind == "bridge" {
			continue
		}
		t.Links = append(t.Links, Link{
			A:   Endpoint{Device: l.A.Node, Interface: l.A.Interface, IPv4: l.A.IPv4, IPv6: l.A.IPv6},
			B:   Endpoint{Device: l.B.Node, Interface: l.B.Interface, IPv4: l.B.IPv4, IPv6: l.B.IPv6},
			MTU: LinkMTU(l, st.Runtime),
		})
	}
	return t, nil
}

// Default link MTUs of the runtimes: a veth's 1500 natively, containerlab's
// 9500.
const (
	NativeDefaultMTU       = 1500
	ContainerlabDefaultMTU = 9500
)

// LinkMTU is a lab link's intended MTU: the topology's, else the
// runtime's default.
func LinkMTU(l *containerlab.Link, runtime string) int {
	switch {
	case l.MTU > 0:
		return l.MTU
	case runtime == containerlab.RuntimeContainerlab:
		return ContainerlabDefaultMTU
	}
	return NativeDefaultMTU
}

// LabFeatures is the feature set a lab's labels ask of each node: an SRv6
// uN micro-SID for every node with a locator.
func LabFeatures(lab *containerlab.Lab) map[string]*drivers.DeviceFeatures {
	out := map[string]*drivers.DeviceFeatures{}
	for _, n := range lab.Nodes {
		if n.SRv6Locator.IsValid() {
			out[n.Name] = &drivers.DeviceFeatures{SRv6: &drivers.SRv6{
				Locator: "main", Prefix: n.SRv6Locator, BlockLen: 32, NodeLen: 16,
				SIDs: []drivers.SID{{Addr: n.SRv6Locator, Behavior: "uN"}},
			}}
		}
	}
	return out
}

// Apply applies per-device features through the drivers (dry-run diff
// first, then the changes) and returns what changed per device.
func Apply(ctx context.Context, t *Target, feats map[string]*drivers.DeviceFeatures, open Opener, dryRun bool) (map[string]drivers.Diff, error) {
	if open == nil {
		open = drivers.Open
	}
	out := map[string]drivers.Diff{}
	var errs []error
	for i := range t.Devices {
		d := &t.Devices[i]
		f := feats[d.Name]
		if f == nil {
			continue
		}
		drv, err := open(d.Platform, d.Config)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.Name, err))
			continue
		}
		var diff drivers.Diff
		if dryRun {
			diff, err = drv.Diff(ctx, f)
		} else {
			diff, err = drv.Apply(ctx, f)
		}
		drv.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.Name, err))
			continue
		}
		out[d.Name] = diff
	}
	return out, errors.Join(errs...)
}

// DiffSummary renders per-device diffs for people.
func DiffSummary(diffs map[string]drivers.Diff) string {
	var b strings.Builder
	for _, name := range sortedKeys(diffs) {
		d := diffs[name]
		if len(d) == 0 {
			fmt.Fprintf(&b, "%s: no changes\n", name)
			continue
		}
		fmt.Fprintf(&b, "%s:\n", name)
		for _, c := range d {
			fmt.Fprintf(&b, "  %s\n", c)
		}
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
