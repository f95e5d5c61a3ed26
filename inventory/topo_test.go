package inventory

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// refDir holds htsim's own example files when the shared reference folder is
// present (relative to the package directory, the test's working directory).
const refDir = "../../shared/reference/htsim"

func loadFixture(t *testing.T, name string) *Fabric {
	t.Helper()
	f, err := LoadTopo(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("LoadTopo(%s): %v", name, err)
	}
	return f
}

// nodesOf returns the node IDs with role r, in ID order.
func nodesOf(f *Fabric, r Role) []int {
	var ids []int
	for i := range f.Nodes {
		if f.Nodes[i].Role == r {
			ids = append(ids, i)
		}
	}
	return ids
}

// upDown counts a node's up and down ports.
func upDown(f *Fabric, n int) (up, down int) {
	for _, p := range f.Nodes[n].Ports {
		if f.Ports[p].Uplink {
			up++
		} else {
			down++
		}
	}
	return
}

// shortestPaths returns the hop distance between nodes src and dst and the
// number of distinct shortest paths, counting parallel links separately.
// Only switches forward.
func shortestPaths(f *Fabric, src, dst int) (dist int, paths int64) {
	d := make([]int, len(f.Nodes))
	cnt := make([]int64, len(f.Nodes))
	for i := range d {
		d[i] = -1
	}
	d[src], cnt[src] = 0, 1
	q := []int{src}
	for len(q) > 0 {
		n := q[0]
		q = q[1:]
		if n != src && !f.Nodes[n].IsSwitch() {
			continue
		}
		for _, p := range f.Nodes[n].Ports {
			m := f.PeerNode(p)
			switch {
			case d[m] < 0:
				d[m] = d[n] + 1
				cnt[m] = cnt[n]
				q = append(q, m)
			case d[m] == d[n]+1:
				cnt[m] += cnt[n]
			}
		}
	}
	return d[dst], cnt[dst]
}

// treeWant is the expected shape of a fat tree.
type treeWant struct {
	tiers, hosts, tors, aggs, cores int
	pods, hostsPerPod, hostsPerToR  int
	torUp, aggDown, aggUp, coreDown int
	// host pairs and their number of distinct shortest paths
	paths map[[2]int]int64
}

func checkTree(t *testing.T, f *Fabric, w treeWant) {
	t.Helper()
	if err := f.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	hosts, tors, aggs, cores := nodesOf(f, RoleHost), nodesOf(f, RoleLeaf), nodesOf(f, RoleSpine), nodesOf(f, RoleCore)
	got := [...]int{f.Tiers, len(hosts), len(tors), len(aggs), len(cores), f.NumHosts(), f.HostsPerPod}
	want := [...]int{w.tiers, w.hosts, w.tors, w.aggs, w.cores, w.hosts, w.hostsPerPod}
	if got != want {
		t.Fatalf("tiers, hosts, tors, aggs, cores, NumHosts, HostsPerPod = %v, want %v", got, want)
	}
	torName, aggName := "tor", "agg"
	if w.tiers == 2 {
		torName, aggName = "leaf", "spine"
	}
	pods := map[int]bool{}
	for h := 0; h < w.hosts; h++ {
		n := f.Host(h)
		if f.Hosts[h] != h || n.Name != fmt.Sprintf("host%d", h) || n.Tier != -1 || n.LatencyPs != 0 || len(n.Ports) != 1 {
			t.Fatalf("host %d: node %d %+v", h, f.Hosts[h], *n)
		}
		if !f.Ports[n.Ports[0]].Uplink {
			t.Fatalf("host %d: port not marked uplink", h)
		}
		leaf := &f.Nodes[f.HostLeaf(h)]
		if wantLeaf := fmt.Sprintf("%s%d", torName, h/w.hostsPerToR); leaf.Name != wantLeaf {
			t.Fatalf("host %d on %s, want %s", h, leaf.Name, wantLeaf)
		}
		wantPod := 0
		if w.tiers == 3 {
			wantPod = h / w.hostsPerPod
		}
		if n.Pod != wantPod {
			t.Fatalf("host %d in pod %d, want %d", h, n.Pod, wantPod)
		}
		pods[n.Pod] = true
	}
	if len(pods) != w.pods {
		t.Errorf("%d pods, want %d", len(pods), w.pods)
	}
	check := func(ids []int, name string, tier, wantUp, wantDown int) {
		t.Helper()
		for i, id := range ids {
			n := &f.Nodes[id]
			if n.Name != fmt.Sprintf("%s%d", name, i) || n.Tier != tier {
				t.Fatalf("node %d: name %s tier %d, want %s%d tier %d", id, n.Name, n.Tier, name, i, tier)
			}
			if up, down := upDown(f, id); up != wantUp || down != wantDown {
				t.Fatalf("%s: %d up, %d down ports, want %d, %d", n.Name, up, down, wantUp, wantDown)
			}
			// Down ports come first, then up ports (htsim's port order).
			seenUp := false
			for _, p := range n.Ports {
				if f.Ports[p].Uplink {
					seenUp = true
				} else if seenUp {
					t.Fatalf("%s: down port after an up port", n.Name)
				}
			}
		}
	}
	check(tors, torName, 0, w.torUp, w.hostsPerToR)
	check(aggs, aggName, 1, w.aggUp, w.aggDown)
	check(cores, "core", 2, 0, w.coreDown)
	for pair, want := range w.paths {
		d, n := shortestPaths(f, f.Hosts[pair[0]], f.Hosts[pair[1]])
		if n != want {
			t.Errorf("host%d -> host%d: %d shortest paths of %d hops, want %d", pair[0], pair[1], n, d, want)
		}
	}
}

// checkFatTreeWiring checks htsim's 3-tier wiring rules: every ToR connects
// to every agg of its pod (and no other), the agg at pod position p connects
// to cores p + A*l, and core c to agg c mod A of every pod.
func checkFatTreeWiring(t *testing.T, f *Fabric, torsPerPod, aggsPerPod, bundle1, bundle2 int) {
	t.Helper()
	tors, aggs, cores := nodesOf(f, RoleLeaf), nodesOf(f, RoleSpine), nodesOf(f, RoleCore)
	index := map[int]int{}
	for _, ids := range [][]int{tors, aggs, cores} {
		for i, id := range ids {
			index[id] = i
		}
	}
	for i, id := range tors {
		pod := i / torsPerPod
		if f.Nodes[id].Pod != pod {
			t.Fatalf("tor%d in pod %d, want %d", i, f.Nodes[id].Pod, pod)
		}
		links := map[int]int{}
		for _, p := range f.Nodes[id].Ports {
			if f.Ports[p].Uplink {
				links[index[f.PeerNode(p)]]++
			}
		}
		for a := pod * aggsPerPod; a < (pod+1)*aggsPerPod; a++ {
			if links[a] != bundle1 {
				t.Fatalf("tor%d has %d links to agg%d, want %d (links %v)", i, links[a], a, bundle1, links)
			}
		}
		if len(links) != aggsPerPod {
			t.Fatalf("tor%d connects to aggs %v, want those of pod %d", i, links, pod)
		}
	}
	for i, id := range aggs {
		if f.Nodes[id].Pod != i/aggsPerPod {
			t.Fatalf("agg%d in pod %d, want %d", i, f.Nodes[id].Pod, i/aggsPerPod)
		}
		p := i % aggsPerPod
		links := map[int]int{}
		for _, port := range f.Nodes[id].Ports {
			if f.Ports[port].Uplink {
				links[index[f.PeerNode(port)]]++
			}
		}
		for c, n := range links {
			if c%aggsPerPod != p || n != bundle2 {
				t.Fatalf("agg%d (pod position %d) has %d links to core%d", i, p, n, c)
			}
		}
		if len(links)*aggsPerPod != len(cores) {
			t.Fatalf("agg%d reaches %d cores, want %d", i, len(links), len(cores)/aggsPerPod)
		}
	}
	for i, id := range cores {
		if f.Nodes[id].Pod != -1 {
			t.Fatalf("core%d in pod %d, want -1", i, f.Nodes[id].Pod)
		}
		for _, port := range f.Nodes[id].Ports {
			a := index[f.PeerNode(port)]
			if a%aggsPerPod != i%aggsPerPod {
				t.Fatalf("core%d connects to agg%d", i, a)
			}
		}
	}
}

var fatTree128 = treeWant{
	tiers: 3, hosts: 128, tors: 32, aggs: 32, cores: 16,
	pods: 8, hostsPerPod: 16, hostsPerToR: 4,
	torUp: 4, aggDown: 4, aggUp: 4, coreDown: 8,
	paths: map[[2]int]int64{{0, 127}: 16, {0, 16}: 16, {0, 4}: 4, {0, 3}: 1},
}

// leafSpineTiny is what htsim builds from Nodes 32, Tiers 2, Podsize 32,
// Radix_Down 8, Radix_Up 2, Oversubscribed 4, tier-1 Radix_Down 4: 4 ToRs of
// 8 hosts; 32 x 100 / (100 x 4) = 8 ToR uplinks; 8 / (1 pod x 4) = 2 spines,
// each leaf wired to both.
var leafSpineTiny = treeWant{
	tiers: 2, hosts: 32, tors: 4, aggs: 2, cores: 0,
	pods: 1, hostsPerPod: 32, hostsPerToR: 8,
	torUp: 2, aggDown: 4, aggUp: 0, coreDown: 0,
	paths: map[[2]int]int64{{0, 31}: 2, {0, 8}: 2, {0, 7}: 1},
}

func TestParseTopoFatTree128(t *testing.T) {
	f := loadFixture(t, "fat_tree_128.topo")
	if f.Name != "fat_tree_128" {
		t.Errorf("Name = %q", f.Name)
	}
	checkTree(t, f, fatTree128)
	checkFatTreeWiring(t, f, 4, 4, 1, 1)
	// 16 distinct inter-pod paths, 6 hops each.
	if d, n := shortestPaths(f, f.Hosts[0], f.Hosts[127]); d != 6 || n != 16 {
		t.Errorf("host0 -> host127: %d paths of %d hops, want 16 of 6", n, d)
	}
	if len(f.Links) != 128*3 {
		t.Errorf("%d links, want 384", len(f.Links))
	}
}

func TestParseTopoLeafSpineTiny(t *testing.T) {
	f := loadFixture(t, "leaf_spine_tiny.topo")
	checkTree(t, f, leafSpineTiny)
	for _, id := range nodesOf(f, RoleLeaf) {
		// Each leaf has one link to each spine.
		seen := map[int]int{}
		for _, p := range f.Nodes[id].Ports {
			if f.Ports[p].Uplink {
				seen[f.PeerNode(p)]++
			}
		}
		if len(seen) != 2 {
			t.Fatalf("%s uplinks %v", f.Nodes[id].Name, seen)
		}
	}
	for _, id := range append(nodesOf(f, RoleLeaf), nodesOf(f, RoleSpine)...) {
		if f.Nodes[id].Pod != 0 {
			t.Errorf("%s in pod %d, want 0", f.Nodes[id].Name, f.Nodes[id].Pod)
		}
	}
}

func TestParseTopoBundles(t *testing.T) {
	f := loadFixture(t, "bundles.topo")
	checkTree(t, f, treeWant{
		tiers: 3, hosts: 32, tors: 8, aggs: 8, cores: 4,
		pods: 4, hostsPerPod: 8, hostsPerToR: 4,
		torUp: 4, aggDown: 4, aggUp: 4, coreDown: 8,
		// htsim's get_bidir_paths: same pod A*B1^2 = 8; cross-pod
		// A * (Radix_Up1/B2) * B1^2 * B2^2 = 2*2*4*4 = 64.
		paths: map[[2]int]int64{{0, 31}: 64, {0, 4}: 8, {0, 1}: 1},
	})
	checkFatTreeWiring(t, f, 2, 2, 2, 2)
}

func TestParseTopoRatesAndLatencies(t *testing.T) {
	f := loadFixture(t, "latencies.topo")
	checkTree(t, f, treeWant{
		tiers: 3, hosts: 16, tors: 8, aggs: 8, cores: 4,
		pods: 4, hostsPerPod: 4, hostsPerToR: 2,
		torUp: 2, aggDown: 2, aggUp: 2, coreDown: 4,
		paths: map[[2]int]int64{{0, 15}: 4, {0, 2}: 2},
	})
	checkFatTreeWiring(t, f, 2, 2, 1, 1)
	// Links below tier t have tier t's latency; switches their tier's latency.
	wantLink := map[Role]int64{RoleHost: 500_000, RoleLeaf: 700_000, RoleSpine: 900_000}
	for _, l := range f.Links {
		lo := f.Nodes[f.Ports[l.A].Node].Role
		if l.LatencyPs != wantLink[lo] || l.RateBps != 100e9 {
			t.Fatalf("link from %v: %d ps, %d bps", lo, l.LatencyPs, l.RateBps)
		}
		if !f.Ports[l.A].Uplink || f.Ports[l.B].Uplink {
			t.Fatalf("link %d: A must be the lower end", l.ID)
		}
	}
	wantSwitch := map[Role]int64{RoleHost: 0, RoleLeaf: 100_000, RoleSpine: 200_000, RoleCore: 300_000}
	for _, n := range f.Nodes {
		if n.LatencyPs != wantSwitch[n.Role] {
			t.Fatalf("%s: latency %d ps, want %d", n.Name, n.LatencyPs, wantSwitch[n.Role])
		}
	}
}

func TestParseTopoMixedSpeeds(t *testing.T) {
	f := loadFixture(t, "mixed_speed.topo")
	checkTree(t, f, treeWant{
		tiers: 2, hosts: 16, tors: 4, aggs: 1, cores: 0,
		pods: 1, hostsPerPod: 16, hostsPerToR: 4,
		torUp: 1, aggDown: 4, aggUp: 0, coreDown: 0,
		paths: map[[2]int]int64{{0, 15}: 1},
	})
	for _, l := range f.Links {
		want := int64(400e9)
		if f.Nodes[f.Ports[l.A].Node].Role == RoleHost {
			want = 100e9
		}
		if l.RateBps != want {
			t.Fatalf("link %d: %d bps, want %d", l.ID, l.RateBps, want)
		}
	}
}

// TestReferenceTopos loads htsim's own example files when they are present.
func TestReferenceTopos(t *testing.T) {
	if _, err := os.Stat(refDir); err != nil {
		t.Skipf("htsim reference folder %s not available (%v); shapes are covered by testdata fixtures", refDir, err)
	}
	f, err := LoadTopo(filepath.Join(refDir, "fat_tree_128_1os.topo"))
	if err != nil {
		t.Fatal(err)
	}
	checkTree(t, f, fatTree128)
	checkFatTreeWiring(t, f, 4, 4, 1, 1)
	mine := loadFixture(t, "fat_tree_128.topo")
	if !sameStructure(f, mine) {
		t.Error("reference fat_tree_128_1os.topo and testdata/fat_tree_128.topo build different fabrics")
	}
	g, err := LoadTopo(filepath.Join(refDir, "leaf_spine_tiny.topo"))
	if err != nil {
		t.Fatal(err)
	}
	checkTree(t, g, leafSpineTiny)
}

// sameStructure reports whether two fabrics are identical apart from their names.
func sameStructure(a, b *Fabric) bool {
	x, y := *a, *b
	x.Name, y.Name = "", ""
	return reflect.DeepEqual(x, y)
}

func TestParseTopoErrors(t *testing.T) {
	const hdr = "Nodes 128\nTiers 3\nPodsize 16\n" // lines 1-3
	const t0 = "Tier 0\nDownlink_speed_Gbps 100\nRadix_Down 4\nRadix_Up 4\nDownlink_Latency_ns 1000\n"
	const t1 = "Tier 1\nDownlink_speed_Gbps 100\nRadix_Down 4\nRadix_Up 4\nDownlink_Latency_ns 1000\n"
	const t2 = "Tier 2\nDownlink_speed_Gbps 100\nRadix_Down 8\nDownlink_Latency_ns 1000\n"
	if _, err := ParseTopo("fat.topo", strings.NewReader(hdr+t0+t1+t2)); err != nil {
		t.Fatalf("base file: %v", err)
	}
	tests := []struct{ in, want string }{
		{"", "fat.topo: missing Nodes in the header"},
		{"# only a comment\n\n", "fat.topo: missing Nodes in the header"},
		{hdr, "fat.topo: no Tier blocks (want Tier 0 to Tier 2)"},
		{"Nodes 128\nPodsize 16\nTier 0\n", "fat.topo:3: missing Tiers in the header"},
		{"Nodes 128\nTiers 3\n\nTier 0\n", "fat.topo:4: missing Podsize in the header"},
		{hdr + "Radix_Side 3\n", `fat.topo:4: unknown key "Radix_Side"`},
		{hdr + t0 + "Radix_Side 3\n", `fat.topo:9: unknown key "Radix_Side"`},
		{"Nodes sixteen\n", `fat.topo:1: Nodes: want an integer, got "sixteen"`},
		{"Nodes 16.5\n", `fat.topo:1: Nodes: want an integer, got "16.5"`},
		{"Nodes 0\n", "fat.topo:1: Nodes must be at least 1, got 0"},
		{"Nodes 2000000\n", "fat.topo:1: Nodes 2000000 exceeds the limit of 1048576"},
		{"Nodes 99999999999999999999\n", "fat.topo:1: Nodes 99999999999999999999 is out of range (at most 1048576)"},
		{"Nodes 16\nNodes 16\n", "fat.topo:2: duplicate Nodes (first set on line 1)"},
		{"Nodes\n", "fat.topo:1: Nodes: missing value"},
		{"Nodes 16 hosts\n", `fat.topo:1: Nodes: unexpected "hosts" after the value`},
		{"Nodes 16 # hosts\nTiers 4\n", "fat.topo:2: key Tiers must be 2 or 3, got 4"},
		{hdr + "Tier 1\n", "fat.topo:4: Tier 1 out of order: expected Tier 0"},
		{hdr + t0 + "Tier 0\n", "fat.topo:9: Tier 0 out of order: expected Tier 1"},
		{hdr + "Tier 3\n", "fat.topo:4: Tier 3 out of range: Tiers is 3, so tiers are 0..2"},
		{hdr + "Tier x\n", `fat.topo:4: Tier: want a tier number, got "x"`},
		{hdr + t0 + t1, "fat.topo: missing Tier 2 block (Tiers is 3)"},
		{hdr + t0 + "Tier 1\nRadix_Down 4\n", "fat.topo:9: Tier 1: missing Downlink_speed_Gbps"},
		{hdr + t0 + "Tier 1\nDownlink_speed_Gbps 100\nRadix_Down 4\nDownlink_Latency_ns 1000\n" + t2,
			"fat.topo:9: Tier 1: missing Radix_Up"},
		{hdr + "Tier 0\nDownlink_speed_Gbps 100\nRadix_Down 4\nRadix_Up 4\n" + t1, "fat.topo:4: Tier 0: missing Downlink_Latency_ns"},
		{hdr + "Tier 0\nRadix_Down 4\nradix_down 4\n", "fat.topo:6: Tier 0: duplicate Radix_Down (first set on line 5)"},
		{hdr + "Tier 0\nRadix_Down -4\n", "fat.topo:5: Tier 0: Radix_Down must be at least 1, got -4"},
		{hdr + "Tier 0\nDownlink_Latency_ns 0\n", "fat.topo:5: Tier 0: Downlink_Latency_ns must be at least 1, got 0"},
		{hdr + "Tier 0\nSwitch_Latency_ns -1\n", "fat.topo:5: Tier 0: Switch_Latency_ns must not be negative, got -1"},
		{hdr + "Tier 0\nOversubscribed 0\n", "fat.topo:5: Tier 0: Oversubscribed must be at least 1, got 0"},
		{hdr + "Tier 0\nDownlink_speed_Gbps 100G\n", `fat.topo:5: Tier 0: Downlink_speed_Gbps: want an integer, got "100G"`},
		{hdr + "Tier 0\nBundle 2\n", "fat.topo:5: Tier 0: Bundle 2 not supported: host links cannot be bundled (htsim requires Bundle 1 on Tier 0)"},
		{hdr + t0 + t1 + "Tier 2\nRadix_Up 4\n", "fat.topo:15: Tier 2: Radix_Up not allowed on the top tier (it has no uplinks)"},
		{hdr + t0 + t1 + "Tier 2\nQueue_Up 4\n", "fat.topo:15: Tier 2: Queue_Up not allowed on the top tier (it has no uplinks)"},
		{hdr + t0 + t1 + "Tier 2\nOversubscribed 2\n", "fat.topo:15: Tier 2: Oversubscribed 2 on the top tier (it has no uplinks; only 1 is allowed)"},
		{hdr + "Radix_Down 4\n", "fat.topo:4: Radix_Down outside a Tier block (the header takes Nodes, Tiers and Podsize)"},
		{hdr + t0 + "Podsize 16\n", "fat.topo:9: Podsize must come before the first Tier block"},
		// Consistency (htsim's set_custom_params checks).
		{"Nodes 100\nTiers 3\nPodsize 16\n" + t0 + t1 + t2, "fat.topo:3: Nodes 100 is not a multiple of Podsize 16"},
		{"Nodes 126\nTiers 3\nPodsize 18\n" + t0 + t1 + t2, "fat.topo:6: Podsize 18 is not a multiple of Tier 0 Radix_Down 4 (hosts per ToR)"},
		{hdr + t0 + "Oversubscribed 2\n" + t1 + t2, "fat.topo:9: Tier 0: Radix_Down 4 must equal Oversubscribed 2 x Radix_Up 4 = 8"},
		{hdr + t0 + strings.Replace(t1, "Radix_Down 4", "Radix_Down 2", 1) + t2,
			"fat.topo:7: Tier 0: Radix_Up 4 but the tree has 8 aggs per pod x Tier 1 Bundle 1 = 8 ToR uplinks (aggs per pod = 128 ToR uplinks / (8 pods x Tier 1 Radix_Down 2))"},
		{hdr + t0 + t1 + "Bundle 2\n" + t2,
			"fat.topo:7: Tier 0: Radix_Up 4 but the tree has 4 aggs per pod x Tier 1 Bundle 2 = 8 ToR uplinks (aggs per pod = 128 ToR uplinks / (8 pods x Tier 1 Radix_Down 4))"},
		{hdr + t0 + strings.Replace(t1, "Radix_Down 4", "Radix_Down 3", 1) + t2,
			"fat.topo:11: Tier 1: 128 ToR uplinks do not divide evenly into 8 pods x Radix_Down 3"},
		{hdr + t0 + t1 + strings.Replace(t2, "Radix_Down 8", "Radix_Down 64", 1),
			"fat.topo:16: Tier 2: 2 core switches (128 agg uplinks / Radix_Down 64) is not a multiple of 4 aggs per pod"},
		{hdr + t0 + t1 + strings.Replace(t2, "Radix_Down 8", "Radix_Down 16", 1),
			"fat.topo:12: Tier 1: Radix_Up 4 but 8 core switches x Tier 2 Bundle 1 / 4 aggs per pod = 2 agg uplinks"},
		{hdr + t0 + strings.Replace(t1, "Radix_Up 4", "Radix_Up 2", 1) + t2,
			"fat.topo:12: Tier 1: Radix_Up 2 but 16 core switches x Tier 2 Bundle 1 / 4 aggs per pod = 4 agg uplinks"},
		{hdr + t0 + t1 + strings.Replace(t2, "Radix_Down 8", "Radix_Down 7", 1),
			"fat.topo:16: Tier 2: 128 agg uplinks are not a multiple of Radix_Down 7"},
		{hdr + t0 + strings.Replace(t1, "Radix_Up 4", "Radix_Up 3", 1) + "Tier 2\nDownlink_speed_Gbps 100\nRadix_Down 8\nBundle 2\nDownlink_Latency_ns 1000\n",
			"fat.topo:12: Tier 1: Radix_Up 3 is not a multiple of Tier 2 Bundle 2"},
		{hdr + t0 + strings.Replace(t1, "Downlink_speed_Gbps 100", "Downlink_speed_Gbps 300", 1) + t2,
			"fat.topo:5: Tier 0: Nodes 128 x 100 Gbps / (Tier 1 300 Gbps x Oversubscribed 1) is not a whole number of ToR uplinks"},
		{hdr + t0 + t1 + strings.Replace(t2, "Downlink_speed_Gbps 100", "Downlink_speed_Gbps 300", 1),
			"fat.topo:10: Tier 1: 128 ToR uplinks x 100 Gbps / (Tier 2 300 Gbps x Oversubscribed 1) is not a whole number of agg uplinks"},
		{"Nodes 32\nTiers 2\nPodsize 32\nTier 0\nDownlink_speed_Gbps 100\nRadix_Down 8\nRadix_Up 2\nOversubscribed 4\nDownlink_Latency_ns 1000\n" +
			"Tier 1\nDownlink_speed_Gbps 100\nRadix_Down 4\nRadix_Up 2\nDownlink_Latency_ns 1000\n",
			"fat.topo:13: Tier 1: Radix_Up not allowed on the top tier (it has no uplinks)"},
		{"Nodes 32\nTiers 2\nPodsize 32\nTier 0\nTier 1\nTier 2\n", "fat.topo:4: Tier 0: missing Downlink_speed_Gbps"},
		{"Nodes 32\nTiers 2\nPodsize 32\nTier 0\nDownlink_speed_Gbps 100\nRadix_Down 8\nRadix_Up 2\nOversubscribed 4\nDownlink_Latency_ns 1000\n" +
			"Tier 1\nDownlink_speed_Gbps 100\nRadix_Down 4\nDownlink_Latency_ns 1000\nTier 2\n",
			"fat.topo:14: Tier 2 out of range: Tiers is 2, so tiers are 0..1"},
		// Limits: 1M hosts on 1-port ToRs is too many switches.
		{"Nodes 1048576\nTiers 2\nPodsize 1048576\nTier 0\nDownlink_speed_Gbps 100\nRadix_Down 1\nRadix_Up 1\nDownlink_Latency_ns 1\n" +
			"Tier 1\nDownlink_speed_Gbps 100\nRadix_Down 1048576\nDownlink_Latency_ns 1\n",
			"fat.topo: the tree needs 1048577 switches, more than the limit of 1048576"},
		// A 2-tier file with many pods: htsim wires every ToR to every agg.
		{"Nodes 524288\nTiers 2\nPodsize 1\nTier 0\nDownlink_speed_Gbps 100\nRadix_Down 1\nRadix_Up 1\nDownlink_Latency_ns 1\n" +
			"Tier 1\nDownlink_speed_Gbps 100\nRadix_Down 1\nDownlink_Latency_ns 1\n",
			"fat.topo: the tree needs 274878431232 links, more than the limit of 4194304"},
	}
	for _, tc := range tests {
		_, err := ParseTopo("fat.topo", strings.NewReader(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("input:\n%s\ngot error  %v\nwant error %s", tc.in, err, tc.want)
		}
	}
}

func TestParseTopoTooLarge(t *testing.T) {
	big := strings.Repeat("# padding padding padding padding padding padding\n", (maxTopoBytes/50)+1)
	_, err := ParseTopo("big.topo", strings.NewReader(big))
	if err == nil || err.Error() != "big.topo: file larger than 1048576 bytes" {
		t.Errorf("got %v", err)
	}
}

func TestTopoErrorType(t *testing.T) {
	_, err := ParseTopo("x.topo", strings.NewReader("Nodes 16\nFoo 1\n"))
	te, ok := err.(*TopoError)
	if !ok || te.File != "x.topo" || te.Line != 2 {
		t.Fatalf("got %#v", err)
	}
	if _, err := LoadTopo(filepath.Join("testdata", "does-not-exist.topo")); err == nil || !os.IsNotExist(err) {
		t.Errorf("LoadTopo of a missing file: %v", err)
	}
}

func TestParseTopoCRLFAndComments(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "fat_tree_128.topo"))
	if err != nil {
		t.Fatal(err)
	}
	crlf := strings.ReplaceAll(string(data), "\n", "  # trailing\r\n")
	f, err := ParseTopo("crlf.topo", strings.NewReader("\t"+crlf))
	if err != nil {
		t.Fatal(err)
	}
	if !sameStructure(f, loadFixture(t, "fat_tree_128.topo")) {
		t.Error("CRLF/comment variant builds a different fabric")
	}
}
