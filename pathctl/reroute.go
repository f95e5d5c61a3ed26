package pathctl

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/telemetry"
)

// Rerouter is the paper's reroute loop as a telemetry consumer that works
// on any backend (suite `controller: {kind: srv6-reroute}`): it is the
// handler of a gNMI collector subscribed to the fabric's queue counters
// (the same targets and stream the run's collector gets), keeps per-link
// congestion state for the links of every pinned host pair's path, and
// when a path congests it re-steers the pair, through the backend's Steer,
// onto the least-loaded alternative spine whose links are clean.
//
// Per link (the transmit side of a leaf-spine link, from its device's
// queue counters) and telemetry sample it computes the delivered rate,
// the busy fraction (backlogged-ns, where the target exports it), the
// queue high-water, ECN marks and drops. A link is backlogged when it was
// busy for at least half the interval or, without backlogged-ns, when its
// high-water reached Queue or it dropped or marked packets; it is
// congested when, backlogged, it delivered under Rate of its nominal rate
// (measured over its busy time when known): a rate drop under load, as a
// degraded link shows, rather than a healthy link's full queue. Hysteresis:
// a link becomes degraded after Trigger congested intervals in a row and
// clean again after Clear clean ones; a pair that moved stays put for
// HoldDown. Every move is a Decision with its evidence.
//
// The simulator runs in simulated time: its backend calls Barrier after
// publishing each sample, so decisions are applied at the sample's time
// and runs stay deterministic. On a lab Steer acts as decisions are made.
type Rerouter struct {
	cfg   RerouterConfig
	f     *inventory.Fabric
	links []*rlink
	byKey map[[2]string]*rlink // (target, interface) -> link
	paths []*rpath
	// targets watched, with the newest sample time seen from each.
	last map[string]int64

	mu        sync.Mutex
	changed   chan struct{}
	processed int64 // newest tick evaluated (ns)
	lastEval  int64
	evaluated bool
	decisions []Decision
	err       error
	work      chan steerJob
	workDone  chan struct{}
}

// RerouterConfig configures Rerouter. Zero values take the defaults.
type RerouterConfig struct {
	Fabric *inventory.Fabric
	Paths  []PinnedPath
	// Interval between evaluations, ns (0: every sample).
	Interval int64
	Rate     float64 // default 0.75
	Queue    int64   // bytes, default 64 KiB
	Trigger  int     // default 1
	Clear    int     // default 3
	HoldDown int64   // ns, default 10 intervals (10 ms without Interval)
	// Steer moves pinned path Path (an index into Paths) onto the switches
	// Via, both directions.
	Steer func(ctx context.Context, path int, via []int) error
	// Async calls Steer from a goroutine of its own, in decision order, so
	// that a slow backend (SSH to a lab host) does not hold up the
	// telemetry stream; Close waits for it. Without Async (the simulator,
	// whose Steer only queues the move) Steer runs in Handle.
	Async bool
	Logf  func(format string, args ...any)
}

type steerJob struct {
	path     *rpath
	via      []int
	decision int
	prev     int
}

// PinnedPath is a host pair pinned through switches (both directions, as
// features.srv6.paths pins them). Only pairs pinned through one switch
// adjacent to both hosts' leaves (a spine) are rerouted.
type PinnedPath struct {
	Name     string
	Src, Dst int // host numbers
	Via      []int
}

// Decision is one re-steered path.
type Decision struct {
	TimeNs int64 // the sample time the decision was made at
	// AppliedNs is when the backend had made the move: TimeNs for a
	// synchronous Steer (the simulator applies it at the sample's time),
	// the wall clock when an asynchronous Steer returned (a lab, whose
	// samples are stamped in the same clock); 0 while under way.
	AppliedNs int64
	Path      string
	Src, Dst  string // host names
	From, To  []string
	// Evidence are the current path's links at the decision, the
	// degraded ones first.
	Evidence []LinkEvidence
	Err      string // the backend refused the move (the path stays)
}

// LinkEvidence is one link's state over the last interval.
type LinkEvidence struct {
	Link        string  // "leaf0:Ethernet3 -> spine1"
	State       string  // degraded, clean
	RateBps     float64 // delivered
	NominalBps  float64
	BusyFrac    float64 // -1: the target does not export backlogged-ns
	QueueHWM    int64   // bytes
	ECNMarks    uint64
	Drops       uint64
	Consecutive int // congested intervals in a row
}

type snap struct {
	time                    int64
	out, busy, ecn, drops   uint64
	hwm                     int64
	haveBusy, haveOut, seen bool
}

type rlink struct {
	port     int
	name     string
	target   string
	iface    string
	nominal  float64
	prev     snap
	cur      snap
	bad      int
	good     int
	degraded bool
	busyLive bool // the target's backlogged-ns has advanced
	ev       LinkEvidence
}

type rpath struct {
	idx      int
	p        PinnedPath
	a, b     int // leaves
	spine    int
	holdTill int64
	managed  bool
}

// NewRerouter sets the controller up: the links of every manageable pair's
// candidate spines are watched.
func NewRerouter(cfg RerouterConfig) (*Rerouter, error) {
	if cfg.Fabric == nil {
		return nil, errors.New("pathctl: no fabric")
	}
	if cfg.Steer == nil {
		return nil, errors.New("pathctl: no Steer function")
	}
	if cfg.Rate <= 0 {
		cfg.Rate = 0.75
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 64 << 10
	}
	if cfg.Trigger <= 0 {
		cfg.Trigger = 1
	}
	if cfg.Clear <= 0 {
		cfg.Clear = 3
	}
	if cfg.HoldDown <= 0 {
		cfg.HoldDown = 10 * cfg.Interval
		if cfg.HoldDown == 0 {
			cfg.HoldDown = 10_000_000
		}
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	f := cfg.Fabric
	c := &Rerouter{cfg: cfg, f: f, byKey: map[[2]string]*rlink{}, last: map[string]int64{}, changed: make(chan struct{}), processed: -1 << 62}
	watch := func(a, b int) {
		p := link(f, a, b)
		if p < 0 {
			return
		}
		k := [2]string{f.Nodes[a].Name, f.Ports[p].Name}
		if c.byKey[k] != nil {
			return
		}
		l := &rlink{port: p, target: k[0], iface: k[1], nominal: float64(f.PortRate(p)),
			name: fmt.Sprintf("%s:%s -> %s", k[0], k[1], f.Nodes[b].Name)}
		c.byKey[k] = l
		c.links = append(c.links, l)
		c.last[k[0]] = -1 << 62
	}
	if cfg.Async {
		c.work = make(chan steerJob, 256)
		c.workDone = make(chan struct{})
		go c.worker()
	}
	for i, pp := range cfg.Paths {
		rp := &rpath{idx: i, p: pp, a: f.HostLeaf(pp.Src), b: f.HostLeaf(pp.Dst)}
		c.paths = append(c.paths, rp)
		if len(pp.Via) != 1 || rp.a < 0 || rp.b < 0 || rp.a == rp.b {
			continue
		}
		cand := common(f, rp.a, rp.b)
		if !containsInt(cand, pp.Via[0]) {
			continue
		}
		rp.managed, rp.spine = true, pp.Via[0]
		for _, sp := range cand {
			watch(rp.a, sp)
			watch(sp, rp.b)
			watch(rp.b, sp)
			watch(sp, rp.a)
		}
	}
	return c, nil
}

func containsInt(s []int, x int) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// Targets are the gNMI targets (device names) the controller needs.
func (c *Rerouter) Targets() []string {
	var out []string
	for t := range c.last {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Managed counts the pinned paths the controller can move.
func (c *Rerouter) Managed() int {
	n := 0
	for _, p := range c.paths {
		if p.managed {
			n++
		}
	}
	return n
}

// Handle is the collector's handler: it takes a batch of samples (whole
// notifications, in arrival order per target), updates the links and
// evaluates the paths at the newest time every watched target reached.
func (c *Rerouter) Handle(batch []telemetry.Sample) error {
	for i := range batch {
		s := &batch[i]
		if s.Measurement != telemetry.MeasQueue {
			continue
		}
		if t, ok := c.last[s.Target]; ok && s.Time > t {
			c.last[s.Target] = s.Time
		}
		l := c.byKey[[2]string{s.Target, s.Interface}]
		if l == nil {
			continue
		}
		if s.Time != l.cur.time && l.cur.seen {
			c.finish(l) // a later notification: the previous one is whole
		}
		l.cur.time, l.cur.seen = s.Time, true
		v := s.Value
		switch s.Field {
		case telemetry.FieldTransmitOctets:
			l.cur.out, l.cur.haveOut = uint64(v), true
		case telemetry.FieldBackloggedNs:
			l.cur.busy, l.cur.haveBusy = uint64(v), true
		case telemetry.FieldMaxQueueLen:
			l.cur.hwm = v
		case telemetry.FieldECNMarkedPkts:
			l.cur.ecn = uint64(v)
		case telemetry.FieldDroppedPkts:
			l.cur.drops = uint64(v)
		}
	}
	for _, l := range c.links {
		if l.cur.seen {
			c.finish(l)
		}
	}
	tick := int64(1 << 62)
	for _, t := range c.last {
		tick = min(tick, t)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if tick <= c.processed {
		return nil
	}
	if !c.evaluated || tick-c.lastEval >= c.cfg.Interval {
		c.evaluate(tick)
		c.lastEval, c.evaluated = tick, true
	}
	c.processed = tick
	close(c.changed)
	c.changed = make(chan struct{})
	return nil
}

// finish closes link l's current snapshot: the interval since the
// previous one updates its congestion state.
func (c *Rerouter) finish(l *rlink) {
	cur, prev := l.cur, l.prev
	l.cur = snap{}
	l.prev = cur
	if !prev.seen || !cur.haveOut || cur.time <= prev.time {
		return
	}
	dt := float64(cur.time - prev.time) // ns
	dOut := float64(cur.out - prev.out)
	ev := LinkEvidence{Link: l.name, NominalBps: l.nominal, RateBps: dOut * 8 / dt * 1e9, BusyFrac: -1, QueueHWM: cur.hwm,
		ECNMarks: cur.ecn - prev.ecn, Drops: cur.drops - prev.drops}
	capBps := ev.RateBps
	var backlogged bool
	// A target that serves backlogged-ns only as a placeholder (the netns
	// kernel exporter publishes 0) is known by a counter that never moves:
	// the busy time counts once it has advanced on this link.
	if cur.haveBusy && prev.haveBusy && cur.busy > prev.busy {
		l.busyLive = true
	}
	if cur.haveBusy && prev.haveBusy && l.busyLive {
		busy := float64(cur.busy - prev.busy)
		ev.BusyFrac = busy / dt
		backlogged = ev.BusyFrac >= 0.5
		if busy > 0 {
			capBps = dOut * 8 / busy * 1e9
		}
	} else {
		backlogged = cur.hwm >= c.cfg.Queue || ev.Drops > 0 || ev.ECNMarks > 0
	}
	if backlogged && capBps < c.cfg.Rate*l.nominal {
		l.bad++
		l.good = 0
	} else {
		l.good++
		l.bad = 0
	}
	switch {
	case !l.degraded && l.bad >= c.cfg.Trigger:
		l.degraded = true
	case l.degraded && l.good >= c.cfg.Clear:
		l.degraded = false
	}
	ev.Consecutive = l.bad
	ev.State = "clean"
	if l.degraded {
		ev.State = "degraded"
	}
	l.ev = ev
}

func (c *Rerouter) linkOf(a, b int) *rlink {
	p := link(c.f, a, b)
	if p < 0 {
		return nil
	}
	return c.byKey[[2]string{c.f.Nodes[a].Name, c.f.Ports[p].Name}]
}

// pathLinks are the four links of a pair through spine sp (both ways).
func (c *Rerouter) pathLinks(p *rpath, sp int) []*rlink {
	return []*rlink{c.linkOf(p.a, sp), c.linkOf(sp, p.b), c.linkOf(p.b, sp), c.linkOf(sp, p.a)}
}

func degraded(ls []*rlink) bool {
	for _, l := range ls {
		if l != nil && l.degraded {
			return true
		}
	}
	return false
}

// evaluate moves the paths whose links are degraded. c.mu is held.
func (c *Rerouter) evaluate(tick int64) {
	load := map[int]int{}
	for _, p := range c.paths {
		if p.managed {
			load[p.spine]++
		}
	}
	for _, p := range c.paths {
		if !p.managed || tick < p.holdTill {
			continue
		}
		cur := c.pathLinks(p, p.spine)
		if !degraded(cur) {
			continue
		}
		best := -1
		for _, sp := range common(c.f, p.a, p.b) {
			if sp == p.spine || degraded(c.pathLinks(p, sp)) {
				continue
			}
			if best < 0 || load[sp] < load[best] {
				best = sp
			}
		}
		if best < 0 {
			continue
		}
		d := Decision{TimeNs: tick, Path: p.p.Name, Src: c.f.Host(p.p.Src).Name, Dst: c.f.Host(p.p.Dst).Name,
			From: []string{c.f.Nodes[p.spine].Name}, To: []string{c.f.Nodes[best].Name}}
		for _, l := range cur {
			if l != nil && l.degraded {
				d.Evidence = append(d.Evidence, l.ev)
			}
		}
		for _, l := range cur {
			if l != nil && !l.degraded {
				d.Evidence = append(d.Evidence, l.ev)
			}
		}
		prev := p.spine
		load[p.spine]--
		load[best]++
		p.spine = best
		var err error
		if c.work != nil {
			// Never blocks while c.mu is held (the worker takes c.mu).
			select {
			case c.work <- steerJob{path: p, via: []int{best}, decision: len(c.decisions), prev: prev}:
			default:
				err = fmt.Errorf("%d moves still under way", cap(c.work))
			}
		} else {
			err = c.steer(p, []int{best})
			d.AppliedNs = tick
		}
		if err != nil {
			d.Err = err.Error()
			load[best]--
			load[prev]++
			p.spine = prev
		}
		p.holdTill = tick + c.cfg.HoldDown
		c.decisions = append(c.decisions, d)
		c.cfg.Logf("controller: %s (%s -> %s) moved from %s to %s at %d ns: %s %.3g of %.3g bit/s, busy %.2f",
			d.Path, d.Src, d.Dst, d.From[0], d.To[0], tick, d.Evidence[0].Link, d.Evidence[0].RateBps, d.Evidence[0].NominalBps, d.Evidence[0].BusyFrac)
	}
}

// steer calls the backend; an error is kept as the controller's first.
// c.mu is held.
func (c *Rerouter) steer(p *rpath, via []int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := c.cfg.Steer(ctx, p.idx, via)
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("steer %s to %s: %w", p.p.Name, c.f.Nodes[via[0]].Name, err)
	}
	return err
}

// worker runs the asynchronous moves (RerouterConfig.Async) in order.
func (c *Rerouter) worker() {
	defer close(c.workDone)
	for j := range c.work {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := c.cfg.Steer(ctx, j.path.idx, j.via)
		cancel()
		c.mu.Lock()
		if err == nil {
			c.decisions[j.decision].AppliedNs = time.Now().UnixNano()
			c.mu.Unlock()
			c.cfg.Logf("controller: %s now through %s", j.path.p.Name, c.f.Nodes[j.via[0]].Name)
			continue
		}
		c.decisions[j.decision].Err = err.Error()
		if j.path.spine == j.via[0] {
			j.path.spine = j.prev
		}
		if c.err == nil {
			c.err = fmt.Errorf("steer %s to %s: %w", j.path.p.Name, c.f.Nodes[j.via[0]].Name, err)
		}
		c.mu.Unlock()
	}
}

// Close waits for the asynchronous moves still under way (Async); call it
// once the collector feeding Handle has stopped.
func (c *Rerouter) Close() {
	if c.work != nil {
		close(c.work)
		<-c.workDone
		c.work = nil
	}
}

// Barrier waits until the controller has evaluated every sample of time
// timeNs or earlier from all the targets it watches (the simulator calls
// it after publishing each sample, before simulating on), ctx is done or
// wait (wall time) has passed.
func (c *Rerouter) Barrier(ctx context.Context, timeNs int64, wait time.Duration) error {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		c.mu.Lock()
		done, ch := c.processed >= timeNs, c.changed
		c.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return fmt.Errorf("pathctl: the controller has not seen the sample of %d ns after %v", timeNs, wait)
		}
	}
}

// Decisions returns the decisions so far, in time order.
func (c *Rerouter) Decisions() []Decision {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Decision(nil), c.decisions...)
}

// Err is the first Steer error, if any.
func (c *Rerouter) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
