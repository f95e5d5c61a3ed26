package report

import (
	"fmt"

	"github.com/fabricbench/fabricbench/history"
	"github.com/fabricbench/fabricbench/kpis"
	"github.com/fabricbench/fabricbench/results"
)

// matrixView is the comparison table at the top of a matrix run's report:
// one row per KPI, one column per matrix point.
type matrixView struct {
	Points []matrixPoint
	Rows   []matrixRow
}

type matrixPoint struct {
	ID, Anchor, Label string
}

type matrixRow struct {
	KPI, Requirement string
	Cells            []matrixCell
}

type matrixCell struct {
	Text, Class, Title string
	Best               bool
}

// buildMatrix lines up the KPIs of a suite's matrix points (nil for a
// single run). The best value of a row, by the KPI's direction, is marked
// when at least two points have values and they differ; failing cells
// take the fail colour, errors the error colour.
func buildMatrix(r *results.Results) *matrixView {
	if len(r.Runs) < 2 {
		return nil
	}
	m := &matrixView{}
	idx := map[string]int{}
	for _, run := range r.Runs {
		label := run.ID
		m.Points = append(m.Points, matrixPoint{ID: run.ID, Anchor: "run-" + run.ID, Label: label})
		for _, k := range run.KPIs {
			if _, ok := idx[k.Name]; !ok {
				idx[k.Name] = len(m.Rows)
				m.Rows = append(m.Rows, matrixRow{KPI: k.Name, Requirement: k.Op + " " + withUnit(k.Threshold, k.Unit)})
			}
		}
	}
	for ri := range m.Rows {
		m.Rows[ri].Cells = make([]matrixCell, len(r.Runs))
		for ci := range m.Rows[ri].Cells {
			m.Rows[ri].Cells[ci] = matrixCell{Text: "—", Class: "skip", Title: "not evaluated at this point"}
		}
	}
	best := map[int][]int{}
	bestV := map[int]float64{}
	vals := map[int]map[float64]bool{}
	for ci, run := range r.Runs {
		seen := map[string]bool{}
		for _, k := range run.KPIs {
			if seen[k.Name] {
				continue // a duplicate name: the first one
			}
			seen[k.Name] = true
			ri := idx[k.Name]
			c := matrixCell{Class: statusClass(k.Verdict), Title: statusText(k.Verdict)}
			if k.Verdict == results.Pass || k.Verdict == results.Fail {
				c.Text = withUnit(k.Value, k.Unit)
				if k.Message != "" {
					c.Title += ": " + k.Message
				}
				if vals[ri] == nil {
					vals[ri] = map[float64]bool{}
				}
				vals[ri][k.Value] = true
				d := kpis.DirectionOf(k.Op)
				b, ok := bestV[ri]
				switch {
				case d == kpis.Either:
				case !ok, d == kpis.LowerIsBetter && k.Value < b, d == kpis.HigherIsBetter && k.Value > b:
					bestV[ri], best[ri] = k.Value, []int{ci}
				case k.Value == b:
					best[ri] = append(best[ri], ci)
				}
			} else {
				c.Text = statusText(k.Verdict)
				c.Title = k.Message
			}
			m.Rows[ri].Cells[ci] = c
		}
	}
	for ri, cols := range best {
		if len(vals[ri]) < 2 {
			continue // every point has the same value: none is best
		}
		for _, ci := range cols {
			c := &m.Rows[ri].Cells[ci]
			c.Best = true
			c.Title = fmt.Sprintf("best of %d points; %s", len(r.Runs), c.Title)
		}
	}
	return m
}

// baselineView is the baseline comparison at the top of a report.
type baselineView struct {
	Base, Verdict, Class string
	Counts               string
	Regressions          []compareRow
}

func buildBaseline(c *history.Comparison) *baselineView {
	if c == nil {
		return nil
	}
	v := &baselineView{Base: c.Base.Dir, Verdict: "NO REGRESSION", Class: "pass", Regressions: compareRows(c.Regressions())}
	if c.HasRegression() {
		v.Verdict, v.Class = "REGRESSED", "fail"
	}
	s := c.Summary
	v.Counts = fmt.Sprintf("%d regressed, %d improved, %d within tolerance, %d new, %d removed, %d not comparable",
		s.Regressed, s.Improved, s.Unchanged, s.New, s.Removed, s.NotComparable)
	return v
}

const matrixHTML = `{{define "matrix"}}<section class="run matrix" id="matrix">
<h2>Matrix points side by side</h2>
<p class="note">Each KPI at every point of the matrix; <span class="mbest">★ best</span> by the KPI's direction (lowest for a max, highest for a min), failing cells red, errors orange.</p>
<div class="scroll"><table class="matrix">
<thead><tr><th>KPI</th><th class="num">requirement</th>{{range .Points}}<th class="num"><a href="#{{.Anchor}}">{{.Label}}</a></th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr><td><code>{{.KPI}}</code></td><td class="num">{{.Requirement}}</td>{{range .Cells}}<td class="num cell {{.Class}}{{if .Best}} best{{end}}" title="{{.Title}}">{{if .Best}}★ {{end}}{{.Text}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
</section>{{end}}{{define "baseline"}}<section class="run baseline" id="baseline">
<div class="runhead"><h2>Against the baseline</h2><span class="badge {{.Class}}">{{.Verdict}}</span></div>
<p class="meta">baseline <b>{{.Base}}</b> · {{.Counts}} · details in <a href="compare.html">compare.html</a></p>
{{if .Regressions}}<div class="scroll"><table class="compare">
<thead><tr><th>point</th><th>KPI</th><th class="num">baseline</th><th class="num">this run</th><th class="num">change</th><th class="num">tolerance</th><th>note</th></tr></thead>
<tbody>{{range .Regressions}}<tr class="fail"><td>{{.Point}}</td><td><code>{{.KPI}}</code></td><td class="num">{{.Base}}</td><td class="num">{{.New}}</td><td class="num">{{.Delta}}</td><td class="num">{{.Tolerance}}</td><td>{{.Note}}</td></tr>
{{end}}</tbody></table></div>{{end}}
</section>{{end}}`

const matrixCSS = `
td.cell.fail{background:var(--fail-bg);color:var(--fail);font-weight:600}td.cell.error{background:var(--error-bg);color:var(--error)}td.cell.skip{color:var(--skip)}
td.cell.best{font-weight:700;box-shadow:inset 0 0 0 2px var(--pass)}.mbest{font-weight:700;color:var(--pass)}
`
