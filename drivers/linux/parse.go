package linux

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/drivers"
)

// This file parses what iproute2 prints (-j JSON and, where the JSON of an
// older iproute2 lacks details, the text form). Every parser takes the
// device's reply as it came and returns a clear error for anything it
// cannot make sense of; none of them panics.

// ipLink is one element of `ip -j link` / `ip -j addr`.
type ipLink struct {
	Ifname    string   `json:"ifname"`
	Address   string   `json:"address"`
	Flags     []string `json:"flags"`
	Operstate string   `json:"operstate"`
	Master    string   `json:"master"`
	Mtu       int      `json:"mtu"`
	LinkType  string   `json:"link_type"`
	AddrInfo  []struct {
		Family    string `json:"family"`
		Local     string `json:"local"`
		Prefixlen int    `json:"prefixlen"`
		Scope     string `json:"scope"`
	} `json:"addr_info"`
	Linkinfo *struct {
		InfoKind string `json:"info_kind"`
		InfoData *struct {
			Table int `json:"table"`
		} `json:"info_data"`
	} `json:"linkinfo"`
}

func (l *ipLink) hasFlag(f string) bool {
	for _, x := range l.Flags {
		if x == f {
			return true
		}
	}
	return false
}

// parseLinks parses `ip -j link` or `ip -j addr`.
func parseLinks(out string) ([]ipLink, error) {
	var links []ipLink
	if err := json.Unmarshal([]byte(out), &links); err != nil {
		return nil, fmt.Errorf("not a JSON list of links: %v", err)
	}
	for i, l := range links {
		if l.Ifname == "" {
			return nil, fmt.Errorf("link %d has no ifname", i)
		}
	}
	return links, nil
}

// linkStates turns `ip -j addr` into link states. A link is up when its
// operational state is UP, or UNKNOWN with the carrier on (loopback and
// some virtual devices); admin state is the UP flag.
func linkStates(links []ipLink) ([]drivers.LinkState, error) {
	out := make([]drivers.LinkState, 0, len(links))
	for _, l := range links {
		s := drivers.LinkState{Name: l.Ifname, Admin: l.hasFlag("UP"), MTU: l.Mtu}
		if l.LinkType == "ether" || l.LinkType == "" {
			s.MAC = strings.ToLower(l.Address)
		}
		switch l.Operstate {
		case "UP":
			s.Up = true
		case "UNKNOWN", "":
			s.Up = s.Admin && l.hasFlag("LOWER_UP")
		}
		for _, a := range l.AddrInfo {
			if a.Local == "" {
				continue
			}
			addr, err := netip.ParseAddr(a.Local)
			if err != nil {
				return nil, fmt.Errorf("link %s: address %q: %v", l.Ifname, a.Local, err)
			}
			p, err := addr.Prefix(a.Prefixlen)
			if err != nil || a.Prefixlen < 0 {
				return nil, fmt.Errorf("link %s: address %s/%d: bad prefix length", l.Ifname, a.Local, a.Prefixlen)
			}
			s.Addrs = append(s.Addrs, netip.PrefixFrom(addr, p.Bits()))
		}
		out = append(out, s)
	}
	return out, nil
}

// ipVia is the "via" object of a route whose gateway has another family
// (IPv4 over an IPv6 next hop).
type ipVia struct {
	Family string `json:"family"`
	Host   string `json:"host"`
}

type ipNexthop struct {
	Gateway string   `json:"gateway"`
	Via     *ipVia   `json:"via"`
	Dev     string   `json:"dev"`
	Weight  int      `json:"weight"`
	Flags   []string `json:"flags"`
}

// ipRoute is one element of `ip -j route show`.
type ipRoute struct {
	Type     string          `json:"type"`
	Dst      string          `json:"dst"`
	Gateway  string          `json:"gateway"`
	Via      *ipVia          `json:"via"`
	Dev      string          `json:"dev"`
	Protocol json.RawMessage `json:"protocol"`
	Metric   *int64          `json:"metric"`
	Table    json.RawMessage `json:"table"`
	NHID     *int            `json:"nhid"`
	Nexthops []ipNexthop     `json:"nexthops"`
	// Lightweight tunnel encapsulation (iproute2 prints these flat).
	Encap   string   `json:"encap"`
	Action  string   `json:"action"`
	Flavors []string `json:"flavors"`
	LBLen   *int     `json:"lblen"`
	NFLen   *int     `json:"nflen"`
	NH6     string   `json:"nh6"`
	NH4     string   `json:"nh4"`
	VRFTab  *int     `json:"vrftable"`
	Mode    string   `json:"mode"`
	Segs    []string `json:"segs"`
}

// parseRoutes parses `ip -j [-4|-6] route show`.
func parseRoutes(out string) ([]ipRoute, error) {
	var rs []ipRoute
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		return nil, fmt.Errorf("not a JSON list of routes: %v", err)
	}
	for i, r := range rs {
		if r.Dst == "" {
			return nil, fmt.Errorf("route %d has no dst", i)
		}
	}
	return rs, nil
}

// rawString returns a JSON string or number as text ("" for null).
func rawString(m json.RawMessage) string {
	if len(m) == 0 || string(m) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(m, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(m, &n) == nil {
		return n.String()
	}
	return strings.Trim(string(m), `"`)
}

// parseDst parses a route destination as iproute2 prints it: "default",
// a prefix, or an address for a host route.
func parseDst(dst string, v6 bool) (netip.Prefix, error) {
	if dst == "default" {
		if v6 {
			return netip.PrefixFrom(netip.IPv6Unspecified(), 0), nil
		}
		return netip.PrefixFrom(netip.IPv4Unspecified(), 0), nil
	}
	if strings.Contains(dst, "/") {
		p, err := netip.ParsePrefix(dst)
		if err != nil {
			return netip.Prefix{}, err
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(dst)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func parseGateway(gw string, via *ipVia) (netip.Addr, error) {
	if gw == "" && via != nil {
		gw = via.Host
	}
	if gw == "" {
		return netip.Addr{}, nil
	}
	return netip.ParseAddr(gw)
}

// ipNexthopObj is one element of `ip -j nexthop show`.
type ipNexthopObj struct {
	ID        int    `json:"id"`
	Gateway   string `json:"gateway"`
	Dev       string `json:"dev"`
	Blackhole *bool  `json:"blackhole"`
	Group     []struct {
		ID     int `json:"id"`
		Weight int `json:"weight"`
	} `json:"group"`
}

// parseNexthopObjects parses `ip -j nexthop show` into an id map.
func parseNexthopObjects(out string) (map[int]ipNexthopObj, error) {
	var objs []ipNexthopObj
	if err := json.Unmarshal([]byte(out), &objs); err != nil {
		return nil, fmt.Errorf("not a JSON list of nexthops: %v", err)
	}
	m := make(map[int]ipNexthopObj, len(objs))
	for i, o := range objs {
		if o.ID <= 0 {
			return nil, fmt.Errorf("nexthop %d has no id", i)
		}
		m[o.ID] = o
	}
	return m, nil
}

// resolveNHID expands a nexthop object (a single nexthop or a group of
// them) into route nexthops.
func resolveNHID(id int, objs map[int]ipNexthopObj, depth int) ([]drivers.Nexthop, error) {
	o, ok := objs[id]
	if !ok {
		return nil, fmt.Errorf("nexthop id %d is not listed by `ip -j nexthop show`", id)
	}
	if depth > 4 {
		return nil, fmt.Errorf("nexthop id %d: groups nested too deep", id)
	}
	if len(o.Group) > 0 {
		var out []drivers.Nexthop
		for _, g := range o.Group {
			nh, err := resolveNHID(g.ID, objs, depth+1)
			if err != nil {
				return nil, fmt.Errorf("group %d: %w", id, err)
			}
			out = append(out, nh...)
		}
		return out, nil
	}
	if o.Blackhole != nil && *o.Blackhole {
		return nil, nil
	}
	gw, err := parseGateway(o.Gateway, nil)
	if err != nil {
		return nil, fmt.Errorf("nexthop id %d: gateway %q: %v", id, o.Gateway, err)
	}
	return []drivers.Nexthop{{Via: gw, Dev: o.Dev}}, nil
}

// needsNHObjects reports whether some route names a nexthop object
// without showing its paths.
func needsNHObjects(rs []ipRoute) bool {
	for _, r := range rs {
		if r.NHID != nil && r.Gateway == "" && r.Via == nil && r.Dev == "" && len(r.Nexthops) == 0 {
			return true
		}
	}
	return false
}

// toRoutes converts parsed routes into drivers.Route values, resolving
// nexthop objects through objs (which may be nil when no route needs it).
func toRoutes(rs []ipRoute, v6 bool, vrf string, objs map[int]ipNexthopObj) ([]drivers.Route, error) {
	out := make([]drivers.Route, 0, len(rs))
	for _, r := range rs {
		p, err := parseDst(r.Dst, v6)
		if err != nil {
			return nil, fmt.Errorf("route dst %q: %v", r.Dst, err)
		}
		rt := drivers.Route{VRF: vrf, Prefix: p, Protocol: rawString(r.Protocol)}
		switch r.Type {
		case "blackhole", "unreachable", "prohibit", "throw":
			rt.Drop = r.Type
		}
		if rt.Protocol == "" {
			rt.Protocol = "boot" // iproute2 omits the default protocol
		}
		switch {
		case len(r.Nexthops) > 0:
			for _, nh := range r.Nexthops {
				gw, err := parseGateway(nh.Gateway, nh.Via)
				if err != nil {
					return nil, fmt.Errorf("route %s: nexthop gateway: %v", r.Dst, err)
				}
				rt.Nexthops = append(rt.Nexthops, drivers.Nexthop{Via: gw, Dev: nh.Dev})
			}
		case r.Gateway != "" || r.Via != nil || r.Dev != "":
			gw, err := parseGateway(r.Gateway, r.Via)
			if err != nil {
				return nil, fmt.Errorf("route %s: gateway: %v", r.Dst, err)
			}
			rt.Nexthops = []drivers.Nexthop{{Via: gw, Dev: r.Dev}}
		case r.NHID != nil:
			nhs, err := resolveNHID(*r.NHID, objs, 0)
			if err != nil {
				return nil, fmt.Errorf("route %s: %w", r.Dst, err)
			}
			rt.Nexthops = nhs
		}
		out = append(out, rt)
	}
	return out, nil
}

// seg6Route is the SRv6 part of a route, in a form that compares.
type seg6Route struct {
	Prefix   netip.Prefix
	Encap    string // seg6local, seg6
	Action   string // seg6local: End, End.X, End.DT46, End.DX4, ...
	Flavors  string // comma-separated, sorted
	LBLen    int
	NFLen    int
	NH6      netip.Addr // End.X, End.DX6
	NH4      netip.Addr // End.DX4
	VRFTable int
	Mode     string // seg6: encap, inline, ...
	Segs     string // seg6: comma-separated SID list
	Dev      string
}

// args renders the route as `ip route` arguments after the prefix.
func (s seg6Route) args() string {
	var b strings.Builder
	b.WriteString("encap " + s.Encap)
	switch s.Encap {
	case "seg6local":
		b.WriteString(" action " + s.Action)
		if s.NH6.IsValid() {
			b.WriteString(" nh6 " + s.NH6.String())
		}
		if s.NH4.IsValid() {
			b.WriteString(" nh4 " + s.NH4.String())
		}
		if s.VRFTable != 0 {
			fmt.Fprintf(&b, " vrftable %d", s.VRFTable)
		}
		if s.Flavors != "" {
			b.WriteString(" flavors " + s.Flavors)
			if s.LBLen != 0 {
				fmt.Fprintf(&b, " lblen %d", s.LBLen)
			}
			if s.NFLen != 0 {
				fmt.Fprintf(&b, " nflen %d", s.NFLen)
			}
		}
	case "seg6":
		b.WriteString(" mode " + s.Mode + " segs " + s.Segs)
	}
	if s.Dev != "" {
		b.WriteString(" dev " + s.Dev)
	}
	return b.String()
}

func (s seg6Route) String() string { return s.Prefix.String() + " " + s.args() }

func joinSorted(xs []string) string {
	c := append([]string(nil), xs...)
	sort.Strings(c)
	return strings.Join(c, ",")
}

// seg6FromJSON extracts the SRv6 encapsulation of a parsed route; ok is
// false for routes without seg6/seg6local encapsulation. complete is
// false when the JSON names the encapsulation but lacks its details
// (older iproute2): then the text form must be read.
func seg6FromJSON(r ipRoute, v6 bool) (s seg6Route, ok, complete bool, err error) {
	if r.Encap != "seg6local" && r.Encap != "seg6" {
		return s, false, true, nil
	}
	p, err := parseDst(r.Dst, v6)
	if err != nil {
		return s, false, false, fmt.Errorf("route dst %q: %v", r.Dst, err)
	}
	s = seg6Route{Prefix: p, Encap: r.Encap, Dev: r.Dev}
	switch r.Encap {
	case "seg6local":
		if r.Action == "" {
			return s, true, false, nil
		}
		s.Action = r.Action
		s.Flavors = joinSorted(r.Flavors)
		if r.LBLen != nil {
			s.LBLen = *r.LBLen
		}
		if r.NFLen != nil {
			s.NFLen = *r.NFLen
		}
		if r.NH6 != "" {
			if s.NH6, err = netip.ParseAddr(r.NH6); err != nil || !s.NH6.Is6() {
				return s, false, false, fmt.Errorf("route %s: nh6 %q: not an IPv6 address", r.Dst, r.NH6)
			}
		}
		if r.NH4 != "" {
			if s.NH4, err = netip.ParseAddr(r.NH4); err != nil || !s.NH4.Is4() {
				return s, false, false, fmt.Errorf("route %s: nh4 %q: not an IPv4 address", r.Dst, r.NH4)
			}
		}
		if r.VRFTab != nil {
			s.VRFTable = *r.VRFTab
		}
	case "seg6":
		if len(r.Segs) == 0 {
			return s, true, false, nil
		}
		s.Mode = r.Mode
		segs, err := canonSegs(r.Segs)
		if err != nil {
			return s, false, false, fmt.Errorf("route %s: %v", r.Dst, err)
		}
		s.Segs = segs
	}
	return s, true, true, nil
}

func canonSegs(in []string) (string, error) {
	out := make([]string, 0, len(in))
	for _, x := range in {
		a, err := netip.ParseAddr(x)
		if err != nil {
			return "", fmt.Errorf("segment %q: %v", x, err)
		}
		out = append(out, a.String())
	}
	return strings.Join(out, ","), nil
}

// parseSeg6Text parses the text form of `ip [-6] route show` for routes
// with seg6/seg6local encapsulation, e.g.
//
//	fd00:bbbb:1::/48  encap seg6local action End flavors next-csid lblen 32 nflen 16 dev lo metric 1024 pref medium
//	2001:db8:1::/64  encap seg6 mode encap segs 2 [ fd00:bbbb:1:: fd00:bbbb:2:: ] dev eth1 metric 1024 pref medium
//
// Lines without such encapsulation are skipped. It also returns each
// route's line, for evidence.
func parseSeg6Text(out string, v6 bool) ([]seg6Route, map[netip.Prefix]string, error) {
	var routes []seg6Route
	lines := map[netip.Prefix]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(sc.Text(), "\t") || strings.HasPrefix(sc.Text(), " ") {
			continue // nexthop continuation lines of multipath routes
		}
		i := 0
		// A leading route type ("unreachable fd00::/64 ...").
		switch f[0] {
		case "unicast", "local", "broadcast", "multicast", "throw", "unreachable", "prohibit", "blackhole", "nat", "anycast":
			i = 1
		}
		if i >= len(f) {
			continue
		}
		p, err := parseDst(f[i], v6)
		if err != nil {
			return nil, nil, fmt.Errorf("route line %q: destination: %v", line, err)
		}
		if _, seen := lines[p]; !seen {
			lines[p] = line
		}
		s, ok, err := seg6FromFields(p, f[i+1:])
		if err != nil {
			return nil, nil, fmt.Errorf("route line %q: %v", line, err)
		}
		if ok {
			routes = append(routes, s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	return routes, lines, nil
}

func seg6FromFields(p netip.Prefix, f []string) (seg6Route, bool, error) {
	s := seg6Route{Prefix: p}
	next := func(i int, what string) (string, error) {
		if i+1 >= len(f) {
			return "", fmt.Errorf("%s without a value", what)
		}
		return f[i+1], nil
	}
	atoi := func(i int, what string) (int, error) {
		v, err := next(i, what)
		if err != nil {
			return 0, err
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("%s %q: not a number", what, v)
		}
		return n, nil
	}
	for i := 0; i < len(f); i++ {
		var err error
		var v string
		switch f[i] {
		case "encap":
			if v, err = next(i, "encap"); err == nil {
				s.Encap = v
				i++
			}
		case "action":
			if v, err = next(i, "action"); err == nil {
				s.Action = v
				i++
			}
		case "flavors":
			if v, err = next(i, "flavors"); err == nil {
				s.Flavors = joinSorted(strings.Split(v, ","))
				i++
			}
		case "lblen":
			s.LBLen, err = atoi(i, "lblen")
			i++
		case "nflen":
			s.NFLen, err = atoi(i, "nflen")
			i++
		case "vrftable":
			s.VRFTable, err = atoi(i, "vrftable")
			i++
		case "nh6", "nh4":
			what := f[i]
			if v, err = next(i, what); err == nil {
				var a netip.Addr
				if a, err = netip.ParseAddr(v); err == nil && (what == "nh6") != a.Is6() {
					err = fmt.Errorf("%s %s: wrong address family", what, v)
				}
				if what == "nh6" {
					s.NH6 = a
				} else {
					s.NH4 = a
				}
				i++
			}
		case "mode":
			if s.Encap == "seg6" {
				if v, err = next(i, "mode"); err == nil {
					s.Mode = v
					i++
				}
			}
		case "dev":
			if v, err = next(i, "dev"); err == nil {
				s.Dev = v
				i++
			}
		case "segs":
			// segs N [ a b c ]
			if i+2 >= len(f) || f[i+2] != "[" {
				return s, false, fmt.Errorf("segs: want \"segs N [ ... ]\"")
			}
			j := i + 3
			var segs []string
			for ; j < len(f) && f[j] != "]"; j++ {
				segs = append(segs, f[j])
			}
			if j >= len(f) {
				return s, false, fmt.Errorf("segs: no closing ]")
			}
			if s.Segs, err = canonSegs(segs); err != nil {
				return s, false, err
			}
			i = j
		}
		if err != nil {
			return s, false, err
		}
	}
	if s.Encap != "seg6local" && s.Encap != "seg6" {
		return s, false, nil
	}
	return s, true, nil
}

// parseSysctlDump parses the "path<TAB>value" lines readSysctls prints;
// a value of "-" marks a sysctl that does not exist.
func parseSysctlDump(out string) (map[string]string, error) {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimRight(l, "\r")
		if l == "" {
			continue
		}
		k, v, ok := strings.Cut(l, "\t")
		if !ok || k == "" {
			return nil, fmt.Errorf("unexpected sysctl line %q", l)
		}
		v = strings.TrimSpace(v)
		if v == "-" {
			continue
		}
		m[k] = strings.Join(strings.Fields(v), " ")
	}
	return m, nil
}

// ipNeigh is one entry of `ip -j neigh show`.
type ipNeigh struct {
	Dst    string   `json:"dst"`
	Dev    string   `json:"dev"`
	Lladdr string   `json:"lladdr"`
	State  []string `json:"state"`
}

// parseNeighbors parses `ip -j neigh show` into neighbours (protocol
// "nd"); entries without a link layer address (FAILED, INCOMPLETE) are
// left out.
func parseNeighbors(out string) ([]drivers.Neighbor, error) {
	out = strings.TrimSpace(out)
	if out == "" {
		return nil, nil
	}
	var es []ipNeigh
	if err := json.Unmarshal([]byte(out), &es); err != nil {
		return nil, fmt.Errorf("not a JSON list of neighbours: %v", err)
	}
	var ns []drivers.Neighbor
	for _, e := range es {
		if e.Lladdr == "" || e.Dev == "" {
			continue
		}
		n := drivers.Neighbor{Interface: e.Dev, Protocol: "nd", MAC: strings.ToLower(e.Lladdr)}
		if a, err := netip.ParseAddr(e.Dst); err == nil {
			n.Addr = a
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// lldpJSON0 is `lldpcli -f json0 show neighbors`.
type lldpJSON0 struct {
	LLDP []struct {
		Interface []struct {
			Name    string `json:"name"`
			Chassis []struct {
				Name []struct {
					Value string `json:"value"`
				} `json:"name"`
			} `json:"chassis"`
			Port []struct {
				ID []struct {
					Type  string `json:"type"`
					Value string `json:"value"`
				} `json:"id"`
				Descr []struct {
					Value string `json:"value"`
				} `json:"descr"`
			} `json:"port"`
		} `json:"interface"`
	} `json:"lldp"`
}

// parseLLDP parses `lldpcli -f json0 show neighbors` into neighbours
// (protocol "lldp"). An empty reply (no lldpd) is no neighbours.
func parseLLDP(out string) ([]drivers.Neighbor, error) {
	out = strings.TrimSpace(out)
	if out == "" {
		return nil, nil
	}
	var d lldpJSON0
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		return nil, fmt.Errorf("not lldpcli's json0: %v", err)
	}
	var ns []drivers.Neighbor
	for _, l := range d.LLDP {
		for _, i := range l.Interface {
			n := drivers.Neighbor{Interface: i.Name, Protocol: "lldp"}
			for _, c := range i.Chassis {
				for _, v := range c.Name {
					n.System = v.Value
				}
			}
			for _, p := range i.Port {
				for _, v := range p.Descr {
					n.Port = v.Value
				}
				for _, id := range p.ID {
					switch id.Type {
					case "mac":
						n.PortMAC = strings.ToLower(id.Value)
					case "ifname":
						if n.Port == "" {
							n.Port = id.Value
						}
					}
				}
			}
			if n.Port == "" {
				n.Port = n.PortMAC
			}
			ns = append(ns, n)
		}
	}
	return ns, nil
}

// parseForwarding reads ip_forward and ipv6 all.forwarding (one value a
// line).
func parseForwarding(out string) (drivers.Forwarding, error) {
	f := strings.Fields(out)
	if len(f) != 2 {
		return drivers.Forwarding{}, fmt.Errorf("want two values (0 or 1), got %d", len(f))
	}
	var v [2]bool
	for i, s := range f {
		switch s {
		case "0":
		case "1":
			v[i] = true
		default:
			return drivers.Forwarding{}, fmt.Errorf("%q is not 0 or 1", s)
		}
	}
	return drivers.Forwarding{IPv4: v[0], IPv6: v[1]}, nil
}
