package faultbench

import (
	"fmt"
	"strings"
)

// Acceptance thresholds checked by TestFaultLocalisation.
var (
	// GoalExact is the share of exact faulted runs the project aims at
	// with OPS and REPS (issue 11).
	GoalExact = 0.95
	// MinExact is the smallest share of exact faulted runs each load
	// balancer must reach: the goal (95%) for OPS and REPS, which
	// the analysis meets with the service-rate bound (OPS 100%, REPS 100%
	// today), and a regression guard for ECMP (85% today), whose misses
	// are faults on links no flow is hashed onto: a link that carries no
	// load shows no signal.
	MinExact = map[string]float64{"ops": 0.95, "reps": 0.95, "ecmp": 0.80}
	// MaxHealthyWithAnomalies is the largest number of healthy runs of
	// each load balancer that may report an anomaly.
	MaxHealthyWithAnomalies = 0
	// AssertedLBs are the load balancers the thresholds apply to.
	AssertedLBs = []string{"ecmp", "ops", "reps"}
)

// Row counts the faulted runs of one table row.
type Row struct {
	Label      string
	Runs       int
	Exact      int
	WithExtras int // runs with at least one extra anomaly
	Extras     int // extra anomalies
	NearExtras int // extras next to a fault (see Extra.Near)
	Missed     int // runs with at least one missed fault
	Errors     int // runs that did not complete
	CorrRuns   int // runs whose report had FaultMatches
	CorrMis    int // runs whose FaultMatches disagree with the verdict
}

// ExactFraction is Exact/Runs (0 without runs).
func (r Row) ExactFraction() float64 {
	if r.Runs == 0 {
		return 0
	}
	return float64(r.Exact) / float64(r.Runs)
}

func (r *Row) add(x Result) {
	r.Runs++
	if x.Exact {
		r.Exact++
	}
	if x.Err != "" {
		r.Errors++
		return
	}
	if len(x.Extras) > 0 {
		r.WithExtras++
	}
	r.Extras += len(x.Extras)
	r.NearExtras += x.NearExtras()
	if len(x.Missed()) > 0 {
		r.Missed++
	}
	if x.CorrChecked {
		r.CorrRuns++
	}
	if len(x.Mismatches()) > 0 {
		r.CorrMis++
	}
}

// HealthyRow counts the healthy runs of one table row.
type HealthyRow struct {
	Label         string
	Runs          int
	WithAnomalies int
	Anomalies     int
	Imbalances    int
	Errors        int
}

func (r *HealthyRow) add(x Result) {
	r.Runs++
	if x.Err != "" {
		r.Errors++
		return
	}
	if x.Anomalies > 0 {
		r.WithAnomalies++
	}
	r.Anomalies += x.Anomalies
	r.Imbalances += x.Imbalances
}

// Summary aggregates results: faulted runs by load balancer, by fault
// class and by fabric (each with a total row last), healthy runs by load
// balancer (with a total row last).
type Summary struct {
	ByLB     []Row
	ByClass  []Row
	ByFabric []Row
	Healthy  []HealthyRow
}

// LB returns the faulted row of a load balancer.
func (s Summary) LB(lb string) Row {
	for _, r := range s.ByLB {
		if r.Label == lb {
			return r
		}
	}
	return Row{Label: lb}
}

// HealthyLB returns the healthy row of a load balancer.
func (s Summary) HealthyLB(lb string) HealthyRow {
	for _, r := range s.Healthy {
		if r.Label == lb {
			return r
		}
	}
	return HealthyRow{Label: lb}
}

// Summarize aggregates results.
func Summarize(rs []Result) Summary {
	var fabrics []string
	seen := map[string]bool{}
	for _, r := range rs {
		if !seen[r.Scenario.FabricName] {
			seen[r.Scenario.FabricName] = true
			fabrics = append(fabrics, r.Scenario.FabricName)
		}
	}
	rows := func(labels []string, key func(Result) string) []Row {
		out := make([]Row, len(labels)+1)
		for i, l := range labels {
			out[i].Label = l
		}
		out[len(labels)].Label = "all"
		for _, x := range rs {
			if x.Scenario.Class == Healthy {
				continue
			}
			for i, l := range labels {
				if key(x) == l {
					out[i].add(x)
				}
			}
			out[len(labels)].add(x)
		}
		return out
	}
	var s Summary
	s.ByLB = rows(LBs, func(x Result) string { return x.Scenario.LB })
	s.ByClass = rows(Classes, func(x Result) string { return x.Scenario.Class })
	s.ByFabric = rows(fabrics, func(x Result) string { return x.Scenario.FabricName })
	s.Healthy = make([]HealthyRow, len(LBs)+1)
	for i, lb := range LBs {
		s.Healthy[i].Label = lb
	}
	s.Healthy[len(LBs)].Label = "all"
	for _, x := range rs {
		if x.Scenario.Class != Healthy {
			continue
		}
		for i, lb := range LBs {
			if x.Scenario.LB == lb {
				s.Healthy[i].add(x)
			}
		}
		s.Healthy[len(LBs)].add(x)
	}
	return s
}

// Markdown renders the summary of results as Markdown tables, ready to
// paste into a README.
func Markdown(rs []Result) string {
	s := Summarize(rs)
	var b strings.Builder
	faulted := func(title, first string, rows []Row) {
		fmt.Fprintf(&b, "**%s**\n\n", title)
		fmt.Fprintf(&b, "| %s | runs | exact | exact %% | with extras | extras (near fault) | missed | corr mismatch |\n", first)
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, r := range rows {
			if r.Runs == 0 {
				continue
			}
			label := r.Label
			if label == "all" {
				label = "**all**"
			}
			corr := "n/a"
			if r.CorrRuns > 0 {
				corr = fmt.Sprintf("%d/%d", r.CorrMis, r.CorrRuns)
			}
			fmt.Fprintf(&b, "| %s | %d | %d | %.0f%% | %d | %d (%d) | %d | %s |\n",
				label, r.Runs, r.Exact, 100*r.ExactFraction(), r.WithExtras, r.Extras, r.NearExtras, r.Missed, corr)
		}
		b.WriteString("\n")
	}
	faulted("Faulted runs by load balancer", "LB", s.ByLB)
	faulted("Faulted runs by fault class", "fault class", s.ByClass)
	faulted("Faulted runs by fabric", "fabric", s.ByFabric)
	b.WriteString("**Healthy runs** (no fault)\n\n")
	b.WriteString("| LB | runs | runs with anomalies | anomalies | imbalances |\n")
	b.WriteString("|---|---:|---:|---:|---:|\n")
	for _, r := range s.Healthy {
		if r.Runs == 0 {
			continue
		}
		label := r.Label
		if label == "all" {
			label = "**all**"
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", label, r.Runs, r.WithAnomalies, r.Anomalies, r.Imbalances)
	}
	errs := s.ByLB[len(s.ByLB)-1].Errors + s.Healthy[len(s.Healthy)-1].Errors
	if errs > 0 {
		fmt.Fprintf(&b, "\n%d runs did not complete (counted as not exact).\n", errs)
	}
	b.WriteString("\nexact: every injected fault named by an anomaly (its member or link is the faulted port, " +
		"its link or, for a NIC fault, the host, its NIC or the facing leaf port) and no other anomaly. " +
		"with extras / missed: runs with an anomaly naming something else / with a fault no anomaly names. " +
		"near fault: extras on a node at either end of a faulted link. " +
		"corr mismatch: runs whose report's own fault matches disagree / runs that had them.\n")
	return b.String()
}
