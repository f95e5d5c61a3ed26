package linux

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/drivers"
)

// sysctl is one kernel setting: name in sysctl notation (dots between
// components, '/' for a dot inside an interface name) and path below
// /proc/sys.
type sysctl struct{ name, path string }

// mkSysctl builds a sysctl from its components.
func mkSysctl(parts ...string) sysctl {
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = strings.ReplaceAll(p, ".", "/")
	}
	return sysctl{name: strings.Join(names, "."), path: strings.Join(parts, "/")}
}

var (
	hashPolicy4  = mkSysctl("net", "ipv4", "fib_multipath_hash_policy")
	hashPolicy6  = mkSysctl("net", "ipv6", "fib_multipath_hash_policy")
	hashFields4  = mkSysctl("net", "ipv4", "fib_multipath_hash_fields")
	hashFields6  = mkSysctl("net", "ipv6", "fib_multipath_hash_fields")
	seg6All      = mkSysctl("net", "ipv6", "conf", "all", "seg6_enabled")
	seg6Default  = mkSysctl("net", "ipv6", "conf", "default", "seg6_enabled")
	v6Forwarding = mkSysctl("net", "ipv6", "conf", "all", "forwarding")
	vrfStrict    = mkSysctl("net", "vrf", "strict_mode")
)

// sysctlCmd reads sysctls (and the sysctls matching glob patterns below
// /proc/sys) as "path<TAB>value" lines, "-" for a missing one.
func sysctlCmd(ss []sysctl, globs ...string) string {
	paths := make([]string, 0, len(ss)+len(globs))
	for _, s := range ss {
		paths = append(paths, shellQuote(s.path))
	}
	paths = append(paths, globs...)
	return "cd /proc/sys && for f in " + strings.Join(paths, " ") + `; do printf '%s\t' "$f"; v=$(cat "$f" 2>/dev/null) && printf '%s\n' "$v" || echo -; done`
}

// readSysctls reads sysctls by path; a missing one is absent from the map.
func (d *Driver) readSysctls(ctx context.Context, ss []sysctl, globs ...string) (map[string]string, error) {
	if len(ss) == 0 && len(globs) == 0 {
		return map[string]string{}, nil
	}
	return query(ctx, d, sysctlCmd(ss, globs...), parseSysctlDump)
}

// hashFieldBits are the bits of fib_multipath_hash_fields.
var hashFieldBits = map[string]int{
	drivers.HashSrcIP:     0x01,
	drivers.HashDstIP:     0x02,
	drivers.HashProtocol:  0x04,
	drivers.HashFlowLabel: 0x08,
	drivers.HashSrcPort:   0x10,
	drivers.HashDstPort:   0x20,
}

// HashFields lists the ECMP hash field names the driver understands.
func HashFields() []string {
	out := make([]string, 0, len(hashFieldBits))
	for k := range hashFieldBits {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// setting is one wanted sysctl value.
type setting struct {
	s     sysctl
	value string
}

// ecmpSettings maps the requested hash fields to sysctl values: the
// 5-tuple is policy 1 (L4), anything else policy 3 with the field mask
// (flow-label only counts for IPv6), which needs fib_multipath_hash_fields.
func ecmpSettings(fields []string, haveFields bool) ([]setting, error) {
	set := map[string]bool{}
	for _, f := range fields {
		k := strings.ToLower(strings.TrimSpace(f))
		if _, ok := hashFieldBits[k]; !ok {
			return nil, fmt.Errorf("unknown ECMP hash field %q (known: %s)", f, strings.Join(HashFields(), ", "))
		}
		set[k] = true
	}
	five := drivers.FiveTuple()
	isFive := len(set) == len(five)
	for _, f := range five {
		isFive = isFive && set[f]
	}
	if isFive {
		return []setting{{hashPolicy4, "1"}, {hashPolicy6, "1"}}, nil
	}
	if !haveFields {
		return nil, fmt.Errorf("hash fields %s are not the 5-tuple and the kernel has no fib_multipath_hash_fields (custom policy 3)", strings.Join(fields, ","))
	}
	m4, m6 := 0, 0
	for k := range set {
		m6 |= hashFieldBits[k]
		if k != "flow-label" {
			m4 |= hashFieldBits[k]
		}
	}
	return []setting{
		{hashPolicy4, "3"}, {hashFields4, strconv.Itoa(m4)},
		{hashPolicy6, "3"}, {hashFields6, strconv.Itoa(m6)},
	}, nil
}

// item is one planned change and the command that makes it.
type item struct {
	change drivers.Change
	cmd    string
}

// check is one verifiable fact of a plan.
type check struct {
	feature drivers.Feature
	name    string
	ok      bool
	ev      string
}

// plan is what Diff, Apply and Verify share: the changes to make and the
// checks of the current state.
type plan struct {
	items  []item
	checks []check
}

func (p *plan) add(f drivers.Feature, key, old, new, cmd string) {
	p.items = append(p.items, item{change: drivers.Change{Feature: f, Key: key, Old: old, New: new}, cmd: cmd})
}

// sysctlPlan compares wanted sysctl values with the device's.
func (d *Driver) sysctlPlan(ctx context.Context, p *plan, f drivers.Feature, want []setting, read []sysctl, globs ...string) error {
	cur, err := d.readSysctls(ctx, read, globs...)
	if err != nil {
		return err
	}
	for _, w := range want {
		v, ok := cur[w.s.path]
		if !ok {
			return fmt.Errorf("linux %s: the kernel has no sysctl %s", d.name, w.s.name)
		}
		good := v == w.value
		p.checks = append(p.checks, check{feature: f, name: "sysctl " + w.s.name + " = " + w.value, ok: good, ev: w.s.name + " = " + v})
		if !good {
			p.add(f, "sysctl "+w.s.name, v, w.value, "sysctl -q -w "+shellQuote(w.s.name+"="+w.value))
		}
	}
	return nil
}

// Diff returns what Apply would change, changing nothing.
func (d *Driver) Diff(ctx context.Context, want *drivers.DeviceFeatures) (drivers.Diff, error) {
	p, err := d.plan(ctx, want)
	if err != nil {
		return nil, err
	}
	return p.diff(), nil
}

func (p *plan) diff() drivers.Diff {
	out := drivers.Diff{}
	for _, it := range p.items {
		out = append(out, it.change)
	}
	return out
}

// Apply makes the device match want and returns what it changed. On an
// error it returns the changes made so far.
func (d *Driver) Apply(ctx context.Context, want *drivers.DeviceFeatures) (drivers.Diff, error) {
	d.applyM.Lock()
	defer d.applyM.Unlock()
	p, err := d.plan(ctx, want)
	if err != nil {
		return nil, err
	}
	return d.run(ctx, p.items)
}

// run runs the items' commands in order in one session, stopping at the
// first failure, and returns the changes made.
func (d *Driver) run(ctx context.Context, items []item) (drivers.Diff, error) {
	done := drivers.Diff{}
	if len(items) == 0 {
		return done, nil
	}
	cmds := make([]string, len(items))
	for i, it := range items {
		cmds[i] = it.cmd
	}
	res, err := d.sh.RunBatch(ctx, cmds, true)
	if err != nil {
		return done, fmt.Errorf("linux %s: apply: %w", d.name, err)
	}
	for i, r := range res {
		if err := r.Err(); err != nil {
			return done, fmt.Errorf("linux %s: apply %s: %w", d.name, items[i].change, err)
		}
		done = append(done, items[i].change)
	}
	return done, nil
}

// Verify reads the device back and checks every requested feature.
func (d *Driver) Verify(ctx context.Context, want *drivers.DeviceFeatures) ([]drivers.Check, error) {
	p, err := d.plan(ctx, want)
	if err != nil {
		return nil, err
	}
	return p.result(d.name), nil
}

func (p *plan) result(device string) []drivers.Check {
	out := make([]drivers.Check, 0, len(p.checks))
	for _, c := range p.checks {
		out = append(out, drivers.Check{Device: device, Feature: c.feature, Name: c.name, OK: c.ok, Evidence: c.ev})
	}
	return out
}

// plan computes changes and checks for want.
func (d *Driver) plan(ctx context.Context, want *drivers.DeviceFeatures) (*plan, error) {
	if want == nil {
		return &plan{}, nil
	}
	pr, err := d.probes(ctx)
	if err != nil {
		return nil, err
	}
	if err := drivers.CheckCapabilities(Platform, d.name, pr.caps, want); err != nil {
		return nil, err
	}
	if err := d.checkSRv6VRF(pr, want); err != nil {
		return nil, err
	}
	if err := d.checkSRv6Kernel(pr, want); err != nil {
		return nil, err
	}
	// Everything the plan reads, in one session.
	var reads []string
	var ecmp []setting
	if len(want.ECMPHash) > 0 {
		if ecmp, err = ecmpSettings(want.ECMPHash, pr.hashFields); err != nil {
			return nil, fmt.Errorf("linux %s: ecmp-hash: %w", d.name, err)
		}
		reads = append(reads, sysctlCmd(settingSysctls(ecmp)))
	}
	if len(want.VRFs) > 0 {
		reads = append(reads, cmdVRFs, cmdLinks)
	}
	if want.SRv6 != nil {
		reads = append(reads, cmdLinks, sysctlCmd(srv6Sysctls(want.SRv6), seg6Glob),
			routesJSONCmd(6, 0), routesTextCmd(6, 0), routesJSONCmd(4, 0), routesTextCmd(4, 0))
		if pr.caps[drivers.FeatVRF].Supported {
			reads = append(reads, cmdVRFs)
		}
		for _, s := range want.SRv6.Steer {
			if s.Table > 0 && s.Table != tableMain && s.VRF == "" {
				fam := 4
				if s.Prefix.Addr().Is6() {
					fam = 6
				}
				reads = append(reads, routesJSONCmd(fam, s.Table), routesTextCmd(fam, s.Table))
			}
		}
		for _, r := range want.SRv6.Rules {
			for _, fam := range []int{4, 6} {
				if r.Family == 0 || r.Family == fam {
					reads = append(reads, rulesCmd(fam))
				}
			}
		}
	}
	if len(want.Isolation) > 0 {
		reads = append(reads, rulesCmd(4), rulesCmd(6))
	}
	if ctx, err = d.prefetch(ctx, reads...); err != nil {
		return nil, err
	}
	p := &plan{}
	if len(ecmp) > 0 {
		if err := d.sysctlPlan(ctx, p, drivers.FeatECMPHash, ecmp, settingSysctls(ecmp)); err != nil {
			return nil, err
		}
	}
	var tables map[string]int
	if len(want.VRFs) > 0 {
		if tables, err = d.vrfPlan(ctx, p, want.VRFs); err != nil {
			return nil, err
		}
	}
	if want.SRv6 != nil {
		if err := d.srv6Plan(ctx, p, want.SRv6, tables, pr); err != nil {
			return nil, err
		}
	}
	if len(want.Isolation) > 0 {
		if err := d.isolationPlan(ctx, p, want.Isolation); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func settingSysctls(set []setting) []sysctl {
	out := make([]sysctl, len(set))
	for i, s := range set {
		out[i] = s.s
	}
	return out
}

// seg6Glob matches every interface's seg6_enabled below /proc/sys.
const seg6Glob = "net/ipv6/conf/*/seg6_enabled"

// srv6Sysctls are the global sysctls SRv6 reads (the per-interface ones
// come from seg6Glob).
func srv6Sysctls(srv6 *drivers.SRv6) []sysctl {
	ss := []sysctl{seg6All, seg6Default, v6Forwarding}
	for _, s := range srv6.SIDs {
		if b := strings.ToLower(s.Behavior); b == "udt46" || b == "end.dt46" {
			return append(ss, vrfStrict)
		}
	}
	return ss
}

// checkSRv6VRF refuses SRv6 that needs VRF devices the kernel cannot make.
func (d *Driver) checkSRv6VRF(pr *probes, want *drivers.DeviceFeatures) error {
	if want.SRv6 == nil || pr.caps[drivers.FeatVRF].Supported {
		return nil
	}
	reason := pr.caps[drivers.FeatVRF].Reason
	for _, s := range want.SRv6.SIDs {
		if b := strings.ToLower(s.Behavior); b == "udt46" || b == "end.dt46" {
			return &drivers.CapabilityError{Platform: Platform, Device: d.name, Feature: drivers.FeatSRv6,
				Reason: fmt.Sprintf("SID %s %s decapsulates into a VRF table (End.DT46 vrftable) and needs a VRF device: %s", s.Addr, s.Behavior, reason)}
		}
	}
	for _, s := range want.SRv6.Steer {
		if s.VRF != "" {
			return &drivers.CapabilityError{Platform: Platform, Device: d.name, Feature: drivers.FeatSRv6,
				Reason: fmt.Sprintf("steering %s in VRF %s needs a VRF device: %s", s.Prefix, s.VRF, reason)}
		}
	}
	return nil
}

// checkSRv6Kernel refuses SRv6 the kernel cannot do: End.DX4 and End.DX6
// SIDs, and policy rules and tables, as the capability probes found.
func (d *Driver) checkSRv6Kernel(pr *probes, want *drivers.DeviceFeatures) error {
	if want.SRv6 == nil {
		return nil
	}
	refuse := func(format string, args ...any) error {
		return &drivers.CapabilityError{Platform: Platform, Device: d.name, Feature: drivers.FeatSRv6, Reason: fmt.Sprintf(format, args...)}
	}
	for _, s := range want.SRv6.SIDs {
		switch strings.ToLower(s.Behavior) {
		case "udx4", "end.dx4":
			if pr.dx4 != "" {
				return refuse("SID %s %s: %s", s.Addr, s.Behavior, pr.dx4)
			}
		case "udx6", "end.dx6":
			if pr.dx6 != "" {
				return refuse("SID %s %s: %s", s.Addr, s.Behavior, pr.dx6)
			}
		}
	}
	for _, s := range want.SRv6.Steer {
		if s.Table == 0 || s.Table == tableMain || !s.Prefix.IsValid() {
			continue
		}
		reason := pr.rules4
		if s.Prefix.Addr().Is6() {
			reason = pr.rules6
		}
		if reason != "" {
			return refuse("steer %s in table %d needs policy routing: %s", s.Prefix, s.Table, reason)
		}
	}
	for _, r := range want.SRv6.Rules {
		if r.Family != 6 && pr.rules4 != "" {
			return refuse("rule fwmark %#x: %s", r.Mark, pr.rules4)
		}
		if r.Family != 4 && pr.rules6 != "" {
			return refuse("rule fwmark %#x: %s", r.Mark, pr.rules6)
		}
	}
	return nil
}

// vrfPlan plans VRF devices and their members; it returns every VRF's
// table (existing or to be made).
func (d *Driver) vrfPlan(ctx context.Context, p *plan, vrfs []drivers.VRF) (map[string]int, error) {
	have, err := d.vrfDevices(ctx)
	if err != nil {
		return nil, err
	}
	links, err := query(ctx, d, cmdLinks, parseLinks)
	if err != nil {
		return nil, err
	}
	master := map[string]string{}
	exists := map[string]bool{}
	for _, l := range links {
		master[l.Ifname] = l.Master
		exists[l.Ifname] = true
	}
	used := map[int]bool{}
	for _, t := range have {
		used[t] = true
	}
	tables := map[string]int{}
	for n, t := range have {
		tables[n] = t
	}
	for _, v := range vrfs {
		if v.Name == "" {
			return nil, fmt.Errorf("linux %s: a VRF without a name", d.name)
		}
		t, ok := have[v.Name]
		switch {
		case ok && v.Table != 0 && v.Table != t:
			return nil, fmt.Errorf("linux %s: VRF %s exists with table %d, want table %d: delete it first (the driver does not remove VRFs)", d.name, v.Name, t, v.Table)
		case ok:
			p.checks = append(p.checks, check{drivers.FeatVRF, "vrf " + v.Name, true, fmt.Sprintf("vrf device %s table %d", v.Name, t)})
		default:
			if exists[v.Name] {
				return nil, fmt.Errorf("linux %s: %s exists and is not a VRF device", d.name, v.Name)
			}
			t = v.Table
			if t == 0 {
				for t = 1001; used[t]; t++ {
				}
			}
			used[t] = true
			p.checks = append(p.checks, check{drivers.FeatVRF, "vrf " + v.Name, false, "no VRF device " + v.Name})
			p.add(drivers.FeatVRF, "vrf "+v.Name, "", fmt.Sprintf("vrf device table %d", t),
				fmt.Sprintf("ip link add %s type vrf table %d && ip link set %s up", shellQuote(v.Name), t, shellQuote(v.Name)))
		}
		tables[v.Name] = t
		for _, m := range v.Interfaces {
			if !exists[m] {
				return nil, fmt.Errorf("linux %s: VRF %s member %s: no such interface", d.name, v.Name, m)
			}
			cur := master[m]
			ok := cur == v.Name
			p.checks = append(p.checks, check{drivers.FeatVRF, fmt.Sprintf("vrf %s member %s", v.Name, m), ok, fmt.Sprintf("%s master %q", m, cur)})
			if !ok {
				p.add(drivers.FeatVRF, fmt.Sprintf("vrf %s member %s", v.Name, m), cur, v.Name,
					fmt.Sprintf("ip link set %s master %s", shellQuote(m), shellQuote(v.Name)))
			}
		}
	}
	return tables, nil
}

// wantRoute is one SRv6 route the device should have.
type wantRoute struct {
	what   string // "sid fd00::/48 uN", "steer 10.0.0.0/24"
	family int
	table  int
	route  seg6Route
	dev    string // an interface that must exist ("" for none to check)
}

// srv6Dev is the interface of uN and End SIDs (unless SID.Dev names
// another): not lo, since the kernel turns IPv6 routes through the
// loopback into reject routes (fib6_is_reject), which drop the packets a
// uN SID should forward. The driver makes it when missing: a dummy device,
// or a veth pair (peer srv6DevPeer) when the kernel has no dummy devices.
// FRR's SRv6 uses the same name for its dummy device.
const (
	srv6Dev     = "sr0"
	srv6DevPeer = "sr0p"
)

// optAddr prints an address, "none" for the zero Addr.
func optAddr(a netip.Addr) string {
	if !a.IsValid() {
		return "none"
	}
	return a.String()
}

// srv6Routes returns the seg6/seg6local routes srv6 asks for (VRF tables
// from tables).
func srv6Routes(srv6 *drivers.SRv6, tables map[string]int) ([]wantRoute, error) {
	bl, nl := srv6.BlockLen, srv6.NodeLen
	if bl == 0 && nl == 0 {
		bl, nl = 32, 16
	}
	if bl <= 0 || nl <= 0 || bl+nl > 128 || bl%8 != 0 || nl%8 != 0 {
		return nil, fmt.Errorf("bad micro-SID format: block %d bits, node %d bits (want multiples of 8, e.g. 32 and 16)", srv6.BlockLen, srv6.NodeLen)
	}
	var out []wantRoute
	seen := map[string]bool{}
	for _, s := range srv6.SIDs {
		if !s.Addr.IsValid() || !s.Addr.Addr().Is6() || s.Addr.Addr().Is4In6() {
			return nil, fmt.Errorf("SID %s: not an IPv6 prefix", s.Addr)
		}
		r := seg6Route{Prefix: s.Addr.Masked(), Encap: "seg6local"}
		endDev := srv6Dev
		if s.Dev != "" {
			endDev = s.Dev
		}
		switch strings.ToLower(s.Behavior) {
		case "un", "end":
			if endDev == "lo" {
				return nil, fmt.Errorf("SID %s %s: not on lo: the kernel turns IPv6 routes through the loopback into reject routes, so the SID would drop transit traffic (leave Dev empty for %s)", s.Addr, s.Behavior, srv6Dev)
			}
			r.Action, r.Dev = "End", endDev
			if strings.EqualFold(s.Behavior, "un") {
				r.Flavors, r.LBLen, r.NFLen = "next-csid", bl, nl
			}
		case "ua", "end.x":
			if !s.Nexthop.IsValid() || !s.Nexthop.Is6() {
				return nil, fmt.Errorf("SID %s %s: needs an IPv6 adjacency next hop (Nexthop)", s.Addr, s.Behavior)
			}
			if s.Dev == "" {
				return nil, fmt.Errorf("SID %s %s: needs the adjacency interface (Dev)", s.Addr, s.Behavior)
			}
			r.Action, r.NH6, r.Dev = "End.X", s.Nexthop, s.Dev
			if strings.EqualFold(s.Behavior, "ua") {
				r.Flavors, r.LBLen, r.NFLen = "next-csid", bl, nl
			}
		case "udt46", "end.dt46":
			t, ok := tables[s.VRF]
			if s.VRF == "" || !ok {
				return nil, fmt.Errorf("SID %s %s: VRF %q is not a VRF device on the device (list it in VRFs)", s.Addr, s.Behavior, s.VRF)
			}
			r.Action, r.VRFTable, r.Dev = "End.DT46", t, s.VRF
		case "udx4", "end.dx4":
			if !s.Nexthop.IsValid() || !s.Nexthop.Is4() {
				return nil, fmt.Errorf("SID %s %s: needs the IPv4 next hop to forward the decapsulated packet to (Nexthop), got %v", s.Addr, s.Behavior, optAddr(s.Nexthop))
			}
			if s.Dev == "" {
				return nil, fmt.Errorf("SID %s %s: needs the interface towards next hop %s (Dev)", s.Addr, s.Behavior, s.Nexthop)
			}
			r.Action, r.NH4, r.Dev = "End.DX4", s.Nexthop, s.Dev
		case "udx6", "end.dx6":
			if !s.Nexthop.IsValid() || !s.Nexthop.Is6() || s.Nexthop.Is4In6() {
				return nil, fmt.Errorf("SID %s %s: needs the IPv6 next hop to forward the decapsulated packet to (Nexthop), got %v", s.Addr, s.Behavior, optAddr(s.Nexthop))
			}
			if s.Dev == "" {
				return nil, fmt.Errorf("SID %s %s: needs the interface towards next hop %s (Dev)", s.Addr, s.Behavior, s.Nexthop)
			}
			r.Action, r.NH6, r.Dev = "End.DX6", s.Nexthop, s.Dev
		default:
			return nil, fmt.Errorf("SID %s: unknown behavior %q (uN, uA, uDT46, uDX4, uDX6, End, End.X, End.DT46, End.DX4, End.DX6)", s.Addr, s.Behavior)
		}
		key := r.Prefix.String()
		if seen[key] {
			return nil, fmt.Errorf("SID %s listed twice", s.Addr)
		}
		seen[key] = true
		w := wantRoute{what: fmt.Sprintf("sid %s %s", s.Addr, s.Behavior), family: 6, route: r}
		if r.Action != "End.DT46" {
			w.dev = r.Dev // a VRF device may be made by the same Apply
		}
		out = append(out, w)
	}
	for _, s := range srv6.Steer {
		if !s.Prefix.IsValid() {
			return nil, fmt.Errorf("steer: no prefix")
		}
		if s.Prefix.Addr().Is4In6() {
			return nil, fmt.Errorf("steer %s: an IPv4-mapped prefix; give the IPv4 prefix", s.Prefix)
		}
		if len(s.Segments) == 0 {
			return nil, fmt.Errorf("steer %s: no segments", s.Prefix)
		}
		if s.Dev == "" {
			return nil, fmt.Errorf("steer %s: no outgoing interface (Dev)", s.Prefix)
		}
		segs := make([]string, len(s.Segments))
		for i, a := range s.Segments {
			if !a.Is6() || a.Is4In6() {
				return nil, fmt.Errorf("steer %s: segment %s is not an IPv6 address", s.Prefix, a)
			}
			segs[i] = a.String()
		}
		w := wantRoute{what: "steer " + s.Prefix.String(), family: 4, dev: s.Dev,
			route: seg6Route{Prefix: s.Prefix.Masked(), Encap: "seg6", Mode: "encap", Segs: strings.Join(segs, ","), Dev: s.Dev}}
		if s.Prefix.Addr().Is6() {
			w.family = 6
		}
		switch {
		case s.VRF != "" && s.Table != 0:
			return nil, fmt.Errorf("steer %s: VRF %s and table %d are mutually exclusive (a VRF has its own table)", s.Prefix, s.VRF, s.Table)
		case s.Table < 0 || int64(s.Table) > 1<<32-1:
			return nil, fmt.Errorf("steer %s: table %d: want 0 (main) or a table from 1 to 4294967295", s.Prefix, s.Table)
		case s.Table == tableLocal:
			return nil, fmt.Errorf("steer %s: table 255 is the kernel's local table", s.Prefix)
		case s.Table != 0 && s.Table != tableMain:
			w.table = s.Table
			w.what += fmt.Sprintf(" table %d", s.Table)
		}
		if s.VRF != "" {
			t, ok := tables[s.VRF]
			if !ok {
				return nil, fmt.Errorf("steer %s: VRF %q is not a VRF device on the device (list it in VRFs)", s.Prefix, s.VRF)
			}
			w.table = t
			w.what += " vrf " + s.VRF
		}
		key := fmt.Sprintf("%s/%d", w.route.Prefix, w.table)
		if seen[key] {
			if w.table != 0 {
				return nil, fmt.Errorf("steer %s listed twice in table %d", s.Prefix, w.table)
			}
			return nil, fmt.Errorf("steer %s listed twice", s.Prefix)
		}
		seen[key] = true
		out = append(out, w)
	}
	return out, nil
}

// srv6DevPlan makes the uN/End SID device and keeps it up.
func srv6DevPlan(p *plan, links []ipLink, dummy bool) {
	name := "srv6 device " + srv6Dev
	for _, l := range links {
		if l.Ifname != srv6Dev {
			continue
		}
		up := l.hasFlag("UP")
		p.checks = append(p.checks, check{drivers.FeatSRv6, name, up, fmt.Sprintf("%s <%s>", srv6Dev, strings.Join(l.Flags, ","))})
		if !up {
			p.add(drivers.FeatSRv6, "link "+srv6Dev, "down", "up", "ip link set "+srv6Dev+" up")
		}
		return
	}
	p.checks = append(p.checks, check{drivers.FeatSRv6, name, false, "no interface " + srv6Dev})
	if dummy {
		p.add(drivers.FeatSRv6, "link "+srv6Dev, "", "dummy, up", fmt.Sprintf("ip link add %s type dummy && ip link set %s up", srv6Dev, srv6Dev))
		return
	}
	p.add(drivers.FeatSRv6, "link "+srv6Dev, "", fmt.Sprintf("veth (peer %s), up", srv6DevPeer),
		fmt.Sprintf("ip link add %s type veth peer name %s && ip link set %s up && ip link set %s up", srv6Dev, srv6DevPeer, srv6DevPeer, srv6Dev))
}

// srv6Plan plans the seg6 sysctls and routes.
func (d *Driver) srv6Plan(ctx context.Context, p *plan, srv6 *drivers.SRv6, tables map[string]int, pr *probes) error {
	if len(tables) == 0 && pr.caps[drivers.FeatVRF].Supported {
		var err error
		if tables, err = d.vrfDevices(ctx); err != nil {
			return err
		}
	}
	routes, err := srv6Routes(srv6, tables)
	if err != nil {
		return fmt.Errorf("linux %s: srv6: %w", d.name, err)
	}
	rules, err := policyRules(srv6.Rules)
	if err != nil {
		return fmt.Errorf("linux %s: srv6: %w", d.name, err)
	}
	links, err := query(ctx, d, cmdLinks, parseLinks)
	if err != nil {
		return err
	}
	exists := map[string]bool{}
	for _, l := range links {
		exists[l.Ifname] = true
	}
	needDev := false
	for _, r := range routes {
		if r.dev == srv6Dev && r.route.Encap == "seg6local" && r.route.Action == "End" {
			needDev = true
			continue
		}
		if r.dev != "" && !exists[r.dev] {
			return fmt.Errorf("linux %s: srv6: %s: no interface %s on the device", d.name, r.what, r.dev)
		}
	}
	// Local SIDs need SRv6 processing and IPv6 forwarding; a device that
	// only steers (encapsulates what it sends) needs neither.
	var want []setting
	if len(srv6.SIDs) > 0 {
		want = []setting{{seg6All, "1"}, {seg6Default, "1"}, {v6Forwarding, "1"}}
	}
	for _, l := range links {
		if len(srv6.SIDs) == 0 {
			break
		}
		if l.Ifname != "lo" {
			want = append(want, setting{mkSysctl("net", "ipv6", "conf", l.Ifname, "seg6_enabled"), "1"})
		}
	}
	read := srv6Sysctls(srv6)
	if len(read) > 3 {
		want = append(want, setting{vrfStrict, "1"})
	}
	if len(want) > 0 {
		if err := d.sysctlPlan(ctx, p, drivers.FeatSRv6, want, read, seg6Glob); err != nil {
			return err
		}
	}
	// The SID device after the sysctls (a new device takes the default
	// seg6_enabled) and before the routes through it.
	if needDev {
		srv6DevPlan(p, links, pr.dummy)
	}
	if err := d.routePlan(ctx, p, routes); err != nil {
		return err
	}
	// Rules last: a rule never points at a table whose routes are missing.
	return d.rulePlan(ctx, p, rules)
}

type tableKey struct{ family, table int }

// routePlan compares wanted seg6 routes with the device's.
func (d *Driver) routePlan(ctx context.Context, p *plan, routes []wantRoute) error {
	have := map[tableKey][]seg6Route{}
	lines := map[tableKey]map[netip.Prefix]string{}
	for _, w := range routes {
		k := tableKey{w.family, w.table}
		if _, ok := lines[k]; ok {
			continue
		}
		rs, err := d.seg6Routes(ctx, w.family, w.table)
		if err != nil {
			return err
		}
		have[k] = rs
		// The text form is the evidence.
		_, ls, err := d.seg6Text(ctx, w.family, w.table)
		if err != nil {
			return err
		}
		lines[k] = ls
	}
	for _, w := range routes {
		k := tableKey{w.family, w.table}
		var cur *seg6Route
		ok := false
		for i, r := range have[k] {
			if r.Prefix != w.route.Prefix {
				continue
			}
			if r == w.route {
				ok = true
				break
			}
			if cur == nil {
				cur = &have[k][i]
			}
		}
		ev := lines[k][w.route.Prefix]
		if ev == "" {
			ev = "no route " + w.route.Prefix.String()
		}
		p.checks = append(p.checks, check{drivers.FeatSRv6, w.what, ok, ev})
		if ok {
			continue
		}
		old := ""
		switch {
		case cur != nil:
			old = cur.args()
		case lines[k][w.route.Prefix] != "":
			// A route that is not a seg6 one (BGP's, a static route): the
			// diff names it, and CanRevert refuses what it cannot put back.
			old = nonSeg6 + lines[k][w.route.Prefix]
		}
		tbl := ""
		key := "route " + w.route.Prefix.String()
		if w.table != 0 {
			tbl = fmt.Sprintf(" table %d", w.table)
			key += tbl
		}
		p.add(drivers.FeatSRv6, key, old, w.route.args(),
			fmt.Sprintf("ip -%d route replace %s %s%s", w.family, w.route.Prefix, quoteArgs(w.route.args()), tbl))
	}
	return nil
}

// quoteArgs shell-quotes each word of an argument string.
func quoteArgs(s string) string {
	f := strings.Fields(s)
	for i, w := range f {
		f[i] = shellQuote(w)
	}
	return strings.Join(f, " ")
}
