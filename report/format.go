package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// fmtNum formats a measurement compactly: 3–4 significant digits, no
// exponent for everyday magnitudes.
func fmtNum(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 0):
		if v > 0 {
			return "+Inf"
		}
		return "-Inf"
	case a == 0:
		return "0"
	case a >= 1e9 || a < 1e-3:
		return strconv.FormatFloat(v, 'g', 3, 64)
	case a >= 1000:
		return trimZeros(strconv.FormatFloat(v, 'f', 0, 64))
	case a >= 100:
		return trimZeros(strconv.FormatFloat(v, 'f', 1, 64))
	case a >= 1:
		return trimZeros(strconv.FormatFloat(v, 'f', 2, 64))
	default:
		return trimZeros(strconv.FormatFloat(v, 'f', 3, 64))
	}
}

func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// fmtUs formats a time given in microseconds with a readable unit.
func fmtUs(us float64) string {
	if !finite(us) {
		return fmtNum(us)
	}
	switch a := math.Abs(us); {
	case a >= 1e6:
		return fmtNum(us/1e6) + " s"
	case a >= 1e3:
		return fmtNum(us/1e3) + " ms"
	case a >= 1 || a == 0:
		return fmtNum(us) + " µs"
	default:
		return fmtNum(us*1e3) + " ns"
	}
}

// fmtBytes formats a size in binary units (as the suites are written).
func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		v /= unit
		if v < unit || u == "TiB" {
			return fmtNum(v) + " " + u
		}
	}
	return fmt.Sprintf("%d B", n)
}

// fmtSeconds formats a wall-clock duration in seconds.
func fmtSeconds(s float64) string {
	if !finite(s) {
		return fmtNum(s)
	}
	if s < 60 {
		return fmtNum(s) + " s"
	}
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func fmtCount(n uint64) string {
	s := strconv.FormatUint(n, 10)
	if len(s) <= 4 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteString(",")
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}
