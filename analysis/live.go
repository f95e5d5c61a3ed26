package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// This file is the analysis while the run goes (see the package
// documentation, "Found while the run goes").

// Live defaults.
const (
	// DefaultLiveHorizon is how many sample intervals back a window
	// analysis looks: enough for every persistence rule of the culprit
	// tests (a plateau of MinIntervals, the queue test's 2·MinIntervals).
	DefaultLiveHorizon = 32
	// maxLiveWork bounds the work of one window analysis (ports times
	// horizon intervals): larger fabrics analyse every few intervals
	// instead of every one (LiveEvery).
	maxLiveWork = 200_000
)

// Detection is an anomaly a window analysis reported while the run went.
type Detection struct {
	Member, Link, Kind, Cause, Group string
	// StartNs is the start of its first abnormal interval and DetectedNs
	// the end of the window whose analysis first reported it, both ns
	// since the Unix epoch (telemetry time).
	StartNs, DetectedNs int64
	Evidence            string
}

// String describes the detection on one line.
func (d Detection) String() string {
	who := d.Member
	if d.Link != "" {
		who = "link " + d.Link
	}
	return fmt.Sprintf("%s (%s/%s): %s", who, d.Kind, d.Cause, d.Evidence)
}

// names are the identities a detection or anomaly answers to: its member,
// its link and the link's two ends.
func names(member, link string) []string {
	out := []string{member}
	if link != "" {
		out = append(out, link)
	}
	return out
}

// LiveEvery is how many sample intervals apart window analyses run on a
// fabric with ports ports: every interval while ports × horizon stays
// within maxLiveWork, proportionally less often beyond.
func LiveEvery(ports, horizon int) int {
	return max(1, (ports*horizon+maxLiveWork-1)/maxLiveWork)
}

// Live runs one analysis per telemetry window while samples arrive: a
// window ends every Every sample intervals, and its analysis looks at the
// last Horizon intervals of every port's signals with the culprit
// detector of Analyze (per-port tests, link and host merging). It runs
// once every expected target has sent a sample after the window's end
// (the watermark), so it sees exactly the telemetry up to the window's
// end whatever the order samples arrive in: its results depend on the
// telemetry alone. Not safe for concurrent use.
type Live struct {
	in      Input
	opts    Options
	idx     *Index
	step    int64
	every   int
	horizon int
	origin  int64 // time of the first sample; windows end at origin + m·every·step
	next    int64 // end of the next window to analyse
	started bool
	latest  map[string]int64 // target -> latest sample time
	firstT  map[string]int64 // target -> first sample time
	expect  map[string]bool  // targets the watermark waits for (nil: every target seen)
	groups  []group
	found   map[string]bool // identities already reported
	dets    []Detection
	queues  map[[2]string]string // (target, interface) -> first queue name, as analyzer.queueName
	busyOK  bool                 // the backlogged-ns counters count (analyzer.busyStreamed)
	pser    []*portSeries        // the ports' series, looked up once (analyzer.portSeries)
}

// NewLive prepares the window analysis of a run: in gives the fabric, the
// load balancer, the routing and the options (Samples, Jobs and Faults
// are not used; EpochNs is taken from the first sample), stepNs is the
// telemetry sample interval, every and horizon the window cadence and
// reach in intervals (0: LiveEvery and DefaultLiveHorizon).
func NewLive(in Input, stepNs int64, every, horizon int) (*Live, error) {
	if in.Fabric == nil {
		return nil, fmt.Errorf("analysis: no fabric")
	}
	if stepNs <= 0 {
		return nil, fmt.Errorf("analysis: sample interval %d ns, want > 0", stepNs)
	}
	opts, err := in.Opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("analysis: %v", err)
	}
	if horizon <= 0 {
		horizon = DefaultLiveHorizon
	}
	if every <= 0 {
		every = LiveEvery(len(in.Fabric.Ports), horizon)
	}
	in.Samples, in.Jobs, in.Faults = nil, nil, nil
	l := &Live{in: in, opts: opts, idx: &Index{series: map[telemetry.Key]*Series{}, step: stepNs}, step: stepNs,
		every: every, horizon: horizon, latest: map[string]int64{}, firstT: map[string]int64{}, found: map[string]bool{}, queues: map[[2]string]string{}}
	a := &analyzer{in: in, f: in.Fabric, opts: opts, idx: l.idx}
	l.groups = a.buildGroups()
	return l, nil
}

// Origin is the time of the first sample (ns since the Unix epoch; 0
// before any): windows end at Origin plus multiples of Every intervals.
func (l *Live) Origin() int64 { return l.origin }

// Every is the number of sample intervals between window analyses.
func (l *Live) Every() int { return l.every }

// Expect names the targets whose samples a window waits for: its analysis
// runs once each of them has sent a sample after its end (and the
// first window once each has sent one). Without Expect, the targets that
// have sent samples so far.
func (l *Live) Expect(targets []string) {
	l.expect = map[string]bool{}
	for _, t := range targets {
		l.expect[t] = true
	}
}

// Drop stops waiting for a target (one that stopped sending: a device
// that failed): the windows go on without it.
func (l *Live) Drop(target string) { delete(l.expect, target) }

// Add takes samples as they arrive, runs the analysis of every window the
// watermark has passed, and returns the anomalies first reported by them.
func (l *Live) Add(batch []telemetry.Sample) []Detection {
	for i := range batch {
		s := &batch[i]
		l.idx.add(s)
		if s.Measurement == telemetry.MeasQueue {
			id := [2]string{s.Target, s.Interface}
			if q, ok := l.queues[id]; !ok || s.Queue < q {
				l.queues[id] = s.Queue
			}
		}
		if t, ok := l.latest[s.Target]; !ok || s.Time > t {
			l.latest[s.Target] = s.Time
		}
		if t, ok := l.firstT[s.Target]; !ok || s.Time < t {
			l.firstT[s.Target] = s.Time
		}
	}
	water, ok := l.watermark()
	if !ok {
		return nil
	}
	if !l.started {
		l.started = true
		l.origin = int64(math.MaxInt64)
		for _, t := range l.firstT {
			l.origin = min(l.origin, t)
		}
		l.next = l.origin + int64(l.every)*l.step
	}
	return l.advance(water)
}

// watermark is the time up to which every expected target has sent its
// samples; ok is false until each has sent one.
func (l *Live) watermark() (int64, bool) {
	water := int64(math.MaxInt64)
	if l.expect == nil {
		for _, t := range l.latest {
			water = min(water, t)
		}
		return water, len(l.latest) > 0
	}
	for name := range l.expect {
		t, ok := l.latest[name]
		if !ok {
			return 0, false
		}
		water = min(water, t)
	}
	return water, len(l.latest) > 0
}

// Flush analyses the windows that end at or before the latest sample (the
// end of the run: no more samples will come) and returns the anomalies
// first reported by them.
func (l *Live) Flush() []Detection {
	if !l.started && len(l.firstT) > 0 {
		l.started = true
		l.origin = int64(math.MaxInt64)
		for _, t := range l.firstT {
			l.origin = min(l.origin, t)
		}
		l.next = l.origin + int64(l.every)*l.step
	}
	if !l.started {
		return nil
	}
	_, last, _ := l.idx.Span()
	out := l.advance(last)
	// The last window ends at the last sample, also off the cadence.
	if l.next-int64(l.every)*l.step < last {
		out = append(out, l.window(last)...)
	}
	return out
}

// Detections are every anomaly reported so far, in the order found.
func (l *Live) Detections() []Detection { return slices.Clone(l.dets) }

// advance analyses every window ending at or before water.
func (l *Live) advance(water int64) []Detection {
	var out []Detection
	// A target's samples arrive in time order, but those of one tick may
	// come in several batches: a window is complete once every target
	// has sent a sample after its end (half a step of slack: a sample's
	// timestamp may sit just off the nominal tick).
	for l.next+l.step/2 < water {
		out = append(out, l.window(l.next)...)
		l.next += int64(l.every) * l.step
	}
	return out
}

// window analyses the Horizon intervals ending at end and returns the
// anomalies not reported before.
func (l *Live) window(end int64) []Detection {
	from := end - int64(l.horizon+1)*l.step
	in := l.in
	in.EpochNs = l.origin
	a := &analyzer{in: in, f: in.Fabric, opts: l.opts, idx: l.idx, win: &[2]int64{from, end + l.step/2},
		portVals: map[int][]float64{}, sigs: map[int]*portSignals{}, dists: map[int][]int{}, queues: l.queues}
	if l.busyOK {
		a.busyOK = &l.busyOK
	}
	if l.pser == nil {
		l.pser = make([]*portSeries, len(in.Fabric.Ports))
	}
	a.pser = l.pser
	a.g = grid{epoch: l.origin, step: l.step, run: l.origin}
	k1 := a.g.bucket(end)
	k0 := max(a.g.bucket(l.origin), k1-l.horizon+1)
	a.g.k0, a.g.n = k0, k1-k0+1
	if a.g.n <= 0 {
		return nil
	}
	data := make([]groupData, len(l.groups))
	for gi, gr := range l.groups {
		data[gi] = a.groupData(gr)
	}
	var out []Detection
	culprits := a.findCulprits(l.groups, data)
	l.busyOK = l.busyOK || a.busyStreamed()
	for _, c := range culprits {
		an := a.culpritAnomaly(c, l.groups)
		ids := names(an.Member, an.Link)
		seen := false
		for _, id := range ids {
			seen = seen || l.found[id]
		}
		for _, id := range ids {
			l.found[id] = true
		}
		if seen {
			continue
		}
		d := Detection{Member: an.Member, Link: an.Link, Kind: an.Kind, Cause: an.Cause, Group: an.Group,
			StartNs: a.g.startNs(c.start), DetectedNs: end, Evidence: an.Evidence}
		out = append(out, d)
		l.dets = append(l.dets, d)
	}
	return out
}

// add puts one sample into its series, in time order (a repeated
// timestamp keeps the last value).
func (x *Index) add(s *telemetry.Sample) {
	k := s.Key()
	sr := x.series[k]
	if sr == nil {
		sr = &Series{}
		x.series[k] = sr
	}
	n := len(sr.T)
	switch {
	case n == 0 || s.Time > sr.T[n-1]:
		sr.T = append(sr.T, s.Time)
		sr.V = append(sr.V, s.Value)
	case s.Time == sr.T[n-1]:
		sr.V[n-1] = s.Value
	default:
		i := sort.Search(n, func(i int) bool { return sr.T[i] >= s.Time })
		if sr.T[i] == s.Time {
			sr.V[i] = s.Value
			break
		}
		sr.T = slices.Insert(sr.T, i, s.Time)
		sr.V = slices.Insert(sr.V, i, s.Value)
	}
	if len(x.series) == 1 && len(sr.T) == 1 || s.Time < x.first {
		x.first = s.Time
	}
	if s.Time > x.last {
		x.last = s.Time
	}
}

// clip returns, in a window analysis (a.win set), the part of series s
// from the last sample before the window's start (so that its first
// interval has its start) to the window's end; s itself otherwise. The
// result shares s's arrays.
func (a *analyzer) clip(s *Series) *Series {
	if a.win == nil || s == nil {
		return s
	}
	from, end := a.win[0], a.win[1]
	i := sort.Search(len(s.T), func(i int) bool { return s.T[i] >= from })
	if i > 0 {
		i--
	}
	j := sort.Search(len(s.T), func(j int) bool { return s.T[j] > end })
	if i >= j {
		return nil
	}
	return &Series{T: s.T[i:j:j], V: s.V[i:j:j]}
}

// detectedAt fills every anomaly's DetectedUs and TimeToDetectUs: the
// earliest live detection that names it (member, link or one of the
// link's ports) after its first abnormal interval began, else the end of
// the telemetry (stragglers: of their job's window) — a run analysed only
// at its end detects then.
func (a *analyzer) detectedAt(anoms []results.Anomaly, dets []Detection) {
	_, last, ok := a.idx.Span()
	for i := range anoms {
		an := &anoms[i]
		ids := append(names(an.Member, an.Link), a.linksOfPort(an.Member)...)
		// The earliest report of it after its first abnormal interval
		// began: an earlier report of the same port or link was of an
		// episode the final analysis does not keep (a transient at the
		// start of the run).
		from := a.in.EpochNs + int64(an.StartUs*1e3)
		best := int64(math.MaxInt64)
		for _, d := range dets {
			if d.DetectedNs > from && match(ids, append(names(d.Member, d.Link), a.linksOfPort(d.Member)...)) {
				best = min(best, d.DetectedNs)
			}
		}
		det := 0.0
		switch {
		case best != math.MaxInt64:
			det = float64(best-a.in.EpochNs) / 1e3
		case an.Cause == results.CauseThrottle:
			det = an.EndUs
		case ok:
			det = float64(last-a.in.EpochNs) / 1e3
		}
		det = math.Max(det, an.StartUs)
		an.DetectedUs = round(det, 3)
		an.TimeToDetectUs = round(det-an.StartUs, 3)
	}
}

// match reports whether two name lists share a name.
func match(x, y []string) bool {
	for _, a := range x {
		if slices.Contains(y, a) {
			return true
		}
	}
	return false
}

// replay runs the window analyses of in.Samples after the run: the
// detections a Live fed the same samples would have made.
func replay(in Input, stepNs int64) []Detection {
	l, err := NewLive(in, stepNs, 0, 0)
	if err != nil {
		return []Detection{}
	}
	l.Add(in.Samples)
	l.Flush()
	return l.Detections()
}

// Waiting lists the expected targets, sorted.
func (l *Live) Waiting() []string {
	var out []string
	for t := range l.expect {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
