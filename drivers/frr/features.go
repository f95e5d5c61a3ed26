package frr

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/drivers/linux"
)

// MaxPaths is the eBGP maximum-paths the ecmp-hash feature sets.
const MaxPaths = "64"

const (
	reasonTrimming = "FRR/Linux: packet trimming is a switch ASIC feature"
	reasonAdaptive = "FRR installs equal-cost routes and the Linux kernel picks a multipath route's next hop by hash only (fib_multipath_hash_policy): it has no adaptive routing or flowlet switching"
	reasonPFC      = "FRR does not configure PFC; Linux veth/NICs without DCB: PFC needs a NIC with DCB (lldpad/dcbtool)"
)

// Capabilities probes the router once (later calls return the cached
// result): bgpd (show daemons), the kernel's probes through the linux
// driver, and zebra's VRF mode (show zebra, else zebra's command line).
func (d *Driver) Capabilities(ctx context.Context) (drivers.Capabilities, error) {
	d.capMu.Lock()
	defer d.capMu.Unlock()
	if d.caps == nil {
		caps, err := d.probe(ctx)
		if err != nil {
			return nil, err
		}
		d.caps = caps
	}
	out := make(drivers.Capabilities, len(d.caps))
	for k, v := range d.caps {
		out[k] = v
	}
	return out, nil
}

func (d *Driver) probe(ctx context.Context) (drivers.Capabilities, error) {
	lc, err := d.lx.Capabilities(ctx)
	if err != nil {
		return nil, fmt.Errorf("frr %s: %w", d.name, err)
	}
	caps := drivers.Capabilities{}

	out, err := d.Vtysh(ctx, "show daemons")
	if err != nil {
		return nil, err
	}
	daemons := strings.Fields(out)
	if contains(daemons, "bgpd") {
		caps[drivers.FeatBGP] = drivers.Support{Supported: true}
	} else {
		caps[drivers.FeatBGP] = drivers.Support{Reason: fmt.Sprintf("bgpd is not running (show daemons: %s)", strings.Join(daemons, " "))}
	}

	if s := lc[drivers.FeatECMPHash]; s.Supported {
		caps[drivers.FeatECMPHash] = drivers.Support{Supported: true, Mode: s.Mode}
	} else {
		caps[drivers.FeatECMPHash] = drivers.Support{Reason: s.Reason}
	}

	switch s := lc[drivers.FeatVRF]; {
	case s.Supported:
		caps[drivers.FeatVRF] = drivers.Support{Supported: true, Mode: "vrf-device"}
	default:
		netns, how, err := d.zebraNetns(ctx)
		if err != nil {
			return nil, err
		}
		if netns {
			caps[drivers.FeatVRF] = drivers.Support{Supported: true, Mode: "netns"}
		} else {
			caps[drivers.FeatVRF] = drivers.Support{Reason: fmt.Sprintf("no VRF device (%s) and zebra does not run in netns VRF mode (-n): %s", s.Reason, how)}
		}
	}

	if s := lc[drivers.FeatSRv6]; s.Supported {
		// FRR 8.4 has no micro-SIDs; the kernel data plane does.
		caps[drivers.FeatSRv6] = drivers.Support{Supported: true, Mode: "kernel-seg6local"}
	} else {
		caps[drivers.FeatSRv6] = drivers.Support{Reason: "FRR 8.4 has no SRv6 micro-SIDs and the kernel data plane cannot do them: " + s.Reason}
	}
	caps[drivers.FeatVRFRules] = lc[drivers.FeatVRFRules]
	caps[drivers.FeatECN] = drivers.Support{Reason: "FRR does not configure WRED/ECN; " + lc[drivers.FeatECN].Reason}
	caps[drivers.FeatPFC] = drivers.Support{Reason: reasonPFC}
	caps[drivers.FeatTrimming] = drivers.Support{Reason: reasonTrimming}
	caps[drivers.FeatPFCWatchdog] = drivers.Support{Reason: reasonPFC}
	caps[drivers.FeatQueueSize] = drivers.Support{Reason: linux.ReasonQueueSize}
	caps[drivers.FeatAdaptive] = drivers.Support{Reason: reasonAdaptive}
	return caps, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// zebraCmdline prints the command line of the zebra of this network
// namespace (pidof sees every zebra of the machine when the router is a
// network namespace sharing the PID namespace).
const zebraCmdline = `me=$(readlink /proc/self/ns/net); for p in $(pidof zebra); do ` +
	`[ "$(readlink /proc/$p/ns/net)" = "$me" ] && tr '\0' ' ' < /proc/$p/cmdline && echo; done; true`

// zebraNetns reports whether zebra runs in netns VRF mode: `show zebra`
// says "VRF Namespaces", or zebra's command line has -n/--vrfwnetns.
func (d *Driver) zebraNetns(ctx context.Context) (bool, string, error) {
	out, err := d.Vtysh(ctx, "show zebra")
	if err != nil {
		return false, "", err
	}
	if _, netns := parseZebra(out); netns {
		return true, "show zebra: VRF Namespaces", nil
	}
	cl, err := d.Exec(ctx, zebraCmdline)
	if err != nil {
		return false, "", err
	}
	cl = strings.TrimSpace(cl)
	if strings.Contains(" "+cl+" ", " -n ") || strings.Contains(cl, "--vrfwnetns") {
		return true, "zebra " + cl, nil
	}
	if cl == "" {
		return false, "no zebra process found in this network namespace", nil
	}
	return false, "zebra runs as: " + cl, nil
}

// vtyItem is one planned vtysh configuration change.
type vtyItem struct {
	change drivers.Change
	lines  []string
}

// shItem is one planned shell change.
type shItem struct {
	change drivers.Change
	cmd    string
}

// fplan is what Diff, Apply and Verify share.
type fplan struct {
	vty    []vtyItem
	sh     []shItem
	checks []drivers.Check
	lx     *drivers.DeviceFeatures // the kernel part, for the linux driver
	drop   map[string]bool         // linux change keys the vtysh part makes
	vrfs   []string                // netns VRFs to wait for in zebra
}

func (p *fplan) check(device string, f drivers.Feature, name string, ok bool, ev string) {
	p.checks = append(p.checks, drivers.Check{Device: device, Feature: f, Name: name, OK: ok, Evidence: ev})
}

func (p *fplan) diff() drivers.Diff {
	out := drivers.Diff{}
	for _, it := range p.vty {
		out = append(out, it.change)
	}
	for _, it := range p.sh {
		out = append(out, it.change)
	}
	return out
}

func (p *fplan) filter(d drivers.Diff) drivers.Diff {
	out := drivers.Diff{}
	for _, c := range d {
		if !p.drop[c.Key] {
			out = append(out, c)
		}
	}
	return out
}

// Diff returns what Apply would change, changing nothing.
func (d *Driver) Diff(ctx context.Context, want *drivers.DeviceFeatures) (drivers.Diff, error) {
	p, err := d.plan(ctx, want)
	if err != nil {
		return nil, err
	}
	out := p.diff()
	if p.lx != nil {
		ld, err := d.lx.Diff(ctx, p.lx)
		if err != nil {
			return nil, d.wrapLinux(err)
		}
		out = append(out, p.filter(ld)...)
	}
	return out, nil
}

// Apply makes the router match want: vtysh configuration first, then the
// VRF namespaces, then the kernel data plane. It returns what it changed
// (on an error, what it changed before it).
func (d *Driver) Apply(ctx context.Context, want *drivers.DeviceFeatures) (drivers.Diff, error) {
	d.applyMu.Lock()
	defer d.applyMu.Unlock()
	p, err := d.plan(ctx, want)
	if err != nil {
		return nil, err
	}
	done := drivers.Diff{}
	if len(p.vty) > 0 {
		var lines []string
		for _, it := range p.vty {
			lines = append(lines, it.lines...)
		}
		if err := d.Configure(ctx, lines); err != nil {
			return done, err
		}
		for _, it := range p.vty {
			done = append(done, it.change)
		}
	}
	if len(p.sh) > 0 {
		cmds := make([]string, len(p.sh))
		for i, it := range p.sh {
			cmds[i] = it.cmd
		}
		res, err := d.lx.Batch(ctx, cmds, true)
		if err != nil {
			return done, fmt.Errorf("frr %s: %w", d.name, err)
		}
		for i, r := range res {
			if err := r.Err(); err != nil {
				return done, fmt.Errorf("frr %s: apply %s: %w", d.name, p.sh[i].change, err)
			}
			done = append(done, p.sh[i].change)
		}
	}
	for _, v := range p.vrfs {
		if err := d.waitZebraVRF(ctx, v); err != nil {
			return done, err
		}
	}
	if p.lx != nil {
		ld, err := d.lx.Apply(ctx, p.lx)
		done = append(done, ld...)
		if err != nil {
			return done, d.wrapLinux(err)
		}
	}
	return done, nil
}

// Verify reads the router back and checks every requested feature.
func (d *Driver) Verify(ctx context.Context, want *drivers.DeviceFeatures) ([]drivers.Check, error) {
	p, err := d.plan(ctx, want)
	if err != nil {
		return nil, err
	}
	out := p.checks
	if p.lx != nil {
		lc, err := d.lx.Verify(ctx, p.lx)
		if err != nil {
			return nil, d.wrapLinux(err)
		}
		out = append(out, lc...)
	}
	return out, nil
}

// wrapLinux turns the linux driver's capability errors into this
// platform's and names the device in other errors.
func (d *Driver) wrapLinux(err error) error {
	var ce *drivers.CapabilityError
	if errors.As(err, &ce) {
		return &drivers.CapabilityError{Platform: Platform, Device: d.name, Feature: ce.Feature, Reason: "kernel data plane: " + ce.Reason}
	}
	return fmt.Errorf("frr %s: %w", d.name, err)
}

// plan computes the vtysh and namespace changes and checks for want, and
// what the linux driver is to do.
func (d *Driver) plan(ctx context.Context, want *drivers.DeviceFeatures) (*fplan, error) {
	p := &fplan{drop: map[string]bool{}}
	if want == nil {
		return p, nil
	}
	caps, err := d.Capabilities(ctx)
	if err != nil {
		return nil, err
	}
	if err := drivers.CheckCapabilities(Platform, d.name, caps, want); err != nil {
		return nil, err
	}
	vrfMode := caps[drivers.FeatVRF].Mode
	if want.SRv6 != nil && vrfMode != "vrf-device" {
		if err := d.checkSRv6NetnsVRF(want.SRv6, vrfMode); err != nil {
			return nil, err
		}
	}
	lx := &drivers.DeviceFeatures{ECMPHash: want.ECMPHash, SRv6: want.SRv6, Isolation: want.Isolation}
	if vrfMode == "vrf-device" {
		lx.VRFs = want.VRFs
	}
	if len(lx.Requested()) > 0 {
		p.lx = lx
	}

	if len(want.ECMPHash) > 0 || want.ECMPWidth > 0 || want.SRv6 != nil {
		cfg, err := d.Vtysh(ctx, "show running-config")
		if err != nil {
			return nil, err
		}
		if len(want.ECMPHash) > 0 || want.ECMPWidth > 0 {
			zebra, err := d.Vtysh(ctx, "show zebra")
			if err != nil {
				return nil, err
			}
			ecmpMax, _ := parseZebra(zebra)
			if err := d.maxPathsPlan(p, cfg, ecmpMax, want.ECMPWidth); err != nil {
				return nil, err
			}
		}
		if want.SRv6 != nil {
			d.forwardingPlan(p, cfg)
		}
	}
	if len(want.VRFs) > 0 && vrfMode == "netns" {
		if err := d.netnsPlan(ctx, p, want.VRFs); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// checkSRv6NetnsVRF refuses SRv6 that decapsulates or steers into VRFs
// when VRFs are network namespaces.
func (d *Driver) checkSRv6NetnsVRF(srv6 *drivers.SRv6, mode string) error {
	how := "VRFs here are network namespaces (zebra -n), not VRF devices"
	if mode == "" {
		how = "this router has no VRFs"
	}
	for _, s := range srv6.SIDs {
		if b := strings.ToLower(s.Behavior); b == "udt46" || b == "end.dt46" {
			return &drivers.CapabilityError{Platform: Platform, Device: d.name, Feature: drivers.FeatSRv6,
				Reason: fmt.Sprintf("SID %s %s: End.DT46 decapsulates into a VRF table and needs a VRF device; %s", s.Addr, s.Behavior, how)}
		}
	}
	for _, s := range srv6.Steer {
		if s.VRF != "" {
			return &drivers.CapabilityError{Platform: Platform, Device: d.name, Feature: drivers.FeatSRv6,
				Reason: fmt.Sprintf("steering %s in VRF %s needs a VRF device; %s", s.Prefix, s.VRF, how)}
		}
	}
	return nil
}

// maxPathsPlan checks maximum-paths in the ipv4 and ipv6 unicast address
// families of every router bgp: MaxPaths, or width when that is more. A
// width above zebra's ECMP maximum (its build's multipath limit, `show
// zebra`) is a *drivers.CapabilityError: the fabric's equal-cost paths
// would not all be installed.
func (d *Driver) maxPathsPlan(p *fplan, cfg string, ecmpMax, width int) error {
	if ecmpMax > 0 && width > ecmpMax {
		return &drivers.CapabilityError{Platform: Platform, Device: d.name, Feature: drivers.FeatECMPHash,
			Reason: fmt.Sprintf("the fabric gives it %d equal-cost uplinks, but zebra installs at most %d paths per route (show zebra: ECMP Maximum, FRR's --enable-multipath)", width, ecmpMax)}
	}
	maxPaths := MaxPaths
	if n, _ := strconv.Atoi(MaxPaths); width > n {
		maxPaths = strconv.Itoa(width)
	}
	for _, inst := range parseBGPConfig(cfg) {
		for _, af := range []string{"ipv4 unicast", "ipv6 unicast"} {
			cur, set := inst.MaxPaths[af]
			ev := ""
			switch {
			case set:
				ev = "maximum-paths " + cur
			case ecmpMax > 0:
				// Not shown: FRR's default, the ECMP maximum.
				cur = fmt.Sprint(ecmpMax)
				ev = fmt.Sprintf("no maximum-paths line (default %d)", ecmpMax)
			default:
				ev = "no maximum-paths line"
			}
			name := fmt.Sprintf("%s address-family %s maximum-paths %s", inst.Header, af, maxPaths)
			ok := cur == maxPaths
			p.check(d.name, drivers.FeatECMPHash, name, ok, ev)
			if ok {
				continue
			}
			old := ""
			if set {
				old = cur
			}
			p.vty = append(p.vty, vtyItem{
				change: drivers.Change{Feature: drivers.FeatECMPHash, Key: fmt.Sprintf("frr %s address-family %s maximum-paths", inst.Header, af), Old: old, New: maxPaths},
				lines:  []string{inst.Header, "address-family " + af, "maximum-paths " + maxPaths, "exit-address-family", "exit"},
			})
		}
	}
	return nil
}

// forwardingPlan turns on IPv6 forwarding through zebra when the running
// configuration turns it off (SRv6 End/End.X forward).
func (d *Driver) forwardingPlan(p *fplan, cfg string) {
	off := false
	for _, l := range strings.Split(cfg, "\n") {
		if strings.TrimSpace(l) == "no ipv6 forwarding" {
			off = true
		}
	}
	ev := "ipv6 forwarding (default)"
	if off {
		ev = "no ipv6 forwarding"
	}
	p.check(d.name, drivers.FeatSRv6, "frr ipv6 forwarding", !off, ev)
	if off {
		p.vty = append(p.vty, vtyItem{
			change: drivers.Change{Feature: drivers.FeatSRv6, Key: "frr ipv6 forwarding", Old: "no", New: "yes"},
			lines:  []string{"ipv6 forwarding"},
		})
		// zebra sets the sysctl itself.
		p.drop["sysctl net.ipv6.conf.all.forwarding"] = true
	}
}

// netnsPath is where iproute2 keeps named network namespaces.
const netnsPath = "/run/netns/"

// netnsPlan plans VRFs as network namespaces: the namespace, the member
// interfaces moved into it with their addresses, zebra listing it.
func (d *Driver) netnsPlan(ctx context.Context, p *fplan, vrfs []drivers.VRF) error {
	cmds := []string{"ip netns list", "ip -j addr show"}
	for _, v := range vrfs {
		if v.Name == "" || strings.ContainsAny(v.Name, "/ \t'\"\\$`;&|<>(){}*?[]!") || v.Name == "default" || len(v.Name) > 32 {
			return fmt.Errorf("frr %s: bad VRF name %q", d.name, v.Name)
		}
		cmds = append(cmds, fmt.Sprintf("if [ -e %s%s ]; then ip -n %s -j addr show; else echo '[]'; fi", netnsPath, v.Name, v.Name))
	}
	res, err := d.lx.Batch(ctx, cmds, false)
	if err != nil {
		return fmt.Errorf("frr %s: %w", d.name, err)
	}
	for _, r := range res {
		if err := r.Err(); err != nil {
			return fmt.Errorf("frr %s: %w", d.name, err)
		}
	}
	have := parseNetnsList(res[0].Output)
	def, err := linux.ParseAddrs(res[1].Output)
	if err != nil {
		return fmt.Errorf("frr %s: `ip -j addr show` returned an unexpected reply: %v", d.name, err)
	}
	defLinks := map[string]drivers.LinkState{}
	for _, l := range def {
		defLinks[l.Name] = l
	}
	zebra, err := d.Vtysh(ctx, "show vrf")
	if err != nil {
		return err
	}
	zv := parseShowVRF(zebra)
	for i, v := range vrfs {
		ns, err := linux.ParseAddrs(res[2+i].Output)
		if err != nil {
			return fmt.Errorf("frr %s: `ip -n %s -j addr show` returned an unexpected reply: %v", d.name, v.Name, err)
		}
		nsLinks := map[string]drivers.LinkState{}
		for _, l := range ns {
			nsLinks[l.Name] = l
		}
		exists := have[v.Name]
		if exists {
			p.check(d.name, drivers.FeatVRF, "vrf "+v.Name+" netns", true, "ip netns list: "+v.Name)
		} else {
			p.check(d.name, drivers.FeatVRF, "vrf "+v.Name+" netns", false, "ip netns list has no "+v.Name)
			p.sh = append(p.sh, shItem{
				change: drivers.Change{Feature: drivers.FeatVRF, Key: "vrf " + v.Name + " netns", New: netnsPath + v.Name},
				cmd:    fmt.Sprintf("ip netns add %s && ip -n %s link set lo up", v.Name, v.Name),
			})
		}
		zl, seen := zv[v.Name]
		zok := seen && zl.Netns == netnsPath+v.Name
		zev := "show vrf does not list " + v.Name
		if seen {
			zev = "show vrf: " + zl.Line
		}
		p.check(d.name, drivers.FeatVRF, "vrf "+v.Name+" in zebra", zok, zev)
		if !zok {
			p.vrfs = append(p.vrfs, v.Name)
		}
		for _, m := range v.Interfaces {
			name := fmt.Sprintf("vrf %s member %s", v.Name, m)
			if l, ok := nsLinks[m]; ok {
				p.check(d.name, drivers.FeatVRF, name, true, fmt.Sprintf("%s in netns %s: %s", m, v.Name, describe(l)))
				continue
			}
			l, ok := defLinks[m]
			if !ok {
				return fmt.Errorf("frr %s: VRF %s member %s: no such interface in the default namespace or in netns %s", d.name, v.Name, m, v.Name)
			}
			if m == "lo" || m == "mgmt0" {
				return fmt.Errorf("frr %s: VRF %s member %s: refusing to move %s out of the default namespace", d.name, v.Name, m, m)
			}
			p.check(d.name, drivers.FeatVRF, name, false, fmt.Sprintf("%s in the default namespace: %s", m, describe(l)))
			cmd := fmt.Sprintf("ip link set %s netns %s", m, v.Name)
			var addrs []string
			for _, a := range keptAddrs(l) {
				extra := ""
				if a.Addr().Is6() {
					extra = " nodad"
				}
				cmd += fmt.Sprintf(" && ip -n %s addr add %s dev %s%s", v.Name, a, m, extra)
				addrs = append(addrs, a.String())
			}
			if l.Admin {
				cmd += fmt.Sprintf(" && ip -n %s link set %s up", v.Name, m)
			}
			newv := v.Name
			if len(addrs) > 0 {
				newv += " (" + strings.Join(addrs, " ") + ")"
			}
			p.sh = append(p.sh, shItem{change: drivers.Change{Feature: drivers.FeatVRF, Key: name, Old: "default", New: newv}, cmd: cmd})
		}
	}
	return nil
}

// keptAddrs are the addresses a moved interface keeps: all but IPv6
// link-local ones (the kernel makes a new one).
func keptAddrs(l drivers.LinkState) []netip.Prefix {
	var out []netip.Prefix
	for _, a := range l.Addrs {
		if a.Addr().Is6() && a.Addr().IsLinkLocalUnicast() {
			continue
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func describe(l drivers.LinkState) string {
	state := "down"
	if l.Up {
		state = "up"
	} else if l.Admin {
		state = "admin up, no carrier"
	}
	var a []string
	for _, p := range l.Addrs {
		a = append(a, p.String())
	}
	if len(a) == 0 {
		return state + ", no addresses"
	}
	return state + ", " + strings.Join(a, " ")
}

// waitZebraVRF waits (up to 10 s) until zebra lists the VRF with its
// namespace.
func (d *Driver) waitZebraVRF(ctx context.Context, vrf string) error {
	deadline := time.Now().Add(10 * time.Second)
	var last string
	for {
		out, err := d.Vtysh(ctx, "show vrf")
		if err != nil {
			return err
		}
		if l, ok := parseShowVRF(out)[vrf]; ok && l.Netns == netnsPath+vrf {
			return nil
		}
		last = out
		if time.Now().After(deadline) {
			return fmt.Errorf("frr %s: zebra does not list VRF %s with netns %s%s after 10s (show vrf: %q)", d.name, vrf, netnsPath, vrf, strings.TrimSpace(last))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
