package inventory

import (
	"testing"

	"github.com/fabricbench/fabricbench/units"
)

// The hardware file's speed limit is the units package's rate maximum.
func TestSpeedLimitIsUnitsMax(t *testing.T) {
	if MaxSpeedBps != units.MaxBitRate {
		t.Fatalf("MaxSpeedBps %d, units.MaxBitRate %d", int64(MaxSpeedBps), units.MaxBitRate)
	}
	if _, err := units.ParseSpeed("100.000000000001T"); err == nil || err.Error() != `"100.000000000001T" is too fast (at most 100T)` {
		t.Fatalf("ParseSpeed above the limit: %v", err)
	}
}

// htsim spec decimals: ".5" and "3." are accepted, "." is not.
func TestSpecDecimals(t *testing.T) {
	for in, want := range map[string]int64{".5ns": 500, "3.ns": 3000, "1s": units.Second} {
		if got, err := parseDurationPs(in); err != nil || got != want {
			t.Errorf("parseDurationPs(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{".ns", "..5ns", "1.000000000001s"} {
		if v, err := parseDurationPs(in); err == nil {
			t.Errorf("parseDurationPs(%q) = %d, want an error", in, v)
		}
	}
}
