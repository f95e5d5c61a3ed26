//go:build unix

package report

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/history"
	"github.com/fabricbench/fabricbench/results"
)

// The matrix table at the top of a matrix run's report: KPIs x points,
// the best cell by direction and the failing cells marked.
func TestMatrixTable(t *testing.T) {
	r, plots := fixture()
	page := renderHTML(t, r, plots)
	i, j := strings.Index(page, `id="matrix"`), strings.Index(page, `id="run-`)
	if i < 0 || j < 0 || i > j {
		t.Fatalf("no matrix table before the first run (matrix at %d, first run at %d)", i, j)
	}
	m := page[i:j]
	for _, want := range []string{
		`<td class="num cell pass best" title="best of 2 points; PASS">★ 1.2</td>`, // lower slowdown is better
		`<td class="num cell fail" title="FAIL: busbw 46.3 Gb/s`,                   // failing cell
		`<td class="num cell pass best" title="best of 2 points; PASS">★ 91.5 Gb/s</td>`,
		`<td class="num cell skip" title="not evaluated at this point">—</td>`, // a KPI r2 does not have
	} {
		if !strings.Contains(m, want) {
			t.Errorf("matrix table lacks %s\n%s", want, m)
		}
	}
	// A single run has no matrix table.
	one := *r
	one.Runs = r.Runs[:1]
	if strings.Contains(renderHTML(t, &one, plots), `id="matrix"`) {
		t.Errorf("a single run's report has a matrix table")
	}
}

func trendFixture() *history.Trend {
	t0 := time.Date(2025, 3, 1, 2, 0, 0, 0, time.UTC)
	var nights []history.Night
	for n, f := range []float64{1, 1.02, 1.4} {
		var runs []results.Run
		for p, lb := range []string{"ecmp", "ops", "reps"} {
			sd := (1.1 + 0.4*float64(2-p)) * f
			verdict := results.Pass
			if sd > 1.5 {
				verdict = results.Fail
			}
			run := results.Run{ID: "lb=" + lb, Status: verdict, KPIs: []results.KPI{
				{Name: "perm.slowdown_p99", Metric: "slowdown_p99", Scope: "perm", Op: "<=", Threshold: 1.5, Value: sd, Verdict: verdict, Unit: "ratio"},
				{Name: "a2a.busbw_gbps", Metric: "busbw_gbps", Scope: "a2a", Op: ">=", Threshold: 60, Value: 90 / f, Verdict: results.Pass, Unit: "Gb/s"},
			}}
			if n == 2 && lb == "reps" {
				run.Anomalies = fixtureAnomalies()
			}
			runs = append(runs, run)
		}
		nights = append(nights, history.Night{Dir: "nights/n" + string(rune('1'+n)), Results: &results.Results{Suite: "nightly", Started: t0.Add(time.Duration(n) * 24 * time.Hour), Status: results.Fail, Runs: runs}})
	}
	return history.BuildTrend(nights)
}

func TestTrendAndComparePages(t *testing.T) {
	tr := trendFixture()
	var b bytes.Buffer
	if err := TrendHTML(&b, tr); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	checkNoFetches(t, page)
	if n := strings.Count(page, `<svg role="img" class="plot"`); n != 2 {
		t.Errorf("%d plots, want 2 (one per KPI)", n)
	}
	for _, want := range []string{"LATEST NIGHT REGRESSED", "leaf0:Ethernet4", "Anomalies of the latest night", "regression</text>"} {
		if !strings.Contains(page, want) {
			t.Errorf("trend page lacks %q", want)
		}
	}
	n1, n3 := tr.Nights[0], tr.Nights[2]
	c := history.Compare(n1.Dir, n1.Results, n3.Dir, n3.Results)
	b.Reset()
	if err := CompareHTML(&b, c); err != nil {
		t.Fatal(err)
	}
	checkNoFetches(t, b.String())
	if !strings.Contains(b.String(), "REGRESSED") || strings.Count(b.String(), `<tr class="fail">`) != 2*c.Summary.Regressed {
		t.Errorf("compare page: want %d regressed rows twice (regressions, every KPI)", c.Summary.Regressed)
	}
}

// The compare and trend pages render in headless Chromium with their
// plots laid out, and fetch nothing.
func TestChromiumTrendAndCompare(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	tr := trendFixture()
	var b bytes.Buffer
	if err := TrendHTML(&b, tr); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, TrendHTMLFile), b.Bytes(), 0o644)
	n1, n3 := tr.Nights[0], tr.Nights[2]
	if err := WriteCompare(dir, history.Compare(n1.Dir, n1.Results, n3.Dir, n3.Results)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file string
		svgs int
	}{{TrendHTMLFile, 2}, {CompareHTMLFile, 0}} {
		page, _ := os.ReadFile(filepath.Join(dir, c.file))
		i := bytes.LastIndex(page, []byte("</body>"))
		probed := append(append(append([]byte{}, page[:i]...), probeScript...), page[i:]...)
		path := filepath.Join(t.TempDir(), "probe.html")
		os.WriteFile(path, probed, 0o644)
		dom := runChromium(t, bin, "--window-size=1400,3000", "--virtual-time-budget=5000", "--dump-dom", "file://"+path)
		m := probeRE.FindSubmatch(dom)
		if m == nil {
			t.Fatalf("%s: no probe output", c.file)
		}
		var pr probe
		if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &pr); err != nil {
			t.Fatal(err)
		}
		if len(pr.SVGs) != c.svgs {
			t.Errorf("%s: %d svgs, want %d", c.file, len(pr.SVGs), c.svgs)
		}
		for _, s := range pr.SVGs {
			if s.W < 300 || s.H < 120 || s.Shapes < 10 || s.Texts < 6 {
				t.Errorf("%s: svg %q laid out %.0f×%.0f with %d shapes, %d texts", c.file, s.Label, s.W, s.H, s.Shapes, s.Texts)
			}
		}
		if pr.Resources != 0 {
			t.Errorf("%s fetched %d resources", c.file, pr.Resources)
		}
		if pr.ScrollWidth > pr.InnerWidth {
			t.Errorf("%s is %d px wide in a %d px window", c.file, pr.ScrollWidth, pr.InnerWidth)
		}
	}
	if keep := os.Getenv("FABRICBENCH_REPORT_KEEP"); keep != "" {
		shot := filepath.Join(keep, "trend.png")
		os.MkdirAll(keep, 0o755)
		runChromium(t, bin, "--window-size=1400,1600", "--screenshot="+shot, "file://"+filepath.Join(dir, TrendHTMLFile))
	}
}
