package inventory

import (
	"strings"
	"testing"
)

func TestSpecPlanes(t *testing.T) {
	f, err := ParseSpec("leafspine:leaves=3,spines=2,hosts_per_leaf=4,planes=4")
	if err != nil {
		t.Fatal(err)
	}
	if f.NumPlanes() != 4 || len(f.Rails) != 3 || f.NumHosts() != 12 {
		t.Fatalf("planes %v rails %v hosts %d", f.Planes, f.Rails, f.NumHosts())
	}
	if got, want := len(f.Nodes), 12+4*(3+2); got != want {
		t.Fatalf("%d nodes, want %d", got, want)
	}
	if got, want := len(f.Links), 4*(12+3*2); got != want {
		t.Fatalf("%d links, want %d", got, want)
	}
	for h := 0; h < f.NumHosts(); h++ {
		n := f.Host(h)
		if len(n.Ports) != 4 {
			t.Fatalf("%s has %d ports", n.Name, len(n.Ports))
		}
		for i, p := range n.Ports {
			pt := &f.Ports[p]
			leaf := &f.Nodes[f.PeerNode(p)]
			if pt.Plane != i || leaf.Plane != i || pt.Name != "eth"+string(rune('0'+i)) {
				t.Fatalf("%s port %d: %s plane %d on %s (plane %d)", n.Name, i, pt.Name, pt.Plane, leaf.Name, leaf.Plane)
			}
			if want := "p" + string(rune('0'+i)) + "-leaf" + string(rune('0'+h/4)); leaf.Name != want {
				t.Fatalf("%s port %d on %s, want %s", n.Name, i, leaf.Name, want)
			}
			if pt.Rail != h/4 || f.HostPlanePort(h, i) != p {
				t.Fatalf("%s port %d: rail %d, HostPlanePort %d", n.Name, i, pt.Rail, f.HostPlanePort(h, i))
			}
		}
	}
	// Switches stay inside their plane.
	for _, l := range f.Links {
		a, b := &f.Nodes[f.Ports[l.A].Node], &f.Nodes[f.Ports[l.B].Node]
		if a.IsSwitch() && a.Plane != b.Plane {
			t.Fatalf("link %s-%s crosses planes", a.Name, b.Name)
		}
	}
	g, err := ParseSpec("fattree:hosts=8,tiers=2,planes=2")
	if err != nil {
		t.Fatal(err)
	}
	if g.NumPlanes() != 2 || len(g.Host(0).Ports) != 2 {
		t.Fatalf("fattree planes: %v, host ports %d", g.Planes, len(g.Host(0).Ports))
	}
	one, err := ParseSpec("leafspine:leaves=2,spines=1,hosts_per_leaf=1")
	if err != nil || one.NumPlanes() != 1 || one.Planes != nil || one.Ports[0].Rail != -1 {
		t.Fatalf("single plane: %v %v", err, one)
	}
	for spec, want := range map[string]string{
		"leafspine:leaves=2,spines=1,hosts_per_leaf=1,planes=9": "planes=9: must be between 1 and 8",
		"leafspine:leaves=2,spines=1,hosts_per_leaf=1,planes=x": "planes=x: want an integer",
		"dragonfly:p=1,a=2,h=1,planes=2":                        `unknown key "planes"`,
	} {
		if _, err := ParseSpec(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
}

func TestValidatePlanes(t *testing.T) {
	f, err := ParseSpec("leafspine:leaves=2,spines=1,hosts_per_leaf=1,planes=2")
	if err != nil {
		t.Fatal(err)
	}
	f.Nodes[f.PeerNode(f.Host(0).Ports[1])].Plane = 0 // p1-leaf0 moved to plane 0
	f.setPortPlanes()
	if err := f.Validate(); err == nil || !strings.Contains(err.Error(), "joins planes") {
		t.Fatalf("cross-plane link: %v", err)
	}
}

func TestHardwareRails(t *testing.T) {
	hw, err := LoadHardware("../examples/inventory/lab-a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := hw.Fabric()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Rails) != len(hw.Rails) || len(f.Rails) == 0 {
		t.Fatalf("rails %v, inventory %v", f.Rails, hw.Rails)
	}
	if f.Planes != nil {
		t.Fatalf("a plane of spines is not a multi-plane fabric: %v", f.Planes)
	}
	railed := 0
	for _, h := range f.Hosts {
		for _, p := range f.Nodes[h].Ports {
			if r := f.Ports[p].Rail; r >= 0 {
				railed++
				leaf := f.Nodes[f.PeerNode(p)].Name
				found := false
				for _, l := range hw.Rails[r].Leaves {
					found = found || l == leaf
				}
				if !found {
					t.Fatalf("%s on %s: rail %d lists %v", f.Nodes[h].Name, leaf, r, hw.Rails[r].Leaves)
				}
			}
		}
	}
	if railed == 0 {
		t.Fatal("no host NIC carries its rail")
	}
}
