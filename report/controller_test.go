package report

import (
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/results"
)

// A run's path controller gets a section: a timeline (the fault above the
// axis, each decision below) and a table with every decision and its
// degraded links; names are escaped in both.
func TestHTMLController(t *testing.T) {
	evil := `<script>alert("x")</script>`
	r := &results.Results{Schema: results.Schema, Suite: "s", Status: results.Pass, Runs: []results.Run{{
		ID: "r1", Status: results.Pass, SimEndUs: 2860,
		Faults: []results.Fault{{AtUs: 200, Description: "degrade link spine0-leaf1 to 50%", ID: "F1"}},
		Controller: &results.Controller{Kind: "srv6-reroute", IntervalUs: 100, HoldDownUs: 1000, Paths: 1,
			Decisions: []results.Decision{{AtUs: 300, AppliedAtUs: 300, Path: evil, Src: "host0", Dst: "host2", From: []string{"spine0"}, To: []string{"spine1"},
				Evidence: []results.LinkEvidence{
					{Link: "spine0:Ethernet1 -> leaf1", State: "degraded", RateBps: 50.2e9, NominalBps: 100e9, BusyFrac: 0.996, QueueHWM: 117600, ECNMarks: 87, Consecutive: 1},
					{Link: "leaf0:Ethernet2 -> spine0", State: "clean", RateBps: 50e9, NominalBps: 100e9, BusyFrac: -1}}}}},
	}}}
	page := renderHTML(t, r, nil)
	checkStructure(t, page)
	if strings.Contains(page, "<script") {
		t.Fatal("unescaped text in the page")
	}
	for _, want := range []string{
		"<h3>Path controller</h3>",
		"srv6-reroute: 1 decision on 1 managed path, deciding every 100 µs, hold-down 1 ms",
		`class="timeline"`, "<circle", "<path d=\"M",
		"<td class=\"num\">300 µs</td><td class=\"num\">300 µs</td>", "host0 → host2", "spine0 → spine1",
		"spine0:Ethernet1 -&gt; leaf1 degraded: 50.2 of 100.0 Gb/s, busy 100%, queue high-water 117600 B, 87 ECN marks, 0 drops, 1 congested interval",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "leaf0:Ethernet2 -&gt; spine0 clean") {
		t.Error("clean links listed as evidence in the table")
	}
}
