package labbackend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/harness"
)

// What the netns backend cannot do is refused while planning, at the
// suite field's file:line:col, without bringing anything up: no lab, no
// namespace (harness.Run plans before it creates a backend). The lab
// suites of examples/suites plan cleanly.
func TestCapabilitiesRefusedAtPlan(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lab.yaml")
	body := `fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=0.2"}
features:
  ecn: {enabled: true}
  vrfs: [{name: blue, table: 10, hosts: [host0, host1]}]
  ecmp: {mode: adaptive}
telemetry: {interval: 100us}
jobs:
  - {name: p, workload: permutation, size: 64KiB}
`
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err := harness.PlanBackend(context.Background(), file, Name)
	took := time.Since(start)
	var ie *harness.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("err %v (%T), want an input error", err, err)
	}
	for _, want := range []string{
		"lab.yaml:3:18: features.ecn.enabled: the netns backend cannot do ECN marking (RED/WRED): the lab's FRR and Linux switch drivers do not configure WRED/ECN",
		"lab.yaml:3:18: features.ecn.enabled: " + "the netns backend cannot do ECN marking (RED/WRED): " + capabilities.Unsupported[harness.FeatECN] + "; set features.ecn: {enabled: false}, or leave it out",
		// VRFs are isolated on the lab; the job crosses them.
		"lab.yaml:8:5: jobs[0].hosts: job p sends from host",
		"lab.yaml:6:23: telemetry.interval: the netns backend cannot do telemetry every 100us",
		"lab.yaml:5:16: features.ecmp.mode: the netns backend cannot do adaptive routing: " + capabilities.Unsupported[harness.FeatAdaptive],
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// Trimming is left at its default, which follows the backend: off
	// here, not refused.
	if strings.Contains(err.Error(), "trimming") {
		t.Errorf("trimming left at its default is refused:\n%v", err)
	}
	if took > time.Second {
		t.Errorf("planning took %v, want well under a second", took)
	}
	// A multi-plane fabric plans: every host gets a NIC per plane and the
	// agents spread flows over them (TestPlanesOnLab).
	planes := filepath.Join(dir, "planes.yaml")
	if err := os.WriteFile(planes, []byte(`fabric: {spec: "leafspine:leaves=2,spines=1,hosts_per_leaf=2,gbps=0.2,planes=2"}
features: {ecn: {enabled: false}, trimming: {enabled: false}}
telemetry: {interval: 1ms}
jobs:
  - {name: p, workload: permutation, size: 64KiB}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err = harness.PlanBackend(context.Background(), planes, Name); err != nil {
		t.Errorf("planes: %v", err)
	}
	// The path-aware load balancers run on the lab's ECMP hashing (each
	// UDP source port an EV, coarse-grained Spritz); source-guided routing
	// is refused at the mode.
	for _, lb := range []string{"ops-w", "spritz-scout", "spritz-spray", "flicr"} {
		for _, mode := range []string{"hash", "source-guided"} {
			file := filepath.Join(dir, lb+"-"+mode+".yaml")
			if err := os.WriteFile(file, []byte(`fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=0.2"}
features: {ecn: {enabled: false}, trimming: {enabled: false}, ecmp: {mode: `+mode+`}}
telemetry: {interval: 1ms}
transport: {lb: `+lb+`}
jobs:
  - {name: p, workload: permutation, size: 64KiB}
`), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := harness.PlanBackend(context.Background(), file, Name)
			if mode == "hash" && err != nil {
				t.Errorf("%s on hash ECMP: %v", lb, err)
			}
			if want := "features.ecmp.mode: the netns backend cannot do low-diameter routing"; mode != "hash" && (err == nil || !strings.Contains(err.Error(), want)) {
				t.Errorf("%s on %s: %v, want %q", lb, mode, err, want)
			}
		}
	}
	for _, s := range []string{"lab-smoke.yaml", "lab-degraded.yaml", "lab-srv6.yaml", "lab-spritz.yaml"} {
		if _, _, err := harness.PlanBackend(context.Background(), filepath.Join("..", "..", "examples", "suites", s), Name); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

// The containerlab backend is the same lab on the other runtime: the same
// refusals at plan time, under its own name, and the lab suites plan.
func TestContainerlabCapabilitiesRefusedAtPlan(t *testing.T) {
	file := filepath.Join(t.TempDir(), "lab.yaml")
	if err := os.WriteFile(file, []byte(`fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=0.2"}
features: {ecn: {enabled: true}, pfc: {enabled: true}}
telemetry: {interval: 1ms}
jobs:
  - {name: p, workload: permutation, size: 64KiB}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := harness.PlanBackend(context.Background(), file, NameContainerlab)
	for _, want := range []string{
		"lab.yaml:2:27: features.ecn.enabled: the containerlab backend cannot do ECN marking (RED/WRED): " + capabilities.Unsupported[harness.FeatECN],
		"features.pfc.enabled: the containerlab backend cannot do",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	for _, s := range []string{"lab-smoke.yaml", "lab-degraded.yaml", "lab-srv6.yaml", "lab-srv6-reroute.yaml"} {
		if _, _, err := harness.PlanBackend(context.Background(), filepath.Join("..", "..", "examples", "suites", s), NameContainerlab); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

// A lab suite that leaves ECN and trimming at their defaults is not
// refused: on the netns backend both are off, each with a one-line note;
// on the simulator both are on. Asked for explicitly, they are refused
// (TestCapabilitiesRefusedAtPlan).
func TestFeatureDefaultsFollowTheBackend(t *testing.T) {
	file := filepath.Join(t.TempDir(), "first-lab.yaml")
	if err := os.WriteFile(file, []byte(`fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=0.2"}
telemetry: {interval: 1ms}
jobs:
  - {name: p, workload: permutation, size: 64KiB}
kpis:
  - {metric: fct_p99_us, scope: p, max: 100000}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	pl, err := harness.PlanSuite(context.Background(), file, Name, "")
	if err != nil {
		t.Fatalf("the netns backend refuses a suite with default features: %v", err)
	}
	if f := pl.Points[0].Features; f.ECN || f.Trimming {
		t.Errorf("netns defaults: ECN %v trimming %v, want both off", f.ECN, f.Trimming)
	}
	if len(pl.Notes) != 2 || !strings.HasPrefix(pl.Notes[0], "features.ecn: off (on by default, but the netns backend cannot do ECN marking") ||
		!strings.HasPrefix(pl.Notes[1], "features.trimming: off (on by default, but the netns backend cannot do packet trimming") {
		t.Errorf("notes %q", pl.Notes)
	}
	for _, n := range pl.Notes {
		if strings.Contains(n, "\n") {
			t.Errorf("note %q is not one line", n)
		}
	}
	pl, err = harness.PlanSuite(context.Background(), file, "sim", "")
	if err != nil {
		t.Fatal(err)
	}
	if f := pl.Points[0].Features; !f.ECN || !f.Trimming || len(pl.Notes) != 0 {
		t.Errorf("sim defaults: ECN %v trimming %v notes %q, want both on and no note", f.ECN, f.Trimming, pl.Notes)
	}
}
