package preset

import "testing"

func TestLookup(t *testing.T) {
	for _, n := range []string{"smartt", "SMaRTT", " smartt "} {
		if p, err := Lookup(n); err != nil || p != &SMaRTT {
			t.Errorf("Lookup(%q) = %v, %v", n, p, err)
		}
	}
	if _, err := Lookup("nope"); err == nil || err.Error() != `unknown preset "nope" (want smartt)` {
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
