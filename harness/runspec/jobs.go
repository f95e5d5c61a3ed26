package runspec

import (
	"fmt"
	"math/rand/v2"

	"github.com/fabricbench/fabricbench/analysis"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

// Workloads the harness builds jobs from: the names results and the
// analysis use (analysis.Permutation, ...). AllGather and ReduceScatter
// are ring collectives of n-1 steps, each rank sending Size/n to the next
// at every step (nccl-tests counts Size over all ranks: the output of an
// all-gather, the input of a reduce-scatter).
const (
	Permutation   = analysis.Permutation
	Incast        = analysis.Incast
	AllToAll      = analysis.AllToAll
	AllReduce     = analysis.AllReduce
	AllGather     = analysis.AllGather
	ReduceScatter = analysis.ReduceScatter
	// GroupShift: every participant sends to the participant in the same
	// position of the next group (pod; a Dragonfly group) that has
	// participants: group i -> i+1, the adversarial pattern of
	// low-diameter fabrics.
	GroupShift = "group-shift"
)

// Job is one resolved job of a run.
type Job struct {
	Name     string
	Workload string
	Hosts    []int // participants (host numbers), in rank order
	Size     int64 // bytes per flow; per-rank buffer for all-reduce
	Start    int64 // ps
	Reps     int
	Gap      int64 // ps between repetitions
	Senders  int   // incast fan-in (0: every other participant)
	Receiver int   // incast destination (host number)
	Window   int   // all-to-all outstanding flows per sender (0: all)
	// QPs splits every permutation or incast flow into this many (0, 1:
	// none).
	QPs int
	// RateFrac (a share of the source NIC's line rate) or RateBps paces
	// every sender; both 0: unpaced.
	RateFrac float64
	RateBps  int64
	// Baseline is the job this one is compared with (interference).
	Baseline string
}

// Workload is every flow of every job of a run, in one matrix, with the job
// and repetition of each flow.
type Workload struct {
	Jobs    []Job
	Matrix  *workloads.Matrix
	FlowJob []int // flow index -> job index
	FlowRep []int // flow index -> repetition
}

// BuildWorkload turns jobs into flows. Repetition r of a job starts Gap after
// the last flow of repetition r-1 finishes (a barrier group per repetition).
func BuildWorkload(f *inventory.Fabric, jobs []Job, seed uint64) (*Workload, error) {
	w := &Workload{Jobs: jobs, Matrix: &workloads.Matrix{Name: "jobs", Hosts: f.NumHosts()}}
	group := 0
	for ji := range jobs {
		j := &jobs[ji]
		if j.Reps < 1 {
			j.Reps = 1
		}
		for rep := 0; rep < j.Reps; rep++ {
			group++
			base := len(w.Matrix.Flows)
			flows, err := jobFlows(f, j, seed+uint64(ji)*7919+uint64(rep))
			if err != nil {
				return nil, fmt.Errorf("job %s: %w", j.Name, err)
			}
			for _, fl := range flows {
				fl.Rate = jobRate(f, j, fl.Src)
				fl.ID += base
				if fl.After >= 0 {
					fl.After += base
				} else if rep == 0 {
					fl.Start += j.Start
				} else {
					fl.AfterGroup = group - 1
					fl.Start += j.Gap
				}
				fl.Group = group
				w.Matrix.Flows = append(w.Matrix.Flows, fl)
				w.FlowJob = append(w.FlowJob, ji)
				w.FlowRep = append(w.FlowRep, rep)
			}
		}
	}
	if err := w.Matrix.Validate(); err != nil {
		return nil, err
	}
	return w, nil
}

// jobFlows returns one repetition of a job with IDs from 0 and After
// relative to them; flows with After < 0 start at their Start offset.
func jobFlows(f *inventory.Fabric, j *Job, seed uint64) ([]workloads.Flow, error) {
	n := len(j.Hosts)
	if n < 2 {
		return nil, fmt.Errorf("%s needs at least 2 hosts, got %d", j.Workload, n)
	}
	var out []workloads.Flow
	add := func(src, dst int, size int64, after int) int {
		id := len(out)
		out = append(out, workloads.Flow{ID: id, Src: src, Dst: dst, Size: size, After: after})
		return id
	}
	if q := j.QPs; q > 1 && (j.Workload == Permutation || j.Workload == Incast) {
		// Queue pairs: each flow becomes q flows between the same hosts.
		one := add
		add = func(src, dst int, size int64, after int) int {
			part := (size + int64(q) - 1) / int64(q)
			id := -1
			for k := 0; k < q && size > 0; k++ {
				id = one(src, dst, min(part, size), after)
				size -= part
			}
			return id
		}
	}
	switch j.Workload {
	case Permutation:
		if n == f.NumHosts() {
			// The generator keeps receivers off the sender's leaf.
			m := workloads.Permutation(f, j.Size, seed)
			for _, fl := range m.Flows {
				add(fl.Src, fl.Dst, fl.Size, -1)
			}
			break
		}
		dst := derangement(n, seed)
		for i, h := range j.Hosts {
			add(h, j.Hosts[dst[i]], j.Size, -1)
		}
	case Incast:
		senders := j.Senders
		if senders == 0 || senders > n-1 {
			senders = n - 1
		}
		for _, h := range j.Hosts {
			if h == j.Receiver {
				continue
			}
			if senders == 0 {
				break
			}
			add(h, j.Receiver, j.Size, -1)
			senders--
		}
	case AllToAll:
		// Sender i sends to i+1, i+2, ... (mod n): at step s every host
		// receives exactly one flow, as in nccl's all-to-all schedule.
		for i, h := range j.Hosts {
			var mine []int
			for s := 1; s < n; s++ {
				after := -1
				if j.Window > 0 && s-1 >= j.Window {
					after = mine[s-1-j.Window]
				}
				mine = append(mine, add(h, j.Hosts[(i+s)%n], j.Size, after))
			}
		}
	case AllReduce:
		// Ring all-reduce: 2(n-1) steps (reduce-scatter then all-gather);
		// at each step rank i sends one chunk of size/n to rank i+1, once it
		// has received the previous step's chunk from rank i-1.
		chunk := (j.Size + int64(n) - 1) / int64(n)
		prev := make([]int, n) // flow that delivered the last chunk to rank i
		for i := range prev {
			prev[i] = -1
		}
		cur := make([]int, n)
		for step := 0; step < 2*(n-1); step++ {
			for i, h := range j.Hosts {
				cur[(i+1)%n] = add(h, j.Hosts[(i+1)%n], chunk, prev[i])
			}
			copy(prev, cur)
		}
	case AllGather, ReduceScatter:
		// Ring: n-1 steps; at each step rank i sends one chunk of size/n
		// to rank i+1, once it has received the previous step's chunk.
		chunk := (j.Size + int64(n) - 1) / int64(n)
		prev := make([]int, n)
		for i := range prev {
			prev[i] = -1
		}
		cur := make([]int, n)
		for step := 0; step < n-1; step++ {
			for i, h := range j.Hosts {
				cur[(i+1)%n] = add(h, j.Hosts[(i+1)%n], chunk, prev[i])
			}
			copy(prev, cur)
		}
	case GroupShift:
		groups := workloads.GroupByPod(f, j.Hosts)
		if len(groups) < 2 {
			return nil, fmt.Errorf("%s needs participants in at least 2 groups (pods), got %d", j.Workload, len(groups))
		}
		for g, hs := range groups {
			to := groups[(g+1)%len(groups)]
			for k, h := range hs {
				add(h, to[k%len(to)], j.Size, -1)
			}
		}
	default:
		return nil, fmt.Errorf("unknown workload %q", j.Workload)
	}
	return out, nil
}

// jobRate is the pacing of a flow of job j from host src, in bps (0:
// unpaced): the job's rate split over the flows a sender runs at once.
func jobRate(f *inventory.Fabric, j *Job, src int) int64 {
	var r float64
	switch {
	case j.RateBps > 0:
		r = float64(j.RateBps)
	case j.RateFrac > 0:
		n := f.Host(src)
		if len(n.Ports) == 0 {
			return 0
		}
		r = j.RateFrac * float64(f.PortRate(n.Ports[0]))
	default:
		return 0
	}
	if j.QPs > 1 && (j.Workload == Permutation || j.Workload == Incast) {
		r /= float64(j.QPs)
	}
	return max(int64(r), 1)
}

// derangement returns a random permutation of 0..n-1 without fixed points.
func derangement(n int, seed uint64) []int {
	r := rand.New(rand.NewPCG(seed, 0x6a6f6273))
	p := r.Perm(n)
	// Swap every fixed point with a random other position until none is
	// left (a swap can only create a new one at i, which the loop revisits).
	for changed := true; changed; {
		changed = false
		for i := range p {
			if p[i] == i {
				k := (i + 1 + r.IntN(n-1)) % n
				p[i], p[k] = p[k], p[i]
				changed = true
			}
		}
	}
	return p
}
