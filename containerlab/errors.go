package containerlab

import (
	"strconv"

	"github.com/fabricbench/fabricbench/internal/fileerr"
)

// Pos is a position in a topology file (1-based; zero when unknown).
type Pos struct {
	Line, Column int
}

// Error is one problem in a topology file: FILE:LINE:COLUMN: PATH: MESSAGE.
type Error = fileerr.Error

// ErrorList is every problem found in a topology file (at most 20, then a last
// entry saying how many more there are), sorted by position, one per line;
// use errors.As to get at the individual errors.
type ErrorList = fileerr.List

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
