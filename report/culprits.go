package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/results"
)

// This file turns a run's culprits (results.Anomaly), fault matches and
// imbalances into text (shared by the HTML page, JUnit and the CLI) and
// into the HTML page's views.

// maxVictimsOpen is the longest victim list shown expanded under its
// culprit; longer ones are collapsed in a <details>.
const maxVictimsOpen = 6

// rankOf is the rank of the i-th anomaly of a run: its Rank, or i+1 for
// results written before anomalies were ranked.
func rankOf(a *results.Anomaly, i int) int {
	if a.Rank > 0 {
		return a.Rank
	}
	return i + 1
}

// ranked returns the indices of anoms in rank order (rank 1 first).
func ranked(anoms []results.Anomaly) []int {
	idx := make([]int, len(anoms))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		return rankOf(&anoms[idx[a]], idx[a]) < rankOf(&anoms[idx[b]], idx[b])
	})
	return idx
}

// faultLabel is the label of the i-th fault event of a run: its ID, or
// F1, F2... by position for results written before faults had IDs.
func faultLabel(f *results.Fault, i int) string {
	if f.ID != "" {
		return f.ID
	}
	return fmt.Sprintf("F%d", i+1)
}

// fmtWindow formats an anomaly's window, both ends in one unit:
// "200–900 µs", "2.1–6 ms"; "at 2 ms" when both ends are equal, "" when
// there is no window (both 0, an end not finite, or end before start).
func fmtWindow(s, e float64) string {
	if !finite(s) || !finite(e) || e < s || (s == 0 && e == 0) {
		return ""
	}
	if s == e {
		return "at " + fmtUs(s)
	}
	name, div := "µs", 1.0
	switch m := math.Max(math.Abs(s), math.Abs(e)); {
	case m >= 1e6:
		name, div = "s", 1e6
	case m >= 1e3:
		name, div = "ms", 1e3
	}
	return fmtNum(s/div) + "–" + fmtNum(e/div) + " " + name
}

// fmtFaultWindow formats the span of an injected fault.
func fmtFaultWindow(m *results.FaultMatch) string {
	switch {
	case !finite(m.StartUs):
		return "—"
	case m.EndUs < 0:
		return "from " + fmtUs(m.StartUs) + ", never restored"
	case m.EndUs <= m.StartUs:
		return "at " + fmtUs(m.StartUs)
	}
	return fmtWindow(m.StartUs, m.EndUs)
}

// Culprit names an anomaly's culprit in one line, for summaries:
// "leaf0:Ethernet5 (capacity, 200–900 µs)", or with the link when both of
// its directions are culprits: "leaf0:Ethernet5 (link leaf0-spine1,
// capacity, 200–900 µs)". Without a cause (older results) the kind is
// given instead.
func Culprit(a *results.Anomaly) string {
	member := a.Member
	if member == "" {
		member = "?"
	}
	var parts []string
	if a.Link != "" {
		parts = append(parts, "link "+a.Link)
	}
	switch {
	case a.Cause != "":
		parts = append(parts, a.Cause)
	case a.Kind != "":
		parts = append(parts, a.Kind)
	}
	if w := fmtWindow(a.StartUs, a.EndUs); w != "" {
		parts = append(parts, w)
	}
	if len(parts) == 0 {
		return member
	}
	return member + " (" + strings.Join(parts, ", ") + ")"
}

// Signals formats the decisive signals compactly:
// "rate_util 48 % (group 97 %), queue_bytes 412 KiB (group 3 KiB)".
func Signals(sigs []results.Signal) string {
	parts := make([]string, 0, len(sigs))
	for _, s := range sigs {
		v, b := signalValues(&s)
		if b != "" {
			v += " (group " + b + ")"
		}
		parts = append(parts, s.Name+" "+v)
	}
	return strings.Join(parts, ", ")
}

// Victims lists at most n victims by name, then how many more there are:
// "spine1, host3 +4 more".
func Victims(vs []results.Victim, n int) string {
	var names []string
	for _, v := range vs[:min(max(n, 0), len(vs))] {
		names = append(names, v.Member)
	}
	s := strings.Join(names, ", ")
	if len(vs) > n {
		s += fmt.Sprintf(" +%d more", len(vs)-max(n, 0))
	}
	return strings.TrimSpace(s)
}

// Signal names whose values are fractions (0..1), shown in percent, and
// packet counts.
var (
	fractionSignals = map[string]bool{"rate_util": true, "backlog_util": true, "loss": true}
	countSignals    = map[string]bool{"ecn_marks": true, "drops": true, "trims": true}
)

// signalValues formats a signal's value and its group baseline ("" when
// there is none), by unit, else by the signal's name.
func signalValues(s *results.Signal) (value, baseline string) {
	f := func(v float64) string {
		if !finite(v) {
			return fmtNum(v)
		}
		u := s.Unit
		switch {
		case u == "%":
			return fmtNum(v) + " %"
		case u == "fraction" || (u == "" && fractionSignals[s.Name]):
			return fmtNum(100*v) + " %"
		case u == "B" || u == "bytes" || (u == "" && s.Name == "queue_bytes"):
			return fmtBytes(int64(math.Round(math.Max(v, 0))))
		case u == "packets" || u == "pkts" || (u == "" && countSignals[s.Name]):
			if v >= 0 && v == math.Trunc(v) && v < 1e18 {
				return fmtCount(uint64(v))
			}
			return fmtNum(v)
		case u == "ratio" || u == "x" || u == "×" || (u == "" && s.Name == "bytes_share"):
			return fmtNum(v) + "×"
		}
		return withUnit(v, u)
	}
	value = f(s.Value)
	if s.Baseline >= 0 && finite(s.Baseline) {
		baseline = f(s.Baseline)
	}
	return value, baseline
}

// idSet makes anchors unique within a page: the first use of a base is
// the base itself, later ones get -2, -3...
type idSet struct{ used map[string]bool }

func (s *idSet) make(base string) string {
	if s.used == nil {
		s.used = map[string]bool{}
	}
	id := base
	for n := 2; s.used[id]; n++ {
		id = base + "-" + strconv.Itoa(n)
	}
	s.used[id] = true
	return id
}

// slug turns a name ("leaf-uplinks:leaf0") into an anchor fragment
// ("leaf-uplinks-leaf0").
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.'
		if !ok {
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = true
			continue
		}
		b.WriteRune(r)
		dash = false
	}
	out := strings.TrimSuffix(b.String(), "-")
	if out == "" {
		return "x"
	}
	return out
}

// ---- HTML views ----

type anomalyView struct {
	ID        string // anchor of the culprit's entry
	Rank      int
	Member    string
	Href      string // anchor of the culprit's heat map (or NIC histogram), "" when not drawn
	HrefTitle string
	Link      string
	Cause     string
	Kind      string
	Group     string
	Window    string
	Score     string
	Signals   []signalView
	Faults    []faultRef
	Unmatched bool // faults were injected and this anomaly explains none of them
	Evidence  string
	Victims   []victimView
	Collapse  bool   // victims in a collapsed <details>
	VictimSum string // summary line of a collapsed victim list
	Detected  string // "detected at 300 µs (100 µs to detect)"
}

type signalView struct{ Name, Value, Baseline string }

type faultRef struct{ ID, Href string }

type victimView struct{ ID, Member, Group, Why string }

type faultMatchView struct {
	ID, Anchor   string
	Description  string
	Target       string
	Window       string
	Rank         int    // explaining anomaly, 0 when none
	AnomalyHref  string // its entry
	Culprit      string
	Unmatched    bool
	UnmatchedMsg string
}

type imbalanceView struct {
	Group, Href, Kind    string
	Members              int
	CV, MaxMin, Jain     string
	MaxMember, MinMember string
	Evidence             string
}

// buildCulprits fills the anomaly, fault-correlation and imbalance views
// of a run. groups are the run's plotted groups (may be nil), targets the
// anchors of the figures drawn.
func buildCulprits(v *runView, run *results.Run, groups []results.GroupSeries, targets figureTargets, ids *idSet) {
	anoms := run.Anomalies
	order := ranked(anoms)
	// Anchors: culprit entries by rank, fault matches by ID.
	byRank := map[int]string{}
	anchorOf := make([]string, len(anoms))
	for _, i := range order {
		id := ids.make(fmt.Sprintf("%s-anomaly-%d", v.Anchor, rankOf(&anoms[i], i)))
		anchorOf[i] = id
		if r := rankOf(&anoms[i], i); byRank[r] == "" {
			byRank[r] = id
		}
	}
	faultAnchor := map[string]string{}
	for _, m := range run.FaultMatches {
		if m.ID != "" && faultAnchor[m.ID] == "" {
			faultAnchor[m.ID] = ids.make(v.Anchor + "-fault-" + slug(m.ID))
		}
	}
	// Which anomalies explain an injected fault.
	injected := len(run.FaultMatches) > 0
	matched := map[int]bool{}
	for _, m := range run.FaultMatches {
		if m.Anomaly > 0 {
			matched[m.Anomaly] = true
		}
	}

	for _, i := range order {
		a := &anoms[i]
		rank := rankOf(a, i)
		av := anomalyView{
			ID: anchorOf[i], Rank: rank, Member: orDefault(a.Member, "?"), Link: a.Link,
			Cause: a.Cause, Kind: a.Kind, Group: a.Group,
			Window: fmtWindow(a.StartUs, a.EndUs), Score: fmtNum(a.Score),
			Evidence:  a.Evidence,
			Unmatched: injected && !matched[rank] && len(a.Faults) == 0,
			Detected:  Detected(a),
		}
		if g := culpritGroup(groups, a); g >= 0 && targets.groups[g] != "" {
			av.Href = targets.groups[g]
			av.HrefTitle = "heat map of " + groups[g].Group
		} else if job, ok := strings.CutPrefix(a.Group, "job:"); ok && targets.jobs[job] != "" {
			av.Href = targets.jobs[job]
			av.HrefTitle = "NIC bandwidth histogram of job " + job
		}
		for _, s := range a.Signals {
			val, base := signalValues(&s)
			av.Signals = append(av.Signals, signalView{Name: s.Name, Value: val, Baseline: base})
		}
		for _, f := range a.Faults {
			av.Faults = append(av.Faults, faultRef{ID: f, Href: faultAnchor[f]})
		}
		for j, vi := range a.Victims {
			av.Victims = append(av.Victims, victimView{
				ID: fmt.Sprintf("%s-victim-%d", av.ID, j+1), Member: orDefault(vi.Member, "?"), Group: vi.Group, Why: vi.Why,
			})
		}
		if n := len(av.Victims); n > maxVictimsOpen {
			av.Collapse = true
			av.VictimSum = fmt.Sprintf("%d victims: %s", n, Victims(a.Victims, 4))
		}
		v.Anomalies = append(v.Anomalies, av)
	}

	var unexplained, unmatched []calloutLink
	for _, m := range run.FaultMatches {
		fv := faultMatchView{
			ID: orDefault(m.ID, "?"), Anchor: faultAnchor[m.ID], Description: m.Description,
			Window: fmtFaultWindow(&m), Rank: m.Anomaly,
		}
		target := append([]string(nil), m.Ports...)
		if m.Host != "" {
			target = append(target, "NIC of "+m.Host)
		}
		fv.Target = strings.Join(target, ", ")
		if m.Anomaly > 0 {
			fv.AnomalyHref = byRank[m.Anomaly]
			for i := range anoms {
				if rankOf(&anoms[i], i) == m.Anomaly {
					fv.Culprit = Culprit(&anoms[i])
					break
				}
			}
		} else {
			fv.Unmatched = true
			fv.UnmatchedMsg = "no anomaly explains " + fv.ID
			lbl := fv.ID
			if m.Description != "" {
				lbl += " (" + m.Description + ")"
			}
			unexplained = append(unexplained, calloutLink{Text: lbl, Href: fv.Anchor})
		}
		v.FaultMatches = append(v.FaultMatches, fv)
	}
	for _, av := range v.Anomalies {
		if av.Unmatched {
			what := av.Member
			if c := orDefault(av.Cause, av.Kind); c != "" {
				what += ", " + c
			}
			unmatched = append(unmatched, calloutLink{Text: fmt.Sprintf("#%d (%s)", av.Rank, what), Href: av.ID})
		}
	}
	if n := len(unexplained); n > 0 {
		v.FaultCallouts = append(v.FaultCallouts, callout{Prefix: "No anomaly explains ", Links: unexplained, Suffix: "."})
	}
	switch len(unmatched) {
	case 0:
	case 1:
		v.FaultCallouts = append(v.FaultCallouts, callout{Prefix: "Anomaly ", Links: unmatched, Suffix: " matches no injected fault."})
	default:
		v.FaultCallouts = append(v.FaultCallouts, callout{Prefix: "Anomalies ", Links: unmatched, Suffix: " match no injected fault."})
	}

	for _, im := range run.Imbalances {
		iv := imbalanceView{
			Group: im.Group, Kind: im.Kind, Members: im.Members,
			CV: fmtNum(im.CV), Jain: fmtNum(im.Jain), MaxMin: fmtNum(im.MaxMin),
			MaxMember: im.MaxMember, MinMember: im.MinMember, Evidence: im.Evidence,
		}
		if im.MaxMin == 0 {
			iv.MaxMin = "∞ (idle member)"
		}
		for g := range groups {
			if groups[g].Group == im.Group {
				iv.Href = targets.groups[g]
				break
			}
		}
		v.Imbalances = append(v.Imbalances, iv)
	}
}

// callout is a sentence calling out unexplained faults or unmatched
// anomalies: Prefix, then each link (to the fault's row or the anomaly's
// entry) separated by commas, then Suffix.
type callout struct {
	Prefix string
	Links  []calloutLink
	Suffix string
}

type calloutLink struct{ Text, Href string }
