package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openconfig/gnmic/pkg/api"

	"github.com/fabricbench/fabricbench/harness/simbackend"
	"github.com/fabricbench/fabricbench/internal/gnmiconf"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
)

// liveCLI is a command run in-process in the background; its stderr is
// watched for the gNMI server's address.
type liveCLI struct {
	addr   chan string
	done   chan int
	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
}

var servingRe = regexp.MustCompile(`gNMI: serving \d+ targets .* on (\S+),`)

func startCLI(t *testing.T, ctx context.Context, args ...string) *liveCLI {
	t.Helper()
	lc := &liveCLI{addr: make(chan string, 8), done: make(chan int, 1)}
	pr, pw := io.Pipe()
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(&lockedBuf{mu: &lc.mu, b: &lc.stdout})
	root.SetErr(pw)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			lc.mu.Lock()
			lc.stderr.WriteString(line + "\n")
			lc.mu.Unlock()
			if m := servingRe.FindStringSubmatch(line); m != nil {
				lc.addr <- m[1]
			}
		}
	}()
	go func() {
		err := root.ExecuteContext(ctx)
		code := exitOK
		if err != nil {
			code = exitCode(err)
			lc.mu.Lock()
			lc.stderr.WriteString(err.Error() + "\n")
			lc.mu.Unlock()
		}
		pw.Close()
		lc.done <- code
	}()
	return lc
}

func (lc *liveCLI) output() string {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.stdout.String() + lc.stderr.String()
}

// waitAddr returns the address the command serves gNMI on.
func (lc *liveCLI) waitAddr(t *testing.T) string {
	t.Helper()
	select {
	case a := <-lc.addr:
		return a
	case code := <-lc.done:
		t.Fatalf("the command ended (exit %d) before serving gNMI:\n%s", code, lc.output())
	case <-time.After(60 * time.Second):
		t.Fatalf("no gNMI server within 60s:\n%s", lc.output())
	}
	return ""
}

func (lc *liveCLI) wait(t *testing.T) int {
	t.Helper()
	select {
	case code := <-lc.done:
		return code
	case <-time.After(5 * time.Minute):
		t.Fatalf("the command did not end within 5 minutes:\n%s", lc.output())
	}
	return 0
}

type lockedBuf struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func passwordFile(t *testing.T) (string, string) {
	t.Helper()
	const pw = "conformance-password"
	f := filepath.Join(t.TempDir(), "gnmi.password")
	if err := os.WriteFile(f, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f, pw
}

const serveTopo = "leafspine:leaves=2,spines=2,hosts_per_leaf=2,gbps=100"

// The gNMI conformance suite (gnmi_cli and the gnmic API) against the
// simulator's server, `fabricbench sim --serve-gnmi`, paced so that the
// simulation outlasts the suite (a simulated 5 us sample every 50 ms of
// wall time); the run is stopped (Ctrl-C, exit 130) after it.
func TestSimServeGNMIConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the conformance suite builds gnmi_cli and takes about a minute")
	}
	pwFile, pw := passwordFile(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lc := startCLI(t, ctx, "sim", "--topo", serveTopo, "--tm", "permutation:size=256MiB", "--quiet", "--end", "100ms",
		"--serve-gnmi", "127.0.0.1:0", "--gnmi-password-file", pwFile, "--gnmi-pace", "10000", "--gnmi-interval", "5us")
	addr := lc.waitAddr(t)
	f, err := inventory.Load(serveTopo)
	if err != nil {
		t.Fatal(err)
	}
	tg := gnmiconf.Target{Addr: addr, Username: "fabricbench", Password: pw}
	for _, d := range simbackend.NewPublisher(f).Devices() {
		tg.Devices = append(tg.Devices, gnmiconf.Device{Name: d.Name, Interfaces: d.Interfaces, Queues: d.Queues})
	}
	// leaf0 first: a switch (the suite checks its queue leaves) whose
	// first port, to host0, carries the permutation from the start.
	for i, d := range tg.Devices {
		if d.Name == "leaf0" {
			tg.Devices[0], tg.Devices[i] = tg.Devices[i], tg.Devices[0]
			if !d.Queues || d.Interfaces[0] != f.Ports[f.Nodes[nodeID(t, f, "leaf0")].Ports[0]].Name {
				t.Fatalf("leaf0: %+v", d)
			}
		}
	}
	gnmiconf.Run(t, tg)
	cancel()
	if code := lc.wait(t); code != exitInterrupted {
		t.Errorf("sim after Ctrl-C: exit %d, want %d\n%s", code, exitInterrupted, lc.output())
	}
}

// A gNMI client subscribed before the simulation starts (--gnmi-wait 1)
// sees it live: counters sampled every interval of simulated time, a
// link fault as oper-status DOWN then UP (ON_CHANGE), and the end of the
// stream when the simulation ends.
func TestSimServeGNMIUpdates(t *testing.T) {
	pwFile, pw := passwordFile(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, err := inventory.Load(serveTopo)
	if err != nil {
		t.Fatal(err)
	}
	// The fault's port: leaf0's port to spine0.
	var port string
	for _, p := range f.Nodes[nodeID(t, f, "leaf0")].Ports {
		if f.Nodes[f.Ports[f.Ports[p].Peer].Node].Name == "spine0" {
			port = f.Ports[p].Name
		}
	}
	lc := startCLI(t, ctx, "sim", "--topo", serveTopo, "--tm", "permutation:size=4MiB", "--quiet",
		"--fault", "down:leaf0-spine0@100us", "--fault", "up:leaf0-spine0@200us",
		"--serve-gnmi", "127.0.0.1:0", "--gnmi-password-file", pwFile, "--gnmi-pace", "asap", "--gnmi-interval", "10us", "--gnmi-wait", "1")
	addr := lc.waitAddr(t)

	g, err := api.NewTarget(api.Name("sim"), api.Address(addr), api.Username("fabricbench"), api.Password(pw), api.Insecure(true))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.CreateGNMIClient(ctx); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	req, err := api.NewSubscribeRequest(api.Target("leaf0"), api.SubscriptionListModeSTREAM(), api.EncodingPROTO(),
		api.Subscription(api.Path("/interfaces/interface/state/counters/out-octets"), api.SubscriptionModeSAMPLE()),
		api.Subscription(api.Path("/interfaces/interface[name="+port+"]/state/oper-status"), api.SubscriptionModeON_CHANGE()))
	if err != nil {
		t.Fatal(err)
	}
	rch, ech := g.SubscribeStreamChan(ctx, req, "live")
	var oper []string
	var times []int64
	samples, synced := 0, false
	last := map[string]uint64{}
	deadline := time.After(2 * time.Minute)
loop:
	for {
		select {
		case r := <-rch:
			if r.GetSyncResponse() {
				synced = true
				continue
			}
			n := r.GetUpdate()
			times = append(times, n.GetTimestamp())
			for _, u := range n.GetUpdate() {
				el := u.GetPath().GetElem()
				switch el[len(el)-1].GetName() {
				case "oper-status":
					oper = append(oper, u.GetVal().GetStringVal())
				case "out-octets":
					samples++
					key := el[1].GetKey()["name"]
					if v := u.GetVal().GetUintVal(); v < last[key] {
						t.Errorf("%s out-octets went back from %d to %d", key, last[key], v)
					} else {
						last[key] = v
					}
				}
			}
		case err := <-ech:
			if !errors.Is(err, io.EOF) {
				t.Fatalf("stream: %v", err)
			}
			break loop // the simulation ended: the server closed the stream
		case <-deadline:
			t.Fatalf("the stream did not end within 2 minutes\n%s", lc.output())
		}
	}
	if code := lc.wait(t); code != exitOK {
		t.Fatalf("sim: exit %d\n%s", code, lc.output())
	}
	if !synced {
		t.Error("no sync_response")
	}
	if want := []string{"UP", "DOWN", "UP"}; strings.Join(oper, ",") != strings.Join(want, ",") {
		t.Errorf("oper-status of leaf0:%s: %v, want %v (the fault at 100us, its end at 200us)", port, oper, want)
	}
	if samples < 10*len(last) || len(last) != len(f.Nodes[nodeID(t, f, "leaf0")].Ports) {
		t.Errorf("%d out-octets samples of %d ports, want every port every 10us", samples, len(last))
	}
	for i := 1; i < len(times); i++ {
		if times[i] < times[i-1] {
			t.Errorf("timestamps go back: %d after %d", times[i], times[i-1])
		}
	}
	var moved bool
	for _, v := range last {
		moved = moved || v > 0
	}
	if !moved {
		t.Errorf("no traffic seen on leaf0: %v", last)
	}
	t.Logf("%d notifications, %d out-octets samples, oper-status %v", len(times), samples, oper)
}

func nodeID(t *testing.T, f *inventory.Fabric, name string) int {
	t.Helper()
	n, ok := f.NodeByName(name)
	if !ok {
		t.Fatalf("no node %s", name)
	}
	return n
}

// run --serve-gnmi: an outside client subscribes to the running suite's
// simulator (paced to wall-clock time) and sees its counters; the run's
// own results are those of a run without it.
func TestRunServeGNMI(t *testing.T) {
	dir := t.TempDir()
	suite := filepath.Join(dir, "served.yaml")
	if err := os.WriteFile(suite, []byte(`name: served
fabric: {spec: "`+serveTopo+`"}
telemetry: {interval: 100us}
jobs:
  - {name: perm, workload: permutation, size: 64MiB}
kpis:
  - {metric: completed_fraction, scope: perm, min: 1}
  - {metric: telemetry_coverage, min: 1}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A free port: the run binds it when its point starts.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	pwFile, pw := passwordFile(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := filepath.Join(dir, "out")
	// 64 MiB at 100 Gb/s is about 5.4 ms of simulated time: paced 1000x,
	// about 5 seconds.
	lc := startCLI(t, ctx, "run", suite, "--out", out, "--quiet", "--serve-gnmi", addr, "--gnmi-password-file", pwFile, "--gnmi-pace", "1000")
	if got := lc.waitAddr(t); got != addr {
		t.Fatalf("serving on %s, want %s", got, addr)
	}
	g, err := api.NewTarget(api.Name("run"), api.Address(addr), api.Username("fabricbench"), api.Password(pw), api.Insecure(true))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.CreateGNMIClient(ctx); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	req, err := api.NewSubscribeRequest(api.Target(""), api.SubscriptionListModeSTREAM(), api.EncodingJSON_IETF(),
		api.Subscription(api.Path("/interfaces/interface/state/counters/in-octets"), api.SubscriptionModeTARGET_DEFINED()))
	if err != nil {
		t.Fatal(err)
	}
	rch, ech := g.SubscribeStreamChan(ctx, req, "outside")
	targets := map[string]int{}
	deadline := time.After(3 * time.Minute)
loop:
	for {
		select {
		case r := <-rch:
			if n := r.GetUpdate(); n != nil {
				targets[n.GetPrefix().GetTarget()] += len(n.GetUpdate())
			}
		case err := <-ech:
			if !errors.Is(err, io.EOF) {
				t.Fatalf("stream: %v\n%s", err, lc.output())
			}
			break loop
		case <-deadline:
			t.Fatalf("the stream did not end within 3 minutes\n%s", lc.output())
		}
	}
	if code := lc.wait(t); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, lc.output())
	}
	f, _ := inventory.Load(serveTopo)
	if len(targets) != len(f.Nodes) {
		t.Errorf("updates from %d targets (%v), want every node (%d)", len(targets), targets, len(f.Nodes))
	}
	for tgt, n := range targets {
		if n < 10 {
			t.Errorf("target %s: %d in-octets updates, want a sample every 100us of a run of about 5ms", tgt, n)
		}
	}
	res, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != results.Pass {
		t.Errorf("run status %s, want pass", res.Status)
	}
}

func TestServeGNMIBadInput(t *testing.T) {
	base := []string{"sim", "--topo", serveTopo, "--tm", "permutation:size=64KiB", "--quiet"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--gnmi-pace", "1000"}, "--gnmi-pace needs --serve-gnmi ADDR"},
		{[]string{"--serve-gnmi", "127.0.0.1:0", "--gnmi-pace", "slow"}, `--gnmi-pace "slow": want realtime, asap or a slow-down factor`},
		{[]string{"--serve-gnmi", "127.0.0.1:0", "--gnmi-pace", "-1"}, "--gnmi-pace"},
		{[]string{"--serve-gnmi", "127.0.0.1:0", "--gnmi-interval", "100ns"}, "--gnmi-interval"},
		{[]string{"--serve-gnmi", "127.0.0.1:0", "--gnmi-password-file", "/nonexistent/pw"}, "--gnmi-password-file"},
		{[]string{"--serve-gnmi", "127.0.0.1:0", "--shards", "2"}, "telemetry sampling"},
	} {
		code, stdout, stderr := runCLI(t, append(append([]string(nil), base...), c.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q\n%s", c.args, code, stderr, c.want, stdout)
		}
	}
	// Another backend cannot serve its telemetry itself.
	code, _, stderr := runCLI(t, "run", suites+"lab-smoke.yaml", "--backend", "netns", "--serve-gnmi", "127.0.0.1:0", "--out", t.TempDir())
	if code != exitBadInput || !strings.Contains(stderr, "--serve-gnmi: the netns backend does not serve its telemetry itself") {
		t.Errorf("run --backend netns --serve-gnmi: exit %d, %q", code, stderr)
	}
}
