// Command fabricbench tests AI datacenter fabrics: it brings up fabrics,
// runs transport workloads on them and judges the result. With no hardware
// it runs everything on its own packet-level reference simulator.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fabricbench/fabricbench/results"
)

// Exit statuses (results.ExitStatuses documents them; the README, the
// --help texts and docs/results-schema.md list them).
const (
	exitOK       = results.ExitOK
	exitFail     = results.ExitFail     // a KPI or check failed
	exitBadInput = results.ExitBadInput // bad input: fix the suite, topology or flags
	// exitInfra: the backend, lab host, agents, telemetry, InfluxDB or
	// results directory failed.
	exitInfra = results.ExitInfrastructure
)

// exitError carries an exit status with an error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func badInput(err error) error { return &exitError{code: exitBadInput, err: err} }

func infraError(err error) error { return &exitError{code: exitInfra, err: err} }

// exitStatusHelp is the exit-status paragraph of the --help texts, from
// results.ExitStatuses: codes lists the statuses the command uses.
func exitStatusHelp(codes ...int) string {
	var parts []string
	for _, c := range codes {
		for _, s := range results.ExitStatuses {
			if s.Code == c {
				parts = append(parts, fmt.Sprintf("%d %s", s.Code, s.Meaning))
			}
		}
	}
	return "Exit status: " + strings.Join(parts, "; ") + "."
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	root := newRoot()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(os.Stderr, "fabricbench:", err)
	return exitCode(err)
}

// exitCode maps an error to the exit status.
func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// Flag and argument errors from cobra are usage errors: bad input.
	return exitBadInput
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "fabricbench",
		Short:         "Test AI datacenter fabrics: bring-up, KPI benchmarks, symmetry and straggler reports",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(newSimCmd(), newRunCmd(), newMergeCmd(), newReportCmd(), newLabCmd(), newInventoryCmd(), newAgentCmd(), newExporterCmd(), newCompareCmd(), newTrendCmd())
	withUsage(root)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError(c, err) })
	return root
}

// withUsage makes every command's argument errors (a missing or extra
// argument) say how the command is used: usage output is silenced for
// failures of the command itself, where it would bury the real error.
func withUsage(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usageError(cmd, err)
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		withUsage(sub)
	}
}

// usageError adds the command's usage line and where to read more.
func usageError(c *cobra.Command, err error) error {
	return fmt.Errorf("%w\nusage: %s\n(see '%s --help')", err, c.UseLine(), c.CommandPath())
}
