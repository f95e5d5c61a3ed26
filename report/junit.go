package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/results"
)

// JUnit XML, in the subset that CI dashboards (Jenkins, GitLab, GitHub
// test reporters) read.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	ClassName string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// JUnit writes r as JUnit XML: a <testsuites> with one <testsuite> per
// run (named suite.runID), one <testcase> per KPI (a <failure> for a fail
// verdict, an <error> for an error verdict), and a testcase "run" per run
// that errors when the run itself could not complete. Anomalies are listed
// in the run's <system-out>.
func JUnit(w io.Writer, r *results.Results) error {
	if r == nil {
		return fmt.Errorf("report: JUnit: nil results")
	}
	suiteName := r.Suite
	if suiteName == "" {
		suiteName = "fabricbench"
	}
	out := junitSuites{Name: suiteName}
	total := 0.0
	for i := range r.Runs {
		run := &r.Runs[i]
		s := junitRun(suiteName, r, run)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
		out.Skipped += s.Skipped
		total += run.WallS
		out.Suites = append(out.Suites, s)
	}
	if d := r.Finished.Sub(r.Started).Seconds(); !r.Started.IsZero() && !r.Finished.IsZero() && d > 0 {
		total = d
	}
	out.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("report: JUnit: %w", err)
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func junitRun(suiteName string, r *results.Results, run *results.Run) junitSuite {
	class := suiteName + "." + run.ID
	s := junitSuite{Name: class, Time: seconds(run.WallS)}
	if !r.Started.IsZero() {
		s.Timestamp = r.Started.UTC().Format(time.RFC3339)
	}
	add := func(name, value string) {
		if value != "" {
			s.Properties = append(s.Properties, junitProperty{Name: name, Value: value})
		}
	}
	add("backend", r.Backend)
	add("fabric", run.Fabric)
	add("seed", fmt.Sprint(run.Seed))
	add("status", run.Status)
	for _, k := range sortedKeys(run.Params) {
		add("param."+k, run.Params[k])
	}
	for _, k := range sortedKeys(run.Config) {
		add("config."+k, run.Config[k])
	}

	// The run itself.
	rc := junitCase{ClassName: class, Name: "run", Time: seconds(run.WallS)}
	switch run.Status {
	case results.Error, results.Interrupted:
		msg := run.Error
		if msg == "" {
			msg = "run " + run.Status
		}
		rc.Error = &junitProblem{Message: firstLine(msg), Type: run.Status, Text: msg}
	case results.Skipped:
		rc.Skipped = &junitSkipped{Message: "run skipped: the suite was stopped before it started"}
	}
	s.Cases = append(s.Cases, rc)

	for _, k := range run.KPIs {
		c := junitCase{ClassName: class, Name: k.Name, Time: "0"}
		switch k.Verdict {
		case results.Pass:
		case results.Fail:
			c.Failure = &junitProblem{Message: kpiMessage(&k), Type: "kpi", Text: kpiDetail(&k)}
		case results.Skipped:
			c.Skipped = &junitSkipped{Message: orDefault(k.Message, "not evaluated")}
		case results.Error:
			c.Error = &junitProblem{Message: orDefault(k.Message, "KPI could not be evaluated"), Type: "kpi", Text: kpiDetail(&k)}
		default:
			c.Error = &junitProblem{Message: fmt.Sprintf("unknown verdict %q", k.Verdict), Type: "kpi", Text: kpiDetail(&k)}
		}
		s.Cases = append(s.Cases, c)
	}
	if b := run.Bringup; b != nil {
		for _, ch := range b.Checks {
			c := junitCase{ClassName: class + "." + ch.Category, Name: ch.Name, Time: "0"}
			msg := ch.Device + ": " + firstLine(ch.Evidence)
			switch ch.Verdict {
			case results.Pass:
			case results.Fail:
				c.Failure = &junitProblem{Message: msg, Type: "bringup", Text: ch.Evidence}
			default:
				c.Error = &junitProblem{Message: msg, Type: "bringup", Text: ch.Evidence}
			}
			s.Cases = append(s.Cases, c)
		}
	}
	for _, c := range s.Cases {
		s.Tests++
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Error != nil:
			s.Errors++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
	if len(run.Anomalies) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "%d anomalies:\n", len(run.Anomalies))
		for _, a := range run.Anomalies {
			fmt.Fprintf(&b, "%s %s member %s (score %s): %s\n", a.Kind, a.Group, a.Member, fmtNum(a.Score), a.Evidence)
		}
		s.SystemOut = b.String()
	}
	return s
}

// kpiMessage is the one-line reason a KPI failed.
func kpiMessage(k *results.KPI) string {
	msg := fmt.Sprintf("%s = %s, want %s %s", k.Name, withUnit(k.Value, k.Unit), k.Op, withUnit(k.Threshold, k.Unit))
	if k.Message != "" {
		msg += ": " + k.Message
	}
	return msg
}

func kpiDetail(k *results.KPI) string {
	var b strings.Builder
	fmt.Fprintf(&b, "metric:    %s\n", k.Metric)
	fmt.Fprintf(&b, "scope:     %s\n", k.Scope)
	fmt.Fprintf(&b, "value:     %s\n", withUnit(k.Value, k.Unit))
	fmt.Fprintf(&b, "threshold: %s %s\n", k.Op, withUnit(k.Threshold, k.Unit))
	fmt.Fprintf(&b, "verdict:   %s\n", k.Verdict)
	if k.Message != "" {
		fmt.Fprintf(&b, "message:   %s\n", k.Message)
	}
	return b.String()
}

func withUnit(v float64, unit string) string {
	if unit == "" {
		return fmtNum(v)
	}
	return fmtNum(v) + " " + unit
}

func seconds(s float64) string {
	if !finite(s) || s < 0 {
		s = 0
	}
	return fmt.Sprintf("%.3f", s)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
