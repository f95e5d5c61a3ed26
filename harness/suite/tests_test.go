package suite

import (
	"strings"
	"testing"
)

const testsDoc = `name: cat
fabric: {spec: "leafspine:leaves=2,spines=2,hosts_per_leaf=4"}
kpis:
  - {metric: telemetry_coverage, min: 1}
tests:
  - name: perm
    section: "1.1 Baseline Throughput"
    jobs:
      - {name: p, workload: permutation, size: 1MiB}
    kpis:
      - {metric: busbw_gbps, scope: p, min: 1}
    matrix:
      transport.lb: [ecmp, reps]
    primary: {metric: busbw_gbps, scope: p}
    reference: {transport.lb: ecmp}
  - name: inc
    set: {features.pfc: {enabled: true}, "jobs[name=i].senders": 3}
    jobs:
      - {name: i, workload: incast, size: 64KiB}
    faults:
      - {kind: down, link: leaf0-spine0, at: 10us}
`

func TestTestsCompose(t *testing.T) {
	s := mustParse(t, "cat.yaml", testsDoc)
	if len(s.Tests) != 2 || s.Tests[0].Primary.Scope != "p" || s.Tests[1].Name != "inc" {
		t.Fatalf("tests %+v", s.Tests)
	}
	pts, err := s.Points()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range pts {
		ids = append(ids, p.ID)
	}
	if got := strings.Join(ids, " "); got != "perm,lb=ecmp perm,lb=reps inc" {
		t.Fatalf("ids %s", got)
	}
	p := pts[1].Suite
	if pts[1].Test == nil || pts[1].Test.Name != "perm" || p.Test != pts[1].Test || pts[1].Params["tests"] != "perm" || pts[1].Params["transport.lb"] != "reps" {
		t.Errorf("point 1: test %v params %v", pts[1].Test, pts[1].Params)
	}
	if len(p.Jobs) != 1 || p.Jobs[0].Name != "p" || len(p.KPIs) != 2 || p.KPIs[1].Scope != "p" || p.Transport.LB != "reps" || p.Tests != nil {
		t.Errorf("perm point suite: jobs %+v kpis %+v lb %s", p.Jobs, p.KPIs, p.Transport.LB)
	}
	q := pts[2].Suite
	if q.Features.PFC == nil || !q.Features.PFC.Enabled || q.Jobs[0].Senders != 3 || len(q.Faults) != 1 || len(q.KPIs) != 1 {
		t.Errorf("inc point suite: pfc %+v jobs %+v faults %+v", q.Features.PFC, q.Jobs, q.Faults)
	}
}

func TestTestsErrors(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"job in a test", strings.Replace(testsDoc, "size: 64KiB", "size: 64Kib", 1),
			`cat.yaml:19:43: tests[1].jobs[0].size: "64Kib" is not a size`},
		{"set value", strings.Replace(testsDoc, `senders": 3`, `senders": 30`, 1),
			`tests[1].set["jobs[name=i].senders"]: 30 senders, but only 7 other participants`},
		{"test matrix value", strings.Replace(testsDoc, "[ecmp, reps]", "[ecmp, nope]", 1),
			`tests[0].matrix["transport.lb"][1]: unknown load balancer`},
		{"duplicate names", strings.Replace(testsDoc, "name: inc", "name: perm", 1),
			`tests[1].name: "perm" is already used by tests[0]`},
		{"reference", strings.Replace(testsDoc, "{transport.lb: ecmp}", "{transport.lb: ops}", 1),
			`tests[0].reference["transport.lb"]: ops is not one of the matrix values`},
		{"search key", strings.Replace(testsDoc, "    reference:", "    search: {key: transport.mtu}\n    reference:", 1),
			`tests[0].search.key: "transport.mtu" is not a key of the test's matrix`},
		{"both matrices", testsDoc + "matrix: {transport.lb: [ecmp]}\n",
			`tests[0].matrix["transport.lb"]: the suite's matrix sweeps "transport.lb" too`},
	}
	for _, c := range cases {
		_, err := Parse("cat.yaml", []byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant %s", c.name, err, c.want)
		}
	}
}

func TestTestsNotApplicable(t *testing.T) {
	s := mustParse(t, "cat.yaml", testsDoc)
	noPFC := func(s *Suite, errf func(path, format string, args ...any)) {
		if s.Features.PFC != nil && s.Features.PFC.Enabled {
			errf("features.pfc.enabled", "no PFC here")
		}
	}
	pts, err := s.PointsApplicable(nil, noPFC)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts[0].NotApplicable)+len(pts[1].NotApplicable) != 0 || len(pts[2].NotApplicable) != 1 ||
		!strings.Contains(pts[2].NotApplicable[0], `tests[1].set["features.pfc"].enabled: no PFC here`) {
		t.Errorf("not applicable: %q %q %q", pts[0].NotApplicable, pts[1].NotApplicable, pts[2].NotApplicable)
	}
	// Without tests the same check is an error.
	plain := mustParse(t, "plain.yaml", base+"features: {pfc: {enabled: true}}\n")
	if _, err := plain.PointsApplicable(nil, noPFC); err == nil || !strings.Contains(err.Error(), "no PFC here") {
		t.Errorf("suite without tests: %v", err)
	}
}
