package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/slurm"
	"github.com/fabricbench/fabricbench/results"
)

func newMergeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "merge DIR",
		Short: "Merge points run apart (run --point, run --slurm) into results.json, junit.xml and report.html",
		Long: `Merge the points of a suite run one by one, with fabricbench run SUITE
--point K --out DIR (on one machine or several, into a shared directory or
copies gathered into DIR afterwards), or as a Slurm job array (run --slurm,
whose merge job runs this).

DIR/runs/<id>/run.json holds each point's run; DIR/plan.json (or any
run.json) lists the points in matrix order. The merge writes
DIR/results.json, junit.xml and report.html as a local run of the whole
suite would: the same runs in matrix order, the same values, summary and
exit status. A point without run.json is a run in error saying so; after
--slurm, with the Slurm state of its task and the task's log (also for a
task Slurm stopped while it ran).

` + exitStatusHelp(exitOK, exitFail, exitBadInput, exitInfra, exitInterrupted),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return mergeDir(cmd, cmd.OutOrStdout(), args[0])
		},
	}
}

func mergeDir(cmd *cobra.Command, stdout io.Writer, dir string) error {
	var opts harness.MergeOptions
	job, err := slurm.LoadJob(dir)
	switch {
	case err == nil:
		opts.Task = slurm.TaskInfo(cmd.Context(), job)
	case !errors.Is(err, os.ErrNotExist):
		return badInput(err)
	}
	res, err := harness.Merge(dir, opts)
	var ie *harness.InputError
	switch {
	case errors.As(err, &ie):
		return badInput(err)
	case err != nil:
		return infraError(err)
	}
	printRunSummary(stdout, res)
	fmt.Fprintf(stdout, "results: %s\n", filepath.Join(dir, "report.html"))
	if code := results.ExitCode(res); code != exitOK {
		return &exitError{code: code, err: fmt.Errorf("suite %s: %s", res.Suite, res.Status)}
	}
	return nil
}
