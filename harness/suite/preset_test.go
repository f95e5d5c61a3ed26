package suite

import (
	"strings"
	"testing"
)

// TestPreset: preset: smartt adds its link rate and latencies to the fabric
// spec and sets the switch and transport keys the suite leaves out;
// explicit keys (in the spec or the suite) win.
func TestPreset(t *testing.T) {
	s := mustParse(t, "p.yaml", base+"preset: SMaRTT\n")
	if s.Preset != "smartt" {
		t.Errorf("preset = %q, want canonical smartt", s.Preset)
	}
	if want := "leafspine:leaves=2,spines=2,hosts_per_leaf=4,gbps=800,latency=600ns,switch_latency=400ns"; s.Fabric.Spec != want {
		t.Errorf("fabric.spec = %q, want %q", s.Fabric.Spec, want)
	}
	f, err := s.LoadFabric()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range f.Links {
		if l.RateBps != 800e9 || l.LatencyPs != 600_000 {
			t.Fatalf("link %d: %d b/s, %d ps; want 800G, 600 ns", l.ID, l.RateBps, l.LatencyPs)
		}
	}
	for _, n := range f.Nodes {
		if n.IsSwitch() && n.LatencyPs != 400_000 {
			t.Fatalf("%s: switch latency %d ps, want 400 ns", n.Name, n.LatencyPs)
		}
	}
	ft := s.Features
	if !*ft.ECN.Enabled || ft.ECN.KMin != 0.2 || ft.ECN.KMax != 0.8 || !*ft.Trimming.Enabled || ft.Queue.String() != "bdp" || s.Transport.MTU != 4096 {
		t.Errorf("features %+v, mtu %d", ft, s.Transport.MTU)
	}

	// Explicit keys win over the preset.
	doc := strings.Replace(base, "hosts_per_leaf=4", "hosts_per_leaf=4,gbps=400,switch_latency=0", 1) + `preset: smartt
features:
  ecn: {kmin: 0.1}
  trimming: {enabled: false}
  queue: 256KiB
transport: {mtu: 2048}
`
	s = mustParse(t, "p.yaml", doc)
	if want := "leafspine:leaves=2,spines=2,hosts_per_leaf=4,gbps=400,switch_latency=0,latency=600ns"; s.Fabric.Spec != want {
		t.Errorf("fabric.spec = %q, want %q", s.Fabric.Spec, want)
	}
	ft = s.Features
	if ft.ECN.KMin != 0.1 || ft.ECN.KMax != 0.8 || *ft.Trimming.Enabled || ft.Queue.String() != "256KiB" || s.Transport.MTU != 2048 {
		t.Errorf("explicit keys lost: features %+v, mtu %d", ft, s.Transport.MTU)
	}

	// A matrix sweeps the fabric under the preset: every point gets it.
	s = mustParse(t, "p.yaml", base+"preset: smartt\nmatrix:\n  fabric.spec: ['leafspine:leaves=2,spines=1,hosts_per_leaf=2', 'fattree:hosts=32,tiers=2,latency=1us']\n")
	pts, err := s.Points()
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 2 || pts[0].Suite.Fabric.Spec != "leafspine:leaves=2,spines=1,hosts_per_leaf=2,gbps=800,latency=600ns,switch_latency=400ns" ||
		pts[1].Suite.Fabric.Spec != "fattree:hosts=32,tiers=2,latency=1us,gbps=800,switch_latency=400ns" {
		for _, p := range pts {
			t.Errorf("point %s: spec %q", p.ID, p.Suite.Fabric.Spec)
		}
	}

	// No preset: the defaults, the spec as written.
	s = mustParse(t, "p.yaml", base)
	if s.Preset != "" || s.Fabric.Spec != "leafspine:leaves=2,spines=2,hosts_per_leaf=4" {
		t.Errorf("preset %q spec %q", s.Preset, s.Fabric.Spec)
	}
}

func TestPresetErrors(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"unknown", base + "preset: htsim\n", `p.yaml:7:9: preset: unknown preset "htsim" (want smartt or spritz)`},
		{"fabric file", "fabric:\n  file: tiny.topo\npreset: smartt\njobs: []\n",
			`p.yaml:3:9: preset: smartt sets the link rate and latencies of a generator spec (gbps=800, latency=600ns, switch_latency=400ns); fabric.file brings its own (use fabric.spec, e.g. fattree:hosts=128)`},
		{"not a string", base + "preset: [smartt]\n", `p.yaml:7:9: preset: want a string, got a list`},
	} {
		name := "p.yaml"
		if c.name == "fabric file" {
			name = "testdata/p.yaml"
			c.want = "testdata/" + c.want
		}
		_, err := Parse(name, []byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v\nwant %s", c.name, err, c.want)
		}
	}
}

// TestPresetSpritz: preset: spritz adds the Spritz Table II link
// parameters to a dragonfly spec and sets DCTCP and the longest-path
// sizing where the suite leaves them out; other fabric kinds are refused.
func TestPresetSpritz(t *testing.T) {
	doc := strings.Replace(base, "leafspine:leaves=2,spines=2,hosts_per_leaf=4", "dragonfly:p=2,a=4,h=2", 1) + "preset: spritz\n"
	s := mustParse(t, "p.yaml", doc)
	if want := "dragonfly:p=2,a=4,h=2,gbps=400,latency=25ns,local_latency=25ns,global_latency=500ns,switch_latency=500ns"; s.Preset != "spritz" || s.Fabric.Spec != want {
		t.Errorf("preset %q, fabric.spec = %q, want %q", s.Preset, s.Fabric.Spec, want)
	}
	ft := s.Features
	if !*ft.ECN.Enabled || ft.ECN.KMin != 0.2 || ft.ECN.KMax != 0.8 || !*ft.Trimming.Enabled || ft.Queue.String() != "longest-path" ||
		s.Transport.MTU != 4096 || s.Transport.CC != "dctcp" {
		t.Errorf("features %+v, mtu %d, cc %s", ft, s.Transport.MTU, s.Transport.CC)
	}
	s = mustParse(t, "p.yaml", doc+"transport: {cc: nscc}\nfeatures: {queue: bdp}\n")
	if s.Transport.CC != "nscc" || s.Features.Queue.String() != "bdp" {
		t.Errorf("explicit keys lost: cc %s, queue %s", s.Transport.CC, s.Features.Queue)
	}
	_, err := Parse("p.yaml", []byte(base+"preset: spritz\n"))
	if want := `p.yaml:7:9: preset: preset spritz applies to dragonfly or slimfly fabric specs (e.g. dragonfly:p=2,a=4,h=2), not "leafspine"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("spritz on a leaf-spine: err = %v, want %s", err, want)
	}
}
