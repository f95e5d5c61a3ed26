package inventory

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/units"
)

// LinkEvent changes a link at a point in time (the simulator's link
// events, the faults of a run).
type LinkEvent struct {
	At   int64 // picoseconds
	Link int   // link ID
	Up   bool  // false: the link goes down and packets on it are lost
	// RateFactor, when > 0 and Up, sets the link to this fraction of its
	// nominal rate (a degraded link).
	RateFactor float64
	// Direction limits the event to one direction of the link: DirBoth,
	// DirAB the transmit side of port A (the lower-tier end), DirBA that
	// of port B.
	Direction int
}

// Link directions for LinkEvent.Direction.
const (
	DirBoth = 0
	DirAB   = 1
	DirBA   = 2
)

// ParseLinkEvent parses a link fault of the form
//
//	down:A-B@TIME            the link between nodes A and B goes down
//	up:A-B@TIME              it comes back at full rate
//	degrade:A-B@TIME=FRAC    it runs at FRAC (0 < FRAC <= 1) of its rate
//
// A-B names the two nodes (e.g. tor0-agg1, host3-tor0); A-B/N picks the Nth
// (0-based) of several parallel links. TIME is a duration (units.ParsePs).
func (f *Fabric) ParseLinkEvent(s string) (LinkEvent, error) {
	var ev LinkEvent
	kind, rest, ok := strings.Cut(s, ":")
	if !ok {
		return ev, fmt.Errorf("fault %q: want down:A-B@TIME, up:A-B@TIME or degrade:A-B@TIME=FRAC", s)
	}
	linkSpec, when, ok := strings.Cut(rest, "@")
	if !ok {
		return ev, fmt.Errorf("fault %q: missing @TIME", s)
	}
	switch kind {
	case "down":
	case "up":
		ev.Up = true
	case "degrade":
		ev.Up = true
		t, frac, ok := strings.Cut(when, "=")
		if !ok {
			return ev, fmt.Errorf("fault %q: degrade needs =FRAC after the time, e.g. degrade:tor0-agg0@100us=0.5", s)
		}
		v, err := strconv.ParseFloat(frac, 64)
		if err != nil || !(v > 0 && v <= 1) {
			return ev, fmt.Errorf("fault %q: fraction %q must be a number in (0, 1]", s, frac)
		}
		ev.RateFactor, when = v, t
	default:
		return ev, fmt.Errorf("fault %q: unknown kind %q (want down, up or degrade)", s, kind)
	}
	at, err := units.ParsePs(when)
	if err != nil {
		return ev, fmt.Errorf("fault %q: time: %w", s, err)
	}
	ev.At = at
	nth := 0
	if base, n, ok := strings.Cut(linkSpec, "/"); ok {
		nth, err = strconv.Atoi(n)
		if err != nil || nth < 0 {
			return ev, fmt.Errorf("fault %q: parallel link index %q is not a non-negative integer", s, n)
		}
		linkSpec = base
	}
	a, b, ok := strings.Cut(linkSpec, "-")
	if !ok {
		return ev, fmt.Errorf("fault %q: link %q must name two nodes as A-B", s, linkSpec)
	}
	na, okA := f.NodeByName(a)
	nb, okB := f.NodeByName(b)
	if !okA || !okB {
		missing := a
		if okA {
			missing = b
		}
		return ev, fmt.Errorf("fault %q: no node named %q in the fabric", s, missing)
	}
	var links []int
	for _, p := range f.Nodes[na].Ports {
		if f.PeerNode(p) == nb {
			links = append(links, f.Ports[p].Link)
		}
	}
	if len(links) == 0 {
		return ev, fmt.Errorf("fault %q: %s and %s are not linked", s, a, b)
	}
	if nth >= len(links) {
		return ev, fmt.Errorf("fault %q: %s and %s have %d parallel links, index %d is out of range", s, a, b, len(links), nth)
	}
	ev.Link = links[nth]
	return ev, nil
}

// MaxFailFraction bounds RandomLinkFailures' fraction.
const MaxFailFraction = 0.5

// RandomLinkFailures takes down round(frac x the switch-to-switch links)
// links, chosen by a generator seeded with seed, at time at: the "2% of
// links fail" experiments of Spritz Sec. V-D. Host links are never chosen
// (a host would be cut off). frac is in [0, MaxFailFraction]. The events
// are in link order.
func (f *Fabric) RandomLinkFailures(frac float64, seed uint64, at int64) ([]LinkEvent, error) {
	if !(frac >= 0 && frac <= MaxFailFraction) {
		return nil, fmt.Errorf("link failure fraction %g out of range [0, %g]", frac, MaxFailFraction)
	}
	var cand []int
	for _, l := range f.Links {
		a, b := f.Ports[l.A].Node, f.Ports[l.B].Node
		if f.Nodes[a].Role != RoleHost && f.Nodes[b].Role != RoleHost {
			cand = append(cand, l.ID)
		}
	}
	n := int(frac*float64(len(cand)) + 0.5)
	// Partial Fisher-Yates with a SplitMix64 stream.
	x := seed*0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D
	next := func() uint64 {
		x += 0x9E3779B97F4A7C15
		z := x
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		return z ^ (z >> 31)
	}
	for i := 0; i < n; i++ {
		j := i + int((next()>>32)*uint64(len(cand)-i)>>32)
		cand[i], cand[j] = cand[j], cand[i]
	}
	chosen := append([]int(nil), cand[:n]...)
	sort.Ints(chosen)
	evs := make([]LinkEvent, n)
	for i, l := range chosen {
		evs[i] = LinkEvent{At: at, Link: l}
	}
	return evs, nil
}

// LowDiameter reports whether f is a Dragonfly (it has global links) or a
// Slim Fly (built from a slimfly: spec, which names the fabric).
func (f *Fabric) LowDiameter() bool { return f.HasGlobalLinks() || f.SlimFly() }

// DragonflyGroups reports whether f's pods are Dragonfly groups: it has
// global links and is not a Slim Fly, whose global links join the two
// halves of its MMS graph rather than fully connected groups (routing
// through intermediate groups and the Dragonfly path shapes of
// source-guided routing apply to Dragonflies only).
func (f *Fabric) DragonflyGroups() bool { return f.HasGlobalLinks() && !f.SlimFly() }

// HasGlobalLinks reports whether any link of f is a global link.
func (f *Fabric) HasGlobalLinks() bool {
	for _, l := range f.Links {
		if l.Global {
			return true
		}
	}
	return false
}

// SlimFly reports whether f was built from a slimfly: spec.
func (f *Fabric) SlimFly() bool { return strings.HasPrefix(strings.ToLower(f.Name), "slimfly:") }
