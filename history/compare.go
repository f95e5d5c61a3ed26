// Package history compares results directories: one run against another
// (fabricbench compare, a suite's baseline) and a KPI's values across
// nights (fabricbench trend). It reads only results.json (package
// results) and the KPI directions and tolerances of package kpis.
//
// KPIs are matched by matrix point (results.Run.ID) and KPI name. A point
// or KPI present on one side only is reported as new or removed. A KPI
// regressed when its value moved in its bad direction (kpis.DirectionOf
// its bound) by more than its tolerance (kpis.ToleranceFor its suite's
// regress value); it improved when it moved the good way by more than the
// tolerance.
package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/kpis"
	"github.com/fabricbench/fabricbench/results"
)

// Schema is the value of Comparison.Schema.
const Schema = "fabricbench.compare/v1"

// FileName is the comparison's file in the new results directory.
const FileName = "compare.json"

// Row statuses.
const (
	Regressed = "regressed" // worse by more than the tolerance
	Improved  = "improved"  // better by more than the tolerance
	Unchanged = "unchanged" // within the tolerance
	New       = "new"       // only in the new results
	Removed   = "removed"   // only in the base results
	// NotComparable: no value on one side (the KPI could not be
	// evaluated, or was skipped) and the other side not better.
	NotComparable = "not-comparable"
)

// Side describes one results directory of a comparison.
type Side struct {
	Dir     string    `json:"dir"`
	Suite   string    `json:"suite"`
	Started time.Time `json:"started"`
	Status  string    `json:"status"`
}

// Row is one KPI at one matrix point.
type Row struct {
	Point  string            `json:"point"` // results.Run.ID
	Params map[string]string `json:"params,omitempty"`
	KPI    string            `json:"kpi"`
	Metric string            `json:"metric"`
	Scope  string            `json:"scope"`
	Unit   string            `json:"unit,omitempty"`
	Op     string            `json:"op"`
	// Threshold is the new run's (the base's for a removed KPI).
	Threshold float64 `json:"threshold"`
	// Base and New are the values; nil when the side has none (absent,
	// or the KPI's verdict is error or skipped).
	Base        *float64 `json:"base"`
	New         *float64 `json:"new"`
	BaseVerdict string   `json:"base_verdict,omitempty"`
	NewVerdict  string   `json:"new_verdict,omitempty"`
	// Delta is New - Base; Rel is Delta / |Base| (nil when Base is 0 or
	// either value is missing).
	Delta *float64 `json:"delta,omitempty"`
	Rel   *float64 `json:"rel,omitempty"`
	// Tolerance as a suite writes it ("5%"), with "default" when the
	// suite gave none.
	Tolerance string `json:"tolerance"`
	Status    string `json:"status"`
	Note      string `json:"note,omitempty"`
}

// Summary counts rows by status.
type Summary struct {
	Rows          int `json:"rows"`
	Regressed     int `json:"regressed"`
	Improved      int `json:"improved"`
	Unchanged     int `json:"unchanged"`
	New           int `json:"new"`
	Removed       int `json:"removed"`
	NotComparable int `json:"not_comparable"`
}

// Comparison is compare.json: a new results directory against a base.
type Comparison struct {
	Schema  string  `json:"schema"`
	Base    Side    `json:"base"`
	New     Side    `json:"new"`
	Summary Summary `json:"summary"`
	// PointsAdded and PointsRemoved are matrix points on one side only.
	PointsAdded   []string `json:"points_added,omitempty"`
	PointsRemoved []string `json:"points_removed,omitempty"`
	Rows          []Row    `json:"rows"`
}

// HasRegression reports whether a KPI regressed.
func (c *Comparison) HasRegression() bool { return c != nil && c.Summary.Regressed > 0 }

// Regressions are the regressed rows.
func (c *Comparison) Regressions() []Row {
	var out []Row
	for _, r := range c.Rows {
		if r.Status == Regressed {
			out = append(out, r)
		}
	}
	return out
}

// Compare compares newRes (from directory newDir) with base (from
// baseDir): every KPI of every matrix point, in the new run's order, then
// what only the base has.
func Compare(baseDir string, base *results.Results, newDir string, newRes *results.Results) *Comparison {
	c := &Comparison{Schema: Schema, Base: side(baseDir, base), New: side(newDir, newRes)}
	baseRuns := map[string]*results.Run{}
	for i := range base.Runs {
		baseRuns[base.Runs[i].ID] = &base.Runs[i]
	}
	seen := map[string]bool{}
	for i := range newRes.Runs {
		nr := &newRes.Runs[i]
		seen[nr.ID] = true
		br, ok := baseRuns[nr.ID]
		if !ok {
			c.PointsAdded = append(c.PointsAdded, nr.ID)
			for _, k := range keyed(nr.KPIs) {
				c.Rows = append(c.Rows, oneSide(nr, k, false))
			}
			continue
		}
		bk := map[string]results.KPI{}
		var border []string
		for _, k := range keyed(br.KPIs) {
			bk[k.Name] = k
			border = append(border, k.Name)
		}
		used := map[string]bool{}
		for _, k := range keyed(nr.KPIs) {
			b, ok := bk[k.Name]
			if !ok {
				c.Rows = append(c.Rows, oneSide(nr, k, false))
				continue
			}
			used[k.Name] = true
			c.Rows = append(c.Rows, Pair(nr, &b, &k))
		}
		for _, name := range border {
			if !used[name] {
				c.Rows = append(c.Rows, oneSide(br, bk[name], true))
			}
		}
	}
	for i := range base.Runs {
		br := &base.Runs[i]
		if seen[br.ID] {
			continue
		}
		c.PointsRemoved = append(c.PointsRemoved, br.ID)
		for _, k := range keyed(br.KPIs) {
			c.Rows = append(c.Rows, oneSide(br, k, true))
		}
	}
	for _, r := range c.Rows {
		c.Summary.Rows++
		switch r.Status {
		case Regressed:
			c.Summary.Regressed++
		case Improved:
			c.Summary.Improved++
		case Unchanged:
			c.Summary.Unchanged++
		case New:
			c.Summary.New++
		case Removed:
			c.Summary.Removed++
		default:
			c.Summary.NotComparable++
		}
	}
	return c
}

func side(dir string, r *results.Results) Side {
	return Side{Dir: dir, Suite: r.Suite, Started: r.Started, Status: r.Status}
}

// keyed returns kpis with unique names: a second KPI of the same name
// (possible in a hand-written results file) becomes "name#2".
func keyed(ks []results.KPI) []results.KPI {
	out := make([]results.KPI, len(ks))
	n := map[string]int{}
	for i, k := range ks {
		n[k.Name]++
		if n[k.Name] > 1 {
			k.Name = fmt.Sprintf("%s#%d", k.Name, n[k.Name])
		}
		out[i] = k
	}
	return out
}

// value is a KPI's value when it has one (verdict pass or fail, finite).
func value(k *results.KPI) *float64 {
	if k == nil || (k.Verdict != results.Pass && k.Verdict != results.Fail) || math.IsNaN(k.Value) || math.IsInf(k.Value, 0) {
		return nil
	}
	v := k.Value
	return &v
}

func rowOf(run *results.Run, k *results.KPI) Row {
	return Row{Point: run.ID, Params: run.Params, KPI: k.Name, Metric: k.Metric, Scope: k.Scope, Unit: k.Unit, Op: k.Op, Threshold: k.Threshold}
}

func toleranceText(t kpis.Tolerance) string {
	if t.Default {
		return t.String() + " (default)"
	}
	return t.String()
}

func oneSide(run *results.Run, k results.KPI, base bool) Row {
	r := rowOf(run, &k)
	r.Tolerance = toleranceText(kpis.ToleranceFor(k.Regress, k.Op))
	if base {
		r.Base, r.BaseVerdict, r.Status = value(&k), k.Verdict, Removed
		r.Note = "only in the base results"
	} else {
		r.New, r.NewVerdict, r.Status = value(&k), k.Verdict, New
		r.Note = "not in the base results"
	}
	return r
}

// Pair compares one KPI of a matrix point (run is the new side's):
// regressed, improved or unchanged against the new KPI's tolerance, or
// not comparable. A KPI that had a value and now has none (its job no
// longer finishes, its metric errs) regressed.
func Pair(run *results.Run, b, n *results.KPI) Row {
	r := rowOf(run, n)
	tol := kpis.ToleranceFor(n.Regress, n.Op)
	r.Tolerance = toleranceText(tol)
	r.Base, r.New = value(b), value(n)
	r.BaseVerdict, r.NewVerdict = b.Verdict, n.Verdict
	switch {
	case r.Base != nil && r.New == nil && n.Verdict == results.Skipped:
		r.Status = NotComparable
		r.Note = "not evaluated in the new results (skipped)"
		return r
	case r.Base != nil && r.New == nil:
		r.Status = Regressed
		r.Note = "no value in the new results (" + n.Verdict + why(n) + ")"
		return r
	case r.Base == nil && r.New != nil:
		r.Status = NotComparable
		r.Note = "no value in the base results (" + b.Verdict + why(b) + ")"
		return r
	case r.Base == nil:
		r.Status = NotComparable
		r.Note = "no value on either side (" + b.Verdict + " / " + n.Verdict + ")"
		return r
	}
	bv, nv := *r.Base, *r.New
	d := nv - bv
	r.Delta = &d
	if bv != 0 {
		rel := d / math.Abs(bv)
		r.Rel = &rel
	}
	dir := kpis.DirectionOf(n.Op)
	switch w := kpis.Worse(dir, bv, nv); {
	case tol.Exceeded(bv, w):
		r.Status = Regressed
	case dir != kpis.Either && tol.Exceeded(bv, -w):
		r.Status = Improved
	default:
		r.Status = Unchanged
	}
	if b.Verdict == results.Pass && n.Verdict == results.Fail {
		r.Note = "passed before, fails now"
	} else if b.Verdict == results.Fail && n.Verdict == results.Pass {
		r.Note = "failed before, passes now"
	}
	if b.Op != n.Op || b.Threshold != n.Threshold {
		r.Note = strings.TrimPrefix(r.Note+"; ", "; ") + fmt.Sprintf("threshold changed from %s %g", b.Op, b.Threshold)
	}
	return r
}

func why(k *results.KPI) string {
	if k.Message == "" {
		return ""
	}
	return ": " + k.Message
}

// Save writes c to dir/compare.json atomically.
func Save(dir string, c *Comparison) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("history: encode %s: %w", filepath.Join(dir, FileName), err)
	}
	return results.WriteFileAtomic(filepath.Join(dir, FileName), append(data, '\n'))
}

// Load reads dir/compare.json; (nil, nil) when there is none.
func Load(dir string) (*Comparison, error) {
	path := filepath.Join(dir, FileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c Comparison
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q is not supported: this fabricbench reads %q", path, c.Schema, Schema)
	}
	return &c, nil
}
