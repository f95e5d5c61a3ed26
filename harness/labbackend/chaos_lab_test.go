package labbackend

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/labrt"
	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/results"
)

// Chaos tests (issue 34): the harness's own infrastructure fails in the
// middle of a run on a real FRR lab in network namespaces, and each test
// asserts what the user is told, what is on disk and that nothing of the
// lab is left on the host. Every test has a management /24 of its own in
// 198.19.220.0-198.19.226.0 (220 agent, 221 gNMI, 222 bgpd, 223 SSH, 224
// the killed harness and the run after it, 225 the soak; 226 is
// cmd/fabricbench's interrupt test) and a lab name of the backend's
// fbnXXXXXX form; each lab is torn down when the test ends, also when it fails.
// docs/labs.md ("Crash safety") lists the cases.

// chaosSuite is two leaves, two spines and two hosts per leaf at 50 Mb/s:
// a small job (host0 <-> host2, 256 KiB each way, done in well under a
// second) and a large one (host1 <-> host3, 16 MiB each way: about 3 s at
// line rate), so that a fault a moment after the jobs start hits the
// large job while the small one completes.
var chaosSuite = `name: %s
seed: 5
fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=0.05"}
` + labtest.SuiteBody("reps", "") + `jobs:
  - {name: small, workload: permutation, size: 256KiB, hosts: [host0, host2]}
  - {name: large, workload: permutation, size: %s, hosts: [host1, host3]}
kpis:
  - {metric: completed_fraction, scope: small, min: 1}
  - {metric: completed_fraction, scope: large, min: 1}
  - {metric: telemetry_coverage, min: 1}
`

// chaosRunTimeout bounds a chaos run: a hang fails the test. A healthy
// run of chaosSuite takes about 30 s on a loaded 2-core runner (bring-up,
// 3 s of jobs, teardown).
const chaosRunTimeout = 4 * time.Minute

func writeChaosSuite(t *testing.T, name, large string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(p, []byte(fmt.Sprintf(chaosSuite, name, large)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// chaosSubnet gives this test's labs the management subnet
// 198.19.<third>.0/24 (220 to 226).
func chaosSubnet(t *testing.T, third byte) {
	t.Helper()
	if third < 220 || third > 226 {
		t.Fatalf("chaos tests use 198.19.220.0-198.19.226.0/24, not 198.19.%d.0", third)
	}
	prev := labMgmtSubnet
	labMgmtSubnet = func(string) netip.Prefix { return netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 19, third, 0}), 24) }
	t.Cleanup(func() { labMgmtSubnet = prev })
}

// triggerLog is a run's log; when a line contains what, fn runs (once, in
// its own goroutine, so the run is not held up).
type triggerLog struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	what string
	once sync.Once
	fn   func(log string)
}

func (l *triggerLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.buf.Write(p)
	if l.what != "" && strings.Contains(l.buf.String(), l.what) {
		s := l.buf.String()
		l.once.Do(func() { go l.fn(s) })
	}
	return n, err
}

func (l *triggerLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

var deployingRE = regexp.MustCompile(`deploying lab (fbn[0-9a-f]{6}) `)

// labOf is the lab a run's log says it deployed.
func labOf(log string) string {
	if m := deployingRE.FindStringSubmatch(log); m != nil {
		return m[1]
	}
	return ""
}

// labProcs are the running processes in lab's namespace of node whose
// command line contains substr.
func labProcs(lab, node, substr string) []labtest.Proc {
	ns := labtest.NetnsByName("clab-" + lab + "-" + node)
	var out []labtest.Proc
	for _, p := range labtest.Procs(substr) {
		if ns[p.Netns] == "clab-"+lab+"-"+node {
			out = append(out, p)
		}
	}
	return out
}

// destroyLeft removes what is left of a lab under root (a test's cleanup
// when a run did not tear its lab down), so that a failing test leaves
// nothing behind either.
func destroyLeft(t *testing.T, root, lab string) {
	if lab == "" || labtest.TakeSnapshot(t, lab).Empty() {
		return
	}
	t.Logf("removing what is left of lab %s", lab)
	st, err := labrt.LoadState(root, lab)
	var rt labrt.Runtime
	var nodes []string
	if err == nil {
		rt, err = labrt.ForState(st, labrt.Options{StateRoot: root})
		for _, n := range st.Nodes {
			nodes = append(nodes, n.Name)
		}
	} else {
		rt, err = labrt.Open(containerlab.RuntimeNative, labrt.Options{StateRoot: root})
	}
	if err != nil {
		t.Errorf("cleanup of lab %s: %v", lab, err)
		return
	}
	if _, err := rt.Destroy(context.Background(), lab, nodes); err != nil {
		t.Errorf("cleanup of lab %s: %v", lab, err)
	}
}

// chaosRun runs suite on the netns backend with the fault: fault runs
// once the progress says the first flow is done (the jobs run: the
// small job's flows end first), with the lab's name. It returns the results (nil when the run returned
// none), its results directory, its log and the run's error; the run must
// end within chaosRunTimeout, and nothing of its lab may be left.
func chaosRun(t *testing.T, suite string, fault func(lab string)) (res *results.Results, out, log string, err error) {
	t.Helper()
	out, root := t.TempDir(), t.TempDir()
	injected := make(chan struct{})
	// The first flow done (of the small job: the large one runs on).
	w := &triggerLog{what: " flows done", fn: func(s string) {
		fault(labOf(s))
		close(injected)
	}}
	t.Cleanup(func() { destroyLeft(t, root, labOf(w.String())) })
	ctx, cancel := context.WithTimeout(context.Background(), chaosRunTimeout)
	defer cancel()
	start := time.Now()
	res, err = harness.Run(ctx, harness.Options{SuiteFile: suite, Out: out, Backend: Name, LabStateRoot: root,
		Log: w, Progress: w, AgentBinary: labtest.Fabricbench(t)})
	t.Logf("run ended after %v (%v):\n%s", time.Since(start).Round(time.Millisecond), err, w.String())
	if ctx.Err() != nil {
		t.Fatalf("the run did not end within %v", chaosRunTimeout)
	}
	select {
	case <-injected:
	case <-time.After(10 * time.Second):
		t.Fatalf("the fault was never injected (no flow done in the log, or the run ended first)")
	}
	checkTornDown(t, out)
	return res, out, w.String(), err
}

// kill9 kills the processes with SIGKILL and says which.
func kill9(t *testing.T, what string, ps []labtest.Proc) {
	if len(ps) == 0 {
		t.Errorf("no %s process to kill", what)
		return
	}
	for _, p := range ps {
		pid, _ := strconv.Atoi(p.PID)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Errorf("kill %s (pid %d): %v", what, pid, err)
		}
		t.Logf("killed %s: pid %d %s", what, pid, p.Cmd)
	}
}

// onlyRun is the single run of a suite's results.
func onlyRun(t *testing.T, res *results.Results) *results.Run {
	t.Helper()
	if res == nil || len(res.Runs) != 1 {
		t.Fatalf("results: %+v, want one run", res)
	}
	return &res.Runs[0]
}

// job is the run's job named name.
func job(t *testing.T, run *results.Run, name string) *results.Job {
	t.Helper()
	for i := range run.Jobs {
		if run.Jobs[i].Name == name {
			return &run.Jobs[i]
		}
	}
	t.Fatalf("no job %s in %+v", name, run.Jobs)
	return nil
}

// TestChaosAgentKilled kills host3's agent (SIGKILL) in the middle of the
// large job: the run is an infrastructure error naming the dead agent and
// the flows it lost; the small job is analysed and complete; flows.csv
// says why each lost flow did not complete; the lab is gone.
func TestChaosAgentKilled(t *testing.T) {
	labtest.Require(t)
	chaosSubnet(t, 220)
	res, out, _, _ := chaosRun(t, writeChaosSuite(t, "chaos-agent", "16MiB"), func(lab string) {
		time.Sleep(200 * time.Millisecond)
		kill9(t, "host3's agent", labProcs(lab, "host3", " agent --config"))
	})
	run := onlyRun(t, res)
	if run.Status != results.Error || run.ErrorKind != results.ErrorInfrastructure {
		t.Errorf("run status %s (%s), want an infrastructure error", run.Status, run.ErrorKind)
	}
	if !strings.Contains(run.Error, "host3") || !regexp.MustCompile(`flow`).MatchString(run.Error) {
		t.Errorf("run error %q does not name host3's agent and its lost flows", run.Error)
	}
	small, large := job(t, run, "small"), job(t, run, "large")
	if small.Completed != small.Flows || small.Flows != 2 {
		t.Errorf("small job (live hosts): %d of %d flows completed, want 2 of 2", small.Completed, small.Flows)
	}
	if large.Completed == large.Flows {
		t.Errorf("large job: all %d flows completed although host3's agent was killed", large.Flows)
	}
	raw, err := os.ReadFile(filepath.Join(out, "runs", run.ID, "flows.csv"))
	if err != nil {
		t.Fatalf("flows.csv: %v", err)
	}
	rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("flows.csv: %v (%d rows)", err, len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if rows[0][len(rows[0])-1] != "error" {
		t.Errorf("flows.csv header %v: error is not the last column", rows[0])
	}
	named := 0
	for _, r := range rows[1:] {
		host3 := r[col["src_host"]] == "host3" || r[col["dst_host"]] == "host3"
		done := r[col["fct_us"]] != ""
		switch {
		case done && r[col["error"]] != "":
			t.Errorf("flows.csv: completed flow %s has an error: %s", r[0], r[col["error"]])
		case !done && r[col["error"]] == "":
			t.Errorf("flows.csv: flow %s did not complete and says not why", r[0])
		case !done && !host3:
			t.Errorf("flows.csv: flow %s between live hosts did not complete: %s", r[0], r[col["error"]])
		case !done:
			named++
			t.Logf("flows.csv: flow %s %s->%s: %s", r[0], r[col["src_host"]], r[col["dst_host"]], r[col["error"]])
		}
	}
	if named == 0 {
		t.Errorf("flows.csv names no lost flow of host3")
	}
	for _, f := range []string{"results.json", "junit.xml", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

// TestChaosGNMITargetKilled kills leaf0's gNMI exporter in the middle of
// the jobs: the run does not hang, the target is named LOST, what arrived
// is analysed (the jobs complete), telemetry coverage falls below 1 and
// the run is an infrastructure error naming leaf0; the lab is gone.
func TestChaosGNMITargetKilled(t *testing.T) {
	labtest.Require(t)
	chaosSubnet(t, 221)
	res, _, log, _ := chaosRun(t, writeChaosSuite(t, "chaos-gnmi", "16MiB"), func(lab string) {
		time.Sleep(200 * time.Millisecond)
		kill9(t, "leaf0's exporter", labProcs(lab, "leaf0", " exporter "))
	})
	run := onlyRun(t, res)
	if run.Status != results.Error || run.ErrorKind != results.ErrorInfrastructure || !strings.Contains(run.Error, "telemetry: leaf0") {
		t.Errorf("run %s (%s): %q, want an infrastructure error naming leaf0's telemetry", run.Status, run.ErrorKind, run.Error)
	}
	if !regexp.MustCompile(`telemetry: \S+: leaf0 LOST`).MatchString(log) {
		t.Errorf("the log does not name leaf0 as LOST")
	}
	for _, j := range run.Jobs {
		if j.Completed != j.Flows {
			t.Errorf("job %s: %d of %d flows completed; losing telemetry must not lose the jobs", j.Name, j.Completed, j.Flows)
		}
	}
	var cov *results.KPI
	for i := range run.KPIs {
		if run.KPIs[i].Metric == "telemetry_coverage" {
			cov = &run.KPIs[i]
		}
	}
	if cov == nil || cov.Value >= 1 || cov.Verdict != results.Fail {
		t.Errorf("telemetry_coverage %+v, want below 1 and failed", cov)
	}
	if run.Telemetry.Samples == 0 || run.Telemetry.Unreachable["leaf0"] == "" {
		t.Errorf("telemetry: %d samples, unreachable %v; want the other targets' samples and leaf0 named", run.Telemetry.Samples, run.Telemetry.Unreachable)
	}
}

// TestChaosBGPDKilled kills bgpd on spine1 in the middle of the jobs: the
// fabric routes around it (the other spine carries on), the jobs end
// without a hang, and the run fails naming the daemon, with the fabric's
// reaction (the leaves' sessions to spine1 that went down, when) in its
// notes; the lab is gone.
func TestChaosBGPDKilled(t *testing.T) {
	labtest.Require(t)
	chaosSubnet(t, 222)
	res, _, _, _ := chaosRun(t, writeChaosSuite(t, "chaos-bgpd", "16MiB"), func(lab string) {
		time.Sleep(200 * time.Millisecond)
		kill9(t, "spine1's bgpd", labProcs(lab, "spine1", "bgpd"))
	})
	run := onlyRun(t, res)
	if run.Status == results.Pass {
		t.Errorf("the run passed although spine1's bgpd was killed")
	}
	if !regexp.MustCompile(`fabric: spine1: bgpd \(pid \d+\) stopped during the jobs`).MatchString(run.Error) {
		t.Errorf("run error %q does not name spine1's bgpd", run.Error)
	}
	notes := strings.Join(run.AnalysisNotes, "\n")
	t.Logf("run %s: %s; notes:\n%s", run.Status, run.Error, notes)
	// Each leaf either lost its sessions with spine1 (spine1's kernel
	// closed them) or, when that segment was lost on the loaded link,
	// still counts them as established until its hold timer expires: the
	// notes say which, for both.
	for _, leaf := range []string{"leaf0", "leaf1"} {
		re := regexp.MustCompile(`(?m)^` + leaf + ` (lost its BGP session with spine1 \(198\.18\.[0-9.]+\) \d+\.\d s (into the jobs|before the jobs started)|had its BGP session with spine1 \(198\.18\.[0-9.]+\) [a-z]+ when the jobs ended|still counted its BGP session with spine1 \(198\.18\.[0-9.]+\) as established when the jobs ended)`)
		if !re.MatchString(notes) {
			t.Errorf("the notes do not give %s's reaction to spine1's bgpd:\n%s", leaf, notes)
		}
	}
	if strings.Contains(notes, "spine0 lost") {
		t.Errorf("spine0 lost a session although only spine1's bgpd was killed:\n%s", notes)
	}
	for _, j := range run.Jobs {
		t.Logf("job %s: %d of %d flows completed, %d retransmitted", j.Name, j.Completed, j.Flows, j.Packets.Retransmitted)
	}
}

// TestChaosHarnessKilled kills the harness (fabricbench run, with SIGKILL,
// as a CI timeout or the OOM killer would) in the middle of a run: its lab (namespaces, FRR, sshd, agents, exporters) is left; while
// the harness lived, a reclaim did not touch its lab; lab gc --dry-run
// names the lab and its dead owner and removes nothing; the next run
// reclaims it (and says so, naming the dead PID), then runs and passes,
// and nothing of either lab is left.
func TestChaosHarnessKilled(t *testing.T) {
	labtest.Require(t)
	// The next run's lab reuses the killed run's subnet: free once reclaimed.
	chaosSubnet(t, 224)
	bin := labtest.Fabricbench(t)
	root, out := t.TempDir(), t.TempDir()
	// The real command, as a user or CI runs it; its lab in 198.19.224.0/24.
	cmd := exec.Command(bin, "run", writeChaosSuite(t, "chaos-killed", "64MiB"), "--backend", Name, "--out", out)
	cmd.Env = append(os.Environ(), "FABRICBENCH_LAB_STATE="+root, MgmtSubnetEnv+"=198.19.224.0/24")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var childLog bytes.Buffer
	lab := ""
	started := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			childLog.WriteString(sc.Text() + "\n")
			if lab == "" {
				lab = labOf(sc.Text())
			}
			if strings.Contains(sc.Text(), "routing watch: ") {
				close(started)
				break
			}
		}
		for sc.Scan() {
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		destroyLeft(t, root, lab)
	})
	select {
	case <-started:
	case <-time.After(chaosRunTimeout):
		t.Fatalf("the child run's jobs did not start in %v:\n%s", chaosRunTimeout, childLog.String())
	}
	time.Sleep(time.Second) // mid-job

	// A live owner's lab is not touched.
	got, err := labrt.Reclaim(context.Background(), labrt.Options{StateRoot: root}, false)
	if err != nil || len(got) != 0 {
		t.Errorf("reclaim while the harness runs: %v %v, want nothing reclaimed", got, err)
	}
	before := labtest.TakeSnapshot(t, lab)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	pid := cmd.Process.Pid
	t.Logf("killed the harness (pid %d) during the jobs:\n%s", pid, childLog.String())
	left := labtest.TakeSnapshot(t, lab)
	t.Logf("left by the killed harness: %d namespaces, %d root interfaces, %d processes", len(left.NetNS), len(left.Links), len(left.PIDs))
	// 4 switches, 4 hosts and the management namespace; FRR, sshd,
	// agents and exporters in them.
	if len(left.NetNS) < 9 || len(left.PIDs) < 8 {
		t.Fatalf("the killed harness left %s; a SIGKILL cannot tear down, so this is no test of reclaim", left)
	}

	// lab gc --dry-run names the lab and its dead owner, touches nothing.
	gc := exec.Command(bin, "lab", "gc", "--dry-run", "--state-dir", root)
	gcOut, err := gc.CombinedOutput()
	t.Logf("lab gc --dry-run: %v\n%s", err, gcOut)
	want := fmt.Sprintf("would reclaim lab %s (native runtime, deployed ", lab)
	if err != nil || !strings.Contains(string(gcOut), want) || !strings.Contains(string(gcOut), fmt.Sprintf("of pid %d ", pid)) {
		t.Errorf("lab gc --dry-run: %v, output lacks %q and pid %d", err, want, pid)
	}
	if now := labtest.TakeSnapshot(t, lab); len(now.NetNS) != len(left.NetNS) {
		t.Errorf("lab gc --dry-run removed something: %s, was %s", now, left)
	}

	// The next run reclaims the killed run's lab first, then runs.
	next := t.TempDir()
	w := &triggerLog{}
	ctx, cancel := context.WithTimeout(context.Background(), chaosRunTimeout)
	defer cancel()
	res, err := harness.Run(ctx, harness.Options{SuiteFile: writeChaosSuite(t, "chaos-next", "1MiB"), Out: next, Backend: Name, LabStateRoot: root,
		Log: w, Progress: w, AgentBinary: bin})
	t.Logf("next run (%v):\n%s", err, w.String())
	t.Cleanup(func() { destroyLeft(t, root, labOf(w.String())) })
	if !regexp.MustCompile(fmt.Sprintf(`(?m)^reclaimed lab %s \(native runtime, deployed [^)]*\) of pid %d \(fabricbench run [^\n]*\), which is gone: `, lab, pid)).MatchString(w.String()) {
		t.Errorf("the next run does not say it reclaimed lab %s of pid %d", lab, pid)
	}
	if err != nil || res == nil || res.Status != results.Pass {
		t.Errorf("the next run: %v, status %v; want a pass after the reclaim", err, res)
	}
	if s := labtest.TakeSnapshot(t, lab); !s.Empty() {
		t.Errorf("the killed run's lab %s is still there: %s", lab, s)
	}
	if alive := labtest.Alive(before.PIDs); len(alive) > 0 {
		t.Errorf("processes of the killed run's lab still run: %v", alive)
	}
	if _, err := os.Stat(filepath.Join(root, lab)); !os.IsNotExist(err) {
		t.Errorf("the killed run's lab state is still under the state root: %v", err)
	}
	checkTornDown(t, out)
	checkTornDown(t, next)
}

// TestChaosSSHRefused kills every sshd of host3 (the listener and the
// sessions the harness holds) in the middle of the jobs, so that SSH to
// host3 is refused from then on: the run does not hang, says what failed
// on host3, and its lab is still torn down.
func TestChaosSSHRefused(t *testing.T) {
	labtest.Require(t)
	chaosSubnet(t, 223)
	res, out, _, err := chaosRun(t, writeChaosSuite(t, "chaos-ssh", "16MiB"), func(lab string) {
		time.Sleep(200 * time.Millisecond)
		kill9(t, "host3's sshd", labProcs(lab, "host3", "sshd"))
	})
	run := onlyRun(t, res)
	t.Logf("run %s (%s): %s; err %v", run.Status, run.ErrorKind, run.Error, err)
	if run.Status != results.Error || run.ErrorKind != results.ErrorInfrastructure ||
		!regexp.MustCompile(`host3: .*connect: connection refused`).MatchString(run.Error) {
		t.Errorf("run %s (%s): %q; want an infrastructure error naming host3's refused SSH", run.Status, run.ErrorKind, run.Error)
	}
	// The data plane and the agents' control API do not need SSH: the
	// jobs completed and were analysed.
	for _, j := range run.Jobs {
		if j.Completed != j.Flows {
			t.Errorf("job %s: %d of %d flows completed", j.Name, j.Completed, j.Flows)
		}
	}
	for _, k := range run.KPIs {
		if k.Verdict != results.Pass {
			t.Errorf("KPI %s: %s (%s); the run's measurements do not depend on SSH", k.Name, k.Verdict, k.Message)
		}
	}
	if _, err := results.Load(out); err != nil {
		t.Errorf("results: %v", err)
	}
}

// A bad $FABRICBENCH_LAB_MGMT_SUBNET is an input error naming it.
func TestMgmtSubnetEnv(t *testing.T) {
	for _, bad := range []string{"198.19.150.0/23", "198.19.150.1/24", "fd00::/64", "x"} {
		t.Setenv(MgmtSubnetEnv, bad)
		var ie *harness.InputError
		if _, err := subnetPicker(); !errors.As(err, &ie) || !strings.Contains(err.Error(), MgmtSubnetEnv+"=") {
			t.Errorf("%s=%s: %v, want an input error naming it", MgmtSubnetEnv, bad, err)
		}
	}
	t.Setenv(MgmtSubnetEnv, "198.19.150.0/24")
	pick, err := subnetPicker()
	if err != nil || pick("fbn000001").String() != "198.19.150.0/24" {
		t.Errorf("198.19.150.0/24: %v", err)
	}
}

// A bad $FABRICBENCH_LAB_PREFIX is an input error naming it; a good one
// starts every lab name.
func TestLabPrefixEnv(t *testing.T) {
	for _, bad := range []string{"Fb", "1fb", "fb-x", "fbh34bxyz", "fb_x"} {
		t.Setenv(LabPrefixEnv, bad)
		var ie *harness.InputError
		if _, err := labPrefix(); !errors.As(err, &ie) || !strings.Contains(err.Error(), LabPrefixEnv+"=") {
			t.Errorf("%s=%s: %v, want an input error naming it", LabPrefixEnv, bad, err)
		}
	}
	t.Setenv(LabPrefixEnv, "fbh34b")
	p, err := labPrefix()
	if err != nil || !regexp.MustCompile(`^fbh34b[0-9a-f]{6}$`).MatchString(labName(p, "run", 0)) {
		t.Errorf("fbh34b: %v %q", err, labName(p, "run", 0))
	}
	t.Setenv(LabPrefixEnv, "")
	if p, err := labPrefix(); err != nil || p != "fbn" {
		t.Errorf("unset: %q %v, want fbn", p, err)
	}
}
