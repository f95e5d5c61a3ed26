package analysis

import (
	"fmt"
	"math"

	"github.com/fabricbench/fabricbench/results"
)

// HistBands is the number of equal bands of line rate in a NIC histogram.
const HistBands = 10

// histEdges are the band edges 0, 0.1, ..., 1.
func histEdges() []float64 {
	e := make([]float64, HistBands+1)
	for i := range e {
		e[i] = round(float64(i)/HistBands, 6)
	}
	return e
}

// jobWindow returns a job's window in ns since the Unix epoch: from its
// first flow start to its last flow end, or to the last sample when a flow
// did not finish. ok is false when no flow started.
func (a *analyzer) jobWindow(j *JobInput) (start, end int64, ok bool) {
	first, last := int64(-1), int64(-1)
	unfinished := false
	for i := range j.Flows {
		fl := &j.Flows[i]
		if fl.Start < 0 {
			unfinished = true
			continue
		}
		if first < 0 || fl.Start < first {
			first = fl.Start
		}
		if fl.FCT < 0 {
			unfinished = true
			continue
		}
		last = max(last, fl.Start+fl.FCT)
	}
	if first < 0 {
		return 0, 0, false
	}
	start = a.in.EpochNs + first/1000
	if unfinished {
		_, end, ok = a.idx.Span()
		if !ok {
			return 0, 0, false
		}
		return start, end, end > start
	}
	end = a.in.EpochNs + (last+999)/1000
	return start, end, true
}

// stragglerChecked reports whether a job's participants are checked for
// stragglers: collectives and permutations with at least 3 participants.
// Incast jobs are not: their senders share one receiver link, so each runs
// at a fraction of line rate by design.
func stragglerChecked(j *JobInput) bool {
	switch j.Workload {
	case Permutation, AllToAll, AllReduce, AllGather, ReduceScatter:
	default:
		return false
	}
	return len(uniqueHosts(j.Hosts)) >= 3
}

func uniqueHosts(hosts []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, h := range hosts {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

// stragCand is a participant stuck between idle and line rate: a
// straggler unless a culprit explains it.
type stragCand struct {
	host    int // host number
	anomaly results.Anomaly
	middle  []int // the buckets in which its rate was in the middle bands
}

// stragglers builds the NIC histograms of a job's participants and lists
// the straggler candidates (see the package documentation).
func (a *analyzer) stragglers(j *JobInput) ([]stragCand, []results.NICHist) {
	if !stragglerChecked(j) {
		return nil, nil
	}
	ws, we, ok := a.jobWindow(j)
	type nic struct {
		host    string
		counts  []int
		samples int
		middle  int
		mids    []int
		sumBps  float64
	}
	hosts := uniqueHosts(j.Hosts)
	nics := make([]nic, len(hosts))
	for hi, h := range hosts {
		node := a.f.Host(h)
		n := nic{host: node.Name, counts: make([]int, HistBands)}
		var line float64
		for _, p := range node.Ports {
			line += float64(a.f.PortRate(p))
		}
		if ok && line > 0 {
			v := a.sumRates(node.Ports)
			for i, x := range v {
				if math.IsNaN(x) || a.g.startNs(i) < ws || a.g.endNs(i) > we {
					continue
				}
				frac := x / line
				band := min(int(frac*HistBands), HistBands-1)
				n.counts[band]++
				n.samples++
				n.sumBps += x
				if frac >= a.opts.StragLow && frac < a.opts.StragHigh {
					n.middle++
					n.mids = append(n.mids, i)
				}
			}
		}
		nics[hi] = n
	}
	midFrac := func(n *nic) float64 { return float64(n.middle) / float64(n.samples) }
	var fracs []float64
	for i := range nics {
		if nics[i].samples >= MinStragglerSamples {
			fracs = append(fracs, midFrac(&nics[i]))
		}
	}
	med := median(fracs)
	var anoms []stragCand
	var hists []results.NICHist
	edges := histEdges()
	for i := range nics {
		n := &nics[i]
		straggler := false
		if n.samples >= MinStragglerSamples && len(fracs) >= 3 {
			mf := midFrac(n)
			if mf >= a.opts.StragMinMiddle && mf-med >= StragglerMargin && (mf-med)*float64(n.samples) >= minStragglerExcess {
				straggler = true
				mean := n.sumBps / float64(n.samples)
				anoms = append(anoms, stragCand{host: hosts[i], middle: n.mids, anomaly: results.Anomaly{
					Kind:    results.KindStraggler,
					Group:   "job:" + j.Name,
					Member:  n.host,
					Cause:   results.CauseThrottle,
					Score:   round(mf, 4),
					StartUs: round(float64(ws-a.in.EpochNs)/1e3, 3),
					EndUs:   round(float64(we-a.in.EpochNs)/1e3, 3),
					Signals: []results.Signal{{Name: "middle_fraction", Value: round(mf, 4), Baseline: round(med, 4), Unit: "fraction of samples"}},
					Evidence: fmt.Sprintf("%s spent %.0f%% of %d samples between %.0f%% and %.0f%% of line rate (median participant %.0f%%); mean %s",
						n.host, 100*mf, n.samples, 100*a.opts.StragLow, 100*a.opts.StragHigh, 100*med, fmtRate(mean)),
					Details: map[string]float64{
						"middle_fraction":        round(mf, 4),
						"median_middle_fraction": round(med, 4),
						"samples":                float64(n.samples),
						"mean_gbps":              round(mean/1e9, 3),
					},
				}})
			}
		}
		hists = append(hists, results.NICHist{Job: j.Name, Host: n.host, Edges: edges, Counts: n.counts, Straggler: straggler})
	}
	return anoms, hists
}

// minStragglerExcess is the fewest middle-band samples by which a
// straggler must exceed the median participant (MinStragglerSamples and
// StragglerMargin aside): with a few samples per job, one sample more in
// the middle bands is chance, not a throttled NIC.
const minStragglerExcess = 2
