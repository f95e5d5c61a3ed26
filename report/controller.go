package report

import (
	"fmt"
	"html"
	"html/template"
	"strings"

	"github.com/fabricbench/fabricbench/results"
)

// A run's path controller (suite controller): a timeline of its decisions
// against the injected faults, and every decision with its evidence.

type controllerView struct {
	Summary  string
	Timeline template.HTML
	Rows     []decisionRow
}

type decisionRow struct {
	At, Applied, Path, Pair, Move, Evidence, Error string
}

func buildController(run *results.Run) *controllerView {
	c := run.Controller
	if c == nil {
		return nil
	}
	v := &controllerView{Summary: fmt.Sprintf("%s: %s on %s, deciding every %s, hold-down %s",
		c.Kind, plural(len(c.Decisions), "decision"), plural(c.Paths, "managed path"), fmtUs(c.IntervalUs), fmtUs(c.HoldDownUs))}
	for _, d := range c.Decisions {
		r := decisionRow{At: fmtUs(d.AtUs), Applied: "-", Path: d.Path, Pair: d.Src + " → " + d.Dst,
			Move: strings.Join(d.From, ",") + " → " + strings.Join(d.To, ","), Error: d.Error}
		if d.AppliedAtUs > 0 {
			r.Applied = fmtUs(d.AppliedAtUs)
		}
		var ev []string
		for _, e := range d.Evidence {
			if e.State != "degraded" {
				continue
			}
			s := fmt.Sprintf("%s %s: %.1f of %.1f Gb/s", e.Link, e.State, e.RateBps/1e9, e.NominalBps/1e9)
			if e.BusyFrac >= 0 {
				s += fmt.Sprintf(", busy %.0f%%", 100*e.BusyFrac)
			}
			s += fmt.Sprintf(", queue high-water %d B, %d ECN marks, %d drops, %d congested interval%s", e.QueueHWM, e.ECNMarks, e.Drops, e.Consecutive, pluralS(e.Consecutive))
			ev = append(ev, s)
		}
		r.Evidence = strings.Join(ev, "; ")
		v.Rows = append(v.Rows, r)
	}
	v.Timeline = controllerTimeline(run)
	return v
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// controllerTimeline draws the run's time axis with the fault events
// (red, above) and the controller's decisions (blue, below).
func controllerTimeline(run *results.Run) template.HTML {
	const w, h, x0, x1 = 720.0, 70.0, 20.0, 700.0
	end := run.SimEndUs
	for _, d := range run.Controller.Decisions {
		end = max(end, d.AtUs)
	}
	if end <= 0 {
		end = 1
	}
	x := func(us float64) float64 { return x0 + (x1-x0)*us/end }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="%g" height="%g" viewBox="0 0 %g %g" role="img" aria-label="controller timeline">`, w, h, w, h)
	fmt.Fprintf(&b, `<line x1="%g" y1="35" x2="%g" y2="35" stroke="#888" stroke-width="1"/>`, x0, x1)
	fmt.Fprintf(&b, `<text x="%g" y="64" font-size="10" fill="#555">0</text><text x="%g" y="64" font-size="10" fill="#555" text-anchor="end">%s</text>`, x0, x1, html.EscapeString(fmtUs(end)))
	for i, f := range run.Faults {
		fmt.Fprintf(&b, `<path d="M%.1f 33 l-5 -9 h10 z" fill="#c0392b"><title>%s</title></path>`, x(f.AtUs), html.EscapeString(fmtUs(f.AtUs)+": "+f.Description))
		fmt.Fprintf(&b, `<text x="%.1f" y="18" font-size="10" fill="#c0392b" text-anchor="middle">%s</text>`, x(f.AtUs), html.EscapeString(faultLabel(&run.Faults[i], i)))
	}
	for _, d := range run.Controller.Decisions {
		label := d.Path + " → " + strings.Join(d.To, ",")
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="41" r="4" fill="#2471a3"><title>%s</title></circle>`, x(d.AtUs), html.EscapeString(fmtUs(d.AtUs)+": "+label))
		fmt.Fprintf(&b, `<text x="%.1f" y="56" font-size="10" fill="#2471a3" text-anchor="middle">%s</text>`, x(d.AtUs), html.EscapeString(label))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every text above is escaped
}
