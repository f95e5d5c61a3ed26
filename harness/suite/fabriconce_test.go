package suite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fabricbench/fabricbench/inventory"
)

// A suite's fabric is built once per distinct fabric: by the checker when
// the suite loads, reused by its points and by LoadedFabric (what the
// planner's Resolve uses).
func TestFabricBuiltOncePerDistinctFabric(t *testing.T) {
	builds := map[string]int{}
	saved := parseSpec
	parseSpec = func(spec string) (*inventory.Fabric, error) {
		builds[spec]++
		return saved(spec)
	}
	t.Cleanup(func() { parseSpec = saved })
	doc := base + "matrix:\n  transport.lb: [reps, ops, ecmp]\n  fabric.spec: ['leafspine:leaves=2,spines=2,hosts_per_leaf=4', 'leafspine:leaves=2,spines=2,hosts_per_leaf=2']\n"
	path := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s := mustLoad(t, path)
	pts, err := s.Points()
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 6 {
		t.Fatalf("%d points, want 6", len(pts))
	}
	seen := map[*inventory.Fabric]string{}
	for _, p := range pts {
		f, err := p.Suite.LoadedFabric()
		if err != nil {
			t.Fatal(err)
		}
		if spec, ok := seen[f]; ok && spec != p.Suite.Fabric.Spec {
			t.Fatalf("points of %s and %s share a fabric", spec, p.Suite.Fabric.Spec)
		}
		seen[f] = p.Suite.Fabric.Spec
	}
	if len(seen) != 2 {
		t.Fatalf("%d distinct fabrics over the points, want 2", len(seen))
	}
	for spec, n := range builds {
		if n != 1 {
			t.Errorf("%s built %d times, want once", spec, n)
		}
	}
	if len(builds) != 2 {
		t.Errorf("builds %v, want the 2 fabrics once each", builds)
	}
}
