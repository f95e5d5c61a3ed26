package kpis

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Direction says which way a KPI's value gets better, from its bound: a
// KPI with a max ("<=", "<") is better lower (latency, slowdown, counts),
// one with a min (">=", ">") better higher (bandwidth, fractions).
type Direction int

// Directions.
const (
	Either         Direction = iota // "==": a move either way is worse
	LowerIsBetter                   // max
	HigherIsBetter                  // min
)

// DirectionOf is the direction of a KPI with comparison op (results.KPI.Op).
func DirectionOf(op string) Direction {
	switch op {
	case "<=", "<":
		return LowerIsBetter
	case ">=", ">":
		return HigherIsBetter
	}
	return Either
}

// Default regression tolerances (see Tolerance and docs/nightly.md): a KPI may get this much worse, relative to the base value,
// before it counts as a regression.
const (
	// DefaultRegressMin is for KPIs with a min (higher is better:
	// bandwidths, completed and coverage fractions): averages over many
	// flows or samples, which move little unless something changed.
	DefaultRegressMin = 0.05
	// DefaultRegressMax is for KPIs with a max (lower is better: FCT and
	// slowdown tails, completion times, counts): tails hinge on a few
	// flows and move more from run to run.
	DefaultRegressMax = 0.10
)

// Tolerance is how much worse a KPI may get between a base run and a new
// one before it counts as a regression: a fraction of the base value
// (suite "regress: 5%") or an amount in the metric's unit ("regress: 2").
// Against a base value of 0, a relative tolerance allows no worsening at
// all (any new anomaly, drop or timeout is a regression).
type Tolerance struct {
	Value    float64 // a fraction (0.05) when Relative, else in the metric's unit
	Relative bool
	Default  bool // not given in the suite: the default for the direction
}

// ParseTolerance reads a suite's regress value: "5%" (0 to 1000%) or a
// non-negative number in the metric's unit.
func ParseTolerance(s string) (Tolerance, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return Tolerance{}, fmt.Errorf("empty (want e.g. 5%% or an amount in the metric's unit)")
	}
	if num, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return Tolerance{}, fmt.Errorf("%q is not a percentage (want e.g. 5%%)", s)
		}
		if v < 0 || v > 1000 {
			return Tolerance{}, fmt.Errorf("%q is out of range (want 0%% to 1000%%)", s)
		}
		return Tolerance{Value: v / 100, Relative: true}, nil
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Tolerance{}, fmt.Errorf("%q is not a tolerance (want a percentage such as 5%% or a non-negative amount in the metric's unit)", s)
	}
	if v < 0 {
		return Tolerance{}, fmt.Errorf("%q is negative (want a percentage such as 5%% or a non-negative amount)", s)
	}
	return Tolerance{Value: v}, nil
}

// DefaultTolerance is the tolerance of a KPI whose suite gives none.
func DefaultTolerance(d Direction) Tolerance {
	if d == LowerIsBetter {
		return Tolerance{Value: DefaultRegressMax, Relative: true, Default: true}
	}
	return Tolerance{Value: DefaultRegressMin, Relative: true, Default: true}
}

// ToleranceFor is the tolerance of a KPI: regress as the suite gives it
// (results.KPI.Regress), else the default for its op. A regress value
// that does not parse (a hand-edited results file) falls back to the
// default.
func ToleranceFor(regress, op string) Tolerance {
	if regress != "" {
		if t, err := ParseTolerance(regress); err == nil {
			return t
		}
	}
	return DefaultTolerance(DirectionOf(op))
}

// String is the tolerance as a suite writes it: "5%", "2".
func (t Tolerance) String() string {
	if t.Relative {
		return strconv.FormatFloat(t.Value*100, 'g', 4, 64) + "%"
	}
	return strconv.FormatFloat(t.Value, 'g', 6, 64)
}

// Worse is how much worse v is than base in direction d, in the metric's
// unit (0 or negative: not worse).
func Worse(d Direction, base, v float64) float64 {
	switch d {
	case LowerIsBetter:
		return v - base
	case HigherIsBetter:
		return base - v
	}
	return math.Abs(v - base)
}

// Exceeded reports whether getting worse by w (Worse) from base is more
// than the tolerance allows.
func (t Tolerance) Exceeded(base, w float64) bool {
	if !(w > 0) {
		return false
	}
	if !t.Relative {
		return w > t.Value*(1+1e-12)
	}
	if base == 0 {
		return true
	}
	return w/math.Abs(base) > t.Value*(1+1e-12)
}
