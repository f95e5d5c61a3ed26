package harness

import (
	"fmt"
	"runtime/debug"
	"sort"

	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
)

// DUTDescriber is implemented by backends that can identify the device
// under test of a point (IETF BMWG AI-fabric draft, DUT identification):
// what stands in for the switches, their buffers, platform and OS.
// Backends without it get the generic description of dutOf.
type DUTDescriber interface {
	DescribeDUT(p *runspec.RunSpec) *results.DUT
}

// dutOf identifies the DUT of a point: the backend's description, or the
// fabric's switches with what the harness knows about them.
func dutOf(backend string, p *runspec.RunSpec) *results.DUT {
	if p == nil || p.Fabric == nil {
		return nil
	}
	if b, err := newBackend(backend); err == nil {
		if d, ok := b.(DUTDescriber); ok {
			if dut := d.DescribeDUT(p); dut != nil {
				return dut
			}
		}
	}
	dut := &results.DUT{Kind: backend, Description: fmt.Sprintf("the %s backend does not report device platforms", backend),
		Host: AgentDescription(p)}
	dut.Devices = SwitchDevices(p.Fabric, "", "", "")
	return dut
}

// SwitchDevices lists a fabric's switches as DUT devices with the given
// platform, OS version and ASIC, and the rate of their fastest link.
func SwitchDevices(f *inventory.Fabric, platform, os, asic string) []results.DUTDevice {
	var out []results.DUTDevice
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if !n.IsSwitch() {
			continue
		}
		var top int64
		for _, pi := range n.Ports {
			if l := f.Ports[pi].Link; l >= 0 && l < len(f.Links) {
				top = max(top, f.Links[l].RateBps)
			}
		}
		d := results.DUTDevice{Name: n.Name, Role: n.Role.String(), Platform: platform, OSVersion: os, ASIC: asic}
		if top > 0 {
			d.PortSpeed = fmt.Sprintf("%g Gb/s", float64(top)/1e9)
		}
		out = append(out, d)
	}
	return out
}

// AgentDescription describes the hosts' transport (the draft's host
// configuration): the fabricbench build and the point's transport
// parameters.
func AgentDescription(p *runspec.RunSpec) string {
	t := p.Transport
	return fmt.Sprintf("fabricbench transport %s: cc %s, lb %s, MTU %d B", BuildVersion(), t.CC, t.LB, t.MTU)
}

// BuildVersion is the fabricbench build: module version and VCS commit.
func BuildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown build)"
	}
	v, commit, dirty := bi.Main.Version, "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if commit != "" {
		v += " " + commit
		if dirty {
			v += "+dirty"
		}
	}
	return v
}

// topologyOf describes a fabric for reports.
func topologyOf(f *inventory.Fabric, desc string) *results.Topology {
	if f == nil {
		return nil
	}
	t := &results.Topology{Description: desc, Planes: len(f.Planes)}
	byRole := map[inventory.Role][]string{}
	for i := range f.Nodes {
		byRole[f.Nodes[i].Role] = append(byRole[f.Nodes[i].Role], f.Nodes[i].Name)
	}
	for _, r := range []inventory.Role{inventory.RoleCore, inventory.RoleSpine, inventory.RoleLeaf, inventory.RoleHost} {
		if len(byRole[r]) > 0 {
			t.Tiers = append(t.Tiers, results.TopoTier{Role: r.String(), Nodes: byRole[r]})
		}
	}
	type key struct {
		a, b string
		bps  int64
	}
	count := map[key]int{}
	for _, l := range f.Links {
		a, b := f.Nodes[f.Ports[l.A].Node].Role.String(), f.Nodes[f.Ports[l.B].Node].Role.String()
		count[key{a, b, l.RateBps}]++
	}
	for k, n := range count {
		t.Links = append(t.Links, results.TopoLinks{From: k.a, To: k.b, Count: n, Gbps: float64(k.bps) / 1e9})
	}
	sort.Slice(t.Links, func(i, j int) bool {
		if t.Links[i].From != t.Links[j].From {
			return t.Links[i].From < t.Links[j].From
		}
		return t.Links[i].To < t.Links[j].To
	})
	return t
}
