package labbackend

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
	_ "github.com/fabricbench/fabricbench/harness/simbackend"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// runSuite runs a suite file on a backend and returns its results and
// results directory.
func runSuite(t *testing.T, suite, backend string) (*results.Results, string) {
	t.Helper()
	out := t.TempDir()
	keepIfFailed(t, out)
	var log bytes.Buffer
	opts := harness.Options{SuiteFile: suite, Out: out, Backend: backend, LabStateRoot: t.TempDir(), Log: &log, Progress: &log}
	if backend == Name || backend == NameContainerlab {
		opts.AgentBinary = labtest.Fabricbench(t)
	}
	res, err := harness.Run(context.Background(), opts)
	t.Logf("%s on %s:\n%s", suite, backend, log.String())
	if err != nil {
		t.Fatalf("run %s on %s: %v", suite, backend, err)
	}
	return res, out
}

// keepIfFailed copies a failed test's results directory to
// $FABRICBENCH_KEEP_FAILED/<test name> (when set), so that a failure on a
// loaded runner can be read after the test's temporary directory is gone.
func keepIfFailed(t *testing.T, out string) {
	dir := os.Getenv("FABRICBENCH_KEEP_FAILED")
	if dir == "" {
		return
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		dst := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
		_ = os.RemoveAll(dst)
		if err := os.CopyFS(dst, os.DirFS(out)); err != nil {
			t.Logf("keeping the results: %v", err)
			return
		}
		t.Logf("results kept in %s", dst)
	})
}

// checkTornDown fails unless the run's lab (named by the topology file it
// left in the results) and every deployed process are gone.
func checkTornDown(t *testing.T, out string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(out, "runs", "*", "lab", "*.clab.yml"))
	if len(files) == 0 {
		t.Fatalf("no lab topology in %s", out)
	}
	for _, f := range files {
		lab := strings.TrimSuffix(filepath.Base(f), ".clab.yml")
		if s := labtest.TakeSnapshot(t, lab); !s.Empty() {
			t.Errorf("lab %s left: %s", lab, s)
		}
		if docker() {
			if left := labtest.ContainerlabLeft(t, lab, "fb-"+lab); len(left) > 0 {
				t.Errorf("lab %s left: %s", lab, strings.Join(left, ", "))
			}
		}
	}
	// Deployed processes run in the lab's node namespaces. Other test
	// packages (agents/deploy, cmd/fabricbench, harness/hwbackend) deploy
	// fabricbench into their own labs at the same time, so a process
	// counts as left behind only when its network namespace is orphaned:
	// neither the root namespace nor one still mounted under /run/netns
	// (the lab's namespaces are deleted at teardown, after its processes
	// are killed).
	live := labtest.NetnsByName("")
	self, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatalf("reading this test's network namespace: %v", err)
	}
	for _, p := range labtest.Procs("/fabricbench-") {
		if p.Netns == self || live[p.Netns] != "" {
			continue
		}
		t.Errorf("deployed process left running: pid %s in orphaned %s: %s", p.PID, p.Netns, p.Cmd)
	}
}

// docker reports whether this machine has a Docker engine (then the
// containerlab labs' leftovers are checked too).
func docker() bool { return exec.Command("docker", "info").Run() == nil }

// forEachLab runs fn as a subtest on each lab backend this machine can
// run (the native runtime, and containerlab when it, Docker and the lab
// images are here; each skips with its reason otherwise) and returns the
// results by backend.
func forEachLab(t *testing.T, fn func(t *testing.T, backend string) *results.Results) map[string]*results.Results {
	out := map[string]*results.Results{}
	t.Run("native", func(t *testing.T) {
		labtest.Require(t)
		out[Name] = fn(t, Name)
	})
	t.Run("containerlab", func(t *testing.T) {
		labtest.RequireContainerlab(t)
		out[NameContainerlab] = fn(t, NameContainerlab)
	})
	return out
}

// sameVerdicts fails unless the runs of both lab backends (when both ran)
// have the same status and the same verdict for every KPI.
func sameVerdicts(t *testing.T, by map[string]*results.Results) {
	t.Helper()
	a, b := by[Name], by[NameContainerlab]
	if a == nil || b == nil {
		return
	}
	if a.Status != b.Status || len(a.Runs) != len(b.Runs) {
		t.Errorf("native run %s (%d runs), containerlab run %s (%d runs)", a.Status, len(a.Runs), b.Status, len(b.Runs))
		return
	}
	for i := range a.Runs {
		va, vb := map[string]string{}, map[string]string{}
		for _, k := range a.Runs[i].KPIs {
			va[k.Name] = k.Verdict
		}
		for _, k := range b.Runs[i].KPIs {
			vb[k.Name] = k.Verdict
		}
		if fmt.Sprint(va) != fmt.Sprint(vb) {
			t.Errorf("run %s: KPI verdicts differ between the runtimes:\n native       %v\n containerlab %v", a.Runs[i].ID, va, vb)
		}
	}
}

func kpiNames(r *results.Run) []string {
	var out []string
	for _, k := range r.KPIs {
		out = append(out, k.Name)
	}
	sort.Strings(out)
	return out
}

// portOctets returns, per device:port, the out-octets carried during the
// run (last sample minus first) from the stored gNMI telemetry.
func portOctets(t *testing.T, out string, run *results.Run) map[string]float64 {
	t.Helper()
	samples, err := telemetry.ReadStore(filepath.Join(out, run.Files["telemetry"]))
	if err != nil {
		t.Fatal(err)
	}
	first, last := map[string]float64{}, map[string]float64{}
	for _, s := range samples {
		if s.Measurement != telemetry.MeasInterface || s.Field != telemetry.FieldOutOctets {
			continue
		}
		k := s.Target + ":" + s.Interface
		if _, ok := first[k]; !ok {
			first[k] = float64(s.Value)
		}
		last[k] = float64(s.Value)
	}
	d := map[string]float64{}
	for k, v := range last {
		d[k] = v - first[k]
	}
	return d
}

// upLab brings a netns backend's lab up for fabric f (run runID) outside a
// suite run; when the test ends the backend is brought down and nothing
// of its lab may be left.
func upLab(t *testing.T, runID string, f *inventory.Fabric) *Backend {
	t.Helper()
	b := New(containerlab.RuntimeNative)
	b.Prepare(harness.Env{RunID: runID, Dir: t.TempDir(), LabStateRoot: t.TempDir(), AgentBinary: labtest.Fabricbench(t), Logf: t.Logf})
	ctx := context.Background()
	var lab string
	t.Cleanup(func() {
		if err := b.Down(ctx); err != nil {
			t.Errorf("down: %v", err)
		}
		if lab != "" {
			if s := labtest.TakeSnapshot(t, lab); !s.Empty() {
				t.Errorf("lab %s left: %s", lab, s)
			}
		}
	})
	if err := b.Up(ctx, f); err != nil {
		t.Fatal(err)
	}
	lab = b.LabName()
	return b
}

// TestLabSmoke is the acceptance run: the lab-smoke suite on the FRR lab,
// agents over SSH, every flow complete, bandwidth from kernel counters via
// gNMI, reports written, nothing left behind; and the same suite on the
// simulator gives the same report structure and KPI names.
func TestLabSmoke(t *testing.T) {
	suite := "../../examples/suites/lab-smoke.yaml"
	sameVerdicts(t, forEachLab(t, func(t *testing.T, backend string) *results.Results {
		res, out := runSuite(t, suite, backend)
		defer checkTornDown(t, out)
		checkLabSmoke(t, suite, res, out)
		return res
	}))
}

func checkLabSmoke(t *testing.T, suite string, res *results.Results, out string) {
	if len(res.Runs) != 1 {
		t.Fatalf("%d runs", len(res.Runs))
	}
	run := &res.Runs[0]
	if res.Status != results.Pass {
		t.Errorf("suite status %s (%s): KPIs %+v", res.Status, run.Error, run.KPIs)
	}
	// Correctness, not speed: on a loaded runner the host's scheduling sets
	// the pace, so the figures are only logged (docs/labs.md has them).
	var retx uint64
	for _, j := range run.Jobs {
		if j.Completed != j.Flows {
			t.Errorf("job %s: %d of %d flows completed", j.Name, j.Completed, j.Flows)
		}
		p := j.Packets
		if p.SpuriousRetransmits > p.Retransmitted {
			t.Errorf("job %s: %d spurious of %d retransmissions", j.Name, p.SpuriousRetransmits, p.Retransmitted)
		}
		retx += p.Retransmitted
		t.Logf("job %s: busbw %.3f Gb/s, completion %.1f ms, slowdown p99 %.2f; %d retransmitted (%d spurious), %d timeouts",
			j.Name, j.BusBWGbps, j.CompletionUs/1000, j.Slowdown.P99, p.Retransmitted, p.SpuriousRetransmits, p.Timeouts)
	}
	// perm 8 x 512, incast 4 x 128, a2a 56 x 32 packets of 8 KiB.
	if got, want := run.Packets.Sent, uint64(8*512+4*128+56*32); got != want {
		t.Errorf("run: %d data packets sent, want %d", got, want)
	}
	if run.Packets.Retransmitted != retx {
		t.Errorf("run: %d retransmitted, the jobs' add up to %d", run.Packets.Retransmitted, retx)
	}
	// Per-port bandwidth came from the exporters' kernel counters.
	oct := portOctets(t, out, run)
	f, err := inventory.Load("leafspine:leaves=4,spines=2,hosts_per_leaf=2,gbps=0.2")
	if err != nil {
		t.Fatal(err)
	}
	var hostOut, spineOut float64
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			v, ok := oct[n.Name+":"+f.Ports[p].Name]
			if !ok {
				t.Errorf("no out-octets telemetry for %s:%s", n.Name, f.Ports[p].Name)
			}
			switch n.Role {
			case inventory.RoleHost:
				hostOut += v
			case inventory.RoleSpine:
				spineOut += v
			}
		}
	}
	// perm: 8 x 4 MiB, incast 4 x 1 MiB, a2a 56 x 256 KiB: 50 MiB of payload.
	payload := float64(8*4<<20 + 4<<20 + 56*256<<10)
	if hostOut < payload || hostOut > 1.3*payload {
		t.Errorf("hosts sent %.0f bytes by their kernel counters, want about %.0f (payload plus headers)", hostOut, payload)
	}
	if spineOut < 0.5*payload {
		t.Errorf("spines forwarded only %.0f bytes", spineOut)
	}
	for _, name := range []string{"results.json", "junit.xml", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
	if run.Telemetry.Targets != len(f.Nodes) || run.Telemetry.Samples == 0 {
		t.Errorf("telemetry: %d targets, %d samples", run.Telemetry.Targets, run.Telemetry.Samples)
	}
	if _, err := os.Stat(filepath.Join(out, "runs", run.ID, "agents", "host0.log")); err != nil {
		t.Errorf("agent log not kept: %v", err)
	}

	simRes, _ := runSuite(t, suite, "sim")
	if got, want := kpiNames(&simRes.Runs[0]), kpiNames(run); !slices.Equal(got, want) {
		t.Errorf("KPI names differ: sim %v, netns %v", got, want)
	}
	a, _ := json.Marshal(simRes.Runs[0].Files)
	b, _ := json.Marshal(run.Files)
	var fa, fb map[string]string
	_ = json.Unmarshal(a, &fa)
	_ = json.Unmarshal(b, &fb)
	if !slices.Equal(sortedKeys(fa), sortedKeys(fb)) {
		t.Errorf("run files differ: sim %v, netns %v", sortedKeys(fa), sortedKeys(fb))
	}
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var smallSuite = `name: %s
seed: 3
fabric:
  spec: leafspine:leaves=2,spines=%d,hosts_per_leaf=%d,gbps=0.05
` + labtest.SuiteBody("ops", "%s\n") + `jobs:
%s
%s
kpis:
  - {metric: symmetry_anomalies, max: 0}
  - {metric: telemetry_coverage, min: 1}
`

func writeSuite(t *testing.T, name string, spines, hostsPerLeaf int, features, jobs, faults string) string {
	p := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(p, []byte(fmt.Sprintf(smallSuite, name, spines, hostsPerLeaf, features, jobs, faults)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDegradedUplinkFailsSymmetry degrades one leaf uplink with tbf: the
// symmetry KPI fails and names that port, while the same run without the
// fault passes. Four spines, because an outlier needs a group of at least
// three; four hosts per leaf, so that the permutation loads the uplinks
// as much as the hosts can send.
func TestDegradedUplinkFailsSymmetry(t *testing.T) {
	sameVerdicts(t, forEachLab(t, degradedUplink))
}

func degradedUplink(t *testing.T, backend string) *results.Results {
	job := "  - {name: perm, workload: permutation, size: 4MiB}"
	uplinkAnomalies := func(run *results.Run) (names []string) {
		for _, a := range run.Anomalies {
			t.Logf("anomaly %s %s: %s", a.Kind, a.Member, a.Evidence)
			if a.Kind == results.KindSymmetry {
				names = append(names, a.Member)
			}
		}
		return names
	}
	healthy, hout := runSuite(t, writeSuite(t, "lab-healthy", 4, 4, "", job, ""), backend)
	checkTornDown(t, hout)
	if got := uplinkAnomalies(&healthy.Runs[0]); len(got) > 0 {
		t.Errorf("healthy fabric: symmetry anomalies %v", got)
	}
	res, out := runSuite(t, "../../examples/suites/lab-degraded.yaml", backend)
	defer checkTornDown(t, out)
	run := &res.Runs[0]
	var sym *results.KPI
	for i := range run.KPIs {
		if run.KPIs[i].Metric == "symmetry_anomalies" {
			sym = &run.KPIs[i]
		}
	}
	if sym == nil || sym.Verdict != results.Fail {
		t.Errorf("symmetry KPI: %+v, want fail", sym)
	}
	if got := uplinkAnomalies(run); !slices.Contains(got, "leaf0:Ethernet4") {
		t.Errorf("symmetry anomalies %v do not name the degraded leaf0:Ethernet4", got)
	}
	return res
}

// TestSRv6PinsToSpine pins host0 <-> host3 to spine1 with a micro-SID
// container: their bytes cross spine1's ports only.
func TestSRv6PinsToSpine(t *testing.T) {
	sameVerdicts(t, forEachLab(t, srv6PinsToSpine))
}

func srv6PinsToSpine(t *testing.T, backend string) *results.Results {
	res, out := runSuite(t, "../../examples/suites/lab-srv6.yaml", backend)
	defer checkTornDown(t, out)
	run := &res.Runs[0]
	if run.Jobs[0].Completed != run.Jobs[0].Flows {
		t.Fatalf("pinned job: %d of %d flows completed (%s)", run.Jobs[0].Completed, run.Jobs[0].Flows, run.Error)
	}
	oct := portOctets(t, out, run)
	var s0, s1 float64
	for k, v := range oct {
		switch {
		case strings.HasPrefix(k, "spine0:"):
			s0 += v
		case strings.HasPrefix(k, "spine1:"):
			s1 += v
		}
	}
	t.Logf("spine0 forwarded %.0f bytes, spine1 %.0f", s0, s1)
	// Two flows of 4 MiB, each crossing spine1 once (encapsulated).
	if s1 < 2*4<<20 {
		t.Errorf("spine1 forwarded %.0f bytes, want at least the 8 MiB of the pinned flows", s1)
	}
	if s0 > 64<<10 { // BGP keepalives only
		t.Errorf("spine0 forwarded %.0f bytes of a job pinned to spine1", s0)
	}
	return res
}

// TestAgentDeathIsReported kills one host's agent in the middle of a job:
// the run names the host, keeps the flows that finished, and tears down.
func TestAgentDeathIsReported(t *testing.T) {
	labtest.Require(t)
	f, err := inventory.Load("leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=0.2")
	if err != nil {
		t.Fatal(err)
	}
	b := upLab(t, "death", f)
	ctx := context.Background()
	if err := b.Configure(ctx, runspec.Features{ECMPHash: []string{"src-ip", "dst-ip", "src-port", "dst-port"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.DeployAgents(ctx, runspec.Transport{CC: "nscc", LB: "reps", MTU: 8192, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	// host0 -> host1 small (completes), host2 <-> host3 large (cut).
	jobs := []runspec.Job{
		{Name: "small", Workload: runspec.Permutation, Hosts: []int{0, 1}, Size: 256 << 10, Reps: 1},
		{Name: "large", Workload: runspec.Permutation, Hosts: []int{2, 3}, Size: 64 << 20, Reps: 1},
	}
	w, err := runspec.BuildWorkload(f, jobs, 1)
	if err != nil {
		t.Fatal(err)
	}
	var victim int
	for _, p := range b.hd.Procs() {
		if p.Host == "host3" && p.Name == "agent" {
			victim = p.PID
		}
	}
	if victim == 0 {
		t.Fatal("no agent process on host3")
	}
	time.AfterFunc(time.Second, func() {
		out, err := b.Exec(ctx, "host3", "kill -9 "+strconv.Itoa(victim))
		if err != nil {
			t.Errorf("kill agent: %v %s", err, out)
		}
	})
	rr, err := b.RunJobs(ctx, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Failures) == 0 || !strings.Contains(strings.Join(rr.Failures, " "), "host3") {
		t.Fatalf("failures %q: want the dead agent on host3 named", rr.Failures)
	}
	for i, fl := range w.Matrix.Flows {
		o := rr.Flows[i]
		t.Logf("flow %d %d->%d: fct %d ps", i, fl.Src, fl.Dst, o.FCT)
		switch {
		case fl.Size == 256<<10 && o.FCT < 0:
			t.Errorf("flow %d between live hosts did not complete", i)
		case fl.Size == 64<<20 && o.FCT >= 0:
			t.Errorf("flow %d involving the dead host completed", i)
		}
	}
}

// cancelOn is a log writer that cancels a run when a line contains what.
type cancelOn struct {
	bytes.Buffer
	what   string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	n, err := c.Buffer.Write(p)
	if strings.Contains(c.Buffer.String(), c.what) {
		c.cancel()
	}
	return n, err
}

// TestInterruptTearsDown interrupts a suite (as Ctrl-C does) once the
// agents run: the run ends interrupted, and its lab (namespaces or
// containers, networks, processes) is gone.
func TestInterruptTearsDown(t *testing.T) {
	forEachLab(t, func(t *testing.T, backend string) *results.Results {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out := t.TempDir()
		w := &cancelOn{what: "agents running", cancel: cancel}
		opts := harness.Options{SuiteFile: "../../examples/suites/lab-smoke.yaml", Out: out, Backend: backend, LabStateRoot: t.TempDir(),
			Log: w, Progress: w, AgentBinary: labtest.Fabricbench(t)}
		res, err := harness.Run(ctx, opts)
		t.Logf("%s", w.String())
		if !strings.Contains(w.String(), "agents running") {
			t.Fatalf("the run ended before its agents ran: %v", err)
		}
		if err == nil && (res == nil || res.Status == results.Pass) {
			t.Errorf("an interrupted run passed")
		}
		checkTornDown(t, out)
		return nil
	})
}
