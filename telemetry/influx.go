package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"
	"github.com/influxdata/influxdb-client-go/v2/api"
	influxhttp "github.com/influxdata/influxdb-client-go/v2/api/http"
)

// InfluxTokenEnv is the environment variable ReadToken falls back to.
const InfluxTokenEnv = "FABRICBENCH_INFLUX_TOKEN"

// Defaults for InfluxConfig's zero values.
const (
	DefaultInfluxBatchSize        = 5000
	DefaultInfluxFlushInterval    = time.Second
	DefaultInfluxMaxPending       = 1_000_000
	DefaultInfluxRetryInterval    = 250 * time.Millisecond
	DefaultInfluxMaxRetryInterval = 5 * time.Second
	DefaultInfluxRequestTimeout   = 10 * time.Second
)

// InfluxConfig configures an InfluxSink. Zero numeric fields take the
// Default* values above.
type InfluxConfig struct {
	// URL of the InfluxDB HTTP API, e.g. "http://127.0.0.1:8086".
	URL string
	// Org is the organisation, required by InfluxDB 2.x; InfluxDB 1.8
	// ignores it.
	Org string
	// Bucket is the bucket (InfluxDB 2.x) or, for InfluxDB 1.8,
	// "database/retention-policy", e.g. "fabricbench/autogen".
	Bucket string
	// Token authenticates the writes: an API token (2.x) or "user:password"
	// (1.8 with auth enabled); "" sends no credentials. Use ReadToken to
	// get it from a file or the environment. It is never logged, and
	// String/LogValue hide it.
	Token string
	// BatchSize is the maximum number of points per HTTP request.
	BatchSize int
	// FlushInterval is the longest a point waits before its (possibly
	// partial) batch is sent.
	FlushInterval time.Duration
	// MaxPending bounds memory: the number of points accepted by Write but
	// not yet acknowledged by InfluxDB. When exceeded (a long outage), the
	// oldest queued batches are dropped, after being appended to the spill
	// file if one is configured. Must be at least 2*BatchSize.
	MaxPending int
	// RetryInterval is the delay before the first retry of a failed batch;
	// it doubles (with ±20% jitter) up to MaxRetryInterval. Retries never
	// give up on their own: only Close's context ends them.
	RetryInterval    time.Duration
	MaxRetryInterval time.Duration
	// RequestTimeout bounds one HTTP write request.
	RequestTimeout time.Duration
	// SpillPath, if set, is a file to which the sink appends, as InfluxDB
	// line protocol (precision ns), every point it could not write:
	// points still pending when Close gives up, points InfluxDB rejected,
	// and points dropped because MaxPending was exceeded. It is created
	// (mode 0600) only when needed, and can be imported later with
	//
	//	curl -XPOST 'http://HOST:8086/write?db=DB&rp=RP&precision=ns' --data-binary @FILE
	SpillPath string
}

// String describes the config with the token hidden.
func (c InfluxConfig) String() string {
	tok := "none"
	if c.Token != "" {
		tok = "<redacted>"
	}
	return fmt.Sprintf("InfluxConfig{URL:%s Org:%q Bucket:%q Token:%s BatchSize:%d FlushInterval:%s MaxPending:%d RetryInterval:%s MaxRetryInterval:%s RequestTimeout:%s SpillPath:%q}",
		redactURL(c.URL), c.Org, c.Bucket, tok, c.BatchSize, c.FlushInterval, c.MaxPending, c.RetryInterval, c.MaxRetryInterval, c.RequestTimeout, c.SpillPath)
}

// GoString is String, so that %#v does not print the token either.
func (c InfluxConfig) GoString() string { return c.String() }

// LogValue implements slog.LogValuer with the token hidden.
func (c InfluxConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("url", redactURL(c.URL)),
		slog.String("org", c.Org),
		slog.String("bucket", c.Bucket),
		slog.Bool("token_set", c.Token != ""),
		slog.Int("batch_size", c.BatchSize),
		slog.Duration("flush_interval", c.FlushInterval),
		slog.Int("max_pending", c.MaxPending),
		slog.String("spill_path", c.SpillPath),
	)
}

// ReadToken returns the InfluxDB token: the content of file with surrounding
// white space trimmed or, if file is "", the value of FABRICBENCH_INFLUX_TOKEN
// (which may be unset: "" is a valid token for an InfluxDB 1.8 without
// authentication). Errors never contain the token.
func ReadToken(file string) (string, error) {
	var tok string
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("influxdb token: %w", err)
		}
		tok = strings.TrimSpace(string(b))
		if tok == "" {
			return "", fmt.Errorf("influxdb token file %s is empty", file)
		}
	} else {
		tok = strings.TrimSpace(os.Getenv(InfluxTokenEnv))
	}
	if err := checkToken(tok); err != nil {
		if file != "" {
			return "", fmt.Errorf("influxdb token file %s: %w", file, err)
		}
		return "", fmt.Errorf("influxdb token from $%s: %w", InfluxTokenEnv, err)
	}
	return tok, nil
}

func checkToken(tok string) error {
	for _, r := range tok {
		if r < 0x20 || r == 0x7f {
			return errors.New("token contains control characters (it must be a single line)")
		}
	}
	return nil
}

// InfluxOption is an optional setting of NewInfluxSink.
type InfluxOption func(*influxOptions)

type influxOptions struct {
	logger *slog.Logger
}

// WithInfluxLogger makes the sink log write failures, recoveries, rejections and
// drops (tokens redacted). By default it logs nothing; Stats and Close report
// the same facts.
func WithInfluxLogger(l *slog.Logger) InfluxOption {
	return func(o *influxOptions) { o.logger = l }
}

// InfluxStats counts points (lines of line protocol; consecutive samples of
// one interface or queue at one time form one point).
type InfluxStats struct {
	Samples int64 // samples accepted by Write
	Points  int64 // points made from them
	Written int64 // points acknowledged by InfluxDB
	// Failed = Rejected + Dropped + Unwritten: points that did not reach
	// InfluxDB (they are in the spill file if one is configured).
	Failed    int64
	Rejected  int64 // refused by InfluxDB with a non-retryable error (4xx)
	Dropped   int64 // evicted because MaxPending was exceeded
	Unwritten int64 // still pending when Close gave up
	Retried   int64 // points re-sent after a failed attempt (counted per attempt)
	Pending   int64 // accepted but neither written nor failed yet
	Spilled   int64 // points appended to the spill file
	Errors    int64 // failed write requests
	// LastError is the last write error, with the token redacted.
	LastError string
	// InvalidSamples counts samples Write refused (see Write).
	InvalidSamples int64
}

// InfluxSink writes samples to InfluxDB (1.8 through its /api/v2/write
// compatibility endpoint, or 2.x). It implements Sink.
//
// Point model: measurement = Sample.Measurement; tags run, target,
// interface and queue (tags with an empty value are omitted, so interface
// points have no queue tag); one integer field per leaf (e.g.
// out-octets=123i); timestamp = Sample.Time in ns. Consecutive samples of
// one Write call sharing time, run, target, measurement, interface and
// queue become one point with several fields.
//
// Why not the client's non-blocking WriteAPI: in influxdb-client-go v2.14.0
//   - WriteAPI.WritePoint/WriteRecord send on an unbuffered channel to a
//     goroutine that, once a batch is full, hands it over (unbuffered again)
//     to the goroutine doing the HTTP request, so a slow or hanging server
//     blocks the caller for up to the HTTP timeout;
//   - retries are driven only by later writes (there is no retry
//     scheduler), a batch is discarded after MaxRetries (default 5)
//     attempts or MaxRetryTime (180 s), and the retry queue
//     (RetryBufferLimit/BatchSize batches) silently drops its oldest batch
//     when full;
//   - Flush/Close try the retry queue once, "without retrying", then
//     discard what failed (errors are only logged), so an outage during
//     Close loses data, and Close has no deadline;
//   - errors go to a channel with a buffer of one where they are dropped
//     unless read;
//   - the blocking WriteAPI with EnableBatching empties its buffer before
//     sending, so a failed batch is gone (we do not enable it).
//
// So this sink keeps its own bounded FIFO of line-protocol batches and one
// writer goroutine that sends them with the client's blocking WriteAPI (the
// library still does the HTTP writes, without batching or retrying of its
// own, so every error comes back to us), retries with capped exponential
// backoff until success or until Close's context expires, and accounts for
// every point. Write only takes a mutex and never waits for the network;
// there is no error channel to drain because errors are returned to the
// writer goroutine, which counts them and keeps the last one (Stats).
//
// Duplicates: batches are resent only after a failed attempt. If an attempt
// failed on our side (e.g. timeout) after InfluxDB stored the batch, the
// resend writes the same points again; InfluxDB keys a point by
// measurement, tag set and timestamp and overwrites it with identical field
// values, so this creates no duplicates. Likewise for re-importing a spill
// file that overlaps what was written.
type InfluxSink struct {
	cfg       InfluxConfig
	client    influxdb2.Client
	writeAPI  api.WriteAPIBlocking
	spillPath string
	log       *slog.Logger
	redact    *strings.Replacer
	urlText   string // URL without password, for messages

	ctx    context.Context // cancelled when Close gives up
	cancel context.CancelFunc
	wake   chan struct{} // buffered(1): a batch was queued or Close started
	done   chan struct{} // closed when the writer goroutine exits

	mu        sync.Mutex
	cur       strings.Builder // open batch
	curPoints int
	queue     []*lpBatch // sealed batches, oldest first; queue[0] may be in flight
	inflight  bool       // queue[0] is being sent
	pending   int64      // points in cur and queue
	closed    bool       // Write refused
	draining  bool       // writer exits once queue is empty
	stats     InfluxStats

	spillMu  sync.Mutex
	spillF   *os.File
	spillErr error

	closeOnce sync.Once
	closeErr  error
}

type lpBatch struct {
	body     string // line protocol, one "\n"-terminated line per point
	points   int
	attempts int
}

// ErrSinkClosed is returned by Write after Close.
var ErrSinkClosed = errors.New("telemetry sink: write after close")

// NewInfluxSink validates cfg and starts the sink's writer goroutine. It does
// not contact InfluxDB: an unreachable server shows in Stats and in Close's
// error, and points are retried until Close.
func NewInfluxSink(cfg InfluxConfig, opts ...InfluxOption) (*InfluxSink, error) {
	var o influxOptions
	for _, opt := range opts {
		opt(&o)
	}
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	if cfg.SpillPath != "" {
		if fi, err := os.Stat(filepath.Dir(cfg.SpillPath)); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("influxdb sink: spill file %s: directory does not exist", cfg.SpillPath)
		}
	}
	copts := influxdb2.DefaultOptions().
		SetApplicationName("fabricbench").
		SetHTTPRequestTimeout(uint((cfg.RequestTimeout+time.Second-1)/time.Second) + 1).
		SetMaxRetries(0) // not used by the blocking API; stated for clarity
	s := &InfluxSink{
		cfg:       cfg,
		client:    influxdb2.NewClientWithOptions(cfg.URL, cfg.Token, copts),
		spillPath: cfg.SpillPath,
		log:       o.logger,
		urlText:   redactURL(cfg.URL),
		wake:      make(chan struct{}, 1),
		done:      make(chan struct{}),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	var pairs []string
	if cfg.Token != "" {
		pairs = append(pairs, cfg.Token, "<redacted>")
		// With "user:password" tokens, hide the password on its own too.
		if i := strings.IndexByte(cfg.Token, ':'); i >= 0 && len(cfg.Token)-i-1 >= 4 {
			pairs = append(pairs, cfg.Token[i+1:], "<redacted>")
		}
	}
	s.redact = strings.NewReplacer(pairs...)
	// Blocking API without implicit batching: each WriteRecord call is one
	// HTTP request whose error is returned as is (no retries inside).
	s.writeAPI = s.client.WriteAPIBlocking(cfg.Org, cfg.Bucket)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	go s.run()
	return s, nil
}

func (c *InfluxConfig) normalize() error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL is not echoed: it might carry credentials.
		return errors.New(`influxdb sink: URL must be an absolute http:// or https:// URL, e.g. "http://127.0.0.1:8086"`)
	}
	if c.Bucket == "" {
		return errors.New(`influxdb sink: Bucket is required (for InfluxDB 1.8: "database/retention-policy")`)
	}
	if err := checkToken(c.Token); err != nil {
		return fmt.Errorf("influxdb sink: %w", err)
	}
	def := func(name string, v *int, d int) error {
		if *v < 0 {
			return fmt.Errorf("influxdb sink: %s is negative", name)
		}
		if *v == 0 {
			*v = d
		}
		return nil
	}
	defDur := func(name string, v *time.Duration, d time.Duration) error {
		if *v < 0 {
			return fmt.Errorf("influxdb sink: %s is negative", name)
		}
		if *v == 0 {
			*v = d
		}
		return nil
	}
	for _, err := range []error{
		def("BatchSize", &c.BatchSize, DefaultInfluxBatchSize),
		def("MaxPending", &c.MaxPending, DefaultInfluxMaxPending),
		defDur("FlushInterval", &c.FlushInterval, DefaultInfluxFlushInterval),
		defDur("RetryInterval", &c.RetryInterval, DefaultInfluxRetryInterval),
		defDur("MaxRetryInterval", &c.MaxRetryInterval, DefaultInfluxMaxRetryInterval),
		defDur("RequestTimeout", &c.RequestTimeout, DefaultInfluxRequestTimeout),
	} {
		if err != nil {
			return err
		}
	}
	if c.MaxPending < 2*c.BatchSize {
		return fmt.Errorf("influxdb sink: MaxPending (%d) must be at least 2*BatchSize (%d)", c.MaxPending, 2*c.BatchSize)
	}
	if c.MaxRetryInterval < c.RetryInterval {
		c.MaxRetryInterval = c.RetryInterval
	}
	return nil
}

// Write encodes batch as line protocol and queues it; it never waits for the
// network. It returns ErrSinkClosed after Close, and an error describing
// invalid samples (empty measurement or field, field "time", measurement
// starting with '#', or a name containing a backslash, CR or LF, which line
// protocol cannot carry faithfully); those samples are skipped and counted
// in Stats().InvalidSamples, the others are queued. When MaxPending is
// exceeded the oldest batches are dropped (see InfluxConfig.MaxPending); that
// is reported by Stats and Close, not by Write.
func (s *InfluxSink) Write(batch []Sample) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrSinkClosed
	}
	var (
		invalid  int
		firstBad error
		sealed   bool
	)
	for i := 0; i < len(batch); {
		if err := checkSample(&batch[i]); err != nil {
			if invalid == 0 {
				firstBad = fmt.Errorf("target %q %s interface %q queue %q field %q: %w",
					batch[i].Target, batch[i].Measurement, batch[i].Interface, batch[i].Queue, batch[i].Field, err)
			}
			invalid++
			i++
			continue
		}
		j := i + 1
		for j < len(batch) && samePoint(&batch[i], &batch[j]) && checkSample(&batch[j]) == nil && !hasField(batch[i:j], batch[j].Field) {
			j++
		}
		appendPoint(&s.cur, batch[i:j])
		s.curPoints++
		s.pending++
		s.stats.Points++
		s.stats.Samples += int64(j - i)
		if s.curPoints >= s.cfg.BatchSize {
			s.sealLocked()
			sealed = true
		}
		i = j
	}
	s.stats.InvalidSamples += int64(invalid)
	dropped := s.evictLocked()
	s.mu.Unlock()

	if sealed {
		s.signal()
	}
	if len(dropped) > 0 {
		n := s.spill(dropped)
		s.log.Warn("influxdb sink: buffer full (MaxPending), dropped oldest points",
			"points", points(dropped), "spilled", n, "max_pending", s.cfg.MaxPending)
	}
	if invalid > 0 {
		return fmt.Errorf("influxdb sink: skipped %d invalid sample(s); first: %w", invalid, firstBad)
	}
	return nil
}

// Flush seals the open batch so the writer sends it now rather than after
// FlushInterval. It does not wait.
func (s *InfluxSink) Flush() {
	s.mu.Lock()
	s.sealLocked()
	s.mu.Unlock()
	s.signal()
}

// Stats returns a snapshot of the counters.
func (s *InfluxSink) Stats() InfluxStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Pending = s.pending
	return st
}

func (s *InfluxSink) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// sealLocked moves the open batch to the queue.
func (s *InfluxSink) sealLocked() {
	if s.curPoints == 0 {
		return
	}
	s.queue = append(s.queue, &lpBatch{body: s.cur.String(), points: s.curPoints})
	s.cur = strings.Builder{}
	s.curPoints = 0
}

// evictLocked removes the oldest queued batches (never the one in flight)
// while more than MaxPending points are pending, and returns them.
func (s *InfluxSink) evictLocked() []*lpBatch {
	if s.pending <= int64(s.cfg.MaxPending) {
		return nil
	}
	first := 0
	if s.inflight {
		first = 1
	}
	var out []*lpBatch
	k := first
	for s.pending > int64(s.cfg.MaxPending) && k < len(s.queue) {
		b := s.queue[k]
		out = append(out, b)
		s.pending -= int64(b.points)
		s.stats.Dropped += int64(b.points)
		s.stats.Failed += int64(b.points)
		k++
	}
	s.queue = append(s.queue[:first], s.queue[k:]...)
	return out
}

// run is the writer goroutine.
func (s *InfluxSink) run() {
	defer close(s.done)
	tick := time.NewTicker(s.cfg.FlushInterval)
	defer tick.Stop()
	failures := 0 // consecutive failed attempts
	var outageStart time.Time
	for {
		s.mu.Lock()
		var b *lpBatch
		if len(s.queue) > 0 {
			b = s.queue[0]
			s.inflight = true
			if b.attempts > 0 {
				s.stats.Retried += int64(b.points)
			}
			b.attempts++
		}
		draining := s.draining
		s.mu.Unlock()

		if b == nil {
			if draining {
				return
			}
			select {
			case <-s.wake:
			case <-tick.C:
				s.Flush()
			case <-s.ctx.Done():
				return
			}
			continue
		}

		ctx, cancel := context.WithTimeout(s.ctx, s.cfg.RequestTimeout)
		err := s.writeAPI.WriteRecord(ctx, b.body)
		cancel()
		if err == nil {
			s.mu.Lock()
			s.popLocked(b)
			s.stats.Written += int64(b.points)
			s.mu.Unlock()
			if failures > 0 {
				s.log.Info("influxdb sink: writes recovered", "url", s.urlText,
					"failed_attempts", failures, "after", time.Since(outageStart).Round(time.Millisecond))
			}
			failures = 0
			continue
		}
		if s.ctx.Err() != nil { // Close gave up; b stays queued
			s.mu.Lock()
			s.inflight = false
			s.mu.Unlock()
			return
		}

		msg := strings.Join(strings.Fields(s.redact.Replace(err.Error())), " ")
		var herr *influxhttp.Error
		status := 0
		var retryAfter time.Duration
		if errors.As(err, &herr) {
			status = herr.StatusCode
			retryAfter = time.Duration(herr.RetryAfter) * time.Second
		}
		if status != 0 {
			msg = fmt.Sprintf("HTTP %d: %s", status, msg)
		}
		retryable := status == 0 || status == http.StatusRequestTimeout ||
			status == http.StatusTooManyRequests || status >= 500

		s.mu.Lock()
		s.stats.Errors++
		s.stats.LastError = msg
		s.inflight = false
		if !retryable {
			s.popLocked(b)
			s.stats.Rejected += int64(b.points)
			s.stats.Failed += int64(b.points)
		}
		s.mu.Unlock()

		if !retryable {
			n := s.spill([]*lpBatch{b})
			s.log.Error("influxdb sink: InfluxDB rejected a batch; not retrying", "url", s.urlText,
				"points", b.points, "spilled", n, "error", msg)
			continue
		}
		if failures == 0 {
			outageStart = time.Now()
			s.log.Warn("influxdb sink: write failed; retrying until it succeeds or Close gives up",
				"url", s.urlText, "error", msg)
		}
		delay := s.backoff(failures)
		if retryAfter > delay {
			delay = min(retryAfter, time.Minute)
		}
		failures++
		if !s.sleep(delay, tick) {
			return
		}
	}
}

// popLocked removes b, which the writer took from the front of the queue,
// unless an eviction already removed it.
func (s *InfluxSink) popLocked(b *lpBatch) {
	s.inflight = false
	if len(s.queue) > 0 && s.queue[0] == b {
		s.queue[0] = nil
		s.queue = s.queue[1:]
		s.pending -= int64(b.points)
	}
}

func (s *InfluxSink) backoff(failures int) time.Duration {
	d := s.cfg.RetryInterval
	for i := 0; i < failures && d < s.cfg.MaxRetryInterval; i++ {
		d *= 2
	}
	d = min(d, s.cfg.MaxRetryInterval)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// sleep waits for d while still sealing the open batch every FlushInterval;
// it returns false if Close gave up meanwhile.
func (s *InfluxSink) sleep(d time.Duration, tick *time.Ticker) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return true
		case <-tick.C:
			s.Flush()
		case <-s.ctx.Done():
			return false
		}
	}
}

// spill appends batches to the spill file and returns how many points it
// saved.
func (s *InfluxSink) spill(bs []*lpBatch) int64 {
	if s.spillPath == "" || len(bs) == 0 {
		return 0
	}
	s.spillMu.Lock()
	defer s.spillMu.Unlock()
	if s.spillErr != nil {
		return 0
	}
	if s.spillF == nil {
		f, err := os.OpenFile(s.spillPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			s.spillErr = err
			return 0
		}
		s.spillF = f
		if fi, err := f.Stat(); err == nil && fi.Size() == 0 {
			db, rp, _ := strings.Cut(s.cfg.Bucket, "/")
			hdr := "# fabricbench telemetry that was not written to InfluxDB: line protocol, precision ns.\n" +
				"# Import into InfluxDB 1.8: curl -XPOST 'http://HOST:8086/write?db=" + url.QueryEscape(db)
			if rp != "" {
				hdr += "&rp=" + url.QueryEscape(rp)
			}
			hdr += "&precision=ns' --data-binary @" + filepath.Base(s.spillPath) + "\n"
			if _, err := f.WriteString(hdr); err != nil {
				s.spillErr = err
				return 0
			}
		}
	}
	var n int64
	for _, b := range bs {
		if _, err := s.spillF.WriteString(b.body); err != nil {
			s.spillErr = err
			break
		}
		n += int64(b.points)
	}
	s.mu.Lock()
	s.stats.Spilled += n
	s.mu.Unlock()
	return n
}

func (s *InfluxSink) closeSpill() error {
	s.spillMu.Lock()
	defer s.spillMu.Unlock()
	err := s.spillErr
	if s.spillF != nil {
		if e := s.spillF.Sync(); e != nil && err == nil {
			err = e
		}
		if e := s.spillF.Close(); e != nil && err == nil {
			err = e
		}
		s.spillF = nil
	}
	if err != nil && s.spillErr == nil {
		s.spillErr = err
	}
	return err
}

// Close sends every pending point and waits until InfluxDB acknowledged all
// of them or ctx expires. It returns nil if every point accepted by Write was
// written. Otherwise the error says how many points were not written and why
// (still pending when ctx expired, rejected by InfluxDB, dropped because
// MaxPending was exceeded), and whether they were saved to the spill file.
// Further calls return the same result.
func (s *InfluxSink) Close(ctx context.Context) error {
	s.closeOnce.Do(func() { s.closeErr = s.close(ctx) })
	return s.closeErr
}

func (s *InfluxSink) close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.draining = true
	s.sealLocked()
	s.mu.Unlock()
	s.signal()

	var ctxErr error
	select {
	case <-s.done:
	case <-ctx.Done():
		ctxErr = ctx.Err()
		s.cancel() // aborts the request in flight and the backoff
		<-s.done
	}
	s.cancel()
	s.client.Close()

	s.mu.Lock()
	left := s.queue
	s.queue = nil
	nLeft := points(left)
	s.pending -= nLeft
	s.stats.Unwritten += nLeft
	s.stats.Failed += nLeft
	s.mu.Unlock()
	s.spill(left)
	spillErr := s.closeSpill()

	st := s.Stats()
	if st.Failed == 0 {
		if spillErr != nil { // cannot happen: nothing was spilled
			return fmt.Errorf("influxdb sink: spill file %s: %w", s.spillPath, spillErr)
		}
		return nil
	}
	var why []string
	if st.Unwritten > 0 {
		reason := "Close gave up"
		if ctxErr != nil {
			reason = ctxErr.Error()
		}
		why = append(why, fmt.Sprintf("%d still pending when Close returned (%s)", st.Unwritten, reason))
	}
	if st.Rejected > 0 {
		why = append(why, fmt.Sprintf("%d rejected by InfluxDB", st.Rejected))
	}
	if st.Dropped > 0 {
		why = append(why, fmt.Sprintf("%d dropped because more than MaxPending=%d points were pending", st.Dropped, s.cfg.MaxPending))
	}
	msg := fmt.Sprintf("influxdb sink: %d of %d points not written to InfluxDB at %s: %s",
		st.Failed, st.Points, s.urlText, strings.Join(why, ", "))
	if st.LastError != "" {
		msg += "; last write error: " + st.LastError
	}
	switch {
	case s.spillPath == "":
		msg += "; no spill file configured, so they are lost (the embedded store still has every sample)"
	case spillErr != nil:
		msg += fmt.Sprintf("; saved %d of them to the spill file %s, then it failed: %s", st.Spilled, s.spillPath, s.redact.Replace(spillErr.Error()))
	default:
		msg += fmt.Sprintf("; all %d were saved as line protocol to %s", st.Spilled, s.spillPath)
	}
	return errors.New(msg)
}

func points(bs []*lpBatch) int64 {
	var n int64
	for _, b := range bs {
		n += int64(b.points)
	}
	return n
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<invalid URL>"
	}
	return u.Redacted()
}

// Line protocol encoding.

func checkSample(s *Sample) error {
	switch {
	case s.Measurement == "":
		return errors.New("empty measurement")
	case s.Field == "":
		return errors.New("empty field")
	case s.Field == "time":
		return errors.New(`field name "time" is reserved by InfluxDB`)
	case s.Measurement[0] == '#':
		return errors.New("measurement starts with '#'")
	}
	for _, v := range [...]string{s.Measurement, s.Run, s.Target, s.Interface, s.Queue, s.Field} {
		if strings.ContainsAny(v, "\\\r\n") {
			return errors.New("name contains a backslash, CR or LF")
		}
	}
	return nil
}

func samePoint(a, b *Sample) bool {
	return a.Time == b.Time && a.Run == b.Run && a.Target == b.Target &&
		a.Measurement == b.Measurement && a.Interface == b.Interface && a.Queue == b.Queue
}

func hasField(group []Sample, field string) bool {
	for i := range group {
		if group[i].Field == field {
			return true
		}
	}
	return false
}

var (
	measEscaper = strings.NewReplacer(",", `\,`, " ", `\ `)
	keyEscaper  = strings.NewReplacer(",", `\,`, "=", `\=`, " ", `\ `)
)

// appendPoint writes one line for group (samples of one point, validated).
// Tag keys are in lexical order, as InfluxDB prefers.
func appendPoint(b *strings.Builder, group []Sample) {
	s := &group[0]
	_, _ = measEscaper.WriteString(b, s.Measurement)
	tag := func(k, v string) {
		if v == "" {
			return
		}
		b.WriteByte(',')
		b.WriteString(k)
		b.WriteByte('=')
		_, _ = keyEscaper.WriteString(b, v)
	}
	tag("interface", s.Interface)
	tag("queue", s.Queue)
	tag("run", s.Run)
	tag("target", s.Target)
	var num [24]byte
	for i := range group {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteByte(',')
		}
		_, _ = keyEscaper.WriteString(b, group[i].Field)
		b.WriteByte('=')
		b.Write(strconv.AppendInt(num[:0], group[i].Value, 10))
		b.WriteByte('i')
	}
	b.WriteByte(' ')
	b.Write(strconv.AppendInt(num[:0], s.Time, 10))
	b.WriteByte('\n')
}
