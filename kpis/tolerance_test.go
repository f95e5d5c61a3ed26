package kpis

import "testing"

func TestTolerance(t *testing.T) {
	for _, c := range []struct {
		s    string
		want Tolerance
		bad  bool
	}{
		{s: "5%", want: Tolerance{Value: 0.05, Relative: true}},
		{s: " 12.5 % ", want: Tolerance{Value: 0.125, Relative: true}},
		{s: "0%", want: Tolerance{Relative: true}},
		{s: "2", want: Tolerance{Value: 2}},
		{s: "0.5", want: Tolerance{Value: 0.5}},
		{s: "", bad: true}, {s: "-1", bad: true}, {s: "5 percent", bad: true}, {s: "2000%", bad: true}, {s: "NaN", bad: true}, {s: "%", bad: true},
	} {
		got, err := ParseTolerance(c.s)
		if (err != nil) != c.bad || (!c.bad && got != c.want) {
			t.Errorf("ParseTolerance(%q) = %+v, %v", c.s, got, err)
		}
	}
	if d := DefaultTolerance(DirectionOf("<=")); d.Value != 0.10 || d.String() != "10%" {
		t.Errorf("max default %+v", d)
	}
	if d := ToleranceFor("", ">="); d.Value != 0.05 || !d.Default {
		t.Errorf("min default %+v", d)
	}
	tol := Tolerance{Value: 0.1, Relative: true}
	for _, c := range []struct {
		d         Direction
		base, v   float64
		regressed bool
	}{
		{LowerIsBetter, 100, 110, false}, // exactly the tolerance
		{LowerIsBetter, 100, 110.5, true},
		{LowerIsBetter, 100, 50, false},
		{HigherIsBetter, 100, 89, true},
		{HigherIsBetter, 100, 150, false},
		{LowerIsBetter, 0, 1, true}, // against 0 any worsening
		{LowerIsBetter, 0, 0, false},
		{Either, 10, 8.5, true},
	} {
		if got := tol.Exceeded(c.base, Worse(c.d, c.base, c.v)); got != c.regressed {
			t.Errorf("dir %d %v -> %v: regressed %v, want %v", c.d, c.base, c.v, got, c.regressed)
		}
	}
	if abs := (Tolerance{Value: 2}); abs.Exceeded(0, 2) || !abs.Exceeded(0, 2.5) {
		t.Errorf("absolute tolerance 2")
	}
}
