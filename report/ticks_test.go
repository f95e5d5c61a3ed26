package report

import (
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/results"
)

// Every linear axis gets about five labelled ticks: four to seven over
// spans of every size and offset (30..175 µs had only 50, 100, 150).
func TestNiceTicksCount(t *testing.T) {
	for _, lo := range []float64{0, 0.3, 3, 30, 720, 1234} {
		for span := 0.01; span < 1e5; span *= 1.037 {
			n := 0
			for _, tk := range (niceTicks{}).Ticks(lo, lo+span) {
				if tk.Label != "" {
					n++
				}
			}
			if n < 4 || n > 11 {
				t.Fatalf("niceTicks(%v, %v): %d labels, want 4 to 11", lo, lo+span, n)
			}
		}
	}
	for lo := 0.001; lo < 1e4; lo *= 1.31 {
		for _, ratio := range []float64{50, 200, 999, 1e4} { // the FCT CDF is log from 50×
			n := 0
			for _, tk := range (logTicks{}).Ticks(lo, lo*ratio) {
				if tk.Label != "" {
					n++
				}
			}
			if n < 3 || n > 12 {
				t.Errorf("logTicks(%v, %v): %d labels", lo, lo*ratio, n)
			}
		}
	}
}

// svgTexts returns the text elements of an SVG in order.
func svgTexts(svg string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`>([^<>]+)</text>`).FindAllStringSubmatch(svg, -1) {
		out = append(out, strings.TrimSpace(m[1]))
	}
	return out
}

// The FCT CDF's time axis, linear or log, has at least four labelled ticks.
func TestFCTAxisTicks(t *testing.T) {
	for _, c := range []struct {
		name   string
		lo, hi float64
		want   string
	}{
		// The smoke suite's FCTs: linear, was "50 100 150".
		{"linear", 31, 174, "40 60 80 100 120 140 160"},
		// Three decades, not aligned: log, was "0.1 1 10".
		{"log", 20, 15000, "0.02 0.05 0.1 0.2 0.5 1 2 5 10"},
	} {
		var v []float64
		for i := range 200 {
			v = append(v, c.lo*math.Pow(c.hi/c.lo, float64(i)/199))
		}
		s := fctSection([]results.FCTSeries{{Job: "perm", FCTUs: v}})
		if len(s.Figures) != 1 || s.Figures[0].SVG == "" {
			t.Fatalf("%s: figures %+v", c.name, s.Figures)
		}
		texts := svgTexts(string(s.Figures[0].SVG))
		// Between the axis label and the Y axis label come the X ticks.
		var x []string
		on := false
		for _, tx := range texts {
			switch {
			case strings.HasPrefix(tx, "flow completion time"):
				on = true
			case tx == "fraction of flows":
				on = false
			case on:
				x = append(x, tx)
			}
		}
		if got := strings.Join(x, " "); got != c.want {
			t.Errorf("%s FCT axis ticks %q, want %q", c.name, got, c.want)
		}
	}
}

// A heat map is an image stretched over its data area, one pixel per
// cell, and its colour bar too: without preserveAspectRatio="none" a
// browser draws a 240×4 image as a thin band.
func TestHeatmapIsAStretchedImage(t *testing.T) {
	g := results.GroupSeries{Group: "leaf-uplinks:leaf0", Members: []string{"a", "b", "c"}, TimesUs: []float64{100, 200, 300, 400}, Gbps: [][]float64{{1, 2, 3, 4}, {4, 3, 2, 1}, {2, 2, 2, 2}}}
	f := heatmapFigure(&g, nil)
	svg := string(f.SVG)
	imgs := regexp.MustCompile(`<image [^>]*>`).FindAllString(svg, -1)
	if len(imgs) != 2 {
		t.Fatalf("%d images, want the heat map and its colour bar", len(imgs))
	}
	for _, im := range imgs {
		if !strings.Contains(im, `preserveAspectRatio="none"`) || !strings.Contains(im, `data:image/png;base64,`) {
			t.Errorf("image %.120s…: want a stretched PNG", im)
		}
	}
}
