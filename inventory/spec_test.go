package inventory

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// formatTopo writes a tier description as an htsim .topo file.
func formatTopo(t *testing.T, c *topoConfig) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "Nodes %d\nTiers %d\nPodsize %d\n", c.nodes, c.tiers, c.podsz)
	for tier := 0; tier < int(c.tiers); tier++ {
		fmt.Fprintf(&b, "\nTier %d\n", tier)
		for k := tierKey(0); k < numTierKeys; k++ {
			if !c.tier[tier].set[k] {
				continue
			}
			v, scale := c.tier[tier].val[k], tierKeyInfo[k].scale
			if v%scale != 0 {
				t.Fatalf("Tier %d %s = %d cannot be written in file units", tier, k, v)
			}
			fmt.Fprintf(&b, "%s %d\n", k, v/scale)
		}
	}
	return b.String()
}

func specConfig(t *testing.T, spec string) *topoConfig {
	t.Helper()
	p, err := parseSpecParams(spec)
	if err != nil {
		t.Fatal(err)
	}
	var c *topoConfig
	switch p.kind {
	case "fattree":
		c, err = planFatTree(p)
	default:
		c, _, err = planLeafSpine(p)
	}
	if err != nil {
		t.Fatal(err)
	}
	if c == nil {
		t.Fatalf("%s: no htsim description", spec)
	}
	return c
}

func mustSpec(t *testing.T, spec string) *Fabric {
	t.Helper()
	f, err := ParseSpec(spec)
	if err != nil {
		t.Fatalf("ParseSpec(%q): %v", spec, err)
	}
	return f
}

func TestSpecFatTree128MatchesTopo(t *testing.T) {
	topo := loadFixture(t, "fat_tree_128.topo")
	for _, spec := range []string{
		"fattree:hosts=128,tiers=3,gbps=100,oversub=1",
		"fattree:hosts=128",
		"FatTree: hosts = 128 , radix=8, podsize=16, latency=1000ns, switch_latency=0ns",
		"fattree:hosts=128,tiers=3,gbps=100,oversub=1,latency=1us,switch_latency=0ns,podsize=16,radix=8",
		"fattree:hosts=128,podsize=16",
		"fattree:hosts=128,latency=0.001ms,gbps=100.000",
	} {
		f := mustSpec(t, spec)
		if f.Name != strings.TrimSpace(spec) {
			t.Errorf("Name = %q", f.Name)
		}
		checkTree(t, f, fatTree128)
		if !sameStructure(f, topo) {
			t.Errorf("%s: differs from fat_tree_128.topo", spec)
		}
	}
}

func TestSpecFatTree1024(t *testing.T) {
	start := time.Now()
	f := mustSpec(t, "fattree:hosts=1024,gbps=400")
	elapsed := time.Since(start)
	checkTree(t, f, treeWant{
		tiers: 3, hosts: 1024, tors: 128, aggs: 128, cores: 64,
		pods: 16, hostsPerPod: 64, hostsPerToR: 8,
		torUp: 8, aggDown: 8, aggUp: 8, coreDown: 16,
		paths: map[[2]int]int64{{0, 1023}: 64, {0, 8}: 8, {0, 7}: 1},
	})
	checkFatTreeWiring(t, f, 8, 8, 1, 1)
	if len(f.Links) != 3*1024 || f.Links[0].RateBps != 400e9 {
		t.Errorf("%d links at %d bps", len(f.Links), f.Links[0].RateBps)
	}
	t.Logf("1024-host fat tree built in %v", elapsed)
}

func TestSpecFatTreeTwoTier(t *testing.T) {
	// htsim's automatic 2-tier tree: hosts = K^2/2, K leaves, K/2 spines.
	f := mustSpec(t, "fattree:hosts=128,tiers=2")
	checkTree(t, f, treeWant{
		tiers: 2, hosts: 128, tors: 16, aggs: 8,
		pods: 1, hostsPerPod: 128, hostsPerToR: 8,
		torUp: 8, aggDown: 16,
		paths: map[[2]int]int64{{0, 127}: 8, {0, 1}: 1},
	})
	g := mustSpec(t, "fattree:hosts=32,tiers=2,oversub=4,radix=4")
	checkTree(t, g, treeWant{
		tiers: 2, hosts: 32, tors: 4, aggs: 2,
		pods: 1, hostsPerPod: 32, hostsPerToR: 8,
		torUp: 2, aggDown: 4,
		paths: map[[2]int]int64{{0, 31}: 2},
	})
	if !sameStructure(g, loadFixture(t, "leaf_spine_tiny.topo")) {
		t.Error("fattree:hosts=32,tiers=2,oversub=4,radix=4 differs from leaf_spine_tiny.topo")
	}
}

func TestSpecFatTreeOversubscribed(t *testing.T) {
	// oversub=4: the k=8 switching structure with 16 hosts per ToR.
	f := mustSpec(t, "fattree:hosts=512,oversub=4")
	checkTree(t, f, treeWant{
		tiers: 3, hosts: 512, tors: 32, aggs: 32, cores: 16,
		pods: 8, hostsPerPod: 64, hostsPerToR: 16,
		torUp: 4, aggDown: 4, aggUp: 4, coreDown: 8,
		paths: map[[2]int]int64{{0, 511}: 16},
	})
	checkFatTreeWiring(t, f, 4, 4, 1, 1)
	// oversub1=2: 8 ToRs per pod, aggs with 8 down and 4 up.
	g := mustSpec(t, "fattree:hosts=256,oversub1=2")
	checkTree(t, g, treeWant{
		tiers: 3, hosts: 256, tors: 64, aggs: 32, cores: 16,
		pods: 8, hostsPerPod: 32, hostsPerToR: 4,
		torUp: 4, aggDown: 8, aggUp: 4, coreDown: 8,
		paths: map[[2]int]int64{{0, 255}: 16},
	})
	checkFatTreeWiring(t, g, 8, 4, 1, 1)
}

func TestSpecFatTreePartial(t *testing.T) {
	// radix=8 with 6 of 8 pods.
	f := mustSpec(t, "fattree:hosts=96,radix=8")
	checkTree(t, f, treeWant{
		tiers: 3, hosts: 96, tors: 24, aggs: 24, cores: 16,
		pods: 6, hostsPerPod: 16, hostsPerToR: 4,
		torUp: 4, aggDown: 4, aggUp: 4, coreDown: 6,
		paths: map[[2]int]int64{{0, 95}: 16},
	})
	checkFatTreeWiring(t, f, 4, 4, 1, 1)
	// radix=8 with half-populated pods: 2 ToRs per pod, aggs with 2 uplinks.
	g := mustSpec(t, "fattree:hosts=64,radix=8,podsize=8")
	checkTree(t, g, treeWant{
		tiers: 3, hosts: 64, tors: 16, aggs: 32, cores: 8,
		pods: 8, hostsPerPod: 8, hostsPerToR: 4,
		torUp: 4, aggDown: 2, aggUp: 2, coreDown: 8,
		paths: map[[2]int]int64{{0, 63}: 8},
	})
	checkFatTreeWiring(t, g, 2, 4, 1, 1)
	// podsize alone: full k=8 pods, as many as hosts need.
	h := mustSpec(t, "fattree:hosts=256,podsize=16")
	checkTree(t, h, treeWant{
		tiers: 3, hosts: 256, tors: 64, aggs: 64, cores: 16,
		pods: 16, hostsPerPod: 16, hostsPerToR: 4,
		torUp: 4, aggDown: 4, aggUp: 4, coreDown: 16,
		paths: map[[2]int]int64{{0, 255}: 16},
	})
}

func TestSpecLatencies(t *testing.T) {
	f := mustSpec(t, "fattree:hosts=16,latency=1.5us,switch_latency=250ns")
	for _, l := range f.Links {
		if l.LatencyPs != 1_500_000 {
			t.Fatalf("link latency %d ps", l.LatencyPs)
		}
	}
	for _, n := range f.Nodes {
		want := int64(250_000)
		if n.Role == RoleHost {
			want = 0
		}
		if n.LatencyPs != want {
			t.Fatalf("%s latency %d ps", n.Name, n.LatencyPs)
		}
	}
}

// TestSpecTopoRoundTrip writes the htsim description a spec generates as a
// .topo file and checks that importing it builds the same fabric.
func TestSpecTopoRoundTrip(t *testing.T) {
	for _, spec := range []string{
		"fattree:hosts=128",
		"fattree:hosts=1024",
		"fattree:hosts=16,latency=2us,switch_latency=300ns,gbps=400",
		"fattree:hosts=512,oversub=4",
		"fattree:hosts=256,oversub1=2",
		"fattree:hosts=512,oversub=2,oversub1=2",
		"fattree:hosts=96,radix=8",
		"fattree:hosts=64,radix=8,podsize=8",
		"fattree:hosts=128,tiers=2",
		"fattree:hosts=24,tiers=2,radix=8",
		"leafspine:leaves=4,spines=2,hosts_per_leaf=2",
		"leafspine:leaves=4,spines=2,hosts_per_leaf=8,links_per_spine=2",
	} {
		text := formatTopo(t, specConfig(t, spec))
		topo, err := ParseTopo("gen.topo", strings.NewReader(text))
		if err != nil {
			t.Fatalf("%s: generated .topo does not parse: %v\n%s", spec, err, text)
		}
		if !sameStructure(topo, mustSpec(t, spec)) {
			t.Errorf("%s: spec and its .topo build different fabrics", spec)
		}
	}
}

func TestSpecLeafSpine(t *testing.T) {
	f := mustSpec(t, "leafspine:leaves=4,spines=2,hosts_per_leaf=2,gbps=100")
	checkTree(t, f, treeWant{
		tiers: 2, hosts: 8, tors: 4, aggs: 2,
		pods: 1, hostsPerPod: 8, hostsPerToR: 2,
		torUp: 2, aggDown: 4,
		paths: map[[2]int]int64{{0, 7}: 2, {0, 1}: 1},
	})
	// Undersubscribed (4 uplinks for 2 hosts): not expressible in htsim.
	g := mustSpec(t, "leafspine:leaves=4,spines=4,hosts_per_leaf=2,links_per_spine=2,uplink_gbps=400,latency=500ns")
	checkTree(t, g, treeWant{
		tiers: 2, hosts: 8, tors: 4, aggs: 4,
		pods: 1, hostsPerPod: 8, hostsPerToR: 2,
		torUp: 8, aggDown: 8,
		paths: map[[2]int]int64{{0, 7}: 16},
	})
	for _, l := range g.Links {
		want := int64(400e9)
		if g.Nodes[g.Ports[l.A].Node].Role == RoleHost {
			want = 100e9
		}
		if l.RateBps != want || l.LatencyPs != 500_000 {
			t.Fatalf("link %d: %d bps %d ps", l.ID, l.RateBps, l.LatencyPs)
		}
	}
}

// TestLeafSpinePathsAgree checks that a leaf-spine built through the htsim
// description and one built directly have the same shape.
func TestLeafSpinePathsAgree(t *testing.T) {
	for _, spec := range []string{
		"leafspine:leaves=4,spines=2,hosts_per_leaf=2",
		"leafspine:leaves=3,spines=2,hosts_per_leaf=8,links_per_spine=2,latency=2us,switch_latency=1ns",
		"leafspine:leaves=1,spines=1,hosts_per_leaf=1",
	} {
		c := specConfig(t, spec)
		viaHtsim, err := c.shape()
		if err != nil {
			t.Fatal(err)
		}
		t0 := c.tier[0].val
		direct := leafSpineShape(c.nodes, viaHtsim.torsPerPod, viaHtsim.aggsPerPod, t0[keyRadixDown], c.get(1, keyBundle),
			t0[keySpeed], c.get(1, keySpeed), t0[keyLatency], t0[keySwitchLatency])
		if !reflect.DeepEqual(viaHtsim, direct) {
			t.Errorf("%s:\nhtsim  %+v\ndirect %+v", spec, *viaHtsim, *direct)
		}
	}
}

func TestSpecErrors(t *testing.T) {
	ftKeys := "(known keys: hosts, tiers, gbps, oversub, oversub1, latency, switch_latency, podsize, radix)"
	tests := []struct{ spec, want string }{
		{"fattree", `spec "fattree": missing ':' after the kind; ` + specForms},
		{"mesh:x=1", `spec "mesh:x=1": unknown kind "mesh" (want fattree, leafspine, dragonfly or slimfly)`},
		{"fattree:", "fattree: missing required key hosts"},
		{"fattree:tiers=3", "fattree: missing required key hosts"},
		{"fattree:hosts=128,foo=1", `fattree: unknown key "foo" ` + ftKeys},
		{"fattree:hosts=128,,tiers=3", `fattree: empty parameter in "fattree:hosts=128,,tiers=3"`},
		{"fattree:hosts=128,tiers", `fattree: parameter "tiers" is not key=value`},
		{"fattree:hosts=128,=3", `fattree: parameter "=3" has no key`},
		{"fattree:hosts=", "fattree: hosts: empty value"},
		{"fattree:hosts=128,HOSTS=16", "fattree: hosts given twice"},
		{"fattree:hosts=abc", "fattree: hosts=abc: want an integer"},
		{"fattree:hosts=0", "fattree: hosts=0: must be between 1 and 1048576"},
		{"fattree:hosts=-5", "fattree: hosts=-5: must be between 1 and 1048576"},
		{"fattree:hosts=100", "fattree: hosts=100: not the size of a 3-tier K-ary fat tree (hosts = K^3/4 for even K); nearest are 54 (radix=6) and 128 (radix=8); give radix= or podsize= to build other sizes"},
		{"fattree:hosts=1", "fattree: hosts=1: not the size of a 3-tier K-ary fat tree (hosts = K^3/4 for even K); the smallest is 2 (radix=2); give radix= or podsize= to build other sizes"},
		{"fattree:hosts=900,oversub=4", "fattree: hosts=900: not the size of a 3-tier K-ary fat tree (hosts = oversub 4 x K^3/4 for even K); nearest are 512 (radix=8) and 1000 (radix=10); give radix= or podsize= to build other sizes"},
		{"fattree:hosts=100,tiers=2", "fattree: hosts=100: not the size of a 2-tier K-ary fat tree (hosts = K^2/2 for even K); nearest are 98 (radix=14) and 128 (radix=16); give radix= to build other sizes"},
		{"fattree:hosts=128,tiers=4", "fattree: tiers=4: must be between 2 and 3"},
		{"fattree:hosts=128,tiers=2,oversub1=2", "fattree: oversub1=2: a 2-tier tree has no tier-1 uplinks; oversub1 needs tiers=3"},
		{"fattree:hosts=128,tiers=2,podsize=16", "fattree: podsize=16: a 2-tier tree is a single pod: podsize must equal hosts (128)"},
		{"fattree:hosts=128,radix=7", "fattree: radix=7: the radix K of a K-ary fat tree must be even"},
		{"fattree:hosts=128,radix=0", "fattree: radix=0: must be between 2 and 65536"},
		{"fattree:hosts=4096,radix=8", "fattree: hosts=4096: 4096 hosts need 256 pods of 16 but a radix-8 core switch reaches at most 8 pods"},
		{"fattree:hosts=100,radix=8", "fattree: hosts=100: not a multiple of podsize 16"},
		{"fattree:hosts=16,radix=64", "fattree: hosts=16: fewer hosts than one full radix-64 pod (1024); give a smaller podsize= for partially populated pods"},
		{"fattree:hosts=128,radix=8,podsize=6", "fattree: podsize=6: not a multiple of 4 hosts per ToR (oversub 1 x radix/2 4)"},
		{"fattree:hosts=128,radix=8,podsize=32", "fattree: podsize=32: 8 ToRs per pod is more than the 4 a radix-8 agg can serve (oversub1 1 x radix/2 4)"},
		{"fattree:hosts=96,radix=8,podsize=12,oversub1=2", "fattree: oversub1=2: 3 ToRs per pod (podsize 12 / 4 hosts per ToR) is not a multiple of oversub1 2"},
		{"fattree:hosts=120,podsize=12", "fattree: podsize=12: not a full K-ary pod (podsize = (K/2)^2 for even K); give radix= as well for partial pods"},
		{"fattree:hosts=62,tiers=2,radix=8", "fattree: hosts=62: not a multiple of 4 hosts per leaf (oversub 1 x radix/2 4)"},
		{"fattree:hosts=64,tiers=2,radix=8", "fattree: hosts=64: 64 hosts need 16 leaves but a radix-8 spine reaches at most 8"},
		{"fattree:hosts=128,gbps=fast", "fattree: gbps=fast: want a rate in Gbps between 0.001 and 100000 (e.g. 100 or 12.5)"},
		{"fattree:hosts=128,gbps=0", "fattree: gbps=0: rate must be positive"},
		{"fattree:hosts=128,gbps=-100", "fattree: gbps=-100: want a rate in Gbps between 0.001 and 100000 (e.g. 100 or 12.5)"},
		{"fattree:hosts=128,gbps=0.0001", "fattree: gbps=0.0001: want a rate in Gbps between 0.001 and 100000 (e.g. 100 or 12.5)"},
		{"fattree:hosts=128,latency=1", "fattree: latency=1: want a duration with a unit (ns, us, µs, ms), e.g. 1us"},
		{"fattree:hosts=128,latency=0", "fattree: latency=0: link latency must be positive (htsim rejects zero link latency)"},
		{"fattree:hosts=128,latency=1.0005ns", "fattree: latency=1.0005ns: want a duration such as 500ns or 1us, at most 1s and a whole number of picoseconds"},
		{"fattree:hosts=128,switch_latency=-1ns", "fattree: switch_latency=-1ns: want a duration such as 500ns or 1us, at most 1s and a whole number of picoseconds"},
		{"fattree:hosts=128,oversub=0", "fattree: oversub=0: must be between 1 and 1024"},
		{"leafspine:leaves=4,spines=2", "leafspine: missing required key hosts_per_leaf"},
		{"leafspine:leaves=4,spines=2,hosts_per_leaf=2,hosts=8", `leafspine: unknown key "hosts" (known keys: leaves, spines, hosts_per_leaf, gbps, uplink_gbps, links_per_spine, latency, switch_latency)`},
		{"leafspine:leaves=4,spines=0,hosts_per_leaf=2", "leafspine: spines=0: must be between 1 and 1048576"},
		{"leafspine:leaves=4,spines=2,hosts_per_leaf=2,uplink_gbps=x", "leafspine: uplink_gbps=x: want a rate in Gbps between 0.001 and 100000 (e.g. 100 or 12.5)"},
		{"leafspine:leaves=4,spines=2,hosts_per_leaf=2,links_per_spine=2000", "leafspine: links_per_spine=2000: must be between 1 and 1024"},
		{"leafspine:leaves=1048576,spines=1,hosts_per_leaf=2", "leafspine: leaves=1048576 x hosts_per_leaf=2 = 2097152 hosts, more than the limit of 1048576"},
		{"leafspine:leaves=1024,spines=1024,hosts_per_leaf=1,links_per_spine=8", "leafspine:leaves=1024,spines=1024,hosts_per_leaf=1,links_per_spine=8: the tree needs 8389632 links, more than the limit of 4194304"},
	}
	for _, tc := range tests {
		_, err := ParseSpec(tc.spec)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseSpec(%q)\ngot error  %v\nwant error %s", tc.spec, err, tc.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	good := map[string]int64{
		"0": 0, "0ns": 0, "1ps": 1, "500ns": 500_000, "1us": 1_000_000, "1.5us": 1_500_000,
		"2µs": 2_000_000, "2μs": 2_000_000, "0.25ms": 250_000_000, "1s": 1_000_000_000_000,
		"1.000ns": 1000, ".5ns": 500, "3.ns": 3000,
	}
	for s, want := range good {
		if got, err := parseDurationPs(s); err != nil || got != want {
			t.Errorf("parseDurationPs(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "1", "us", "1.5ps", "-1ns", "1e3ns", "2s", "1 000ns", "1..0ns", ".ns", "1h", "0x10ns", "99999999999999999999ns"} {
		if v, err := parseDurationPs(s); err == nil {
			t.Errorf("parseDurationPs(%q) = %d, want an error", s, v)
		}
	}
}

func TestLoad(t *testing.T) {
	f, err := Load(filepath.Join("testdata", "fat_tree_128.topo"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Load(" fattree:hosts=128 ")
	if err != nil {
		t.Fatal(err)
	}
	if !sameStructure(f, g) {
		t.Error("file and spec differ")
	}
	dir := t.TempDir()
	notTopo := filepath.Join(dir, "fabric.txt")
	if err := os.WriteFile(notTopo, []byte("Nodes 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]string{
		"fabric":                "topology \"fabric\" is neither an existing .topo file nor a generator spec; " + specForms,
		"missing.topo":          "topology file missing.topo: no such file; " + specForms,
		notTopo:                 notTopo + ": not a .topo file; " + specForms,
		"leafspine:leaves=1":    "leafspine: missing required key spines",
		"":                      "topology \"\" is neither an existing .topo file nor a generator spec; " + specForms,
		"testdata":              "topology \"testdata\" is neither an existing .topo file nor a generator spec; " + specForms,
		"testdata/nothere.topo": "topology file testdata/nothere.topo: no such file; " + specForms,
	} {
		if _, err := Load(arg); err == nil || err.Error() != want {
			t.Errorf("Load(%q)\ngot error  %v\nwant error %s", arg, err, want)
		}
	}
	bad := filepath.Join(dir, "bad.topo")
	if err := os.WriteFile(bad, []byte("Nodes 16\nTiers 3\nPodsize 4\nTier 0\nRadix_Side 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || err.Error() != bad+`:5: unknown key "Radix_Side"` {
		t.Errorf("Load(bad.topo): %v", err)
	}
}

func BenchmarkParseSpecFatTree1024(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := ParseSpec("fattree:hosts=1024"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseSpecFatTree65536(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := ParseSpec("fattree:hosts=65536"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseLinkEvent(t *testing.T) {
	f, err := ParseSpec("fattree:hosts=16,tiers=3")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := f.ParseLinkEvent("degrade:host3-tor1@1.5us=0.25")
	if err != nil {
		t.Fatal(err)
	}
	l := f.Links[ev.Link]
	names := f.Nodes[f.Ports[l.A].Node].Name + "-" + f.Nodes[f.Ports[l.B].Node].Name
	if names != "host3-tor1" || ev.At != 1500000 || !ev.Up || ev.RateFactor != 0.25 {
		t.Fatalf("parsed %+v (%s)", ev, names)
	}
	if ev, err = f.ParseLinkEvent("down:agg0-tor0@0"); err != nil || ev.Up {
		t.Fatalf("down: %+v %v", ev, err)
	}
	for in, want := range map[string]string{
		"down:tor0-agg0":          "missing @TIME",
		"down:tor0@1us":           "must name two nodes",
		"down:tor0-nosuch@1us":    `no node named "nosuch"`,
		"down:tor0-core0@1us":     "not linked",
		"down:tor0-agg0/3@1us":    "index 3 is out of range",
		"down:tor0-agg0@soon":     "time",
		"degrade:tor0-agg0@1us":   "needs =FRAC",
		"degrade:tor0-agg0@1us=0": "must be a number in (0, 1]",
		"cut:tor0-agg0@1us":       "unknown kind",
		"tor0-agg0@1us":           "want down:A-B@TIME",
	} {
		if _, err := f.ParseLinkEvent(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to mention %q", in, err, want)
		}
	}
}
