package harness_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fabricbench/fabricbench/harness"
)

// platformed is a declared backend whose devices' platforms limit
// features: "weak" never does PFC.
type platformed struct{ declared }

func (platformed) Platforms() []string { return []string{"strong", "weak"} }
func (platformed) PlatformLimit(p string, f harness.Feature) string {
	if p == "weak" && f == harness.FeatPFC {
		return "no pause frames"
	}
	return ""
}

// Every registered feature carries its suite fields, a documentation line
// and its default, and the table has a row for each with a cell per
// backend (per platform for a PlatformCapable one): yes, by device or no,
// each reason numbered once.
func TestFeatureSupportTable(t *testing.T) {
	for _, k := range harness.FeatureKinds() {
		if len(k.Paths) == 0 || k.Line == "" || k.Default == "" {
			t.Errorf("feature %s: paths %q, line %q, default %q", k.Feature, k.Paths, k.Line, k.Default)
		}
	}
	lab, _ := registerDeclared(labLike, nil)
	hw := fmt.Sprintf("platformed%d", declaredN.Add(1))
	hwCaps := harness.Capabilities{
		Unsupported: map[harness.Feature]string{harness.FeatPacing: "agents pace at the NIC rate"}, // as labLike's
		ByDevice:    map[harness.Feature]string{harness.FeatECN: "where the switch has WRED"},
	}
	harness.Register(hw, func() harness.Backend {
		return &platformed{declared{caps: hwCaps, ups: new(atomic.Int32)}}
	})
	plain, _ := registerDeclared(harness.Capabilities{ByDevice: map[harness.Feature]string{harness.FeatECN: "where the switch has WRED"}}, nil)
	doc, err := harness.FeatureSupport([]string{lab, hw, plain})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", doc)
	head := fmt.Sprintf("| feature | suite fields | what it does | default | %s | %s (strong) | %s (weak) | %s |", lab, hw, hw, plain)
	if !strings.HasPrefix(doc, head+"\n|---|---|---|---|---|---|---|---|\n") {
		t.Errorf("no header row %q", head)
	}
	row := func(f harness.Feature) []string {
		for _, l := range strings.Split(doc, "\n") {
			if strings.HasPrefix(l, "| "+string(f)+" |") {
				cells := strings.Split(strings.Trim(l, "| "), " | ")
				return cells[4:]
			}
		}
		t.Fatalf("no row for %s", f)
		return nil
	}
	for f, want := range map[harness.Feature]string{
		harness.FeatECN:      "no [1] | yes [2] | yes [2] | by device [2]",
		harness.FeatTrimming: "no [3] | yes | yes | yes",
		harness.FeatPFC:      "yes | yes | no [4] | yes",
		harness.FeatPacing:   "no [6] | no [6] | no [6] | yes",
	} {
		if got := strings.Join(row(f), " | "); got != want {
			t.Errorf("%s: %s, want %s", f, got, want)
		}
	}
	for _, r := range []string{
		"1. " + lab + ": no WRED\n",
		"2. " + hw + ", " + plain + ": where the switch has WRED\n",
		"3. " + lab + ": Linux drops\n",
		"4. " + hw + " (weak): no pause frames\n",
		"5. " + lab + ": tbf queues\n",
	} {
		if !strings.Contains(doc, r) {
			t.Errorf("reasons lack %q", r)
		}
	}
	if strings.Count(doc, "no WRED") != 1 {
		t.Error("a reason numbered twice")
	}
	if _, err := harness.FeatureSupport([]string{"nosuch"}); err == nil {
		t.Error("an unknown backend")
	}
}
