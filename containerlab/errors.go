package containerlab

import (
	"github.com/fabricbench/fabricbench/internal/fileerr"
	"github.com/fabricbench/fabricbench/internal/yamlx"
)

// Pos is a position in a topology file (1-based; zero when unknown).
type Pos = yamlx.Pos

// Error is one problem in a topology file: FILE:LINE:COLUMN: PATH: MESSAGE.
type Error = fileerr.Error

// ErrorList is every problem found in a topology file (at most 20, then a last
// entry saying how many more there are), sorted by position, one per line;
// use errors.As to get at the individual errors.
type ErrorList = fileerr.List

// Field paths. A map key that is not a plain identifier is written in
// brackets: topology.nodes["leaf.0"], labels["fabricbench.asn"].

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
		path = fileerr.Parent(path)
	}
}
