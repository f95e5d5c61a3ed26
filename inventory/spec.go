package inventory

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/units"
)

// specForms is appended to errors that cannot tell what the user meant.
const specForms = "want an htsim .topo file, fattree:hosts=N[,tiers=2|3][,gbps=G][,oversub=O][,oversub1=O][,latency=D][,switch_latency=D][,podsize=P][,radix=K][,planes=N] " +
	"or leafspine:leaves=L,spines=S,hosts_per_leaf=H[,gbps=G][,uplink_gbps=G][,links_per_spine=B][,latency=D][,switch_latency=D][,planes=N] " +
	"or dragonfly:p=P,a=A,h=H[,global_gbps=G][,global_latency=D]... or slimfly:q=Q,p=P[,...] " +
	"(see go doc github.com/fabricbench/fabricbench/inventory)"

// Load builds a fabric from an htsim .topo file or a generator spec. An
// argument naming an existing file ending in .topo is loaded with LoadTopo;
// otherwise an argument containing ':' is parsed with ParseSpec. Anything
// else is an error that lists the accepted forms.
func Load(specOrPath string) (*Fabric, error) {
	if st, err := os.Stat(specOrPath); err == nil && st.Mode().IsRegular() {
		if strings.EqualFold(filepath.Ext(specOrPath), ".topo") {
			return LoadTopo(specOrPath)
		}
		return nil, fmt.Errorf("%s: not a .topo file; %s", specOrPath, specForms)
	}
	arg := strings.TrimSpace(specOrPath)
	if strings.Contains(arg, ":") {
		return ParseSpec(arg)
	}
	if strings.EqualFold(filepath.Ext(arg), ".topo") {
		return nil, fmt.Errorf("topology file %s: no such file; %s", specOrPath, specForms)
	}
	return nil, fmt.Errorf("topology %q is neither an existing .topo file nor a generator spec; %s", specOrPath, specForms)
}

// ParseSpec builds a fabric from a generator spec such as
// "fattree:hosts=128,tiers=3,gbps=100" or
// "leafspine:leaves=4,spines=2,hosts_per_leaf=2". The grammar, keys,
// defaults and constructions are described in the package documentation.
// The fabric is named after the spec.
func ParseSpec(spec string) (*Fabric, error) {
	p, err := parseSpecParams(spec)
	if err == nil && isLowDiameter(p.kind) {
		return buildLowDiameter(p)
	}
	planes, base, err := splitPlanes(spec)
	if err != nil {
		return nil, err
	}
	s, err := planSpec(base)
	if err != nil {
		return nil, err
	}
	f, err := buildTree(strings.TrimSpace(spec), s)
	if err != nil || planes == 0 {
		return f, err
	}
	return replicatePlanes(f, planes)
}

// splitPlanes takes the planes key out of a fattree or leafspine spec: the
// number of planes (0 when the key is absent) and the spec without it.
func splitPlanes(spec string) (int, string, error) {
	p, err := parseSpecParams(spec)
	if err != nil || !p.has("planes") {
		return 0, spec, nil
	}
	n, err := p.integer("planes", 1, MaxPlanes, 1, false)
	if err != nil {
		return 0, "", err
	}
	kind, rest, _ := strings.Cut(strings.TrimSpace(spec), ":")
	var keep []string
	for _, part := range strings.Split(rest, ",") {
		k, _, _ := strings.Cut(part, "=")
		if strings.ToLower(strings.TrimSpace(k)) != "planes" {
			keep = append(keep, part)
		}
	}
	return int(n), kind + ":" + strings.Join(keep, ","), nil
}

// planSpec resolves a spec to the tree it describes, without building it.
func planSpec(spec string) (*treeShape, error) {
	p, err := parseSpecParams(spec)
	if err != nil {
		return nil, err
	}
	switch p.kind {
	case "fattree":
		c, err := planFatTree(p)
		if err != nil {
			return nil, err
		}
		return c.shape()
	case "leafspine":
		c, s, err := planLeafSpine(p)
		if err != nil {
			return nil, err
		}
		if c != nil {
			return c.shape()
		}
		if err := s.checkLimits(); err != nil {
			return nil, fmt.Errorf("%s: %v", p.spec, err)
		}
		return s, nil
	}
	return nil, fmt.Errorf("spec %q: kind %q has no tree shape", p.spec, p.kind)
}

// specParams is a parsed "kind:key=value,..." spec.
type specParams struct {
	spec string
	kind string
	vals map[string]string
}

func parseSpecParams(spec string) (*specParams, error) {
	spec = strings.TrimSpace(spec)
	kind, rest, ok := strings.Cut(spec, ":")
	if !ok {
		return nil, fmt.Errorf("spec %q: missing ':' after the kind; %s", spec, specForms)
	}
	p := &specParams{spec: spec, kind: strings.ToLower(strings.TrimSpace(kind)), vals: map[string]string{}}
	if p.kind != "fattree" && p.kind != "leafspine" && !isLowDiameter(p.kind) {
		return nil, fmt.Errorf("spec %q: unknown kind %q (want fattree, leafspine, dragonfly or slimfly)", spec, strings.TrimSpace(kind))
	}
	if strings.TrimSpace(rest) == "" {
		return p, nil
	}
	for _, part := range strings.Split(rest, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("%s: empty parameter in %q", p.kind, spec)
		}
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if !ok {
			return nil, fmt.Errorf("%s: parameter %q is not key=value", p.kind, part)
		}
		if k == "" {
			return nil, fmt.Errorf("%s: parameter %q has no key", p.kind, part)
		}
		if v == "" {
			return nil, fmt.Errorf("%s: %s: empty value", p.kind, k)
		}
		if _, dup := p.vals[k]; dup {
			return nil, fmt.Errorf("%s: %s given twice", p.kind, k)
		}
		p.vals[k] = v
	}
	return p, nil
}

// allow reports the first key not in known.
func (p *specParams) allow(known ...string) error {
	var unknown []string
	for k := range p.vals {
		found := false
		for _, kk := range known {
			if k == kk {
				found = true
				break
			}
		}
		if !found {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return fmt.Errorf("%s: unknown key %q (known keys: %s)", p.kind, unknown[0], strings.Join(known, ", "))
}

func (p *specParams) has(key string) bool { _, ok := p.vals[key]; return ok }

// errf formats an error about key's value.
func (p *specParams) errf(key, format string, args ...any) error {
	return fmt.Errorf("%s: %s=%s: %s", p.kind, key, p.vals[key], fmt.Sprintf(format, args...))
}

// integer returns an integer parameter in [lo, hi], def when absent.
func (p *specParams) integer(key string, lo, hi, def int64, required bool) (int64, error) {
	s, ok := p.vals[key]
	if !ok {
		if required {
			return 0, fmt.Errorf("%s: missing required key %s", p.kind, key)
		}
		return def, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, p.errf(key, "want an integer")
	}
	if v < lo || v > hi {
		return 0, p.errf(key, "must be between %d and %d", lo, hi)
	}
	return v, nil
}

// gbps returns a rate parameter in Mbps (Gbps with up to 3 decimals).
func (p *specParams) gbps(key string, def int64) (int64, error) {
	s, ok := p.vals[key]
	if !ok {
		return def, nil
	}
	num := strings.TrimSuffix(strings.ToLower(s), "gbps")
	bps, err := units.ParseBitRate(htsimNumber(num) + "G")
	switch {
	case units.KindOf(err) == units.NotPositive:
		return 0, p.errf(key, "rate must be positive")
	case err != nil || num != strings.TrimSpace(num) || bps%units.Mbps != 0:
		return 0, p.errf(key, "want a rate in Gbps between 0.001 and 100000 (e.g. 100 or 12.5)")
	}
	return bps / units.Mbps, nil
}

// duration returns a duration parameter in picoseconds.
func (p *specParams) duration(key string, def int64) (int64, error) {
	s, ok := p.vals[key]
	if !ok {
		return def, nil
	}
	v, err := parseDurationPs(s)
	if err != nil {
		return 0, p.errf(key, "%v", err)
	}
	return v, nil
}

// maxDurationPs is the longest duration accepted (1 s).
const maxDurationPs = units.Second

// parseDurationPs parses "500ns", "1us", "1.5µs", "2ms" (or a bare "0") into
// picoseconds with units.ParsePs, at most 1 s.
func parseDurationPs(s string) (int64, error) {
	num, unit := splitNumber(strings.TrimSpace(s))
	v, err := units.ParsePs(htsimNumber(num) + unit)
	switch units.KindOf(err) {
	case 0:
		if v <= maxDurationPs {
			return v, nil
		}
	case units.Empty, units.MissingUnit, units.UnknownUnit:
		return 0, fmt.Errorf("want a duration with a unit (ns, us, µs, ms), e.g. 1us")
	}
	return 0, fmt.Errorf("want a duration such as 500ns or 1us, at most 1s and a whole number of picoseconds")
}

// splitNumber splits "1.5us" into "1.5" and "us".
func splitNumber(s string) (num, unit string) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	return s[:i], s[i:]
}

// htsimNumber rewrites the decimals htsim's spec syntax accepts but units
// does not, ".5" and "3.", as "0.5" and "3".
func htsimNumber(num string) string {
	if num == "." || strings.Count(num, ".") != 1 {
		return num
	}
	if strings.HasPrefix(num, ".") {
		num = "0" + num
	}
	return strings.TrimSuffix(num, ".")
}

const (
	defaultMbps      = 100_000   // 100 Gbps, htsim's default link speed
	defaultLatencyPs = 1_000_000 // 1 µs, htsim's default hop latency
	maxSpecOversub   = 1024
	maxSpecRadix     = 1 << 16
)

// planFatTree turns a fattree spec into the htsim tier description of the
// tree (see the package documentation for the construction).
func planFatTree(p *specParams) (*topoConfig, error) {
	if err := p.allow("hosts", "tiers", "gbps", "oversub", "oversub1", "latency", "switch_latency", "podsize", "radix"); err != nil {
		return nil, err
	}
	hosts, err := p.integer("hosts", 1, MaxHosts, 0, true)
	if err != nil {
		return nil, err
	}
	tiers, err := p.integer("tiers", 2, 3, 3, false)
	if err != nil {
		return nil, err
	}
	mbps, err := p.gbps("gbps", defaultMbps)
	if err != nil {
		return nil, err
	}
	o0, err := p.integer("oversub", 1, maxSpecOversub, 1, false)
	if err != nil {
		return nil, err
	}
	o1, err := p.integer("oversub1", 1, maxSpecOversub, 1, false)
	if err != nil {
		return nil, err
	}
	if tiers == 2 && p.has("oversub1") {
		return nil, p.errf("oversub1", "a 2-tier tree has no tier-1 uplinks; oversub1 needs tiers=3")
	}
	lat, err := p.duration("latency", defaultLatencyPs)
	if err != nil {
		return nil, err
	}
	if lat == 0 {
		return nil, p.errf("latency", "link latency must be positive (htsim rejects zero link latency)")
	}
	sw, err := p.duration("switch_latency", 0)
	if err != nil {
		return nil, err
	}
	podsize, err := p.integer("podsize", 1, MaxHosts, 0, false)
	if err != nil {
		return nil, err
	}
	radix, err := p.integer("radix", 2, maxSpecRadix, 0, false)
	if err != nil {
		return nil, err
	}
	if radix%2 != 0 {
		return nil, p.errf("radix", "the radix K of a K-ary fat tree must be even")
	}
	c := &topoConfig{file: p.spec, nodes: hosts, tiers: tiers}
	for t := 0; t < int(tiers); t++ {
		c.setTier(t, keySpeed, mbps)
		c.setTier(t, keyLatency, lat)
		c.setTier(t, keySwitchLatency, sw)
	}
	half := radix / 2 // K/2: ToR uplinks and aggs per pod
	if tiers == 2 {
		if podsize != 0 && podsize != hosts {
			return nil, p.errf("podsize", "a 2-tier tree is a single pod: podsize must equal hosts (%d)", hosts)
		}
		if half == 0 {
			// hosts = oversub x K^2/2 = 2 x oversub x (K/2)^2.
			u, ok := solveSize(hosts, func(u int64) int64 { return capMul(2*o0, u*u) })
			if !ok {
				return nil, p.errf("hosts", "not the size of a 2-tier K-ary fat tree (hosts = %sK^2/2 for even K); %s; give radix= to build other sizes",
					oversubPrefix(o0, 1), nearestSizes(hosts, func(u int64) int64 { return capMul(2*o0, u*u) }))
			}
			half = u
		}
		perLeaf := o0 * half
		if hosts%perLeaf != 0 {
			return nil, p.errf("hosts", "not a multiple of %d hosts per leaf (oversub %d x radix/2 %d)", perLeaf, o0, half)
		}
		leaves := hosts / perLeaf
		if leaves > 2*half {
			return nil, p.errf("hosts", "%d hosts need %d leaves but a radix-%d spine reaches at most %d", hosts, leaves, 2*half, 2*half)
		}
		c.podsz = hosts
		c.setTier(0, keyRadixDown, perLeaf)
		c.setTier(0, keyRadixUp, half)
		c.setTier(0, keyOversub, o0)
		c.setTier(1, keyRadixDown, leaves)
		return c, nil
	}
	fullPod := func(u int64) int64 { return capMul(capMul(o0, o1), u*u) }
	switch {
	case half > 0:
	case podsize > 0:
		u, ok := solveSize(podsize, fullPod)
		if !ok {
			return nil, p.errf("podsize", "not a full K-ary pod (podsize = %s(K/2)^2 for even K); give radix= as well for partial pods", oversubPrefix(o0, o1))
		}
		half = u
	default:
		size := func(u int64) int64 { return capMul(fullPod(u), 2*u) }
		u, ok := solveSize(hosts, size)
		if !ok {
			return nil, p.errf("hosts", "not the size of a 3-tier K-ary fat tree (hosts = %sK^3/4 for even K); %s; give radix= or podsize= to build other sizes",
				oversubPrefix(o0, o1), nearestSizes(hosts, size))
		}
		half = u
	}
	if podsize == 0 {
		podsize = fullPod(half)
		if hosts < podsize {
			return nil, p.errf("hosts", "fewer hosts than one full radix-%d pod (%d); give a smaller podsize= for partially populated pods", 2*half, podsize)
		}
	}
	perToR := o0 * half
	if podsize%perToR != 0 {
		return nil, p.errf("podsize", "not a multiple of %d hosts per ToR (oversub %d x radix/2 %d)", perToR, o0, half)
	}
	torsPerPod := podsize / perToR
	if radix > 0 && torsPerPod > o1*half {
		return nil, p.errf("podsize", "%d ToRs per pod is more than the %d a radix-%d agg can serve (oversub1 %d x radix/2 %d)", torsPerPod, o1*half, radix, o1, half)
	}
	if torsPerPod%o1 != 0 {
		return nil, p.errf("oversub1", "%d ToRs per pod (podsize %d / %d hosts per ToR) is not a multiple of oversub1 %d", torsPerPod, podsize, perToR, o1)
	}
	if hosts%podsize != 0 {
		return nil, p.errf("hosts", "not a multiple of podsize %d", podsize)
	}
	pods := hosts / podsize
	if radix > 0 && pods > radix {
		return nil, p.errf("hosts", "%d hosts need %d pods of %d but a radix-%d core switch reaches at most %d pods", hosts, pods, podsize, radix, radix)
	}
	c.podsz = podsize
	c.setTier(0, keyRadixDown, perToR)
	c.setTier(0, keyRadixUp, half)
	c.setTier(0, keyOversub, o0)
	c.setTier(1, keyRadixDown, torsPerPod)
	c.setTier(1, keyRadixUp, torsPerPod/o1)
	c.setTier(1, keyOversub, o1)
	c.setTier(2, keyRadixDown, pods)
	return c, nil
}

// solveSize finds u >= 1 with size(u) == want; size must be increasing.
func solveSize(want int64, size func(int64) int64) (int64, bool) {
	for u := int64(1); ; u++ {
		s := size(u)
		if s == want {
			return u, true
		}
		if s > want {
			return 0, false
		}
	}
}

// nearestSizes describes the valid sizes around want.
func nearestSizes(want int64, size func(int64) int64) string {
	u := int64(1)
	for size(u) < want {
		u++
	}
	if u == 1 {
		return fmt.Sprintf("the smallest is %d (radix=2)", size(1))
	}
	return fmt.Sprintf("nearest are %d (radix=%d) and %d (radix=%d)", size(u-1), 2*(u-1), size(u), 2*u)
}

func oversubPrefix(o0, o1 int64) string {
	switch {
	case o0 == 1 && o1 == 1:
		return ""
	case o1 == 1:
		return fmt.Sprintf("oversub %d x ", o0)
	}
	return fmt.Sprintf("oversub %d x oversub1 %d x ", o0, o1)
}

// planLeafSpine turns a leafspine spec into an htsim tier description when
// htsim can express it (uplink_gbps equal to gbps and hosts_per_leaf a
// multiple of spines x links_per_spine), or else directly into the tree
// shape; both are then built by the same builder.
func planLeafSpine(p *specParams) (*topoConfig, *treeShape, error) {
	if err := p.allow("leaves", "spines", "hosts_per_leaf", "gbps", "uplink_gbps", "links_per_spine", "latency", "switch_latency"); err != nil {
		return nil, nil, err
	}
	leaves, err := p.integer("leaves", 1, MaxSwitches, 0, true)
	if err != nil {
		return nil, nil, err
	}
	spines, err := p.integer("spines", 1, MaxSwitches, 0, true)
	if err != nil {
		return nil, nil, err
	}
	perLeaf, err := p.integer("hosts_per_leaf", 1, MaxHosts, 0, true)
	if err != nil {
		return nil, nil, err
	}
	mbps, err := p.gbps("gbps", defaultMbps)
	if err != nil {
		return nil, nil, err
	}
	upMbps, err := p.gbps("uplink_gbps", mbps)
	if err != nil {
		return nil, nil, err
	}
	bundle, err := p.integer("links_per_spine", 1, 1024, 1, false)
	if err != nil {
		return nil, nil, err
	}
	lat, err := p.duration("latency", defaultLatencyPs)
	if err != nil {
		return nil, nil, err
	}
	if lat == 0 {
		return nil, nil, p.errf("latency", "link latency must be positive (htsim rejects zero link latency)")
	}
	sw, err := p.duration("switch_latency", 0)
	if err != nil {
		return nil, nil, err
	}
	hosts := capMul(leaves, perLeaf)
	if hosts > MaxHosts {
		return nil, nil, fmt.Errorf("%s: leaves=%d x hosts_per_leaf=%d = %s hosts, more than the limit of %d", p.kind, leaves, perLeaf, capString(hosts), MaxHosts)
	}
	up := spines * bundle
	if upMbps == mbps && perLeaf%up == 0 {
		c := &topoConfig{file: p.spec, nodes: hosts, tiers: 2, podsz: hosts}
		for t := 0; t < 2; t++ {
			c.setTier(t, keySpeed, mbps)
			c.setTier(t, keyLatency, lat)
			c.setTier(t, keySwitchLatency, sw)
		}
		c.setTier(0, keyRadixDown, perLeaf)
		c.setTier(0, keyRadixUp, up)
		c.setTier(0, keyOversub, perLeaf/up)
		c.setTier(1, keyRadixDown, leaves*bundle)
		c.setTier(1, keyBundle, bundle)
		return c, nil, nil
	}
	return nil, leafSpineShape(hosts, leaves, spines, perLeaf, bundle, mbps, upMbps, lat, sw), nil
}

// leafSpineShape is the shape of a leaf-spine built without an htsim tier
// description (mixed speeds or undersubscribed leaves).
func leafSpineShape(hosts, leaves, spines, perLeaf, bundle, mbps, upMbps, lat, sw int64) *treeShape {
	return &treeShape{
		tiers:       2,
		hosts:       hosts,
		podsize:     hosts,
		pods:        1,
		hostsPerToR: perLeaf,
		torsPerPod:  leaves,
		aggsPerPod:  spines,
		bundle:      [3]int64{1, bundle, 0},
		rateBps:     [3]int64{mbps * 1_000_000, upMbps * 1_000_000, 0},
		latencyPs:   [3]int64{lat, lat, 0},
		switchPs:    [3]int64{sw, sw, 0},
	}
}
