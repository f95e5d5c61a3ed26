package faultbench

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
)

// Culprits are the identities an anomaly may name for a fault to count as
// named, with the nodes at the ends of the faulted links.
type Culprits struct {
	// Names: "dev:port" ports, "A-B" and "B-A" link names, host names.
	Names map[string]bool
	// Nodes are the nodes at either end of the faulted links.
	Nodes map[string]bool
}

// Sorted lists the names.
func (c Culprits) Sorted() []string {
	out := make([]string, 0, len(c.Names))
	for n := range c.Names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ExpectedCulprits derives, from the fabric alone, what names a fault:
//
//   - a port fault dev:port: that port and its link, as "A-B" and "B-A";
//     a port taken down (down, flap) takes its link down, so the port at
//     its other end counts too;
//   - a link fault A-B: both of its ports ("A:pa", "B:pb") and "A-B", "B-A";
//   - a nic fault host: the host, its NIC port ("host:eth0"), the leaf
//     port facing it ("leaf0:Ethernet2") and the link names.
func ExpectedCulprits(f *inventory.Fabric, ft Fault) (Culprits, error) {
	c := Culprits{Names: map[string]bool{}, Nodes: map[string]bool{}}
	portName := func(p int) string { return f.Nodes[f.Ports[p].Node].Name + ":" + f.Ports[p].Name }
	addLink := func(p int) {
		l := f.Links[f.Ports[p].Link]
		a, b := f.Nodes[f.Ports[l.A].Node].Name, f.Nodes[f.Ports[l.B].Node].Name
		c.Names[a+"-"+b] = true
		c.Names[b+"-"+a] = true
		c.Nodes[a] = true
		c.Nodes[b] = true
	}
	switch {
	case ft.Port != "":
		dev, pname, ok := strings.Cut(ft.Port, ":")
		id, found := f.NodeByName(dev)
		if !ok || !found {
			return c, fmt.Errorf("port %q: no such device:port", ft.Port)
		}
		for _, p := range f.Nodes[id].Ports {
			if f.Ports[p].Name == pname {
				c.Names[portName(p)] = true
				if ft.Kind == "down" || ft.Kind == "flap" {
					c.Names[portName(f.Ports[p].Peer)] = true
				}
				addLink(p)
				return c, nil
			}
		}
		return c, fmt.Errorf("port %q: %s has no port %s", ft.Port, dev, pname)
	case ft.Link != "":
		spec, nth := ft.Link, 0
		if s, n, ok := strings.Cut(spec, "/"); ok {
			v, err := strconv.Atoi(n)
			if err != nil || v < 0 {
				return c, fmt.Errorf("link %q: bad parallel link index", ft.Link)
			}
			spec, nth = s, v
		}
		a, b, ok := strings.Cut(spec, "-")
		ida, foundA := f.NodeByName(a)
		if !ok || !foundA {
			return c, fmt.Errorf("link %q: no such A-B link", ft.Link)
		}
		var ports []int
		for _, p := range f.Nodes[ida].Ports {
			if f.Nodes[f.PeerNode(p)].Name == b {
				ports = append(ports, p)
			}
		}
		if nth >= len(ports) {
			return c, fmt.Errorf("link %q: %s and %s share %d links", ft.Link, a, b, len(ports))
		}
		p := ports[nth]
		c.Names[portName(p)] = true
		c.Names[portName(f.Ports[p].Peer)] = true
		addLink(p)
		return c, nil
	case ft.NIC != "":
		id, found := f.NodeByName(ft.NIC)
		if !found || f.Nodes[id].IsSwitch() || len(f.Nodes[id].Ports) == 0 {
			return c, fmt.Errorf("nic %q: no such host", ft.NIC)
		}
		p := f.Nodes[id].Ports[0]
		c.Names[ft.NIC] = true
		c.Names[portName(p)] = true
		c.Names[portName(f.Ports[p].Peer)] = true
		addLink(p)
		return c, nil
	}
	return c, fmt.Errorf("fault names no port, link or nic")
}

// names reports whether an anomaly names one of the culprits: its Member,
// or its Link when set.
func (c Culprits) names(a results.Anomaly) bool {
	return c.Names[a.Member] || a.Link != "" && c.Names[a.Link]
}

// FaultOutcome is the verdict on one injected fault.
type FaultOutcome struct {
	ID       string // "F1" for the scenario's first fault, as in the suite
	Fault    Fault
	Expected []string // the culprit names that count
	// NamedBy are the positions (1-based, the report's ranks) of the
	// anomalies that name the fault.
	NamedBy []int
	// Report is the report's own correlation: the FaultMatch anomaly
	// rank (0: none explains it), -1 when the report has no FaultMatch
	// for this fault.
	Report int
	// Mismatch explains a disagreement between NamedBy and Report.
	Mismatch string
	// TimeToDetectUs is the shortest time to detect of the anomalies that
	// name the fault (from the start of its first abnormal interval to
	// the telemetry window that reported it), SinceFaultUs the time from
	// the fault's first event to that report; -1 when it is not named.
	TimeToDetectUs, SinceFaultUs float64
}

// Named reports whether some anomaly names the fault.
func (o FaultOutcome) Named() bool { return len(o.NamedBy) > 0 }

// Extra is an anomaly that names no injected fault (in a healthy run:
// every anomaly).
type Extra struct {
	Rank   int // position in the report, 1-based
	Member string
	Link   string
	Kind   string
	Cause  string
	Group  string
	Score  float64
	// Near: the extra names a port, link or host of a node at either end
	// of a faulted link (typically a victim of the fault, or the fault's
	// link named from the wrong side).
	Near bool
}

func (e Extra) String() string {
	s := fmt.Sprintf("#%d %s", e.Rank, e.Member)
	if e.Link != "" {
		s += " (link " + e.Link + ")"
	}
	cause := e.Cause
	if cause == "" {
		cause = "-"
	}
	s += fmt.Sprintf(" %s/%s in %s score %.3g", e.Kind, cause, e.Group, e.Score)
	if e.Near {
		s += " [near fault]"
	}
	return s
}

// Result is the verdict on one scenario.
type Result struct {
	Scenario Scenario
	// Err is set when the run did not complete (bad suite, backend
	// error, run status error or interrupted).
	Err string
	// Anomalies and Imbalances count what the report found, Trees its
	// informational congestion trees (lossless fabrics; not anomalies).
	Anomalies  int
	Imbalances int
	Trees      int
	// Correct counts the anomalies that name a fault of the run.
	Correct int
	Faults  []FaultOutcome
	Extras  []Extra
	// Exact: the run completed, every fault is named by at least one
	// anomaly and no anomaly names anything else.
	Exact bool
	// CorrChecked: the report had FaultMatches to compare with.
	CorrChecked bool
	WallS       float64 // wall time of the run, harness included
	SimEndUs    float64
}

// Missed are the faults no anomaly names.
func (r Result) Missed() []FaultOutcome {
	var out []FaultOutcome
	for _, o := range r.Faults {
		if !o.Named() {
			out = append(out, o)
		}
	}
	return out
}

// Mismatches are the faults on which the report's own correlation
// disagrees with this evaluation.
func (r Result) Mismatches() []FaultOutcome {
	var out []FaultOutcome
	for _, o := range r.Faults {
		if o.Mismatch != "" {
			out = append(out, o)
		}
	}
	return out
}

// NearExtras counts the extras next to a fault.
func (r Result) NearExtras() int {
	n := 0
	for _, e := range r.Extras {
		if e.Near {
			n++
		}
	}
	return n
}

// String describes a result on one line: the scenario, then what was
// missed, the extras and the correlation disagreements.
func (r Result) String() string {
	var b strings.Builder
	b.WriteString(r.Scenario.String())
	if r.Err != "" {
		b.WriteString("\n    ERROR: " + r.Err)
		return b.String()
	}
	verdict := "exact"
	switch {
	case r.Scenario.Class == Healthy && r.Anomalies == 0:
		verdict = "healthy, no anomaly"
	case r.Scenario.Class == Healthy:
		verdict = "healthy, false alarms"
	case !r.Exact:
		verdict = "not exact"
	}
	fmt.Fprintf(&b, "\n    %s: %d anomalies, %d imbalances, sim %.0fus", verdict, r.Anomalies, r.Imbalances, r.SimEndUs)
	for _, o := range r.Faults {
		if o.Named() {
			fmt.Fprintf(&b, "\n    named  %s %s by anomaly #%s", o.ID, o.Fault, joinInts(o.NamedBy))
		} else {
			fmt.Fprintf(&b, "\n    MISSED %s %s (would accept %s)", o.ID, o.Fault, strings.Join(o.Expected, ", "))
		}
	}
	for _, e := range r.Extras {
		fmt.Fprintf(&b, "\n    EXTRA  %s", e)
	}
	for _, o := range r.Mismatches() {
		fmt.Fprintf(&b, "\n    CORR   %s: %s", o.ID, o.Mismatch)
	}
	return b.String()
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",#")
}

// Evaluate judges one run of a scenario against the scenario's faults,
// independently of the analysis' own fault matching: an anomaly is
// correct when its Member, or its Link when set, is one of the
// ExpectedCulprits of some fault of the scenario; the run is exact when
// every fault is named by a correct anomaly and there is no other
// anomaly. The report's FaultMatches, when present, are compared with the
// verdict (Mismatch), without changing it.
func Evaluate(f *inventory.Fabric, s Scenario, run *results.Run) Result {
	r := Result{Scenario: s, Anomalies: len(run.Anomalies), Imbalances: len(run.Imbalances),
		WallS: run.WallS, SimEndUs: run.SimEndUs}
	for _, t := range run.CongestionTrees {
		if t.Anomaly == 0 {
			r.Trees++
		}
	}
	switch run.Status {
	case results.Error, results.Interrupted, results.Skipped:
		r.Err = fmt.Sprintf("run %s: status %s: %s", run.ID, run.Status, run.Error)
	}
	culprits := make([]Culprits, len(s.Faults))
	near := map[string]bool{}
	for i, ft := range s.Faults {
		c, err := ExpectedCulprits(f, ft)
		if err != nil && r.Err == "" {
			r.Err = fmt.Sprintf("fault F%d: %v", i+1, err)
		}
		culprits[i] = c
		for n := range c.Nodes {
			near[n] = true
		}
		r.Faults = append(r.Faults, FaultOutcome{ID: "F" + strconv.Itoa(i+1), Fault: ft, Expected: c.Sorted(), Report: -1,
			TimeToDetectUs: -1, SinceFaultUs: -1})
	}
	if len(s.Faults) > 0 && len(run.Faults) == 0 && r.Err == "" {
		r.Err = fmt.Sprintf("run %s: the report lists no injected fault events", run.ID)
	}
	// correct[k] lists the faults anomaly k names.
	correct := make([][]int, len(run.Anomalies))
	for k, a := range run.Anomalies {
		for i := range s.Faults {
			if culprits[i].names(a) {
				correct[k] = append(correct[k], i)
				r.Faults[i].NamedBy = append(r.Faults[i].NamedBy, k+1)
			}
		}
		if len(correct[k]) > 0 {
			r.Correct++
		}
		if len(correct[k]) == 0 {
			r.Extras = append(r.Extras, Extra{Rank: k + 1, Member: a.Member, Link: a.Link, Kind: a.Kind,
				Cause: a.Cause, Group: a.Group, Score: a.Score, Near: nearFault(a, near)})
		}
	}
	// Times to detect: the earliest report of each named fault.
	faultAt := map[string]float64{}
	for _, ev := range run.Faults {
		if t, ok := faultAt[ev.ID]; !ok || ev.AtUs < t {
			faultAt[ev.ID] = ev.AtUs
		}
	}
	for i := range r.Faults {
		o := &r.Faults[i]
		for _, k := range o.NamedBy {
			a := run.Anomalies[k-1]
			if o.TimeToDetectUs < 0 || a.TimeToDetectUs < o.TimeToDetectUs {
				o.TimeToDetectUs = a.TimeToDetectUs
			}
			if at, ok := faultAt[o.ID]; ok && (o.SinceFaultUs < 0 || a.DetectedUs-at < o.SinceFaultUs) {
				o.SinceFaultUs = a.DetectedUs - at
			}
		}
	}
	// The report's own correlation.
	for _, m := range run.FaultMatches {
		i, err := strconv.Atoi(strings.TrimPrefix(m.ID, "F"))
		if err != nil || i < 1 || i > len(s.Faults) || !strings.HasPrefix(m.ID, "F") {
			continue
		}
		r.CorrChecked = true
		o := &r.Faults[i-1]
		o.Report = m.Anomaly
		switch {
		case m.Anomaly > len(run.Anomalies):
			o.Mismatch = fmt.Sprintf("report ties it to anomaly #%d, but the report has %d anomalies", m.Anomaly, len(run.Anomalies))
		case m.Anomaly > 0 && !o.Named():
			a := run.Anomalies[m.Anomaly-1]
			o.Mismatch = fmt.Sprintf("report ties it to anomaly #%d (%s), which does not name it", m.Anomaly, a.Member)
		case m.Anomaly > 0 && !containsInt(correct[m.Anomaly-1], i-1):
			a := run.Anomalies[m.Anomaly-1]
			o.Mismatch = fmt.Sprintf("report ties it to anomaly #%d (%s), but #%s name it", m.Anomaly, a.Member, joinInts(o.NamedBy))
		case m.Anomaly <= 0 && o.Named():
			o.Mismatch = fmt.Sprintf("report ties it to no anomaly, but #%s name it", joinInts(o.NamedBy))
		}
	}
	r.Exact = r.Err == "" && len(r.Extras) == 0 && len(r.Missed()) == 0
	return r
}

func containsInt(v []int, x int) bool {
	for _, y := range v {
		if y == x {
			return true
		}
	}
	return false
}

// nearFault reports whether an anomaly's member or link touches one of
// the nodes.
func nearFault(a results.Anomaly, nodes map[string]bool) bool {
	if len(nodes) == 0 {
		return false
	}
	dev, _, _ := strings.Cut(a.Member, ":")
	if nodes[dev] {
		return true
	}
	if a.Link != "" {
		x, y, _ := strings.Cut(a.Link, "-")
		return nodes[x] || nodes[y]
	}
	return false
}
