package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/history"
	"github.com/fabricbench/fabricbench/results"
)

// HTML writes a single self-contained HTML page for r: a header with the
// suite's status and counts, then per run the KPI table, the ranked
// culprits with their victims, the fault correlation, imbalance and job
// tables, and the plots drawn from plots[run.ID] (a run may have none). The
// page fetches nothing: styles are inline and plots are inline SVG.
func HTML(w io.Writer, r *results.Results, plots map[string]*results.Plots) error {
	return writeHTML(w, r, plots, nil, nil)
}

// writeHTML is HTML with per-run notes (e.g. a plots file that could not
// be read), keyed by run ID.
// cmp, when not nil, is the run's comparison with its baseline.
func writeHTML(w io.Writer, r *results.Results, plots map[string]*results.Plots, notes map[string][]string, cmp *history.Comparison) error {
	if r == nil {
		return fmt.Errorf("report: HTML: nil results")
	}
	pg := buildPage(r, plots, notes)
	pg.Matrix = buildMatrix(r)
	pg.Baseline = buildBaseline(cmp)
	if len(r.Tests) > 0 {
		h, err := BuildBMWG(r).HTML()
		if err != nil {
			return err
		}
		pg.BMWG = h
	}
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, pg); err != nil {
		return fmt.Errorf("report: HTML: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

type kv struct{ K, V string }

type page struct {
	Title                      string
	Suite, SuiteFile, Backend  string
	Status, StatusClass        string
	Started, Finished, Elapsed string
	Summary                    results.Summary
	Schema                     string
	Runs                       []runView
	Generated                  string
	Matrix                     *matrixView   // matrix runs: KPIs x points
	Baseline                   *baselineView // the comparison with the suite's baseline
	// BMWG is the IETF BMWG report's sections (a suite with tests).
	BMWG template.HTML
}

type runView struct {
	ID, Anchor          string
	Status, StatusClass string
	Error               string
	Fabric              string
	Facts               []kv // seed, times, telemetry...
	Params              []kv
	Config              []kv
	Packets             []kv
	KPIs                []kpiRow
	KPICounts           string
	Anomalies           []anomalyView // ranked, rank 1 first
	FaultMatches        []faultMatchView
	FaultCallouts       []callout // unmatched faults and anomalies
	Imbalances          []imbalanceView
	Trees               []treeView
	AnalysisNotes       []string
	Jobs                []jobRow
	Faults              []faultRow // fault events
	Sections            []plotSection
	Notes               []string
	Bringup             *bringupView
	Controller          *controllerView
}

type bringupView struct {
	Lab, Topology, Runtime string
	Counts                 string
	Causes                 []causeView
	Checks                 []checkRow // failed first, then in check order
}

// causeView is one root cause with its root and consequence checks.
type causeView struct {
	ID                   int
	Kind, Where, Summary string
	Roots, Consequences  []checkRow
}

type checkRow struct {
	Name, Category, Device string
	Verdict, Class         string
	Evidence               string
}

func buildBringup(b *results.Bringup) *bringupView {
	v := &bringupView{Lab: b.Lab, Topology: b.Topology, Runtime: b.Runtime}
	var bad, good []checkRow
	for _, c := range b.Checks {
		row := checkRow{Name: c.Name, Category: c.Category, Device: c.Device, Verdict: c.Verdict, Class: statusClass(c.Verdict), Evidence: c.Evidence}
		if c.Verdict == results.Pass {
			good = append(good, row)
		} else {
			bad = append(bad, row)
		}
	}
	v.Checks = append(bad, good...)
	v.Counts = fmt.Sprintf("%s, %d passed, %d failed", plural(len(b.Checks), "check"), len(good), len(bad))
	if len(b.Causes) > 0 {
		v.Counts += fmt.Sprintf(": %s", plural(len(b.Causes), "cause"))
	}
	for _, c := range b.Causes {
		cv := causeView{ID: c.ID, Kind: c.Kind, Where: strings.TrimSpace(c.Device + " " + c.Interface), Summary: c.Summary}
		for k, i := range c.Checks {
			if i < 0 || i >= len(b.Checks) {
				continue
			}
			ch := b.Checks[i]
			row := checkRow{Name: ch.Name, Category: ch.Category, Device: ch.Device, Verdict: ch.Verdict, Class: statusClass(ch.Verdict), Evidence: ch.Evidence}
			if k < c.Roots {
				cv.Roots = append(cv.Roots, row)
			} else {
				cv.Consequences = append(cv.Consequences, row)
			}
		}
		v.Causes = append(v.Causes, cv)
	}
	return v
}

type kpiRow struct {
	Name, Metric, Scope string
	Value, Requirement  string
	Verdict, Class      string
	Message             string
}

type jobRow struct {
	Name, Workload                  string
	Hosts                           int
	Size, Reps, Flows               string
	Incomplete                      bool
	Completion, AlgBW, BusBW        string // bandwidths in GB/s, as nccl-tests prints them
	AlgBWGbps, BusBWGbps            string // and in Gb/s (the cells' titles), to compare with line rates
	FCTP50, FCTP99, FCTMax          string
	SlowdownP99, P01PairBW, Retrans string
	Extra                           []kv
}

type faultRow struct {
	Label, At, Description string
}

// statusClass maps a status or verdict to a CSS class.
func statusClass(s string) string {
	switch s {
	case results.Pass:
		return "pass"
	case results.Fail:
		return "fail"
	case results.Skipped:
		return "skip"
	default: // error, interrupted, unknown
		return "error"
	}
}

func statusText(s string) string {
	if s == "" {
		return "UNKNOWN"
	}
	return strings.ToUpper(s)
}

func buildPage(r *results.Results, plots map[string]*results.Plots, notes map[string][]string) page {
	suite := r.Suite
	if suite == "" {
		suite = "fabricbench suite"
	}
	pg := page{
		Title:       fmt.Sprintf("%s — %s", suite, statusText(r.Status)),
		Suite:       suite,
		SuiteFile:   r.SuiteFile,
		Backend:     r.Backend,
		Status:      statusText(r.Status),
		StatusClass: statusClass(r.Status),
		Started:     fmtTime(r.Started),
		Finished:    fmtTime(r.Finished),
		Summary:     r.Summary,
		Schema:      r.Schema,
		Generated:   time.Now().UTC().Format("2006-01-02 15:04:05 UTC"),
	}
	// The page is a function of results.json: stamped with the results'
	// finish time, so that `fabricbench report DIR` re-renders it byte for
	// byte (the render time would differ whenever a second passed).
	if !r.Finished.IsZero() {
		pg.Generated = r.Finished.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	if !r.Started.IsZero() && !r.Finished.IsZero() && r.Finished.After(r.Started) {
		pg.Elapsed = fmtSeconds(r.Finished.Sub(r.Started).Seconds())
	}
	for i := range r.Runs {
		run := &r.Runs[i]
		pg.Runs = append(pg.Runs, buildRun(run, plots[run.ID], notes[run.ID]))
	}
	if r.Backend != "" && r.Backend != "sim" {
		// Only the simulator has simulated time: elsewhere the run's end
		// is the jobs' time on the wall clock.
		for i := range pg.Runs {
			for j := range pg.Runs[i].Facts {
				if f := &pg.Runs[i].Facts[j]; f.K == "simulated time" {
					f.K = "job time (wall clock)"
				}
			}
		}
	}
	return pg
}

func buildRun(run *results.Run, pl *results.Plots, notes []string) runView {
	v := runView{
		ID:          run.ID,
		Anchor:      "run-" + run.ID,
		Status:      statusText(run.Status),
		StatusClass: statusClass(run.Status),
		Error:       run.Error,
		Fabric:      run.Fabric,
		Notes:       notes,
	}
	if run.Bringup != nil {
		v.Bringup = buildBringup(run.Bringup)
		v.Facts = []kv{{"wall time", fmtSeconds(run.WallS)}}
		return v
	}
	v.Controller = buildController(run)
	v.Facts = []kv{
		{"seed", fmt.Sprint(run.Seed)},
		{"simulated time", fmtUs(run.SimEndUs)},
		{"wall time", fmtSeconds(run.WallS)},
	}
	if t := run.Telemetry; t.Samples > 0 || t.Targets > 0 {
		v.Facts = append(v.Facts, kv{"telemetry", fmt.Sprintf("%s samples from %d targets every %s",
			fmtCount(uint64(max(t.Samples, 0))), t.Targets, fmtUs(t.IntervalUs))})
	}
	for _, dev := range sortedKeys(run.Telemetry.Unreachable) {
		v.Facts = append(v.Facts, kv{"telemetry UNREACHABLE", dev + ": " + run.Telemetry.Unreachable[dev]})
	}
	for _, k := range sortedKeys(run.Params) {
		v.Params = append(v.Params, kv{k, run.Params[k]})
	}
	for _, k := range sortedKeys(run.Config) {
		v.Config = append(v.Config, kv{k, run.Config[k]})
	}
	pk := run.Packets
	v.Packets = []kv{
		{"sent", fmtCount(pk.Sent)},
		{"retransmitted", fmtCount(pk.Retransmitted)},
		{"trimmed", fmtCount(pk.Trimmed)},
		{"dropped", fmtCount(pk.Dropped)},
		{"ECN-marked", fmtCount(pk.ECNMarked)},
	}
	var pass, fail, errs int
	for _, k := range run.KPIs {
		switch k.Verdict {
		case results.Pass:
			pass++
		case results.Fail:
			fail++
		case results.Skipped:
		default:
			errs++
		}
		req := k.Op + " " + withUnit(k.Threshold, k.Unit)
		v.KPIs = append(v.KPIs, kpiRow{
			Name: k.Name, Metric: k.Metric, Scope: k.Scope,
			Value: withUnit(k.Value, k.Unit), Requirement: req,
			Verdict: statusText(k.Verdict), Class: statusClass(k.Verdict),
			Message: k.Message,
		})
	}
	if len(run.KPIs) > 0 {
		v.KPICounts = fmt.Sprintf("%d passed, %d failed, %s", pass, fail, plural(errs, "error"))
	}
	for _, j := range run.Jobs {
		row := jobRow{
			Name: j.Name, Workload: j.Workload, Hosts: j.Hosts,
			Size:        fmtBytes(j.SizeBytes),
			Reps:        fmt.Sprint(j.Repetitions),
			Flows:       fmt.Sprintf("%d/%d", j.Completed, j.Flows),
			Incomplete:  j.Completed < j.Flows,
			Completion:  fmtUs(j.CompletionUs),
			AlgBW:       fmtNum(j.AlgBWGbps / 8),
			BusBW:       fmtNum(j.BusBWGbps / 8),
			AlgBWGbps:   fmtNum(j.AlgBWGbps) + " Gb/s",
			BusBWGbps:   fmtNum(j.BusBWGbps) + " Gb/s",
			FCTP50:      fmtUs(j.FCTUs.P50),
			FCTP99:      fmtUs(j.FCTUs.P99),
			FCTMax:      fmtUs(j.FCTUs.Max),
			SlowdownP99: fmtNum(j.Slowdown.P99),
			P01PairBW:   fmtNum(100*j.P01PairBW) + " %",
			Retrans:     fmt.Sprintf("%s / %s / %s / %s", fmtCount(j.Packets.Retransmitted), fmtCount(j.Packets.SpuriousRetransmits), fmtCount(j.Packets.Nacks), fmtCount(j.Packets.Timeouts)),
		}
		v.Jobs = append(v.Jobs, row)
	}
	// The run's record of its faults, else the plot data's.
	faults := run.Faults
	if len(faults) == 0 && pl != nil {
		faults = pl.Faults
	}
	for i, f := range faults {
		v.Faults = append(v.Faults, faultRow{Label: faultLabel(&f, i), At: fmtUs(f.AtUs), Description: f.Description})
	}
	ids := &idSet{}
	var targets figureTargets
	var groups []results.GroupSeries
	if pl != nil {
		v.Sections, targets = buildPlotSections(pl, faults, run.Anomalies, run.Imbalances, v.Anchor, ids)
		groups = pl.Groups
	} else if len(notes) == 0 {
		v.Notes = append(v.Notes, "This run has no plot data.")
	}
	buildCulprits(&v, run, groups, targets, ids)
	buildTrees(&v, run, v.anomalyAnchors())
	return v
}

// htmlHead opens every page the reports write, up to the title.
const htmlHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="fabricbench">
<title>{{.Title}}</title>
`

// historyHead opens the history pages (compare, trend): the head with
// their shared style, and the top header's inner box.
const historyHead = htmlHead + `<style>` + historyCSS + `</style>
</head>
<body>
<header class="top"><div class="inner">
`

var pageTmpl = template.Must(template.Must(template.Must(template.Must(template.New("page").Funcs(template.FuncMap{"fmtNum": fmtNum}).Parse(pageHTML)).Parse(figureHTML)).Parse(matrixHTML)).Parse(treesTemplate))

const pageHTML = htmlHead + `<style>
:root{--pass:#1a7f37;--pass-bg:#e6f4ea;--fail:#c62828;--fail-bg:#fdecea;--error:#b35c00;--error-bg:#fff3e0;--skip:#5f6b76;--skip-bg:#eef1f4;--line:#d8dee4;--muted:#5f6b76}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",Arial,sans-serif;color:#1f2328;background:#f6f8fa}
main{max-width:1360px;margin:0 auto;padding:0 20px 40px}
header.top{background:#fff;border-bottom:1px solid var(--line);padding:18px 20px}
header.top .inner{max-width:1360px;margin:0 auto}
h1{font-size:22px;margin:0 0 6px}
h2{font-size:19px;margin:0}
h3{font-size:15px;margin:22px 0 8px}
h4{font-size:14px;margin:18px 0 6px}
.badge{display:inline-block;padding:2px 9px;border-radius:11px;font-size:12px;font-weight:700;letter-spacing:.04em;vertical-align:middle;color:#fff}
.badge.pass{background:var(--pass)}.badge.fail{background:var(--fail)}.badge.error{background:var(--error)}.badge.skip{background:var(--skip)}
h1 .badge{font-size:14px;padding:3px 12px;margin-left:8px}
.meta{color:var(--muted);margin:2px 0}
.meta b{color:#1f2328;font-weight:600}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin-top:12px}
.card{background:#f6f8fa;border:1px solid var(--line);border-radius:6px;padding:6px 14px;min-width:92px}
.card .n{font-size:20px;font-weight:700}.card .l{color:var(--muted);font-size:12px}
.card.fail .n{color:var(--fail)}.card.error .n{color:var(--error)}.card.pass .n{color:var(--pass)}
nav.runs{margin:16px 0 0}
nav.runs a{display:inline-block;margin:0 8px 6px 0;padding:3px 10px;background:#fff;border:1px solid var(--line);border-radius:6px;color:#1f2328;text-decoration:none}
section.run{background:#fff;border:1px solid var(--line);border-radius:8px;margin:18px 0;padding:16px 20px}
.runhead{display:flex;align-items:center;gap:10px;flex-wrap:wrap}
.runerr{background:var(--error-bg);border-left:4px solid var(--error);padding:8px 12px;margin:10px 0;white-space:pre-wrap;font-family:ui-monospace,"Liberation Mono",monospace;font-size:13px}
.note{color:var(--muted);font-style:italic;margin:4px 0}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0}
dl.kv dt{color:var(--muted)}dl.kv dd{margin:0}
.chips span{display:inline-block;background:#eef1f4;border-radius:4px;padding:1px 7px;margin:2px 4px 2px 0;font-size:13px}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
table.faults{width:auto}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.num{white-space:nowrap}
tr.fail td{background:var(--fail-bg)}tr.error td{background:var(--error-bg)}tr.skip td{color:var(--skip)}
tr.fail td.verdict{color:var(--fail);font-weight:700}tr.error td.verdict{color:var(--error);font-weight:700}tr.pass td.verdict{color:var(--pass);font-weight:700}
td.warn{color:var(--fail);font-weight:600}
code{font-family:ui-monospace,"Liberation Mono",monospace;font-size:12.5px}
.figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:16px;align-items:start}
figure{margin:0;border:1px solid var(--line);border-radius:6px;padding:8px;background:#fff}
figure svg.plot{display:block;width:100%;max-width:760px;height:auto;margin:0 auto}
figcaption{color:var(--muted);font-size:12.5px;margin-top:4px}
footer{color:var(--muted);font-size:12px;text-align:center;margin:20px 0}
a{color:#0550ae}
ol.culprits{list-style:none;padding:0;margin:6px 0}
li.culprit{border:1px solid var(--line);border-left:4px solid var(--fail);border-radius:6px;padding:7px 12px 8px;margin:0 0 8px;background:#fff}
li.culprit:target,tr:target td{background:#fff8c5}
.chead{display:flex;flex-wrap:wrap;align-items:baseline;gap:2px 10px}
.rank{font-weight:700;font-size:16px;color:var(--fail);min-width:2.1em}
.culprit-name{font-size:15px}
.culprit-name a{color:#1f2328;text-decoration:underline dotted #8c959f}
.cause{display:inline-block;padding:0 7px;border-radius:4px;font-size:12px;font-weight:700;background:var(--fail-bg);color:var(--fail)}
.cause.loss{background:#f3e8ff;color:#6f42c1}.cause.slow-nic,.cause.throttle{background:var(--error-bg);color:var(--error)}
.cmeta{color:var(--muted);font-size:13px}.cmeta b{color:#1f2328;font-weight:600}
.tag{display:inline-block;padding:0 6px;border-radius:4px;font-size:12px;background:#eef1f4;color:#1f2328;text-decoration:none}
a.tag{background:#ddf4ff;color:#0550ae}
.tag.warn{background:var(--error-bg);color:var(--error);font-weight:600}
.cbody{margin:3px 0 0 calc(2.1em + 10px)}
ul.signals{list-style:none;padding:0;margin:2px 0;display:flex;flex-wrap:wrap;gap:3px 6px}
ul.signals li{background:#f6f8fa;border:1px solid var(--line);border-radius:4px;padding:0 6px;font-size:12.5px}
ul.signals .base{color:var(--muted)}
p.evidence{margin:3px 0;color:#3d444d;font-size:13px}
ul.victims{margin:4px 0 0;padding:0 0 0 14px;border-left:2px solid var(--line);list-style:none;font-size:13px}
ul.victims li{margin:1px 0}
ul.victims li::before{content:"↳ ";color:var(--muted)}
ul.victims .vgroup{color:var(--muted)}
ul.victims a{color:#1f2328;text-decoration:underline dotted #8c959f}
details.victims>summary{cursor:pointer;font-size:13px;color:#3d444d;margin-top:3px}
.vlabel{font-size:13px;color:var(--muted);margin-top:3px}
td.arrow a{font-weight:600}
ul.callouts{margin:6px 0;padding:0;list-style:none}
ul.callouts li{background:var(--error-bg);border-left:4px solid var(--error);padding:4px 10px;margin:4px 0;font-size:13px}
ul.callouts a{color:inherit;font-weight:600;text-decoration:underline dotted}
svg.plot image{image-rendering:pixelated}
svg.plot text{font-family:'Liberation Sans',Arimo,Arial,Helvetica,sans-serif}
details.folded{margin:12px 0;border:1px solid var(--line);border-radius:6px;background:#fbfcfd}
details.folded>summary{cursor:pointer;padding:6px 10px;color:#3d444d;font-size:13px}
div.grow,details.grow>summary{display:grid;grid-template-columns:1.2em minmax(14em,1fr) repeat(5,minmax(5.5em,7em));gap:0 8px;padding:3px 10px;font-size:13px;border-top:1px solid var(--line)}
div.grow.head{font-weight:600;background:#f6f8fa}
details.grow>summary{cursor:pointer;list-style:none}
details.grow>summary::-webkit-details-marker{display:none}
details.grow>summary::before{content:"▸";color:var(--muted)}
details.grow[open]>summary::before{content:"▾"}
details.grow>figure{margin:4px 10px 10px;max-width:780px}
.grow .num{text-align:right;font-variant-numeric:tabular-nums}
details.grow:target>summary,div.grow:target{background:#fff8c5}
details.events{margin:6px 0}details.events>summary{cursor:pointer;color:var(--muted);font-size:13px}
` + matrixCSS + `</style>
</head>
<body>
<header class="top"><div class="inner">
<h1>{{.Suite}} <span class="badge {{.StatusClass}}">{{.Status}}</span></h1>
{{if .SuiteFile}}<p class="meta">suite file <b>{{.SuiteFile}}</b></p>{{end}}
<p class="meta">backend <b>{{or .Backend "—"}}</b> · started <b>{{.Started}}</b> · finished <b>{{.Finished}}</b>{{if .Elapsed}} · took <b>{{.Elapsed}}</b>{{end}}</p>
<div class="cards">
<div class="card"><div class="n">{{.Summary.Runs}}</div><div class="l">runs</div></div>
<div class="card"><div class="n">{{.Summary.KPIs}}</div><div class="l">KPIs</div></div>
<div class="card pass"><div class="n">{{.Summary.Passed}}</div><div class="l">passed</div></div>
<div class="card{{if .Summary.Failed}} fail{{end}}"><div class="n">{{.Summary.Failed}}</div><div class="l">failed</div></div>
<div class="card{{if .Summary.Errors}} error{{end}}"><div class="n">{{.Summary.Errors}}</div><div class="l">errors</div></div>
<div class="card{{if .Summary.Anomalies}} error{{end}}"><div class="n">{{.Summary.Anomalies}}</div><div class="l">anomalies</div></div>
{{if .Summary.Checks}}<div class="card"><div class="n">{{.Summary.Checks}}</div><div class="l">bring-up checks</div></div>
<div class="card{{if .Summary.ChecksFailed}} fail{{else}} pass{{end}}"><div class="n">{{.Summary.ChecksFailed}}</div><div class="l">checks failed</div></div>
{{if .Summary.Causes}}<div class="card fail"><div class="n">{{.Summary.Causes}}</div><div class="l">root causes</div></div>{{end}}{{end}}
</div>
{{if gt (len .Runs) 1}}<nav class="runs" aria-label="runs">{{range .Runs}}<a href="#{{.Anchor}}"><span class="badge {{.StatusClass}}">{{.Status}}</span> {{.ID}}</a>{{end}}</nav>{{end}}
</div></header>
<main>
{{with .Baseline}}{{template "baseline" .}}{{end}}
{{with .Matrix}}{{template "matrix" .}}{{end}}
{{with .BMWG}}{{.}}{{end}}
{{if not .Runs}}<p class="note">This suite has no runs.</p>{{end}}
{{range .Runs}}
<section class="run" id="{{.Anchor}}">
<div class="runhead"><h2>Run {{.ID}}</h2><span class="badge {{.StatusClass}}">{{.Status}}</span>{{if .KPICounts}}<span class="meta">{{.KPICounts}}</span>{{end}}</div>
{{if .Error}}<div class="runerr">{{.Error}}</div>{{end}}
{{if .Fabric}}<p class="meta">fabric <b>{{.Fabric}}</b></p>{{end}}
{{if .Params}}<div class="chips">matrix point: {{range .Params}}<span>{{.K}} = {{.V}}</span>{{end}}</div>{{end}}
<dl class="kv">{{range .Facts}}<dt>{{.K}}</dt><dd>{{.V}}</dd>{{end}}
{{if .Packets}}<dt>packets</dt><dd>{{range $i, $p := .Packets}}{{if $i}} · {{end}}{{$p.K}} {{$p.V}}{{end}}</dd>{{end}}
{{if .Config}}<dt>settings</dt><dd class="chips">{{range .Config}}<span>{{.K}} = {{.V}}</span>{{end}}</dd>{{end}}
</dl>

{{if .Bringup}}{{with .Bringup}}
<h3>Bring-up checks</h3>
<p class="meta">lab <b>{{.Lab}}</b>{{if .Runtime}} · runtime <b>{{.Runtime}}</b>{{end}}{{if .Topology}} · topology <b>{{.Topology}}</b>{{end}} · {{.Counts}}</p>
{{if .Causes}}<h4>Root causes</h4>
<p class="note">Each cause is one thing that is wrong, named by device and port; the checks that fail because of it are listed under it.</p>
<ol class="causes">{{range .Causes}}<li class="cause-item" id="cause-{{.ID}}"><div class="chead"><span class="tag">{{.Kind}}</span> <b>{{.Where}}</b>: {{.Summary}}</div>
{{if .Consequences}}<details><summary>{{len .Consequences}} consequence{{if gt (len .Consequences) 1}}s{{end}}</summary><ul>{{range .Consequences}}<li><code>{{.Name}}</code> [{{.Device}}] {{.Evidence}}</li>{{end}}</ul></details>{{end}}
</li>{{end}}</ol>{{end}}
{{if .Checks}}<div class="scroll"><table class="checks">
<thead><tr><th>check</th><th>category</th><th>device</th><th>verdict</th><th>evidence</th></tr></thead>
<tbody>{{range .Checks}}<tr class="{{.Class}}"><td><code>{{.Name}}</code></td><td>{{.Category}}</td><td>{{.Device}}</td><td class="verdict">{{.Verdict}}</td><td>{{.Evidence}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p class="note">No checks ran.</p>{{end}}
{{end}}{{else}}
<h3>KPIs</h3>
{{if .KPIs}}<div class="scroll"><table class="kpis">
<thead><tr><th>KPI</th><th>scope</th><th>metric</th><th class="num">value</th><th class="num">requirement</th><th>verdict</th><th>message</th></tr></thead>
<tbody>{{range .KPIs}}<tr class="{{.Class}}"><td><code>{{.Name}}</code></td><td>{{.Scope}}</td><td>{{.Metric}}</td><td class="num">{{.Value}}</td><td class="num">{{.Requirement}}</td><td class="verdict">{{.Verdict}}</td><td>{{.Message}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p class="note">No KPIs were evaluated.</p>{{end}}

<h3>Anomalies</h3>
{{if .Anomalies}}<p class="note">Culprits ranked by severity (#1 the most severe): the port, link or host whose own signals show it limited traffic, the window in which it did, the signals that decided (value and, in brackets, its symmetry group's baseline) and the members it slowed (its victims). Follow a culprit to its heat map.</p>
<ol class="culprits">{{range .Anomalies}}
<li class="culprit" id="{{.ID}}" value="{{.Rank}}">
<div class="chead"><span class="rank">#{{.Rank}}</span> <span class="culprit-name">{{if .Href}}<a href="#{{.Href}}" title="{{.HrefTitle}}"><b>{{.Member}}</b></a>{{else}}<b>{{.Member}}</b>{{end}}</span> {{if .Link}}<span class="tag">link {{.Link}}</span> {{end}}{{if .Cause}}<span class="cause {{.Cause}}">{{.Cause}}</span> {{end}}<span class="cmeta">{{if .Window}}window <b>{{.Window}}</b> · {{end}}{{if .Detected}}{{.Detected}} · {{end}}score <b>{{.Score}}</b>{{if .Group}} · {{if .Kind}}{{.Kind}} {{end}}group <b>{{.Group}}</b>{{end}}</span>{{range .Faults}} {{if .Href}}<a class="tag" href="#{{.Href}}">explains {{.ID}}</a>{{else}}<span class="tag">explains {{.ID}}</span>{{end}}{{end}}{{if .Unmatched}} <span class="tag warn">matches no injected fault</span>{{end}}</div>
<div class="cbody">
{{if .Signals}}<ul class="signals">{{range .Signals}}<li><code>{{.Name}}</code> <b>{{.Value}}</b>{{if .Baseline}} <span class="base">(group {{.Baseline}})</span>{{end}}</li>{{end}}</ul>{{end}}
{{if .Evidence}}<p class="evidence">{{.Evidence}}</p>{{end}}
{{if .Victims}}{{$c := .}}{{if .Collapse}}<details class="victims"><summary>{{.VictimSum}}</summary>{{else}}<div class="vlabel">{{len .Victims}} victim{{if gt (len .Victims) 1}}s{{end}}:</div>{{end}}
<ul class="victims">{{range .Victims}}<li id="{{.ID}}"><a href="#{{$c.ID}}" title="slowed by #{{$c.Rank}} {{$c.Member}}">{{.Member}}</a>{{if .Group}} <span class="vgroup">in {{.Group}}</span>{{end}}{{if .Why}} — {{.Why}}{{end}}</li>{{end}}</ul>
{{if .Collapse}}</details>{{end}}{{end}}
</div>
</li>{{end}}
</ol>{{else}}<p class="note">No anomalies.</p>{{end}}
{{template "trees" .}}

{{if or .FaultMatches .Faults}}<h3>Faults</h3>
{{if .FaultMatches}}<div class="scroll"><table class="faultmatch">
<thead><tr><th>fault</th><th>injected</th><th>ports hit</th><th class="num">window</th><th>explained by</th></tr></thead>
<tbody>{{range .FaultMatches}}<tr{{if .Anchor}} id="{{.Anchor}}"{{end}}{{if .Unmatched}} class="error"{{end}}><td><b>{{.ID}}</b></td><td>{{.Description}}</td><td>{{.Target}}</td><td class="num">{{.Window}}</td>{{if .Unmatched}}<td class="warn">{{.UnmatchedMsg}}</td>{{else}}<td class="arrow">→ {{if .AnomalyHref}}<a href="#{{.AnomalyHref}}">anomaly #{{.Rank}}</a>{{else}}anomaly #{{.Rank}}{{end}}{{if .Culprit}} {{.Culprit}}{{end}}</td>{{end}}</tr>
{{end}}</tbody></table></div>{{end}}
{{if .FaultCallouts}}<ul class="callouts">{{range .FaultCallouts}}<li>{{.Prefix}}{{range $i, $l := .Links}}{{if $i}}, {{end}}{{if $l.Href}}<a href="#{{$l.Href}}">{{$l.Text}}</a>{{else}}{{$l.Text}}{{end}}{{end}}{{.Suffix}}</li>{{end}}</ul>{{end}}
{{if .Faults}}{{if .FaultMatches}}<details class="events"><summary>{{len .Faults}} fault event{{if gt (len .Faults) 1}}s{{end}}</summary>{{end}}
<div class="scroll"><table class="faults"><thead><tr><th></th><th class="num">at</th><th>event</th></tr></thead>
<tbody>{{range .Faults}}<tr><td>{{.Label}}</td><td class="num">{{.At}}</td><td>{{.Description}}</td></tr>
{{end}}</tbody></table></div>{{if .FaultMatches}}</details>{{end}}{{end}}
{{end}}

{{with .Controller}}<h3>Path controller</h3>
<p class="note">{{.Summary}}. Faults above the axis, decisions below.</p>
<div class="scroll">{{.Timeline}}</div>
{{if .Rows}}<div class="scroll"><table class="decisions">
<thead><tr><th class="num">at</th><th class="num">applied</th><th>path</th><th>pair</th><th>moved</th><th>evidence</th></tr></thead>
<tbody>{{range .Rows}}<tr{{if .Error}} class="error"{{end}}><td class="num">{{.At}}</td><td class="num">{{.Applied}}</td><td>{{.Path}}</td><td>{{.Pair}}</td><td>{{.Move}}</td><td>{{.Evidence}}{{if .Error}} <span class="warn">not applied: {{.Error}}</span>{{end}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p class="note">No decisions: no managed path congested.</p>{{end}}
{{end}}

{{if .Imbalances}}<h3>Imbalances</h3>
<p class="note">Symmetry groups whose members' loads spread more than a healthy group's (typically ECMP hash collisions), without a culprit member.</p>
<div class="scroll"><table class="imbalances">
<thead><tr><th>group</th><th class="num">members</th><th class="num">CV</th><th class="num">max/min</th><th class="num">Jain</th><th>most loaded</th><th>least loaded</th><th>evidence</th></tr></thead>
<tbody>{{range .Imbalances}}<tr><td>{{if .Href}}<a href="#{{.Href}}"><b>{{.Group}}</b></a>{{else}}<b>{{.Group}}</b>{{end}}{{if .Kind}} <span class="tag">{{.Kind}}</span>{{end}}</td><td class="num">{{.Members}}</td><td class="num">{{.CV}}</td><td class="num">{{.MaxMin}}</td><td class="num">{{.Jain}}</td><td>{{.MaxMember}}</td><td>{{.MinMember}}</td><td>{{.Evidence}}</td></tr>
{{end}}</tbody></table></div>{{end}}

<h3>Jobs</h3>
{{if .Jobs}}<div class="scroll"><table class="jobs">
<thead><tr><th>job</th><th>workload</th><th class="num">hosts</th><th class="num">size</th><th class="num">reps</th><th class="num">flows done</th><th class="num">completion</th><th class="num" title="algorithm bandwidth, nccl-tests convention, gigabytes per second">algbw GB/s</th><th class="num" title="bus bandwidth, nccl-tests convention, gigabytes per second">busbw GB/s</th><th class="num">FCT p50</th><th class="num">FCT p99</th><th class="num">FCT max</th><th class="num">slowdown p99</th><th class="num">p01 pair bw</th><th class="num">retx / spurious / nacks / timeouts</th></tr></thead>
<tbody>{{range .Jobs}}<tr><td><b>{{.Name}}</b></td><td>{{.Workload}}</td><td class="num">{{.Hosts}}</td><td class="num">{{.Size}}</td><td class="num">{{.Reps}}</td><td class="num{{if .Incomplete}} warn{{end}}">{{.Flows}}</td><td class="num">{{.Completion}}</td><td class="num" title="{{.AlgBWGbps}}">{{.AlgBW}}</td><td class="num" title="{{.BusBWGbps}}">{{.BusBW}}</td><td class="num">{{.FCTP50}}</td><td class="num">{{.FCTP99}}</td><td class="num">{{.FCTMax}}</td><td class="num">{{.SlowdownP99}}</td><td class="num">{{.P01PairBW}}</td><td class="num">{{.Retrans}}</td></tr>
{{end}}</tbody></table></div>
<p class="note">p01 pair bw: 1st-percentile pair bandwidth as a share of line rate.</p>{{else}}<p class="note">No jobs.</p>{{end}}

<h3>Plots</h3>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
{{range .Sections}}
<h4>{{.Title}}</h4>
{{if or .Figures .Folded}}<p class="note">{{.Intro}}</p>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
{{if .Figures}}<div class="figs">{{range .Figures}}
{{template "figure" .}}{{end}}
</div>{{end}}
{{if .Folded}}<details class="folded"><summary>{{.FoldedSum}}</summary>
<div class="grows"><div class="grow head"><span></span><span>group</span><span class="num">members</span><span class="num">mean Gb/s</span><span class="num">min Gb/s</span><span class="num">max Gb/s</span><span class="num">CoV</span></div>
{{range .Folded}}{{if .Fig}}<details class="grow" id="{{.ID}}"><summary>{{template "grouprow" .}}</summary>{{template "figure" .Fig}}</details>
{{else}}<div class="grow" id="{{.ID}}"><span></span>{{template "grouprow" .}}</div>
{{end}}{{end}}</div></details>{{end}}
{{else}}<p class="note">{{.Empty}}</p>{{end}}
{{end}}
{{end}}
</section>
{{end}}
</main>
<footer>fabricbench report · {{.Schema}} · generated {{.Generated}}</footer>
</body>
</html>
`

// figure and grouprow are sub-templates of the page.
const figureHTML = `{{define "figure"}}<figure{{if .ID}} id="{{.ID}}"{{end}}>{{if .SVG}}{{.SVG}}{{else}}<p class="note"><b>{{.Title}}</b>: {{.Note}}</p>{{end}}{{if .Caption}}<figcaption>{{.Caption}}</figcaption>{{end}}</figure>{{end}}` +
	`{{define "grouprow"}}<span><b>{{.Group}}</b>{{if .Tag}} <span class="tag warn">{{.Tag}}</span>{{end}}</span><span class="num">{{.Members}}</span><span class="num">{{.Mean}}</span><span class="num">{{.Min}}</span><span class="num">{{.Max}}</span><span class="num">{{.CoV}}</span>{{end}}`

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
