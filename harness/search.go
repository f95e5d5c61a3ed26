package harness

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/results"
)

// A searchGroup is one binary search (suite.Test.Search): the points of a
// test that differ only in the searched key, in the order of its values
// (increasing load). A test swept over other keys too has one search per
// combination of their values.
type searchGroup struct {
	test, key, label string
	members          []int // point indices, in value order
	probes           []int // members probed, in probe order
	found            int   // index into members of the largest passing value, -1: none
	complete         bool  // the search ran to its end
}

// searchGroups finds the binary searches of a suite's points (not
// applicable points are not searched: they are reported as such).
func searchGroups(points []*runspec.RunSpec) ([]*searchGroup, map[int]bool) {
	byKey := map[string]*searchGroup{}
	var out []*searchGroup
	in := map[int]bool{}
	for i, p := range points {
		if p.Test == nil || p.Test.Search == nil || len(p.NotApplicable) > 0 {
			continue
		}
		key := p.Test.Search.Key
		var others []string
		for k, v := range p.Params {
			if k != key && k != "tests" {
				others = append(others, k+"="+v)
			}
		}
		sort.Strings(others)
		label := strings.Join(others, ",")
		id := p.Test.Name + "\x00" + label
		g := byKey[id]
		if g == nil {
			g = &searchGroup{test: p.Test.Name, key: key, label: label, found: -1}
			byKey[id] = g
			out = append(out, g)
		}
		g.members = append(g.members, i)
		in[i] = true
	}
	return out, in
}

// run probes the middle value of what is left, keeps the upper half when
// the probe passed and the lower half otherwise, until one value is left
// (RFC 2544 26.1). A probe that did not pass or fail (an error, an
// interruption) ends the search incomplete.
func (g *searchGroup) run(ctx context.Context, next chan<- int, done []chan struct{}, runOf func(int) *results.Run, stop func() bool) {
	lo, hi := -1, len(g.members) // members[lo] passed, members[hi] failed
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if mid < 0 {
			mid = 0
		}
		i := g.members[mid]
		if ctx.Err() != nil || stop() {
			return
		}
		select {
		case next <- i:
		case <-ctx.Done():
			return
		}
		<-done[i]
		r := runOf(i)
		if r == nil {
			return
		}
		g.probes = append(g.probes, mid)
		switch r.Status {
		case results.Pass:
			lo = mid
		case results.Fail:
			hi = mid
		default:
			return
		}
	}
	g.found, g.complete = lo, true
}

// finishSearches records the searches: the points a search did not need
// are not applicable, a failed probe above the value found is the
// search's answer rather than a failure of the suite (Run.Search), and
// every test's result names the value found.
func finishSearches(gs []*searchGroup, points []*runspec.RunSpec, runs []*results.Run, res *results.Results) {
	for _, g := range gs {
		probed := map[int]bool{}
		for _, m := range g.probes {
			probed[m] = true
		}
		found := ""
		if g.complete && g.found >= 0 {
			found = points[g.members[g.found]].Params[g.key]
		}
		for m, i := range g.members {
			r := runs[i]
			if r == nil || !probed[m] {
				if g.complete {
					why := fmt.Sprintf("not needed: the binary search over %s settled", g.key)
					if found != "" {
						why += " on " + found
					} else {
						why += " with no passing value"
					}
					runs[i] = notApplicableRun(points[i])
					runs[i].Error = why
				}
				continue
			}
			switch {
			case r.Status == results.Pass:
				r.Search = results.SearchPass
			case r.Status == results.Fail && g.complete && g.found >= 0:
				// The limit lies below this value: its loss is the
				// answer, not a failure of the suite.
				r.Search = results.SearchAbove
			case r.Status == results.Fail:
				r.Search = results.SearchFail
			}
		}
		for ti := range res.Tests {
			t := &res.Tests[ti]
			if t.Name != g.test {
				continue
			}
			if g.label == "" {
				t.Found = found
			} else {
				if t.FoundBy == nil {
					t.FoundBy = map[string]string{}
				}
				t.FoundBy[g.label] = found
			}
		}
	}
}
