package harness

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fabricbench/fabricbench/analysis"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// This file is the run's live analysis stage: while the jobs run, every
// telemetry window is analysed (analysis.Live) as its samples arrive, the
// anomalies it confirms are shown in the progress output as they are
// found, and with Options.FailFast the first one stops the suite.

// failFastPrefix starts the error of the run --fail-fast stopped and of
// the points it left unstarted.
const failFastPrefix = "stopped by --fail-fast"

// liveStage is a telemetry sink that analyses the run window by window in
// a goroutine of its own: Write queues a copy of the samples and returns,
// so the collector (and with it a lab exporter's ticks) never waits for
// the analysis.
type liveStage struct {
	mu       sync.Mutex
	cond     *sync.Cond
	queue    [][]telemetry.Sample
	closed   bool
	live     *analysis.Live
	done     chan struct{}
	onDetect func(d analysis.Detection, origin int64)
	dets     []analysis.Detection // set by finish
	heard    map[string]time.Time // target -> when its last samples arrived (loop only)
}

// silentAfter is how long a target may send nothing while others do
// before the live analysis stops waiting for it (a device that failed
// or cannot be reached must not hold the windows back).
const silentAfter = 10 * time.Second

// startLive starts the live analysis of point p; onDetect is called (from
// the stage's goroutine) for every anomaly a window analysis reports
// first, with the time of the first sample (run time 0 on the simulator).
// It returns nil for a point without telemetry.
func startLive(p *runspec.RunSpec, backend string, targets []telemetry.TargetSpec, onDetect func(d analysis.Detection, origin int64)) (*liveStage, error) {
	if p.NoTelemetry || p.Interval <= 0 {
		return nil, nil
	}
	in := analysis.Input{Fabric: p.Fabric, LB: p.Transport.LB, Routing: routingMode(p), NoPFC: noPFC(backend),
		Opts: analysisOptions(&p.Suite.Analysis)}
	lv, err := analysis.NewLive(in, p.Interval.Nanoseconds(), 0, 0)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, t := range targets {
		names = append(names, t.Name)
	}
	lv.Expect(names)
	l := &liveStage{live: lv, done: make(chan struct{}), onDetect: onDetect, heard: map[string]time.Time{}}
	l.cond = sync.NewCond(&l.mu)
	go l.loop()
	return l, nil
}

// Write queues a copy of batch for the analysis.
func (l *liveStage) Write(batch []telemetry.Sample) error {
	c := make([]telemetry.Sample, len(batch))
	copy(c, batch)
	l.mu.Lock()
	l.queue = append(l.queue, c)
	l.mu.Unlock()
	l.cond.Signal()
	return nil
}

// Close does nothing: finish ends the stage once the telemetry has
// drained.
func (l *liveStage) Close(context.Context) error { return nil }

func (l *liveStage) loop() {
	defer close(l.done)
	// Wake up every second to notice silent targets.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	go func() {
		for {
			select {
			case <-tick.C:
				l.cond.Signal()
			case <-l.done:
				return
			}
		}
	}()
	var first time.Time // when the first samples arrived
	for {
		l.mu.Lock()
		if len(l.queue) == 0 && !l.closed {
			l.cond.Wait()
		}
		q := l.queue
		l.queue = nil
		closed := l.closed
		l.mu.Unlock()
		now := time.Now()
		for _, b := range q {
			for i := range b {
				l.heard[b[i].Target] = now
			}
			for _, d := range l.live.Add(b) {
				l.detected(d)
			}
		}
		if len(q) > 0 && first.IsZero() {
			first = now
		}
		if len(q) > 0 {
			// Others are sending: stop waiting for a target that has
			// been silent for silentAfter (or never sent).
			for _, name := range l.live.Waiting() {
				t, ok := l.heard[name]
				if !ok {
					t = first
				}
				if now.Sub(t) > silentAfter {
					l.live.Drop(name)
				}
			}
		}
		if closed && len(q) == 0 {
			return
		}
	}
}

func (l *liveStage) detected(d analysis.Detection) {
	if l.onDetect != nil {
		l.onDetect(d, l.live.Origin())
	}
}

// finish analyses what is still queued and the last windows (the run is
// over and the telemetry drained), and returns every detection.
func (l *liveStage) finish() []analysis.Detection {
	if l == nil {
		return nil
	}
	if l.dets != nil {
		return l.dets
	}
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.cond.Signal()
	<-l.done
	for _, d := range l.live.Flush() {
		l.detected(d)
	}
	l.dets = l.live.Detections()
	if l.dets == nil {
		l.dets = []analysis.Detection{}
	}
	return l.dets
}

// liveReporter shows the anomalies of a run as the live analysis confirms
// them and, with fail-fast, stops the run's jobs at the first one.
type liveReporter struct {
	mu      sync.Mutex
	id      string
	out     func(string) // progress output, nil: none
	stop    func()       // cancels the jobs (fail-fast), nil: keep going
	origin  int64        // telemetry time of run time 0 (the first sample)
	first   *analysis.Detection
	n       int
	stopped time.Time
}

func (r *liveReporter) detect(d analysis.Detection, origin int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.origin = origin
	r.n++
	if r.first == nil {
		dd := d
		r.first = &dd
	}
	if r.out != nil {
		ev := d.Evidence
		if i := strings.Index(ev, ";"); i > 0 {
			ev = ev[:i]
		}
		r.out(fmt.Sprintf("run %s: anomaly confirmed at %s of run time (abnormal from %s): %s", r.id,
			fmtUs(d.DetectedNs-r.origin), fmtUs(d.StartNs-r.origin), liveLabel(d)+": "+ev))
	}
	if r.stop != nil && r.stopped.IsZero() {
		r.stopped = time.Now()
		if r.out != nil {
			r.out(fmt.Sprintf("run %s: --fail-fast: stopping the suite at the first confirmed anomaly", r.id))
		}
		r.stop()
	}
}

// failFastError is the error of the run fail-fast stopped, "" when it was
// not stopped.
func (r *liveReporter) failFastError() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop == nil || r.first == nil {
		return ""
	}
	return fmt.Sprintf("%s at the first confirmed anomaly, %s, detected at %s of run time", failFastPrefix, liveLabel(*r.first), fmtUs(r.first.DetectedNs-r.origin))
}

// liveLabel names a detection's culprit: "link leaf0-spine1", "host6
// (slow-nic)".
func liveLabel(d analysis.Detection) string {
	who := d.Member
	if d.Link != "" {
		who = "link " + d.Link
	}
	return who + " (" + d.Cause + ")"
}

// fmtUs formats ns as µs or ms.
func fmtUs(ns int64) string {
	if ns >= 10_000_000 {
		return fmt.Sprintf("%.2f ms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.0f µs", float64(ns)/1e3)
}

// stoppedByFailFast reports whether a run was stopped, or left unstarted,
// by --fail-fast.
func stoppedByFailFast(r *results.Run) bool {
	return strings.HasPrefix(r.Error, failFastPrefix) || strings.HasPrefix(r.Error, "not started: "+failFastPrefix)
}

// noPFC is why backend has no PFC, or no pause counters to analyse
// (Capabilities.ByDevice: PFC only on some devices), "" when it has.
func noPFC(backend string) string {
	c, err := BackendCapabilities(backend)
	if err != nil {
		return ""
	}
	if r, ok := c.Unsupported[FeatPFC]; ok {
		return r
	}
	return c.ByDevice[FeatPFC]
}
