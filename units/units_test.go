package units

import (
	"math"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/internal/fuzzbound"
)

func TestParsePs(t *testing.T) {
	for in, want := range map[string]Ps{
		"0": 0, "0.0": 0, "0ns": 0, "7ps": 7, "1ps": 1, "500ns": 500_000, "10ns": 10e3, "2us": 2e6,
		"2µs": 2e6, "2\u03bcs": 2e6, "1.5us": 1.5e6, "2.5ms": 2.5e9, "1ms": 1e9, "1 s": 1e12,
		" 0.001ns ": 1, "1.000ns": 1000, "3600s": 3600e12, "3600000ms": 3600e12,
	} {
		if got, err := ParsePs(in); err != nil || got != want {
			t.Errorf("ParsePs(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"":                          `invalid duration "": empty`,
		"10":                        `invalid duration "10": missing unit (use ps, ns, us, µs, ms or s)`,
		"10m":                       `invalid duration "10m": unknown unit "m" (use ps, ns, us, µs, ms or s)`,
		"1h":                        `invalid duration "1h": unknown unit "h" (use ps, ns, us, µs, ms or s)`,
		"1.5ps":                     `invalid duration "1.5ps": not a whole number of picoseconds`,
		"-1us":                      `invalid duration "-1us": expected a non-negative decimal number followed by a unit`,
		"3601s":                     `invalid duration "3601s": too large (at most 3600s)`,
		"3600.000001s":              `invalid duration "3600.000001s": too large (at most 3600s)`,
		"200000000s":                `invalid duration "200000000s": too large (at most 3600s)`,
		"99999999999999999999999ns": `invalid duration "99999999999999999999999ns": too large (at most 3600s)`,
		"1e3ns":                     `invalid duration "1e3ns": unknown unit "e3ns" (use ps, ns, us, µs, ms or s)`,
		".5ns":                      `invalid duration ".5ns": malformed number ".5"`,
		"1..0ns":                    `invalid duration "1..0ns": malformed number "1..0"`,
		"0.00000000000000000001s":   `invalid duration "0.00000000000000000001s": "0.00000000000000000001" has too many decimal places`,
		"0.0000000000001s":          `invalid duration "0.0000000000001s": not a whole number of picoseconds`,
	} {
		_, err := ParsePs(in)
		if err == nil || err.Error() != want {
			t.Errorf("ParsePs(%q) = %v, want %s", in, err, want)
		}
	}
	if _, err := ParsePs("3601s"); KindOf(err) != TooLarge {
		t.Errorf("KindOf = %d", KindOf(err))
	}
}

func TestParseBitRate(t *testing.T) {
	for in, want := range map[string]BitRate{
		"100G": 100e9, "100Gbps": 100e9, "100gbit": 100e9, "25Gb/s": 25e9, "25Gbit/s": 25e9,
		"1.6T": 1.6e12, "1.6Tbps": 1.6e12, "100M": 100e6, "100mbit": 100e6, "2.5gbit": 2.5e9,
		"500kbit": 500e3, "10k": 10e3, "1000": 1000, "64bit": 64, "64bps": 64, "64b/s": 64,
		" 1 GBIT ": 1e9, "1tbit": 1e12, "100tbit": 100e12, "100T": 100e12, "1": 1,
	} {
		if got, err := ParseBitRate(in); err != nil || got != want {
			t.Errorf("ParseBitRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]Kind{
		"": Empty, "fast": NoNumber, "1.2.3gbit": Malformed, "0": NotPositive, "0mbit": NotPositive,
		"1.5bit": NotWhole, "-1gbit": NoNumber, "1gib": UnknownUnit, "101tbit": TooLarge,
		"100.000000000001T": TooLarge, "1e9": UnknownUnit, "mbit": NoNumber, ".": Malformed,
		"400GB": UnknownUnit, "400GB/s": UnknownUnit, "1P": UnknownUnit, "1x": UnknownUnit,
		"99999999999999999999G": TooLarge,
	} {
		_, err := ParseBitRate(in)
		if KindOf(err) != want {
			t.Errorf("ParseBitRate(%q) = %v, want kind %d", in, err, want)
		}
	}
	if _, err := ParseBitRate("101T"); err == nil || err.Error() != `invalid rate "101T": too large (at most 100Tbps)` {
		t.Errorf("101T: %v", err)
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]Bytes{
		"0": 0, "2000000": 2000000, "17B": 17, " 2 MiB ": 2 << 20, "2MB": 2e6, "3KB": 3000,
		"3kB": 3000, "1GB": 1e9, "2TB": 2e12, "1KiB": 1024, "4MiB": 4 << 20, "1.5KiB": 1536,
		"2GiB": 2 << 30, "1TiB": 1 << 40, "1024TiB": 1 << 50, "0.5MB": 500000, "1.000": 1, "007": 7,
	} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"":                 `invalid size "": empty`,
		"-1":               `invalid size "-1": expected a non-negative decimal number followed by a unit`,
		"2mb":              `invalid size "2mb": unknown unit "mb" (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)`,
		"1.5B":             `invalid size "1.5B": not a whole number of bytes`,
		"1.":               `invalid size "1.": malformed number "1."`,
		"1025TiB":          `invalid size "1025TiB": too large (at most 1024TiB)`,
		"1125899906842625": `invalid size "1125899906842625": too large (at most 1024TiB)`,
	} {
		if _, err := ParseBytes(in); err == nil || err.Error() != want {
			t.Errorf("ParseBytes(%q) = %v, want %s", in, err, want)
		}
	}
	if v, err := ParseBytes("1125899906842624"); err != nil || v != MaxBytes {
		t.Errorf("max: %d, %v", v, err)
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{FormatPs(0), "0ps"}, {FormatPs(1e12), "1s"}, {FormatPs(1.5e9), "1500us"}, {FormatPs(7), "7ps"},
		{FormatPs(MaxPs), "3600s"}, {FormatPs(-2000), "-2ns"}, {FormatPs(math.MinInt64), "-9223372036854775808ps"},
		{FormatBitRate(100e9), "100Gbps"}, {FormatBitRate(2.5e9), "2500Mbps"}, {FormatBitRate(1234), "1234bps"},
		{FormatBitRate(MaxBitRate), "100Tbps"},
		{FormatBytes(4 << 20), "4MiB"}, {FormatBytes(2e6), "2MB"}, {FormatBytes(1536), "1536B"},
		{FormatBytes(0), "0B"}, {FormatBytes(MaxBytes), "1024TiB"}, {FormatBytes(1e12), "1TB"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}

func TestArithmetic(t *testing.T) {
	const max = math.MaxInt64
	check := func(name string, want int64) func(int64, bool) {
		return func(got int64, ok bool) {
			t.Helper()
			if !ok || got != want {
				t.Errorf("%s = %d, %v; want %d", name, got, ok, want)
			}
		}
	}
	fails := func(name string) func(int64, bool) {
		return func(got int64, ok bool) {
			t.Helper()
			if ok {
				t.Errorf("%s = %d, want overflow", name, got)
			}
		}
	}
	check("ser 4KiB@100G", 327_680)(SerializationTime(4096, 100e9))
	check("ser 1500B@1G", 12_000_000)(SerializationTime(1500, 1e9))
	// 2 MB * 8e12 overflows int64; the 128-bit product does not.
	check("ser 2MB@100G", 160_000_000)(SerializationTime(2e6, 100e9))
	check("ser max", 90_071_992_547_409) // 2^50*8e12/1e14 rounded down(SerializationTime(MaxBytes, MaxBitRate))
	fails("ser 1PiB@1bps")(SerializationTime(MaxBytes, 1))
	fails("ser rate 0")(SerializationTime(1, 0))
	fails("ser neg")(SerializationTime(-1, 1))
	fails("ser huge")(SerializationTime(max, 1))
	check("bytesin 100G 1us", 12_500)(BytesIn(100e9, 1e6))
	check("bytesin max", 45e15)(BytesIn(MaxBitRate, MaxPs))
	fails("bytesin overflow")(BytesIn(max, max))
	check("muldiv", max)(MulDiv(max, max, max))
	fails("muldiv div0")(MulDiv(1, 1, 0))
	fails("muldiv neg")(MulDiv(-1, 1, 1))
	check("add", max)(Add(max-1, 1))
	fails("add over")(Add(max, 1))
	fails("add under")(Add(math.MinInt64, -1))
	check("add neg", -2)(Add(-5, 3))
	check("mul", 1<<62)(Mul(1<<31, 1<<31))
	fails("mul over")(Mul(1<<32, 1<<31))
	fails("mul minint")(Mul(math.MinInt64, -1))
	fails("mul minint2")(Mul(-1, math.MinInt64))
	check("mul neg", -12)(Mul(-3, 4))
}

// FuzzParse checks that the parsers never panic, that what they accept is in
// range, and that Format round-trips every in-range value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"100G", "1.6T", "25Gb/s", "4MiB", "1KB", "1.5KiB", "1ms", "2µs", "0", ".", "1e9", "99999999999999999999T", "0.00000000000000000001s"} {
		f.Add(s, int64(0))
	}
	f.Add("", int64(math.MaxInt64))
	f.Add("", int64(math.MinInt64))
	f.Fuzz(func(t *testing.T, s string, n int64) {
		fuzzbound.Default(t, func() {
			if v, err := ParsePs(s); err == nil && (v < 0 || v > MaxPs) {
				t.Fatalf("ParsePs(%q) = %d", s, v)
			} else if err == nil && !roundTrips(v, FormatPs, ParsePs) {
				t.Fatalf("ParsePs(FormatPs(%d)) differs", v)
			}
			if v, err := ParseBitRate(s); err == nil && (v < 1 || v > MaxBitRate) {
				t.Fatalf("ParseBitRate(%q) = %d", s, v)
			} else if err == nil && !roundTrips(v, FormatBitRate, ParseBitRate) {
				t.Fatalf("ParseBitRate(FormatBitRate(%d)) differs", v)
			}
			if v, err := ParseBytes(s); err == nil && (v < 0 || v > MaxBytes) {
				t.Fatalf("ParseBytes(%q) = %d", s, v)
			} else if err == nil && !roundTrips(v, FormatBytes, ParseBytes) {
				t.Fatalf("ParseBytes(FormatBytes(%d)) differs", v)
			}
			u := uint64(n)
			if p := int64(u % uint64(MaxPs+1)); !roundTrips(p, FormatPs, ParsePs) {
				t.Fatalf("ParsePs(FormatPs(%d)) = %q differs", p, FormatPs(p))
			}
			if r := int64(u%uint64(MaxBitRate)) + 1; !roundTrips(r, FormatBitRate, ParseBitRate) {
				t.Fatalf("ParseBitRate(FormatBitRate(%d)) = %q differs", r, FormatBitRate(r))
			}
			if b := int64(u % uint64(MaxBytes+1)); !roundTrips(b, FormatBytes, ParseBytes) {
				t.Fatalf("ParseBytes(FormatBytes(%d)) = %q differs", b, FormatBytes(b))
			}
			// Out of range values format without panicking and do not parse.
			if n > MaxPs || n < 0 {
				if _, err := ParsePs(FormatPs(n)); err == nil {
					t.Fatalf("ParsePs(FormatPs(%d)) accepted", n)
				}
			}
			// The checked arithmetic agrees with exact arithmetic when it
			// reports success.
			if v, ok := SerializationTime(n%(MaxBytes+1), int64(u%uint64(MaxBitRate))+1); ok && v < 0 {
				t.Fatalf("SerializationTime negative: %d", v)
			}
		})
	})
}

func roundTrips(v int64, format func(int64) string, parse func(string) (int64, error)) bool {
	back, err := parse(format(v))
	return err == nil && back == v
}

// The messages the suite, the CLI and workload specs show for bad sizes
// and durations.
func TestParseBytesMessages(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"2000000", 2000000}, {"17B", 17}, {" 2 MiB ", 2 << 20},
		{"2MB", 2e6}, {"3KB", 3000}, {"3kB", 3000}, {"1GB", 1e9}, {"2TB", 2e12},
		{"1KiB", 1024}, {"1.5KiB", 1536}, {"2GiB", 2 << 30}, {"1TiB", 1 << 40},
		{"0.5MB", 500000}, {"1.000", 1}, {"007", 7},
	} {
		got, err := ParseBytes(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", `invalid size "": empty`},
		{"-1", `invalid size "-1": expected a non-negative decimal number followed by a unit`},
		{"MB", `invalid size "MB": expected a non-negative decimal number followed by a unit`},
		{"2XB", `invalid size "2XB": unknown unit "XB" (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)`},
		{"2mb", `invalid size "2mb": unknown unit "mb" (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)`},
		{"1.5B", `invalid size "1.5B": not a whole number of bytes`},
		{"1.", `invalid size "1.": malformed number "1."`},
		{".5KB", `invalid size ".5KB": malformed number ".5"`},
		{"1.2.3", `invalid size "1.2.3": malformed number "1.2.3"`},
		{"9223372036854775808", `invalid size "9223372036854775808": too large (at most 1024TiB)`},
		{"9000000TiB", `invalid size "9000000TiB": too large (at most 1024TiB)`},
		{"1025TiB", `invalid size "1025TiB": too large (at most 1024TiB)`},
	} {
		if _, err := ParseBytes(tc.in); err == nil || err.Error() != tc.want {
			t.Errorf("ParseBytes(%q) = %v, want %s", tc.in, err, tc.want)
		}
	}
	if v, err := ParseBytes("1024TiB"); err != nil || v != 1<<50 {
		t.Errorf("max (1 PiB): %d, %v", v, err)
	}
}

func TestParsePsMessages(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"0.0", 0}, {"7ps", 7}, {"10ns", 10e3}, {"10us", 10e6}, {"10µs", 10e6},
		{"10\u03bcs", 10e6}, {"2.5ms", 2.5e9}, {"1 s", 1e12}, {"0.001ns", 1},
	} {
		got, err := ParsePs(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParsePs(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"10", `invalid duration "10": missing unit (use ps, ns, us, µs, ms or s)`},
		{"10m", `invalid duration "10m": unknown unit "m" (use ps, ns, us, µs, ms or s)`},
		{"1.5ps", `invalid duration "1.5ps": not a whole number of picoseconds`},
		{"-1us", `invalid duration "-1us": expected a non-negative decimal number followed by a unit`},
		{"200000000s", `invalid duration "200000000s": too large (at most 3600s)`},
		{"3601s", `invalid duration "3601s": too large (at most 3600s)`},
	} {
		if _, err := ParsePs(tc.in); err == nil || err.Error() != tc.want {
			t.Errorf("ParsePs(%q) = %v, want %s", tc.in, err, tc.want)
		}
	}
}

func TestFormatPsBrief(t *testing.T) {
	for p, want := range map[Ps]string{0: "0", 10 * Millisecond: "10ms", 250 * Microsecond: "250us", Second: "1000ms", 1_234_567: "1.235us", 1500 * Nanosecond: "1.500us"} {
		if got := FormatPsBrief(p); got != want {
			t.Errorf("FormatPsBrief(%d) = %q, want %q", p, got, want)
		}
	}
}

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		p    Ps
		want time.Duration
	}{{0, 0}, {999, 0}, {1500, time.Nanosecond}, {200 * Millisecond, 200 * time.Millisecond}, {MaxPs, time.Hour}} {
		if got := Duration(c.p); got != c.want {
			t.Errorf("Duration(%d) = %v, want %v", c.p, got, c.want)
		}
	}
}
