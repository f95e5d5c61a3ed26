package inventory

import (
	"strings"
	"testing"
)

func TestParseLinkEvent(t *testing.T) {
	f, err := ParseSpec("fattree:hosts=16,tiers=3")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := f.ParseLinkEvent("degrade:host3-tor1@1.5us=0.25")
	if err != nil {
		t.Fatal(err)
	}
	l := f.Links[ev.Link]
	names := f.Nodes[f.Ports[l.A].Node].Name + "-" + f.Nodes[f.Ports[l.B].Node].Name
	if names != "host3-tor1" || ev.At != 1500000 || !ev.Up || ev.RateFactor != 0.25 {
		t.Fatalf("parsed %+v (%s)", ev, names)
	}
	if ev, err = f.ParseLinkEvent("down:agg0-tor0@0"); err != nil || ev.Up {
		t.Fatalf("down: %+v %v", ev, err)
	}
	for in, want := range map[string]string{
		"down:tor0-agg0":          "missing @TIME",
		"down:tor0@1us":           "must name two nodes",
		"down:tor0-nosuch@1us":    `no node named "nosuch"`,
		"down:tor0-core0@1us":     "not linked",
		"down:tor0-agg0/3@1us":    "index 3 is out of range",
		"down:tor0-agg0@soon":     "time",
		"degrade:tor0-agg0@1us":   "needs =FRAC",
		"degrade:tor0-agg0@1us=0": "must be a number in (0, 1]",
		"cut:tor0-agg0@1us":       "unknown kind",
		"tor0-agg0@1us":           "want down:A-B@TIME",
	} {
		if _, err := f.ParseLinkEvent(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to mention %q", in, err, want)
		}
	}
}
