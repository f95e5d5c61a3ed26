// Package linux is the fabricbench driver for Linux hosts and routers: it
// logs in over SSH (golang.org/x/crypto/ssh, host keys always verified
// against the configured known_hosts file), or with docker exec when the
// device is a container on this machine (drivers.Config.Container), and
// works with iproute2 and sysctl.
//
// Features:
//
//   - ecmp-hash: the kernel's multipath hash policy
//     (net.ipv4.fib_multipath_hash_policy, net.ipv6.fib_multipath_hash_policy).
//     The 5-tuple (src-ip, dst-ip, protocol, src-port, dst-port) is policy
//     1; any other field set is policy 3 with fib_multipath_hash_fields,
//     when the kernel has that sysctl. For RoCEv2 and other UDP
//     encapsulations the per-flow entropy lives in the UDP source port, so
//     the 5-tuple (policy 1) is what spreads them over the paths.
//   - vrf: VRF devices (ip link add NAME type vrf table N), when the kernel
//     can make them; the capability is probed by creating and deleting a
//     uniquely named VRF device.
//   - srv6-usid: seg6local routes with the next-csid flavor: uN is End
//     with next-csid on the SID device sr0, uA is End.X with next-csid, uDT46 is
//     End.DT46 into a VRF table (needs a VRF device), uDX4 and uDX6 are
//     End.DX4 and End.DX6 (ip -6 route replace SID encap seg6local action
//     End.DX4 nh4 NEXTHOP dev DEV), and steering is a seg6 encap route (ip
//     route replace PREFIX encap seg6 mode encap segs S1,S2 dev DEV
//     [table T]). uN and End SIDs are not on lo: the kernel turns IPv6
//     routes through the loopback into reject routes, which drop transit
//     traffic; the driver makes sr0 (ip link add sr0 type dummy, or a veth
//     pair sr0/sr0p when the kernel has no dummy devices) and keeps it up.
//     SRv6 also turns on seg6_enabled (all, default and every interface)
//     and IPv6 forwarding. Routes are installed with the
//     kernel's default metric (1024 for IPv6, 0 for IPv4) in the main
//     table (the VRF's table for VRF steering, Steer.Table for policy
//     steering). SRv6.Rules are policy rules (ip -4|-6 rule add fwmark M
//     lookup T pref P); other rules selecting on the same mark alone are
//     deleted (ip -4|-6 rule del pref P fwmark M lookup T). End.DX4,
//     End.DX6 and policy rules are probed with the capabilities; a kernel
//     without them refuses such requests with a *drivers.CapabilityError
//     carrying the kernel's message.
//   - ecn-wred, pfc and trimming are not configured by this driver.
//
// Diff reads the running state (sysctls, `ip -j route`, `ip -N -j rule`,
// links) and lists only what differs; Apply runs only those commands, so
// applying twice changes nothing. Verify reads everything back and
// returns one check per sysctl, VRF, SID, steered route and policy rule
// with the device's own line as evidence.
package linux

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/drivers/remote"
	"github.com/fabricbench/fabricbench/drivers/sshx"
)

// Platform is the registry name of this driver.
const Platform = "linux"

func init() {
	drivers.Register(Platform, Open)
	drivers.RegisterLimits(Platform, map[drivers.Feature]string{
		drivers.FeatECN:         "the linux driver does not configure WRED/ECN (it would replace the links' root qdiscs)",
		drivers.FeatPFC:         reasonPFC,
		drivers.FeatTrimming:    reasonTrimming,
		drivers.FeatPFCWatchdog: reasonPFC,
		drivers.FeatQueueSize:   ReasonQueueSize,
		drivers.FeatAdaptive:    ReasonAdaptive,
	})
}

// Driver manages one Linux device over one SSH connection. It implements
// drivers.Driver and is safe for concurrent use; Apply calls run one at a
// time.
type Driver struct {
	name string
	sh   sshx.Shell

	mu     sync.Mutex // guards probe
	probe  *probes
	applyM sync.Mutex
}

var _ drivers.Driver = (*Driver)(nil)

// Open connects to the device described by cfg (drivers.Register
// signature).
func Open(cfg drivers.Config) (drivers.Driver, error) {
	d, err := New(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// New connects to the device described by cfg. cfg.KnownHosts is
// required; cfg.Options must be empty (the driver has none).
func New(ctx context.Context, cfg drivers.Config) (*Driver, error) {
	name := sshx.Name(cfg)
	if len(cfg.Options) > 0 {
		return nil, fmt.Errorf("linux %s: the linux driver takes no Options (got %d)", name, len(cfg.Options))
	}
	c, err := remote.Dial(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("linux %s: %w", name, err)
	}
	return &Driver{name: name, sh: c}, nil
}

// Platform returns "linux".
func (d *Driver) Platform() string { return Platform }

// Device returns the device name used in messages.
func (d *Driver) Device() string { return d.name }

// Shell returns the driver's shell: an SSH connection (*sshx.Client, for
// drivers that compose this one, e.g. to open more sessions on it) or
// docker exec into the device's container.
func (d *Driver) Shell() sshx.Shell { return d.sh }

// Batch runs commands in one SSH session, in order (see
// sshx.Client.RunBatch); with stopOnError it stops at the first failure.
func (d *Driver) Batch(ctx context.Context, cmds []string, stopOnError bool) ([]sshx.Result, error) {
	res, err := d.sh.RunBatch(ctx, cmds, stopOnError)
	if err != nil {
		return nil, fmt.Errorf("linux %s: %w", d.name, err)
	}
	return res, nil
}

// ParseAddrs parses the reply of `ip -j addr show` into link states.
func ParseAddrs(out string) ([]drivers.LinkState, error) {
	links, err := parseLinks(out)
	if err != nil {
		return nil, err
	}
	return linkStates(links)
}

// Close closes the SSH connection.
func (d *Driver) Close() error {
	if err := d.sh.Close(); err != nil {
		return fmt.Errorf("linux %s: close: %w", d.name, err)
	}
	return nil
}

// Exec runs cmd in a new SSH session and returns its combined output. A
// non-zero exit is an error naming the command, with the trimmed output.
func (d *Driver) Exec(ctx context.Context, cmd string) (string, error) {
	out, err := d.sh.Run(ctx, cmd)
	if err != nil {
		return out, fmt.Errorf("linux %s: %w", d.name, err)
	}
	return out, nil
}

// badReply is an unparseable reply to cmd.
func (d *Driver) badReply(cmd, out string, err error) error {
	return fmt.Errorf("linux %s: `%s` returned an unexpected reply: %v (reply: %q)", d.name, cmd, err, sshx.Excerpt(out, 300))
}

// shellQuote quotes s for sh: words of safe characters stay as they are.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// probes are the cached capability probes of a device.
type probes struct {
	caps drivers.Capabilities
	// hashFields: the kernel has fib_multipath_hash_fields (policy 3).
	hashFields bool
	// Why the kernel cannot do seg6local End.DX4 and End.DX6 routes and
	// IPv4 and IPv6 policy rules ("" when it can), in its own words.
	dx4, dx6, rules4, rules6 string
	// dummy: the kernel makes dummy devices (for the SID device sr0).
	dummy bool
}

const (
	reasonPFC      = "Linux veth/NICs without DCB: PFC needs a NIC with DCB (lldpad/dcbtool)"
	reasonTrimming = "packet trimming is a switch ASIC feature; not available on Linux"
	// ReasonQueueSize and ReasonAdaptive are why the linux (and frr)
	// drivers set no queue sizes and no adaptive routing.
	ReasonQueueSize = "the linux and frr drivers do not set queue sizes: a router's egress queue is its interfaces' root qdisc (a bfifo limit), which they do not manage"
	ReasonAdaptive  = "the Linux kernel picks a multipath route's next hop by hash only (fib_multipath_hash_policy): it has no adaptive routing or flowlet switching"
	reasonNoRED     = "no red qdisc in this kernel"
)

// Capabilities probes the device once (later calls return the cached
// result): the multipath hash sysctls, a VRF device, seg6local with the
// next-csid flavor, End.DX4 and End.DX6, IPv4 and IPv6 policy rules, a
// dummy device and the red qdisc.
func (d *Driver) Capabilities(ctx context.Context) (drivers.Capabilities, error) {
	p, err := d.probes(ctx)
	if err != nil {
		return nil, err
	}
	out := make(drivers.Capabilities, len(p.caps))
	for k, v := range p.caps {
		out[k] = v
	}
	return out, nil
}

func (d *Driver) probes(ctx context.Context) (*probes, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.probe != nil {
		return d.probe, nil
	}
	p := &probes{caps: drivers.Capabilities{
		drivers.FeatBGP:         {Reason: "plain Linux runs no BGP daemon (use the frr platform for FRR routers)"},
		drivers.FeatPFC:         {Reason: reasonPFC},
		drivers.FeatTrimming:    {Reason: reasonTrimming},
		drivers.FeatPFCWatchdog: {Reason: reasonPFC},
		drivers.FeatQueueSize:   {Reason: ReasonQueueSize},
		drivers.FeatAdaptive:    {Reason: ReasonAdaptive},
	}}

	// All probes run in one session: the multipath hash sysctls; a
	// uniquely named VRF device, deleted at once; iproute2 and kernel
	// support for seg6local next-csid (a route in a private table, deleted
	// at once); the red qdisc on a transient veth pair.
	hashCmd := sysctlCmd([]sysctl{hashPolicy4, hashPolicy6, hashFields4, hashFields6})
	vrf := "fbv" + randomHex(4)
	vrfCmd := fmt.Sprintf("ip link add %s type vrf table %d; rc=$?; ip link del %s >/dev/null 2>&1; exit $rc", vrf, 100000+randInt(100000), vrf)
	pfx := fmt.Sprintf("fdfb:%s:%s::/48", randomHex(2), randomHex(2))
	srv6Cmd := `ip -6 route help 2>&1 | grep -q next-csid && echo iproute2-next-csid; ` +
		`test -e /proc/sys/net/ipv6/conf/all/seg6_enabled && echo seg6-sysctl; ` +
		fmt.Sprintf(`if ip -6 route add %s encap seg6local action End flavors next-csid lblen 32 nflen 16 dev lo table 4242; then echo kernel-next-csid; ip -6 route del %s table 4242 >/dev/null 2>&1; fi; true`, pfx, pfx)
	veth := "fbq" + randomHex(4)
	redCmd := fmt.Sprintf(`if ip link add %[1]s type veth peer name %[1]sp >/dev/null 2>&1; then `+
		`tc qdisc add dev %[1]s root red limit 400000 min 30000 max 90000 avpkt 1000 burst 55 probability 0.02 bandwidth 10mbit ecn && echo red-ok; `+
		`ip link del %[1]s >/dev/null 2>&1; `+
		`else echo no-veth; (grep -qw sch_red /proc/modules 2>/dev/null || find /lib/modules/$(uname -r) -name 'sch_red.ko*' 2>/dev/null | grep -q .) && echo red-module; fi; true`, veth)
	// End.DX4 and End.DX6 routes in the private table, deleted at once;
	// reading the policy rules of each family.
	dxPfx := fmt.Sprintf("fdfb:%s:%s::/48", randomHex(2), randomHex(2))
	dxCmd := func(action, nh string) string {
		return fmt.Sprintf("ip -6 route add %s encap seg6local action %s %s dev lo table 4242; rc=$?; ip -6 route del %s table 4242 >/dev/null 2>&1; exit $rc", dxPfx, action, nh, dxPfx)
	}
	dx4Cmd, dx6Cmd := dxCmd("End.DX4", "nh4 192.0.2.1"), dxCmd("End.DX6", "nh6 2001:db8::1")
	rules4Cmd, rules6Cmd := "ip -4 rule show >/dev/null", "ip -6 rule show >/dev/null"
	dummy := "fbd" + randomHex(4)
	dummyCmd := fmt.Sprintf("ip link add %s type dummy >/dev/null 2>&1; rc=$?; ip link del %s >/dev/null 2>&1; exit $rc", dummy, dummy)
	res, err := d.sh.RunBatch(ctx, []string{hashCmd, vrfCmd, srv6Cmd, redCmd, dx4Cmd, dx6Cmd, rules4Cmd, rules6Cmd, dummyCmd}, false)
	if err != nil {
		return nil, fmt.Errorf("linux %s: capability probes: %w", d.name, err)
	}
	for _, r := range []sshx.Result{res[0], res[2], res[3]} {
		if err := r.Err(); err != nil {
			return nil, fmt.Errorf("linux %s: capability probe: %w", d.name, err)
		}
	}

	sys, err := parseSysctlDump(res[0].Output)
	if err != nil {
		return nil, d.badReply(hashCmd, res[0].Output, err)
	}
	_, ok4 := sys[hashPolicy4.path]
	_, ok6 := sys[hashPolicy6.path]
	switch {
	case ok4 && ok6:
		p.caps[drivers.FeatECMPHash] = drivers.Support{Supported: true, Mode: "l4"}
		_, f4 := sys[hashFields4.path]
		_, f6 := sys[hashFields6.path]
		p.hashFields = f4 && f6
	default:
		p.caps[drivers.FeatECMPHash] = drivers.Support{Reason: "the kernel has no net.ipv4/ipv6.fib_multipath_hash_policy sysctl (no multipath routing)"}
	}

	if res[1].Status != 0 {
		p.caps[drivers.FeatVRF] = drivers.Support{Reason: "the kernel cannot make a VRF device: `ip link add NAME type vrf table N`: " + firstLine(strings.ReplaceAll(res[1].Output, vrf, "NAME"))}
	} else {
		p.caps[drivers.FeatVRF] = drivers.Support{Supported: true, Mode: "vrf-device"}
	}

	out := res[2].Output
	switch {
	case !strings.Contains(out, "iproute2-next-csid"):
		p.caps[drivers.FeatSRv6] = drivers.Support{Reason: "iproute2 on the device does not know the seg6local next-csid flavor (`ip -6 route help`)"}
	case !strings.Contains(out, "seg6-sysctl"):
		p.caps[drivers.FeatSRv6] = drivers.Support{Reason: "the kernel has no SRv6 (net.ipv6.conf.all.seg6_enabled is missing)"}
	case !strings.Contains(out, "kernel-next-csid"):
		p.caps[drivers.FeatSRv6] = drivers.Support{Reason: "the kernel refused a seg6local End route with next-csid: " + firstLine(strings.ReplaceAll(
			strings.ReplaceAll(strings.ReplaceAll(out, "iproute2-next-csid", ""), "seg6-sysctl", ""), pfx, "PREFIX"))}
	default:
		p.caps[drivers.FeatSRv6] = drivers.Support{Supported: true, Mode: "seg6local-next-csid"}
	}

	if res[4].Status != 0 {
		p.dx4 = "the kernel refused a seg6local End.DX4 route: `ip -6 route add PREFIX encap seg6local action End.DX4 nh4 192.0.2.1 dev lo`: " + firstLine(strings.ReplaceAll(res[4].Output, dxPfx, "PREFIX"))
	}
	if res[5].Status != 0 {
		p.dx6 = "the kernel refused a seg6local End.DX6 route: `ip -6 route add PREFIX encap seg6local action End.DX6 nh6 2001:db8::1 dev lo`: " + firstLine(strings.ReplaceAll(res[5].Output, dxPfx, "PREFIX"))
	}
	if res[6].Status != 0 {
		p.rules4 = "the kernel has no IPv4 policy routing rules (`ip -4 rule show`: " + firstLine(res[6].Output) + ")"
	}
	if res[7].Status != 0 {
		p.rules6 = "the kernel has no IPv6 policy routing rules (`ip -6 rule show`: " + firstLine(res[7].Output) + ")"
	}
	p.dummy = res[8].Status == 0
	if p.rules4 == "" && p.rules6 == "" {
		p.caps[drivers.FeatVRFRules] = drivers.Support{Supported: true, Mode: "prohibit-rules"}
	} else {
		p.caps[drivers.FeatVRFRules] = drivers.Support{Reason: strings.TrimSpace(p.rules4 + " " + p.rules6)}
	}

	out = res[3].Output
	switch {
	case strings.Contains(out, "red-ok"), strings.Contains(out, "red-module"):
		p.caps[drivers.FeatECN] = drivers.Support{Reason: "the kernel has the red qdisc, but this driver does not configure WRED/ECN on Linux (it would replace the links' root qdiscs)"}
	case strings.Contains(out, "no-veth"):
		p.caps[drivers.FeatECN] = drivers.Support{Reason: reasonNoRED + " (no sch_red module found)"}
	default:
		p.caps[drivers.FeatECN] = drivers.Support{Reason: reasonNoRED + " (tc: " + firstLine(strings.ReplaceAll(out, veth, "DEV")) + ")"}
	}
	d.probe = p
	return p, nil
}

func randInt(n int) int {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return int(uint32(b[0])<<24|uint32(b[1])<<16|uint32(b[2])<<8|uint32(b[3])) % n
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "(no message)"
	}
	return s
}

// Facts reads the hostname, OS (os-release and kernel), interfaces and
// the VRF mode.
func (d *Driver) Facts(ctx context.Context) (*drivers.Facts, error) {
	p, err := d.probes(ctx)
	if err != nil {
		return nil, err
	}
	if ctx, err = d.prefetch(ctx, cmdFactsBase, cmdLinks); err != nil {
		return nil, err
	}
	f, err := query(ctx, d, cmdFactsBase, parseFacts)
	if err != nil {
		return nil, err
	}
	f.Platform = Platform
	links, err := query(ctx, d, cmdLinks, parseLinks)
	if err != nil {
		return nil, err
	}
	for _, l := range links {
		if l.Ifname != "lo" {
			f.Interfaces = append(f.Interfaces, l.Ifname)
		}
	}
	if s := p.caps[drivers.FeatVRF]; s.Supported {
		f.VRFMode = s.Mode
	}
	return f, nil
}

// parseFacts parses the output of "hostname; uname -r; cat /etc/os-release".
func parseFacts(out string) (*drivers.Facts, error) {
	lines := strings.Split(strings.ReplaceAll(out, "\r", ""), "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[0]) == "" || strings.TrimSpace(lines[1]) == "" {
		return nil, errors.New("want the hostname and the kernel release on the first two lines")
	}
	f := &drivers.Facts{Hostname: strings.TrimSpace(lines[0])}
	kernel := strings.TrimSpace(lines[1])
	osName := ""
	for _, l := range lines[2:] {
		k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"'`)
		switch k {
		case "PRETTY_NAME":
			osName = v
		case "NAME":
			if osName == "" {
				osName = v
			}
		}
	}
	if osName == "" {
		osName = "Linux"
	}
	f.OSVersion = osName + ", kernel " + kernel
	return f, nil
}

// Links reads the interfaces of the device's default network namespace,
// or of namespace netns when it is not empty (ip -n NETNS).
func (d *Driver) Links(ctx context.Context, netns string) ([]drivers.LinkState, error) {
	cmd := cmdAddrs
	if netns != "" {
		cmd = "ip -n " + shellQuote(netns) + " -j addr show"
	}
	links, err := query(ctx, d, cmd, parseLinks)
	if err != nil {
		return nil, err
	}
	ls, err := linkStates(links)
	if err != nil {
		return nil, d.badReply(cmd, "", err)
	}
	return ls, nil
}

// Routes reads the IPv4 and IPv6 routes of the main table (or of table
// when it is not 0, reported with VRF vrf), resolving nexthop objects.
func (d *Driver) Routes(ctx context.Context, table int, vrf string) ([]drivers.Route, error) {
	var out []drivers.Route
	for _, fam := range []int{4, 6} {
		cmd := routesJSONCmd(fam, table)
		rs, err := query(ctx, d, cmd, parseRoutes)
		if err != nil {
			return nil, err
		}
		var objs map[int]ipNexthopObj
		if needsNHObjects(rs) {
			if objs, err = query(ctx, d, cmdNexthops, parseNexthopObjects); err != nil {
				return nil, err
			}
		}
		routes, err := toRoutes(rs, fam == 6, vrf, objs)
		if err != nil {
			return nil, d.badReply(cmd, "", err)
		}
		out = append(out, routes...)
	}
	return out, nil
}

// SIDs reads the installed SRv6 local SIDs (seg6local routes of the main
// IPv6 table): behavior is the kernel action, e.g. End, with its flavors.
func (d *Driver) SIDs(ctx context.Context) ([]drivers.SIDState, error) {
	routes, err := d.seg6Routes(ctx, 6, 0)
	if err != nil {
		return nil, err
	}
	var out []drivers.SIDState
	for _, r := range routes {
		if r.Encap == "seg6local" {
			nh := r.NH6
			if r.NH4.IsValid() {
				nh = r.NH4
			}
			out = append(out, drivers.SIDState{Addr: r.Prefix, Behavior: r.Action, Flavors: r.Flavors, Nexthop: nh, Dev: r.Dev})
		}
	}
	return out, nil
}

// stateReads are the commands State reads (in one batch).
func (d *Driver) stateReads(p *probes) []string {
	cmds := []string{cmdAddrs, routesJSONCmd(4, 0), routesJSONCmd(6, 0), cmdNexthops, cmdNeigh, cmdLLDP, cmdForwarding}
	if p.caps[drivers.FeatVRF].Supported {
		cmds = append(cmds, cmdVRFs)
	}
	if p.rules4 == "" {
		cmds = append(cmds, rulesCmd(4))
	}
	if p.rules6 == "" {
		cmds = append(cmds, rulesCmd(6))
	}
	return cmds
}

// State reads links (ip -j addr, with MAC and MTU), neighbours (lldpd's,
// when it runs, and the kernel's ARP/ND table), routes (main table, and
// the tables of VRF devices), SRv6 SIDs, the policy rules (ip -N -j rule)
// and the routes of the tables those rules look up (PolicyRoutes). Plain
// Linux has no BGP.
func (d *Driver) State(ctx context.Context) (*drivers.State, error) {
	p, err := d.probes(ctx)
	if err != nil {
		return nil, err
	}
	vrf := p.caps[drivers.FeatVRF].Supported
	if ctx, err = d.prefetch(ctx, d.stateReads(p)...); err != nil {
		return nil, err
	}
	st := &drivers.State{}
	if st.Links, err = d.Links(ctx, ""); err != nil {
		return nil, err
	}
	if st.Neighbors, err = d.Neighbors(ctx); err != nil {
		return nil, err
	}
	if st.Routes, err = d.Routes(ctx, 0, ""); err != nil {
		return nil, err
	}
	vrfTables := map[int]bool{}
	if vrf {
		vrfs, err := d.vrfDevices(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range vrfs {
			vrfTables[t] = true
		}
		names := make([]string, 0, len(vrfs))
		for n := range vrfs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			rs, err := d.Routes(ctx, vrfs[n], n)
			if err != nil {
				return nil, err
			}
			st.Routes = append(st.Routes, rs...)
		}
	}
	if st.SIDs, err = d.SIDs(ctx); err != nil {
		return nil, err
	}
	fwd, err := query(ctx, d, cmdForwarding, parseForwarding)
	if err != nil {
		return nil, err
	}
	st.Forwarding = &fwd
	for _, fam := range []int{4, 6} {
		if (fam == 4 && p.rules4 != "") || (fam == 6 && p.rules6 != "") {
			continue
		}
		rs, err := query(ctx, d, rulesCmd(fam), func(s string) ([]ipRule, error) { return parseRules(s, fam) })
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			st.Rules = append(st.Rules, r.st)
		}
	}
	tables := policyTables(st.Rules, vrfTables)
	if len(tables) > 0 {
		var reads []string
		for _, t := range tables {
			reads = append(reads, routesJSONCmd(4, t), routesJSONCmd(6, t))
		}
		if ctx, err = d.prefetch(ctx, reads...); err != nil {
			return nil, err
		}
		for _, t := range tables {
			rs, err := d.Routes(ctx, t, "")
			if err != nil {
				return nil, err
			}
			for i := range rs {
				rs[i].Table = t
			}
			st.PolicyRoutes = append(st.PolicyRoutes, rs...)
		}
	}
	return st, nil
}

// Neighbors reads the neighbours lldpd has seen (when it runs) and the
// kernel's neighbour table (ARP and ND entries with a link layer address).
func (d *Driver) Neighbors(ctx context.Context) ([]drivers.Neighbor, error) {
	lldp, err := query(ctx, d, cmdLLDP, parseLLDP)
	if err != nil {
		return nil, err
	}
	nd, err := query(ctx, d, cmdNeigh, parseNeighbors)
	if err != nil {
		return nil, err
	}
	return append(lldp, nd...), nil
}

// vrfDevices maps the VRF devices to their tables.
func (d *Driver) vrfDevices(ctx context.Context) (map[string]int, error) {
	links, err := query(ctx, d, cmdVRFs, parseLinks)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, l := range links {
		if l.Linkinfo == nil || l.Linkinfo.InfoData == nil || l.Linkinfo.InfoData.Table == 0 {
			return nil, d.badReply(cmdVRFs, "", fmt.Errorf("VRF %s without a table", l.Ifname))
		}
		out[l.Ifname] = l.Linkinfo.InfoData.Table
	}
	return out, nil
}

// seg6Routes reads the seg6/seg6local routes of one family and table from
// the JSON form, falling back to the text form when the JSON lacks the
// encapsulation details (older iproute2).
func (d *Driver) seg6Routes(ctx context.Context, family, table int) ([]seg6Route, error) {
	cmd := routesJSONCmd(family, table)
	rs, err := query(ctx, d, cmd, parseRoutes)
	if err != nil {
		return nil, err
	}
	var out []seg6Route
	for _, r := range rs {
		s, ok, full, err := seg6FromJSON(r, family == 6)
		if err != nil {
			return nil, d.badReply(cmd, "", err)
		}
		if !full {
			routes, _, err := d.seg6Text(ctx, family, table)
			return routes, err
		}
		if ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// seg6Text reads the text form of `ip route show`: the seg6 routes and
// every route's line by prefix.
func (d *Driver) seg6Text(ctx context.Context, family, table int) ([]seg6Route, map[netip.Prefix]string, error) {
	cmd := routesTextCmd(family, table)
	out, err := d.read(ctx, cmd)
	if err != nil {
		return nil, nil, err
	}
	routes, lines, err := parseSeg6Text(out, family == 6)
	if err != nil {
		return nil, nil, d.badReply(cmd, out, err)
	}
	return routes, lines, nil
}
