// Package units is fabricbench's one implementation of the physical
// quantities users write and the code computes with: time in picoseconds
// ([Ps]), rates in bits per second ([BitRate]) and sizes in bytes ([Bytes]).
// It has one parser and one formatter per quantity, the documented maximum
// of each, and overflow-checked arithmetic for the products that do not fit
// in 64 bits (a size in bits times picoseconds per second is already 8e12
// times the size).
//
// It imports nothing of fabricbench, so every package may import it.
//
// # Maxima
//
// Every value a user writes must lie between 0 and the maximum of its
// quantity; above it the parser's error names the maximum. The maxima are
// chosen so that every user-facing quantity, and its size in bits, is
// exactly representable as a float64 (below 2^53), and so that real inputs
// are far from them:
//
//   - [MaxPs], 1 hour (3.6e15 ps) of simulated time. The simulator runs a
//     16-host fat tree for well under a millisecond of simulated time and
//     the nightly suite for tens of milliseconds; an hour is a million times
//     the longest run anyone has asked for, and still leaves a factor of
//     2500 before int64 picoseconds overflow (106 days), so sums of a few
//     user durations cannot overflow.
//   - [MaxBitRate], 100 Tb/s (1e14 bit/s): over 60 times the fastest
//     Ethernet port in sight (1.6T), and the limit the containerlab and
//     hardware-file parsers have always applied.
//   - [MaxBytes], 1 PiB (2^50 bytes): a flow or queue that large needs more
//     than 80 seconds even at 100 Tb/s; its size in bits (2^53) is exact
//     in float64.
//
// With these maxima the serialisation time of MaxBytes at 1 bit/s is about
// 9e27 ps, far beyond int64, which is why [SerializationTime] and
// [BytesIn] compute in 128 bits (math/bits) and report overflow instead of
// wrapping.
//
// # Spellings
//
// A quantity is a non-negative decimal number ("12", "2.5"; digits on both
// sides of a '.', no sign or exponent) followed by a unit, with optional
// spaces around the number and between number and unit. The value must be
// a whole number of the base unit.
//
//   - durations ([ParsePs]): ps, ns, us (also µs, μs), ms, s, e.g. "500ns",
//     "2us", "2µs", "1.5ms". The unit may be left out only for zero.
//   - rates ([ParseBitRate]): an optional SI prefix k, M, G or T and an
//     optional bit/s suffix bit, bps, b/s or bit/s, case-insensitive, e.g.
//     "100G", "100Gbps", "100gbit", "25Gb/s", "1.6T", "64bit", "1000" (a
//     bare number is bits per second). "bps" means bits, not bytes, and an
//     upper-case "B/s" (bytes per second) is refused. A rate must be
//     positive.
//   - sizes ([ParseBytes]): B, KB (also kB), MB, GB, TB (powers of 1000) or
//     KiB, MiB, GiB, TiB (powers of 1024), case-sensitive, e.g. "4MiB",
//     "1KB", "1.5KiB"; a bare number is bytes.
//
// Format functions write the integer in the largest unit that represents
// the value exactly, so Parse(Format(x)) == x for every x in range.
package units

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Ps is a point in time or a duration in picoseconds.
//
// Ps, BitRate and Bytes are aliases of int64, not defined types, so that the
// code that computes in int64 (and transport.Time, an alias of Ps) uses them
// without conversions.
type Ps = int64

// BitRate is a rate in bits per second.
type BitRate = int64

// Bytes is a size in bytes.
type Bytes = int64

// Time units.
const (
	Picosecond  Ps = 1
	Nanosecond  Ps = 1000 * Picosecond
	Microsecond Ps = 1000 * Nanosecond
	Millisecond Ps = 1000 * Microsecond
	Second      Ps = 1000 * Millisecond
	Hour        Ps = 3600 * Second
)

// Rate units (decimal multiples of bits per second).
const (
	BitPerSecond BitRate = 1
	Kbps         BitRate = 1000 * BitPerSecond
	Mbps         BitRate = 1000 * Kbps
	Gbps         BitRate = 1000 * Mbps
	Tbps         BitRate = 1000 * Gbps
)

// Size units.
const (
	Byte Bytes = 1
	KB   Bytes = 1000 * Byte
	MB   Bytes = 1000 * KB
	GB   Bytes = 1000 * MB
	TB   Bytes = 1000 * GB
	KiB  Bytes = 1 << 10
	MiB  Bytes = 1 << 20
	GiB  Bytes = 1 << 30
	TiB  Bytes = 1 << 40
	PiB  Bytes = 1 << 50
)

// The documented maxima (see the package documentation for why).
const (
	MaxPs      Ps      = Hour
	MaxBitRate BitRate = 100 * Tbps
	MaxBytes   Bytes   = PiB
)

// Kind classifies a parse error, so that callers with their own message
// conventions can tell the cases apart.
type Kind uint8

// Parse error kinds.
const (
	Empty       Kind = iota + 1 // only spaces
	NoNumber                    // does not start with a digit or '.'
	Malformed                   // the number is not digits[.digits]
	UnknownUnit                 // the unit is not one of the quantity's
	MissingUnit                 // a non-zero duration without a unit
	NotWhole                    // not a whole number of the base unit
	TooPrecise                  // more than 19 significant decimal places
	TooLarge                    // above the quantity's maximum
	NotPositive                 // a zero rate
)

// ParseError is the error of ParsePs, ParseBitRate and ParseBytes. Its
// message has the form `invalid QUANTITY "INPUT": DETAIL`.
type ParseError struct {
	Quantity string // "duration", "rate" or "size"
	Input    string // the string parsed
	Kind     Kind
	Detail   string // what follows "invalid QUANTITY "INPUT": "
	Max      string // the quantity's maximum, formatted
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("invalid %s %q: %s", e.Quantity, e.Input, e.Detail)
}

// KindOf returns the Kind of a parse error from this package (also when
// wrapped), or 0.
func KindOf(err error) Kind {
	var pe *ParseError
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return 0
}

// unit is a unit suffix and the number of base units it stands for.
type unit struct {
	name string
	mult uint64
}

var psUnits = []unit{
	{"ps", 1}, {"ns", 1e3}, {"us", 1e6}, {"\u00b5s", 1e6}, {"\u03bcs", 1e6}, {"ms", 1e9}, {"s", 1e12},
}

const psUnitList = "ps, ns, us, µs, ms or s"

// byteUnits are the size units, in the order error messages list them.
// "kB" (the SI spelling) is an alias that is not listed.
var byteUnits = []unit{
	{"B", 1},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"kB", 1e3},
}

const byteUnitList = "B, KB, MB, GB, TB, KiB, MiB, GiB or TiB"

var ratePrefixes = map[byte]uint64{'k': 1e3, 'm': 1e6, 'g': 1e9, 't': 1e12}

const rateUnitList = "bit/s with an optional k, M, G or T prefix: bit, bps, b/s, e.g. 100G, 100Gbps, 100gbit, 25Gb/s"

// ParsePs parses a duration (see the package documentation for the
// spellings) into picoseconds, at most MaxPs.
func ParsePs(s string) (Ps, error) {
	perr := func(k Kind, format string, a ...any) (Ps, error) {
		return 0, &ParseError{"duration", s, k, fmt.Sprintf(format, a...), FormatPs(MaxPs)}
	}
	num, u, kind, detail := split(s)
	if kind != 0 {
		return perr(kind, "%s", detail)
	}
	var mult uint64
	for _, du := range psUnits {
		if du.name == u {
			mult = du.mult
		}
	}
	if u == "" {
		if strings.Trim(num, "0.") != "" {
			return perr(MissingUnit, "missing unit (use %s)", psUnitList)
		}
		mult = 1
	}
	if mult == 0 {
		return perr(UnknownUnit, "unknown unit %q (use %s)", u, psUnitList)
	}
	v, kind := scale(num, mult, uint64(MaxPs))
	switch kind {
	case 0:
		return Ps(v), nil
	case NotWhole:
		return perr(kind, "not a whole number of picoseconds")
	}
	return perr(kind, "%s", numDetail(kind, num, FormatPs(MaxPs)))
}

// ParseBitRate parses a rate (see the package documentation for the
// spellings) into bits per second, between 1 and MaxBitRate.
func ParseBitRate(s string) (BitRate, error) {
	perr := func(k Kind, format string, a ...any) (BitRate, error) {
		return 0, &ParseError{"rate", s, k, fmt.Sprintf(format, a...), FormatBitRate(MaxBitRate)}
	}
	num, u, kind, detail := split(s)
	if kind != 0 {
		return perr(kind, "%s", detail)
	}
	mult, ok := rateUnit(u)
	if !ok {
		return perr(UnknownUnit, "unknown unit %q (use %s)", u, rateUnitList)
	}
	v, kind := scale(num, mult, uint64(MaxBitRate))
	switch kind {
	case 0:
		if v == 0 {
			return perr(NotPositive, "a rate must be positive")
		}
		return BitRate(v), nil
	case NotWhole:
		return perr(kind, "not a whole number of bits per second")
	}
	return perr(kind, "%s", numDetail(kind, num, FormatBitRate(MaxBitRate)))
}

// rateUnit returns the multiplier of a rate unit: an optional prefix k, m, g,
// t and an optional suffix bit, bps, b/s, bit/s (case-insensitive, except
// that "B/s" is bytes and refused).
func rateUnit(u string) (uint64, bool) {
	if strings.Contains(u, "B/s") {
		return 0, false
	}
	l := strings.ToLower(u)
	mult := uint64(1)
	if l != "" {
		if m, ok := ratePrefixes[l[0]]; ok {
			mult, l = m, l[1:]
		}
	}
	switch l {
	case "", "bit", "bps", "b/s", "bit/s":
		return mult, true
	}
	return 0, false
}

// ParseBytes parses a size (see the package documentation for the
// spellings) into bytes, at most MaxBytes.
func ParseBytes(s string) (Bytes, error) {
	perr := func(k Kind, format string, a ...any) (Bytes, error) {
		return 0, &ParseError{"size", s, k, fmt.Sprintf(format, a...), FormatBytes(MaxBytes)}
	}
	num, u, kind, detail := split(s)
	if kind != 0 {
		return perr(kind, "%s", detail)
	}
	mult := uint64(1)
	if u != "" {
		mult = 0
		for _, su := range byteUnits {
			if su.name == u {
				mult = su.mult
			}
		}
		if mult == 0 {
			return perr(UnknownUnit, "unknown unit %q (use %s)", u, byteUnitList)
		}
	}
	v, kind := scale(num, mult, uint64(MaxBytes))
	switch kind {
	case 0:
		return Bytes(v), nil
	case NotWhole:
		return perr(kind, "not a whole number of bytes")
	}
	return perr(kind, "%s", numDetail(kind, num, FormatBytes(MaxBytes)))
}

func numDetail(k Kind, num, max string) string {
	switch k {
	case Malformed:
		return fmt.Sprintf("malformed number %q", num)
	case TooPrecise:
		return fmt.Sprintf("%q has too many decimal places", num)
	}
	return "too large (at most " + max + ")"
}

// split splits " 12.5 MiB " into its number "12.5" and unit "MiB".
func split(s string) (num, unit string, k Kind, detail string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", "", Empty, "empty"
	}
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	if i == 0 {
		return "", "", NoNumber, "expected a non-negative decimal number followed by a unit"
	}
	return s[:i], strings.TrimSpace(s[i:]), 0, ""
}

// pow10 holds 10^0 to 10^19, all that fit in a uint64.
var pow10 = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// scale returns the decimal number num (digits, optionally a '.' with
// digits on both sides of it) times mult, exactly, or the Kind of error:
// Malformed, NotWhole, TooPrecise or TooLarge (above max, which must be
// below 2^63).
func scale(num string, mult, max uint64) (uint64, Kind) {
	ip, fp, dot := strings.Cut(num, ".")
	if ip == "" || dot && fp == "" || !digits(ip) || !digits(fp) {
		return 0, Malformed
	}
	var whole uint64
	for i := 0; i < len(ip); i++ {
		whole = whole*10 + uint64(ip[i]-'0')
		if whole > max {
			return 0, TooLarge
		}
	}
	hi, v := bits.Mul64(whole, mult)
	if hi != 0 || v > max {
		return 0, TooLarge
	}
	fp = strings.TrimRight(fp, "0")
	if fp == "" {
		return v, 0
	}
	if len(fp) >= len(pow10) {
		return 0, TooPrecise
	}
	f, _ := strconv.ParseUint(fp, 10, 64) // at most 19 digits: fits
	// f*mult / 10^len(fp), exactly: f < 10^len(fp), so hi < 10^len(fp)
	// and Div64 cannot panic.
	hi, lo := bits.Mul64(f, mult)
	q, rem := bits.Div64(hi, lo, pow10[len(fp)])
	if rem != 0 {
		return 0, NotWhole
	}
	if v += q; v > max {
		return 0, TooLarge
	}
	return v, 0
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// format writes v as an integer in the largest unit of us (in decreasing
// order of size; the last has multiplier 1) that divides it.
func format(v int64, us []unit) string {
	sign, m := "", uint64(v)
	if v < 0 {
		sign, m = "-", -m // two's complement: also right for math.MinInt64
	}
	for _, u := range us {
		if m%u.mult == 0 && (m >= u.mult || u.mult == 1) {
			return sign + strconv.FormatUint(m/u.mult, 10) + u.name
		}
	}
	return sign + strconv.FormatUint(m, 10) + us[len(us)-1].name
}

var (
	psFormat   = []unit{{"s", 1e12}, {"ms", 1e9}, {"us", 1e6}, {"ns", 1e3}, {"ps", 1}}
	rateFormat = []unit{{"Tbps", 1e12}, {"Gbps", 1e9}, {"Mbps", 1e6}, {"kbps", 1e3}, {"bps", 1}}
	byteFormat = []unit{{"TiB", 1 << 40}, {"TB", 1e12}, {"GiB", 1 << 30}, {"GB", 1e9}, {"MiB", 1 << 20}, {"MB", 1e6}, {"KiB", 1 << 10}, {"KB", 1e3}, {"B", 1}}
)

// FormatPs writes a duration as an integer in the largest of s, ms, us, ns
// and ps that represents it exactly: "1s", "1500us", "7ps". Zero is "0ps".
// ParsePs(FormatPs(p)) == p for 0 <= p <= MaxPs.
func FormatPs(p Ps) string { return format(p, psFormat) }

// FormatPsBrief writes a duration for messages and descriptions: "0", a
// whole number of ms or us ("10ms", "250us"), else us with three decimals
// ("1.234us": unlike FormatPs, not exact below a nanosecond).
func FormatPsBrief(p Ps) string {
	switch {
	case p == 0:
		return "0"
	case p%1e9 == 0:
		return fmt.Sprintf("%dms", p/1e9)
	case p%1e6 == 0:
		return fmt.Sprintf("%dus", p/1e6)
	}
	return fmt.Sprintf("%.3fus", float64(p)/1e6)
}

// FormatBitRate writes a rate as an integer in the largest of Tbps, Gbps,
// Mbps, kbps and bps that represents it exactly: "100Gbps", "2500Mbps".
// ParseBitRate(FormatBitRate(r)) == r for 1 <= r <= MaxBitRate.
func FormatBitRate(r BitRate) string { return format(r, rateFormat) }

// FormatBytes writes a size as an integer in the largest unit that
// represents it exactly, binary units first: "4MiB", "2MB", "1536B".
// ParseBytes(FormatBytes(b)) == b for 0 <= b <= MaxBytes (1PiB is written
// "1024TiB").
func FormatBytes(b Bytes) string { return format(b, byteFormat) }

// Add returns a+b and whether it did not overflow int64.
func Add(a, b int64) (int64, bool) {
	s := a + b
	return s, (s > a) == (b > 0)
}

// Mul returns a*b and whether it did not overflow int64.
func Mul(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	if p/b != a || (a == -1 && b == -1<<63) || (b == -1 && a == -1<<63) {
		return 0, false
	}
	return p, true
}

// MulDiv returns a*b/c rounded down, computed in 128 bits, and whether the
// arguments were valid (a, b >= 0, c > 0) and the result fits in an int64.
func MulDiv(a, b, c int64) (int64, bool) {
	if a < 0 || b < 0 || c <= 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return 0, false // the quotient needs more than 64 bits
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	if q > 1<<63-1 {
		return 0, false
	}
	return int64(q), true
}

// SerializationTime returns how long b bytes take to send at rate r,
// rounded down to a picosecond (b*8e12/r), and whether b >= 0, r > 0 and
// the result fits in an int64. The product b*8e12 overflows int64 from
// about 1.15 MB; here it is computed in 128 bits.
func SerializationTime(b Bytes, r BitRate) (Ps, bool) {
	if b < 0 || b > (1<<63-1)/8 {
		return 0, false
	}
	return MulDiv(8*b, int64(Second), r)
}

// Duration returns p as a time.Duration, rounded down to a nanosecond
// (every Ps fits: time.Duration counts nanoseconds in an int64).
func Duration(p Ps) time.Duration { return time.Duration(p / Nanosecond) }

// BytesIn returns how many whole bytes rate r sends in time t (r*t/8e12,
// rounded down), and whether r, t >= 0 and the result fits in an int64
// (always when r <= MaxBitRate and t <= MaxPs).
func BytesIn(r BitRate, t Ps) (Bytes, bool) {
	return MulDiv(r, t, 8*int64(Second))
}
