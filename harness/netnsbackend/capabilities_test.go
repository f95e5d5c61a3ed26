package netnsbackend

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
		"lab.yaml:3:18: features.ecn.enabled: " + "the netns backend cannot do ECN marking (RED/WRED): " + capabilities.Unsupported[harness.FeatECN] + "; set features.ecn: {enabled: false}",
		// VRFs are isolated on the lab; the job crosses them.
		"lab.yaml:8:5: jobs[0].hosts: job p sends from host",
		"lab.yaml:6:23: telemetry.interval: the netns backend cannot do telemetry every 100us",
		"lab.yaml:5:16: features.ecmp.mode: the netns backend cannot do adaptive routing: " + capabilities.Unsupported[harness.FeatAdaptive],
		"features.trimming.enabled: the netns backend cannot do packet trimming",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
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
