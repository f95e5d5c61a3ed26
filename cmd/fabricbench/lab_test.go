package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/containerlab/native"
	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/results"
)

// copyExampleLab copies examples/labs/leafspine* into a temporary
// directory under another lab name and management subnet, so the test
// never touches a lab a developer has running.
func copyExampleLab(t *testing.T, name, mgmt string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("..", "..", "examples", "labs")
	err := filepath.Walk(filepath.Join(src, "leafspine"), func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(src, "leafspine.clab.yml"))
	if err != nil {
		t.Fatal(err)
	}
	top := regexp.MustCompile(`(?m)^name: .*$`).ReplaceAllString(string(b), "name: "+name)
	// The node configs stay where they are (binds are relative paths);
	// only the management network moves.
	old := regexp.MustCompile(`ipv4-subnet: (\d+\.\d+\.\d+)\.0/24`).FindStringSubmatch(top)
	if old == nil {
		t.Fatalf("no mgmt ipv4-subnet in the example topology")
	}
	top = strings.ReplaceAll(top, old[1]+".", mgmt+".")
	path := filepath.Join(dir, name+".clab.yml")
	if err := os.WriteFile(path, []byte(top), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The acceptance flow: lab up, validate passes every check, a shut leaf
// uplink makes validate fail naming the session, lab down leaves the
// machine as it was.
func TestLabUpValidateDown(t *testing.T) {
	labtest.Require(t)
	if testing.Short() {
		t.Skip("lab acceptance test skipped in -short mode")
	}
	topo := copyExampleLab(t, "fbtest-ls", "198.19.249")
	state := t.TempDir()
	t.Cleanup(func() {
		runCLI(t, "lab", "down", topo, "--state-dir", state)
	})

	code, stdout, stderr := runCLI(t, "lab", "up", topo, "--runtime", "native", "--state-dir", state, "--timeout", "90s")
	if code != 0 {
		t.Fatalf("lab up: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("lab up:\n%s", stdout)
	if !strings.Contains(stdout, "14 nodes") {
		t.Errorf("lab up output lacks the node count:\n%s", stdout)
	}

	out := filepath.Join(t.TempDir(), "ok")
	code, stdout, stderr = runCLI(t, "lab", "validate", topo, "--state-dir", state, "--out", out)
	if code != 0 {
		t.Fatalf("lab validate on a healthy lab: exit %d\n%s\n%s", code, stdout, stderr)
	}
	res, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	cats := map[string]int{}
	for _, c := range res.Runs[0].Bringup.Checks {
		cats[c.Category]++
	}
	// 14 devices and 6 switches' daemons; 16 links (up, cabling); 8 spine
	// links x 2 ends x 2 families; 6 switches x 2 families (routes); 8
	// hosts (gateway, reach); MTU: 16 links and 8 hosts' paths; drift: 6
	// switches' AS and forwarding, 4 leaves' maximum-paths (the spines have
	// one path to each host), 14 devices' addresses.
	for cat, n := range map[string]int{"device": 14 + 6, "links": 16, "cabling": 16, "bgp": 32, "ecmp": 12, "gateway": 8,
		"reachability": 8, "mtu": 24, "drift": 6 + 6 + 4 + 14} {
		if cats[cat] != n {
			t.Errorf("%d %s checks, want %d (%v)", cats[cat], cat, n, cats)
		}
	}
	for _, f := range []string{"results.json", "junit.xml", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("validate wrote no %s", f)
		}
	}

	up := labtest.TakeSnapshot(t, "fbtest-ls")
	// Shut leaf0's first uplink.
	d := native.New(native.WithStateRoot(state))
	st, err := d.LoadState("fbtest-ls")
	if err != nil {
		t.Fatal(err)
	}
	uplink := firstUplink(t, topo)
	if o, err := d.Exec(context.Background(), st, "leaf0", "ip link set "+uplink+" down"); err != nil {
		t.Fatalf("shut leaf0 %s: %v %s", uplink, err, o)
	}
	time.Sleep(100 * time.Millisecond) // the link state change itself, not convergence
	out2 := filepath.Join(t.TempDir(), "broken")
	code, stdout, _ = runCLI(t, "lab", "validate", topo, "--state-dir", state, "--out", out2)
	if code != exitFail {
		t.Fatalf("validate with leaf0 %s down: exit %d, want 1\n%s", uplink, code, stdout)
	}
	if !regexp.MustCompile(`FAIL +bgp leaf0 ` + uplink + ` -> spine\d 198\.18\.`).MatchString(stdout) {
		t.Errorf("validate output does not name leaf0's %s BGP session:\n%s", uplink, stdout)
	}
	if !strings.Contains(stdout, "link down: leaf0:"+uplink+" admin down") {
		t.Errorf("validate output does not name the link:\n%s", stdout)
	}
	// One cause, the port set down, the session and paths under it.
	if !strings.Contains(stdout, "failed: 1 cause\n") || !strings.Contains(stdout, "CAUSE 1 [leaf0 "+uplink+"] link-down:") {
		t.Errorf("validate output does not lead with one link-down cause at leaf0 %s:\n%s", uplink, stdout)
	}

	// --watch: the first round shows the cause; bringing the port up
	// again is reported as fixed.
	var wout syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		root := newRoot()
		root.SetArgs([]string{"lab", "validate", topo, "--state-dir", state, "--watch", "1s", "--out", filepath.Join(t.TempDir(), "watch")})
		root.SetOut(&wout)
		root.SetErr(&wout)
		if err := root.ExecuteContext(ctx); err != nil {
			done <- exitCode(err)
		}
		done <- 0
	}()
	waitOutput := func(want string) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for !strings.Contains(wout.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("lab validate --watch: no %q in 90 s:\n%s", want, wout.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	waitOutput("CAUSE 1 [leaf0 " + uplink + "] link-down:")
	if o, err := d.Exec(context.Background(), st, "leaf0", "ip link set "+uplink+" up"); err != nil {
		t.Fatalf("leaf0 %s up: %v %s", uplink, err, o)
	}
	waitOutput("fixed: [leaf0 " + uplink + "] link-down:")
	waitOutput(", 0 failed, 0 causes")
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("lab validate --watch ended with exit %d, want 0 when interrupted:\n%s", code, wout.String())
	}
	t.Logf("lab validate --watch:\n%s", wout.String())
	var junit []byte
	if junit, err = os.ReadFile(filepath.Join(out2, "junit.xml")); err != nil || !strings.Contains(string(junit), "<failure") {
		t.Errorf("junit.xml has no failure: %v", err)
	}
	raw, _ := os.ReadFile(filepath.Join(out2, "results.json"))
	var doc struct{ Status string }
	json.Unmarshal(raw, &doc)
	if doc.Status != "fail" {
		t.Errorf("results.json status %q", doc.Status)
	}

	code, stdout, _ = runCLI(t, "lab", "status", topo, "--state-dir", state)
	if code != 0 || !strings.Contains(stdout, "leaf0") {
		t.Errorf("lab status: exit %d\n%s", code, stdout)
	}
	code, stdout, stderr = runCLI(t, "lab", "down", topo, "--state-dir", state)
	if code != 0 {
		t.Fatalf("lab down: exit %d %s %s", code, stdout, stderr)
	}
	labtest.CheckGone(t, "fbtest-ls", up)
	code, stdout, _ = runCLI(t, "lab", "status", topo, "--state-dir", state)
	if code != exitFail || !strings.Contains(stdout, "not deployed") {
		t.Errorf("lab status after down: exit %d %s", code, stdout)
	}
}

// firstUplink is leaf0's interface towards a spine in the topology.
func firstUplink(t *testing.T, topo string) string {
	t.Helper()
	lab, err := loadLab(topo)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lab.Links {
		if l.A.Node == "leaf0" && strings.HasPrefix(l.B.Node, "spine") {
			return l.A.Interface
		}
		if l.B.Node == "leaf0" && strings.HasPrefix(l.A.Node, "spine") {
			return l.B.Interface
		}
	}
	t.Fatal("leaf0 has no uplink")
	return ""
}

func TestLabValidateBadConverge(t *testing.T) {
	for _, v := range []string{"11m", "-1s"} {
		code, _, stderr := runCLI(t, "lab", "validate", "x.clab.yml", "--converge", v)
		if code != exitBadInput || !strings.Contains(stderr, "--converge") {
			t.Errorf("--converge %s: exit %d, stderr %q", v, code, stderr)
		}
	}
}

func TestLabBadTopology(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.clab.yml")
	os.WriteFile(bad, []byte("name: x\ntopology:\n  nodes:\n    a: {kind: linux, cpux: 2}\n"), 0o644)
	for _, sub := range []string{"up", "validate", "down", "status"} {
		code, _, stderr := runCLI(t, "lab", sub, bad, "--state-dir", t.TempDir())
		if code != exitBadInput || !strings.Contains(stderr, "bad.clab.yml:4") || !strings.Contains(stderr, "cpux") {
			t.Errorf("lab %s on a bad topology: exit %d, stderr %q", sub, code, stderr)
		}
	}
}

func TestInventoryValidate(t *testing.T) {
	code, stdout, stderr := runCLI(t, "inventory", "validate", filepath.Join("..", "..", "examples", "inventory", "lab-a.yaml"))
	if code != 0 || !strings.Contains(stdout, "is valid") {
		t.Fatalf("valid inventory: exit %d\n%s%s", code, stdout, stderr)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: x\nknown_hosts: kh\ncredentials:\n  s: {user: admin, password: hunter2}\ndevices: []\n"), 0o644)
	code, _, stderr = runCLI(t, "inventory", "validate", bad)
	if code != exitBadInput || !strings.Contains(stderr, "bad.yaml:4:") || strings.Contains(stderr, "hunter2") {
		t.Errorf("bad inventory: exit %d, stderr %q (must name bad.yaml:4 and never show the password)", code, stderr)
	}
}

// The bring-up step of a suite deploys a lab, validates it, runs the jobs
// (on the simulator here) and tears the lab down; without a running lab
// the step errors and the runs are skipped.
func TestSuiteBringupStep(t *testing.T) {
	labtest.Require(t)
	if testing.Short() {
		t.Skip("lab suite test skipped in -short mode")
	}
	dir := t.TempDir()
	code, _, stderr := runCLI(t, "lab", "generate", "leafspine:leaves=2,spines=1,hosts_per_leaf=1", "--name", "fbtest-suite",
		"--mgmt-subnet", "198.19.247.0/24", "--out", dir)
	if code != 0 {
		t.Fatalf("lab generate: %s", stderr)
	}
	suite := func(deploy bool) string {
		p := filepath.Join(dir, fmt.Sprintf("s-%v.yaml", deploy))
		os.WriteFile(p, []byte(fmt.Sprintf(`name: with-bringup
fabric: {spec: "leafspine:leaves=2,spines=1,hosts_per_leaf=2"}
bringup: {topology: fbtest-suite.clab.yml, deploy: %v, teardown: %v, runtime: native}
jobs:
  - {name: perm, workload: permutation, size: 64KiB}
kpis:
  - {metric: completed_fraction, scope: perm, min: 1}
`, deploy, deploy)), 0o644)
		return p
	}
	state := t.TempDir()
	out := filepath.Join(t.TempDir(), "ok")
	t.Setenv("FABRICBENCH_LAB_STATE", state)
	t.Cleanup(func() { runCLI(t, "lab", "down", filepath.Join(dir, "fbtest-suite.clab.yml"), "--state-dir", state) })
	code, stdout, stderr := runCLI(t, "run", suite(true), "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("suite with a bring-up step: exit %d\n%s\n%s", code, stdout, stderr)
	}
	res, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2 || res.Runs[0].ID != "bringup" || res.Runs[0].Status != results.Pass || res.Runs[1].Status != results.Pass {
		t.Fatalf("runs: %+v", res.Runs)
	}
	if res.Summary.Checks == 0 || res.Summary.ChecksFailed != 0 {
		t.Errorf("summary: %+v", res.Summary)
	}
	if s := labtest.TakeSnapshot(t, "fbtest-suite"); !s.Empty() {
		t.Errorf("teardown left %s", s)
	}

	// Not deployed and deploy: false: the step errors, the run is skipped.
	// The suite is right; the lab host is not in the state it needs: an
	// infrastructure error (exit 3).
	out2 := filepath.Join(t.TempDir(), "nolab")
	code, _, stderr = runCLI(t, "run", suite(false), "--out", out2, "--quiet")
	if code != exitInfra || !strings.Contains(stderr, "not deployed") {
		t.Fatalf("suite against a missing lab: exit %d, %s", code, stderr)
	}
	res, err = results.Load(out2)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2 || res.Runs[0].Status != results.Error || res.Runs[1].Status != results.Skipped {
		t.Errorf("runs against a missing lab: %+v", res.Runs)
	}
}

// Real hardware is validated from an inventory file with the same drivers
// and checks: here the "hardware" is a running lab described by an
// inventory (credentials by file reference, the lab's known_hosts).
func TestValidateInventory(t *testing.T) {
	lab := labtest.TinyAt(t, "fbtest-hw", "198.19.246.0/24")
	d, st := labtest.Start(t, lab)
	var inv strings.Builder
	fmt.Fprintf(&inv, "name: tiny-hw\nknown_hosts: %s\ndefault_speed: 1G\ncredentials:\n  lab: {user: root, key: \"file:%s\"}\ndevices:\n", st.KnownHosts, st.Key)
	for _, n := range lab.Nodes {
		ns, _ := st.Node(n.Name)
		platform := "frr"
		if n.Role == "host" {
			platform = "linux"
		}
		fmt.Fprintf(&inv, "  - {name: %s, platform: %s, role: %s, mgmt: %s, credentials: lab", n.Name, platform, n.Role, ns.Mgmt)
		if n.Role == "host" {
			for _, l := range lab.Links {
				if l.A.Node == n.Name {
					fmt.Fprintf(&inv, ", nics: [{name: %s, address: %s}]", l.A.Interface, l.A.IPv4)
				}
			}
		}
		inv.WriteString("}\n")
	}
	inv.WriteString("links:\n")
	for _, l := range lab.Links {
		fmt.Fprintf(&inv, "  - [%s:%s, %s:%s]\n", l.A.Node, l.A.Interface, l.B.Node, l.B.Interface)
	}
	path := filepath.Join(t.TempDir(), "tiny-hw.yaml")
	os.WriteFile(path, []byte(inv.String()), 0o644)
	if code, stdout, stderr := runCLI(t, "inventory", "validate", path, "--resolve"); code != 0 {
		t.Fatalf("inventory validate: exit %d\n%s\n%s\n%s", code, stdout, stderr, inv.String())
	}
	out := filepath.Join(t.TempDir(), "hw")
	code, stdout, stderr := runCLI(t, "lab", "validate", path, "--out", out)
	if code != 0 {
		t.Fatalf("validate the inventory: exit %d\n%s\n%s", code, stdout, stderr)
	}
	res, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if b := res.Runs[0].Bringup; b.Runtime != "hardware" || len(b.Checks) < 15 {
		t.Errorf("bring-up of the inventory: runtime %q, %d checks", b.Runtime, len(b.Checks))
	}
	// The spine's session to leaf1 broken from the device side is found
	// through the inventory too.
	if o, err := d.Exec(context.Background(), st, "leaf1", "ip link set eth1 down"); err != nil {
		t.Fatal(err, o)
	}
	code, stdout, _ = runCLI(t, "lab", "validate", path, "--out", filepath.Join(t.TempDir(), "hw2"))
	if code != exitFail || !strings.Contains(stdout, "FAIL  bgp spine0 eth2 -> leaf1") {
		t.Errorf("validate with leaf1 eth1 down: exit %d\n%s", code, stdout)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader in two
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
