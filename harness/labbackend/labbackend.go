// Package netnsbackend runs suites on a real FRR fabric on this host: the
// suite's fabric becomes a containerlab topology (containerlab.Generate),
// deployed natively in network namespaces (containerlab/native) with FRR
// switches, tbf-shaped veth links and sshd on every node. The transport
// agent and the telemetry exporter (both `fabricbench` itself) are copied
// to the nodes over SSH/SFTP and started there; jobs run as UDP flows
// between the agents, telemetry comes from the kernel's counters through
// gNMI, and faults change the kernel's links and shapers.
//
// Every node's processes, namespaces and veths are removed by Down, also
// after a failure.
package labbackend

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/fabricbench/fabricbench/agents/dataplane"
	"github.com/fabricbench/fabricbench/agents/fleet"
	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/containerlab"
	_ "github.com/fabricbench/fabricbench/containerlab/clabrt" // the containerlab runtime
	"github.com/fabricbench/fabricbench/containerlab/labrt"
	_ "github.com/fabricbench/fabricbench/containerlab/native" // the native runtime
	"github.com/fabricbench/fabricbench/drivers"
	_ "github.com/fabricbench/fabricbench/drivers/frr"   // lab switches
	_ "github.com/fabricbench/fabricbench/drivers/linux" // lab hosts
	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/bringup"
	"github.com/fabricbench/fabricbench/harness/hostdeploy"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/telemetry"
)

// The backends' registry names: the lab on the native runtime, and on the
// containerlab runtime.
const (
	Name             = "netns"
	NameContainerlab = "containerlab"
)

func init() {
	harness.Register(Name, func() harness.Backend { return New(containerlab.RuntimeNative) })
	harness.Register(NameContainerlab, func() harness.Backend { return New(containerlab.RuntimeContainerlab) })
	harness.RegisterReclaimer("labs", reclaimLabs)
}

// reclaimLabs removes the labs (of either runtime) under the state root
// whose owner process is gone: those of runs that were killed before
// their teardown (labrt.Reclaim). Every run does this first.
func reclaimLabs(ctx context.Context, stateRoot string) []string {
	got, err := labrt.Reclaim(ctx, labrt.Options{StateRoot: stateRoot}, false)
	var out []string
	if err != nil {
		out = append(out, fmt.Sprintf("could not look for leftover labs under %s: %v", stateRoot, err))
	}
	for _, r := range got {
		out = append(out, r.String())
	}
	return out
}

// Ports the deployed processes use on each node.
const (
	ControlPort = 7400 // agent control API, on the management address
	DataPort    = 7500 // agent data plane (entropy ports follow it)
	GNMIPort    = 9339 // exporter
	// EntropyPorts is the number of UDP source ports (entropies) an agent
	// sprays over.
	EntropyPorts = 256
	// LinkMTU is the MTU of every lab link.
	LinkMTU = 9000
)

// Backend is the lab backend on one runtime.
type Backend struct {
	runtime string
	env     harness.Env
	f       *inventory.Fabric
	lab     *containerlab.Lab
	rt      labrt.Runtime
	st      *labrt.State
	target  *bringup.Target
	nodes   map[string]*nodeInfo
	hostIP  []netip.Addr // host number -> data address
	// hostPlaneIP[h] are host h's data addresses on planes 1, 2, ... of
	// a multi-plane fabric (its NICs eth2, eth3, ...); nil otherwise.
	hostPlaneIP [][]netip.Addr
	feat        runspec.Features
	tp          transport.Params
	token       string
	gnmiPW      string
	runID       uint32
	faults      hostdeploy.Faults
	marks       map[[2]int]uint32 // (src, dst) host -> SRv6 path mark
	hd          *hostdeploy.Deployment
	agents      []fleet.Host
	srFeats     map[string]*drivers.DeviceFeatures // the SRv6 features applied per node (Steer updates them)
	steerMu     sync.Mutex                         // serialises Steer
	drvMu       sync.Mutex
	steerDrv    map[string]drivers.Driver // host -> driver kept open for Steer
}

type nodeInfo struct {
	name   string
	id     int // fabric node
	mgmt   string
	isHost bool
	ifaces map[int]string // fabric port -> kernel interface
}

// New returns an idle backend on a runtime (containerlab.RuntimeNative or
// containerlab.RuntimeContainerlab).
func New(runtime string) *Backend { return &Backend{runtime: runtime} }

// Name implements harness.Backend.
func (b *Backend) Name() string {
	if b.runtime == containerlab.RuntimeContainerlab {
		return NameContainerlab
	}
	return Name
}

// Images are the images of the lab's switches and hosts on the
// containerlab runtime: $FABRICBENCH_FRR_IMAGE and $FABRICBENCH_HOST_IMAGE,
// else the generator's defaults (the public FRR and netshoot images).
func Images() (frr, host string) {
	return os.Getenv("FABRICBENCH_FRR_IMAGE"), os.Getenv("FABRICBENCH_HOST_IMAGE")
}

// Prepare implements harness.Preparer.
func (b *Backend) Prepare(env harness.Env) { b.env = env }

func (b *Backend) logf(format string, args ...any) {
	if b.env.Logf != nil {
		b.env.Logf(format, args...)
	}
}

// Up generates the lab from the fabric, deploys it and installs the uN
// SIDs of every switch.
func (b *Backend) Up(ctx context.Context, f *inventory.Fabric) error {
	b.f = f
	rt, err := labrt.Open(b.runtime, labrt.Options{StateRoot: b.env.LabStateRoot, ReadyTimeout: 3 * time.Minute, Logf: b.logf})
	if err != nil {
		return err
	}
	b.rt = rt
	dir := b.env.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "fabricbench-lab-")
		if err != nil {
			return err
		}
		dir = d
	}
	dir = filepath.Join(dir, "lab")
	frrImage, hostImage := Images()
	pick, err := subnetPicker()
	if err != nil {
		return err
	}
	prefix, err := labPrefix()
	if err != nil {
		return err
	}
	var lastErr error
	for attempt := 0; attempt < 6; attempt++ {
		name := labName(prefix, b.env.RunID, attempt)
		g, err := containerlab.Generate(f, containerlab.GenOptions{Name: name, MgmtSubnet: pick(name),
			LinkRates: true, MTU: LinkMTU, SRv6: true, FRRImage: frrImage, HostImage: hostImage})
		if err != nil {
			return fmt.Errorf("generate lab: %w", err)
		}
		// The files are written for users to inspect (and for the nodes'
		// configuration); the lab is resolved from the generated topology.
		if err := g.Write(dir); err != nil {
			return fmt.Errorf("write lab: %w", err)
		}
		topo := filepath.Join(dir, g.TopologyFile)
		lab, err := g.Resolve(dir, b.runtime)
		if err != nil {
			return err
		}
		if err := rt.Preflight(lab); err != nil {
			return fmt.Errorf("this host cannot run %s labs: %w", b.runtime, err)
		}
		if err := labrt.MgmtFree(lab.Mgmt); err != nil {
			lastErr = err
			continue // the management subnet is taken: next name
		}
		b.lab = lab
		b.logf("deploying lab %s (%d nodes, %d links, %s runtime) from %s", lab.Name, len(lab.Nodes), len(lab.Links), b.runtime, topo)
		st, err := rt.Deploy(ctx, lab)
		if err != nil {
			return fmt.Errorf("deploy lab %s: %w", lab.Name, err)
		}
		b.st = st
		break
	}
	if b.st == nil {
		return fmt.Errorf("no free lab name or management subnet: %w", lastErr)
	}
	h := fnv.New32a()
	h.Write([]byte(b.lab.Name + b.env.RunID))
	b.runID = h.Sum32()
	if err := b.index(); err != nil {
		return err
	}
	t, err := bringup.FromLab(b.lab, b.st, "")
	if err != nil {
		return err
	}
	b.target = t
	if feats := bringup.LabFeatures(b.lab); len(feats) > 0 {
		if _, err := bringup.Apply(ctx, t, feats, nil, false); err != nil {
			return fmt.Errorf("install SRv6 uN SIDs: %w", err)
		}
	}
	return nil
}

// labName is a short lab name for a run, prefix and six hex digits;
// attempt varies it.
func labName(prefix, run string, attempt int) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%d/%d/%d", run, os.Getpid(), time.Now().UnixNano(), attempt)
	return fmt.Sprintf("%s%06x", prefix, h.Sum32()&0xffffff)
}

// LabPrefixEnv names the environment variable that, when set, replaces
// the "fbn" that starts the name of every lab the backend generates (and
// so of its containers, namespaces and Docker network): for telling apart
// the labs of several users or CI jobs on one host. A lowercase letter,
// then up to 7 lowercase letters and digits.
const LabPrefixEnv = "FABRICBENCH_LAB_PREFIX"

var labPrefixRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,7}$`)

// labPrefix is $FABRICBENCH_LAB_PREFIX, else "fbn".
func labPrefix() (string, error) {
	s, ok := os.LookupEnv(LabPrefixEnv)
	if !ok || s == "" {
		return "fbn", nil
	}
	if !labPrefixRE.MatchString(s) {
		return "", &harness.InputError{Err: fmt.Errorf("%s=%q: want a lowercase letter, then at most 7 lowercase letters and digits (e.g. ci42)", LabPrefixEnv, s)}
	}
	return s, nil
}

// labMgmtSubnet is the management subnet of a lab: mgmtSubnet, or a test's
// fixed one.
var labMgmtSubnet = mgmtSubnet

// MgmtSubnetEnv names the environment variable that, when set, is the
// management /24 of every lab the backend generates (e.g.
// 198.19.150.0/24), instead of one hashed into 198.19.100.0-198.19.199.0:
// for a host where that range is in use. A lab whose subnet is taken is
// not deployed ("no free lab name or management subnet").
const MgmtSubnetEnv = "FABRICBENCH_LAB_MGMT_SUBNET"

// subnetPicker is labMgmtSubnet, or the /24 of $FABRICBENCH_LAB_MGMT_SUBNET.
func subnetPicker() (func(string) netip.Prefix, error) {
	s := os.Getenv(MgmtSubnetEnv)
	if s == "" {
		return labMgmtSubnet, nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4() || p.Bits() != 24 || p.Masked() != p {
		return nil, &harness.InputError{Err: fmt.Errorf("%s=%q: want an IPv4 /24 such as 198.19.150.0/24", MgmtSubnetEnv, s)}
	}
	return func(string) netip.Prefix { return p }, nil
}

// mgmtSubnet picks the lab's management /24 from 198.19.100.0 to
// 198.19.199.0 (a hash of its name), away from the fixed subnets of
// hand-written labs and tests (198.19.240.0 and up).
func mgmtSubnet(name string) netip.Prefix {
	h := fnv.New32a()
	h.Write([]byte(name))
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 19, byte(100 + h.Sum32()%100), 0}), 24)
}

// index maps fabric nodes and ports to lab nodes and kernel interfaces.
// containerlab.Generate names a node's port i eth<i+1>.
func (b *Backend) index() error {
	b.nodes = map[string]*nodeInfo{}
	for id, n := range b.f.Nodes {
		ns, ok := b.st.Node(n.Name)
		if !ok {
			return fmt.Errorf("lab %s has no node %s", b.lab.Name, n.Name)
		}
		ni := &nodeInfo{name: n.Name, id: id, mgmt: ns.Mgmt, isHost: !n.IsSwitch(), ifaces: map[int]string{}}
		for i, p := range n.Ports {
			ni.ifaces[p] = "eth" + strconv.Itoa(i+1)
		}
		b.nodes[n.Name] = ni
	}
	b.hostIP = make([]netip.Addr, b.f.NumHosts())
	for h := range b.hostIP {
		name := b.f.Host(h).Name
		for _, l := range b.lab.Links {
			for _, ep := range []containerlab.Endpoint{l.A, l.B} {
				if ep.Node == name && ep.Interface == "eth1" && ep.IPv4.IsValid() {
					b.hostIP[h] = ep.IPv4.Addr()
				}
			}
		}
		if !b.hostIP[h].IsValid() {
			return fmt.Errorf("lab %s: host %s has no IPv4 address on eth1", b.lab.Name, name)
		}
	}
	// A multi-plane fabric: host port i (eth<i+1>) is on plane i.
	b.hostPlaneIP = nil
	if n := b.f.NumPlanes(); n > 1 {
		b.hostPlaneIP = make([][]netip.Addr, b.f.NumHosts())
		for h := range b.hostPlaneIP {
			node := b.f.Host(h)
			addrs := make([]netip.Addr, n-1)
			for i, p := range node.Ports {
				pl := b.f.Ports[p].Plane
				if pl < 1 || pl >= n {
					continue
				}
				ifname := "eth" + strconv.Itoa(i+1)
				for _, l := range b.lab.Links {
					for _, ep := range []containerlab.Endpoint{l.A, l.B} {
						if ep.Node == node.Name && ep.Interface == ifname && ep.IPv4.IsValid() {
							addrs[pl-1] = ep.IPv4.Addr()
						}
					}
				}
			}
			for pl, a := range addrs {
				if !a.IsValid() {
					return fmt.Errorf("lab %s: host %s has no IPv4 address on plane %d", b.lab.Name, node.Name, pl+1)
				}
			}
			b.hostPlaneIP[h] = addrs
		}
	}
	return nil
}

// MaxMTU is the largest transport.mtu: the payload of a datagram that
// fits the lab's link MTU with the IPv4, UDP and agent headers.
const MaxMTU = LinkMTU - dataplane.IPv4HeaderLen - dataplane.UDPHeaderLen - dataplane.DataHeaderLen

// MinInterval is the shortest telemetry interval of the kernel-counter
// exporter.
const MinInterval = time.Millisecond

// capabilities is what the backend can do on any host: ECMP hashing and
// SRv6 path placement through the FRR and Linux drivers, VRF isolation
// (policy rules on the leaves, vrf.go), every fault kind
// and workload. What the host's kernel lacks (the drivers probe it) is
// found at Up or Configure and is an infrastructure error naming it.
var capabilities = harness.Capabilities{
	Unsupported: map[harness.Feature]string{
		harness.FeatECN:         "the lab's FRR and Linux switch drivers do not configure WRED/ECN (lab links are tbf-shaped; a red qdisc would replace the shaper)",
		harness.FeatTrimming:    "Linux forwarding does not trim packets (FRR and the kernel drop)",
		harness.FeatPFC:         "veth links have no pause frames",
		harness.FeatQueue:       "lab links are tbf-shaped with a 5 ms queue",
		harness.FeatAdaptive:    "the lab's Linux and FRR switches forward by ECMP hashing; the kernel has no per-packet adaptive routing",
		harness.FeatLowDiameter: "the lab's switches route by BGP shortest paths and ECMP hashing, without Dragonfly minimal, Valiant, UGAL or source-guided modes",
		harness.FeatSRv6Control: "the lab pins host pairs (both directions, by firewall mark) with loose paths; placement at job start (features.srv6.placement), per-job and strict paths are simulator only",
		harness.FeatFlowlet:     "the lab's Linux and FRR switches forward by ECMP hashing; the kernel has no flowlet load balancing",
		harness.FeatPacing:      "the transport agents pace a host at its NIC rate and let the congestion control set each flow's; a per-job offered load is simulator only",
		harness.FeatPFCWatchdog: "veth links have no pause frames (no PFC)",
		harness.FeatOneWayDelay: "each transport agent timestamps packets on its own clock (time since its start), so a receiver cannot tell a packet's one-way delay; the lab measures flow completion times",
	},
	MaxMTU:            MaxMTU,
	MaxMTUReason:      fmt.Sprintf("the payload plus headers must fit the lab's %d-byte link MTU", LinkMTU),
	MinInterval:       MinInterval,
	MinIntervalReason: "the kernel-counter exporter samples every 1 ms at the fastest",
	Launchers:         []string{runspec.LauncherSSH},
}

// Capabilities implements harness.Capable.
func (b *Backend) Capabilities() harness.Capabilities { return capabilities }

// Configure applies the switch features through the drivers. The planner
// has refused what the backend cannot do (Capabilities); Configure refuses
// it too, for callers that did not plan. A feature the drivers find this
// host's kernel lacks is an error naming it.
func (b *Backend) Configure(ctx context.Context, feat runspec.Features) error {
	b.feat = feat
	if err := capabilities.Refuse(b.Name(), feat); err != nil {
		return err
	}
	feats := map[string]*drivers.DeviceFeatures{}
	for _, d := range b.target.Devices {
		if d.IsHost() {
			continue
		}
		feats[d.Name] = &drivers.DeviceFeatures{ECMPHash: slices.Clone(feat.ECMPHash)}
	}
	if _, err := bringup.Apply(ctx, b.target, feats, nil, false); err != nil {
		var ce *drivers.CapabilityError
		if errors.As(err, &ce) {
			return fmt.Errorf("configure switches: this host cannot do %s, which the suite needs: %w", ce.Feature, err)
		}
		return fmt.Errorf("configure switches: %w", err)
	}
	if len(feat.SRv6Paths) > 0 {
		if err := b.configureSRv6(ctx, feat.SRv6Paths); err != nil {
			return err
		}
	}
	if len(feat.VRFs) > 0 {
		if err := b.configureVRFs(ctx, feat.VRFs); err != nil {
			return err
		}
	}
	return nil
}

// DeployAgents copies fabricbench to every host over SFTP, starts the
// agent there with a per-run token and waits until each answers.
func (b *Backend) DeployAgents(ctx context.Context, t runspec.Transport) error {
	p, err := t.Params()
	if err != nil {
		return err
	}
	p.Trimming = false
	p.HeaderBytes, p.AckBytes = dataplane.WireHeaderBytes(false) // the lab's data addresses are IPv4
	if p.MTU > MaxMTU {
		return fmt.Errorf("the %s backend cannot do transport.mtu %d: payload plus headers exceed the lab's %d-byte link MTU (at most %d)", b.Name(), p.MTU, LinkMTU, MaxMTU)
	}
	p.Entropies = EntropyPorts
	b.tp = p
	b.token = rand.Text()
	b.gnmiPW = rand.Text()
	if err := b.connectAll(ctx); err != nil {
		return err
	}
	specs := make([]hostdeploy.Agent, b.f.NumHosts())
	for h := range specs {
		n := b.nodes[b.f.Host(h).Name]
		specs[h] = hostdeploy.Agent{Node: n.name, Control: hostdeploy.ControlAddr(n.mgmt, ControlPort),
			Data: netip.AddrPortFrom(b.hostIP[h], DataPort), RateBps: hostdeploy.HostRate(b.f, h)}
		if b.hostPlaneIP != nil {
			specs[h].Planes = b.hostPlaneIP[h]
		}
	}
	b.agents, err = b.hd.StartAgents(ctx, specs, p, EntropyPorts, b.runID, b.token)
	if err != nil {
		return fmt.Errorf("deploy agents: %w", err)
	}
	b.logf("agents running on %d hosts (%s, %s, entropy ports %d-%d)", b.f.NumHosts(), p.CC, p.LB, DataPort+1, DataPort+EntropyPorts)
	return nil
}

// connectAll opens an SSH session to every node and installs the binary.
func (b *Backend) connectAll(ctx context.Context) error {
	var err error
	if b.hd, err = hostdeploy.Ensure(b.hd, b.env, b.runID, b.logf); err != nil {
		return err
	}
	nodes := make([]hostdeploy.Node, len(b.target.Devices))
	for i, d := range b.target.Devices {
		nodes[i] = hostdeploy.Node{Name: d.Name, Config: d.Config}
	}
	return b.hd.Connect(ctx, nodes)
}

// TelemetryTargets starts an exporter on every node: switches serve their
// ports and queues, hosts their NIC, all under the fabric's port names.
func (b *Backend) TelemetryTargets(ctx context.Context, interval time.Duration) ([]telemetry.TargetSpec, error) {
	if interval < MinInterval {
		return nil, fmt.Errorf("the %s backend cannot do telemetry.interval %v: %s", b.Name(), interval, capabilities.MinIntervalReason)
	}
	if err := b.connectAll(ctx); err != nil {
		return nil, err
	}
	es := make([]hostdeploy.Exporter, len(b.f.Nodes))
	for id := range es {
		ni := b.nodes[b.f.Nodes[id].Name]
		es[id] = hostdeploy.NodeExporter(b.f, id, net.JoinHostPort(ni.mgmt, strconv.Itoa(GNMIPort)), interval, b.gnmiPW,
			func(p int, _ string) string { return ni.ifaces[p] })
	}
	return b.hd.StartExporters(ctx, es)
}

// InjectFaults records the faults; RunJobs applies them on time.
func (b *Backend) InjectFaults(_ context.Context, faults []runspec.Fault) error {
	return b.faults.Set(b.f, faults)
}

// RunJobs runs the workload on the agents; flows of a pinned host pair
// carry its mark.
func (b *Backend) RunJobs(ctx context.Context, w *runspec.Workload, progress func(harness.Progress)) (*harness.RunResult, error) {
	before := b.readDaemons(ctx) // the routing watch (routing.go)
	watched := time.Now()
	b.logf("routing watch: %s", before)
	start := watched
	out, err := hostdeploy.RunJobs(ctx, hostdeploy.Jobs{Agents: b.agents, Fabric: b.f, Params: b.tp,
		Costs: hostdeploy.Costs{HopPs: hopForwardPs, EndpointPs: endpointPs}, HostIP: b.hostIP, HostPlaneIP: b.hostPlaneIP, DataPort: DataPort,
		Mark:   func(src, dst int) uint32 { return b.marks[[2]int{src, dst}] },
		Faults: b.faults, Apply: b.applyFault, Logf: b.logf}, w, progress)
	if err != nil {
		return nil, err
	}
	wctx := context.WithoutCancel(ctx)
	after := b.readDaemons(wctx)
	if lost := lostDaemons(before, after); len(lost) > 0 {
		out.FabricFaults = append(out.FabricFaults, lost...)
		// The jobs' epoch is when the agents' clock started, a little
		// after start: measure from it when it is known.
		if out.EpochNs > 0 {
			start = time.Unix(0, out.EpochNs)
		}
		out.Notes = append(out.Notes, b.bgpReaction(wctx, after, watched, start)...)
	}
	drops, err := b.fabricDrops(ctx)
	if err != nil {
		b.logf("reading qdisc drops: %v", err)
	}
	out.Packets.Dropped = drops
	return out, nil
}

// Down stops the agents and exporters (exporters end their streams so the
// collector drains), keeps the agents' logs, and destroys the lab.
func (b *Backend) Down(ctx context.Context) error {
	b.closeSteerDrivers()
	var errs []error
	if b.hd != nil {
		if err := b.hd.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
		b.hd = nil
	}
	if b.lab != nil && b.rt != nil {
		names := make([]string, len(b.lab.Nodes))
		for i, n := range b.lab.Nodes {
			names[i] = n.Name
		}
		if _, err := b.rt.Destroy(context.WithoutCancel(ctx), b.lab.Name, names); err != nil {
			errs = append(errs, fmt.Errorf("destroy lab %s: %w", b.lab.Name, err))
		}
		b.lab = nil
	}
	return errors.Join(errs...)
}

// LabName is the deployed lab's name ("" before Up).
func (b *Backend) LabName() string {
	if b.lab == nil {
		return ""
	}
	return b.lab.Name
}

// Exec runs a shell script in a lab node, as the node sees it (its own
// file system and tools).
func (b *Backend) Exec(ctx context.Context, node, script string) (string, error) {
	if b.st == nil {
		return "", errors.New("lab not deployed")
	}
	return b.rt.Exec(ctx, b.st, node, script)
}

// NetExec runs a shell script with this machine's tools in a lab node's
// network namespace (fault injection, qdisc counters).
func (b *Backend) NetExec(ctx context.Context, node, script string) (string, error) {
	if b.st == nil {
		return "", errors.New("lab not deployed")
	}
	return b.rt.NetExec(ctx, b.st, node, script)
}

// State is the deployed lab's state (nil before Up).
func (b *Backend) State() *labrt.State { return b.st }

// Describe implements harness.Describer: the lab a run of p deploys on
// this host (generated per run; nothing is created by describing it).
func (b *Backend) Describe(p *runspec.RunSpec) []string {
	sw, hosts, links := harness.FabricCounts(p.Fabric)
	out := []string{
		b.describeLab(sw, hosts, links),
		fmt.Sprintf("agents     the transport agent (this fabricbench binary, or --agent-binary) copied over SSH/SFTP to %d hosts: control API :%d, data :%d and %d entropy ports", hosts, ControlPort, DataPort, EntropyPorts),
	}
	if !p.NoTelemetry {
		out = append(out, fmt.Sprintf("telemetry  the kernel exporter on all %d nodes (gNMI :%d, plain-text gRPC on the lab's management network, a password per run) every %v", len(p.Fabric.Nodes), GNMIPort, p.Interval))
	}
	if n := len(p.Features.SRv6Paths); n > 0 {
		out = append(out, fmt.Sprintf("srv6       uN SIDs on every switch; %d pinned host-pair paths (seg6 routes and firewall marks on the hosts)", n))
	}
	if n := len(p.Features.VRFs); n > 0 {
		out = append(out, fmt.Sprintf("vrfs       %d VRFs as policy-routing tables on the leaves", n))
	}
	if b.runtime == containerlab.RuntimeContainerlab {
		out = append(out, "down       containerlab destroy: every container, the lab's Docker network and every deployed process removed at the end of the run, also after a failure")
	} else {
		out = append(out, "down       every namespace, veth and deployed process removed at the end of the run, also after a failure")
	}
	return out
}

func (b *Backend) describeLab(sw, hosts, links int) string {
	if b.runtime == containerlab.RuntimeContainerlab {
		frr, host := Images()
		if frr == "" {
			frr = containerlab.DefaultFRRImage
		}
		if host == "" {
			host = containerlab.DefaultHostImage
		}
		return fmt.Sprintf("lab        a containerlab lab (topology generated per run, lab name fbnXXXXXX) deployed by containerlab and Docker: %d switch containers of %s running FRR (BGP, ECMP; reached with docker exec unless the image has sshd), %d host containers of %s, %d veth links tbf-shaped to the fabric's rates (MTU %d), management /24 hashed into 198.19.100.0-198.19.199.0 (or $FABRICBENCH_LAB_MGMT_SUBNET)",
			sw, frr, hosts, host, links, LinkMTU)
	}
	return fmt.Sprintf("lab        a native FRR lab (containerlab topology generated per run, lab name fbnXXXXXX): %d switch namespaces running FRR (BGP, ECMP), %d host namespaces, %d veth links tbf-shaped to the fabric's rates (MTU %d), sshd in every node, management /24 hashed into 198.19.100.0-198.19.199.0 (or $FABRICBENCH_LAB_MGMT_SUBNET)",
		sw, hosts, links, LinkMTU)
}
