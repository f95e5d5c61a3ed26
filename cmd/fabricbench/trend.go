package main

import (
	"bytes"
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

func newTrendCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "trend DIR...",
		Short: "Plot KPI values across nightly results directories, with regressions marked and the latest anomalies",
		Long: `Line up the KPIs of results directories (nights), ordered by start
time: a DIR without results.json stands for its subdirectories that have
one (a folder of nightly results). Each value is compared with the same
matrix point's previous night as fabricbench compare does (the KPI's
regress tolerance, default 5% for a min and 10% for a max).

Writes trend.html into --out (default: the latest night's directory): one
gonum SVG plot per KPI (x the night, y the value, a line per matrix point,
the threshold dashed, regressions ringed in red), the regressions from one
night to the next and the latest night's anomalies. Prints the nights, the
regressions and the latest anomalies.

trend reports; it does not judge (use compare for a verdict).
` + exitStatusHelp(exitOK, exitBadInput, exitInfra),
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return trendDirs(cmd.OutOrStdout(), args, out)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write trend.html here (default: the latest night's directory)")
	return cmd
}

func trendDirs(w io.Writer, dirs []string, out string) error {
	nights, err := history.LoadDirs(dirs)
	if err != nil {
		return badInput(err)
	}
	t := history.BuildTrend(nights)
	latest := t.Latest()
	if out == "" {
		out = latest.Dir
	}
	regs := t.Regressions()
	perNight := map[int]int{}
	for _, r := range regs {
		perNight[r.Night]++
	}
	fmt.Fprintf(w, "%s: %d nights, %d KPIs at %d matrix points, %d regressions from one night to the next\n",
		latest.Results.Suite, len(nights), len(t.KPIs), len(latest.Results.Runs), len(regs))
	for i, n := range nights {
		fmt.Fprintf(w, "  night %d %s %s %s, %d/%d KPIs passed", i+1, n.Results.Started.UTC().Format("2006-01-02 15:04:05"), n.Dir,
			strings.ToUpper(n.Results.Status), n.Results.Summary.Passed, n.Results.Summary.KPIs)
		if i > 0 {
			fmt.Fprintf(w, ", %d regressed", perNight[i])
		}
		fmt.Fprintln(w)
	}
	for _, r := range regs {
		fmt.Fprintf(w, "  night %d REGRESSED %s\n", r.Night+1, report.CompareLine(&r.Row))
	}
	for _, run := range latest.Results.Runs {
		for i := range run.Anomalies {
			a := &run.Anomalies[i]
			rank := a.Rank
			if rank <= 0 {
				rank = i + 1
			}
			fmt.Fprintf(w, "  latest anomaly #%d [%s] %s\n", rank, run.ID, report.Culprit(a))
		}
	}
	var page bytes.Buffer
	if err := report.TrendHTML(&page, t); err != nil {
		return infraError(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return infraError(fmt.Errorf("trend: %w", err))
	}
	path := filepath.Join(out, report.TrendHTMLFile)
	if err := results.WriteFileAtomic(path, page.Bytes()); err != nil {
		return infraError(fmt.Errorf("trend: %w", err))
	}
	fmt.Fprintf(w, "trend: %s\n", path)
	return nil
}
