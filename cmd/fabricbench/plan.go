package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
)

func newPlanCmd() *cobra.Command {
	var o runOpts
	cmd := &cobra.Command{
		Use:   "plan SUITE",
		Short: "Plan a suite without running it: check it against the backend and list every matrix point and what it would deploy",
		Long: `Plan a suite as run does, up to its first side effect, and print the plan:
the suite is parsed and validated, every matrix point is resolved against
its fabric, checked against what the backend can do, and listed with its
features, transport, telemetry, jobs (and flow counts), faults and KPIs,
and what the backend would deploy for it (the simulator's gNMI targets,
the lab's namespaces, links, agents and exporters, or what happens to an
inventory's devices). Nothing is brought up, connected to or written.

Features on by default (features.ecn, features.trimming) follow the
backend: on where it can do them, off with a one-line note where it
cannot (the netns lab, hardware). Asked for explicitly, what the backend
cannot do is refused at the suite field.

'run --dry-run' (without --slurm) is the same.

` + exitStatusHelp(exitOK, exitBadInput, exitInterrupted),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.backendSet = cmd.Flags().Changed("backend")
			return planSuite(cmd.Context(), cmd.OutOrStdout(), args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.backend, "backend", "sim", "backend to plan for: "+strings.Join(harness.Backends(), ", "))
	f.StringVar(&o.inventory, "inventory", "", "plan for the devices of this hardware inventory (the hardware backend)")
	return cmd
}

// planSuite prints the plan of a suite for a backend (plan, run
// --dry-run). Bad input is exit status 2.
func planSuite(ctx context.Context, w io.Writer, file string, o runOpts) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := pickHardware(file, &o); err != nil {
		return err
	}
	pl, err := harness.PlanSuite(ctx, file, o.backend, o.inventory)
	var ie *harness.InputError
	switch {
	case errors.As(err, &ie):
		return badInput(err)
	case err != nil && ctx.Err() != nil:
		return &exitError{code: exitInterrupted, err: errors.New("interrupted while planning the suite")}
	case err != nil:
		return badInput(err)
	}
	writePlan(w, file, pl)
	return nil
}

func writePlan(w io.Writer, file string, pl *harness.SuitePlan) {
	s := pl.Suite
	fmt.Fprintf(w, "suite %s (%s) on the %s backend: %s\n", s.Name, file, pl.Backend, runspec.Plural(len(pl.Points), "point", "points"))
	for _, n := range pl.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if b := s.Bringup; b != nil {
		what := "validate the deployed lab " + b.Topology
		if b.Deploy {
			what = "deploy and validate the lab " + b.Topology
		}
		if b.Teardown {
			what += ", torn down at the end"
		}
		fmt.Fprintf(w, "bring-up: %s; a failed check stops the suite\n", what)
	}
	for _, l := range harness.DescribeTests(pl) {
		fmt.Fprintln(w, l)
	}
	for i, p := range pl.Points {
		fmt.Fprintf(w, "\npoint %d/%d: %s", i+1, len(pl.Points), p.ID)
		if len(p.Params) > 0 {
			keys := make([]string, 0, len(p.Params))
			for k := range p.Params {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var kv []string
			for _, k := range keys {
				kv = append(kv, k+"="+p.Params[k])
			}
			fmt.Fprintf(w, " (%s)", strings.Join(kv, ", "))
		}
		fmt.Fprintln(w)
		if len(p.NotApplicable) > 0 {
			for _, why := range p.NotApplicable {
				fmt.Fprintf(w, "  NOT APPLICABLE on the %s backend: %s\n", pl.Backend, why)
			}
			continue
		}
		for _, l := range p.Describe() {
			fmt.Fprintf(w, "  %s\n", l)
		}
		for _, l := range harness.DescribeDeploy(pl.Backend, p) {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	fmt.Fprintln(w, "\nplan only: nothing was brought up, run or written")
}
