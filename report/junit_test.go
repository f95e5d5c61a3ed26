package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/results"
)

// The JUnit shape as a CI dashboard reads it.
type parsedSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name       string `xml:"name,attr"`
		Tests      int    `xml:"tests,attr"`
		Failures   int    `xml:"failures,attr"`
		Errors     int    `xml:"errors,attr"`
		Skipped    int    `xml:"skipped,attr"`
		Time       string `xml:"time,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			ClassName string `xml:"classname,attr"`
			Name      string `xml:"name,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"error"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testcase"`
		SystemOut string `xml:"system-out"`
	} `xml:"testsuite"`
}

func parseJUnit(t *testing.T, r *results.Results) parsedSuites {
	t.Helper()
	var buf bytes.Buffer
	if err := JUnit(&buf, r); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "<?xml") {
		t.Errorf("JUnit output has no XML declaration:\n%.100s", buf.String())
	}
	var p parsedSuites
	if err := xml.Unmarshal(buf.Bytes(), &p); err != nil {
		t.Fatalf("JUnit output does not parse: %v\n%s", err, buf.String())
	}
	return p
}

func TestJUnitCountsAndVerdicts(t *testing.T) {
	r, _ := fixture()
	p := parseJUnit(t, r)
	if p.Name != "nightly-fabric" || len(p.Suites) != 2 {
		t.Fatalf("testsuites %q with %d suites, want nightly-fabric with 2", p.Name, len(p.Suites))
	}
	// r1: "run" + 5 KPIs; one fail, one error.
	s := p.Suites[0]
	if s.Name != "nightly-fabric.r1" || s.Tests != 6 || s.Failures != 1 || s.Errors != 1 || s.Time != "12.400" {
		t.Errorf("suite r1: name %q tests %d failures %d errors %d time %s; want nightly-fabric.r1 6 1 1 12.400",
			s.Name, s.Tests, s.Failures, s.Errors, s.Time)
	}
	byName := map[string]int{}
	for i, c := range s.Cases {
		byName[c.Name] = i
		if c.ClassName != "nightly-fabric.r1" {
			t.Errorf("case %q classname %q", c.Name, c.ClassName)
		}
	}
	if len(byName) != 6 {
		t.Errorf("cases %v, want run + 5 KPIs", byName)
	}
	fail := s.Cases[byName["perm.busbw"]]
	if fail.Failure == nil || fail.Error != nil {
		t.Fatalf("perm.busbw: failure %v error %v, want a <failure>", fail.Failure, fail.Error)
	}
	for _, want := range []string{"perm.busbw = 46.3 Gb/s", ">= 80 Gb/s", "42% below"} {
		if !strings.Contains(fail.Failure.Message, want) {
			t.Errorf("failure message %q lacks %q", fail.Failure.Message, want)
		}
	}
	if !strings.Contains(fail.Failure.Text, "metric:    busbw") {
		t.Errorf("failure body %q lacks the metric", fail.Failure.Text)
	}
	errc := s.Cases[byName["fabric.drops"]]
	if errc.Error == nil || errc.Failure != nil || !strings.Contains(errc.Error.Message, "leaf2:drops missing") {
		t.Errorf("fabric.drops: error %+v failure %+v, want an <error> with the KPI message", errc.Error, errc.Failure)
	}
	for _, name := range []string{"run", "perm.fct_slowdown_p99", "a2a.completion"} {
		c := s.Cases[byName[name]]
		if c.Failure != nil || c.Error != nil || c.Skipped != nil {
			t.Errorf("%s should pass: %+v", name, c)
		}
	}
	if !strings.Contains(s.SystemOut, "symmetry leaf-uplinks:leaf0 member leaf0:Ethernet4 (score -6.8)") ||
		!strings.Contains(s.SystemOut, "straggler job:perm member host7") {
		t.Errorf("system-out lacks the anomalies:\n%s", s.SystemOut)
	}
	props := map[string]string{}
	for _, pr := range s.Properties {
		props[pr.Name] = pr.Value
	}
	if props["param.transport.lb"] != "ecmp" || props["backend"] != "sim" || props["seed"] != "42" {
		t.Errorf("properties %v", props)
	}
	// r2 passes.
	if s := p.Suites[1]; s.Tests != 3 || s.Failures != 0 || s.Errors != 0 || s.SystemOut != "" {
		t.Errorf("suite r2: tests %d failures %d errors %d out %q", s.Tests, s.Failures, s.Errors, s.SystemOut)
	}
	if p.Tests != 9 || p.Failures != 1 || p.Errors != 1 {
		t.Errorf("testsuites totals: tests %d failures %d errors %d, want 9 1 1", p.Tests, p.Failures, p.Errors)
	}
}

func TestJUnitRunErrorsAndSkips(t *testing.T) {
	r, _ := fixture()
	r.Runs[1].Status = results.Error
	r.Runs[1].Error = "sim: topology has no route from host3 to host9\n(details)"
	r.Runs[1].KPIs = append(r.Runs[1].KPIs, results.KPI{Name: "x.skipped", Verdict: results.Skipped},
		results.KPI{Name: "x.odd", Verdict: "maybe"})
	r.Runs = append(r.Runs, results.Run{ID: "r3", Status: results.Skipped}, results.Run{ID: "r4", Status: results.Interrupted})
	p := parseJUnit(t, r)
	if len(p.Suites) != 4 {
		t.Fatalf("%d suites, want 4", len(p.Suites))
	}
	s := p.Suites[1]
	run := s.Cases[0]
	if run.Name != "run" || run.Error == nil || run.Error.Message != "sim: topology has no route from host3 to host9" ||
		!strings.Contains(run.Error.Text, "(details)") || run.Error.Type != "error" {
		t.Errorf("r2 run case: %+v", run.Error)
	}
	if s.Errors != 2 || s.Skipped != 1 || s.Tests != 5 {
		t.Errorf("r2: tests %d errors %d skipped %d, want 5 2 1 (run error, unknown verdict, skipped KPI)", s.Tests, s.Errors, s.Skipped)
	}
	if c := p.Suites[2].Cases[0]; c.Skipped == nil {
		t.Errorf("skipped run r3 has no <skipped>: %+v", c)
	}
	if c := p.Suites[3].Cases[0]; c.Error == nil || c.Error.Message != "run interrupted" {
		t.Errorf("interrupted run r4: %+v", c.Error)
	}
}

func TestJUnitEscapesText(t *testing.T) {
	r := &results.Results{Schema: results.Schema, Suite: `a<b>&"c"`, Runs: []results.Run{{
		ID: "r1", Status: results.Fail,
		KPIs:      []results.KPI{{Name: "k", Verdict: results.Fail, Message: "x < y && \x01 ]]> done"}},
		Anomalies: []results.Anomaly{{Kind: "symmetry", Evidence: "<script>"}},
	}}}
	p := parseJUnit(t, r)
	if p.Name != `a<b>&"c"` || !strings.Contains(p.Suites[0].Cases[1].Failure.Message, "x < y && \uFFFD ]]> done") {
		t.Errorf("text not preserved through XML: %q / %q", p.Name, p.Suites[0].Cases[1].Failure.Message)
	}
	if !strings.Contains(p.Suites[0].SystemOut, "<script>") {
		t.Errorf("system-out: %q", p.Suites[0].SystemOut)
	}
}
