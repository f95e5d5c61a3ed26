// Package hwbackend runs suites on real hardware described by an
// inventory file (docs/inventory.md): `fabricbench run SUITE --inventory
// FILE` or a suite's fabric.inventory.
//
//   - The fabric is the inventory's; the hosts of the jobs are its hosts,
//     each agent bound to the host's first NIC with an address.
//   - Before the first point the bring-up checks of `lab validate
//     INVENTORY` run (ValidateFabric); a failed check stops the suite.
//     Nothing is created or destroyed on the devices. The MTUs they read
//     then bound transport.mtu (LiveCheck, mtu.go): packets larger than
//     the smallest MTU of the agents' NICs and the links' ports are
//     refused (exit 2) before anything changes.
//   - Configure maps the suite's features onto every switch
//     (DeviceFeatures: ECMP hash, WRED/ECN, trimming, VRFs), refuses what
//     a switch's platform cannot do naming device, platform and feature,
//     and asks every switch's driver for the Diff, which it logs and
//     writes to config-diff.txt. Without --apply a needed change is an
//     input error naming the device and the setting, before anything is
//     changed; with --apply the changes are applied, read back (Verify,
//     config-verify.txt) and, at Down, reverted to the values read before
//     (also after a failure or Ctrl-C). A device that could not be
//     restored fails Down loudly, naming it (NOT RESTORED).
//   - Agents are deployed over SSH with the inventory's credentials and
//     known_hosts (harness/hostdeploy, as the netns backend does), or
//     started with srun inside a Slurm allocation (agents: {launcher:
//     srun}); they are removed at Down.
//   - Telemetry comes from each switch's own gNMI server where the
//     inventory lists one (TLS with a CA, skip_verify or explicit plain
//     text; the openconfig or sonic path profile), and from the kernel
//     exporter, deployed for the run, on the other devices. An unreachable
//     gNMI server is named in the run and its ports have no samples
//     (telemetry coverage below 1); it never hangs the run.
//   - Faults act through the devices' shells: ip link down/up, and a
//     degrade is a tbf shaper added for the run (under the link's own tbf
//     where it has one), all undone at Down.
package hwbackend

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fabricbench/fabricbench/agents/dataplane"
	"github.com/fabricbench/fabricbench/agents/fleet"
	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/drivers"
	_ "github.com/fabricbench/fabricbench/drivers/frr"   // FRR routers
	_ "github.com/fabricbench/fabricbench/drivers/linux" // Linux hosts and routers
	_ "github.com/fabricbench/fabricbench/drivers/sonic" // SONiC switches
	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/bringup"
	"github.com/fabricbench/fabricbench/harness/hostdeploy"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// Name is the backend's registry name.
const Name = "hardware"

func init() { harness.Register(Name, func() harness.Backend { return New() }) }

// Ports the deployed processes use on the devices' management addresses.
const (
	ControlPort  = 7400 // agent control API
	DataPort     = 7500 // agent data plane (entropy ports follow it)
	GNMIPort     = 9339 // kernel exporter
	EntropyPorts = 256
	// LinkMTU is the IP MTU the fabric's links are assumed to carry.
	LinkMTU = 9000
)

// MaxMTU is the largest transport.mtu.
const MaxMTU = LinkMTU - dataplane.IPv4HeaderLen - dataplane.UDPHeaderLen - dataplane.DataHeaderLen

var capabilities = harness.Capabilities{
	Unsupported: map[harness.Feature]string{
		harness.FeatLowDiameter: "Dragonfly minimal, Valiant, UGAL, source-guided and port-msb routing are simulator only",
		harness.FeatSRv6Control: "the hardware backend pins host pairs (both directions, by firewall mark) with loose paths, as the netns lab; placement at job start (features.srv6.placement), per-job and strict paths are simulator only",
		harness.FeatPacing:      "the transport agents pace a host at its NIC rate and let the congestion control set each flow's; a per-job offered load is simulator only",
		harness.FeatOneWayDelay: "each transport agent timestamps packets on its own clock, and hosts' clocks are not known to be synchronised (PTP): one-way delay is not measured",
	},
	ByDevice: map[harness.Feature]string{
		harness.FeatPFC:      "PFC is configured on the switches whose driver can (SONiC), but their pause counters are not in the hardware telemetry",
		harness.FeatECN:      "WRED/ECN is configured on the switches whose driver can (SONiC; not FRR or Linux on a kernel without the red qdisc): off unless the suite enables it, and a switch that cannot is refused naming it before anything changes",
		harness.FeatTrimming: "packet trimming is configured on the switches whose ASIC can (SONiC with SWITCH_TRIMMING_CAPABLE): off unless the suite enables it, and a switch that cannot is refused naming it before anything changes",
	},
	MaxMTU:            MaxMTU,
	MaxMTUReason:      fmt.Sprintf("the payload plus headers must fit the %d-byte IP MTU of the fabric's links", LinkMTU),
	MinInterval:       time.Millisecond,
	MinIntervalReason: "the kernel-counter exporter samples every 1 ms at the fastest (SONiC's gNMI server every 1 s: its targets are subscribed at 1 s, with a note)",
	NeedsInventory:    true,
	Launchers:         []string{runspec.LauncherSSH, runspec.LauncherSrun},
}

// Backend is the hardware backend.
type Backend struct {
	env    harness.Env
	hw     *inventory.Hardware
	f      *inventory.Fabric
	target *bringup.Target
	devs   map[string]*device
	hostIP []netip.Addr // host number -> data address
	hostNI []string     // host number -> the NIC (interface) the agent binds
	tp     transport.Params
	runID  uint32
	token  string
	gnmiPW string
	faults hostdeploy.Faults
	hd     *hostdeploy.Deployment
	agents []fleet.Host
	srun   *srunLauncher
	// applied are the configuration changes made per device, to revert.
	applied map[string]drivers.Diff
	// marks are the firewall marks of the pinned SRv6 paths' flows, by
	// (source, destination) host.
	marks map[[2]int]uint32
	// sr and steer are the run's SRv6 plan and the features applied on
	// each steering host, which Steer (the path controller) moves.
	feat  runspec.Features
	sr    *srv6Plan
	steer map[string]*drivers.DeviceFeatures
	appM  sync.Mutex // applied, while Steer may add to it
	// undo are the fault changes' inverses, run at Down (last first).
	undo  []undoStep
	saves []saved
	undoM sync.Mutex
	// ifMTU are the interfaces' MTUs ValidateFabric read, by device and
	// interface (mtu.go).
	ifMTU map[string]map[string]int
	mtuM  sync.Mutex
}

type device struct {
	inv  *inventory.Device
	id   int // fabric node
	cfg  drivers.Config
	drv  drivers.Driver
	open sync.Mutex
}

// undoStep puts back what a fault changed: cmd, then read must give
// before again.
type undoStep struct {
	dev, what, cmd string
	read, before   string
	q              *qdisc
}

// New returns an idle backend.
func New() *Backend { return &Backend{} }

// Name implements harness.Backend.
func (b *Backend) Name() string { return Name }

// Prepare implements harness.Preparer.
func (b *Backend) Prepare(env harness.Env) { b.env = env }

// StreamsOutliveDown implements harness.StreamsOutlive: the switches'
// own gNMI servers stream on after the run.
func (b *Backend) StreamsOutliveDown() bool { return true }

// Capabilities implements harness.Capable.
func (b *Backend) Capabilities() harness.Capabilities { return capabilities }

func (b *Backend) logf(format string, args ...any) {
	if b.env.Logf != nil {
		b.env.Logf(format, args...)
	}
}

// load reads the inventory and builds the bring-up target.
func (b *Backend) load(env harness.Env) error {
	if env.Inventory == "" {
		return &harness.InputError{Err: errors.New("the hardware backend needs an inventory (--inventory FILE or fabric.inventory)")}
	}
	hw, err := inventory.LoadHardware(env.Inventory, drivers.Platforms()...)
	if err != nil {
		return &harness.InputError{Err: err}
	}
	t, err := bringup.FromHardware(hw)
	if err != nil {
		return &harness.InputError{Err: err}
	}
	b.hw, b.target = hw, t
	return nil
}

// ValidateFabric implements harness.Validator: the bring-up checks of
// `lab validate INVENTORY` (links, BGP sessions, ECMP width, host
// reachability), reading only.
func (b *Backend) ValidateFabric(ctx context.Context, env harness.Env) (*results.Bringup, error) {
	if err := b.load(env); err != nil {
		return nil, err
	}
	if env.Logf != nil {
		env.Logf("validating %d devices of %s", len(b.target.Devices), env.Inventory)
	}
	return bringup.Validate(ctx, b.target, bringup.Options{OnState: b.recordState})
}

// Up loads the inventory and maps the fabric's nodes to its devices.
// Nothing is created on the devices.
func (b *Backend) Up(ctx context.Context, f *inventory.Fabric) error {
	if err := b.load(b.env); err != nil {
		return err
	}
	b.f = f
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%s/%d/%d", b.hw.Name, b.env.RunID, os.Getpid(), time.Now().UnixNano())
	b.runID = h.Sum32()
	b.devs = map[string]*device{}
	for i := range b.target.Devices {
		d := &b.target.Devices[i]
		id, ok := f.NodeByName(d.Name)
		if !ok {
			return fmt.Errorf("the fabric has no node %s of inventory %s", d.Name, b.hw.File)
		}
		b.devs[d.Name] = &device{inv: b.hw.Device(d.Name), id: id, cfg: d.Config}
	}
	b.hostIP = make([]netip.Addr, f.NumHosts())
	b.hostNI = make([]string, f.NumHosts())
	for h := range b.hostIP {
		d := b.hw.Device(f.Host(h).Name)
		nic, ok := firstAddressedNIC(d)
		if !ok {
			return &harness.InputError{Err: fmt.Errorf("%s: host %s lists no NIC with an address for its agent to bind (devices[].nics[].address)", b.hw.File, d.Name)}
		}
		b.hostIP[h], b.hostNI[h] = nic.Address.Addr(), nic.Name
	}
	return nil
}

// driver opens (once) a device's driver.
func (b *Backend) driver(name string) (drivers.Driver, error) {
	d := b.devs[name]
	if d == nil {
		return nil, fmt.Errorf("no device %s", name)
	}
	d.open.Lock()
	defer d.open.Unlock()
	if d.drv == nil {
		drv, err := drivers.Open(d.inv.Platform, d.cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		d.drv = drv
	}
	return d.drv, nil
}

// switches lists the switch devices in inventory order.
func (b *Backend) switches() []string {
	var out []string
	for _, d := range b.target.Devices {
		if !d.IsHost() {
			out = append(out, d.Name)
		}
	}
	return out
}

// Configure maps the suite's features onto every switch (DeviceFeatures),
// refuses what a switch's platform cannot do (naming device, platform and
// feature) and asks each driver for the Diff, which is logged and written
// to config-diff.txt. Without --apply a needed change is an input error
// naming device and setting; with it every change is applied, read back
// (Verify) and remembered, and reverted at Down. A change the driver
// could not revert is refused before anything is applied.
func (b *Backend) Configure(ctx context.Context, feat runspec.Features) error {
	if err := capabilities.Refuse(Name, feat); err != nil {
		return err
	}
	// The switches, and the hosts that steer SRv6 paths.
	var sw []string
	var wants []*drivers.DeviceFeatures
	qref := QueueRefBytes(b.f, b.costs())
	for _, d := range b.target.Devices {
		name := d.Name
		w, err := DeviceFeatures(b.f, b.hw, b.devs[name].inv, feat, qref)
		if err != nil {
			var ce *drivers.CapabilityError
			if errors.As(err, &ce) {
				return refusal(err)
			}
			return &harness.InputError{Err: fmt.Errorf("%s: %w", name, err)}
		}
		if d.IsHost() && len(w.Requested()) == 0 {
			continue
		}
		sw = append(sw, name)
		wants = append(wants, w)
	}
	b.feat, b.marks, b.sr, b.steer = feat, nil, nil, map[string]*drivers.DeviceFeatures{}
	for i, name := range sw {
		if b.devs[name].inv.Role == inventory.DeviceHost {
			b.steer[name] = wants[i]
		}
	}
	if sr, _ := planSRv6(b.f, b.hw, feat); sr != nil {
		b.marks, b.sr = sr.marks, sr
		b.logf("features.srv6: uN SIDs from the switches' srv6_locator; %d pinned host-pair paths (uDX SIDs on the leaves, seg6 routes in tables %d+ and firewall-mark rules on the hosts)",
			len(feat.SRv6Paths), srTableBase)
	}
	if feat.ECN {
		b.logf("features.ecn: WRED/ECN marking from %d to %d bytes on queues 3-4 (kmin %g, kmax %g of a %d-byte reference queue, one BDP)",
			int64(feat.KMin*float64(qref)), int64(feat.KMax*float64(qref)), feat.KMin, feat.KMax, qref)
	}
	diffs := make([]drivers.Diff, len(sw))
	err := hostdeploy.Parallel(len(sw), func(i int) error {
		drv, err := b.driver(sw[i])
		if err != nil {
			return err
		}
		if len(wants[i].Requested()) == 0 {
			return nil
		}
		// What the platform cannot do is refused before any diff.
		caps, err := drv.Capabilities(ctx)
		if err != nil {
			return fmt.Errorf("%s: capabilities: %w", sw[i], err)
		}
		if err := drivers.CheckCapabilities(drv.Platform(), sw[i], caps, wants[i]); err != nil {
			return refusal(err)
		}
		d, err := drv.Diff(ctx, wants[i])
		if err != nil {
			var ce *drivers.CapabilityError
			if errors.As(err, &ce) {
				if ce.Device == "" {
					ce.Device = sw[i]
				}
				return refusal(ce)
			}
			return fmt.Errorf("%s: diff: %w", sw[i], err)
		}
		diffs[i] = d
		return nil
	})
	if err != nil {
		return joinKeepInput(err)
	}
	var needed []string
	var text strings.Builder
	for i, name := range sw {
		fmt.Fprintf(&text, "%s:\n", name)
		for _, c := range diffs[i] {
			fmt.Fprintf(&text, "  %s\n", c)
			needed = append(needed, fmt.Sprintf("%s: %s", name, c))
		}
		if len(diffs[i]) == 0 {
			text.WriteString("  no changes\n")
		}
		b.logf("configure %s: %s", name, strings.ReplaceAll(diffs[i].String(), "\n", "; "))
	}
	b.writeFile("config-diff.txt", text.String())
	if len(needed) == 0 {
		return nil
	}
	if !b.env.Apply {
		return &harness.InputError{Err: fmt.Errorf("the suite's features need %s on the inventory's devices, and nothing was changed (run with --apply to change them for the run; they are restored at its end):\n  %s",
			runspec.Plural(len(needed), "configuration change", "configuration changes"), strings.Join(needed, "\n  "))}
	}
	// Every change must be revertible before any is made.
	for i, name := range sw {
		drv, _ := b.driver(name)
		rv, ok := drv.(drivers.Reverter)
		for _, c := range diffs[i] {
			if !ok {
				return &harness.InputError{Err: fmt.Errorf("%s: %s: the %s driver cannot revert changes, so the hardware backend does not make them", name, c, drv.Platform())}
			}
			if err := rv.CanRevert(c); err != nil {
				return &harness.InputError{Err: fmt.Errorf("%s: %w; the hardware backend only makes changes it can revert", name, err)}
			}
		}
	}
	b.applied = map[string]drivers.Diff{}
	var mu sync.Mutex
	var verified strings.Builder
	err = hostdeploy.Parallel(len(sw), func(i int) error {
		if len(diffs[i]) == 0 {
			return nil
		}
		drv, _ := b.driver(sw[i])
		done, err := drv.Apply(ctx, wants[i])
		b.appM.Lock()
		if len(done) > 0 {
			b.applied[sw[i]] = done
		}
		b.appM.Unlock()
		if err != nil {
			return fmt.Errorf("%s: apply: %w", sw[i], err)
		}
		b.logf("applied on %s: %s", sw[i], strings.ReplaceAll(done.String(), "\n", "; "))
		// Read back: what was applied must be on the device.
		checks, err := drv.Verify(ctx, wants[i])
		if err != nil {
			return fmt.Errorf("%s: verify after apply: %w", sw[i], err)
		}
		var bad []string
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(&verified, "%s:\n", sw[i])
		for _, c := range checks {
			v := "ok  "
			if !c.OK {
				v = "FAIL"
				bad = append(bad, fmt.Sprintf("%s: %s", c.Name, c.Evidence))
			}
			fmt.Fprintf(&verified, "  %s %s: %s\n", v, c.Name, c.Evidence)
		}
		if len(bad) > 0 {
			return fmt.Errorf("%s: the applied configuration does not read back: %s", sw[i], strings.Join(bad, "; "))
		}
		return nil
	})
	b.writeFile("config-verify.txt", verified.String())
	return err
}

// joinKeepInput returns err, an *InputError when any joined error is one.
func joinKeepInput(err error) error {
	var ie *harness.InputError
	if errors.As(err, &ie) {
		return &harness.InputError{Err: err}
	}
	return err
}

func (b *Backend) writeFile(name, text string) {
	if b.env.Dir == "" {
		return
	}
	_ = os.MkdirAll(b.env.Dir, 0o755)
	_ = os.WriteFile(filepath.Join(b.env.Dir, name), []byte(text), 0o644)
}

// params are the transport parameters of the agents.
func (b *Backend) params(t runspec.Transport) (transport.Params, error) {
	p, err := t.Params()
	if err != nil {
		return p, err
	}
	p.Trimming = false
	v6 := len(b.hostIP) > 0 && b.hostIP[0].Is6()
	p.HeaderBytes, p.AckBytes = dataplane.WireHeaderBytes(v6)
	if p.MTU > MaxMTU {
		return p, fmt.Errorf("the %s backend cannot do transport.mtu %d (at most %d): %s", Name, p.MTU, MaxMTU, capabilities.MaxMTUReason)
	}
	p.Entropies = EntropyPorts
	return p, nil
}

// agentSpecs are the agents of the run, by host number.
func (b *Backend) agentSpecs() []hostdeploy.Agent {
	specs := make([]hostdeploy.Agent, b.f.NumHosts())
	for h := range specs {
		d := b.devs[b.f.Host(h).Name]
		specs[h] = hostdeploy.Agent{Node: d.inv.Name, Control: hostdeploy.ControlAddr(d.inv.MgmtHost, ControlPort),
			Data: netip.AddrPortFrom(b.hostIP[h], DataPort), RateBps: hostdeploy.HostRate(b.f, h)}
	}
	return specs
}

// DeployAgents starts one agent per host: over SSH (the default) or with
// srun inside a Slurm allocation.
func (b *Backend) DeployAgents(ctx context.Context, t runspec.Transport) error {
	p, err := b.params(t)
	if err != nil {
		return err
	}
	b.tp = p
	b.token = rand.Text()
	b.gnmiPW = rand.Text()
	specs := b.agentSpecs()
	if t.Launcher == runspec.LauncherSrun {
		b.srun = &srunLauncher{logf: b.logf, dir: b.env.Dir, bin: b.env.AgentBinary}
		nodes := make([]string, len(specs))
		for i, s := range specs {
			nodes[i] = s.Node
			if sn := b.devs[s.Node].inv.SlurmNode; sn != "" {
				nodes[i] = sn
			}
		}
		b.agents, err = b.srun.start(ctx, specs, nodes, p, EntropyPorts, b.runID, b.token)
		if err != nil {
			return fmt.Errorf("start agents with srun: %w", err)
		}
		b.logf("agents started with srun on %d hosts (%s, %s)", len(specs), p.CC, p.LB)
		return nil
	}
	var hosts []string
	for _, s := range specs {
		hosts = append(hosts, s.Node)
	}
	if err := b.connect(ctx, hosts); err != nil {
		return err
	}
	b.agents, err = b.hd.StartAgents(ctx, specs, p, EntropyPorts, b.runID, b.token)
	if err != nil {
		return fmt.Errorf("deploy agents: %w", err)
	}
	b.logf("agents running on %d hosts (%s, %s, entropy ports %d-%d)", len(specs), p.CC, p.LB, DataPort+1, DataPort+EntropyPorts)
	return nil
}

// connect opens SSH sessions to the named devices and installs the
// binary there.
func (b *Backend) connect(ctx context.Context, names []string) error {
	var err error
	if b.hd, err = hostdeploy.Ensure(b.hd, b.env, b.runID, b.logf); err != nil {
		return err
	}
	nodes := make([]hostdeploy.Node, len(names))
	for i, n := range names {
		nodes[i] = hostdeploy.Node{Name: n, Config: b.devs[n].cfg}
	}
	return b.hd.Connect(ctx, nodes)
}

// TelemetryTargets subscribes to the switches' own gNMI servers and
// deploys the kernel exporter to the other devices.
func (b *Backend) TelemetryTargets(ctx context.Context, interval time.Duration) ([]telemetry.TargetSpec, error) {
	if interval < capabilities.MinInterval {
		return nil, fmt.Errorf("the %s backend cannot do telemetry.interval %v: %s", Name, interval, capabilities.MinIntervalReason)
	}
	var specs []telemetry.TargetSpec
	var exporters []string
	for _, d := range b.target.Devices {
		dev := b.devs[d.Name]
		g := dev.inv.GNMI
		if g == nil {
			exporters = append(exporters, d.Name)
			continue
		}
		spec, err := b.gnmiTarget(dev)
		if err != nil {
			return nil, err
		}
		if mi := telemetry.MinInterval(spec.Profile); interval < mi {
			b.logf("telemetry: %s (%s profile): the server samples every %v at the fastest, not %v; subscribing at %v", d.Name, spec.Profile, mi, interval, mi)
		}
		specs = append(specs, spec)
	}
	if len(exporters) > 0 {
		if b.gnmiPW == "" {
			b.gnmiPW = rand.Text()
		}
		if err := b.connect(ctx, exporters); err != nil {
			return nil, err
		}
		es := make([]hostdeploy.Exporter, len(exporters))
		for i, name := range exporters {
			dev := b.devs[name]
			es[i] = hostdeploy.NodeExporter(b.f, dev.id, net.JoinHostPort(dev.inv.MgmtHost, strconv.Itoa(GNMIPort)), interval, b.gnmiPW,
				func(_ int, port string) string { return dev.inv.Interface(port) })
		}
		out, err := b.hd.StartExporters(ctx, es)
		if err != nil {
			return nil, err
		}
		specs = append(specs, out...)
	}
	return specs, nil
}

// gnmiTarget is the collector's target for a device's own gNMI server.
func (b *Backend) gnmiTarget(dev *device) (telemetry.TargetSpec, error) {
	g := dev.inv.GNMI
	user, pw, err := drivers.GNMICredentials(b.hw, dev.inv.Name)
	if err != nil {
		return telemetry.TargetSpec{}, &harness.InputError{Err: err}
	}
	spec := telemetry.TargetSpec{Name: dev.inv.Name, Address: g.Address, Username: user, Password: pw, Optional: true,
		Profile: g.Profile}
	if pw == "" {
		spec.Username = ""
	}
	switch {
	case g.Insecure:
	case g.SkipVerify:
		spec.TLS = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // the inventory says so explicitly
	default:
		pem, err := os.ReadFile(g.CA)
		if err != nil {
			return telemetry.TargetSpec{}, &harness.InputError{Err: fmt.Errorf("%s: device %s: gnmi.tls.ca: %w", b.hw.File, dev.inv.Name, err)}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return telemetry.TargetSpec{}, &harness.InputError{Err: fmt.Errorf("%s: device %s: gnmi.tls.ca: %s holds no PEM certificate", b.hw.File, dev.inv.Name, g.CA)}
		}
		name := g.ServerName
		if name == "" {
			name, _, _ = net.SplitHostPort(g.Address)
		}
		spec.TLS = &tls.Config{RootCAs: pool, ServerName: name, MinVersion: tls.VersionTLS12}
	}
	// The server names interfaces as the device does.
	for _, p := range dev.inv.Ports {
		if p.Interface != "" {
			if spec.Interfaces == nil {
				spec.Interfaces = map[string]string{}
			}
			spec.Interfaces[p.Interface] = p.Name
		}
	}
	return spec, nil
}

// InjectFaults records the faults; RunJobs applies them on time.
func (b *Backend) InjectFaults(_ context.Context, faults []runspec.Fault) error {
	return b.faults.Set(b.f, faults)
}

// RunJobs runs the workload on the agents.
func (b *Backend) RunJobs(ctx context.Context, w *runspec.Workload, progress func(harness.Progress)) (*harness.RunResult, error) {
	return hostdeploy.RunJobs(ctx, hostdeploy.Jobs{Agents: b.agents, Fabric: b.f, Params: b.tp, Costs: b.costs(), HostIP: b.hostIP,
		DataPort: DataPort, Mark: func(src, dst int) uint32 { return b.marks[[2]int{src, dst}] },
		Faults: b.faults, Apply: b.applyFault, Logf: b.logf}, w, progress)
}

// costs are the per-hop costs: software forwarding when a switch is an
// FRR or Linux router, an ASIC's otherwise; the agents' socket path.
func (b *Backend) costs() hostdeploy.Costs {
	c := hostdeploy.Costs{HopPs: 1_000_000, EndpointPs: 150_000_000}
	for _, name := range b.switches() {
		if p := b.devs[name].inv.Platform; p == "frr" || p == "linux" {
			c.HopPs = 15_000_000
		}
	}
	return c
}

// Down stops and removes the agents and exporters, undoes the faults and
// reverts every configuration change. What could not be restored is in
// the error, naming the device and the setting.
func (b *Backend) Down(ctx context.Context) error {
	var errs []error
	if b.srun != nil {
		if err := b.srun.stop(ctx); err != nil {
			errs = append(errs, err)
		}
		b.srun = nil
	}
	if b.hd != nil {
		if err := b.hd.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
		b.hd = nil
	}
	b.undoM.Lock()
	undo := b.undo
	b.undo, b.saves = nil, nil
	b.undoM.Unlock()
	for i := len(undo) - 1; i >= 0; i-- {
		u := undo[i]
		drv, err := b.driver(u.dev)
		if err == nil {
			var out string
			out, err = drv.Exec(ctx, u.cmd)
			if err != nil {
				err = fmt.Errorf("%v: %s", err, strings.TrimSpace(out))
			} else {
				err = u.check(ctx, b)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("NOT RESTORED: %s: %s: %w", u.dev, u.what, err))
		}
	}
	b.appM.Lock()
	defer b.appM.Unlock()
	names := make([]string, 0, len(b.applied))
	for n := range b.applied {
		names = append(names, n)
	}
	sort.Strings(names)
	var report strings.Builder
	for _, n := range names {
		applied := b.applied[n]
		drv, err := b.driver(n)
		var done drivers.Diff
		if err == nil {
			done, err = drv.(drivers.Reverter).Revert(ctx, applied)
		}
		fmt.Fprintf(&report, "%s:\n", n)
		for _, c := range done {
			fmt.Fprintf(&report, "  restored %s\n", c)
		}
		if err != nil {
			for _, c := range applied[len(done):] {
				fmt.Fprintf(&report, "  NOT RESTORED %s\n", c)
			}
			errs = append(errs, fmt.Errorf("NOT RESTORED: %s still has %d of the run's changes (%s): %w", n, len(applied)-len(done), applied[len(done):], err))
		} else {
			b.logf("restored %s: %s", n, strings.ReplaceAll(done.String(), "\n", "; "))
		}
	}
	if len(names) > 0 {
		b.writeFile("config-restore.txt", report.String())
	}
	b.applied = nil
	for _, d := range b.devs {
		if d.drv != nil {
			d.drv.Close()
			d.drv = nil
		}
	}
	return errors.Join(errs...)
}

// Describe implements harness.Describer: what a run of p does to the
// inventory's devices (describing it connects to nothing).
func (b *Backend) Describe(p *runspec.RunSpec) []string {
	sw, hosts, _ := harness.FabricCounts(p.Fabric)
	launcher := p.Transport.Launcher
	if launcher == "" {
		launcher = runspec.LauncherSSH
	}
	out := []string{
		fmt.Sprintf("devices    the inventory's %d switches and %d hosts (%s); nothing is created or destroyed on them", sw, hosts, p.Suite.Fabric.Inventory),
		"bring-up   the checks of `lab validate INVENTORY` first (links, BGP, ECMP width, reachability); a failed check stops the suite",
		"configure  the features become each switch's settings (ECMP hash, WRED/ECN, trimming, VRFs on the leaves: SONiC VRFs, isolation rules on FRR/Linux; SRv6 uN and uDX SIDs) and the steering hosts' (seg6 routes and firewall-mark rules of the pinned SRv6 paths); a switch whose platform cannot do one is refused naming it; each driver computes the Diff: without --apply a needed change is refused (exit 2) before anything changes; with --apply it is applied, read back and restored at the end",
		fmt.Sprintf("agents     the transport agent on %d hosts, started by %s (control :%d, data :%d and %d entropy ports), removed at the end", hosts, launcher, ControlPort, DataPort, EntropyPorts),
	}
	if !p.NoTelemetry {
		out = append(out, fmt.Sprintf("telemetry  each switch's own gNMI server where the inventory lists one, else the kernel exporter deployed for the run (gNMI :%d), every %v", GNMIPort, p.Interval))
	}
	if len(p.Faults) > 0 {
		out = append(out, "faults     through the devices' shells (ip link down/up, a tbf shaper for a degrade), undone at the end")
	}
	return out
}
