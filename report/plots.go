package report

import (
	"fmt"
	"html/template"
	"image"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/fabricbench/fabricbench/results"
)

// Caps on the number of figures of each kind per run, so that a large
// fabric gives a report that still opens quickly. What is left out is said
// in a note.
const (
	maxHeatmaps     = 12   // symmetry groups drawn open per run (besides culprits' groups)
	maxFoldedMaps   = 12   // heat maps folded into the table of the other groups
	maxHistJobs     = 12   // jobs with NIC histograms per run
	maxFCTJobs      = 10   // lines in the FCT CDF
	maxPanels       = 12   // time-series panels per run
	maxHeatmapCols  = 240  // time bins per heat map
	maxHeatmapCells = 9600 // members × time bins per heat map (SVG size)
	maxCDFPoints    = 400  // steps per CDF line (about one per point of width)
	maxSeriesPoints = 2000
	maxStragglers   = 5 // straggler lines per histogram
)

// figure is one plot of the report: an inline SVG or, when there is
// nothing to draw, a note.
type figure struct {
	ID      string // anchor, so that anomalies can link to the figure
	Title   string
	SVG     template.HTML
	Caption string
	Note    string // shown instead of the plot
	Wide    bool   // spans the full page width
}

// plotSection is a titled group of figures.
type plotSection struct {
	Title   string
	Intro   string
	Figures []figure
	Notes   []string // e.g. "3 groups without anomalies omitted"
	Empty   string   // shown when there are no figures
	// Groups not drawn open: a summary line, then a collapsed table of
	// their loads, each row with its heat map folded (when drawn).
	Folded    []groupRow
	FoldedSum string
}

// groupRow is one line of the table of symmetry groups that are not drawn
// open: loads are the members' mean rates over the intervals in which the
// group carried traffic.
type groupRow struct {
	ID                  string // anchor of the row
	Group, Kind, Tag    string // Tag: "imbalance" for a group with one
	Members             int
	Mean, Min, Max, CoV string
	cov, lo, hi         float64
	Fig                 *figure // folded heat map, nil when not drawn
}

// figureTargets are the anchors of the figures drawn for a run, for links
// from the anomalies to them.
type figureTargets struct {
	groups map[int]string    // index in Plots.Groups -> heat map anchor
	jobs   map[string]string // job name -> NIC histogram anchor
}

// buildPlotSections draws every figure of one run. faults are labelled
// by their ID (F1, F2...), as in the run's faults table; anomalies' windows
// are drawn on the heat maps of their groups. Figure anchors start with
// anchor and are made unique by ids.
func buildPlotSections(pl *results.Plots, faults []results.Fault, anoms []results.Anomaly, imbs []results.Imbalance, anchor string, ids *idSet) ([]plotSection, figureTargets) {
	heat, groups := heatmapSection(pl.Groups, anoms, imbs, anchor, ids)
	hist, jobs := histSection(pl.NICHists, anchor, ids)
	return []plotSection{
		heat,
		hist,
		fctSection(pl.FCTs),
		timeSeriesSection(pl.TimeSeries, faults),
	}, figureTargets{groups: groups, jobs: jobs}
}

func failedFigure(title string, err error) figure {
	return figure{Title: title, Note: "The plot could not be drawn: " + err.Error()}
}

// ---- (a) symmetry-group heat maps ----

func heatmapSection(groups []results.GroupSeries, anoms []results.Anomaly, imbs []results.Imbalance, anchor string, ids *idSet) (plotSection, map[int]string) {
	s := plotSection{
		Title: "Symmetry groups: port bandwidth",
		Intro: "Each row is a member of a symmetry group (ports that should carry the same load), each column a telemetry interval; colour is bandwidth in Gb/s. Members flagged as anomalous are outlined in red (or pointed at by a red triangle when rows are thin) and marked » on the axis; a white box labelled #N marks the window of anomaly #N on its culprit's row. Groups with an anomaly or an imbalance are drawn; the others are summarised in a table below, their heat maps folded.",
		Empty: "No symmetry-group telemetry for this run.",
	}
	targets := map[int]string{}
	if len(groups) == 0 {
		return s, targets
	}
	marks := windowMarks(groups, anoms)
	imbRank := map[string]int{} // 1 for the most uneven imbalance
	for k, im := range imbs {
		if imbRank[im.Group] == 0 {
			imbRank[im.Group] = k + 1
		}
	}
	best := func(i int) int { // the best rank of a culprit in group i, 0 for none
		if len(marks[i]) == 0 {
			return 0
		}
		return marks[i][0].rank
	}
	flagged := func(i int) bool {
		return best(i) > 0 || len(groups[i].Anomalous) > 0 || imbRank[groups[i].Group] > 0
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	// Groups with culprits first, by their best-ranked culprit; then
	// groups with the most anomalous members; then imbalances, most
	// uneven first; otherwise keep the stored order.
	sort.SliceStable(order, func(a, b int) bool {
		ia, ib := order[a], order[b]
		ra, rb := best(ia), best(ib)
		if (ra > 0) != (rb > 0) {
			return ra > 0
		}
		if ra != rb {
			return ra < rb
		}
		na, nb := len(groups[ia].Anomalous), len(groups[ib].Anomalous)
		if na != nb {
			return na > nb
		}
		ma, mb := imbRank[groups[ia].Group], imbRank[groups[ib].Group]
		if (ma > 0) != (mb > 0) {
			return ma > 0
		}
		return ma < mb
	})
	// Drawn open: the groups of culprits (always, so that every anomaly
	// links to a drawn heat map), then other flagged groups up to
	// maxHeatmaps in all.
	var open, folded []int
	for _, i := range order {
		if best(i) > 0 || (flagged(i) && len(open) < maxHeatmaps) {
			open = append(open, i)
		} else {
			folded = append(folded, i)
		}
	}
	for _, i := range open {
		f := heatmapFigure(&groups[i], marks[i])
		f.ID = ids.make(anchor + "-group-" + slug(groups[i].Group))
		targets[i] = f.ID
		s.Figures = append(s.Figures, f)
	}
	if len(folded) == 0 {
		return s, targets
	}
	// The rest: flagged ones first (in order), then healthy ones, most
	// uneven first; the first maxFoldedMaps get their heat map folded
	// in their row.
	var rows []groupRow
	nFlagged := 0
	for _, i := range folded {
		r := groupStats(&groups[i])
		r.ID = ids.make(anchor + "-grouprow-" + slug(groups[i].Group))
		if flagged(i) {
			r.Tag = "imbalance"
			if len(groups[i].Anomalous) > 0 {
				r.Tag = "anomalous"
			}
			nFlagged++
		}
		rows = append(rows, r)
	}
	sort.SliceStable(rows[nFlagged:], func(a, b int) bool { return rows[nFlagged+a].cov > rows[nFlagged+b].cov })
	index := map[string]int{}
	for _, i := range folded {
		if _, ok := index[groups[i].Group]; !ok {
			index[groups[i].Group] = i
		}
	}
	lo, hi, maxCoV := math.Inf(1), math.Inf(-1), 0.0
	for k := range rows {
		r := &rows[k]
		gi := index[r.Group]
		targets[gi] = r.ID
		if k < maxFoldedMaps {
			f := heatmapFigure(&groups[gi], nil)
			f.ID = ids.make(anchor + "-group-" + slug(r.Group))
			r.Fig = &f
			targets[gi] = f.ID
		}
		if r.Mean != "—" {
			lo, hi = math.Min(lo, r.lo), math.Max(hi, r.hi)
			maxCoV = math.Max(maxCoV, r.cov)
		}
	}
	s.Folded = rows
	healthy := len(rows) - nFlagged
	var what []string
	if healthy > 0 {
		what = append(what, fmt.Sprintf("%s without anomaly or imbalance", plural(healthy, "group")))
	}
	if nFlagged > 0 {
		what = append(what, fmt.Sprintf("%s with an imbalance or anomalous member beyond the %d drawn above", plural(nFlagged, "group"), len(open)))
	}
	sum := strings.Join(what, " and ")
	if !math.IsInf(lo, 1) {
		sum += fmt.Sprintf(": members carried %s–%s Gb/s on average, CoV up to %s", fmtNum(lo), fmtNum(hi), fmtNum(maxCoV))
	}
	if n := min(len(rows), maxFoldedMaps); n < len(rows) {
		sum += fmt.Sprintf("; heat maps of the first %d", n)
	}
	s.FoldedSum = sum
	return s, targets
}

// groupStats summarises a group's load for the table of folded groups:
// the members' mean rates over the intervals in which the group carried
// traffic (its mean at least 5 % of its busiest interval's), their mean,
// min, max and coefficient of variation.
func groupStats(g *results.GroupSeries) groupRow {
	r := groupRow{Group: g.Group, Kind: g.Kind, Members: len(g.Members), Mean: "—", Min: "—", Max: "—", CoV: "—"}
	nm, nt := min(len(g.Members), len(g.Gbps)), len(g.TimesUs)
	col := make([]float64, nt) // group mean per interval, NaN without data
	peak := 0.0
	for i := range nt {
		sum, n := 0.0, 0
		for m := range nm {
			if i < len(g.Gbps[m]) && finite(g.Gbps[m][i]) {
				sum += g.Gbps[m][i]
				n++
			}
		}
		col[i] = math.NaN()
		if n > 0 {
			col[i] = sum / float64(n)
			peak = math.Max(peak, col[i])
		}
	}
	var means []float64
	for m := range nm {
		sum, n := 0.0, 0
		for i := range nt {
			if i < len(g.Gbps[m]) && finite(g.Gbps[m][i]) && col[i] >= 0.05*peak {
				sum += g.Gbps[m][i]
				n++
			}
		}
		if n > 0 {
			means = append(means, sum/float64(n))
		}
	}
	if len(means) == 0 {
		return r
	}
	var sum, sq float64
	r.lo, r.hi = math.Inf(1), math.Inf(-1)
	for _, v := range means {
		sum += v
		sq += v * v
		r.lo, r.hi = math.Min(r.lo, v), math.Max(r.hi, v)
	}
	mean := sum / float64(len(means))
	if mean > 0 {
		r.cov = math.Sqrt(math.Max(sq/float64(len(means))-mean*mean, 0)) / mean
	}
	r.Mean, r.Min, r.Max, r.CoV = fmtNum(mean), fmtNum(r.lo), fmtNum(r.hi), fmtNum(r.cov)
	return r
}

// windowMark is an anomaly window to draw on a heat map row.
type windowMark struct {
	rank           int
	member         string
	startUs, endUs float64
}

// culpritGroup returns the index of the group whose heat map shows the
// culprit of a: the group named a.Group that has a.Member as a member,
// else the first group that has it; -1 when none does.
func culpritGroup(groups []results.GroupSeries, a *results.Anomaly) int {
	first := -1
	for i := range groups {
		if !slices.Contains(groups[i].Members, a.Member) {
			continue
		}
		if groups[i].Group == a.Group {
			return i
		}
		if first < 0 {
			first = i
		}
	}
	return first
}

// windowMarks collects, per group index, the windows of the anomalies
// whose culprit is one of the group's members, best rank first.
func windowMarks(groups []results.GroupSeries, anoms []results.Anomaly) map[int][]windowMark {
	out := map[int][]windowMark{}
	for i := range anoms {
		a := &anoms[i]
		g := culpritGroup(groups, a)
		if g < 0 {
			continue
		}
		out[g] = append(out[g], windowMark{rank: rankOf(a, i), member: a.Member, startUs: a.StartUs, endUs: a.EndUs})
	}
	for _, m := range out {
		sort.SliceStable(m, func(a, b int) bool { return m[a].rank < m[b].rank })
	}
	return out
}

// heatGrid adapts a group to plotter.GridXYZ. Row 0 is drawn at the
// bottom, so rows are stored in reverse member order to put the first
// member at the top.
type heatGrid struct {
	xs []float64   // column centres
	z  [][]float64 // [row][col]
}

func (g heatGrid) Dims() (c, r int)   { return len(g.xs), len(g.z) }
func (g heatGrid) Z(c, r int) float64 { return g.z[r][c] }
func (g heatGrid) X(c int) float64    { return g.xs[c] }
func (g heatGrid) Y(r int) float64    { return float64(r) }

func heatmapFigure(g *results.GroupSeries, marks []windowMark) figure {
	title := g.Group
	if g.Kind != "" && !strings.HasPrefix(g.Group, g.Kind) {
		title = g.Kind + " " + g.Group
	}
	fig := figure{Title: title}
	nm := len(g.Members)
	if nm == 0 || len(g.Gbps) == 0 || len(g.TimesUs) == 0 {
		fig.Note = "No data for this group."
		return fig
	}
	if len(g.Gbps) < nm {
		nm = len(g.Gbps)
	}
	nt := len(g.TimesUs)
	// Columns: interval centres, binned down to at most maxHeatmapCols
	// and maxHeatmapCells in all.
	maxCols := max(24, min(maxHeatmapCols, maxHeatmapCells/nm))
	bin := (nt + maxCols - 1) / maxCols
	ncol := (nt + bin - 1) / bin
	unit := pickTimeUnit(g.TimesUs[nt-1])
	starts := make([]float64, nt) // interval start times
	for i, t := range g.TimesUs {
		switch {
		case i > 0:
			starts[i] = g.TimesUs[i-1]
		case nt > 1:
			starts[i] = t - (g.TimesUs[1] - g.TimesUs[0])
		default:
			starts[i] = 0
		}
	}
	xs := make([]float64, ncol)
	for c := range ncol {
		lo, hi := c*bin, min((c+1)*bin, nt)-1
		xs[c] = (starts[lo] + g.TimesUs[hi]) / 2 / unit.div
	}
	if !sort.Float64sAreSorted(xs) || slices.ContainsFunc(xs, func(v float64) bool { return !finite(v) }) {
		fig.Note = "Interval times are not increasing; the group cannot be drawn."
		return fig
	}
	for c := 1; c < ncol; c++ {
		if xs[c] == xs[c-1] {
			fig.Note = "Interval times are not increasing; the group cannot be drawn."
			return fig
		}
	}
	anom := map[string]bool{}
	for _, a := range g.Anomalous {
		anom[a] = true
	}
	z := make([][]float64, nm)
	zmin, zmax := math.Inf(1), math.Inf(-1)
	for m := range nm {
		row := make([]float64, ncol)
		vals := g.Gbps[m]
		for c := range ncol {
			sum, n := 0.0, 0
			for i := c * bin; i < min((c+1)*bin, nt); i++ {
				if i < len(vals) && finite(vals[i]) {
					sum += vals[i]
					n++
				}
			}
			if n == 0 {
				row[c] = math.NaN()
				continue
			}
			row[c] = sum / float64(n)
			zmin, zmax = math.Min(zmin, row[c]), math.Max(zmax, row[c])
		}
		z[nm-1-m] = row
	}
	if math.IsInf(zmin, 1) {
		fig.Note = "No bandwidth samples for this group."
		return fig
	}
	// Colour scale from 0 so that a port at half rate looks half as bright
	// as its peers, whatever the spread.
	lo, hi := math.Min(0, zmin), zmax
	if hi <= lo {
		hi = lo + 1
	}

	var anomNames []string
	var anomRows []float64
	for m := range nm {
		if anom[g.Members[m]] {
			anomNames = append(anomNames, g.Members[m])
			anomRows = append(anomRows, float64(nm-1-m))
		}
	}
	ptitle := fmt.Sprintf("%s: %s", title, plural(nm, "member"))
	if len(anomNames) > 0 {
		ptitle += fmt.Sprintf(" — anomalous: %s", shortList(anomNames, 3))
		fig.Caption = fmt.Sprintf("Anomalous members (marked in red): %s.", strings.Join(anomNames, ", "))
	} else {
		fig.Caption = "No anomalous member."
	}
	// Anomaly windows: the columns holding the intervals that end after
	// StartUs (the start of the first abnormal interval) and no later
	// than EndUs (the end of the last), on the culprit's row.
	row := map[string]int{}
	for m := range nm {
		if _, dup := row[g.Members[m]]; !dup {
			row[g.Members[m]] = m
		}
	}
	edges := cellEdges(xs)
	var boxes windowBoxes
	var drawn, outside []string
	for _, mk := range marks {
		m, ok := row[mk.member]
		win := fmtWindow(mk.startUs, mk.endUs)
		if !ok || win == "" {
			continue
		}
		desc := fmt.Sprintf("#%d %s %s", mk.rank, mk.member, win)
		lo, hi := -1, -1
		tol := 1e-6 * math.Max(1, math.Abs(mk.endUs))
		for i, t := range g.TimesUs {
			if t > mk.startUs+tol && t <= mk.endUs+tol {
				if lo < 0 {
					lo = i
				}
				hi = i
			}
		}
		if lo < 0 {
			outside = append(outside, desc)
			continue
		}
		boxes = append(boxes, windowBox{X0: edges[lo/bin], X1: edges[hi/bin+1], Row: float64(nm - 1 - m), Label: fmt.Sprintf("#%d", mk.rank)})
		drawn = append(drawn, desc)
	}
	if len(drawn) > 0 {
		fig.Caption += fmt.Sprintf(" Anomaly windows (white boxes): %s.", strings.Join(drawn, "; "))
	}
	if len(outside) > 0 {
		fig.Caption += fmt.Sprintf(" Outside the telemetry shown: %s.", strings.Join(outside, "; "))
	}
	if bin > 1 {
		fig.Caption += fmt.Sprintf(" Each column averages %d telemetry intervals.", bin)
	}
	p := newPlot(ptitle, "time ("+unit.name+")", "member")
	if nm > 1 {
		p.Y.Label.Text = ""
	}
	pal := viridis(64)
	hm := plotter.NewHeatMap(heatGrid{xs: xs, z: z}, paletteOf(pal))
	hm.Min, hm.Max = lo, hi
	hm.NaN = rgb(0xdddddd)
	// Equal columns are drawn as an image, one pixel per cell, scaled
	// without smoothing (a few hundred bytes of PNG instead of a path
	// per cell); uneven ones cell by cell.
	if img := heatImage(xs, z, lo, hi, pal, hm.NaN); img != nil {
		xmin, xmax, ymin, ymax := hm.DataRange()
		p.Add(plotter.NewImage(img, xmin, ymin, xmax, ymax))
	} else {
		p.Add(hm)
	}
	if len(anomRows) > 0 {
		p.Add(rowOutline{Rows: anomRows, Style: draw.LineStyle{Color: alert, Width: vg.Points(2)}})
	}
	if len(boxes) > 0 {
		p.Add(boxes)
	}
	xmin, xmax, ymin, ymax := hm.DataRange()
	eps := (xmax - xmin) * 1e-9
	p.X.Min, p.X.Max = xmin-eps, xmax+eps
	p.Y.Min, p.Y.Max = ymin-1e-9, ymax+1e-9
	p.X.Padding, p.Y.Padding = 0, 0
	p.Y.Tick.Length = vg.Points(3)
	rowH := vg.Points(13)
	if nm > 24 {
		rowH = vg.Points(8)
	}
	dataH := vg.Length(nm) * rowH
	dataH = max(vg.Points(60), min(dataH, vg.Points(480)))
	// Label every member when there is room, else every k-th.
	every := max(1, int(math.Ceil(float64(vg.Points(10)/(dataH/vg.Length(nm))))))
	p.Y.Tick.Marker = memberTicks(g.Members[:nm], anom, every)
	h := dataH + vg.Points(70)
	label := fmt.Sprintf("Heat map of port bandwidth in Gb/s over time for symmetry group %s", title)
	if len(drawn) > 0 {
		label += ", with anomaly windows " + strings.Join(drawn, "; ")
	}
	// crispEdges: no anti-aliasing seams between adjacent cells.
	svg, err := svgFigureAttrs(plotWidth, h, label, `shape-rendering="crispEdges"`, func(dc draw.Canvas) {
		// Heat map on the left, colour bar on the right, lined up with the
		// heat map's data area.
		barW := vg.Points(64)
		area := draw.Crop(dc, 0, -barW, 0, 0)
		p.Draw(area)
		data := p.DataCanvas(area)
		drawColorBar(dc, data, area.Max.X+vg.Points(10), lo, hi, pal)
	})
	if err != nil {
		return failedFigure(title, err)
	}
	fig.SVG = svg
	return fig
}

// heatImage returns the heat map z (rows bottom up) as an image with one
// pixel per cell, coloured as plotter.HeatMap colours it, or nil when the
// column centres xs are not evenly spaced (an image cannot place them).
func heatImage(xs []float64, z [][]float64, lo, hi float64, pal []color.Color, nan color.Color) image.Image {
	nc, nr := len(xs), len(z)
	if nc > 1 {
		d := (xs[nc-1] - xs[0]) / float64(nc-1)
		for c := 1; c < nc; c++ {
			if math.Abs(xs[c]-xs[c-1]-d) > 1e-3*d {
				return nil
			}
		}
	}
	img := image.NewNRGBA(image.Rect(0, 0, nc, nr))
	ps := float64(len(pal)-1) / (hi - lo)
	for r := range nr {
		for c := range nc {
			col := nan
			if v := z[r][c]; finite(v) && v >= lo && v <= hi {
				col = pal[int((v-lo)*ps+0.5)]
			}
			img.Set(c, nr-1-r, col)
		}
	}
	return img
}

// cellEdges returns the column edges of a heat map with column centres
// xs, as plotter.HeatMap draws them: half-way between centres, half a
// spacing beyond the outer ones (±0.5 for a single column).
func cellEdges(xs []float64) []float64 {
	n := len(xs)
	e := make([]float64, n+1)
	if n == 1 {
		e[0], e[1] = xs[0]-0.5, xs[0]+0.5
		return e
	}
	for c := 1; c < n; c++ {
		e[c] = (xs[c-1] + xs[c]) / 2
	}
	e[0] = xs[0] - (xs[1]-xs[0])/2
	e[n] = xs[n-1] + (xs[n-1]-xs[n-2])/2
	return e
}

// drawColorBar draws a vertical colour scale from lo (bottom of data) to hi
// (top of data) at x, with tick labels to its right and the unit on top.
func drawColorBar(dc, data draw.Canvas, x vg.Length, lo, hi float64, pal []color.Color) {
	w := vg.Points(11)
	y0, y1 := data.Min.Y, data.Max.Y
	// One pixel per colour, lowest at the bottom, scaled up unsmoothed.
	n := len(pal)
	img := image.NewNRGBA(image.Rect(0, 0, 1, n))
	for i, col := range pal {
		img.Set(0, n-1-i, col)
	}
	dc.DrawImage(vg.Rectangle{Min: vg.Point{X: x, Y: y0}, Max: vg.Point{X: x + w, Y: y1}}, img)
	edge := draw.LineStyle{Color: rgb(0x555555), Width: vg.Points(0.5)}
	dc.StrokeLines(edge, []vg.Point{{X: x, Y: y0}, {X: x + w, Y: y0}, {X: x + w, Y: y1}, {X: x, Y: y1}, {X: x, Y: y0}})
	ts := draw.TextStyle{Color: color.Black, Font: font.From(sansFont, 8.5), Handler: plot.DefaultTextHandler, XAlign: draw.XLeft, YAlign: draw.YCenter}
	for _, t := range (niceTicks{}).Ticks(lo, hi) {
		if t.IsMinor() || t.Value < lo || t.Value > hi {
			continue
		}
		y := y0 + (y1-y0)*vg.Length((t.Value-lo)/(hi-lo))
		dc.StrokeLine2(edge, x+w, y, x+w+vg.Points(3), y)
		dc.FillText(ts, vg.Point{X: x + w + vg.Points(5), Y: y}, t.Label)
	}
	us := ts
	us.Font = font.From(sansFont, 10)
	us.XAlign, us.YAlign = draw.XLeft, draw.YBottom
	dc.FillText(us, vg.Point{X: x - vg.Points(2), Y: y1 + vg.Points(5)}, "Gb/s")
}

// memberTicks labels heat-map rows with member names (every k-th when
// there are many, anomalous ones always), anomalous ones with a » mark.
func memberTicks(members []string, anom map[string]bool, every int) plot.ConstantTicks {
	n := len(members)
	// Unlabelled zone around each anomalous member, whose label is
	// always shown, so that labels never overlap.
	near := make([]bool, n)
	for m, name := range members {
		if anom[name] {
			for k := max(0, m-every+1); k < min(n, m+every); k++ {
				near[k] = true
			}
		}
	}
	var ticks plot.ConstantTicks
	for m, name := range members {
		y := float64(n - 1 - m)
		switch {
		case anom[name]:
			ticks = append(ticks, plot.Tick{Value: y, Label: "» " + name})
		case m%every == 0 && !near[m]:
			ticks = append(ticks, plot.Tick{Value: y, Label: name})
		default:
			ticks = append(ticks, plot.Tick{Value: y}) // minor tick
		}
	}
	return ticks
}

// viridis returns n colours of the viridis colour map (dark purple for low
// values to yellow for high ones): perceptually uniform and readable by
// colour-blind people.
func viridis(n int) []color.Color {
	stops := []uint32{0x440154, 0x482878, 0x3e4989, 0x31688e, 0x26828e, 0x1f9e89, 0x35b779, 0x6ece58, 0xb5de2b, 0xfde725}
	out := make([]color.Color, n)
	for i := range n {
		f := float64(i) / float64(max(n-1, 1)) * float64(len(stops)-1)
		k := min(int(f), len(stops)-2)
		t := f - float64(k)
		a, b := stops[k], stops[k+1]
		mix := func(sh uint) uint8 {
			x, y := float64((a>>sh)&0xff), float64((b>>sh)&0xff)
			return uint8(math.Round(x + (y-x)*t))
		}
		out[i] = color.RGBA{R: mix(16), G: mix(8), B: mix(0), A: 0xff}
	}
	return out
}

type colorsPalette []color.Color

func (p colorsPalette) Colors() []color.Color { return p }

func paletteOf(c []color.Color) colorsPalette { return colorsPalette(c) }

func shortList(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(" +%d", len(names)-n)
}

// ---- (b) per-NIC bandwidth histograms ----

func histSection(hists []results.NICHist, anchor string, ids *idSet) (plotSection, map[string]string) {
	s := plotSection{
		Title: "NIC bandwidth distribution per job",
		Intro: "Share of each NIC's bandwidth samples during the job, in bands of line rate. Grey bars: the mean over the job's other NICs; coloured outlines: stragglers.",
		Empty: "No per-NIC bandwidth histograms for this run.",
	}
	var jobs []string
	byJob := map[string][]results.NICHist{}
	for _, h := range hists {
		if _, ok := byJob[h.Job]; !ok {
			jobs = append(jobs, h.Job)
		}
		byJob[h.Job] = append(byJob[h.Job], h)
	}
	targets := map[string]string{}
	if len(jobs) == 0 {
		return s, targets
	}
	// Jobs with stragglers first.
	hasStr := func(j string) bool {
		return slices.ContainsFunc(byJob[j], func(h results.NICHist) bool { return h.Straggler })
	}
	sort.SliceStable(jobs, func(a, b int) bool { return hasStr(jobs[a]) && !hasStr(jobs[b]) })
	if len(jobs) > maxHistJobs {
		s.Notes = append(s.Notes, fmt.Sprintf("%d of %d jobs are not drawn.", len(jobs)-maxHistJobs, len(jobs)))
		jobs = jobs[:maxHistJobs]
	}
	for _, j := range jobs {
		f := histFigure(j, byJob[j])
		f.ID = ids.make(anchor + "-job-" + slug(j))
		targets[j] = f.ID
		s.Figures = append(s.Figures, f)
	}
	return s, targets
}

// histShares converts a histogram to percentages of its samples, or nil
// when it is malformed or empty.
func histShares(h *results.NICHist) []float64 {
	if len(h.Counts) == 0 || len(h.Edges) != len(h.Counts)+1 {
		return nil
	}
	for i := 1; i < len(h.Edges); i++ {
		if !finite(h.Edges[i]) || !finite(h.Edges[i-1]) || h.Edges[i] <= h.Edges[i-1] {
			return nil
		}
	}
	total := 0
	for _, c := range h.Counts {
		total += max(c, 0)
	}
	if total == 0 {
		return nil
	}
	out := make([]float64, len(h.Counts))
	for i, c := range h.Counts {
		out[i] = 100 * float64(max(c, 0)) / float64(total)
	}
	return out
}

func histFigure(job string, hs []results.NICHist) figure {
	fig := figure{Title: "job " + job}
	var normal, strag []int
	for i := range hs {
		if histShares(&hs[i]) == nil {
			continue
		}
		if hs[i].Straggler {
			strag = append(strag, i)
		} else {
			normal = append(normal, i)
		}
	}
	if len(normal)+len(strag) == 0 {
		fig.Note = "No bandwidth samples for this job."
		return fig
	}
	title := fmt.Sprintf("job %s: %s", job, plural(len(normal)+len(strag), "NIC"))
	if len(strag) > 0 {
		title += ", " + plural(len(strag), "straggler")
	}
	p := newPlot(title, "NIC bandwidth (% of line rate)", "share of samples (%)")
	p.Add(hGrid{})
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(4)

	// Mean over the NICs that share the first normal NIC's bands; the
	// others (different bands) are drawn as thin grey outlines.
	if len(normal) > 0 {
		ref := hs[normal[0]].Edges
		mean := make([]float64, len(ref)-1)
		n := 0
		var odd []int
		for _, i := range normal {
			if !slices.Equal(hs[i].Edges, ref) {
				odd = append(odd, i)
				continue
			}
			for k, v := range histShares(&hs[i]) {
				mean[k] += v
			}
			n++
		}
		for k := range mean {
			mean[k] /= float64(n)
		}
		b := bars{Edges: pct(ref), Values: mean, Fill: rgb(0xc5ccd3), Line: draw.LineStyle{Color: rgb(0x8a96a3), Width: vg.Points(0.5)}}
		p.Add(b)
		name := fmt.Sprintf("mean of %d NICs", n)
		if n == 1 {
			name = hs[normal[0]].Host
		}
		p.Legend.Add(name, b)
		for k, i := range odd {
			l := stepLine(hs[i].Edges, histShares(&hs[i]))
			l.LineStyle = draw.LineStyle{Color: faintGrey, Width: vg.Points(0.8)}
			p.Add(l)
			if k == 0 {
				p.Legend.Add(fmt.Sprintf("%s with other bands", plural(len(odd), "NIC")), l)
			}
		}
	}
	for k, i := range strag {
		if k == maxStragglers {
			fig.Caption = fmt.Sprintf("%d more stragglers are not drawn. ", len(strag)-maxStragglers)
			break
		}
		l := stepLine(hs[i].Edges, histShares(&hs[i]))
		l.LineStyle = draw.LineStyle{Color: alertAlts[k%len(alertAlts)], Width: vg.Points(2)}
		p.Add(l)
		p.Legend.Add(hs[i].Host+" (straggler)", l)
	}
	p.Y.Min = 0
	p.Y.Max *= 1.3 // room for the legend above the bars
	p.X.Min, p.X.Max = math.Min(p.X.Min, 0), math.Max(p.X.Max, 100)
	var names []string
	for _, i := range strag {
		names = append(names, hs[i].Host)
	}
	if len(names) > 0 {
		fig.Caption += "Stragglers: " + strings.Join(names, ", ") + "."
	} else {
		fig.Caption += "No straggler."
	}
	svg, err := svgPlot(p, plotWidth, plotHeight, fmt.Sprintf("Histogram of per-NIC bandwidth for job %s, stragglers highlighted", job))
	if err != nil {
		return failedFigure(fig.Title, err)
	}
	fig.SVG = svg
	return fig
}

func pct(edges []float64) []float64 {
	out := make([]float64, len(edges))
	for i, e := range edges {
		out[i] = 100 * e
	}
	return out
}

// stepLine outlines a histogram (edges as fractions, values in %).
func stepLine(edges, vals []float64) *plotter.Line {
	xys := make(plotter.XYs, 0, 2*len(vals)+2)
	xys = append(xys, plotter.XY{X: 100 * edges[0], Y: 0})
	for i, v := range vals {
		xys = append(xys, plotter.XY{X: 100 * edges[i], Y: v}, plotter.XY{X: 100 * edges[i+1], Y: v})
	}
	xys = append(xys, plotter.XY{X: 100 * edges[len(edges)-1], Y: 0})
	return &plotter.Line{XYs: xys}
}

// ---- (c) FCT CDFs ----

func fctSection(fcts []results.FCTSeries) plotSection {
	s := plotSection{
		Title: "Flow completion times",
		Intro: "Cumulative distribution of flow completion times, one line per job.",
		Empty: "No flow completion times for this run.",
	}
	type line struct {
		job string
		v   []float64
	}
	var lines []line
	for _, f := range fcts {
		var v []float64
		for _, x := range f.FCTUs {
			if finite(x) && x >= 0 {
				v = append(v, x)
			}
		}
		if len(v) == 0 {
			continue
		}
		if !sort.Float64sAreSorted(v) {
			sort.Float64s(v)
		}
		lines = append(lines, line{f.Job, v})
	}
	if len(lines) == 0 {
		if len(fcts) > 0 {
			s.Figures = append(s.Figures, figure{Title: "FCT CDF", Note: "No completed flows."})
		}
		return s
	}
	if len(lines) > maxFCTJobs {
		s.Notes = append(s.Notes, fmt.Sprintf("%d of %d jobs are not drawn.", len(lines)-maxFCTJobs, len(lines)))
		lines = lines[:maxFCTJobs]
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		lo, hi = math.Min(lo, l.v[0]), math.Max(hi, l.v[len(l.v)-1])
	}
	logX := lo > 0 && hi/lo >= 50
	unit := pickTimeUnit(hi)
	xl := "flow completion time (" + unit.name + ")"
	if logX {
		xl += ", log scale"
	}
	p := newPlot("FCT CDF", xl, "fraction of flows")
	p.Add(hGrid{})
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
	}
	var legend []legendItem
	var caption []string
	for k, l := range lines {
		xys := cdfPoints(l.v, unit.div)
		ln := &plotter.Line{XYs: xys, LineStyle: draw.LineStyle{Color: series[k%len(series)], Width: vg.Points(1.6)}}
		p.Add(ln)
		legend = append(legend, legendItem{fmt.Sprintf("%s (%d flows)", l.job, len(l.v)), ln})
		caption = append(caption, fmt.Sprintf("%s: p50 %s, p99 %s, max %s", l.job,
			fmtUs(quantile(l.v, 0.5)), fmtUs(quantile(l.v, 0.99)), fmtUs(l.v[len(l.v)-1])))
	}
	p.Y.Min, p.Y.Max = 0, 1
	if p.X.Min == p.X.Max {
		p.X.Min, p.X.Max = p.X.Min*0.9, p.X.Max*1.1+1e-9
	}
	svg, err := svgPlotLegendBelow(p, legend, plotWidth, plotHeight, "Cumulative distribution of flow completion times per job")
	if err != nil {
		s.Figures = append(s.Figures, failedFigure("FCT CDF", err))
		return s
	}
	s.Figures = append(s.Figures, figure{Title: "FCT CDF", SVG: svg, Caption: strings.Join(caption, "; ") + "."})
	return s
}

// cdfPoints returns the empirical CDF of sorted values, scaled by 1/div,
// as a staircase through at most about 2·maxCDFPoints points.
func cdfPoints(v []float64, div float64) plotter.XYs {
	n := len(v)
	step := max(1, n/maxCDFPoints)
	xys := make(plotter.XYs, 0, 2*(n/step)+4)
	prev := 0.0
	add := func(i int) {
		y := float64(i+1) / float64(n)
		x := v[i] / div
		xys = append(xys, plotter.XY{X: x, Y: prev}, plotter.XY{X: x, Y: y})
		prev = y
	}
	for i := step - 1; i < n; i += step {
		add(i)
	}
	if prev != 1 {
		add(n - 1)
	}
	return xys
}

func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// ---- (d) bandwidth around faults ----

func timeSeriesSection(ts []results.TimeSeries, faults []results.Fault) plotSection {
	s := plotSection{
		Title: "Bandwidth around faults",
		Intro: "Bandwidth of the affected ports and their peers; dashed vertical lines mark injected faults.",
		Empty: "No bandwidth time series for this run.",
	}
	var panels []string
	byPanel := map[string][]results.TimeSeries{}
	for _, t := range ts {
		if _, ok := byPanel[t.Panel]; !ok {
			panels = append(panels, t.Panel)
		}
		byPanel[t.Panel] = append(byPanel[t.Panel], t)
	}
	if len(panels) == 0 {
		if len(faults) > 0 {
			s.Empty = "No bandwidth time series for this run (faults were injected: see the faults table)."
		}
		return s
	}
	if len(panels) > maxPanels {
		s.Notes = append(s.Notes, fmt.Sprintf("%d of %d panels are not drawn.", len(panels)-maxPanels, len(panels)))
		panels = panels[:maxPanels]
	}
	for _, name := range panels {
		s.Figures = append(s.Figures, panelFigure(name, byPanel[name], faults))
	}
	return s
}

func panelFigure(name string, ts []results.TimeSeries, faults []results.Fault) figure {
	title := name
	if title == "" {
		title = "bandwidth"
	}
	fig := figure{Title: title}
	tmax := math.Inf(-1)
	for _, t := range ts {
		for _, x := range t.TimesUs {
			if finite(x) {
				tmax = math.Max(tmax, math.Abs(x))
			}
		}
	}
	if math.IsInf(tmax, -1) {
		fig.Note = "No data."
		return fig
	}
	unit := pickTimeUnit(tmax)
	p := newPlot(title, "time ("+unit.name+")", "bandwidth (Gb/s)")
	p.Add(hGrid{})
	var legend []legendItem
	drawn := 0
	for k, t := range ts {
		segs := segments(t.TimesUs, t.Gbps, unit.div)
		if len(segs) == 0 {
			continue
		}
		sty := draw.LineStyle{Color: series[k%len(series)], Width: vg.Points(1.5)}
		for j, seg := range segs {
			// Each sample is the mean over the interval that ends at its
			// time: draw it as a step held over that interval, not as a
			// ramp from the previous sample (a link going down is a step).
			ln := &plotter.Line{XYs: seg, LineStyle: sty, StepStyle: plotter.PreStep}
			p.Add(ln)
			if j == 0 {
				legend = append(legend, legendItem{t.Name, ln})
			}
		}
		drawn++
	}
	if drawn == 0 {
		fig.Note = "No data."
		return fig
	}
	p.Y.Min = math.Min(p.Y.Min, 0)
	if p.Y.Max <= p.Y.Min {
		p.Y.Max = p.Y.Min + 1
	}
	if p.X.Max <= p.X.Min {
		p.X.Min, p.X.Max = p.X.Min-1, p.X.Max+1
	}
	// Leave room above the lines for the fault labels.
	p.Y.Max += (p.Y.Max - p.Y.Min) * 0.12
	var notes []string
	fs := draw.TextStyle{Color: rgb(0x333333), Font: font.From(sansFont, 8), Handler: p.TextHandler, XAlign: draw.XLeft, YAlign: draw.YTop}
	lastX := map[string]float64{} // where each label was last written
	for i, f := range faults {
		x := f.AtUs / unit.div
		if !finite(x) || x < p.X.Min || x > p.X.Max {
			continue
		}
		lbl := faultLabel(&f, i)
		// The events of one fault (a flap) share a label: write it
		// again only where it does not crowd the previous one.
		text := lbl
		if lx, ok := lastX[lbl]; ok && x-lx < 0.06*(p.X.Max-p.X.Min) {
			text = ""
		} else {
			lastX[lbl] = x
		}
		p.Add(vLine{X: x, Label: text, Text: fs, Style: draw.LineStyle{Color: rgb(0x333333), Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}})
		notes = append(notes, fmt.Sprintf("%s at %s: %s", lbl, fmtUs(f.AtUs), f.Description))
	}
	if len(notes) > 0 {
		fig.Caption = strings.Join(notes, "; ") + "."
	} else if len(faults) > 0 {
		fig.Caption = "No fault falls within this window."
	}
	svg, err := svgPlotLegendBelow(p, legend, plotWidth, plotHeight, "Bandwidth over time, "+title+", with fault times")
	if err != nil {
		return failedFigure(title, err)
	}
	fig.SVG = svg
	return fig
}

// segments splits a series at missing values (NaN, ±Inf, unmatched
// lengths) into drawable runs, thinned to at most maxSeriesPoints points.
func segments(ts, vs []float64, div float64) []plotter.XYs {
	n := min(len(ts), len(vs))
	step := max(1, n/maxSeriesPoints)
	var out []plotter.XYs
	var cur plotter.XYs
	for i := 0; i < n; i += step {
		if !finite(ts[i]) || !finite(vs[i]) {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: ts[i] / div, Y: vs[i]})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
