package hwbackend

import (
	"math"
	"testing"
)

// The burst given back to tc shows the burst read before, within one
// microsecond at the rate: tc keeps whole microseconds, truncating.
func TestTCBurst(t *testing.T) {
	shown := func(b int64, rate float64) int64 {
		us := math.Floor(float64(b) / (rate / 1e6))
		return int64(math.Floor(us * rate / 1e6))
	}
	for _, rate := range []float64{6.25e6, 1.25e9, 12.5e6, 1e6, 125e3} {
		for burst := 9000.0; burst < 40000; burst += 7 {
			got := shown(tcBurst(burst, rate), rate)
			before := qdisc{Kind: "tbf", Handle: "1:", Options: map[string]any{"rate": rate, "burst": burst, "lat": 5000.0}}
			now := qdisc{Kind: "tbf", Handle: "1:", Options: map[string]any{"rate": rate, "burst": float64(got), "lat": 5000.0}}
			if !sameQdisc(before, now) {
				t.Fatalf("rate %.0f B/s burst %.0f: tc would show %d", rate, burst, got)
			}
		}
	}
	// The lab's case: a 50 Mb/s link shaped (through netlink) with a
	// 14418-byte burst comes back exactly.
	if b := tcBurst(14418, 6.25e6); shown(b, 6.25e6) != 14418 {
		t.Errorf("tcBurst(14418) = %d shows %d", b, shown(b, 6.25e6))
	}
	// The 200 Mb/s lab link a degrade replaced (lab-srv6-reroute): tc
	// gives back a burst 1 us shorter, and the latency follows it.
	if !sameQdisc(qdisc{Kind: "tbf", Handle: "1:", Options: map[string]any{"rate": 25e6, "burst": 57675.0, "lat": 4135.0}},
		qdisc{Kind: "tbf", Handle: "1:", Options: map[string]any{"rate": 25e6, "burst": 57650.0, "lat": 4136.0}}) {
		t.Error("the 200 Mb/s lab link's restored tbf counted as different")
	}
	// A tbf restored at another rate, or a burst more than 1 us off, is
	// not the same.
	a := qdisc{Kind: "tbf", Handle: "1:", Options: map[string]any{"rate": 6.25e6, "burst": 14418.0, "lat": 8461.0}}
	for _, o := range []map[string]any{
		{"rate": 625e3, "burst": 14418.0, "lat": 8461.0},
		{"rate": 6.25e6, "burst": 14400.0, "lat": 8461.0},
		{"rate": 6.25e6, "burst": 14418.0},
		{"rate": 6.25e6, "burst": 14418.0, "lat": 8463.0},
	} {
		if sameQdisc(a, qdisc{Kind: "tbf", Handle: "1:", Options: o}) {
			t.Errorf("%v counted as the same as %v", o, a.Options)
		}
	}
}
