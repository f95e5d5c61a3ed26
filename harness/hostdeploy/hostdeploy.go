// Package hostdeploy is what the backends that run real machines share
// (the netns backend's lab nodes, the hardware backend's inventory): the
// fabricbench binary installed over SSH/SFTP on every node, transport
// agents and kernel-counter exporters started there and stopped at the
// end (agent logs kept in the run's directory), the jobs run through the
// agents' control API with faults applied on time, and the unloaded RTT
// and completion time of a flow from the fabric's shortest paths.
//
// Host keys are always verified (known_hosts, through agents/deploy).
package hostdeploy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/fabricbench/fabricbench/agents/agent"
	"github.com/fabricbench/fabricbench/agents/control"
	"github.com/fabricbench/fabricbench/agents/deploy"
	"github.com/fabricbench/fabricbench/agents/fleet"
	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/telemetry"
	"github.com/fabricbench/fabricbench/units"
	"github.com/fabricbench/fabricbench/workloads"
)

// Node is a machine reached over SSH.
type Node struct {
	Name   string
	Config drivers.Config
}

// Deployment is the processes of one run on a set of nodes.
type Deployment struct {
	// Tag names the run's directory on every node (agents/deploy).
	Tag string
	// Dir is the run's results directory: agent logs are copied to
	// Dir/agents/NODE.log at Stop ("" keeps none).
	Dir  string
	Logf func(format string, args ...any)
	Bin  *deploy.Binary

	mu      sync.Mutex
	remotes map[string]*deploy.Host
	procs   []*deploy.Proc
}

func (d *Deployment) logf(format string, args ...any) {
	if d.Logf != nil {
		d.Logf(format, args...)
	}
}

// Connect opens an SSH session to every node not connected yet and
// installs the binary there (eight nodes at a time).
func (d *Deployment) Connect(ctx context.Context, nodes []Node) error {
	d.mu.Lock()
	if d.remotes == nil {
		d.remotes = map[string]*deploy.Host{}
	}
	var todo []Node
	for _, n := range nodes {
		if d.remotes[n.Name] == nil {
			todo = append(todo, n)
		}
	}
	d.mu.Unlock()
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, n := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r, err := deploy.Connect(ctx, n.Name, n.Config, d.Tag)
			if err == nil {
				_, err = r.Install(ctx, d.Bin)
				if err != nil {
					r.Close()
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			d.mu.Lock()
			d.remotes[n.Name] = r
			d.mu.Unlock()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Remote is the session to a connected node (nil if none).
func (d *Deployment) Remote(name string) *deploy.Host {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.remotes[name]
}

func (d *Deployment) addProc(p *deploy.Proc) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.procs = append(d.procs, p)
}

// Agent is one transport agent to start.
type Agent struct {
	Node    string         // the connected node it runs on
	Control string         // host:port of its control API
	Data    netip.AddrPort // its data-plane address (the NIC's) and first port
	RateBps int64          // its NIC's rate
	// Planes are the addresses of its further NIC ports, one per plane
	// after plane 0 (multi-plane fabrics); the same ports as Data's.
	Planes []netip.Addr
}

// AgentConfig is the configuration file of an agent.
func AgentConfig(a Agent, p transport.Params, entropyPorts int, runID uint32, tokenFile string) ([]byte, error) {
	cfg := agent.DefaultConfig()
	cfg.Name, cfg.Control, cfg.TokenFile = a.Node, a.Control, tokenFile
	cfg.Data, cfg.EntropyPorts, cfg.RateBps, cfg.Planes = a.Data, entropyPorts, a.RateBps, a.Planes
	cfg.Params, cfg.RunID = p, runID
	return agent.EncodeConfig(cfg)
}

// StartAgents starts the agents (in parallel) with a per-run token and
// waits until each answers on its control API.
func (d *Deployment) StartAgents(ctx context.Context, agents []Agent, p transport.Params, entropyPorts int, runID uint32, token string) ([]fleet.Host, error) {
	out := make([]fleet.Host, len(agents))
	err := Parallel(len(agents), func(i int) error {
		a := agents[i]
		r := d.Remote(a.Node)
		if r == nil {
			return fmt.Errorf("%s: not connected", a.Node)
		}
		tok, err := r.WriteSecret(ctx, "agent.token", []byte(token))
		if err != nil {
			return err
		}
		js, err := AgentConfig(a, p, entropyPorts, runID, tok)
		if err != nil {
			return err
		}
		conf, err := r.WriteSecret(ctx, "agent.json", js)
		if err != nil {
			return err
		}
		proc, err := r.Start(ctx, "agent", []string{"agent", "--config", conf})
		if err != nil {
			return err
		}
		d.addProc(proc)
		c := control.NewClient(a.Control, token)
		alive := func() (bool, string) {
			if r.Alive(ctx, proc) {
				return true, ""
			}
			return false, r.LogTail(ctx, proc, 10)
		}
		if err := WaitHealthy(ctx, c, alive); err != nil {
			return fmt.Errorf("agent on %s: %w", a.Node, err)
		}
		out[i] = fleet.Host{Name: a.Node, Agent: c}
		return nil
	})
	return out, err
}

// WaitHealthy waits up to 15 s for an agent's control API to answer;
// alive says whether its process still runs (and its log's end if not).
func WaitHealthy(ctx context.Context, c *control.Client, alive func() (bool, string)) error {
	deadline := time.Now().Add(15 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		hc, cancel := context.WithTimeout(ctx, time.Second)
		_, err = c.Health(hc)
		cancel()
		if err == nil {
			return nil
		}
		if control.IsUnauthorized(err) {
			return err
		}
		if ok, tail := alive(); !ok {
			return fmt.Errorf("exited at start: %s", tail)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	_, tail := alive()
	return fmt.Errorf("no answer on its control API within 15s (%v); log: %s", err, tail)
}

// Exporter is one kernel-counter exporter to start.
type Exporter struct {
	Node     string // the connected node it runs on
	Device   string // its gNMI target name
	Listen   string // host:port
	Interval time.Duration
	Queues   bool
	// Interfaces maps served port names to kernel devices, in order.
	Interfaces [][2]string
	// Speeds are the interfaces' line rates in bit/s, served as
	// port-speed (same order; missing or 0: unknown).
	Speeds   []int64
	Password string
	// TLSCert and TLSKey (PEM), when set, serve gNMI over TLS.
	TLSCert, TLSKey []byte
}

// StartExporter starts an exporter and waits until it listens.
func (d *Deployment) StartExporter(ctx context.Context, e Exporter) (telemetry.TargetSpec, error) {
	r := d.Remote(e.Node)
	if r == nil {
		return telemetry.TargetSpec{}, fmt.Errorf("%s: not connected", e.Node)
	}
	pw, err := r.WriteSecret(ctx, "gnmi.password", []byte(e.Password))
	if err != nil {
		return telemetry.TargetSpec{}, err
	}
	args := []string{"exporter", "--device", e.Device, "--listen", e.Listen, "--interval", e.Interval.String(),
		"--username", telemetry.DefaultUsername, "--password-file", pw}
	if len(e.TLSCert) > 0 {
		cf, err := r.WriteSecret(ctx, "gnmi.crt", e.TLSCert)
		if err != nil {
			return telemetry.TargetSpec{}, err
		}
		kf, err := r.WriteSecret(ctx, "gnmi.key", e.TLSKey)
		if err != nil {
			return telemetry.TargetSpec{}, err
		}
		args = append(args, "--tls-cert", cf, "--tls-key", kf)
	}
	if e.Queues {
		args = append(args, "--queues")
	}
	for i, m := range e.Interfaces {
		arg := m[0] + "=" + m[1]
		if i < len(e.Speeds) && e.Speeds[i] > 0 {
			arg += "@" + units.FormatTCRate(e.Speeds[i])
		}
		args = append(args, "--interface", arg)
	}
	proc, err := r.Start(ctx, "exporter", args)
	if err != nil {
		return telemetry.TargetSpec{}, err
	}
	d.addProc(proc)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", e.Listen)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) || !r.Alive(ctx, proc) {
			return telemetry.TargetSpec{}, fmt.Errorf("exporter on %s did not start: %v; log: %s", e.Node, err, r.LogTail(ctx, proc, 10))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return telemetry.TargetSpec{Name: e.Device, Address: e.Listen, Username: telemetry.DefaultUsername, Password: e.Password}, nil
}

// Stop stops every process (exporters end their streams, so collectors
// drain), keeps the agents' logs, removes the run's files from the nodes
// and closes the sessions.
func (d *Deployment) Stop(ctx context.Context) error {
	d.mu.Lock()
	procs := d.procs
	d.procs = nil
	remotes := d.remotes
	d.remotes = nil
	d.mu.Unlock()
	var errs []error
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, p := range procs {
		r := remotes[p.Host]
		if r == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p.Name == "agent" && d.Dir != "" {
				if out, err := r.Run(ctx, "cat "+p.Log); err == nil {
					dir := filepath.Join(d.Dir, "agents")
					if os.MkdirAll(dir, 0o755) == nil {
						_ = os.WriteFile(filepath.Join(dir, p.Host+".log"), []byte(out), 0o644)
					}
				}
			}
			if _, err := r.Stop(ctx, p, 3*time.Second); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, r := range remotes {
		if err := r.Cleanup(ctx); err != nil {
			d.logf("%s: removing the run's files: %v", r.Name, err)
		}
		r.Close()
	}
	return errors.Join(errs...)
}

// Ensure returns d, or when d is nil a new deployment of run runID: the
// binary env.AgentBinary ("" for this one), agent logs kept in env.Dir.
func Ensure(d *Deployment, env harness.Env, runID uint32, logf func(format string, args ...any)) (*Deployment, error) {
	if d != nil {
		return d, nil
	}
	bin, err := deploy.LocalBinary(env.AgentBinary)
	if err != nil {
		return nil, err
	}
	return &Deployment{Tag: "run-" + strconv.FormatUint(uint64(runID), 16), Dir: env.Dir, Logf: logf, Bin: bin}, nil
}

// NodeExporter is the exporter of fabric node id: it serves the node's
// ports under their fabric names, each read from the kernel device
// kernel(port, name), and its queues when it is a switch.
func NodeExporter(f *inventory.Fabric, id int, listen string, interval time.Duration, password string, kernel func(port int, name string) string) Exporter {
	n := &f.Nodes[id]
	e := Exporter{Node: n.Name, Device: n.Name, Listen: listen, Interval: interval, Queues: n.IsSwitch(), Password: password}
	for _, p := range n.Ports {
		name := f.Ports[p].Name
		e.Interfaces = append(e.Interfaces, [2]string{name, kernel(p, name)})
		e.Speeds = append(e.Speeds, f.Links[f.Ports[p].Link].RateBps)
	}
	return e
}

// StartExporters starts the exporters in parallel.
func (d *Deployment) StartExporters(ctx context.Context, es []Exporter) ([]telemetry.TargetSpec, error) {
	out := make([]telemetry.TargetSpec, len(es))
	err := Parallel(len(es), func(i int) error {
		var err error
		out[i], err = d.StartExporter(ctx, es[i])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("start exporters: %w", err)
	}
	return out, nil
}

// Parallel runs fn(0..n-1) at once and joins their errors.
func Parallel(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = fn(i) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Faults are the faults a backend's InjectFaults recorded, for RunJobs to
// apply on time.
type Faults []runspec.Fault

// Set checks that every fault names a link of f and records them.
func (fs *Faults) Set(f *inventory.Fabric, faults []runspec.Fault) error {
	for _, ft := range faults {
		if ft.Link < 0 || ft.Link >= len(f.Links) {
			return fmt.Errorf("fault %q: link %d out of range", ft.Description, ft.Link)
		}
	}
	*fs = faults
	return nil
}

// Jobs is how RunJobs runs a workload on the agents started one per
// fabric host.
type Jobs struct {
	Agents []fleet.Host // by host number
	// Fabric, Params and Costs give every flow its base RTT and ideal
	// completion time (Paths, computed when the jobs start).
	Fabric *inventory.Fabric
	Params transport.Params
	Costs  Costs
	// HostIP[h]:DataPort is the data-plane address of host h's agent.
	HostIP   []netip.Addr
	DataPort uint16
	// HostPlaneIP[h] are host h's addresses on planes 1, 2, ... (nil on a
	// single-plane fabric): a flow between two hosts that have them is
	// spread over every plane, unless it carries a mark (a pinned path
	// is plane 0's).
	HostPlaneIP [][]netip.Addr
	// Mark, when set, gives the flows from host src to host dst their
	// policy-routing mark (read when each flow starts).
	Mark func(src, dst int) uint32
	// Faults are applied on time by Apply (those at 0 before the first
	// packet).
	Faults Faults
	Apply  func(ctx context.Context, ft runspec.Fault) error
	Logf   func(format string, args ...any)
}

// RunJobs runs the workload on the agents and converts the outcome.
func RunJobs(ctx context.Context, j Jobs, w *runspec.Workload, progress func(harness.Progress)) (*harness.RunResult, error) {
	if len(j.Agents) == 0 {
		return nil, errors.New("agents not deployed")
	}
	for _, fl := range w.Matrix.Flows {
		if fl.Minimal {
			return nil, fmt.Errorf("flow %d is minimal-routed environment traffic (workloads.Flow.Minimal): the agents' fabric routes it by its own tables, so only the simulator can run it", fl.ID)
		}
	}
	var later []runspec.Fault
	for _, ft := range j.Faults {
		if ft.At <= 0 {
			if err := j.Apply(ctx, ft); err != nil {
				return nil, err
			}
		} else {
			later = append(later, ft)
		}
	}
	paths := NewPaths(j.Fabric, j.Params, j.Costs)
	flow := func(i int, fl workloads.Flow) control.Flow {
		cf := control.Flow{ID: uint32(i), Dst: netip.AddrPortFrom(j.HostIP[fl.Dst], j.DataPort).String(), Size: fl.Size,
			BaseRTTPs: paths.BaseRTT(fl.Src, fl.Dst), RateBps: HostRate(j.Fabric, fl.Src)}
		if j.Mark != nil {
			cf.Mark = j.Mark(fl.Src, fl.Dst)
		}
		if cf.Mark == 0 && fl.Src < len(j.HostPlaneIP) && fl.Dst < len(j.HostPlaneIP) &&
			len(j.HostPlaneIP[fl.Dst]) > 0 && len(j.HostPlaneIP[fl.Src]) == len(j.HostPlaneIP[fl.Dst]) {
			for _, a := range j.HostPlaneIP[fl.Dst] {
				cf.PlaneDsts = append(cf.PlaneDsts, a.String())
			}
		}
		return cf
	}
	opt := fleet.Options{Flow: flow, Logf: j.Logf}
	if progress != nil {
		t0 := time.Now()
		opt.Progress = func(done, total int) {
			progress(harness.Progress{Done: done, Flows: total, SimNow: time.Since(t0).Nanoseconds() * 1000})
		}
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var faultErr error
	var fmu sync.Mutex
	var timers []*time.Timer
	// Faults "at" a time and the flows' starts count from the same zero,
	// the run's epoch, which the telemetry and the controller's decisions
	// use too (a fault timed from an earlier clock reading fired early by
	// the time the run took to start, 7 ms on a loaded runner).
	start := time.Now()
	opt.Epoch = start
	for _, ft := range later {
		timers = append(timers, time.AfterFunc(time.Duration(ft.At/1000), func() {
			if err := j.Apply(context.WithoutCancel(fctx), ft); err != nil {
				fmu.Lock()
				faultErr = errors.Join(faultErr, err)
				fmu.Unlock()
			}
		}))
	}
	res, err := fleet.Run(fctx, j.Agents, w.Matrix, opt)
	for _, t := range timers {
		t.Stop()
	}
	if err != nil {
		return nil, err
	}
	out := &harness.RunResult{
		Flows: make([]harness.FlowOutcome, len(res.Flows)), End: res.End.Nanoseconds() * 1000,
		Wall: time.Since(start), EpochNs: res.Epoch.UnixNano(), Interrupted: res.Interrupted,
		Ideal: paths.IdealFCT, Failures: res.Failures, Extra: map[string]float64{},
	}
	for i, o := range res.Flows {
		fo := harness.FlowOutcome{ID: w.Matrix.Flows[i].ID, Start: -1, FCT: -1, Retx: o.Retx, Nacks: o.Nacks, Timeouts: o.Timeouts,
			Spurious: o.Spurious, Error: o.Error}
		if o.Start >= 0 {
			fo.Start = o.Start.Nanoseconds() * 1000
		}
		if o.FCT >= 0 {
			fo.FCT = o.FCT.Nanoseconds() * 1000
		}
		out.Flows[i] = fo
		out.Packets.Sent += o.Sent
		out.Packets.Retransmitted += o.Retx
		out.Packets.ECNMarked += o.ECNAcks
	}
	fmu.Lock()
	defer fmu.Unlock()
	if faultErr != nil {
		out.Failures = append(out.Failures, "fault injection: "+faultErr.Error())
	}
	return out, nil
}

// ControlAddr is host:port.
func ControlAddr(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

// Procs lists the running processes.
func (d *Deployment) Procs() []*deploy.Proc {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*deploy.Proc(nil), d.procs...)
}
