package suite

// CheckFunc is a check of a decoded and validated suite beyond the suite
// format, e.g. whether a backend can do what it asks. It reports each
// problem with errf(path, format, args...), path being the field path
// (features.ecn.enabled, faults[1].kind, telemetry.interval): the problem
// is then positioned like the suite's own errors, at the field's value, at
// its nearest ancestor the file sets when the value is a default, or at the
// matrix value that set it.
type CheckFunc func(s *Suite, errf func(path, format string, args ...any))

// PointsChecked is Points with check run on every point's suite. Its
// problems are returned like validation errors (an ErrorList: file, line,
// column, field path), those of some matrix points only naming the first
// such point.
func (s *Suite) PointsChecked(check CheckFunc) ([]Point, error) {
	return s.points(check)
}
