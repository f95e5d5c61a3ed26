// Package native is fabricbench's native lab runtime: it deploys a
// containerlab topology without Docker. Each node is a network namespace
// (with its own UTS and mount namespaces and hostname), each link a veth
// pair (optionally shaped with tbf), FRR nodes run one FRR instance
// (zebra, bgpd, staticd, ... from the node's daemons file) with the
// node's frr.conf, and every node runs an OpenSSH server on a management
// network reachable from this machine. Bridge nodes are a Linux bridge in
// a namespace of their own; dummy links a dummy interface; host links a
// veth pair into this machine's namespace; mgmt-net links a veth pair onto
// the management bridge. What it cannot honour (container images, cmd,
// macvlan and vxlan links, ...) containerlab.Topology.Resolve refuses for
// this runtime.
//
// Layout, for lab L:
//   - namespace clab-L-NODE per node (as containerlab names containers);
//   - namespace fbmgmt-L holding the management bridge br0; one veth into
//     it from the root namespace (fbm + 8 hex digits) with the subnet's
//     first address, and one per node (mgmt0 in the node);
//   - /run/fabricbench/labs/L: state.json, known_hosts, the lab's SSH
//     client key (id_ed25519), and one directory per node (etc and run
//     directories bind-mounted onto /etc/frr and /run/frr inside the node,
//     host key, sshd_config, logs).
//
// Everything Deploy makes is found again by lab name and removed by
// Destroy, also after a crash (the state directory lives on tmpfs, like
// the namespaces).
package native

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/crypto/ssh"

	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/labrt"
)

// DefaultStateRoot is where lab state directories live.
const DefaultStateRoot = labrt.DefaultStateRoot

func init() {
	labrt.Register(containerlab.RuntimeNative, func(o labrt.Options) labrt.Runtime {
		return New(WithStateRoot(o.StateRoot), WithReadyTimeout(o.ReadyTimeout), WithLogf(o.Logf))
	})
}

// The deployed lab's description is the runtimes' shared one.
type (
	State         = labrt.State
	NodeState     = labrt.NodeState
	Report        = labrt.Report
	NotReadyError = labrt.NotReadyError
)

// Deployer deploys labs natively.
type Deployer struct {
	stateRoot    string
	frrDir       string
	sshd         string
	readyTimeout time.Duration
	logf         func(format string, args ...any)
}

// Option configures a Deployer.
type Option func(*Deployer)

// WithStateRoot sets the directory holding lab state (default
// /run/fabricbench/labs).
func WithStateRoot(dir string) Option { return func(d *Deployer) { d.stateRoot = dir } }

// WithReadyTimeout bounds the wait for readiness (default 90s).
func WithReadyTimeout(t time.Duration) Option { return func(d *Deployer) { d.readyTimeout = t } }

// WithLogf sets a progress logger.
func WithLogf(f func(format string, args ...any)) Option { return func(d *Deployer) { d.logf = f } }

// WithFRRDir sets the directory of the FRR daemons (default /usr/lib/frr).
func WithFRRDir(dir string) Option { return func(d *Deployer) { d.frrDir = dir } }

// New returns a Deployer.
func New(opts ...Option) *Deployer {
	d := &Deployer{
		stateRoot:    DefaultStateRoot,
		frrDir:       "/usr/lib/frr",
		sshd:         "/usr/sbin/sshd",
		readyTimeout: 90 * time.Second,
		logf:         func(string, ...any) {},
	}
	for _, o := range opts {
		o(d)
	}
	return d
}

// NamespaceName is the namespace of a lab node.
func NamespaceName(lab, node string) string { return "clab-" + lab + "-" + node }

// MgmtNamespace is the namespace holding a lab's management bridge.
func MgmtNamespace(lab string) string { return "fbmgmt-" + lab }

// RootInterface is the root-namespace end of a lab's management network.
func RootInterface(lab string) string {
	h := fnv.New32a()
	h.Write([]byte(lab))
	return fmt.Sprintf("fbm%08x", h.Sum32())
}

// StateDir is a lab's state directory.
func (d *Deployer) StateDir(lab string) string { return filepath.Join(d.stateRoot, lab) }

// Name is the runtime's registry name.
func (d *Deployer) Name() string { return containerlab.RuntimeNative }

// LoadState reads a deployed lab's state.
func (d *Deployer) LoadState(lab string) (*State, error) { return labrt.LoadState(d.stateRoot, lab) }

// Preflight checks that this machine can deploy lab natively.
func (d *Deployer) Preflight(lab *containerlab.Lab) error {
	var errs []string
	if os.Geteuid() != 0 {
		errs = append(errs, "the native runtime needs root (network namespaces, veth, mounts)")
	}
	needFRR := false
	for _, n := range lab.Nodes {
		switch n.OS {
		case "sonic":
			errs = append(errs, fmt.Sprintf("node %s: kind %s cannot run natively (SONiC needs its container image); deploy this file with containerlab and Docker", n.Name, n.Kind))
		case "frr":
			needFRR = true
		}
	}
	if needFRR {
		for _, bin := range []string{"zebra", "bgpd", "staticd"} {
			if _, err := os.Stat(filepath.Join(d.frrDir, bin)); err != nil {
				errs = append(errs, fmt.Sprintf("FRR is not installed (%s missing; apt-get install frr)", filepath.Join(d.frrDir, bin)))
				break
			}
		}
		if _, err := exec.LookPath("vtysh"); err != nil {
			errs = append(errs, "vtysh not found (apt-get install frr)")
		}
		if _, err := user.Lookup("frr"); err != nil {
			errs = append(errs, "user frr missing (apt-get install frr)")
		}
	}
	if _, err := os.Stat(d.sshd); err != nil {
		errs = append(errs, fmt.Sprintf("OpenSSH server missing (%s; apt-get install openssh-server)", d.sshd))
	}
	for _, bin := range []string{"ip", "unshare", "mount"} {
		if _, err := exec.LookPath(bin); err != nil {
			errs = append(errs, bin+" not found (iproute2/util-linux)")
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// Deploy brings lab up. Leftovers of an earlier deployment of the same lab
// name are removed first. On failure everything made so far is removed,
// except when the lab is up but not ready (*NotReadyError).
func (d *Deployer) Deploy(ctx context.Context, lab *containerlab.Lab) (*State, error) {
	if lab.Runtime != "" && lab.Runtime != containerlab.RuntimeNative {
		return nil, fmt.Errorf("lab %s was resolved for the %s runtime, not the native one", lab.Name, lab.Runtime)
	}
	if err := d.Preflight(lab); err != nil {
		return nil, err
	}
	// Until the new state is saved, no Reclaim may run under the root.
	unlock, err := labrt.Lock(ctx, d.stateRoot)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := labrt.CheckNotInUse(d.stateRoot, lab.Name); err != nil {
		return nil, err
	}
	if rep, err := d.Destroy(ctx, lab.Name, labrt.NodeNames(lab)); err != nil {
		return nil, fmt.Errorf("remove leftovers of lab %s: %w", lab.Name, err)
	} else if !rep.Empty() {
		d.logf("removed leftovers of lab %s: %s", lab.Name, rep)
	}
	if err := checkMgmtFree(lab.Mgmt); err != nil {
		return nil, err
	}
	st, err := d.deploy(ctx, lab, unlock)
	if err != nil {
		return labrt.DeployFailed(context.Background(), lab, st, err, d.Destroy)
	}
	return st, nil
}

// MgmtFree checks that no route on this machine overlaps the management
// subnet p (another lab, or a real network).
func MgmtFree(p netip.Prefix) error { return labrt.MgmtFree(p) }

func checkMgmtFree(p netip.Prefix) error { return labrt.MgmtFree(p) }

func (d *Deployer) deploy(ctx context.Context, lab *containerlab.Lab, unlock func()) (*State, error) {
	dir := d.StateDir(lab.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	gw := lab.Mgmt.Addr().Next()
	st := &State{
		Lab: lab.Name, Topology: lab.File, Runtime: containerlab.RuntimeNative, Created: time.Now().UTC(), Dir: dir,
		Owner: labrt.Self(), Temporary: true,
		Mgmt: lab.Mgmt.String(), Gateway: gw.String(), RootIf: RootInterface(lab.Name), MgmtNS: MgmtNamespace(lab.Name),
		KnownHosts: filepath.Join(dir, "known_hosts"), Key: filepath.Join(dir, "id_ed25519"), User: "root",
	}
	for _, n := range lab.Nodes {
		if n.Mgmt == gw {
			return nil, fmt.Errorf("node %s: mgmt-ipv4 %s is the lab gateway (the first address of %s)", n.Name, n.Mgmt, lab.Mgmt)
		}
		ns := NodeState{Name: n.Name, Namespace: NamespaceName(lab.Name, n.Name), Kind: n.Kind, OS: n.OS, Role: n.Role,
			Dir: filepath.Join(dir, "nodes", n.Name)}
		if n.Kind != "bridge" {
			ns.Mgmt, ns.Transport = n.Mgmt.String(), labrt.TransportSSH
		}
		st.Nodes = append(st.Nodes, ns)
	}
	// Save the state first: a crash from here on leaves enough to clean up
	// (and names this process as the owner).
	if err := labrt.SaveState(st); err != nil {
		return nil, err
	}
	unlock()
	start := time.Now()
	if err := d.mgmtNetwork(lab, st); err != nil {
		return nil, err
	}
	for i, n := range lab.Nodes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var err error
		if n.Kind == "bridge" {
			err = createBridgeNode(&st.Nodes[i])
		} else {
			err = d.createNode(lab, n, &st.Nodes[i], i)
		}
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	for i, l := range lab.Links {
		if err := createLink(lab, l); err != nil {
			return nil, fmt.Errorf("link %d (%s:%s -- %s:%s): %w", i, l.A.Node, l.A.Interface, l.B.Node, l.B.Interface, err)
		}
	}
	for i, sl := range lab.Stubs {
		if err := createStub(lab, st, sl, i); err != nil {
			return nil, fmt.Errorf("%s link of %s:%s: %w", sl.Type, sl.Endpoint.Node, sl.Endpoint.Interface, err)
		}
	}
	d.logf("lab %s: %d namespaces, %d links in %s", lab.Name, len(lab.Nodes), len(lab.Links)+len(lab.Stubs), time.Since(start).Round(time.Millisecond))

	// sshd's privilege separation directory (systemd-tmpfiles makes it on
	// a booted system).
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return nil, err
	}
	// SSH: one client key for the lab, one host key per node.
	clientPub, err := labrt.WriteKey(st.Key, "fabricbench-lab-"+lab.Name)
	if err != nil {
		return nil, err
	}
	authorized := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(authorized, ssh.MarshalAuthorizedKey(clientPub), 0o644); err != nil {
		return nil, err
	}
	var known []string
	for i, n := range lab.Nodes {
		ns := st.Nodes[i]
		if n.Kind == "bridge" {
			continue
		}
		if n.StartupDelay > 0 {
			d.logf("lab %s: node %s: startup-delay %s", lab.Name, n.Name, n.StartupDelay)
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(n.StartupDelay):
			}
		}
		if n.OS == "frr" {
			if err := d.startFRR(ctx, lab, n, ns); err != nil {
				return nil, fmt.Errorf("node %s: FRR: %w", n.Name, err)
			}
		}
		hostPub, err := labrt.WriteKey(filepath.Join(ns.Dir, "ssh_host_ed25519_key"), n.Name)
		if err != nil {
			return nil, err
		}
		known = append(known, labrt.KnownHostsLine([]string{n.Name, n.Mgmt.String()}, hostPub))
		cfg := filepath.Join(ns.Dir, "sshd_config")
		if err := os.WriteFile(cfg, []byte(labrt.SSHDConfig(ns.Dir, n.Mgmt.String(), authorized)), 0o600); err != nil {
			return nil, err
		}
		if out, err := d.nodeExec(ctx, ns, d.sshd+" -f "+cfg+" -E "+filepath.Join(ns.Dir, "sshd.log")); err != nil {
			return nil, fmt.Errorf("node %s: start sshd: %v: %s", n.Name, err, out)
		}
		if out, err := d.nodeExec(ctx, ns, labrt.StartLLDPD("mgmt0")); err != nil {
			d.logf("node %s: lldpd did not start (cabling is then read from neighbour tables): %v %s", n.Name, err, strings.TrimSpace(out))
		}
	}
	if err := labrt.WriteKnownHosts(st.KnownHosts, known); err != nil {
		return nil, err
	}
	for i, n := range lab.Nodes {
		for _, c := range n.Exec {
			if out, err := d.nodeExec(ctx, st.Nodes[i], envPrefix(n.Env)+c); err != nil {
				return nil, fmt.Errorf("node %s: exec %q: %v: %s", n.Name, c, err, strings.TrimSpace(out))
			}
		}
	}
	if err := labrt.SaveState(st); err != nil {
		return nil, err
	}
	d.logf("lab %s: daemons started in %s; waiting for readiness", lab.Name, time.Since(start).Round(time.Millisecond))
	exec := func(ctx context.Context, node, script string) (string, error) { return d.Exec(ctx, st, node, script) }
	if err := labrt.WaitReady(ctx, lab, st, exec, d.readyTimeout); err != nil {
		return st, err
	}
	d.logf("lab %s: ready in %s", lab.Name, time.Since(start).Round(time.Millisecond))
	return st, nil
}

// envPrefix exports a node's environment for a shell command (env and
// env-files, as a container's processes would see them).
func envPrefix(env map[string]string) string {
	if len(env) == 0 {
		return ""
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "export %s=%s; ", k, shellQuote(env[k]))
	}
	return b.String()
}

// mgmtNetwork makes the management namespace with its bridge and the
// root-namespace veth holding the gateway address.
func (d *Deployer) mgmtNetwork(lab *containerlab.Lab, st *State) error {
	if err := createNamedNS(st.MgmtNS); err != nil {
		return err
	}
	h, err := handleAt(st.MgmtNS)
	if err != nil {
		return err
	}
	defer h.Close()
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}
	if err := h.LinkAdd(br); err != nil {
		return fmt.Errorf("management bridge: %w", err)
	}
	if err := h.LinkSetUp(br); err != nil {
		return err
	}
	root, err := handleAt("")
	if err != nil {
		return err
	}
	defer root.Close()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: st.RootIf}, PeerName: "uplink", PeerNamespace: netlink.NsFd(int(h.ns))}
	if err := root.LinkAdd(veth); err != nil {
		return fmt.Errorf("management veth %s: %w", st.RootIf, err)
	}
	l, err := root.LinkByName(st.RootIf)
	if err != nil {
		return err
	}
	gw := netip.PrefixFrom(netip.MustParseAddr(st.Gateway), lab.Mgmt.Bits())
	if err := root.AddrAdd(l, &netlink.Addr{IPNet: ipnet(gw)}); err != nil {
		return fmt.Errorf("management gateway %s: %w", gw, err)
	}
	if err := root.LinkSetUp(l); err != nil {
		return err
	}
	up, err := h.LinkByName("uplink")
	if err != nil {
		return err
	}
	if err := h.LinkSetMaster(up, br); err != nil {
		return err
	}
	return h.LinkSetUp(up)
}

// createNode makes a node's namespace, its management interface and
// directory, and applies its sysctls.
func (d *Deployer) createNode(lab *containerlab.Lab, n *containerlab.Node, ns *NodeState, idx int) error {
	if err := os.MkdirAll(ns.Dir, 0o755); err != nil {
		return err
	}
	if err := createNamedNS(ns.Namespace); err != nil {
		return err
	}
	mh, err := handleAt(MgmtNamespace(lab.Name))
	if err != nil {
		return err
	}
	defer mh.Close()
	nh, err := handleAt(ns.Namespace)
	if err != nil {
		return err
	}
	defer nh.Close()
	port := "n" + strconv.Itoa(idx)
	if err := mh.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: port}, PeerName: "mgmt0", PeerNamespace: netlink.NsFd(int(nh.ns))}); err != nil {
		return fmt.Errorf("management veth: %w", err)
	}
	pl, err := mh.LinkByName(port)
	if err != nil {
		return err
	}
	br, err := mh.LinkByName("br0")
	if err != nil {
		return err
	}
	if err := mh.LinkSetMaster(pl, br); err != nil {
		return err
	}
	if err := mh.LinkSetUp(pl); err != nil {
		return err
	}
	m, err := nh.LinkByName("mgmt0")
	if err != nil {
		return err
	}
	addr := netip.PrefixFrom(n.Mgmt, lab.Mgmt.Bits())
	if err := nh.AddrAdd(m, &netlink.Addr{IPNet: ipnet(addr)}); err != nil {
		return fmt.Errorf("mgmt0 %s: %w", addr, err)
	}
	if err := nh.LinkSetUp(m); err != nil {
		return err
	}
	// Sysctls: the file's, and what every lab node needs.
	sys := map[string]string{"net.ipv6.conf.all.keep_addr_on_down": "1", "net.ipv4.conf.all.rp_filter": "0", "net.ipv4.conf.default.rp_filter": "0"}
	if n.SRv6Locator.IsValid() {
		sys["net.ipv6.conf.all.seg6_enabled"] = "1"
		sys["net.ipv6.conf.default.seg6_enabled"] = "1"
	}
	for k, v := range n.Sysctls {
		sys[k] = v
	}
	if err := setSysctls(ns.Namespace, sys); err != nil {
		return err
	}
	if n.OS == "frr" {
		for _, dir := range []string{filepath.Join(ns.Dir, "etc"), filepath.Join(ns.Dir, "run")} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
	}
	return d.startInit(ns, n.OS == "frr")
}

// setSysctls writes sysctls inside a namespace (one sysctl call).
func setSysctls(nsName string, sys map[string]string) error {
	keys := make([]string, 0, len(sys))
	for k := range sys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := []string{"netns", "exec", nsName, "sysctl", "-q", "-w"}
	for _, k := range keys {
		args = append(args, k+"="+sys[k])
	}
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("sysctl: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// createBridgeNode makes a bridge node: a namespace holding a Linux bridge
// named after the node, which the node's links join.
func createBridgeNode(ns *NodeState) error {
	if len(ns.Name) > 15 {
		return fmt.Errorf("bridge node name %q is longer than 15 characters (it names the bridge device)", ns.Name)
	}
	if err := createNamedNS(ns.Namespace); err != nil {
		return err
	}
	h, err := handleAt(ns.Namespace)
	if err != nil {
		return err
	}
	defer h.Close()
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: ns.Name}}
	if err := h.LinkAdd(br); err != nil {
		return fmt.Errorf("bridge %s: %w", ns.Name, err)
	}
	return h.LinkSetUp(br)
}

// createStub makes a link with one node end: a veth pair whose other end
// is in this machine's namespace (host), on the management bridge
// (mgmt-net), or parked in the management namespace (dummy: this kernel
// may have no dummy devices, and a veth whose peer is up behaves as one).
func createStub(lab *containerlab.Lab, st *State, sl *containerlab.Stub, idx int) error {
	nh, err := handleAt(NamespaceName(lab.Name, sl.Endpoint.Node))
	if err != nil {
		return err
	}
	defer nh.Close()
	var far *nsHandle
	farName := sl.HostInterface
	switch sl.Type {
	case "host":
		if far, err = handleAt(""); err != nil {
			return err
		}
		if _, err := far.LinkByName(farName); err == nil {
			far.Close()
			return fmt.Errorf("interface %s already exists on this machine", farName)
		}
	case "mgmt-net", "dummy":
		if far, err = handleAt(st.MgmtNS); err != nil {
			return err
		}
		if sl.Type == "dummy" || farName == "" {
			farName = "s" + strconv.Itoa(idx)
		}
		if _, err := far.LinkByName(farName); err == nil {
			far.Close()
			return fmt.Errorf("interface %s already exists on the management network", farName)
		}
	default:
		return fmt.Errorf("%s links are not supported by the native runtime", sl.Type)
	}
	defer far.Close()
	attrs := netlink.LinkAttrs{Name: sl.Endpoint.Interface}
	if sl.MTU > 0 {
		attrs.MTU = sl.MTU
	}
	if err := nh.LinkAdd(&netlink.Veth{LinkAttrs: attrs, PeerName: farName, PeerNamespace: netlink.NsFd(int(far.ns))}); err != nil {
		return fmt.Errorf("veth: %w", err)
	}
	fl, err := far.LinkByName(farName)
	if err != nil {
		return err
	}
	if sl.Type == "mgmt-net" {
		br, err := far.LinkByName("br0")
		if err != nil {
			return err
		}
		if err := far.LinkSetMaster(fl, br); err != nil {
			return err
		}
	}
	if err := far.LinkSetUp(fl); err != nil {
		return err
	}
	return setupEnd(nh, sl.Endpoint, sl.MTU, 0)
}

// setupEnd configures one end of a link in its namespace: MTU, MAC,
// addresses, tbf shaping, up.
func setupEnd(h *nsHandle, ep containerlab.Endpoint, mtu int, rateBps int64) error {
	link, err := h.LinkByName(ep.Interface)
	if err != nil {
		return err
	}
	if mtu > 0 {
		if err := h.LinkSetMTU(link, mtu); err != nil {
			return fmt.Errorf("%s:%s mtu %d: %w", ep.Node, ep.Interface, mtu, err)
		}
	}
	if ep.MAC != "" {
		hw, err := net.ParseMAC(ep.MAC)
		if err != nil {
			return fmt.Errorf("%s:%s mac %s: %w", ep.Node, ep.Interface, ep.MAC, err)
		}
		if err := h.LinkSetHardwareAddr(link, hw); err != nil {
			return fmt.Errorf("%s:%s mac %s: %w", ep.Node, ep.Interface, ep.MAC, err)
		}
	}
	for _, p := range []netip.Prefix{ep.IPv4, ep.IPv6} {
		if !p.IsValid() {
			continue
		}
		a := &netlink.Addr{IPNet: ipnet(p)}
		if p.Addr().Is6() {
			a.Flags = 0x02 // IFA_F_NODAD: usable at once
		}
		if err := h.AddrAdd(link, a); err != nil {
			return fmt.Errorf("%s:%s address %s: %w", ep.Node, ep.Interface, p, err)
		}
	}
	if rateBps > 0 {
		if err := h.QdiscAdd(tbfFor(link.Attrs().Index, rateBps, mtu)); err != nil {
			return fmt.Errorf("%s:%s tbf %d bit/s: %w", ep.Node, ep.Interface, rateBps, err)
		}
	}
	return h.LinkSetUp(link)
}

// createLink makes a veth pair between two nodes, addresses and (when the
// link has a rate) tbf shaping on both ends; an end on a bridge node
// joins its bridge.
func createLink(lab *containerlab.Lab, l *containerlab.Link) error {
	ah, err := handleAt(NamespaceName(lab.Name, l.A.Node))
	if err != nil {
		return err
	}
	defer ah.Close()
	bh, err := handleAt(NamespaceName(lab.Name, l.B.Node))
	if err != nil {
		return err
	}
	defer bh.Close()
	attrs := netlink.LinkAttrs{Name: l.A.Interface}
	if l.MTU > 0 {
		attrs.MTU = l.MTU
	}
	v := &netlink.Veth{LinkAttrs: attrs, PeerName: l.B.Interface, PeerNamespace: netlink.NsFd(int(bh.ns))}
	if err := ah.LinkAdd(v); err != nil {
		return fmt.Errorf("veth: %w", err)
	}
	for _, side := range []struct {
		h  *nsHandle
		ep containerlab.Endpoint
	}{{ah, l.A}, {bh, l.B}} {
		if n := lab.NodeByName(side.ep.Node); n != nil && n.Kind == "bridge" {
			br, err := side.h.LinkByName(n.Name)
			if err != nil {
				return err
			}
			link, err := side.h.LinkByName(side.ep.Interface)
			if err != nil {
				return err
			}
			if err := side.h.LinkSetMaster(link, br); err != nil {
				return err
			}
		}
		if err := setupEnd(side.h, side.ep, l.MTU, l.RateBps); err != nil {
			return err
		}
	}
	return nil
}

// tbfFor shapes an interface to rate bits/s: a 1 ms burst (at least a few
// full-size packets) and up to 5 ms of queue.
func tbfFor(ifindex int, rateBps int64, mtu int) *netlink.Tbf {
	if mtu <= 0 {
		mtu = 1500
	}
	rate := uint64(rateBps / 8)
	burst := rate / 1000
	if min := uint64(4 * (mtu + 14)); burst < min {
		burst = min
	}
	limit := rate*5/1000 + burst
	return &netlink.Tbf{
		QdiscAttrs: netlink.QdiscAttrs{LinkIndex: ifindex, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
		Rate:       rate,
		Buffer:     uint32(burst),
		Limit:      uint32(limit),
	}
}

func ipnet(p netip.Prefix) *net.IPNet {
	bits := 32
	if p.Addr().Is6() {
		bits = 128
	}
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), bits)}
}

// initTimeout bounds the wait for a node's init process to be ready.
const initTimeout = 30 * time.Second

// startInit starts a node's init process: it owns the node's UTS and
// mount namespaces (hostname; for FRR nodes the node's FRR directories on
// /etc/frr and /run/frr; its own /root; a private /run/netns for VRF
// namespaces) and sleeps. Every later command enters its namespaces, as a container's
// processes share its namespaces.
func (d *Deployer) startInit(ns *NodeState, frr bool) error {
	var pre strings.Builder
	fmt.Fprintf(&pre, "hostname %s && ", shellQuote(ns.Name))
	if frr {
		fmt.Fprintf(&pre, "mkdir -p /run/frr && mount --bind %s /etc/frr && mount --bind %s /run/frr && ",
			shellQuote(filepath.Join(ns.Dir, "etc")), shellQuote(filepath.Join(ns.Dir, "run")))
	}
	netnsDir, home := filepath.Join(ns.Dir, "netns"), filepath.Join(ns.Dir, "root")
	// zebra (user frr) must read the VRF namespaces' directory.
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	// The node's own (empty) root home, as in a container: sessions do not
	// run this machine's ~/.bashrc, and lab nodes cannot read its files.
	fmt.Fprintf(&pre, "mount --bind %s /root && ", shellQuote(home))
	// lldpd's directory (its privilege-separation chroot and socket), per
	// node.
	lldp := filepath.Join(ns.Dir, "lldpd")
	if err := os.MkdirAll(lldp, 0o755); err != nil {
		return err
	}
	fmt.Fprintf(&pre, "mkdir -p /run/lldpd && mount --bind %s /run/lldpd && ", shellQuote(lldp))
	fmt.Fprintf(&pre, "mkdir -p /run/netns && mount --bind %s /run/netns && exec sleep infinity", shellQuote(netnsDir))
	cmd := exec.Command("ip", "netns", "exec", ns.Namespace, "unshare", "--uts", "--mount", "--propagation", "private", "--", "sh", "-c", pre.String())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start init: %w", err)
	}
	ns.Init = cmd.Process.Pid
	// Reap it if it exits while we run; otherwise it outlives us.
	go func() { _ = cmd.Wait() }()
	// Ready when it sleeps with its hostname set (its mounts are done).
	// Usually a few ms; on a loaded 2-core machine starting a whole lab
	// (ip, unshare, sh, mount for every node) it took over 2 s, so wait
	// for up to initTimeout.
	for deadline := time.Now().Add(initTimeout); ; {
		if comm := procComm(ns.Init); comm == "sleep" {
			return nil
		} else if comm == "?" {
			return fmt.Errorf("init process exited (mount or hostname failed)")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("init process did not start within %s", initTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// nodeExec runs a shell command inside a node's namespaces.
func (d *Deployer) nodeExec(ctx context.Context, ns NodeState, script string) (string, error) {
	if ns.Init <= 0 {
		return "", fmt.Errorf("node %s has no init process", ns.Name)
	}
	cmd := exec.CommandContext(ctx, "nsenter", "-t", strconv.Itoa(ns.Init), "-n", "-m", "-u", "--", "sh", "-c", script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// NetExec runs a shell command in a node's network namespace; natively a
// node shares this machine's file system, so it is Exec.
func (d *Deployer) NetExec(ctx context.Context, st *State, node, script string) (string, error) {
	return d.Exec(ctx, st, node, script)
}

// Exec runs a shell command inside a deployed node, as the lab's own
// processes see it.
func (d *Deployer) Exec(ctx context.Context, st *State, node, script string) (string, error) {
	ns, ok := st.Node(node)
	if !ok {
		return "", fmt.Errorf("lab %s has no node %s", st.Lab, node)
	}
	return d.nodeExec(ctx, ns, script)
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r == ',' || r == '=' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
