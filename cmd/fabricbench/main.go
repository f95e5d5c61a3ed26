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
	root.SetHelpCommand(newHelpCmd())
	root.AddCommand(newSimCmd(), newRunCmd(), newPlanCmd(), newMergeCmd(), newReportCmd(), newLabCmd(), newInventoryCmd(), newAgentCmd(), newExporterCmd(), newCompareCmd(), newTrendCmd())
	// Cobra adds its completion command at Execute; adding it now lets
	// withUsage make its unknown subcommands errors too.
	root.InitDefaultCompletionCmd()
	withUsage(root)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError(c, err) })
	return root
}

// newHelpCmd is 'help [COMMAND]': an unknown command is an error (exit
// 2), not a usage page with exit status 0 as cobra's own help command does.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err != nil {
				return err
			}
			if len(rest) > 0 && target.HasSubCommands() {
				return unknownCommand(target, rest[0])
			}
			if len(rest) > 0 {
				return usageError(target, fmt.Errorf("%s has no subcommand %q", target.CommandPath(), rest[0]))
			}
			return target.Help()
		},
	}
}

// withUsage makes every command's argument errors (a missing or extra
// argument) say how the command is used: usage output is silenced for
// failures of the command itself, where it would bury the real error.
//
// A command that only groups subcommands (lab, inventory, ...) runs its
// help when called alone and refuses anything else as an unknown
// subcommand (exit 2); cobra would print the help and exit 0 for
// 'fabricbench lab frobnicate'.
func withUsage(c *cobra.Command) {
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil && c.Name() != "help" {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(cmd, args[0])
			}
			return nil
		}
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
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

// unknownCommand is the error for an unknown subcommand of c, with
// cobra's suggestions.
func unknownCommand(c *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, c.CommandPath())
	if s := c.SuggestionsFor(name); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return usageError(c, fmt.Errorf("%s (its commands: %s)", msg, strings.Join(names, ", ")))
}

// usageError adds the command's usage line and where to read more.
func usageError(c *cobra.Command, err error) error {
	use := c.UseLine()
	if c.HasSubCommands() {
		use = c.CommandPath() + " COMMAND"
	}
	return fmt.Errorf("%w\nusage: %s\n(see '%s --help')", err, use, c.CommandPath())
}
