package inventory

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/internal/fuzzbound"
)

// fuzzMaxLinks skips inputs that parse into large (valid) trees: building
// them is correct but slow and would starve the fuzzer.
const fuzzMaxLinks = 2_000

// checkBuilt asserts the invariants every built tree must have.
func checkBuilt(t *testing.T, f *Fabric) {
	t.Helper()
	if err := f.Validate(); err != nil {
		t.Fatalf("built fabric fails Validate: %v", err)
	}
	if f.Tiers != 2 && f.Tiers != 3 {
		t.Fatalf("Tiers = %d", f.Tiers)
	}
	if f.HostsPerPod < 1 || f.NumHosts()%f.HostsPerPod != 0 {
		t.Fatalf("HostsPerPod %d for %d hosts", f.HostsPerPod, f.NumHosts())
	}
	for h, id := range f.Hosts {
		n := &f.Nodes[id]
		if id != h || n.Role != RoleHost || len(n.Ports) != 1 {
			t.Fatalf("host %d: node %d %+v", h, id, *n)
		}
	}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if n.IsSwitch() && (n.Tier < 0 || n.Tier >= f.Tiers || int(n.Role) != n.Tier+1) {
			t.Fatalf("%s: role %v tier %d", n.Name, n.Role, n.Tier)
		}
	}
	for _, l := range f.Links {
		lo, hi := &f.Nodes[f.Ports[l.A].Node], &f.Nodes[f.Ports[l.B].Node]
		if hi.Tier != lo.Tier+1 {
			t.Fatalf("link %d joins %s (tier %d) and %s (tier %d)", l.ID, lo.Name, lo.Tier, hi.Name, hi.Tier)
		}
	}
}

func FuzzParseTopo(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.topo"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed fixtures: %v", err)
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"Nodes 16\nTiers 3\nPodsize 4\nTier 0\nRadix_Side 3\n",
		"Nodes 16 # c\nTiers 2\nPodsize 16\nTier 0\nDownlink_speed_Gbps 100\nRadix_Down 4\nRadix_Up 2\nOversubscribed 2\nDownlink_Latency_ns 1\nTier 1\nDownlink_speed_Gbps 100\nRadix_Down 4\nDownlink_Latency_ns 1\n",
		"Nodes 524288\nTiers 2\nPodsize 1\nTier 0\nDownlink_speed_Gbps 100\nRadix_Down 1\nRadix_Up 1\nDownlink_Latency_ns 1\nTier 1\nDownlink_speed_Gbps 100\nRadix_Down 1\nDownlink_Latency_ns 1\n",
		"Tier 0\nTier 1\n",
		"Nodes 1\nTiers 3\nPodsize 1\nTier 0\nDownlink_speed_Gbps 1\nRadix_Down 1\nRadix_Up 1\nDownlink_Latency_ns 1\nTier 1\nDownlink_speed_Gbps 1\nRadix_Down 1\nRadix_Up 1\nDownlink_Latency_ns 1\nTier 2\nDownlink_speed_Gbps 1\nRadix_Down 1\nDownlink_Latency_ns 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbound.Default(t, func() {
			if c, err := parseTopoConfig("fuzz.topo", bytes.NewReader(data)); err == nil {
				if s, err := c.shape(); err == nil && s.numLinks() > fuzzMaxLinks {
					t.Skip("valid but large")
				}
			}
			fab, err := ParseTopo("fuzz.topo", bytes.NewReader(data))
			if err != nil {
				if !strings.HasPrefix(err.Error(), "fuzz.topo:") {
					t.Fatalf("error does not name the file: %v", err)
				}
				return
			}
			checkBuilt(t, fab)
		})
	})
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{
		"fattree:hosts=128,tiers=3,gbps=100,oversub=1",
		"fattree:hosts=128,tiers=3,gbps=100,oversub=1,latency=1us,switch_latency=0ns,podsize=16,radix=8",
		"fattree:hosts=1024",
		"fattree:hosts=128,tiers=2",
		"fattree:hosts=512,oversub=4",
		"fattree:hosts=256,oversub1=2",
		"fattree:hosts=96,radix=8",
		"fattree:hosts=64,radix=8,podsize=8",
		"fattree:hosts=256,podsize=16",
		"fattree:hosts=32,tiers=2,oversub=4,radix=4",
		"fattree:hosts=16,latency=1.5us,switch_latency=250ns,gbps=12.5",
		"fattree:hosts=100",
		"leafspine:leaves=4,spines=2,hosts_per_leaf=2,gbps=100",
		"leafspine:leaves=4,spines=4,hosts_per_leaf=2,links_per_spine=2,uplink_gbps=400,latency=500ns",
		"leafspine:leaves=3,spines=2,hosts_per_leaf=8,links_per_spine=2,latency=2us,switch_latency=1ns",
		"mesh:x=1",
		"fattree:hosts=128,,tiers=3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		fuzzbound.Default(t, func() {
			if s, err := planSpec(spec); err == nil && s.numLinks() > fuzzMaxLinks {
				t.Skip("valid but large")
			}
			fab, err := ParseSpec(spec)
			if err != nil {
				if err.Error() == "" {
					t.Fatal("empty error message")
				}
				return
			}
			checkBuilt(t, fab)
		})
	})
}
