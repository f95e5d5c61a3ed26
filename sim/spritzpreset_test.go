package sim

import (
	"reflect"
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/preset"
	"github.com/fabricbench/fabricbench/workloads"
)

// TestSpritzPresetConfig: the spritz preset (fabricbench sim --preset
// spritz, suites' preset: spritz) gives the 72-host Dragonfly the Config
// the Spritz tests use (spritzDragonfly, spritzParams, spritzPaper): same
// links and switches, transport, ECN thresholds, and the longest-path
// sizing the test helper had before it moved into LongestPathSizing (RTT
// 7788800 ps, queue 391040 B = 94 packets of 4160 B); and a Spray (w) run
// of the Table III benchmark on seed 1 gives identical results.
func TestSpritzPresetConfig(t *testing.T) {
	p, err := preset.Lookup("spritz")
	if err != nil {
		t.Fatal(err)
	}
	spec := "dragonfly:p=2,a=4,h=2"
	if err := p.CheckSpec(spec); err != nil {
		t.Fatal(err)
	}
	f, err := inventory.ParseSpec(p.ApplySpec(spec))
	if err != nil {
		t.Fatal(err)
	}
	ref := spritzDragonfly(t, 2, 4, 2, 400)
	if !reflect.DeepEqual(f.Links, ref.Links) || !reflect.DeepEqual(f.Nodes, ref.Nodes) {
		t.Fatalf("preset fabric %s differs from the Spritz tests' %s", f.Name, ref.Name)
	}
	tp := transport.DefaultParams()
	p.Transport(&tp)
	tp.LB = transport.Spray
	want := spritzParams(transport.Spray)
	want.TargetRTT, want.MaxWindow = transport.TargetFactor, transport.MaxWindowBDP // what 0 means
	if !reflect.DeepEqual(tp, want) {
		t.Fatalf("preset transport %+v, want %+v", tp, want)
	}
	if p.Queue != preset.LongestPath || !p.ECN || p.KMin != 0.2 || p.KMax != 0.8 {
		t.Fatalf("preset switch setting: queue %q, ECN %v, K %g/%g", p.Queue, p.ECN, p.KMin, p.KMax)
	}
	rtt, q, err := LongestPathSizing(f, tp)
	if err != nil {
		t.Fatal(err)
	}
	if rtt != 7788800 || q != 391040 {
		t.Errorf("longest-path sizing: RTT %d ps, queue %d B; the test helper gave 7788800 ps, 391040 B", rtt, q)
	}
	m, err := workloads.ParseSpec("monitored:size=6MiB,free=1", f, 1)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Fabric: f, Matrix: m, Transport: tp, Seed: 1, LowDiameter: SourceGuided,
		QueueBytes: q, WindowRTT: rtt, KMin: p.KMin, KMax: p.KMax, NoECN: !p.ECN})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run()
	_, rr := runSpritz(t, ref, m, spritzScheme{"Spray (w)", SourceGuided, transport.Spray, false}, 1, spritzPaper(t, ref))
	t.Logf("Table III, Spray (w), seed 1: monitored FCT %.1f us with the preset, %.1f us with the test helpers", fctUs(r, 0), fctUs(rr, 0))
	if !reflect.DeepEqual(r.Flows, rr.Flows) {
		t.Errorf("the preset's run differs from the test helpers': monitored FCT %.1f vs %.1f us", fctUs(r, 0), fctUs(rr, 0))
	}
}

// TestSpritzPresetSlimFly: the spritz preset applies to the paper's Slim
// Fly (slimfly:q=9,p=7, 1134 hosts) too; its longest-path sizing gives
// Table II's Slim Fly queue, 92 packets (longest RTT 7.60 us), where the
// Dragonfly's is 94 [Table II: 88]. A Spritz-Spray permutation on a small
// Slim Fly with the preset finishes every flow.
func TestSpritzPresetSlimFly(t *testing.T) {
	p, err := preset.Lookup("spritz")
	if err != nil {
		t.Fatal(err)
	}
	tp := transport.DefaultParams()
	p.Transport(&tp)
	tp.LB = transport.Spray
	for _, c := range []struct {
		spec    string
		rtt, q  int64
		permute bool
	}{
		{"slimfly:q=9,p=7", 7604320, 92 * 4160, false},
		{"slimfly:q=5,p=2", 0, 0, true},
	} {
		if err := p.CheckSpec(c.spec); err != nil {
			t.Fatal(err)
		}
		f, err := inventory.ParseSpec(p.ApplySpec(c.spec))
		if err != nil {
			t.Fatal(err)
		}
		rtt, q, err := LongestPathSizing(f, tp)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: longest RTT %d ps, queue %d B = %d packets", c.spec, rtt, q, q/4160)
		if c.rtt > 0 && (rtt != c.rtt || q != c.q) {
			t.Errorf("%s: longest RTT %d ps, queue %d B; want %d ps, %d B (92 packets, Table II)", c.spec, rtt, q, c.rtt, c.q)
		}
		if !c.permute {
			continue
		}
		m := workloads.Permutation(f, 256<<10, 1)
		s, err := New(Config{Fabric: f, Matrix: m, Transport: tp, Seed: 1, LowDiameter: SourceGuided,
			QueueBytes: q, WindowRTT: rtt, KMin: p.KMin, KMax: p.KMax})
		if err != nil {
			t.Fatal(err)
		}
		r := s.Run()
		for _, fr := range r.Flows {
			if fr.FCT < 0 {
				t.Fatalf("%s: flow %d did not finish", c.spec, fr.ID)
			}
		}
		t.Logf("%s: %d flows finished, %+v", c.spec, len(r.Flows), r.Packets)
	}
}
