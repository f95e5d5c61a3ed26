package hwbackend

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/internal/slurmtest"
)

// TestSrunLauncher starts the agents of an inventory's hosts with srun
// inside a Slurm allocation (issue 18 item 3) on the one-node test
// cluster: the node is this machine, so both hosts' agents run here, on
// loopback addresses. The jobs run through the same control API as with
// SSH deployment; every flow completes; Down ends the job steps and the
// agents' output is kept as their logs.
func TestSrunLauncher(t *testing.T) {
	c := slurmtest.Start(t)
	bin := labtest.Fabricbench(t)
	dir := t.TempDir()
	// A key and known_hosts for the inventory (no SSH is used: the
	// launcher is srun and the test does not validate or configure).
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	blk, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "key"), pem.EncodeToMemory(blk), 0o600)
	os.WriteFile(filepath.Join(dir, "known_hosts"), nil, 0o644)
	inv := fmt.Sprintf(`name: srun-lab
known_hosts: ./known_hosts
default_speed: 1G
credentials:
  k: {user: root, key: file:./key}
devices:
  - {name: leaf0, platform: linux, role: leaf, mgmt: 127.0.0.43, credentials: k}
  - {name: host0, platform: linux, role: host, mgmt: 127.0.0.41, credentials: k, slurm_node: %[1]s, nics: [{name: eth1, address: 127.0.1.41/32}]}
  - {name: host1, platform: linux, role: host, mgmt: 127.0.0.42, credentials: k, slurm_node: %[1]s, nics: [{name: eth1, address: 127.0.1.42/32}]}
links:
  - [host0:eth1, leaf0:p0]
  - [host1:eth1, leaf0:p1]
`, c.Node)
	invPath := filepath.Join(dir, "inv.yaml")
	os.WriteFile(invPath, []byte(inv), 0o644)
	_, f := loadInventory(t, invPath)

	// Outside an allocation: refused, naming what is missing.
	t.Setenv("SLURM_JOB_ID", "")
	b := New()
	b.Prepare(harness.Env{RunID: "p01", Dir: filepath.Join(dir, "run0"), AgentBinary: bin, Inventory: invPath, Logf: t.Logf})
	ctx := context.Background()
	if err := b.Up(ctx, f); err != nil {
		t.Fatal(err)
	}
	tr := runspec.Transport{CC: "nscc", LB: "ops", MTU: 4096, Seed: 1, Launcher: runspec.LauncherSrun}
	if err := b.DeployAgents(ctx, tr); err == nil || !strings.Contains(err.Error(), "SLURM_JOB_ID") {
		t.Errorf("srun outside an allocation: %v", err)
	}
	b.Down(ctx)

	// An allocation of the node, as salloc or sbatch would give.
	out, err := exec.Command("salloc", "--no-shell", "-N1", "-J", "fbtest-hw").CombinedOutput()
	if err != nil {
		t.Fatalf("salloc: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Granted job allocation (\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("salloc: %s", out)
	}
	job := string(m[1])
	t.Cleanup(func() { exec.Command("scancel", job).Run() })
	t.Setenv("SLURM_JOB_ID", job)
	t.Setenv("SLURM_JOB_NODELIST", c.Node)

	runDir := filepath.Join(dir, "run1")
	b = New()
	b.Prepare(harness.Env{RunID: "p01", Dir: runDir, AgentBinary: bin, Inventory: invPath, Logf: t.Logf})
	if err := b.Up(ctx, f); err != nil {
		t.Fatal(err)
	}
	downed := false
	defer func() {
		if !downed {
			b.Down(ctx)
		}
	}()
	if err := b.DeployAgents(ctx, tr); err != nil {
		t.Fatal(err)
	}
	steps, _ := exec.Command("squeue", "-h", "-s", "-j", job, "-o", "%j").Output()
	t.Logf("job steps:\n%s", steps)
	if n := strings.Count(string(steps), "fabricbench-agent-"); n != 2 {
		t.Errorf("%d agent job steps in allocation %s, want 2:\n%s", n, job, steps)
	}
	jobs := []runspec.Job{{Name: "perm", Workload: runspec.Permutation, Hosts: []int{0, 1}, Size: 1 << 20, Reps: 1}}
	w, err := runspec.BuildWorkload(f, jobs, 1)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := b.RunJobs(ctx, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range rr.Flows {
		if o.FCT < 0 {
			t.Errorf("flow %d did not complete", i)
		}
	}
	if len(rr.Failures) > 0 || len(rr.Flows) != 2 {
		t.Errorf("%d flows, failures %v", len(rr.Flows), rr.Failures)
	}
	downed = true
	if err := b.Down(ctx); err != nil {
		t.Errorf("down: %v", err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		steps, _ = exec.Command("squeue", "-h", "-s", "-j", job, "-o", "%j").Output()
		if !strings.Contains(string(steps), "fabricbench-agent-") || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if strings.Contains(string(steps), "fabricbench-agent-") {
		t.Errorf("agent steps left after Down:\n%s", steps)
	}
	for _, h := range []string{"host0", "host1"} {
		log, err := os.ReadFile(filepath.Join(runDir, "agents", h+".log"))
		if err != nil || len(log) == 0 {
			t.Errorf("%s's agent log: %v (%d bytes)", h, err, len(log))
		}
	}
}
