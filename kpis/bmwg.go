package kpis

// This file holds the KPIs of the IETF BMWG AI-fabric benchmarking draft
// (draft-calabria-bmwg-ai-fabric-training-bench, "KPI Framework and
// Metrics Taxonomy") under the draft's names and units, usable in any
// suite. docs/bmwg.md documents each with its definition and the draft
// section it comes from.

import (
	"errors"
	"fmt"
	"math"

	"github.com/fabricbench/fabricbench/analysis"
	"github.com/fabricbench/fabricbench/results"
)

// Fabric counters the harness adds to every run's extra metrics (from
// the backend's packet counters and the run's span), from which the
// derived BMWG rates are computed.
const (
	MetricSentPackets  = "sent_packets"
	MetricDroppedPkts  = "dropped"
	MetricECNMarkedPkt = "ecn_marked_packets"
	MetricRetxPackets  = "retransmitted"
	MetricDurationUs   = "duration_us"
	MetricPayloadBytes = "payload_bytes"
	// Reported by backends that see packets arrive (the simulator's
	// delivery stage): data packets delivered, and of them ECN-marked.
	MetricDeliveredPkts = "delivered_packets"
	MetricCEPackets     = "ce_packets"
)

var bmwgJobMetrics = []metric{
	{MetricInfo: MetricInfo{"jct_us", ScopeJob, "us", "Job Completion Time (BMWG primary KPI): first flow start to last flow end over every repetition, compute gaps included"}, job: jct(func(j *results.Job) (float64, error) { return j.JCTUs, nil })},
	{MetricInfo: MetricInfo{"jct_ratio", ScopeJob, "ratio", "JCT Ratio (BMWG primary KPI): measured JCT / roofline JCT (every repetition at the nccl-tests bus bandwidth of the slowest participant's line rate, plus the compute gaps)"}, job: jct(JCTRatio)},
	{MetricInfo: MetricInfo{"jct_ratio_sd", ScopeJob, "ratio", "BMWG soak stability: standard deviation (sample) of the per-iteration JCT ratio (repetition time / roofline repetition time); needs 2+ repetitions"}, job: jct(JCTRatioSD)},
	{MetricInfo: MetricInfo{"iteration_cv", ScopeJob, "ratio", "coefficient of variation (sample standard deviation / mean) of the repetition times; needs 2+ repetitions"}, job: jct(func(j *results.Job) (float64, error) {
		if len(j.RepetitionsUs) < 2 {
			return 0, fmt.Errorf("needs 2 or more repetitions (the job has %d)", len(j.RepetitionsUs))
		}
		return CV(j.RepetitionsUs), nil
	})},
	{MetricInfo: MetricInfo{"interference_factor", ScopeJob, "ratio", "BMWG multi-tenant JCT interference: JCT with the other jobs / JCT of the job's baseline (the same job run alone, jobs[].baseline)"}, job: jct(InterferenceFactor)},
	{MetricInfo: MetricInfo{"goodput_gbps", ScopeJob, "Gb/s", "payload of every flow of the job over its JCT"}, job: jct(func(j *results.Job) (float64, error) { return j.GoodputGbps, nil })},
	{MetricInfo: MetricInfo{"latency_p50_us", ScopeJob, "us", "median one-way fabric latency of the job's data packets (sender NIC to receiver NIC; simulator)"}, job: extraJob("latency_p50_us", "one-way latency")},
	{MetricInfo: MetricInfo{"latency_p99_us", ScopeJob, "us", "Tail Latency P99 (BMWG primary KPI): 99th-percentile one-way fabric latency of the job's data packets"}, job: extraJob("latency_p99_us", "one-way latency")},
	{MetricInfo: MetricInfo{"latency_p999_us", ScopeJob, "us", "Tail Latency P99.9 (BMWG primary KPI): 99.9th-percentile one-way fabric latency of the job's data packets"}, job: extraJob("latency_p999_us", "one-way latency")},
	{MetricInfo: MetricInfo{"latency_max_us", ScopeJob, "us", "largest one-way fabric latency of the job's data packets"}, job: extraJob("latency_max_us", "one-way latency")},
	{MetricInfo: MetricInfo{"ooo_fraction", ScopeJob, "fraction", "out-of-order packets / data packets delivered (BMWG out-of-order rate, as a share)"}, job: OOOFraction},
	{MetricInfo: MetricInfo{"ooo_rate_pps", ScopeJob, "pkt/s", "Out-of-Order Packet Rate (BMWG secondary KPI): packets delivered out of sequence per second of the job's JCT"}, job: jct(OOORate)},
	{MetricInfo: MetricInfo{"retx_rate_per_s", ScopeJob, "retx/s", "Retransmission Rate (BMWG secondary KPI): the job's retransmitted packets per second of its JCT"}, job: jct(func(j *results.Job) (float64, error) {
		return float64(j.Packets.Retransmitted) / (j.JCTUs * 1e-6), nil
	})},
}

var bmwgFabricMetrics = []metric{
	{MetricInfo: MetricInfo{MetricSentPackets, ScopeFabric, "packets", "new data packets the senders sent, retransmissions not included (reported by the backend)"}, src: fromBackend},
	{MetricInfo: MetricInfo{MetricDroppedPkts, ScopeFabric, "packets", "data packets dropped by switch queues (reported by the backend)"}, src: fromBackend},
	{MetricInfo: MetricInfo{MetricECNMarkedPkt, ScopeFabric, "packets", "data packets marked CE by switch queues (reported by the backend)"}, src: fromBackend},
	{MetricInfo: MetricInfo{MetricDurationUs, ScopeFabric, "us", "the run's span: first flow start to last flow end (finished flows)"}, src: fromBackend},
	{MetricInfo: MetricInfo{MetricPayloadBytes, ScopeFabric, "bytes", "payload of every finished flow"}, src: fromBackend},
	{MetricInfo: MetricInfo{"drop_rate_ppm", ScopeFabric, "ppm", "Packet Drop Rate (BMWG primary KPI): data packets dropped by switch queues per million data packets transmitted (new and retransmitted; the transport recovers them; on a lossless fabric it is 0)"}, src: fromDerived, fab: func(get func(string) (float64, error)) (float64, error) {
		d, err := get(MetricDroppedPkts)
		if err != nil {
			return 0, err
		}
		n, err := get(MetricSentPackets)
		if err != nil {
			return 0, err
		}
		r, err := get(MetricRetxPackets)
		if err != nil {
			return 0, err
		}
		if n+r <= 0 {
			return 0, errors.New("no data packets were sent")
		}
		return d / (n + r) * 1e6, nil
	}},
	{MetricInfo: MetricInfo{MetricDeliveredPkts, ScopeFabric, "packets", "data packets delivered to their receivers, retransmissions included, trimmed headers not (simulator)"}, src: fromBackend},
	{MetricInfo: MetricInfo{MetricCEPackets, ScopeFabric, "packets", "data packets delivered with the CE mark (simulator)"}, src: fromBackend},
	{MetricInfo: MetricInfo{"ecn_marking_ratio_pct", ScopeFabric, "%", "ECN Marking Ratio (BMWG secondary KPI): data packets delivered marked CE / data packets delivered, in percent (a packet marked at two hops counts once)"}, src: fromDerived, fab: func(get func(string) (float64, error)) (float64, error) {
		return ratioOf(get, MetricCEPackets, MetricDeliveredPkts, 100)
	}},
	{MetricInfo: MetricInfo{"fabric_retx_rate_per_s", ScopeFabric, "retx/s", "Retransmission Rate (BMWG secondary KPI), fabric-wide: retransmitted packets per second of the run's span"}, src: fromDerived, fab: func(get func(string) (float64, error)) (float64, error) {
		return ratioOf(get, MetricRetxPackets, MetricDurationUs, 1e6)
	}},
	{MetricInfo: MetricInfo{"pfc_pause_rate_per_s", ScopeFabric, "events/s", "PFC Pause Count (BMWG secondary KPI): pause frames of every switch port per second of the run's span"}, src: fromDerived, fab: func(get func(string) (float64, error)) (float64, error) {
		return ratioOf(get, analysis.MetricPFCPauseFrames, MetricDurationUs, 1e6)
	}, telemetry: true},
	{MetricInfo: MetricInfo{"aggregate_throughput_gbps", ScopeFabric, "Gb/s", "Aggregate Throughput (BMWG primary KPI): payload of every finished flow over the run's span (first flow start to last flow end)"}, src: fromDerived, fab: func(get func(string) (float64, error)) (float64, error) {
		return ratioOf(get, MetricPayloadBytes, MetricDurationUs, 8e-3)
	}},
	{MetricInfo: MetricInfo{analysis.MetricMaxGroupMMR, ScopeFabric, "ratio", "ECMP Imbalance MMR (BMWG secondary KPI): the largest max-mean ratio of the member loads (bytes) of an active symmetry group such as a leaf's uplinks (1: equal)"}, src: fromSymmetry},
	{MetricInfo: MetricInfo{"ecn_kmin_deviation_pct", ScopeFabric, "%", "BMWG ECN marking accuracy: queue depth at which marking starts, estimated from the marking profile, against the configured kmin, in percent of kmin (simulator)"}, src: fromBackend},
	{MetricInfo: MetricInfo{"ecn_kmax_deviation_pct", ScopeFabric, "%", "BMWG ECN marking accuracy: queue depth at which every packet is marked, estimated from the marking profile, against the configured kmax, in percent of kmax (simulator)"}, src: fromBackend},
	{MetricInfo: MetricInfo{"ecn_marks_below_kmin", ScopeFabric, "packets", "packets marked while their queue was at or below the configured kmin (0 on an accurate marker; simulator)"}, src: fromBackend},
	{MetricInfo: MetricInfo{"pfc_deadlock", ScopeFabric, "0/1", "1 when the run stalled with flows unfinished and priorities still paused (a PFC deadlock; simulator)"}, src: fromBackend},
	{MetricInfo: MetricInfo{"pfc_watchdog_events", ScopeFabric, "count", "PFC watchdog storm detections (features.pfc.watchdog; simulator)"}, src: fromBackend},
	{MetricInfo: MetricInfo{"pfc_watchdog_drops", ScopeFabric, "packets", "packets the PFC watchdog dropped while it ignored pause frames (simulator)"}, src: fromBackend},
	{MetricInfo: MetricInfo{"loss_duration_us", ScopeFabric, "us", "Failover Time (BMWG link failure convergence): from the first link failure to the last packet lost to a failed link (0: no loss, zero-impact failover; simulator)"}, src: fromBackend},
	{MetricInfo: MetricInfo{"failover_lost_packets", ScopeFabric, "packets", "packets lost to failed links (simulator)"}, src: fromBackend},
	{MetricInfo: MetricInfo{"flowlets", ScopeFabric, "count", "flowlets switches started (features.ecmp.mode flowlet; simulator)"}, src: fromBackend},
}

func init() {
	var job, fab []metric
	for _, m := range metrics {
		if m.Scope == ScopeJob {
			job = append(job, m)
		} else {
			fab = append(fab, m)
		}
	}
	all := append(append(append(job, bmwgJobMetrics...), fab...), bmwgFabricMetrics...)
	seen := map[string]bool{}
	for _, m := range all {
		if seen[m.Name] {
			panic("kpis: metric " + m.Name + " twice")
		}
		seen[m.Name] = true
	}
	metrics = all
}

// Stored computes a metric from a run as results.json stores it (its jobs
// and its fabric metrics, Run.Metrics): a report's value of a KPI the
// suite did not bound. scope is a job name for job metrics.
func Stored(name, scope string, r *results.Run) (float64, error) {
	m, ok := lookup(name)
	if !ok {
		return 0, fmt.Errorf("unknown metric %q", name)
	}
	out := &analysis.Output{Jobs: r.Jobs, Metrics: r.Metrics}
	if r.Metrics[analysis.MetricCoverage] > 0 {
		out.Coverage = analysis.Coverage{SwitchPorts: 1, SwitchPortsWithSamples: 1}
	}
	v, err := value(m, scope, out, r.Metrics)
	if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
		err = fmt.Errorf("%s is %v", name, v)
	}
	return v, err
}

// NeedsTelemetry tells whether a fabric metric is computed from
// telemetry (false for job metrics and the backend's counters): a run
// without telemetry cannot evaluate it.
func NeedsTelemetry(name string) bool {
	m, ok := lookup(name)
	if !ok || m.Scope == ScopeJob {
		return false
	}
	switch m.src {
	case fromBackend:
		return false
	case fromDerived:
		return m.telemetry
	}
	return true
}

// jct wraps a job metric that needs the job's JCT.
func jct(v func(j *results.Job) (float64, error)) func(j *results.Job) (float64, error) {
	return func(j *results.Job) (float64, error) {
		if j.JCTUs <= 0 {
			return 0, fmt.Errorf("job did not complete (%d of %d flows finished): no JCT", j.Completed, j.Flows)
		}
		return v(j)
	}
}

func extraJob(key, what string) func(j *results.Job) (float64, error) {
	return func(j *results.Job) (float64, error) {
		v, ok := j.Extra[key]
		if !ok {
			return 0, fmt.Errorf("the backend reports no %s (job metric %s)", what, key)
		}
		return v, nil
	}
}

func ratioOf(get func(string) (float64, error), num, den string, scale float64) (float64, error) {
	n, err := get(num)
	if err != nil {
		return 0, err
	}
	d, err := get(den)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s is %v", den, d)
	}
	return n / d * scale, nil
}

// JCTRatio is a job's measured JCT over its roofline JCT.
func JCTRatio(j *results.Job) (float64, error) {
	if j.RooflineUs <= 0 {
		return 0, errors.New("no roofline JCT for this job (its workload has no bus-bandwidth model)")
	}
	return j.JCTUs / j.RooflineUs, nil
}

// rooflineRepUs is the roofline time of one repetition (compute gaps
// excluded).
func rooflineRepUs(j *results.Job) float64 {
	n := max(j.Repetitions, len(j.RepetitionsUs), 1)
	return (j.RooflineUs - float64(n-1)*j.GapUs) / float64(n)
}

// JCTRatioSD is the sample standard deviation of a job's per-repetition
// JCT ratios (repetition time / roofline repetition time).
func JCTRatioSD(j *results.Job) (float64, error) {
	if len(j.RepetitionsUs) < 2 {
		return 0, fmt.Errorf("needs 2 or more repetitions (the job has %d)", len(j.RepetitionsUs))
	}
	r := rooflineRepUs(j)
	if j.RooflineUs <= 0 || r <= 0 {
		return 0, errors.New("no roofline JCT for this job (its workload has no bus-bandwidth model)")
	}
	v := make([]float64, len(j.RepetitionsUs))
	for i, t := range j.RepetitionsUs {
		v[i] = t / r
	}
	_, sd := MeanSD(v)
	return sd, nil
}

// InterferenceFactor is a job's JCT over its baseline's.
func InterferenceFactor(j *results.Job) (float64, error) {
	if j.BaselineJCTUs <= 0 {
		return 0, errors.New("the job has no baseline JCT (set jobs[].baseline to a job of the same shape that runs alone)")
	}
	return j.JCTUs / j.BaselineJCTUs, nil
}

// OOOFraction is the share of a job's delivered data packets that
// arrived out of order.
func OOOFraction(j *results.Job) (float64, error) {
	ooo, ok1 := j.Extra["ooo_packets"]
	del, ok2 := j.Extra["delivered_packets"]
	if !ok1 || !ok2 {
		return 0, errors.New("the backend reports no packet ordering (job metrics ooo_packets, delivered_packets)")
	}
	if del <= 0 {
		return 0, errors.New("no data packets were delivered")
	}
	return ooo / del, nil
}

// OOORate is a job's out-of-order packets per second of its JCT.
func OOORate(j *results.Job) (float64, error) {
	ooo, ok := j.Extra["ooo_packets"]
	if !ok {
		return 0, errors.New("the backend reports no packet ordering (job metric ooo_packets)")
	}
	return ooo / (j.JCTUs * 1e-6), nil
}

// MeanSD returns the mean and the sample standard deviation of v (0 for
// fewer than two values).
func MeanSD(v []float64) (mean, sd float64) {
	if len(v) == 0 {
		return 0, 0
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1))
}

// CV is the coefficient of variation of v (sample standard deviation /
// mean; 0 when the mean is 0), the draft's repeatability measure.
func CV(v []float64) float64 {
	m, sd := MeanSD(v)
	if m == 0 {
		return 0
	}
	return sd / math.Abs(m)
}

// RepeatabilityLimit is the draft's recommended bound on a primary
// metric's coefficient of variation over iterations (5%).
const RepeatabilityLimit = 0.05

// ECNAccuracy estimates a marker's thresholds from its marking profile:
// a least-squares line through the marking probability of the depth
// buckets with 0 < p < 1 (each weighted by its packets), extended to p = 0
// (kmin) and p = 1 (kmax), and the packets marked at depths at or below
// the configured kmin. ok is false when fewer than two buckets mark
// partially (too little traffic in the RED band to tell).
func ECNAccuracy(p *results.ECNProfile) (kmin, kmax float64, below uint64, ok bool) {
	if p == nil || p.BucketBytes <= 0 {
		return 0, 0, 0, false
	}
	var sw, sx, sy, sxx, sxy float64
	n := 0
	for i := range p.Seen {
		if i >= len(p.Marked) {
			break
		}
		lo := int64(i) * p.BucketBytes
		if p.Marked[i] > 0 && lo+p.BucketBytes <= p.KMinBytes {
			below += p.Marked[i]
		}
		if p.Seen[i] == 0 || p.Marked[i] == 0 || p.Marked[i] == p.Seen[i] {
			continue
		}
		x := float64(lo) + float64(p.BucketBytes)/2
		y := float64(p.Marked[i]) / float64(p.Seen[i])
		w := float64(p.Seen[i])
		sw, sx, sy, sxx, sxy = sw+w, sx+w*x, sy+w*y, sxx+w*x*x, sxy+w*x*y
		n++
	}
	if n < 2 {
		return 0, 0, below, false
	}
	den := sw*sxx - sx*sx
	if den == 0 {
		return 0, 0, below, false
	}
	a := (sw*sxy - sx*sy) / den
	b := (sy - a*sx) / sw
	if a <= 0 {
		return 0, 0, below, false
	}
	return -b / a, (1 - b) / a, below, true
}

// ECNExtras are the ECN accuracy metrics of a profile
// (ecn_kmin_deviation_pct, ecn_kmax_deviation_pct, ecn_marks_below_kmin);
// nil without a profile, only the count when the estimate is not
// possible.
func ECNExtras(p *results.ECNProfile) map[string]float64 {
	if p == nil {
		return nil
	}
	kmin, kmax, below, ok := ECNAccuracy(p)
	m := map[string]float64{"ecn_marks_below_kmin": float64(below)}
	if ok && p.KMinBytes > 0 && p.KMaxBytes > 0 {
		m["ecn_kmin_deviation_pct"] = (kmin - float64(p.KMinBytes)) / float64(p.KMinBytes) * 100
		m["ecn_kmax_deviation_pct"] = (kmax - float64(p.KMaxBytes)) / float64(p.KMaxBytes) * 100
	}
	return m
}
