// Package fileerr is the error type of fabricbench's input files (suites,
// topologies, inventories): one problem with its file, line, column and
// field path, and a sorted, deduplicated, bounded list of them.
package fileerr

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// MaxErrors is how many problems a List reports before it stops listing
// them.
const MaxErrors = 20

// Error is one problem in an input file. Its text is
//
//	FILE:LINE:COLUMN: PATH: MESSAGE
//
// e.g. `smoke.yaml:14:11: jobs[1].size: "2Mib" is not a size`. The
// position is left out when unknown, the path for problems with the file as
// a whole.
type Error struct {
	File   string
	Line   int // 1-based; 0 if unknown
	Column int // 1-based; 0 if unknown
	// Path is the field path, e.g. jobs[1].size or
	// topology.nodes.leaf0.cpu; empty for the file as a whole.
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
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// List is every problem found in a file. Its text is one error per line;
// errors.As finds the individual *Error values.
type List []*Error

func (l List) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap lets errors.As find the individual *Error values.
func (l List) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// Finish sorts the list by position, drops duplicates and keeps at most
// MaxErrors entries plus one saying how many more there are. It returns
// nil for an empty list.
func (l List) Finish(file string) error {
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
		if s := e.Error(); !seen[s] {
			seen[s] = true
			out = append(out, e)
		}
	}
	if n := len(out) - MaxErrors; n > 0 {
		out = append(out[:MaxErrors], &Error{File: file, Msg: fmt.Sprintf("too many errors (%d more not shown)", n)})
	}
	return out
}
