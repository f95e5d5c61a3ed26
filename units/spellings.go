package units

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// The spellings of quantities other files use: a hardware inventory's link
// speeds (ParseSpeed), tc's and containerlab's rates (ParseTCRate,
// FormatTCRate), a suite job's offered load (ParseLoad), and the wording
// of a bad quantity in a suite (Describe).
// They parse with ParsePs, ParseBytes and ParseBitRate and word the errors
// for their files.

var speedRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)([MGT])(?:bps)?$`)

// ParseSpeed parses a hardware inventory's link speed such as 400G, 100G,
// 25G, 1.6T, 800Gbps or 100M (decimal units: M = 10^6, G = 10^9, T =
// 10^12 bits per second) and returns it in bits per second. It is
// stricter than ParseBitRate: a unit M, G or T is required, upper case,
// with an optional "bps".
func ParseSpeed(s string) (BitRate, error) {
	if !speedRE.MatchString(strings.TrimSpace(s)) {
		return 0, fmt.Errorf("%q is not a speed (want e.g. 400G, 100G, 25G, 1.6T or 800Gbps)", s)
	}
	bps, err := ParseBitRate(s)
	if err != nil {
		bps = 0
	}
	return bps, reword(s, err, map[Kind]string{
		NotWhole:    "%q is not a whole number of bits per second",
		NotPositive: "%q: a speed must be positive",
		TooLarge:    "%q is too fast (at most 100T)",
	}, fmt.Sprintf("%q is not a speed (want e.g. 400G, 100G, 25G, 1.6T or 800Gbps): %v", s, err))
}

// reword words err, from parsing s, as its file does: by its kind (a
// format with one %q for s) or else as other.
func reword(s string, err error, byKind map[Kind]string, other string) error {
	if err == nil {
		return nil
	}
	if f, ok := byKind[KindOf(err)]; ok {
		return fmt.Errorf(f, s)
	}
	return errors.New(other)
}

// ParseTCRate parses a link rate as tc and containerlab write it, with
// ParseBitRate: a decimal number with an optional unit bit, kbit, mbit,
// gbit, tbit or bps, kbps, mbps, gbps, tbps (case-insensitive; all decimal
// multiples of bits per second — unlike tc, "bps" means bits, not bytes;
// also k, M, G, T alone and b/s, e.g. 25Gb/s), e.g. "100mbit", "1gbit",
// "2.5Gbps". The result must be a whole number of bits per second between
// 1 and 100 Tbit/s.
func ParseTCRate(s string) (BitRate, error) {
	r, err := ParseBitRate(s)
	if err != nil {
		r = 0
	}
	const outOfRange = "%q is out of range (want 1bit to 100tbit)"
	return r, reword(s, err, map[Kind]string{
		NotWhole: "%q is not a whole number of bits per second",
		TooLarge: outOfRange, NotPositive: outOfRange,
	}, fmt.Sprintf("%q is not a rate (want e.g. 100mbit, 1gbit or 10Gbps)", s))
}

// FormatTCRate writes a rate in bits per second in the largest tc unit
// that represents it exactly, e.g. 1000000000 -> "1gbit", 2500000000 ->
// "2500mbit". ParseTCRate(FormatTCRate(r)) == r.
func FormatTCRate(bps BitRate) string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}} {
		if bps >= u.mult && bps%u.mult == 0 {
			return strconv.FormatInt(bps/u.mult, 10) + u.name
		}
	}
	return strconv.FormatInt(bps, 10) + "bit"
}

// ParseLoad parses an offered load (a suite's jobs[].rate): a share of
// the sender's NIC line rate ("80%", 0 < share <= 100%), returned as frac
// with bps 0, or a bit rate with [ParseBitRate] ("40Gbps", "200Mb/s"),
// returned as bps with frac 0.
func ParseLoad(s string) (frac float64, bps BitRate, err error) {
	t := strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || v <= 0 || v > 100 {
			return 0, 0, fmt.Errorf("%q is not a share of the line rate (want e.g. 80%%, more than 0 and at most 100%%)", s)
		}
		return v / 100, 0, nil
	}
	r, err := ParseBitRate(t)
	if err != nil {
		return 0, 0, fmt.Errorf("%v (or a share of the line rate, e.g. 80%%)", err)
	}
	return 0, r, nil
}

// Describe words a quantity v that did not parse (err from ParsePs,
// ParseBytes or ParseBitRate) as a suite reports it: above the maximum it
// names the limit, otherwise it says what v is not (what: "a size", "a
// duration", "neither bdp nor a size") and gives examples (want).
func Describe(v, what, want string, err error) string {
	var pe *ParseError
	if KindOf(err) == TooLarge && errors.As(err, &pe) {
		return fmt.Sprintf("%q is too large (at most %s)", v, pe.Max)
	}
	return fmt.Sprintf("%q is %s (%s)", v, what, want)
}
