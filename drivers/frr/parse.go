package frr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/drivers"
)

// This file parses what vtysh prints. Every parser takes the reply as it
// came and returns a clear error for what it cannot make sense of; none
// of them panics.

// parseASN parses an AS number as FRR prints it: a JSON number, or a
// string in plain or asdot notation.
func parseASN(raw json.RawMessage) (uint32, error) {
	s := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	if s == "" || s == "null" {
		return 0, nil
	}
	if hi, lo, ok := strings.Cut(s, "."); ok {
		h, err1 := strconv.ParseUint(hi, 10, 16)
		l, err2 := strconv.ParseUint(lo, 10, 16)
		if err1 != nil || err2 != nil {
			return 0, fmt.Errorf("AS %q", s)
		}
		return uint32(h)<<16 | uint32(l), nil
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("AS %q", s)
	}
	return uint32(n), nil
}

type bgpPeerJSON struct {
	RemoteAs json.RawMessage `json:"remoteAs"`
	LocalAs  json.RawMessage `json:"localAs"`
	State    string          `json:"bgpState"`
	AFInfo   map[string]struct {
		Accepted *int `json:"acceptedPrefixCounter"`
	} `json:"addressFamilyInfo"`
}

// parseBGPNeighbors parses `show bgp vrf all neighbors json`: VRF name ->
// {"vrfId", "vrfName", peer -> neighbor}. Peers are keyed by address (or
// interface, for unnumbered sessions). Interface is left for the caller.
func parseBGPNeighbors(out string) ([]drivers.BGPSession, error) {
	out = strings.TrimSpace(out)
	if out == "" {
		return nil, errors.New("empty reply")
	}
	var vrfs map[string]map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &vrfs); err != nil {
		return nil, fmt.Errorf("not a JSON object of VRFs: %v", err)
	}
	var sessions []drivers.BGPSession
	for vrfName, fields := range vrfs {
		vrf := vrfName
		if vrf == "default" {
			vrf = ""
		}
		for key, raw := range fields {
			if key == "vrfId" || key == "vrfName" {
				continue
			}
			if b := bytes.TrimSpace(raw); len(b) == 0 || b[0] != '{' {
				continue // other scalar attributes
			}
			var p bgpPeerJSON
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, fmt.Errorf("VRF %s neighbor %s: %v", vrfName, key, err)
			}
			if p.State == "" {
				return nil, fmt.Errorf("VRF %s neighbor %s: no bgpState", vrfName, key)
			}
			s := drivers.BGPSession{VRF: vrf, Peer: key, State: p.State}
			var err error
			if s.RemoteAS, err = parseASN(p.RemoteAs); err != nil {
				return nil, fmt.Errorf("VRF %s neighbor %s: remote %v", vrfName, key, err)
			}
			if s.LocalAS, err = parseASN(p.LocalAs); err != nil {
				return nil, fmt.Errorf("VRF %s neighbor %s: local %v", vrfName, key, err)
			}
			for _, af := range p.AFInfo {
				if af.Accepted != nil {
					s.PfxReceived += *af.Accepted
				}
			}
			if _, err := netip.ParseAddr(key); err != nil {
				s.Interface = key // unnumbered: the peer is the interface
			}
			sessions = append(sessions, s)
		}
	}
	sort.Slice(sessions, func(i, j int) bool {
		if sessions[i].VRF != sessions[j].VRF {
			return sessions[i].VRF < sessions[j].VRF
		}
		return sessions[i].Peer < sessions[j].Peer
	})
	return sessions, nil
}

// sessionInterface returns the link whose connected prefix holds peer.
func sessionInterface(peer string, links []drivers.LinkState) string {
	a, err := netip.ParseAddr(peer)
	if err != nil {
		return ""
	}
	a = a.Unmap()
	for _, l := range links {
		for _, p := range l.Addrs {
			if p.Masked().Contains(a) {
				return l.Name
			}
		}
	}
	return ""
}

type routeEntryJSON struct {
	Prefix    string `json:"prefix"`
	Protocol  string `json:"protocol"`
	VRFName   string `json:"vrfName"`
	Selected  bool   `json:"selected"`
	Installed bool   `json:"installed"`
	Nexthops  []struct {
		IP          string `json:"ip"`
		Interface   string `json:"interfaceName"`
		Active      bool   `json:"active"`
		Recursive   bool   `json:"recursive"`
		Blackhole   bool   `json:"blackhole"`
		Unreachable bool   `json:"unreachable"`
		Reject      bool   `json:"reject"`
	} `json:"nexthops"`
}

// parseRoutes parses `show ip[v6] route vrf all json`: one JSON object per
// VRF (FRR prints them one after the other), each prefix -> its route
// entries. Per prefix the selected entry (else the installed one) is
// taken, with its active nexthops (recursive ones are replaced by the
// nexthops resolving them, which FRR lists after them).
func parseRoutes(out string) ([]drivers.Route, error) {
	dec := json.NewDecoder(strings.NewReader(out))
	var routes []drivers.Route
	objects := 0
	for {
		var m map[string][]routeEntryJSON
		err := dec.Decode(&m)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("route object %d: %v", objects+1, err)
		}
		objects++
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			entries := m[k]
			var e *routeEntryJSON
			for i := range entries {
				if entries[i].Selected {
					e = &entries[i]
					break
				}
			}
			if e == nil {
				for i := range entries {
					if entries[i].Installed {
						e = &entries[i]
						break
					}
				}
			}
			if e == nil {
				continue
			}
			ps := e.Prefix
			if ps == "" {
				ps = k
			}
			p, err := netip.ParsePrefix(ps)
			if err != nil {
				return nil, fmt.Errorf("route %q: %v", ps, err)
			}
			r := drivers.Route{Prefix: p.Masked(), Protocol: e.Protocol}
			if e.VRFName != "default" {
				r.VRF = e.VRFName
			}
			for _, nh := range e.Nexthops {
				if !nh.Active || nh.Recursive {
					continue
				}
				switch {
				case nh.Blackhole:
					r.Drop = "blackhole"
					continue
				case nh.Reject:
					r.Drop = "prohibit"
					continue
				case nh.Unreachable:
					r.Drop = "unreachable"
					continue
				}
				n := drivers.Nexthop{Dev: nh.Interface}
				if nh.IP != "" {
					if n.Via, err = netip.ParseAddr(nh.IP); err != nil {
						return nil, fmt.Errorf("route %s: nexthop %q: %v", ps, nh.IP, err)
					}
				}
				r.Nexthops = append(r.Nexthops, n)
			}
			routes = append(routes, r)
		}
	}
	if objects == 0 {
		return nil, errors.New("no JSON object")
	}
	return routes, nil
}

// bgpInstance is one `router bgp` block of the running configuration.
type bgpInstance struct {
	Header   string            // "router bgp 65101" or "router bgp 65101 vrf red"
	MaxPaths map[string]string // "ipv4 unicast" -> "64" (eBGP maximum-paths)
	AFs      map[string]bool   // address families with a block
	Shutdown []string          // neighbours configured "shutdown"
}

// parseBGPConfig finds the router bgp blocks of `show running-config`
// and their eBGP maximum-paths per address family.
func parseBGPConfig(cfg string) []bgpInstance {
	var out []bgpInstance
	var cur *bgpInstance
	af := ""
	for _, line := range strings.Split(cfg, "\n") {
		line = strings.TrimRight(line, "\r \t")
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, " ") {
			if cur != nil {
				out = append(out, *cur)
				cur = nil
			}
			if f := strings.Fields(line); len(f) >= 3 && f[0] == "router" && f[1] == "bgp" {
				cur = &bgpInstance{Header: strings.Join(f, " "), MaxPaths: map[string]string{}, AFs: map[string]bool{}}
				af = ""
			}
			continue
		}
		if cur == nil {
			continue
		}
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && f[0] == "address-family":
			af = strings.Join(f[1:], " ")
			cur.AFs[af] = true
		case f[0] == "exit-address-family":
			af = ""
		case len(f) == 2 && f[0] == "maximum-paths":
			a := af
			if a == "" {
				a = "ipv4 unicast" // older FRR prints ipv4 unicast at router level
			}
			cur.MaxPaths[a] = f[1]
		case len(f) >= 3 && f[0] == "neighbor" && f[2] == "shutdown" && af == "":
			cur.Shutdown = append(cur.Shutdown, f[1])
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out
}

var (
	zebraECMPRe  = regexp.MustCompile(`(?m)^\s*ECMP Maximum\s+(\d+)`)
	zebraNetnsRe = regexp.MustCompile(`(?m)^\s*VRF\s+Namespaces\s*$`)
	showVRFRe    = regexp.MustCompile(`(?m)^vrf (\S+) id (\S+)(?: netns (\S+))?`)
)

// parseZebra reads `show zebra`: the ECMP maximum (the default of
// maximum-paths; 0 when not shown) and whether VRFs are namespaces.
func parseZebra(out string) (ecmpMax int, netns bool) {
	if m := zebraECMPRe.FindStringSubmatch(out); m != nil {
		ecmpMax, _ = strconv.Atoi(m[1])
	}
	return ecmpMax, zebraNetnsRe.MatchString(out)
}

// vrfLine is one VRF of `show vrf`.
type vrfLine struct {
	ID, Netns, Line string
}

// parseShowVRF reads `show vrf`, e.g. "vrf red id 1 netns /run/netns/red".
func parseShowVRF(out string) map[string]vrfLine {
	m := map[string]vrfLine{}
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if s := showVRFRe.FindStringSubmatch(l); s != nil {
			m[s[1]] = vrfLine{ID: s[2], Netns: s[3], Line: l}
		}
	}
	return m
}

// parseNetnsList reads `ip netns list` ("red (id: 4)" or "red" per line).
func parseNetnsList(out string) map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			m[f[0]] = true
		}
	}
	return m
}

// bgpConfigs turns the running configuration's router bgp blocks into
// drivers.BGPConfig.
func bgpConfigs(cfg string) []drivers.BGPConfig {
	var out []drivers.BGPConfig
	for _, inst := range parseBGPConfig(cfg) {
		f := strings.Fields(inst.Header) // router bgp ASN [vrf NAME]
		c := drivers.BGPConfig{MaxPaths: map[string]int{}, Shutdown: inst.Shutdown}
		if len(f) >= 3 {
			if asn, err := strconv.ParseUint(f[2], 10, 32); err == nil {
				c.LocalAS = uint32(asn)
			}
		}
		if len(f) >= 5 && f[3] == "vrf" {
			c.VRF = f[4]
		}
		for af, v := range inst.MaxPaths {
			if n, err := strconv.Atoi(v); err == nil {
				c.MaxPaths[af] = n
			}
		}
		out = append(out, c)
	}
	return out
}

// parseDaemons reads vtysh's `show daemons` (the daemons it is connected
// to, e.g. " mgmtd zebra bgpd staticd").
func parseDaemons(out string) []string {
	var ds []string
	for _, f := range strings.Fields(out) {
		if (f == "zebra" || strings.HasSuffix(f, "d")) && !strings.ContainsAny(f, "%:") {
			ds = append(ds, f)
		}
	}
	sort.Strings(ds)
	return ds
}

// parseOSPFNeighbors reads `show ip ospf neighbor json` (FRR 8: a map of
// neighbour router IDs to lists of adjacencies).
func parseOSPFNeighbors(out string) ([]drivers.Adjacency, error) {
	var d struct {
		Neighbors map[string][]struct {
			State string `json:"state"`
			If    string `json:"ifaceName"`
		} `json:"neighbors"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &d); err != nil {
		return nil, fmt.Errorf("not show ip ospf neighbor json: %v", err)
	}
	var adj []drivers.Adjacency
	for id, list := range d.Neighbors {
		for _, n := range list {
			iface, _, _ := strings.Cut(n.If, ":") // "eth1:198.18.0.1"
			adj = append(adj, drivers.Adjacency{Protocol: "ospf", Interface: iface, Neighbor: id, State: n.State,
				Up: strings.HasPrefix(n.State, "Full")})
		}
	}
	sortAdj(adj)
	return adj, nil
}

// parseOSPF6Neighbors reads `show ipv6 ospf6 neighbor json`.
func parseOSPF6Neighbors(out string) ([]drivers.Adjacency, error) {
	var d struct {
		Neighbors []struct {
			ID    string `json:"neighborId"`
			State string `json:"state"`
			If    string `json:"interfaceName"`
		} `json:"neighbors"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &d); err != nil {
		return nil, fmt.Errorf("not show ipv6 ospf6 neighbor json: %v", err)
	}
	var adj []drivers.Adjacency
	for _, n := range d.Neighbors {
		adj = append(adj, drivers.Adjacency{Protocol: "ospf6", Interface: n.If, Neighbor: n.ID, State: n.State, Up: n.State == "Full"})
	}
	sortAdj(adj)
	return adj, nil
}

// parseISISNeighbors reads `show isis neighbor`: per area a header and
// lines of System Id, Interface, L, State, Holdtime, SNPA.
func parseISISNeighbors(out string) []drivers.Adjacency {
	var adj []drivers.Adjacency
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 4 || f[0] == "System" || strings.HasPrefix(strings.TrimSpace(l), "Area") {
			continue
		}
		adj = append(adj, drivers.Adjacency{Protocol: "isis", Neighbor: f[0], Interface: f[1], State: f[3], Up: f[3] == "Up"})
	}
	sortAdj(adj)
	return adj
}

func sortAdj(a []drivers.Adjacency) {
	sort.Slice(a, func(i, j int) bool {
		if a[i].Protocol != a[j].Protocol {
			return a[i].Protocol < a[j].Protocol
		}
		if a[i].Interface != a[j].Interface {
			return a[i].Interface < a[j].Interface
		}
		return a[i].Neighbor < a[j].Neighbor
	})
}

// frrDaemonNames are the daemons an FRR daemons file can turn on.
var frrDaemonNames = map[string]bool{"bgpd": true, "ospfd": true, "ospf6d": true, "ripd": true, "ripngd": true,
	"isisd": true, "pimd": true, "pim6d": true, "ldpd": true, "nhrpd": true, "eigrpd": true, "babeld": true,
	"sharpd": true, "pbrd": true, "bfdd": true, "fabricd": true, "vrrpd": true, "pathd": true}

// parseDaemonsFile reads an FRR daemons file: the daemons set to yes,
// and zebra and staticd, which FRR 8 always starts; sorted.
func parseDaemonsFile(out string) []string {
	on := map[string]bool{"zebra": true, "staticd": true}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || !frrDaemonNames[k] {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		on[k] = v == "yes"
	}
	var names []string
	for k, yes := range on {
		if yes {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return names
}
