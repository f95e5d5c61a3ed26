package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
)

// TestContainerlabLabUpValidateDown is the containerlab acceptance flow on
// a generated 2-spine, 4-leaf, 8-host lab: lab check (no side effect),
// lab up through containerlab (switches reached with docker exec, hosts
// over SSH), validate passes every check, a shut leaf uplink fails it
// naming the session, status, and lab down leaves no container, Docker
// network or state behind.
func TestContainerlabLabUpValidateDown(t *testing.T) {
	frr, host := labtest.RequireContainerlab(t)
	dir := t.TempDir()
	state := t.TempDir()
	const name = "fbclab-acc"
	code, stdout, stderr := runCLI(t, "lab", "generate", "leafspine:leaves=4,spines=2,hosts_per_leaf=2,gbps=1", "--name", name,
		"--out", dir, "--image", frr, "--host-image", host, "--mgmt-subnet", "198.19.232.0/24")
	if code != 0 {
		t.Fatalf("lab generate: exit %d %s %s", code, stdout, stderr)
	}
	topo := filepath.Join(dir, name+".clab.yml")
	network := "fb-" + name
	t.Cleanup(func() {
		// Also when the test fails: down, then check.
		runCLI(t, "lab", "down", topo, "--state-dir", state)
		if left := labtest.ContainerlabLeft(t, name, network); len(left) > 0 {
			t.Errorf("left behind: %s", strings.Join(left, ", "))
		}
	})
	code, stdout, stderr = runCLI(t, "lab", "check", topo, "--runtime", "containerlab")
	if code != 0 || !strings.Contains(stdout, "container clab-"+name+"-leaf0") || !strings.Contains(stdout, "14 nodes") {
		t.Fatalf("lab check: exit %d\n%s%s", code, stdout, stderr)
	}
	if left := labtest.ContainerlabLeft(t, name, network); len(left) > 0 {
		t.Fatalf("lab check created %v", left)
	}
	code, stdout, stderr = runCLI(t, "lab", "up", topo, "--runtime", "containerlab", "--state-dir", state, "--timeout", "150s")
	if code != 0 {
		t.Fatalf("lab up: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("lab up:\n%s", stdout)
	for _, want := range []string{"(containerlab runtime)", "leaf0   leaf", "docker exec", "ssh"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("lab up output lacks %q", want)
		}
	}
	out := filepath.Join(t.TempDir(), "ok")
	code, stdout, stderr = runCLI(t, "lab", "validate", topo, "--state-dir", state, "--out", out)
	if code != 0 || !strings.Contains(stdout, " 0 failed") {
		t.Fatalf("lab validate on a healthy lab: exit %d\n%s%s", code, stdout, stderr)
	}
	t.Logf("%s", firstLine(stdout))
	// A leaf's uplink shut inside its container.
	uplink := firstUplink(t, topo)
	if o, err := exec.Command("docker", "exec", "clab-"+name+"-leaf0", "ip", "link", "set", uplink, "down").CombinedOutput(); err != nil {
		t.Fatalf("shut %s: %v %s", uplink, err, o)
	}
	code, stdout, _ = runCLI(t, "lab", "validate", topo, "--state-dir", state, "--out", filepath.Join(t.TempDir(), "bad"))
	if code != exitFail || !strings.Contains(stdout, "bgp leaf0") || !strings.Contains(stdout, "CAUSE 1 [leaf0 "+uplink+"] link-down: link down: leaf0:"+uplink+" admin down") {
		t.Errorf("validate with %s down: exit %d, want 1 naming the link and leaf0's session:\n%s", uplink, code, stdout)
	}
	code, stdout, _ = runCLI(t, "lab", "status", topo, "--state-dir", state)
	if code != 0 || !strings.Contains(stdout, "containerlab runtime") || !strings.Contains(stdout, "clab-"+name+"-spine1") {
		t.Errorf("lab status: exit %d\n%s", code, stdout)
	}
	code, stdout, stderr = runCLI(t, "lab", "down", topo, "--state-dir", state)
	if code != 0 || !strings.Contains(stdout, "14 containers") {
		t.Fatalf("lab down: exit %d %s %s", code, stdout, stderr)
	}
	if left := labtest.ContainerlabLeft(t, name, network); len(left) > 0 {
		t.Errorf("after lab down: %s", strings.Join(left, ", "))
	}
	if _, err := os.Stat(filepath.Join(state, name)); !os.IsNotExist(err) {
		t.Errorf("state directory left: %v", err)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// TestCorpusLabsDeploy deploys the corpus labs users write by hand (no
// fabricbench labels: stock OSPF, IS-IS with directory binds, static
// routes, eBGP unnumbered) with `lab up` on both runtimes: each comes up
// and converges (its routing protocol's readiness); `lab validate`, with
// checks derived from the devices' own configuration, passes; with the
// manifest's fault port set down it names exactly that one cause (a
// link-down at the port) and passes again once the port is up; then
// `lab down` leaves nothing.
func TestCorpusLabsDeploy(t *testing.T) {
	corpus := filepath.Join("..", "..", "containerlab", "testdata", "corpus")
	b, err := os.ReadFile(filepath.Join(corpus, "MANIFEST.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var entries []struct {
		File    string   `yaml:"file"`
		Deploy  bool     `yaml:"deploy"`
		Fault   string   `yaml:"fault"`
		Restore []string `yaml:"restore"`
	}
	if err := yaml.Unmarshal(b, &entries); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.Deploy {
			continue
		}
		n++
		for _, rt := range containerlab.Runtimes {
			t.Run(e.File+"/"+rt, func(t *testing.T) {
				if rt == containerlab.RuntimeNative {
					labtest.Require(t)
				} else {
					labtest.RequireContainerlab(t)
				}
				// A copy: containerlab writes its lab directory next to the
				// topology file.
				src := filepath.Join(corpus, e.File)
				dir := t.TempDir()
				base := filepath.Dir(src)
				if base == corpus {
					copyFile(t, src, filepath.Join(dir, filepath.Base(src)))
				} else {
					copyTree(t, base, dir)
				}
				topo := filepath.Join(dir, filepath.Base(src))
				state := t.TempDir()
				top, err := containerlab.Parse(topo)
				if err != nil {
					t.Fatal(err)
				}
				network := containerlab.DefaultMgmtNetwork
				if top.Mgmt != nil && top.Mgmt.Network != "" {
					network = top.Mgmt.Network
				}
				t.Cleanup(func() {
					runCLI(t, "lab", "down", topo, "--state-dir", state)
					if s := labtest.TakeSnapshot(t, top.Name); !s.Empty() {
						t.Errorf("left behind: %s", s)
					}
					if docker() {
						if left := labtest.ContainerlabLeft(t, top.Name, ""); len(left) > 0 {
							t.Errorf("left behind: %s", strings.Join(left, ", "))
						}
						if network != containerlab.DefaultMgmtNetwork && exec.Command("docker", "network", "inspect", network).Run() == nil {
							t.Errorf("network %s left behind", network)
						}
					}
				})
				code, stdout, stderr := runCLI(t, "lab", "up", topo, "--runtime", rt, "--state-dir", state, "--timeout", "150s")
				if code != 0 {
					routes, _ := exec.Command("ip", "-4", "route", "show", "table", "main").CombinedOutput()
					nets, _ := exec.Command("docker", "network", "ls").CombinedOutput()
					t.Fatalf("lab up --runtime %s: exit %d\n%s\n%s\nroutes:\n%s\ndocker networks:\n%s", rt, code, stdout, stderr, routes, nets)
				}
				t.Logf("%s", stdout)
				validate := func(converge string) (int, string) {
					code, stdout, stderr := runCLI(t, "lab", "validate", topo, "--state-dir", state, "--converge", converge, "--out", t.TempDir())
					t.Logf("lab validate --converge %s: exit %d\n%s%s", converge, code, stdout, stderr)
					return code, stdout
				}
				if code, _ := validate("60s"); code != 0 {
					t.Fatalf("lab validate on the healthy lab: exit %d, want 0", code)
				}
				node, port, ok := strings.Cut(e.Fault, ":")
				if !ok {
					t.Fatalf("manifest: %s: fault %q is not node:interface", e.File, e.Fault)
				}
				ns := "clab-" + top.Name + "-" + node
				if out, err := exec.Command("ip", "netns", "exec", ns, "ip", "link", "set", port, "down").CombinedOutput(); err != nil {
					t.Fatalf("set %s down: %v %s", e.Fault, err, out)
				}
				// The converge window lets routing settle on the fault, so
				// that what the lab loses is all reported under it.
				code, stdout = validate("20s")
				want := fmt.Sprintf("CAUSE 1 [%s %s] link-down:", node, port)
				if code != 1 || !strings.Contains(stdout, ": 1 cause\n") || !strings.Contains(stdout, want) {
					t.Errorf("with %s down: exit %d, want 1 with one cause %q", e.Fault, code, want)
				}
				if out, err := exec.Command("ip", "netns", "exec", ns, "ip", "link", "set", port, "up").CombinedOutput(); err != nil {
					t.Fatalf("set %s up: %v %s", e.Fault, err, out)
				}
				for _, c := range e.Restore {
					if out, err := exec.Command("ip", "netns", "exec", ns, "sh", "-c", c).CombinedOutput(); err != nil {
						t.Fatalf("restore %q: %v %s", c, err, out)
					}
				}
				if code, _ := validate("90s"); code != 0 {
					t.Errorf("lab validate with %s up again: exit %d, want 0", e.Fault, code)
				}
				code, stdout, stderr = runCLI(t, "lab", "down", topo, "--state-dir", state)
				if code != 0 {
					t.Fatalf("lab down: exit %d %s %s", code, stdout, stderr)
				}
			})
		}
	}
	if n < 1 {
		t.Fatal("the corpus names no lab to deploy")
	}
}

// docker reports whether a Docker engine answers.
func docker() bool { return exec.CommandContext(context.Background(), "docker", "info").Run() == nil }

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		copyFile(t, p, filepath.Join(dst, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestExampleLabIsCurrent: examples/labs is what `lab generate` writes
// today (regenerate with the command in the error when the generator
// changes).
func TestExampleLabIsCurrent(t *testing.T) {
	out := t.TempDir()
	args := []string{"lab", "generate", "leafspine:leaves=4,spines=2,hosts_per_leaf=2", "--name", "leafspine", "--rate", "1gbit", "--out"}
	if code, stdout, stderr := runCLI(t, append(args, out)...); code != 0 {
		t.Fatalf("lab generate: exit %d %s %s", code, stdout, stderr)
	}
	examples := filepath.Join("..", "..", "examples", "labs")
	n := 0
	err := filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		got, _ := os.ReadFile(p)
		want, err := os.ReadFile(filepath.Join(examples, rel))
		if err != nil || string(got) != string(want) {
			t.Errorf("examples/labs/%s differs from what lab generate writes now: run fabricbench %s examples/labs", rel, strings.Join(args, " "))
		}
		n++
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("walk: %v (%d files)", err, n)
	}
}
