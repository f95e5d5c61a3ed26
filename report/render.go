package report

import (
	"bytes"
	"fmt"
	"path/filepath"

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
// missing. Render fails only when results.json cannot be loaded or an
// output cannot be written.
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

	var junit bytes.Buffer
	if err := JUnit(&junit, r); err != nil {
		return err
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, JUnitFile), junit.Bytes()); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var page bytes.Buffer
	if err := writeHTML(&page, r, plots, notes); err != nil {
		return err
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, HTMLFile), page.Bytes()); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
