package sim

import (
	"testing"
	"unsafe"
)

// The hot path touches a packet at every hop: it must stay one cache line
// (a 72-byte packet straddles two lines every other time). Ports and the
// event queue's entries are sized for the same reason.
func TestHotStructSizes(t *testing.T) {
	if n := unsafe.Sizeof(packet{}); n != 64 {
		t.Errorf("packet is %d bytes, want 64 (one cache line): move or pack the new field", n)
	}
	if n := unsafe.Sizeof(event{}); n != 24 {
		t.Errorf("event is %d bytes, want 24", n)
	}
	if n := unsafe.Sizeof(wireEnt{}); n != 16 {
		t.Errorf("wire entry is %d bytes, want 16", n)
	}
	if n := unsafe.Sizeof(port{}); n > 384 {
		t.Errorf("port is %d bytes, want at most 384 (6 cache lines)", n)
	}
}
