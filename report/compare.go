package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/history"
	"github.com/fabricbench/fabricbench/results"
)

// Output files of a comparison, next to compare.json (history.FileName).
const (
	CompareHTMLFile  = "compare.html"
	CompareJUnitFile = "compare.xml"
)

// WriteCompare writes c into dir: compare.json, compare.html and
// compare.xml (JUnit), each atomically.
func WriteCompare(dir string, c *history.Comparison) error {
	if err := history.Save(dir, c); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var page bytes.Buffer
	if err := CompareHTML(&page, c); err != nil {
		return err
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, CompareHTMLFile), page.Bytes()); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var junit bytes.Buffer
	if err := CompareJUnit(&junit, c); err != nil {
		return err
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, CompareJUnitFile), junit.Bytes()); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// CompareLine is one row as a line of text, e.g.
// "[lb=reps] perm.slowdown_p99: 1.02 → 1.35 (+32.4%, tolerance 10% (default)) regressed".
func CompareLine(r *history.Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s: %s → %s", r.Point, r.KPI, rowValue(r.Base, r.BaseVerdict, r.Unit), rowValue(r.New, r.NewVerdict, r.Unit))
	if d := rowDelta(r); d != "" {
		fmt.Fprintf(&b, " (%s, tolerance %s)", d, r.Tolerance)
	}
	b.WriteString(" " + r.Status)
	if r.Note != "" {
		b.WriteString(": " + r.Note)
	}
	return b.String()
}

func rowValue(v *float64, verdict, unit string) string {
	switch {
	case v != nil:
		return withUnit(*v, unit)
	case verdict == "":
		return "—"
	}
	return verdict
}

func rowDelta(r *history.Row) string {
	if r.Delta == nil {
		return ""
	}
	s := signed(*r.Delta) + results.UnitSuffix(*r.Delta, r.Unit)
	if r.Rel != nil {
		s += ", " + signed(100**r.Rel) + "%"
	}
	return s
}

func signed(v float64) string {
	if v > 0 {
		return "+" + fmtNum(v)
	}
	return fmtNum(v)
}

func rowClass(status string) string {
	switch status {
	case history.Regressed:
		return "fail"
	case history.Improved:
		return "pass"
	case history.New, history.Removed, history.NotComparable:
		return "skip"
	}
	return ""
}

type compareRow struct {
	Point, KPI, Scope, Metric string
	Base, New, Delta          string
	Requirement, Tolerance    string
	Status, Class, Note       string
}

type comparePage struct {
	Title                string
	Base, New            history.Side
	BaseStarted, NewStar string
	Verdict, Class       string
	Summary              history.Summary
	Added, Removed       string
	Regressions, Rows    []compareRow
	Generated            string
}

func compareRows(rows []history.Row) []compareRow {
	out := make([]compareRow, 0, len(rows))
	for i := range rows {
		r := &rows[i]
		out = append(out, compareRow{
			Point: r.Point, KPI: r.KPI, Scope: r.Scope, Metric: r.Metric,
			Base: rowValue(r.Base, r.BaseVerdict, r.Unit), New: rowValue(r.New, r.NewVerdict, r.Unit),
			Delta: rowDelta(r), Requirement: r.Op + " " + withUnit(r.Threshold, r.Unit), Tolerance: r.Tolerance,
			Status: r.Status, Class: rowClass(r.Status), Note: r.Note,
		})
	}
	return out
}

// CompareHTML writes the comparison as one self-contained page: the two
// results directories, the counts, the regressions, then every KPI of
// every matrix point.
func CompareHTML(w io.Writer, c *history.Comparison) error {
	if c == nil {
		return fmt.Errorf("report: CompareHTML: nil comparison")
	}
	pg := comparePage{
		Title: fmt.Sprintf("%s: %s vs %s", orDefault(c.New.Suite, "fabricbench"), c.New.Dir, c.Base.Dir),
		Base:  c.Base, New: c.New, BaseStarted: fmtTime(c.Base.Started), NewStar: fmtTime(c.New.Started),
		Summary: c.Summary, Added: strings.Join(c.PointsAdded, ", "), Removed: strings.Join(c.PointsRemoved, ", "),
		Regressions: compareRows(c.Regressions()), Rows: compareRows(c.Rows),
		Generated: time.Now().UTC().Format("2006-01-02 15:04:05 UTC"),
	}
	pg.Verdict, pg.Class = "NO REGRESSION", "pass"
	if c.HasRegression() {
		pg.Verdict, pg.Class = "REGRESSED", "fail"
	}
	var buf bytes.Buffer
	if err := compareTmpl.Execute(&buf, pg); err != nil {
		return fmt.Errorf("report: CompareHTML: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// historyCSS is the style of the compare and trend pages (the report's
// colours and tables).
const historyCSS = `:root{--pass:#1a7f37;--pass-bg:#e6f4ea;--fail:#c62828;--fail-bg:#fdecea;--error:#b35c00;--error-bg:#fff3e0;--skip:#5f6b76;--skip-bg:#eef1f4;--line:#d8dee4;--muted:#5f6b76}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",Arial,sans-serif;color:#1f2328;background:#f6f8fa}
main{max-width:1360px;margin:0 auto;padding:0 20px 40px}
header.top{background:#fff;border-bottom:1px solid var(--line);padding:18px 20px}
header.top .inner{max-width:1360px;margin:0 auto}
h1{font-size:22px;margin:0 0 6px}h2{font-size:18px;margin:0 0 8px}h3{font-size:15px;margin:18px 0 8px}
.badge{display:inline-block;padding:2px 9px;border-radius:11px;font-size:12px;font-weight:700;letter-spacing:.04em;vertical-align:middle;color:#fff}
.badge.pass{background:var(--pass)}.badge.fail{background:var(--fail)}.badge.error{background:var(--error)}.badge.skip{background:var(--skip)}
h1 .badge{font-size:14px;padding:3px 12px;margin-left:8px}
.meta{color:var(--muted);margin:2px 0}.meta b{color:#1f2328;font-weight:600}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin-top:12px}
.card{background:#f6f8fa;border:1px solid var(--line);border-radius:6px;padding:6px 14px;min-width:92px}
.card .n{font-size:20px;font-weight:700}.card .l{color:var(--muted);font-size:12px}
.card.fail .n{color:var(--fail)}.card.pass .n{color:var(--pass)}
section.box{background:#fff;border:1px solid var(--line);border-radius:8px;margin:18px 0;padding:16px 20px}
.note{color:var(--muted);font-style:italic;margin:4px 0}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}td.num{white-space:nowrap}
tr.fail td{background:var(--fail-bg)}tr.skip td{color:var(--skip)}tr.pass td.status{color:var(--pass);font-weight:700}tr.fail td.status{color:var(--fail);font-weight:700}
code{font-family:ui-monospace,"Liberation Mono",monospace;font-size:12.5px}
.figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:16px;align-items:start}
figure{margin:0;border:1px solid var(--line);border-radius:6px;padding:8px;background:#fff}
figure svg.plot{display:block;width:100%;max-width:760px;height:auto;margin:0 auto}
figcaption{color:var(--muted);font-size:12.5px;margin-top:4px}
svg.plot text{font-family:'Liberation Sans',Arimo,Arial,Helvetica,sans-serif}
ol.anoms li{margin:4px 0}
footer{color:var(--muted);font-size:12px;text-align:center;padding:20px}`

const compareRowsHTML = `{{define "crows"}}<div class="scroll"><table class="compare">
<thead><tr><th>point</th><th>KPI</th><th class="num">base</th><th class="num">new</th><th class="num">change</th><th class="num">requirement</th><th class="num">tolerance</th><th>status</th><th>note</th></tr></thead>
<tbody>{{range .}}<tr class="{{.Class}}"><td>{{.Point}}</td><td><code>{{.KPI}}</code></td><td class="num">{{.Base}}</td><td class="num">{{.New}}</td><td class="num">{{.Delta}}</td><td class="num">{{.Requirement}}</td><td class="num">{{.Tolerance}}</td><td class="status">{{.Status}}</td><td>{{.Note}}</td></tr>
{{end}}</tbody></table></div>{{end}}`

var compareTmpl = template.Must(template.Must(template.New("compare").Parse(compareHTML)).Parse(compareRowsHTML))

const compareHTML = historyHead + `<h1>{{.New.Suite}}: comparison <span class="badge {{.Class}}">{{.Verdict}}</span></h1>
<p class="meta">base <b>{{.Base.Dir}}</b> ({{.Base.Suite}}, started {{.BaseStarted}}, {{.Base.Status}})</p>
<p class="meta">new <b>{{.New.Dir}}</b> ({{.New.Suite}}, started {{.NewStar}}, {{.New.Status}})</p>
<div class="cards">
<div class="card{{if .Summary.Regressed}} fail{{end}}"><div class="n">{{.Summary.Regressed}}</div><div class="l">regressed</div></div>
<div class="card{{if .Summary.Improved}} pass{{end}}"><div class="n">{{.Summary.Improved}}</div><div class="l">improved</div></div>
<div class="card"><div class="n">{{.Summary.Unchanged}}</div><div class="l">within tolerance</div></div>
<div class="card"><div class="n">{{.Summary.New}}</div><div class="l">new</div></div>
<div class="card"><div class="n">{{.Summary.Removed}}</div><div class="l">removed</div></div>
<div class="card"><div class="n">{{.Summary.NotComparable}}</div><div class="l">not comparable</div></div>
</div>
{{if .Added}}<p class="meta">matrix points only in the new results: <b>{{.Added}}</b></p>{{end}}
{{if .Removed}}<p class="meta">matrix points only in the base results: <b>{{.Removed}}</b></p>{{end}}
</div></header>
<main>
<section class="box"><h2>Regressions</h2>
{{if .Regressions}}{{template "crows" .Regressions}}{{else}}<p class="note">No KPI got worse by more than its tolerance.</p>{{end}}
</section>
<section class="box"><h2>Every KPI</h2>
<p class="note">Matched by matrix point and KPI name. A KPI regressed when it moved in its bad direction (up for a max, down for a min) by more than its tolerance: the suite's <code>regress</code>, else 5% for a min and 10% for a max. Against a base of 0 any worsening counts.</p>
{{if .Rows}}{{template "crows" .Rows}}{{else}}<p class="note">Neither side has KPIs.</p>{{end}}
</section>
</main>
<footer>fabricbench comparison · {{.Generated}}</footer>
</body>
</html>
`

// CompareJUnit writes the comparison as JUnit XML: one test suite
// "compare", one test case per KPI and matrix point, a failure for a
// regression, skipped for new, removed and not comparable KPIs.
func CompareJUnit(w io.Writer, c *history.Comparison) error {
	if c == nil {
		return fmt.Errorf("report: CompareJUnit: nil comparison")
	}
	s := compareSuite(c)
	out := junitSuites{Name: orDefault(c.New.Suite, "fabricbench") + ".compare", Tests: s.Tests, Failures: s.Failures, Time: "0", Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("report: CompareJUnit: %w", err)
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// compareDetail is a comparison row's <system-out>: both values, the
// threshold, unit and tolerance.
func compareDetail(r *history.Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "metric:    %s\n", r.Metric)
	fmt.Fprintf(&b, "scope:     %s\n", r.Scope)
	fmt.Fprintf(&b, "base:      %s\n", rowValue(r.Base, r.BaseVerdict, r.Unit))
	fmt.Fprintf(&b, "new:       %s\n", rowValue(r.New, r.NewVerdict, r.Unit))
	if d := rowDelta(r); d != "" {
		fmt.Fprintf(&b, "delta:     %s\n", d)
	}
	fmt.Fprintf(&b, "threshold: %s %s\n", r.Op, withUnit(r.Threshold, r.Unit))
	if r.Unit != "" {
		fmt.Fprintf(&b, "unit:      %s\n", r.Unit)
	}
	fmt.Fprintf(&b, "tolerance: %s\n", r.Tolerance)
	fmt.Fprintf(&b, "status:    %s\n", r.Status)
	if r.Note != "" {
		fmt.Fprintf(&b, "note:      %s\n", r.Note)
	}
	return b.String()
}

// compareSuite is the comparison as one JUnit test suite (also added to a
// run's junit.xml when it was compared with its baseline).
func compareSuite(c *history.Comparison) junitSuite {
	name := orDefault(c.New.Suite, "fabricbench") + ".baseline"
	s := junitSuite{Name: name, Time: "0", Properties: []junitProperty{{"base", c.Base.Dir}, {"new", c.New.Dir}}}
	for i := range c.Rows {
		r := &c.Rows[i]
		tc := junitCase{ClassName: name + "." + r.Point, Name: r.KPI, Time: "0", SystemOut: compareDetail(r)}
		key := "kpi." + r.Point + "." + r.KPI
		if r.Base != nil {
			s.Properties = append(s.Properties, junitProperty{key + ".base", exactNum(*r.Base)})
		}
		if r.New != nil {
			s.Properties = append(s.Properties, junitProperty{key + ".new", exactNum(*r.New)})
		}
		if r.Unit != "" {
			s.Properties = append(s.Properties, junitProperty{key + ".unit", r.Unit})
		}
		s.Properties = append(s.Properties, junitProperty{key + ".status", r.Status})
		switch r.Status {
		case history.Regressed:
			tc.Failure = &junitProblem{Message: "regressed: " + CompareLine(r), Type: "regression", Text: CompareLine(r)}
			s.Failures++
		case history.New, history.Removed, history.NotComparable:
			tc.Skipped = &junitSkipped{Message: CompareLine(r)}
			s.Skipped++
		}
		s.Tests++
		s.Cases = append(s.Cases, tc)
	}
	s.SystemOut = fmt.Sprintf("base %s, new %s: %d regressed, %d improved, %d within tolerance, %d new, %d removed, %d not comparable",
		c.Base.Dir, c.New.Dir, c.Summary.Regressed, c.Summary.Improved, c.Summary.Unchanged, c.Summary.New, c.Summary.Removed, c.Summary.NotComparable)
	return s
}
