package history

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/fabricbench/fabricbench/results"
)

// Night is one results directory of a trend.
type Night struct {
	Dir     string
	Results *results.Results
}

// LoadDirs loads results directories. A directory without results.json
// whose immediate subdirectories hold results stands for them (a folder
// of nightly results). The nights are ordered by start time (then
// directory name). The error names the first directory that is neither.
func LoadDirs(dirs []string) ([]Night, error) {
	var out []Night
	for _, d := range dirs {
		r, err := results.Load(d)
		if err == nil {
			out = append(out, Night{Dir: d, Results: r})
			continue
		}
		sub, serr := subResults(d)
		if serr != nil || len(sub) == 0 {
			return nil, err
		}
		out = append(out, sub...)
	}
	sortNights(out)
	return out, nil
}

func sortNights(ns []Night) {
	sort.SliceStable(ns, func(i, j int) bool {
		a, b := ns[i].Results.Started, ns[j].Results.Started
		if !a.Equal(b) {
			return a.Before(b)
		}
		return ns[i].Dir < ns[j].Dir
	})
}

// subResults loads the immediate subdirectories of dir that hold a
// results.json; those that hold none are ignored, one that cannot be read
// is an error.
func subResults(dir string) ([]Night, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Night
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(sub, results.FileName)); err != nil {
			continue
		}
		r, err := results.Load(sub)
		if err != nil {
			return nil, err
		}
		out = append(out, Night{Dir: sub, Results: r})
	}
	return out, nil
}

// LatestIn picks a suite's baseline among the results directories under
// dir (its immediate subdirectories): the newest, by start time, of suite
// whose runs all finished (status pass or fail: no run in error,
// interrupted or skipped) and which did not itself regress against its own
// baseline (its compare.json), leaving out exclude (the run's own
// directory). The error says why none was picked.
func LatestIn(dir, suite, exclude string) (string, error) {
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("baseline: latest-in %s: %w", dir, err)
	}
	nights, err := subResults(dir)
	if err != nil {
		return "", fmt.Errorf("baseline: latest-in %s: %w", dir, err)
	}
	sortNights(nights)
	excl, _ := filepath.Abs(exclude)
	skipped := 0
	for i := len(nights) - 1; i >= 0; i-- {
		n := nights[i]
		if abs, _ := filepath.Abs(n.Dir); exclude != "" && abs == excl {
			continue
		}
		if n.Results.Suite != suite || !finished(n.Results) {
			skipped++
			continue
		}
		if c, err := Load(n.Dir); err != nil || c.HasRegression() {
			skipped++
			continue
		}
		return n.Dir, nil
	}
	return "", fmt.Errorf("baseline: latest-in %s: no results of suite %q whose runs all finished without a regression (%d other results directories there)", dir, suite, skipped)
}

func finished(r *results.Results) bool {
	if r.Status != results.Pass && r.Status != results.Fail {
		return false
	}
	for _, run := range r.Runs {
		if run.Status != results.Pass && run.Status != results.Fail {
			return false
		}
	}
	return len(r.Runs) > 0
}

// Value is one KPI of one night at one matrix point.
type Value struct {
	Present bool        // the night has this point and KPI
	KPI     results.KPI // as evaluated that night
	// Row is the comparison with the previous night that has the KPI
	// (Status Regressed, Improved, ...); empty for the first.
	Row Row
}

// Number is the value when the KPI was evaluated (verdict pass or fail).
func (v Value) Number() (float64, bool) {
	if !v.Present {
		return 0, false
	}
	p := value(&v.KPI)
	if p == nil {
		return 0, false
	}
	return *p, true
}

// Line is one matrix point's values of a KPI across the nights.
type Line struct {
	Point  string
	Values []Value // one per night
}

// KPITrend is one KPI across nights, one line per matrix point.
type KPITrend struct {
	Name, Metric, Scope, Unit, Op string
	// Threshold is the latest night's.
	Threshold float64
	Lines     []Line
}

// Trend is KPIs across nights.
type Trend struct {
	Nights []Night
	KPIs   []KPITrend
}

// BuildTrend lines up the KPIs of nights (ordered, as LoadDirs gives
// them): KPIs in order of first appearance, then points. Each value is
// compared with the same point's previous value (Pair).
func BuildTrend(nights []Night) *Trend {
	t := &Trend{Nights: nights}
	idx := map[string]int{}
	type lineKey struct{ kpi, point string }
	lines := map[lineKey]int{}
	for ni, n := range nights {
		for ri := range n.Results.Runs {
			run := &n.Results.Runs[ri]
			for _, k := range keyed(run.KPIs) {
				ki, ok := idx[k.Name]
				if !ok {
					ki = len(t.KPIs)
					idx[k.Name] = ki
					t.KPIs = append(t.KPIs, KPITrend{Name: k.Name, Metric: k.Metric, Scope: k.Scope})
				}
				kt := &t.KPIs[ki]
				kt.Unit, kt.Op, kt.Threshold = k.Unit, k.Op, k.Threshold
				lk := lineKey{k.Name, run.ID}
				li, ok := lines[lk]
				if !ok {
					li = len(kt.Lines)
					lines[lk] = li
					kt.Lines = append(kt.Lines, Line{Point: run.ID, Values: make([]Value, len(nights))})
				}
				v := Value{Present: true, KPI: k}
				ln := &kt.Lines[li]
				for pj := ni - 1; pj >= 0; pj-- {
					if prev := ln.Values[pj]; prev.Present {
						v.Row = Pair(run, &prev.KPI, &k)
						break
					}
				}
				ln.Values[ni] = v
			}
		}
	}
	return t
}

// Latest is the newest night, or nil.
func (t *Trend) Latest() *Night {
	if len(t.Nights) == 0 {
		return nil
	}
	return &t.Nights[len(t.Nights)-1]
}

// Regressions are the regressed values: night index, KPI and row.
func (t *Trend) Regressions() []TrendRegression {
	var out []TrendRegression
	for _, k := range t.KPIs {
		for _, ln := range k.Lines {
			for ni, v := range ln.Values {
				if v.Row.Status == Regressed {
					out = append(out, TrendRegression{Night: ni, Row: v.Row})
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Night < out[j].Night })
	return out
}

// TrendRegression is a regression from one night to the next.
type TrendRegression struct {
	Night int // index into Trend.Nights
	Row   Row
}
