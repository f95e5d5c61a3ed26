package preset

import (
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
)

func TestLookup(t *testing.T) {
	for _, n := range []string{"smartt", "SMaRTT", " smartt "} {
		if p, err := Lookup(n); err != nil || p != &SMaRTT {
			t.Errorf("Lookup(%q) = %v, %v", n, p, err)
		}
	}
	if _, err := Lookup("nope"); err == nil || err.Error() != `unknown preset "nope" (want smartt or spritz)` {
		t.Errorf("Lookup(nope) error = %v", err)
	}
}

func TestApplySpec(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"fattree:hosts=16", "fattree:hosts=16,gbps=800,latency=600ns,switch_latency=400ns"},
		{"fattree:", "fattree:gbps=800,latency=600ns,switch_latency=400ns"},
		{"leafspine:leaves=2,spines=1,hosts_per_leaf=2,GBPS=400,latency=1us",
			"leafspine:leaves=2,spines=1,hosts_per_leaf=2,GBPS=400,latency=1us,switch_latency=400ns"},
		{" fattree:hosts=16,gbps=100,latency=2us,switch_latency=0 ", "fattree:hosts=16,gbps=100,latency=2us,switch_latency=0"},
		{"nokind", "nokind"},
	} {
		if got := SMaRTT.ApplySpec(c.in); got != c.want {
			t.Errorf("ApplySpec(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSMaRTTTransportDefaults: suites apply the preset without keys for the
// target RTT and the window bound; they rely on the preset's values being
// the transport's defaults.
func TestSMaRTTTransportDefaults(t *testing.T) {
	if SMaRTT.TargetRTT != transport.TargetFactor || SMaRTT.MaxWindow != transport.MaxWindowBDP {
		t.Errorf("smartt target RTT %g, max window %g; the transport defaults are %g, %g",
			SMaRTT.TargetRTT, SMaRTT.MaxWindow, transport.TargetFactor, transport.MaxWindowBDP)
	}
	if d := transport.DefaultParams(); SMaRTT.MTU != d.MTU || !d.Trimming {
		t.Errorf("smartt mtu %d, default %d", SMaRTT.MTU, d.MTU)
	}
}

// Apply fills every setting the user did not give with the preset's
// value and keeps the ones given; the congestion control only where the
// preset has one.
func TestApplyKeepsWhatWasGiven(t *testing.T) {
	user := Settings{CC: "nscc", MTU: 1500, Queue: "1MiB", KMin: 0.5, KMax: 0.9, TargetRTT: 3, MaxWindow: 4}
	none := func(string) bool { return false }
	all := func(string) bool { return true }
	got := Spritz.Apply(user, none)
	want := Settings{CC: Spritz.CC.String(), MTU: Spritz.MTU, Queue: Spritz.Queue, KMin: Spritz.KMin, KMax: Spritz.KMax,
		ECN: Spritz.ECN, Trimming: Spritz.Trimming, TargetRTT: Spritz.TargetRTT, MaxWindow: Spritz.MaxWindow}
	if got != want {
		t.Errorf("nothing given: %+v, want %+v", got, want)
	}
	if got := Spritz.Apply(user, all); got != user {
		t.Errorf("everything given: %+v, want %+v", got, user)
	}
	if got := SMaRTT.Apply(user, none); got.CC != "nscc" || got.MTU != SMaRTT.MTU {
		t.Errorf("a preset without a congestion control: %+v", got)
	}
	onlyMTU := func(name string) bool { return name == SetMTU }
	if got := SMaRTT.Apply(user, onlyMTU); got.MTU != 1500 || got.Queue != SMaRTT.Queue || got.KMin != SMaRTT.KMin {
		t.Errorf("MTU given: %+v", got)
	}
}
