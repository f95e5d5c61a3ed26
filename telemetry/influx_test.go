package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/internal/influxtest"
)

const influxTestToken = "admin:S3cr3t-T0ken-do-not-leak"

// influxBatches returns one Write batch per tick: 4 targets x 4 interfaces x
// (5 interface fields + 2 queues x 5 queue fields) = 240 samples, 48
// points. Names need line-protocol escaping (space, comma, equals sign).
func influxBatches(run string, ticks int) [][]Sample {
	targets := []string{"leaf1", "leaf 2", "spine,1", "sp=ne"}
	intfs := []string{"Ethernet1/1", "Ethernet1/2", "eth 3", "p=4,x"}
	queues := []string{"0", "uc 7"}
	const t0 = 1_700_000_000_000_000_000
	var out [][]Sample
	for tick := 0; tick < ticks; tick++ {
		var b []Sample
		for ti, tgt := range targets {
			// ns-precision times that differ per target
			tm := int64(t0 + tick*100_000_000 + ti*7 + 1)
			for ii, intf := range intfs {
				for fi, f := range InterfaceFields {
					b = append(b, Sample{Time: tm, Run: run, Target: tgt, Measurement: MeasInterface,
						Interface: intf, Field: f,
						Value: int64(1<<40) + int64(tick)*1_000_003 + int64(ti*1000+ii*100+fi)})
				}
				for qi, q := range queues {
					for fi, f := range QueueFields {
						v := int64(tick)*7919 + int64(ti*1000+ii*100+qi*10+fi)
						if f == FieldMaxQueueLen {
							v = int64((tick*31 + ti + ii + qi) % 50_000) // a gauge
						}
						b = append(b, Sample{Time: tm, Run: run, Target: tgt, Measurement: MeasQueue,
							Interface: intf, Queue: q, Field: f, Value: v})
					}
				}
			}
		}
		out = append(out, b)
	}
	return out
}

func influxFlatten(bs [][]Sample) []Sample {
	var out []Sample
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

type influxKey struct {
	meas                     string
	time                     int64
	run, target, intf, queue string
	field                    string
}

type influxSeriesTime struct {
	meas                     string
	time                     int64
	run, target, intf, queue string
}

func wantInflux(samples []Sample) (map[influxKey]int64, int) {
	m := make(map[influxKey]int64, len(samples))
	pts := make(map[influxSeriesTime]bool)
	for _, s := range samples {
		m[influxKey{s.Measurement, s.Time, s.Run, s.Target, s.Interface, s.Queue, s.Field}] = s.Value
		pts[influxSeriesTime{s.Measurement, s.Time, s.Run, s.Target, s.Interface, s.Queue}] = true
	}
	return m, len(pts)
}

// queryInflux reads every interface and queue point back.
func queryInflux(t *testing.T, srv *influxtest.Server) (map[influxKey]int64, int) {
	t.Helper()
	rows, err := srv.Query(`SELECT * FROM "interface", "queue" GROUP BY *`)
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[influxKey]int64)
	for _, r := range rows {
		for f, v := range r.Values {
			iv, ok := v.(int64)
			if !ok {
				t.Fatalf("field %s of %+v is %T %v, want an integer", f, r, v, v)
			}
			k := influxKey{r.Measurement, r.Time, r.Tags["run"], r.Tags["target"], r.Tags["interface"], r.Tags["queue"], f}
			if _, dup := got[k]; dup {
				t.Fatalf("value returned twice: %+v", k)
			}
			got[k] = iv
		}
	}
	return got, len(rows)
}

// compareInflux checks that InfluxDB holds exactly the samples: every time,
// tag set, field and value, nothing more, each point once.
func compareInflux(t *testing.T, srv *influxtest.Server, samples []Sample) {
	t.Helper()
	want, wantPoints := wantInflux(samples)
	got, gotPoints := queryInflux(t, srv)
	var missing, extra, wrong int
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			if missing++; missing <= 5 {
				t.Errorf("missing in InfluxDB: %+v = %d", k, v)
			}
		case g != v:
			if wrong++; wrong <= 5 {
				t.Errorf("%+v = %d in InfluxDB, want %d", k, g, v)
			}
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			if extra++; extra <= 5 {
				t.Errorf("unexpected in InfluxDB: %+v = %d", k, v)
			}
		}
	}
	if missing+extra+wrong > 0 {
		t.Fatalf("InfluxDB differs: %d missing, %d unexpected, %d wrong values (of %d)", missing, extra, wrong, len(want))
	}
	if gotPoints != wantPoints {
		t.Fatalf("InfluxDB returned %d points (rows), want %d", gotPoints, wantPoints)
	}
}

func newTestInfluxSink(t *testing.T, cfg InfluxConfig, opts ...InfluxOption) *InfluxSink {
	t.Helper()
	s, err := NewInfluxSink(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = s.Close(ctx)
	})
	return s
}

// influxClosedURL returns the URL of a loopback port nobody listens on.
func influxClosedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String()
	l.Close()
	return u
}

type influxLogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *influxLogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *influxLogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// influxSpillLines returns the data lines of a spill file (comments skipped).
func influxSpillLines(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

func closeInfluxSink(t *testing.T, s *InfluxSink, d time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return s.Close(ctx)
}

func assertNoInfluxToken(t *testing.T, what, text string) {
	t.Helper()
	for _, secret := range []string{influxTestToken, "S3cr3t-T0ken-do-not-leak"} {
		if strings.Contains(text, secret) {
			t.Errorf("%s contains the token: %q", what, text)
		}
	}
}

// TestInfluxLineProtocol checks the point model and grouping through the
// spill file of a sink whose server is unreachable.
func TestInfluxLineProtocol(t *testing.T) {
	spill := filepath.Join(t.TempDir(), "spill.lp")
	s := newTestInfluxSink(t, InfluxConfig{URL: influxClosedURL(t), Bucket: "db/rp", RetryInterval: time.Hour, SpillPath: spill})
	base := Sample{Time: 5, Run: "r 1", Target: "a,b", Measurement: MeasInterface, Interface: "e=1"}
	with := func(s Sample, f func(*Sample)) Sample { f(&s); return s }
	in := []Sample{
		with(base, func(s *Sample) { s.Field, s.Value = FieldInOctets, 1 }),
		with(base, func(s *Sample) { s.Field, s.Value = FieldOutOctets, -2 }),
		with(base, func(s *Sample) { s.Field, s.Value = FieldInOctets, 3 }), // repeated field: new point
		with(base, func(s *Sample) { s.Time, s.Field, s.Value = 6, FieldInPkts, 4 }),
		with(base, func(s *Sample) {
			s.Measurement, s.Queue, s.Field, s.Value = MeasQueue, "uc 7", FieldMaxQueueLen, 9223372036854775807
		}),
		with(base, func(s *Sample) { s.Run, s.Field, s.Value = "", FieldInPkts, 0 }), // no run tag
		with(base, func(s *Sample) { s.Field = "" }),                                 // invalid
		with(base, func(s *Sample) { s.Target = `bad\name` }),                        // invalid
	}
	err := s.Write(in)
	if err == nil || !strings.Contains(err.Error(), "skipped 2 invalid sample(s)") || !strings.Contains(err.Error(), "empty field") {
		t.Errorf("Write = %v, want an error about 2 invalid samples", err)
	}
	if err := closeInfluxSink(t, s, 200*time.Millisecond); err == nil {
		t.Fatal("Close succeeded with an unreachable server")
	}
	want := []string{
		`interface,interface=e\=1,run=r\ 1,target=a\,b in-octets=1i,out-octets=-2i 5`,
		`interface,interface=e\=1,run=r\ 1,target=a\,b in-octets=3i 5`,
		`interface,interface=e\=1,run=r\ 1,target=a\,b in-pkts=4i 6`,
		`queue,interface=e\=1,queue=uc\ 7,run=r\ 1,target=a\,b max-queue-len=9223372036854775807i 5`,
		`interface,interface=e\=1,target=a\,b in-pkts=0i 5`,
	}
	got := influxSpillLines(t, spill)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("line protocol:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	st := s.Stats()
	if st.Samples != 6 || st.Points != 5 || st.InvalidSamples != 2 || st.Unwritten != 5 || st.Spilled != 5 || st.Pending != 0 {
		t.Errorf("Stats = %+v", st)
	}
	if err := s.Write(in[:1]); !errors.Is(err, ErrSinkClosed) {
		t.Errorf("Write after Close = %v, want ErrSinkClosed", err)
	}
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("  "+influxTestToken+"\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(InfluxTokenEnv, "from-env")
	if tok, err := ReadToken(file); err != nil || tok != influxTestToken {
		t.Errorf("ReadToken(file) = %q, %v", tok, err)
	}
	if tok, err := ReadToken(""); err != nil || tok != "from-env" {
		t.Errorf("ReadToken(\"\") = %q, %v; want the env value", tok, err)
	}
	t.Setenv(InfluxTokenEnv, "")
	if tok, err := ReadToken(""); err != nil || tok != "" {
		t.Errorf("ReadToken(\"\") without env = %q, %v; want \"\"", tok, err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadToken(empty); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("ReadToken(empty file) = %v, want an error", err)
	}
	if _, err := ReadToken(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadToken(missing) = %v, want ErrNotExist", err)
	}
	twoLines := filepath.Join(dir, "two")
	if err := os.WriteFile(twoLines, []byte(influxTestToken+"\nsecond-line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadToken(twoLines); err == nil {
		t.Error("ReadToken accepted a two-line token")
	} else {
		assertNoInfluxToken(t, "ReadToken error", err.Error())
	}

	cfg := InfluxConfig{URL: "http://u:pw@127.0.0.1:1", Bucket: "b", Token: influxTestToken}
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%v", &cfg)} {
		assertNoInfluxToken(t, "formatted config", s)
		if strings.Contains(s, ":pw@") {
			t.Errorf("formatted config shows the URL password: %s", s)
		}
	}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("cfg", "influx", cfg)
	assertNoInfluxToken(t, "logged config", logs.String())
}

func TestNewInfluxSinkValidates(t *testing.T) {
	for _, cfg := range []InfluxConfig{
		{URL: "", Bucket: "b"},
		{URL: "127.0.0.1:8086", Bucket: "b"},
		{URL: "http://127.0.0.1:8086"},
		{URL: "http://127.0.0.1:8086", Bucket: "b", BatchSize: 100, MaxPending: 150},
		{URL: "http://127.0.0.1:8086", Bucket: "b", FlushInterval: -1},
		{URL: "http://127.0.0.1:8086", Bucket: "b", Token: influxTestToken + "\n"},
	} {
		if s, err := NewInfluxSink(cfg); err == nil {
			_ = s.Close(context.Background())
			t.Errorf("NewInfluxSink(%v) succeeded", cfg)
		} else {
			assertNoInfluxToken(t, "NewInfluxSink error", err.Error())
		}
	}
	if _, err := NewInfluxSink(InfluxConfig{URL: "http://127.0.0.1:1", Bucket: "b",
		SpillPath: filepath.Join(t.TempDir(), "no", "such", "dir", "spill.lp")}); err == nil {
		t.Error("NewInfluxSink accepted a spill file in a missing directory")
	}
}

// A server that accepts connections but never answers must not slow Write
// down (the client library's own non-blocking WriteAPI would block here).
func TestInfluxWriteDoesNotWaitForHangingServer(t *testing.T) {
	influxCheckGoroutines(t)
	release := make(chan struct{})
	var requests sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release); requests.Wait() })

	spill := filepath.Join(t.TempDir(), "spill.lp")
	s := newTestInfluxSink(t, InfluxConfig{URL: srv.URL, Bucket: "db/rp", BatchSize: 100, MaxPending: 1_000_000, SpillPath: spill})
	batches := influxBatches("hang", 200) // 48,000 samples, 9,600 points, 96 batches
	for _, b := range batches {
		if err := s.Write(b); err != nil { // would hang the test if Write waited
			t.Fatal(err)
		}
	}
	err := closeInfluxSink(t, s, 300*time.Millisecond)
	st := s.Stats()
	t.Logf("Close: %v", err)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d of %d points not written", st.Points, st.Points)) {
		t.Fatalf("Close = %v, want an error saying all %d points were not written", err, st.Points)
	}
	if st.Written != 0 || st.Unwritten != st.Points || st.Spilled != st.Points || st.Pending != 0 {
		t.Errorf("Stats = %+v", st)
	}
	if n := len(influxSpillLines(t, spill)); int64(n) != st.Points {
		t.Errorf("spill file has %d lines, want %d", n, st.Points)
	}
}

// Errors from a server that echoes the credentials must not leak the token
// into errors, stats, logs or the spill file.
func TestInfluxSinkRedactsToken(t *testing.T) {
	influxCheckGoroutines(t)
	for _, status := range []int{http.StatusInternalServerError, http.StatusBadRequest} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "denied for "+r.Header.Get("Authorization"), status)
			}))
			t.Cleanup(srv.Close)
			var logs influxLogBuffer
			spill := filepath.Join(t.TempDir(), "spill.lp")
			s := newTestInfluxSink(t, InfluxConfig{URL: srv.URL, Bucket: "db/rp", Token: influxTestToken, RetryInterval: time.Millisecond, SpillPath: spill}, WithInfluxLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			in := influxBatches("redact", 3)
			for _, b := range in {
				if err := s.Write(b); err != nil {
					t.Fatal(err)
				}
			}
			err := closeInfluxSink(t, s, 300*time.Millisecond)
			st := s.Stats()
			if err == nil {
				t.Fatal("Close succeeded")
			}
			t.Logf("Close: %v", err)
			wantWhy := "still pending"
			if status == http.StatusBadRequest {
				wantWhy = "rejected by InfluxDB"
				if st.Rejected != st.Points {
					t.Errorf("Rejected = %d, want %d", st.Rejected, st.Points)
				}
			}
			if !strings.Contains(err.Error(), wantWhy) || !strings.Contains(err.Error(), "<redacted>") {
				t.Errorf("Close error %q does not mention %q and the redacted echo", err, wantWhy)
			}
			if st.Errors == 0 || !strings.Contains(st.LastError, fmt.Sprint(status)) {
				t.Errorf("Stats = %+v, want errors with status %d", st, status)
			}
			if st.Spilled != st.Points || st.Failed != st.Points {
				t.Errorf("Stats = %+v, want all %d points failed and spilled", st, st.Points)
			}
			raw, rerr := os.ReadFile(spill)
			if rerr != nil {
				t.Fatal(rerr)
			}
			assertNoInfluxToken(t, "Close error", err.Error())
			assertNoInfluxToken(t, "Stats.LastError", st.LastError)
			assertNoInfluxToken(t, "log", logs.String())
			assertNoInfluxToken(t, "spill file", string(raw))
			if !strings.Contains(logs.String(), "<redacted>") {
				t.Errorf("log does not show the (redacted) server error: %s", logs.String())
			}
		})
	}
}

func TestInfluxSinkMaxPendingDropsOldestToSpill(t *testing.T) {
	spill := filepath.Join(t.TempDir(), "spill.lp")
	s := newTestInfluxSink(t, InfluxConfig{URL: influxClosedURL(t), Bucket: "db/rp", BatchSize: 10, MaxPending: 25, RetryInterval: time.Hour, SpillPath: spill})
	const n = 100
	var want []string
	for i := 0; i < n; i++ {
		smp := Sample{Time: int64(i), Target: "t", Measurement: MeasInterface, Interface: "e", Field: FieldInOctets, Value: int64(i)}
		if err := s.Write([]Sample{smp}); err != nil {
			t.Fatal(err)
		}
		if st := s.Stats(); st.Pending > 25 {
			t.Fatalf("after %d points: Pending = %d > MaxPending", i+1, st.Pending)
		}
		want = append(want, fmt.Sprintf("interface,interface=e,target=t in-octets=%di %d", i, i))
	}
	err := closeInfluxSink(t, s, 100*time.Millisecond)
	st := s.Stats()
	t.Logf("Close: %v", err)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d of %d points not written", n, n)) ||
		!strings.Contains(err.Error(), "dropped because more than MaxPending=25") {
		t.Fatalf("Close = %v", err)
	}
	if st.Dropped < n-25 || st.Dropped+st.Unwritten != n || st.Spilled != n {
		t.Errorf("Stats = %+v", st)
	}
	got := influxSpillLines(t, spill)
	seen := make(map[string]int)
	for _, l := range got {
		seen[l]++
	}
	for _, w := range want {
		if seen[w] != 1 {
			t.Errorf("spill file has %d copies of %q, want 1", seen[w], w)
		}
	}
	if len(got) != n {
		t.Errorf("spill file has %d lines, want %d", len(got), n)
	}
}

func TestInfluxSinkWritesEverything(t *testing.T) {
	influxCheckGoroutines(t)
	srv := influxtest.Start(t, influxtest.WithoutFlux())
	s := newTestInfluxSink(t, InfluxConfig{URL: srv.URL(), Bucket: srv.Bucket(), Token: influxTestToken, BatchSize: 500, FlushInterval: 100 * time.Millisecond})
	batches := influxBatches("run-all", 84)
	start := time.Now()
	for _, b := range batches {
		if err := s.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	writeDur := time.Since(start)
	if err := closeInfluxSink(t, s, time.Minute); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	all := influxFlatten(batches)
	t.Logf("%d samples as %d points: Write calls took %v, Write+Close %v; stats %+v",
		len(all), st.Points, writeDur, time.Since(start), st)
	if st.Samples != int64(len(all)) || st.Written != st.Points || st.Failed != 0 || st.Pending != 0 || st.Errors != 0 {
		t.Errorf("Stats = %+v", st)
	}
	// One point per (time, measurement, tags): the fields of one
	// interface or queue share it.
	type pointKey struct {
		t                       int64
		run, tgt, meas, intf, q string
	}
	pts := map[pointKey]bool{}
	for _, x := range all {
		pts[pointKey{x.Time, x.Run, x.Target, x.Measurement, x.Interface, x.Queue}] = true
	}
	if want := int64(len(pts)); st.Points != want {
		t.Errorf("%d points, want %d (one per time, measurement and tag set)", st.Points, want)
	}
	compareInflux(t, srv, all)
}

// InfluxDB goes away for a few seconds while samples keep coming: nothing
// is lost, nothing duplicated.
func TestInfluxSinkSurvivesOutage(t *testing.T) {
	influxCheckGoroutines(t)
	srv := influxtest.Start(t, influxtest.WithoutFlux())
	var logs influxLogBuffer
	s := newTestInfluxSink(t, InfluxConfig{URL: srv.URL(), Bucket: srv.Bucket(), BatchSize: 200,
		FlushInterval: 50 * time.Millisecond, RetryInterval: 50 * time.Millisecond, MaxRetryInterval: 500 * time.Millisecond},
		WithInfluxLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	batches := influxBatches("run-outage", 90)
	part1, part2, part3 := batches[:30], batches[30:60], batches[60:]

	for _, b := range part1 {
		if err := s.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	s.Flush()
	influxWaitFor(t, "part 1 written", func() bool { st := s.Stats(); return st.Written == st.Points })

	stop := time.Now()
	srv.Stop()
	outage := time.Now()
	t.Logf("Stop took %v", outage.Sub(stop).Round(time.Millisecond))
	// Write in the test goroutine: if Write waited for the network, the
	// test would hang here. (Durations are logged, not asserted.)
	var maxWrite time.Duration
	for _, b := range part2 {
		ws := time.Now()
		if err := s.Write(b); err != nil {
			t.Fatal(err)
		}
		maxWrite = max(maxWrite, time.Since(ws))
		time.Sleep(100 * time.Millisecond) // spread over ~3 s of outage
	}
	t.Logf("during the outage: %d Write calls, the slowest took %v", len(part2), maxWrite)
	s.Flush()
	influxWaitFor(t, "a failed write during the outage", func() bool { return s.Stats().Errors > 0 })
	t.Logf("outage: %v after Stop, %d write errors so far", time.Since(outage).Round(time.Millisecond), s.Stats().Errors)
	restart := time.Now()
	if st := s.Stats(); st.Pending == 0 || st.Failed != 0 {
		t.Fatalf("during the outage: Stats = %+v, want pending points and no failures", st)
	}
	srv.Restart()
	t.Logf("InfluxDB was down for %v (restart took %v)", time.Since(outage).Round(time.Millisecond), time.Since(restart).Round(time.Millisecond))

	for _, b := range part3 {
		if err := s.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	if err := closeInfluxSink(t, s, time.Minute); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	t.Logf("Close took %v; stats %+v", time.Since(start).Round(time.Millisecond), st)
	if st.Written != st.Points || st.Failed != 0 || st.Pending != 0 || st.Retried == 0 {
		t.Errorf("Stats = %+v, want all written after retries", st)
	}
	if !strings.Contains(logs.String(), "write failed; retrying") || !strings.Contains(logs.String(), "writes recovered") {
		t.Errorf("log lacks the outage and the recovery:\n%s", logs.String())
	}
	compareInflux(t, srv, influxFlatten(batches))
}

// What an unreachable InfluxDB leaves in the spill file imports into a real
// one as exactly the samples written.
func TestInfluxSpillFileImports(t *testing.T) {
	influxCheckGoroutines(t)
	spill := filepath.Join(t.TempDir(), "spill.lp")
	s := newTestInfluxSink(t, InfluxConfig{URL: influxClosedURL(t), Bucket: "fabricbench/autogen", Token: influxTestToken, BatchSize: 300, SpillPath: spill})
	batches := influxBatches("run-spill", 40)
	for _, b := range batches {
		if err := s.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	err := closeInfluxSink(t, s, 500*time.Millisecond)
	st := s.Stats()
	t.Logf("Close: %v", err)
	if err == nil {
		t.Fatal("Close succeeded with an unreachable server")
	}
	wantMsg := fmt.Sprintf("%d of %d points not written", st.Points, st.Points)
	if !strings.Contains(err.Error(), wantMsg) || !strings.Contains(err.Error(), spill) {
		t.Errorf("Close error %q lacks %q or the spill path", err, wantMsg)
	}
	assertNoInfluxToken(t, "Close error", err.Error())
	assertNoInfluxToken(t, "Stats.LastError", st.LastError)
	if st.Unwritten != st.Points || st.Spilled != st.Points || st.Errors == 0 {
		t.Errorf("Stats = %+v", st)
	}
	raw, rerr := os.ReadFile(spill)
	if rerr != nil {
		t.Fatal(rerr)
	}
	assertNoInfluxToken(t, "spill file", string(raw))
	if n := len(influxSpillLines(t, spill)); int64(n) != st.Points {
		t.Fatalf("spill file has %d points, want %d", n, st.Points)
	}

	srv := influxtest.Start(t, influxtest.WithoutFlux())
	if err := srv.WriteLineProtocol(string(raw)); err != nil {
		t.Fatal(err)
	}
	compareInflux(t, srv, influxFlatten(batches))
}

// influxCheckGoroutines fails the test if goroutines it started (sink
// writers, HTTP connections, influxd waiters) outlive its cleanups. Call it
// first so that its cleanup runs last.
func influxCheckGoroutines(t *testing.T) {
	base := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(15 * time.Second)
		for runtime.NumGoroutine() > base {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines left, %d before the test:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// influxWaitFor polls cond until it holds; it fails only after a minute, far
// beyond what the condition needs, so it is not a timing assertion.
func influxWaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
