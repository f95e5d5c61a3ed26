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

// written is a decoded value and the text it was written as; the
// quantity types embed it for what they have in common.
type written[T any] struct {
	v    T
	text string
}

// decode sets w from s with parse; "" is the unset value.
func (w *written[T]) decode(s string, parse func(string) (T, error)) error {
	*w = written[T]{}
	if s == "" {
		return nil
	}
	v, err := parse(s)
	if err != nil {
		return err
	}
	*w = written[T]{v: v, text: s}
	return nil
}

// MarshalText gives the text as written.
func (w written[T]) MarshalText() ([]byte, error) { return []byte(w.text), nil }

// IsSet reports whether the suite gave the value.
func (w written[T]) IsSet() bool { return w.text != "" }

// IsZero reports whether the value is unset (YAML's omitzero).
func (w written[T]) IsZero() bool { return !w.IsSet() }

// String is the text as written ("" when unset).
func (w written[T]) String() string { return w.text }

// described wraps a units parser so that its error is units.Describe's
// message: "X is <what> (e.g. <want>)".
func described[T any](parse func(string) (T, error), what, want string) func(string) (T, error) {
	return func(s string) (T, error) {
		v, err := parse(s)
		if err != nil {
			return v, fmt.Errorf("%s", units.Describe(s, what, want, err))
		}
		return v, nil
	}
}

// Duration is a duration (units.Ps), e.g. 100us.
type Duration struct{ written[units.Ps] }

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

var parseDuration = described(units.ParsePs, "not a duration", wantDur)

// UnmarshalText decodes a duration: units.ParsePs's spellings.
func (d *Duration) UnmarshalText(b []byte) error { return d.decode(string(b), parseDuration) }

// Ps is the duration in picoseconds (0 when unset).
func (d Duration) Ps() units.Ps { return d.v }

// Size is a size (units.Bytes), e.g. 2MiB.
type Size struct{ written[units.Bytes] }

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

var parseSize = described(units.ParseBytes, "not a size", wantSize)

// UnmarshalText decodes a size: units.ParseBytes's spellings.
func (z *Size) UnmarshalText(b []byte) error { return z.decode(string(b), parseSize) }

// Bytes is the size in bytes (0 when unset).
func (z Size) Bytes() units.Bytes { return z.v }

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
	return q.decode(s, described(units.ParseBytes, "neither bdp, longest-path nor a size", wantSize))
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
type Pace struct{ written[load] }

// load is a share of the line rate or a bit rate (units.ParseLoad).
type load struct {
	frac float64
	bps  units.BitRate
}

func parseLoad(s string) (load, error) {
	frac, bps, err := units.ParseLoad(s)
	return load{frac, bps}, err
}

// ParsePace decodes jobs[].rate.
func ParsePace(s string) (Pace, error) {
	var l Pace
	err := l.UnmarshalText([]byte(s))
	return l, err
}

// UnmarshalText decodes a share or a bit rate.
func (l *Pace) UnmarshalText(b []byte) error { return l.decode(string(b), parseLoad) }

// Share is the share of the line rate (0 for a bit rate).
func (l Pace) Share() float64 { return l.v.frac }

// BitRate is the bit rate (0 for a share).
func (l Pace) BitRate() units.BitRate { return l.v.bps }

// WallTime is a wall-clock duration of the bring-up step (bringup.bgp_wait,
// bringup.converge): time.ParseDuration's spellings (10s, 1m30s), not
// negative.
type WallTime struct{ written[time.Duration] }

func parseWallTime(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration (e.g. 10s)", s)
	}
	return d, nil
}

// UnmarshalText decodes a wall-clock duration.
func (w *WallTime) UnmarshalText(b []byte) error { return w.decode(string(b), parseWallTime) }

// Duration is the duration (0 when unset).
func (w WallTime) Duration() time.Duration { return w.v }

// Tolerance is kpis[].regress (kpis.ParseTolerance: "5%" or an amount in
// the metric's unit), with the text as written: the KPI's results show it
// so (results.KPI.Regress).
type Tolerance struct{ written[kpis.Tolerance] }

// UnmarshalText decodes a tolerance.
func (t *Tolerance) UnmarshalText(b []byte) error { return t.decode(string(b), kpis.ParseTolerance) }

// Tolerance is the decoded tolerance (zero when unset: the default for
// the KPI's direction applies).
func (t Tolerance) Tolerance() kpis.Tolerance { return t.v }
