package sonic

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/drivers"
)

// CONFIG_DB names the driver writes.
const (
	switchHashKey  = "SWITCH_HASH|GLOBAL"
	wredProfile    = "AZURE_LOSSLESS"
	trimmingKey    = "SWITCH_TRIMMING|GLOBAL"
	capabilityKey  = "SWITCH_CAPABILITY|switch"
	trimCapability = "SWITCH_TRIMMING_CAPABLE"
)

// hashFields maps the drivers hash field names to SONiC's.
var hashFields = map[string]string{
	drivers.HashSrcIP:     "SRC_IP",
	drivers.HashDstIP:     "DST_IP",
	drivers.HashProtocol:  "IP_PROTOCOL",
	drivers.HashSrcPort:   "L4_SRC_PORT",
	drivers.HashDstPort:   "L4_DST_PORT",
	drivers.HashFlowLabel: "IPV6_FLOW_LABEL",
}

// How a desired value is compared with the one on the device.
type cmpKind int

const (
	cmpExact cmpKind = iota
	cmpFold          // case-insensitive
	cmpNum           // integers
	cmpSet           // comma-separated list, order and case ignored
	cmpAddr          // IP address
	cmpRef           // a name, also accepted in the old "[TABLE|name]" form
)

func (k cmpKind) equal(have, want string) bool {
	switch k {
	case cmpFold:
		return strings.EqualFold(have, want)
	case cmpNum:
		a, err1 := strconv.ParseInt(strings.TrimSpace(have), 10, 64)
		b, err2 := strconv.ParseInt(strings.TrimSpace(want), 10, 64)
		if err1 == nil && err2 == nil {
			return a == b
		}
	case cmpSet:
		return normSet(have) == normSet(want)
	case cmpAddr:
		a, err1 := netip.ParseAddr(strings.TrimSpace(have))
		b, err2 := netip.ParseAddr(strings.TrimSpace(want))
		if err1 == nil && err2 == nil {
			return a == b
		}
		return strings.EqualFold(have, want)
	case cmpRef:
		return derefName(have) == derefName(want)
	}
	return have == want
}

func normSet(s string) string {
	seen := map[string]bool{}
	var l []string
	for _, e := range strings.Split(s, ",") {
		e = strings.ToUpper(strings.TrimSpace(e))
		if e != "" && !seen[e] {
			seen[e] = true
			l = append(l, e)
		}
	}
	sort.Strings(l)
	return strings.Join(l, ",")
}

// derefName turns "[WRED_PROFILE|AZURE_LOSSLESS]" into "AZURE_LOSSLESS".
func derefName(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
		if _, name, ok := strings.Cut(s, "|"); ok {
			s = name
		}
	}
	return s
}

// field is one desired hash field of a CONFIG_DB key.
type field struct {
	name string   // as shown in changes and checks, e.g. ecmp_hash
	db   []string // hash field names it may be stored under; db[0] is written when absent
	want string   // "" = the field must be absent
	cmp  cmpKind
}

type entryKind int

const (
	entryHash entryKind = iota // fields written with HSET/HDEL
	entryVRF                   // the key must exist: `config vrf add`
	entryBind                  // vrf_name written with `config interface vrf bind`
)

// entry is the desired state of one CONFIG_DB key, with what the device
// has there.
type entry struct {
	feature drivers.Feature
	kind    entryKind
	key     string
	fields  []field
	iface   string // entryBind
	vrf     string // entryVRF, entryBind
	have    map[string]string
	// addrs are the interface's address entries (entryBind), which a bind
	// removes: key -> fields.
	addrs []addrEntry
}

// addrEntry is one interface address entry, e.g. INTERFACE|Ethernet4|10.0.0.3/31.
type addrEntry struct {
	key    string
	fields map[string]string
}

// lookup returns the stored field name and value of f in e.have.
func (e *entry) lookup(f field) (name, value string, ok bool) {
	for _, n := range f.db {
		if v, ok := e.have[n]; ok {
			return n, v, true
		}
	}
	return f.db[0], "", false
}

// change is one difference and how to remove it.
type change struct {
	drivers.Change
	key     string // CONFIG_DB key for HSET/HDEL
	dbField string
	del     bool   // HDEL instead of HSET
	cli     string // a config CLI command instead of HSET/HDEL
	// implied: the change is made by the next CLI command (a bind
	// removes the interface's addresses), not by a command of its own.
	implied bool
	// vrfAdd, bind: what the CLI command did, for Revert; restore the
	// fields to write back (the interface entry before a bind, an address
	// entry a bind removed).
	vrfAdd, bind bool
	iface        string
	restore      map[string]string
}

func (e *entry) changes() []change {
	switch e.kind {
	case entryVRF:
		if len(e.have) > 0 {
			return nil
		}
		return []change{{
			Change: drivers.Change{Feature: e.feature, Key: e.key, New: "present"},
			cli:    "sudo config vrf add " + shellQuote(e.vrf),
			vrfAdd: true, key: e.key,
		}}
	case entryBind:
		f := e.fields[0]
		_, v, _ := e.lookup(f)
		if v == f.want {
			return nil
		}
		// SONiC's bind removes the interface's addresses: the diff names
		// each, before the bind (Revert, last first, unbinds before it
		// writes them back).
		var out []change
		for _, a := range e.addrs {
			out = append(out, change{Change: drivers.Change{Feature: e.feature, Key: a.key, Old: "present", New: ""},
				key: a.key, implied: true, restore: a.fields})
		}
		return append(out, change{
			Change: drivers.Change{Feature: e.feature, Key: e.key + " " + f.name, Old: v, New: f.want},
			cli:    "sudo config interface vrf bind " + shellQuote(e.iface) + " " + shellQuote(e.vrf),
			bind:   true, iface: e.iface, key: e.key, restore: e.have,
		})
	}
	var out []change
	for _, f := range e.fields {
		name, v, ok := e.lookup(f)
		c := change{Change: drivers.Change{Feature: e.feature, Key: e.key + " " + f.name, Old: v, New: f.want}, key: e.key, dbField: name}
		switch {
		case f.want == "":
			if !ok || v == "" {
				continue
			}
			c.del = true
		case ok && f.cmp.equal(v, f.want):
			continue
		}
		out = append(out, c)
	}
	return out
}

// check reports whether the device has e, with the values read as
// evidence.
func (e *entry) check(device string) drivers.Check {
	c := drivers.Check{Device: device, Feature: e.feature, Name: e.key, OK: true}
	if e.kind == entryVRF {
		if len(e.have) == 0 {
			c.OK = false
			c.Evidence = "CONFIG_DB " + e.key + " does not exist"
		} else {
			c.Evidence = "CONFIG_DB " + e.key + " exists: " + formatDict(e.have)
		}
		return c
	}
	var got, want []string
	for _, f := range e.fields {
		name, v, ok := e.lookup(f)
		if ok {
			got = append(got, fmt.Sprintf("%s=%q", name, v))
		} else {
			got = append(got, f.name+" absent")
		}
		var match bool
		switch {
		case f.want == "":
			match = !ok || v == ""
		case e.kind == entryBind:
			match = ok && v == f.want
		default:
			match = ok && f.cmp.equal(v, f.want)
		}
		if !match {
			c.OK = false
			if f.want == "" {
				want = append(want, f.name+" absent")
			} else {
				want = append(want, fmt.Sprintf("%s=%q", f.name, f.want))
			}
		}
	}
	c.Evidence = "CONFIG_DB " + e.key + ": " + strings.Join(got, " ")
	if !c.OK {
		c.Evidence += "; want " + strings.Join(want, " ")
	}
	return c
}

// formatDict prints a hash compactly and in a stable order.
func formatDict(m map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s=%q", k, m[k]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// reader reads CONFIG_DB/STATE_DB for one operation, each key once.
type reader struct {
	d     *Driver
	ctx   context.Context
	cache map[string]map[string]string
}

func (d *Driver) newReader(ctx context.Context) *reader {
	return &reader{d: d, ctx: ctx, cache: map[string]map[string]string{}}
}

// hgetall reads one hash; a missing key reads as an empty map.
func (r *reader) hgetall(db, key string) (map[string]string, error) {
	if m, ok := r.cache[db+" "+key]; ok {
		return m, nil
	}
	cmd := "sonic-db-cli " + db + " HGETALL " + dbQuote(key)
	out, err := r.d.run(r.ctx, cmd)
	if err != nil {
		return nil, err
	}
	m, err := parseDict(out)
	if err != nil {
		return nil, r.d.replyError(cmd, out, err)
	}
	r.cache[db+" "+key] = m
	return m, nil
}

// keys lists the keys prefix* and returns their parts after prefix, in
// natural order.
func (r *reader) keys(db, prefix string) ([]string, error) {
	cmd := "sonic-db-cli " + db + " KEYS " + dbQuote(prefix+"*")
	out, err := r.d.run(r.ctx, cmd)
	if err != nil {
		return nil, err
	}
	keys, err := parseKeys(out, prefix)
	if err != nil {
		return nil, r.d.replyError(cmd, out, err)
	}
	return keys, nil
}

// fill reads what the device has at e.key.
func (r *reader) fill(e *entry) error {
	m, err := r.hgetall("CONFIG_DB", e.key)
	if err != nil {
		return err
	}
	e.have = m
	return nil
}

// trimmingCapable reads STATE_DB SWITCH_CAPABILITY|switch and says whether
// the ASIC can trim packets, and if not, why (quoting STATE_DB).
func (r *reader) trimmingCapable() (bool, string, error) {
	m, err := r.hgetall("STATE_DB", capabilityKey)
	if err != nil {
		return false, "", err
	}
	v, ok := m[trimCapability]
	switch {
	case !ok && len(m) == 0:
		return false, fmt.Sprintf("STATE_DB %s is empty (no %s field)", capabilityKey, trimCapability), nil
	case !ok:
		return false, fmt.Sprintf("STATE_DB %s has no %s field", capabilityKey, trimCapability), nil
	case strings.EqualFold(strings.TrimSpace(v), "true"):
		return true, "", nil
	}
	return false, fmt.Sprintf("STATE_DB %s has %s=%q", capabilityKey, trimCapability, v), nil
}

var (
	vrfNameRe  = regexp.MustCompile(`^Vrf[A-Za-z0-9_-]{1,12}$`)
	ifNameRe   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_./:-]{0,63}$`)
	locatorRe  = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	sidActions = map[string]string{"uN": "uN", "uDT46": "uDT46"}
)

func checkVRFName(name string) error {
	if !vrfNameRe.MatchString(name) {
		return fmt.Errorf("VRF name %q: SONiC VRF names start with \"Vrf\" followed by 1 to 12 letters, digits, '_' or '-' (e.g. Vrf-red)", name)
	}
	return nil
}

// interfaceTable returns the CONFIG_DB table of an interface's L3 config.
func interfaceTable(name string) (string, error) {
	if !ifNameRe.MatchString(name) {
		return "", fmt.Errorf("interface name %q is not valid", name)
	}
	switch {
	case strings.Contains(name, "."):
		return "VLAN_SUB_INTERFACE", nil
	case strings.HasPrefix(name, "Ethernet"):
		return "INTERFACE", nil
	case strings.HasPrefix(name, "PortChannel"):
		return "PORTCHANNEL_INTERFACE", nil
	case strings.HasPrefix(name, "Vlan"):
		return "VLAN_INTERFACE", nil
	case strings.HasPrefix(name, "Loopback"):
		return "LOOPBACK_INTERFACE", nil
	}
	return "", fmt.Errorf("interface %q: not an Ethernet, PortChannel, Vlan, Loopback or sub-interface name", name)
}

// srv6Lens returns the block and node lengths with the F3216 defaults.
func srv6Lens(s *drivers.SRv6) (int, int) {
	b, n := s.BlockLen, s.NodeLen
	if b == 0 {
		b = 32
	}
	if n == 0 {
		n = 16
	}
	return b, n
}

// dscpQueues are the queues a port puts packets with the DSCPs in: its
// PORT_QOS_MAP dscp_to_tc_map (DSCP_TO_TC_MAP) and tc_to_queue_map
// (TC_TO_QUEUE_MAP, traffic class = queue without one).
func (r *reader) dscpQueues(port string, dscps []int) ([]int, error) {
	qm, err := r.hgetall("CONFIG_DB", "PORT_QOS_MAP|"+port)
	if err != nil {
		return nil, err
	}
	dtc := derefName(qm["dscp_to_tc_map"])
	if dtc == "" {
		return nil, fmt.Errorf("port %s has no dscp_to_tc_map (PORT_QOS_MAP|%s): the queue of DSCP %v is unknown", port, port, dscps)
	}
	dm, err := r.hgetall("CONFIG_DB", "DSCP_TO_TC_MAP|"+dtc)
	if err != nil {
		return nil, err
	}
	var tm map[string]string
	if ttq := derefName(qm["tc_to_queue_map"]); ttq != "" {
		if tm, err = r.hgetall("CONFIG_DB", "TC_TO_QUEUE_MAP|"+ttq); err != nil {
			return nil, err
		}
	}
	var out []int
	for _, ds := range dscps {
		tc, ok := dm[strconv.Itoa(ds)]
		if !ok {
			return nil, fmt.Errorf("DSCP_TO_TC_MAP|%s (port %s) does not map DSCP %d", dtc, port, ds)
		}
		q := tc
		if tm != nil {
			if q, ok = tm[tc]; !ok {
				return nil, fmt.Errorf("TC_TO_QUEUE_MAP (port %s) does not map traffic class %s", port, tc)
			}
		}
		n, err := strconv.Atoi(strings.TrimSpace(q))
		if err != nil || n < 0 || n > 15 {
			return nil, fmt.Errorf("port %s: DSCP %d maps to queue %q", port, ds, q)
		}
		out = append(out, n)
	}
	return uniqSorted(out), nil
}

// ecnQueues returns the WRED queues, 3 and 4 by default.
func ecnQueues(e *drivers.ECN) []int {
	q := e.Queues
	if len(q) == 0 {
		q = []int{3, 4}
	}
	return uniqSorted(q)
}

func uniqSorted(l []int) []int {
	out := append([]int(nil), l...)
	sort.Ints(out)
	n := 0
	for i, v := range out {
		if i == 0 || v != out[n-1] {
			out[n] = v
			n++
		}
	}
	return out[:n]
}

// validate checks want without talking to the device. Requests the driver
// cannot do are *drivers.CapabilityError.
func (d *Driver) validate(want *drivers.DeviceFeatures) error {
	capErr := func(f drivers.Feature, reason string) error {
		return &drivers.CapabilityError{Platform: Platform, Device: d.device, Feature: f, Reason: reason}
	}
	var errs []error
	for _, h := range want.ECMPHash {
		if _, ok := hashFields[h]; !ok {
			errs = append(errs, fmt.Errorf("ecmp-hash: unknown hash field %q (have %s)", h, strings.Join(drivers.HashFields(), ", ")))
		}
	}
	vrfs := map[string]bool{}
	bound := map[string]string{}
	for _, v := range want.VRFs {
		if err := checkVRFName(v.Name); err != nil {
			errs = append(errs, fmt.Errorf("vrf: %w", err))
		}
		if vrfs[v.Name] {
			errs = append(errs, fmt.Errorf("vrf: %s requested twice", v.Name))
		}
		vrfs[v.Name] = true
		for _, i := range v.Interfaces {
			if _, err := interfaceTable(i); err != nil {
				errs = append(errs, fmt.Errorf("vrf %s: %w", v.Name, err))
			}
			if other, ok := bound[i]; ok {
				errs = append(errs, fmt.Errorf("vrf: interface %s is in both %s and %s", i, other, v.Name))
			}
			bound[i] = v.Name
		}
	}
	if s := want.SRv6; s != nil {
		if len(s.Steer) > 0 {
			return capErr(drivers.FeatSRv6, "SRv6 steering (SRV6_SID_LIST and steered routes) is not supported by the sonic driver; locators and local SIDs (uN, uDT46) are")
		}
		for _, sid := range s.SIDs {
			if _, ok := sidActions[sid.Behavior]; !ok {
				return capErr(drivers.FeatSRv6, fmt.Sprintf("SID behavior %q is not supported by the sonic driver (uN and uDT46 are)", sid.Behavior))
			}
		}
		block, node := srv6Lens(s)
		switch {
		case !locatorRe.MatchString(s.Locator):
			errs = append(errs, fmt.Errorf("srv6: locator name %q is not valid", s.Locator))
		case !s.Prefix.IsValid() || !s.Prefix.Addr().Is6() || s.Prefix.Addr().Is4In6():
			errs = append(errs, fmt.Errorf("srv6: locator prefix %s is not an IPv6 prefix", s.Prefix))
		case block <= 0 || node <= 0 || block+node > 128:
			errs = append(errs, fmt.Errorf("srv6: bad block/node lengths %d/%d", block, node))
		case s.Prefix.Bits() != block+node:
			errs = append(errs, fmt.Errorf("srv6: locator prefix %s is /%d, but block %d + node %d bits make /%d", s.Prefix, s.Prefix.Bits(), block, node, block+node))
		}
		for _, sid := range s.SIDs {
			switch {
			case !sid.Addr.IsValid() || !sid.Addr.Addr().Is6():
				errs = append(errs, fmt.Errorf("srv6: SID %s is not an IPv6 prefix", sid.Addr))
			case s.Prefix.IsValid() && (!s.Prefix.Contains(sid.Addr.Addr()) || sid.Addr.Bits() < s.Prefix.Bits()):
				errs = append(errs, fmt.Errorf("srv6: SID %s is outside locator %s", sid.Addr, s.Prefix))
			}
			if sid.Behavior == "uDT46" {
				if sid.VRF == "" {
					errs = append(errs, fmt.Errorf("srv6: uDT46 SID %s needs a VRF", sid.Addr))
				} else if sid.VRF != "default" {
					if err := checkVRFName(sid.VRF); err != nil {
						errs = append(errs, fmt.Errorf("srv6: SID %s: %w", sid.Addr, err))
					}
				}
			}
		}
	}
	if e := want.ECN; e != nil {
		if e.MinBytes <= 0 || e.MaxBytes < e.MinBytes {
			errs = append(errs, fmt.Errorf("ecn-wred: need 0 < min (%d) <= max (%d) bytes", e.MinBytes, e.MaxBytes))
		}
		if e.MaxProbPercent < 0 || e.MaxProbPercent > 100 {
			errs = append(errs, fmt.Errorf("ecn-wred: drop probability %d%% is not in 0..100", e.MaxProbPercent))
		}
		for _, q := range e.Queues {
			if q < 0 || q > 7 {
				errs = append(errs, fmt.Errorf("ecn-wred: queue %d is not in 0..7", q))
			}
		}
		for _, ds := range e.DSCPs {
			if ds < 0 || ds > 63 {
				errs = append(errs, fmt.Errorf("ecn-wred: DSCP %d is not in 0..63", ds))
			}
		}
	}
	if p := want.PFC; p != nil {
		for _, pr := range p.Priorities {
			if pr < 0 || pr > 7 {
				errs = append(errs, fmt.Errorf("pfc: priority %d is not in 0..7", pr))
			}
		}
	}
	if t := want.Trimming; t != nil {
		if t.Size <= 0 {
			errs = append(errs, fmt.Errorf("trimming: size %d must be positive", t.Size))
		}
		if t.DSCP < 0 || t.DSCP > 63 {
			errs = append(errs, fmt.Errorf("trimming: DSCP %d is not in 0..63", t.DSCP))
		}
		if t.Queue < 0 || t.Queue > 7 {
			errs = append(errs, fmt.Errorf("trimming: queue %d is not in 0..7", t.Queue))
		}
	}
	qerrs, qcap := d.validateQoS(want)
	errs = append(errs, qerrs...)
	if len(errs) > 0 {
		return fmt.Errorf("sonic %s: %w", d.device, errors.Join(errs...))
	}
	return qcap
}

// plan validates want, checks the trimming capability and reads every key
// want touches, in a fixed order: STATE_DB capability (trimming only),
// PORT keys (ecn-wred, pfc), then per feature in the order of
// drivers.AllFeatures.
func (d *Driver) plan(ctx context.Context, want *drivers.DeviceFeatures) ([]*entry, error) {
	if want == nil {
		return nil, nil
	}
	if err := d.validate(want); err != nil {
		return nil, err
	}
	r := d.newReader(ctx)
	if want.Trimming != nil {
		ok, reason, err := r.trimmingCapable()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, &drivers.CapabilityError{Platform: Platform, Device: d.device, Feature: drivers.FeatTrimming, Reason: reason}
		}
	}
	var ports []string
	if want.ECN != nil || want.PFC != nil || want.QueueSize != nil {
		var err error
		if ports, err = r.keys("CONFIG_DB", "PORT|"); err != nil {
			return nil, err
		}
	}
	var entries []*entry
	add := func(e *entry) error {
		if err := r.fill(e); err != nil {
			return err
		}
		entries = append(entries, e)
		return nil
	}

	if len(want.ECMPHash) > 0 {
		var l []string
		seen := map[string]bool{}
		for _, h := range want.ECMPHash {
			if s := hashFields[h]; !seen[s] {
				seen[s] = true
				l = append(l, s)
			}
		}
		v := strings.Join(l, ",")
		if err := add(&entry{feature: drivers.FeatECMPHash, key: switchHashKey, fields: []field{
			{name: "ecmp_hash", db: []string{"ecmp_hash@", "ecmp_hash"}, want: v, cmp: cmpSet},
			{name: "lag_hash", db: []string{"lag_hash@", "lag_hash"}, want: v, cmp: cmpSet},
		}}); err != nil {
			return nil, err
		}
	}

	for _, v := range want.VRFs {
		if err := add(&entry{feature: drivers.FeatVRF, kind: entryVRF, key: "VRF|" + v.Name, vrf: v.Name}); err != nil {
			return nil, err
		}
		for _, i := range v.Interfaces {
			table, _ := interfaceTable(i)
			e := &entry{feature: drivers.FeatVRF, kind: entryBind, key: table + "|" + i, iface: i, vrf: v.Name,
				fields: []field{{name: "vrf_name", db: []string{"vrf_name"}, want: v.Name}}}
			if err := add(e); err != nil {
				return nil, err
			}
			if e.have["vrf_name"] != v.Name {
				// A bind removes the addresses: read them, to name them
				// in the diff and write them back on Revert.
				addrs, err := r.keys("CONFIG_DB", e.key+"|")
				if err != nil {
					return nil, err
				}
				for _, a := range addrs {
					m, err := r.hgetall("CONFIG_DB", e.key+"|"+a)
					if err != nil {
						return nil, err
					}
					e.addrs = append(e.addrs, addrEntry{key: e.key + "|" + a, fields: m})
				}
			}
		}
	}

	if s := want.SRv6; s != nil {
		block, node := srv6Lens(s)
		if err := add(&entry{feature: drivers.FeatSRv6, key: "SRV6_MY_LOCATORS|" + s.Locator, fields: []field{
			{name: "prefix", db: []string{"prefix"}, want: s.Prefix.Masked().Addr().String(), cmp: cmpAddr},
			{name: "block_len", db: []string{"block_len"}, want: strconv.Itoa(block), cmp: cmpNum},
			{name: "node_len", db: []string{"node_len"}, want: strconv.Itoa(node), cmp: cmpNum},
			{name: "func_len", db: []string{"func_len"}, want: "16", cmp: cmpNum},
			{name: "arg_len", db: []string{"arg_len"}, want: "0", cmp: cmpNum},
		}}); err != nil {
			return nil, err
		}
		prefix := "SRV6_MY_SIDS|" + s.Locator + "|"
		if len(s.SIDs) > 0 {
			existing, err := r.keys("CONFIG_DB", prefix)
			if err != nil {
				return nil, err
			}
			stored := map[netip.Prefix]string{}
			for _, k := range existing {
				if p, err := netip.ParsePrefix(k); err == nil {
					stored[p.Masked()] = k
				}
			}
			for _, sid := range s.SIDs {
				fields := []field{{name: "action", db: []string{"action"}, want: sidActions[sid.Behavior], cmp: cmpFold}}
				if sid.Behavior == "uDT46" {
					fields = append(fields, field{name: "decap_vrf", db: []string{"decap_vrf"}, want: sid.VRF})
				}
				e := &entry{feature: drivers.FeatSRv6, fields: fields}
				if k, ok := stored[sid.Addr.Masked()]; ok {
					e.key = prefix + k
					if err := add(e); err != nil {
						return nil, err
					}
				} else {
					e.key = prefix + sid.Addr.Masked().String()
					e.have = map[string]string{} // KEYS says it is not there
					entries = append(entries, e)
				}
			}
		}
	}

	if e := want.ECN; e != nil {
		if err := add(&entry{feature: drivers.FeatECN, key: "WRED_PROFILE|" + wredProfile, fields: []field{
			{name: "ecn", db: []string{"ecn"}, want: "ecn_all", cmp: cmpFold},
			{name: "wred_green_enable", db: []string{"wred_green_enable"}, want: "true", cmp: cmpFold},
			{name: "green_min_threshold", db: []string{"green_min_threshold"}, want: strconv.FormatInt(e.MinBytes, 10), cmp: cmpNum},
			{name: "green_max_threshold", db: []string{"green_max_threshold"}, want: strconv.FormatInt(e.MaxBytes, 10), cmp: cmpNum},
			{name: "green_drop_probability", db: []string{"green_drop_probability"}, want: strconv.Itoa(e.MaxProbPercent), cmp: cmpNum},
		}}); err != nil {
			return nil, err
		}
		ranges := queueRanges(ecnQueues(e))
		for _, p := range ports {
			if len(e.DSCPs) > 0 {
				qs, err := r.dscpQueues(p, e.DSCPs)
				if err != nil {
					return nil, fmt.Errorf("sonic %s: ecn-wred: %w", d.device, err)
				}
				ranges = queueRanges(qs)
			}
			for _, q := range ranges {
				if err := add(&entry{feature: drivers.FeatECN, key: "QUEUE|" + p + "|" + q, fields: []field{
					{name: "wred_profile", db: []string{"wred_profile"}, want: wredProfile, cmp: cmpRef},
				}}); err != nil {
					return nil, err
				}
			}
		}
	}

	if pfc := want.PFC; pfc != nil {
		// The queue size's BUFFER_QUEUE entries win over PFC's lossless
		// egress ones (both in the egress lossless pool).
		taken := map[string]bool{}
		if q := want.QueueSize; q != nil {
			keys, err := d.queueKeys(r, ports, q)
			if err != nil {
				return nil, err
			}
			for _, k := range keys {
				taken[k] = true
			}
		}
		if err := d.pfcPlan(r, ports, pfc, taken, add); err != nil {
			return nil, err
		}
	}

	if t := want.Trimming; t != nil {
		if err := add(&entry{feature: drivers.FeatTrimming, key: trimmingKey, fields: []field{
			{name: "size", db: []string{"size"}, want: strconv.Itoa(t.Size), cmp: cmpNum},
			{name: "dscp_value", db: []string{"dscp_value"}, want: strconv.Itoa(t.DSCP), cmp: cmpNum},
			{name: "queue_index", db: []string{"queue_index"}, want: strconv.Itoa(t.Queue), cmp: cmpNum},
		}}); err != nil {
			return nil, err
		}
		profiles, err := r.keys("CONFIG_DB", "BUFFER_PROFILE|")
		if err != nil {
			return nil, err
		}
		var lossy []string
		for _, p := range profiles {
			l := strings.ToLower(p)
			if strings.Contains(l, "lossy") && !strings.Contains(l, "lossless") && !strings.HasPrefix(l, "ingress") {
				lossy = append(lossy, p)
			}
		}
		if len(lossy) == 0 {
			return nil, fmt.Errorf("sonic %s: trimming: no egress lossy buffer profile to trim on (BUFFER_PROFILE has %s)", d.device, strings.Join(profiles, ", "))
		}
		for _, p := range lossy {
			if err := add(&entry{feature: drivers.FeatTrimming, key: "BUFFER_PROFILE|" + p, fields: []field{
				{name: "packet_discard_action", db: []string{"packet_discard_action"}, want: "trim", cmp: cmpFold},
			}}); err != nil {
				return nil, err
			}
		}
	}
	if q := want.QueueSize; q != nil {
		if err := d.queuePlan(r, ports, q, want.PFC != nil, want.Trimming != nil, add); err != nil {
			return nil, err
		}
	}
	return entries, nil
}

// queueRanges turns sorted queue numbers into SONiC's QUEUE key ranges:
// [3 4] -> ["3-4"], [1 3 4] -> ["1", "3-4"].
func queueRanges(q []int) []string {
	var out []string
	for i := 0; i < len(q); {
		j := i
		for j+1 < len(q) && q[j+1] == q[j]+1 {
			j++
		}
		if i == j {
			out = append(out, strconv.Itoa(q[i]))
		} else {
			out = append(out, fmt.Sprintf("%d-%d", q[i], q[j]))
		}
		i = j + 1
	}
	return out
}

func allChanges(entries []*entry) []change {
	var out []change
	for _, e := range entries {
		out = append(out, e.changes()...)
	}
	return out
}

func toDiff(cs []change) drivers.Diff {
	d := drivers.Diff{}
	for _, c := range cs {
		d = append(d, c.Change)
	}
	return d
}

// Diff returns what Apply would change; it only reads.
func (d *Driver) Diff(ctx context.Context, want *drivers.DeviceFeatures) (drivers.Diff, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	entries, err := d.plan(ctx, want)
	if err != nil {
		return nil, err
	}
	return toDiff(allChanges(entries)), nil
}

// Apply makes CONFIG_DB match want and returns what it changed. After
// reading (as Diff does) it writes only the differences, in order: one
// `sonic-db-cli CONFIG_DB HSET 'KEY' field value ...` per key (HDEL for a
// field to remove), `sudo config vrf add` and `sudo config interface vrf
// bind` for VRFs. Applying the same features again writes nothing.
func (d *Driver) Apply(ctx context.Context, want *drivers.DeviceFeatures) (drivers.Diff, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	entries, err := d.plan(ctx, want)
	if err != nil {
		return nil, err
	}
	cs := allChanges(entries)
	done := drivers.Diff{}
	for i := 0; i < len(cs); {
		c := cs[i]
		if c.implied {
			// Made by the CLI command that follows.
			d.remember(c)
			done = append(done, c.Change)
			i++
			continue
		}
		if c.cli != "" {
			if _, err := d.run(ctx, c.cli); err != nil {
				return done, err
			}
			d.remember(c)
			done = append(done, c.Change)
			i++
			continue
		}
		// one HSET (or HDEL) for the run of changes to the same key
		j := i
		args := []string{}
		for j < len(cs) && cs[j].cli == "" && cs[j].key == c.key && cs[j].del == c.del {
			args = append(args, shellQuote(cs[j].dbField))
			if !c.del {
				args = append(args, shellQuote(cs[j].New))
			}
			j++
		}
		op := "HSET"
		if c.del {
			op = "HDEL"
		}
		cmd := "sonic-db-cli CONFIG_DB " + op + " " + dbQuote(c.key) + " " + strings.Join(args, " ")
		out, err := d.run(ctx, cmd)
		if err != nil {
			return done, err
		}
		if _, err := strconv.Atoi(strings.TrimSpace(out)); err != nil {
			return done, d.replyError(cmd, out, errors.New("expected the number of fields written"))
		}
		for _, c := range cs[i:j] {
			done = append(done, c.Change)
			d.remember(c)
		}
		i = j
	}
	return done, nil
}

// remember keeps the first change Apply made to a key, for Revert (its
// Old is the value before the run).
func (d *Driver) remember(c change) {
	if _, seen := d.applied[c.Key]; seen {
		return
	}
	if d.applied == nil {
		d.applied = map[string]change{}
	}
	d.applied[c.Key] = c
}

// Verify reads every key want touches and returns one check per key, with
// the values read as evidence.
func (d *Driver) Verify(ctx context.Context, want *drivers.DeviceFeatures) ([]drivers.Check, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	entries, err := d.plan(ctx, want)
	if err != nil {
		return nil, err
	}
	checks := make([]drivers.Check, 0, len(entries))
	for _, e := range entries {
		checks = append(checks, e.check(d.device))
	}
	return checks, nil
}
