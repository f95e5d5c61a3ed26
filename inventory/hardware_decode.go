package inventory

import (
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/internal/fileerr"
	"github.com/fabricbench/fabricbench/internal/secret"
	"github.com/fabricbench/fabricbench/internal/yamlx"
	"github.com/fabricbench/fabricbench/units"
)

// The decoder of hardware inventories (LoadHardware, ParseHardware): it
// walks the YAML document and checks every field at its position.

// LoadHardware reads and validates the inventory file at path; see
// ParseHardware.
func LoadHardware(path string, platforms ...string) (*Hardware, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size() > yamlx.MaxBytes {
		return nil, yamlx.TooLarge(path, st.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseHardware(path, b, platforms...)
}

// ParseHardware decodes and validates an inventory document. name is the
// file name used in errors; relative paths in the document are resolved
// against its directory. Devices may name one of platforms, or of
// DefaultPlatforms when none are given.
//
// All problems are returned at once as HardwareErrors, each naming the
// file, line, column and field path:
//
//	lab.yaml:12:15: devices[1].credentials: unknown credential set "switch" (have hosts or switches)
//
// Secret values never appear in errors: a password, key or passphrase that
// is not a reference is reported without its text.
func ParseHardware(name string, b []byte, platforms ...string) (*Hardware, error) {
	if len(platforms) == 0 {
		platforms = DefaultPlatforms
	}
	p := &hwParser{file: name, platforms: platforms, bad: map[string]bool{}}
	dir, err := filepath.Abs(filepath.Dir(name))
	if err != nil {
		dir = filepath.Dir(name)
	}
	p.hw = &Hardware{File: name, Dir: dir, Credentials: map[string]*Credential{}, index: map[string]int{}}
	doc, errs := yamlx.Parse(name, b, "an inventory file")
	if errs != nil {
		return nil, errs.Finish(name)
	}
	if doc.Body == nil {
		p.errAt(ypos{Line: 1, Column: 1}, "", "empty inventory (want name, known_hosts, credentials and devices)")
		return nil, p.errs.Finish(name)
	}
	root, errs := doc.Tree()
	// Later problems at or below a value the YAML layer reported are its
	// consequences and not reported.
	for _, e := range errs {
		p.bad[e.Path] = true
	}
	p.errs = append(p.errs, errs...)
	if root == nil {
		return nil, p.errs.Finish(name)
	}
	p.document(root)
	if err := p.errs.Finish(name); err != nil {
		return nil, err
	}
	return p.hw, nil
}

// The document is read from yamlx's resolved tree (anchors, aliases, tags
// and merge keys resolved; duplicate keys reported; limits enforced).
type (
	ypos   = yamlx.Pos
	ynode  = yamlx.Node
	yentry = yamlx.Entry
)

type hwParser struct {
	file      string
	platforms []string
	// badDefaultSpeed is set when default_speed is invalid (and reported),
	// so that links relying on it are not reported again.
	badDefaultSpeed bool
	hw              *Hardware
	errs            HardwareErrors
	// Paths at which the YAML layer reported a problem.
	bad map[string]bool
}

func (p *hwParser) errAt(pos ypos, path, format string, args ...any) {
	for b := range p.bad {
		if under(path, b) {
			return
		}
	}
	p.errs = append(p.errs, yamlx.Errorf(p.file, pos, path, format, args...))
}

// ---------------------------------------------------------------------------
// Paths and value helpers.

// under reports whether path is base or lies below it.
func under(path, base string) bool {
	if base == "" || !strings.HasPrefix(path, base) {
		return path == base
	}
	rest := path[len(base):]
	return rest == "" || rest[0] == '.' || rest[0] == '['
}

func describeY(n *ynode) string { return n.Describe() }

// obj is a mapping whose keys have been checked against the known ones.
type obj struct {
	path string
	pos  ypos
	vals map[string]*yentry
}

// object checks n's keys: unknown keys are reported (yamlx reported
// duplicates). It returns nil (after reporting) when n is not a mapping.
func (p *hwParser) object(path string, n *ynode, at ypos, known ...string) *obj {
	if n == nil || n.Kind != yamlx.Map {
		if n != nil {
			at = n.Pos
		}
		p.errAt(at, path, "want a mapping, got %s", describeY(n))
		return nil
	}
	o := &obj{path: path, pos: n.Pos, vals: map[string]*yentry{}}
	for i := range n.Entries {
		e := &n.Entries[i]
		kp := fileerr.Field(path, e.Key)
		if !contains(known, e.Key) {
			p.errAt(e.KeyPos, kp, "%s", yamlx.UnknownKey(e.Key, known, ""))
			continue
		}
		o.vals[e.Key] = e
	}
	return o
}

func posOf(n *ynode) ypos {
	if n == nil {
		return ypos{}
	}
	return n.Pos
}

func (o *obj) keyPath(key string) string { return fileerr.Field(o.path, key) }

// get returns key's value, nil when absent or null.
func (o *obj) get(key string) *ynode {
	if e := o.vals[key]; e != nil {
		return e.Value
	}
	return nil
}

// at returns the position to report key at: its value, its key, or the
// mapping.
func (o *obj) at(key string) ypos {
	if e := o.vals[key]; e != nil {
		if e.Value != nil {
			return e.Value.Pos
		}
		return e.KeyPos
	}
	return o.pos
}

func (p *hwParser) errKey(o *obj, key, format string, args ...any) {
	p.errAt(o.at(key), o.keyPath(key), format, args...)
}

// str returns a string field. A missing or empty required field is
// reported as "required" (hint is appended).
func (p *hwParser) str(o *obj, key string, required bool, hint string) (string, bool) {
	v := o.get(key)
	if v == nil {
		if required {
			p.errKey(o, key, "required%s", hint)
		}
		return "", false
	}
	if v.Kind != yamlx.Scalar {
		p.errKey(o, key, "want a string, got %s", describeY(v))
		return "", false
	}
	if strings.TrimSpace(v.Text) == "" {
		if required {
			p.errKey(o, key, "required%s", hint)
		} else {
			p.errKey(o, key, "must not be empty")
		}
		return "", false
	}
	return v.Text, true
}

// integer returns an integer field in [lo, hi].
func (p *hwParser) integer(o *obj, key string, lo, hi int64) (int64, bool) {
	v := o.get(key)
	if v == nil {
		return 0, false
	}
	var x int64
	switch n := v.Value.(type) {
	case int64:
		x = n
	case uint64:
		if n > math.MaxInt64 {
			p.errKey(o, key, "%s is out of range (want %d..%d)", v.Text, lo, hi)
			return 0, false
		}
		x = int64(n)
	default:
		p.errKey(o, key, "want an integer, got %s", describeY(v))
		return 0, false
	}
	if x < lo || x > hi {
		p.errKey(o, key, "%d is out of range (want %d..%d)", x, lo, hi)
		return 0, false
	}
	return x, true
}

func (p *hwParser) boolean(o *obj, key string) (bool, bool) {
	v := o.get(key)
	if v == nil {
		return false, false
	}
	b, ok := v.Value.(bool)
	if !ok {
		p.errKey(o, key, "want true or false, got %s", describeY(v))
		return false, false
	}
	return b, true
}

// list returns a list field (nil when absent).
func (p *hwParser) list(o *obj, key string) ([]*ynode, bool) {
	v := o.get(key)
	if v == nil {
		return nil, false
	}
	if v.Kind != yamlx.Seq {
		p.errKey(o, key, "want a list, got %s", describeY(v))
		return nil, false
	}
	return v.Items, true
}

// dict returns a mapping field with free-form keys (unique: yamlx
// reported duplicates).
func (p *hwParser) dict(o *obj, key string) ([]yentry, bool) {
	v := o.get(key)
	if v == nil {
		return nil, false
	}
	if v.Kind != yamlx.Map {
		p.errKey(o, key, "want a mapping, got %s", describeY(v))
		return nil, false
	}
	return v.Entries, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------------------
// Values.

var (
	hwNameRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	hwPortRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_./:-]*$`)
	envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// containerRE is Docker's container name syntax.
	containerRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$`)
)

const maxNameLen = 64

// parseMgmt splits a management address: host, host:port, an IPv6
// address, [IPv6] or [IPv6]:port. host is an IP address or a DNS name.
func parseMgmt(s string) (host string, port int, err error) {
	want := fmt.Errorf("%q is not a management address (want HOST or HOST:PORT, e.g. 10.0.0.11, 10.0.0.11:2222, leaf0.lab.example, [fd00::11]:22)", s)
	if s != strings.TrimSpace(s) || s == "" {
		return "", 0, want
	}
	hostPart, portPart := s, ""
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.Index(s, "]")
		if end < 0 {
			return "", 0, want
		}
		hostPart, portPart = s[1:end], s[end+1:]
		if portPart != "" {
			if !strings.HasPrefix(portPart, ":") {
				return "", 0, want
			}
			portPart = portPart[1:]
			if portPart == "" {
				return "", 0, want
			}
		}
		a, e := netip.ParseAddr(hostPart)
		if e != nil || !a.Is6() {
			return "", 0, fmt.Errorf("%q: %q in brackets is not an IPv6 address", s, hostPart)
		}
	case strings.Count(s, ":") > 1:
		a, e := netip.ParseAddr(s)
		if e != nil || !a.Is6() {
			return "", 0, fmt.Errorf("%q is not an IPv6 address (write an IPv6 address with a port as [ADDRESS]:PORT)", s)
		}
		return s, 0, nil
	case strings.Contains(s, ":"):
		var e error
		hostPart, portPart, e = net.SplitHostPort(s)
		if e != nil || portPart == "" {
			return "", 0, want
		}
	}
	if portPart != "" {
		n, e := strconv.Atoi(portPart)
		if e != nil || n < 1 || n > 65535 || portPart[0] == '+' {
			return "", 0, fmt.Errorf("%q: port %q is not a number in 1..65535", s, portPart)
		}
		port = n
	}
	if _, e := netip.ParseAddr(hostPart); e == nil {
		return hostPart, port, nil
	}
	if !validDNSName(hostPart) {
		return "", 0, fmt.Errorf("%q: %q is neither an IP address nor a DNS name", s, hostPart)
	}
	return hostPart, port, nil
}

func validDNSName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	// A name whose last label is numeric is a mistyped IPv4 address.
	last := labels[len(labels)-1]
	return strings.Trim(last, "0123456789") != ""
}

// checkRef validates a secret reference without repeating it: the value
// may be a literal secret.
func checkRef(field, ref string) string {
	kind, arg, _ := strings.Cut(ref, ":")
	if kind != "env" && kind != "file" {
		return field + " must be a reference (env:NAME or file:PATH), not a literal"
	}
	if arg == "" {
		if kind == "env" {
			return field + ": env: needs a variable name (env:NAME)"
		}
		return field + ": file: needs a path (file:PATH)"
	}
	if secret.Check(ref) != nil {
		return field + " must be a reference (env:NAME or file:PATH), not a literal"
	}
	if kind == "env" && !envNameRE.MatchString(arg) {
		return field + ": env:NAME needs an environment variable name of letters, digits and _"
	}
	if kind == "file" && strings.HasPrefix(arg, "~") && arg != "~" && !strings.HasPrefix(arg, "~/") {
		return field + ": file:~user/... is not supported (use file:~/... or an absolute path)"
	}
	return ""
}

// ---------------------------------------------------------------------------
// The document.

var (
	topKeys        = []string{"name", "known_hosts", "default_speed", "timeout", "credentials", "devices", "links", "planes", "rails"}
	credentialKeys = []string{"user", "password", "key", "passphrase", "ssh_agent"}
	deviceKeys     = []string{"name", "platform", "role", "mgmt", "credentials", "asn", "loopback", "srv6_locator", "pod", "timeout", "ports", "nics", "gnmi", "slurm_node", "container"}
	portKeys       = []string{"name", "speed", "interface"}
	gnmiKeys       = []string{"address", "profile", "credentials", "tls", "insecure"}
	tlsKeys        = []string{"ca", "server_name", "skip_verify"}
	nicKeys        = []string{"name", "rail", "address", "speed"}
	linkKeys       = []string{"a", "b", "speed"}
)

// devMeta keeps where a device's fields were, for cross-checks.
type devMeta struct {
	idx   int // in the file's devices list
	o     *obj
	ports []*obj // parallel to Device.Ports
	nics  []*obj // parallel to Device.NICs
	ok    bool   // role known: take part in link checks
}

// linkMeta keeps where a link's fields were.
type linkMeta struct {
	path  string
	pos   ypos
	ends  [2]ypos
	paths [2]string
	speed *obj // the link mapping (nil for the [a, b] form)
}

// usedAddr records where an address was declared.
type usedAddr struct {
	what string
	path string
}

func (p *hwParser) document(root *ynode) {
	o := p.object("", root, ypos{Line: 1, Column: 1}, topKeys...)
	if o == nil {
		return
	}
	hw := p.hw
	if name, ok := p.str(o, "name", true, " (the inventory's name, e.g. lab-a)"); ok {
		if !hwNameRE.MatchString(name) || len(name) > maxNameLen {
			p.errKey(o, "name", "%q is not a valid name (letters, digits, '_', '.', '-'; at most %d characters)", name, maxNameLen)
		}
		hw.Name = name
	}
	if kh, ok := p.str(o, "known_hosts", true, " (the known_hosts file device host keys are checked against, relative to this file)"); ok {
		path, err := resolveHWPath(hw.Dir, kh)
		if err != nil {
			p.errKey(o, "known_hosts", "%v", err)
		}
		hw.KnownHosts = path
	}
	if s, ok := p.str(o, "default_speed", false, ""); ok {
		if r, err := units.ParseSpeed(s); err != nil {
			p.errKey(o, "default_speed", "%v", err)
			p.badDefaultSpeed = true
		} else {
			hw.DefaultSpeed, hw.DefaultRateBps = s, r
		}
	}
	hw.Timeout = p.timeout(o)
	p.credentials(o)
	metas := p.devices(o)
	used := p.links(o, metas)
	p.nicsOnLinks(metas, used)
	p.planes(o)
	p.rails(o, metas, used)
}

func (p *hwParser) timeout(o *obj) time.Duration {
	s, ok := p.str(o, "timeout", false, "")
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		p.errKey(o, "timeout", "%q is not a positive duration (want e.g. 30s, 2m)", s)
		return 0
	}
	return d
}

func (p *hwParser) credentials(o *obj) {
	ents, _ := p.dict(o, "credentials")
	for _, e := range ents {
		path := fileerr.Field("credentials", e.Key)
		if !hwNameRE.MatchString(e.Key) {
			p.errAt(e.KeyPos, path, "%q is not a valid credential set name (letters, digits, '_', '.', '-')", e.Key)
			continue
		}
		c := &Credential{Name: e.Key}
		p.hw.Credentials[e.Key] = c
		co := p.object(path, e.Value, e.KeyPos, credentialKeys...)
		if co == nil {
			continue
		}
		c.User, _ = p.str(co, "user", true, " (the SSH user)")
		for _, f := range []struct {
			key string
			dst *string
		}{{"password", &c.Password}, {"key", &c.Key}, {"passphrase", &c.Passphrase}} {
			v := co.get(f.key)
			if v == nil {
				continue
			}
			if v.Kind != yamlx.Scalar {
				p.errKey(co, f.key, "want a secret reference (env:NAME or file:PATH), got %s", describeY(v))
				continue
			}
			ref, isStr := v.Value.(string)
			if !isStr {
				ref = "" // numbers and booleans are literals too
			}
			if msg := checkRef(f.key, ref); msg != "" {
				p.errKey(co, f.key, "%s", msg)
				continue
			}
			*f.dst = ref
		}
		agent, agentOK := p.boolean(co, "ssh_agent")
		c.SSHAgent = agent
		if co.get("passphrase") != nil && co.get("key") == nil {
			p.errKey(co, "passphrase", "a passphrase needs a key")
		}
		badAgent := co.get("ssh_agent") != nil && !agentOK
		if co.get("password") == nil && co.get("key") == nil && !c.SSHAgent && !badAgent {
			p.errAt(co.pos, path, "needs password, key or ssh_agent: true")
		}
	}
}

func (p *hwParser) devices(o *obj) []devMeta {
	hw := p.hw
	items, ok := p.list(o, "devices")
	if !ok {
		if o.get("devices") == nil {
			p.errKey(o, "devices", "required (the switches and hosts)")
		}
		return nil
	}
	if len(items) == 0 {
		p.errKey(o, "devices", "needs at least one device")
	}
	metas := make([]devMeta, 0, len(items))
	mgmts := map[string]usedAddr{}
	addrs := map[netip.Addr]usedAddr{}
	for i, n := range items {
		path := fileerr.Index("devices", i)
		do := p.object(path, n, o.at("devices"), deviceKeys...)
		if do == nil {
			continue
		}
		d := Device{Pod: -1}
		m := devMeta{idx: i, o: do}
		name, nameOK := p.str(do, "name", true, "")
		if nameOK {
			switch j, dup := hw.index[name]; {
			case !hwNameRE.MatchString(name) || len(name) > maxNameLen:
				p.errKey(do, "name", "%q is not a valid device name (letters, digits, '_', '.', '-'; at most %d characters)", name, maxNameLen)
				nameOK = false
			case dup:
				p.errKey(do, "name", "%s is already used by devices[%d]", name, metas[j].idx)
				nameOK = false
			}
		}
		d.Name = name
		if pl, ok := p.str(do, "platform", true, " (one of "+yamlx.OrList(p.platforms)+")"); ok {
			if !contains(p.platforms, pl) {
				msg := fmt.Sprintf("unknown platform %q (want %s)", pl, yamlx.OrList(p.platforms))
				if s := fileerr.Suggest(pl, p.platforms); s != "" {
					msg = fmt.Sprintf("unknown platform %q (did you mean %s?)", pl, s)
				}
				p.errKey(do, "platform", "%s", msg)
			}
			d.Platform = pl
		}
		if r, ok := p.str(do, "role", true, " ("+yamlx.OrList(deviceRoles)+")"); ok {
			if contains(deviceRoles, r) {
				d.Role = DeviceRole(r)
				m.ok = nameOK
			} else {
				p.errKey(do, "role", "unknown role %q (want %s)", r, yamlx.OrList(deviceRoles))
			}
		}
		if s, ok := p.str(do, "mgmt", true, " (the management address, HOST or HOST:PORT)"); ok {
			host, port, err := parseMgmt(s)
			if err != nil {
				p.errKey(do, "mgmt", "%v", err)
			} else {
				d.Mgmt, d.MgmtHost, d.MgmtPort = s, host, port
				eff := port
				if eff == 0 {
					eff = 22
				}
				key := strings.ToLower(strings.TrimSuffix(host, ".")) + "#" + strconv.Itoa(eff)
				if a, err := netip.ParseAddr(host); err == nil {
					key = a.WithZone("").String() + "#" + strconv.Itoa(eff)
				}
				if u, dup := mgmts[key]; dup {
					p.errKey(do, "mgmt", "%s is already the management address of %s (%s)", s, u.what, u.path)
				} else {
					mgmts[key] = usedAddr{what: name, path: path + ".mgmt"}
				}
			}
		}
		if cs, ok := p.str(do, "credentials", true, " (the name of a credential set)"); ok {
			if _, known := hw.Credentials[cs]; !known {
				have := make([]string, 0, len(hw.Credentials))
				for k := range hw.Credentials {
					have = append(have, k)
				}
				sort.Strings(have)
				msg := "no credential sets are defined under credentials"
				if len(have) > 0 {
					msg = "have " + yamlx.OrList(have)
				}
				p.errKey(do, "credentials", "unknown credential set %q (%s)", cs, msg)
			}
			d.Credentials = cs
		}
		if v, ok := p.integer(do, "asn", 1, math.MaxUint32); ok {
			d.ASN = uint32(v)
		}
		if s, ok := p.str(do, "loopback", false, ""); ok {
			pfx, err := netip.ParsePrefix(s)
			if err != nil {
				p.errKey(do, "loopback", "%q is not an address with a prefix length (want e.g. 10.1.0.1/32)", s)
			} else {
				d.Loopback = pfx
				p.uniqueAddr(addrs, pfx.Addr(), usedAddr{what: name + " loopback", path: path + ".loopback"}, do, "loopback")
			}
		}
		if s, ok := p.str(do, "srv6_locator", false, ""); ok {
			pfx, err := netip.ParsePrefix(s)
			switch {
			case err != nil || !pfx.Addr().Is6() || pfx.Addr().Is4In6():
				p.errKey(do, "srv6_locator", "%q is not an IPv6 prefix (want a micro-SID locator such as fd00:bbbb:1::/48)", s)
			case pfx.Bits() != 48 || pfx.Masked() != pfx:
				p.errKey(do, "srv6_locator", "%q: want a /48 micro-SID locator in the F3216 format (a 32-bit block and a 16-bit node ID), e.g. fd00:bbbb:1::/48", s)
			case d.Role == DeviceHost:
				p.errKey(do, "srv6_locator", "a host has no locator (switches only)")
			default:
				d.SRv6Locator = pfx
			}
		}
		if v, ok := p.integer(do, "pod", 0, MaxSwitches); ok {
			d.Pod = int(v)
		}
		d.Timeout = p.timeout(do)
		p.devicePorts(&d, &m, do, path)
		p.deviceNICs(&d, &m, do, path, addrs)
		d.GNMI = p.gnmi(do, path, d.Credentials)
		if sn, ok := p.str(do, "slurm_node", false, ""); ok {
			if !hwNameRE.MatchString(sn) {
				p.errKey(do, "slurm_node", "%q is not a valid node name", sn)
			} else if d.Role != DeviceHost {
				p.errKey(do, "slurm_node", "only hosts run agents (this is a %s)", d.Role)
			} else {
				d.SlurmNode = sn
			}
		}
		if c, ok := p.str(do, "container", false, ""); ok {
			if !containerRE.MatchString(c) {
				p.errKey(do, "container", "%q is not a container name", c)
			} else {
				d.Container = c
			}
		}
		if nameOK {
			hw.index[name] = len(hw.Devices)
		}
		hw.Devices = append(hw.Devices, d)
		metas = append(metas, m)
	}
	return metas
}

func (p *hwParser) uniqueAddr(addrs map[netip.Addr]usedAddr, a netip.Addr, u usedAddr, o *obj, key string) {
	a = a.WithZone("")
	if prev, dup := addrs[a]; dup {
		p.errKey(o, key, "%s is already used by %s (%s)", a, prev.what, prev.path)
		return
	}
	addrs[a] = u
}

func (p *hwParser) devicePorts(d *Device, m *devMeta, do *obj, path string) {
	items, ok := p.list(do, "ports")
	if !ok {
		return
	}
	if d.Role == DeviceHost {
		p.errKey(do, "ports", "hosts list their interfaces under nics (with their rails), not ports")
		return
	}
	d.DeclaresPorts = true
	seen := map[string]int{}
	for j, n := range items {
		pp := fileerr.Index(path+".ports", j)
		po := p.object(pp, n, do.at("ports"), portKeys...)
		if po == nil {
			continue
		}
		name, ok := p.str(po, "name", true, "")
		if !ok {
			continue
		}
		if !hwPortRE.MatchString(name) {
			p.errKey(po, "name", "%q is not a valid port name", name)
			continue
		}
		if k, dup := seen[name]; dup {
			p.errKey(po, "name", "port %s is already declared (%s)", name, fileerr.Index(path+".ports", k))
			continue
		}
		seen[name] = j
		dp := DevicePort{Name: name}
		dp.Speed, dp.RateBps = p.speed(po)
		if ifn, ok := p.str(po, "interface", false, ""); ok {
			if !hwPortRE.MatchString(ifn) {
				p.errKey(po, "interface", "%q is not a valid interface name", ifn)
			} else if ifn != name {
				dp.Interface = ifn
			}
		}
		d.Ports = append(d.Ports, dp)
		m.ports = append(m.ports, po)
	}
}

func (p *hwParser) deviceNICs(d *Device, m *devMeta, do *obj, path string, addrs map[netip.Addr]usedAddr) {
	items, ok := p.list(do, "nics")
	if !ok {
		return
	}
	if d.Role.IsSwitch() {
		p.errKey(do, "nics", "only hosts have nics; list a switch's interfaces under ports")
		return
	}
	d.DeclaresNICs = true
	seen := map[string]int{}
	rails := map[int]int{}
	for j, n := range items {
		np := fileerr.Index(path+".nics", j)
		no := p.object(np, n, do.at("nics"), nicKeys...)
		if no == nil {
			continue
		}
		name, ok := p.str(no, "name", true, "")
		if !ok {
			continue
		}
		if !hwPortRE.MatchString(name) {
			p.errKey(no, "name", "%q is not a valid NIC name", name)
			continue
		}
		if k, dup := seen[name]; dup {
			p.errKey(no, "name", "NIC %s is already declared (%s)", name, fileerr.Index(path+".nics", k))
			continue
		}
		seen[name] = j
		nic := NIC{Name: name, Rail: -1}
		if r, ok := p.integer(no, "rail", 0, 1<<16); ok {
			if k, dup := rails[int(r)]; dup {
				p.errKey(no, "rail", "rail %d is already used by %s", r, fileerr.Index(path+".nics", k))
			} else {
				rails[int(r)] = j
				nic.Rail = int(r)
			}
		}
		if s, ok := p.str(no, "address", false, ""); ok {
			pfx, err := netip.ParsePrefix(s)
			if err != nil {
				p.errKey(no, "address", "%q is not an address with a prefix length (want e.g. 10.2.0.1/31)", s)
			} else {
				nic.Address = pfx
				p.uniqueAddr(addrs, pfx.Addr(), usedAddr{what: d.Name + ":" + name, path: np + ".address"}, no, "address")
			}
		}
		nic.Speed, nic.RateBps = p.speed(no)
		d.NICs = append(d.NICs, nic)
		m.nics = append(m.nics, no)
	}
}

func (p *hwParser) speed(o *obj) (string, int64) {
	s, ok := p.str(o, "speed", false, "")
	if !ok {
		return "", 0
	}
	r, err := units.ParseSpeed(s)
	if err != nil {
		p.errKey(o, "speed", "%v", err)
		return "", 0
	}
	return s, r
}

// portRef locates a declared port or NIC: its speed and where it was
// declared.
func (p *hwParser) portRef(d *Device, m *devMeta, port string) (rate int64, speed, path string, declared bool) {
	if d.Role == DeviceHost {
		for j, n := range d.NICs {
			if n.Name == port {
				return n.RateBps, n.Speed, m.nics[j].path, true
			}
		}
		return 0, "", "", !d.DeclaresNICs
	}
	for j, pt := range d.Ports {
		if pt.Name == port {
			return pt.RateBps, pt.Speed, m.ports[j].path, true
		}
	}
	return 0, "", "", !d.DeclaresPorts
}

// linkUse is where a port is used.
type linkUse struct {
	link int
	path string
}

func (p *hwParser) links(o *obj, metas []devMeta) map[Endpoint]linkUse {
	hw := p.hw
	used := map[Endpoint]linkUse{}
	items, ok := p.list(o, "links")
	if !ok {
		return used
	}
	for i, n := range items {
		path := fileerr.Index("links", i)
		var lm linkMeta
		lm.path = path
		var ends [2]string
		var c Cable
		endsOK := true
		switch {
		case n != nil && n.Kind == yamlx.Seq:
			lm.pos = n.Pos
			if len(n.Items) != 2 {
				p.errAt(n.Pos, path, "want two endpoints [DEVICE:PORT, DEVICE:PORT], got %d", len(n.Items))
				continue
			}
			for k, e := range n.Items {
				lm.paths[k] = fileerr.Index(path, k)
				lm.ends[k] = posOf(e)
				if e == nil || e.Kind != yamlx.Scalar {
					at := posOf(e)
					if e == nil {
						at = n.Pos
					}
					p.errAt(at, lm.paths[k], "want DEVICE:PORT, got %s", describeY(e))
					endsOK = false
					continue
				}
				ends[k] = e.Text
			}
		case n != nil && n.Kind == yamlx.Map:
			lo := p.object(path, n, n.Pos, linkKeys...)
			if lo == nil {
				continue
			}
			lm.pos, lm.speed = n.Pos, lo
			for k, key := range []string{"a", "b"} {
				lm.paths[k] = path + "." + key
				lm.ends[k] = lo.at(key)
				s, ok := p.str(lo, key, true, " (DEVICE:PORT)")
				if !ok {
					endsOK = false
					continue
				}
				ends[k] = s
			}
			c.Speed, c.RateBps = p.speed(lo)
		default:
			at := posOf(n)
			if n == nil {
				at = o.at("links")
			}
			p.errAt(at, path, "want [DEVICE:PORT, DEVICE:PORT] or {a: DEVICE:PORT, b: DEVICE:PORT, speed: SPEED}, got %s", describeY(n))
			continue
		}
		if !endsOK {
			continue
		}
		var devs [2]*Device
		var dms [2]*devMeta
		for k := 0; k < 2; k++ {
			dev, port, found := strings.Cut(ends[k], ":")
			if !found || dev == "" || port == "" {
				p.errAt(lm.ends[k], lm.paths[k], "%q: want DEVICE:PORT, e.g. leaf0:Ethernet0", ends[k])
				endsOK = false
				continue
			}
			ep := Endpoint{Device: dev, Port: port}
			if k == 0 {
				c.A = ep
			} else {
				c.B = ep
			}
			j, known := hw.index[dev]
			if !known {
				p.errAt(lm.ends[k], lm.paths[k], "no device named %q", dev)
				endsOK = false
				continue
			}
			devs[k], dms[k] = &hw.Devices[j], &metas[j]
			if !dms[k].ok {
				endsOK = false // its role is unknown: reported already
				continue
			}
			if _, _, _, declared := p.portRef(devs[k], dms[k], port); !declared {
				what, list := "port", "ports"
				if devs[k].Role == DeviceHost {
					what, list = "NIC", "nics"
				}
				p.errAt(lm.ends[k], lm.paths[k], "%s has no %s %q (not in %s.%s)", dev, what, port, dms[k].o.path, list)
				endsOK = false
				continue
			}
			if u, dup := used[ep]; dup {
				p.errAt(lm.ends[k], lm.paths[k], "%s is already used by %s", ep, u.path)
				endsOK = false
				continue
			}
		}
		if !endsOK {
			continue
		}
		if c.A == c.B {
			p.errAt(lm.ends[1], lm.paths[1], "%s is linked to itself", c.A)
			continue
		}
		// A rejected link still uses its ports (link -1), so that they are
		// not reported again as unused or reused.
		used[c.A] = linkUse{link: -1, path: lm.paths[0]}
		used[c.B] = linkUse{link: -1, path: lm.paths[1]}
		ra, rb := devs[0].Role, devs[1].Role
		switch {
		case c.A.Device == c.B.Device:
			p.errAt(lm.pos, path, "links %s to itself", c.A.Device)
			continue
		case ra == DeviceHost && rb == DeviceHost:
			p.errAt(lm.pos, path, "links two hosts (%s and %s): hosts connect to leaves", c.A.Device, c.B.Device)
			continue
		case ra == DeviceHost && rb != DeviceLeaf || rb == DeviceHost && ra != DeviceLeaf:
			h, s, sr := c.A.Device, c.B.Device, rb
			if rb == DeviceHost {
				h, s, sr = c.B.Device, c.A.Device, ra
			}
			p.errAt(lm.pos, path, "links host %s to %s, a %s: hosts connect to leaves", h, s, sr)
			continue
		case ra == rb:
			p.errAt(lm.pos, path, "links two %ss (%s and %s): links join different tiers (host-leaf, leaf-spine, spine-super-spine)", ra, c.A.Device, c.B.Device)
			continue
		}
		if !p.linkSpeed(&c, &lm, devs, dms) {
			continue
		}
		used[c.A] = linkUse{link: len(hw.Links), path: lm.paths[0]}
		used[c.B] = linkUse{link: len(hw.Links), path: lm.paths[1]}
		hw.Links = append(hw.Links, c)
	}
	return used
}

// linkSpeed resolves a link's rate: its own speed, else its ports' (which
// must agree), else default_speed. Declared port speeds must match the
// link's.
func (p *hwParser) linkSpeed(c *Cable, lm *linkMeta, devs [2]*Device, dms [2]*devMeta) bool {
	var rates [2]int64
	var speeds, paths [2]string
	for k, ep := range []Endpoint{c.A, c.B} {
		rates[k], speeds[k], paths[k], _ = p.portRef(devs[k], dms[k], ep.Port)
	}
	if lm.speed != nil && lm.speed.get("speed") != nil && c.RateBps == 0 {
		return false // bad speed: reported
	}
	if c.RateBps > 0 {
		for k, ep := range []Endpoint{c.A, c.B} {
			if rates[k] > 0 && rates[k] != c.RateBps {
				p.errKey(lm.speed, "speed", "%s does not match the speed of %s (%s, %s.speed)", c.Speed, ep, speeds[k], paths[k])
				return false
			}
		}
		return true
	}
	switch {
	case rates[0] > 0 && rates[1] > 0 && rates[0] != rates[1]:
		p.errAt(lm.pos, lm.path, "the ports' speeds differ: %s is %s (%s.speed), %s is %s (%s.speed)", c.A, speeds[0], paths[0], c.B, speeds[1], paths[1])
		return false
	case rates[0] > 0:
		c.RateBps = rates[0]
	case rates[1] > 0:
		c.RateBps = rates[1]
	case p.hw.DefaultRateBps > 0:
		c.RateBps = p.hw.DefaultRateBps
	default:
		if !p.badDefaultSpeed {
			p.errAt(lm.pos, lm.path, "no speed: set speed on the link or its ports, or default_speed")
		}
		return false
	}
	return true
}

func (p *hwParser) nicsOnLinks(metas []devMeta, used map[Endpoint]linkUse) {
	for i := range p.hw.Devices {
		d := &p.hw.Devices[i]
		if d.Role != DeviceHost || !metas[i].ok {
			continue
		}
		for j, n := range d.NICs {
			if _, ok := used[Endpoint{d.Name, n.Name}]; !ok {
				p.errKey(metas[i].nics[j], "name", "%s:%s is on no link (every declared NIC must be cabled)", d.Name, n.Name)
			}
		}
	}
}

// member checks a device name listed in planes or rails.
func (p *hwParser) member(pos ypos, path string, n *ynode, wantLeaf bool) (*Device, bool) {
	if n == nil || n.Kind != yamlx.Scalar {
		if n == nil {
			p.errAt(pos, path, "want a device name, got null")
		} else {
			p.errAt(n.Pos, path, "want a device name, got %s", describeY(n))
		}
		return nil, false
	}
	d := p.hw.Device(n.Text)
	switch {
	case d == nil:
		p.errAt(n.Pos, path, "no device named %q", n.Text)
	case d.Role == DeviceHost:
		p.errAt(n.Pos, path, "%s is a host, not a switch", d.Name)
	case d.Role == "":
		return nil, false // reported
	case wantLeaf && d.Role != DeviceLeaf:
		p.errAt(n.Pos, path, "%s is a %s, not a leaf (rails list the leaves that host NICs attach to)", d.Name, d.Role)
	default:
		return d, true
	}
	return nil, false
}

func (p *hwParser) planes(o *obj) {
	ents, _ := p.dict(o, "planes")
	in := map[string]string{}
	for _, e := range ents {
		path := fileerr.Field("planes", e.Key)
		if !hwNameRE.MatchString(e.Key) {
			p.errAt(e.KeyPos, path, "%q is not a valid plane name (letters, digits, '_', '.', '-')", e.Key)
			continue
		}
		if e.Value == nil || e.Value.Kind != yamlx.Seq {
			at := e.KeyPos
			if e.Value != nil {
				at = e.Value.Pos
			}
			p.errAt(at, path, "want a list of switches, got %s", describeY(e.Value))
			continue
		}
		if len(e.Value.Items) == 0 {
			p.errAt(e.Value.Pos, path, "needs at least one switch")
			continue
		}
		pl := Plane{Name: e.Key}
		for k, n := range e.Value.Items {
			mp := fileerr.Index(path, k)
			d, ok := p.member(e.Value.Pos, mp, n, false)
			if !ok {
				continue
			}
			if prev, dup := in[d.Name]; dup {
				p.errAt(n.Pos, mp, "%s is already in plane %s", d.Name, prev)
				continue
			}
			in[d.Name] = e.Key
			pl.Switches = append(pl.Switches, d.Name)
		}
		p.hw.Planes = append(p.hw.Planes, pl)
	}
}

func (p *hwParser) rails(o *obj, metas []devMeta, used map[Endpoint]linkUse) {
	hw := p.hw
	ents, declared := p.dict(o, "rails")
	type railInfo struct {
		pos    ypos
		path   string
		leaves map[string]bool
		list   []string
		nics   int
	}
	rails := map[int]*railInfo{}
	for _, e := range ents {
		path := fileerr.Field("rails", e.Key)
		r, err := strconv.Atoi(e.Key)
		if err != nil || r < 0 || r > 1<<16 || strconv.Itoa(r) != e.Key {
			p.errAt(e.KeyPos, path, "rail %q is not a rail number (0, 1, ...)", e.Key)
			continue
		}
		if e.Value == nil || e.Value.Kind != yamlx.Seq {
			at := e.KeyPos
			if e.Value != nil {
				at = e.Value.Pos
			}
			p.errAt(at, path, "want a list of leaves, got %s", describeY(e.Value))
			continue
		}
		ri := &railInfo{pos: e.KeyPos, path: path, leaves: map[string]bool{}}
		if len(e.Value.Items) == 0 {
			p.errAt(e.Value.Pos, path, "needs at least one leaf")
		}
		for k, n := range e.Value.Items {
			mp := fileerr.Index(path, k)
			d, ok := p.member(e.Value.Pos, mp, n, true)
			if !ok {
				continue
			}
			if ri.leaves[d.Name] {
				p.errAt(n.Pos, mp, "%s is already listed", d.Name)
				continue
			}
			ri.leaves[d.Name] = true
			ri.list = append(ri.list, d.Name)
		}
		rails[r] = ri
	}
	if !declared || len(ents) == 0 {
		return
	}
	// Every cabled host NIC must be on a declared rail and attach to one of
	// its leaves.
	for i := range hw.Devices {
		d := &hw.Devices[i]
		if d.Role != DeviceHost || !metas[i].ok {
			continue
		}
		for j, n := range d.NICs {
			no := metas[i].nics[j]
			u, cabled := used[Endpoint{d.Name, n.Name}]
			if n.Rail < 0 {
				if no.get("rail") == nil {
					p.errKey(no, "rail", "required: the inventory declares rails")
				}
				continue
			}
			ri := rails[n.Rail]
			if ri == nil {
				p.errKey(no, "rail", "rail %d is not declared under rails", n.Rail)
				continue
			}
			ri.nics++
			if !cabled || u.link < 0 {
				continue
			}
			c := hw.Links[u.link]
			leaf := c.A
			if leaf.Device == d.Name {
				leaf = c.B
			}
			if len(ri.list) > 0 && !ri.leaves[leaf.Device] {
				p.errKey(no, "rail", "%s:%s is on rail %d but links to %s, which %s does not list (%s)", d.Name, n.Name, n.Rail, leaf.Device, ri.path, strings.Join(ri.list, ", "))
			}
		}
	}
	keys := make([]int, 0, len(rails))
	for r := range rails {
		keys = append(keys, r)
	}
	sort.Ints(keys)
	for _, r := range keys {
		ri := rails[r]
		if ri.nics == 0 {
			p.errAt(ri.pos, ri.path, "no host NIC is on rail %d", r)
		}
		hw.Rails = append(hw.Rails, Rail{Index: r, Leaves: ri.list})
	}
}

// gnmi parses a device's gnmi mapping.
func (p *hwParser) gnmi(do *obj, path, devCreds string) *GNMI {
	if do.get("gnmi") == nil {
		return nil
	}
	gp := path + ".gnmi"
	o := p.object(gp, do.get("gnmi"), do.at("gnmi"), gnmiKeys...)
	if o == nil {
		return nil
	}
	g := &GNMI{Profile: ProfileOpenConfig}
	if a, ok := p.str(o, "address", true, " (the gNMI server, HOST:PORT)"); ok {
		host, port, err := parseMgmt(a)
		switch {
		case err != nil:
			p.errKey(o, "address", "%v", err)
		case port == 0:
			p.errKey(o, "address", "%q has no port (want HOST:PORT, e.g. 198.18.200.21:8080)", a)
		default:
			g.Address = net.JoinHostPort(host, strconv.Itoa(port))
		}
	}
	if pr, ok := p.str(o, "profile", false, ""); ok {
		if !contains(GNMIProfiles, pr) {
			p.errKey(o, "profile", "unknown profile %q (want %s)", pr, yamlx.OrList(GNMIProfiles))
		} else {
			g.Profile = pr
		}
	}
	g.Credentials = devCreds
	if cs, ok := p.str(o, "credentials", false, ""); ok {
		if _, known := p.hw.Credentials[cs]; !known {
			p.errKey(o, "credentials", "unknown credential set %q", cs)
		}
		g.Credentials = cs
	}
	insecure, _ := p.boolean(o, "insecure")
	g.Insecure = insecure
	if o.get("tls") != nil {
		to := p.object(gp+".tls", o.get("tls"), o.at("tls"), tlsKeys...)
		if to != nil {
			if ca, ok := p.str(to, "ca", false, ""); ok {
				abs, err := resolveHWPath(p.hw.Dir, ca)
				if err != nil {
					p.errKey(to, "ca", "%v", err)
				}
				g.CA = abs
			}
			g.ServerName, _ = p.str(to, "server_name", false, "")
			g.SkipVerify, _ = p.boolean(to, "skip_verify")
			switch {
			case g.CA != "" && g.SkipVerify:
				p.errKey(to, "skip_verify", "set either ca (verify the server) or skip_verify: true, not both")
			case g.CA == "" && !g.SkipVerify && to.get("skip_verify") == nil:
				p.errAt(to.pos, gp+".tls", "needs ca (the CA file the server's certificate is checked against) or skip_verify: true")
			}
		}
		if insecure {
			p.errKey(o, "insecure", "insecure: true is plain-text gRPC; it cannot be combined with tls")
		}
	} else if !insecure && o.get("insecure") == nil {
		p.errAt(o.pos, gp, "needs tls (ca: FILE, or skip_verify: true) or, for plain-text gRPC, insecure: true")
	}
	return g
}
