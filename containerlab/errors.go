package containerlab

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// maxErrors is how many problems an ErrorList reports before it stops
// listing them.
const maxErrors = 20

// Pos is a position in a topology file (1-based; zero when unknown).
type Pos struct {
	Line, Column int
}

// Error is one problem in a topology file. Its text is
//
//	FILE:LINE:COLUMN: PATH: MESSAGE
//
// e.g. `lab.clab.yml:14:9: topology.nodes.leaf0.cpu: not supported by the
// native deployer`. The position is left out when unknown (topologies built
// in memory), the path for problems with the file as a whole.
type Error struct {
	File   string
	Line   int // 1-based; 0 if unknown
	Column int // 1-based; 0 if unknown
	// Path is the field path, e.g. topology.nodes.leaf0.labels["fabricbench.asn"]
	// or topology.links[3].vars.rate.
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

// ErrorList is every problem found (at most 20, then a last entry saying
// how many more there are), sorted by position. Its text is one error per
// line. Parse and Topology.Lab return their problems as an ErrorList; use
// errors.As to get at the individual errors.
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

// Field paths. A map key that is not a plain identifier is written in
// brackets: topology.nodes["leaf.0"], labels["fabricbench.asn"].

func fieldPath(parent, key string) string {
	if !isIdent(key) {
		return parent + "[" + strconv.Quote(key) + "]"
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func indexPath(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

// parentPath strips the last element of a field path.
func parentPath(p string) string {
	cut, inQuote := 0, false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && (c == '.' || c == '['):
			cut = i
		}
	}
	return p[:cut]
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// positions maps field paths to where their keys and values are in the
// source; Topology keeps it so that Lab can position its errors too.
type positions struct {
	keys map[string]Pos
	vals map[string]Pos
}

// at returns the position to report path at: its key (key true) or value,
// else the other, else the nearest ancestor's.
func (p *positions) at(path string, key bool) Pos {
	if p == nil {
		return Pos{}
	}
	for {
		first, second := p.vals, p.keys
		if key {
			first, second = p.keys, p.vals
		}
		if q, ok := first[path]; ok {
			return q
		}
		if q, ok := second[path]; ok {
			return q
		}
		if path == "" {
			return Pos{}
		}
		path = parentPath(path)
	}
}
