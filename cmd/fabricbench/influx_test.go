package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/internal/influxtest"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/telemetry"
)

// Acceptance tests of `fabricbench run --influx` against a real InfluxDB
// 1.8.10 (internal/influxtest; skipped when the server binary is missing):
// every sample of the embedded store must be in InfluxDB with the same time,
// tags and value, and InfluxDB must hold nothing else, also when InfluxDB
// is down for a few seconds in the middle of the run.

// TestRunInfluxMatchesStore runs a small suite with --influx and compares
// InfluxDB with the run's embedded store, point by point.
func TestRunInfluxMatchesStore(t *testing.T) {
	srv := influxtest.Start(t, influxtest.WithoutFlux())
	out := filepath.Join(t.TempDir(), "out")

	start := time.Now()
	code, stdout, stderr := runCLI(t, influxRunArgs(t, srv, "testdata/influx-small.yaml", out)...)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	runID := checkInfluxRun(t, out)
	n := compareInfluxWithStore(t, srv, out, runID)
	t.Logf("run %q took %s; InfluxDB holds exactly the store's %d samples", runID, time.Since(start).Round(time.Millisecond), n)
	if n < 5000 {
		t.Errorf("only %d samples compared; the suite should produce thousands", n)
	}
}

// TestRunInfluxOutageLosesNothing stops InfluxDB (SIGKILL) while a run of
// several seconds streams telemetry into it, restarts it about 3 s later,
// and checks that InfluxDB ends up with exactly the store's samples.
func TestRunInfluxOutageLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: the run lasts several seconds")
	}
	const outage = 3 * time.Second
	srv := influxtest.Start(t, influxtest.WithoutFlux())
	out := filepath.Join(t.TempDir(), "out")
	storePath := filepath.Join(out, "runs", "influx-outage", "telemetry.csv.gz") // the run is named after the suite

	// The outage, in its own goroutine; the CLI runs in the test goroutine.
	type outageReport struct {
		err                          error // why there was no outage (the run ended first)
		stopped, restarted           time.Time
		rowsAtStop, rowsAtRestart    int64
		cliDoneAtStop, cliDoneBefore bool // CLI had returned right after Stop / before Restart
		restartOK                    bool
	}
	var cliDone atomic.Bool
	cliReturned := make(chan struct{})
	reportc := make(chan outageReport, 1)
	go func() {
		var r outageReport
		// Restart fails the test with Fatalf, which ends this goroutine:
		// the report is still delivered, with restartOK false.
		defer func() { reportc <- r }()
		// Wait until telemetry reaches the store (rows beyond the header).
		for {
			if rows, err := storeRows(storePath); err == nil && rows > 0 {
				break
			}
			select {
			case <-cliReturned:
				r.err = fmt.Errorf("the run ended before any telemetry reached %s", storePath)
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
		srv.Stop()
		r.stopped = time.Now()
		r.cliDoneAtStop = cliDone.Load()
		r.rowsAtStop, _ = storeRows(storePath)
		select {
		case <-time.After(outage):
		case <-cliReturned:
			// The CLI cannot return while InfluxDB is down (Close keeps
			// retrying for 2 minutes), unless something is wrong: restart
			// now so the test reports it quickly.
		}
		r.cliDoneBefore = cliDone.Load()
		r.rowsAtRestart, _ = storeRows(storePath)
		srv.Restart()
		r.restarted = time.Now()
		r.restartOK = true
	}()

	start := time.Now()
	code, stdout, stderr := runCLI(t, influxRunArgs(t, srv, "testdata/influx-outage.yaml", out)...)
	cliDone.Store(true)
	ended := time.Now()
	close(cliReturned)
	r := <-reportc

	if r.err != nil {
		t.Fatalf("no outage: %v (run took %s; make the suite longer)", r.err, ended.Sub(start).Round(time.Millisecond))
	}
	if !r.restartOK {
		t.Fatal("InfluxDB did not restart (see above)")
	}
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("run took %s; InfluxDB stopped %s after the start (store had %d samples), restarted %s later (store had %d samples); run ended %s after the restart",
		ended.Sub(start).Round(time.Millisecond), r.stopped.Sub(start).Round(time.Millisecond), r.rowsAtStop,
		r.restarted.Sub(r.stopped).Round(time.Millisecond), r.rowsAtRestart, ended.Sub(r.restarted).Round(time.Millisecond))
	if r.cliDoneAtStop {
		t.Fatal("the run had already ended when InfluxDB was stopped; make the suite longer")
	}
	if r.cliDoneBefore {
		t.Errorf("the run ended while InfluxDB was down, %s after the stop (the sink must wait for InfluxDB)", ended.Sub(r.stopped).Round(time.Millisecond))
	}
	if r.rowsAtRestart <= r.rowsAtStop {
		t.Errorf("no samples reached the store during the outage (%d at the stop, %d at the restart): the outage did not overlap the telemetry stream; make the suite longer",
			r.rowsAtStop, r.rowsAtRestart)
	}

	runID := checkInfluxRun(t, out)
	n := compareInfluxWithStore(t, srv, out, runID)
	t.Logf("InfluxDB holds exactly the store's %d samples; %d of them were collected during the outage",
		n, r.rowsAtRestart-r.rowsAtStop)
	if n < 100000 {
		t.Errorf("only %d samples compared; the suite should produce hundreds of thousands", n)
	}
}

// influxRunArgs returns the arguments of `fabricbench run` writing to srv,
// with a "user:password" token file (InfluxDB runs without authentication
// and ignores it).
func influxRunArgs(t *testing.T, srv *influxtest.Server, suite, out string) []string {
	t.Helper()
	tok := filepath.Join(t.TempDir(), "influx-token")
	if err := os.WriteFile(tok, []byte("user:pass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"run", suite, "--out", out, "--quiet",
		"--influx", srv.URL(), "--influx-bucket", srv.Bucket(), "--influx-token-file", tok}
}

// checkInfluxRun checks results.json of a one-run suite that wrote to
// InfluxDB and returns the run's ID.
func checkInfluxRun(t *testing.T, out string) string {
	t.Helper()
	res, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 1 {
		t.Fatalf("%d runs in results.json, want 1", len(res.Runs))
	}
	run := res.Runs[0]
	if run.Status != results.Pass || run.Telemetry.Influx == "" {
		t.Fatalf("run %q: status %q, error %q, influx %q", run.ID, run.Status, run.Error, run.Telemetry.Influx)
	}
	spill := filepath.Join(out, "runs", run.ID, "influx-unsent.lp")
	if b, err := os.ReadFile(spill); err == nil {
		t.Errorf("the run left a spill file (points not written to InfluxDB), %d bytes:\n%.1000s", len(b), b)
	}
	if !strings.HasSuffix(run.Telemetry.RunTag, "/"+run.ID) || !strings.HasPrefix(run.Telemetry.RunTag, res.Suite+"-") {
		t.Errorf("run tag %q: want <suite>-<start>/<run id>", run.Telemetry.RunTag)
	}
	if st := run.Telemetry.InfluxStats; st == nil || st.Written == 0 || st.Failed != 0 || st.Written != st.Points {
		t.Errorf("influx stats %+v: want every point written", st)
	}
	return run.Telemetry.RunTag
}

// storeRows returns the number of samples in the store file so far (rows
// after the header; the store writes whole rows only).
func storeRows(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n := int64(bytes.Count(b, []byte{'\n'}))
	if n == 0 {
		return 0, nil
	}
	return n - 1, nil
}

// influxKey identifies one field value of one InfluxDB point; every sample of
// the store must have its own.
type influxKey struct {
	Time                                         int64
	Target, Measurement, Interface, Queue, Field string
}

func (k influxKey) String() string {
	s := fmt.Sprintf("%d %s %s %s", k.Time, k.Target, k.Measurement, k.Interface)
	if k.Queue != "" {
		s += " queue " + k.Queue
	}
	return s + " " + k.Field
}

// compareInfluxWithStore checks that InfluxDB holds exactly the samples of
// the run's embedded store, with the run's ID as the run tag, and nothing
// else (no other run, measurement, tag or field type). It returns the
// number of samples compared.
func compareInfluxWithStore(t *testing.T, srv *influxtest.Server, out, runID string) int {
	t.Helper()
	// The run tag is <suite>-<start>/<run id>; the run's directory is runs/<run id>.
	storePath := filepath.Join(out, "runs", runID[strings.LastIndex(runID, "/")+1:], "telemetry.csv.gz")
	samples, err := telemetry.ReadStore(storePath)
	if err != nil {
		t.Fatal(err)
	}
	want := make(map[influxKey]int64, len(samples))
	var dups []string
	for i := range samples {
		s := &samples[i]
		if s.Run != runID {
			t.Fatalf("%s: sample with run %q, want %q: %+v", storePath, s.Run, runID, *s)
		}
		k := influxKey{s.Time, s.Target, s.Measurement, s.Interface, s.Queue, s.Field}
		if v, ok := want[k]; ok {
			dups = append(dups, fmt.Sprintf("%s = %d and %d", k, v, s.Value))
		}
		want[k] = s.Value
	}
	if len(dups) > 0 {
		t.Errorf("%s: %d samples repeat an earlier one's time, target, interface, queue and field (InfluxDB keeps one value per point and field); first: %s",
			storePath, len(dups), strings.Join(dups[:min(5, len(dups))], "; "))
	}

	// Nothing but this run's interface and queue points.
	query := func(q string) []influxtest.Row {
		t.Helper()
		rows, err := srv.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	var meas []string
	for _, r := range query(`SHOW MEASUREMENTS`) {
		meas = append(meas, fmt.Sprint(r.Values["name"]))
	}
	sort.Strings(meas)
	if got := strings.Join(meas, ","); got != telemetry.MeasInterface+","+telemetry.MeasQueue {
		t.Errorf("InfluxDB measurements: %s, want %s,%s", got, telemetry.MeasInterface, telemetry.MeasQueue)
	}
	for _, r := range query(`SHOW TAG VALUES WITH KEY = "run"`) {
		if v := fmt.Sprint(r.Values["value"]); v != runID {
			t.Errorf("InfluxDB %s has points of run %q; only run %q was written", r.Measurement, v, runID)
		}
	}
	for _, r := range query(`SHOW FIELD KEYS`) {
		if typ := fmt.Sprint(r.Values["fieldType"]); typ != "integer" {
			t.Errorf("InfluxDB field %s.%v has type %s, want integer", r.Measurement, r.Values["fieldKey"], typ)
		}
	}

	// Every field value of every point.
	got := make(map[influxKey]int64, len(samples))
	var bad []string
	cond := `"run" = '` + strings.ReplaceAll(runID, `'`, `\'`) + `'`
	for _, m := range []string{telemetry.MeasInterface, telemetry.MeasQueue} {
		rows := query(`SELECT * FROM "` + m + `" WHERE ` + cond + ` GROUP BY *`)
		n := 0
		for _, r := range rows {
			for tag := range r.Tags {
				if tag != "run" && tag != "target" && tag != "interface" && tag != "queue" {
					bad = append(bad, fmt.Sprintf("point %d %s has unexpected tag %s=%q", r.Time, m, tag, r.Tags[tag]))
				}
			}
			for field, v := range r.Values {
				n++
				k := influxKey{r.Time, r.Tags["target"], r.Measurement, r.Tags["interface"], r.Tags["queue"], field}
				iv, ok := v.(int64)
				if !ok {
					bad = append(bad, fmt.Sprintf("%s = %v (%T), want an integer", k, v, v))
					continue
				}
				if _, dup := got[k]; dup { // GROUP BY * puts every tag set in its own series
					bad = append(bad, fmt.Sprintf("%s returned twice", k))
				}
				got[k] = iv
			}
		}
		// Cross-check against COUNT, so that a truncated SELECT result
		// (max-row-limit) cannot go unnoticed.
		var count int64
		for _, r := range query(`SELECT COUNT(*) FROM "` + m + `" WHERE ` + cond) {
			for _, v := range r.Values {
				if c, ok := v.(int64); ok {
					count += c
				}
			}
		}
		if int64(n) != count {
			t.Errorf("InfluxDB %s: SELECT * returned %d field values, COUNT(*) says %d", m, n, count)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		t.Errorf("%d unexpected values in InfluxDB; first: %s", len(bad), strings.Join(bad[:min(5, len(bad))], "; "))
	}

	// The two sets must be equal.
	var missing, extra, differ []influxKey
	for k, v := range want {
		gv, ok := got[k]
		switch {
		case !ok:
			missing = append(missing, k)
		case gv != v:
			differ = append(differ, k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	show := func(ks []influxKey, f func(influxKey) string) string {
		sort.Slice(ks, func(i, j int) bool { return ks[i].String() < ks[j].String() })
		var b strings.Builder
		for i, k := range ks {
			if i == 5 {
				fmt.Fprintf(&b, "\n\t... and %d more", len(ks)-5)
				break
			}
			fmt.Fprintf(&b, "\n\t%s", f(k))
		}
		if len(ks) > 5 {
			fmt.Fprintf(&b, "\n\ttime range %d..%d ns", ks[0].Time, ks[len(ks)-1].Time)
		}
		return b.String()
	}
	if len(missing) > 0 {
		t.Errorf("%d of the store's %d samples are missing from InfluxDB:%s", len(missing), len(want),
			show(missing, func(k influxKey) string { return fmt.Sprintf("%s = %d", k, want[k]) }))
	}
	if len(extra) > 0 {
		t.Errorf("InfluxDB has %d values that are not in the store:%s", len(extra),
			show(extra, func(k influxKey) string { return fmt.Sprintf("%s = %d", k, got[k]) }))
	}
	if len(differ) > 0 {
		t.Errorf("%d values differ between the store and InfluxDB:%s", len(differ),
			show(differ, func(k influxKey) string { return fmt.Sprintf("%s: store %d, InfluxDB %d", k, want[k], got[k]) }))
	}
	if len(got) != len(samples) {
		t.Errorf("InfluxDB holds %d values, the store %d samples", len(got), len(samples))
	}
	return len(samples)
}
