package suite

import (
	"encoding"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// Each quantity type decodes its spellings, keeps the text as written,
// and marshals to text that decodes to the same value; the empty text is
// unset.
func TestQuantityTextRoundTrip(t *testing.T) {
	type text interface {
		encoding.TextUnmarshaler
		encoding.TextMarshaler
		String() string
		IsSet() bool
	}
	cases := []struct {
		in    string
		new   func() text
		value func(text) any
		want  any
	}{
		{"100us", func() text { return new(Duration) }, func(x text) any { return x.(*Duration).Ps() }, int64(100e6)},
		{"1.5ms", func() text { return new(Duration) }, func(x text) any { return x.(*Duration).Ps() }, int64(1.5e9)},
		{"0", func() text { return new(Duration) }, func(x text) any { return x.(*Duration).Ps() }, int64(0)},
		{"48MiB", func() text { return new(Size) }, func(x text) any { return x.(*Size).Bytes() }, int64(48 << 20)},
		{"bdp", func() text { return new(Queue) }, func(x text) any { return x.(*Queue).BDP() }, true},
		{"longest-path", func() text { return new(Queue) }, func(x text) any { return x.(*Queue).LongestPath() }, true},
		{"512KiB", func() text { return new(Queue) }, func(x text) any { return x.(*Queue).Bytes() }, int64(512 << 10)},
		{"fastest", func() text { return new(Interval) }, func(x text) any { return x.(*Interval).Fastest() }, true},
		{"1ms", func() text { return new(Interval) }, func(x text) any { return x.(*Interval).Ps() }, int64(1e9)},
		{"off", func() text { return new(StallAfter) }, func(x text) any { return x.(*StallAfter).Off() }, true},
		{"10ms", func() text { return new(StallAfter) }, func(x text) any { return x.(*StallAfter).Ps() }, int64(10e9)},
		{"80%", func() text { return new(Pace) }, func(x text) any { return x.(*Pace).Share() }, 0.8},
		{"40Gbps", func() text { return new(Pace) }, func(x text) any { return x.(*Pace).BitRate() }, int64(40e9)},
	}
	for _, c := range cases {
		x := c.new()
		if err := x.UnmarshalText([]byte(c.in)); err != nil {
			t.Errorf("%T %q: %v", x, c.in, err)
			continue
		}
		if got := c.value(x); got != c.want || x.String() != c.in || !x.IsSet() {
			t.Errorf("%T %q: value %v, text %q, set %v; want %v", x, c.in, got, x.String(), x.IsSet(), c.want)
		}
		b, _ := x.MarshalText()
		y := c.new()
		if err := y.UnmarshalText(b); err != nil || c.value(y) != c.want {
			t.Errorf("%T %q: marshals to %q, which decodes to %v (%v)", x, c.in, b, c.value(y), err)
		}
		if err := x.UnmarshalText(nil); err != nil || x.IsSet() {
			t.Errorf("%T: the empty text is not unset: %v", x, err)
		}
	}
	// In YAML: a job written out decodes to the same quantities.
	j := Job{Name: "j", Size: mustSize("48MiB"), Start: mustDuration("10us"), Rate: must(ParsePace("80%"))}
	b, err := yaml.MarshalWithOptions(j, yaml.OmitZero())
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, "size: 48MiB") || strings.Contains(s, "gap:") {
		t.Errorf("marshalled job:\n%s", s)
	}
	var back Job
	if err := yaml.Unmarshal(b, &back); err != nil || back.Size != j.Size || back.Start != j.Start || back.Rate != j.Rate || back.Gap.IsSet() {
		t.Errorf("round trip: %+v, %v; want %+v", back, err, j)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A quantity or word that does not decode is reported where it is, and
// the rest of the document is still checked: its siblings, its parents and
// the matrix values (as when the checker parsed the strings); only what
// follows from the missing value is not reported.
func TestUndecodedValueKeepsTheRestChecked(t *testing.T) {
	doc := `fabric: {spec: 'leafspine:leaves=2,spines=2,hosts_per_leaf=4'}
jobs:
  - {name: perm, workload: permutation, size: 2Mib}
faults:
  - {kind: down, at: soon}
features:
  ecmp: {mode: spray, staleness: 1us}
matrix:
  transport.lb: [ops, bogus]
`
	_, err := Parse("t.yaml", []byte(doc))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`t.yaml:3:47: jobs[0].size: "2Mib" is not a size`,
		`t.yaml:5:5: faults[0]: set one of link, port or nic`,
		`t.yaml:5:22: faults[0].at: "soon" is not a duration`,
		`t.yaml:7:16: features.ecmp.mode: unknown mode "spray"`,
		`t.yaml:9:23: matrix["transport.lb"][1]: unknown load balancer "bogus"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error:\n%v\nwant a line containing\n%s", err, want)
		}
	}
	// The staleness is checked against a mode that decoded; the size is
	// not also "required".
	if s := err.Error(); strings.Contains(s, "staleness") || strings.Contains(s, "required") {
		t.Errorf("follow-on errors:\n%s", s)
	}
}
