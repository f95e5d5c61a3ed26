// Package labrt is what fabricbench's two lab runtimes share: the native
// runtime (containerlab/native: network namespaces on this machine, no
// Docker) and the containerlab runtime (containerlab/clabrt: containerlab
// and Docker). A runtime deploys a resolved containerlab.Lab, records the
// deployed lab's State (state.json under the state root, whichever
// runtime made it, so that status, validate and down find it), waits
// until the lab is ready, runs commands in its nodes and destroys it.
//
// Runtimes register themselves (Register) in the style of containerlab's
// node kinds; Open picks one by name, ForState the one that deployed a
// lab.
package labrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/fabricbench/fabricbench/containerlab"
)

// DefaultStateRoot is where lab state directories live.
const DefaultStateRoot = "/run/fabricbench/labs"

// Node transports: how fabricbench reaches a node's shell.
const (
	TransportSSH    = "ssh"    // the node's sshd, on its management address
	TransportDocker = "docker" // docker exec into the node's container
)

// State is what a deployed lab looks like; it is saved as state.json.
type State struct {
	Lab      string    `json:"lab"`
	Topology string    `json:"topology,omitempty"`
	Runtime  string    `json:"runtime"`
	Created  time.Time `json:"created"`
	Dir      string    `json:"dir"`
	// Owner is the process that deployed the lab (PID and its start time
	// in clock ticks since boot, as /proc/PID/stat gives it).
	Owner Owner `json:"owner"`
	// Temporary: the lab lives only as long as its owner (a run's lab, or
	// a lab being deployed); once the owner is gone Reclaim removes it.
	// Kept labs (lab up) are the user's until lab down (own.go).
	Temporary bool `json:"temporary,omitempty"`
	// Mgmt is the management subnet and Gateway this machine's address in
	// it (on RootIf).
	Mgmt    string `json:"mgmt"`
	Gateway string `json:"gateway"`
	RootIf  string `json:"root_if"`
	// MgmtNS is the native runtime's management namespace; MgmtNetwork
	// the containerlab runtime's Docker network.
	MgmtNS      string `json:"mgmt_ns,omitempty"`
	MgmtNetwork string `json:"mgmt_network,omitempty"`
	// MgmtNetworkOwned: the Docker network did not exist before the lab
	// (Destroy removes it when no container uses it any more).
	MgmtNetworkOwned bool        `json:"mgmt_network_owned,omitempty"`
	Nodes            []NodeState `json:"nodes"`
	KnownHosts       string      `json:"known_hosts"`
	Key              string      `json:"key"`
	User             string      `json:"user"`
	// Bridges are the bridges the runtime made in this machine's
	// namespace for the lab's bridge nodes (containerlab runtime), removed
	// by Destroy.
	Bridges []string `json:"bridges,omitempty"`
}

// Owner identifies a process across PID reuse.
type Owner struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
	// Cmd is its command line (shortened), to name it once it is gone.
	Cmd string `json:"cmd,omitempty"`
}

// NodeState is one deployed node.
type NodeState struct {
	Name string `json:"name"`
	// Namespace is the node's named network namespace (native runtime).
	Namespace string `json:"namespace,omitempty"`
	// Container is the node's container (containerlab runtime).
	Container string `json:"container,omitempty"`
	Kind      string `json:"kind,omitempty"`
	OS        string `json:"os"`
	Role      string `json:"role,omitempty"`
	Mgmt      string `json:"mgmt"`
	Dir       string `json:"dir"`
	// Init is the process holding the node's namespaces: the native
	// runtime's init, the container's first process.
	Init int `json:"init"`
	// Transport is how the node's shell is reached: TransportSSH or
	// TransportDocker.
	Transport string `json:"transport"`
}

// Node returns the deployed node called name.
func (s *State) Node(name string) (NodeState, bool) {
	for _, n := range s.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return NodeState{}, false
}

// Report lists what Destroy removed.
type Report struct {
	Namespaces []string
	Processes  []string
	Interfaces []string
	Containers []string
	Networks   []string
	StateDir   string
}

// Empty reports whether nothing was found.
func (r *Report) Empty() bool {
	return len(r.Namespaces) == 0 && len(r.Processes) == 0 && len(r.Interfaces) == 0 &&
		len(r.Containers) == 0 && len(r.Networks) == 0 && r.StateDir == ""
}

func (r *Report) String() string {
	var parts []string
	if n := len(r.Containers); n > 0 {
		parts = append(parts, fmt.Sprintf("%d containers", n))
	}
	if n := len(r.Processes); n > 0 {
		parts = append(parts, fmt.Sprintf("%d processes", n))
	}
	if n := len(r.Namespaces); n > 0 {
		parts = append(parts, fmt.Sprintf("%d namespaces", n))
	}
	if n := len(r.Networks); n > 0 {
		parts = append(parts, "networks "+strings.Join(r.Networks, ", "))
	}
	if n := len(r.Interfaces); n > 0 {
		parts = append(parts, "interfaces "+strings.Join(r.Interfaces, ", "))
	}
	if r.StateDir != "" {
		parts = append(parts, "state "+r.StateDir)
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// NotReadyError is returned by Deploy when the lab came up but did not
// become ready in time; the lab is left running for inspection.
type NotReadyError struct {
	Lab     string
	Pending []string // what was not ready, e.g. "leaf0: BGP 198.18.0.5 Active"
}

func (e *NotReadyError) Error() string {
	return fmt.Sprintf("lab %s is up but not ready: %s", e.Lab, strings.Join(e.Pending, "; "))
}

// NodeNames lists the names of lab's nodes, as Destroy takes them.
func NodeNames(lab *containerlab.Lab) []string {
	out := make([]string, len(lab.Nodes))
	for i, n := range lab.Nodes {
		out[i] = n.Name
	}
	return out
}

// DeployFailed is what a Runtime's Deploy returns when deploying lab
// failed with err: a lab that is up but not ready (*NotReadyError) stays,
// with its state st; anything else is removed with destroy (the runtime's
// Destroy, under ctx), and a failed clean-up is added to err.
func DeployFailed(ctx context.Context, lab *containerlab.Lab, st *State, err error, destroy func(ctx context.Context, lab string, nodes []string) (*Report, error)) (*State, error) {
	var nr *NotReadyError
	if errors.As(err, &nr) {
		return st, err
	}
	if _, derr := destroy(ctx, lab.Name, NodeNames(lab)); derr != nil {
		err = fmt.Errorf("%w (and cleaning up failed: %v)", err, derr)
	}
	return nil, err
}

// RemoveStateDir removes a lab's state directory dir, the last step of a
// Destroy; removed is dir when there was one.
func RemoveStateDir(dir string) (removed string, err error) {
	if _, err := os.Stat(dir); err != nil {
		return "", nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// Runtime deploys labs.
type Runtime interface {
	// Name is the registry name: containerlab.RuntimeNative or
	// containerlab.RuntimeContainerlab.
	Name() string
	// Preflight checks that this machine can deploy lab; its error says
	// what is missing.
	Preflight(lab *containerlab.Lab) error
	// Deploy brings lab up and waits until it is ready. Leftovers of an
	// earlier deployment of the same lab name are removed first, unless a
	// live process owns that lab (*InUseError). The lab's state, saved
	// before anything is created, names this process as its owner and is
	// Temporary (Keep makes it the user's). On failure everything made so
	// far is removed, except when the lab is up but not ready
	// (*NotReadyError, with the State).
	Deploy(ctx context.Context, lab *containerlab.Lab) (*State, error)
	// Destroy removes everything of a lab, found by its name (and the
	// node names of its topology, also when the state file is gone).
	// Destroying a lab that does not exist is not an error.
	Destroy(ctx context.Context, lab string, nodes []string) (*Report, error)
	// Exec runs a shell script in a node as the node's own processes see
	// it (its file system and tools).
	Exec(ctx context.Context, st *State, node, script string) (string, error)
	// NetExec runs a shell script with this machine's tools in a node's
	// network namespace (ip, tc, sysctl on the node's interfaces).
	NetExec(ctx context.Context, st *State, node, script string) (string, error)
}

// Options configure a runtime.
type Options struct {
	// StateRoot is where lab state lives (default DefaultStateRoot).
	StateRoot string
	// ReadyTimeout bounds the wait for readiness (default 90 s).
	ReadyTimeout time.Duration
	// Logf receives progress lines.
	Logf func(format string, args ...any)
}

// Defaults fills the zero fields of o.
func (o Options) Defaults() Options {
	if o.StateRoot == "" {
		o.StateRoot = DefaultStateRoot
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 90 * time.Second
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o
}

var (
	regMu    sync.Mutex
	registry = map[string]func(Options) Runtime{}
)

// Register makes a runtime available to Open; it is called from the
// runtimes' init functions and panics on a duplicate name (a programming
// error, as database/sql.Register does).
func Register(name string, open func(Options) Runtime) {
	regMu.Lock()
	defer regMu.Unlock()
	if name == "" || open == nil {
		panic("labrt: Register needs a name and an open function")
	}
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("labrt: runtime %q registered twice", name))
	}
	registry[name] = open
}

// Names lists the registered runtimes.
func Names() []string {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Open returns the runtime called name.
func Open(name string, o Options) (Runtime, error) {
	regMu.Lock()
	open, ok := registry[name]
	regMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown lab runtime %q (have %s)", name, strings.Join(Names(), ", "))
	}
	return open(o.Defaults()), nil
}

// StateDir is a lab's state directory under root.
func StateDir(root, lab string) string {
	if root == "" {
		root = DefaultStateRoot
	}
	return filepath.Join(root, lab)
}

// ErrNotDeployed is wrapped by LoadState when a lab has no state here.
var ErrNotDeployed = errors.New("not deployed here")

// LoadState reads a deployed lab's state (any runtime's).
func LoadState(root, lab string) (*State, error) {
	p := filepath.Join(StateDir(root, lab), "state.json")
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("lab %s is %w (no %s)", lab, ErrNotDeployed, p)
	}
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &s, nil
}

// SaveState writes st's state.json atomically.
func SaveState(st *State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(st.Dir, 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(st.Dir, "state.json.tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(st.Dir, "state.json"))
}

// ForState returns the runtime that deployed st.
func ForState(st *State, o Options) (Runtime, error) {
	name := st.Runtime
	if name == "" {
		name = containerlab.RuntimeNative
	}
	return Open(name, o)
}

// MgmtFree checks that no route on this machine overlaps the management
// subnet p (another lab, or a real network).
func MgmtFree(p netip.Prefix) error {
	routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("list routes: %w", err)
	}
	for _, r := range routes {
		if r.Dst == nil {
			continue
		}
		rp, ok := netip.AddrFromSlice(r.Dst.IP)
		if !ok {
			continue
		}
		ones, _ := r.Dst.Mask.Size()
		other := netip.PrefixFrom(rp.Unmap(), ones)
		if other.Overlaps(p) && ones > 0 {
			dev := ""
			if l, err := netlink.LinkByIndex(r.LinkIndex); err == nil {
				dev = " dev " + l.Attrs().Name
			}
			return fmt.Errorf("management subnet %s overlaps route %s%s on this machine; set mgmt.ipv4-subnet to a free subnet", p, other, dev)
		}
	}
	return nil
}

// Self is this process as an Owner.
func Self() Owner {
	return Owner{PID: os.Getpid(), Start: ProcStart(os.Getpid()), Cmd: procCmdline(os.Getpid())}
}

// ProcStart is a process's start time in clock ticks since boot (field
// 22 of /proc/PID/stat), 0 when it is gone.
func ProcStart(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0
	}
	var v uint64
	fmt.Sscan(f[19], &v)
	return v
}

// Alive reports whether the owner process still runs (same PID, same
// start time).
func (o Owner) Alive() bool {
	return o.PID > 0 && ProcStart(o.PID) == o.Start && o.Start != 0
}
