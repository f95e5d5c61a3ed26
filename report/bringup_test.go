package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/results"
)

func bringupResults() *results.Results {
	return &results.Results{Schema: results.Schema, Suite: "lab leafspine", Backend: "native", Status: results.Fail, Summary: results.Summary{Runs: 1, Checks: 3, ChecksFailed: 2},
		Runs: []results.Run{{ID: "bringup", Status: results.Fail, Bringup: &results.Bringup{Lab: "leafspine", Runtime: "native", Checks: []results.Check{
			{Category: results.CheckLinks, Name: "link leaf0:eth1 -- spine0:eth1", Device: "leaf0", Verdict: results.Pass, Evidence: "leaf0:eth1 up, spine0:eth1 up"},
			{Category: results.CheckBGP, Name: "bgp leaf0 eth2 -> spine1 198.18.0.2", Device: "leaf0", Verdict: results.Fail, Evidence: "state Idle (remote AS 65000)"},
			{Category: results.CheckReachability, Name: "reach from host0", Device: "host0", Verdict: results.Error, Evidence: "host unreachable"},
		}}}}}
}

func TestBringupJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := JUnit(&b, bringupResults()); err != nil {
		t.Fatal(err)
	}
	x := b.String()
	for _, want := range []string{
		`tests="3" failures="1" errors="1"`, // the three checks, no synthetic run case
		`classname="lab leafspine.bringup.bgp" name="bgp leaf0 eth2 -&gt; spine1 198.18.0.2"`,
		`<failure message="leaf0: state Idle (remote AS 65000)" type="bringup">`,
		`<error message="host0: host unreachable" type="bringup">`,
	} {
		if !strings.Contains(x, want) {
			t.Errorf("JUnit lacks %s:\n%s", want, x)
		}
	}
}

func TestBringupHTML(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, bringupResults(), nil); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	if !strings.Contains(h, "<h3>Bring-up checks</h3>") || !strings.Contains(h, "3 checks, 1 passed, 2 failed") {
		t.Fatalf("no bring-up section:\n%s", h)
	}
	if strings.Contains(h, "<dt>packets</dt>") || strings.Contains(h, "simulated time") {
		t.Error("a bring-up run shows simulator facts")
	}
	if !strings.Contains(h, "bring-up checks</div>") {
		t.Error("no bring-up check count card")
	}
	if strings.Contains(h, "<h3>KPIs</h3>") {
		t.Error("a bring-up run shows an empty KPI section")
	}
	// Failed checks come first.
	if i, j := strings.Index(h, "bgp leaf0 eth2"), strings.Index(h, "link leaf0:eth1"); i < 0 || j < 0 || i > j {
		t.Errorf("failed check not listed before passed one (%d, %d)", i, j)
	}
}
