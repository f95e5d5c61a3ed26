package analysis

import (
	"math"
	"sort"

	"github.com/fabricbench/fabricbench/results"
)

// NearestRank returns the p-quantile (0 ≤ p ≤ 1) of sorted by the
// nearest-rank method: the smallest value with at least p·n values at or
// below it (the minimum for p = 0). NaN for an empty slice.
func NearestRank(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	// The tolerance keeps p·n = 99.00000000000001 at rank 99.
	rank := int(math.Ceil(p*float64(n) - 1e-9))
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

// quantiles returns min/p50/p99/max (nearest rank) of v; zero for an empty
// slice. v is sorted in place.
func quantiles(v []float64, decimals int) results.Quantiles {
	if len(v) == 0 {
		return results.Quantiles{}
	}
	sort.Float64s(v)
	return results.Quantiles{
		Min: round(v[0], decimals),
		P50: round(NearestRank(v, 0.5), decimals),
		P99: round(NearestRank(v, 0.99), decimals),
		Max: round(v[len(v)-1], decimals),
	}
}

// busFactor is the nccl-tests factor from algorithm to bus bandwidth.
func busFactor(workload string, n int) float64 {
	switch workload {
	case AllToAll:
		if n > 0 {
			return float64(n-1) / float64(n)
		}
	case AllReduce:
		if n > 0 {
			return 2 * float64(n-1) / float64(n)
		}
	case AllGather, ReduceScatter:
		if n > 0 {
			return float64(n-1) / float64(n)
		}
	}
	return 1
}

// BusFactor is the nccl-tests factor from algorithm to bus bandwidth of a
// workload over n ranks: (n-1)/n for all-to-all, all-gather and
// reduce-scatter, 2(n-1)/n for all-reduce, 1 otherwise.
func BusFactor(workload string, n int) float64 { return busFactor(workload, n) }

// algBytes is the number of bytes the nccl-tests algorithm bandwidth of a
// job divides by its completion time.
func algBytes(j *JobInput) float64 {
	size := float64(j.SizeBytes)
	switch j.Workload {
	case Incast:
		senders := map[int]bool{}
		for i := range j.Flows {
			senders[j.Flows[i].Src] = true
		}
		return float64(len(senders)) * size
	case AllToAll:
		return float64(len(j.Hosts)) * size
	}
	return size // permutation: per-flow message; all-reduce: per-rank buffer; all-gather, reduce-scatter: the total
}

// job computes a job's results (see the package documentation).
func (a *analyzer) job(j *JobInput) results.Job {
	r := results.Job{
		Name: j.Name, Workload: j.Workload, Hosts: len(j.Hosts), SizeBytes: j.SizeBytes,
		Repetitions: j.Repetitions, Flows: len(j.Flows), StartUs: -1, CompletionUs: -1,
	}
	nReps := max(j.Repetitions, 0)
	first := int64(-1)
	for i := range j.Flows {
		fl := &j.Flows[i]
		nReps = max(nReps, fl.Rep+1)
		if fl.Start >= 0 && (first < 0 || fl.Start < first) {
			first = fl.Start
		}
		r.Packets.Retransmitted += fl.Retx
		r.Packets.Nacks += fl.Nacks
		r.Packets.Timeouts += fl.Timeouts
		r.Packets.SpuriousRetransmits += fl.Spurious
	}
	if first >= 0 {
		r.StartUs = round(float64(first)/1e6, 3)
	}

	// Repetitions: first start to last end; −1 when any flow of the
	// repetition did not finish (or it has no flows).
	type span struct {
		first, last int64
		flows       int
		done        bool
	}
	reps := make([]span, nReps)
	for i := range reps {
		reps[i] = span{first: -1, last: -1, done: true}
	}
	var fcts, slow, pair []float64
	for i := range j.Flows {
		fl := &j.Flows[i]
		rp := &reps[fl.Rep]
		rp.flows++
		if !fl.finished() {
			rp.done = false
			continue
		}
		r.Completed++
		if rp.first < 0 || fl.Start < rp.first {
			rp.first = fl.Start
		}
		rp.last = max(rp.last, fl.Start+fl.FCT)
		fcts = append(fcts, float64(fl.FCT)/1e6)
		if a.in.Ideal != nil {
			if ideal := a.in.Ideal(fl.Src, fl.Dst, fl.Size); ideal > 0 {
				slow = append(slow, float64(fl.FCT)/float64(ideal))
			}
		}
		if fl.FCT > 0 {
			line := math.Min(a.nicRate(fl.Src), a.nicRate(fl.Dst))
			if line > 0 {
				pair = append(pair, float64(fl.Size)*8/(float64(fl.FCT)*1e-12)/line)
			}
		}
	}
	worst := int64(-1)
	complete := nReps > 0
	for _, rp := range reps {
		if !rp.done || rp.flows == 0 {
			complete = false
			r.RepetitionsUs = append(r.RepetitionsUs, -1)
			continue
		}
		d := rp.last - rp.first
		worst = max(worst, d)
		r.RepetitionsUs = append(r.RepetitionsUs, round(float64(d)/1e6, 3))
	}
	if complete && worst >= 0 {
		r.CompletionUs = round(float64(worst)/1e6, 3)
		if worst > 0 {
			t := float64(worst) * 1e-12
			alg := algBytes(j) * 8 / t / 1e9
			r.AlgBWGbps = round(alg, 3)
			r.BusBWGbps = round(alg*busFactor(j.Workload, len(j.Hosts)), 3)
		}
	}
	a.jobSpan(j, &r)
	r.FCTUs = quantiles(fcts, 3)
	r.Slowdown = quantiles(slow, 4)
	if len(pair) > 0 {
		sort.Float64s(pair)
		r.P01PairBW = round(NearestRank(pair, 0.01), 4)
	}
	return r
}

// jobSpan fills the job's JCT (first flow start to last flow end over
// every repetition), goodput and roofline JCT: what an ideal fabric would
// take, every repetition's collective at the nccl-tests bus bandwidth of
// the slowest participant's line rate and the gaps between repetitions
// (compute phases) as given.
func (a *analyzer) jobSpan(j *JobInput, r *results.Job) {
	first, last := int64(-1), int64(-1)
	var bytes float64
	for i := range j.Flows {
		fl := &j.Flows[i]
		if !fl.finished() {
			return // no span for a job that did not finish
		}
		if first < 0 || fl.Start < first {
			first = fl.Start
		}
		last = max(last, fl.Start+fl.FCT)
		bytes += float64(fl.Size)
	}
	if first < 0 || last <= first {
		return
	}
	r.JCTUs = round(float64(last-first)/1e6, 3)
	r.GoodputGbps = round(bytes*8/(float64(last-first)*1e-12)/1e9, 3)
	line := math.Inf(1)
	for _, h := range j.Hosts {
		line = math.Min(line, a.nicRate(h))
	}
	if line <= 0 || math.IsInf(line, 0) {
		return
	}
	reps := max(j.Repetitions, 1)
	ideal := algBytes(j) * busFactor(j.Workload, len(j.Hosts)) * 8 / line // s per repetition
	r.RooflineUs = round((float64(reps)*ideal+float64(reps-1)*float64(j.GapPs)*1e-12)*1e6, 3)
	r.GapUs = round(float64(j.GapPs)/1e6, 3)
}

// baselines gives every job with a baseline its baseline's JCT.
func baselines(out []results.Job, in []JobInput) {
	for i := range in {
		if in[i].Baseline == "" {
			continue
		}
		for k := range out {
			if out[k].Name == in[i].Baseline {
				out[i].BaselineJCTUs = out[k].JCTUs
			}
		}
	}
}

// nicRate is the line rate (bps) of host h's first NIC, the one its
// traffic uses.
func (a *analyzer) nicRate(h int) float64 {
	n := a.f.Host(h)
	if len(n.Ports) == 0 {
		return 0
	}
	return float64(a.f.PortRate(n.Ports[0]))
}
