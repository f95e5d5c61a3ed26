package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/fabricbench/fabricbench/history"
	"github.com/fabricbench/fabricbench/results"
)

// TrendHTMLFile is the trend page's file name.
const TrendHTMLFile = "trend.html"

// maxTrendPlots caps the KPI plots of a trend page.
const maxTrendPlots = 60

type nightRow struct {
	N                      int
	Dir, Started, Status   string
	Class, KPIs, Regressed string
	Runs                   int
}

type trendRegression struct {
	N                     int
	Point, KPI            string
	Before, After, Change string
	Tolerance, Note       string
}

type anomalyRow struct {
	Point, Rank, Culprit, Cause, Window, Evidence string
}

type trendPage struct {
	Title, Suite  string
	Nights        []nightRow
	Regressions   []trendRegression
	Figures       []figure
	Notes         []string
	Latest        string
	LatestRuns    int
	Anomalies     []anomalyRow
	LatestRegress int
	Generated     string
}

// TrendHTML writes KPI values across nights as one self-contained page:
// the nights, the regressions from one night to the next, one plot per KPI
// (a line per matrix point over the nights, its threshold dashed,
// regressions ringed in red) and the anomalies of the latest night.
func TrendHTML(w io.Writer, t *history.Trend) error {
	if t == nil || len(t.Nights) == 0 {
		return fmt.Errorf("report: TrendHTML: no nights")
	}
	latest := t.Latest()
	pg := trendPage{Suite: orDefault(latest.Results.Suite, "fabricbench"), Latest: latest.Dir, LatestRuns: len(latest.Results.Runs),
		Generated: time.Now().UTC().Format("2006-01-02 15:04:05 UTC")}
	pg.Title = fmt.Sprintf("%s: KPI trend over %s", pg.Suite, plural(len(t.Nights), "night"))
	regs := t.Regressions()
	perNight := map[int]int{}
	for _, r := range regs {
		perNight[r.Night]++
		pg.Regressions = append(pg.Regressions, trendRegression{N: r.Night + 1, Point: r.Row.Point, KPI: r.Row.KPI,
			Before: rowValue(r.Row.Base, r.Row.BaseVerdict, r.Row.Unit), After: rowValue(r.Row.New, r.Row.NewVerdict, r.Row.Unit),
			Change: rowDelta(&r.Row), Tolerance: r.Row.Tolerance, Note: r.Row.Note})
		if r.Night == len(t.Nights)-1 {
			pg.LatestRegress++
		}
	}
	for i, n := range t.Nights {
		r := n.Results
		passed, total := 0, 0
		for _, run := range r.Runs {
			for _, k := range run.KPIs {
				total++
				if k.Verdict == results.Pass {
					passed++
				}
			}
		}
		row := nightRow{N: i + 1, Dir: n.Dir, Started: fmtTime(r.Started), Status: statusText(r.Status), Class: statusClass(r.Status), Runs: len(r.Runs),
			KPIs: fmt.Sprintf("%d/%d passed", passed, total)}
		if i > 0 {
			row.Regressed = fmt.Sprint(perNight[i])
		}
		pg.Nights = append(pg.Nights, row)
	}
	for i, k := range t.KPIs {
		if i == maxTrendPlots {
			pg.Notes = append(pg.Notes, fmt.Sprintf("%d of %d KPIs are not plotted.", len(t.KPIs)-maxTrendPlots, len(t.KPIs)))
			break
		}
		pg.Figures = append(pg.Figures, trendFigure(t, &k))
	}
	for _, run := range latest.Results.Runs {
		for _, i := range ranked(run.Anomalies) {
			a := &run.Anomalies[i]
			ev := a.Evidence
			if ev == "" {
				ev = Signals(a.Signals)
			}
			member := orDefault(a.Member, "?")
			if a.Link != "" {
				member += " (link " + a.Link + ")"
			}
			pg.Anomalies = append(pg.Anomalies, anomalyRow{Point: run.ID, Rank: fmt.Sprintf("#%d", rankOf(a, i)), Culprit: member,
				Cause: a.Cause, Window: fmtWindow(a.StartUs, a.EndUs), Evidence: firstLine(ev)})
		}
	}
	var buf bytes.Buffer
	if err := trendTmpl.Execute(&buf, pg); err != nil {
		return fmt.Errorf("report: TrendHTML: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// hLine is a horizontal line across the data area at Y (a KPI threshold).
type hLine struct {
	Y     float64
	Style draw.LineStyle
}

func (l hLine) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(l.Y)
	if c.ContainsY(y) {
		c.StrokeLine2(l.Style, c.Min.X, y, c.Max.X, y)
	}
}

func (l hLine) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(l.Style, c.Min.X, y, c.Max.X, y)
}

// ring is a legend thumbnail for the regression marks.
type ring struct{ sty draw.GlyphStyle }

func (r ring) Thumbnail(c *draw.Canvas) {
	c.DrawGlyph(r.sty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: (c.Min.Y + c.Max.Y) / 2})
}

func trendFigure(t *history.Trend, k *history.KPITrend) figure {
	title := k.Name
	unit := k.Unit
	ylabel := k.Metric
	if u := results.UnitSuffix(2, unit); u != "" {
		ylabel += " (" + u[1:] + ")"
	}
	fig := figure{Title: title}
	p := newPlot(title, "night", ylabel)
	p.Add(hGrid{})
	var legend []legendItem
	ringStyle := draw.GlyphStyle{Color: alert, Radius: vg.Points(6), Shape: draw.RingGlyph{}}
	ymin, ymax := math.Inf(1), math.Inf(-1)
	var regs plotter.XYs
	var notes []string
	drawn := 0
	for li, ln := range k.Lines {
		col := series[li%len(series)]
		var pts plotter.XYs
		var segs []plotter.XYs
		for ni, v := range ln.Values {
			y, ok := v.Number()
			if !ok {
				if len(pts) > 0 {
					segs = append(segs, pts)
					pts = nil
				}
				continue
			}
			pts = append(pts, plotter.XY{X: float64(ni + 1), Y: y})
			ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
			if v.Row.Status == history.Regressed {
				regs = append(regs, plotter.XY{X: float64(ni + 1), Y: y})
				notes = append(notes, fmt.Sprintf("night %d, %s: %s", ni+1, ln.Point, rowDelta(&v.Row)))
			}
		}
		if len(pts) > 0 {
			segs = append(segs, pts)
		}
		if len(segs) == 0 {
			continue
		}
		sty := draw.LineStyle{Color: col, Width: vg.Points(1.6)}
		for j, seg := range segs {
			ln2 := &plotter.Line{XYs: seg, LineStyle: sty}
			sc := &plotter.Scatter{XYs: seg, GlyphStyle: draw.GlyphStyle{Color: col, Radius: vg.Points(2.6), Shape: draw.CircleGlyph{}}}
			p.Add(ln2, sc)
			if j == 0 {
				legend = append(legend, legendItem{ln.Point, ln2})
			}
		}
		drawn++
	}
	if drawn == 0 {
		fig.Note = "No night has a value for this KPI."
		return fig
	}
	if finite(k.Threshold) {
		th := hLine{Y: k.Threshold, Style: draw.LineStyle{Color: rgb(0x333333), Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}}
		p.Add(th)
		legend = append(legend, legendItem{"threshold (" + k.Op + " " + fmtNum(k.Threshold) + ")", th})
		ymin, ymax = math.Min(ymin, k.Threshold), math.Max(ymax, k.Threshold)
	}
	if len(regs) > 0 {
		sc := &plotter.Scatter{XYs: regs, GlyphStyle: ringStyle}
		p.Add(sc)
		legend = append(legend, legendItem{"regression", ring{ringStyle}})
		fig.Caption = "Regressions: " + joinNotes(notes) + "."
	}
	pad := (ymax - ymin) * 0.08
	if pad == 0 {
		pad = math.Max(math.Abs(ymax)*0.05, 0.5)
	}
	p.Y.Min, p.Y.Max = ymin-pad, ymax+pad
	if ymin >= 0 && p.Y.Min < 0 {
		p.Y.Min = 0
	}
	n := len(t.Nights)
	p.X.Min, p.X.Max = 0.5, float64(n)+0.5
	p.X.Tick.Marker = nightTicks(t)
	svg, err := svgPlotLegendBelow(p, legend, plotWidth, plotHeight, "Trend of "+title+" over "+plural(n, "night"))
	if err != nil {
		return failedFigure(title, err)
	}
	fig.SVG = svg
	return fig
}

func joinNotes(ns []string) string {
	const maxNotes = 6
	if len(ns) > maxNotes {
		return fmt.Sprintf("%s and %d more", joinNotes(ns[:maxNotes]), len(ns)-maxNotes)
	}
	out := ""
	for i, s := range ns {
		if i > 0 {
			out += "; "
		}
		out += s
	}
	return out
}

// nightTicks labels the nights 1..N with their start dates, thinned to
// about a dozen labels.
func nightTicks(t *history.Trend) plot.ConstantTicks {
	n := len(t.Nights)
	every := max(1, (n+11)/12)
	var ticks plot.ConstantTicks
	for i, night := range t.Nights {
		tk := plot.Tick{Value: float64(i + 1)}
		if i%every == 0 || i == n-1 {
			tk.Label = fmt.Sprint(i + 1)
			if s := night.Results.Started; !s.IsZero() {
				tk.Label += "\n" + s.UTC().Format("01-02 15:04")
			}
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

var trendTmpl = template.Must(template.Must(template.New("trend").Parse(trendHTML)).Parse(figureHTML))

const trendHTML = historyHead + `<h1>{{.Suite}}: KPI trend {{if .LatestRegress}}<span class="badge fail">LATEST NIGHT REGRESSED</span>{{else}}<span class="badge pass">LATEST NIGHT HOLDS</span>{{end}}</h1>
<p class="meta">{{len .Nights}} nights, ordered by start time · latest <b>{{.Latest}}</b> · {{len .Regressions}} regressions from one night to the next ({{.LatestRegress}} in the latest)</p>
</div></header>
<main>
<section class="box"><h2>Nights</h2>
<div class="scroll"><table class="nights"><thead><tr><th class="num">night</th><th>results</th><th>started</th><th>status</th><th class="num">runs</th><th class="num">KPIs</th><th class="num">regressed vs previous</th></tr></thead>
<tbody>{{range .Nights}}<tr><td class="num">{{.N}}</td><td><code>{{.Dir}}</code></td><td>{{.Started}}</td><td><span class="badge {{.Class}}">{{.Status}}</span></td><td class="num">{{.Runs}}</td><td class="num">{{.KPIs}}</td><td class="num">{{.Regressed}}</td></tr>
{{end}}</tbody></table></div>
</section>
<section class="box"><h2>Regressions</h2>
{{if .Regressions}}<div class="scroll"><table class="regressions"><thead><tr><th class="num">night</th><th>point</th><th>KPI</th><th class="num">previous</th><th class="num">this night</th><th class="num">change</th><th class="num">tolerance</th><th>note</th></tr></thead>
<tbody>{{range .Regressions}}<tr class="fail"><td class="num">{{.N}}</td><td>{{.Point}}</td><td><code>{{.KPI}}</code></td><td class="num">{{.Before}}</td><td class="num">{{.After}}</td><td class="num">{{.Change}}</td><td class="num">{{.Tolerance}}</td><td>{{.Note}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p class="note">No KPI got worse from one night to the next by more than its tolerance.</p>{{end}}
</section>
<section class="box"><h2>KPIs across nights</h2>
<p class="note">One line per matrix point; the dashed line is the KPI's threshold (the latest night's); red rings mark values that regressed from the point's previous night.</p>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
<div class="figs">{{range .Figures}}
{{template "figure" .}}{{end}}
</div>
</section>
<section class="box"><h2>Anomalies of the latest night</h2>
<p class="meta"><code>{{.Latest}}</code></p>
{{if .Anomalies}}<div class="scroll"><table class="anomalies"><thead><tr><th>point</th><th>rank</th><th>culprit</th><th>cause</th><th class="num">window</th><th>evidence</th></tr></thead>
<tbody>{{range .Anomalies}}<tr><td>{{.Point}}</td><td>{{.Rank}}</td><td><b>{{.Culprit}}</b></td><td>{{.Cause}}</td><td class="num">{{.Window}}</td><td>{{.Evidence}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p class="note">No anomalies in the latest night.</p>{{end}}
</section>
</main>
<footer>fabricbench trend · {{.Generated}}</footer>
</body>
</html>
`
