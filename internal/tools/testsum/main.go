// Command testsum reads `go test -json` (test2json) events on standard input
// and prints what a person needs from a test run: one line per package (as
// plain `go test` does), the whole output of every failed test, and at the
// end every skipped test with the reason it printed. scripts/test.sh pipes
// the test run through it, so a skip is never silent.
//
// Exit status: 0 when every package passed, 1 when a test or a package
// failed (or the stream ended without a package result: a crashed build),
// 2 on unreadable input.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is one test2json record (cmd/test2json documents the fields).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type key struct{ pkg, test string }

// summary accumulates a run.
type summary struct {
	out     io.Writer
	output  map[key][]string // per test (and per package, test ""), its output lines
	skipped []key
	failed  []key
	pkgs    map[string]string // package -> final action
	order   []string
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, output: map[key][]string{}, pkgs: map[string]string{}}
}

func (s *summary) add(e event) {
	k := key{e.Package, e.Test}
	switch e.Action {
	case "output":
		s.output[k] = append(s.output[k], e.Output)
	case "build-output":
		// go test -json reports compiler errors as build events
		// (Go 1.24+); show them as they come.
		fmt.Fprint(s.out, e.Output)
	case "skip":
		if e.Test != "" {
			s.skipped = append(s.skipped, k)
			return
		}
		s.finish(e)
	case "fail":
		if e.Test != "" {
			s.failed = append(s.failed, k)
			return
		}
		s.finish(e)
	case "pass":
		if e.Test == "" {
			s.finish(e)
		}
	}
}

// finish prints a package's line when its result arrives.
func (s *summary) finish(e event) {
	if _, seen := s.pkgs[e.Package]; !seen {
		s.order = append(s.order, e.Package)
	}
	s.pkgs[e.Package] = e.Action
	switch e.Action {
	case "pass":
		fmt.Fprintf(s.out, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
	case "skip":
		fmt.Fprintf(s.out, "?   \t%s\t[no test files]\n", e.Package)
	case "fail":
		var tests []key
		for _, k := range s.failed {
			if k.pkg == e.Package {
				tests = append(tests, k)
			}
		}
		if len(tests) == 0 {
			// No failed test: the package itself failed (build error,
			// panic, timeout); its own output says why.
			for _, l := range s.output[key{e.Package, ""}] {
				fmt.Fprint(s.out, l)
			}
		}
		for _, k := range tests {
			for _, l := range s.output[k] {
				fmt.Fprint(s.out, l)
			}
		}
		fmt.Fprintf(s.out, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
	}
}

// reason is the text a skipped test printed (its t.Skip message and any
// log lines), without the "=== RUN" and "--- SKIP" framing.
func (s *summary) reason(k key) string {
	var parts []string
	for _, l := range s.output[k] {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason printed)"
	}
	return strings.Join(parts, " | ")
}

// report prints the closing summary and returns the exit status.
func (s *summary) report() int {
	failedPkgs := 0
	for _, p := range s.order {
		if s.pkgs[p] == "fail" {
			failedPkgs++
		}
	}
	sort.Slice(s.skipped, func(i, j int) bool {
		if s.skipped[i].pkg != s.skipped[j].pkg {
			return s.skipped[i].pkg < s.skipped[j].pkg
		}
		return s.skipped[i].test < s.skipped[j].test
	})
	fmt.Fprintln(s.out)
	if len(s.skipped) == 0 {
		fmt.Fprintln(s.out, "skipped tests: none")
	} else {
		fmt.Fprintf(s.out, "skipped tests: %d\n", len(s.skipped))
		for _, k := range s.skipped {
			fmt.Fprintf(s.out, "  SKIP %s %s: %s\n", k.pkg, k.test, s.reason(k))
		}
	}
	fmt.Fprintf(s.out, "packages: %d, failed: %d; failed tests: %d\n", len(s.order), failedPkgs, len(s.failed))
	for _, k := range s.failed {
		fmt.Fprintf(s.out, "  FAIL %s %s\n", k.pkg, k.test)
	}
	if failedPkgs > 0 || len(s.failed) > 0 {
		return 1
	}
	if len(s.order) == 0 {
		fmt.Fprintln(s.out, "no package results: the test run did not start or crashed")
		return 1
	}
	return 0
}

func run(in io.Reader, out io.Writer) int {
	s := newSummary(out)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			// Not an event (go build errors are printed as plain text).
			fmt.Fprintln(out, string(line))
			continue
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			fmt.Fprintln(out, string(line))
			continue
		}
		s.add(e)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(out, "testsum: reading the test events: %v\n", err)
		s.report()
		return 2
	}
	return s.report()
}

func main() { os.Exit(run(os.Stdin, os.Stdout)) }
