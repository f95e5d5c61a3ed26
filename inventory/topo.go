package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Size limits. They apply to imported files and to generator specs alike, so
// that a hostile input cannot make the builder exhaust memory.
const (
	// MaxHosts is the largest number of hosts a fabric may have.
	MaxHosts = 1 << 20
	// MaxSwitches is the largest number of switches a fabric may have.
	MaxSwitches = 1 << 20
	// MaxLinks is the largest number of links a fabric may have.
	MaxLinks = 1 << 22
	// maxTopoBytes is the largest .topo file accepted (real ones are < 1 KiB).
	maxTopoBytes = 1 << 20
)

// TopoError is an error in an htsim .topo description. Line is the 1-based
// line the error refers to, or 0 when it concerns the file as a whole (for
// generated descriptions File is the generator spec).
type TopoError struct {
	File string
	Line int
	Msg  string
}

func (e *TopoError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// tierKey identifies a per-tier key of a .topo file.
type tierKey int

const (
	keySpeed tierKey = iota
	keyRadixDown
	keyRadixUp
	keyLatency
	keySwitchLatency
	keyOversub
	keyBundle
	keyQueueUp
	keyQueueDown
	numTierKeys
)

// tierKeyInfo describes the per-tier keys: canonical spelling, the factor
// from file units to internal units (Mbps, ps) and the accepted range in file
// units.
var tierKeyInfo = [numTierKeys]struct {
	name     string
	scale    int64
	min, max int64
}{
	keySpeed:         {"Downlink_speed_Gbps", 1000, 1, 100_000},
	keyRadixDown:     {"Radix_Down", 1, 1, 1 << 20},
	keyRadixUp:       {"Radix_Up", 1, 1, 1 << 20},
	keyLatency:       {"Downlink_Latency_ns", 1000, 1, 1_000_000_000},
	keySwitchLatency: {"Switch_Latency_ns", 1000, 0, 1_000_000_000},
	keyOversub:       {"Oversubscribed", 1, 1, 1 << 20},
	keyBundle:        {"Bundle", 1, 1, 1 << 20},
	keyQueueUp:       {"Queue_Up", 1, 1, 1 << 40},
	keyQueueDown:     {"Queue_Down", 1, 1, 1 << 40},
}

func (k tierKey) String() string { return tierKeyInfo[k].name }

// lookupTierKey maps a lower-cased key to a tier key.
func lookupTierKey(lower string) (tierKey, bool) {
	for k := tierKey(0); k < numTierKeys; k++ {
		if strings.ToLower(tierKeyInfo[k].name) == lower {
			return k, true
		}
	}
	return 0, false
}

// tierCfg is one "Tier N" block. Values are in internal units: link speeds in
// Mbps, latencies in ps, everything else as written.
type tierCfg struct {
	val  [numTierKeys]int64
	line [numTierKeys]int // line each key was set on (0: unset or generated)
	set  [numTierKeys]bool
	hdr  int // line of the "Tier N" header
}

// topoConfig is an htsim fat-tree description: the content of a .topo file,
// or the equivalent description a generator builds.
type topoConfig struct {
	file                 string // for error messages
	nodes, tiers, podsz  int64
	nodesLn, tiersLn, ln int // header lines (ln: Podsize)
	tier                 [3]tierCfg
}

func (c *topoConfig) errf(line int, format string, args ...any) error {
	return &TopoError{File: c.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// get returns a tier value with htsim's defaults (Oversubscribed 1, Bundle 1,
// everything else 0).
func (c *topoConfig) get(t int, k tierKey) int64 {
	if c.tier[t].set[k] {
		return c.tier[t].val[k]
	}
	switch k {
	case keyOversub, keyBundle:
		return 1
	}
	return 0
}

// setTier sets a tier value (generators).
func (c *topoConfig) setTier(t int, k tierKey, v int64) {
	c.tier[t].val[k], c.tier[t].set[k] = v, true
}

// line returns the line of the first of keys that was set in tier t, falling
// back to the tier header.
func (c *topoConfig) line(t int, keys ...tierKey) int {
	for _, k := range keys {
		if l := c.tier[t].line[k]; l > 0 {
			return l
		}
	}
	return c.tier[t].hdr
}

// ParseTopo reads an htsim fat-tree description (.topo) and builds the fabric
// htsim would build from it. name is used in error messages and, without
// directory and .topo extension, as the fabric name. See the package
// documentation for the format and the checks applied.
func ParseTopo(name string, r io.Reader) (*Fabric, error) {
	c, err := parseTopoConfig(name, r)
	if err != nil {
		return nil, err
	}
	s, err := c.shape()
	if err != nil {
		return nil, err
	}
	return buildTree(topoFabricName(name), s)
}

// LoadTopo reads the htsim .topo file at path; see ParseTopo.
func LoadTopo(path string) (*Fabric, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseTopo(path, f)
}

func topoFabricName(name string) string {
	base := filepath.Base(name)
	if ext := filepath.Ext(base); strings.EqualFold(ext, ".topo") {
		base = base[:len(base)-len(ext)]
	}
	if base == "" || base == "." || base == string(filepath.Separator) {
		return name
	}
	return base
}

// parseTopoConfig parses the text of a .topo file. It checks syntax, value
// ranges, tier order and that every tier has its required keys; shape checks
// the consistency of the values.
func parseTopoConfig(name string, r io.Reader) (*topoConfig, error) {
	c := &topoConfig{file: name}
	data, err := io.ReadAll(io.LimitReader(r, maxTopoBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > maxTopoBytes {
		return nil, c.errf(0, "file larger than %d bytes", maxTopoBytes)
	}
	cur := -1 // tier block being read; -1 in the header
	lineNo := 0
	for len(data) > 0 {
		lineNo++
		var raw []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			raw, data = data, nil
		}
		if i := bytes.IndexByte(raw, '#'); i >= 0 {
			raw = raw[:i]
		}
		fields := strings.Fields(string(raw))
		if len(fields) == 0 {
			continue
		}
		key, lower := fields[0], strings.ToLower(fields[0])
		if len(fields) == 1 {
			return nil, c.errf(lineNo, "%s: missing value", key)
		}
		if len(fields) > 2 {
			return nil, c.errf(lineNo, "%s: unexpected %q after the value", key, fields[2])
		}
		val := fields[1]
		switch lower {
		case "nodes", "tiers", "podsize":
			if cur >= 0 {
				return nil, c.errf(lineNo, "%s must come before the first Tier block", key)
			}
			var dst *int64
			var dstLn *int
			var lo, hi int64
			switch lower {
			case "nodes":
				key, dst, dstLn, lo, hi = "Nodes", &c.nodes, &c.nodesLn, 1, MaxHosts
			case "tiers":
				key, dst, dstLn, lo, hi = "Tiers", &c.tiers, &c.tiersLn, 2, 3
			default:
				key, dst, dstLn, lo, hi = "Podsize", &c.podsz, &c.ln, 1, MaxHosts
			}
			if *dstLn > 0 {
				return nil, c.errf(lineNo, "duplicate %s (first set on line %d)", key, *dstLn)
			}
			v, err := parseTopoInt(key, val, lo, hi)
			if err != nil {
				if lower == "tiers" {
					if _, perr := strconv.ParseInt(val, 10, 64); perr == nil {
						err = fmt.Errorf("key Tiers must be 2 or 3, got %s", val)
					}
				}
				return nil, c.errf(lineNo, "%v", err)
			}
			*dst, *dstLn = v, lineNo
		case "tier":
			if cur < 0 {
				if err := c.checkHeader(lineNo); err != nil {
					return nil, err
				}
			} else if err := c.checkTier(cur); err != nil {
				return nil, err
			}
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return nil, c.errf(lineNo, "Tier: want a tier number, got %q", val)
			}
			if n < 0 || n >= c.tiers {
				return nil, c.errf(lineNo, "Tier %d out of range: Tiers is %d, so tiers are 0..%d", n, c.tiers, c.tiers-1)
			}
			if n != int64(cur+1) {
				return nil, c.errf(lineNo, "Tier %d out of order: expected Tier %d", n, cur+1)
			}
			cur = int(n)
			c.tier[cur].hdr = lineNo
		default:
			k, ok := lookupTierKey(lower)
			if !ok {
				return nil, c.errf(lineNo, "unknown key %q", key)
			}
			key = k.String()
			if cur < 0 {
				return nil, c.errf(lineNo, "%s outside a Tier block (the header takes Nodes, Tiers and Podsize)", key)
			}
			tc := &c.tier[cur]
			if tc.set[k] {
				return nil, c.errf(lineNo, "Tier %d: duplicate %s (first set on line %d)", cur, key, tc.line[k])
			}
			info := tierKeyInfo[k]
			v, err := parseTopoInt(key, val, info.min, info.max)
			if err != nil {
				return nil, c.errf(lineNo, "Tier %d: %v", cur, err)
			}
			top := cur == int(c.tiers)-1
			switch {
			case top && (k == keyRadixUp || k == keyQueueUp):
				return nil, c.errf(lineNo, "Tier %d: %s not allowed on the top tier (it has no uplinks)", cur, key)
			case top && k == keyOversub && v != 1:
				return nil, c.errf(lineNo, "Tier %d: Oversubscribed %d on the top tier (it has no uplinks; only 1 is allowed)", cur, v)
			case cur == 0 && k == keyBundle && v != 1:
				return nil, c.errf(lineNo, "Tier 0: Bundle %d not supported: host links cannot be bundled (htsim requires Bundle 1 on Tier 0)", v)
			}
			tc.val[k], tc.set[k], tc.line[k] = v*info.scale, true, lineNo
		}
	}
	if cur < 0 {
		if err := c.checkHeader(0); err != nil {
			return nil, err
		}
		return nil, c.errf(0, "no Tier blocks (want Tier 0 to Tier %d)", c.tiers-1)
	}
	if err := c.checkTier(cur); err != nil {
		return nil, err
	}
	if cur != int(c.tiers)-1 {
		return nil, c.errf(0, "missing Tier %d block (Tiers is %d)", cur+1, c.tiers)
	}
	return c, nil
}

// checkHeader reports a missing header key; line is where the header ends.
func (c *topoConfig) checkHeader(line int) error {
	switch {
	case c.nodesLn == 0:
		return c.errf(line, "missing Nodes in the header")
	case c.tiersLn == 0:
		return c.errf(line, "missing Tiers in the header")
	case c.ln == 0:
		return c.errf(line, "missing Podsize in the header")
	}
	return nil
}

// checkTier reports a required key missing from tier t's block.
func (c *topoConfig) checkTier(t int) error {
	req := []tierKey{keySpeed, keyRadixDown}
	if t < int(c.tiers)-1 {
		req = append(req, keyRadixUp)
	}
	req = append(req, keyLatency)
	for _, k := range req {
		if !c.tier[t].set[k] {
			return c.errf(c.tier[t].hdr, "Tier %d: missing %s", t, k)
		}
	}
	return nil
}

// parseTopoInt parses a decimal integer value in [lo, hi].
func parseTopoInt(key, s string, lo, hi int64) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("%s %s is out of range (at most %d)", key, s, hi)
		}
		return 0, fmt.Errorf("%s: want an integer, got %q", key, s)
	}
	if v < lo {
		if lo == 0 {
			return 0, fmt.Errorf("%s must not be negative, got %d", key, v)
		}
		return 0, fmt.Errorf("%s must be at least %d, got %d", key, lo, v)
	}
	if v > hi {
		return 0, fmt.Errorf("%s %d exceeds the limit of %d", key, v, hi)
	}
	return v, nil
}

// treeShape is a fully resolved fat tree: the counts htsim derives from a
// tier description plus the per-tier link and switch parameters. Tier t's
// arrays describe tier-t switches and the links below them.
type treeShape struct {
	tiers       int
	hosts       int64
	podsize     int64 // hosts per pod (3 tiers); hosts (2 tiers)
	pods        int64 // 1 for 2 tiers
	hostsPerToR int64
	torsPerPod  int64
	aggsPerPod  int64
	cores       int64 // 3 tiers
	coresPerAgg int64 // distinct cores each agg connects to (3 tiers)
	bundle      [3]int64
	rateBps     [3]int64
	latencyPs   [3]int64
	switchPs    [3]int64
}

func (s *treeShape) nTor() int64 { return s.torsPerPod * s.pods }
func (s *treeShape) nAgg() int64 { return s.aggsPerPod * s.pods }

// torUplinks is the number of links from one ToR up to the aggs.
func (s *treeShape) torUplinks() int64 {
	if s.tiers == 2 {
		return capMul(s.nAgg(), s.bundle[1])
	}
	return capMul(s.aggsPerPod, s.bundle[1])
}

// aggDownlinks is the number of links from one agg down to ToRs.
func (s *treeShape) aggDownlinks() int64 {
	if s.tiers == 2 {
		return capMul(s.nTor(), s.bundle[1])
	}
	return capMul(s.torsPerPod, s.bundle[1])
}

// aggUplinks is the number of links from one agg up to the cores.
func (s *treeShape) aggUplinks() int64 {
	if s.tiers == 2 {
		return 0
	}
	return capMul(s.coresPerAgg, s.bundle[2])
}

// coreDownlinks is the number of links of one core switch.
func (s *treeShape) coreDownlinks() int64 { return capMul(s.pods, s.bundle[2]) }

func (s *treeShape) numLinks() int64 {
	n := s.hosts
	n = capAdd(n, capMul(s.nTor(), s.torUplinks()))
	return capAdd(n, capMul(s.nAgg(), s.aggUplinks()))
}

// checkLimits reports a tree too large to build.
func (s *treeShape) checkLimits() error {
	sw := capAdd(capAdd(s.nTor(), s.nAgg()), s.cores)
	if s.hosts > MaxHosts {
		return fmt.Errorf("%d hosts exceed the limit of %d", s.hosts, MaxHosts)
	}
	if sw > MaxSwitches {
		return fmt.Errorf("the tree needs %s switches, more than the limit of %d", capString(sw), MaxSwitches)
	}
	if l := s.numLinks(); l > MaxLinks {
		return fmt.Errorf("the tree needs %s links, more than the limit of %d", capString(l), MaxLinks)
	}
	return nil
}

// capLimit saturates size arithmetic well below overflow.
const capLimit = int64(1) << 62

func capMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > capLimit/b {
		return capLimit
	}
	return a * b
}

func capAdd(a, b int64) int64 {
	if a+b > capLimit || a+b < 0 {
		return capLimit
	}
	return a + b
}

func capString(v int64) string {
	if v >= capLimit {
		return "an impossible number of"
	}
	return strconv.FormatInt(v, 10)
}

// fmtGbps formats a speed in Mbps as Gbps.
func fmtGbps(mbps int64) string {
	return strconv.FormatFloat(float64(mbps)/1000, 'f', -1, 64)
}

// shape derives the tree htsim builds from the description
// (FatTreeTopologyCfg::set_custom_params) and applies htsim's consistency
// checks, with every division that htsim truncates or asserts on required to
// be exact.
func (c *topoConfig) shape() (*treeShape, error) {
	T := int(c.tiers)
	if T != 2 && T != 3 {
		return nil, c.errf(c.tiersLn, "key Tiers must be 2 or 3, got %d", T)
	}
	N, P := c.nodes, c.podsz
	if N < 1 || N > MaxHosts || P < 1 {
		return nil, c.errf(c.nodesLn, "Nodes must be between 1 and %d, got %d", MaxHosts, N)
	}
	rd := func(t int) int64 { return c.get(t, keyRadixDown) }
	ru := func(t int) int64 { return c.get(t, keyRadixUp) }
	bn := func(t int) int64 { return c.get(t, keyBundle) }
	ov := func(t int) int64 { return c.get(t, keyOversub) }
	sp := func(t int) int64 { return c.get(t, keySpeed) }
	for t := 0; t < T; t++ {
		for _, k := range []tierKey{keySpeed, keyRadixDown, keyBundle, keyOversub} {
			if c.get(t, k) < 1 {
				return nil, c.errf(c.line(t, k), "Tier %d: %s must be positive", t, k)
			}
		}
		if t < T-1 && ru(t) < 1 {
			return nil, c.errf(c.line(t, keyRadixUp), "Tier %d: Radix_Up must be positive", t)
		}
		if c.get(t, keyLatency) < 0 || c.get(t, keySwitchLatency) < 0 {
			return nil, c.errf(c.line(t, keyLatency), "Tier %d: negative latency", t)
		}
	}
	if bn(0) != 1 {
		return nil, c.errf(c.line(0, keyBundle), "Tier 0: Bundle %d not supported: host links cannot be bundled (htsim requires Bundle 1 on Tier 0)", bn(0))
	}
	for t := 0; t < T; t++ {
		if rd(t)%bn(t) != 0 {
			return nil, c.errf(c.line(t, keyRadixDown), "Tier %d: Radix_Down %d is not a multiple of Bundle %d", t, rd(t), bn(t))
		}
		if t < T-1 && ru(t)%bn(t+1) != 0 {
			return nil, c.errf(c.line(t, keyRadixUp), "Tier %d: Radix_Up %d is not a multiple of Tier %d Bundle %d", t, ru(t), t+1, bn(t+1))
		}
	}
	if N%P != 0 {
		return nil, c.errf(c.ln, "Nodes %d is not a multiple of Podsize %d", N, P)
	}
	pods := N / P
	if P%rd(0) != 0 {
		return nil, c.errf(c.line(0, keyRadixDown), "Podsize %d is not a multiple of Tier 0 Radix_Down %d (hosts per ToR)", P, rd(0))
	}
	torsPerPod := P / rd(0)
	if rd(0) != capMul(ov(0), ru(0)) {
		return nil, c.errf(c.line(0, keyOversub, keyRadixUp), "Tier 0: Radix_Down %d must equal Oversubscribed %d x Radix_Up %d = %s",
			rd(0), ov(0), ru(0), capString(capMul(ov(0), ru(0))))
	}
	// Total ToR uplinks: host bandwidth / (uplink speed x oversubscription).
	num, den := N*sp(0), sp(1)*ov(0)
	if num%den != 0 {
		return nil, c.errf(c.line(0, keyOversub, keySpeed),
			"Tier 0: Nodes %d x %s Gbps / (Tier 1 %s Gbps x Oversubscribed %d) is not a whole number of ToR uplinks",
			N, fmtGbps(sp(0)), fmtGbps(sp(1)), ov(0))
	}
	torUp := num / den
	if torUp > MaxLinks {
		return nil, c.errf(0, "%d ToR uplinks exceed the limit of %d links", torUp, MaxLinks)
	}
	if torUp%(pods*rd(1)) != 0 {
		return nil, c.errf(c.line(1, keyRadixDown), "Tier 1: %d ToR uplinks do not divide evenly into %d pods x Radix_Down %d",
			torUp, pods, rd(1))
	}
	aggsPerPod := torUp / (pods * rd(1))
	if aggsPerPod*bn(1) != ru(0) {
		return nil, c.errf(c.line(0, keyRadixUp),
			"Tier 0: Radix_Up %d but the tree has %d aggs per pod x Tier 1 Bundle %d = %d ToR uplinks (aggs per pod = %d ToR uplinks / (%d pods x Tier 1 Radix_Down %d))",
			ru(0), aggsPerPod, bn(1), aggsPerPod*bn(1), torUp, pods, rd(1))
	}
	s := &treeShape{
		tiers:       T,
		hosts:       N,
		podsize:     P,
		pods:        pods,
		hostsPerToR: rd(0),
		torsPerPod:  torsPerPod,
		aggsPerPod:  aggsPerPod,
	}
	if T == 3 {
		num, den := torUp*sp(1), sp(2)*ov(1)
		if num%den != 0 {
			return nil, c.errf(c.line(1, keyOversub, keySpeed),
				"Tier 1: %d ToR uplinks x %s Gbps / (Tier 2 %s Gbps x Oversubscribed %d) is not a whole number of agg uplinks",
				torUp, fmtGbps(sp(1)), fmtGbps(sp(2)), ov(1))
		}
		aggUp := num / den
		if aggUp > MaxLinks {
			return nil, c.errf(0, "%d agg uplinks exceed the limit of %d links", aggUp, MaxLinks)
		}
		if aggUp%rd(2) != 0 {
			return nil, c.errf(c.line(2, keyRadixDown), "Tier 2: %d agg uplinks are not a multiple of Radix_Down %d", aggUp, rd(2))
		}
		cores := aggUp / rd(2)
		if cores%aggsPerPod != 0 {
			return nil, c.errf(c.line(2, keyRadixDown), "Tier 2: %d core switches (%d agg uplinks / Radix_Down %d) is not a multiple of %d aggs per pod",
				cores, aggUp, rd(2), aggsPerPod)
		}
		if cores/aggsPerPod*bn(2) != ru(1) {
			return nil, c.errf(c.line(1, keyRadixUp),
				"Tier 1: Radix_Up %d but %d core switches x Tier 2 Bundle %d / %d aggs per pod = %d agg uplinks",
				ru(1), cores, bn(2), aggsPerPod, cores/aggsPerPod*bn(2))
		}
		s.cores, s.coresPerAgg = cores, ru(1)/bn(2)
	} else {
		// htsim treats a leaf-spine as a single pod: every ToR connects to
		// every agg, whatever Podsize says.
		s.podsize, s.torsPerPod, s.aggsPerPod, s.pods = N, s.nTor(), s.nAgg(), 1
	}
	for t := 0; t < T; t++ {
		s.bundle[t] = bn(t)
		s.rateBps[t] = sp(t) * 1_000_000
		s.latencyPs[t] = c.get(t, keyLatency)
		s.switchPs[t] = c.get(t, keySwitchLatency)
	}
	if err := s.checkLimits(); err != nil {
		return nil, c.errf(0, "%v", err)
	}
	return s, nil
}

// buildTree wires the fabric for a shape exactly as htsim's FatTreeTopology
// constructor does. Nodes are numbered hosts first (host h is node h), then
// ToRs, aggs and cores; each node's ports are in htsim's addPort order: a
// ToR's host ports, then its uplinks; an agg's downlinks (by ToR), then its
// uplinks (by core).
func buildTree(name string, s *treeShape) (*Fabric, error) {
	if err := s.checkLimits(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	nTor, nAgg, nCore := s.nTor(), s.nAgg(), s.cores
	nLinks := s.numLinks()
	b := NewBuilder(name)
	f := &b.f
	nNodes := s.hosts + nTor + nAgg + nCore
	f.Nodes = make([]Node, 0, nNodes)
	f.Hosts = make([]int, 0, s.hosts)
	f.Links = make([]Link, 0, nLinks)
	f.Ports = make([]Port, 0, 2*nLinks)
	// One backing array for all nodes' port lists.
	portIDs := make([]int, 2*nLinks)
	off := 0
	add := func(name string, role Role, tier, pod int, lat int64, degree int64) int {
		id := b.AddNode(name, role, tier, pod, lat)
		end := off + int(degree)
		if end > len(portIDs) { // cannot happen; keep append safe
			end = off
		}
		f.Nodes[id].Ports = portIDs[off:off:end]
		off = end
		return id
	}
	three := s.tiers == 3
	torName, aggName := "tor", "agg"
	if !three {
		torName, aggName = "leaf", "spine"
	}
	podOf := func(i, per int64) int {
		if !three {
			return 0
		}
		return int(i / per)
	}
	for h := int64(0); h < s.hosts; h++ {
		add("host"+strconv.FormatInt(h, 10), RoleHost, -1, podOf(h, s.podsize), 0, 1)
	}
	tor0 := int(s.hosts)
	for t := int64(0); t < nTor; t++ {
		add(torName+strconv.FormatInt(t, 10), RoleLeaf, 0, podOf(t, s.torsPerPod), s.switchPs[0], s.hostsPerToR+s.torUplinks())
	}
	agg0 := tor0 + int(nTor)
	for a := int64(0); a < nAgg; a++ {
		add(aggName+strconv.FormatInt(a, 10), RoleSpine, 1, podOf(a, s.aggsPerPod), s.switchPs[1], s.aggDownlinks()+s.aggUplinks())
	}
	core0 := agg0 + int(nAgg)
	for c := int64(0); c < nCore; c++ {
		add("core"+strconv.FormatInt(c, 10), RoleCore, 2, -1, s.switchPs[2], s.coreDownlinks())
	}
	// Hosts to ToRs: host tor*hostsPerToR+l on ToR tor.
	for t := int64(0); t < nTor; t++ {
		for l := int64(0); l < s.hostsPerToR; l++ {
			b.Connect(int(t*s.hostsPerToR+l), tor0+int(t), s.rateBps[0], s.latencyPs[0])
		}
	}
	// ToRs to aggs: every agg of the ToR's pod (3 tiers) or every agg (2 tiers).
	for t := int64(0); t < nTor; t++ {
		lo, hi := int64(0), nAgg
		if three {
			pod := t / s.torsPerPod
			lo, hi = pod*s.aggsPerPod, (pod+1)*s.aggsPerPod
		}
		for a := lo; a < hi; a++ {
			for k := int64(0); k < s.bundle[1]; k++ {
				b.Connect(tor0+int(t), agg0+int(a), s.rateBps[1], s.latencyPs[1])
			}
		}
	}
	// Aggs to cores: the agg at pod position p connects to cores p + A*l.
	if three {
		for a := int64(0); a < nAgg; a++ {
			p := a % s.aggsPerPod
			for l := int64(0); l < s.coresPerAgg; l++ {
				c := p + s.aggsPerPod*l
				if c >= nCore {
					return nil, fmt.Errorf("%s: internal error: agg %d wired to core %d of %d", name, a, c, nCore)
				}
				for k := int64(0); k < s.bundle[2]; k++ {
					b.Connect(agg0+int(a), core0+int(c), s.rateBps[2], s.latencyPs[2])
				}
			}
		}
	}
	hpp := s.podsize
	return b.Fabric(s.tiers, int(hpp))
}
