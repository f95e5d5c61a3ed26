// Package clabrt is fabricbench's containerlab runtime: it deploys a
// topology with containerlab and Docker, as containerlab users do, and
// then makes the lab what fabricbench needs, the same as its native
// runtime makes it:
//
//   - links with vars.rate shaped with tbf on both ends, the sysctls every
//     lab node gets (rp_filter off, IPv6 addresses kept on link down,
//     SRv6 on for nodes with a locator), all with this machine's tools in
//     the node's network namespace (nsenter);
//   - every node that has an OpenSSH server (/usr/sbin/sshd in its image)
//     runs one on its management address with the lab's client key and a
//     host key of its own (known_hosts in the lab's state directory);
//     nodes without one are reached with docker exec;
//   - the same readiness wait as the native runtime (labrt.WaitReady:
//     SSH up, BGP established with End-of-RIB, OSPF and IS-IS adjacencies);
//   - the lab's state recorded under the state root (labrt.State with the
//     containers, their init PIDs and how each node is reached), written
//     before anything is created, so that Destroy finds everything also
//     after a crash.
//
// containerlab is $FABRICBENCH_CONTAINERLAB, else containerlab in PATH;
// it runs with CLAB_VERSION_CHECK=disable (it would reach the internet).
package clabrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/crypto/ssh"

	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/labrt"
	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/drivers/dockerx"
)

func init() {
	labrt.Register(containerlab.RuntimeContainerlab, func(o labrt.Options) labrt.Runtime { return New(o) })
}

// Runtime is the containerlab runtime.
type Runtime struct {
	o labrt.Options
}

var _ labrt.Runtime = (*Runtime)(nil)

// New returns the runtime.
func New(o labrt.Options) *Runtime { return &Runtime{o: o.Defaults()} }

// Name is containerlab.RuntimeContainerlab.
func (r *Runtime) Name() string { return containerlab.RuntimeContainerlab }

func (r *Runtime) logf(format string, args ...any) { r.o.Logf(format, args...) }

// Binary is the containerlab command: $FABRICBENCH_CONTAINERLAB, else
// containerlab in PATH.
func Binary() (string, error) {
	if b := os.Getenv("FABRICBENCH_CONTAINERLAB"); b != "" {
		if _, err := os.Stat(b); err != nil {
			return "", fmt.Errorf("FABRICBENCH_CONTAINERLAB=%s: %w", b, err)
		}
		return b, nil
	}
	b, err := exec.LookPath("containerlab")
	if err != nil {
		return "", errors.New("no containerlab binary in PATH (or FABRICBENCH_CONTAINERLAB)")
	}
	return b, nil
}

// Usable reports whether containerlab and a Docker engine are present
// (and why not).
func Usable() (bool, string) {
	if _, err := Binary(); err != nil {
		return false, err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, dockerx.Binary(), "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		return false, fmt.Sprintf("no Docker engine (docker info: %s)", strings.TrimSpace(firstLine(string(out))))
	}
	return true, ""
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Choose resolves a runtime choice: "auto" (or "") is containerlab when
// it and a Docker engine are present, else native; why says how auto
// decided. An explicit containerlab without them is an error naming what
// is missing.
func Choose(choice string) (runtime, why string, err error) {
	switch choice {
	case "", "auto":
		if ok, reason := Usable(); ok {
			return containerlab.RuntimeContainerlab, "auto: containerlab and Docker are present", nil
		} else {
			return containerlab.RuntimeNative, "auto: " + reason, nil
		}
	case containerlab.RuntimeNative:
		return choice, "", nil
	case containerlab.RuntimeContainerlab:
		if ok, reason := Usable(); !ok {
			return "", "", fmt.Errorf("runtime containerlab: %s; use the native runtime", reason)
		}
		return choice, "", nil
	}
	return "", "", fmt.Errorf("%q is not a lab runtime (want auto, containerlab or native)", choice)
}

// Preflight checks for root, containerlab, Docker and nsenter, and that
// the lab was resolved for this runtime.
func (r *Runtime) Preflight(lab *containerlab.Lab) error {
	var errs []string
	if lab.Runtime != containerlab.RuntimeContainerlab {
		errs = append(errs, fmt.Sprintf("lab %s was resolved for the %s runtime", lab.Name, lab.Runtime))
	}
	if lab.File == "" {
		errs = append(errs, fmt.Sprintf("lab %s has no topology file (containerlab deploys files)", lab.Name))
	}
	if os.Geteuid() != 0 {
		errs = append(errs, "the containerlab runtime needs root (containerlab, docker, nsenter)")
	}
	if ok, why := Usable(); !ok {
		errs = append(errs, why)
	}
	if _, err := exec.LookPath("nsenter"); err != nil {
		errs = append(errs, "nsenter not found (apt-get install util-linux)")
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// stateDir is a lab's state directory.
func (r *Runtime) stateDir(lab string) string { return labrt.StateDir(r.o.StateRoot, lab) }

// clab runs containerlab with args, its output appended to log.
func (r *Runtime) clab(ctx context.Context, log string, args ...string) error {
	bin, err := Binary()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "CLAB_VERSION_CHECK=disable", "NO_COLOR=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if log != "" {
		if f, ferr := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); ferr == nil {
			fmt.Fprintf(f, "$ containerlab %s\n%s\n", strings.Join(args, " "), out.Bytes())
			f.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("containerlab %s: %v: %s", args[0], err, tail(out.String(), 12))
	}
	return nil
}

// tail returns the last n non-empty lines of s.
func tail(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimRight(l, " "))
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// docker runs a docker command and returns its trimmed output.
func docker(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, dockerx.Binary(), args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("docker %s: %v: %s", args[0], err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// Deploy deploys lab with containerlab and waits until it is ready.
func (r *Runtime) Deploy(ctx context.Context, lab *containerlab.Lab) (*labrt.State, error) {
	if err := r.Preflight(lab); err != nil {
		return nil, err
	}
	// Until the new state is saved, no Reclaim may run under the root.
	unlock, err := labrt.Lock(ctx, r.o.StateRoot)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := labrt.CheckNotInUse(r.o.StateRoot, lab.Name); err != nil {
		return nil, err
	}
	if rep, err := r.Destroy(ctx, lab.Name, labrt.NodeNames(lab)); err != nil {
		return nil, fmt.Errorf("remove leftovers of lab %s: %w", lab.Name, err)
	} else if !rep.Empty() {
		r.logf("removed leftovers of lab %s: %s", lab.Name, rep)
	}
	st, err := r.deploy(ctx, lab, unlock)
	if err != nil {
		return labrt.DeployFailed(context.WithoutCancel(ctx), lab, st, err, r.Destroy)
	}
	return st, nil
}

// inspected is one container as `containerlab inspect --format json`
// lists it.
type inspected struct {
	Name string `json:"name"`
	IPv4 string `json:"ipv4_address"`
	IPv6 string `json:"ipv6_address"`
}

// sshDir is where the runtime keeps a node's sshd files inside its
// container.
const sshDir = "/etc/fabricbench-ssh"

func (r *Runtime) deploy(ctx context.Context, lab *containerlab.Lab, unlock func()) (*labrt.State, error) {
	dir := r.stateDir(lab.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	netExisted := networkExists(ctx, lab.MgmtNetwork)
	st := &labrt.State{
		Lab: lab.Name, Topology: lab.File, Runtime: containerlab.RuntimeContainerlab, Created: time.Now().UTC(), Dir: dir,
		Owner: labrt.Self(), Temporary: true, MgmtNetwork: lab.MgmtNetwork,
		KnownHosts: filepath.Join(dir, "known_hosts"), Key: filepath.Join(dir, "id_ed25519"), User: "root",
	}
	if lab.Mgmt.IsValid() {
		st.Mgmt, st.Gateway = lab.Mgmt.String(), lab.Mgmt.Addr().Next().String()
	}
	// A network made for this lab is ours to remove at Destroy.
	st.MgmtNetworkOwned = !netExisted
	for _, n := range lab.Nodes {
		st.Nodes = append(st.Nodes, labrt.NodeState{Name: n.Name, Container: lab.Container(n.Name), Kind: n.Kind, OS: n.OS,
			Role: n.Role, Dir: filepath.Join(dir, "nodes", n.Name)})
	}
	// Bridge nodes need their bridge on this machine; make the missing
	// ones (and record them) before containerlab looks for them.
	for _, n := range lab.Nodes {
		if n.Kind != "bridge" {
			continue
		}
		if _, err := netlink.LinkByName(n.Name); err == nil {
			continue
		}
		st.Bridges = append(st.Bridges, n.Name)
	}
	if err := labrt.SaveState(st); err != nil {
		return nil, err
	}
	unlock()
	for _, b := range st.Bridges {
		br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: b}}
		if err := netlink.LinkAdd(br); err != nil {
			return nil, fmt.Errorf("bridge %s: %w", b, err)
		}
		if err := netlink.LinkSetUp(br); err != nil {
			return nil, fmt.Errorf("bridge %s: %w", b, err)
		}
	}
	if !netExisted && lab.Mgmt.IsValid() {
		if err := labrt.MgmtFree(lab.Mgmt); err != nil {
			// The route may be the lab's own network, which a busy Docker
			// engine did not report the first time: ask again before
			// refusing.
			time.Sleep(time.Second)
			if !networkExists(ctx, lab.MgmtNetwork) {
				return nil, err
			}
			netExisted = true
			st.MgmtNetworkOwned = false
		}
	}
	start := time.Now()
	log := filepath.Join(dir, "containerlab.log")
	r.logf("lab %s: containerlab deploy -t %s", lab.Name, lab.File)
	if err := r.clab(ctx, log, "deploy", "--reconfigure", "-t", lab.File); err != nil {
		return nil, err
	}
	if err := r.collect(ctx, lab, st); err != nil {
		return nil, err
	}
	if err := labrt.SaveState(st); err != nil {
		return nil, err
	}
	r.logf("lab %s: %d containers up in %s; configuring", lab.Name, len(st.Nodes), time.Since(start).Round(time.Millisecond))
	if err := r.configure(ctx, lab, st); err != nil {
		return nil, err
	}
	if err := labrt.SaveState(st); err != nil {
		return nil, err
	}
	exec := func(ctx context.Context, node, script string) (string, error) { return r.Exec(ctx, st, node, script) }
	if err := labrt.WaitReady(ctx, lab, st, exec, r.o.ReadyTimeout); err != nil {
		return st, err
	}
	r.logf("lab %s: ready in %s", lab.Name, time.Since(start).Round(time.Millisecond))
	return st, nil
}

func networkExists(ctx context.Context, name string) bool {
	_, err := docker(ctx, "network", "inspect", "--format", "{{.Name}}", name)
	return err == nil
}

// collect reads the deployed containers: management addresses
// (containerlab inspect) and init PIDs (docker inspect).
func (r *Runtime) collect(ctx context.Context, lab *containerlab.Lab, st *labrt.State) error {
	bin, err := Binary()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, bin, "inspect", "-t", lab.File, "--format", "json")
	cmd.Env = append(os.Environ(), "CLAB_VERSION_CHECK=disable", "NO_COLOR=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("containerlab inspect: %v: %s", err, tail(errOut.String(), 5))
	}
	var byLab map[string][]inspected
	if err := json.Unmarshal(out.Bytes(), &byLab); err != nil {
		return fmt.Errorf("containerlab inspect: %v", err)
	}
	addr := map[string]string{}
	for _, cs := range byLab {
		for _, c := range cs {
			if p, err := netip.ParsePrefix(c.IPv4); err == nil {
				addr[c.Name] = p.Addr().String()
			}
		}
	}
	for i := range st.Nodes {
		ns := &st.Nodes[i]
		if ns.Kind == "bridge" {
			continue
		}
		pid, err := containerPID(ctx, ns.Container)
		if err != nil {
			return fmt.Errorf("node %s: %w", ns.Name, err)
		}
		ns.Init = pid
		ns.Mgmt = addr[ns.Container]
		if n := lab.NodeByName(ns.Name); n != nil && n.Mgmt.IsValid() && ns.Mgmt != n.Mgmt.String() && ns.Mgmt != "" {
			return fmt.Errorf("node %s: containerlab gave it management address %s, the topology says %s", ns.Name, ns.Mgmt, n.Mgmt)
		}
	}
	return nil
}

// containerPID is a running container's first process.
func containerPID(ctx context.Context, container string) (int, error) {
	out, err := docker(ctx, "inspect", "--format", "{{.State.Running}} {{.State.Pid}}", container)
	if err != nil {
		return 0, err
	}
	f := strings.Fields(out)
	if len(f) != 2 || f[0] != "true" {
		return 0, fmt.Errorf("container %s is not running", container)
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("container %s: no process id in %q", container, out)
	}
	return pid, nil
}

// configure shapes links, sets the sysctls every lab node gets and starts
// sshd where a node has one.
func (r *Runtime) configure(ctx context.Context, lab *containerlab.Lab, st *labrt.State) error {
	// Links: the endpoints' addresses (containerlab does not configure
	// them on linux nodes; idempotent where the node's own exec or FRR
	// configuration did) and tbf on both ends, as the native runtime
	// shapes them.
	ends := func(l *containerlab.Link) []containerlab.Endpoint { return []containerlab.Endpoint{l.A, l.B} }
	for i, l := range lab.Links {
		for _, ep := range ends(l) {
			if n := lab.NodeByName(ep.Node); n == nil || n.Kind == "bridge" {
				continue
			}
			var cmds []string
			if ep.IPv4.IsValid() {
				cmds = append(cmds, fmt.Sprintf("ip addr replace %s dev %s", ep.IPv4, ep.Interface))
			}
			if ep.IPv6.IsValid() {
				cmds = append(cmds, fmt.Sprintf("ip -6 addr replace %s dev %s nodad", ep.IPv6, ep.Interface))
			}
			if l.RateBps > 0 {
				cmds = append(cmds, TBFCommand(ep.Interface, l.RateBps, l.MTU))
			}
			if len(cmds) == 0 {
				continue
			}
			if out, err := r.NetExec(ctx, st, ep.Node, strings.Join(cmds, " && ")); err != nil {
				return fmt.Errorf("link %d: %s:%s: %v: %s", i, ep.Node, ep.Interface, err, strings.TrimSpace(out))
			}
		}
	}
	clientPub, err := labrt.WriteKey(st.Key, "fabricbench-lab-"+lab.Name)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var known []string
	var errs []error
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, n := range lab.Nodes {
		if n.Kind == "bridge" {
			continue
		}
		ns := &st.Nodes[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			line, err := r.configureNode(ctx, n, ns, clientPub)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("node %s: %w", n.Name, err))
				return
			}
			if line != "" {
				known = append(known, line)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	sort.Strings(known)
	return labrt.WriteKnownHosts(st.KnownHosts, known)
}

// configureNode sets a node's sysctls and starts its sshd (when it has
// one); it returns the node's known_hosts line ("" without sshd).
func (r *Runtime) configureNode(ctx context.Context, n *containerlab.Node, ns *labrt.NodeState, clientPub ssh.PublicKey) (string, error) {
	sys := map[string]string{"net.ipv6.conf.all.keep_addr_on_down": "1", "net.ipv4.conf.all.rp_filter": "0",
		"net.ipv4.conf.default.rp_filter": "0", "net.ipv6.conf.all.disable_ipv6": "0", "net.ipv6.conf.default.disable_ipv6": "0"}
	if n.SRv6Locator.IsValid() {
		sys["net.ipv6.conf.all.seg6_enabled"] = "1"
		sys["net.ipv6.conf.default.seg6_enabled"] = "1"
	}
	keys := make([]string, 0, len(sys))
	for k := range sys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("sysctl -q -w")
	for _, k := range keys {
		b.WriteString(" " + k + "=" + sys[k])
	}
	if out, err := r.NetExec(ctx, &labrt.State{Nodes: []labrt.NodeState{*ns}}, ns.Name, b.String()); err != nil {
		return "", fmt.Errorf("sysctl: %v: %s", err, strings.TrimSpace(out))
	}
	// The container's /proc/sys is read-only unless it runs privileged
	// (containerlab runs linux nodes privileged elsewhere; not here): the
	// drivers set sysctls from inside the node.
	c, err := dockerx.Dial(ctx, configFor(ns))
	if err != nil {
		return "", err
	}
	defer c.Close()
	if out, err := c.Run(ctx, "grep -q ' /proc/sys proc ro' /proc/mounts && mount -o remount,rw /proc/sys || true"); err != nil {
		r.logf("node %s: /proc/sys stays read-only: %v %s", ns.Name, err, strings.TrimSpace(out))
	}
	if err := loadStartupConfig(ctx, c, n); err != nil {
		return "", err
	}
	if out, err := c.Run(ctx, labrt.StartLLDPD("eth0")); err != nil {
		r.logf("node %s: lldpd did not start (cabling is then read from neighbour tables): %v %s", ns.Name, err, strings.TrimSpace(out))
	}
	ns.Transport = labrt.TransportDocker
	if _, err := c.Run(ctx, "test -x /usr/sbin/sshd"); err != nil || ns.Mgmt == "" {
		return "", nil // no sshd (or no management address): docker exec
	}
	return r.startSSHD(ctx, c, n, ns, clientPub)
}

// loadStartupConfig loads an FRR node's startup-config into its running
// FRR: containerlab's linux kind ignores startup-config, so without this a
// file's routers would come up unconfigured. Nothing to do when the file
// is also bound onto /etc/frr/frr.conf (FRR read it at start).
func loadStartupConfig(ctx context.Context, c *dockerx.Client, n *containerlab.Node) error {
	if n.OS != "frr" || n.StartupConfig == "" {
		return nil
	}
	for _, b := range n.Binds {
		if b.Target == containerlab.FRRConfTarget || (b.Target == containerlab.FRRDirTarget && n.FRRConfig == n.StartupConfig) {
			return nil
		}
	}
	data, err := os.ReadFile(n.StartupConfig)
	if err != nil {
		return err
	}
	const dst = "/etc/frr/fabricbench-startup.conf"
	if err := c.WriteFile(ctx, dst, bytes.NewReader(data), int64(len(data)), 0o644); err != nil {
		return err
	}
	// vtysh reaches the daemons once they are up: a few tries.
	var out string
	for i := 0; i < 40; i++ {
		if out, err = c.Run(ctx, "vtysh -f "+dst); err == nil {
			return nil
		}
		if !strings.Contains(out, "is not running") && !strings.Contains(out, "failed to connect") {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("load startup-config %s into FRR: %v: %s", n.StartupConfig, err, strings.TrimSpace(out))
}

// startSSHD gives a node a host key, the lab's client key and an sshd on
// its management address.
func (r *Runtime) startSSHD(ctx context.Context, c *dockerx.Client, n *containerlab.Node, ns *labrt.NodeState, clientPub ssh.PublicKey) (string, error) {
	if err := os.MkdirAll(ns.Dir, 0o755); err != nil {
		return "", err
	}
	keyFile := filepath.Join(ns.Dir, "ssh_host_ed25519_key")
	hostPub, err := labrt.WriteKey(keyFile, n.Name)
	if err != nil {
		return "", err
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return "", err
	}
	if _, err := c.Run(ctx, "mkdir -p "+sshDir+" /run/sshd && chmod 700 "+sshDir); err != nil {
		return "", err
	}
	files := []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{"ssh_host_ed25519_key", key, 0o600},
		{"authorized_keys", ssh.MarshalAuthorizedKey(clientPub), 0o600},
		{"sshd_config", []byte(labrt.SSHDConfig(sshDir, ns.Mgmt, sshDir+"/authorized_keys")), 0o600},
	}
	for _, f := range files {
		if err := c.WriteFile(ctx, sshDir+"/"+f.name, bytes.NewReader(f.data), int64(len(f.data)), f.mode); err != nil {
			return "", err
		}
	}
	if out, err := c.Run(ctx, "/usr/sbin/sshd -f "+sshDir+"/sshd_config -E "+sshDir+"/sshd.log"); err != nil {
		// Another sshd holds the port (the image starts its own): reach
		// the node with docker exec instead.
		r.logf("node %s: sshd did not start (%v: %s); reaching it with docker exec", ns.Name, err, strings.TrimSpace(out))
		return "", nil
	}
	ns.Transport = labrt.TransportSSH
	return labrt.KnownHostsLine([]string{n.Name, ns.Mgmt}, hostPub), nil
}

// configFor is the driver configuration of a containerlab node: docker
// exec into its container.
func configFor(ns *labrt.NodeState) drivers.Config {
	return drivers.Config{Device: ns.Name, Container: ns.Container}
}

// TBFCommand shapes dev to rateBps the way the native runtime does: a
// 1 ms burst (at least four full frames) and 5 ms of queue.
func TBFCommand(dev string, rateBps int64, mtu int) string {
	if mtu <= 0 {
		mtu = 1500
	}
	rate := rateBps / 8
	burst := max(rate/1000, int64(4*(mtu+14)))
	limit := rate*5/1000 + burst
	return fmt.Sprintf("tc qdisc replace dev %s root handle 1: tbf rate %dbit burst %d limit %d", dev, rateBps, burst, limit)
}

// Exec runs a script in a node's container (docker exec).
func (r *Runtime) Exec(ctx context.Context, st *labrt.State, node, script string) (string, error) {
	ns, ok := st.Node(node)
	if !ok {
		return "", fmt.Errorf("lab %s has no node %s", st.Lab, node)
	}
	c, err := dockerx.Dial(ctx, configFor(&ns))
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.Run(ctx, script)
}

// NetExec runs a script with this machine's tools in a node's network
// namespace (nsenter into the container's first process).
func (r *Runtime) NetExec(ctx context.Context, st *labrt.State, node, script string) (string, error) {
	ns, ok := st.Node(node)
	if !ok {
		return "", fmt.Errorf("lab %s has no node %s", st.Lab, node)
	}
	pid := ns.Init
	if pid <= 0 || labrt.ProcStart(pid) == 0 {
		var err error
		if pid, err = containerPID(ctx, ns.Container); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "nsenter", "-t", strconv.Itoa(pid), "-n", "--", "sh", "-c", script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// Destroy removes a lab: containerlab destroy when its topology file is
// still there, then whatever containers labelled with the lab's name
// remain, the management network when the runtime made it, the bridges it
// made and the state directory.
func (r *Runtime) Destroy(ctx context.Context, lab string, nodes []string) (*labrt.Report, error) {
	rep := &labrt.Report{}
	st, _ := labrt.LoadState(r.o.StateRoot, lab)
	var errs []error
	if st != nil && st.Runtime != "" && st.Runtime != containerlab.RuntimeContainerlab {
		return rep, fmt.Errorf("lab %s was deployed by the %s runtime", lab, st.Runtime)
	}
	before, err := labContainers(ctx, lab)
	if err != nil {
		// The engine does not answer (stopped, crashed): nothing can be
		// listed or removed. The state stays, so that lab gc, the next
		// run or lab up finds the lab once the engine is back.
		return rep, engineDown(r.o.StateRoot, lab, st, err)
	}
	// The management network the lab made: containerlab destroy may
	// remove it itself; the report names it either way.
	ownNet := st != nil && st.MgmtNetworkOwned && st.MgmtNetwork != "" && networkExists(ctx, st.MgmtNetwork)
	if st != nil && st.Topology != "" && len(before) > 0 {
		if _, err := os.Stat(st.Topology); err == nil {
			if err := r.clab(ctx, filepath.Join(st.Dir, "containerlab.log"), "destroy", "--cleanup", "-t", st.Topology); err != nil {
				r.logf("lab %s: %v (removing its containers directly)", lab, err)
			}
		}
	}
	left, err := labContainers(ctx, lab)
	if err != nil {
		errs = append(errs, err)
	}
	if len(left) > 0 {
		if _, err := docker(ctx, append([]string{"rm", "-f"}, left...)...); err != nil {
			errs = append(errs, err)
		}
	}
	rep.Containers = before
	// What containerlab deploy wrote on this host for the lab, which only
	// its destroy removes: when it did not run (no topology file, no
	// containerlab, a failure), remove it here.
	if err := removeHostEntries(lab); err != nil {
		errs = append(errs, err)
	}
	// containerlab names each container's namespace in /var/run/netns; a
	// container removed without it leaves the link dangling.
	for _, c := range before {
		ns := filepath.Join("/var/run/netns", c)
		if fi, err := os.Lstat(ns); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if _, err := os.Stat(ns); err != nil {
				if err := os.Remove(ns); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if st != nil {
		if ownNet && networkExists(ctx, st.MgmtNetwork) {
			if users, _ := docker(ctx, "network", "inspect", "--format", "{{len .Containers}}", st.MgmtNetwork); users == "0" {
				if _, err := docker(ctx, "network", "rm", st.MgmtNetwork); err != nil {
					errs = append(errs, err)
				} else {
					rep.Networks = append(rep.Networks, st.MgmtNetwork)
				}
			}
		} else if ownNet {
			rep.Networks = append(rep.Networks, st.MgmtNetwork) // containerlab destroy removed it
		}
		for _, b := range st.Bridges {
			if l, err := netlink.LinkByName(b); err == nil {
				if err := netlink.LinkDel(l); err != nil {
					errs = append(errs, fmt.Errorf("delete bridge %s: %w", b, err))
				} else {
					rep.Interfaces = append(rep.Interfaces, b)
				}
			}
		}
	}
	if dir, err := labrt.RemoveStateDir(r.stateDir(lab)); err != nil {
		errs = append(errs, err)
	} else if dir != "" {
		rep.StateDir = dir
	}
	return rep, errors.Join(errs...)
}

// EngineDownError is a lab that could not be removed because the Docker
// engine did not answer: what the lab's state says is left, and the state
// kept for a later reclaim.
type EngineDownError struct {
	Lab        string
	Containers []string // the lab's containers, as its state records them
	Network    string   // the management network the lab made ("" when none)
	// GC is the command that removes the lab once the engine answers.
	GC  string
	Err error // the engine's failure
}

func (e *EngineDownError) Error() string {
	var left []string
	if n := len(e.Containers); n > 0 {
		names := e.Containers
		more := ""
		if len(names) > 8 {
			names, more = names[:8], fmt.Sprintf(" and %d more", len(names)-8)
		}
		left = append(left, fmt.Sprintf("%d containers (%s%s)", n, strings.Join(names, ", "), more))
	}
	if e.Network != "" {
		left = append(left, "Docker network "+e.Network)
	}
	what := "whatever of it the engine still has"
	if len(left) > 0 {
		what = strings.Join(left, " and ")
	}
	return fmt.Sprintf("the Docker engine does not answer (%v): lab %s is left as it was: %s; once Docker answers again, `%s` removes it (so does the next run or lab up)",
		e.Err, e.Lab, what, e.GC)
}

func (e *EngineDownError) Unwrap() error { return e.Err }

// engineDown is the EngineDownError of a lab whose state is st (nil when
// it has none).
func engineDown(root, lab string, st *labrt.State, err error) error {
	e := &EngineDownError{Lab: lab, Err: err, GC: "fabricbench lab gc"}
	if root != "" && filepath.Clean(root) != filepath.Clean(labrt.DefaultStateRoot) {
		e.GC += " --state-dir " + root
	}
	if st != nil {
		for _, n := range st.Nodes {
			if n.Kind != "bridge" && n.Container != "" {
				e.Containers = append(e.Containers, n.Container)
			}
		}
		sort.Strings(e.Containers)
		if st.MgmtNetworkOwned {
			e.Network = st.MgmtNetwork
		}
	}
	return e
}

// Where containerlab deploy writes a lab's names on this host: a block of
// /etc/hosts and an SSH client configuration (variables for tests).
var (
	etcHosts     = "/etc/hosts"
	sshConfigDir = "/etc/ssh/ssh_config.d"
)

// removeHostEntries removes lab's block from /etc/hosts ("###### CLAB-lab-START ######"
// to its END line) and its SSH client configuration, when they are there.
// /etc/hosts is rewritten in place: in a container it is a bind mount,
// which a rename cannot replace.
func removeHostEntries(lab string) error {
	var errs []error
	if err := os.Remove(filepath.Join(sshConfigDir, "clab-"+lab+".conf")); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	b, err := os.ReadFile(etcHosts)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	}
	start, end := "###### CLAB-"+lab+"-START ######", "###### CLAB-"+lab+"-END ######"
	var keep []string
	in, found := false, false
	for _, l := range strings.SplitAfter(string(b), "\n") {
		switch t := strings.TrimSpace(l); {
		case t == start:
			in, found = true, true
		case in && t == end:
			in = false
		case !in:
			keep = append(keep, l)
		}
	}
	if found && !in { // a block without its END line is left alone
		if err := os.WriteFile(etcHosts, []byte(strings.Join(keep, "")), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("remove lab %s from %s: %w", lab, etcHosts, err))
		}
	}
	return errors.Join(errs...)
}

// labContainers lists the containers containerlab labelled with a lab's
// name.
func labContainers(ctx context.Context, lab string) ([]string, error) {
	out, err := docker(ctx, "ps", "-a", "--filter", "label=containerlab="+lab, "--format", "{{.Names}}")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			names = append(names, l)
		}
	}
	sort.Strings(names)
	return names, nil
}
