package report

// This file is the reporting format of the IETF BMWG AI-fabric draft
// (draft-calabria-bmwg-ai-fabric-training-bench, "Reporting Format"): DUT
// identification, test topology, test configuration, host configuration,
// test results, anomalies and the repeatability statement. `fabricbench
// report --format bmwg DIR` writes it as Markdown (bmwg.md) and JSON
// (bmwg.json); report.html shows the same sections for a suite with a
// tests section.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/kpis"
	"github.com/fabricbench/fabricbench/results"
)

// Output files of the BMWG report.
const (
	BMWGMarkdownFile = "bmwg.md"
	BMWGJSONFile     = "bmwg.json"
	// BMWGDraft names the methodology.
	BMWGDraft = "draft-calabria-bmwg-ai-fabric-training-bench (IETF BMWG, 2026)"
)

// BMWGReport is the draft's report of a results directory.
type BMWGReport struct {
	Draft     string            `json:"draft"`
	Suite     string            `json:"suite"`
	SuiteFile string            `json:"suite_file,omitempty"`
	Backend   string            `json:"backend"`
	Status    string            `json:"status"`
	Started   time.Time         `json:"started"`
	Finished  time.Time         `json:"finished"`
	DUT       *results.DUT      `json:"dut"`
	Topology  *results.Topology `json:"topology"`
	// Drawing is a text drawing of the topology.
	Drawing string `json:"drawing"`
	// Configuration lists the DUT configuration (QoS, load balancing,
	// buffers), each setting with the values the runs used.
	Configuration []Setting `json:"configuration"`
	// Host lists the host configuration (agents and transport).
	Host          []Setting       `json:"host"`
	Tests         []BMWGTest      `json:"tests"`
	Anomalies     []string        `json:"anomalies"`
	Repeatability []Repeatability `json:"repeatability"`
}

// Setting is one configuration parameter and the values runs used
// ("run: value" when they differ).
type Setting struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// BMWGTest is one test's results.
type BMWGTest struct {
	Name    string `json:"name"`
	Section string `json:"section,omitempty"`
	Title   string `json:"title,omitempty"`
	// Status is pass, fail, error or n/a (every point not applicable).
	Status        string `json:"status"`
	NotApplicable string `json:"not_applicable,omitempty"`
	// Search and Found: a binary search's key and the value it found.
	Search string `json:"search,omitempty"`
	Found  string `json:"found,omitempty"`
	// Primary names the primary metric ("scope.metric") and its unit.
	Primary     string `json:"primary,omitempty"`
	PrimaryUnit string `json:"primary_unit,omitempty"`
	Reference   string `json:"reference,omitempty"`
	// Columns are the metrics of Rows' Values ("scope.metric"), Units
	// their units.
	Columns []string  `json:"columns"`
	Units   []string  `json:"units"`
	Rows    []BMWGRow `json:"rows"`
	// KPIs are the test's bounded KPIs, every run's verdict.
	KPIs []BMWGKPI `json:"kpis"`
	// Leak is the resource trend of a test with leak_check.
	Leak *results.LeakTrend `json:"leak,omitempty"`
}

// BMWGRow is one point of a test.
type BMWGRow struct {
	Run    string `json:"run"`
	Params string `json:"params,omitempty"`
	Status string `json:"status"`
	// Primary is the primary metric's value; VsReference its ratio to
	// the reference point's (nil: none).
	Primary     *float64 `json:"primary,omitempty"`
	VsReference *float64 `json:"vs_reference,omitempty"`
	// Values are Columns' values (nil: not computed for this run).
	Values []*float64 `json:"values"`
	Note   string     `json:"note,omitempty"`
}

// BMWGKPI is one bounded KPI of one run.
type BMWGKPI struct {
	Run, Name, Bound, Verdict, Message string
	Value                              float64
	Unit                               string
}

// Repeatability is a test's repeatability statement.
type Repeatability struct {
	Test   string `json:"test"`
	Metric string `json:"metric"`
	// Basis says what the iterations are: runs that differ only in their
	// seed, or the repetitions of a job.
	Basis      string  `json:"basis"`
	Iterations int     `json:"iterations"`
	Mean       float64 `json:"mean,omitempty"`
	SD         float64 `json:"sd,omitempty"`
	CV         float64 `json:"cv"`
	Warning    string  `json:"warning,omitempty"`
}

// The draft's KPIs a test's table shows when a run has them (and they are
// not all zero), besides the metrics of the test's own KPIs.
var (
	bmwgFabricCols = []string{"aggregate_throughput_gbps", "drop_rate_ppm", "ecn_marking_ratio_pct", "pfc_pause_rate_per_s", "pfc_paused_us",
		"max_group_mmr", "min_group_jain", "loss_duration_us"}
	bmwgJobCols = []string{"jct_us", "jct_ratio", "busbw_gbps", "latency_p99_us", "latency_p999_us", "ooo_fraction"}
)

// BuildBMWG builds the draft's report of a suite's results.
func BuildBMWG(r *results.Results) *BMWGReport {
	rep := &BMWGReport{Draft: BMWGDraft, Suite: r.Suite, SuiteFile: r.SuiteFile, Backend: r.Backend, Status: r.Status,
		Started: r.Started, Finished: r.Finished, DUT: r.DUT, Topology: r.Topology, Tests: []BMWGTest{}, Anomalies: []string{},
		Repeatability: []Repeatability{}}
	rep.Drawing = drawTopology(r.Topology)
	rep.Configuration, rep.Host = settings(r.Runs)
	tests := r.Tests
	if len(tests) == 0 {
		// A suite without tests: one test of all its runs.
		tests = []results.Test{{Name: r.Suite}}
	}
	for _, t := range tests {
		var runs []*results.Run
		for i := range r.Runs {
			if r.Runs[i].ID == "bringup" {
				continue
			}
			if r.Runs[i].Test == t.Name || len(r.Tests) == 0 {
				runs = append(runs, &r.Runs[i])
			}
		}
		rep.Tests = append(rep.Tests, bmwgTest(t, runs))
		rep.Repeatability = append(rep.Repeatability, repeatability(t, runs))
	}
	for _, run := range r.Runs {
		for _, an := range run.Anomalies {
			rep.Anomalies = append(rep.Anomalies, fmt.Sprintf("[%s] anomaly #%d %s: %s", run.ID, an.Rank, an.Member, an.Evidence))
		}
		if run.Status == results.Error || run.Status == results.Interrupted || run.Status == results.Skipped {
			rep.Anomalies = append(rep.Anomalies, fmt.Sprintf("[%s] run %s: %s", run.ID, run.Status, run.Error))
		}
		for _, k := range run.KPIs {
			if k.Verdict == results.Error || (k.Verdict == results.Fail && run.Search != results.SearchAbove) {
				rep.Anomalies = append(rep.Anomalies, fmt.Sprintf("[%s] KPI %s %s: %s", run.ID, k.Name, k.Verdict, k.Message))
			}
		}
	}
	for _, t := range rep.Tests {
		if t.NotApplicable != "" {
			rep.Anomalies = append(rep.Anomalies, fmt.Sprintf("[%s] not run (not applicable on the %s backend): %s", t.Name, r.Backend, t.NotApplicable))
		}
	}
	return rep
}

func bmwgTest(t results.Test, runs []*results.Run) BMWGTest {
	bt := BMWGTest{Name: t.Name, Section: t.Section, Title: t.Title, Search: t.SearchKey, Found: t.Found, Columns: []string{}, Units: []string{},
		Rows: []BMWGRow{}, KPIs: []BMWGKPI{}, Leak: t.Leak}
	if t.SearchKey != "" && t.Found == "" && len(t.FoundBy) > 0 {
		var parts []string
		for k, v := range t.FoundBy {
			parts = append(parts, k+": "+v)
		}
		sort.Strings(parts)
		bt.Found = strings.Join(parts, "; ")
	}
	if t.PrimaryMetric != "" {
		bt.Primary = scoped(t.PrimaryScope, t.PrimaryMetric)
		if info, ok := kpis.Info(t.PrimaryMetric); ok {
			bt.PrimaryUnit = info.Unit
		}
	}
	if t.ReferenceKey != "" {
		bt.Reference = t.ReferenceKey + " = " + t.ReferenceValue
	}
	// Columns: the draft's KPIs some run of the test has (not all zero),
	// and the metrics of the test's KPIs.
	type col struct{ metric, scope string }
	named := map[col]bool{}
	var kpiCols []col
	for _, run := range runs {
		for _, k := range run.KPIs {
			c := col{k.Metric, k.Scope}
			if c.scope == "fabric" {
				c.scope = ""
			}
			if !named[c] {
				named[c] = true
				kpiCols = append(kpiCols, c)
			}
		}
	}
	prim := col{t.PrimaryMetric, primaryScope(t)}
	var cols []col
	inCols := map[col]bool{prim: true}
	add := func(c col) {
		if inCols[c] {
			return
		}
		nonzero, any := named[c], false
		for _, run := range runs {
			if v, err := kpis.Stored(c.metric, c.scope, run); err == nil {
				any = true
				nonzero = nonzero || v != 0
			}
		}
		if any && nonzero {
			inCols[c] = true
			cols = append(cols, c)
		}
	}
	for _, c := range kpiCols {
		add(c)
	}
	for _, m := range bmwgFabricCols {
		add(col{m, ""})
	}
	var jobs []string
	seen := map[string]bool{}
	for _, run := range runs {
		for _, j := range run.Jobs {
			if !seen[j.Name] {
				seen[j.Name] = true
				jobs = append(jobs, j.Name)
			}
		}
	}
	for _, j := range jobs {
		for _, m := range bmwgJobCols {
			add(col{m, j})
		}
	}
	for _, c := range cols {
		bt.Columns = append(bt.Columns, scoped(c.scope, c.metric))
		info, _ := kpis.Info(c.metric)
		bt.Units = append(bt.Units, info.Unit)
	}
	na, applicable := "", 0
	var refs []float64 // the reference points' primary values (one per seed)
	statuses := map[string]bool{}
	for _, run := range runs {
		row := BMWGRow{Run: run.ID, Params: params(run), Status: run.Status, Values: []*float64{}}
		if run.Status == results.NotApplicable {
			row.Note = run.Error
			if !strings.HasPrefix(run.Error, "not needed") {
				na = strings.TrimPrefix(run.Error, "not applicable: ")
			}
		} else {
			applicable++
			statuses[run.Status] = true
			if run.Search == results.SearchAbove {
				row.Note = "binary search: above the limit"
			} else if run.Search == results.SearchPass {
				row.Note = "binary search: passed"
			}
		}
		for _, c := range cols {
			if v, err := kpis.Stored(c.metric, c.scope, run); err == nil {
				row.Values = append(row.Values, ptr(v))
			} else {
				row.Values = append(row.Values, nil)
			}
		}
		if t.PrimaryMetric != "" && run.Status != results.NotApplicable {
			if v, err := kpis.Stored(t.PrimaryMetric, primaryScope(t), run); err == nil {
				row.Primary = ptr(v)
				if t.ReferenceKey != "" && run.Params[t.ReferenceKey] == t.ReferenceValue {
					refs = append(refs, v)
				}
			}
		}
		for _, k := range run.KPIs {
			bt.KPIs = append(bt.KPIs, BMWGKPI{Run: run.ID, Name: k.Name, Bound: k.Op + " " + fmtNum(k.Threshold), Verdict: k.Verdict,
				Message: k.Message, Value: k.Value, Unit: k.Unit})
		}
		bt.Rows = append(bt.Rows, row)
	}
	if ref, _ := kpis.MeanSD(refs); len(refs) > 0 && ref != 0 {
		for i := range bt.Rows {
			if p := bt.Rows[i].Primary; p != nil {
				bt.Rows[i].VsReference = ptr(*p / ref)
			}
		}
	}
	switch {
	case applicable == 0:
		bt.Status, bt.NotApplicable = results.NotApplicable, na
	case statuses[results.Error]:
		bt.Status = results.Error
	case statuses[results.Fail] && !searchSettled(t, runs):
		bt.Status = results.Fail
	default:
		bt.Status = results.Pass
	}
	return bt
}

// searchSettled: a search test whose failures are all above its limit.
func searchSettled(t results.Test, runs []*results.Run) bool {
	if t.SearchKey == "" {
		return false
	}
	for _, r := range runs {
		if r.Status == results.Fail && r.Search != results.SearchAbove {
			return false
		}
	}
	return true
}

func primaryScope(t results.Test) string {
	if t.PrimaryScope == "fabric" {
		return ""
	}
	return t.PrimaryScope
}

func scoped(scope, metric string) string {
	if scope == "" || scope == "fabric" {
		return metric
	}
	return scope + "." + metric
}

func ptr(v float64) *float64 { return &v }

func params(r *results.Run) string {
	var ks []string
	for k := range r.Params {
		if k != "tests" {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	var out []string
	for _, k := range ks {
		out = append(out, k+"="+r.Params[k])
	}
	return strings.Join(out, ", ")
}

// repeatability is a test's statement: the coefficient of variation of
// its primary metric over runs that differ only in their seed (the
// largest over such groups), or else over the repetitions of the primary
// metric's job; a single iteration cannot show one.
func repeatability(t results.Test, runs []*results.Run) Repeatability {
	rp := Repeatability{Test: t.Name, Metric: scoped(t.PrimaryScope, t.PrimaryMetric)}
	if len(runs) > 0 && allNA(runs) {
		rp.Basis, rp.Warning = "not applicable on this backend", "not run"
		return rp
	}
	if t.PrimaryMetric == "" {
		rp.Metric, rp.Basis = "", "no primary metric (tests[].primary)"
		rp.Warning = "no primary metric: repeatability not assessed"
		return rp
	}
	groups := map[string][]float64{}
	var order []string
	for _, r := range runs {
		if r.Status == results.NotApplicable {
			continue
		}
		v, err := kpis.Stored(t.PrimaryMetric, primaryScope(t), r)
		if err != nil {
			continue
		}
		var ks []string
		for k, val := range r.Params {
			if k != "seed" && k != "tests" {
				ks = append(ks, k+"="+val)
			}
		}
		sort.Strings(ks)
		g := strings.Join(ks, ",")
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], v)
	}
	if len(order) == 0 {
		rp.Basis = "no run of the test computed its primary metric"
		if len(runs) > 0 && allNA(runs) {
			rp.Basis = "not applicable on this backend"
		}
		rp.Warning = "repeatability not assessed"
		return rp
	}
	best := -1.0
	for _, g := range order {
		v := groups[g]
		if len(v) < 2 {
			continue
		}
		m, sd := kpis.MeanSD(v)
		if cv := kpis.CV(v); cv > best {
			best = cv
			rp.Iterations, rp.Mean, rp.SD, rp.CV = len(v), m, sd, cv
			rp.Basis = "runs differing only in their seed"
			if g != "" {
				rp.Basis += " (" + g + "; the largest CV of " + strconv.Itoa(len(order)) + " groups)"
			}
		}
	}
	if best < 0 && t.PrimaryScope != "" && t.PrimaryScope != "fabric" {
		// Repetitions of the primary metric's job.
		for _, r := range runs {
			for _, j := range r.Jobs {
				if j.Name != t.PrimaryScope || len(j.RepetitionsUs) < 2 {
					continue
				}
				if cv := kpis.CV(j.RepetitionsUs); cv > best {
					best = cv
					m, sd := kpis.MeanSD(j.RepetitionsUs)
					rp.Iterations, rp.Mean, rp.SD, rp.CV = len(j.RepetitionsUs), m, sd, cv
					rp.Basis = fmt.Sprintf("iteration times (us) of job %s's %d repetitions in run %s (the largest CV of the test's runs)", j.Name, len(j.RepetitionsUs), r.ID)
				}
			}
		}
	}
	if best < 0 {
		rp.Iterations = 1
		rp.Basis = "one iteration per point: add seed to the test's matrix (e.g. seed: [1, 2, 3]) to measure the CV"
		rp.Warning = "one iteration: the CV below 5% the draft recommends is not shown"
		return rp
	}
	if rp.CV > kpis.RepeatabilityLimit {
		rp.Warning = fmt.Sprintf("CV %.1f%% is above the 5%% the draft recommends for test validity", rp.CV*100)
	}
	return rp
}

func allNA(runs []*results.Run) bool {
	for _, r := range runs {
		if r.Status != results.NotApplicable {
			return false
		}
	}
	return true
}

// settings are the DUT and host configuration of the runs: run.Config
// keys, split into the switches' (QoS, load balancing, buffers) and the
// hosts' (transport).
func settings(runs []results.Run) (dut, host []Setting) {
	hostKeys := map[string]bool{"cc": true, "lb": true, "mtu": true, "seed": true, "window": true, "agents": true}
	vals := map[string][]string{}
	var keys []string
	for _, r := range runs {
		if r.Status == results.NotApplicable || r.ID == "bringup" {
			continue
		}
		for k, v := range r.Config {
			if _, ok := vals[k]; !ok {
				keys = append(keys, k)
			}
			if !contains(vals[k], v) {
				vals[k] = append(vals[k], v)
			}
		}
	}
	sort.Strings(keys)
	dut, host = []Setting{}, []Setting{}
	for _, k := range keys {
		s := Setting{Name: k, Values: vals[k]}
		if hostKeys[k] {
			host = append(host, s)
		} else {
			dut = append(dut, s)
		}
	}
	return dut, host
}

func contains(v []string, s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}

// drawTopology draws the tiers top down, each with its links to the
// tier below.
func drawTopology(t *results.Topology) string {
	if t == nil || len(t.Tiers) == 0 {
		return "(no topology recorded)"
	}
	var b strings.Builder
	for i, tier := range t.Tiers {
		names := tier.Nodes
		shown := names
		if len(names) > 8 {
			shown = append(append([]string{}, names[:4]...), "…", names[len(names)-2], names[len(names)-1])
		}
		fmt.Fprintf(&b, "%-6s x%-4d [%s]\n", tier.Role, len(names), strings.Join(shown, "] ["))
		if i+1 < len(t.Tiers) {
			below := t.Tiers[i+1].Role
			for _, l := range t.Links {
				if (l.From == below && l.To == tier.Role) || (l.From == tier.Role && l.To == below) {
					fmt.Fprintf(&b, "%13s %d links %s–%s at %g Gb/s\n", "│", l.Count, below, tier.Role, l.Gbps)
				}
			}
		}
	}
	if t.Planes > 1 {
		fmt.Fprintf(&b, "%d planes\n", t.Planes)
	}
	return b.String()
}

// cell formats a value for tables.
func cell(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmtSig(*v)
}

func fmtSig(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 0.01:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// Markdown writes the report as Markdown.
func (rep *BMWGReport) Markdown() []byte {
	var b bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Benchmark report: %s\n\n", rep.Suite)
	p("Methodology: %s. Backend: %s. Suite status: **%s**. Run %s to %s.", rep.Draft, rep.Backend, strings.ToUpper(rep.Status),
		rep.Started.Format(time.RFC3339), rep.Finished.Format(time.RFC3339))
	if rep.SuiteFile != "" {
		p(" Suite file: `%s`.", rep.SuiteFile)
	}
	p("\n\n## 1. DUT identification\n\n")
	if d := rep.DUT; d != nil {
		p("- Kind: %s\n- Description: %s\n", d.Kind, d.Description)
		if d.BufferModel != "" {
			p("- Buffers and QoS model: %s\n", d.BufferModel)
		}
		p("\n| Device | Role | Platform | OS version | ASIC | Port speed |\n|---|---|---|---|---|---|\n")
		for _, dv := range d.Devices {
			p("| %s | %s | %s | %s | %s | %s |\n", dv.Name, dv.Role, orDash(dv.Platform), orDash(dv.OSVersion), orDash(dv.ASIC), orDash(dv.PortSpeed))
		}
	} else {
		p("Not recorded (results written before the DUT was recorded).\n")
	}
	p("\n## 2. Test topology\n\n")
	if rep.Topology != nil {
		p("%s.\n\n", rep.Topology.Description)
	}
	p("```\n%s```\n", rep.Drawing)
	p("\n## 3. Test configuration\n\n| Setting | Values |\n|---|---|\n")
	for _, s := range rep.Configuration {
		p("| %s | %s |\n", s.Name, strings.Join(s.Values, ", "))
	}
	p("\n## 4. Host configuration\n\n")
	if rep.DUT != nil && rep.DUT.Host != "" {
		p("%s.\n\n", rep.DUT.Host)
	}
	p("| Setting | Values |\n|---|---|\n")
	for _, s := range rep.Host {
		p("| %s | %s |\n", s.Name, strings.Join(s.Values, ", "))
	}
	p("\nUEC-specific host features (compliance profile, libfabric provider, NIC firmware, LLR, CBFC) do not apply: the transport agents implement UET-like semantics in software; packet trimming is the switches' (see configuration).\n")
	p("\n## 5. Test results\n")
	for _, t := range rep.Tests {
		p("\n### %s", t.Name)
		if t.Section != "" {
			p(" — %s", t.Section)
		}
		p("\n\n")
		if t.Title != "" {
			p("%s. ", t.Title)
		}
		p("Status: **%s**.", t.Status)
		if t.NotApplicable != "" {
			p(" Not applicable: %s\n", t.NotApplicable)
			continue
		}
		if t.Search != "" {
			found := t.Found
			if found == "" {
				found = "none (no value passed)"
			}
			p(" Binary search over `%s`: **%s**.", t.Search, found)
		}
		if t.Primary != "" {
			p(" Primary metric: `%s` (%s).", t.Primary, t.PrimaryUnit)
		}
		if t.Reference != "" {
			p(" Reference point: %s.", t.Reference)
		}
		p("\n\n| Point | Status |")
		if t.Primary != "" {
			p(" %s |", t.Primary)
			if t.Reference != "" {
				p(" vs reference |")
			}
		}
		for i, c := range t.Columns {
			p(" %s (%s) |", c, t.Units[i])
		}
		p("\n|---|---|")
		if t.Primary != "" {
			p("---|")
			if t.Reference != "" {
				p("---|")
			}
		}
		p("%s\n", strings.Repeat("---|", len(t.Columns)))
		for _, r := range t.Rows {
			name := r.Run
			if r.Params != "" {
				name = r.Params
			}
			st := r.Status
			if r.Note != "" && r.Status != results.NotApplicable {
				st += " (" + r.Note + ")"
			} else if r.Status == results.NotApplicable {
				st += " (" + r.Note + ")"
			}
			p("| %s | %s |", name, st)
			if t.Primary != "" {
				p(" %s |", cell(r.Primary))
				if t.Reference != "" {
					p(" %s |", cell(r.VsReference))
				}
			}
			for _, v := range r.Values {
				p(" %s |", cell(v))
			}
			p("\n")
		}
		if len(t.KPIs) > 0 {
			p("\nKPIs:\n\n| Point | KPI | Value | Bound | Verdict |\n|---|---|---|---|---|\n")
			for _, k := range t.KPIs {
				p("| %s | %s | %s %s | %s | %s |\n", k.Run, k.Name, fmtSig(k.Value), k.Unit, k.Bound, k.Verdict)
			}
		}
		if l := t.Leak; l != nil {
			p("\nResource leak check over %d runs (the first left out as warm-up): goroutines %+.2f per run, open file descriptors %+.2f per run, heap %+.2f MiB per run: **%s**", l.Runs, l.GoroutinesPerRun, l.FDsPerRun, l.HeapMiBPerRun, l.Verdict)
			if l.Message != "" {
				p(" (%s)", l.Message)
			}
			p(".\n")
		}
		p("\nPlot: `%s`\n", plotFile(t.Name))
	}
	p("\n## 6. Anomalies\n\n")
	if len(rep.Anomalies) == 0 {
		p("None: every applicable test ran as specified, no KPI failed outside a binary search, no anomaly was found.\n")
	}
	for _, a := range rep.Anomalies {
		p("- %s\n", a)
	}
	p("\n## 7. Repeatability statement\n\n| Test | Primary metric | Iterations | Mean | SD | CV | Basis | Warning |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rep.Repeatability {
		cv := "—"
		if r.Iterations > 1 {
			cv = fmt.Sprintf("%.2f%%", r.CV*100)
		}
		mean, sd := "—", "—"
		if r.Iterations > 1 {
			mean, sd = fmtSig(r.Mean), fmtSig(r.SD)
		}
		p("| %s | %s | %d | %s | %s | %s | %s | %s |\n", r.Test, orDash(r.Metric), r.Iterations, mean, sd, cv, r.Basis, orDash(r.Warning))
	}
	p("\nThe draft recommends a coefficient of variation (standard deviation / mean) below 5%% for each test's primary metric. The simulator is deterministic: runs with the same seed are identical, so its CV measures the sensitivity to the seed (hashing, random choices), and the repetitions of a job measure the stability within a run.\n")
	return b.Bytes()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func plotFile(test string) string {
	return "bmwg-" + anchorName(test) + ".svg"
}

func anchorName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// plotSVG draws a test's primary metric per point as horizontal bars.
func plotSVG(t *BMWGTest) []byte {
	var rows []BMWGRow
	top := 0.0
	for _, r := range t.Rows {
		if r.Primary != nil {
			rows = append(rows, r)
			top = math.Max(top, math.Abs(*r.Primary))
		}
	}
	const w, rowH, left = 720, 22, 300
	h := 40 + rowH*max(len(rows), 1)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	title := t.Name + ": " + t.Primary
	if t.PrimaryUnit != "" {
		title += " (" + t.PrimaryUnit + ")"
	}
	fmt.Fprintf(&b, `<text x="4" y="16" font-weight="bold">%s</text>`+"\n", template.HTMLEscapeString(title))
	if len(rows) == 0 {
		fmt.Fprintf(&b, `<text x="4" y="40">no value of the primary metric</text>`+"\n")
	}
	for i, r := range rows {
		y := 28 + i*rowH
		label := r.Params
		if label == "" {
			label = r.Run
		}
		bw := 0.0
		if top > 0 {
			bw = math.Abs(*r.Primary) / top * float64(w-left-90)
		}
		color := "#4a7ab5"
		if r.Status == results.Fail {
			color = "#c0504d"
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`, left-6, y+14, template.HTMLEscapeString(truncate(label, 45)))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`, left, y+2, bw, rowH-6, color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", float64(left)+bw+4, y+14, fmtSig(*r.Primary))
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// RenderBMWG writes the draft's report of dir's results: dir/bmwg.md,
// dir/bmwg.json and a plot per test (dir/bmwg-TEST.svg). It returns the
// Markdown and JSON paths.
func RenderBMWG(dir string) (string, string, error) {
	r, err := results.Load(dir)
	if err != nil {
		return "", "", err
	}
	rep := BuildBMWG(r)
	for i := range rep.Tests {
		t := &rep.Tests[i]
		if t.NotApplicable != "" || t.Primary == "" {
			continue
		}
		if err := results.WriteFileAtomic(filepath.Join(dir, plotFile(t.Name)), plotSVG(t)); err != nil {
			return "", "", fmt.Errorf("report: %w", err)
		}
	}
	md, js := filepath.Join(dir, BMWGMarkdownFile), filepath.Join(dir, BMWGJSONFile)
	if err := results.WriteFileAtomic(md, rep.Markdown()); err != nil {
		return "", "", fmt.Errorf("report: %w", err)
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return "", "", fmt.Errorf("report: %w", err)
	}
	if err := results.WriteFileAtomic(js, append(data, '\n')); err != nil {
		return "", "", fmt.Errorf("report: %w", err)
	}
	return md, js, nil
}

// HTML renders the report's sections for report.html.
func (rep *BMWGReport) HTML() (template.HTML, error) {
	var b bytes.Buffer
	if err := bmwgTmpl.Execute(&b, rep); err != nil {
		return "", fmt.Errorf("report: BMWG HTML: %w", err)
	}
	return template.HTML(b.String()), nil //nolint:gosec // produced by html/template
}

var bmwgTmpl = template.Must(template.New("bmwg").Funcs(template.FuncMap{"cell": cell, "num": fmtSig, "pct": func(v float64) string {
	return fmt.Sprintf("%.2f%%", v*100)
}, "join": strings.Join}).Parse(`<section class="run bmwg" id="bmwg">
<div class="runhead"><h2>IETF BMWG AI-fabric report</h2><span class="meta">{{.Draft}}</span></div>
<h3>1. DUT identification</h3>
{{with .DUT}}<p class="meta">{{.Kind}}: {{.Description}}{{if .BufferModel}}<br>buffers and QoS: {{.BufferModel}}{{end}}</p>
<details><summary>{{len .Devices}} devices</summary><table><tr><th>Device</th><th>Role</th><th>Platform</th><th>OS version</th><th>ASIC</th><th>Port speed</th></tr>
{{range .Devices}}<tr><td>{{.Name}}</td><td>{{.Role}}</td><td>{{.Platform}}</td><td>{{.OSVersion}}</td><td>{{.ASIC}}</td><td>{{.PortSpeed}}</td></tr>{{end}}</table></details>{{else}}<p class="note">Not recorded.</p>{{end}}
<h3>2. Test topology</h3>
{{with .Topology}}<p class="meta">{{.Description}}</p>{{end}}<pre>{{.Drawing}}</pre>
<h3>3. Test configuration</h3>
<table><tr><th>Setting</th><th>Values</th></tr>{{range .Configuration}}<tr><td>{{.Name}}</td><td>{{join .Values ", "}}</td></tr>{{end}}</table>
<h3>4. Host configuration</h3>
{{with .DUT}}{{if .Host}}<p class="meta">{{.Host}}</p>{{end}}{{end}}
<table><tr><th>Setting</th><th>Values</th></tr>{{range .Host}}<tr><td>{{.Name}}</td><td>{{join .Values ", "}}</td></tr>{{end}}</table>
<h3>5. Test results</h3>
{{range .Tests}}<h4>{{.Name}}{{if .Section}} — {{.Section}}{{end}} <span class="badge {{.Status}}">{{.Status}}</span></h4>
<p class="meta">{{.Title}}{{if .NotApplicable}} — not applicable: {{.NotApplicable}}{{end}}{{if .Search}} — binary search over <code>{{.Search}}</code>: <b>{{if .Found}}{{.Found}}{{else}}none passed{{end}}</b>{{end}}{{if .Primary}} — primary metric <code>{{.Primary}}</code> ({{.PrimaryUnit}}){{end}}{{if .Reference}} — reference {{.Reference}}{{end}}</p>
{{if not .NotApplicable}}{{$t := .}}<div class="scroll"><table><tr><th>Point</th><th>Status</th>{{if .Primary}}<th>{{.Primary}}</th>{{if .Reference}}<th>vs reference</th>{{end}}{{end}}{{range $i, $c := .Columns}}<th>{{$c}} ({{index $t.Units $i}})</th>{{end}}</tr>
{{range .Rows}}<tr><td>{{if .Params}}{{.Params}}{{else}}{{.Run}}{{end}}</td><td>{{.Status}}{{if .Note}} ({{.Note}}){{end}}</td>{{if $t.Primary}}<td>{{cell .Primary}}</td>{{if $t.Reference}}<td>{{cell .VsReference}}</td>{{end}}{{end}}{{range .Values}}<td>{{cell .}}</td>{{end}}</tr>{{end}}</table></div>{{end}}
{{with .Leak}}<p class="meta">resource leak check over {{.Runs}} runs: goroutines {{num .GoroutinesPerRun}}/run, file descriptors {{num .FDsPerRun}}/run, heap {{num .HeapMiBPerRun}} MiB/run: <b>{{.Verdict}}</b> {{.Message}}</p>{{end}}
{{end}}
<h3>6. Anomalies</h3>
{{if .Anomalies}}<ul>{{range .Anomalies}}<li>{{.}}</li>{{end}}</ul>{{else}}<p class="note">None.</p>{{end}}
<h3>7. Repeatability statement</h3>
<table><tr><th>Test</th><th>Primary metric</th><th>Iterations</th><th>Mean</th><th>SD</th><th>CV</th><th>Basis</th><th>Warning</th></tr>
{{range .Repeatability}}<tr><td>{{.Test}}</td><td>{{.Metric}}</td><td>{{.Iterations}}</td><td>{{if gt .Iterations 1}}{{num .Mean}}{{end}}</td><td>{{if gt .Iterations 1}}{{num .SD}}{{end}}</td><td>{{if gt .Iterations 1}}{{pct .CV}}{{end}}</td><td>{{.Basis}}</td><td>{{.Warning}}</td></tr>{{end}}</table>
<p class="note">The draft recommends a coefficient of variation below 5% for each test's primary metric.</p>
</section>
`))
