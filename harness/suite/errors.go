package suite

import "github.com/fabricbench/fabricbench/internal/fileerr"

// Error is one problem in a suite file: FILE:LINE:COLUMN: PATH: MESSAGE.
type Error = fileerr.Error

// ErrorList is every problem found in a suite file (at most 20, then a last
// entry saying how many more there are), sorted by position, one per line;
// use errors.As to get at the individual errors.
type ErrorList = fileerr.List
