package report

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot geometry and style shared by every figure, so that all plots of a
// report have the same width and type sizes.
const (
	plotWidth  vg.Length = 460 // points
	plotHeight vg.Length = 260
)

var (
	sansFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

	// series is a qualitative palette (Tableau 10) for lines.
	series = []color.Color{
		rgb(0x4e79a7), rgb(0xf28e2b), rgb(0x59a14f), rgb(0xb07aa1), rgb(0x76b7b2),
		rgb(0xedc948), rgb(0x9c755f), rgb(0xff9da7), rgb(0xbab0ac), rgb(0xe15759),
	}
	// alert marks anomalies and stragglers.
	alert     = rgb(0xd62728)
	alertAlts = []color.Color{rgb(0xd62728), rgb(0xff7f0e), rgb(0x9467bd), rgb(0x8c564b), rgb(0xe377c2)}
	faintGrey = rgb(0x9aa5b1)
	gridGrey  = rgb(0xe3e7eb)
)

func rgb(v uint32) color.Color {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}

// newPlot returns a plot with the report's fonts, title and axis labels.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sansFont, 11)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sansFont, 10)
		a.Tick.Label.Font = font.From(sansFont, 8.5)
		a.LineStyle.Color = rgb(0x555555)
		a.Tick.LineStyle.Color = rgb(0x555555)
		a.Tick.Marker = niceTicks{}
	}
	p.Legend.TextStyle.Font = font.From(sansFont, 8.5)
	p.Legend.ThumbnailWidth = vg.Points(14)
	p.Legend.Padding = vg.Points(1)
	return p
}

// svgFigure draws with fn on a w×h SVG canvas and returns the SVG element,
// ready to inline into HTML: no XML prolog, role="img", an aria-label and a
// <title> naming the plot. A panic inside gonum/plot (bad data that slipped
// through) is returned as an error rather than crashing the report.
func svgFigure(w, h vg.Length, label string, fn func(dc draw.Canvas)) (out template.HTML, err error) {
	return svgFigureAttrs(w, h, label, "", fn)
}

// svgFigureAttrs is svgFigure with extra attributes for the <svg> element.
func svgFigureAttrs(w, h vg.Length, label, attrs string, fn func(dc draw.Canvas)) (out template.HTML, err error) {
	defer func() {
		if e := recover(); e != nil {
			out, err = "", fmt.Errorf("plot %q: %v", label, e)
		}
	}()
	c := vgsvg.New(w, h)
	fn(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("plot %q: %w", label, err)
	}
	return inlineSVG(buf.String(), label, attrs)
}

// svgPlot renders a single plot on a w×h canvas.
func svgPlot(p *plot.Plot, w, h vg.Length, label string) (template.HTML, error) {
	return svgFigure(w, h, label, p.Draw)
}

// inlineSVG turns a standalone SVG document produced by vgsvg into an
// element for an HTML page.
func inlineSVG(doc, label, attrs string) (template.HTML, error) {
	i := strings.Index(doc, "<svg")
	if i < 0 {
		return "", fmt.Errorf("plot %q: no <svg> element in output", label)
	}
	doc = doc[i:]
	end := strings.IndexByte(doc, '>')
	if end < 0 {
		return "", fmt.Errorf("plot %q: unterminated <svg> tag", label)
	}
	esc := html.EscapeString(label)
	var b strings.Builder
	b.Grow(len(doc) + 2*len(esc) + 100)
	b.WriteString(`<svg role="img" class="plot" aria-label="`)
	b.WriteString(esc)
	b.WriteString(`"`)
	if attrs != "" {
		b.WriteString(" " + attrs)
	}
	b.WriteString(doc[len("<svg"):end])
	b.WriteString(">\n<title>")
	b.WriteString(esc)
	b.WriteString("</title>")
	rest := doc[end+1:]
	// vgsvg names the font family alone (Liberation Sans); give the
	// browser metric-compatible fallbacks so labels keep their layout on
	// machines without the Liberation fonts.
	// The usual case, regular Liberation Sans, takes the page's style
	// for svg.plot text (the same fallbacks), to keep the page light.
	rest = strings.ReplaceAll(rest, "font-family:Liberation Sans;font-variant:normal;font-weight:normal;font-style:normal;", "")
	rest = strings.ReplaceAll(rest, "font-family:Liberation Sans;",
		"font-family:'Liberation Sans',Arimo,Arial,Helvetica,sans-serif;")
	// vgsvg labels its PNG images image/jpg, and an image keeps its
	// aspect ratio unless told not to: a 148×4 heat map would be drawn
	// as a thin band in its box.
	rest = strings.ReplaceAll(rest, `xlink:href="data:image/jpg;base64,`, `xlink:href="data:image/png;base64,`)
	rest = strings.ReplaceAll(rest, `<image `, `<image preserveAspectRatio="none" `)
	b.WriteString(rest)
	return template.HTML(b.String()), nil
}

// timeUnit picks a readable unit for times given in microseconds.
type timeUnit struct {
	name string
	div  float64
}

func pickTimeUnit(maxUs float64) timeUnit {
	switch m := math.Abs(maxUs); {
	case m >= 2e6:
		return timeUnit{"s", 1e6}
	case m >= 2e3:
		return timeUnit{"ms", 1e3}
	default:
		return timeUnit{"µs", 1}
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// vLine is a vertical marker line across the data area at X with a short
// label at its top, used for fault times.
type vLine struct {
	X     float64
	Label string
	Style draw.LineStyle
	Text  draw.TextStyle
}

func (l vLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(l.X)
	if !c.ContainsX(x) {
		return
	}
	c.StrokeLine2(l.Style, x, c.Min.Y, x, c.Max.Y)
	if l.Label != "" {
		c.FillText(l.Text, vg.Point{X: x + vg.Points(2), Y: c.Max.Y - vg.Points(2)}, l.Label)
	}
}

// rowOutline marks rows Y±0.5 of a heat map: an outline across the data
// area when rows are tall enough to keep their colour visible inside it,
// else a triangle pointing at the row from the right of the data area.
type rowOutline struct {
	Rows  []float64
	Style draw.LineStyle
}

func (o rowOutline) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	inset := o.Style.Width / 2
	for _, r := range o.Rows {
		y0, y1 := trY(r-0.5), trY(r+0.5)
		if y1-y0 >= 4*o.Style.Width {
			y0, y1 = y0+inset, y1-inset
			x0, x1 := c.Min.X+inset, c.Max.X-inset
			c.StrokeLines(o.Style, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}, {X: x0, Y: y0}})
			continue
		}
		y := (y0 + y1) / 2
		x := c.Max.X + vg.Points(1.5)
		c.FillPolygon(o.Style.Color, []vg.Point{{X: x, Y: y}, {X: x + vg.Points(7), Y: y + vg.Points(4)}, {X: x + vg.Points(7), Y: y - vg.Points(4)}})
	}
}

// windowBox is a time span [X0, X1] on heat-map row Row (an anomaly's
// window on its culprit's row), labelled e.g. "#1".
type windowBox struct {
	X0, X1 float64
	Row    float64
	Label  string
}

// windowBoxes outlines time spans on heat-map rows: a white line with dark
// edges, visible on every colour of the palette, inset from the row so
// that a red row outline stays visible, and at least 7 pt tall on thin
// rows. Each box is labelled in a small white tag at its top-left corner.
type windowBoxes []windowBox

func (bs windowBoxes) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	dark := draw.LineStyle{Color: rgb(0x111111), Width: vg.Points(2.8)}
	light := draw.LineStyle{Color: color.White, Width: vg.Points(1.4)}
	ts := draw.TextStyle{Color: rgb(0x111111), Font: font.From(sansFont, 9), Handler: p.TextHandler, XAlign: draw.XLeft, YAlign: draw.YBottom}
	for _, b := range bs {
		x0, x1 := max(trX(b.X0), c.Min.X), min(trX(b.X1), c.Max.X)
		if x1 <= x0 {
			continue
		}
		y0, y1 := trY(b.Row-0.5), trY(b.Row+0.5)
		mid := (y0 + y1) / 2
		h := max(y1-y0-vg.Points(5), vg.Points(7))
		y0, y1 = mid-h/2, mid+h/2
		// Keep the outline at least its width wide.
		if x1-x0 < vg.Points(3) {
			x0, x1 = (x0+x1)/2-vg.Points(1.5), (x0+x1)/2+vg.Points(1.5)
		}
		pts := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}, {X: x0, Y: y0}}
		c.StrokeLines(dark, pts)
		c.StrokeLines(light, pts)
		if b.Label == "" {
			continue
		}
		w, th := ts.Width(b.Label)+vg.Points(4), ts.Height(b.Label)+vg.Points(1)
		// Above the box, or inside its top when there is no room above.
		ly := y1 + vg.Points(1.5)
		if ly+th > c.Max.Y {
			ly = y1 - th - vg.Points(1.5)
		}
		lx := min(x0, c.Max.X-w)
		tag := []vg.Point{{X: lx, Y: ly}, {X: lx + w, Y: ly}, {X: lx + w, Y: ly + th}, {X: lx, Y: ly + th}}
		c.FillPolygon(color.White, tag)
		c.StrokeLines(draw.LineStyle{Color: rgb(0x111111), Width: vg.Points(0.6)}, append(tag, tag[0]))
		c.FillText(ts, vg.Point{X: lx + vg.Points(2), Y: ly + vg.Points(0.5)}, b.Label)
	}
}

// bars draws filled histogram bars over explicit bin edges.
type bars struct {
	Edges  []float64 // len(Values)+1
	Values []float64
	Fill   color.Color
	Line   draw.LineStyle
}

func (h bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, v := range h.Values {
		if !finite(v) || v <= 0 {
			continue
		}
		x0, x1 := trX(h.Edges[i]), trX(h.Edges[i+1])
		y0, y1 := trY(0), trY(v)
		pts := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
		c.FillPolygon(h.Fill, c.ClipPolygonXY(pts))
		if h.Line.Width > 0 {
			c.StrokeLines(h.Line, c.ClipLinesXY(append(pts, pts[0]))...)
		}
	}
}

func (h bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = h.Edges[0], h.Edges[len(h.Edges)-1]
	for _, v := range h.Values {
		if finite(v) {
			ymax = math.Max(ymax, v)
		}
	}
	return xmin, xmax, 0, ymax
}

func (h bars) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}}
	c.FillPolygon(h.Fill, pts)
	if h.Line.Width > 0 {
		c.StrokeLines(h.Line, append(pts, pts[0]))
	}
}

// grid draws light horizontal grid lines at the Y axis' major ticks.
type hGrid struct{}

func (hGrid) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	sty := draw.LineStyle{Color: gridGrey, Width: vg.Points(0.5)}
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if t.IsMinor() {
			continue
		}
		y := trY(t.Value)
		if c.ContainsY(y) {
			c.StrokeLine2(sty, c.Min.X, y, c.Max.X, y)
		}
	}
}

// niceTicks places about five major ticks (four to seven, more only when
// fewer would not do) at multiples of 1, 2 or 5 × 10^k with labels of just
// the needed precision, and minor ticks between them.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !finite(lo) || !finite(hi) {
		return nil
	}
	if hi <= lo {
		return []plot.Tick{{Value: lo, Label: fmtNum(lo)}}
	}
	span := hi - lo
	mag := math.Pow10(int(math.Floor(math.Log10(span / 5))))
	// Candidate steps, finest first, with their minor steps.
	steps := [][2]float64{{mag / 2, mag / 10}, {mag, mag / 5}, {2 * mag, mag / 2}, {5 * mag, mag}, {10 * mag, 2 * mag}}
	k := 1
	for k < len(steps)-1 && span/steps[k][0] > 6.5 {
		k++
	}
	// The coarsest step with at most 6.5 intervals can leave only three
	// labels (50, 100, 150 on 30..175): then take the next finer one.
	majors := func(step float64) int {
		return int(math.Floor(hi/step+1e-6) - math.Ceil(lo/step-1e-6) + 1)
	}
	if majors(steps[k][0]) < 4 {
		k--
	}
	step, minor := steps[k][0], steps[k][1]
	dec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	for i := math.Ceil(lo/minor - 1e-9); ; i++ {
		v := i * minor
		if v > hi+minor*1e-6 {
			break
		}
		if r := math.Round(v / step); math.Abs(v/step-r) < 1e-6 {
			v = r * step
			if math.Abs(v) < step*1e-9 {
				v = 0
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', dec, 64)})
			continue
		}
		ticks = append(ticks, plot.Tick{Value: v})
	}
	return ticks
}

// logTicks labels decades, and 2× and 5× too when fewer than four decades
// are labelled; minor ticks at the other integer multiples.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || !finite(hi) {
		return nil
	}
	k0, k1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	// 2× and 5× too when fewer than four decades are labelled (0.02..15
	// would otherwise have only 0.1, 1 and 10).
	decades := 0
	for k := k0; k <= k1; k++ {
		if v := math.Pow10(k); v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
			decades++
		}
	}
	dense := decades < 4
	var ticks []plot.Tick
	for k := k0; k <= k1; k++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow10(k)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (dense && (m == 2 || m == 5)) {
				t.Label = fmtNum(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// legendItem is one entry of a legend drawn under a plot.
type legendItem struct {
	Name  string
	Thumb plot.Thumbnailer
}

const legendRowH vg.Length = 13

// legendRows lays items out left to right in rows no wider than width.
func legendRows(items []legendItem, sty draw.TextStyle, width vg.Length) [][]legendItem {
	var rows [][]legendItem
	var cur []legendItem
	x := vg.Length(0)
	for _, it := range items {
		w := legendEntryWidth(it, sty)
		if len(cur) > 0 && x+w > width {
			rows = append(rows, cur)
			cur, x = nil, 0
		}
		cur = append(cur, it)
		x += w
	}
	if len(cur) > 0 {
		rows = append(rows, cur)
	}
	return rows
}

func legendEntryWidth(it legendItem, sty draw.TextStyle) vg.Length {
	return vg.Points(18) + sty.Width(it.Name) + vg.Points(14)
}

// svgPlotLegendBelow renders p on a w×h area with its legend in rows
// underneath, where it can never hide data.
func svgPlotLegendBelow(p *plot.Plot, items []legendItem, w, h vg.Length, label string) (template.HTML, error) {
	sty := draw.TextStyle{Color: color.Black, Font: font.From(sansFont, 8.5), Handler: p.TextHandler, XAlign: draw.XLeft, YAlign: draw.YCenter}
	rows := legendRows(items, sty, w-vg.Points(60))
	legendH := vg.Length(len(rows))*legendRowH + vg.Points(6)
	return svgFigure(w, h+legendH, label, func(dc draw.Canvas) {
		area := draw.Crop(dc, 0, 0, legendH, 0)
		p.Draw(area)
		data := p.DataCanvas(area)
		y := dc.Min.Y + legendH - legendRowH/2 - vg.Points(2)
		for _, row := range rows {
			x := data.Min.X
			for _, it := range row {
				icon := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
					Min: vg.Point{X: x, Y: y - vg.Points(4)},
					Max: vg.Point{X: x + vg.Points(14), Y: y + vg.Points(4)},
				}}
				it.Thumb.Thumbnail(&icon)
				dc.FillText(sty, vg.Point{X: x + vg.Points(18), Y: y}, it.Name)
				x += legendEntryWidth(it, sty)
			}
			y -= legendRowH
		}
	})
}
