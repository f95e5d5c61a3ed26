package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// storeSamples returns n samples with awkward strings (CSV quoting, unicode,
// newlines) and extreme values.
func storeSamples(n int) []Sample {
	targets := []string{"leaf1", `spine "1", rack a`, "gpu-ñ-7", "multi\nline"}
	out := make([]Sample, 0, n)
	for i := 0; i < n; i++ {
		s := Sample{
			Time:   1_700_000_000_123_456_789 + int64(i)*1_000_003,
			Run:    "run,42",
			Target: targets[i%len(targets)],
		}
		if i%3 == 0 {
			s.Measurement, s.Interface, s.Queue = MeasQueue, "Ethernet1/1", fmt.Sprintf("q%d", i%8)
			s.Field = QueueFields[i%len(QueueFields)]
		} else {
			s.Measurement, s.Interface = MeasInterface, fmt.Sprintf("eth %d", i%5)
			s.Field = InterfaceFields[i%len(InterfaceFields)]
		}
		switch i % 7 {
		case 0:
			s.Value = math.MaxInt64
		case 1:
			s.Value = math.MinInt64
		case 2:
			s.Value = 0
		default:
			s.Value = int64(i) * 1_000_000_007
		}
		out = append(out, s)
	}
	return out
}

func newTestStore(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "telemetry.csv")
	st, err := CreateStore(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	return st, path
}

func TestStoreRoundTrip(t *testing.T) {
	st, path := newTestStore(t)
	want := storeSamples(10_000)

	// Write in uneven batches through one reused buffer, which is
	// overwritten after every Write: the store must not keep it.
	buf := make([]Sample, 0, 1000)
	for i, n := 0, 1; i < len(want); i, n = i+n, n*3%997+1 {
		end := min(i+n, len(want))
		buf = append(buf[:0], want[i:end]...)
		if err := st.Write(buf); err != nil {
			t.Fatal(err)
		}
		for j := range buf {
			buf[j] = Sample{Target: "garbage", Value: -1}
		}
	}
	if err := st.Write(nil); err != nil {
		t.Fatal(err)
	}
	if got := st.Count(); got != int64(len(want)) {
		t.Errorf("Count() = %d, want %d", got, len(want))
	}
	if err := st.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := st.Write(want[:1]); err == nil {
		t.Error("Write after Close succeeded")
	}

	got, err := ReadStore(path)
	if err != nil {
		t.Fatal(err)
	}
	storeCompare(t, got, want)

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const header = "time_ns,run,target,measurement,interface,queue,field,value\n"
	if !strings.HasPrefix(string(raw), header) {
		t.Errorf("file starts with %q, want header %q", raw[:min(len(raw), 80)], header)
	}
	// The first data row, as documented in docs/telemetry-store.md.
	wantRow := `1700000000123456789,"run,42",leaf1,queue,Ethernet1/1,q0,transmit-octets,9223372036854775807` + "\n"
	if rest := string(raw[len(header):]); !strings.HasPrefix(rest, wantRow) {
		t.Errorf("first row = %q, want %q", rest[:min(len(rest), len(wantRow))], wantRow)
	}

	if _, err := CreateStore(path); err == nil {
		t.Error("CreateStore overwrote an existing store")
	}
}

func storeCompare(t *testing.T, got, want []Sample) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d samples, want %d", len(got), len(want))
	}
	bad := 0
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("sample %d: got %+v, want %+v", i, got[i], want[i])
			if bad++; bad == 5 {
				t.Fatal("too many differences")
			}
		}
	}
}

// fakeStoreTicker replaces the store's flush ticker with a channel the test
// drives.
func fakeStoreTicker(t *testing.T) chan time.Time {
	t.Helper()
	ch := make(chan time.Time)
	old := newStoreTicker
	newStoreTicker = func() (<-chan time.Time, func()) { return ch, func() {} }
	storeFlushedCh = make(chan struct{})
	storeFlushed = func() { storeFlushedCh <- struct{}{} }
	t.Cleanup(func() { newStoreTicker, storeFlushed = old, nil })
	return ch
}

var storeFlushedCh chan struct{}

// storeTickAndWait fires the periodic flush and returns once it has
// completed (and no other flush is pending).
func storeTickAndWait(ch chan time.Time) {
	ch <- time.Time{}
	<-storeFlushedCh
}

// An interrupted run (no Close) leaves every row up to the last flush in a
// file that ReadStore accepts.
func TestStoreInterruptedWriterKeepsFlushedRows(t *testing.T) {
	tick := fakeStoreTicker(t)
	st, path := newTestStore(t)
	all := storeSamples(3*storeFlushRows + 10)

	// Nothing flushed yet: the file holds only the header.
	if err := st.Write(all[:10]); err != nil {
		t.Fatal(err)
	}
	got, err := ReadStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("before any flush: read %d samples, want 0", len(got))
	}

	// The periodic flush.
	storeTickAndWait(tick)
	got, err = ReadStore(path)
	if err != nil {
		t.Fatal(err)
	}
	storeCompare(t, got, all[:10])

	// Explicit Flush.
	if err := st.Write(all[10:20]); err != nil {
		t.Fatal(err)
	}
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err = ReadStore(path)
	if err != nil {
		t.Fatal(err)
	}
	storeCompare(t, got, all[:20])

	// Reaching storeFlushRows buffered rows flushes within Write.
	if err := st.Write(all[20 : 20+storeFlushRows]); err != nil {
		t.Fatal(err)
	}
	got, err = ReadStore(path)
	if err != nil {
		t.Fatal(err)
	}
	storeCompare(t, got, all[:20+storeFlushRows])

	// Rows written after the last flush are the only ones an interruption
	// would lose; what is on disk still reads cleanly.
	if err := st.Write(all[20+storeFlushRows : 30+storeFlushRows]); err != nil {
		t.Fatal(err)
	}
	got, err = ReadStore(path)
	if err != nil {
		t.Fatal(err)
	}
	storeCompare(t, got, all[:20+storeFlushRows])
}

func TestScanStoreErrors(t *testing.T) {
	const hdr = "time_ns,run,target,measurement,interface,queue,field,value\n"
	const good = "1,r,t,interface,eth0,,in-octets,5\n"
	tests := []struct {
		name, content string
		want          []string // substrings of the error after "FILE"
	}{
		{"empty", "", []string{": empty file"}},
		{"wrong header name", "time,run,target,measurement,interface,queue,field,value\n" + good,
			[]string{":1:1: column time_ns: header is \"time\""}},
		{"short header", "time_ns,run\n", []string{":1: header has 2 columns, want 8"}},
		{"bad time", hdr + good + "12x,r,t,interface,eth0,,in-octets,5\n",
			[]string{":3:1: column time_ns: invalid integer \"12x\""}},
		{"bad value", hdr + "1,r,t,interface,eth0,,in-octets,5.5\n",
			[]string{":2:", "column value: invalid integer \"5.5\""}},
		{"value overflow", hdr + "1,r,t,interface,eth0,,in-octets,9223372036854775808\n",
			[]string{":2:", "column value: integer \"9223372036854775808\" out of int64 range"}},
		{"missing column", hdr + good + good + "1,r,t,interface,eth0,in-octets,5\n",
			[]string{":4: row has 7 columns, want 8"}},
		{"extra column", hdr + "1,r,t,interface,eth0,,in-octets,5,6\n",
			[]string{":2: row has 9 columns"}},
		{"bare quote", hdr + good + "1,r,t\"x,interface,eth0,,in-octets,5\n",
			[]string{":3:", "malformed CSV", "bare \""}},
		{"unterminated quote", hdr + good + "1,\"r,t,interface,eth0,,in-octets,5\n",
			[]string{":3:", "malformed CSV"}},
		{"empty measurement", hdr + "1,r,t,,eth0,,in-octets,5\n",
			[]string{":2:", "column measurement: empty"}},
		{"empty field", hdr + "1,r,t,interface,eth0,,,5\n",
			[]string{":2:", "column field: empty"}},
		// A quoted newline makes one record span two lines; line numbers
		// stay file lines.
		{"after multi-line field", hdr + "1,r,\"a\nb\",interface,eth0,,in-octets,5\n" + "1,r,t,interface,eth0,,in-octets,x\n",
			[]string{":4:", "column value"}},
		{"truncated last row", hdr + good + "1,r,t,inter",
			[]string{":3: row has 4 columns"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.csv")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadStore(path)
			if err == nil {
				t.Fatal("ReadStore succeeded")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+":") {
				t.Errorf("error %q does not start with %q", msg, path+":")
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestScanStoreStopsOnCallbackError(t *testing.T) {
	st, path := newTestStore(t)
	if err := st.Write(storeSamples(100)); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	n := 0
	err := ScanStore(path, func(*Sample) error {
		if n++; n == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 10 {
		t.Fatalf("ScanStore = %v after %d calls, want %v after 10", err, n, stop)
	}
	if _, err := ReadStore(filepath.Join(t.TempDir(), "missing.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadStore(missing) = %v, want ErrNotExist", err)
	}
}

type multiTestSink struct {
	name     string
	got      []Sample
	writeErr error
	closeErr error
	closed   int
}

func (r *multiTestSink) Write(b []Sample) error {
	r.got = append(r.got, b...)
	return r.writeErr
}

func (r *multiTestSink) Close(context.Context) error {
	r.closed++
	return r.closeErr
}

func TestMulti(t *testing.T) {
	e1, e2 := errors.New("write a"), errors.New("close b")
	a := &multiTestSink{name: "a", writeErr: e1}
	b := &multiTestSink{name: "b", closeErr: e2}
	c := &multiTestSink{name: "c"}
	m := Multi(a, nil, b, c)
	in := storeSamples(3)
	if err := m.Write(in); !errors.Is(err, e1) {
		t.Errorf("Write = %v, want %v", err, e1)
	}
	for _, s := range []*multiTestSink{a, b, c} {
		if !reflect.DeepEqual(s.got, in) {
			t.Errorf("sink %s got %v, want %v", s.name, s.got, in)
		}
	}
	if err := m.Close(context.Background()); !errors.Is(err, e2) {
		t.Errorf("Close = %v, want %v", err, e2)
	}
	for _, s := range []*multiTestSink{a, b, c} {
		if s.closed != 1 {
			t.Errorf("sink %s closed %d times, want 1", s.name, s.closed)
		}
	}
	if got := Multi(nil, c); got != Sink(c) {
		t.Errorf("Multi of one sink = %T, want the sink itself", got)
	}
	if err := Multi().Close(context.Background()); err != nil {
		t.Errorf("empty Multi Close = %v", err)
	}
}

// A ".gz" store holds the same rows, at least 5x smaller, as gzip members
// that the standard tools read as one stream; an interrupted writer (no
// Close) leaves every flushed row readable, as with a plain store.
func TestCompressedStore(t *testing.T) {
	tick := fakeStoreTicker(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "telemetry.csv.gz")
	st, err := CreateStore(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	want := storeSamples(3*storeFlushRows + 100)

	if err := st.Write(want[:100]); err != nil {
		t.Fatal(err)
	}
	storeTickAndWait(tick)
	got, err := ReadStore(path)
	if err != nil {
		t.Fatal(err)
	}
	storeCompare(t, got, want[:100]) // one flushed member, writer still open

	if err := st.Write(want[100:]); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, err = ReadStore(path); err != nil {
		t.Fatal(err)
	}
	storeCompare(t, got, want)

	// The same rows in a plain store, for the size.
	plain := filepath.Join(dir, "telemetry.csv")
	ps, err := CreateStore(plain)
	if err != nil {
		t.Fatal(err)
	}
	if err := ps.Write(want); err != nil {
		t.Fatal(err)
	}
	if err := ps.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	zi, _ := os.Stat(path)
	pi, _ := os.Stat(plain)
	t.Logf("%d rows: plain %d B, compressed %d B (%.1fx); Size() %d", len(want), pi.Size(), zi.Size(), float64(pi.Size())/float64(zi.Size()), st.Size())
	if zi.Size()*5 > pi.Size() || st.Size() != zi.Size() {
		t.Errorf("compressed %d B vs plain %d B (Size() %d): want at least 5x smaller", zi.Size(), pi.Size(), st.Size())
	}

	// gzip.Reader (multistream, like gzip -d) gives the plain file back.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	praw, _ := os.ReadFile(plain)
	if !bytes.Equal(raw, praw) {
		t.Errorf("decompressed store (%d B) differs from the plain one (%d B)", len(raw), len(praw))
	}
}

// BenchmarkScanStore reads 100k rows from a plain and a compressed store:
// decompression must not make reading noticeably slower (CSV parsing
// dominates).
func BenchmarkScanStore(b *testing.B) {
	rows := storeSamples(100_000)
	for _, name := range []string{"telemetry.csv", "telemetry.csv.gz"} {
		path := filepath.Join(b.TempDir(), name)
		st, err := CreateStore(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Write(rows); err != nil {
			b.Fatal(err)
		}
		if err := st.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				n := 0
				if err := ScanStore(path, func(*Sample) error { n++; return nil }); err != nil || n != len(rows) {
					b.Fatal(n, err)
				}
			}
		})
	}
}
