//go:build unix

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/results"
)

// foldedProbe opens the table of folded groups and one row as a person
// would (clicks on their summaries), follows anomaly #1's link, and, when
// the page was opened at a fragment, says whether its target was revealed.
const foldedProbe = `<pre id="probe2"></pre>
<script>
setTimeout(function () {
  var out = {};
  var h = decodeURIComponent(location.hash.slice(1));
  if (h) {
    var e = document.getElementById(h);
    out.found = !!e;
    out.closed = 0;
    for (var d = e && e.parentElement; d; d = d.parentElement) { if (d.tagName === 'DETAILS' && !d.open) out.closed++; }
    var r = e.getBoundingClientRect();
    out.top = r.top; out.h = r.height; out.visible = e.checkVisibility(); out.scrollY = window.scrollY; out.innerH = window.innerHeight;
  } else {
    var f = document.querySelector('details.folded');
    var g = f.querySelector('details.grow');
    var svg = g.querySelector('svg');
    out.foldedOpen = f.open;
    out.visibleBefore = svg.checkVisibility();
    f.querySelector('summary').click();
    g.querySelector('summary').click();
    out.rowOpen = g.open;
    var r = svg.getBoundingClientRect();
    out.w = r.width; out.h = r.height; out.visibleAfter = svg.checkVisibility();
    var a = document.querySelector('li.culprit .culprit-name a');
    out.anomHref = a.getAttribute('href');
    a.click();
  }
  setTimeout(function () {
    if (out.anomHref) {
      var t = document.getElementById(out.anomHref.slice(1));
      var r = t.getBoundingClientRect();
      out.anomTop = r.top; out.anomH = r.height; out.anomScrollY = window.scrollY; out.innerH = window.innerHeight;
    }
    document.getElementById('probe2').textContent = JSON.stringify(out);
  }, 300);
}, 500);
</script>
`

type foldedResult struct {
	FoldedOpen, RowOpen  bool
	VisibleBefore        bool
	VisibleAfter         bool
	Visible              bool
	W, H                 float64
	AnomHref             string
	AnomTop, AnomH       float64
	AnomScrollY          float64
	Found                bool
	Closed               int
	Top, ScrollY, InnerH float64
}

// TestChromiumFoldedGroups: with more imbalanced groups than are drawn
// open, the rest are folded into a collapsed table; clicking opens the
// table and a row's heat map; anomaly #1's link scrolls to its heat map;
// an imbalance's link into the folded table reveals its target.
func TestChromiumFoldedGroups(t *testing.T) {
	bin := chromium(t)
	r, plots := fixture()
	run := &r.Runs[0]
	pl := plots[run.ID]
	base := pl.Groups[1] // leaf1: healthy
	for k := range 16 {
		g := base
		g.Group, g.Kind = fmt.Sprintf("spine-uplinks:spine%d", k), "spine-uplinks"
		g.Anomalous = nil
		pl.Groups = append(pl.Groups, g)
		run.Imbalances = append(run.Imbalances, results.Imbalance{Group: g.Group, Kind: g.Kind, Members: len(g.Members), CV: 0.3 - 0.01*float64(k), Jain: 0.9, MaxMin: 2})
	}
	dir := t.TempDir()
	if err := results.Save(dir, r); err != nil {
		t.Fatal(err)
	}
	for _, run := range r.Runs {
		if err := results.SavePlots(filepath.Join(dir, run.Files["plots"]), plots[run.ID]); err != nil {
			t.Fatal(err)
		}
	}
	page := renderPage(t, dir)
	checkStructure(t, string(page))
	checkNoFetches(t, string(page))
	// An imbalance whose heat map is folded.
	fold := bytes.Index(page, []byte(`<details class="folded"`))
	if fold < 0 {
		t.Fatal("no folded groups in the page")
	}
	var target string
	for _, m := range regexp.MustCompile(`<td><a href="#([^"]+)"><b>spine-uplinks`).FindAllSubmatch(page, -1) {
		if i := bytes.Index(page, []byte(`id="`+string(m[1])+`"`)); i > fold && target == "" {
			target = string(m[1])
		}
	}
	if target == "" {
		t.Fatal("no imbalance links into the folded groups")
	}
	i := bytes.LastIndex(page, []byte("</body>"))
	probed := append(append(append([]byte{}, page[:i]...), foldedProbe...), page[i:]...)
	path := filepath.Join(t.TempDir(), "probe.html")
	if err := os.WriteFile(path, probed, 0o644); err != nil {
		t.Fatal(err)
	}
	get := func(url string) foldedResult {
		dom := runChromium(t, bin, "--window-size=1400,900", "--virtual-time-budget=5000", "--dump-dom", url)
		m := regexp.MustCompile(`(?s)<pre id="probe2">(.*?)</pre>`).FindSubmatch(dom)
		if m == nil {
			t.Fatalf("no probe output in %s", tail(string(dom), 500))
		}
		var fr foldedResult
		if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &fr); err != nil {
			t.Fatalf("probe %q: %v", m[1], err)
		}
		return fr
	}
	fr := get("file://" + path)
	if fr.FoldedOpen || fr.VisibleBefore {
		t.Errorf("folded table open %v, row heat map visible %v before any click: want collapsed", fr.FoldedOpen, fr.VisibleBefore)
	}
	if !fr.RowOpen || !fr.VisibleAfter || fr.W < 300 || fr.H < 80 {
		t.Errorf("after clicking: row open %v, heat map visible %v at %.0f×%.0f px; want open and drawn", fr.RowOpen, fr.VisibleAfter, fr.W, fr.H)
	}
	if !strings.Contains(fr.AnomHref, "-group-leaf-uplinks-leaf0") || fr.AnomH < 80 || fr.AnomTop < -1 || fr.AnomTop > 5 || fr.AnomScrollY <= 0 {
		t.Errorf("anomaly #1's link %q: figure at %.0f px (%.0f px tall), scrolled %.0f px; want it scrolled to the top", fr.AnomHref, fr.AnomTop, fr.AnomH, fr.AnomScrollY)
	}
	fr = get("file://" + path + "#" + target)
	if !fr.Found || fr.Closed != 0 || !fr.Visible || fr.H <= 0 || fr.Top < -1 || fr.Top > fr.InnerH || fr.ScrollY <= 0 {
		t.Errorf("opened at #%s: found %v, %d closed <details> around it, at %.0f px (%.0f tall) in %.0f, scrolled %.0f: want revealed and in view", target, fr.Found, fr.Closed, fr.Top, fr.H, fr.InnerH, fr.ScrollY)
	}
}
