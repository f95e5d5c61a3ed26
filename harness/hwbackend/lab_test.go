package hwbackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/agents/deploy"
	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/drivers/sonic/testdouble"
	"github.com/fabricbench/fabricbench/harness/bringup"
	"github.com/fabricbench/fabricbench/harness/hostdeploy"
	"github.com/fabricbench/fabricbench/internal/testca"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
)

// TestMain also lets the test binary be the SONiC test double's commands
// (features_test.go's device links sonic-db-cli, config, show and sudo
// to it).
func TestMain(m *testing.M) {
	if testdouble.IsTool(os.Args[0]) {
		os.Exit(testdouble.Main(os.Args, os.Stdout, os.Stderr))
	}
	labtest.Main(m)
}

// hwLab is the FRR lab of a suite's fabric, deployed natively and
// described by an inventory file whose switches' gNMI servers are
// kernel exporters started by the test (standing in for the switches'
// own), the leaves' with TLS from a test CA.
type hwLab struct {
	lab   *labtest.Lab
	f     *inventory.Fabric
	cl    *containerlab.Lab
	dir   string
	topo  string // the lab's topology file
	ca    *testca.CA
	bin   string
	stand *hostdeploy.Deployment
}

// The lab name and management subnet of this package's labs
// (DEVELOPERS.md); FABRICBENCH_HWLAB_NAME and FABRICBENCH_HWLAB_MGMT
// replace them, so that two checkouts can run the test at once.
var (
	hwLabName  = envOr("FABRICBENCH_HWLAB_NAME", "fbhwlab")
	mgmtSubnet = envOr("FABRICBENCH_HWLAB_MGMT", "198.19.243.0/24")
)

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func startHWLab(t *testing.T, spec string) *hwLab { return startHWLabWith(t, spec, false) }

// startHWLabWith starts the lab; with srv6 every switch has a locator.
func startHWLabWith(t *testing.T, spec string, srv6 bool) *hwLab {
	t.Helper()
	return startHWLabMTU(t, spec, srv6, LinkMTU)
}

// startHWLabMTU starts the lab with its links at mtu (0: the kernel's
// default, 1500, as `lab generate` without --mtu).
func startHWLabMTU(t *testing.T, spec string, srv6 bool, mtu int) *hwLab {
	t.Helper()
	labtest.Require(t)
	f, err := inventory.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	g, err := containerlab.Generate(f, containerlab.GenOptions{Name: hwLabName, MgmtSubnet: netip.MustParsePrefix(mgmtSubnet),
		LinkRates: true, MTU: mtu, SRv6: srv6})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Write(dir); err != nil {
		t.Fatal(err)
	}
	cl, err := g.Lab(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := &hwLab{lab: labtest.StartLab(t, cl), f: f, cl: cl, dir: dir, topo: filepath.Join(dir, g.TopologyFile), ca: testca.New(t), bin: labtest.Fabricbench(t)}
	return h
}

func (h *hwLab) mgmt(node string) string {
	ns, _ := h.lab.St.Node(node)
	return ns.Mgmt
}

// portName is the fabric's name of a lab interface: switches' ethN is
// EthernetN-1 (containerlab.Generate's order), hosts keep theirs.
func (h *hwLab) portName(node, iface string) string {
	for _, n := range h.cl.Nodes {
		if n.Name == node && n.Role != "host" {
			k, _ := strconv.Atoi(strings.TrimPrefix(iface, "eth"))
			return "Ethernet" + strconv.Itoa(k-1)
		}
	}
	return iface
}

const gnmiPassword = "gnmi-test-password"

// writeInventory writes the lab's inventory with `fabricbench lab
// inventory` (the command users run on a deployed lab), naming each
// switch's own gNMI server (the stand-in exporters): the leaves' with TLS
// checked against the test CA, spine0's with TLS unchecked, the other
// spines' in plain text. gnmiAddr may replace a switch's gNMI address (an
// unreachable server).
// srv6Inventory does what `fabricbench lab up` does after deploying
// (every switch's uN SID) and writes the lab's inventory, named name,
// with `fabricbench lab inventory`; it returns the file.
func (h *hwLab) srv6Inventory(ctx context.Context, t *testing.T, name string) string {
	t.Helper()
	target, err := bringup.FromLab(h.cl, h.lab.St, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bringup.Apply(ctx, target, bringup.LabFeatures(h.cl), nil, false); err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(h.dir, name+".yaml")
	if code, out := runCLI(t, h.bin, "lab", "inventory", h.topo, "--state-dir", filepath.Dir(h.lab.St.Dir), "--name", name, "--out", inv); code != 0 {
		t.Fatalf("lab inventory: exit %d\n%s", code, out)
	}
	return inv
}

func (h *hwLab) writeInventory(t *testing.T, name string, gnmiAddr map[string]string) string {
	t.Helper()
	pw := filepath.Join(h.dir, "gnmi.password")
	if err := os.WriteFile(pw, []byte(gnmiPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(h.dir, name+".yaml")
	args := []string{"lab", "inventory", h.topo, "--state-dir", filepath.Dir(h.lab.St.Dir), "--name", name, "--out", path}
	for _, n := range h.cl.Nodes {
		if n.Role == "host" {
			continue
		}
		addr := net.JoinHostPort(h.mgmt(n.Name), "9339")
		if a, ok := gnmiAddr[n.Name]; ok {
			addr = a
		}
		sec := "insecure"
		switch {
		case n.Role == "leaf":
			sec = "ca=" + h.ca.CAFile
		case n.Name == "spine0":
			sec = "skip-verify"
		}
		args = append(args, "--gnmi", fmt.Sprintf("%s=%s,%s,user=fabricbench,password=file:%s", n.Name, addr, sec, pw))
	}
	if code, out := runCLI(t, h.bin, args...); code != 0 {
		t.Fatalf("lab inventory: exit %d\n%s", code, out)
	}
	return path
}

// ifaces are a node's lab interfaces in order.
func (h *hwLab) ifaces(node string) []string {
	var out []string
	for _, l := range h.cl.Links {
		if l.A.Node == node {
			out = append(out, l.A.Interface)
		}
		if l.B.Node == node {
			out = append(out, l.B.Interface)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		x, _ := strconv.Atoi(strings.TrimPrefix(a, "eth"))
		y, _ := strconv.Atoi(strings.TrimPrefix(b, "eth"))
		return x - y
	})
	return out
}

// standIns starts a kernel exporter on every switch, as its own gNMI
// server: leaves and spine0 with TLS, the other spines in plain text.
func (h *hwLab) standIns(t *testing.T) {
	t.Helper()
	bin, err := deploy.LocalBinary(h.bin)
	if err != nil {
		t.Fatal(err)
	}
	h.stand = &hostdeploy.Deployment{Tag: "gnmi-standin", Logf: t.Logf, Bin: bin}
	t.Cleanup(func() {
		if err := h.stand.Stop(context.Background()); err != nil {
			t.Errorf("stop the stand-in gNMI servers: %v", err)
		}
	})
	var nodes []hostdeploy.Node
	var sw []*containerlab.Node
	for _, n := range h.cl.Nodes {
		if n.Role != "host" {
			nodes = append(nodes, hostdeploy.Node{Name: n.Name, Config: h.lab.Config(t, n.Name)})
			sw = append(sw, n)
		}
	}
	ctx := context.Background()
	if err := h.stand.Connect(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	err = hostdeploy.Parallel(len(sw), func(i int) error {
		n := sw[i]
		e := hostdeploy.Exporter{Node: n.Name, Device: n.Name, Listen: net.JoinHostPort(h.mgmt(n.Name), "9339"),
			Interval: 5 * time.Millisecond, Queues: true, Password: gnmiPassword}
		for _, iface := range h.ifaces(n.Name) {
			e.Interfaces = append(e.Interfaces, [2]string{h.portName(n.Name, iface), iface})
		}
		if n.Role == "leaf" || n.Name == "spine0" {
			cf, kf := h.ca.Issue(t, h.mgmt(n.Name))
			e.TLSCert, _ = os.ReadFile(cf)
			e.TLSKey, _ = os.ReadFile(kf)
		}
		_, err := h.stand.StartExporter(ctx, e)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// deviceStates reads every device through its driver: links, BGP
// sessions, routes, SIDs, rules, the ECMP hash sysctls and the root
// qdiscs of its fabric interfaces (kind, handle and options).
func deviceStates(t *testing.T, inv string) map[string]string {
	t.Helper()
	hw, err := inventory.LoadHardware(inv, drivers.Platforms()...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var mu sync.Mutex
	err = hostdeploy.Parallel(len(hw.Devices), func(i int) error {
		d := &hw.Devices[i]
		drv, err := drivers.OpenDevice(hw, d.Name)
		if err != nil {
			return err
		}
		defer drv.Close()
		st, err := drv.State(context.Background())
		if err != nil {
			return err
		}
		for k := range st.BGP {
			st.BGP[k].PfxReceived = 0 // may move while BGP refreshes
		}
		// Neighbour tables (ARP/ND entries, LLDP) come and go with the
		// traffic and the bring-up probes: not configuration.
		st.Neighbors = nil
		js, _ := json.Marshal(st)
		// The hash, and what SRv6 turns on (forwarding, seg6 per interface).
		sys, err := drv.Exec(context.Background(), "sysctl -n net.ipv4.fib_multipath_hash_policy net.ipv6.fib_multipath_hash_policy; "+
			"cd /proc/sys/net/ipv6/conf && grep -H . all/forwarding */seg6_enabled")
		if err != nil {
			return err
		}
		var qd []string
		for _, p := range d.Ports {
			q, err := drv.Exec(context.Background(), "tc -j qdisc show dev "+p.Interface+" root")
			if err != nil {
				return err
			}
			rq, err := readQdisc(q)
			if err != nil {
				return err
			}
			qd = append(qd, p.Interface+"="+normQdisc(rq))
		}
		mu.Lock()
		out[d.Name] = string(js) + "\nsysctl " + strings.Join(strings.Fields(sys), ",") + "\n" + strings.Join(qd, "\n")
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameStates(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for dev, b := range before {
		if a := after[dev]; !sameState(b, a) {
			t.Errorf("%s: %s's state changed:\nbefore %s\nafter  %s", what, dev, b, a)
		}
	}
}

// sameState compares two deviceStates entries: equal, but a root qdisc
// (the "iface={...}" lines) as the backend checks its own restore
// (sameQdisc: a tbf that a degrade replaced comes back within tc's
// one-microsecond resolution of the lab's netlink-set burst).
func sameState(before, after string) bool {
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	if len(a) != len(b) {
		return false
	}
	for i := range b {
		if a[i] == b[i] {
			continue
		}
		bi, bq, ok1 := strings.Cut(b[i], "={")
		ai, aq, ok2 := strings.Cut(a[i], "={")
		var qb, qa qdisc
		if !ok1 || !ok2 || ai != bi || json.Unmarshal([]byte("{"+bq), &qb) != nil || json.Unmarshal([]byte("{"+aq), &qa) != nil || !sameQdisc(qb, qa) {
			return false
		}
	}
	return true
}

// runCLI runs the fabricbench binary and returns its exit status and
// output.
func runCLI(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	// A run that hangs is killed well before the test's own timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var buf strings.Builder
	logf, _ := os.Create(filepath.Join(os.TempDir(), "fbhw-cli.log"))
	defer logf.Close()
	cmd.Stdout = io.MultiWriter(&buf, logf)
	cmd.Stderr = cmd.Stdout
	err := cmd.Run()
	out := buf.String()
	if ctx.Err() != nil {
		t.Fatalf("%v: killed after 150 s\n%s", args, out)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out
}

// TestInventoryRun is issue 15's acceptance on this machine: the FRR lab
// of examples/suites/lab-degraded.yaml described as an inventory, the
// switches' gNMI servers (kernel exporters standing in, with TLS where the
// inventory says so) subscribed to directly.
//
//   - a switch whose ECMP hash differs from what the suite needs: without
//     --apply the run exits 2 naming the device and setting, and nothing
//     changed;
//   - with --apply the suite names the degraded uplink leaf0:Ethernet4
//     (exit 1, as on the netns backend), and afterwards every device's
//     state (driver State, hash sysctls, root qdiscs) equals the state
//     before;
//   - an unreachable gNMI server is named and makes coverage < 1;
//   - a failed bring-up check stops the suite with exit 1, saying why.
func TestInventoryRun(t *testing.T) {
	h := startHWLab(t, "leafspine:leaves=2,spines=4,hosts_per_leaf=4,gbps=0.05")
	h.standIns(t)
	inv := h.writeInventory(t, "lab-hw", nil)
	suiteFile, _ := filepath.Abs("../../examples/suites/lab-degraded.yaml")
	// leaf0 was left with the L3 hash: the suite's 5-tuple is a change.
	h.lab.Sh(t, "leaf0", "sysctl -q -w net.ipv4.fib_multipath_hash_policy=0")
	before := deviceStates(t, inv)

	// 1. No --apply: exit 2 before anything is touched.
	out1 := filepath.Join(t.TempDir(), "noapply")
	code, log := runCLI(t, h.bin, "run", suiteFile, "--inventory", inv, "--out", out1, "--agent-binary", h.bin, "-q")
	t.Logf("without --apply: exit %d\n%s", code, log)
	if code != 2 || !strings.Contains(log, "leaf0: ~ sysctl net.ipv4.fib_multipath_hash_policy: 0 -> 1") || !strings.Contains(log, "--apply") {
		t.Errorf("without --apply: exit %d, want 2 naming leaf0's sysctl net.ipv4.fib_multipath_hash_policy", code)
	}
	if _, err := os.Stat(filepath.Join(out1, "runs", "lab-degraded", "agents")); err == nil {
		t.Error("agents were deployed without --apply")
	}
	sameStates(t, "without --apply", before, deviceStates(t, inv))

	// 1b. What the lab's FRR switches cannot do is refused before anything
	// changes, naming device, platform and feature: WRED/ECN (this kernel
	// has no red qdisc). (VRFs run there as isolation rules:
	// TestInventorySRv6VRF.)
	for _, c := range []struct{ name, features, want string }{
		{"ecn", "ecn: {enabled: true}\n  trimming: {enabled: false}", "(platform frr) cannot do ecn-wred"},
	} {
		sf := filepath.Join(h.dir, "refused-"+c.name+".yaml")
		os.WriteFile(sf, []byte(fmt.Sprintf(`name: hw-%s
seed: 3
fabric: {inventory: lab-hw.yaml}
features:
  ecmp: {hash: [src-ip, dst-ip, protocol, src-port, dst-port]}
  %s
transport: {cc: nscc, lb: ops, mtu: 8192}
telemetry: {interval: 5ms}
jobs:
  - {name: perm, workload: permutation, size: 256KiB, hosts: [host0, host4]}
`, c.name, c.features)), 0o644)
		code, log := runCLI(t, h.bin, "run", sf, "--apply", "--out", filepath.Join(t.TempDir(), c.name), "--agent-binary", h.bin, "-q")
		t.Logf("%s on the FRR lab: exit %d\n%s", c.name, code, log)
		if code != 2 || !strings.Contains(log, c.want) {
			t.Errorf("%s on the FRR lab: exit %d, want 2 naming %q", c.name, code, c.want)
		}
		sameStates(t, c.name+" refused", before, deviceStates(t, inv))
	}

	// 2. --apply: the degraded uplink is named; every device as before.
	out2 := filepath.Join(t.TempDir(), "apply")
	code, log = runCLI(t, h.bin, "run", suiteFile, "--inventory", inv, "--apply", "--out", out2, "--agent-binary", h.bin)
	t.Logf("with --apply: exit %d\n%s", code, log)
	res, err := results.Load(out2)
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 || res.Backend != Name || len(res.Runs) != 2 || res.Runs[0].ID != "bringup" || res.Runs[0].Status != results.Pass {
		t.Fatalf("with --apply: exit %d, backend %s, runs %d (want 1, hardware, bring-up passed + 1 point)", code, res.Backend, len(res.Runs))
	}
	run := &res.Runs[1]
	var sym []string
	for _, a := range run.Anomalies {
		if a.Kind == results.KindSymmetry {
			sym = append(sym, a.Member)
		}
	}
	if !slices.Contains(sym, "leaf0:Ethernet4") {
		t.Errorf("symmetry anomalies %v do not name the degraded leaf0:Ethernet4 (run error %q)", sym, run.Error)
	}
	for _, k := range run.KPIs {
		if k.Metric == "telemetry_coverage" && k.Verdict != results.Pass {
			t.Errorf("telemetry coverage %v: %s", k.Value, k.Message)
		}
	}
	if run.Telemetry.Targets != len(h.cl.Nodes) || len(run.Telemetry.Unreachable) > 0 {
		t.Errorf("telemetry: %d targets (want %d), unreachable %v", run.Telemetry.Targets, len(h.cl.Nodes), run.Telemetry.Unreachable)
	}
	if run.Jobs[0].Completed != run.Jobs[0].Flows {
		t.Errorf("%d of %d flows completed", run.Jobs[0].Completed, run.Jobs[0].Flows)
	}
	diff, _ := os.ReadFile(filepath.Join(out2, "runs", run.ID, "config-diff.txt"))
	restored, _ := os.ReadFile(filepath.Join(out2, "runs", run.ID, "config-restore.txt"))
	if !strings.Contains(string(diff), "~ sysctl net.ipv4.fib_multipath_hash_policy: 0 -> 1") ||
		!strings.Contains(string(restored), "restored ~ sysctl net.ipv4.fib_multipath_hash_policy: 1 -> 0") {
		t.Errorf("config diff:\n%s\nrestore:\n%s", diff, restored)
	}
	if _, err := os.Stat(filepath.Join(out2, "runs", run.ID, "agents", "host0.log")); err != nil {
		t.Errorf("agent log not kept: %v", err)
	}
	sameStates(t, "after --apply", before, deviceStates(t, inv))
	checkNoProcesses(t)

	// 2b. Ctrl-C in the middle of the jobs: the fault and the applied
	// setting are undone all the same.
	out2b := filepath.Join(t.TempDir(), "interrupted")
	code, log = runCLIInterrupt(t, h.bin, "flows done", "run", suiteFile, "--inventory", inv, "--apply", "--out", out2b, "--agent-binary", h.bin)
	t.Logf("Ctrl-C during the jobs: exit %d\n%s", code, log)
	if code != 130 || !strings.Contains(log, "restored leaf0: ~ sysctl net.ipv4.fib_multipath_hash_policy: 1 -> 0") {
		t.Errorf("Ctrl-C during the jobs: exit %d, want 130 and leaf0's hash restored", code)
	}
	sameStates(t, "after Ctrl-C", before, deviceStates(t, inv))
	checkNoProcesses(t)

	// 3. An unreachable gNMI server: named, coverage < 1, no hang.
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()
	inv3 := h.writeInventory(t, "lab-hw-dead", map[string]string{"spine3": deadAddr})
	small := filepath.Join(h.dir, "small.yaml")
	os.WriteFile(small, []byte(`name: hw-small
seed: 3
fabric: {inventory: lab-hw-dead.yaml}
`+labtest.SuiteBody("ops", "")+`jobs:
  - {name: perm, workload: permutation, size: 256KiB}
kpis:
  - {metric: telemetry_coverage, min: 1}
`), 0o644)
	_ = inv3
	out3 := filepath.Join(t.TempDir(), "dead")
	start := time.Now()
	code, log = runCLI(t, h.bin, "run", small, "--apply", "--out", out3, "--agent-binary", h.bin)
	t.Logf("unreachable spine3: exit %d in %v\n%s", code, time.Since(start), log)
	res3, err := results.Load(out3)
	if err != nil {
		t.Fatal(err)
	}
	r3 := &res3.Runs[len(res3.Runs)-1]
	if code != 1 || r3.Telemetry.Unreachable["spine3"] == "" || !strings.Contains(log, "spine3 UNREACHABLE") {
		t.Errorf("unreachable spine3: exit %d, unreachable %v", code, r3.Telemetry.Unreachable)
	}
	for _, k := range r3.KPIs {
		if k.Metric == "telemetry_coverage" && (k.Verdict != results.Fail || k.Value >= 1) {
			t.Errorf("coverage with spine3 unreachable: %v %s", k.Value, k.Verdict)
		}
	}
	sameStates(t, "after the unreachable run", before, deviceStates(t, inv))

	// 4. A failed bring-up check stops the suite: exit 1, saying why.
	h.lab.Sh(t, "leaf1", "ip link set eth5 down")
	out4 := filepath.Join(t.TempDir(), "bringup")
	code, log = runCLI(t, h.bin, "run", suiteFile, "--inventory", inv, "--apply", "--out", out4, "--agent-binary", h.bin, "-q")
	t.Logf("leaf1 uplink down: exit %d\n%s", code, log)
	h.lab.Sh(t, "leaf1", "ip link set eth5 up")
	res4, err := results.Load(out4)
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 || res4.Runs[0].Status != results.Fail || !strings.Contains(res4.Runs[0].Error, "leaf1") ||
		res4.Runs[1].Status != results.Skipped {
		t.Errorf("failed bring-up: exit %d, runs %+v", code, res4.Runs)
	}
	// The run changed nothing: the hash is still leaf0's L3.
	if got := strings.TrimSpace(h.lab.Sh(t, "leaf0", "sysctl -n net.ipv4.fib_multipath_hash_policy")); got != "0" {
		t.Errorf("leaf0 hash policy %s after a stopped run", got)
	}
}

// runCLIInterrupt runs the fabricbench binary and sends it SIGINT (as
// Ctrl-C does) once its output contains mark.
func runCLIInterrupt(t *testing.T, bin, mark string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sent := false
		b := make([]byte, 4096)
		for {
			n, err := pr.Read(b)
			buf.Write(b[:n])
			if !sent && strings.Contains(buf.String(), mark) {
				sent = true
				_ = cmd.Process.Signal(os.Interrupt)
			}
			if err != nil {
				return
			}
		}
	}()
	err := cmd.Wait()
	pw.Close()
	<-scanned
	if ctx.Err() != nil {
		t.Fatalf("%v: killed after 150 s\n%s", args, buf.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, buf.String()
}

// checkNoProcesses fails if a deployed agent or the backend's exporters
// still run (the stand-in gNMI servers are the test's).
func checkNoProcesses(t *testing.T) {
	t.Helper()
	// Only processes in this lab's namespaces: other test packages deploy
	// fabricbench into labs of their own at the same time.
	lab := labtest.NetnsByName("clab-" + hwLabName + "-")
	for _, p := range labtest.Procs("/run/run-") {
		if node := lab[p.Netns]; node != "" {
			t.Errorf("deployed process left running in %s: pid %s: %s", node, p.PID, p.Cmd)
		}
	}
}
