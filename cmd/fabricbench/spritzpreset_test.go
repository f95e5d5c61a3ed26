package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimPresetSpritz: --preset spritz runs Spritz Table III's setting on
// the 72-host Dragonfly: the queue is one BDP of the longest source-guided
// path (94 packets of 4160 B, longest RTT 7.79 µs), DCTCP, and Spritz-Spray
// on source-guided routing gives the monitored flow the FCT that
// TestSpritzTableIII (sim package, the same sizing code) logs for Spray (w)
// on seed 1: 160.1 µs (docs/papers.md, Table III row).
func TestSimPresetSpritz(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := runCLI(t, "sim", "--preset", "spritz", "--topo", "dragonfly:p=2,a=4,h=2", "--routing", "source-guided",
		"--lb", "spritz-spray", "--tm", "monitored:size=6MiB,free=1", "--seed", "1", "-q", "--json", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"global_latency=500ns,switch_latency=500ns", "--cc dctcp", "--queue longest-path",
		"queue 391040 B, longest base RTT 7.79 µs", "cc=dctcp lb=spritz-spray", "42/42 completed",
		"monitor  flow 0, host 0 -> host 71, 4194304 B: FCT µs 160.1"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Flows []struct {
			ID  int     `json:"id"`
			FCT float64 `json:"fct_us"`
		} `json:"flows"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Flows) == 0 || doc.Flows[0].ID != 0 {
		t.Fatalf("no monitored flow in %s", out)
	}
	t.Logf("monitored flow FCT %.2f µs [TestSpritzTableIII Spray (w) seed 1: 160.1 µs]", doc.Flows[0].FCT)
	if got := doc.Flows[0].FCT; math.Abs(got-160.1) > 0.05 {
		t.Errorf("monitored flow FCT %.2f µs, want TestSpritzTableIII's Spray (w) seed-1 figure 160.1 µs", got)
	}
}

// TestSimPresetSpritzExitLink: Table III with the exit-link background
// from the CLI prints the monitored flow's FCT that
// TestSpritzTableIIIExitLink (sim package) logs for seed 1: Spray (w)
// 181 µs, UGAL-L 296 µs.
func TestSimPresetSpritzExitLink(t *testing.T) {
	for _, c := range []struct{ lb, routing, want string }{
		{"spritz-spray", "source-guided", "FCT µs 180.9"},
		{"ops", "ugal-l", "FCT µs 295.7"},
	} {
		code, stdout, stderr := runCLI(t, "sim", "--preset", "spritz", "--topo", "dragonfly:p=2,a=4,h=2", "--routing", c.routing,
			"--lb", c.lb, "--tm", "monitored:size=6MiB,free=1,into=peer,flows=2", "--seed", "1", "-q")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.lb, code, stderr)
		}
		for _, want := range []string{"15/15 completed", "monitor  flow 0, host 0 -> host 71, 4194304 B: " + c.want} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s on %s: output lacks %q:\n%s", c.lb, c.routing, want, stdout)
			}
		}
	}
}

// TestSimPresetSpritzErrors: the spritz preset sizes a dragonfly; other
// fabrics (and --queue longest-path on them) are bad input, exit 2.
func TestSimPresetSpritzErrors(t *testing.T) {
	topo := filepath.Join(t.TempDir(), "x.topo")
	if err := os.WriteFile(topo, []byte("Nodes 16\nTiers 2\nPodsize 16\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--preset", "spritz", "--topo", "fattree:hosts=16"}, `--preset: preset spritz applies to dragonfly or slimfly fabric specs (e.g. dragonfly:p=2,a=4,h=2), not "fattree"`},
		{[]string{"--preset", "spritz", "--topo", topo}, "is a file with its own"},
		{[]string{"--topo", "fattree:hosts=16", "--queue", "longest-path"}, "--queue longest-path: sim: longest-path sizing (Spritz) sizes on the source-guided paths of a dragonfly or slimfly fabric; fattree:hosts=16 is neither"},
		{[]string{"--preset", "spritzz", "--topo", "dragonfly:p=2,a=4,h=2"}, `unknown preset "spritzz" (want smartt or spritz)`},
	} {
		code, _, stderr := runCLI(t, append(append([]string{"sim"}, c.args...), "--tm", "permutation:size=64KiB", "-q")...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", c.args, code, stderr, exitBadInput, c.want)
		}
	}
}
