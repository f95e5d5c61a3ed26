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
	return s.points(check, nil)
}

// PointsApplicable is PointsChecked with a second check, na: in a suite
// with tests, what na reports for a point makes that point not applicable
// (Point.NotApplicable, the problems as file:line:col: path: message)
// rather than an error, so that the tests a backend can run still run. In
// a suite without tests na is a check like check.
func (s *Suite) PointsApplicable(check, na CheckFunc) ([]Point, error) {
	return s.points(check, na)
}

// both runs the checks that are not nil.
func both(a, b CheckFunc) CheckFunc {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(s *Suite, errf func(path, format string, args ...any)) {
		a(s, errf)
		b(s, errf)
	}
}
