// Package suite loads fabricbench suite files (YAML): what fabric to bring
// up, how to configure it, which jobs to run, which faults to inject, what
// telemetry to collect and which KPIs decide the verdict, plus a matrix of
// parameters to sweep. See docs/suites.md for the annotated format.
//
// Where things are:
//
//   - types.go: the Suite type and the defaults documented on its fields;
//   - load.go: Load and Parse, the way in: parse the document (within
//     yamlx's limits), walk it, decode it, fill in defaults, validate;
//   - walk.go: the walker that checks the document against the Go types it
//     decodes into (unknown keys, value kinds, limits), records every value
//     by field path and positions every problem at file:line:column; it
//     decodes the quantities and words (below) at their positions;
//   - quantity.go, enums.go: the field types that decode from text
//     (durations, sizes, queue, interval, offered load; the closed sets of
//     words): a value that does not decode is reported where it is
//     written, so that validating is decoding;
//   - validate.go: what the field comments rule out (ranges, names, hosts,
//     features, faults, KPIs);
//   - matrix.go: matrix keys, their expansion into Points, and problems in
//     a matrix value reported at that value.
package suite
