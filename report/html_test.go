package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/fabricbench/fabricbench/results"
)

func renderHTML(t *testing.T, r *results.Results, plots map[string]*results.Plots) string {
	t.Helper()
	var buf bytes.Buffer
	if err := HTML(&buf, r, plots); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

var voidElements = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true,
}

// checkStructure tokenizes page and checks that it is a well-formed HTML
// document: doctype first, one html/head/body in order, every element
// closed in order, no duplicate ids, and no scripts, external resources or
// event handlers.
func checkStructure(t *testing.T, page string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(page))
	var stack []string
	seen := map[string]int{}
	ids := map[string]bool{}
	first := true
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				t.Fatalf("tokenizer: %v", z.Err())
			}
			break
		}
		tok := z.Token()
		if first && tt != html.TextToken {
			if tt != html.DoctypeToken || !strings.EqualFold(tok.Data, "html") {
				t.Errorf("document does not start with <!DOCTYPE html> but %v", tok)
			}
			first = false
		}
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			seen[tok.Data]++
			for _, a := range tok.Attr {
				if a.Key == "id" {
					if ids[a.Val] {
						t.Errorf("duplicate id %q", a.Val)
					}
					ids[a.Val] = true
				}
				if strings.HasPrefix(a.Key, "on") {
					t.Errorf("<%s> has an event handler %s", tok.Data, a.Key)
				}
			}
			switch tok.Data {
			case "script", "link", "iframe", "object", "embed", "img":
				t.Errorf("page has a <%s> element", tok.Data)
			case "title":
				if slices.Contains(stack, "svg") {
					seen["svg title"]++
					seen["title"]--
				}
			case "body":
				if seen["head"] != 1 || len(stack) != 1 || stack[0] != "html" {
					t.Errorf("<body> not after <head> inside <html>: stack %v", stack)
				}
			case "head":
				if len(stack) != 1 || stack[0] != "html" {
					t.Errorf("<head> not directly in <html>: stack %v", stack)
				}
			}
			if tt == html.StartTagToken && !voidElements[tok.Data] {
				stack = append(stack, tok.Data)
			}
		case html.EndTagToken:
			if len(stack) == 0 || stack[len(stack)-1] != tok.Data {
				t.Fatalf("</%s> does not close the open element (stack %v)", tok.Data, stack)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) != 0 {
		t.Errorf("unclosed elements at the end: %v", stack)
	}
	for _, el := range []string{"html", "head", "body", "title"} {
		if seen[el] != 1 {
			t.Errorf("%d <%s> elements, want 1", seen[el], el)
		}
	}
}

var (
	urlRE   = regexp.MustCompile(`(?i)https?://`)
	xmlnsRE = regexp.MustCompile(`xmlns(:\w+)?="https?://[^"]*"`)
)

// checkNoFetches fails if the page refers to anything outside itself: a URL
// anywhere but in an SVG namespace declaration, url() in styles, or
// @import/@font-face.
func checkNoFetches(t *testing.T, page string) {
	t.Helper()
	stripped := xmlnsRE.ReplaceAllString(page, "")
	if loc := urlRE.FindStringIndex(stripped); loc != nil {
		t.Errorf("page refers to a URL outside an xmlns attribute: …%s…", stripped[max(0, loc[0]-80):min(len(stripped), loc[1]+80)])
	}
	for _, bad := range []string{"url(", "@import", "@font-face", "src=", "<link", "<script"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, ns := range xmlnsRE.FindAllString(page, -1) {
		if ns != `xmlns="http://www.w3.org/2000/svg"` && ns != `xmlns:xlink="http://www.w3.org/1999/xlink"` {
			t.Errorf("unexpected namespace %s", ns)
		}
	}
}

func TestHTMLFixture(t *testing.T) {
	r, plots := fixture()
	page := renderHTML(t, r, plots)
	checkStructure(t, page)
	checkNoFetches(t, page)

	if n := strings.Count(page, "<svg"); n != fixtureSVGs {
		t.Errorf("%d <svg> elements, want %d", n, fixtureSVGs)
	}
	if n := strings.Count(page, `<svg role="img" class="plot" aria-label="`); n != fixtureSVGs {
		t.Errorf("%d <svg> with role=img and aria-label, want %d", n, fixtureSVGs)
	}
	if n := strings.Count(page, "<?xml"); n != 0 {
		t.Errorf("%d XML prologs left in the page", n)
	}
	// Every <svg> is well-formed XML with a <title> naming the plot.
	for i, m := range regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(page, -1) {
		var doc struct {
			XMLName xml.Name
			Label   string `xml:"aria-label,attr"`
			Title   string `xml:"title"`
		}
		if err := xml.Unmarshal([]byte(m), &doc); err != nil {
			t.Errorf("svg %d is not well-formed XML: %v", i, err)
			continue
		}
		if doc.Title == "" || doc.Title != doc.Label {
			t.Errorf("svg %d: title %q, aria-label %q", i, doc.Title, doc.Label)
		}
	}
	for _, want := range []string{
		"<title>nightly-fabric — FAIL</title>",
		`<span class="badge fail">FAIL</span>`,
		`<table class="kpis">`, `<ol class="culprits">`, `<table class="jobs">`, `<table class="faults">`,
		`<table class="faultmatch">`, `<table class="imbalances">`,
		`<tr class="fail"><td><code>perm.busbw</code>`,
		`<tr class="error"><td><code>fabric.drops</code>`,
		"mean 49.7 Gb/s vs group median 96.1 Gb/s (MAD 1.2) from 2.0 ms &lt;after fault F1&gt;",
		"window <b>2.1–6 ms</b>", `<span class="cause capacity">capacity</span>`, `<span class="cause slow-nic">slow-nic</span>`,
		"<code>rate_util</code> <b>50 %</b> <span class=\"base\">(group 97 %)</span>",
		"<code>queue_bytes</code> <b>402.3 KiB</b> <span class=\"base\">(group 2.83 KiB)</span>",
		"<code>bytes_share</code> <b>0.52×</b>", "<code>drops</code> <b>1834</b>",
		`<a class="tag" href="#run-r1-fault-F1">explains F1</a>`,
		"no anomaly explains F3",
		`<span class="tag warn">matches no injected fault</span>`,
		"from 2 ms, never restored", "4–4.8 ms", "host7:eth0, leaf0:Ethernet15, NIC of host7",
		"<td>leaf2:Ethernet1</td><td>leaf2:Ethernet6</td>", `<td class="num">0.957</td>`,
		"6 fault events",
		`<td class="num warn">238/240</td>`, "46.3 Gb/s", "1.45 ms", "8 MiB", "48 %",
		"Heat map of port bandwidth in Gb/s over time for symmetry group leaf-uplinks:leaf0",
		"» leaf0:Ethernet4", "Anomalous members (marked in red): leaf0:Ethernet4.",
		"Histogram of per-NIC bandwidth for job perm", "host7 (straggler)", "Stragglers: host7.",
		"Cumulative distribution of flow completion times per job",
		"F1 at 2 ms: degrade leaf0:Ethernet4 to 50%;", "F3 at 4.6 ms: flap up leaf2:Ethernet1 at 4.6ms.",
		"Anomaly windows (white boxes): #1 leaf0:Ethernet4 2.1–6 ms.",
		"symmetry group leaf-uplinks:leaf0, with anomaly windows #1 leaf0:Ethernet4 2.1–6 ms",
		"time (ms)", "bandwidth (Gb/s)", "NIC bandwidth (% of line rate)", "flow completion time (ms)", ">Gb/s<",
		"No bandwidth time series for this run.", // r2 has no faults
		`href="#run-r2"`, `id="run-r2"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// The anomalous group is drawn first.
	if i, j := strings.Index(page, "group leaf-uplinks:leaf0"), strings.Index(page, "group leaf-uplinks:leaf1"); i < 0 || j < i {
		t.Errorf("anomalous group not drawn first (%d, %d)", i, j)
	}
	if n := strings.Count(page, "<h3>Imbalances</h3>"); n != 1 {
		t.Errorf("%d imbalance sections, want 1 (r2 has none)", n)
	}
	checkCulprits(t, page)
}

// checkCulprits checks the fixture's ranked culprit list, its links and
// the fault correlation in the parsed page.
func checkCulprits(t *testing.T, page string) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]*html.Node{}
	var culprits []*html.Node
	walk(doc, func(n *html.Node) {
		if id := attr(n, "id"); id != "" {
			ids[id] = n
		}
		if n.Data == "li" && attr(n, "class") == "culprit" {
			culprits = append(culprits, n)
		}
	})
	// r1's three culprits, rank 1 first.
	if len(culprits) != 3 {
		t.Fatalf("%d culprit entries, want 3", len(culprits))
	}
	for i, want := range []string{"#1 leaf0:Ethernet4", "#2 host7", "#3 spine2:Ethernet3"} {
		if got := strings.Join(strings.Fields(text(find(culprits[i], "div", "chead"))), " "); !strings.HasPrefix(got, want) {
			t.Errorf("culprit %d reads %q, want it to start with %q", i, got, want)
		}
	}
	// The culprit links to its heat map, which shows the group.
	c1 := culprits[0]
	if id := attr(c1, "id"); id != "run-r1-anomaly-1" {
		t.Errorf("culprit #1 has id %q", id)
	}
	a := find(c1, "a", "")
	if a == nil || attr(a, "href") != "#run-r1-group-leaf-uplinks-leaf0" {
		t.Fatalf("culprit #1 does not link to its heat map: %v", a)
	}
	fig := ids["run-r1-group-leaf-uplinks-leaf0"]
	if fig == nil || fig.Data != "figure" || !strings.Contains(attr(find(fig, "svg", "plot"), "aria-label"), "leaf-uplinks:leaf0") {
		t.Errorf("the heat map anchor is not the leaf-uplinks:leaf0 figure: %v", fig)
	}
	// A straggler host links to its job's NIC histogram.
	if a := find(culprits[1], "a", ""); a == nil || attr(a, "href") != "#run-r1-job-perm" || ids["run-r1-job-perm"] == nil {
		t.Errorf("host7 does not link to the perm NIC histogram: %v", a)
	}
	// No heat map for spine2's group: the culprit is not a link.
	if a := find(find(culprits[2], "span", "culprit-name"), "a", ""); a != nil {
		t.Errorf("culprit #3 links to %q, but its group has no heat map", attr(a, "href"))
	}
	// Victims are nested under their culprit and link back to it.
	v := ids["run-r1-anomaly-1-victim-1"]
	if v == nil || !within(v, c1) || !strings.Contains(text(v), "spine4:Ethernet1 in spine-downlinks:spine4 — low bytes (−23%) with an empty queue") {
		t.Fatalf("victim spine4:Ethernet1 is not nested under culprit #1: %v", v)
	}
	if a := find(v, "a", ""); a == nil || attr(a, "href") != "#run-r1-anomaly-1" {
		t.Errorf("victim does not link to its culprit")
	}
	// 12 victims: collapsed.
	d := find(culprits[1], "details", "victims")
	if d == nil || len(findAll(d, "li")) != 12 {
		t.Errorf("host7's 12 victims are not in a <details>")
	} else if sum := text(find(d, "summary", "")); sum != "12 victims: host0, host2, host3, host5 +8 more" {
		t.Errorf("collapsed victims summary %q", sum)
	}
	if find(c1, "details", "") != nil {
		t.Errorf("culprit #1's 3 victims are collapsed")
	}
	// Fault correlation: F1 -> anomaly #1, linked.
	f1 := ids["run-r1-fault-F1"]
	if f1 == nil {
		t.Fatal("no fault row F1")
	}
	var cells []string
	for _, td := range findAll(f1, "td") {
		cells = append(cells, strings.Join(strings.Fields(text(td)), " "))
	}
	if row := strings.Join(cells, " | "); row != "F1 | degrade leaf0:Ethernet4 to 50% at 2ms | leaf0:Ethernet4 | from 2 ms, never restored | → anomaly #1 leaf0:Ethernet4 (capacity, 2.1–6 ms)" {
		t.Errorf("fault row F1 reads %q", row)
	}
	if a := find(f1, "a", ""); a == nil || attr(a, "href") != "#run-r1-anomaly-1" {
		t.Errorf("fault F1 does not link to anomaly #1")
	}
	if f3 := ids["run-r1-fault-F3"]; f3 == nil || !strings.Contains(text(f3), "no anomaly explains F3") {
		t.Errorf("F3 is not called out as unexplained")
	}
	var callouts []string
	for _, li := range findAll(find(doc, "ul", "callouts"), "li") {
		callouts = append(callouts, text(li))
	}
	if !slices.Equal(callouts, []string{
		"No anomaly explains F3 (flap leaf2:Ethernet1 every 400us x2 at 4ms).",
		"Anomaly #3 (spine2:Ethernet3, loss) matches no injected fault.",
	}) {
		t.Errorf("callouts %q", callouts)
	}
	if a := findAll(find(doc, "ul", "callouts"), "a"); len(a) != 2 || attr(a[0], "href") != "#run-r1-fault-F3" || attr(a[1], "href") != "#run-r1-anomaly-3" {
		t.Errorf("callouts do not link to the fault and the anomaly")
	}
}

func walk(n *html.Node, fn func(*html.Node)) {
	if n == nil {
		return
	}
	if n.Type == html.ElementNode {
		fn(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func attr(n *html.Node, key string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// find returns the first element under n (n included) with tag and, if
// class is set, that class.
func find(n *html.Node, tag, class string) *html.Node {
	var out *html.Node
	walk(n, func(m *html.Node) {
		if out == nil && m.Data == tag && (class == "" || slices.Contains(strings.Fields(attr(m, "class")), class)) {
			out = m
		}
	})
	return out
}

func findAll(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	walk(n, func(m *html.Node) {
		if m.Data == tag {
			out = append(out, m)
		}
	})
	return out
}

func text(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	if n != nil {
		rec(n)
	}
	return b.String()
}

func within(n, ancestor *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p == ancestor {
			return true
		}
	}
	return false
}

// TestHTMLManyCulprits renders a run with 10 culprits of 20 victims each:
// every list is collapsed, anchors stay unique and the page stays small.
func TestHTMLManyCulprits(t *testing.T) {
	r, plots := fixture()
	run := &r.Runs[0]
	run.Anomalies = nil
	for i := range run.FaultMatches {
		run.FaultMatches[i].Anomaly = 0
	}
	for i := range 10 {
		a := results.Anomaly{Rank: i + 1, Kind: results.KindSymmetry, Group: fmt.Sprintf("leaf-uplinks:leaf%d", i%4),
			Member: fmt.Sprintf("leaf%d:Ethernet%d", i%4, i%8), Cause: results.CauseCapacity, Score: 3 - 0.2*float64(i),
			StartUs: 100 * float64(i+1), EndUs: 100 * float64(i+20),
			Signals: []results.Signal{{Name: "rate_util", Value: 0.4, Baseline: 0.95}, {Name: "backlog_util", Value: 0.9, Baseline: 0.1}}}
		if i == 3 {
			a.Link = "leaf3-spine3"
		}
		for j := range 20 {
			a.Victims = append(a.Victims, results.Victim{Member: fmt.Sprintf("host%d", j), Group: "job:perm", Why: "flows cross the culprit"})
		}
		run.Anomalies = append(run.Anomalies, a)
	}
	page := renderHTML(t, r, plots)
	checkStructure(t, page)
	checkNoFetches(t, page)
	if n := strings.Count(page, `<li class="culprit"`); n != 10 {
		t.Errorf("%d culprits, want 10", n)
	}
	if n := strings.Count(page, `<details class="victims">`); n != 10 {
		t.Errorf("%d collapsed victim lists, want 10", n)
	}
	if !strings.Contains(page, `<span class="tag">link leaf3-spine3</span>`) {
		t.Errorf("the link of culprit #4 is not shown")
	}
	// Three culprits are leaf0 uplinks: their windows are drawn on its heat map.
	if !strings.Contains(page, "Anomaly windows (white boxes): #1 leaf0:Ethernet0 0.1–2 ms; #5 leaf0:Ethernet4 0.5–2.4 ms; #9 leaf0:Ethernet0 0.9–2.8 ms.") {
		t.Errorf("leaf0's heat map does not list its three windows: %q", regexp.MustCompile(`Anomaly windows[^<]*`).FindAllString(page, -1))
	}
	if i, j := strings.Index(page, `id="run-r1-anomaly-1"`), strings.Index(page, `id="run-r1-anomaly-10"`); i < 0 || j < i {
		t.Errorf("culprits not in rank order")
	}
	// Faults were injected and none is explained: every fault and every
	// anomaly is called out, in one sentence each.
	for _, want := range []string{"No anomaly explains <a", "Anomalies <a", " match no injected fault.</li>"} {
		if strings.Count(page, want) != 1 {
			t.Errorf("page has %d × %q, want 1", strings.Count(page, want), want)
		}
	}
}

func TestHTMLEscapes(t *testing.T) {
	evil := `<script>alert("x")</script>`
	r := &results.Results{Schema: results.Schema, Suite: evil, Status: results.Error, Runs: []results.Run{{
		ID: `r"1`, Status: results.Error, Error: evil, Fabric: evil,
		Params: map[string]string{evil: evil},
		KPIs:   []results.KPI{{Name: evil, Verdict: results.Error, Message: evil, Unit: evil}},
		Anomalies: []results.Anomaly{{Kind: evil, Group: evil, Member: evil, Evidence: evil, Cause: evil, Link: evil,
			Signals: []results.Signal{{Name: evil, Unit: evil}}, Victims: []results.Victim{{Member: evil, Group: evil, Why: evil}}, Faults: []string{evil}}},
		Jobs:         []results.Job{{Name: evil, Workload: evil}},
		Faults:       []results.Fault{{Description: evil, ID: evil}},
		FaultMatches: []results.FaultMatch{{ID: evil, Description: evil, Ports: []string{evil}, Host: evil}},
		Imbalances:   []results.Imbalance{{Group: evil, Kind: evil, MaxMember: evil, MinMember: evil, Evidence: evil}},
	}}}
	plots := map[string]*results.Plots{`r"1`: {
		Groups:     []results.GroupSeries{{Group: evil, Members: []string{evil}, TimesUs: []float64{1, 2}, Gbps: [][]float64{{1, 2}}, Anomalous: []string{evil}}},
		NICHists:   []results.NICHist{{Job: evil, Host: evil, Edges: []float64{0, 1}, Counts: []int{1}, Straggler: true}},
		FCTs:       []results.FCTSeries{{Job: evil, FCTUs: []float64{1, 2}}},
		TimeSeries: []results.TimeSeries{{Name: evil, Panel: evil, TimesUs: []float64{0, 1}, Gbps: []float64{1, 1}}},
	}}
	page := renderHTML(t, r, plots)
	if strings.Contains(page, "<script") {
		t.Errorf("unescaped text in the page")
	}
	checkStructure(t, page)
	if !strings.Contains(page, "&lt;script&gt;alert(") {
		t.Errorf("escaped text missing")
	}
	if n := strings.Count(page, "<svg"); n != 4 {
		t.Errorf("%d svgs, want 4", n)
	}
}

// TestHTMLEmptyAndBadData feeds degenerate data to every plot: nothing may
// panic, and each empty plot says so.
func TestHTMLEmptyAndBadData(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	r := &results.Results{Schema: results.Schema, Suite: "s", Status: results.Pass, Runs: []results.Run{
		{ID: "empty", Status: results.Pass},
		{ID: "none", Status: results.Pass},
		{ID: "bad", Status: results.Pass},
	}}
	plots := map[string]*results.Plots{
		"empty": {},
		"bad": {
			Groups: []results.GroupSeries{
				{Group: "no-members"},
				{Group: "no-times", Members: []string{"a"}, Gbps: [][]float64{{1}}},
				{Group: "all-nan", Members: []string{"a", "b"}, TimesUs: []float64{1, 2}, Gbps: [][]float64{{nan, nan}, {inf, nan}}},
				{Group: "ragged", Members: []string{"a", "b", "c"}, TimesUs: []float64{1, 2, 3}, Gbps: [][]float64{{1}, {2, 3, 4, 5}}},
				{Group: "one-point", Members: []string{"a"}, TimesUs: []float64{5}, Gbps: [][]float64{{7}}},
				{Group: "constant-zero", Members: []string{"a", "b"}, TimesUs: []float64{1, 2}, Gbps: [][]float64{{0, 0}, {0, 0}}},
				{Group: "unsorted", Members: []string{"a"}, TimesUs: []float64{3, 1, 2}, Gbps: [][]float64{{1, 2, 3}}},
			},
			NICHists: []results.NICHist{
				{Job: "empty-counts", Host: "h", Edges: []float64{0, 1}, Counts: []int{0}},
				{Job: "bad-edges", Host: "h", Edges: []float64{0}, Counts: []int{1, 2}},
				{Job: "odd-edges", Host: "h1", Edges: []float64{0, 0.5, 1}, Counts: []int{1, 2}},
				{Job: "odd-edges", Host: "h2", Edges: []float64{0, 0.25, 1}, Counts: []int{3, 1}},
				{Job: "only-stragglers", Host: "h", Edges: []float64{0, 0.5, 1}, Counts: []int{3, 1}, Straggler: true},
			},
			FCTs: []results.FCTSeries{{Job: "none"}, {Job: "nan", FCTUs: []float64{nan, -1}}, {Job: "zero", FCTUs: []float64{0, 0, 1e6}}, {Job: "same", FCTUs: []float64{5, 5}}},
			TimeSeries: []results.TimeSeries{
				{Name: "empty", Panel: "p-empty"},
				{Name: "gaps", Panel: "p-gaps", TimesUs: []float64{1, 2, 3, 4, 5}, Gbps: []float64{1, nan, 3, 4}},
				{Name: "flat", Panel: "p-flat", TimesUs: []float64{1}, Gbps: []float64{0}},
			},
			Faults: []results.Fault{{AtUs: 3, Description: "in range"}, {AtUs: 1e9, Description: "out of range"}, {AtUs: nan}},
		},
	}
	page := renderHTML(t, r, plots)
	checkStructure(t, page)
	checkNoFetches(t, page)
	for _, want := range []string{
		"No symmetry-group telemetry for this run.", "No per-NIC bandwidth histograms for this run.",
		"No flow completion times for this run.", "No bandwidth time series for this run.",
		"This run has no plot data.", // run "none"
		"<b>no-members</b>: No data for this group.", "<b>no-times</b>: No data for this group.",
		"<b>all-nan</b>: No bandwidth samples for this group.", "<b>unsorted</b>: Interval times are not increasing",
		"<b>job empty-counts</b>: No bandwidth samples for this job.", "<b>job bad-edges</b>: No bandwidth samples",
		"<b>p-empty</b>: No data.", "F1 at 3 µs: in range.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "F2 at") || strings.Contains(page, "F3 at") {
		t.Errorf("a fault outside the window is labelled in the plot caption")
	}
	if strings.Contains(page, "could not be drawn") {
		t.Errorf("a plot failed:\n%s", regexp.MustCompile(`The plot could not be drawn[^<]*`).FindString(page))
	}
	// ragged, one-point, constant-zero heat maps; odd-edges and
	// only-stragglers histograms; one CDF; gaps and flat panels.
	if n, want := strings.Count(page, "<svg"), 3+2+1+2; n != want {
		t.Errorf("%d svgs, want %d", n, want)
	}
	if err := HTML(io.Discard, nil, nil); err == nil {
		t.Error("HTML(nil) succeeded")
	}
	if err := JUnit(io.Discard, nil); err == nil {
		t.Error("JUnit(nil) succeeded")
	}
}

func TestHeatmapCap(t *testing.T) {
	var groups []results.GroupSeries
	for i := range 20 {
		g := results.GroupSeries{Group: fmt.Sprintf("g%02d", i), Members: []string{"a", "b"}, TimesUs: []float64{1, 2}, Gbps: [][]float64{{1, 2}, {3, 4}}}
		if i >= 18 {
			g.Anomalous = []string{"b"}
		}
		groups = append(groups, g)
	}
	// g05 is imbalanced; g18 and g19 have anomalous members: those three
	// are drawn open. The other 17 are folded into a table, the first
	// maxFoldedMaps with their heat map.
	imbs := []results.Imbalance{{Group: "g05", CV: 0.3}}
	s, targets := heatmapSection(groups, nil, imbs, "run-x", &idSet{})
	var open []string
	for _, f := range s.Figures {
		open = append(open, f.Title)
	}
	if got := strings.Join(open, " "); got != "g18 g19 g05" {
		t.Errorf("drawn open: %s, want g18 g19 g05 (anomalous, then imbalanced)", got)
	}
	if len(s.Folded) != 17 || len(targets) != 20 {
		t.Fatalf("%d folded groups, %d targets; want 17 and 20", len(s.Folded), len(targets))
	}
	drawn := 0
	for _, r := range s.Folded {
		if r.Fig != nil {
			drawn++
			if r.Fig.SVG == "" || !strings.HasPrefix(r.Fig.ID, "run-x-group-") {
				t.Errorf("folded heat map of %s: %+v", r.Group, r.Fig)
			}
		}
		if r.Tag != "" || r.Members != 2 || r.Mean != "2.5" || r.Min != "1.5" || r.Max != "3.5" || r.CoV != "0.4" {
			t.Errorf("folded row %+v", r)
		}
	}
	if drawn != maxFoldedMaps {
		t.Errorf("%d folded heat maps, want %d", drawn, maxFoldedMaps)
	}
	if want := "17 groups without anomaly or imbalance: members carried 1.5–3.5 Gb/s on average, CoV up to 0.4; heat maps of the first 12"; s.FoldedSum != want {
		t.Errorf("summary %q, want %q", s.FoldedSum, want)
	}
	// Groups with culprits come first, by rank, and get windows.
	anoms := []results.Anomaly{
		{Rank: 1, Group: "g07", Member: "a", StartUs: 1, EndUs: 2},
		{Rank: 2, Group: "g19", Member: "b", StartUs: 2, EndUs: 2},
		{Rank: 3, Group: "nope", Member: "a", StartUs: 1, EndUs: 2}, // falls back to the first group with member a: g00
	}
	s, targets = heatmapSection(groups, anoms, nil, "run-x", &idSet{})
	var order []string
	for _, f := range s.Figures[:4] {
		order = append(order, f.Title)
	}
	if got := strings.Join(order, " "); got != "g07 g19 g00 g18" {
		t.Errorf("order %s, want g07 g19 g00 g18", got)
	}
	if targets[7] != "run-x-group-g07" || s.Figures[0].ID != "run-x-group-g07" {
		t.Errorf("targets %v", targets)
	}
	if !strings.Contains(s.Figures[0].Caption, "#1 a 1–2 µs") || !strings.Contains(s.Figures[1].Caption, "#2 b at 2 µs") {
		t.Errorf("captions %q / %q", s.Figures[0].Caption, s.Figures[1].Caption)
	}
	if !strings.Contains(string(s.Figures[0].SVG), ">#1<") {
		t.Errorf("the window of #1 is not labelled in the heat map")
	}
}

func TestHeatmapManyIntervalsAndMembers(t *testing.T) {
	g := results.GroupSeries{Group: "spine-downlinks:spine0", Kind: "spine-downlinks"}
	for t := range 5000 {
		g.TimesUs = append(g.TimesUs, float64(t+1)*10)
	}
	for m := range 150 {
		name := fmt.Sprintf("spine0:Ethernet%d", m)
		g.Members = append(g.Members, name)
		row := make([]float64, len(g.TimesUs))
		for i := range row {
			row[i] = 100
		}
		g.Gbps = append(g.Gbps, row)
	}
	g.Anomalous = []string{"spine0:Ethernet77"}
	f := heatmapFigure(&g, nil)
	if f.SVG == "" {
		t.Fatalf("no plot: %s", f.Note)
	}
	svg := string(f.SVG)
	// At most maxHeatmapCols × members cells.
	if n := strings.Count(svg, "<path"); n > maxHeatmapCells+1000 {
		t.Errorf("%d paths: the time axis was not binned", n)
	}
	// 150 members: 9600/150 = 64 columns of ⌈5000/64⌉ = 79 intervals.
	if !strings.Contains(f.Caption, "averages 79 telemetry intervals") {
		t.Errorf("caption %q", f.Caption)
	}
	// 480 pt for 150 rows: every 4th member is labelled.
	if !strings.Contains(svg, "» spine0:Ethernet77") || !strings.Contains(svg, ">spine0:Ethernet4<") || strings.Contains(svg, ">spine0:Ethernet1<") {
		t.Errorf("member labels: want the anomalous one and every 4th")
	}
	if len(svg) > 1500<<10 {
		t.Errorf("heat map SVG is %d bytes", len(svg))
	}
}

func TestTicks(t *testing.T) {
	labels := func(ts []string) string { return strings.Join(ts, " ") }
	get := func(lo, hi float64) string {
		var out []string
		for _, tk := range (niceTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return labels(out)
	}
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{{0, 100, "0 20 40 60 80 100"}, {0, 6, "0 1 2 3 4 5 6"}, {0, 1, "0.0 0.2 0.4 0.6 0.8 1.0"}, {-0.3, 0.3, "-0.3 -0.2 -0.1 0.0 0.1 0.2 0.3"}, {0, 97.3, "0 20 40 60 80"}} {
		if got := get(c.lo, c.hi); got != c.want {
			t.Errorf("niceTicks(%v, %v) = %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
	var lg []string
	for _, tk := range (logTicks{}).Ticks(0.03, 2.9) {
		if tk.Label != "" {
			lg = append(lg, tk.Label)
		}
	}
	if got := labels(lg); got != "0.05 0.1 0.2 0.5 1 2" {
		t.Errorf("logTicks = %q", got)
	}
}

// renderPage renders the results directory dir and returns its
// report.html.
func renderPage(t *testing.T, dir string) []byte {
	t.Helper()
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	return page
}

func TestRender(t *testing.T) {
	dir := writeFixtureDir(t)
	page := renderPage(t, dir)
	checkStructure(t, string(page))
	if n := strings.Count(string(page), "<svg"); n != fixtureSVGs {
		t.Errorf("report.html has %d svgs, want %d", n, fixtureSVGs)
	}
	data, err := os.ReadFile(filepath.Join(dir, JUnitFile))
	if err != nil {
		t.Fatal(err)
	}
	var p parsedSuites
	if err := xml.Unmarshal(data, &p); err != nil || p.Tests != 7 || p.Failures != 1 || p.Errors != 1 {
		t.Errorf("junit.xml: %v, tests %d failures %d errors %d", err, p.Tests, p.Failures, p.Errors)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}

	// A broken or missing plots file costs only that run's plots.
	if err := os.WriteFile(filepath.Join(dir, "runs", "r1", "plots.json"), []byte("{\"run\": "), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "runs", "r2", "plots.json")); err != nil {
		t.Fatal(err)
	}
	if err := Render(dir); err != nil {
		t.Fatalf("Render with broken plots: %v", err)
	}
	page, _ = os.ReadFile(filepath.Join(dir, HTMLFile))
	for _, want := range []string{"Plot data not loaded: ", "plots.json:1:9: malformed JSON", "plots.json: no plots file"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(string(page), "<svg"); n != 0 {
		t.Errorf("%d svgs without plot data", n)
	}
}

func TestRenderErrors(t *testing.T) {
	dir := t.TempDir()
	err := Render(dir)
	if err == nil || !strings.Contains(err.Error(), "results.json") {
		t.Errorf("Render of an empty dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, HTMLFile)); !os.IsNotExist(err) {
		t.Errorf("report written without results: %v", err)
	}
	// A plots path escaping the directory is refused.
	r, _ := fixture()
	r.Runs[0].Files["plots"] = "../../etc/passwd"
	r.Runs[1].Files = nil
	if err := results.Save(dir, r); err != nil {
		t.Fatal(err)
	}
	page := renderPage(t, dir)
	if !strings.Contains(string(page), "is not a path inside the results directory") {
		t.Errorf("escaping plots path not reported")
	}
}
