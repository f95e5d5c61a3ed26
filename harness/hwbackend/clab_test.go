package hwbackend

import (
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
)

// The containerlab lab of this package's test (FABRICBENCH_HWCLAB_NAME and
// FABRICBENCH_HWCLAB_MGMT replace them).
var (
	hwClabName = envOr("FABRICBENCH_HWCLAB_NAME", "fbhwclab")
	hwClabMgmt = envOr("FABRICBENCH_HWCLAB_MGMT", "198.19.233.0/24")
)

// A containerlab lab driven through the hardware path: `lab up
// --runtime containerlab`, `lab inventory` (the FRR containers, which
// have no sshd, get container: and are reached with docker exec), then a
// suite with --apply on the inventory: leaf0's hash is changed for the
// run and restored, every flow completes, every device has telemetry
// (the kernel exporter deployed through docker exec), and `lab down`
// leaves nothing behind.
func TestInventoryRunContainerlab(t *testing.T) {
	frrImage, hostImage := labtest.RequireContainerlab(t)
	bin := labtest.Fabricbench(t)
	f, err := inventory.ParseSpec("leafspine:leaves=2,spines=1,hosts_per_leaf=1,gbps=1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	g, err := containerlab.Generate(f, containerlab.GenOptions{Name: hwClabName, MgmtSubnet: netip.MustParsePrefix(hwClabMgmt),
		LinkRates: true, MTU: LinkMTU, FRRImage: frrImage, HostImage: hostImage})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Write(dir); err != nil {
		t.Fatal(err)
	}
	topo := filepath.Join(dir, g.TopologyFile)
	state := t.TempDir()
	t.Cleanup(func() {
		code, out := runCLI(t, bin, "lab", "down", topo, "--state-dir", state)
		if code != 0 {
			t.Errorf("lab down: exit %d\n%s", code, out)
		}
		if left := labtest.ContainerlabLeft(t, hwClabName, "fb-"+hwClabName); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	})
	if code, out := runCLI(t, bin, "lab", "up", topo, "--runtime", "containerlab", "--state-dir", state); code != 0 {
		t.Fatalf("lab up: exit %d\n%s", code, out)
	}
	inv := filepath.Join(dir, "inventory.yaml")
	if code, out := runCLI(t, bin, "lab", "inventory", topo, "--state-dir", state, "--out", inv); code != 0 {
		t.Fatalf("lab inventory: exit %d\n%s", code, out)
	}
	text, _ := os.ReadFile(inv)
	if !strings.Contains(string(text), `container: "clab-`+hwClabName+`-leaf0"`) {
		t.Errorf("inventory:\n%s", text)
	}
	leaf0 := "clab-" + hwClabName + "-leaf0"
	dockerSh := func(cmd string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "docker", "exec", leaf0, "sh", "-c", cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("docker exec %s %s: %v\n%s", leaf0, cmd, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	dockerSh("sysctl -q -w net.ipv4.fib_multipath_hash_policy=0")
	suite := filepath.Join(dir, "suite.yaml")
	os.WriteFile(suite, []byte(`name: hw-clab
seed: 3
fabric: {inventory: inventory.yaml}
`+labtest.SuiteBody("ops", "")+`jobs:
  - {name: perm, workload: permutation, size: 1MiB}
kpis:
  - {metric: completed_fraction, scope: perm, min: 1}
  - {metric: telemetry_coverage, min: 1}
`), 0o644)
	out := filepath.Join(t.TempDir(), "run")
	code, log := runCLI(t, bin, "run", suite, "--apply", "--out", out, "--agent-binary", bin)
	t.Logf("suite on the containerlab lab's inventory: exit %d\n%s", code, log)
	res, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || res.Status != results.Pass {
		t.Errorf("exit %d, status %s", code, res.Status)
	}
	if !strings.Contains(log, "restored leaf0: ~ sysctl net.ipv4.fib_multipath_hash_policy: 1 -> 0") {
		t.Error("leaf0's hash was not changed and restored")
	}
	if got := dockerSh("sysctl -n net.ipv4.fib_multipath_hash_policy"); got != "0" {
		t.Errorf("leaf0's hash policy is %s after the run, was 0", got)
	}
}
