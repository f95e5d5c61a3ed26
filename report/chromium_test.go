//go:build unix

package report

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// chromium returns the path of a Chromium binary, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("FABRICBENCH_CHROMIUM"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skipf("Chromium is not installed (apt-get install chromium, or set FABRICBENCH_CHROMIUM): the report is not checked in a browser")
	return ""
}

// runChromium runs headless Chromium with args on a throwaway profile and
// returns its standard output. The whole process group is killed after 60 s.
func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio",
		// Nothing may be fetched: make any attempt fail rather than hang.
		"--host-resolver-rules=MAP * ~NOTFOUND",
		"--user-data-dir=" + t.TempDir(),
	}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("chromium %v: timed out after 60 s; stderr:\n%s", args, tail(stderr.String(), 2000))
	}
	if err != nil {
		t.Fatalf("chromium %v: %v; stderr:\n%s", args, err, tail(stderr.String(), 2000))
	}
	return stdout.Bytes()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// probeScript measures every <svg> as laid out by the browser and writes
// the result as JSON into <pre id="probe">.
const probeScript = `<pre id="probe"></pre>
<script>
(function () {
  var out = {svgs: [], resources: 0, scrollWidth: 0, innerWidth: 0};
  document.querySelectorAll('svg').forEach(function (s) {
    var r = s.getBoundingClientRect();
    out.svgs.push({
      label: s.getAttribute('aria-label') || '',
      role: s.getAttribute('role') || '',
      w: r.width, h: r.height,
      shapes: s.querySelectorAll('path,rect,line,polygon,polyline,circle').length,
      texts: s.querySelectorAll('text').length,
      textW: Array.prototype.reduce.call(s.querySelectorAll('text'), function (m, t) { return Math.max(m, t.getBoundingClientRect().width); }, 0),
      marks: Array.prototype.filter.call(s.querySelectorAll('text'), function (t) { return /^#\d+$/.test(t.textContent.trim()) && t.getBoundingClientRect().width > 0; }).map(function (t) { return t.textContent.trim(); })
    });
  });
  out.culprits = Array.prototype.map.call(document.querySelectorAll('li.culprit'), function (li) {
    var vs = li.querySelectorAll('ul.victims li');
    return {
      rank: li.querySelector('.rank').textContent,
      h: li.getBoundingClientRect().height,
      victims: vs.length,
      shown: Array.prototype.filter.call(vs, function (v) { return v.checkVisibility ? v.checkVisibility() : v.getBoundingClientRect().height > 0; }).length,
      indent: vs.length ? vs[0].getBoundingClientRect().left - li.getBoundingClientRect().left : 0
    };
  });
  out.faultRows = Array.prototype.map.call(document.querySelectorAll('table.faultmatch tbody tr'), function (tr) { return tr.innerText; });
  out.resources = performance.getEntriesByType('resource').length;
  out.scrollWidth = document.documentElement.scrollWidth;
  out.innerWidth = window.innerWidth;
  document.getElementById('probe').textContent = JSON.stringify(out);
})();
</script>
`

type probe struct {
	SVGs []struct {
		Label  string   `json:"label"`
		Role   string   `json:"role"`
		W      float64  `json:"w"`
		H      float64  `json:"h"`
		Shapes int      `json:"shapes"`
		Texts  int      `json:"texts"`
		TextW  float64  `json:"textW"`
		Marks  []string `json:"marks"` // anomaly window labels drawn
	} `json:"svgs"`
	Culprits []struct {
		Rank    string  `json:"rank"`
		H       float64 `json:"h"`
		Victims int     `json:"victims"`
		Shown   int     `json:"shown"`  // victims laid out (not collapsed)
		Indent  float64 `json:"indent"` // of the first victim from its culprit's left edge
	} `json:"culprits"`
	FaultRows   []string `json:"faultRows"`
	Resources   int      `json:"resources"`
	ScrollWidth int      `json:"scrollWidth"`
	InnerWidth  int      `json:"innerWidth"`
}

var probeRE = regexp.MustCompile(`(?s)<pre id="probe">(.*?)</pre>`)

// TestChromiumRendersReport opens the fixture's report in headless
// Chromium as a person would and checks that every plot is laid out with a
// real size and drawn shapes and text, that nothing is fetched, and that a
// screenshot of the page is not blank.
func TestChromiumRendersReport(t *testing.T) {
	bin := chromium(t)
	dir := writeFixtureDir(t)
	page := renderPage(t, dir)

	// 1. Measure the plots in the laid-out DOM.
	i := bytes.LastIndex(page, []byte("</body>"))
	if i < 0 {
		t.Fatal("report has no </body>")
	}
	probed := append(append(append([]byte{}, page[:i]...), probeScript...), page[i:]...)
	probePath := filepath.Join(t.TempDir(), "probe.html")
	if err := os.WriteFile(probePath, probed, 0o644); err != nil {
		t.Fatal(err)
	}
	dom := runChromium(t, bin, "--window-size=1400,4000", "--virtual-time-budget=5000", "--dump-dom", "file://"+probePath)
	m := probeRE.FindSubmatch(dom)
	if m == nil {
		t.Fatalf("no probe output in the dumped DOM (%d bytes):\n%s", len(dom), tail(string(dom), 1000))
	}
	var pr probe
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &pr); err != nil {
		t.Fatalf("probe output %q: %v", m[1], err)
	}
	if len(pr.SVGs) != fixtureSVGs {
		t.Errorf("browser sees %d <svg> elements, want %d", len(pr.SVGs), fixtureSVGs)
	}
	for _, s := range pr.SVGs {
		if s.Role != "img" || s.Label == "" {
			t.Errorf("svg %q: role %q: want role=img and an aria-label", s.Label, s.Role)
		}
		if s.W < 300 || s.H < 120 {
			t.Errorf("svg %q is laid out at %.0f×%.0f px, want at least 300×120", s.Label, s.W, s.H)
		}
		if s.Shapes < 20 {
			t.Errorf("svg %q has %d drawn shapes, want at least 20", s.Label, s.Shapes)
		}
		if s.Texts < 6 || s.TextW <= 0 {
			t.Errorf("svg %q has %d text elements (widest %.0f px): axis labels missing", s.Label, s.Texts, s.TextW)
		}
	}
	// The culprits, ranked: #1's victims laid out nested under it, #2's
	// twelve collapsed; #1's window drawn on leaf0's heat map.
	var ranks []string
	for _, c := range pr.Culprits {
		ranks = append(ranks, c.Rank)
		if c.H < 30 {
			t.Errorf("culprit %s is %.0f px tall", c.Rank, c.H)
		}
	}
	if strings.Join(ranks, " ") != "#1 #2 #3" {
		t.Errorf("culprits in the order %v, want #1 #2 #3", ranks)
	}
	if len(pr.Culprits) == 3 {
		if c := pr.Culprits[0]; c.Victims != 3 || c.Shown != 3 || c.Indent < 20 {
			t.Errorf("culprit #1: %d victims, %d shown, indented %.0f px; want 3 nested and shown", c.Victims, c.Shown, c.Indent)
		}
		if c := pr.Culprits[1]; c.Victims != 12 || c.Shown != 0 {
			t.Errorf("culprit #2: %d victims, %d shown; want 12, collapsed", c.Victims, c.Shown)
		}
	}
	marked := false
	for _, s := range pr.SVGs {
		if strings.Contains(s.Label, "leaf-uplinks:leaf0") && slices.Contains(s.Marks, "#1") {
			marked = true
		}
	}
	if !marked {
		t.Errorf("no heat map of leaf-uplinks:leaf0 shows the window of #1")
	}
	if len(pr.FaultRows) != 3 || !strings.Contains(pr.FaultRows[0], "→ anomaly #1") || !strings.Contains(pr.FaultRows[2], "no anomaly explains F3") {
		t.Errorf("fault correlation rows %q", pr.FaultRows)
	}
	if pr.Resources != 0 {
		t.Errorf("the page loaded %d external resources, want none", pr.Resources)
	}
	if pr.ScrollWidth > pr.InnerWidth {
		t.Errorf("page is %d px wide in a %d px window: horizontal scrolling", pr.ScrollWidth, pr.InnerWidth)
	}

	// 2. Screenshot the page as it is.
	shot := filepath.Join(t.TempDir(), "report.png")
	runChromium(t, bin, "--window-size=1400,4000", "--virtual-time-budget=5000", "--screenshot="+shot, "file://"+filepath.Join(dir, HTMLFile))
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	if keep := os.Getenv("FABRICBENCH_REPORT_KEEP"); keep != "" {
		_ = os.MkdirAll(keep, 0o755)
		_ = os.WriteFile(filepath.Join(keep, "report.png"), data, 0o644)
		_ = os.WriteFile(filepath.Join(keep, "report.html"), page, 0o644)
	}
	if len(data) < 50_000 {
		t.Errorf("screenshot is only %d bytes", len(data))
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1400 || b.Dy() != 4000 {
		t.Errorf("screenshot is %v, want 1400×4000", b.Size())
	}
	if n := distinctColors(img); n < 100 {
		t.Errorf("screenshot has %d distinct colours: blank or nearly blank page", n)
	}
}

func distinctColors(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r >> 8, g >> 8, bl >> 8, a >> 8}] = true
		}
	}
	return len(seen)
}
