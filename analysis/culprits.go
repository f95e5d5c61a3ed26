package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fabricbench/fabricbench/results"
)

// portEpisode is a run of sample intervals in which a port's own signals
// were abnormal: capped (transmitting below Capacity·line rate while its
// queue held at least BacklogBytes) or lossy (dropping at least Loss of
// what it transmitted without being a backlogged port at line rate).
type portEpisode struct {
	start, end int // bucket indexes, inclusive
}

// portVerdict is what the detector found on one port over the whole run.
type portVerdict struct {
	port     int
	episodes []portEpisode
	capped   []bool // per bucket
	lossy    []bool
	queued   []bool // queue outlier among equally offered siblings
	// proven: the capped buckets come from the service-rate bound
	// (backlogged-ns), not from the queue high-water.
	proven bool
	// score is the sum over flagged buckets of the capacity lost (1 −
	// rate/line) or the share of packets lost.
	score float64
}

func (v *portVerdict) start() int { return v.episodes[0].start }
func (v *portVerdict) end() int   { return v.episodes[len(v.episodes)-1].end }

// flagged reports whether bucket k is capped or lossy inside a valid
// episode.
func (v *portVerdict) inEpisode(k int) bool {
	for _, e := range v.episodes {
		if k >= e.start && k <= e.end {
			return true
		}
	}
	return false
}

// detectPort applies the per-interval culprit tests to port p and keeps
// the episodes that pass the persistence rules; nil when none does.
func (a *analyzer) detectPort(p int) *portVerdict {
	s := a.signals(p)
	if s.line <= 0 {
		return nil
	}
	o := &a.opts
	n := a.g.n
	v := &portVerdict{port: p, capped: make([]bool, n), lossy: make([]bool, n)}
	sev := make([]float64, n)
	any := false
	for k := 0; k < n; k++ {
		r := s.rate[k]
		if math.IsNaN(r) {
			continue
		}
		util := r / s.line
		// Backlogged: the queue stood above the floor and the switch said
		// so itself, by marking, dropping or trimming in the interval (a
		// burst that filled part of an interval and drained does neither).
		congested := s.marks[k]+s.drops[k]+s.trims[k] > 0
		backlogged := s.hasQueue && !math.IsNaN(s.queue[k]) && s.queue[k] >= o.BacklogBytes && congested
		switch {
		case s.hasBusy:
			// The port sent back to back for busy[k]; what it sent in the
			// interval bounds its service rate from above.
			if svc, ok := s.serviceRate(k, a.g.step); ok && svc < o.Capacity*s.line {
				v.capped[k] = true
				v.proven = true
				sev[k] = 1 - svc/s.line
				any = true
			}
		case backlogged && util < o.Capacity:
			v.capped[k] = true
			sev[k] = 1 - util
			any = true
		}
		lost, sent := s.drops[k], s.pkts[k]
		atLine := backlogged && util >= o.Capacity
		if lost >= minLostPerInterval && lost >= o.Loss*math.Max(sent, lost) && !atLine {
			v.lossy[k] = true
			sev[k] = math.Max(sev[k], math.Min(1, lost/math.Max(sent, lost)))
			any = true
		}
	}
	if !any {
		return nil
	}
	if !s.hasBusy {
		a.keepPlateaus(s, v.capped)
	}
	// Episodes: flagged buckets, with gaps of up to MergeGap unflagged
	// buckets bridged (a flapping link, a job pausing between steps).
	var eps []portEpisode
	for k := 0; k < n; k++ {
		if !v.capped[k] && !v.lossy[k] {
			continue
		}
		if m := len(eps); m > 0 && k-eps[m-1].end-1 <= o.MergeGap {
			eps[m-1].end = k
			continue
		}
		eps = append(eps, portEpisode{start: k, end: k})
	}
	for _, e := range eps {
		// Valid when it holds a capacity plateau (keepPlateaus left only
		// those) or lost at least MinLostPackets.
		cappedN, lost := 0, 0.0
		for k := e.start; k <= e.end; k++ {
			if v.capped[k] {
				cappedN++
			}
			if v.lossy[k] {
				lost += s.drops[k]
			}
		}
		// With the service-rate bound every capped interval is a
		// measurement on its own; MinBoundIntervals of them make an
		// episode.
		capped := cappedN > 0 && (!s.hasBusy || cappedN >= o.MinBoundIntervals)
		if capped || lost >= o.MinLostPackets {
			v.episodes = append(v.episodes, e)
			for k := e.start; k <= e.end; k++ {
				v.score += sev[k]
			}
		}
	}
	if len(v.episodes) == 0 {
		return nil
	}
	return v
}

// keepPlateaus clears the capped flags of every run of consecutive capped
// buckets that does not hold a plateau: MinIntervals consecutive buckets
// whose rates lie within PlateauTol of the line rate of each other. A
// degraded or shaped link serves a backlogged queue at one fixed rate; a
// healthy port whose queue filled in part of an interval and idled in the
// rest shows rates that wander.
func (a *analyzer) keepPlateaus(s *portSignals, capped []bool) {
	o := &a.opts
	// The tolerance is PlateauTol of line rate, but at least two packets
	// per interval: a counter read per interval moves in whole packets.
	var octets, pkts float64
	for k := range s.rate {
		if !math.IsNaN(s.rate[k]) {
			octets += s.rate[k] * float64(a.g.step) / 8e9
			pkts += s.pkts[k]
		}
	}
	tol := o.PlateauTol * s.line
	if pkts > 0 && a.g.step > 0 {
		tol = math.Max(tol, 2*(octets/pkts)*8/(float64(a.g.step)/1e9))
	}
	for i := 0; i < len(capped); {
		if !capped[i] {
			i++
			continue
		}
		j := i
		for j < len(capped) && capped[j] {
			j++
		}
		// [i, j) is a run; find its longest plateau.
		best := 0
		for x := i; x < j && j-x > best; x++ {
			lo, hi := s.rate[x], s.rate[x]
			y := x + 1
			for ; y < j; y++ {
				lo2, hi2 := math.Min(lo, s.rate[y]), math.Max(hi, s.rate[y])
				if hi2-lo2 > tol {
					break
				}
				lo, hi = lo2, hi2
			}
			best = max(best, y-x)
		}
		if best < o.MinIntervals {
			for k := i; k < j; k++ {
				capped[k] = false
			}
		}
		i = j
	}
}

// minLostPerInterval is the fewest drops in an interval that can make it
// lossy.
const minLostPerInterval = 2

// culprit is one anomaly under construction: one port, a link (both
// directions) or a host (its NIC and access port).
type culprit struct {
	verdicts []*portVerdict
	member   string
	link     string
	host     int // node index of the host for a host culprit, else −1
	kind     string
	cause    string
	group    string
	start    int // buckets, inclusive
	end      int
	score    float64
	victims  []results.Victim
	seen     map[string]bool // victims already listed
	vtotal   int
}

func (c *culprit) addVictim(v results.Victim) {
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if c.seen[v.Member] {
		return
	}
	c.seen[v.Member] = true
	c.vtotal++
	if len(c.victims) < maxVictims {
		c.victims = append(c.victims, v)
	}
}

// maxVictims bounds the victims listed under one anomaly (Details
// victims_total has the count).
const maxVictims = 50

// findCulprits runs the per-port detector on every port and merges the
// verdicts into culprits: the two directions of one link become one
// culprit, a host's NIC and the switch port towards it (its access link)
// become a host culprit (a slow NIC), every other port stays a port
// culprit of its symmetry group.
func (a *analyzer) findCulprits(groups []group, data []groupData) []*culprit {
	f := a.f
	var verdicts []*portVerdict
	byPort := map[int]*portVerdict{}
	for p := range f.Ports {
		if v := a.detectPort(p); v != nil {
			verdicts = append(verdicts, v)
			byPort[p] = v
		}
	}
	if strings.EqualFold(a.in.LB, "ops") {
		for _, v := range a.queueOutliers(groups, data) {
			if _, ok := byPort[v.port]; !ok {
				verdicts = append(verdicts, v)
				byPort[v.port] = v
			}
		}
	}
	groupOf := map[int]string{} // port -> symmetry group name
	for _, gr := range groups {
		if gr.kind == KindPlane || gr.kind == KindPlanes || gr.kind == KindRails {
			continue
		}
		for _, m := range gr.members {
			if len(m.ports) == 1 {
				groupOf[m.ports[0]] = gr.name
			}
		}
	}
	used := map[int]bool{}
	var out []*culprit
	for _, v := range verdicts {
		p := v.port
		if used[p] {
			continue
		}
		used[p] = true
		pt := &f.Ports[p]
		peerPort := pt.Peer
		node, peer := pt.Node, f.PeerNode(p)
		c := &culprit{verdicts: []*portVerdict{v}, host: -1}
		if pv, ok := byPort[peerPort]; ok && !used[peerPort] && overlaps(v, pv, a.opts.MergeGap) {
			used[peerPort] = true
			c.verdicts = append(c.verdicts, pv)
		}
		switch {
		case !f.Nodes[node].IsSwitch() || !f.Nodes[peer].IsSwitch():
			h, leaf := node, peer
			if f.Nodes[node].IsSwitch() {
				h, leaf = peer, node
			}
			c.host = h
			c.member = f.Nodes[h].Name
			if len(f.Nodes[h].Ports) > 1 {
				// A host with a NIC port per plane (or rail): name the
				// port whose access link is the culprit.
				nic := p
				if f.Nodes[node].IsSwitch() {
					nic = peerPort
				}
				c.member = a.portName(nic)
				c.link = f.Nodes[h].Name + "-" + f.Nodes[leaf].Name
			}
			c.kind = results.KindStraggler
			c.group = KindRail + ":" + f.Nodes[leaf].Name
		default:
			c.kind = results.KindSymmetry
			best := v
			for _, w := range c.verdicts {
				if w.score > best.score {
					best = w
				}
			}
			c.member = a.portName(best.port)
			c.group = groupOf[best.port]
			if c.group == "" {
				c.group = groupOf[p]
			}
			if len(c.verdicts) == 2 {
				l := &f.Links[pt.Link]
				c.link = f.Nodes[f.Ports[l.A].Node].Name + "-" + f.Nodes[f.Ports[l.B].Node].Name
			}
		}
		c.start, c.end = v.start(), v.end()
		capped, lossy, queued := 0, 0, 0
		for _, w := range c.verdicts {
			c.start, c.end = min(c.start, w.start()), max(c.end, w.end())
			c.score = math.Max(c.score, w.score)
			for k := range w.capped {
				if w.inEpisode(k) {
					switch {
					case w.capped[k]:
						capped++
					case w.lossy[k]:
						lossy++
					case w.queued != nil && w.queued[k]:
						queued++
					}
				}
			}
		}
		switch {
		case queued > capped+lossy:
			c.cause = results.CauseQueue
		case c.host >= 0 && capped >= lossy:
			c.cause = results.CauseSlowNIC
		case capped >= lossy:
			c.cause = results.CauseCapacity
		default:
			c.cause = results.CauseLoss
		}
		out = append(out, c)
	}
	return out
}

// queueOutliers finds, in the port groups of a spraying fabric, members
// whose queue stood above all their siblings' (and at least twice their
// median) in at least half the group's active intervals, and at least
// 2·MinIntervals of them, while carrying no more bytes than their peers
// (at most 10% above the group median). Oblivious spraying (OPS) offers
// every member the same load, so a member that queues where its siblings do not serves it
// more slowly: a degraded link whose load is below its reduced rate shows
// nothing else.
func (a *analyzer) queueOutliers(groups []group, data []groupData) []*portVerdict {
	var out []*portVerdict
	for gi, gr := range groups {
		switch gr.kind {
		case KindLeafUplinks, KindSpineDownlinks, KindSpineUplinks, KindCoreDownlinks:
		default:
			continue
		}
		if len(gr.members) < 3 {
			continue
		}
		d := data[gi]
		sigs := make([]*portSignals, len(gr.members))
		ok := true
		var means []float64
		for mi, m := range gr.members {
			if len(m.ports) != 1 {
				ok = false
				break
			}
			sigs[mi] = a.signals(m.ports[0])
			ok = ok && sigs[mi].hasQueue
			sum, n := 0.0, 0
			for k, x := range d.vals[mi] {
				if d.active[k] && !math.IsNaN(x) {
					sum += x
					n++
				}
			}
			means = append(means, sum/math.Max(float64(n), 1))
		}
		if !ok || d.nAct == 0 {
			continue
		}
		medBytes := median(means)
		sib := make([]float64, 0, len(gr.members))
		for mi := range gr.members {
			if means[mi] > 1.1*medBytes {
				continue
			}
			flags := make([]bool, a.g.n)
			count := 0
			score := 0.0
			for k := 0; k < a.g.n; k++ {
				q := sigs[mi].queue[k]
				if !d.active[k] || math.IsNaN(q) {
					continue
				}
				if sigs[mi].pausedFrac(k, a.g.step) >= pauseHeldFrac {
					// PFC held its queue: the queue is the paused
					// time's, not a slower service.
					continue
				}
				if ms := sigs[mi]; ms.rate[k] >= a.opts.Capacity*ms.line {
					// It sent at line rate: its queue is load above
					// line rate (spraying is random per packet), not a
					// slower service.
					continue
				}
				if svc, ok := sigs[mi].serviceRate(k, a.g.step); ok && svc >= a.opts.Capacity*sigs[mi].line {
					// Its service-rate bound shows it serving at line
					// rate while it was backlogged.
					continue
				}
				sib = sib[:0]
				for mj := range gr.members {
					if mj != mi && !math.IsNaN(sigs[mj].queue[k]) {
						sib = append(sib, sigs[mj].queue[k])
					}
				}
				if len(sib) < 2 {
					continue
				}
				med := median(sib)
				if med > 0 && q > slices.Max(sib) && q >= 2*med {
					flags[k] = true
					count++
					score += 1 - med/q
				}
			}
			if count < 2*a.opts.MinIntervals || 2*count < d.nAct {
				continue
			}
			v := &portVerdict{port: gr.members[mi].ports[0], capped: make([]bool, a.g.n), lossy: make([]bool, a.g.n), queued: flags, score: score}
			for k := 0; k < a.g.n; k++ {
				if !flags[k] {
					continue
				}
				if m := len(v.episodes); m > 0 && k-v.episodes[m-1].end-1 <= a.opts.MergeGap {
					v.episodes[m-1].end = k
					continue
				}
				v.episodes = append(v.episodes, portEpisode{start: k, end: k})
			}
			out = append(out, v)
		}
	}
	return out
}

// overlaps reports whether two verdicts' windows overlap or lie within gap
// buckets of each other.
func overlaps(a, b *portVerdict, gap int) bool {
	return a.start() <= b.end()+gap+1 && b.start() <= a.end()+gap+1
}

// rank orders the anomalies: highest score first, then earliest start,
// then by member, and numbers them from 1.
func rank(anoms []results.Anomaly) {
	slices.SortStableFunc(anoms, func(x, y results.Anomaly) int {
		if c := cmp.Compare(y.Score, x.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(x.StartUs, y.StartUs); c != 0 {
			return c
		}
		return strings.Compare(x.Member, y.Member)
	})
	for i := range anoms {
		anoms[i].Rank = i + 1
	}
}

// pct formats a fraction as a whole percentage.
func pct(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }

// fmtBytes formats a queue depth: "66 KB", "1.2 MB".
func fmtBytes(b float64) string {
	switch {
	case b >= 1e6:
		return fmt.Sprintf("%.1f MB", b/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.0f KB", b/1e3)
	}
	return fmt.Sprintf("%.0f B", b)
}
