package harness

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fabricbench/fabricbench/telemetry"
)

// lostTargets splits a collection's error into the targets whose streams
// failed during the run (name -> why) and the rest (the sink failed, the
// run was interrupted). A target lost in the middle of the run does not
// lose the run: what it and the other targets sent is analysed, the
// target is named, and its ports' missing samples lower
// telemetry_coverage.
func lostTargets(err error) (map[string]string, error) {
	if err == nil {
		return nil, nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	lost := map[string]string{}
	var rest []error
	for _, e := range errs {
		var te *telemetry.TargetError
		if errors.As(e, &te) {
			lost[te.Target] = te.Err.Error()
			continue
		}
		rest = append(rest, e)
	}
	if len(lost) == 0 {
		return nil, err
	}
	return lost, errors.Join(rest...)
}

// telemetryLostError names the targets lost during the run, with when
// their samples stopped when the analysis found that (stalled: target ->
// "leaf0: its samples stop ...").
func telemetryLostError(lost map[string]string, stalled []string) error {
	when := map[string]string{}
	for _, s := range stalled {
		name, rest, _ := strings.Cut(s, ": ")
		when[name] = rest
	}
	names := make([]string, 0, len(lost))
	for n := range lost {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		if w := when[n]; w != "" {
			parts[i] = fmt.Sprintf("%s stalled (%s), then its stream failed: %s", n, w, lost[n])
		} else {
			parts[i] = fmt.Sprintf("%s: stream failed during the run: %s", n, lost[n])
		}
	}
	return fmt.Errorf("telemetry: %s", strings.Join(parts, "; "))
}
