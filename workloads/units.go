package workloads

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// unit is a unit suffix and the number of base units it stands for.
type unit struct {
	name string
	mult int64
}

// sizeUnits are the units ParseSize accepts, in the order error messages
// list them. "kB" (the SI spelling) is an alias that is not listed.
var sizeUnits = []unit{
	{"B", 1},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"kB", 1e3},
}

const sizeUnitList = "B, KB, MB, GB, TB, KiB, MiB, GiB or TiB"

// durationUnits are the units ParseDuration accepts, in picoseconds.
var durationUnits = []unit{
	{"ps", 1}, {"ns", 1e3}, {"us", 1e6}, {"µs", 1e6}, {"μs", 1e6}, {"ms", 1e9}, {"s", 1e12},
}

const durationUnitList = "ps, ns, us, µs, ms or s"

// ParseSize parses a byte count: a non-negative decimal number followed by
// an optional unit, B, KB, MB, GB, TB (powers of 1000, "kB" also accepted)
// or KiB, MiB, GiB, TiB (powers of 1024), with optional spaces in between:
// "2000000", "2MB", "2 MiB", "1.5KiB". The value must be a whole number of
// bytes that fits in an int64.
func ParseSize(s string) (int64, error) {
	num, u, err := splitQuantity(s)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: %v", s, err)
	}
	mult := int64(1)
	if u != "" {
		mult = 0
		for _, su := range sizeUnits {
			if su.name == u {
				mult = su.mult
				break
			}
		}
		if mult == 0 {
			return 0, fmt.Errorf("invalid size %q: unknown unit %q (use %s)", s, u, sizeUnitList)
		}
	}
	v, err := scaleDecimal(num, mult)
	if err != nil {
		if errors.Is(err, errNotWhole) {
			return 0, fmt.Errorf("invalid size %q: not a whole number of bytes", s)
		}
		return 0, fmt.Errorf("invalid size %q: %v", s, err)
	}
	return v, nil
}

// ParseDuration parses a non-negative duration and returns it in
// picoseconds: a decimal number followed by a unit, ps, ns, us (also µs),
// ms or s, with optional spaces in between: "10us", "2.5 ms", "0.001ns".
// The unit may be left out only for "0". The value must be a whole number
// of picoseconds that fits in an int64 (about 106 days).
func ParseDuration(s string) (int64, error) {
	num, u, err := splitQuantity(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: %v", s, err)
	}
	var mult int64
	for _, du := range durationUnits {
		if du.name == u {
			mult = du.mult
			break
		}
	}
	switch {
	case u == "":
		if strings.Trim(num, "0.") != "" {
			return 0, fmt.Errorf("invalid duration %q: missing unit (use %s)", s, durationUnitList)
		}
		mult = 1
	case mult == 0:
		return 0, fmt.Errorf("invalid duration %q: unknown unit %q (use %s)", s, u, durationUnitList)
	}
	v, err := scaleDecimal(num, mult)
	if err != nil {
		if errors.Is(err, errNotWhole) {
			return 0, fmt.Errorf("invalid duration %q: not a whole number of picoseconds", s)
		}
		return 0, fmt.Errorf("invalid duration %q: %v", s, err)
	}
	return v, nil
}

// splitQuantity splits "12.5 MiB" into its number "12.5" and unit "MiB".
func splitQuantity(s string) (num, unit string, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", "", errors.New("empty")
	}
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	if i == 0 {
		return "", "", errors.New("expected a non-negative decimal number followed by a unit")
	}
	return s[:i], strings.TrimSpace(s[i:]), nil
}

var (
	errNotWhole = errors.New("not a whole number")
	errTooLarge = errors.New("too large")
)

// maxDecimalLen bounds the length of the decimal numbers scaleDecimal
// accepts, so that hostile inputs cannot make it do big arithmetic.
const maxDecimalLen = 40

// scaleDecimal returns the decimal number num ("123", "1.25"; digits with at
// most one '.', with digits on both sides of it) times mult. It fails with
// errNotWhole when the product is not an integer and errTooLarge when it
// does not fit in an int64.
func scaleDecimal(num string, mult int64) (int64, error) {
	if len(num) > maxDecimalLen {
		return 0, errTooLarge
	}
	intPart, frac, dot := strings.Cut(num, ".")
	if intPart == "" || dot && frac == "" || !allDigits(intPart) || !allDigits(frac) {
		return 0, fmt.Errorf("malformed number %q", num)
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) == 0 && len(intPart) <= 18 && mult > 0 {
		// Fast path: no fraction and no risk of overflow parsing intPart.
		var v int64
		for i := 0; i < len(intPart); i++ {
			v = v*10 + int64(intPart[i]-'0')
		}
		if v > (1<<63-1)/mult {
			return 0, errTooLarge
		}
		return v * mult, nil
	}
	v, _ := new(big.Int).SetString(intPart+frac, 10)
	v.Mul(v, big.NewInt(mult))
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
	q, rem := new(big.Int).QuoRem(v, den, new(big.Int))
	if rem.Sign() != 0 {
		return 0, errNotWhole
	}
	if !q.IsInt64() {
		return 0, errTooLarge
	}
	return q.Int64(), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
