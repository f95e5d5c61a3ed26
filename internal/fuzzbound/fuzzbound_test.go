package fuzzbound

import (
	"testing"
	"time"
)

type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestCheck(t *testing.T) {
	r := &recorder{TB: t}
	Check(r, time.Second, 1<<20, func() {})
	if r.failed {
		t.Error("an empty function failed the bounds")
	}
	var sink []byte
	Check(r, time.Second, 1<<20, func() { sink = make([]byte, 4<<20) })
	if !r.failed || len(sink) == 0 {
		t.Error("a 4 MiB allocation passed a 1 MiB budget")
	}
	r.failed = false
	Check(r, time.Millisecond, 1<<20, func() { time.Sleep(20 * time.Millisecond) })
	if !r.failed {
		t.Error("a 20ms function passed a 1ms budget")
	}
}
