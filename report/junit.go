package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/results"
)

// JUnit XML valid against the Jenkins junit-10 schema (xunit-plugin's
// junit-10.xsd, vendored in testdata/ and checked by the tests), the
// format CI dashboards (Jenkins, GitLab, GitHub test reporters) read. The
// schema allows no skipped count on <testsuites> (only on <testsuite>)
// and no <properties> in a <testcase>: a KPI's value, threshold and unit
// are properties of its run's <testsuite> (kpi.NAME.value, ...) and lines
// of the test case's <system-out>.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
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
	SystemErr  string          `xml:"system-err,omitempty"`
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
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// JUnit writes r as JUnit XML (Jenkins junit-10 schema): a <testsuites>
// with one <testsuite> per run (named suite.runID) and one <testcase> per
// KPI and per bring-up check: a <failure> for a fail verdict, an <error>
// for an error verdict, <skipped> for a KPI not evaluated. Each KPI case's
// <system-out> holds its value, threshold and unit, also properties of
// the run's suite (kpi.NAME.value, kpi.NAME.threshold, kpi.NAME.op,
// kpi.NAME.unit, kpi.NAME.verdict). A run that could not complete (error,
// interrupted, skipped) adds one case "run", its completion check, with
// the error; a completed run has none, so tests counts KPIs and checks.
// Anomalies are listed in the run's <system-out>, its error in
// <system-err>.
func JUnit(w io.Writer, r *results.Results) error {
	return junitWith(w, r, nil)
}

// junitWith is JUnit with extra test suites after the runs' (a baseline
// comparison).
func junitWith(w io.Writer, r *results.Results, extra []junitSuite) error {
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
		total += run.WallS
		out.Suites = append(out.Suites, s)
	}
	for _, s := range extra {
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
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

	// A run that did not complete: its completion check fails (a run
	// in error often has no KPI results at all, and must not look like
	// an empty pass to CI).
	switch run.Status {
	case results.Error, results.Interrupted:
		msg := run.Error
		if msg == "" {
			msg = "run " + run.Status
		}
		rc := junitCase{ClassName: class, Name: "run", Time: seconds(run.WallS)}
		rc.Error = &junitProblem{Message: firstLine(msg), Type: run.Status, Text: msg}
		s.Cases = append(s.Cases, rc)
		s.SystemErr = msg
	case results.Skipped:
		rc := junitCase{ClassName: class, Name: "run", Time: "0"}
		rc.Skipped = &junitSkipped{Message: "run skipped: the suite was stopped before it started"}
		s.Cases = append(s.Cases, rc)
	}

	for _, k := range run.KPIs {
		c := junitCase{ClassName: class, Name: k.Name, Time: "0", SystemOut: kpiDetail(&k)}
		// Exact numbers for tools that plot them (the text rounds).
		if k.Verdict == results.Pass || k.Verdict == results.Fail {
			add("kpi."+k.Name+".value", exactNum(k.Value))
		}
		add("kpi."+k.Name+".op", k.Op)
		add("kpi."+k.Name+".threshold", exactNum(k.Threshold))
		add("kpi."+k.Name+".unit", k.Unit)
		add("kpi."+k.Name+".verdict", k.Verdict)
		switch k.Verdict {
		case results.Pass:
		case results.Fail:
			msg, text := kpiMessage(&k), kpiDetail(&k)
			if culprits := kpiCulprits(run, &k); len(culprits) > 0 {
				a, i := &run.Anomalies[culprits[0]], culprits[0]
				head := culpritLine(a, i)
				if len(culprits) > 1 {
					head += fmt.Sprintf(" (+%s)", plural(len(culprits)-1, "more culprit"))
				}
				msg = head + " — " + msg
				var b strings.Builder
				b.WriteString("culprits, most likely first:\n")
				for _, j := range culprits {
					writeCulprit(&b, &run.Anomalies[j], j, "  ")
				}
				b.WriteString("\n")
				text = b.String() + text
			}
			c.Failure = &junitProblem{Message: msg, Type: "kpi", Text: text}
		case results.Skipped:
			c.Skipped = &junitSkipped{Message: orDefault(k.Message, "not evaluated")}
		case results.Error:
			c.Error = &junitProblem{Message: orDefault(k.Message, "KPI could not be evaluated"), Type: "kpi", Text: kpiDetail(&k)}
		default:
			c.Error = &junitProblem{Message: fmt.Sprintf("unknown verdict %q", k.Verdict), Type: "kpi", Text: kpiDetail(&k)}
		}
		s.Cases = append(s.Cases, c)
	}
	if b := run.Bringup; b != nil && len(b.Causes) > 0 {
		// One failure per cause, its root and consequences in the body;
		// the checks that passed as passing cases.
		for _, cs := range b.Causes {
			c := junitCase{ClassName: class + ".cause", Name: fmt.Sprintf("cause %d: %s %s", cs.ID, cs.Kind, strings.TrimSpace(cs.Device+" "+cs.Interface)), Time: "0"}
			var body strings.Builder
			fmt.Fprintf(&body, "%s\n", cs.Summary)
			for k, i := range cs.Checks {
				if i < 0 || i >= len(b.Checks) {
					continue
				}
				ch := b.Checks[i]
				label := "root"
				if k >= cs.Roots {
					label = "consequence"
				}
				fmt.Fprintf(&body, "%s: %s [%s]: %s\n", label, ch.Name, ch.Device, ch.Evidence)
			}
			c.Failure = &junitProblem{Message: firstLine(cs.Summary), Type: "bringup-cause", Text: body.String()}
			s.Cases = append(s.Cases, c)
		}
		for _, ch := range b.Checks {
			if ch.Verdict == results.Pass {
				s.Cases = append(s.Cases, junitCase{ClassName: class + "." + ch.Category, Name: ch.Name, Time: "0"})
			}
		}
	} else if b := run.Bringup; b != nil {
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
	s.SystemOut = runSummary(run)
	return s
}

// culpritLine is the one-line headline of a culprit:
// "#1 leaf0:Ethernet5 (capacity, 200–900 µs): rate_util 48 % (group 97 %), …; victims: spine1, host3".
func culpritLine(a *results.Anomaly, i int) string {
	line := fmt.Sprintf("#%d %s", rankOf(a, i), Culprit(a))
	if ev := Signals(a.Signals); ev != "" {
		line += ": " + ev
	} else if a.Evidence != "" {
		line += ": " + firstLine(a.Evidence)
	}
	if len(a.Victims) > 0 {
		line += "; victims: " + Victims(a.Victims, 5)
	}
	return line
}

// writeCulprit writes a culprit with all its details, indented.
func writeCulprit(b *strings.Builder, a *results.Anomaly, i int, indent string) {
	fmt.Fprintf(b, "%s#%d %s, score %s", indent, rankOf(a, i), Culprit(a), fmtNum(a.Score))
	if a.Group != "" {
		fmt.Fprintf(b, ", %s group %s", a.Kind, a.Group)
	}
	if len(a.Faults) > 0 {
		fmt.Fprintf(b, ", explains %s", strings.Join(a.Faults, ", "))
	}
	b.WriteString("\n")
	if ev := Signals(a.Signals); ev != "" {
		fmt.Fprintf(b, "%s    signals: %s\n", indent, ev)
	}
	if a.Evidence != "" {
		fmt.Fprintf(b, "%s    evidence: %s\n", indent, a.Evidence)
	}
	if len(a.Victims) > 0 {
		fmt.Fprintf(b, "%s    victims (%d):\n", indent, len(a.Victims))
		for _, v := range a.Victims {
			fmt.Fprintf(b, "%s      %s", indent, v.Member)
			if v.Group != "" {
				fmt.Fprintf(b, " in %s", v.Group)
			}
			if v.Why != "" {
				fmt.Fprintf(b, ": %s", v.Why)
			}
			b.WriteString("\n")
		}
	}
}

// kpiCulprits returns the indices of the run's anomalies in the order a
// failing KPI should name them: those in the KPI's scope (the anomaly's
// group or one of its victims' groups is the KPI's job or of its group
// kind; every anomaly for a fabric-wide KPI) first, each part by rank.
func kpiCulprits(run *results.Run, k *results.KPI) []int {
	inScope := func(group string) bool {
		sc := k.Scope
		switch {
		case sc == "" || sc == "fabric":
			return true
		case group == "job:"+sc || group == sc:
			return true
		}
		return strings.HasPrefix(group, sc+":")
	}
	var near, far []int
	for _, i := range ranked(run.Anomalies) {
		a := &run.Anomalies[i]
		hit := inScope(a.Group)
		for _, v := range a.Victims {
			hit = hit || inScope(v.Group)
		}
		if hit {
			near = append(near, i)
		} else {
			far = append(far, i)
		}
	}
	return append(near, far...)
}

// runSummary is a run's <system-out>: its culprits, faults and
// imbalances, "" when it has none.
func runSummary(run *results.Run) string {
	var b strings.Builder
	if n := len(run.Anomalies); n > 0 {
		if n == 1 {
			b.WriteString("1 anomaly:\n")
		} else {
			fmt.Fprintf(&b, "%d anomalies, ranked:\n", n)
		}
		for _, i := range ranked(run.Anomalies) {
			writeCulprit(&b, &run.Anomalies[i], i, "")
		}
	}
	if len(run.FaultMatches) > 0 {
		b.WriteString("injected faults:\n")
		matched := map[int]bool{}
		for _, m := range run.FaultMatches {
			fmt.Fprintf(&b, "%s %s -> ", m.ID, m.Description)
			if m.Anomaly > 0 {
				matched[m.Anomaly] = true
				fmt.Fprintf(&b, "anomaly #%d\n", m.Anomaly)
			} else {
				b.WriteString("no anomaly explains it\n")
			}
		}
		for i := range run.Anomalies {
			a := &run.Anomalies[i]
			if r := rankOf(a, i); !matched[r] && len(a.Faults) == 0 {
				fmt.Fprintf(&b, "anomaly #%d %s matches no injected fault\n", r, a.Member)
			}
		}
	}
	if len(run.Imbalances) > 0 {
		fmt.Fprintf(&b, "%s:\n", plural(len(run.Imbalances), "imbalance"))
		for _, im := range run.Imbalances {
			fmt.Fprintf(&b, "%s\n", ImbalanceLine(&im))
		}
	}
	return b.String()
}

// ImbalanceLine is one line for an imbalance: "leaf-uplinks:leaf2 (8
// members): CV 0.31, max/min 2.4, Jain 0.91; most loaded leaf2:Ethernet1,
// least loaded leaf2:Ethernet6".
func ImbalanceLine(im *results.Imbalance) string {
	mm := fmtNum(im.MaxMin)
	if im.MaxMin == 0 {
		mm = "∞"
	}
	s := fmt.Sprintf("%s (%s): CV %s, max/min %s, Jain %s", im.Group, plural(im.Members, "member"), fmtNum(im.CV), mm, fmtNum(im.Jain))
	if im.MaxMember != "" {
		s += "; most loaded " + im.MaxMember
	}
	if im.MinMember != "" {
		s += ", least loaded " + im.MinMember
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
	if k.Verdict == results.Pass || k.Verdict == results.Fail {
		fmt.Fprintf(&b, "value:     %s\n", withUnit(k.Value, k.Unit))
	} else {
		b.WriteString("value:     none (not measured)\n")
	}
	fmt.Fprintf(&b, "threshold: %s %s\n", k.Op, withUnit(k.Threshold, k.Unit))
	if k.Unit != "" {
		fmt.Fprintf(&b, "unit:      %s\n", k.Unit)
	}
	fmt.Fprintf(&b, "verdict:   %s\n", k.Verdict)
	if k.Message != "" {
		fmt.Fprintf(&b, "message:   %s\n", k.Message)
	}
	return b.String()
}

func withUnit(v float64, unit string) string {
	return fmtNum(v) + results.UnitSuffix(v, unit)
}

// exactNum formats v with every digit it has ("NaN" and "±Inf" as such).
func exactNum(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return fmtNum(v)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
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
