package report

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/fabricbench/fabricbench/history"
	"github.com/fabricbench/fabricbench/results"
)

// Output file names inside a results directory.
const (
	JUnitFile = "junit.xml"
	HTMLFile  = "report.html"
)

// Render loads dir/results.json and the plot data of each run
// (Run.Files["plots"], relative to dir), then writes dir/junit.xml and
// dir/report.html, each atomically. A run whose plot data is missing or
// unreadable still gets its tables; the page says why its plots are
// missing. A comparison with the suite's baseline (compare.json, written
// by fabricbench run for a suite with a baseline) is shown at the top of
// report.html and added to junit.xml as a test suite. Render fails only
// when results.json or compare.json cannot be loaded or an output cannot
// be written.
func Render(dir string) error {
	r, err := results.Load(dir)
	if err != nil {
		return err
	}
	plots := map[string]*results.Plots{}
	notes := map[string][]string{}
	for _, run := range r.Runs {
		rel, ok := run.Files["plots"]
		if !ok || rel == "" {
			continue
		}
		if !filepath.IsLocal(filepath.FromSlash(rel)) {
			notes[run.ID] = append(notes[run.ID], fmt.Sprintf("Plot data not loaded: %q is not a path inside the results directory.", rel))
			continue
		}
		p, err := results.LoadPlots(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			notes[run.ID] = append(notes[run.ID], "Plot data not loaded: "+err.Error())
			continue
		}
		plots[run.ID] = p
	}

	// The comparison with the suite's baseline, when the run made one.
	cmp, err := history.Load(dir)
	if err != nil {
		return err
	}
	var extra []junitSuite
	if cmp != nil {
		extra = append(extra, compareSuite(cmp))
	}
	var junit bytes.Buffer
	if err := junitWith(&junit, r, extra); err != nil {
		return err
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, JUnitFile), junit.Bytes()); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var page bytes.Buffer
	if err := writeHTML(&page, r, plots, notes, cmp); err != nil {
		return err
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, HTMLFile), page.Bytes()); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
