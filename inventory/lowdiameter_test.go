package inventory

import "testing"

// routerGraph returns each router's router neighbours (by node ID).
func routerGraph(f *Fabric) map[int][]int {
	g := map[int][]int{}
	for i := range f.Nodes {
		if !f.Nodes[i].IsSwitch() {
			continue
		}
		g[i] = nil
		for _, p := range f.Nodes[i].Ports {
			if m := f.PeerNode(p); f.Nodes[m].IsSwitch() {
				g[i] = append(g[i], m)
			}
		}
	}
	return g
}

func diameter(g map[int][]int) int {
	d := 0
	for s := range g {
		dist := map[int]int{s: 0}
		q := []int{s}
		for len(q) > 0 {
			n := q[0]
			q = q[1:]
			for _, m := range g[n] {
				if _, ok := dist[m]; !ok {
					dist[m] = dist[n] + 1
					q = append(q, m)
				}
			}
		}
		if len(dist) != len(g) {
			return -1
		}
		for _, v := range dist {
			d = max(d, v)
		}
	}
	return d
}

func checkDragonfly(t *testing.T, spec string, hosts, routers, groups int) {
	t.Helper()
	f, err := ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	nsw := 0
	pods := map[int]bool{}
	for i := range f.Nodes {
		if f.Nodes[i].IsSwitch() {
			nsw++
			pods[f.Nodes[i].Pod] = true
			if f.Nodes[i].Tier != 0 {
				t.Errorf("%s tier %d", f.Nodes[i].Name, f.Nodes[i].Tier)
			}
		}
	}
	if f.NumHosts() != hosts || nsw != routers || len(pods) != groups {
		t.Fatalf("%s: %d hosts, %d routers, %d groups; want %d, %d, %d", spec, f.NumHosts(), nsw, len(pods), hosts, routers, groups)
	}
	pair := map[[2]int]int{}
	for _, l := range f.Links {
		a, b := f.Ports[l.A].Node, f.Ports[l.B].Node
		if !f.Nodes[a].IsSwitch() || !f.Nodes[b].IsSwitch() {
			continue
		}
		ga, gb := f.Nodes[a].Pod, f.Nodes[b].Pod
		if l.Global != (ga != gb) {
			t.Fatalf("link %s-%s: Global=%v across groups %d and %d", f.Nodes[a].Name, f.Nodes[b].Name, l.Global, ga, gb)
		}
		if ga > gb {
			ga, gb = gb, ga
		}
		if l.Global {
			pair[[2]int{ga, gb}]++
		}
	}
	if len(pair) != groups*(groups-1)/2 {
		t.Fatalf("%d group pairs joined, want %d", len(pair), groups*(groups-1)/2)
	}
	for k, n := range pair {
		if n != 1 {
			t.Fatalf("groups %v: %d global links", k, n)
		}
	}
	if d := diameter(routerGraph(f)); d != 3 {
		t.Fatalf("router diameter %d, want 3", d)
	}
}

func TestDragonflyCounts(t *testing.T) {
	// Spritz, Table II.
	checkDragonfly(t, "dragonfly:p=4,a=8,h=4", 1056, 264, 33)
	checkDragonfly(t, "dragonfly:p=2,a=4,h=2", 72, 36, 9)
}

func TestDragonflyHtsimArrangement(t *testing.T) {
	// htsim: router j of group G, global port l: t = (j%a)*h+l, target
	// group t (+1 when >= G), target router G/h of that group.
	f, err := ParseSpec("dragonfly:p=1,a=4,h=2,global_gbps=50,global_latency=2us")
	if err != nil {
		t.Fatal(err)
	}
	const a, h = 4, 2
	r0 := f.NumHosts()
	got := map[[2]int]bool{}
	for _, l := range f.Links {
		if l.Global {
			x, y := f.Ports[l.A].Node-r0, f.Ports[l.B].Node-r0
			got[[2]int{x, y}], got[[2]int{y, x}] = true, true
			if l.RateBps != 50e9 || l.LatencyPs != 2_000_000 {
				t.Fatalf("global link rate %d latency %d", l.RateBps, l.LatencyPs)
			}
		} else if l.RateBps != 100e9 {
			t.Fatalf("local link rate %d", l.RateBps)
		}
	}
	for j := 0; j < 9*a; j++ {
		g := j / a
		for l := 0; l < h; l++ {
			tg := (j%a)*h + l
			if tg >= g {
				tg++
			} else {
				continue
			}
			if k := tg*a + g/h; !got[[2]int{j, k}] {
				t.Fatalf("no global link router%d-router%d", j, k)
			}
		}
	}
	// 36 host links, 9 groups x 6 local links, 36 global links.
	if s := f.Summary(); s != "36 hosts, 36 routers (router0..router35), 126 links" {
		t.Fatal(s)
	}
}

func TestSlimFly(t *testing.T) {
	for _, c := range []struct {
		spec           string
		hosts, routers int
		degree         int
	}{
		{"slimfly:q=9,p=7", 1134, 162, 13}, // Spritz, Table II
		{"slimfly:q=5,p=2", 100, 50, 7},
		{"slimfly:q=4,p=1", 32, 32, 6},
		{"slimfly:q=3,p=1", 18, 18, 5},
		{"slimfly:q=7,p=1", 98, 98, 11},
	} {
		f, err := ParseSpec(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		g := routerGraph(f)
		if f.NumHosts() != c.hosts || len(g) != c.routers {
			t.Fatalf("%s: %d hosts %d routers", c.spec, f.NumHosts(), len(g))
		}
		for n, nb := range g {
			seen := map[int]bool{}
			for _, m := range nb {
				if seen[m] || m == n {
					t.Fatalf("%s: %s has a parallel link or loop", c.spec, f.Nodes[n].Name)
				}
				seen[m] = true
			}
			if len(nb) != c.degree {
				t.Fatalf("%s: %s network degree %d, want %d", c.spec, f.Nodes[n].Name, len(nb), c.degree)
			}
		}
		if d := diameter(g); d != 2 {
			t.Fatalf("%s: diameter %d, want 2", c.spec, d)
		}
	}
}

func TestGF9(t *testing.T) {
	F, err := newGF(9)
	if err != nil {
		t.Fatal(err)
	}
	for a := 1; a < 9; a++ {
		inv := 0
		for b := 1; b < 9; b++ {
			if F.mul(a, b) == 1 {
				inv++
			}
		}
		if inv != 1 {
			t.Fatalf("%d has %d inverses", a, inv)
		}
	}
	if _, err := newGF(6); err == nil {
		t.Fatal("GF(6) built")
	}
	for _, bad := range []string{"slimfly:q=6,p=1", "slimfly:q=2,p=1", "dragonfly:p=1,a=2", "dragonfly:p=1,a=2,h=1,oversub=2"} {
		if _, err := ParseSpec(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestSlimFlyGlobalLinks: a Slim Fly's links between its two halves are
// global (Spritz Table I counts their hops as global), those within a
// group local: every router has Q global links, one to each group of the
// other half, and its remaining (Q-d)/2 links stay in its own group;
// global_latency and global_gbps apply to the global ones only.
func TestSlimFlyGlobalLinks(t *testing.T) {
	f, err := ParseSpec("slimfly:q=9,p=7,gbps=400,latency=25ns,local_latency=25ns,global_latency=500ns,global_gbps=800")
	if err != nil {
		t.Fatal(err)
	}
	const q = 9
	global, local := map[int]int{}, map[int]int{}
	groups := map[int]map[int]bool{}
	for _, l := range f.Links {
		a, b := f.Ports[l.A].Node, f.Ports[l.B].Node
		if f.Nodes[a].Role == RoleHost || f.Nodes[b].Role == RoleHost {
			continue
		}
		ga, gb := f.Nodes[a].Pod, f.Nodes[b].Pod
		if l.Global {
			if (ga < q) == (gb < q) || l.LatencyPs != 500_000 || l.RateBps != 800e9 {
				t.Fatalf("global link %s - %s: pods %d, %d (halves must differ), %d ps, %d bit/s", f.Nodes[a].Name, f.Nodes[b].Name, ga, gb, l.LatencyPs, l.RateBps)
			}
			global[a]++
			global[b]++
			for _, xy := range [2][2]int{{a, gb}, {b, ga}} {
				if groups[xy[0]] == nil {
					groups[xy[0]] = map[int]bool{}
				}
				groups[xy[0]][xy[1]] = true
			}
			continue
		}
		if ga != gb || l.LatencyPs != 25_000 || l.RateBps != 400e9 {
			t.Fatalf("local link %s - %s: pods %d, %d (must match), %d ps, %d bit/s", f.Nodes[a].Name, f.Nodes[b].Name, ga, gb, l.LatencyPs, l.RateBps)
		}
		local[a]++
		local[b]++
	}
	for n := range f.Nodes {
		if f.Nodes[n].Role == RoleHost {
			continue
		}
		if global[n] != q || local[n] != 4 || len(groups[n]) != q {
			t.Fatalf("%s: %d global links to %d groups, %d local; want %d to %d groups and 4 local", f.Nodes[n].Name, global[n], len(groups[n]), local[n], q, q)
		}
	}
}
