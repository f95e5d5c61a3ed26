package suite

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// maxErrors is how many problems an ErrorList reports before it stops
// listing them.
const maxErrors = 20

// Error is one problem in a suite file. Its text is
//
//	FILE:LINE:COLUMN: PATH: MESSAGE
//
// e.g. `smoke.yaml:14:11: jobs[1].size: "2Mib" is not a size (want e.g.
// 2MiB, 512KB)`. Column, line and path are left out when unknown.
type Error struct {
	File   string
	Line   int // 1-based; 0 if unknown
	Column int // 1-based; 0 if unknown
	// Path is the field path, e.g. jobs[1].size, telemetry.interval or
	// matrix["transport.lb"][2]; empty for problems with the file as a
	// whole (syntax errors).
	Path string
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Column))
		}
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem found in a suite file (at most 20, then a
// last entry saying how many more there are), sorted by position. Its text
// is one error per line. Load and Parse return validation problems as an
// ErrorList; use errors.As to get at the individual errors.
type ErrorList []*Error

func (l ErrorList) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap lets errors.As find the individual *Error values.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// finish sorts, deduplicates and truncates a list; nil when it is empty.
func (l ErrorList) finish(file string) error {
	if len(l) == 0 {
		return nil
	}
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return a.Path < b.Path
	})
	out := l[:0]
	seen := make(map[string]bool, len(l))
	for _, e := range l {
		s := e.Error()
		if seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, e)
	}
	if n := len(out) - maxErrors; n > 0 {
		out = append(out[:maxErrors], &Error{File: file, Msg: fmt.Sprintf("too many errors (%d more not shown)", n)})
	}
	return out
}
