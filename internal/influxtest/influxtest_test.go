package influxtest

import (
	"strings"
	"testing"
)

func TestServerLifecycle(t *testing.T) {
	s := Start(t)
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL() = %q, want a loopback URL", s.URL())
	}
	if got, want := s.Bucket(), DefaultDB+"/autogen"; got != want {
		t.Fatalf("Bucket() = %q, want %q", got, want)
	}
	const lp = "m,host=a v=1i,w=2.5 1000000000\nm,host=b v=3i 2000000000\n"
	if err := s.WriteLineProtocol(lp); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		rows, err := s.Query(`SELECT * FROM "m" GROUP BY *`)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if len(rows) != 2 {
			t.Fatalf("%s: got %d rows, want 2: %+v", when, len(rows), rows)
		}
		a, b := rows[0], rows[1]
		if a.Measurement != "m" || a.Tags["host"] != "a" || a.Time != 1e9 || a.Values["v"] != int64(1) || a.Values["w"] != 2.5 {
			t.Errorf("%s: row 0 = %+v", when, a)
		}
		if b.Tags["host"] != "b" || b.Time != 2e9 || b.Values["v"] != int64(3) {
			t.Errorf("%s: row 1 = %+v", when, b)
		}
		if _, ok := b.Values["w"]; ok {
			t.Errorf("%s: row 1 has a value for the null column w: %+v", when, b)
		}
	}
	check("before restart")

	s.Stop()
	if err := s.ping(); err == nil {
		t.Fatal("/ping answered after Stop")
	}
	if _, err := s.Query("SHOW DATABASES"); err == nil {
		t.Fatal("query succeeded after Stop")
	}
	s.Stop() // no-op
	s.Restart()
	check("after restart")

	csv, err := s.QueryFlux(`from(bucket: "` + s.Bucket() + `") |> range(start: 0) |> filter(fn: (r) => r._measurement == "m" and r._field == "v")`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(csv, "_value") || strings.Count(csv, ",v,") != 2 {
		t.Errorf("unexpected Flux result:\n%s", csv)
	}

	if _, err := s.Query("SELECT nosuchsyntax FROM"); err == nil {
		t.Error("invalid InfluxQL did not return an error")
	}
	if err := s.WriteLineProtocol("not line protocol\n"); err == nil {
		t.Error("invalid line protocol did not return an error")
	}
}
