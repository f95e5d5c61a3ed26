package harness_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/harness"
	_ "github.com/fabricbench/fabricbench/harness/labbackend"
)

// examples/suites/vrfs.yaml runs on the simulator: a job inside each of
// two VRFs, every flow completes.
func TestVRFsOnSim(t *testing.T) {
	res, err := harness.Run(context.Background(), harness.Options{
		SuiteFile: filepath.Join("..", "examples", "suites", "vrfs.yaml"), Out: t.TempDir(), Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Runs[0]
	for _, j := range r.Jobs {
		t.Logf("%s: %d of %d flows", j.Name, j.Completed, j.Flows)
		if j.Flows == 0 || j.Completed != j.Flows {
			t.Errorf("job %s: %d of %d flows completed", j.Name, j.Completed, j.Flows)
		}
	}
	if r.Status != "pass" {
		t.Errorf("status %s: %s", r.Status, r.Error)
	}
}

// A job that crosses the VRFs is refused at plan time, at the job's
// file:line:col, naming the pair; the simulator and the netns backend give
// the same verdict. A leak makes the same job plan.
func TestVRFCrossJobRefusedAtPlan(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "examples", "suites", "vrfs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The jobs list ends before kpis.
	cross := strings.Replace(string(src), "kpis:\n", "  - {name: cross, workload: permutation, size: 1MiB, hosts: [host1, host3]}\nkpis:\n", 1)
	file := filepath.Join(dir, "cross.yaml")
	if err := os.WriteFile(file, []byte(cross), 0o644); err != nil {
		t.Fatal(err)
	}
	line := 0
	for i, l := range strings.Split(cross, "\n") {
		if strings.Contains(l, "name: cross") {
			line = i + 1
		}
	}
	var msgs []string
	for _, backend := range []string{"sim", "netns"} {
		_, _, err := harness.PlanBackend(context.Background(), file, backend)
		var ie *harness.InputError
		if !errors.As(err, &ie) {
			t.Fatalf("%s: %v (%T), want an input error", backend, err, err)
		}
		t.Logf("%s: %v", backend, err)
		want := "cross.yaml:" + strconv.Itoa(line) + ":"
		for _, w := range []string{want, "jobs[2].hosts: job cross sends from host", "(VRF red)", "(VRF blue)", "unreachable"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error lacks %q", backend, w)
			}
		}
		if strings.Contains(err.Error(), "jobs[0]") || strings.Contains(err.Error(), "jobs[1]") {
			t.Errorf("%s: a job inside one VRF was refused", backend)
		}
		msgs = append(msgs, err.Error()[strings.Index(err.Error(), "jobs[2]"):])
	}
	if msgs[0] != msgs[1] {
		t.Errorf("the backends disagree:\n%s\n%s", msgs[0], msgs[1])
	}
	leak := strings.Replace(cross, "hosts: [host2, host3, host6, host7]}", "hosts: [host2, host3, host6, host7], leak: [red]}", 1)
	if err := os.WriteFile(file, []byte(leak), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{"sim", "netns"} {
		if _, _, err := harness.PlanBackend(context.Background(), file, backend); err != nil {
			t.Errorf("%s with a leak: %v", backend, err)
		}
	}
}
