package units

import (
	"strings"
	"testing"
)

func TestParseSpeed(t *testing.T) {
	good := map[string]BitRate{"400G": 400e9, "100G": 100e9, "25G": 25e9, "1.6T": 1.6e12, "800Gbps": 800e9, "100M": 100e6, "2.5G": 2.5e9, "100T": 100e12}
	for s, want := range good {
		if got, err := ParseSpeed(s); err != nil || got != want {
			t.Errorf("ParseSpeed(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "400", "G", "fast", "400 G", "400g", "-1G", "0G", "0.0000001M", "101T", "1e3G", "400GB", "99999999999999999999G"} {
		if got, err := ParseSpeed(s); err == nil {
			t.Errorf("ParseSpeed(%q) = %d, want an error", s, got)
		}
	}
}

func TestParseTCRate(t *testing.T) {
	good := map[string]BitRate{
		"100mbit": 100_000_000, "1gbit": 1_000_000_000, "10Gbps": 10_000_000_000,
		"2.5gbit": 2_500_000_000, "500kbit": 500_000, "1000": 1000, "64bit": 64,
		" 1 GBIT ": 1_000_000_000, "1tbit": 1_000_000_000_000, "100tbit": 100_000_000_000_000,
	}
	for s, want := range good {
		got, err := ParseTCRate(s)
		if err != nil || got != want {
			t.Errorf("ParseTCRate(%q) = %d, %v; want %d", s, got, err, want)
		}
		if back, err := ParseTCRate(FormatTCRate(want)); err != nil || back != want {
			t.Errorf("ParseTCRate(FormatTCRate(%d)) = %d, %v", want, back, err)
		}
	}
	for _, s := range []string{"", "fast", "1.2.3gbit", "0", "0mbit", "1.5bit", "-1gbit", "1gib", "101tbit", "1e9", "mbit", "."} {
		if v, err := ParseTCRate(s); err == nil {
			t.Errorf("ParseTCRate(%q) = %d, want an error", s, v)
		}
	}
	if FormatTCRate(1_000_000_000) != "1gbit" || FormatTCRate(2_500_000_000) != "2500mbit" || FormatTCRate(1234) != "1234bit" {
		t.Errorf("FormatTCRate: %s %s %s", FormatTCRate(1_000_000_000), FormatTCRate(2_500_000_000), FormatTCRate(1234))
	}
}

func TestParseLoad(t *testing.T) {
	for s, want := range map[string]float64{"80%": 0.8, " 100 %": 1, "0.5%": 0.005} {
		if frac, bps, err := ParseLoad(s); err != nil || frac != want || bps != 0 {
			t.Errorf("ParseLoad(%q) = %g, %d, %v; want %g, 0", s, frac, bps, err, want)
		}
	}
	for s, want := range map[string]BitRate{"40Gbps": 40e9, "200Mb/s": 200e6} {
		if frac, bps, err := ParseLoad(s); err != nil || bps != want || frac != 0 {
			t.Errorf("ParseLoad(%q) = %g, %d, %v; want 0, %d", s, frac, bps, err, want)
		}
	}
	for s, want := range map[string]string{
		"0%":     `"0%" is not a share of the line rate (want e.g. 80%, more than 0 and at most 100%)`,
		"101%":   `"101%" is not a share of the line rate`,
		"NaN%":   `"NaN%" is not a share of the line rate`,
		"fast":   "(or a share of the line rate, e.g. 80%)",
		"-1Gbps": "(or a share of the line rate, e.g. 80%)",
	} {
		if _, _, err := ParseLoad(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseLoad(%q) error %v, want it to contain %q", s, err, want)
		}
	}
}
