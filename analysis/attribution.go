package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/fabricbench/fabricbench/results"
)

// starved is a group member carrying markedly less than its peers with no
// congestion signal of its own: a victim of a culprit elsewhere.
type starved struct {
	group string
	label string
	ports []int
	node  int // the plane's switch for a plane member, else −1
	short float64
	z     float64
	mean  float64
	med   float64
}

// attribution is the outcome of attribute.
type attribution struct {
	anomalies  []results.Anomaly
	imbalances []results.Imbalance
	matches    []results.FaultMatch
	stragglers int // anomalies of kind straggler
	symmetry   int // anomalies of kind symmetry
	hists      []results.NICHist
	trees      []results.CongestionTree
	notes      []string
}

// attribute finds the culprits of a run, hangs their victims under them,
// adds the stragglers and starved members no culprit explains, reports
// group imbalances, ranks the result and ties it to the injected faults.
func (a *analyzer) attribute(groups []group, data []groupData, stats []GroupStat, starvedBy [][]starved) attribution {
	var at attribution
	culprits := a.findCulprits(groups, data)
	culpritPort := map[int]bool{}
	for _, c := range culprits {
		for _, v := range c.verdicts {
			culpritPort[v.port] = true
		}
	}

	// Members low on bytes without a signal of their own are victims. A
	// starved member that no culprit explains stays unnamed: low bytes
	// with an empty queue is a victim's signature, and its group shows up
	// as an imbalance finding.
	for gi, list := range starvedBy {
		for _, s := range list {
			own := false
			for _, p := range s.ports {
				own = own || culpritPort[p]
			}
			if own {
				continue
			}
			if c := a.relatedCulprit(culprits, s); c != nil {
				// The evidence is over the culprit's window, not the
				// whole run: the healthy time before a fault would
				// dilute the shortfall.
				mean, med := s.mean, s.med
				if m, md, ok := windowShare(groups[gi], data[gi], s.label, c.start, c.end); ok {
					mean, med = m, md
				}
				c.addVictim(results.Victim{Member: s.label, Group: s.group,
					Why: fmt.Sprintf("carried %s vs group median %s (%s) in the culprit's window with no congestion signal of its own", fmtRate(mean), fmtRate(med), signedPercent((mean-med)/med))})
			}
		}
	}

	// Hosts whose flows cross a culprit in its window are its victims.
	explained := map[int]bool{}   // host numbers listed as victims
	hostCulprit := map[int]bool{} // node indexes of host culprits
	for _, c := range culprits {
		a.hostVictims(c, explained)
		if c.host >= 0 {
			hostCulprit[c.host] = true
		}
	}

	// PFC pause trees: the ports and hosts paused from a culprit's port
	// are its victims; a tree rooted at a healthy port (an incast
	// receiver) is informational. Either way the hosts it slowed are
	// explained, not stragglers.
	trees := a.pauseTrees(culprits)
	treeHosts := make([]map[int]string, len(trees))
	pausedGroups := map[string]bool{}
	for i, t := range trees {
		hs := a.treeHosts(t)
		treeHosts[i] = hs
		for h := range hs {
			explained[h] = true
		}
		var ports []int
		for p := range t.ports {
			ports = append(ports, p)
		}
		slices.SortFunc(ports, func(x, y int) int {
			if d := t.ports[x].hop - t.ports[y].hop; d != 0 {
				return d
			}
			return x - y
		})
		for _, p := range ports {
			pausedGroups[a.portGroup(groups, p)] = true
		}
		if t.culprit == nil {
			continue
		}
		for _, p := range ports {
			tp := t.ports[p]
			t.culprit.addVictim(results.Victim{Member: a.portName(p), Group: a.portGroup(groups, p),
				Why: fmt.Sprintf("paused by PFC %d hop(s) from the culprit: %.1f µs paused, %.0f pause frames", tp.hop, tp.pausedNs/1e3, tp.frames)})
		}
		var hs2 []int
		for h := range hs {
			hs2 = append(hs2, h)
		}
		sort.Ints(hs2)
		for _, h := range hs2 {
			if a.f.Hosts[h] != t.culprit.host {
				t.culprit.addVictim(results.Victim{Member: a.f.Host(h).Name, Group: "pfc:" + a.f.Nodes[t.node].Name, Why: hs[h]})
			}
		}
	}
	switch {
	case a.in.NoPFC != "":
		at.notes = append(at.notes, "no PFC on this backend ("+a.in.NoPFC+"): congestion spreading (pause trees) is not analysed; congestion is judged on the queue backlog, drops, marks and rates its telemetry has")
	case !a.pfcStreamed() && a.idx.step > 0:
		at.notes = append(at.notes, "no PFC counters in the telemetry: congestion spreading (pause trees) is not analysed")
	}

	// Hosts whose flows cross a hot port (backlogged at line rate: a
	// healthy port that is oversubscribed, e.g. by ECMP collisions) are
	// slowed by that congestion, not by their own NIC.
	hot := a.hotPorts(culpritPort)
	// Stragglers: hosts stuck between idle and line rate that no culprit
	// or congestion explains are culprits of their own.
	var strag []results.Anomaly
	for ji := range a.in.Jobs {
		j := &a.in.Jobs[ji]
		cands, hists := a.stragglers(j)
		at.hists = append(at.hists, hists...)
		for _, s := range cands {
			if explained[s.host] || hostCulprit[a.f.Hosts[s.host]] || a.crossesHot(j, s.host, hot) || a.congested(j, s) {
				continue
			}
			strag = append(strag, s.anomaly)
		}
	}

	for _, c := range culprits {
		at.anomalies = append(at.anomalies, a.culpritAnomaly(c, groups))
	}
	at.anomalies = append(at.anomalies, strag...)
	rank(at.anomalies)
	for i, t := range trees {
		r := 0
		if c := t.culprit; c != nil {
			for _, an := range at.anomalies {
				if an.Member == c.member && an.Kind == c.kind && an.Group == c.group {
					r = an.Rank
				}
			}
		}
		at.trees = append(at.trees, a.treeResult(t, r, treeHosts[i]))
	}
	a.pausedGroups = pausedGroups
	for _, an := range at.anomalies {
		if an.Kind == results.KindStraggler {
			at.stragglers++
		} else {
			at.symmetry++
		}
	}
	at.imbalances = a.imbalances(groups, stats, at.anomalies)
	at.matches = a.matchFaults(at.anomalies)
	return at
}

// windowShare returns the mean rate of group member label and the median
// of the members' means over buckets from..to (inclusive), counting only
// the group's active buckets when it has any there; ok is false when the
// member or a positive median is missing.
func windowShare(gr group, d groupData, label string, from, to int) (mean, med float64, ok bool) {
	mi := slices.IndexFunc(gr.members, func(m member) bool { return m.label == label })
	if mi < 0 || mi >= len(d.vals) {
		return 0, 0, false
	}
	from, to = max(from, 0), min(to, len(d.active)-1)
	anyActive := false
	for k := from; k <= to; k++ {
		anyActive = anyActive || d.active[k]
	}
	means := make([]float64, len(d.vals))
	var valid []float64
	for m, v := range d.vals {
		sum, n := 0.0, 0
		for k := from; k <= to && k < len(v); k++ {
			if math.IsNaN(v[k]) || (anyActive && !d.active[k]) {
				continue
			}
			sum += v[k]
			n++
		}
		means[m] = math.NaN()
		if n > 0 {
			means[m] = sum / float64(n)
			valid = append(valid, means[m])
		}
	}
	med = median(valid)
	if math.IsNaN(means[mi]) || !(med > 0) {
		return 0, 0, false
	}
	return means[mi], med, true
}

// hotPorts are the switch ports, other than culprits, that were
// backlogged (queue at least BacklogBytes and marking, dropping or
// trimming) while transmitting at Capacity or more of line rate in at
// least MinIntervals intervals.
func (a *analyzer) hotPorts(culprit map[int]bool) []int {
	var out []int
	for p := range a.f.Ports {
		if culprit[p] || !a.f.Nodes[a.f.Ports[p].Node].IsSwitch() {
			continue
		}
		s := a.signals(p)
		if !s.hasQueue || s.line <= 0 {
			continue
		}
		n := 0
		for k := range s.rate {
			if math.IsNaN(s.rate[k]) || math.IsNaN(s.queue[k]) {
				continue
			}
			if s.queue[k] >= a.opts.BacklogBytes && s.marks[k]+s.drops[k]+s.trims[k] > 0 && s.rate[k] >= a.opts.Capacity*s.line {
				n++
			}
		}
		if n >= a.opts.MinIntervals {
			out = append(out, p)
		}
	}
	return out
}

// crossesHot reports whether a flow of job j from or to host h may cross
// one of the hot ports.
func (a *analyzer) crossesHot(j *JobInput, h int, hot []int) bool {
	if len(hot) == 0 {
		return false
	}
	for fi := range j.Flows {
		fl := &j.Flows[fi]
		if fl.Src != h && fl.Dst != h {
			continue
		}
		src, dst := a.f.Hosts[fl.Src], a.f.Hosts[fl.Dst]
		for _, p := range hot {
			if a.mayCross(src, dst, p) {
				return true
			}
		}
	}
	return false
}

// relatedCulprit picks the culprit a starved member is a victim of: one
// whose ports touch the member's switch (or the plane's switch), else the
// highest-scoring one; nil when there are none.
func (a *analyzer) relatedCulprit(cs []*culprit, s starved) *culprit {
	if len(cs) == 0 {
		return nil
	}
	nodes := map[int]bool{}
	if s.node >= 0 {
		nodes[s.node] = true
	}
	for _, p := range s.ports {
		nodes[a.f.Ports[p].Node] = true
		nodes[a.f.PeerNode(p)] = true
	}
	var best *culprit
	for _, c := range cs {
		touches := false
		for _, v := range c.verdicts {
			touches = touches || nodes[a.f.Ports[v.port].Node] || nodes[a.f.PeerNode(v.port)]
		}
		if touches && (best == nil || c.score > best.score) {
			best = c
		}
	}
	if best != nil {
		return best
	}
	for _, c := range cs {
		if best == nil || c.score > best.score {
			best = c
		}
	}
	return best
}

// hostVictims lists under c the hosts with a flow that may cross c (a
// shortest path through one of its ports, or the culprit host itself as
// source or destination) while c was abnormal.
func (a *analyzer) hostVictims(c *culprit, explained map[int]bool) {
	ws, we := a.g.startNs(c.start), a.g.endNs(c.end)
	type why struct {
		job   string
		flows int
		peer  string
	}
	hit := map[int]*why{}
	order := []int{}
	mark := func(h int, job, peer string) {
		if w, ok := hit[h]; ok {
			w.flows++
			return
		}
		hit[h] = &why{job: job, flows: 1, peer: peer}
		order = append(order, h)
	}
	a.flowsDuring(ws, we, func(j *JobInput, fl *FlowRecord, src, dst int) {
		if c.host >= 0 {
			switch c.host {
			case src:
				mark(fl.Dst, j.Name, "receives from "+c.member)
			case dst:
				mark(fl.Src, j.Name, "sends to "+c.member)
			}
			return
		}
		for _, v := range c.verdicts {
			if a.mayCross(src, dst, v.port) {
				mark(fl.Src, j.Name, "")
				mark(fl.Dst, j.Name, "")
				return
			}
		}
	})
	for _, h := range order {
		if a.f.Hosts[h] == c.host {
			continue
		}
		w := hit[h]
		explained[h] = true
		reason := w.peer
		if reason == "" {
			reason = fmt.Sprintf("%d flow(s) may cross %s", w.flows, c.label())
		} else if w.flows > 1 {
			reason += fmt.Sprintf(" (%d flows)", w.flows)
		}
		c.addVictim(results.Victim{Member: a.f.Host(h).Name, Group: "job:" + w.job, Why: reason})
	}
}

// flowSpan is when flow fl ran, in ns since the telemetry's epoch: from
// its start to its completion, or on for ever when it never completed.
// fl must have started (Start >= 0).
func (a *analyzer) flowSpan(fl *FlowRecord) (start, end int64) {
	start = a.in.EpochNs + fl.Start/1000
	end = int64(math.MaxInt64)
	if fl.FCT >= 0 {
		end = a.in.EpochNs + (fl.Start+fl.FCT)/1000
	}
	return start, end
}

// flowsDuring calls fn with each flow of every job that started and was
// running at some time in [ws, we) (ns since the epoch), with its job
// and its source and destination host nodes.
func (a *analyzer) flowsDuring(ws, we int64, fn func(j *JobInput, fl *FlowRecord, src, dst int)) {
	for ji := range a.in.Jobs {
		j := &a.in.Jobs[ji]
		for fi := range j.Flows {
			fl := &j.Flows[fi]
			if fl.Start < 0 {
				continue
			}
			if fs, fe := a.flowSpan(fl); fe <= ws || fs >= we {
				continue
			}
			fn(j, fl, a.f.Hosts[fl.Src], a.f.Hosts[fl.Dst])
		}
	}
}

// label names a culprit in victim texts.
func (c *culprit) label() string {
	if c.link != "" {
		return "link " + c.link
	}
	return c.member
}

// crosses reports whether port p (from its node to its peer) lies on a
// shortest path from node src to node dst.
func (a *analyzer) crosses(src, dst, p int) bool {
	u, w := a.f.Ports[p].Node, a.f.PeerNode(p)
	ds := a.dist(src)
	dw := a.dist(w)
	if ds[dst] < 0 || ds[u] < 0 || dw[dst] < 0 {
		return false
	}
	return ds[u]+1+dw[dst] == ds[dst]
}

// dist returns (and caches) hop distances from node u to every node, −1
// where unreachable.
func (a *analyzer) dist(u int) []int {
	if d, ok := a.dists[u]; ok {
		return d
	}
	f := a.f
	d := unreached(len(f.Nodes), u)
	queue := []int{u}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, p := range f.Nodes[x].Ports {
			y := f.PeerNode(p)
			if d[y] < 0 {
				d[y] = d[x] + 1
				// Hosts do not forward.
				if f.Nodes[y].IsSwitch() {
					queue = append(queue, y)
				}
			}
		}
	}
	a.dists[u] = d
	return d
}

// unreached is a distance vector over n nodes before a search from node
// u: 0 at u, −1 (not reached) elsewhere.
func unreached(n, u int) []int {
	d := make([]int, n)
	for i := range d {
		d[i] = -1
	}
	d[u] = 0
	return d
}

// culpritAnomaly turns a culprit into its anomaly: window, signals next to
// its group's baseline, evidence and victims.
func (a *analyzer) culpritAnomaly(c *culprit, groups []group) results.Anomaly {
	// Aggregate the culprit's own signals over its flagged buckets.
	var rateSum, rateN, qSum, qN, lost, sent, marks, drops, trims float64
	var cappedN, lossyN int
	for _, v := range c.verdicts {
		s := a.signals(v.port)
		for k := c.start; k <= c.end; k++ {
			marks += s.marks[k]
			drops += s.drops[k]
			trims += s.trims[k]
			if !v.inEpisode(k) {
				continue
			}
			if v.capped[k] {
				cappedN++
				rateSum += s.rate[k] / s.line
				rateN++
				if !math.IsNaN(s.queue[k]) {
					qSum += s.queue[k]
					qN++
				}
			}
			if v.lossy[k] {
				lossyN++
				lost += s.drops[k]
				sent += math.Max(s.pkts[k], s.drops[k])
			}
		}
	}
	an := results.Anomaly{
		Kind: c.kind, Group: c.group, Member: c.member, Link: c.link, Cause: c.cause,
		Score:   round(c.score, 3),
		StartUs: round(float64(a.g.startNs(c.start)-a.in.EpochNs)/1e3, 3),
		EndUs:   round(a.g.endUs(c.end), 3),
		Details: map[string]float64{},
	}
	// Baselines: the other members of the culprit port's group over the
	// same buckets.
	sib := a.siblings(c, groups)
	base := func(fn func(s *portSignals) (float64, bool)) float64 {
		var vals []float64
		for _, p := range sib {
			if x, ok := fn(a.signals(p)); ok {
				vals = append(vals, x)
			}
		}
		if len(vals) == 0 {
			return -1
		}
		return median(vals)
	}
	window := func(s *portSignals, fn func(k int) (float64, bool)) (float64, bool) {
		sum, n := 0.0, 0
		for k := c.start; k <= c.end; k++ {
			if x, ok := fn(k); ok {
				sum += x
				n++
			}
		}
		if n == 0 {
			return 0, false
		}
		return sum / float64(n), true
	}
	sig := func(name string, val, baseline float64, unit string, dec int) {
		if baseline >= 0 {
			baseline = round(baseline, dec)
		}
		an.Signals = append(an.Signals, results.Signal{Name: name, Value: round(val, dec), Baseline: baseline, Unit: unit})
		an.Details[name] = round(val, dec)
	}
	var parts []string
	if rateN > 0 {
		util := rateSum / rateN
		b := base(func(s *portSignals) (float64, bool) {
			return window(s, func(k int) (float64, bool) {
				if math.IsNaN(s.rate[k]) || math.IsNaN(s.queue[k]) || s.queue[k] < a.opts.BacklogBytes || s.line <= 0 {
					return 0, false
				}
				return s.rate[k] / s.line, true
			})
		})
		sig("rate_util", util, b, "fraction of line rate", 3)
		q := qSum / math.Max(qN, 1)
		qb := base(func(s *portSignals) (float64, bool) {
			return window(s, func(k int) (float64, bool) { return s.queue[k], !math.IsNaN(s.queue[k]) })
		})
		sig("queue_bytes", q, qb, "bytes", 0)
		span := float64(c.end - c.start + 1)
		sig("backlog_util", float64(cappedN)/span, -1, "fraction of window intervals", 3)
		line := a.signals(c.verdicts[0].port).line
		txt := fmt.Sprintf("sent at %s of its %s line rate in %s while its queue held %s", pct(util), fmtRate(line), nIntervals(cappedN), fmtBytes(q))
		if b >= 0 {
			txt += fmt.Sprintf(" (group: %s at %s)", pct(b), fmtBytes(math.Max(qb, 0)))
		}
		parts = append(parts, txt)
	}
	// The service-rate bound, where the ports stream backlogged-ns.
	var svcSum, svcN, busySum float64
	for _, v := range c.verdicts {
		if !v.proven {
			continue
		}
		s := a.signals(v.port)
		for k := c.start; k <= c.end; k++ {
			if v.inEpisode(k) && v.capped[k] {
				if x, ok := s.serviceRate(k, a.g.step); ok {
					svcSum += x / s.line
					svcN++
					busySum += s.busy[k]
				}
			}
		}
	}
	if svcN > 0 {
		b := base(func(s *portSignals) (float64, bool) {
			return window(s, func(k int) (float64, bool) {
				x, ok := s.serviceRate(k, a.g.step)
				return x / s.line, ok && s.line > 0
			})
		})
		sig("service_rate", svcSum/svcN, b, "fraction of line rate", 3)
		txt := fmt.Sprintf("served its queue at no more than %s of line rate (bytes sent over %.0f µs backlogged in %s)",
			pct(svcSum/svcN), busySum/1e3, nIntervals(int(svcN)))
		if b >= 0 {
			txt += fmt.Sprintf(" (group: %s)", pct(b))
		}
		parts = append(parts, txt)
	}
	if lossyN > 0 {
		loss := lost / math.Max(sent, 1)
		b := base(func(s *portSignals) (float64, bool) {
			d, n := 0.0, 0.0
			for k := c.start; k <= c.end; k++ {
				d += s.drops[k]
				n += math.Max(s.pkts[k], s.drops[k])
			}
			return d / math.Max(n, 1), n > 0
		})
		sig("loss", loss, b, "dropped / transmitted packets", 3)
		txt := fmt.Sprintf("dropped %s of the packets it transmitted (%.0f) in %s", pct(loss), lost, nIntervals(lossyN))
		if b >= 0 {
			txt += fmt.Sprintf(" (group: %s)", pct(b))
		}
		parts = append(parts, txt)
	}
	if c.cause == results.CauseQueue {
		v := c.verdicts[0]
		s := a.signals(v.port)
		var q, n, flagged float64
		for k := c.start; k <= c.end; k++ {
			if v.queued != nil && v.queued[k] {
				q += s.queue[k]
				n++
			}
			if v.inEpisode(k) && v.queued != nil && v.queued[k] {
				flagged++
			}
		}
		q /= math.Max(n, 1)
		qb := base(func(s *portSignals) (float64, bool) {
			return window(s, func(k int) (float64, bool) { return s.queue[k], !math.IsNaN(s.queue[k]) })
		})
		sig("queue_bytes", q, qb, "bytes", 0)
		sig("backlog_util", flagged/float64(c.end-c.start+1), -1, "fraction of window intervals", 3)
		txt := fmt.Sprintf("queued %s (interval high-water) in %s where every equally loaded sibling queued less", fmtBytes(q), nIntervals(int(flagged)))
		if qb >= 0 {
			txt += fmt.Sprintf(" (group median %s)", fmtBytes(qb))
		}
		parts = append(parts, txt+": it serves its share more slowly")
	}
	sum := func(name string, val float64, sel func(s *portSignals) []float64) {
		b := base(func(s *portSignals) (float64, bool) {
			x := 0.0
			for k := c.start; k <= c.end; k++ {
				x += sel(s)[k]
			}
			return x, true
		})
		sig(name, val, b, "packets", 0)
	}
	sum("ecn_marks", marks, func(s *portSignals) []float64 { return s.marks })
	sum("drops", drops, func(s *portSignals) []float64 { return s.drops })
	sum("trims", trims, func(s *portSignals) []float64 { return s.trims })
	if marks > 0 {
		parts = append(parts, fmt.Sprintf("%.0f ECN marks", marks))
	}
	an.Details["victims_total"] = float64(c.vtotal)
	an.Victims = c.victims
	who := c.member
	if c.link != "" {
		who = "link " + c.link + " (" + c.member + " worst)"
	}
	if c.host >= 0 {
		who = c.member + "'s NIC/access link"
	}
	// Victims are listed in their own field (and counted in Details
	// victims_total); the evidence is the culprit's own signals.
	an.Evidence = fmt.Sprintf("%s %s", who, strings.Join(parts, "; "))
	return an
}

// siblings are the ports of the other members of the culprit port's
// group (for a host culprit: the other access ports of its leaf).
func (a *analyzer) siblings(c *culprit, groups []group) []int {
	mine := map[int]bool{}
	for _, v := range c.verdicts {
		mine[v.port] = true
	}
	ref := c.verdicts[0].port
	if c.host >= 0 {
		// The switch side of the access link is the one with a queue.
		for _, v := range c.verdicts {
			if a.f.Nodes[a.f.Ports[v.port].Node].IsSwitch() {
				ref = v.port
			}
		}
		if !a.f.Nodes[a.f.Ports[ref].Node].IsSwitch() {
			ref = a.f.Ports[ref].Peer
		}
		var out []int
		for _, p := range a.f.Nodes[a.f.Ports[ref].Node].Ports {
			if p != ref && !a.f.Nodes[a.f.PeerNode(p)].IsSwitch() {
				out = append(out, p)
			}
		}
		return out
	}
	for _, gr := range groups {
		if gr.kind == KindPlane || gr.kind == KindRail || gr.kind == KindPlanes || gr.kind == KindRails {
			continue
		}
		has := false
		for _, m := range gr.members {
			has = has || (len(m.ports) == 1 && m.ports[0] == ref)
		}
		if !has {
			continue
		}
		var out []int
		for _, m := range gr.members {
			if len(m.ports) == 1 && !mine[m.ports[0]] {
				out = append(out, m.ports[0])
			}
		}
		return out
	}
	return nil
}

// imbalances reports the load-balanced groups whose members' loads spread
// beyond the thresholds and that no anomaly touches.
func (a *analyzer) imbalances(groups []group, stats []GroupStat, anoms []results.Anomaly) []results.Imbalance {
	touched := map[string]bool{}
	for g := range a.pausedGroups {
		// PFC held these members back: their spread is the pause
		// tree's, reported with it.
		touched[g] = true
	}
	for _, an := range anoms {
		touched[an.Group] = true
		for _, v := range an.Victims {
			touched[v.Group] = true
		}
	}
	var out []results.Imbalance
	for gi, gr := range groups {
		st := stats[gi]
		lowDiam := false
		switch gr.kind {
		case KindLeafUplinks, KindSpineUplinks, KindPlane, KindPlanes, KindRails:
		case KindGlobalLinks, KindLocalLinks:
			// A Dragonfly's or Slim Fly's links: a hot link healthy
			// routing explains is a group finding, not an anomaly.
			lowDiam = true
		default:
			continue // downlinks and rails follow the traffic matrix
		}
		if !st.Active || touched[gr.name] || len(gr.members) < 2 {
			continue
		}
		var vals []float64
		var names []string
		for mi, m := range st.Means {
			if m >= 0 {
				vals = append(vals, m)
				names = append(names, st.Members[mi])
			}
		}
		if len(vals) < 2 {
			continue
		}
		var hot []int // member indexes
		if lowDiam {
			for mi, m := range gr.members {
				if len(m.ports) == 1 && a.hotIntervals(m.ports[0]) >= a.opts.MinIntervals {
					hot = append(hot, mi)
				}
			}
		}
		cv, maxMin, jain := spread(vals)
		// A low-diameter group's loads follow the traffic matrix and the
		// routing (as downlinks do): only a hot member makes a finding.
		if lowDiam && len(hot) == 0 || !lowDiam && cv < a.opts.ImbalanceCV {
			continue
		}
		hi, lo := 0, 0
		for i, v := range vals {
			if v > vals[hi] {
				hi = i
			}
			if v < vals[lo] {
				lo = i
			}
		}
		ev := fmt.Sprintf("%d members: CV %.2f, Jain %.2f; %s carried %s, %s %s", len(vals), cv, jain,
			names[hi], fmtRate(vals[hi]), names[lo], fmtRate(vals[lo]))
		if maxMin > 0 {
			ev += fmt.Sprintf(" (max/min %.1f)", maxMin)
		}
		im := results.Imbalance{Group: gr.name, Kind: gr.kind, Members: len(vals),
			CV: round(cv, 4), MaxMin: round(maxMin, 3), Jain: round(jain, 4),
			MaxMember: names[hi], MinMember: names[lo]}
		if len(hot) > 0 {
			var ports []int
			for _, mi := range hot {
				im.Hot = append(im.Hot, gr.members[mi].label)
				ports = append(ports, gr.members[mi].ports[0])
			}
			im.Victims = a.hotVictims(ports)
			ev += fmt.Sprintf("; hot (at line rate with a standing, marked queue in %d+ intervals): %s, which slowed %d host(s): congestion the routing explains, not a fault",
				a.opts.MinIntervals, strings.Join(im.Hot, ", "), len(im.Victims))
		}
		im.Evidence = ev
		out = append(out, im)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CV > out[j].CV })
	return out
}

// spread returns the coefficient of variation (population), max/min (0
// when the minimum is 0) and Jain's fairness index of v.
func spread(v []float64) (cv, maxMin, jain float64) {
	var sum, sq, lo, hi float64
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		sum += x
		sq += x * x
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	n := float64(len(v))
	mean := sum / n
	if mean <= 0 {
		return 0, 0, 1
	}
	variance := math.Max(sq/n-mean*mean, 0)
	cv = math.Sqrt(variance) / mean
	if lo > 0 {
		maxMin = hi / lo
	}
	jain = sum * sum / (n * sq)
	return cv, maxMin, jain
}

// maxMean returns the max-mean ratio of v (1 when the mean is 0).
func maxMean(v []float64) float64 {
	var sum, hi float64
	for _, x := range v {
		sum += x
		hi = math.Max(hi, x)
	}
	if sum <= 0 {
		return 1
	}
	return hi / (sum / float64(len(v)))
}

// matchFaults groups the injected fault events by suite fault entry and
// ties each to the best-ranked anomaly whose culprit is what the fault hit
// (a port, either end of its link, its host) in an overlapping window
// (within two sample intervals). Anomalies get the IDs they explain.
func (a *analyzer) matchFaults(anoms []results.Anomaly) []results.FaultMatch {
	type entry struct {
		m     results.FaultMatch
		links map[string]bool
		open  bool // the fault was still in force at the end
		state bool // it takes links down (down, flap): either end names it
	}
	var order []string
	byID := map[string]*entry{}
	for _, ft := range a.in.Faults {
		id := ft.ID
		if id == "" {
			continue
		}
		e, ok := byID[id]
		if !ok {
			e = &entry{m: results.FaultMatch{ID: id, Description: ft.Description, Ports: ft.Ports, Host: ft.Host, StartUs: ft.AtUs, EndUs: -1}, links: map[string]bool{}}
			byID[id] = e
			order = append(order, id)
			for _, p := range ft.Ports {
				for _, l := range a.linksOfPort(p) {
					e.links[l] = true
				}
			}
		}
		e.m.StartUs = math.Min(e.m.StartUs, ft.AtUs)
		if ft.Kind == "down" || ft.Kind == "flap-down" {
			e.state = true
		}
		switch ft.Kind {
		case "up", "restore", "flap-up":
			e.m.EndUs = math.Max(e.m.EndUs, ft.AtUs)
			e.open = false
		default:
			e.open = true
		}
	}
	slack := 2 * float64(a.g.step) / 1e3
	var out []results.FaultMatch
	for _, id := range order {
		e := byID[id]
		if e.open {
			e.m.EndUs = -1
		}
		end := e.m.EndUs
		if end < 0 {
			end = math.Inf(1)
		}
		for i := range anoms {
			an := &anoms[i]
			hit := slices.Contains(e.m.Ports, an.Member) || (e.m.Host != "" && an.Member == e.m.Host) || (an.Link != "" && e.links[an.Link])
			if !hit && e.state {
				// A port taken down takes its link down: the port at
				// the other end names it too.
				for _, l := range a.linksOfPort(an.Member) {
					hit = hit || e.links[l]
				}
			}
			if !hit && an.Kind == results.KindStraggler && e.m.Host == "" {
				// A host culprit explains a fault on its NIC's port.
				for _, p := range e.m.Ports {
					dev, _, _ := strings.Cut(p, ":")
					hit = hit || dev == an.Member || a.accessPortOf(an.Member) == p
				}
			}
			if !hit || an.StartUs > end+slack || an.EndUs < e.m.StartUs-slack {
				continue
			}
			if e.m.Anomaly == 0 {
				e.m.Anomaly = an.Rank
			}
			if !slices.Contains(an.Faults, id) {
				an.Faults = append(an.Faults, id)
			}
		}
		out = append(out, e.m)
	}
	return out
}

// linksOfPort names the link of port "device:port" both ways ("A-B" and
// "B-A").
func (a *analyzer) linksOfPort(name string) []string {
	dev, pname, _ := strings.Cut(name, ":")
	n, ok := a.f.NodeByName(dev)
	if !ok {
		return nil
	}
	for _, p := range a.f.Nodes[n].Ports {
		if a.f.Ports[p].Name == pname {
			peer := a.f.Nodes[a.f.PeerNode(p)].Name
			return []string{dev + "-" + peer, peer + "-" + dev}
		}
	}
	return nil
}

// accessPortOf is the switch port facing host h ("leaf1:Ethernet2"), "" if
// h is not a host.
func (a *analyzer) accessPortOf(host string) string {
	n, ok := a.f.NodeByName(host)
	if !ok || a.f.Nodes[n].IsSwitch() || len(a.f.Nodes[n].Ports) == 0 {
		return ""
	}
	return a.portName(a.f.Ports[a.f.Nodes[n].Ports[0]].Peer)
}

// nIntervals is "1 interval" or "n intervals".
func nIntervals(n int) string {
	if n == 1 {
		return "1 interval"
	}
	return fmt.Sprintf("%d intervals", n)
}

// portGroup is the symmetry group of port p (a single-port member), ""
// when it is in none.
func (a *analyzer) portGroup(groups []group, p int) string {
	for _, gr := range groups {
		if gr.kind == KindPlane || gr.kind == KindPlanes || gr.kind == KindRails {
			continue
		}
		for _, m := range gr.members {
			if len(m.ports) == 1 && m.ports[0] == p {
				return gr.name
			}
		}
	}
	return ""
}

// hotAt reports whether switch port p was hot in bucket k: backlogged
// (queue at least BacklogBytes, the switch marking, dropping or trimming)
// while sending at Capacity or more of its line rate, or held by PFC
// pauses (paused for pauseHeldFrac of the interval).
func (a *analyzer) hotAt(p, k int) bool {
	s := a.signals(p)
	if s.line <= 0 {
		return false
	}
	if s.pausedFrac(k, a.g.step) >= pauseHeldFrac {
		return true
	}
	if !s.hasQueue || math.IsNaN(s.rate[k]) || math.IsNaN(s.queue[k]) {
		return false
	}
	return s.queue[k] >= a.opts.BacklogBytes && s.marks[k]+s.drops[k]+s.trims[k] > 0 && s.rate[k] >= a.opts.Capacity*s.line
}

// hotPortsAt lists (and caches) the hot switch ports of bucket k.
func (a *analyzer) hotPortsAt(k int) []int {
	if a.hotBy == nil {
		a.hotBy = map[int][]int{}
	}
	if v, ok := a.hotBy[k]; ok {
		return v
	}
	var out []int
	for p := range a.f.Ports {
		if a.f.Nodes[a.f.Ports[p].Node].IsSwitch() && a.hotAt(p, k) {
			out = append(out, p)
		}
	}
	a.hotBy[k] = out
	return out
}

// congested reports whether straggler candidate c of job j was slowed by
// congestion on its paths: in at least half of the intervals its NIC sat
// in the middle bands, a flow of the host that was running may cross a
// port that was hot in that interval (the CC slowed it down: a victim of
// the hot port, not a throttled NIC).
func (a *analyzer) congested(j *JobInput, c stragCand) bool {
	if len(c.middle) == 0 {
		return false
	}
	explained := 0
	for _, k := range c.middle {
		ks, ke := a.g.startNs(k), a.g.endNs(k)
		hot := a.hotPortsAt(k)
		found := false
		for fi := range j.Flows {
			fl := &j.Flows[fi]
			if found || fl.Start < 0 || (fl.Src != c.host && fl.Dst != c.host) {
				continue
			}
			fs, fe := a.flowSpan(fl)
			if fe <= ks || fs >= ke {
				continue
			}
			src, dst := a.f.Hosts[fl.Src], a.f.Hosts[fl.Dst]
			for _, p := range hot {
				if a.mayCross(src, dst, p) {
					found = true
					break
				}
			}
		}
		if found {
			explained++
		}
	}
	return 2*explained >= len(c.middle)
}

// hotIntervals counts the buckets in which port p was hot (hotAt).
func (a *analyzer) hotIntervals(p int) int {
	n := 0
	for k := 0; k < a.g.n; k++ {
		if a.hotAt(p, k) {
			n++
		}
	}
	return n
}

// hotVictims lists the hosts (at most maxVictims, by name) with a flow
// that may cross one of ports in a bucket in which the port was hot.
func (a *analyzer) hotVictims(ports []int) []string {
	hit := map[int]bool{}
	for ji := range a.in.Jobs {
		j := &a.in.Jobs[ji]
		for fi := range j.Flows {
			fl := &j.Flows[fi]
			if fl.Start < 0 || hit[fl.Src] && hit[fl.Dst] {
				continue
			}
			fs, fe := a.flowSpan(fl)
			src, dst := a.f.Hosts[fl.Src], a.f.Hosts[fl.Dst]
			for _, p := range ports {
				if !a.mayCross(src, dst, p) {
					continue
				}
				during := false
				for k := 0; k < a.g.n && !during; k++ {
					during = a.hotAt(p, k) && a.g.endNs(k) > fs && a.g.startNs(k) < fe
				}
				if during {
					hit[fl.Src], hit[fl.Dst] = true, true
					break
				}
			}
		}
	}
	var hs []int
	for h := range hit {
		hs = append(hs, h)
	}
	sort.Ints(hs)
	var out []string
	for _, h := range hs {
		if len(out) < maxVictims {
			out = append(out, a.f.Host(h).Name)
		}
	}
	return out
}
