package sim

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

// refDir is htsim's reference folder beside the checkout, when present.
var refDir = "../../shared/reference/htsim"

// refSpec builds the same tree as fat_tree_128_1os.topo.
const refSpec = "fattree:hosts=128,tiers=3,gbps=100,oversub=1,latency=1us"

// htsimParams are the transport settings the reference figures were made
// with: 4150 B on the wire (4086 B payload + 64 B header), trimming on.
func htsimParams(lb transport.LBKind) transport.Params {
	p := transport.DefaultParams()
	p.MTU, p.HeaderBytes, p.AckBytes = 4086, 64, 64
	p.LB = lb
	return p
}

// refFabric loads fat_tree_128_1os.topo when the reference folder exists,
// otherwise the equivalent generator spec.
func refFabric(t testing.TB) *inventory.Fabric {
	t.Helper()
	path := filepath.Join(refDir, "fat_tree_128_1os.topo")
	if _, err := os.Stat(path); err == nil {
		f, err := inventory.LoadTopo(path)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	t.Logf("%s not found: using %s", path, refSpec)
	f, err := inventory.ParseSpec(refSpec)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// refMatrix loads an htsim reference matrix, or the fixture in testdata that
// stands in for it (same shape, written by this project).
func refMatrix(t testing.TB, name string) *workloads.Matrix {
	t.Helper()
	path := filepath.Join(refDir, name)
	if _, err := os.Stat(path); err != nil {
		t.Logf("%s not found: using testdata/%s", path, name)
		path = filepath.Join("testdata", name)
	}
	m, err := workloads.LoadCM(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func run(t testing.TB, cfg Config) *Result {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s.Run()
}

type fctStats struct{ min, p50, p99, max float64 }

func fcts(t testing.TB, r *Result) fctStats {
	t.Helper()
	var v []float64
	for _, f := range r.Flows {
		if f.FCT < 0 {
			t.Fatalf("flow %d (%d->%d) did not finish", f.ID, f.Src, f.Dst)
		}
		v = append(v, float64(f.FCT)/1e6)
	}
	sort.Float64s(v)
	return fctStats{v[0], Quantile(v, 0.5), Quantile(v, 0.99), v[len(v)-1]}
}

func within(got, want, tol float64) bool {
	d := got - want
	if d < 0 {
		d = -d
	}
	return d <= tol*want
}
