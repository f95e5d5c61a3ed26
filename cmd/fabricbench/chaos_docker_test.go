package main

import (
	"context"
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/containerlab/labrt"
	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// privateDockerd is a Docker engine of the test's own (its data root,
// exec root, containerd and socket), so that stopping it touches nothing
// of the machine's engine, which other tests use.
type privateDockerd struct {
	dir, sock string
	host      string // DOCKER_HOST
	cmd       *exec.Cmd
	exited    chan struct{}
	starts    int
}

// startPrivateDockerd starts the engine; it is stopped and its
// directories removed when the test ends, also when it fails.
func startPrivateDockerd(t *testing.T) *privateDockerd {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "fbh34b-docker-")
	if err != nil {
		t.Fatal(err)
	}
	d := &privateDockerd{dir: dir, sock: fmt.Sprintf("/tmp/fbh34b-%d.sock", os.Getpid())}
	d.host = "unix://" + d.sock
	t.Cleanup(func() { d.remove(t) })
	d.start(t)
	return d
}

func (d *privateDockerd) env() []string {
	return append(os.Environ(), "DOCKER_HOST="+d.host)
}

// start starts dockerd on the engine's data root (again after kill) and
// waits until it answers.
func (d *privateDockerd) start(t *testing.T) {
	t.Helper()
	d.starts++
	log, err := os.Create(filepath.Join(d.dir, fmt.Sprintf("dockerd-%d.log", d.starts)))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	d.cmd = exec.Command("dockerd", "--data-root", filepath.Join(d.dir, "data"), "--exec-root", filepath.Join(d.dir, "exec"),
		"--pidfile", filepath.Join(d.dir, "dockerd.pid"), "-H", d.host, "--iptables=false", "--ip-masq=false", "--bridge=none",
		"--containerd-namespace", "fbh34b", "--containerd-plugins-namespace", "fbh34b-plugins")
	d.cmd.Stdout, d.cmd.Stderr = log, log
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("dockerd: %v", err)
	}
	d.exited = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { c.Wait(); close(done) }(d.cmd, d.exited)
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}")
		c.Env = d.env()
		err := c.Run()
		cancel()
		if err == nil {
			return
		}
		select {
		case <-d.exited:
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("dockerd exited: %s", tailLines(string(b), 20))
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("dockerd did not answer in 90 s: %s", tailLines(string(b), 20))
		}
	}
}

// running reports whether dockerd runs.
func (d *privateDockerd) running() bool {
	if d.cmd == nil {
		return false
	}
	select {
	case <-d.exited:
		return false
	default:
		return true
	}
}

// stop sends dockerd sig and waits until it exits. SIGKILL is a crash
// (or the OOM killer): its containerd goes with it, the containers' shims
// and processes stay. SIGTERM is `systemctl stop docker`: it stops the
// containers first.
func (d *privateDockerd) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := d.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal dockerd: %v", err)
	}
	select {
	case <-d.exited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("dockerd did not exit within 2 min of %v", sig)
	}
}

// docker runs the docker command against the engine.
func (d *privateDockerd) docker(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "docker", args...)
	c.Env = d.env()
	out, err := c.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// loadImages copies images from the machine's engine into this one.
func (d *privateDockerd) loadImages(t *testing.T, images ...string) {
	t.Helper()
	save := exec.Command("docker", append([]string{"save"}, images...)...)
	load := exec.Command("docker", "load")
	load.Env = d.env()
	pipe, err := save.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	load.Stdin = pipe
	var saveErr, loadOut strings.Builder
	save.Stderr = &saveErr
	load.Stdout, load.Stderr = &loadOut, &loadOut
	if err := save.Start(); err != nil {
		t.Fatal(err)
	}
	lerr := load.Run()
	serr := save.Wait()
	if serr != nil || lerr != nil {
		t.Fatalf("docker save | docker load: %v %s; %v %s", serr, saveErr.String(), lerr, loadOut.String())
	}
}

// processesOf are the processes whose command line mentions the engine's
// directory (containerd, the containers' shims).
func (d *privateDockerd) processesOf() []labtest.Proc { return labtest.Procs(d.dir) }

// remove stops dockerd (SIGTERM: it stops its containers and containerd),
// kills what of it is left, unmounts and removes its directories.
func (d *privateDockerd) remove(t *testing.T) {
	if d.running() {
		d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.exited:
		case <-time.After(60 * time.Second):
			t.Errorf("dockerd did not stop in 60 s of SIGTERM; killing it")
			d.cmd.Process.Kill()
			<-d.exited
		}
	}
	for _, p := range d.processesOf() {
		pid, _ := strconv.Atoi(p.PID)
		t.Errorf("left by the private dockerd: pid %d %s (killed)", pid, p.Cmd)
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 4 && strings.HasPrefix(f[4], d.dir+"/") {
				if err := syscall.Unmount(f[4], syscall.MNT_DETACH); err != nil {
					t.Errorf("unmount %s: %v", f[4], err)
				}
			}
		}
	}
	if err := os.RemoveAll(d.dir); err != nil {
		t.Errorf("remove %s: %v", d.dir, err)
	}
	os.Remove(d.sock)
}

func tailLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// clabLeft is what of containerlab lab `lab` is on this machine: its
// containers and management network in the engine (when it answers:
// engine), its named namespaces, its /etc/hosts block and SSH client
// configuration, live processes of pids, and root-namespace addresses in
// the lab's management subnet.
func clabLeft(t *testing.T, d *privateDockerd, lab, subnetPrefix string, pids []int) []string {
	t.Helper()
	var left []string
	if d.running() {
		out, err := d.docker("ps", "-a", "--filter", "label=containerlab="+lab, "--format", "{{.Names}}")
		if err != nil {
			t.Errorf("docker ps: %v %s", err, out)
		}
		for _, c := range strings.Fields(out) {
			left = append(left, "container "+c)
		}
		if _, err := d.docker("network", "inspect", "fb-"+lab); err == nil {
			left = append(left, "network fb-"+lab)
		}
	}
	if ents, err := os.ReadDir("/var/run/netns"); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "clab-"+lab+"-") {
				left = append(left, "namespace "+e.Name())
			}
		}
	}
	if b, err := os.ReadFile("/etc/hosts"); err == nil && strings.Contains(string(b), "CLAB-"+lab+"-START") {
		left = append(left, "/etc/hosts block")
	}
	if _, err := os.Stat("/etc/ssh/ssh_config.d/clab-" + lab + ".conf"); err == nil {
		left = append(left, "/etc/ssh/ssh_config.d/clab-"+lab+".conf")
	}
	for _, p := range labtest.Alive(pids) {
		left = append(left, "process "+p)
	}
	if out, err := exec.Command("ip", "-o", "-4", "addr", "show").Output(); err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, " "+subnetPrefix) {
				left = append(left, "address "+strings.Join(strings.Fields(l)[1:4], " "))
			}
		}
	}
	return left
}

// TestChaosDockerDaemonStopped: the Docker engine under a containerlab lab
// crashes (dockerd SIGKILLed; case crash) or is stopped (SIGTERM, as
// systemctl stop docker: it stops the containers, the hosts' agents with
// them; case stop) during the jobs of `fabricbench run`. The
// engine is the test's own (its own data root, containerd and socket;
// the lab images copied into it), never the machine's. The run does not
// hang: it ends within chaosDockerBound with exit 3 naming the engine,
// keeps what it measured (results.json, flows.csv, the telemetry store,
// junit.xml and report.html on disk and readable, the results line
// claiming only what is there) and says what is left (the lab's
// containers and Docker network) and the command that removes it. While
// the engine is down, lab gc says why it cannot and removes nothing; once
// the engine is back on the same data root, lab gc reclaims the lab, and
// no container, Docker network, namespace, process, /etc/hosts entry or
// address of it remains. After a crash the jobs complete (the data plane
// and the agents do not go through Docker); after a stop the run names the
// dead agents and the flows lost. Lab names start with fbh34b; the
// management networks are 198.19.215.0/24 (crash) and 198.19.216.0/24
// (stop).
func TestChaosDockerDaemonStopped(t *testing.T) {
	if testing.Short() {
		t.Skip("lab chaos test skipped in -short mode")
	}
	frr, host := labtest.RequireContainerlab(t) // root, containerlab, the machine's engine with the images
	if _, err := exec.LookPath("dockerd"); err != nil {
		t.Skip("the Docker chaos test starts a Docker engine of its own: no dockerd in PATH (./scripts/test.sh installs docker.io)")
	}
	start := time.Now()
	d := startPrivateDockerd(t)
	d.loadImages(t, frr, host)
	t.Logf("private dockerd at %s with the lab images in %v", d.host, time.Since(start).Round(time.Millisecond))
	bin := labtest.Fabricbench(t)
	for _, c := range []struct {
		name  string
		sig   syscall.Signal
		third int // the lab's management subnet: 198.19.<third>.0/24
	}{{"crash", syscall.SIGKILL, 215}, {"stop", syscall.SIGTERM, 216}} {
		t.Run(c.name, func(t *testing.T) {
			chaosDocker(t, d, bin, c.sig, fmt.Sprintf("198.19.%d.0/24", c.third), fmt.Sprintf("198.19.%d.", c.third))
		})
	}
}

// chaosDocker is one case of TestChaosDockerDaemonStopped: dockerd gets
// sig during the jobs.
func chaosDocker(t *testing.T, d *privateDockerd, bin string, sig syscall.Signal, subnet, subnetPrefix string) {
	start := time.Now()
	dir := t.TempDir()
	suite := writeFile(t, dir, "fbh34b-docker.yaml", `name: fbh34b-docker
seed: 5
fabric: {spec: "leafspine:leaves=2,spines=1,hosts_per_leaf=1,gbps=0.05"}
`+labtest.SuiteBody("reps", "")+`jobs:
  - {name: large, workload: permutation, size: 64MiB}
kpis:
  - {metric: completed_fraction, scope: large, min: 1}
`)
	state, out := t.TempDir(), filepath.Join(dir, "out")
	env := append(d.env(), "FABRICBENCH_LAB_STATE="+state, "FABRICBENCH_LAB_MGMT_SUBNET="+subnet, "FABRICBENCH_LAB_PREFIX=fbh34b")
	cmd := exec.Command(bin, "run", suite, "--backend", "containerlab", "--out", out)
	cmd.Env = env
	lines, logText := startLogged(t, cmd)
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	lab := ""
	var pids []int // the lab's container processes, as its state records them
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
		// Whatever happened, nothing of the lab stays: the engine back,
		// lab gc, then the check.
		if !d.running() {
			d.start(t)
		}
		gc := exec.Command(bin, "lab", "gc", "--state-dir", state)
		gc.Env = env
		if o, err := gc.CombinedOutput(); err != nil {
			t.Errorf("cleanup: lab gc: %v\n%s", err, o)
		}
		if lab != "" {
			if left := clabLeft(t, d, lab, subnetPrefix, pids); len(left) > 0 {
				t.Errorf("lab %s left after the test: %s", lab, strings.Join(left, ", "))
			}
		}
	})
	seen := labName(regexp.MustCompile(`deploying lab (fbh34b[0-9a-f]{6}) `), &lab)
	waitFor := func(what string, dur time.Duration) {
		t.Helper()
		waitForLine(t, lines, logText, what, dur, seen)
	}
	waitFor("routing watch: ", 5*time.Minute) // the jobs started
	if st, err := labrt.LoadState(state, lab); err == nil {
		for _, n := range st.Nodes {
			if n.Init > 0 {
				pids = append(pids, n.Init)
			}
		}
	}
	if len(pids) != 5 {
		t.Errorf("lab %s's state records %d container processes, want 5", lab, len(pids))
	}
	time.Sleep(time.Second) // mid-job: the job takes about 11 s at line rate
	killed := time.Now()
	d.stop(t, sig)
	t.Logf("signal %d (%v) to the private dockerd %v after the jobs started; it exited %v later", int(sig), sig, time.Second, time.Since(killed).Round(time.Millisecond))
	select {
	case <-exited:
	case <-time.After(chaosDockerBound):
		t.Fatalf("the run did not end within %v of the signal to the engine:\n%s", chaosDockerBound, logText())
	}
	for range lines {
	}
	took := time.Since(killed)
	got := logText()
	code := cmd.ProcessState.ExitCode()
	t.Logf("exit %d %v after the signal to the engine:\n%s", code, took.Round(time.Millisecond), got)

	// What the user is told: an infrastructure error naming the engine,
	// what is left and the command that removes it.
	if code != exitInfra {
		t.Errorf("exit %d, want %d (an infrastructure error)", code, exitInfra)
	}
	// (The docker command's own words differ between its versions.)
	leftMsg := fmt.Sprintf("): lab %s is left as it was: 5 containers (clab-%s-host0, clab-%s-host1, clab-%s-leaf0, clab-%s-leaf1, clab-%s-spine0) and Docker network fb-%s; once Docker answers again, `fabricbench lab gc --state-dir %s` removes it (so does the next run or lab up)",
		lab, lab, lab, lab, lab, lab, lab, state)
	leftRE := regexp.MustCompile(`(?m)^destroy lab ` + lab + `: the Docker engine does not answer \(docker ps: [^\n]*` + regexp.QuoteMeta(d.sock) + `[^\n]*` + regexp.QuoteMeta(leftMsg) + `$`)
	if !strings.Contains(got, "fabricbench: run fbh34b-docker: ") || !leftRE.MatchString(got) {
		t.Errorf("the run's error does not say that the engine (at %s) is down, what is left and how to remove it; want a line ending in:\n%s", d.sock, leftMsg)
	}
	for _, sw := range []string{"leaf0", "leaf1", "spine0"} {
		if !regexp.MustCompile(`(?m)^(.*: )?` + sw + `: stop exporter \(pid \d+\): docker exec into clab-` + lab + `-` + sw + `: the Docker engine does not answer: `).MatchString(got) {
			t.Errorf("the run's error does not say that %s's exporter could not be stopped for the engine", sw)
		}
	}
	// What it had is kept and written; nothing is claimed that is not.
	line := resultsLineOf(got)
	if line != "results: "+filepath.Join(out, "report.html") {
		t.Errorf("results line %q", line)
	}
	res, err := results.Load(out)
	if err != nil {
		t.Fatalf("results.json: %v", err)
	}
	if len(res.Runs) != 1 {
		t.Fatalf("%d runs in results.json, want 1", len(res.Runs))
	}
	run := res.Runs[0]
	if run.Status != results.Error || run.ErrorKind != results.ErrorInfrastructure || !strings.Contains(run.Error, "the Docker engine does not answer") {
		t.Errorf("run %s (%s): %q; want an infrastructure error naming the Docker engine", run.Status, run.ErrorKind, run.Error)
	}
	for _, j := range run.Jobs {
		switch {
		case j.Flows != 2:
			t.Errorf("job %s: %d flows, want 2", j.Name, j.Flows)
		case sig == syscall.SIGKILL && j.Completed != j.Flows:
			// The data plane, the agents and their control API do not go
			// through the engine: the jobs complete.
			t.Errorf("job %s: %d of %d flows completed, want 2 of 2", j.Name, j.Completed, j.Flows)
		case sig == syscall.SIGTERM && j.Completed == j.Flows:
			t.Errorf("job %s: every flow completed although the engine stopped the hosts' containers", j.Name)
		}
	}
	if sig == syscall.SIGTERM && !regexp.MustCompile(`agent on host[01] died .* in progress lost: `).MatchString(run.Error) {
		// The stopped engine stopped the containers, the agents with them.
		t.Errorf("run error %q does not name the dead agent and the flows lost", run.Error)
	}
	if run.Telemetry.Samples == 0 {
		t.Errorf("no telemetry samples kept")
	}
	b, err := os.ReadFile(filepath.Join(out, run.Files["flows"]))
	if rows, cerr := csv.NewReader(strings.NewReader(string(b))).ReadAll(); err != nil || cerr != nil || len(rows) != 3 {
		t.Errorf("flows.csv: %v %v, %d rows; want a header and 2 flows", err, cerr, len(rows))
	}
	if _, err := telemetry.ReadStore(filepath.Join(out, run.Files["telemetry"])); err != nil {
		t.Errorf("the telemetry store: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "junit.xml")); err != nil || xml.Unmarshal(b, new(struct{})) != nil {
		t.Errorf("junit.xml: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "report.html")); err != nil || !strings.Contains(string(b), "</html>") {
		t.Errorf("report.html: %v (%d bytes)", err, len(b))
	}

	// What is left while the engine is down: the lab, untouched, and its
	// state.
	left := clabLeft(t, d, lab, subnetPrefix, pids)
	t.Logf("left while the engine is down: %s", strings.Join(left, ", "))
	if sig == syscall.SIGKILL && len(labtest.Alive(pids)) != len(pids) {
		t.Errorf("after the engine's crash, %d of the lab's %d container processes run; want all", len(labtest.Alive(pids)), len(pids))
	}
	if len(left) < 5 {
		t.Errorf("the lab left only %v; the engine's crash left nothing to reclaim, so this is no test of it", left)
	}
	gc := exec.Command(bin, "lab", "gc", "--state-dir", state)
	gc.Env = env
	gcOut, err := gc.CombinedOutput()
	t.Logf("lab gc with the engine down: %v\n%s", err, gcOut)
	if !strings.Contains(string(gcOut), "could not reclaim lab "+lab+" (containerlab runtime, deployed ") || !strings.Contains(string(gcOut), "the Docker engine does not answer") {
		t.Errorf("lab gc with the engine down does not say why it cannot reclaim lab %s", lab)
	}
	if c := gc.ProcessState.ExitCode(); c != exitInfra {
		t.Errorf("lab gc with the engine down: exit %d, want %d", c, exitInfra)
	}
	if _, err := os.Stat(filepath.Join(state, lab, "state.json")); err != nil {
		t.Errorf("the lab's state is gone while its containers are not: %v", err)
	}

	// The engine back on the same data root: lab gc reclaims the lab.
	d.start(t)
	if c, err := d.docker("ps", "-a", "--filter", "label=containerlab="+lab, "--format", "{{.Names}} {{.State}}"); err == nil {
		t.Logf("the lab's containers once the engine is back:\n%s", c)
	}
	gc = exec.Command(bin, "lab", "gc", "--state-dir", state)
	gc.Env = env
	gcOut, err = gc.CombinedOutput()
	t.Logf("lab gc with the engine back: %v\n%s", err, gcOut)
	want := regexp.MustCompile(fmt.Sprintf(`(?m)^reclaimed lab %s \(containerlab runtime, deployed [^)]*\) of pid %d \(fabricbench run [^\n]*\), which is gone: 5 containers, networks fb-%s, state `, lab, cmd.Process.Pid, lab))
	if err != nil || !want.Match(gcOut) {
		t.Errorf("lab gc with the engine back: %v; want %s", err, want)
	}
	if left := clabLeft(t, d, lab, subnetPrefix, pids); len(left) > 0 {
		t.Errorf("after lab gc: %s", strings.Join(left, ", "))
	}
	// No container's shim either: only the engine itself runs.
	for _, p := range d.processesOf() {
		if f := strings.Fields(p.Cmd); len(f) > 0 && filepath.Base(f[0]) != "dockerd" && filepath.Base(f[0]) != "containerd" {
			t.Errorf("after lab gc: process %s %s", p.PID, p.Cmd)
		}
	}
	if _, err := os.Stat(filepath.Join(state, lab)); !os.IsNotExist(err) {
		t.Errorf("the lab's state is still there: %v", err)
	}
	t.Logf("the case took %v", time.Since(start).Round(time.Millisecond))
}

// chaosDockerBound bounds the run after the engine's crash: the rest of
// the jobs (about 10 s), a teardown that fails at once, at most
// drainAfterFailedDown for the telemetry streams, the analysis and the
// reports, on a loaded 2-core runner. A hang fails the test.
const chaosDockerBound = 3 * time.Minute
