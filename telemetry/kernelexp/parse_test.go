package kernelexp

import (
	"math"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fabricbench/fabricbench/internal/fuzzbound"
	"github.com/fabricbench/fabricbench/telemetry"
)

func TestCounter(t *testing.T) {
	type step struct {
		raw   uint64
		total uint64
		ev    counterEvent
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"first value taken as is", []step{{1000, 1000, evNone}, {1500, 1500, evNone}, {1500, 1500, evNone}}},
		{"32-bit wrap", []step{{math.MaxUint32 - 9, math.MaxUint32 - 9, evNone}, {5, math.MaxUint32 + 6, evWrap}, {7, math.MaxUint32 + 8, evNone}}},
		{"64-bit wrap", []step{{math.MaxUint64 - 9, math.MaxUint64 - 9, evNone}, {5, 5, evWrap}}}, // the total wraps too
		{"reset", []step{{1 << 20, 1 << 20, evNone}, {100, 1<<20 + 100, evReset}, {150, 1<<20 + 150, evNone}}},
		{"small 32-bit value going back is a reset", []step{{3 << 30, 3 << 30, evNone}, {2 << 30, 5 << 30, evReset}}},
		{"large value going back is a reset", []step{{1 << 40, 1 << 40, evNone}, {10, 1<<40 + 10, evReset}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c counter
			for i, s := range tc.steps {
				if ev := c.update(s.raw); ev != s.ev || c.total != s.total {
					t.Fatalf("step %d: update(%d) = event %d, total %d; want %d, %d", i, s.raw, ev, c.total, s.ev, s.total)
				}
			}
		})
	}
	// After rebase the next value is counted from zero, with no event.
	var c counter
	c.update(500)
	c.rebase()
	if ev := c.update(700); ev != evNone || c.total != 1200 {
		t.Errorf("after rebase: event %d total %d, want none and 1200", ev, c.total)
	}
}

// TestQdiscReplacement follows an interface's qdiscs through a root
// replacement, a vanished child and a recreated device: the drops and marks
// served stay monotonic and include everything counted before.
func TestQdiscReplacement(t *testing.T) {
	var s ifState
	see := func(handle, parent uint32, kind string, drops, marks uint64) {
		q := s.qdisc(&qdiscMsg{handle: handle, parent: parent, kind: []byte(kind)})
		q.seen = true
		if q.root {
			q.drops.update(drops)
		}
		q.marks.update(marks)
	}
	check := func(step string, drops, marks uint64) {
		t.Helper()
		if d, m := s.discards(), s.ecnMarked(); d != drops || m != marks {
			t.Errorf("%s: discards %d marks %d, want %d %d", step, d, m, drops, marks)
		}
	}
	see(0x10000, tcHRoot, "tbf", 10, 0)
	see(0x20000, 0x10001, "red", 99, 4) // child: its drops are in the root's
	s.sweep()
	check("initial", 10, 4)
	see(0x10000, tcHRoot, "tbf", 12, 0)
	see(0x20000, 0x10001, "red", 99, 6)
	s.sweep()
	check("counting", 12, 6)
	// The root is replaced by a new qdisc (new handle) without a child.
	see(0x30000, tcHRoot, "tbf", 3, 0)
	s.sweep()
	check("replaced", 15, 6)
	if len(s.qds) != 1 {
		t.Errorf("%d qdiscs tracked after the sweep, want 1", len(s.qds))
	}
	// The device is recreated.
	s.rebase()
	see(0x30000, tcHRoot, "tbf", 2, 0)
	s.sweep()
	check("recreated", 17, 6)
}

func TestECNMarks(t *testing.T) {
	u32s := func(vs ...uint32) []byte {
		b := make([]byte, 4*len(vs))
		for i, v := range vs {
			native.PutUint32(b[4*i:], v)
		}
		return b
	}
	fq := make([]byte, 112)
	native.PutUint64(fq[80:], 77) // ce_mark after 8 u64 and 4 u32
	pieNew := append(make([]byte, 8), u32s(1, 2, 3, 4, 5, 6, 7, 42)...)
	pieOld := u32s(1, 2, 3, 4, 5, 6, 7, 43)
	cases := []struct {
		kind string
		x    []byte
		want uint64
		ok   bool
	}{
		{"red", u32s(1, 2, 3, 17), 17, true},
		{"choke", u32s(1, 2, 3, 18, 5), 18, true},
		{"sfb", u32s(1, 2, 3, 4, 5, 19, 7, 8, 9), 19, true},
		{"codel", u32s(1, 2, 3, 4, 5, 6, 20, 8, 30), 50, true},
		{"fq_codel", u32s(0, 1, 2, 21, 4, 5, 6, 31, 8, 9), 52, true},
		{"fq_codel", u32s(1, 1, 2, 21, 4, 5, 6, 31, 8, 9), 0, false}, // class stats
		{"pie", pieNew, 42, true},
		{"pie", pieOld, 43, true},
		{"fq_pie", u32s(1, 2, 3, 4, 22, 6, 7, 8, 9), 22, true},
		{"fq", fq, 77, true},
		{"tbf", u32s(1, 2, 3, 4), 0, false},
		{"red", u32s(1, 2), 0, false}, // short
		{"noqueue", nil, 0, false},
	}
	for _, tc := range cases {
		if got, ok := ecnMarks([]byte(tc.kind), tc.x); got != tc.want || ok != tc.ok {
			t.Errorf("ecnMarks(%s, %d bytes) = %d, %v; want %d, %v", tc.kind, len(tc.x), got, ok, tc.want, tc.ok)
		}
	}
}

// nla encodes a netlink attribute.
func nla(typ uint16, val []byte) []byte {
	b := make([]byte, align4(nlaHdrLen+len(val)))
	native.PutUint16(b[0:], uint16(nlaHdrLen+len(val)))
	native.PutUint16(b[2:], typ)
	copy(b[nlaHdrLen:], val)
	return b
}

func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

func tcmsg(ifindex int32, handle, parent uint32) []byte {
	b := make([]byte, tcmsgLen)
	native.PutUint32(b[4:], uint32(ifindex))
	native.PutUint32(b[8:], handle)
	native.PutUint32(b[12:], parent)
	return b
}

func TestParseQdiscMsg(t *testing.T) {
	queue := make([]byte, 20)
	native.PutUint32(queue[0:], 3)    // qlen
	native.PutUint32(queue[4:], 4500) // backlog
	native.PutUint32(queue[8:], 11)   // drops
	red := make([]byte, 16)
	native.PutUint32(red[12:], 5) // marked
	msg := cat(tcmsg(7, 0x10000, tcHRoot),
		nla(unix.TCA_KIND, []byte("red\x00")),
		nla(unix.TCA_OPTIONS, make([]byte, 24)),
		nla(unix.TCA_STATS2|0x8000, cat(nla(tcaStatsBasic, make([]byte, 12)), nla(tcaStatsQueue, queue), nla(tcaStatsApp, red))))
	q, ok := parseQdiscMsg(msg)
	if !ok || q.ifindex != 7 || q.handle != 0x10000 || q.parent != tcHRoot || string(q.kind) != "red" ||
		q.backlog != 4500 || q.drops != 11 || !q.hasStats {
		t.Fatalf("parseQdiscMsg = %+v, %v", q, ok)
	}
	if m, ok := ecnMarks(q.kind, q.xstats); !ok || m != 5 {
		t.Errorf("marks %d, %v; want 5", m, ok)
	}

	// Legacy TCA_STATS and TCA_XSTATS only.
	legacy := make([]byte, 36)
	native.PutUint32(legacy[12:], 13)  // drops
	native.PutUint32(legacy[32:], 900) // backlog
	q, ok = parseQdiscMsg(cat(tcmsg(8, 0x20000, 0x10001), nla(unix.TCA_KIND, []byte("red\x00")),
		nla(unix.TCA_STATS, legacy), nla(unix.TCA_XSTATS, red)))
	if !ok || q.drops != 13 || q.backlog != 900 || !q.hasStats || len(q.xstats) != 16 {
		t.Fatalf("legacy: parseQdiscMsg = %+v, %v", q, ok)
	}
}

func TestParseStatsAndLinkMsg(t *testing.T) {
	st := make([]byte, 200)
	for i, v := range []uint64{1, 2, 3, 4, 5, 6, 7, 8} {
		native.PutUint64(st[8*i:], v*100)
	}
	hdr := make([]byte, ifStatsMsgLen)
	native.PutUint32(hdr[4:], 9)
	idx, s, ok := parseStatsMsg(cat(hdr, nla(unix.IFLA_STATS_LINK_64, st)))
	want := linkStats{rxPackets: 100, txPackets: 200, rxBytes: 300, txBytes: 400, rxErrors: 500, txErrors: 600, rxDropped: 700, txDropped: 800}
	if !ok || idx != 9 || s != want {
		t.Errorf("parseStatsMsg = %d, %+v, %v; want 9, %+v", idx, s, ok, want)
	}
	ifi := make([]byte, ifinfomsgLen)
	native.PutUint32(ifi[4:], 12)
	native.PutUint32(ifi[8:], unix.IFF_UP|unix.IFF_BROADCAST)
	idx, name, lst := parseLinkMsg(cat(ifi, nla(unix.IFLA_MTU, make([]byte, 4)), nla(unix.IFLA_IFNAME, []byte("eth3\x00")),
		nla(unix.IFLA_OPERSTATE, []byte{ifOperLowerLayerDown})))
	if idx != 12 || string(name) != "eth3" || !lst.adminUp || operStatus(lst.operstate) != telemetry.StatusLowerLayerDown {
		t.Errorf("parseLinkMsg = %d, %q, %+v", idx, name, lst)
	}
	native.PutUint32(ifi[8:], unix.IFF_BROADCAST)
	if _, _, st := parseLinkMsg(ifi); st.adminUp || operStatus(st.operstate) != telemetry.StatusUnknown {
		t.Errorf("parseLinkMsg of a link that is down, without operstate: %+v", st)
	}
}

// FuzzParse checks that no message, however malformed, makes a parser
// panic or read out of bounds.
func FuzzParse(f *testing.F) {
	f.Add(cat(tcmsg(1, 2, 3), nla(unix.TCA_KIND, []byte("fq_codel\x00")), nla(unix.TCA_STATS2, nla(tcaStatsApp, make([]byte, 7)))))
	f.Add(cat(make([]byte, ifStatsMsgLen), nla(unix.IFLA_STATS_LINK_64, make([]byte, 63))))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbound.Default(t, func() {
			if q, ok := parseQdiscMsg(b); ok {
				for _, k := range []string{"red", "choke", "sfb", "codel", "fq_codel", "pie", "fq_pie", "fq"} {
					ecnMarks([]byte(k), q.xstats)
				}
			}
			parseStatsMsg(b)
			parseLinkMsg(b)
		})
	})
}
