package analysis

import (
	"math"
	"sort"
	"strings"

	"github.com/fabricbench/fabricbench/results"
)

// MaxPlotPoints caps the number of points of a plotted series: longer runs
// are averaged over consecutive sample intervals.
const MaxPlotPoints = 300

// span is the range of buckets [lo, hi) where any of the series has data.
func span(series ...[]float64) (lo, hi int) {
	lo, hi = -1, -1
	for _, v := range series {
		for i, x := range v {
			if math.IsNaN(x) {
				continue
			}
			if lo < 0 || i < lo {
				lo = i
			}
			if i+1 > hi {
				hi = i + 1
			}
		}
	}
	if lo < 0 {
		return 0, 0
	}
	return lo, hi
}

// plotAxis is a downsampled time axis over buckets [lo, hi): bin b covers
// buckets [lo+b·width, lo+(b+1)·width).
type plotAxis struct {
	lo, hi, width int
}

func (a *analyzer) axis(lo, hi int) plotAxis {
	width := 1
	if n := hi - lo; n > MaxPlotPoints {
		width = (n + MaxPlotPoints - 1) / MaxPlotPoints
	}
	return plotAxis{lo: lo, hi: hi, width: width}
}

// timesUs are the bins' end times in µs since the epoch.
func (a *analyzer) timesUs(ax plotAxis) []float64 {
	var out []float64
	for b := ax.lo; b < ax.hi; b += ax.width {
		last := min(b+ax.width, ax.hi) - 1
		out = append(out, round(a.g.endUs(last), 3))
	}
	return out
}

// gbps downsamples a bps series onto the axis: the mean of each bin's
// values with data, in Gb/s rounded to 3 decimals; NoData for empty bins.
func gbps(v []float64, ax plotAxis) []float64 {
	var out []float64
	for b := ax.lo; b < ax.hi; b += ax.width {
		sum, n := 0.0, 0
		for i := b; i < min(b+ax.width, ax.hi); i++ {
			if !math.IsNaN(v[i]) {
				sum += v[i]
				n++
			}
		}
		if n == 0 {
			out = append(out, NoData)
		} else {
			out = append(out, round(sum/float64(n)/1e9, 3))
		}
	}
	return out
}

func (a *analyzer) groupSeries(gr group, d groupData, anoms []results.Anomaly) results.GroupSeries {
	gs := results.GroupSeries{Group: gr.name, Kind: gr.kind, Gbps: [][]float64{}, TimesUs: []float64{}}
	ax := a.axis(span(d.vals...))
	gs.TimesUs = append(gs.TimesUs, a.timesUs(ax)...)
	for mi, m := range gr.members {
		gs.Members = append(gs.Members, m.label)
		gs.Gbps = append(gs.Gbps, append([]float64{}, gbps(d.vals[mi], ax)...))
	}
	for _, an := range anoms {
		gs.Anomalous = append(gs.Anomalous, an.Member)
	}
	return gs
}

// medianSeries is the per-bucket median over the members with data.
func medianSeries(d groupData) []float64 {
	if len(d.vals) == 0 {
		return nil
	}
	out := make([]float64, len(d.vals[0]))
	buf := make([]float64, 0, len(d.vals))
	for i := range out {
		buf = buf[:0]
		for _, v := range d.vals {
			if !math.IsNaN(v[i]) {
				buf = append(buf, v[i])
			}
		}
		out[i] = median(buf)
	}
	return out
}

// faultSeries returns, for every symmetry anomaly and every group member a
// fault description names, the member's bandwidth and its group's median,
// one panel per group.
func (a *analyzer) faultSeries(groups []group, data []groupData, anoms []results.Anomaly) []results.TimeSeries {
	type ref struct{ g, m int }
	byLabel := map[string][]ref{}
	byGroup := map[string]int{}
	for gi, gr := range groups {
		byGroup[gr.name] = gi
		for mi, m := range gr.members {
			byLabel[m.label] = append(byLabel[m.label], ref{gi, mi})
		}
	}
	var picks []ref
	seen := map[ref]bool{}
	pick := func(r ref) {
		if !seen[r] {
			seen[r] = true
			picks = append(picks, r)
		}
	}
	for _, an := range anoms {
		gi, ok := byGroup[an.Group]
		if !ok {
			continue
		}
		for _, r := range byLabel[an.Member] {
			if r.g == gi {
				pick(r)
			}
		}
	}
	for _, ft := range a.in.Faults {
		for _, label := range a.faultLabels(ft.Description) {
			for _, r := range byLabel[label] {
				pick(r)
			}
		}
	}
	var out []results.TimeSeries
	medianDone := map[int]bool{}
	for _, r := range picks {
		gr, d := groups[r.g], data[r.g]
		ax := a.axis(span(d.vals...))
		times := a.timesUs(ax)
		out = append(out, results.TimeSeries{Name: gr.members[r.m].label, Panel: gr.name, TimesUs: times, Gbps: gbps(d.vals[r.m], ax)})
		if !medianDone[r.g] {
			medianDone[r.g] = true
			out = append(out, results.TimeSeries{Name: "median of " + gr.name, Panel: gr.name, TimesUs: times, Gbps: gbps(medianSeries(d), ax)})
		}
	}
	// Group the lines of a panel together, panels in order of first
	// appearance.
	order := map[string]int{}
	for _, ts := range out {
		if _, ok := order[ts.Panel]; !ok {
			order[ts.Panel] = len(order)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return order[out[i].Panel] < order[out[j].Panel] })
	return out
}

// faultLabels extracts the group member labels a fault description names:
// "device:port", a node name, or a link "A-B" (optionally "A-B/N"), which
// names the ports of A towards B and of B towards A. Unknown words are
// ignored.
func (a *analyzer) faultLabels(desc string) []string {
	words := strings.FieldsFunc(desc, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(":_./-", r))
	})
	var out []string
	for _, w := range words {
		cands := []string{w}
		if _, rest, ok := strings.Cut(w, ":"); ok {
			cands = append(cands, rest) // "degrade:leaf0-spine1"
		}
		for _, c := range cands {
			c = strings.TrimRight(c, ".:/-")
			out = append(out, c)
			if x, y, ok := strings.Cut(c, "-"); ok {
				if i := strings.IndexByte(y, '/'); i >= 0 {
					y = y[:i]
				}
				out = append(out, a.linkPorts(x, y)...)
			}
		}
	}
	return out
}

// linkPorts names the ports of node x towards node y and of y towards x.
func (a *analyzer) linkPorts(x, y string) []string {
	nx, okx := a.f.NodeByName(x)
	ny, oky := a.f.NodeByName(y)
	if !okx || !oky {
		return nil
	}
	var out []string
	for _, pair := range [][2]int{{nx, ny}, {ny, nx}} {
		for _, p := range a.f.Nodes[pair[0]].Ports {
			if a.f.PeerNode(p) == pair[1] {
				if !a.f.Nodes[pair[0]].IsSwitch() {
					out = append(out, a.f.Nodes[pair[0]].Name) // a host NIC: its rail label
				}
				out = append(out, a.portName(p))
			}
		}
	}
	return out
}

// fctSeries is a job's sorted finished FCTs in µs.
func fctSeries(j *JobInput) results.FCTSeries {
	s := results.FCTSeries{Job: j.Name, FCTUs: []float64{}}
	for i := range j.Flows {
		if fl := &j.Flows[i]; fl.finished() {
			s.FCTUs = append(s.FCTUs, round(float64(fl.FCT)/1e6, 3))
		}
	}
	sort.Float64s(s.FCTUs)
	return s
}
