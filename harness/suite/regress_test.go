package suite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/kpis"
)

// kpis[].regress and baseline (issue 15): valid values load, bad ones are
// refused at the field's file:line:col.
func TestRegressAndBaseline(t *testing.T) {
	base := "fabric: {spec: 'leafspine:leaves=2,spines=2,hosts_per_leaf=4'}\njobs:\n  - {name: a2a, workload: all-to-all, size: 64KiB}\n"
	s, err := Parse("/suites/t.yaml", []byte(base+"baseline: latest-in ../nights\nkpis:\n  - {metric: busbw_gbps, scope: a2a, min: 60, regress: 5%}\n  - {metric: drops, max: 100, regress: 20}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r0, r1 := s.KPIs[0].Regress, s.KPIs[1].Regress; r0.String() != "5%" || r1.String() != "20" ||
		r0.Tolerance() != (kpis.Tolerance{Value: 0.05, Relative: true}) || r1.Tolerance() != (kpis.Tolerance{Value: 20}) {
		t.Errorf("regress %q %+v, %q %+v", r0, r0.Tolerance(), r1, r1.Tolerance())
	}
	if want := LatestInPrefix + filepath.Clean("/nights"); s.Baseline != want {
		t.Errorf("baseline %q, want %q (relative to the suite file)", s.Baseline, want)
	}
	s, err = Parse("/suites/t.yaml", []byte(base+"baseline: good/run1\n"))
	if err != nil || s.Baseline != "/suites/good/run1" {
		t.Errorf("baseline %q, %v", s.Baseline, err)
	}
	for _, c := range []struct{ doc, want string }{
		{"kpis:\n  - {metric: drops, max: 1, regress: -5%}\n", `t.yaml:5:38: kpis[0].regress: "-5%" is out of range (want 0% to 1000%)`},
		{"kpis:\n  - {metric: drops, max: 1, regress: lots}\n", `t.yaml:5:38: kpis[0].regress: "lots" is not a tolerance`},
		{"kpis:\n  - {metric: drops, max: 1, regress: -2}\n", `t.yaml:5:38: kpis[0].regress: "-2" is negative`},
		{"kpis:\n  - {metric: drops, max: 1, regress: ''}\n", `t.yaml:5:38: kpis[0].regress: empty`},
		{"baseline: latest-in\n", `t.yaml:4:11: baseline: latest-in needs a directory`},
		{"baseline: ''\n", `t.yaml:4:11: baseline: empty`},
	} {
		_, err := Parse("t.yaml", []byte(base+c.doc))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error\n%v\nwant\n%s", c.doc, err, c.want)
		}
	}
}
