// Package drivers talks to fabric devices: FRR (vtysh over SSH, with
// scrapligo), Linux hosts and routers (iproute2 and sysctl over SSH) and
// SONiC (CONFIG_DB and CLI over SSH). Every platform implements Driver:
// it reports its capabilities and facts, applies a desired feature set
// idempotently (with a dry-run diff first), verifies it by reading state
// back, and reads the operational state the bring-up validation checks.
//
// Platforms register a constructor with Register; Open picks one by the
// inventory's platform name.
package drivers

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"time"
)

// Feature names a configurable feature.
type Feature string

const (
	FeatECMPHash Feature = "ecmp-hash" // multipath hash fields
	FeatVRF      Feature = "vrf"
	FeatSRv6     Feature = "srv6-usid" // SRv6 micro-SID locators, SIDs and steering
	FeatECN      Feature = "ecn-wred"
	FeatPFC      Feature = "pfc"
	FeatTrimming Feature = "trimming"
	FeatBGP      Feature = "bgp"
	// FeatVRFRules isolates VRFs with policy rules where the device has
	// no VRF devices (DeviceFeatures.Isolation).
	FeatVRFRules Feature = "vrf-rules"
	// FeatPFCWatchdog is the PFC watchdog (PFC.Watchdog).
	FeatPFCWatchdog Feature = "pfc-watchdog"
	// FeatQueueSize is a data queue's size (QueueSize).
	FeatQueueSize Feature = "queue-size"
	// FeatAdaptive is adaptive routing or flowlet load balancing in the
	// switch (Adaptive).
	FeatAdaptive Feature = "adaptive-routing"
)

// AllFeatures lists every feature in a stable order.
var AllFeatures = []Feature{FeatBGP, FeatECMPHash, FeatVRF, FeatVRFRules, FeatSRv6, FeatECN, FeatPFC, FeatTrimming, FeatPFCWatchdog, FeatQueueSize, FeatAdaptive}

// Support says whether and how a platform does a feature.
type Support struct {
	Supported bool
	// Mode names how the feature is realised when there are several ways,
	// e.g. "netns" for VRFs backed by network namespaces.
	Mode string
	// Reason explains an unsupported feature.
	Reason string
}

// Capabilities maps each feature to its support.
type Capabilities map[Feature]Support

// The ECMP hash fields: the names of DeviceFeatures.ECMPHash, and of a suite's
// features.ecmp.hash.
const (
	HashSrcIP     = "src-ip"
	HashDstIP     = "dst-ip"
	HashSrcPort   = "src-port"
	HashDstPort   = "dst-port"
	HashProtocol  = "protocol" // the IP protocol (IPv6: next header)
	HashFlowLabel = "flow-label"
)

// HashFields lists the ECMP hash fields.
func HashFields() []string {
	return []string{HashSrcIP, HashDstIP, HashSrcPort, HashDstPort, HashProtocol, HashFlowLabel}
}

// FiveTuple is the L4 ECMP hash.
func FiveTuple() []string {
	return []string{HashSrcIP, HashDstIP, HashSrcPort, HashDstPort, HashProtocol}
}

// DeviceFeatures is the desired feature set of one device: what its driver
// diffs, applies and verifies (runspec.Features are the switch features
// of a whole run, for any backend). A nil pointer or an empty slice leaves
// that feature alone.
type DeviceFeatures struct {
	// ECMPHash lists the multipath hash fields (HashFields).
	ECMPHash []string
	VRFs     []VRF
	SRv6     *SRv6
	ECN      *ECN
	PFC      *PFC
	Trimming *Trimming
	// Isolation are the rules that keep VRFs apart on a device without
	// VRF devices (Linux and FRR on a kernel without them): what arrives
	// on a VRF's port for an address outside it is refused.
	Isolation []IsolationRule

	// ECMPWidth is the most equal-cost next hops the device must spread
	// a destination over (its uplinks in the fabric; feature
	// FeatECMPHash): a device that takes fewer is refused; 0 leaves it.
	ECMPWidth int
	// QueueSize caps the data queue of the agents' traffic.
	QueueSize *QueueSize
	// Adaptive asks for adaptive routing or flowlet load balancing.
	Adaptive *Adaptive
}

// IsolationRule refuses to forward what arrives on interface In for
// destination To: ip rule add pref Priority iif In to To prohibit (the
// device answers ICMP administratively prohibited).
type IsolationRule struct {
	In       string
	To       netip.Prefix
	Priority int // 1 to 32765, before the main table's rule
}

// Requested lists the features f asks for.
func (f *DeviceFeatures) Requested() []Feature {
	var out []Feature
	if len(f.ECMPHash) > 0 || f.ECMPWidth > 0 {
		out = append(out, FeatECMPHash)
	}
	if len(f.VRFs) > 0 {
		out = append(out, FeatVRF)
	}
	if len(f.Isolation) > 0 {
		out = append(out, FeatVRFRules)
	}
	if f.SRv6 != nil {
		out = append(out, FeatSRv6)
	}
	if f.ECN != nil {
		out = append(out, FeatECN)
	}
	if f.PFC != nil {
		out = append(out, FeatPFC)
	}
	if f.Trimming != nil {
		out = append(out, FeatTrimming)
	}
	if f.PFC != nil && f.PFC.Watchdog != nil {
		out = append(out, FeatPFCWatchdog)
	}
	if f.QueueSize != nil {
		out = append(out, FeatQueueSize)
	}
	if f.Adaptive != nil {
		out = append(out, FeatAdaptive)
	}
	return out
}

// VRF is one routing instance.
type VRF struct {
	Name       string
	Table      int      // kernel routing table (Linux/SONiC); 0 picks one
	Interfaces []string // member interfaces
}

// SRv6 configures a micro-SID locator, local SIDs, steered routes and the
// policy rules that pick a steering table.
//
// Deterministic path placement of single flows (pinning a flow to one
// spine) combines the three: the destination leaf decapsulates with a
// uDX4/uDX6 SID per attached host, the source host has one policy rule
// per placement (fwmark M -> table T) and, in table T, a steered route to
// the destination whose single micro-SID container lists the spine's uN,
// the destination leaf's uN and the leaf's uDX4/uDX6 SID, e.g. segment
// fd00:bbbb:SPINE:LEAF:e001:: in the F3216 format. A flow marked M (ping
// -m M, SO_MARK) then crosses that spine only.
type SRv6 struct {
	Locator string       // locator name
	Prefix  netip.Prefix // the node's uN prefix, e.g. fd00:bbbb:0100::/48
	// BlockLen and NodeLen are the uSID block and node ID lengths in bits
	// (32 and 16 for the usual F3216 format).
	BlockLen, NodeLen int
	SIDs              []SID
	Steer             []Steer
	// Rules are policy routing rules that send marked traffic to the
	// table of its steered routes. At most one rule per mark and address
	// family.
	Rules []PolicyRule
}

// SID is one local SID.
//
// Behaviors (case-insensitive):
//   - uN: End with the next-csid flavor (the node's locator). Dev, when
//     set, is the route's interface; it cannot be lo (the Linux kernel
//     turns routes through the loopback into reject routes), and the
//     Linux driver's default is its SID device sr0.
//   - uA: End.X with next-csid; Nexthop (IPv6) and Dev are the adjacency.
//   - uDT46: End.DT46 into VRF's table.
//   - uDX4, End.DX4: decapsulate and forward the inner IPv4 packet to
//     Nexthop (an IPv4 address, e.g. an attached host) out of Dev; both
//     required. The unspecified address 0.0.0.0 makes the kernel route
//     by the inner destination instead.
//   - uDX6, End.DX6: the same for an inner IPv6 packet (Nexthop IPv6,
//     :: routes by the inner destination).
//   - End, End.X, End.DT46: the classic SRv6 behaviors (no next-csid).
//
// uDX4 and uDX6 are End.DX4 and End.DX6 on a micro-SID address: the SID
// is the last micro-SID of a container (e.g. fd00:bbbb:LEAF:e001::/64
// behind the leaf's uN fd00:bbbb:LEAF::/48), so no flavor is needed.
type SID struct {
	Addr     netip.Prefix
	Behavior string
	VRF      string     // uDT46: the VRF to decapsulate into
	Nexthop  netip.Addr // uA: adjacency next hop; uDX4/uDX6: the next hop after decapsulation
	Dev      string     // uA: adjacency interface; uDX4/uDX6: the interface towards Nexthop; uN/End: the route's interface (optional)
}

// Steer is a route whose traffic is encapsulated with a SID list.
type Steer struct {
	Prefix   netip.Prefix
	Segments []netip.Addr
	Dev      string
	VRF      string
	// Table is the routing table of the route for policy routing (see
	// SRv6.Rules): 0 is the main table. VRF and Table are mutually
	// exclusive.
	Table int
}

// PolicyRule is a policy routing rule that sends packets carrying a
// firewall mark to a routing table: ip rule add fwmark Mark lookup Table
// pref Priority.
//
// The mark matches exactly (mask 0xffffffff) and nothing else is
// selected (from all). A rule is identified by its family and mark: the
// device's other rules that select on that mark alone (whatever their
// priority, table or action) are replaced, rules with further selectors
// (iif, from, ...) are left alone.
type PolicyRule struct {
	Mark uint32 // firewall mark (SO_MARK, ping -m); not 0
	// Table is the table looked up; not 0 (254 is main).
	Table int
	// Priority orders the rule (ip rule pref): 1 to 32765, so that it
	// comes before the main table's rule (32766).
	Priority int
	// Family is 4 (IPv4), 6 (IPv6) or 0 for both.
	Family int
}

// ECN configures WRED with ECN marking on the lossless/data queues.
type ECN struct {
	MinBytes, MaxBytes int64
	MaxProbPercent     int
	Queues             []int // 0: queue 3 (RoCE) and 4
	// DSCPs, when set, replace Queues by the queues packets with these
	// DSCP values are put in on each port, as the device's own QoS maps
	// say (SONiC: the port's dscp_to_tc_map and tc_to_queue_map): the
	// queues the traffic marked with them really uses.
	DSCPs []int
}

// PFC enables priority flow control on priorities: the lossless
// classes are Priorities plus, on each port, the priorities (traffic
// classes) packets with DSCPs are in by the port's own QoS maps (SONiC:
// dscp_to_tc_map), so that the traffic marked with them really is
// lossless.
type PFC struct {
	Priorities []int
	DSCPs      []int
	// Headroom, when set, is the lossless priority groups' ingress
	// buffer; nil leaves the device's own.
	Headroom *PFCHeadroom
	// Watchdog, when set, runs the PFC watchdog on the lossless
	// priorities (feature FeatPFCWatchdog).
	Watchdog *PFCWatchdog
}

// PFCHeadroom is a lossless priority group's ingress buffer, in bytes:
// Xoff the headroom that absorbs what the upstream port still sends after
// a pause, Xon the reserve below which the port sends XON, Size the
// reserved buffer (at least Xon + Xoff on most ASICs).
type PFCHeadroom struct {
	Xoff, Xon, Size int64
}

// PFCWatchdog detects a priority paused for Detect and drops its queue
// (and ignores its pause frames) for Restore.
type PFCWatchdog struct {
	Detect, Restore time.Duration
}

// QueueSize caps an egress data queue at Bytes: the queues packets with
// DSCPs are in on each port (by the device's QoS maps), else Queues.
type QueueSize struct {
	Bytes  int64
	Queues []int
	DSCPs  []int
}

// Adaptive is the switch's per-packet adaptive routing (Mode
// AdaptivePacket: each packet to the equal-cost port with the least
// load) or flowlet load balancing (AdaptiveFlowlet: a flowlet moves to the
// least-loaded port after an idle gap of FlowletGap).
type Adaptive struct {
	Mode       string
	FlowletGap time.Duration
}

// The Adaptive modes.
const (
	AdaptivePacket  = "per-packet"
	AdaptiveFlowlet = "flowlet"
)

// Trimming configures packet trimming: packets that would be dropped are
// cut to Size bytes and sent with DSCP on Queue.
type Trimming struct {
	Size  int
	DSCP  int
	Queue int
}

// Change is one difference between the desired and the running state.
type Change struct {
	Feature Feature
	Key     string // what changes, e.g. "SWITCH_HASH|GLOBAL ecmp_hash" or "sysctl net.ipv4.fib_multipath_hash_policy"
	Old     string // "" when absent
	New     string // "" when removed
}

func (c Change) String() string {
	switch {
	case c.Old == "":
		return fmt.Sprintf("+ %s = %s", c.Key, c.New)
	case c.New == "":
		return fmt.Sprintf("- %s (was %s)", c.Key, c.Old)
	}
	return fmt.Sprintf("~ %s: %s -> %s", c.Key, c.Old, c.New)
}

// Diff is an ordered list of changes; empty means nothing to do.
type Diff []Change

func (d Diff) String() string {
	if len(d) == 0 {
		return "no changes"
	}
	lines := make([]string, len(d))
	for i, c := range d {
		lines[i] = c.String()
	}
	return strings.Join(lines, "\n")
}

// Check is one verified fact, with the evidence read from the device.
type Check struct {
	Device   string
	Feature  Feature
	Name     string
	OK       bool
	Evidence string
}

// Facts describe a device.
type Facts struct {
	Hostname   string
	Platform   string
	OSVersion  string
	Interfaces []string
	// VRFMode is how VRFs are realised ("vrf-device", "netns", "" when the
	// platform has none).
	VRFMode string
}

// LinkState is one interface's state.
type LinkState struct {
	Name  string
	Up    bool // operationally up
	Admin bool // administratively up
	Addrs []netip.Prefix
	// MAC is the interface's hardware address ("" when it has none);
	// MTU its MTU (0 when the platform does not say).
	MAC string
	MTU int
}

// Neighbor is a device seen on the far end of an interface: by LLDP
// (System and Port are what the neighbour announces), or in the kernel's
// neighbour table (ARP, IPv6 ND: MAC, and Addr the neighbour's address).
type Neighbor struct {
	Interface string
	// Protocol is "lldp" or "nd" (the kernel's neighbour table, ARP and
	// ND).
	Protocol string
	// System is the neighbour's system name (LLDP), Port its port: the
	// port description (usually the interface name), else the port ID.
	System, Port string
	// PortMAC is the LLDP port ID when it is a MAC address; MAC the link
	// layer address of a neighbour table entry.
	PortMAC, MAC string
	Addr         netip.Addr
}

// Adjacency is a link-state routing protocol's neighbour (OSPF, OSPFv3,
// IS-IS).
type Adjacency struct {
	Protocol  string // ospf, ospf6, isis
	Interface string
	Neighbor  string // router ID or system ID
	State     string // Full/DR, Up, Init, ...
	Up        bool   // the adjacency is complete (OSPF Full, IS-IS Up)
}

// BGPConfig is a BGP instance's configuration as read back.
type BGPConfig struct {
	VRF     string
	LocalAS uint32
	// MaxPaths maps an address family ("ipv4 unicast", "ipv6 unicast") to
	// its eBGP maximum-paths; absent: not configured (the platform's
	// default).
	MaxPaths map[string]int
	// Shutdown lists the neighbours configured shut down.
	Shutdown []string
}

// BGPSession is one BGP neighbor.
type BGPSession struct {
	VRF         string
	Peer        string // neighbor address or interface
	Interface   string
	LocalAS     uint32
	RemoteAS    uint32
	State       string // Established, Active, Idle, ...
	PfxReceived int
}

// Established reports whether the session is up.
func (s BGPSession) Established() bool { return strings.EqualFold(s.State, "Established") }

// Nexthop is one path of a route.
type Nexthop struct {
	Via netip.Addr
	Dev string
}

// Route is one installed route.
type Route struct {
	VRF      string
	Prefix   netip.Prefix
	Protocol string
	Nexthops []Nexthop
	// Drop is set when the route discards what it matches: blackhole,
	// unreachable, prohibit (then Nexthops is empty).
	Drop string
	// Table is the policy routing table of a route in State.PolicyRoutes;
	// 0 in State.Routes (the main table or the VRF's).
	Table int
}

// SIDState is one installed SRv6 local SID.
type SIDState struct {
	Addr     netip.Prefix
	Behavior string // the kernel's action: End, End.X, End.DT46, End.DX4, ...
	Flavors  string
	// Nexthop is the next hop of End.X, End.DX4 and End.DX6 (nh6/nh4);
	// Dev the route's interface ("" when the platform does not say).
	Nexthop netip.Addr
	Dev     string
}

// RuleState is one installed policy routing rule (ip rule).
type RuleState struct {
	Family   int // 4 or 6
	Priority int
	// Mark and Mask are the fwmark selector (Mask 0xffffffff for a plain
	// mark); both 0 when the rule does not select on the mark.
	Mark, Mask uint32
	// Action is lookup, goto, nop, blackhole, unreachable or prohibit.
	Action string
	// Table is the table a lookup rule looks up (254 main, 255 local,
	// 253 default), 0 for other actions.
	Table int
	// Rule is the whole rule as text, e.g.
	// "101: from all fwmark 0x101 lookup 101".
	Rule string
}

// State is a device's operational state, as read back for validation.
type State struct {
	Links []LinkState
	// Neighbors are the neighbours seen on its interfaces (LLDP, and the
	// kernel's ARP/ND table); platforms without them leave it empty.
	Neighbors []Neighbor
	// Adjacencies are OSPF, OSPFv3 and IS-IS adjacencies.
	Adjacencies []Adjacency
	// Daemons are the routing daemons running (bgpd, ospfd, ospf6d,
	// isisd, staticd, ...), where the platform says.
	Daemons []string
	// Forwarding says whether the device forwards IPv4 and IPv6 (nil
	// where unknown).
	Forwarding *Forwarding
	// DaemonsEnabled are the routing daemons the device's configuration
	// starts (FRR's /etc/frr/daemons); nil where unknown.
	DaemonsEnabled []string
	// BGPConfig are the configured BGP instances.
	BGPConfig []BGPConfig
	BGP       []BGPSession
	Routes    []Route // IPv4 and IPv6 routes of the default VRF (and VRFs)
	SIDs      []SIDState
	// Rules are the policy routing rules, IPv4 then IPv6, in priority
	// order (platforms without them leave this empty).
	Rules []RuleState
	// PolicyRoutes are the routes of the tables that lookup rules name,
	// other than the main, local and default tables and VRF tables (e.g.
	// the steered routes of SRv6.Rules), with Route.Table set.
	PolicyRoutes []Route
}

// Route returns the route for p in vrf ("" = default), if installed.
func (s *State) Route(vrf string, p netip.Prefix) (Route, bool) {
	for _, r := range s.Routes {
		if r.VRF == vrf && r.Prefix == p {
			return r, true
		}
	}
	return Route{}, false
}

// Driver manages one device.
type Driver interface {
	// Platform is the registry name, e.g. "frr", "linux", "sonic".
	Platform() string
	Capabilities(ctx context.Context) (Capabilities, error)
	Facts(ctx context.Context) (*Facts, error)
	// Diff returns what Apply would change, changing nothing (dry run).
	// A requested feature the platform lacks is a *CapabilityError.
	Diff(ctx context.Context, want *DeviceFeatures) (Diff, error)
	// Apply makes the running state match want and returns what it
	// changed; applying the same features twice changes nothing.
	Apply(ctx context.Context, want *DeviceFeatures) (Diff, error)
	// Verify reads the state back and checks every requested feature.
	Verify(ctx context.Context, want *DeviceFeatures) ([]Check, error)
	// State reads links, BGP sessions, routes and SIDs.
	State(ctx context.Context) (*State, error)
	// Exec runs a shell command on the device (hosts: ping, ...). Platforms
	// without a shell return a *CapabilityError.
	Exec(ctx context.Context, cmd string) (string, error)
	Close() error
}

// CapabilityError reports a feature a platform lacks.
type CapabilityError struct {
	Platform, Device string
	Feature          Feature
	Reason           string
}

func (e *CapabilityError) Error() string {
	if e.Device != "" {
		return fmt.Sprintf("%s (%s) cannot do %s: %s", e.Device, e.Platform, e.Feature, e.Reason)
	}
	return fmt.Sprintf("platform %s cannot do %s: %s", e.Platform, e.Feature, e.Reason)
}

// CheckCapabilities returns a *CapabilityError for the first requested
// feature caps does not support.
func CheckCapabilities(platform, device string, caps Capabilities, want *DeviceFeatures) error {
	for _, f := range want.Requested() {
		s, ok := caps[f]
		if !ok || !s.Supported {
			reason := s.Reason
			if reason == "" {
				reason = "not supported"
			}
			return &CapabilityError{Platform: platform, Device: device, Feature: f, Reason: reason}
		}
	}
	return nil
}

// Config tells a driver how to reach its device.
type Config struct {
	Device string // name in the inventory or lab
	// Container, when set, is the device's container on this machine: it
	// is reached with docker exec (drivers/dockerx), and Address, Port,
	// Auth and KnownHosts are not used.
	Container string
	Address   string // management address (host or host:port)
	Port      int    // SSH port, 0 = 22
	Auth      Auth
	// KnownHosts is the known_hosts file host keys are checked against.
	// Required for SSH: host keys are always verified.
	KnownHosts string
	Timeout    time.Duration // per operation; 0 = 30s
	// Options are platform-specific extras (e.g. scrapligo options for
	// the file transport in tests).
	Options []any
}

// Auth holds resolved credentials. It is never logged.
type Auth struct {
	User       string
	Password   string
	PrivateKey []byte
	Passphrase string
	// Agent uses the keys of the ssh-agent at $SSH_AUTH_SOCK.
	Agent bool
}

// String hides the secrets.
func (a Auth) String() string { return fmt.Sprintf("Auth{User:%q}", a.User) }

// GoString hides the secrets from %#v.
func (a Auth) GoString() string { return a.String() }

var (
	regMu    sync.Mutex
	registry = map[string]func(Config) (Driver, error){}
	limits   = map[string]map[Feature]string{}
)

// RegisterLimits records the features a platform's driver never does,
// whatever the device (the reasons), so that a run that needs one is
// refused when it is planned, before any device is reached. What depends
// on the device (a kernel module, an ASIC's capability) stays with
// Capabilities. Drivers call it from their init functions.
func RegisterLimits(platform string, l map[Feature]string) {
	regMu.Lock()
	defer regMu.Unlock()
	m := map[Feature]string{}
	for f, r := range l {
		m[f] = r
	}
	limits[platform] = m
}

// Limit returns why platform never does f, or "" when it may (its
// driver's Capabilities then decide, device by device).
func Limit(platform string, f Feature) string {
	regMu.Lock()
	defer regMu.Unlock()
	return limits[platform][f]
}

// Register makes a platform available to Open. It is called from the
// drivers' init functions and panics on an empty name, a nil open function
// or a platform registered before: a second driver never silently
// replaces the first.
func Register(platform string, open func(Config) (Driver, error)) {
	regMu.Lock()
	defer regMu.Unlock()
	if platform == "" || open == nil {
		panic("drivers: Register needs a platform name and an open function")
	}
	if _, dup := registry[platform]; dup {
		panic(fmt.Sprintf("drivers: platform %q registered twice", platform))
	}
	registry[platform] = open
}

// Platforms lists the registered platforms.
func Platforms() []string {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]string, 0, len(registry))
	for p := range registry {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Open connects to a device with the driver of its platform.
func Open(platform string, cfg Config) (Driver, error) {
	regMu.Lock()
	open, ok := registry[platform]
	regMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown platform %q (have %s)", platform, strings.Join(Platforms(), ", "))
	}
	return open(cfg)
}

// Reverter is implemented by drivers that can undo what their Apply
// changed: a run on real hardware applies the features it needs and
// restores every device's earlier state at the end.
type Reverter interface {
	// CanRevert returns an error naming the change when Revert could not
	// undo it; callers check every change of a Diff before applying it.
	CanRevert(c Change) error
	// Revert restores the Old value of every change in applied (as
	// returned by Apply), last first, and returns the changes it undid
	// (on an error, those undone before it).
	Revert(ctx context.Context, applied Diff) (Diff, error)
}

// Inverse is the change that undoes c.
func (c Change) Inverse() Change {
	return Change{Feature: c.Feature, Key: c.Key, Old: c.New, New: c.Old}
}

// Forwarding is whether a device routes packets between its ports.
type Forwarding struct{ IPv4, IPv6 bool }
