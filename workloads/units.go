package workloads

import (
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
