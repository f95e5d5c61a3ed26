// Package kpis evaluates a suite's KPIs against the analysis of a run.
//
// A KPI names a metric, a scope and exactly one bound: Max (the value must
// be ≤ it) or Min (≥). Job metrics are computed from a job's results
// (analysis.Output.Jobs) and need the job's name as scope; fabric metrics
// come from analysis.Output.Metrics, overridden or extended by the values
// the caller passes (e.g. the simulator's packet counters), with scope ""
// or "fabric". [Metrics] lists them all.
//
// A metric that cannot be computed gets the verdict "error" with a message
// rather than a pass or fail: a job that did not finish (completion time,
// bandwidths), no finished flows (FCT, slowdown, pair bandwidth), no ideal
// FCT model (slowdown), no telemetry at all (the telemetry-derived fabric
// metrics), no active symmetry group (max_group_cv), a metric the backend
// does not provide, or a NaN or infinite value.
package kpis

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/analysis"
	"github.com/fabricbench/fabricbench/results"
)

// Spec is one KPI as the suite gives it. Exactly one of Max and Min is set.
type Spec struct {
	Name, Metric, Scope string
	Max, Min            *float64
	// Regress is the suite's regression tolerance ("5%", "2"; empty: the
	// default for the direction), copied to results.KPI.Regress.
	Regress string
}

// MetricInfo describes a metric.
type MetricInfo struct {
	Name        string
	Scope       string // "job" or "fabric"
	Unit        string
	Description string
}

// Scopes of metrics.
const (
	ScopeJob    = "job"
	ScopeFabric = "fabric"
)

// source tells where a fabric metric comes from.
type source int

const (
	fromAnalysis  source = iota // telemetry-derived, in Output.Metrics
	fromCoverage                // always computable
	fromBackend                 // only in extra
	fromSymmetry                // telemetry-derived, needs an active group
	fromAnomalies               // telemetry-derived counts
	fromPFC                     // telemetry-derived, needs PFC counters
	fromDerived                 // computed from other fabric metrics (metric.fab)
)

type metric struct {
	MetricInfo
	job func(j *results.Job) (float64, error) // job metrics
	src source                                // fabric metrics
	// fab computes a derived fabric metric from other fabric metrics.
	fab func(get func(name string) (float64, error)) (float64, error)
	// telemetry: a derived metric with an input computed from telemetry.
	telemetry bool
}

var metrics = []metric{
	{MetricInfo: MetricInfo{"fct_p50_us", ScopeJob, "us", "median flow completion time of the finished flows"}, job: finished(func(j *results.Job) float64 { return j.FCTUs.P50 })},
	{MetricInfo: MetricInfo{"fct_p99_us", ScopeJob, "us", "99th-percentile flow completion time of the finished flows (nearest rank)"}, job: finished(func(j *results.Job) float64 { return j.FCTUs.P99 })},
	{MetricInfo: MetricInfo{"fct_max_us", ScopeJob, "us", "longest flow completion time of the finished flows"}, job: finished(func(j *results.Job) float64 { return j.FCTUs.Max })},
	{MetricInfo: MetricInfo{"slowdown_p50", ScopeJob, "ratio", "median FCT / ideal unloaded FCT"}, job: slowdown(func(j *results.Job) float64 { return j.Slowdown.P50 })},
	{MetricInfo: MetricInfo{"slowdown_p99", ScopeJob, "ratio", "99th-percentile FCT / ideal unloaded FCT"}, job: slowdown(func(j *results.Job) float64 { return j.Slowdown.P99 })},
	{MetricInfo: MetricInfo{"slowdown_max", ScopeJob, "ratio", "largest FCT / ideal unloaded FCT"}, job: slowdown(func(j *results.Job) float64 { return j.Slowdown.Max })},
	{MetricInfo: MetricInfo{"completion_us", ScopeJob, "us", "job completion time: first flow start to last flow end, worst repetition"}, job: complete(func(j *results.Job) float64 { return j.CompletionUs })},
	{MetricInfo: MetricInfo{"algbw_gbps", ScopeJob, "Gb/s", "algorithm bandwidth (nccl-tests convention) over the worst repetition"}, job: complete(func(j *results.Job) float64 { return j.AlgBWGbps })},
	{MetricInfo: MetricInfo{"busbw_gbps", ScopeJob, "Gb/s", "bus bandwidth (nccl-tests convention) over the worst repetition"}, job: complete(func(j *results.Job) float64 { return j.BusBWGbps })},
	{MetricInfo: MetricInfo{"algbw_GBps", ScopeJob, "GB/s", "algorithm bandwidth in gigabytes per second, as nccl-tests prints it (algbw_gbps / 8)"}, job: complete(func(j *results.Job) float64 { return j.AlgBWGbps / 8 })},
	{MetricInfo: MetricInfo{"busbw_GBps", ScopeJob, "GB/s", "bus bandwidth in gigabytes per second, as nccl-tests prints it (busbw_gbps / 8)"}, job: complete(func(j *results.Job) float64 { return j.BusBWGbps / 8 })},
	{MetricInfo: MetricInfo{"p01_pair_bw", ScopeJob, "fraction", "1st-percentile flow goodput as a fraction of the smaller NIC line rate"}, job: finished(func(j *results.Job) float64 { return j.P01PairBW })},
	{MetricInfo: MetricInfo{"completed_fraction", ScopeJob, "fraction", "share of the job's flows that finished"}, job: func(j *results.Job) (float64, error) {
		if j.Flows == 0 {
			return 0, errors.New("job has no flows")
		}
		return float64(j.Completed) / float64(j.Flows), nil
	}},
	{MetricInfo: MetricInfo{"retransmissions", ScopeJob, "packets", "packets the job's senders retransmitted"}, job: func(j *results.Job) (float64, error) { return float64(j.Packets.Retransmitted), nil }},
	{MetricInfo: MetricInfo{"timeouts", ScopeJob, "count", "retransmission timeouts of the job's senders"}, job: func(j *results.Job) (float64, error) { return float64(j.Packets.Timeouts), nil }},
	{MetricInfo: MetricInfo{"spurious_retransmits", ScopeJob, "count", "retransmitted packets whose original was acknowledged after the resend (0 on the simulator backend)"}, job: func(j *results.Job) (float64, error) { return float64(j.Packets.SpuriousRetransmits), nil }},

	{MetricInfo: MetricInfo{analysis.MetricAnomalies, ScopeFabric, "count", "culprits found: ports, links and hosts whose own signals show they limited traffic"}, src: fromAnomalies},
	{MetricInfo: MetricInfo{analysis.MetricSymmetryAnomalies, ScopeFabric, "count", "culprits that are fabric ports or links (members of symmetry groups)"}, src: fromAnomalies},
	{MetricInfo: MetricInfo{analysis.MetricStragglers, ScopeFabric, "count", "culprits that are hosts: a slow NIC or access link, or a NIC stuck between idle and line rate that nothing else explains"}, src: fromAnomalies},
	{MetricInfo: MetricInfo{analysis.MetricTimeToDetect, ScopeFabric, "us", "longest time to detect of the run's anomalies: from the start of its first abnormal interval to the end of the telemetry window whose analysis first reported it (0 without anomalies)"}, src: fromAnomalies},
	{MetricInfo: MetricInfo{analysis.MetricUnmatchedFaults, ScopeFabric, "count", "injected faults that no anomaly explains"}, src: fromAnomalies},
	{MetricInfo: MetricInfo{analysis.MetricImbalancedGroups, ScopeFabric, "count", "load-balanced groups whose member loads spread beyond analysis.symmetry.imbalance_cv (e.g. ECMP hashing)"}, src: fromSymmetry},
	{MetricInfo: MetricInfo{analysis.MetricMaxGroupCV, ScopeFabric, "ratio", "largest coefficient of variation of an active symmetry group (3+ members)"}, src: fromSymmetry},
	{MetricInfo: MetricInfo{analysis.MetricMinGroupJain, ScopeFabric, "ratio", "smallest Jain fairness index of an active symmetry group (3+ members)"}, src: fromSymmetry},
	{MetricInfo: MetricInfo{analysis.MetricPlaneShareMin, ScopeFabric, "ratio", "multi-plane fabrics: the least-loaded plane's share of the hosts' traffic times the number of planes (1: equal shares)"}, src: fromAnalysis},
	{MetricInfo: MetricInfo{analysis.MetricPlaneCV, ScopeFabric, "ratio", "multi-plane fabrics: coefficient of variation of the planes' loads (plane symmetry)"}, src: fromAnalysis},
	{MetricInfo: MetricInfo{analysis.MetricCongestionTrees, ScopeFabric, "count", "lossless fabrics (PFC): informational congestion trees, rooted at a healthy port such as an incast receiver's (not anomalies)"}, src: fromPFC},
	{MetricInfo: MetricInfo{analysis.MetricCongestionSpread, ScopeFabric, "count", "lossless fabrics (PFC): the largest congestion tree's spread, switch ports and host NICs its pause frames paused"}, src: fromPFC},
	{MetricInfo: MetricInfo{analysis.MetricCongestionHops, ScopeFabric, "count", "lossless fabrics (PFC): the farthest pause frames spread from a tree's root, in hops"}, src: fromPFC},
	{MetricInfo: MetricInfo{analysis.MetricPFCPauseFrames, ScopeFabric, "count", "lossless fabrics (PFC): pause frames sent by every switch port"}, src: fromPFC},
	{MetricInfo: MetricInfo{analysis.MetricPFCPausedUs, ScopeFabric, "us", "lossless fabrics (PFC): time switch egress ports were paused, summed over the ports"}, src: fromPFC},
	{MetricInfo: MetricInfo{analysis.MetricCoverage, ScopeFabric, "fraction", "share of switch ports with telemetry samples"}, src: fromCoverage},
	{MetricInfo: MetricInfo{analysis.MetricDrops, ScopeFabric, "packets", "packets discarded by switch ports (out-discards)"}, src: fromAnalysis},
	{MetricInfo: MetricInfo{analysis.MetricTrims, ScopeFabric, "packets", "packets trimmed by switch queues"}, src: fromAnalysis},
	{MetricInfo: MetricInfo{analysis.MetricECNMarked, ScopeFabric, "packets", "packets ECN-marked by switch queues"}, src: fromAnalysis},
	{MetricInfo: MetricInfo{"retransmitted", ScopeFabric, "packets", "packets retransmitted fabric-wide (reported by the backend)"}, src: fromBackend},
	{MetricInfo: MetricInfo{"incomplete_flows", ScopeFabric, "count", "flows of all jobs that did not finish (reported by the backend)"}, src: fromBackend},
	{MetricInfo: MetricInfo{"reroutes", ScopeFabric, "count", "ECMP recomputations after link changes (simulator)"}, src: fromBackend},
}

func finished(v func(j *results.Job) float64) func(j *results.Job) (float64, error) {
	return func(j *results.Job) (float64, error) {
		if j.Completed == 0 {
			return 0, fmt.Errorf("no finished flows (0 of %d)", j.Flows)
		}
		return v(j), nil
	}
}

func slowdown(v func(j *results.Job) float64) func(j *results.Job) (float64, error) {
	return finished(func(j *results.Job) float64 {
		if j.Slowdown.Max == 0 {
			return math.NaN() // reported as "no ideal FCT model"
		}
		return v(j)
	})
}

func complete(v func(j *results.Job) float64) func(j *results.Job) (float64, error) {
	return func(j *results.Job) (float64, error) {
		if j.CompletionUs < 0 {
			return 0, fmt.Errorf("job did not complete (%d of %d flows finished)", j.Completed, j.Flows)
		}
		return v(j), nil
	}
}

// Metrics lists every metric, job metrics first, in a fixed order.
func Metrics() []MetricInfo {
	out := make([]MetricInfo, len(metrics))
	for i, m := range metrics {
		out[i] = m.MetricInfo
	}
	return out
}

// Info returns the description of a metric.
func Info(name string) (MetricInfo, bool) {
	m, ok := lookup(name)
	if !ok {
		return MetricInfo{}, false
	}
	return m.MetricInfo, true
}

func lookup(name string) (*metric, bool) {
	for i := range metrics {
		if metrics[i].Name == name {
			return &metrics[i], true
		}
	}
	return nil, false
}

func metricNames() string {
	var job, fab []string
	for _, m := range metrics {
		if m.Scope == ScopeJob {
			job = append(job, m.Name)
		} else {
			fab = append(fab, m.Name)
		}
	}
	return "job metrics: " + strings.Join(job, ", ") + "; fabric metrics: " + strings.Join(fab, ", ")
}

func isFabricScope(scope string) bool { return scope == "" || scope == ScopeFabric }

// Check validates a KPI against the known metrics and the run's job names.
// Its errors do not name the KPI's place in the suite; the caller adds it.
func Check(s Spec, jobs []string) error {
	m, ok := lookup(s.Metric)
	if !ok {
		if s.Metric == "" {
			return fmt.Errorf("missing metric (%s)", metricNames())
		}
		return fmt.Errorf("unknown metric %q (%s)", s.Metric, metricNames())
	}
	if (s.Max == nil) == (s.Min == nil) {
		return fmt.Errorf("metric %s: give exactly one of max and min", s.Metric)
	}
	for _, b := range []*float64{s.Max, s.Min} {
		if b != nil && (math.IsNaN(*b) || math.IsInf(*b, 0)) {
			return fmt.Errorf("metric %s: the bound must be a finite number", s.Metric)
		}
	}
	sorted := append([]string(nil), jobs...)
	sort.Strings(sorted)
	switch {
	case m.Scope == ScopeFabric && !isFabricScope(s.Scope):
		return fmt.Errorf("metric %s is fabric-wide: scope must be empty or %q, not %q", s.Metric, ScopeFabric, s.Scope)
	case m.Scope == ScopeJob && isFabricScope(s.Scope):
		return fmt.Errorf("metric %s is per job: scope must name a job (%s)", s.Metric, jobList(sorted))
	case m.Scope == ScopeJob:
		i := sort.SearchStrings(sorted, s.Scope)
		if i == len(sorted) || sorted[i] != s.Scope {
			return fmt.Errorf("unknown job %q in scope (%s)", s.Scope, jobList(sorted))
		}
	}
	return nil
}

func jobList(sorted []string) string {
	if len(sorted) == 0 {
		return "the suite has no jobs"
	}
	return "jobs: " + strings.Join(sorted, ", ")
}

// Evaluate computes every KPI. Fabric metrics are read from extra first,
// then from out.Metrics. The result has one KPI per spec, in order.
func Evaluate(specs []Spec, out *analysis.Output, extra map[string]float64) []results.KPI {
	var jobs []string
	if out != nil {
		for _, j := range out.Jobs {
			jobs = append(jobs, j.Name)
		}
	}
	res := make([]results.KPI, 0, len(specs))
	for _, s := range specs {
		res = append(res, evaluate(s, out, extra, jobs))
	}
	return res
}

func evaluate(s Spec, out *analysis.Output, extra map[string]float64, jobs []string) results.KPI {
	k := results.KPI{Name: s.Name, Metric: s.Metric, Scope: s.Scope, Regress: s.Regress}
	if isFabricScope(k.Scope) {
		k.Scope = ScopeFabric
	}
	if k.Name == "" {
		k.Name = k.Scope + "." + s.Metric
	}
	switch {
	case s.Max != nil:
		k.Op, k.Threshold = "<=", *s.Max
	case s.Min != nil:
		k.Op, k.Threshold = ">=", *s.Min
	}
	fail := func(err error) results.KPI {
		k.Verdict, k.Message, k.Value = results.Error, err.Error(), 0
		return k
	}
	if err := Check(s, jobs); err != nil {
		return fail(err)
	}
	m, _ := lookup(s.Metric)
	k.Unit = m.Unit
	if out == nil {
		return fail(errors.New("no analysis results for this run"))
	}
	v, err := value(m, s.Scope, out, extra)
	if err != nil {
		return fail(err)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		if strings.HasPrefix(m.Name, "slowdown") {
			return fail(errors.New("no slowdown: the backend gave no ideal FCT model"))
		}
		return fail(fmt.Errorf("%s is %v", m.Name, v))
	}
	k.Value = v
	ok := v <= k.Threshold
	bound := "max"
	cmp := ">"
	if s.Min != nil {
		ok, bound, cmp = v >= k.Threshold, "min", "<"
	}
	if ok {
		k.Verdict = results.Pass
		return k
	}
	k.Verdict = results.Fail
	k.Message = fmt.Sprintf("%s %s %s %s (%s)", m.Name, num(v)+results.UnitSuffix(v, m.Unit), cmp, num(k.Threshold)+results.UnitSuffix(k.Threshold, m.Unit), bound)
	return k
}

func value(m *metric, scope string, out *analysis.Output, extra map[string]float64) (float64, error) {
	if m.Scope == ScopeJob {
		for i := range out.Jobs {
			if out.Jobs[i].Name == scope {
				return m.job(&out.Jobs[i])
			}
		}
		return 0, fmt.Errorf("job %q has no results", scope)
	}
	if v, ok := extra[m.Name]; ok {
		return v, nil
	}
	if m.fab != nil {
		return m.fab(func(name string) (float64, error) {
			d, ok := lookup(name)
			if !ok || d.Scope != ScopeFabric || d == m {
				return 0, fmt.Errorf("internal error: %s derives from unknown metric %s", m.Name, name)
			}
			return value(d, ScopeFabric, out, extra)
		})
	}
	noTelemetry := out.Coverage.SwitchPortsWithSamples+out.Coverage.NICsWithSamples == 0
	switch m.src {
	case fromBackend:
		return 0, fmt.Errorf("%s is not reported by this backend", m.Name)
	case fromAnalysis, fromAnomalies, fromSymmetry, fromPFC:
		if noTelemetry {
			return 0, fmt.Errorf("%s needs telemetry and the run has no samples", m.Name)
		}
	}
	if _, ok := out.Metrics[m.Name]; !ok && m.src == fromPFC {
		return 0, fmt.Errorf("%s needs PFC counters and the telemetry has none (no pause frames on this backend)", m.Name)
	}
	if m.src == fromSymmetry && out.Metrics[analysis.MetricActiveGroups] == 0 {
		return 0, fmt.Errorf("%s: no symmetry group of 3 or more members carried traffic", m.Name)
	}
	v, ok := out.Metrics[m.Name]
	if !ok {
		return 0, fmt.Errorf("%s was not computed", m.Name)
	}
	return v, nil
}

// num formats a value for messages: "71.2", "0.95", "512.3", "12345.6".
func num(v float64) string {
	if a := math.Abs(v); a >= 100 && a < 1e12 {
		return strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0")
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
