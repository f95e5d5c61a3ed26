package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Ctrl-C while a large matrix is being planned stops the planning at the
// next point; nothing after it is resolved.
func TestPlanStopsWhenCancelled(t *testing.T) {
	var seeds []string
	for i := 1; i <= 256; i++ {
		seeds = append(seeds, strconv.Itoa(i))
	}
	file := filepath.Join(t.TempDir(), "big.yaml")
	body := "fabric: {spec: \"fattree:hosts=128,tiers=3\"}\njobs:\n  - {name: p, workload: all-to-all, size: 64KiB}\nmatrix:\n  seed: [" + strings.Join(seeds, ", ") + "]\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resolved := 0
	planHook = func() {
		resolved++
		if resolved == 3 {
			cancel()
		}
	}
	defer func() { planHook = nil }()
	_, pts, err := PlanContext(ctx, file)
	if !errors.Is(err, context.Canceled) || pts != nil {
		t.Fatalf("err %v, %d points; want context.Canceled", err, len(pts))
	}
	if resolved != 3 {
		t.Fatalf("%d points resolved after the cancel at the 3rd", resolved)
	}
	// Already cancelled: nothing is loaded.
	if _, _, err := PlanContext(ctx, file); !errors.Is(err, context.Canceled) || resolved != 3 {
		t.Fatalf("err %v, resolved %d", err, resolved)
	}
	// Points of one fabric share it (planning 256 points of a big fabric
	// must not build it 256 times).
	planHook = nil
	_, pts, err = PlanContext(context.Background(), file)
	if err != nil || len(pts) != 256 {
		t.Fatalf("%v, %d points", err, len(pts))
	}
	if pts[0].Fabric != pts[255].Fabric {
		t.Error("points of the same fabric spec got separate fabrics")
	}
}
