package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fabricbench/fabricbench/history"
	"github.com/fabricbench/fabricbench/report"
	"github.com/fabricbench/fabricbench/results"
)

// compareExitHelp is the exit-status paragraph of compare: 1 means a
// regression there, the other statuses as everywhere.
func compareExitHelp() string {
	return "Exit status: 0 no KPI regressed; 1 a KPI regressed; " +
		strings.TrimSuffix(strings.TrimPrefix(exitStatusHelp(exitBadInput, exitInfra), "Exit status: "), ".") +
		" (the comparison could not be written)."
}

func newCompareCmd() *cobra.Command {
	var out string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "compare BASE NEW",
		Short: "Compare two results directories KPI by KPI: values, change and a verdict against each KPI's regression tolerance",
		Long: `Compare the results directory NEW with BASE: every KPI at every matrix
point (matched by point ID and KPI name), the two values, the change and a
verdict: regressed (worse by more than the KPI's tolerance), improved
(better by more), within tolerance, new, removed, or not comparable (no
value on one side). A KPI that had a value in BASE and has none in NEW (its
job no longer finishes) regressed.

The tolerance is the suite's per-KPI "regress" (5%, or an amount in the
metric's unit), stored in results.json; without one it is 5% for a KPI with
a min (higher is better: bandwidths, fractions) and 10% for a KPI with a max
(lower is better: FCT and slowdown tails, completion times, counts).
Against a base value of 0 any worsening is a regression.

Writes compare.json, compare.html (self-contained) and compare.xml (JUnit)
into --out (default NEW) and prints the regressions, improvements and
unmatched KPIs.

` + compareExitHelp(),
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return compareDirs(cmd.OutOrStdout(), args[0], args[1], out, quiet)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write compare.json, compare.html and compare.xml here (default: NEW)")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the summary and the regressions")
	return cmd
}

func compareDirs(w io.Writer, baseDir, newDir, out string, quiet bool) error {
	base, err := results.Load(baseDir)
	if err != nil {
		return badInput(fmt.Errorf("BASE: %w", err))
	}
	nr, err := results.Load(newDir)
	if err != nil {
		return badInput(fmt.Errorf("NEW: %w", err))
	}
	if out == "" {
		out = newDir
	}
	c := history.Compare(baseDir, base, newDir, nr)
	if base.Suite != nr.Suite {
		fmt.Fprintf(w, "note: comparing suite %q with suite %q\n", nr.Suite, base.Suite)
	}
	printComparison(w, c, quiet)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return infraError(fmt.Errorf("compare: %w", err))
	}
	if err := report.WriteCompare(out, c); err != nil {
		return infraError(err)
	}
	fmt.Fprintf(w, "comparison: %s\n", filepath.Join(out, report.CompareHTMLFile))
	return regressionError(c)
}

// regressionError is exit status 1 naming the regressed KPIs, nil when
// none regressed.
func regressionError(c *history.Comparison) error {
	if !c.HasRegression() {
		return nil
	}
	var names []string
	for _, r := range c.Regressions() {
		names = append(names, r.KPI+" ["+r.Point+"]")
	}
	return &exitError{code: exitFail, err: fmt.Errorf("%d KPIs regressed against %s: %s", len(names), c.Base.Dir, strings.Join(names, ", "))}
}

// printComparison prints the verdict line, then one line per regressed,
// improved, new, removed and not comparable KPI (regressions only with
// quiet).
func printComparison(w io.Writer, c *history.Comparison, quiet bool) {
	s := c.Summary
	verdict := "NO REGRESSION"
	if c.HasRegression() {
		verdict = "REGRESSED"
	}
	fmt.Fprintf(w, "%s vs %s: %s — %d KPIs compared: %d regressed, %d improved, %d within tolerance, %d new, %d removed, %d not comparable\n",
		c.New.Dir, c.Base.Dir, verdict, s.Rows, s.Regressed, s.Improved, s.Unchanged, s.New, s.Removed, s.NotComparable)
	if len(c.PointsAdded) > 0 {
		fmt.Fprintf(w, "  matrix points only in NEW: %s\n", strings.Join(c.PointsAdded, ", "))
	}
	if len(c.PointsRemoved) > 0 {
		fmt.Fprintf(w, "  matrix points only in BASE: %s\n", strings.Join(c.PointsRemoved, ", "))
	}
	for _, st := range []string{history.Regressed, history.Improved, history.New, history.Removed, history.NotComparable} {
		if quiet && st != history.Regressed {
			continue
		}
		for i := range c.Rows {
			if r := &c.Rows[i]; r.Status == st {
				fmt.Fprintf(w, "  %s %s\n", strings.ToUpper(st), report.CompareLine(r))
			}
		}
	}
}
