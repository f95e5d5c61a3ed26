package analysis

import (
	"cmp"
	"math"
	"slices"
	"sort"

	"github.com/fabricbench/fabricbench/telemetry"
)

// Series is one counter or gauge series: sample times (ns since the Unix
// epoch, strictly increasing) and values.
type Series struct {
	T []int64
	V []int64
}

// Rate is the average rate of a cumulative byte counter over one sample
// interval (Start, End], both in ns since the Unix epoch.
type Rate struct {
	Start, End int64
	Bps        float64
}

// Rates turns a cumulative octet counter into bits per second per sample
// interval: 8·(v[i]−v[i−1]) / (t[i]−t[i−1]), reported at the interval end
// t[i]. An interval in which the counter decreases (a reset) is skipped.
func (s *Series) Rates() []Rate {
	if s == nil || len(s.T) < 2 {
		return nil
	}
	out := make([]Rate, 0, len(s.T)-1)
	for i := 1; i < len(s.T); i++ {
		dv := s.V[i] - s.V[i-1]
		dt := s.T[i] - s.T[i-1]
		if dv < 0 || dt <= 0 {
			continue
		}
		out = append(out, Rate{Start: s.T[i-1], End: s.T[i], Bps: 8 * float64(dv) / (float64(dt) / 1e9)})
	}
	return out
}

// Increase is the sum of the positive increments of a cumulative counter
// (decreases, i.e. resets, are skipped).
func (s *Series) Increase() int64 {
	if s == nil {
		return 0
	}
	var sum int64
	for i := 1; i < len(s.V); i++ {
		if d := s.V[i] - s.V[i-1]; d > 0 {
			sum += d
		}
	}
	return sum
}

// Index holds every series of a run, keyed by (target, measurement,
// interface, queue, field).
type Index struct {
	series map[telemetry.Key]*Series
	// step is the sample interval in ns (the median spacing of consecutive
	// samples over all series), 0 when no series has two samples.
	step int64
	// first and last are the earliest and latest sample times.
	first, last int64
}

// NewIndex sorts the samples into series. Samples of one series may come
// in any order; a repeated timestamp keeps the last value seen.
func NewIndex(samples []telemetry.Sample) *Index {
	x := &Index{series: map[telemetry.Key]*Series{}}
	type tv struct{ t, v int64 }
	raw := map[telemetry.Key][]tv{}
	for i := range samples {
		s := &samples[i]
		k := s.Key()
		raw[k] = append(raw[k], tv{s.Time, s.Value})
	}
	var gaps []int64
	for _, k := range sortedKeys(raw) {
		pts := raw[k]
		slices.SortStableFunc(pts, func(a, b tv) int { return cmp.Compare(a.t, b.t) })
		s := &Series{T: make([]int64, 0, len(pts)), V: make([]int64, 0, len(pts))}
		for _, p := range pts {
			if n := len(s.T); n > 0 && s.T[n-1] == p.t {
				s.V[n-1] = p.v
				continue
			}
			s.T = append(s.T, p.t)
			s.V = append(s.V, p.v)
		}
		for i := 1; i < len(s.T); i++ {
			gaps = append(gaps, s.T[i]-s.T[i-1])
		}
		if len(x.series) == 0 || s.T[0] < x.first {
			x.first = s.T[0]
		}
		if len(x.series) == 0 || s.T[len(s.T)-1] > x.last {
			x.last = s.T[len(s.T)-1]
		}
		x.series[k] = s
	}
	if len(gaps) > 0 {
		slices.Sort(gaps)
		x.step = gaps[len(gaps)/2]
	}
	return x
}

func sortedKeys[V any](m map[telemetry.Key]V) []telemetry.Key {
	keys := make([]telemetry.Key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		if a.Measurement != b.Measurement {
			return a.Measurement < b.Measurement
		}
		if a.Interface != b.Interface {
			return a.Interface < b.Interface
		}
		if a.Queue != b.Queue {
			return a.Queue < b.Queue
		}
		return a.Field < b.Field
	})
	return keys
}

// Keys returns every series key, sorted.
func (x *Index) Keys() []telemetry.Key { return sortedKeys(x.series) }

// Get returns a series, or nil.
func (x *Index) Get(k telemetry.Key) *Series { return x.series[k] }

// Interface returns an interface counter series of a device port, or nil.
func (x *Index) Interface(target, iface, field string) *Series {
	return x.series[telemetry.Key{Target: target, Measurement: telemetry.MeasInterface, Interface: iface, Field: field}]
}

// HasInterface reports whether any interface counter of the port was sampled.
func (x *Index) HasInterface(target, iface string) bool {
	for _, f := range telemetry.InterfaceFields {
		if s := x.Interface(target, iface, f); s != nil && len(s.T) > 0 {
			return true
		}
	}
	return false
}

// PortRates returns the bandwidth series (bps per sample interval) of a
// port's octet counter: field is telemetry.FieldOutOctets (transmit) or
// telemetry.FieldInOctets (receive).
func (x *Index) PortRates(target, iface, field string) []Rate {
	return x.Interface(target, iface, field).Rates()
}

// Step is the sample interval in ns (median spacing of consecutive
// samples), 0 when unknown.
func (x *Index) Step() int64 { return x.step }

// Span returns the earliest and latest sample times (ns), and false when
// there are no samples.
func (x *Index) Span() (first, last int64, ok bool) {
	return x.first, x.last, len(x.series) > 0
}

// grid maps sample intervals onto a common time axis so that the series of
// different ports can be compared interval by interval. Bucket k holds the
// interval that ends nearest to epoch + k·step; its nominal span is
// (epoch+(k−1)·step, epoch+k·step].
type grid struct {
	epoch, step int64
	k0, n       int // first bucket, number of buckets
	// run is run time 0 (ns since the Unix epoch), the reference of
	// endUs; epoch is run plus the phase of the sample ticks.
	run int64
}

// maxBuckets bounds the common time axis (10 s at 100 µs, 5.5 h at 10 ms).
const maxBuckets = 100_000

func newGrid(x *Index, epoch int64) grid {
	g := grid{epoch: epoch, step: x.step, run: epoch}
	if g.step <= 0 {
		return g
	}
	first, last, ok := x.Span()
	if !ok {
		return g
	}
	// Buckets are aligned with the sample ticks (a lab's exporters tick
	// from their own start, not from run time 0): the same intervals a
	// window analysis, whose grid starts at the first sample, sees.
	g.epoch = epoch + ((first-epoch)%g.step+g.step)%g.step
	if g.epoch-epoch > g.step/2 {
		g.epoch -= g.step
	}
	k0, k1 := g.bucket(first), g.bucket(last)
	if k1-k0+1 > maxBuckets {
		// A stray timestamp must not make the grid exhaust memory: keep
		// the most recent intervals.
		k0 = k1 - maxBuckets + 1
	}
	g.k0, g.n = k0, k1-k0+1
	return g
}

func (g grid) bucket(t int64) int {
	return int(math.Round(float64(t-g.epoch) / float64(g.step)))
}

// endNs and startNs are the nominal bounds of bucket index i (0-based).
func (g grid) endNs(i int) int64   { return g.epoch + int64(g.k0+i)*g.step }
func (g grid) startNs(i int) int64 { return g.endNs(i) - g.step }

// endUs is the nominal end of bucket i in µs since the epoch.
func (g grid) endUs(i int) float64 { return float64(g.endNs(i)-g.run) / 1e3 }

// place puts rates onto the grid: one value per bucket (NaN where the series
// has no interval); intervals that land in the same bucket are averaged,
// weighted by their length.
func (g grid) place(rates []Rate) []float64 {
	out := make([]float64, g.n)
	w := make([]float64, g.n)
	for _, r := range rates {
		i := g.bucket(r.End) - g.k0
		if i < 0 || i >= g.n {
			continue
		}
		dt := float64(r.End - r.Start)
		out[i] += r.Bps * dt
		w[i] += dt
	}
	for i := range out {
		if w[i] > 0 {
			out[i] /= w[i]
		} else {
			out[i] = math.NaN()
		}
	}
	return out
}
