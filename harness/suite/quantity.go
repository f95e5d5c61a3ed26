package suite

import (
	"fmt"
	"time"

	"github.com/fabricbench/fabricbench/kpis"
	"github.com/fabricbench/fabricbench/units"
)

// The suite's quantities decode into these types (encoding.TextUnmarshaler):
// the suite's walker decodes each one at its value's position, so that a
// quantity that does not parse is reported at file:line:col by the decode
// itself, and Resolve uses the typed values without parsing them again.
// Each keeps the text it was written as: the checker's range messages and
// descriptions quote it as the user wrote it, and MarshalText gives it back
// (text that decodes to the same value), for the YAML round trip of a
// suite (Points of a Suite not made by Load).
//
// The empty text is the unset quantity (the field's default applies, see
// types.go); null decodes to it too. The ranges of each field are checked
// by the checker (validate.go), which knows the field's limits.

// Duration is a duration (units.Ps), e.g. 100us.
type Duration struct {
	ps   units.Ps
	text string
}

// ParseDuration decodes a duration as a suite field does.
func ParseDuration(s string) (Duration, error) {
	var d Duration
	err := d.UnmarshalText([]byte(s))
	return d, err
}

func mustDuration(s string) Duration {
	d, err := ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}

// UnmarshalText decodes a duration: units.ParsePs's spellings.
func (d *Duration) UnmarshalText(b []byte) error {
	s := string(b)
	*d = Duration{}
	if s == "" {
		return nil
	}
	ps, err := units.ParsePs(s)
	if err != nil {
		return fmt.Errorf("%s", units.Describe(s, "not a duration", wantDur, err))
	}
	*d = Duration{ps: ps, text: s}
	return nil
}

// MarshalText gives the text as written.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.text), nil }

// Ps is the duration in picoseconds (0 when unset).
func (d Duration) Ps() units.Ps { return d.ps }

// IsSet reports whether the suite gave the duration.
func (d Duration) IsSet() bool { return d.text != "" }

// IsZero reports whether the duration is unset (YAML's omitzero).
func (d Duration) IsZero() bool { return !d.IsSet() }

// String is the text as written ("" when unset).
func (d Duration) String() string { return d.text }

// Size is a size (units.Bytes), e.g. 2MiB.
type Size struct {
	n    units.Bytes
	text string
}

// ParseSize decodes a size as a suite field does.
func ParseSize(s string) (Size, error) {
	var z Size
	err := z.UnmarshalText([]byte(s))
	return z, err
}

func mustSize(s string) Size {
	z, err := ParseSize(s)
	if err != nil {
		panic(err)
	}
	return z
}

// UnmarshalText decodes a size: units.ParseBytes's spellings.
func (z *Size) UnmarshalText(b []byte) error {
	s := string(b)
	*z = Size{}
	if s == "" {
		return nil
	}
	n, err := units.ParseBytes(s)
	if err != nil {
		return fmt.Errorf("%s", units.Describe(s, "not a size", wantSize, err))
	}
	*z = Size{n: n, text: s}
	return nil
}

// MarshalText gives the text as written.
func (z Size) MarshalText() ([]byte, error) { return []byte(z.text), nil }

// Bytes is the size in bytes (0 when unset).
func (z Size) Bytes() units.Bytes { return z.n }

// IsSet reports whether the suite gave the size.
func (z Size) IsSet() bool { return z.text != "" }

// IsZero reports whether the size is unset (YAML's omitzero).
func (z Size) IsZero() bool { return !z.IsSet() }

// String is the text as written ("" when unset).
func (z Size) String() string { return z.text }

// Elephant is features.srv6.elephant: a positive size, worded as that
// field always was.
type Elephant struct{ Size }

// UnmarshalText decodes a size.
func (e *Elephant) UnmarshalText(b []byte) error {
	if err := e.Size.UnmarshalText(b); err != nil {
		return fmt.Errorf("%q is not a positive size (e.g. 1MiB)", b)
	}
	return nil
}

// Queue is features.queue: bdp, longest-path or a size.
type Queue struct {
	Size
	word string // QueueBDP or QueueLongestPath
}

// features.queue's words.
const (
	QueueBDP         = "bdp"
	QueueLongestPath = "longest-path"
)

// ParseQueue decodes features.queue.
func ParseQueue(s string) (Queue, error) {
	var q Queue
	err := q.UnmarshalText([]byte(s))
	return q, err
}

// UnmarshalText decodes bdp, longest-path or a size.
func (q *Queue) UnmarshalText(b []byte) error {
	s := string(b)
	*q = Queue{}
	switch s {
	case "":
		return nil
	case QueueBDP, QueueLongestPath:
		q.word = s
		return nil
	}
	n, err := units.ParseBytes(s)
	if err != nil {
		return fmt.Errorf("%s", units.Describe(s, "neither bdp, longest-path nor a size", wantSize, err))
	}
	q.Size = Size{n: n, text: s}
	return nil
}

// MarshalText gives the text as written.
func (q Queue) MarshalText() ([]byte, error) { return []byte(q.String()), nil }

// IsSet reports whether the queue is set.
func (q Queue) IsSet() bool { return q.word != "" || q.Size.IsSet() }

// IsZero reports whether the queue is unset (YAML's omitzero).
func (q Queue) IsZero() bool { return !q.IsSet() }

// BDP reports whether the queue is sized to the bandwidth-delay product
// (bdp, the default: also when unset).
func (q Queue) BDP() bool { return !q.IsSet() || q.word == QueueBDP }

// LongestPath reports longest-path sizing.
func (q Queue) LongestPath() bool { return q.word == QueueLongestPath }

// String is the text as written.
func (q Queue) String() string {
	if q.word != "" {
		return q.word
	}
	return q.Size.String()
}

// Interval is telemetry.interval: a duration or fastest (the backend's
// shortest).
type Interval struct {
	Duration
	fastest bool
}

// ParseInterval decodes telemetry.interval.
func ParseInterval(s string) (Interval, error) {
	var iv Interval
	err := iv.UnmarshalText([]byte(s))
	return iv, err
}

// UnmarshalText decodes a duration or fastest.
func (iv *Interval) UnmarshalText(b []byte) error {
	*iv = Interval{}
	if string(b) == IntervalFastest {
		iv.fastest = true
		return nil
	}
	return iv.Duration.UnmarshalText(b)
}

// MarshalText gives the text as written.
func (iv Interval) MarshalText() ([]byte, error) { return []byte(iv.String()), nil }

// Fastest reports whether the interval is the backend's shortest.
func (iv Interval) Fastest() bool { return iv.fastest }

// IsSet reports whether the interval is set.
func (iv Interval) IsSet() bool { return iv.fastest || iv.Duration.IsSet() }

// IsZero reports whether the interval is unset (YAML's omitzero).
func (iv Interval) IsZero() bool { return !iv.IsSet() }

// String is the text as written.
func (iv Interval) String() string {
	if iv.fastest {
		return IntervalFastest
	}
	return iv.Duration.String()
}

// StallAfter is sim.stall_after: a duration or off.
type StallAfter struct {
	Duration
	off bool
}

// UnmarshalText decodes a duration or off.
func (sa *StallAfter) UnmarshalText(b []byte) error {
	*sa = StallAfter{}
	if string(b) == StallOff {
		sa.off = true
		return nil
	}
	return sa.Duration.UnmarshalText(b)
}

// StallOff is the sim.stall_after that never ends a run.
const StallOff = "off"

// MarshalText gives the text as written.
func (sa StallAfter) MarshalText() ([]byte, error) { return []byte(sa.String()), nil }

// Off reports whether stall detection is off.
func (sa StallAfter) Off() bool { return sa.off }

// IsSet reports whether stall_after is set.
func (sa StallAfter) IsSet() bool { return sa.off || sa.Duration.IsSet() }

// IsZero reports whether stall_after is unset (YAML's omitzero).
func (sa StallAfter) IsZero() bool { return !sa.IsSet() }

// String is the text as written.
func (sa StallAfter) String() string {
	if sa.off {
		return StallOff
	}
	return sa.Duration.String()
}

// Pace is jobs[].rate, an offered load: a share of the NIC's line rate
// ("80%") or a bit rate ("40Gbps", units.BitRate); units.ParseLoad.
type Pace struct {
	frac float64
	bps  units.BitRate
	text string
}

// ParsePace decodes jobs[].rate.
func ParsePace(s string) (Pace, error) {
	var l Pace
	err := l.UnmarshalText([]byte(s))
	return l, err
}

// UnmarshalText decodes a share or a bit rate.
func (l *Pace) UnmarshalText(b []byte) error {
	s := string(b)
	*l = Pace{}
	if s == "" {
		return nil
	}
	frac, bps, err := units.ParseLoad(s)
	if err != nil {
		return err
	}
	*l = Pace{frac: frac, bps: bps, text: s}
	return nil
}

// MarshalText gives the text as written.
func (l Pace) MarshalText() ([]byte, error) { return []byte(l.text), nil }

// Share is the share of the line rate (0 for a bit rate).
func (l Pace) Share() float64 { return l.frac }

// BitRate is the bit rate (0 for a share).
func (l Pace) BitRate() units.BitRate { return l.bps }

// IsSet reports whether the job is paced.
func (l Pace) IsSet() bool { return l.text != "" }

// IsZero reports whether the rate is unset (YAML's omitzero).
func (l Pace) IsZero() bool { return !l.IsSet() }

// String is the text as written.
func (l Pace) String() string { return l.text }

// WallTime is a wall-clock duration of the bring-up step (bringup.bgp_wait,
// bringup.converge): time.ParseDuration's spellings (10s, 1m30s), not
// negative.
type WallTime struct {
	d    time.Duration
	text string
}

// UnmarshalText decodes a wall-clock duration.
func (w *WallTime) UnmarshalText(b []byte) error {
	s := string(b)
	*w = WallTime{}
	if s == "" {
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("%q is not a duration (e.g. 10s)", s)
	}
	*w = WallTime{d: d, text: s}
	return nil
}

// MarshalText gives the text as written.
func (w WallTime) MarshalText() ([]byte, error) { return []byte(w.text), nil }

// Duration is the duration (0 when unset).
func (w WallTime) Duration() time.Duration { return w.d }

// IsSet reports whether the suite gave the duration.
func (w WallTime) IsSet() bool { return w.text != "" }

// IsZero reports whether the duration is unset (YAML's omitzero).
func (w WallTime) IsZero() bool { return !w.IsSet() }

// String is the text as written.
func (w WallTime) String() string { return w.text }

// Tolerance is kpis[].regress (kpis.ParseTolerance: "5%" or an amount in
// the metric's unit), with the text as written: the KPI's results show it
// so (results.KPI.Regress).
type Tolerance struct {
	t    kpis.Tolerance
	text string
}

// UnmarshalText decodes a tolerance.
func (t *Tolerance) UnmarshalText(b []byte) error {
	s := string(b)
	*t = Tolerance{}
	if s == "" {
		return nil
	}
	v, err := kpis.ParseTolerance(s)
	if err != nil {
		return err
	}
	*t = Tolerance{t: v, text: s}
	return nil
}

// MarshalText gives the text as written.
func (t Tolerance) MarshalText() ([]byte, error) { return []byte(t.text), nil }

// Tolerance is the decoded tolerance (zero when unset: the default for
// the KPI's direction applies).
func (t Tolerance) Tolerance() kpis.Tolerance { return t.t }

// IsSet reports whether the suite gave the tolerance.
func (t Tolerance) IsSet() bool { return t.text != "" }

// IsZero reports whether the tolerance is unset (YAML's omitzero).
func (t Tolerance) IsZero() bool { return !t.IsSet() }

// String is the text as written.
func (t Tolerance) String() string { return t.text }
