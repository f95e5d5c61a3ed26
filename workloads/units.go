package workloads

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fabricbench/fabricbench/units"
)

// ParseSize parses a byte count with [units.ParseBytes]: a non-negative
// decimal number followed by an optional unit, B, KB, MB, GB, TB (powers of
// 1000, "kB" also accepted) or KiB, MiB, GiB, TiB (powers of 1024), with
// optional spaces in between: "2000000", "2MB", "2 MiB", "1.5KiB". The
// value must be a whole number of bytes, at most [units.MaxBytes] (1 PiB).
func ParseSize(s string) (int64, error) { return units.ParseBytes(s) }

// ParseDuration parses a non-negative duration with [units.ParsePs] and
// returns it in picoseconds: a decimal number followed by a unit, ps, ns,
// us (also µs), ms or s, with optional spaces in between: "10us",
// "2.5 ms", "0.001ns". The unit may be left out only for "0". The value
// must be a whole number of picoseconds, at most [units.MaxPs] (1 hour).
func ParseDuration(s string) (int64, error) { return units.ParsePs(s) }

// ParseRate parses an offered load: a share of the sender's NIC line rate
// ("80%", 0 < share <= 100%), returned as frac with bps 0, or a bit rate
// with [units.ParseBitRate] ("40Gbps", "200Mb/s"), returned as bps with
// frac 0.
func ParseRate(s string) (frac float64, bps int64, err error) {
	t := strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || v <= 0 || v > 100 {
			return 0, 0, fmt.Errorf("%q is not a share of the line rate (want e.g. 80%%, more than 0 and at most 100%%)", s)
		}
		return v / 100, 0, nil
	}
	r, err := units.ParseBitRate(t)
	if err != nil {
		return 0, 0, fmt.Errorf("%v (or a share of the line rate, e.g. 80%%)", err)
	}
	return 0, int64(r), nil
}
