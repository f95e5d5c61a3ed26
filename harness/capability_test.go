package harness_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// declared is a backend that declares capabilities and counts Up calls;
// upErr fails Up like a lab that does not come up.
type declared struct {
	caps  harness.Capabilities
	ups   *atomic.Int32
	upErr error
}

func (b *declared) Name() string                                          { return "declared" }
func (b *declared) Capabilities() harness.Capabilities                    { return b.caps }
func (b *declared) Configure(context.Context, runspec.Features) error     { return nil }
func (b *declared) DeployAgents(context.Context, runspec.Transport) error { return nil }
func (b *declared) InjectFaults(context.Context, []runspec.Fault) error   { return nil }
func (b *declared) Down(context.Context) error                            { return nil }
func (b *declared) Up(context.Context, *inventory.Fabric) error {
	b.ups.Add(1)
	return b.upErr
}
func (b *declared) TelemetryTargets(context.Context, time.Duration) ([]telemetry.TargetSpec, error) {
	return nil, errors.New("no telemetry")
}
func (b *declared) RunJobs(_ context.Context, w *runspec.Workload, _ func(harness.Progress)) (*harness.RunResult, error) {
	rr := &harness.RunResult{Flows: make([]harness.FlowOutcome, len(w.Matrix.Flows)), End: 1e6}
	for i := range rr.Flows {
		rr.Flows[i] = harness.FlowOutcome{ID: i, FCT: 1e6}
	}
	return rr, nil
}

var declaredN atomic.Int32

func registerDeclared(caps harness.Capabilities, upErr error) (string, *atomic.Int32) {
	name := fmt.Sprintf("declared%d", declaredN.Add(1))
	ups := new(atomic.Int32)
	harness.Register(name, func() harness.Backend { return &declared{caps: caps, ups: ups, upErr: upErr} })
	return name, ups
}

var labLike = harness.Capabilities{
	Unsupported: map[harness.Feature]string{
		harness.FeatECN:      "no WRED",
		harness.FeatTrimming: "Linux drops",
		harness.FeatQueue:    "tbf queues",
		harness.FeatPacing:   "agents pace at the NIC rate",
	},
	MinInterval: time.Millisecond, MinIntervalReason: "the exporter samples every 1 ms at the fastest",
	MaxMTU: 8000, MaxMTUReason: "the link MTU",
	FaultKinds: []string{"down", "up", "degrade"},
	Workloads:  []string{"permutation", "incast"},
}

// Every field that asks for what the backend declares it cannot do is an
// error at that field (for a default, ECN here, at the nearest section the
// file sets; for a matrix value, at the value), and nothing is brought up.
func TestCapabilitiesCheckedAtPlan(t *testing.T) {
	name, ups := registerDeclared(labLike, nil)
	file := writeSuite(t, `fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2"}
features:
  trimming: {enabled: true}
  queue: 512KiB
transport: {mtu: 9000}
telemetry: {interval: 100us}
jobs:
  - {name: p, workload: permutation, size: 64KiB, rate: 50%}
  - {name: a, workload: all-to-all, size: 64KiB}
faults:
  - {kind: flap, link: leaf0-spine0, at: 10us, period: 10us, count: 2}
`)
	res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: t.TempDir(), Backend: name})
	var ie *harness.InputError
	if !errors.As(err, &ie) || res != nil {
		t.Fatalf("err %v, results %v; want an input error and no results", err, res)
	}
	for _, want := range []string{
		"suite.yaml:3:23: features.trimming.enabled: the " + name + " backend cannot do packet trimming: Linux drops; set features.trimming: {enabled: false}, or leave it out (off by default on this backend)",
		"suite.yaml:4:10: features.queue: the " + name + " backend cannot do per-run queue sizes: tbf queues",
		"suite.yaml:5:18: transport.mtu: the " + name + " backend cannot do an mtu of 9000: the link MTU; at most 8000",
		"suite.yaml:6:23: telemetry.interval: the " + name + " backend cannot do telemetry every 100us",
		"suite.yaml:9:25: jobs[1].workload: the " + name + " backend cannot do the all-to-all workload: it runs permutation, incast",
		"suite.yaml:11:12: faults[0].kind: the " + name + " backend cannot do flap faults",
		"suite.yaml:8:57: jobs[0].rate: the " + name + " backend cannot do paced senders (jobs[].rate): agents pace at the NIC rate; leave it out",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if n := ups.Load(); n != 0 {
		t.Errorf("Up called %d times; the suite must be refused before anything is brought up", n)
	}
	// ECN, left at its default, follows the backend (off here): no error.
	if strings.Contains(err.Error(), "features.ecn") {
		t.Errorf("ECN left at its default is refused:\n%v", err)
	}

	// A matrix value is reported at the value, naming the first point.
	file = writeSuite(t, `fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2"}
features: {ecn: {enabled: false}, trimming: {enabled: false}}
jobs:
  - {name: p, workload: permutation, size: 64KiB}
telemetry: {interval: 1ms}
matrix:
  features.ecn.enabled: [false, true]
`)
	_, err = harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: t.TempDir(), Backend: name})
	want := `suite.yaml:7:33: matrix["features.ecn.enabled"][1]: the ` + name + ` backend cannot do ECN marking (RED/WRED): no WRED`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("matrix: %v, want %q", err, want)
	}
	if n := ups.Load(); n != 0 {
		t.Errorf("Up called %d times", n)
	}
}

// A backend that fails to come up is an infrastructure error: the run is
// in error with error_kind infrastructure and the exit status is 3.
func TestBackendUpFailureIsInfrastructure(t *testing.T) {
	name, _ := registerDeclared(harness.Capabilities{}, errors.New("deploy lab fbn1: ssh leaf0: connection refused"))
	file := writeSuite(t, `fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=2"}
telemetry: {enabled: false}
jobs:
  - {name: p, workload: permutation, size: 64KiB}
`)
	res, err := harness.Run(context.Background(), harness.Options{SuiteFile: file, Out: t.TempDir(), Backend: name})
	var fe *harness.InfraError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "up: deploy lab fbn1") {
		t.Fatalf("err %v (%T), want an InfraError", err, err)
	}
	if res == nil || res.Status != results.Error || res.Runs[0].ErrorKind != results.ErrorInfrastructure {
		t.Fatalf("results %+v", res)
	}
	if res.Summary.RunsErrored != 1 {
		t.Errorf("summary %+v, want 1 errored run", res.Summary)
	}
	if code := results.ExitCode(res); code != results.ExitInfrastructure {
		t.Errorf("exit code %d, want 3", code)
	}
}

// TestCapabilitiesRefuse: Configure's check names the first listed
// feature the backend cannot do, in the order ECN, trimming, PFC, VRFs,
// queue size, and passes what the backend does not list.
func TestCapabilitiesRefuse(t *testing.T) {
	c := harness.Capabilities{Unsupported: map[harness.Feature]string{
		harness.FeatTrimming: "no trimming here", harness.FeatQueue: "fixed queues"}}
	for _, tc := range []struct {
		feat runspec.Features
		want string
	}{
		{runspec.Features{}, ""},
		{runspec.Features{ECN: true, PFC: true, VRFs: []runspec.VRF{{Name: "a"}}}, ""},
		{runspec.Features{ECN: true, Trimming: true, QueueBytes: 1}, "the lab backend cannot do features.trimming: no trimming here"},
		{runspec.Features{QueueBytes: 1}, "the lab backend cannot do features.queue: fixed queues"},
	} {
		err := c.Refuse("lab", tc.feat)
		if (err == nil) != (tc.want == "") || (err != nil && err.Error() != tc.want) {
			t.Errorf("Refuse(%+v) = %v, want %q", tc.feat, err, tc.want)
		}
	}
}

// Why pause trees are not analysed: a backend without PFC, or one with
// PFC only on some devices (Capabilities.ByDevice) whose telemetry has no
// pause counters; nothing for one with PFC.
func TestNoPFCReason(t *testing.T) {
	none, _ := registerDeclared(harness.Capabilities{Unsupported: map[harness.Feature]string{harness.FeatPFC: "veth"}}, nil)
	some, _ := registerDeclared(harness.Capabilities{ByDevice: map[harness.Feature]string{harness.FeatPFC: "no pause counters"}}, nil)
	all, _ := registerDeclared(harness.Capabilities{}, nil)
	for name, want := range map[string]string{none: "veth", some: "no pause counters", all: ""} {
		if got := harness.NoPFC(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}
