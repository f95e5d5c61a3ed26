package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fabricbench/fabricbench/harness/suite"
	"github.com/fabricbench/fabricbench/history"
	"github.com/fabricbench/fabricbench/report"
	"github.com/fabricbench/fabricbench/results"
)

// compareWithBaseline is run's last step for a suite that names a
// baseline (suite field baseline: DIR or "latest-in DIR"): it compares the
// results in out with the baseline's, writes compare.json, compare.html
// and compare.xml into out, re-renders report.html and junit.xml with the
// comparison in them and prints the regressions. It returns exit status 1
// (naming the regressed KPIs) on a regression, 2 when the suite names a
// baseline directory that holds no results, 3 when the outputs cannot be
// written, nil otherwise. With latest-in and no suitable results there
// yet (the first night), it prints a note and compares nothing.
func compareWithBaseline(w io.Writer, suiteFile, out string, res *results.Results) error {
	s, err := suite.Load(suiteFile)
	if err != nil {
		return badInput(err)
	}
	// A comparison left in out by an earlier run into the same
	// directory is not this run's: remove it (and from the reports).
	stale := false
	for _, f := range []string{history.FileName, report.CompareHTMLFile, report.CompareJUnitFile} {
		if err := os.Remove(filepath.Join(out, f)); err == nil {
			stale = true
		}
	}
	none := func() error {
		if stale {
			if err := report.Render(out); err != nil {
				return infraError(err)
			}
		}
		return nil
	}
	if s.Baseline == "" {
		return none()
	}
	baseDir := s.Baseline
	if dir, ok := strings.CutPrefix(baseDir, suite.LatestInPrefix); ok {
		baseDir, err = history.LatestIn(dir, res.Suite, out)
		if err != nil {
			fmt.Fprintf(w, "note: no baseline to compare with: %v\n", err)
			return none()
		}
	}
	if abs, _ := filepath.Abs(out); abs == baseDir {
		return badInput(fmt.Errorf("baseline %s is this run's own results directory", baseDir))
	}
	base, err := results.Load(baseDir)
	if err != nil {
		return badInput(fmt.Errorf("baseline: %w", err))
	}
	c := history.Compare(baseDir, base, out, res)
	fmt.Fprint(w, "baseline: ")
	printComparison(w, c, true)
	if err := report.WriteCompare(out, c); err != nil {
		return infraError(err)
	}
	if err := report.Render(out); err != nil {
		return infraError(err)
	}
	fmt.Fprintf(w, "comparison: %s\n", filepath.Join(out, report.CompareHTMLFile))
	return regressionError(c)
}
