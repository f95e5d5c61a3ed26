package analysis

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// Workload names, as in results.Job.Workload.
const (
	Permutation = "permutation"
	Incast      = "incast"
	AllToAll    = "all-to-all"
	AllReduce   = "all-reduce"
	// AllGather and ReduceScatter are ring collectives whose size is the
	// total over all ranks (nccl-tests).
	AllGather     = "all-gather"
	ReduceScatter = "reduce-scatter"
)

// Group kinds (GroupStat.Kind, results.GroupSeries.Kind).
const (
	KindLeafUplinks    = "leaf-uplinks"
	KindSpineDownlinks = "spine-downlinks"
	KindSpineUplinks   = "spine-uplinks"
	KindCoreDownlinks  = "core-downlinks"
	KindRail           = "rail"
	KindPlane          = "plane"
	// KindPlanes compares the planes of a multi-plane fabric, KindRails
	// its rails (groups.go: planeGroups).
	KindPlanes = "planes"
	KindRails  = "rails"
	// On low-diameter fabrics (Dragonfly, Slim Fly: flat routers) the
	// local links of each router (local-links:ROUTER) and the global links
	// of each Dragonfly group (global-links:groupG) (groups.go).
	KindLocalLinks  = "local-links"
	KindGlobalLinks = "global-links"
)

// Fabric-wide metrics in Output.Metrics.
const (
	MetricSymmetryAnomalies = "symmetry_anomalies"
	MetricStragglers        = "stragglers"
	MetricMaxGroupCV        = "max_group_cv"
	MetricActiveGroups      = "active_groups"
	MetricCoverage          = "telemetry_coverage"
	MetricDrops             = "drops"
	MetricTrims             = "trims"
	MetricECNMarked         = "ecn_marked"
	MetricAnomalies         = "anomalies"
	MetricImbalancedGroups  = "imbalanced_groups"
	MetricMinGroupJain      = "min_group_jain"
	// MetricMaxGroupMMR is the largest max-mean ratio of an active
	// symmetry group's member loads (IETF BMWG AI-fabric draft, ECMP
	// imbalance MMR; 1: equal loads).
	MetricMaxGroupMMR     = "max_group_mmr"
	MetricUnmatchedFaults = "unmatched_faults"
	// Multi-plane fabrics only: the least-loaded plane's share of the host
	// NIC bytes times the number of planes (1: an equal share), and the
	// planes' coefficient of variation (plane symmetry).
	MetricPlaneShareMin = "plane_share_min"
	MetricPlaneCV       = "plane_cv"
	// Lossless fabrics (PFC): informational congestion trees (rooted at a
	// healthy port, e.g. an incast receiver), the largest spread of a tree
	// (switch ports and host NICs it paused), the deepest pause
	// propagation (hops), and the pause frames and paused time over every
	// switch port.
	MetricCongestionTrees  = "congestion_trees"
	MetricCongestionSpread = "congestion_spread"
	MetricCongestionHops   = "congestion_hops"
	MetricPFCPauseFrames   = "pfc_pause_frames"
	MetricPFCPausedUs      = "pfc_paused_us"
	// MetricTimeToDetect is the longest time to detect of the run's
	// anomalies (0 without anomalies), µs.
	MetricTimeToDetect = "time_to_detect_max_us"
)

// NoData marks a missing value in GroupStat.Means and in the Gbps arrays of
// results.GroupSeries and results.TimeSeries (JSON has no NaN).
const NoData = -1

// FlowRecord is one flow of a job as the backend ran it.
type FlowRecord struct {
	ID, Src, Dst int // host numbers (index into Fabric.Hosts)
	Size         int64
	// Start and FCT are in ps of run time; FCT −1: not finished; Start −1:
	// never started.
	Start, FCT int64
	Rep        int // repetition index, from 0
	Retx       uint64
	Nacks      uint64
	Timeouts   uint64
	Spurious   uint64 // of Retx, retransmissions proven unneeded
}

// finished reports whether the flow started and completed.
func (f *FlowRecord) finished() bool { return f.Start >= 0 && f.FCT >= 0 }

// JobInput is one job of a run.
type JobInput struct {
	Name     string
	Workload string // permutation | incast | all-to-all | all-reduce
	Hosts    []int  // participants, host numbers
	// SizeBytes is the per-flow message size; for all-reduce the per-rank
	// buffer.
	SizeBytes   int64
	Repetitions int
	Flows       []FlowRecord
	// GapPs is the pause between repetitions (a synthetic training step's
	// compute phase), for the roofline JCT; Baseline names the job this
	// one is compared with (interference factor).
	GapPs    int64
	Baseline string
}

// Input is everything Analyze needs about one run.
type Input struct {
	Fabric *inventory.Fabric
	// Samples is everything the collector stored for the run.
	Samples []telemetry.Sample
	// EpochNs is the Sample.Time of run time 0; analysis reports times in
	// µs since then.
	EpochNs int64
	Jobs    []JobInput
	// Ideal returns the unloaded FCT in ps of a flow; nil skips slowdowns.
	Ideal  func(src, dst int, size int64) int64
	Faults []results.Fault
	// LB is the transport's load balancer (ecmp, ops, reps, ...): with
	// ECMP, unequal member loads are hashing, not a fault.
	LB string
	// Routing is the fabric's routing mode (suite features.ecmp.mode):
	// hash (default), adaptive, or on Dragonfly and Slim Fly minimal,
	// valiant, valiant-hop, ugal-l, ugal-g, source-guided, port-msb. It
	// decides which ports a flow may cross (routing.go).
	Routing string
	// NoPFC, when set, says why the backend has no PFC (the netns lab:
	// veth links carry no pause frames): its pause counters, if any are
	// streamed, mean nothing and the report says so.
	NoPFC string
	// Detections are what the window analyses reported while the run
	// went (Live); every anomaly's detection time comes from them. nil:
	// Analyze replays the window analyses over Samples itself (the same
	// results, computed after the run).
	Detections []Detection
	Opts       Options
}

// Options tune anomaly detection; zero values take the defaults.
type Options struct {
	SymZ            float64 // robust z-score threshold (3.5)
	SymMinDeviation float64 // minimum relative shortfall from the group median (0.2)
	StragLow        float64 // lower bound of the middle bands, fraction of line rate (0.1)
	StragHigh       float64 // upper bound of the middle bands (0.8)
	StragMinMiddle  float64 // minimum middle-band fraction of a straggler (0.5)
	ActiveFraction  float64 // group activity threshold, fraction of line rate (0.05)

	// Culprit detection (see the package documentation).
	BacklogBytes float64 // queue high-water that counts as backlogged, bytes (16384)
	Capacity     float64 // a backlogged port below this fraction of line rate is capped (0.8)
	Loss         float64 // share of transmitted packets dropped that makes an interval lossy (0.5)
	MinIntervals int     // consecutive capped intervals on a rate plateau that make a capacity episode (4)
	// MinBoundIntervals: intervals whose service-rate bound (ports that
	// stream backlogged-ns) is below Capacity·line that make a capacity
	// episode (1).
	MinBoundIntervals int
	PlateauTol        float64 // spread of a plateau's rates, fraction of line rate (0.01; at least 2 packets per interval)
	MinLostPackets    float64 // packets lost that make a loss episode (8)
	MergeGap          int     // normal intervals bridged inside one episode (2)
	VictimDeviation   float64 // shortfall from the group median that makes a starved member (0.1)
	ImbalanceCV       float64 // CV of a load-balanced group that makes an imbalance finding (0.15)
}

// Defaults.
const (
	DefaultSymZ            = 3.5
	DefaultSymMinDeviation = 0.2
	DefaultStragLow        = 0.1
	DefaultStragHigh       = 0.8
	DefaultStragMinMiddle  = 0.5
	DefaultActiveFraction  = 0.05

	DefaultBacklogBytes      = 16384
	DefaultCapacity          = 0.8
	DefaultLoss              = 0.5
	DefaultMinIntervals      = 4
	DefaultMinBoundIntervals = 1
	DefaultPlateauTol        = 0.01
	DefaultMinLostPackets    = 8
	DefaultMergeGap          = 2
	DefaultVictimDeviation   = 0.1
	DefaultImbalanceCV       = 0.15
)

// StragglerMargin is how far a straggler's middle-band fraction must exceed
// the median participant's.
const StragglerMargin = 0.25

// MinStragglerSamples is the number of sample intervals inside a job's
// window a participant needs before it can be called a straggler.
const MinStragglerSamples = 3

// withDefaults fills zero options and checks the others.
func (o Options) withDefaults() (Options, error) {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.SymZ, DefaultSymZ)
	def(&o.SymMinDeviation, DefaultSymMinDeviation)
	def(&o.StragLow, DefaultStragLow)
	def(&o.StragHigh, DefaultStragHigh)
	def(&o.StragMinMiddle, DefaultStragMinMiddle)
	def(&o.ActiveFraction, DefaultActiveFraction)
	def(&o.BacklogBytes, DefaultBacklogBytes)
	def(&o.Capacity, DefaultCapacity)
	def(&o.Loss, DefaultLoss)
	def(&o.MinLostPackets, DefaultMinLostPackets)
	def(&o.VictimDeviation, DefaultVictimDeviation)
	def(&o.ImbalanceCV, DefaultImbalanceCV)
	def(&o.PlateauTol, DefaultPlateauTol)
	if o.MinIntervals == 0 {
		o.MinIntervals = DefaultMinIntervals
	}
	if o.MergeGap == 0 {
		o.MergeGap = DefaultMergeGap
	}
	if o.MinBoundIntervals == 0 {
		o.MinBoundIntervals = DefaultMinBoundIntervals
	}
	if o.MinBoundIntervals < 1 || o.MinBoundIntervals > 1000 || o.MinIntervals < 1 || o.MinIntervals > 1000 || o.MergeGap < 0 || o.MergeGap > 1000 {
		return o, fmt.Errorf("min intervals must be 1..1000 and merge gap 0..1000: %+v", o)
	}
	if o.Capacity > 1 || o.Loss > 1 || o.VictimDeviation > 1 || o.PlateauTol > 1 {
		return o, fmt.Errorf("capacity, loss and victim deviation are fractions (at most 1): %+v", o)
	}
	for _, v := range []float64{o.SymZ, o.SymMinDeviation, o.StragLow, o.StragHigh, o.StragMinMiddle, o.ActiveFraction,
		o.BacklogBytes, o.Capacity, o.Loss, o.MinLostPackets, o.VictimDeviation, o.ImbalanceCV, o.PlateauTol} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return o, fmt.Errorf("analysis options must be finite and non-negative: %+v", o)
		}
	}
	if o.StragLow >= o.StragHigh {
		return o, fmt.Errorf("straggler low bound %g must be below the high bound %g", o.StragLow, o.StragHigh)
	}
	if o.SymMinDeviation > 1 || o.StragMinMiddle > 1 || o.ActiveFraction > 1 {
		return o, fmt.Errorf("min deviation, min middle fraction and active fraction are fractions (at most 1): %+v", o)
	}
	return o, nil
}

// Output is the analysis of one run.
type Output struct {
	Jobs []results.Job
	// Anomalies are the culprits, ranked (Rank 1 first).
	Anomalies []results.Anomaly
	// Imbalances are group-level findings (see results.Imbalance).
	Imbalances []results.Imbalance
	// FaultMatches tie each injected fault to the anomaly explaining it.
	FaultMatches []results.FaultMatch
	// CongestionTrees are the PFC pause trees (lossless fabrics only).
	CongestionTrees []results.CongestionTree
	// Notes say what the analysis could not see (e.g. no PFC counters).
	Notes    []string
	Groups   []GroupStat
	Plots    results.Plots
	Coverage Coverage
	// Metrics are the fabric-wide metrics (see the Metric* constants).
	Metrics map[string]float64
	// Index gives access to every telemetry series of the run.
	Index *Index `json:"-"`
}

// GroupStat summarises one symmetry group.
type GroupStat struct {
	Name, Kind string
	Members    []string
	// Means are the members' mean rates in bps over the group's active
	// window (over all intervals when the group was never active); NoData
	// for a member without samples.
	Means []float64
	// CV is the coefficient of variation (population std / mean) and
	// MaxMin the max/min ratio of Means; both 0 when the group was not
	// active, MaxMin 0 when the smallest mean is 0.
	CV, MaxMin float64
	Active     bool
	// ActiveIntervals is the length of the active window in sample intervals.
	ActiveIntervals int
}

// Coverage says how much of the fabric the telemetry covered.
type Coverage struct {
	SwitchPorts, SwitchPortsWithSamples int
	NICs, NICsWithSamples               int
	// Missing lists the first 20 ports without samples, "device:port",
	// switch ports first, in fabric order.
	Missing []string
	// Stalled lists the targets whose samples stop before the jobs'
	// end (a gNMI target that stalled or failed in the middle of the
	// run), with when: their ports count as without samples.
	Stalled []string
}

// stallTolerance is how long before the jobs' end a target's last sample
// may be, in sample intervals, before the target counts as stalled
// (ticks and completions are not aligned); at least minStallTolerance.
const (
	stallTolerance    = 4
	minStallTolerance = 50 * time.Millisecond
)

const maxMissing = 20

// Analyze computes job results, symmetry groups, anomalies, plot data and
// fabric-wide metrics of one run. It fails only on inconsistent input
// (no fabric, host numbers out of range, bad options).
func Analyze(in Input) (*Output, error) {
	f := in.Fabric
	if f == nil {
		return nil, errors.New("analysis: no fabric")
	}
	opts, err := in.Opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("analysis: %v", err)
	}
	for ji := range in.Jobs {
		if err := checkJob(f, &in.Jobs[ji]); err != nil {
			return nil, fmt.Errorf("analysis: job %q: %v", in.Jobs[ji].Name, err)
		}
	}
	a := newAnalyzer(in, opts)

	out := &Output{Index: a.idx, Metrics: map[string]float64{}}
	out.Coverage = a.coverage()
	for ji := range in.Jobs {
		out.Jobs = append(out.Jobs, a.job(&in.Jobs[ji]))
	}
	baselines(out.Jobs, in.Jobs)

	groups := a.buildGroups()
	maxCV, active, minJain, maxMMR := 0.0, 0, 1.0, 1.0
	data := make([]groupData, len(groups))
	starvedBy := make([][]starved, len(groups))
	for gi, gr := range groups {
		data[gi] = a.groupData(gr)
		st, sv := a.symmetry(gr, data[gi])
		out.Groups = append(out.Groups, st)
		starvedBy[gi] = sv
		if st.Active && len(gr.members) >= 3 {
			active++
			maxCV = math.Max(maxCV, st.CV)
			var vals []float64
			for _, m := range st.Means {
				if m >= 0 {
					vals = append(vals, m)
				}
			}
			if len(vals) >= 2 {
				_, _, j := spread(vals)
				minJain = math.Min(minJain, j)
				maxMMR = math.Max(maxMMR, maxMean(vals))
			}
		}
	}
	at := a.attribute(groups, data, out.Groups, starvedBy)
	dets := in.Detections
	if dets == nil && a.idx.step > 0 {
		dets = replay(in, a.idx.step)
	}
	a.detectedAt(at.anomalies, dets)
	out.Anomalies, out.Imbalances, out.FaultMatches = at.anomalies, at.imbalances, at.matches
	out.CongestionTrees, out.Notes = at.trees, at.notes
	for _, st := range out.Coverage.Stalled {
		out.Notes = append(out.Notes, "telemetry stalled: "+st+"; its ports count as without samples (telemetry_coverage)")
	}
	stragglerHost := map[string]bool{}
	for _, an := range at.anomalies {
		if an.Kind == results.KindStraggler {
			host, _, _ := strings.Cut(an.Member, ":") // a multi-NIC host's port
			stragglerHost[host] = true
		}
	}
	for i := range at.hists {
		at.hists[i].Straggler = stragglerHost[at.hists[i].Host]
	}
	out.Plots.NICHists = at.hists
	var symAnoms []results.Anomaly
	for gi, gr := range groups {
		var mine []results.Anomaly
		for _, an := range at.anomalies {
			if an.Group == gr.name {
				mine = append(mine, an)
			}
		}
		symAnoms = append(symAnoms, mine...)
		out.Plots.Groups = append(out.Plots.Groups, a.groupSeries(gr, data[gi], mine))
	}

	for ji := range in.Jobs {
		out.Plots.FCTs = append(out.Plots.FCTs, fctSeries(&in.Jobs[ji]))
	}
	out.Plots.Faults = append([]results.Fault(nil), in.Faults...)
	out.Plots.TimeSeries = a.faultSeries(groups, data, symAnoms)

	m := out.Metrics
	for gi, gr := range groups {
		if gr.kind == KindPlanes {
			if share, cv, ok := planeShare(out.Groups[gi]); ok {
				m[MetricPlaneShareMin], m[MetricPlaneCV] = share, cv
			}
		}
	}
	a.treeMetrics(m, at.trees)
	m[MetricSymmetryAnomalies] = float64(at.symmetry)
	m[MetricStragglers] = float64(at.stragglers)
	m[MetricAnomalies] = float64(len(at.anomalies))
	ttd := 0.0
	for _, an := range at.anomalies {
		ttd = math.Max(ttd, an.TimeToDetectUs)
	}
	m[MetricTimeToDetect] = ttd
	m[MetricImbalancedGroups] = float64(len(at.imbalances))
	m[MetricMinGroupJain] = round(minJain, 6)
	m[MetricMaxGroupMMR] = round(maxMMR, 6)
	unmatched := 0
	for _, fm := range at.matches {
		if fm.Anomaly == 0 {
			unmatched++
		}
	}
	m[MetricUnmatchedFaults] = float64(unmatched)
	m[MetricMaxGroupCV] = round(maxCV, 6)
	m[MetricActiveGroups] = float64(active)
	if c := out.Coverage; c.SwitchPorts > 0 {
		m[MetricCoverage] = float64(c.SwitchPortsWithSamples) / float64(c.SwitchPorts)
	} else {
		m[MetricCoverage] = 0
	}
	drops, trims, ecn := a.counterTotals()
	m[MetricDrops], m[MetricTrims], m[MetricECNMarked] = float64(drops), float64(trims), float64(ecn)
	return out, nil
}

func checkJob(f *inventory.Fabric, j *JobInput) error {
	n := f.NumHosts()
	for _, h := range j.Hosts {
		if h < 0 || h >= n {
			return fmt.Errorf("participant host %d out of range (fabric has %d hosts)", h, n)
		}
	}
	for i := range j.Flows {
		fl := &j.Flows[i]
		if fl.Src < 0 || fl.Src >= n || fl.Dst < 0 || fl.Dst >= n {
			return fmt.Errorf("flow %d: host %d->%d out of range (fabric has %d hosts)", fl.ID, fl.Src, fl.Dst, n)
		}
		if fl.Rep < 0 {
			return fmt.Errorf("flow %d: negative repetition %d", fl.ID, fl.Rep)
		}
	}
	return nil
}

// analyzer carries the state shared by the steps of Analyze.
type analyzer struct {
	in   Input
	f    *inventory.Fabric
	opts Options
	idx  *Index
	g    grid
	// portVals caches each port's out-octets rate on the grid.
	portVals map[int][]float64
	sigs     map[int]*portSignals
	queues   map[[2]string]string
	dists    map[int][]int
	pfcOn    *bool       // cached pfcActive
	hostNum  map[int]int // host node -> host number
	// pausedGroups are the groups with a port in a PFC pause tree.
	pausedGroups map[string]bool
	hotBy        map[int][]int // cached hotPortsAt
	flat         *bool         // cached lowDiameter
	// win, when set, limits the series read to [win[0], win[1]] (a
	// window analysis, live.go): clip.
	win    *[2]int64
	diam   int           // cached routerDiameter
	busyOK *bool         // cached busyStreamed (true only)
	wdists map[int][]int // cached wdist
	pser   []*portSeries // cached portSeries, by port (shared by a Live's windows)
}

func newAnalyzer(in Input, opts Options) *analyzer {
	a := &analyzer{in: in, f: in.Fabric, opts: opts, idx: NewIndex(in.Samples)}
	a.g = newGrid(a.idx, in.EpochNs)
	a.portVals = map[int][]float64{}
	a.sigs = map[int]*portSignals{}
	a.dists = map[int][]int{}
	return a
}

// portName is "device:port".
func (a *analyzer) portName(p int) string {
	pt := &a.f.Ports[p]
	return a.f.Nodes[pt.Node].Name + ":" + pt.Name
}

// outRate returns port p's transmit rate (bps) on the grid, NaN where
// missing.
func (a *analyzer) outRate(p int) []float64 {
	if v, ok := a.portVals[p]; ok {
		return v
	}
	v := a.g.place(a.clip(a.portSeries(p).out).Rates())
	a.portVals[p] = v
	return v
}

// sumRates adds the transmit rates of ports; an interval is missing when
// any port is missing it.
func (a *analyzer) sumRates(ports []int) []float64 {
	out := make([]float64, a.g.n)
	for _, p := range ports {
		v := a.outRate(p)
		for i := range out {
			out[i] += v[i]
		}
	}
	return out
}

func (a *analyzer) coverage() Coverage {
	var c Coverage
	var missSw, missNIC []string
	stalled := a.stalledTargets(&c)
	for i := range a.f.Ports {
		pt := &a.f.Ports[i]
		n := &a.f.Nodes[pt.Node]
		has := a.idx.HasInterface(n.Name, pt.Name) && !stalled[n.Name]
		if n.IsSwitch() {
			c.SwitchPorts++
			if has {
				c.SwitchPortsWithSamples++
			} else {
				missSw = append(missSw, n.Name+":"+pt.Name)
			}
		} else {
			c.NICs++
			if has {
				c.NICsWithSamples++
			} else {
				missNIC = append(missNIC, n.Name+":"+pt.Name)
			}
		}
	}
	miss := append(missSw, missNIC...)
	if len(miss) > maxMissing {
		miss = miss[:maxMissing]
	}
	c.Missing = miss
	return c
}

// stalledTargets finds the fabric's targets whose last sample is older
// than the jobs' end (the last flow completion) by more than the stall
// tolerance, and lists them in c.Stalled.
func (a *analyzer) stalledTargets(c *Coverage) map[string]bool {
	var end int64 // ps of run time
	for ji := range a.in.Jobs {
		for _, fl := range a.in.Jobs[ji].Flows {
			if fl.FCT >= 0 && fl.Start >= 0 {
				end = max(end, fl.Start+fl.FCT)
			}
		}
	}
	if end == 0 {
		return nil
	}
	endNs := a.in.EpochNs + end/1000
	tol := max(stallTolerance*a.idx.Step(), minStallTolerance.Nanoseconds())
	last := map[string]int64{}
	for _, k := range a.idx.Keys() {
		if s := a.idx.Get(k); len(s.T) > 0 {
			last[k.Target] = max(last[k.Target], s.T[len(s.T)-1])
		}
	}
	out := map[string]bool{}
	for i := range a.f.Nodes {
		n := a.f.Nodes[i].Name
		l, ok := last[n]
		if !ok || l >= endNs-tol {
			continue
		}
		out[n] = true
		c.Stalled = append(c.Stalled, fmt.Sprintf("%s: its samples stop %.3f s into the run, the jobs ran until %.3f s",
			n, float64(l-a.in.EpochNs)/1e9, float64(end)/1e12))
	}
	return out
}

// counterTotals sums, over the switch targets, the increases of the
// interface out-discards counters and of the queue trim and ECN-mark
// counters.
func (a *analyzer) counterTotals() (drops, trims, ecn int64) {
	switches := map[string]bool{}
	for i := range a.f.Nodes {
		if a.f.Nodes[i].IsSwitch() {
			switches[a.f.Nodes[i].Name] = true
		}
	}
	for _, k := range a.idx.Keys() {
		if !switches[k.Target] {
			continue
		}
		s := a.idx.Get(k)
		switch {
		case k.Measurement == telemetry.MeasInterface && k.Field == telemetry.FieldOutDiscards:
			drops += s.Increase()
		case k.Measurement == telemetry.MeasQueue && k.Field == telemetry.FieldTrimPkts:
			trims += s.Increase()
		case k.Measurement == telemetry.MeasQueue && k.Field == telemetry.FieldECNMarkedPkts:
			ecn += s.Increase()
		}
	}
	return drops, trims, ecn
}

// round rounds v to d decimals.
func round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}
