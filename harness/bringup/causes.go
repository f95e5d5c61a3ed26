package bringup

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/results"
)

// fkind is what a failed check says, for grouping failures into causes.
type fkind int

// Root kinds are causes by themselves; the others are consequences when a
// cause explains them, else causes of their own.
const (
	kUnexplained fkind = iota // a failure no rule knows: its own cause
	// Roots.
	kDevice      // the device does not answer
	kDaemon      // a routing daemon its configuration starts is not running
	kForwarding  // a switch that does not forward IPv4 or IPv6
	kDrop        // a route that discards traffic to a host prefix
	kLinkDown    // a link end down or missing
	kCabling     // a port reaches another port than the topology says
	kMTU         // a link's ends at other MTUs than intended
	kBGPShutdown // a BGP neighbour shut down in the configuration
	kRemoteAS    // a BGP neighbour's remote-as is not the peer's AS
	kASN         // a switch runs another AS than the intent
	kMaxPaths    // eBGP maximum-paths below the fabric's parallel paths
	kAddress     // a link address missing
	kSRv6        // an SRv6 SID not installed
	kGateway     // a host routes through something that is not its neighbour
	kBGPMissing  // an expected BGP session not configured
	kBGPExtra    // a BGP neighbour the topology does not give
	// Consequences.
	kBGPDown    // a session down
	kAdjDown    // an OSPF/IS-IS adjacency down or missing
	kNoNeighbor // no neighbour seen on a link
	kECMP       // routes to host prefixes missing or short of paths
	kUnreach    // hosts not reaching each other
	kUnreachMTU // hosts not reaching each other with full-size packets
)

func (k fkind) root() bool { return k >= kDevice && k <= kBGPExtra }

func (k fkind) String() string {
	return [...]string{"unexplained", "device", "daemon", "forwarding", "drop-route", "link-down", "cabling", "mtu", "bgp-shutdown", "bgp-remote-as", "bgp-as",
		"ecmp-config", "address", "srv6-sid", "gateway", "bgp-missing", "bgp-extra", "bgp-session", "adjacency", "no-neighbour", "routes",
		"unreachable", "mtu-path"}[k]
}

// finding is what one failed check says.
type finding struct {
	check       int
	kind        fkind
	dev, ifname string
	link        int // the link it concerns (-1: none)
	// misses are a cabling check's ports that see the wrong port.
	misses []cablingMiss
	// items are path failures: between two devices (a switch and a host,
	// two hosts).
	items []item
}

// item is a failure between two devices.
type item struct{ a, b string }

// cause is a cause being built.
type cause struct {
	kind        fkind
	dev, ifname string
	links       map[int]bool    // the links it breaks
	devs        map[string]bool // the devices it breaks
	roots       []int           // finding indices
	cons        []int
	summary     string
	// alts are other devices that explain the same path failures as dev
	// does (the validation cannot tell which one is at fault).
	alts []string
}

// groupCauses groups the failed checks of v into causes: every root
// finding is a cause (cabling misses joined by the ports they involve,
// findings of one kind on one link or device joined); a consequence
// (session down, adjacency down, routes short of paths, hosts not
// reaching each other) joins every cause that breaks a link or device it
// depends on (the link of a session; the links on the shortest paths of
// a route or a host pair), or the cause of its host (a wrong gateway).
// Sessions and adjacencies no cause explains become causes of their link;
// path failures no cause explains become causes of the host (or switch)
// that most of them involve.
func groupCauses(v *validation) []results.Cause {
	var causes []*cause
	key := map[string]*cause{}
	get := func(k string, mk func() *cause) *cause {
		if c, ok := key[k]; ok {
			return c
		}
		c := mk()
		key[k] = c
		causes = append(causes, c)
		return c
	}
	linkDevs := func(li int) map[string]bool {
		if li < 0 {
			return map[string]bool{}
		}
		l := v.t.Links[li]
		return map[string]bool{l.A.Device: true, l.B.Device: true}
	}
	// Cabling: the ports of every miss, joined into components.
	parent := map[port]port{}
	var find func(port) port
	find = func(p port) port {
		q, ok := parent[p]
		if !ok || q == p {
			parent[p] = p
			return p
		}
		r := find(q)
		parent[p] = r
		return r
	}
	union := func(a, b port) { parent[find(a)] = find(b) }
	for _, f := range v.finds {
		for _, m := range f.misses {
			union(m.at, m.found)
			union(m.at, m.want)
		}
	}
	for i, f := range v.finds {
		if !f.kind.root() {
			continue
		}
		switch f.kind {
		case kCabling:
			k := "cabling " + find(f.misses[0].at).String()
			c := get(k, func() *cause { return &cause{kind: kCabling, links: map[int]bool{}, devs: map[string]bool{}} })
			c.roots = append(c.roots, i)
			c.links[f.link] = true
		case kDevice, kDaemon:
			c := get(f.kind.String()+" "+f.dev, func() *cause {
				c := &cause{kind: f.kind, dev: f.dev, links: map[int]bool{}, devs: map[string]bool{f.dev: true}}
				for li, l := range v.t.Links {
					if l.A.Device == f.dev || l.B.Device == f.dev {
						c.links[li] = true
					}
				}
				return c
			})
			c.roots = append(c.roots, i)
		case kASN:
			c := get("asn "+f.dev, func() *cause {
				c := &cause{kind: kASN, dev: f.dev, links: map[int]bool{}, devs: map[string]bool{}}
				for li, l := range v.t.Links {
					if l.A.Device == f.dev || l.B.Device == f.dev {
						c.links[li] = true
					}
				}
				return c
			})
			c.roots = append(c.roots, i)
		case kMaxPaths, kSRv6, kGateway, kBGPExtra, kForwarding, kDrop:
			c := get(f.kind.String()+" "+f.dev, func() *cause {
				c := &cause{kind: f.kind, dev: f.dev, ifname: f.ifname, links: map[int]bool{}, devs: map[string]bool{}}
				if f.kind == kGateway {
					for li, l := range v.t.Links {
						if l.A.Device == f.dev || l.B.Device == f.dev {
							c.links[li] = true
						}
					}
				}
				return c
			})
			c.roots = append(c.roots, i)
		default: // link-scoped: link down, MTU, BGP shutdown or remote-as, address, missing session
			k := fmt.Sprintf("%s %d %s", f.kind, f.link, f.dev)
			if f.kind == kLinkDown || f.kind == kMTU {
				k = fmt.Sprintf("%s %d", f.kind, f.link)
			}
			c := get(k, func() *cause {
				c := &cause{kind: f.kind, dev: f.dev, ifname: f.ifname, links: map[int]bool{}, devs: map[string]bool{}}
				if f.link >= 0 {
					c.links[f.link] = true
				}
				return c
			})
			c.roots = append(c.roots, i)
		}
	}
	// Roots another root explains: an address or MTU finding on a port a
	// cabling cause involves (a moved cable takes its address along); a
	// missing BGP session on a device whose bgpd is not running or which
	// has no BGP instance; a host's routes lost with its link or its
	// address; a link down at an unreachable device. Absorption chains
	// (a gateway into an address into a cable) end at a kept cause, which
	// takes the roots and consequences of everything absorbed into it.
	absorber := func(c *cause) *cause {
		for _, o := range causes {
			if o == c {
				continue
			}
			switch c.kind {
			case kAddress, kMTU:
				if o.kind == kCabling {
					for _, r := range c.roots {
						f := v.finds[r]
						if f.link >= 0 && o.links[f.link] || cablingPort(v, o, port{f.dev, f.ifname}) {
							return o
						}
					}
				}
			case kBGPMissing:
				if (o.kind == kDaemon || o.kind == kASN) && o.dev == c.dev {
					return o
				}
			case kGateway:
				if o.kind == kLinkDown && linkDevs(firstLink(o))[c.dev] || o.kind == kAddress && o.dev == c.dev {
					return o
				}
			case kLinkDown:
				if o.kind == kDevice && linkDevs(firstLink(c))[o.dev] {
					return o
				}
			}
		}
		return nil
	}
	into := map[*cause]*cause{}
	for _, c := range causes {
		if o := absorber(c); o != nil {
			into[c] = o
		}
	}
	var kept []*cause
	for _, c := range causes {
		if into[c] == nil {
			kept = append(kept, c)
		}
	}
	for _, c := range causes {
		top, hops := into[c], 0
		for top != nil && into[top] != nil && hops < len(causes) {
			top, hops = into[top], hops+1
		}
		if top != nil {
			top.cons = append(top.cons, c.roots...)
			top.cons = append(top.cons, c.cons...)
		}
	}
	causes = kept
	// What breaks a link (for sessions and paths): every root but MTU
	// (only full-size packets mind it), SRv6 and maximum-paths.
	breaksLink := func(c *cause, li int) bool {
		switch c.kind {
		case kMTU, kSRv6, kMaxPaths, kBGPExtra, kForwarding, kDrop:
			return false
		}
		return li >= 0 && c.links[li]
	}
	// Link-scoped consequences.
	var pending []int
	for i, f := range v.finds {
		switch f.kind {
		case kBGPDown, kAdjDown, kNoNeighbor:
			n := 0
			for _, c := range causes {
				if breaksLink(c, f.link) || (c.kind == kDevice && linkDevs(f.link)[c.dev]) {
					c.cons = append(c.cons, i)
					n++
				}
			}
			if n == 0 {
				pending = append(pending, i)
			}
		}
	}
	// Sessions and adjacencies no cause explains: a cause per link.
	for _, i := range pending {
		f := v.finds[i]
		k := fmt.Sprintf("session %d", f.link)
		if f.link < 0 {
			k = fmt.Sprintf("session %s %d", f.dev, i)
		}
		c := get(k, func() *cause {
			kind := kBGPDown
			if f.kind != kBGPDown {
				kind = f.kind
			}
			c := &cause{kind: kind, dev: f.dev, ifname: f.ifname, links: map[int]bool{}, devs: map[string]bool{}}
			if f.link >= 0 {
				c.links[f.link] = true
			}
			return c
		})
		c.roots = append(c.roots, i)
		if !contains(causes, c) {
			causes = append(causes, c)
		}
	}
	// Path consequences: each item explained, or left for a cause of its
	// own.
	type open struct {
		find int
		it   item
	}
	var unexplained []open
	for i, f := range v.finds {
		switch f.kind {
		case kECMP, kUnreach, kUnreachMTU:
		default:
			continue
		}
		joined := map[*cause]bool{}
		for _, it := range f.items {
			links, devs := v.g.pathLinks(it.a, it.b)
			n := 0
			for _, c := range causes {
				ok := false
				switch {
				case c.kind == kMaxPaths:
					ok = f.kind == kECMP && c.dev == it.a
				case c.kind == kMTU:
					ok = f.kind == kUnreachMTU && anyLink(c.links, links)
				case c.kind == kGateway:
					ok = f.kind != kECMP && (c.dev == it.a || c.dev == it.b)
				case c.kind == kDevice || c.kind == kDaemon || c.kind == kForwarding:
					ok = devs[c.dev]
				case c.kind == kDrop:
					// Paths through the device to or from a host it drops.
					if devs[c.dev] {
						for _, r := range c.roots {
							for _, d := range v.finds[r].items {
								ok = ok || d.b == it.a || d.b == it.b
							}
						}
					}
				case c.kind == kSRv6 || c.kind == kBGPExtra:
				default:
					ok = anyLink(c.links, links)
				}
				if ok {
					joined[c] = true
					n++
				}
			}
			if n == 0 {
				unexplained = append(unexplained, open{i, it})
			}
		}
		for c := range joined {
			c.cons = append(c.cons, i)
		}
	}
	// Unexplained path failures: the fewest devices that together lie on
	// the paths of all of them (greedy: the device on the most paths
	// first; between equals, an end host before a transit switch), a
	// cause each.
	isHost := map[string]bool{}
	for _, d := range v.t.Devices {
		isHost[d.Name] = d.IsHost()
	}
	onPath := make([]map[string]bool, len(unexplained))
	for k, u := range unexplained {
		_, devs := v.g.pathLinks(u.it.a, u.it.b)
		onPath[k] = devs
	}
	done := make([]bool, len(unexplained))
	for left := len(unexplained); left > 0; {
		count := map[string]int{}
		for k := range unexplained {
			if !done[k] {
				for d := range onPath[k] {
					count[d]++
				}
			}
		}
		best := ""
		for d, n := range count {
			switch {
			case best == "":
				best = d
			case n > count[best]:
				best = d
			case n == count[best] && isHost[d] != isHost[best]:
				if isHost[d] {
					best = d
				}
			case n == count[best] && d < best:
				best = d
			}
		}
		kind := kUnreachMTU
		for k, u := range unexplained {
			if !done[k] && onPath[k][best] && v.finds[u.find].kind != kUnreachMTU {
				kind = v.finds[u.find].kind
			}
		}
		// Devices on a path of exactly the same failures (two spines
		// both on every path between two leaves, a host and its leaf for
		// failures to that host alone): the validation cannot tell which
		// one drops them, so the cause names them all.
		var alts []string
		for d, n := range count {
			if d == best || n != count[best] {
				continue
			}
			same := true
			for k := range unexplained {
				if !done[k] && onPath[k][best] != onPath[k][d] {
					same = false
					break
				}
			}
			if same {
				alts = append(alts, d)
			}
		}
		sort.Strings(alts)
		c := get("path "+best, func() *cause {
			return &cause{kind: kind, dev: best, links: map[int]bool{}, devs: map[string]bool{best: true}, alts: alts}
		})
		if !contains(causes, c) {
			causes = append(causes, c)
		}
		for k, u := range unexplained {
			if !done[k] && onPath[k][best] {
				done[k] = true
				left--
				if !hasInt(c.roots, u.find) {
					c.roots = append(c.roots, u.find)
				}
			}
		}
	}
	// Other failures: checks that could not be made because their device
	// does not answer belong to its cause; the rest are each their own.
	devCause := map[string]*cause{}
	for _, c := range causes {
		if c.kind == kDevice {
			devCause[c.dev] = c
		}
	}
	for i, f := range v.finds {
		if f.kind == kUnexplained {
			if dc := devCause[f.dev]; dc != nil {
				dc.cons = append(dc.cons, i)
				continue
			}
			c := &cause{kind: kUnexplained, dev: f.dev, ifname: f.ifname, links: map[int]bool{}, devs: map[string]bool{}, roots: []int{i}}
			causes = append(causes, c)
		}
	}
	return v.render(causes)
}

// render numbers the causes (by kind, then device), writes their
// summaries and marks the checks with the causes they belong to.
func (v *validation) render(causes []*cause) []results.Cause {
	for _, c := range causes {
		c.roots = uniqInts(c.roots)
		c.cons = uniqInts(without(c.cons, c.roots))
		if len(c.roots) > 0 && c.dev == "" {
			c.dev = v.finds[c.roots[0]].dev
		}
		if c.ifname == "" && len(c.roots) > 0 {
			c.ifname = v.out.Checks[v.finds[c.roots[0]].check].Interface
		}
		c.summary = v.summary(c)
	}
	sort.SliceStable(causes, func(i, j int) bool {
		if causes[i].kind != causes[j].kind {
			return causes[i].kind < causes[j].kind
		}
		return causes[i].dev+":"+causes[i].ifname < causes[j].dev+":"+causes[j].ifname
	})
	out := make([]results.Cause, 0, len(causes))
	for n, c := range causes {
		id := n + 1
		dev := c.dev
		if len(c.alts) > 0 {
			dev = "" // one of several: named in the summary
		}
		rc := results.Cause{ID: id, Kind: c.kind.String(), Device: dev, Interface: c.ifname, Summary: c.summary,
			Roots: len(c.roots), Consequences: len(c.cons)}
		for _, fi := range append(append([]int{}, c.roots...), c.cons...) {
			ci := v.finds[fi].check
			rc.Checks = append(rc.Checks, ci)
			if !hasInt(v.out.Checks[ci].Causes, id) {
				v.out.Checks[ci].Causes = append(v.out.Checks[ci].Causes, id)
			}
		}
		out = append(out, rc)
	}
	return out
}

// summary says what a cause is, naming its device and port.
func (v *validation) summary(c *cause) string {
	root := v.out.Checks[v.finds[c.roots[0]].check]
	switch c.kind {
	case kCabling:
		seen := map[port]bool{}
		var parts []string
		// Every port the misses involve (as seen, as found, as intended):
		// the device with most of them is the miscabled one and the cause
		// names its first such port, also when LLDP has not yet seen a
		// neighbour on every moved port.
		ports := map[port]bool{}
		byDev := map[string]int{}
		for _, r := range c.roots {
			for _, m := range v.finds[r].misses {
				for _, p := range []port{m.at, m.found, m.want} {
					if p.dev != "" && !ports[p] {
						ports[p] = true
						byDev[p.dev]++
					}
				}
			}
		}
		for _, r := range c.roots {
			for _, m := range v.finds[r].misses {
				if seen[m.at] {
					continue
				}
				seen[m.at] = true
				parts = append(parts, fmt.Sprintf("%s %s reaches %s, topology says %s", m.at.dev, m.at.ifname, m.found, m.want))
			}
		}
		// Lead with the device whose ports moved most.
		sort.SliceStable(parts, func(i, j int) bool {
			di, dj := strings.Fields(parts[i])[0], strings.Fields(parts[j])[0]
			if byDev[di] != byDev[dj] {
				return byDev[di] > byDev[dj]
			}
			return parts[i] < parts[j]
		})
		lead := port{}
		for p := range ports {
			if lead.dev == "" || byDev[p.dev] > byDev[lead.dev] ||
				byDev[p.dev] == byDev[lead.dev] && (p.dev < lead.dev || p.dev == lead.dev && portLess(p.ifname, lead.ifname)) {
				lead = p
			}
		}
		c.dev, c.ifname = lead.dev, lead.ifname
		return "miscabled: " + strings.Join(parts, "; ")
	case kLinkDown:
		return fmt.Sprintf("link down: %s", root.Evidence)
	case kMTU:
		return fmt.Sprintf("MTU mismatch on %s: %s", strings.TrimPrefix(root.Name, "mtu "), root.Evidence)
	case kBGPShutdown:
		return fmt.Sprintf("%s %s: BGP neighbour shut down in the configuration (%s)", c.dev, c.ifname, strings.TrimPrefix(root.Name, "bgp "))
	case kRemoteAS:
		_, ev, _ := strings.Cut(root.Evidence, "; ")
		return fmt.Sprintf("%s %s: wrong BGP remote AS towards %s (%s)", c.dev, c.ifname, peerOf(root.Name), ev)
	case kASN, kMaxPaths, kAddress, kGateway, kBGPExtra:
		return fmt.Sprintf("configuration drift: %s", root.Evidence)
	case kSRv6:
		return fmt.Sprintf("%s: SRv6 %s: %s", c.dev, strings.TrimPrefix(root.Name, "srv6 "+c.dev+" "), root.Evidence)
	case kDevice:
		return fmt.Sprintf("%s cannot be read: %s", c.dev, root.Evidence)
	case kDaemon, kForwarding:
		return fmt.Sprintf("%s: %s", c.dev, root.Evidence)
	case kDrop:
		return fmt.Sprintf("configuration drift: %s", root.Evidence)
	case kBGPMissing:
		return fmt.Sprintf("%s %s: %s (%s)", c.dev, c.ifname, root.Evidence, strings.TrimPrefix(root.Name, "bgp "))
	case kBGPDown, kAdjDown, kNoNeighbor:
		var ev []string
		for _, r := range c.roots {
			ch := v.out.Checks[v.finds[r].check]
			ev = append(ev, fmt.Sprintf("%s: %s", ch.Name, ch.Evidence))
		}
		what := "BGP session down"
		switch c.kind {
		case kAdjDown:
			what = "routing adjacency down"
		case kNoNeighbor:
			what = "no neighbour"
		}
		if l := firstLink(c); l >= 0 {
			what += " on " + endName(v.t.Links[l].A) + " -- " + endName(v.t.Links[l].B)
		}
		return fmt.Sprintf("%s, no other failure explains it: %s", what, strings.Join(ev, "; "))
	case kUnreach, kUnreachMTU, kECMP:
		n := len(c.roots)
		what := map[fkind]string{kUnreach: "hosts unreachable", kUnreachMTU: "hosts unreachable with full-size packets", kECMP: "routes short of paths"}[c.kind]
		if len(c.alts) > 0 {
			return fmt.Sprintf("one of %s: %s through one of them: the %d failed check(s) no other failure explains all have each of them on a path, and the checks cannot tell which drops them (%s: %s)",
				strings.Join(append([]string{c.dev}, c.alts...), ", "), what, n, root.Name, root.Evidence)
		}
		return fmt.Sprintf("%s: %s through it: the %d failed check(s) no other failure explains all have it on a path (%s: %s)",
			c.dev, what, n, root.Name, root.Evidence)
	}
	return fmt.Sprintf("%s [%s]: %s", root.Name, root.Device, root.Evidence)
}

// peerOf is the peer named in a BGP check's name ("bgp leaf0 eth1 ->
// spine0 198.18.0.0").
func peerOf(name string) string {
	if _, after, ok := strings.Cut(name, "-> "); ok {
		return after
	}
	return name
}

// cablingPort reports whether a cabling cause involves p.
func cablingPort(v *validation, c *cause, p port) bool {
	for _, r := range c.roots {
		for _, m := range v.finds[r].misses {
			if m.at == p || m.found == p || m.want == p {
				return true
			}
		}
	}
	return false
}

func firstLink(c *cause) int {
	best := -1
	for l := range c.links {
		if best < 0 || l < best {
			best = l
		}
	}
	return best
}

func anyLink(a, b map[int]bool) bool {
	for l := range a {
		if b[l] {
			return true
		}
	}
	return false
}

func contains(cs []*cause, c *cause) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

func hasInt(s []int, x int) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

func uniqInts(s []int) []int {
	sort.Ints(s)
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func without(s, drop []int) []int {
	var out []int
	for _, x := range s {
		if !hasInt(drop, x) {
			out = append(out, x)
		}
	}
	return out
}

// portLess orders interface names naturally: eth2 before eth10.
func portLess(a, b string) bool {
	ta, na := splitNum(a)
	tb, nb := splitNum(b)
	if ta != tb {
		return ta < tb
	}
	if na != nb {
		return na < nb
	}
	return a < b
}

// splitNum splits a name into its text and its trailing number (-1 when
// it has none).
func splitNum(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) || len(s)-i > 9 {
		return s, -1
	}
	n, _ := strconv.Atoi(s[i:])
	return s[:i], n
}
