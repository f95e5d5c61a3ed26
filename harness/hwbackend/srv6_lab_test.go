package hwbackend

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// needed are the changes a run without --apply names (its exit-2
// message), as "device: change" lines.
func needed(log string) []string {
	var out []string
	_, rest, ok := strings.Cut(log, "nothing was changed")
	if !ok {
		return nil
	}
	for _, l := range strings.Split(rest, "\n") {
		l = strings.TrimSpace(l)
		if dev, c, ok := strings.Cut(l, ": "); ok && (strings.HasPrefix(c, "+ ") || strings.HasPrefix(c, "~ ") || strings.HasPrefix(c, "- ")) && !strings.Contains(dev, " ") {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	// The message is printed with the error and again in the summary.
	return slices.Compact(out)
}

// diffFile reads a run's config-diff.txt as "device: change" lines.
func diffFile(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	dev := ""
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " "):
			dev = strings.TrimSuffix(l, ":")
		case strings.HasPrefix(l, "  ") && strings.TrimSpace(l) != "no changes":
			out = append(out, dev+": "+strings.TrimSpace(l))
		}
	}
	slices.Sort(out)
	return out
}

// TestInventorySRv6VRF is issue 33's acceptance on FRR and Linux: the
// native FRR lab of examples/suites/lab-srv6.yaml (switches with SRv6
// locators and their uN SIDs, as `fabricbench lab up` installs them)
// described by `fabricbench lab inventory`:
//
//   - lab-srv6 without --apply exits 2 naming every change (the uDX4
//     SIDs on the leaves, the steering routes and firewall-mark rules on
//     host0 and host3): exactly the changes the
//     --apply run then makes, and nothing changed;
//   - lab-srv6 with --apply passes (exit 0, as on the netns backend):
//     applied, read back, the pinned flows on spine1 only (the switches'
//     counters), and at the end every device's state (driver
//     State with SIDs, rules and policy routes, hash, forwarding and seg6
//     sysctls, root qdiscs) equals the state before;
//   - VRFs on the FRR leaves are isolation rules: in the backend,
//     applied, host0 cannot reach host1 (another VRF: ICMP prohibited)
//     and reaches host2 (its VRF); a VRF suite runs with --apply (exit 0)
//     and leaves every device as it was;
//   - lab-srv6-reroute (the path controller) moves the pinned pair off
//     the degraded spine1 by replacing both hosts' steering routes, passes
//     (exit 0, as on the netns backend) and the move is reverted too.
func TestInventorySRv6VRF(t *testing.T) {
	h := startHWLabWith(t, "leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=0.2", true)
	ctx := context.Background()
	inv := h.srv6Inventory(ctx, t, "lab-hw")
	if b, _ := os.ReadFile(inv); !strings.Contains(string(b), "srv6_locator: fd00:bbbb:") {
		t.Fatalf("the inventory lists no locators:\n%s", b)
	}
	before := deviceStates(t, inv)
	suiteFile, _ := filepath.Abs("../../examples/suites/lab-srv6.yaml")

	// 1. Without --apply: exit 2 naming every change; nothing changed.
	code, log := runCLI(t, h.bin, "run", suiteFile, "--inventory", inv, "--out", filepath.Join(t.TempDir(), "noapply"), "--agent-binary", h.bin, "-q")
	t.Logf("lab-srv6 without --apply: exit %d\n%s", code, log)
	named := needed(log)
	for _, w := range []string{"leaf1: + route fd00:bbbb:", "host0: + route ", "host0: + rule -4 fwmark 0x100", "host3: + rule -4 fwmark 0x100", "leaf0: + route fd00:bbbb:"} {
		if !slices.ContainsFunc(named, func(s string) bool { return strings.HasPrefix(s, w) }) {
			t.Errorf("without --apply: no change %q named", w)
		}
	}
	// The hosts only steer: routes and rules, no SRv6 sysctls.
	if i := slices.IndexFunc(named, func(s string) bool { return strings.HasPrefix(s, "host") && strings.Contains(s, "sysctl") }); i >= 0 {
		t.Errorf("a steering host's change: %s", named[i])
	}
	if code != 2 {
		t.Errorf("without --apply: exit %d, want 2", code)
	}
	sameStates(t, "lab-srv6 without --apply", before, deviceStates(t, inv))

	// 2. With --apply: the verdict of the netns backend (pass); the same
	// changes; everything restored.
	out2 := filepath.Join(t.TempDir(), "apply")
	code, log = runCLI(t, h.bin, "run", suiteFile, "--inventory", inv, "--apply", "--out", out2, "--agent-binary", h.bin)
	t.Logf("lab-srv6 with --apply: exit %d\n%s", code, log)
	res, err := results.Load(out2)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || len(res.Runs) != 2 || res.Runs[1].Status != results.Pass {
		t.Errorf("lab-srv6 with --apply: exit %d, want 0 (as on the netns backend)", code)
	}
	run := &res.Runs[len(res.Runs)-1]
	dir := filepath.Join(out2, "runs", run.ID)
	if applied := diffFile(t, filepath.Join(dir, "config-diff.txt")); !slices.Equal(applied, named) {
		t.Errorf("the run without --apply named\n%s\nthe run with it changed\n%s", strings.Join(named, "\n"), strings.Join(applied, "\n"))
	}
	verify, _ := os.ReadFile(filepath.Join(dir, "config-verify.txt"))
	restore, _ := os.ReadFile(filepath.Join(dir, "config-restore.txt"))
	t.Logf("verify:\n%s\nrestore:\n%s", verify, restore)
	if !strings.Contains(string(verify), "ok   steer 198.") || strings.Contains(string(verify), "FAIL") ||
		strings.Count(string(restore), "restored") != len(named) || strings.Contains(string(restore), "NOT RESTORED") {
		t.Errorf("verify or restore incomplete (%d changes)", len(named))
	}
	// The data plane: the pinned flows crossed spine1, not spine0 (the
	// switches' kernel counters through gNMI), as on the netns backend.
	samples, err := telemetry.ReadStore(filepath.Join(out2, run.Files["telemetry"]))
	if err != nil {
		t.Fatal(err)
	}
	first, last := map[string]int64{}, map[string]int64{}
	for _, s := range samples {
		if s.Measurement != telemetry.MeasInterface || s.Field != telemetry.FieldOutOctets {
			continue
		}
		if _, ok := first[s.Target+":"+s.Interface]; !ok {
			first[s.Target+":"+s.Interface] = s.Value
		}
		last[s.Target+":"+s.Interface] = s.Value
	}
	var s0, s1 int64
	for k, v := range last {
		switch {
		case strings.HasPrefix(k, "spine0:"):
			s0 += v - first[k]
		case strings.HasPrefix(k, "spine1:"):
			s1 += v - first[k]
		}
	}
	t.Logf("spine0 forwarded %d bytes, spine1 %d", s0, s1)
	// Two flows of 4 MiB, each crossing spine1 once (encapsulated);
	// spine0 only BGP keepalives.
	if s1 < 2*4<<20 || s0 > 64<<10 {
		t.Errorf("spine0 forwarded %d bytes, spine1 %d: want the pinned 8 MiB on spine1 only", s0, s1)
	}
	sameStates(t, "after lab-srv6 --apply", before, deviceStates(t, inv))
	checkNoProcesses(t)

	// 3. VRFs as isolation rules, in the backend: the data plane agrees.
	hw, f := loadInventory(t, inv)
	hostIP := func(n int) string { return hw.Device(f.Host(n).Name).NICs[0].Address.Addr().String() }
	b := New()
	b.Prepare(harness.Env{Inventory: inv, Apply: true, Dir: t.TempDir(), RunID: "vrf", Logf: t.Logf})
	if err := b.Up(ctx, f); err != nil {
		t.Fatal(err)
	}
	vrfs := []runspec.VRF{{Name: "red", Table: 10, Hosts: []int{0, 2}}, {Name: "blue", Table: 20, Hosts: []int{1, 3}}}
	if err := b.Configure(ctx, runspec.Features{ECMPHash: drivers.FiveTuple(), VRFs: vrfs}); err != nil {
		b.Down(ctx)
		t.Fatal(err)
	}
	other, _ := h.lab.D.Exec(ctx, h.lab.St, f.Host(0).Name, "ping -c 1 -W 2 "+hostIP(1))
	same, sameErr := h.lab.D.Exec(ctx, h.lab.St, f.Host(0).Name, "ping -c 1 -W 2 "+hostIP(2))
	if err := b.Down(ctx); err != nil {
		t.Errorf("down: %v", err)
	}
	t.Logf("host0 -> host1 (blue): %s\nhost0 -> host2 (red): %s", other, same)
	// iputils calls ICMP administratively prohibited "Packet filtered".
	if !(strings.Contains(other, "Packet filtered") || strings.Contains(other, "Prohibited")) || sameErr != nil {
		t.Errorf("isolation: host0 -> host1 %q (want prohibited), host0 -> host2 %v", other, sameErr)
	}
	sameStates(t, "after the VRF isolation", before, deviceStates(t, inv))

	// 4. A VRF suite through the CLI: runs (exit 0), restores.
	vs := filepath.Join(h.dir, "vrfs.yaml")
	os.WriteFile(vs, []byte(fmt.Sprintf(`name: hw-vrfs
seed: 5
fabric: {inventory: %s}
`+labtest.SuiteBody("reps", "  vrfs:\n    - {name: red, table: 10, hosts: [host0, host2]}\n    - {name: blue, table: 20, hosts: [host1, host3]}\n")+`jobs:
  - {name: red-perm, workload: permutation, size: 1MiB, hosts: [host0, host2]}
  - {name: blue-perm, workload: permutation, size: 1MiB, hosts: [host1, host3]}
kpis:
  - {metric: completed_fraction, scope: red-perm, min: 1}
  - {metric: completed_fraction, scope: blue-perm, min: 1}
  - {metric: telemetry_coverage, min: 1}
`, inv)), 0o644)
	code, log = runCLI(t, h.bin, "run", vs, "--out", filepath.Join(t.TempDir(), "vrf-noapply"), "--agent-binary", h.bin, "-q")
	vnamed := needed(log)
	t.Logf("VRF suite without --apply: exit %d, %d changes named", code, len(vnamed))
	// Each leaf: its 2 host ports x the 2 hosts of the other VRF.
	if code != 2 || len(slices.DeleteFunc(slices.Clone(vnamed), func(s string) bool { return !strings.Contains(s, "+ deny -4 iif ") })) != 8 {
		t.Errorf("VRF suite without --apply: exit %d, named %v (want 2, 8 isolation rules)", code, vnamed)
	}
	out4 := filepath.Join(t.TempDir(), "vrf")
	code, log = runCLI(t, h.bin, "run", vs, "--apply", "--out", out4, "--agent-binary", h.bin)
	t.Logf("VRF suite with --apply: exit %d\n%s", code, log)
	if code != 0 {
		t.Errorf("VRF suite with --apply: exit %d, want 0", code)
	}
	sameStates(t, "after the VRF suite", before, deviceStates(t, inv))
	checkNoProcesses(t)

	// 5. The path controller (lab-srv6-reroute, unchanged): spine1-leaf1
	// degraded, the pair moved to spine0 by replacing the hosts' steering
	// routes; the verdict of the netns backend (pass); the move is undone
	// with the rest.
	reroute, _ := filepath.Abs("../../examples/suites/lab-srv6-reroute.yaml")
	out5 := filepath.Join(t.TempDir(), "reroute")
	code, log = runCLI(t, h.bin, "run", reroute, "--inventory", inv, "--apply", "--out", out5, "--agent-binary", h.bin)
	t.Logf("lab-srv6-reroute with --apply: exit %d\n%s", code, log)
	if code != 0 || !strings.Contains(log, "controller: srv6 path p03: host0 -> host3 now via spine0") {
		t.Errorf("lab-srv6-reroute: exit %d, want 0 and the pair moved to spine0", code)
	}
	if res5, err := results.Load(out5); err == nil {
		r := &res5.Runs[len(res5.Runs)-1]
		restore, _ := os.ReadFile(filepath.Join(out5, "runs", r.ID, "config-restore.txt"))
		t.Logf("restore:\n%s", restore)
		if !strings.Contains(string(restore), "restored ~ route 198.") || strings.Contains(string(restore), "NOT RESTORED") {
			t.Errorf("the controller's move was not restored")
		}
	}
	sameStates(t, "after lab-srv6-reroute", before, deviceStates(t, inv))
	checkNoProcesses(t)
}

// TestInventoryVRFs runs examples/suites/vrfs.yaml unchanged through the
// inventory of its own FRR lab (2 leaves, 2 spines, 4 hosts per leaf):
// without --apply it names the leaves' isolation rules (each host port x
// the 4 hosts of the other VRF: 32) and changes nothing; with --apply it
// passes, as on the netns backend, and every device ends as it was.
func TestInventoryVRFs(t *testing.T) {
	h := startHWLab(t, "leafspine:leaves=2,spines=2,hosts_per_leaf=4,gbps=0.2")
	inv := filepath.Join(h.dir, "lab-hw.yaml")
	if code, out := runCLI(t, h.bin, "lab", "inventory", h.topo, "--state-dir", filepath.Dir(h.lab.St.Dir), "--name", "lab-hw", "--out", inv); code != 0 {
		t.Fatalf("lab inventory: exit %d\n%s", code, out)
	}
	before := deviceStates(t, inv)
	suiteFile, _ := filepath.Abs("../../examples/suites/vrfs.yaml")
	code, log := runCLI(t, h.bin, "run", suiteFile, "--inventory", inv, "--out", filepath.Join(t.TempDir(), "noapply"), "--agent-binary", h.bin, "-q")
	named := needed(log)
	t.Logf("vrfs without --apply: exit %d, %d changes named", code, len(named))
	rules := slices.DeleteFunc(slices.Clone(named), func(s string) bool { return !strings.Contains(s, ": + deny -4 iif ") })
	if code != 2 || len(rules) != 32 {
		t.Errorf("vrfs without --apply: exit %d, %d isolation rules named of %v (want 2, 32)", code, len(rules), named)
	}
	sameStates(t, "vrfs without --apply", before, deviceStates(t, inv))
	out := filepath.Join(t.TempDir(), "apply")
	code, log = runCLI(t, h.bin, "run", suiteFile, "--inventory", inv, "--apply", "--out", out, "--agent-binary", h.bin)
	t.Logf("vrfs with --apply: exit %d\n%s", code, log)
	if code != 0 {
		t.Errorf("vrfs with --apply: exit %d, want 0 (as on the netns backend)", code)
	}
	if res, err := results.Load(out); err == nil {
		r := &res.Runs[len(res.Runs)-1]
		if applied := diffFile(t, filepath.Join(out, "runs", r.ID, "config-diff.txt")); !slices.Equal(applied, named) {
			t.Errorf("named without --apply:\n%s\nchanged with it:\n%s", strings.Join(named, "\n"), strings.Join(applied, "\n"))
		}
	}
	sameStates(t, "after vrfs --apply", before, deviceStates(t, inv))
	checkNoProcesses(t)
}
