package report

import (
	"bytes"
	"encoding/xml"
	"strconv"
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
			Skipped   *struct{} `xml:"skipped"`
			SystemOut string    `xml:"system-out"`
		} `xml:"testcase"`
		SystemOut string `xml:"system-out"`
		SystemErr string `xml:"system-err"`
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
	// r1: 5 KPIs (no case for the run, which completed); one fail, one
	// error.
	s := p.Suites[0]
	if s.Name != "nightly-fabric.r1" || s.Tests != 5 || s.Failures != 1 || s.Errors != 1 || s.Time != "12.400" {
		t.Errorf("suite r1: name %q tests %d failures %d errors %d time %s; want nightly-fabric.r1 5 1 1 12.400",
			s.Name, s.Tests, s.Failures, s.Errors, s.Time)
	}
	byName := map[string]int{}
	for i, c := range s.Cases {
		byName[c.Name] = i
		if c.ClassName != "nightly-fabric.r1" {
			t.Errorf("case %q classname %q", c.Name, c.ClassName)
		}
	}
	if len(byName) != 5 {
		t.Errorf("cases %v, want the 5 KPIs", byName)
	}
	fail := s.Cases[byName["perm.busbw"]]
	if fail.Failure == nil || fail.Error != nil {
		t.Fatalf("perm.busbw: failure %v error %v, want a <failure>", fail.Failure, fail.Error)
	}
	// The culprit first, then the KPI.
	const head = "#1 leaf0:Ethernet4 (capacity, 2.1–6 ms): rate_util 50 % (group 97 %), backlog_util 93 % (group 4 %), " +
		"queue_bytes 402.3 KiB (group 2.83 KiB), bytes_share 0.52× (group 1×); victims: spine4:Ethernet1, host3, host12 (+2 more culprits) — "
	if !strings.HasPrefix(fail.Failure.Message, head) {
		t.Errorf("failure message %q does not start with the culprit %q", fail.Failure.Message, head)
	}
	for _, want := range []string{"perm.busbw = 46.3 Gb/s", ">= 80 Gb/s", "42% below"} {
		if !strings.Contains(fail.Failure.Message, want) {
			t.Errorf("failure message %q lacks %q", fail.Failure.Message, want)
		}
	}
	body := fail.Failure.Text
	i1, i2, i3, im := strings.Index(body, "  #1 leaf0:Ethernet4"), strings.Index(body, "  #2 host7 (slow-nic, 1.1–6 ms)"), strings.Index(body, "  #3 spine2:Ethernet3"), strings.Index(body, "metric:    busbw")
	if !strings.HasPrefix(body, "culprits, most likely first:\n  #1 leaf0:Ethernet4 (capacity, 2.1–6 ms), score 2.46") || i1 < 0 || i2 < i1 || i3 < i2 || im < i3 {
		t.Errorf("failure body does not list the culprits, then the KPI:\n%s", body)
	}
	for _, want := range []string{"      spine4:Ethernet1 in spine-downlinks:spine4: low bytes (−23%) with an empty queue\n", "    victims (12):\n", "explains F1\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("failure body lacks %q:\n%s", want, body)
		}
	}
	errc := s.Cases[byName["fabric.drops"]]
	if errc.Error == nil || errc.Failure != nil || !strings.Contains(errc.Error.Message, "leaf2:drops missing") {
		t.Errorf("fabric.drops: error %+v failure %+v, want an <error> with the KPI message", errc.Error, errc.Failure)
	}
	for _, name := range []string{"perm.fct_slowdown_p99", "a2a.completion"} {
		c := s.Cases[byName[name]]
		if c.Failure != nil || c.Error != nil || c.Skipped != nil {
			t.Errorf("%s should pass: %+v", name, c)
		}
	}
	for _, want := range []string{
		"3 anomalies, ranked:\n#1 leaf0:Ethernet4 (capacity, 2.1–6 ms), score 2.46, symmetry group leaf-uplinks:leaf0, explains F1\n",
		"\n#2 host7 (slow-nic, 1.1–6 ms), score 1.31, straggler group job:perm, explains F2\n",
		"    signals: loss 62 % (group 0 %), drops 1834 (group 0)\n",
		"F1 degrade leaf0:Ethernet4 to 50% at 2ms -> anomaly #1\n",
		"F3 flap leaf2:Ethernet1 every 400us x2 at 4ms -> no anomaly explains it\n",
		"anomaly #3 spine2:Ethernet3 matches no injected fault\n",
		"1 imbalance:\nleaf-uplinks:leaf2 (8 members): CV 0.21, max/min 1.9, Jain 0.957; most loaded leaf2:Ethernet1, least loaded leaf2:Ethernet6\n",
	} {
		if !strings.Contains(s.SystemOut, want) {
			t.Errorf("system-out lacks %q:\n%s", want, s.SystemOut)
		}
	}
	props := map[string]string{}
	for _, pr := range s.Properties {
		props[pr.Name] = pr.Value
	}
	if props["param.transport.lb"] != "ecmp" || props["backend"] != "sim" || props["seed"] != "42" {
		t.Errorf("properties %v", props)
	}
	// r2 passes.
	if s := p.Suites[1]; s.Tests != 2 || s.Failures != 0 || s.Errors != 0 || s.SystemOut != "" {
		t.Errorf("suite r2: tests %d failures %d errors %d out %q", s.Tests, s.Failures, s.Errors, s.SystemOut)
	}
	if p.Tests != 7 || p.Failures != 1 || p.Errors != 1 {
		t.Errorf("testsuites totals: tests %d failures %d errors %d, want 7 1 1", p.Tests, p.Failures, p.Errors)
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
	if !strings.Contains(s.SystemErr, "no route from host3 to host9\n(details)") {
		t.Errorf("r2 system-err %q lacks the run's error", s.SystemErr)
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
	if len(p.Suites) != 1 || len(p.Suites[0].Cases) != 1 || p.Suites[0].Cases[0].Failure == nil {
		t.Fatalf("want one suite with one failing case: %+v", p)
	}
	if p.Name != `a<b>&"c"` || !strings.Contains(p.Suites[0].Cases[0].Failure.Message, "x < y && \uFFFD ]]> done") {
		t.Errorf("text not preserved through XML: %q / %q", p.Name, p.Suites[0].Cases[1].Failure.Message)
	}
	if !strings.Contains(p.Suites[0].SystemOut, "<script>") {
		t.Errorf("system-out: %q", p.Suites[0].SystemOut)
	}
}

// A failing KPI names the culprits in its scope first: a2a's victims are
// #1's host12 and #3's host30, so #1, #3, then #2.
func TestJUnitCulpritsInScopeFirst(t *testing.T) {
	r, _ := fixture()
	run := &r.Runs[0]
	run.KPIs = []results.KPI{
		{Name: "a2a.completion", Scope: "a2a", Op: "<=", Threshold: 3000, Value: 3900, Unit: "us", Verdict: results.Fail},
		{Name: "leaf-uplinks.symmetry", Scope: "leaf-uplinks", Op: "==", Threshold: 0, Value: 1, Verdict: results.Fail},
	}
	r.Runs[1].KPIs[1].Verdict = results.Fail // r2 has no anomalies
	p := parseJUnit(t, r)
	order := func(body string) string {
		var got []string
		for _, line := range strings.Split(body, "\n") {
			if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[0], "#") && strings.HasPrefix(line, "  #") {
				got = append(got, f[0])
			}
		}
		return strings.Join(got, " ")
	}
	a2a, sym := p.Suites[0].Cases[0].Failure, p.Suites[0].Cases[1].Failure
	if a2a == nil || !strings.HasPrefix(a2a.Message, "#1 leaf0:Ethernet4 ") || order(a2a.Text) != "#1 #3 #2" {
		t.Errorf("a2a.completion: %+v", a2a)
	}
	if sym == nil || order(sym.Text) != "#1 #3 #2" {
		t.Errorf("leaf-uplinks.symmetry: %+v", sym)
	}
	if f := p.Suites[1].Cases[1].Failure; f == nil || !strings.HasPrefix(f.Message, "perm.busbw = 91.5 Gb/s") || strings.Contains(f.Text, "culprit") {
		t.Errorf("r2 perm.busbw without anomalies: %+v", f)
	}
}

// Every KPI case carries its value, threshold and unit: as properties of
// its run's suite (exact numbers) and in its <system-out> (for people).
func TestJUnitKPIValues(t *testing.T) {
	r, _ := fixture()
	p := parseJUnit(t, r)
	s := p.Suites[0]
	props := map[string]string{}
	for _, pr := range s.Properties {
		props[pr.Name] = pr.Value
	}
	for _, k := range r.Runs[0].KPIs {
		if props["kpi."+k.Name+".threshold"] == "" || props["kpi."+k.Name+".op"] != k.Op || props["kpi."+k.Name+".verdict"] != k.Verdict {
			t.Errorf("KPI %s: properties %v", k.Name, props)
		}
		if k.Unit != "" && props["kpi."+k.Name+".unit"] != k.Unit {
			t.Errorf("KPI %s: unit property %q, want %q", k.Name, props["kpi."+k.Name+".unit"], k.Unit)
		}
		_, hasValue := props["kpi."+k.Name+".value"]
		if measured := k.Verdict == results.Pass || k.Verdict == results.Fail; hasValue != measured {
			t.Errorf("KPI %s (%s): value property present %v", k.Name, k.Verdict, hasValue)
		}
	}
	var busbw *results.KPI
	for i := range r.Runs[0].KPIs {
		if r.Runs[0].KPIs[i].Name == "perm.busbw" {
			busbw = &r.Runs[0].KPIs[i]
		}
	}
	if busbw == nil {
		t.Fatal("fixture has no perm.busbw")
	}
	if got, want := props["kpi.perm.busbw.value"], strconv.FormatFloat(busbw.Value, 'g', -1, 64); got != want {
		t.Errorf("kpi.perm.busbw.value = %q, want the exact %q", got, want)
	}
	for _, c := range s.Cases {
		if c.Name != "perm.busbw" {
			continue
		}
		for _, want := range []string{"value:     46.3 Gb/s\n", "threshold: >= 80 Gb/s\n", "unit:      Gb/s\n"} {
			if !strings.Contains(c.SystemOut, want) {
				t.Errorf("perm.busbw system-out lacks %q:\n%s", want, c.SystemOut)
			}
		}
	}
	// A passing KPI shows its value too.
	for _, c := range p.Suites[1].Cases {
		if c.Failure == nil && c.Error == nil && !strings.Contains(c.SystemOut, "value:     ") {
			t.Errorf("passing case %s has no value in system-out: %q", c.Name, c.SystemOut)
		}
	}
}
