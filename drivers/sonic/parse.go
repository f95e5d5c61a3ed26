package sonic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/drivers"
)

// version is what `show version` says about the switch.
type version struct {
	Software string // "SONiC Software Version", e.g. SONiC.202311.1-abc
	Platform string // e.g. x86_64-kvm_x86_64-r0
	HwSKU    string // e.g. Force10-S6000
	ASIC     string
}

// parseShowVersion reads the "Key: value" lines of `show version`.
func parseShowVersion(out string) (version, error) {
	var v version
	for _, line := range strings.Split(out, "\n") {
		k, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch strings.TrimSpace(k) {
		case "SONiC Software Version":
			v.Software = val
		case "Platform":
			v.Platform = val
		case "HwSKU":
			v.HwSKU = val
		case "ASIC":
			v.ASIC = val
		}
	}
	if v.Software == "" {
		return v, errors.New(`no "SONiC Software Version:" line`)
	}
	return v, nil
}

// parseKeys parses `sonic-db-cli DB KEYS 'PREFIX*'`: one key per line. It
// returns the part of each key after prefix, sorted naturally. A line that
// does not start with prefix is an error.
func parseKeys(out, prefix string) ([]string, error) {
	var keys []string
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok || rest == "" {
			return nil, fmt.Errorf("line %q is not a %s* key", line, prefix)
		}
		if !seen[rest] {
			seen[rest] = true
			keys = append(keys, rest)
		}
	}
	sortNatural(keys)
	return keys, nil
}

// sortNatural sorts interface-like names with their numbers compared as
// numbers: Ethernet4 before Ethernet12.
func sortNatural(s []string) {
	sort.SliceStable(s, func(i, j int) bool { return naturalLess(s[i], s[j]) })
}

func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := isDigit(a[0]), isDigit(b[0])
		if da && db {
			na, ra := leadingDigits(a)
			nb, rb := leadingDigits(b)
			ta, tb := strings.TrimLeft(na, "0"), strings.TrimLeft(nb, "0")
			if len(ta) != len(tb) {
				return len(ta) < len(tb)
			}
			if ta != tb {
				return ta < tb
			}
			if na != nb {
				return na < nb
			}
			a, b = ra, rb
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func leadingDigits(s string) (string, string) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

// parseInterfacesStatus parses the table `show interfaces status` prints:
// a header line naming the columns (Interface ... Oper Admin ...), a line
// of dashes marking each column's extent, then one row per interface.
// Values are cut by the extents of the dash runs, so values with spaces
// ("QSFP28 or later") do not shift the columns.
func parseInterfacesStatus(out string) ([]drivers.LinkState, error) {
	lines := strings.Split(out, "\n")
	hdr := -1
	for i := 0; i+1 < len(lines); i++ {
		f := strings.Fields(lines[i])
		if len(f) > 0 && f[0] == "Interface" && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "---") {
			hdr = i
			break
		}
	}
	if hdr < 0 {
		return nil, errors.New("no table header (Interface ... Oper Admin) followed by a dash line")
	}
	cols := dashColumns(lines[hdr+1])
	cell := func(line string, c [2]int) string {
		if c[0] >= len(line) {
			return ""
		}
		end := min(c[1], len(line))
		return strings.TrimSpace(line[c[0]:end])
	}
	idx := map[string]int{}
	for i, c := range cols {
		idx[cell(lines[hdr], c)] = i
	}
	iIf, ok1 := idx["Interface"]
	iOper, ok2 := idx["Oper"]
	iAdmin, ok3 := idx["Admin"]
	if !ok1 || !ok2 || !ok3 {
		return nil, fmt.Errorf("table header %q lacks an Interface, Oper or Admin column", strings.TrimSpace(lines[hdr]))
	}
	var links []drivers.LinkState
	for _, line := range lines[hdr+2:] {
		if strings.TrimSpace(line) == "" {
			continue
		}
		name := cell(line, cols[iIf])
		oper := cell(line, cols[iOper])
		admin := cell(line, cols[iAdmin])
		if name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("row %q: no interface name in the Interface column", strings.TrimSpace(line))
		}
		up, err := upDown(oper)
		if err != nil {
			return nil, fmt.Errorf("row %q: Oper: %v", strings.TrimSpace(line), err)
		}
		adm, err := upDown(admin)
		if err != nil {
			return nil, fmt.Errorf("row %q: Admin: %v", strings.TrimSpace(line), err)
		}
		ls := drivers.LinkState{Name: name, Up: up, Admin: adm}
		if iMTU, ok := idx["MTU"]; ok {
			if m := cell(line, cols[iMTU]); m != "" && m != "N/A" {
				n, err := strconv.Atoi(m)
				if err != nil || n < 68 || n > 65535 {
					return nil, fmt.Errorf("row %q: MTU %q is not 68 to 65535", strings.TrimSpace(line), m)
				}
				ls.MTU = n
			}
		}
		links = append(links, ls)
	}
	return links, nil
}

// lldpNeighbor turns one APPL_DB LLDP_ENTRY_TABLE entry (lldp_syncd's
// fields) into a neighbour: its system name and its port: the port ID
// when it is an interface name (subtype 5) or locally assigned (7: SONiC
// sends the interface name), else the port description; a port ID of
// subtype 3 (MAC address) is the port's MAC.
func lldpNeighbor(port string, m map[string]string) drivers.Neighbor {
	n := drivers.Neighbor{Interface: port, Protocol: "lldp", System: m["lldp_rem_sys_name"], Port: m["lldp_rem_port_desc"]}
	id := m["lldp_rem_port_id"]
	switch m["lldp_rem_port_id_subtype"] {
	case "5", "7":
		n.Port = id
	case "3":
		n.PortMAC = strings.ToLower(id)
	default:
		if n.Port == "" {
			n.Port = id
		}
	}
	return n
}

// dashColumns returns the [start, end) byte ranges of the runs of dashes;
// the table pads every header and value to the width of its column's run.
func dashColumns(line string) [][2]int {
	var cols [][2]int
	for i := 0; i < len(line); {
		if line[i] != '-' {
			i++
			continue
		}
		j := i
		for j < len(line) && line[j] == '-' {
			j++
		}
		cols = append(cols, [2]int{i, j})
		i = j
	}
	return cols
}

func upDown(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "up":
		return true, nil
	case "down", "n/a", "":
		return false, nil
	}
	return false, fmt.Errorf("%q is neither up nor down", s)
}

// parseInterfaceAddrs parses `KEYS '*INTERFACE|*|*'`: keys such as
// INTERFACE|Ethernet0|10.0.0.0/31 give each interface its addresses.
func parseInterfaceAddrs(out string) (map[string][]netip.Prefix, error) {
	addrs := map[string][]netip.Prefix{}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		parts := strings.Split(line, "|")
		if len(parts) != 3 || !strings.HasSuffix(parts[0], "INTERFACE") || parts[1] == "" {
			return nil, fmt.Errorf("line %q is not a TABLE|interface|prefix key", line)
		}
		p, err := netip.ParsePrefix(parts[2])
		if err != nil {
			return nil, fmt.Errorf("key %q: %v", line, err)
		}
		addrs[parts[1]] = append(addrs[parts[1]], p)
	}
	for _, l := range addrs {
		sort.Slice(l, func(i, j int) bool { return l[i].String() < l[j].String() })
	}
	return addrs, nil
}

// flexUint is a JSON number that FRR sometimes prints as a string; words
// ("external", "internal") read as 0.
type flexUint uint64

func (f *flexUint) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "null" || s == "" {
		*f = 0
		return nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		if b[0] == '"' {
			*f = 0
			return nil
		}
		return fmt.Errorf("not a non-negative integer: %s", b)
	}
	*f = flexUint(n)
	return nil
}

type frrPeer struct {
	RemoteAS flexUint `json:"remoteAs"`
	LocalAS  flexUint `json:"localAs"`
	State    string   `json:"state"`
	PfxRcd   flexUint `json:"pfxRcd"`
	IDType   string   `json:"idType"`
}

type frrBGPAF struct {
	AS      flexUint           `json:"as"`
	VRFName string             `json:"vrfName"`
	Peers   map[string]frrPeer `json:"peers"`
}

// isBGPAFName reports whether k names an address family in FRR's
// `show bgp summary json` (ipv4Unicast, ipv6Unicast, l2VpnEvpn, ...).
func isBGPAFName(k string) bool {
	return strings.HasPrefix(k, "ipv4") || strings.HasPrefix(k, "ipv6") || strings.HasPrefix(k, "l2Vpn")
}

// parseBGPSummary parses FRR's `show bgp [vrf all] summary json`. Without
// "vrf all" the object maps address family (ipv4Unicast, ...) to
// {as, peers{addr: {remoteAs, state, pfxRcd}}}; with it, VRF name maps to
// such an object. A neighbour present in several address families is one
// session whose received prefixes are summed. The default VRF is "".
func parseBGPSummary(out string) ([]drivers.BGPSession, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	perVRF := map[string]map[string]json.RawMessage{}
	single := false
	for k := range top {
		if isBGPAFName(k) {
			single = true
		}
	}
	if single {
		perVRF["default"] = top
	} else {
		for vrf, raw := range top {
			var afs map[string]json.RawMessage
			if err := json.Unmarshal(raw, &afs); err != nil {
				return nil, fmt.Errorf("VRF %q: not a JSON object: %v", vrf, err)
			}
			perVRF[vrf] = afs
		}
	}
	type key struct{ vrf, peer string }
	sessions := map[key]*drivers.BGPSession{}
	for _, vrf := range sortedKeys(perVRF) {
		afs := perVRF[vrf]
		for _, afName := range sortedKeys(afs) {
			raw := afs[afName]
			if !isBGPAFName(afName) {
				continue // vrfId, vrfName, ... at the VRF level
			}
			var af frrBGPAF
			if err := json.Unmarshal(raw, &af); err != nil {
				return nil, fmt.Errorf("VRF %q %s: %v", vrf, afName, err)
			}
			name := vrf
			if af.VRFName != "" {
				name = af.VRFName
			}
			if name == "default" {
				name = ""
			}
			for _, peer := range sortedKeys(af.Peers) {
				p := af.Peers[peer]
				if peer == "" {
					return nil, fmt.Errorf("VRF %q %s: a peer without an address", vrf, afName)
				}
				k := key{name, peer}
				s := sessions[k]
				if s == nil {
					s = &drivers.BGPSession{VRF: name, Peer: peer}
					if _, err := netip.ParseAddr(peer); err != nil {
						s.Interface = peer // unnumbered: the key is the interface
					}
					sessions[k] = s
				}
				local := p.LocalAS
				if local == 0 {
					local = af.AS
				}
				if local > 0xffffffff || p.RemoteAS > 0xffffffff {
					return nil, fmt.Errorf("VRF %q peer %s: AS number out of range", vrf, peer)
				}
				if s.LocalAS == 0 {
					s.LocalAS = uint32(local)
				}
				if s.RemoteAS == 0 {
					s.RemoteAS = uint32(p.RemoteAS)
				}
				if s.State == "" || p.State == "Established" {
					s.State = p.State
				}
				s.PfxReceived += int(p.PfxRcd)
			}
		}
	}
	out2 := make([]drivers.BGPSession, 0, len(sessions))
	for _, s := range sessions {
		out2 = append(out2, *s)
	}
	sort.Slice(out2, func(i, j int) bool {
		if out2[i].VRF != out2[j].VRF {
			return out2[i].VRF < out2[j].VRF
		}
		return naturalLess(out2[i].Peer, out2[j].Peer)
	})
	return out2, nil
}

type frrNexthop struct {
	IP            string `json:"ip"`
	InterfaceName string `json:"interfaceName"`
	Active        bool   `json:"active"`
}

type frrRoute struct {
	Prefix   string       `json:"prefix"`
	Protocol string       `json:"protocol"`
	Selected bool         `json:"selected"`
	VRFName  string       `json:"vrfName"`
	Nexthops []frrNexthop `json:"nexthops"`
}

// parseRoutes parses FRR's `show ip[v6] route [vrf all] json`: prefix maps
// to a list of route entries {protocol, selected, nexthops[{ip,
// interfaceName, active}]}; with "vrf all" VRF name maps to such an object.
// Only selected entries and their active next hops are kept. The default
// VRF is "".
func parseRoutes(out string) ([]drivers.Route, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	perVRF := map[string]map[string]json.RawMessage{}
	for k, raw := range top {
		switch firstByte(raw) {
		case '[':
			if perVRF["default"] == nil {
				perVRF["default"] = map[string]json.RawMessage{}
			}
			perVRF["default"][k] = raw
		case '{':
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, fmt.Errorf("VRF %q: %v", k, err)
			}
			perVRF[k] = m
		default:
			return nil, fmt.Errorf("%q: neither a route list nor a VRF object", k)
		}
	}
	var routes []drivers.Route
	for vrf, prefixes := range perVRF {
		for pfx, raw := range prefixes {
			prefix, err := netip.ParsePrefix(pfx)
			if err != nil {
				return nil, fmt.Errorf("VRF %q: bad prefix: %v", vrf, err)
			}
			var entries []frrRoute
			if err := json.Unmarshal(raw, &entries); err != nil {
				return nil, fmt.Errorf("VRF %q %s: %v", vrf, pfx, err)
			}
			for _, e := range entries {
				if !e.Selected {
					continue
				}
				name := vrf
				if e.VRFName != "" {
					name = e.VRFName
				}
				if name == "default" {
					name = ""
				}
				r := drivers.Route{VRF: name, Prefix: prefix.Masked(), Protocol: e.Protocol}
				for _, nh := range e.Nexthops {
					if !nh.Active {
						continue
					}
					h := drivers.Nexthop{Dev: nh.InterfaceName}
					if nh.IP != "" {
						a, err := netip.ParseAddr(nh.IP)
						if err != nil {
							return nil, fmt.Errorf("VRF %q %s: next hop: %v", vrf, pfx, err)
						}
						h.Via = a
					}
					r.Nexthops = append(r.Nexthops, h)
				}
				routes = append(routes, r)
			}
		}
	}
	sortRoutes(routes)
	return routes, nil
}

// sortRoutes orders routes by VRF (default first), then prefix (IPv4
// before IPv6), then protocol.
func sortRoutes(routes []drivers.Route) {
	sort.SliceStable(routes, func(i, j int) bool {
		if routes[i].VRF != routes[j].VRF {
			return routes[i].VRF < routes[j].VRF
		}
		pi, pj := routes[i].Prefix, routes[j].Prefix
		if pi.Addr() != pj.Addr() {
			return pi.Addr().Less(pj.Addr())
		}
		if pi.Bits() != pj.Bits() {
			return pi.Bits() < pj.Bits()
		}
		return routes[i].Protocol < routes[j].Protocol
	})
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func firstByte(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}
