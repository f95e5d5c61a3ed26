package report

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/fabricbench/fabricbench/results"
)

// A link that goes down is a step: the bandwidth panel draws each sample
// as held over the interval it averages, so the line has vertical
// segments (two consecutive points at one x) instead of ramps.
func TestBandwidthIsDrawnAsSteps(t *testing.T) {
	ts := []results.TimeSeries{{Name: "leaf0:Ethernet4", Panel: "p",
		TimesUs: []float64{100, 200, 300, 400, 500}, Gbps: []float64{100, 100, 0, 0, 100}}}
	fig := panelFigure("p", ts, nil)
	if fig.SVG == "" {
		t.Fatalf("no SVG: %+v", fig)
	}
	// The series' path is the one with the most points.
	var best []string
	for _, m := range regexp.MustCompile(`d="([^"]+)"`).FindAllStringSubmatch(string(fig.SVG), -1) {
		pts := regexp.MustCompile(`[ML]\s*(-?[0-9.]+)[ ,](-?[0-9.]+)`).FindAllString(m[1], -1)
		if len(pts) > len(best) {
			best = pts
		}
	}
	xy := regexp.MustCompile(`(-?[0-9.]+)[ ,](-?[0-9.]+)`)
	vertical := 0
	var px, py float64
	for i, p := range best {
		m := xy.FindStringSubmatch(p)
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		if i > 0 && x == px && y != py {
			vertical++
		}
		px, py = x, y
	}
	// Steps at 300 µs (down) and 500 µs (up), and the held samples.
	if vertical < 2 {
		t.Errorf("bandwidth line has %d vertical segments in %d points, want steps: %v", vertical, len(best), best)
	}
}
