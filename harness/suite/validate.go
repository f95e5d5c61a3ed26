package suite

import (
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/internal/fileerr"
	"github.com/fabricbench/fabricbench/kpis"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/preset"
)

// Defaults (see the field comments in types.go).
const (
	DefaultSeed               = 1
	DefaultCC                 = "nscc"
	DefaultLB                 = "reps"
	DefaultPlanes             = "plb"
	DefaultMTU                = 4096
	DefaultInterval           = "100us"
	DefaultQueue              = "bdp"
	DefaultScope              = "fabric"
	DefaultHosts              = "all"
	DefaultECNKMin            = 0.2
	DefaultECNKMax            = 0.8
	DefaultSymmetryZ          = 3.5
	DefaultMinDeviation       = 0.2
	DefaultStragglerLow       = 0.1
	DefaultStragglerHigh      = 0.8
	DefaultStragglerMinMiddle = 0.5
	DefaultVictimDeviation    = 0.1
	DefaultImbalanceCV        = 0.15
	DefaultCulpritBacklog     = "16KiB"
	DefaultCulpritCapacity    = 0.8
	DefaultCulpritLoss        = 0.5
	DefaultCulpritMinInterval = 4
	// features.ecmp: modes, adaptive routing's default staleness and the
	// limits of its knobs.
	ECMPModeHash     = "hash"
	ECMPModeAdaptive = "adaptive"
	ECMPModeFlowlet  = "flowlet"
	// Low-diameter routing on dragonfly and slimfly fabrics (simulator
	// only): minimal, valiant, valiant-hop, ugal-l, ugal-g, source-guided.
	ECMPModeSourceGuided   = "source-guided"
	ECMPModePortMSB        = "port-msb"
	DefaultARStaleness     = "100ns"
	MaxARStalenessPs       = 1_000_000_000 // 1 ms
	MaxARQuantum           = 16 << 20
	DefaultCulpritMinBound = 1
	DefaultCulpritMinLost  = 8
	DefaultCulpritMergeGap = 2
	// MaxCulpritBacklog bounds analysis.culprit.backlog.
	MaxCulpritBacklog = 1 << 30
)

// Limits on what a run expands into memory before it starts (flows, fault
// events). Above them Load fails at the field, naming the limit.
const (
	// MaxRepetitions bounds jobs[].repetitions.
	MaxRepetitions = 10000
	// MaxFlows bounds the flows of one run: every repetition of every
	// job (a permutation of n hosts has n flows a repetition, an incast
	// one per sender, an all-to-all n(n-1), a ring all-reduce 2n(n-1)).
	MaxFlows = 1 << 20
	// MaxFlapCount bounds faults[].count (each cycle is two events).
	MaxFlapCount = 10000
)

// DefaultPaths are the telemetry paths subscribed when a suite lists none.
var DefaultPaths = []string{
	"/interfaces/interface/state/counters",
	"/qos/interfaces/interface/output/queues/queue/state",
}

// DefaultHash is the ECMP hash (the 5-tuple) when a suite sets none.
var DefaultHash = drivers.FiveTuple()

// Workloads are the job workloads.
var Workloads = []string{"permutation", "incast", "all-to-all", "all-reduce", "all-gather", "reduce-scatter", "group-shift"}

// MaxQPs bounds jobs[].qps.
const MaxQPs = 256

// FaultKinds are the fault kinds.
var FaultKinds = []string{"down", "up", "flap", "degrade", "random"}

var hashFields = drivers.HashFields()

var jobNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

const (
	minInterval = 100 * 1_000_000    // 100us in ps
	maxInterval = 10 * 1_000_000_000 // 10ms in ps
	minMTU      = 256
	maxMTU      = 9216
	wantSize    = "want e.g. 2MiB, 512KB"
	wantDur     = "want e.g. 100us, 1ms"
)

// parseSpec builds generator-spec fabrics; tests replace it to keep fuzzed
// fabrics small.
var parseSpec = inventory.ParseSpec

// fabricResult caches a loaded fabric across the points of a matrix.
type fabricResult struct {
	f   *inventory.Fabric
	err error
}

// checker applies defaults to and validates one decoded suite.
type checker struct {
	d     *doc
	s     *Suite
	dir   string
	cache map[string]fabricResult
	// inventory, when set, replaces the fabric (run --inventory).
	inventory string

	fab   *inventory.Fabric // nil when the fabric did not load
	nodes map[string]int    // node name -> node ID
	hosts map[string]int    // host name -> host number
}

func (c *checker) errf(path, format string, args ...any) { c.d.errf(path, format, args...) }

// undecoded reports whether a value at or below path did not decode (it
// is unset now: its follow-on problems are not reported).
func (c *checker) undecoded(path string) bool {
	for u := range c.d.undecoded {
		if _, below := underPath(u, path); below {
			return true
		}
	}
	return false
}

func (c *checker) run() {
	c.defaults()
	c.preset()
	c.fabric()
	c.features()
	c.transport()
	c.agents()
	c.telemetry()
	c.jobs()
	c.faults()
	c.kpis()
	c.analysis()
	c.sim()
	c.controller()
	c.bringup()
	c.baseline()
	c.tests()
}

// controller checks Suite.Controller.
func (c *checker) controller() {
	ct := c.s.Controller
	if ct == nil {
		return
	}
	switch ct.Kind {
	case "":
		c.errf("controller.kind", "required (%s or %s)", ControllerSRv6Reroute, ControllerNone)
	case ControllerNone:
	default: // ControllerSRv6Reroute, the one other kind
		pinned := false
		if sr := c.s.Features.SRv6; sr != nil {
			for _, p := range sr.Paths {
				pinned = pinned || (p.Job == "" && len(p.Via) == 1)
			}
		}
		if !pinned {
			c.errf("controller.kind", "%s moves host pairs pinned by features.srv6.paths through one spine (without job); the suite pins none", ct.Kind)
		}
	}
	if t := c.s.Telemetry.Enabled; t != nil && !*t && ct.Kind != ControllerNone {
		c.errf("controller", "the controller decides from telemetry; telemetry.enabled is false")
	}
	tel := c.s.Telemetry.Interval
	if ct.Interval.IsSet() {
		switch iv := ct.Interval.Ps(); {
		case iv <= 0 || iv > 10e12:
			c.errf("controller.interval", "%s is out of range (want telemetry.interval to 10s)", ct.Interval)
		case !tel.Fastest() && !c.d.undecoded["telemetry.interval"] && tel.Ps() > 0 && iv%tel.Ps() != 0:
			c.errf("controller.interval", "%s is not a multiple of telemetry.interval (%s)", ct.Interval, tel)
		}
	}
	if ct.HoldDown.IsSet() {
		if hd := ct.HoldDown.Ps(); hd < 0 || hd > 60e12 {
			c.errf("controller.hold_down", "%s is out of range (want 0 to 60s)", ct.HoldDown)
		}
	}
	th := &ct.Thresholds
	if c.d.has("controller.thresholds.rate") && (th.Rate <= 0 || th.Rate > 1) {
		c.errf("controller.thresholds.rate", "%g is out of range (want 0 < rate <= 1)", th.Rate)
	}
	if th.Queue.IsSet() {
		if n := th.Queue.Bytes(); n <= 0 || n > 1<<30 {
			c.errf("controller.thresholds.queue", "%s is out of range (want 1 byte to 1GiB)", th.Queue)
		}
	}
	for _, k := range []struct {
		name string
		v    int
	}{{"trigger", th.Trigger}, {"clear", th.Clear}} {
		if c.d.has("controller.thresholds."+k.name) && (k.v < 1 || k.v > 1000) {
			c.errf("controller.thresholds."+k.name, "%d is out of range (want 1..1000)", k.v)
		}
	}
}

// LatestInPrefix starts a Baseline that names the newest suitable results
// directory under a directory.
const LatestInPrefix = "latest-in "

// baseline checks Suite.Baseline ("DIR" or "latest-in DIR") and makes its
// directory absolute. Whether the directory holds results is checked when
// the run compares, at the end.
func (c *checker) baseline() {
	s := c.s
	b := strings.TrimSpace(s.Baseline)
	if b == "" {
		if c.d.has("baseline") {
			c.errf("baseline", "empty (want a results directory or \"latest-in DIR\")")
		}
		return
	}
	prefix := ""
	if rest, ok := strings.CutPrefix(b, strings.TrimSpace(LatestInPrefix)); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
		prefix, b = LatestInPrefix, strings.TrimSpace(rest)
		if b == "" {
			c.errf("baseline", "latest-in needs a directory (want \"latest-in DIR\")")
			return
		}
	}
	s.Baseline = prefix + c.resolvePath(b)
}

// preset applies Suite.Preset: its spec parameters to a fabric.spec that
// does not set them, its switch and transport settings to the keys the
// document leaves out (after defaults, so they replace the defaults only).
func (c *checker) preset() {
	s, d := c.s, c.d
	if strings.TrimSpace(s.Preset) == "" {
		return
	}
	p, err := preset.Lookup(s.Preset)
	if err != nil {
		c.errf("preset", "%v", err)
		return
	}
	s.Preset = p.Name
	switch {
	case strings.TrimSpace(s.Fabric.Spec) != "":
		if err := p.CheckSpec(s.Fabric.Spec); err != nil {
			c.errf("preset", "%v", err)
			return
		}
		s.Fabric.Spec = p.ApplySpec(s.Fabric.Spec)
	case s.Fabric.File != "":
		c.errf("preset", "%s sets the link rate and latencies of a generator spec (%s); fabric.file brings its own (use fabric.spec, e.g. fattree:hosts=128)",
			p.Name, p.SpecKeys())
	}
	f := &s.Features
	set := p.Apply(preset.Settings{CC: string(s.Transport.CC), MTU: s.Transport.MTU, Queue: f.Queue.String(), KMin: f.ECN.KMin, KMax: f.ECN.KMax,
		ECN: f.ECN.Enabled != nil && *f.ECN.Enabled, Trimming: f.Trimming.Enabled != nil && *f.Trimming.Enabled},
		func(name string) bool { return d.has(presetFields[name]) })
	s.Transport.CC, s.Transport.MTU, f.ECN.KMin, f.ECN.KMax = CongestionControl(set.CC), set.MTU, set.KMin, set.KMax
	q, err := ParseQueue(set.Queue)
	if err != nil {
		c.errf("preset", "%s: features.queue: %v", p.Name, err)
	} else {
		f.Queue = q
	}
	if !d.has(presetFields[preset.SetECN]) {
		f.ECN.Enabled = boolPtr(set.ECN)
	}
	if !d.has(presetFields[preset.SetTrimming]) {
		f.Trimming.Enabled = boolPtr(set.Trimming)
	}
}

// presetFields are the suite fields of a preset's settings (a suite has
// no target RTT or window: what the preset sets for them is not used).
var presetFields = map[string]string{
	preset.SetCC: "transport.cc", preset.SetMTU: "transport.mtu", preset.SetQueue: "features.queue",
	preset.SetKMin: "features.ecn.kmin", preset.SetKMax: "features.ecn.kmax",
	preset.SetECN: "features.ecn.enabled", preset.SetTrimming: "features.trimming.enabled",
}

func (c *checker) bringup() {
	b := c.s.Bringup
	if b == nil {
		return
	}
	if strings.TrimSpace(b.Topology) == "" {
		c.errf("bringup.topology", "required: a containerlab topology file (*.clab.yml)")
	} else {
		resolved := c.resolvePath(b.Topology)
		if st, err := os.Stat(resolved); err != nil || !st.Mode().IsRegular() {
			c.errf("bringup.topology", "%q: no such file (looked for %s)", b.Topology, resolved)
		} else {
			b.Topology = resolved
		}
	}
	if b.Teardown && !b.Deploy {
		c.errf("bringup.teardown", "needs deploy: true (a lab the suite did not bring up is not torn down)")
	}
	if b.Converge.Duration() > 10*time.Minute {
		c.errf("bringup.converge", "%q is not a duration from 0 to 10m (e.g. 60s)", b.Converge)
	}
}

// defaults fills in what the document leaves out. Strings default when
// empty; numbers and booleans when the key is absent (so that an explicit
// 0 is kept and validated).
func (c *checker) defaults() {
	s, d := c.s, c.d
	if strings.TrimSpace(s.Name) == "" {
		base := filepath.Base(d.file)
		s.Name = strings.TrimSuffix(base, filepath.Ext(base))
		if s.Name == "" || s.Name == "." || s.Name == string(filepath.Separator) {
			s.Name = "suite"
		}
	}
	if !d.has("seed") {
		s.Seed = DefaultSeed
	}
	f := &s.Features
	if !d.has("features.ecmp.hash") {
		f.ECMP.Hash = nil
		for _, h := range DefaultHash {
			f.ECMP.Hash = append(f.ECMP.Hash, HashField(h))
		}
	}
	if f.ECMP.Mode == "" {
		f.ECMP.Mode = ECMPModeHash
	}
	if f.ECMP.Mode == ECMPModeAdaptive && !d.has("features.ecmp.staleness") {
		f.ECMP.Staleness = mustDuration(DefaultARStaleness)
	}
	// features.ecn.enabled and features.trimming.enabled stay nil when
	// absent: their default follows the backend (on where it can do
	// them; harness.PlanSuite).
	if !d.has("features.ecn.kmin") {
		f.ECN.KMin = DefaultECNKMin
	}
	if !d.has("features.ecn.kmax") {
		f.ECN.KMax = DefaultECNKMax
	}
	if !f.Queue.IsSet() {
		f.Queue = Queue{word: DefaultQueue}
	}
	t := &s.Transport
	if t.CC == "" {
		t.CC = DefaultCC
	}
	if t.LB == "" {
		t.LB = DefaultLB
	}
	if t.Planes == "" {
		t.Planes = DefaultPlanes
	}
	if !d.has("transport.mtu") {
		t.MTU = DefaultMTU
	}
	if !s.Telemetry.Interval.IsSet() {
		s.Telemetry.Interval = Interval{Duration: mustDuration(DefaultInterval)}
	}
	if !d.has("telemetry.paths") {
		s.Telemetry.Paths = append([]string(nil), DefaultPaths...)
	}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		p := fileerr.Index("jobs", i)
		if j.Hosts == nil {
			j.Hosts = DefaultHosts
		}
		if !j.Start.IsSet() {
			j.Start = mustDuration("0")
		}
		if !j.Gap.IsSet() {
			j.Gap = mustDuration("0")
		}
		if !d.has(p + ".repetitions") {
			j.Repetitions = 1
		}
	}
	for i := range s.Faults {
		if !s.Faults[i].At.IsSet() {
			s.Faults[i].At = mustDuration("0")
		}
	}
	for i := range s.KPIs {
		k := &s.KPIs[i]
		if k.Scope == "" {
			k.Scope = DefaultScope
		}
		if k.Name == "" {
			k.Name = k.Metric
		}
	}
	a := &s.Analysis
	if !d.has("analysis.symmetry.z") {
		a.Symmetry.Z = DefaultSymmetryZ
	}
	if !d.has("analysis.symmetry.min_deviation") {
		a.Symmetry.MinDeviation = DefaultMinDeviation
	}
	if !d.has("analysis.straggler.low") {
		a.Straggler.Low = DefaultStragglerLow
	}
	if !d.has("analysis.straggler.high") {
		a.Straggler.High = DefaultStragglerHigh
	}
	if !d.has("analysis.straggler.min_middle") {
		a.Straggler.MinMiddle = DefaultStragglerMinMiddle
	}
	if !d.has("analysis.symmetry.victim_deviation") {
		a.Symmetry.VictimDeviation = DefaultVictimDeviation
	}
	if !d.has("analysis.symmetry.imbalance_cv") {
		a.Symmetry.ImbalanceCV = DefaultImbalanceCV
	}
	cu := &a.Culprit
	if !d.has("analysis.culprit.backlog") {
		cu.Backlog = mustSize(DefaultCulpritBacklog)
	}
	if !d.has("analysis.culprit.capacity") {
		cu.Capacity = DefaultCulpritCapacity
	}
	if !d.has("analysis.culprit.loss") {
		cu.Loss = DefaultCulpritLoss
	}
	if !d.has("analysis.culprit.min_intervals") {
		cu.MinIntervals = DefaultCulpritMinInterval
	}
	if !d.has("analysis.culprit.min_bound_intervals") {
		cu.MinBoundIntervals = DefaultCulpritMinBound
	}
	if !d.has("analysis.culprit.min_lost_packets") {
		cu.MinLostPackets = DefaultCulpritMinLost
	}
	if !d.has("analysis.culprit.merge_gap") {
		cu.MergeGap = DefaultCulpritMergeGap
	}
}

func boolPtr(b bool) *bool { return &b }

// resolvePath makes a path relative to the suite file absolute.
func (c *checker) resolvePath(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.dir, p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return filepath.Clean(p)
}

func (c *checker) fabric() {
	fb := &c.s.Fabric
	if c.inventory != "" {
		*fb = Fabric{Inventory: c.inventory}
	}
	spec := strings.TrimSpace(fb.Spec)
	if fb.Inventory != "" {
		c.inventoryFabric(fb)
		return
	}
	switch {
	case spec != "" && fb.File != "":
		c.errf("fabric.file", "set only one of fabric.spec and fabric.file")
		return
	case spec == "" && fb.File == "":
		c.errf("fabric", "set fabric.spec (e.g. leafspine:leaves=4,spines=2,hosts_per_leaf=4), fabric.file (a .topo file) or fabric.inventory (a hardware inventory)")
		return
	}
	var key, path string
	if spec != "" {
		key, path = "spec\x00"+spec, "fabric.spec"
	} else {
		resolved := c.resolvePath(fb.File)
		key, path = "file\x00"+resolved, "fabric.file"
		st, err := os.Stat(resolved)
		if err != nil || !st.Mode().IsRegular() {
			c.errf(path, "%q: no such file (looked for %s)", fb.File, resolved)
			return
		}
		fb.File = resolved
	}
	r, ok := c.cache[key]
	if !ok {
		if spec != "" {
			r.f, r.err = parseSpec(spec)
		} else {
			r.f, r.err = inventory.Load(fb.File)
		}
		if c.cache != nil {
			c.cache[key] = r
		}
	}
	if r.err != nil {
		c.errf(path, "%v", r.err)
		return
	}
	c.fab = r.f
	c.nodes = make(map[string]int, len(r.f.Nodes))
	for i := range r.f.Nodes {
		c.nodes[r.f.Nodes[i].Name] = i
	}
	c.hosts = hostIndex(r.f)
}

// inventoryFabric loads fabric.inventory (alone: with spec or file it is
// an error).
func (c *checker) inventoryFabric(fb *Fabric) {
	if strings.TrimSpace(fb.Spec) != "" || fb.File != "" {
		c.errf("fabric.inventory", "set only one of fabric.spec, fabric.file and fabric.inventory")
		return
	}
	resolved := c.resolvePath(fb.Inventory)
	if st, err := os.Stat(resolved); err != nil || !st.Mode().IsRegular() {
		c.errf("fabric.inventory", "%q: no such file (looked for %s)", fb.Inventory, resolved)
		return
	}
	fb.Inventory = resolved
	key := "inventory\x00" + resolved
	r, ok := c.cache[key]
	if !ok {
		r.f, r.err = LoadInventoryFabric(resolved)
		if c.cache != nil {
			c.cache[key] = r
		}
	}
	if r.err != nil {
		c.errf("fabric.inventory", "%v", r.err)
		return
	}
	c.setFabric(r.f)
}

func (c *checker) setFabric(f *inventory.Fabric) {
	c.fab = f
	c.nodes = make(map[string]int, len(f.Nodes))
	for i := range f.Nodes {
		c.nodes[f.Nodes[i].Name] = i
	}
	c.hosts = hostIndex(f)
}

func hostIndex(f *inventory.Fabric) map[string]int {
	m := make(map[string]int, len(f.Hosts))
	for h, id := range f.Hosts {
		m[f.Nodes[id].Name] = h
	}
	return m
}

// checkHost reports a name that is not a host of the fabric (when known).
func (c *checker) checkHost(path, name string) bool {
	if name == "" {
		c.errf(path, "want a host name")
		return false
	}
	if c.fab == nil {
		return true
	}
	if _, ok := c.hosts[name]; ok {
		return true
	}
	if id, ok := c.nodes[name]; ok {
		c.errf(path, "%s is a %s, not a host", name, c.fab.Nodes[id].Role)
		return false
	}
	c.errf(path, "no host named %q in the fabric (%s)", name, c.hostRange())
	return false
}

// hostRange describes the fabric's hosts, e.g. "hosts host0..host15".
func (c *checker) hostRange() string {
	f := c.fab
	n := len(f.Hosts)
	if n == 1 {
		return "host " + f.Nodes[f.Hosts[0]].Name
	}
	return fmt.Sprintf("hosts %s..%s", f.Nodes[f.Hosts[0]].Name, f.Nodes[f.Hosts[n-1]].Name)
}

func (c *checker) features() {
	f := &c.s.Features
	d := c.d
	if len(f.ECMP.Hash) == 0 {
		c.errf("features.ecmp.hash", "needs at least one field (%s)", orList(hashFields))
	}
	seen := map[HashField]int{}
	for i, h := range f.ECMP.Hash {
		p := fileerr.Index("features.ecmp.hash", i)
		if !contains(hashFields, h) { // "": the others do not decode
			c.errf(p, "unknown hash field %q (want %s)", h, orList(hashFields))
		} else if j, dup := seen[h]; dup {
			c.errf(p, "%s is already listed (features.ecmp.hash[%d])", h, j)
		}
		seen[h] = i
	}
	if c.undecoded("features.ecmp.mode") {
		// The mode's knobs are checked against a mode that decoded.
	} else if f.ECMP.Mode != ECMPModeFlowlet && d.has("features.ecmp.flowlet_gap") {
		c.errf("features.ecmp.flowlet_gap", "applies to flowlet load balancing only (set features.ecmp.mode: flowlet)")
	}
	switch mode := f.ECMP.Mode; {
	case c.undecoded("features.ecmp.mode"):
	case mode == ECMPModeFlowlet:
		for _, k := range []string{"staleness", "quantum", "weighted"} {
			if d.has("features.ecmp." + k) {
				c.errf("features.ecmp."+k, "applies to adaptive routing only (set features.ecmp.mode: adaptive)")
			}
		}
		if f.ECMP.FlowletGap.IsSet() {
			if ps := f.ECMP.FlowletGap.Ps(); ps < 100_000 || ps > 10_000_000_000 {
				c.errf("features.ecmp.flowlet_gap", "%s is out of range (want 100ns..10ms)", f.ECMP.FlowletGap)
			}
		}
	case mode == ECMPModeHash:
		for _, k := range []string{"staleness", "quantum", "weighted"} {
			if d.has("features.ecmp." + k) {
				c.errf("features.ecmp."+k, "applies to adaptive routing only (set features.ecmp.mode: adaptive)")
			}
		}
	case mode == ECMPModeAdaptive:
		if ps := f.ECMP.Staleness.Ps(); ps < 0 || ps > MaxARStalenessPs {
			c.errf("features.ecmp.staleness", "%s is out of range (want 0..1ms)", f.ECMP.Staleness)
		}
		if f.ECMP.Quantum.IsSet() {
			if n := f.ECMP.Quantum.Bytes(); n < 1 || n > MaxARQuantum {
				c.errf("features.ecmp.quantum", "%s is out of range (want 1B..16MiB)", f.ECMP.Quantum)
			}
		}
	default: // the low-diameter modes (ECMPModes)
		for _, k := range []string{"staleness", "quantum", "weighted"} {
			if d.has("features.ecmp." + k) {
				c.errf("features.ecmp."+k, "applies to adaptive routing only (set features.ecmp.mode: adaptive)")
			}
		}
	}
	kmin, kmax := f.ECN.KMin, f.ECN.KMax
	okMin := kmin >= 0 && kmin < 1
	okMax := kmax > 0 && kmax <= 1
	if !okMin {
		c.errf("features.ecn.kmin", "%v is out of range (want 0 <= kmin < 1)", kmin)
	}
	if !okMax {
		c.errf("features.ecn.kmax", "%v is out of range (want 0 < kmax <= 1)", kmax)
	}
	if okMin && okMax && kmin >= kmax {
		p := "features.ecn.kmin"
		if !d.has(p) {
			p = "features.ecn.kmax"
		}
		c.errf(p, "kmin (%v) must be less than kmax (%v)", kmin, kmax)
	}
	if f.PFC != nil {
		if w := f.PFC.Watchdog; w != nil {
			if !w.Detect.IsSet() {
				c.errf("features.pfc.watchdog.detect", "required (%s)", wantDur)
			} else if ps := w.Detect.Ps(); ps < 10_000_000 || ps > 10_000_000_000_000 {
				c.errf("features.pfc.watchdog.detect", "%s is out of range (want 10us..10s)", w.Detect)
			}
			if w.Restore.IsSet() {
				if ps := w.Restore.Ps(); ps <= 0 || ps > 10_000_000_000_000 {
					c.errf("features.pfc.watchdog.restore", "%s is out of range (want more than 0, at most 10s)", w.Restore)
				}
			}
			if !f.PFC.Enabled {
				c.errf("features.pfc.watchdog", "needs features.pfc.enabled: true")
			}
		}
		seen := map[int]int{}
		for i, pr := range f.PFC.Priorities {
			p := fileerr.Index("features.pfc.priorities", i)
			if pr < 0 || pr > 7 {
				c.errf(p, "priority %d is out of range (want 0..7)", pr)
			} else if j, dup := seen[pr]; dup {
				c.errf(p, "priority %d is already listed (features.pfc.priorities[%d])", pr, j)
			}
			seen[pr] = i
		}
	}
	if sr := f.SRv6; sr != nil {
		if sr.Locator != "" {
			pfx, err := netip.ParsePrefix(sr.Locator)
			if err != nil || !pfx.Addr().Is6() || pfx.Addr().Is4In6() {
				c.errf("features.srv6.locator", "%q is not an IPv6 prefix (want e.g. fcbb:bb00::/32)", sr.Locator)
			}
		}
		if sr.Elephant.IsSet() && sr.Elephant.Bytes() <= 0 {
			c.errf("features.srv6.elephant", "%q is not a positive size (e.g. 1MiB)", sr.Elephant)
		}
		names := map[string]int{}
		for i, sp := range sr.Paths {
			p := fileerr.Index("features.srv6.paths", i)
			c.checkHost(p+".src", sp.Src)
			c.checkHost(p+".dst", sp.Dst)
			if sp.Src != "" && sp.Src == sp.Dst {
				c.errf(p+".dst", "is the same host as src")
			}
			if len(sp.Via) == 0 {
				c.errf(p+".via", "needs at least one switch")
			}
			for k, v := range sp.Via {
				c.checkSwitch(fileerr.Index(p+".via", k), v)
			}
			if sp.Job != "" && !slices.ContainsFunc(c.s.Jobs, func(j Job) bool { return j.Name == sp.Job }) {
				c.errf(p+".job", "no job named %q", sp.Job)
			}
			if sp.Name != "" {
				if j, dup := names[sp.Name]; dup {
					c.errf(p+".name", "%q is already used by features.srv6.paths[%d]", sp.Name, j)
				}
				names[sp.Name] = i
			}
		}
	}
	vrfs := map[string]int{}
	tables := map[int]int{}
	hostVRF := map[string]string{}
	for i, v := range f.VRFs {
		p := fileerr.Index("features.vrfs", i)
		switch j, dup := vrfs[v.Name]; {
		case strings.TrimSpace(v.Name) == "":
			c.errf(p+".name", "required")
		case v.Name == DefaultVRF:
			c.errf(p+".name", "%q is the VRF of the hosts no VRF lists; choose another name", v.Name)
		case dup:
			c.errf(p+".name", "%q is already used by features.vrfs[%d]", v.Name, j)
		default:
			vrfs[v.Name] = i
		}
		if v.Table <= 0 {
			c.errf(p+".table", "must be a positive routing table number, not %d", v.Table)
		} else if j, dup := tables[v.Table]; dup {
			c.errf(p+".table", "table %d is already used by features.vrfs[%d]", v.Table, j)
		} else {
			tables[v.Table] = i
		}
		seen := map[string]int{}
		for k, h := range v.Hosts {
			hp := fileerr.Index(p+".hosts", k)
			if j, dup := seen[h]; dup {
				c.errf(hp, "%s is already listed (%s)", h, fileerr.Index(p+".hosts", j))
				continue
			}
			seen[h] = k
			if other, dup := hostVRF[h]; dup {
				c.errf(hp, "%s is already in VRF %s (a host is in one VRF)", h, other)
				continue
			}
			hostVRF[h] = v.Name
			c.checkHost(hp, h)
		}
	}
	for i, v := range f.VRFs {
		for k, l := range v.Leak {
			lp := fileerr.Index(fileerr.Index("features.vrfs", i)+".leak", k)
			_, known := vrfs[l]
			switch {
			case l == v.Name:
				c.errf(lp, "a VRF reaches its own hosts; leak names other VRFs")
			case !known && l != DefaultVRF:
				c.errf(lp, "no VRF named %q (features.vrfs names, or %s)", l, DefaultVRF)
			}
		}
	}
	if q := f.Queue; !q.BDP() && !q.LongestPath() && q.Bytes() <= 0 {
		c.errf("features.queue", "must be positive")
	}
}

func (c *checker) checkSwitch(path, name string) {
	if c.fab == nil {
		return
	}
	id, ok := c.nodes[name]
	switch {
	case !ok:
		c.errf(path, "no switch named %q in the fabric", name)
	case !c.fab.Nodes[id].IsSwitch():
		c.errf(path, "%s is a host, not a switch", name)
	}
}

func (c *checker) agents() {
	a := &c.s.Agents
	if a.Launcher == "" {
		a.Launcher = LauncherSSH
	}
}

// transport checks the transport's numbers. Its words (cc, lb, planes)
// are decoded, canonical; the load balancer against the switches'
// routing is a rule of the resolved run (runspec.RunSpec.Validate),
// reported by the planner.
func (c *checker) transport() {
	t := &c.s.Transport
	if t.MTU < minMTU || t.MTU > maxMTU {
		c.errf("transport.mtu", "%d is out of range (want %d..%d)", t.MTU, minMTU, maxMTU)
	}
	if t.EntropyRun < 0 || t.EntropyRun > 1024 {
		c.errf("transport.entropy_run", "%d is out of range (want 0..1024 packets)", t.EntropyRun)
	}
}

func (c *checker) telemetry() {
	t := &c.s.Telemetry
	if t.Interval.Fastest() {
		// The backend's shortest interval (harness.PlanSuite).
	} else if ps := t.Interval.Ps(); ps < minInterval || ps > maxInterval {
		c.errf("telemetry.interval", "%s is out of range (want 100us to 10ms)", t.Interval)
	}
	if len(t.Paths) == 0 {
		c.errf("telemetry.paths", "needs at least one path (leave it out for the defaults)")
	}
	for i, p := range t.Paths {
		if !strings.HasPrefix(p, "/") {
			c.errf(fileerr.Index("telemetry.paths", i), "%q must start with /", p)
		}
	}
	if in := t.Sink.Influx; in != nil {
		u, err := url.Parse(in.URL)
		if in.URL == "" {
			c.errf("telemetry.sink.influx.url", "required")
		} else if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			c.errf("telemetry.sink.influx.url", "%q is not an http(s) URL (want e.g. http://localhost:8086)", in.URL)
		}
		if in.Bucket == "" {
			c.errf("telemetry.sink.influx.bucket", "required")
		}
		if in.TokenFile != "" {
			in.TokenFile = c.resolvePath(in.TokenFile)
		}
	}
}

func (c *checker) jobs() {
	s := c.s
	if len(s.Jobs) == 0 && len(s.Tests) == 0 {
		c.errf("jobs", "at least one job is required")
	}
	names := map[string]int{}
	total := 0
	defer func() {
		for i := range s.Jobs {
			j := &s.Jobs[i]
			p := fileerr.Index("jobs", i) + ".baseline"
			if j.Baseline == "" {
				if c.d.has(p) {
					c.errf(p, "empty (want the name of another job)")
				}
				continue
			}
			k, ok := names[j.Baseline]
			switch {
			case !ok:
				c.errf(p, "no job named %q", j.Baseline)
			case k == i:
				c.errf(p, "a job cannot be its own baseline")
			case (s.Jobs[k].Workload != j.Workload || s.Jobs[k].Size.Bytes() != j.Size.Bytes()) && !c.undecoded(fileerr.Index("jobs", k)) && !c.undecoded(fileerr.Index("jobs", i)):
				c.errf(p, "%s is a %s of %s, this job a %s of %s: a baseline has the job's shape", j.Baseline, s.Jobs[k].Workload, s.Jobs[k].Size, j.Workload, j.Size)
			}
		}
	}()
	for i := range s.Jobs {
		n := c.job(i, names)
		if n == 0 {
			continue
		}
		total += n
		if total > MaxFlows {
			j := &s.Jobs[i]
			p := fileerr.Index("jobs", i)
			at := p + ".repetitions"
			if !c.d.has(at) {
				at = p + ".hosts"
			}
			what := fmt.Sprintf("%d flows", n)
			if j.Repetitions > 1 {
				what = fmt.Sprintf("%d repetitions of %d flows", j.Repetitions, n/j.Repetitions)
			}
			c.errf(at, "the run would have %d flows (%s: %s), more than the maximum of %d", total, p, what, MaxFlows)
			return
		}
	}
}

// jobFlows is the number of flows one repetition of a job of n
// participants has (see MaxFlows).
func jobFlows(workload string, n, senders int) int {
	switch workload {
	case "permutation":
		return n
	case "incast":
		if senders == 0 || senders > n-1 {
			return n - 1
		}
		return senders
	case "all-to-all":
		return n * (n - 1)
	case "all-reduce":
		return 2 * n * (n - 1)
	case "all-gather", "reduce-scatter":
		return n * (n - 1)
	case "group-shift":
		return n
	}
	return 0
}

// job checks jobs[i] and returns its flows over all repetitions (0 when
// that is unknown: the job has problems).
func (c *checker) job(i int, names map[string]int) int {
	j := &c.s.Jobs[i]
	d := c.d
	p := fileerr.Index("jobs", i)
	switch k, dup := names[j.Name]; {
	case j.Name == "":
		c.errf(p+".name", "required")
	case !jobNameRE.MatchString(j.Name):
		c.errf(p+".name", "%q may only contain letters, digits, '_', '.' and '-'", j.Name)
	case dup:
		c.errf(p+".name", "%q is already used by jobs[%d]", j.Name, k)
	default:
		names[j.Name] = i
	}
	if j.Workload == "" {
		c.errf(p+".workload", "required (%s)", orList(Workloads))
	}
	if !j.Size.IsSet() {
		c.errf(p+".size", "required (%s)", wantSize)
	} else if n := j.Size.Bytes(); n <= 0 {
		c.errf(p+".size", "must be positive")
	} else if mtu := c.s.Transport.MTU; mtu >= minMTU && mtu <= maxMTU && transport.CheckFlowSize(n, mtu) != nil {
		// PSNs are 32 bits: a flow has at most transport.MaxPackets packets.
		c.errf(p+".size", "%q is more than the maximum flow size of %d bytes (%d packets of transport.mtu %d)",
			j.Size, transport.MaxFlowBytes(mtu), uint64(transport.MaxPackets), mtu)
	}
	hostsOK := c.normalizeHosts(p+".hosts", j)
	repsOK := false
	switch {
	case j.Repetitions < 1:
		c.errf(p+".repetitions", "must be at least 1, not %d", j.Repetitions)
	case j.Repetitions > MaxRepetitions:
		c.errf(p+".repetitions", "%d is more than the maximum of %d", j.Repetitions, MaxRepetitions)
	default:
		repsOK = true
	}
	only := func(field, workload string) bool {
		if d.has(p+"."+field) && string(j.Workload) != workload && contains(Workloads, j.Workload) {
			c.errf(p+"."+field, "only for %s", workload)
			return false
		}
		return true
	}
	var parts []int
	if hostsOK && c.fab != nil {
		var err error
		parts, err = participants(j.Hosts, c.fab, c.hosts)
		if err != nil {
			c.errf(p+".hosts", "%v", err)
			hostsOK = false
		} else if len(parts) < 2 && contains(Workloads, j.Workload) {
			c.errf(p+".hosts", "%s needs at least 2 hosts", j.Workload)
		}
	}
	if only("senders", "incast") {
		if j.Senders < 0 {
			c.errf(p+".senders", "must not be negative")
		} else if parts != nil && j.Senders > len(parts)-1 {
			c.errf(p+".senders", "%d senders, but only %d other participants", j.Senders, len(parts)-1)
		}
	}
	if only("receiver", "incast") && d.has(p+".receiver") {
		if c.checkHost(p+".receiver", j.Receiver) && parts != nil {
			h := c.hosts[j.Receiver]
			if !containsInt(parts, h) {
				c.errf(p+".receiver", "%s is not a participant of the job", j.Receiver)
			}
		}
	}
	if only("window", "all-to-all") && j.Window < 0 {
		c.errf(p+".window", "must not be negative")
	}
	qps := 1
	if d.has(p + ".qps") {
		switch {
		case j.Workload != "permutation" && j.Workload != "incast" && contains(Workloads, j.Workload):
			c.errf(p+".qps", "only for permutation and incast")
		case j.QPs < 1 || j.QPs > MaxQPs:
			c.errf(p+".qps", "%d is out of range (want 1 to %d)", j.QPs, MaxQPs)
		default:
			qps = j.QPs
		}
	}
	if !j.Rate.IsSet() && d.has(p+".rate") {
		c.errf(p+".rate", "empty (want e.g. 80%% or 40Gbps; leave it out for unpaced)")
	}
	if !repsOK || len(parts) < 2 {
		return 0
	}
	return j.Repetitions * jobFlows(string(j.Workload), len(parts), j.Senders) * qps
}

// normalizeHosts checks Job.Hosts and rewrites it to "all", an int or a
// []string.
func (c *checker) normalizeHosts(path string, j *Job) bool {
	switch h := j.Hosts.(type) {
	case string:
		if h == "all" {
			return true
		}
		if n, err := strconv.Atoi(h); err == nil {
			j.Hosts = n
			return c.hostCount(path, int64(n))
		}
		c.errf(path, "%q is not all, a host count or a list of host names", h)
		return false
	case uint64:
		if h > math.MaxInt32 {
			c.errf(path, "%d is too many hosts", h)
			return false
		}
		j.Hosts = int(h)
		return c.hostCount(path, int64(h))
	case int64:
		j.Hosts = int(max(h, -1))
		return c.hostCount(path, h)
	case int:
		return c.hostCount(path, int64(h))
	case []string:
		return c.hostList(path, h)
	case []any:
		names := make([]string, len(h))
		ok := true
		for k, v := range h {
			s, isStr := v.(string)
			if !isStr {
				c.errf(fileerr.Index(path, k), "want a host name, got %v", v)
				ok = false
			}
			names[k] = s
		}
		if !ok {
			return false
		}
		j.Hosts = names
		return c.hostList(path, names)
	}
	c.errf(path, "want all, a host count or a list of host names")
	return false
}

func (c *checker) hostCount(path string, n int64) bool {
	if n < 1 {
		c.errf(path, "host count must be positive, not %d", n)
		return false
	}
	return true
}

func (c *checker) hostList(path string, names []string) bool {
	if len(names) == 0 {
		c.errf(path, "empty host list (leave it out for all hosts)")
		return false
	}
	ok := true
	seen := map[string]int{}
	for k, h := range names {
		hp := fileerr.Index(path, k)
		if j, dup := seen[h]; dup {
			c.errf(hp, "%s is already listed (%s)", h, fileerr.Index(path, j))
			ok = false
			continue
		}
		seen[h] = k
		ok = c.checkHost(hp, h) && ok
	}
	return ok
}

// Participants returns the host numbers (indexes into f.Hosts) the job runs
// on, in order: every host for "all" (or no Hosts), the first N for a
// count, or the named hosts.
func (j *Job) Participants(f *inventory.Fabric) ([]int, error) {
	return participants(j.Hosts, f, hostIndex(f))
}

func participants(hosts any, f *inventory.Fabric, index map[string]int) ([]int, error) {
	all := func(n int) []int {
		p := make([]int, n)
		for i := range p {
			p[i] = i
		}
		return p
	}
	count := func(n int64) ([]int, error) {
		if n < 1 {
			return nil, fmt.Errorf("host count must be positive, not %d", n)
		}
		if n > int64(len(f.Hosts)) {
			return nil, fmt.Errorf("%d hosts, but the fabric has %d", n, len(f.Hosts))
		}
		return all(int(n)), nil
	}
	list := func(names []string) ([]int, error) {
		if len(names) == 0 {
			return nil, fmt.Errorf("empty host list")
		}
		p := make([]int, 0, len(names))
		seen := make(map[int]bool, len(names))
		for _, name := range names {
			h, ok := index[name]
			if !ok {
				return nil, fmt.Errorf("no host named %q in the fabric", name)
			}
			if seen[h] {
				return nil, fmt.Errorf("%s is listed twice", name)
			}
			seen[h] = true
			p = append(p, h)
		}
		return p, nil
	}
	switch h := hosts.(type) {
	case nil:
		return all(len(f.Hosts)), nil
	case string:
		if h == "all" || h == "" {
			return all(len(f.Hosts)), nil
		}
		if n, err := strconv.ParseInt(h, 10, 64); err == nil {
			return count(n)
		}
		return nil, fmt.Errorf("hosts %q is not all, a count or a list of host names", h)
	case int:
		return count(int64(h))
	case int64:
		return count(h)
	case uint64:
		if h > math.MaxInt64 {
			return count(math.MaxInt64)
		}
		return count(int64(h))
	case []string:
		return list(h)
	case []any:
		names := make([]string, len(h))
		for i, v := range h {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("hosts[%d]: %v is not a host name", i, v)
			}
			names[i] = s
		}
		return list(names)
	}
	return nil, fmt.Errorf("hosts has type %T; want all, a count or a list of host names", hosts)
}

func (c *checker) faults() {
	for i := range c.s.Faults {
		c.fault(i)
	}
}

func (c *checker) fault(i int) {
	ft := &c.s.Faults[i]
	d := c.d
	p := fileerr.Index("faults", i)
	kindOK := contains(FaultKinds, ft.Kind)
	if ft.Kind == "" {
		c.errf(p+".kind", "required (%s)", orList(FaultKinds))
	}
	if ft.Kind == "random" {
		c.randomFault(p, ft)
		return
	}
	var set []string
	for _, t := range []struct{ field, val string }{{"link", ft.Link}, {"port", ft.Port}, {"nic", ft.NIC}} {
		if t.val == "" {
			continue
		}
		if len(set) > 0 {
			c.errf(p+"."+t.field, "set only one of link, port or nic (%s is also set)", set[0])
		}
		set = append(set, t.field)
	}
	if len(set) == 0 {
		c.errf(p, "set one of link, port or nic")
	}
	if ft.Link != "" {
		if msg := c.checkLink(ft.Link); msg != "" {
			c.errf(p+".link", "%s", msg)
		}
	}
	if ft.Port != "" {
		if msg := c.checkPort(ft.Port); msg != "" {
			c.errf(p+".port", "%s", msg)
		}
	}
	if ft.NIC != "" {
		c.checkHost(p+".nic", ft.NIC)
	}
	c.until(p, ft)
	only := func(field, kind string) bool {
		if d.has(p+"."+field) && kindOK && string(ft.Kind) != kind {
			c.errf(p+"."+field, "only for %s faults", kind)
			return false
		}
		return true
	}
	if only("fraction", "degrade") && ft.Kind == "degrade" {
		if !d.has(p + ".fraction") {
			c.errf(p+".fraction", "required for degrade (the fraction of the rate left, 0 < fraction <= 1)")
		} else if !(ft.Fraction > 0 && ft.Fraction <= 1) {
			c.errf(p+".fraction", "%v is out of range (want 0 < fraction <= 1)", ft.Fraction)
		}
	}
	periodOK := only("period", "flap")
	countOK := only("count", "flap")
	if ft.Kind == "flap" {
		if periodOK {
			if !ft.Period.IsSet() {
				c.errf(p+".period", "required for flap (e.g. 100us)")
			} else if ft.Period.Ps() <= 0 {
				c.errf(p+".period", "must be positive")
			}
		}
		if countOK && ft.Count < 1 {
			c.errf(p+".count", "flap needs count >= 1, not %d", ft.Count)
		} else if countOK && ft.Count > MaxFlapCount {
			c.errf(p+".count", "%d flap cycles is more than the maximum of %d", ft.Count, MaxFlapCount)
		}
	}
}

// until checks that a fault's until, when set, is after its at.
func (c *checker) until(p string, ft *Fault) {
	if ft.Until.IsSet() && !c.d.undecoded[p+".at"] && ft.Until.Ps() <= ft.At.Ps() {
		c.errf(p+".until", "%s is not after at (%s)", ft.Until, ft.At)
	}
}

// randomFault checks a random fault: a fraction of the switch-to-switch
// links, no target, optional at and until.
func (c *checker) randomFault(p string, ft *Fault) {
	d := c.d
	for _, f := range []string{"link", "port", "nic", "period", "count"} {
		if d.has(p + "." + f) {
			c.errf(p+"."+f, "not for random faults (they pick switch-to-switch links by fraction)")
		}
	}
	if !d.has(p + ".fraction") {
		c.errf(p+".fraction", "required for random (the share of switch-to-switch links that fail, 0 < fraction <= 0.5)")
	} else if !(ft.Fraction > 0 && ft.Fraction <= 0.5) {
		c.errf(p+".fraction", "%v is out of range (want 0 < fraction <= 0.5)", ft.Fraction)
	}
	c.until(p, ft)
}

// checkLink checks "A-B" or "A-B/N" against the fabric; "" when it is fine.
func (c *checker) checkLink(s string) string {
	spec, nth := s, 0
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		n, err := strconv.Atoi(s[i+1:])
		if err != nil || n < 0 {
			return fmt.Sprintf("%q: parallel link index %q is not a non-negative integer", s, s[i+1:])
		}
		spec, nth = s[:i], n
	}
	if !strings.Contains(spec, "-") {
		return fmt.Sprintf("%q is not a link (want A-B or A-B/N, e.g. leaf0-spine1)", s)
	}
	if c.fab == nil {
		return ""
	}
	var a, b string
	found := false
	for i := 0; i < len(spec); i++ {
		if spec[i] != '-' {
			continue
		}
		_, okA := c.nodes[spec[:i]]
		_, okB := c.nodes[spec[i+1:]]
		if okA && okB {
			a, b, found = spec[:i], spec[i+1:], true
			break
		}
	}
	if !found {
		a, b, _ = strings.Cut(spec, "-")
		missing := a
		if _, ok := c.nodes[a]; ok {
			missing = b
		}
		return fmt.Sprintf("no node named %q in the fabric", missing)
	}
	na, nb := c.nodes[a], c.nodes[b]
	links := 0
	for _, pt := range c.fab.Nodes[na].Ports {
		if c.fab.PeerNode(pt) == nb {
			links++
		}
	}
	switch {
	case links == 0:
		return fmt.Sprintf("%s and %s are not linked", a, b)
	case nth >= links:
		return fmt.Sprintf("%s and %s have %d parallel link(s); index %d is out of range", a, b, links, nth)
	}
	return ""
}

// checkPort checks "device:port" against the fabric.
func (c *checker) checkPort(s string) string {
	dev, port, ok := strings.Cut(s, ":")
	if !ok || dev == "" || port == "" {
		return fmt.Sprintf("%q is not a port (want device:port, e.g. leaf0:Ethernet4)", s)
	}
	if c.fab == nil {
		return ""
	}
	id, ok := c.nodes[dev]
	if !ok {
		return fmt.Sprintf("no node named %q in the fabric", dev)
	}
	n := &c.fab.Nodes[id]
	for _, pt := range n.Ports {
		if c.fab.Ports[pt].Name == port {
			return ""
		}
	}
	if len(n.Ports) == 0 {
		return fmt.Sprintf("%s has no ports", dev)
	}
	first, last := c.fab.Ports[n.Ports[0]].Name, c.fab.Ports[n.Ports[len(n.Ports)-1]].Name
	return fmt.Sprintf("%s has no port %q (ports %s..%s)", dev, port, first, last)
}

func (c *checker) kpis() {
	jobs := make([]string, 0, len(c.s.Jobs))
	for _, j := range c.s.Jobs {
		if j.Name != "" {
			jobs = append(jobs, j.Name)
		}
	}
	for i, k := range c.s.KPIs {
		p := fileerr.Index("kpis", i)
		if strings.TrimSpace(k.Metric) == "" {
			c.errf(p+".metric", "required")
		}
		switch {
		case k.Max == nil && k.Min == nil:
			c.errf(p, "set max or min")
		case k.Max != nil && k.Min != nil:
			c.errf(p+".min", "set only one of max and min")
		}
		for _, b := range []struct {
			field string
			v     *float64
		}{{"max", k.Max}, {"min", k.Min}} {
			if b.v != nil && (math.IsNaN(*b.v) || math.IsInf(*b.v, 0)) {
				c.errf(p+"."+b.field, "must be a finite number")
			}
		}
		if !k.Regress.IsSet() && c.d.has(p+".regress") {
			c.errf(p+".regress", "empty (want e.g. 5%% or an amount in the metric's unit)")
		}
		if k.Scope != DefaultScope && !contains(jobs, k.Scope) {
			want := "fabric"
			if len(jobs) > 0 {
				want += " or a job: " + strings.Join(jobs, ", ")
			}
			c.errf(p+".scope", "no job named %q (want %s)", k.Scope, want)
		} else if strings.TrimSpace(k.Metric) != "" {
			// The metric must exist and fit the scope (job or fabric). The
			// bounds are checked above, and a bound that did not decode
			// ("60Gbps") is reported where it is, not as a missing one.
			bound := 0.0
			if err := kpis.Check(kpis.Spec{Metric: k.Metric, Scope: k.Scope, Max: &bound}, jobs); err != nil {
				c.errf(p+".metric", "%v", err)
			}
		}
	}
}

func (c *checker) analysis() {
	a := &c.s.Analysis
	if !(a.Symmetry.Z > 0) || math.IsInf(a.Symmetry.Z, 0) {
		c.errf("analysis.symmetry.z", "%v is out of range (want z > 0)", a.Symmetry.Z)
	}
	if !(a.Symmetry.MinDeviation > 0 && a.Symmetry.MinDeviation < 1) {
		c.errf("analysis.symmetry.min_deviation", "%v is out of range (want 0 < min_deviation < 1)", a.Symmetry.MinDeviation)
	}
	lowOK := a.Straggler.Low >= 0 && a.Straggler.Low < 1
	highOK := a.Straggler.High > 0 && a.Straggler.High <= 1
	if !lowOK {
		c.errf("analysis.straggler.low", "%v is out of range (want 0 <= low < high <= 1)", a.Straggler.Low)
	}
	if !highOK {
		c.errf("analysis.straggler.high", "%v is out of range (want 0 <= low < high <= 1)", a.Straggler.High)
	}
	if lowOK && highOK && a.Straggler.Low >= a.Straggler.High {
		p := "analysis.straggler.low"
		if !c.d.has(p) {
			p = "analysis.straggler.high"
		}
		c.errf(p, "low (%v) must be less than high (%v)", a.Straggler.Low, a.Straggler.High)
	}
	if !(a.Straggler.MinMiddle > 0 && a.Straggler.MinMiddle <= 1) {
		c.errf("analysis.straggler.min_middle", "%v is out of range (want 0 < min_middle <= 1)", a.Straggler.MinMiddle)
	}
	if !(a.Symmetry.VictimDeviation > 0 && a.Symmetry.VictimDeviation < 1) {
		c.errf("analysis.symmetry.victim_deviation", "%v is out of range (want 0 < victim_deviation < 1)", a.Symmetry.VictimDeviation)
	}
	if !(a.Symmetry.ImbalanceCV > 0 && a.Symmetry.ImbalanceCV <= 100) {
		c.errf("analysis.symmetry.imbalance_cv", "%v is out of range (want 0 < imbalance_cv <= 100)", a.Symmetry.ImbalanceCV)
	}
	cu := &a.Culprit
	if n := cu.Backlog.Bytes(); n <= 0 || n > MaxCulpritBacklog {
		c.errf("analysis.culprit.backlog", "%s is out of range (want 1B..1GiB)", cu.Backlog)
	}
	if !(cu.Capacity > 0 && cu.Capacity <= 1) {
		c.errf("analysis.culprit.capacity", "%v is out of range (want 0 < capacity <= 1)", cu.Capacity)
	}
	if !(cu.Loss > 0 && cu.Loss <= 1) {
		c.errf("analysis.culprit.loss", "%v is out of range (want 0 < loss <= 1)", cu.Loss)
	}
	if cu.MinIntervals < 1 || cu.MinIntervals > 1000 {
		c.errf("analysis.culprit.min_intervals", "%d is out of range (want 1..1000)", cu.MinIntervals)
	}
	if cu.MinBoundIntervals < 1 || cu.MinBoundIntervals > 1000 {
		c.errf("analysis.culprit.min_bound_intervals", "%d is out of range (want 1..1000)", cu.MinBoundIntervals)
	}
	if cu.MinLostPackets < 1 || cu.MinLostPackets > 1e9 {
		c.errf("analysis.culprit.min_lost_packets", "%d is out of range (want 1..1000000000)", cu.MinLostPackets)
	}
	if cu.MergeGap < 1 || cu.MergeGap > 1000 {
		c.errf("analysis.culprit.merge_gap", "%d is out of range (want 1..1000)", cu.MergeGap)
	}
}

func (c *checker) sim() {
	sm := &c.s.Sim
	if sm.End.IsSet() && sm.End.Ps() <= 0 {
		c.errf("sim.end", "must be positive")
	}
	if sm.StallAfter.IsSet() && !sm.StallAfter.Off() && sm.StallAfter.Ps() <= 0 {
		c.errf("sim.stall_after", "must be positive (or off)")
	}
}

func contains[S ~string](list []string, s S) bool {
	for _, v := range list {
		if v == string(s) {
			return true
		}
	}
	return false
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
