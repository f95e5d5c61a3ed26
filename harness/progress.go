package harness

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress shows one bar per run on a terminal, or plain lines otherwise.
type progress struct {
	w    io.Writer
	bars *mpb.Progress
}

func newProgress(ctx context.Context, w io.Writer, bars bool) *progress {
	p := &progress{w: w}
	if w != nil && bars {
		p.bars = mpb.NewWithContext(ctx, mpb.WithOutput(w), mpb.WithWidth(30))
	}
	return p
}

func (p *progress) wait() {
	if p.bars != nil {
		p.bars.Wait()
	}
}

type runBar struct {
	p      *progress
	id     string
	bar    *mpb.Bar
	simNow atomic.Int64
	total  int
	last   time.Time // last progress line (line mode)
}

func (p *progress) add(id string, flows int) *runBar {
	rb := &runBar{p: p, id: id, total: flows}
	switch {
	case p.bars != nil:
		rb.bar = p.bars.New(int64(flows), mpb.BarStyle(),
			mpb.PrependDecorators(decor.Name(id, decor.WCSyncSpaceR), decor.CountersNoUnit("%d/%d flows", decor.WCSyncSpace)),
			mpb.AppendDecorators(decor.Percentage(decor.WCSyncSpace),
				decor.Any(func(decor.Statistics) string {
					return fmt.Sprintf(" %.0f µs simulated", float64(rb.simNow.Load())/1e6)
				})),
		)
	case p.w != nil:
		fmt.Fprintf(p.w, "run %s: %d flows\n", id, flows)
	}
	return rb
}

func (rb *runBar) update(pr Progress) {
	rb.simNow.Store(pr.SimNow)
	if rb.bar != nil {
		rb.bar.SetCurrent(int64(pr.Done))
	} else if rb.p.w != nil && (pr.Done == pr.Flows || time.Since(rb.last) >= time.Second) {
		// Lines at most once a second, and the last one.
		rb.last = time.Now()
		fmt.Fprintf(rb.p.w, "run %s: %d/%d flows done, %.0f µs simulated\n", rb.id, pr.Done, pr.Flows, float64(pr.SimNow)/1e6)
	}
}

func (rb *runBar) done(complete bool) {
	if rb.bar == nil {
		return
	}
	if complete {
		rb.bar.SetCurrent(int64(rb.total))
	} else {
		rb.bar.Abort(false)
	}
}

// line prints one line of progress: above the bars on a terminal.
func (p *progress) line(s string) {
	switch {
	case p.bars != nil:
		fmt.Fprintln(p.bars, s)
	case p.w != nil:
		fmt.Fprintln(p.w, s)
	}
}
