package telemetry

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The embedded store is a CSV file (RFC 4180, as written by encoding/csv)
// with one row per Sample; docs/telemetry-store.md describes the format for
// users. The header is fixed:
//
//	time_ns,run,target,measurement,interface,queue,field,value
//
// time_ns and value are base-10 int64s; the other columns are text (queue is
// empty for interface counters).
//
// A store whose path ends in ".gz" is gzip-compressed: every flush writes
// one complete gzip member (RFC 1952 allows several in one file; gzip -d,
// zcat and Go's gzip.Reader read them as one stream). So a compressed store
// keeps the crash guarantee of a plain one: what was flushed is a whole,
// readable member. Telemetry CSV compresses about 15x at the fastest level.

// StoreHeader lists the store's columns in file order.
var StoreHeader = []string{"time_ns", "run", "target", "measurement", "interface", "queue", "field", "value"}

const (
	// storeFlushInterval bounds how long a row written to a Store may sit
	// in memory before it is handed to the operating system.
	storeFlushInterval = time.Second
	// storeFlushRows and storeFlushBytes make Write hand rows to the OS
	// early when a lot arrives within one interval.
	storeFlushRows  = 4096
	storeFlushBytes = 256 << 10
)

// Store is the embedded telemetry store: a CSV file in the run directory.
// It implements Sink.
//
// Rows are buffered in memory and handed to the operating system (one
// write(2) of whole rows, never a partial row) every storeFlushRows rows,
// every storeFlushInterval by a background goroutine, on Flush, and on Close.
// So if the process dies, the file holds every row up to the last flush and
// stays readable by ReadStore. Close also fsyncs the file.
//
// Write and Close must be called from one goroutine; Flush and Count may be
// called from any.
type Store struct {
	path  string
	count atomic.Int64

	mu      sync.Mutex // guards everything below
	f       *os.File
	buf     bytes.Buffer // CSV-encoded rows not yet written to f
	csv     *csv.Writer  // encodes into buf
	rows    int          // rows in buf
	rec     [8]string
	numBuf  []byte
	gz      *gzip.Writer // nil for a plain CSV store
	zbuf    bytes.Buffer // one compressed member
	written int64        // bytes written to f
	err     error        // sticky write error
	closed  bool
	stop    chan struct{}
	stopped chan struct{}
}

// CreateStore creates the store file at path and writes its header. The file
// must not exist yet (a previous run's data is never overwritten).
func CreateStore(path string) (*Store, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("telemetry store: %w", err)
	}
	s := &Store{
		path:    path,
		f:       f,
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	if strings.HasSuffix(path, ".gz") {
		// BestSpeed: about 15x on telemetry CSV, at a small share of the
		// cost of encoding the rows.
		s.gz, _ = gzip.NewWriterLevel(&s.zbuf, gzip.BestSpeed) // valid level: no error
	}
	s.csv = csv.NewWriter(&s.buf)
	if err := s.csv.Write(StoreHeader); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("telemetry store %s: %w", path, err)
	}
	s.csv.Flush()
	if err := s.flushLocked(); err != nil {
		_ = f.Close()
		return nil, err
	}
	tick, stopTick := newStoreTicker()
	go s.flushLoop(tick, stopTick)
	return s, nil
}

// Path returns the file's path.
func (s *Store) Path() string { return s.path }

// Size returns the bytes written to the file so far (compressed, for a
// ".gz" store).
func (s *Store) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written
}

// Count returns the number of rows (samples) written so far, including rows
// still buffered in memory.
func (s *Store) Count() int64 { return s.count.Load() }

// Write appends one row per sample. It returns an error if the store is
// closed or an earlier write to the file failed.
func (s *Store) Write(batch []Sample) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("telemetry store %s: write after close", s.path)
	}
	if s.err != nil {
		return s.err
	}
	for i := range batch {
		smp := &batch[i]
		s.numBuf = strconv.AppendInt(s.numBuf[:0], smp.Time, 10)
		s.rec[0] = string(s.numBuf)
		s.rec[1] = smp.Run
		s.rec[2] = smp.Target
		s.rec[3] = smp.Measurement
		s.rec[4] = smp.Interface
		s.rec[5] = smp.Queue
		s.rec[6] = smp.Field
		s.rec[7] = strconv.FormatInt(smp.Value, 10)
		// Writes into a bytes.Buffer cannot fail.
		_ = s.csv.Write(s.rec[:])
		s.rows++
	}
	s.csv.Flush()
	s.count.Add(int64(len(batch)))
	if s.rows >= storeFlushRows || s.buf.Len() >= storeFlushBytes {
		return s.flushLocked()
	}
	return nil
}

// Flush hands every buffered row to the operating system, so it survives a
// crash of this process (not necessarily of the machine: see Close).
func (s *Store) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.err
	}
	return s.flushLocked()
}

func (s *Store) flushLocked() error {
	if s.err != nil {
		return s.err
	}
	if s.buf.Len() == 0 {
		return nil
	}
	// One Write call with whole rows (for a compressed store, one whole
	// gzip member): the file never ends in a partial row.
	out := s.buf.Bytes()
	if s.gz != nil {
		s.zbuf.Reset()
		s.gz.Reset(&s.zbuf)
		// Writes into a bytes.Buffer cannot fail.
		_, _ = s.gz.Write(out)
		_ = s.gz.Close()
		out = s.zbuf.Bytes()
	}
	n, err := s.f.Write(out)
	if err != nil {
		// A partial write (disk full) would leave a partial row or gzip
		// member at the end: cut it off, so that the file keeps every
		// whole flush before it and stays readable. The error is sticky.
		if n > 0 {
			_ = s.f.Truncate(s.written)
		}
		s.err = fmt.Errorf("telemetry store: %w", err)
		return s.err
	}
	s.written += int64(n)
	s.buf.Reset()
	s.rows = 0
	return nil
}

// newStoreTicker returns the channel that drives a Store's periodic flush
// and a function releasing it. Tests replace it to trigger flushes
// deterministically.
var newStoreTicker = func() (<-chan time.Time, func()) {
	t := time.NewTicker(storeFlushInterval)
	return t.C, t.Stop
}

// storeFlushed, when set (tests only), is called after each periodic
// flush.
var storeFlushed func()

func (s *Store) flushLoop(tick <-chan time.Time, stopTick func()) {
	defer close(s.stopped)
	defer stopTick()
	for {
		select {
		case <-tick:
			s.mu.Lock()
			_ = s.flushLocked() // a failure is sticky and reported by Write/Close
			s.mu.Unlock()
			if storeFlushed != nil {
				storeFlushed()
			}
		case <-s.stop:
			return
		}
	}
}

// Close flushes the buffered rows, fsyncs and closes the file. Further calls
// return the first call's result. ctx is not used: closing a local file does
// not block for long.
func (s *Store) Close(context.Context) error {
	s.mu.Lock()
	if s.closed {
		err := s.err
		s.mu.Unlock()
		return err
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	<-s.stopped

	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.flushLocked()
	if serr := s.f.Sync(); serr != nil && err == nil {
		err = fmt.Errorf("telemetry store: %w", serr)
	}
	if cerr := s.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("telemetry store: %w", cerr)
	}
	s.err = err
	return err
}

// ReadStore reads a whole store file into memory. See ScanStore for errors.
func ReadStore(path string) ([]Sample, error) {
	var out []Sample
	err := ScanStore(path, func(s *Sample) error {
		out = append(out, *s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ScanStore reads the store file at path row by row and calls fn for each
// sample, in file order. The *Sample passed to fn is reused for the next
// row: fn must copy it (e.g. append(*s)) to keep it. Repeated strings (run,
// target, interface, ...) share memory.
//
// If fn returns an error, scanning stops and ScanStore returns that error.
// Malformed input gives an error of the form
//
//	path:line:col: column <name>: <problem>
//
// (line and col are 1-based; col counts bytes) or path:line: <problem> when
// the whole row is wrong.
func ScanStore(path string, fn func(*Sample) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("telemetry store: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 256<<10)
	// A compressed store is recognised by the gzip magic, whatever its name.
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("telemetry store %s: %w", path, err)
		}
		defer zr.Close()
		// (Decompressing on a second goroutine measured no faster: the
		// parser's garbage collection already uses the other core.)
		return scanStore(path, bufio.NewReaderSize(zr, 256<<10), fn)
	}
	return scanStore(path, br, fn)
}

func scanStore(path string, rd io.Reader, fn func(*Sample) error) error {
	r := csv.NewReader(rd)
	r.FieldsPerRecord = -1 // checked below, for a clearer message
	r.ReuseRecord = true

	rowErr := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, args...))
	}
	colErr := func(col int, format string, args ...any) error {
		line, c := r.FieldPos(col)
		return fmt.Errorf("%s:%d:%d: column %s: %s", path, line, c, StoreHeader[col], fmt.Sprintf(format, args...))
	}
	readErr := func(err error) error {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return fmt.Errorf("%s:%d:%d: malformed CSV: %v", path, pe.Line, pe.Column, pe.Err)
		}
		return fmt.Errorf("telemetry store %s: %w", path, err)
	}

	rec, err := r.Read()
	if err == io.EOF {
		return fmt.Errorf("%s: empty file, expected the header %q", path, joinComma(StoreHeader))
	}
	if err != nil {
		return readErr(err)
	}
	if len(rec) != len(StoreHeader) {
		line, _ := r.FieldPos(0)
		return rowErr(line, "header has %d columns, want %d (%s)", len(rec), len(StoreHeader), joinComma(StoreHeader))
	}
	for i, name := range StoreHeader {
		if rec[i] != name {
			return colErr(i, "header is %q, want %q", rec[i], name)
		}
	}

	intern := make(map[string]string)
	str := func(b string) string {
		if s, ok := intern[b]; ok {
			return s
		}
		if len(intern) < 1<<16 {
			intern[b] = b
		}
		return b
	}
	var s Sample
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return readErr(err)
		}
		if len(rec) != len(StoreHeader) {
			line, _ := r.FieldPos(0)
			return rowErr(line, "row has %d columns, want %d (%s)", len(rec), len(StoreHeader), joinComma(StoreHeader))
		}
		t, err := strconv.ParseInt(rec[0], 10, 64)
		if err != nil {
			return colErr(0, "%s", intProblem(rec[0], err))
		}
		v, err := strconv.ParseInt(rec[7], 10, 64)
		if err != nil {
			return colErr(7, "%s", intProblem(rec[7], err))
		}
		if rec[3] == "" {
			return colErr(3, "empty")
		}
		if rec[6] == "" {
			return colErr(6, "empty")
		}
		s = Sample{
			Time:        t,
			Run:         str(rec[1]),
			Target:      str(rec[2]),
			Measurement: str(rec[3]),
			Interface:   str(rec[4]),
			Queue:       str(rec[5]),
			Field:       str(rec[6]),
			Value:       v,
		}
		if err := fn(&s); err != nil {
			return err
		}
	}
}

func intProblem(text string, err error) string {
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Sprintf("integer %q out of int64 range", text)
	}
	return fmt.Sprintf("invalid integer %q", text)
}

func joinComma(cols []string) string { return strings.Join(cols, ",") }
