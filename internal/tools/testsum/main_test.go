package main

import (
	"bytes"
	"strings"
	"testing"
)

// A stream with a pass, a skip with its reason, a failed test and a
// package that failed to build: the summary lists the skip with its
// reason, shows the failed test's output and exits 1.
func TestSummary(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"a"}`,
		`{"Action":"run","Package":"a","Test":"TestOK"}`,
		`{"Action":"output","Package":"a","Test":"TestOK","Output":"=== RUN   TestOK\n"}`,
		`{"Action":"pass","Package":"a","Test":"TestOK","Elapsed":0.01}`,
		`{"Action":"run","Package":"a","Test":"TestLab"}`,
		`{"Action":"output","Package":"a","Test":"TestLab","Output":"=== RUN   TestLab\n"}`,
		`{"Action":"output","Package":"a","Test":"TestLab","Output":"    lab_test.go:12: needs root: FRR is not installed\n"}`,
		`{"Action":"output","Package":"a","Test":"TestLab","Output":"--- SKIP: TestLab (0.00s)\n"}`,
		`{"Action":"skip","Package":"a","Test":"TestLab","Elapsed":0}`,
		`{"Action":"output","Package":"a","Output":"ok  \ta\t0.02s\n"}`,
		`{"Action":"pass","Package":"a","Elapsed":0.02}`,
		`{"Action":"run","Package":"b","Test":"TestBad"}`,
		`{"Action":"output","Package":"b","Test":"TestBad","Output":"    b_test.go:5: got 3, want 4\n"}`,
		`{"Action":"output","Package":"b","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}`,
		`{"Action":"fail","Package":"b","Test":"TestBad","Elapsed":0}`,
		`{"Action":"fail","Package":"b","Elapsed":0.1}`,
		`# c`,
		`c/c.go:3:1: syntax error`,
		`{"Action":"output","Package":"c","Output":"FAIL\tc [build failed]\n"}`,
		`{"Action":"fail","Package":"c","Elapsed":0}`,
	}, "\n")
	var out bytes.Buffer
	code := run(strings.NewReader(in), &out)
	got := out.String()
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{
		"ok  \ta\t0.020s",
		"b_test.go:5: got 3, want 4",
		"FAIL\tb\t0.100s",
		"c/c.go:3:1: syntax error",
		"skipped tests: 1",
		"SKIP a TestLab: lab_test.go:12: needs root: FRR is not installed",
		"packages: 3, failed: 2; failed tests: 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "=== RUN") {
		t.Errorf("output shows passing tests' framing:\n%s", got)
	}
}

func TestAllPassAndEmpty(t *testing.T) {
	var out bytes.Buffer
	if code := run(strings.NewReader(`{"Action":"pass","Package":"a","Elapsed":1}`), &out); code != 0 {
		t.Errorf("exit %d, want 0:\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "skipped tests: none") {
		t.Errorf("no skip line:\n%s", out.String())
	}
	out.Reset()
	if code := run(strings.NewReader(""), &out); code != 1 {
		t.Errorf("empty stream: exit %d, want 1", code)
	}
}
