package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/inventory"
)

func newInventoryCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inventory",
		Short: "Work with hardware inventory files (see docs/inventory.md)",
	}
	var resolve bool
	validate := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check an inventory file: syntax, devices, credentials references, links, planes and rails",
		Long: `Check an inventory file and print what it describes. Every problem is
reported as file:line:col: field: message, and the exit status is 2.

With --resolve, every device's credentials are resolved as a run would
(environment variables and files must exist; secrets are never printed) and
the known_hosts file must exist.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return inventoryValidate(cmd.OutOrStdout(), args[0], resolve)
		},
	}
	validate.Flags().BoolVar(&resolve, "resolve", false, "also resolve every device's credentials and known_hosts")
	cmd.AddCommand(validate)
	return cmd
}

func inventoryValidate(w io.Writer, path string, resolve bool) error {
	hw, err := inventory.LoadHardware(path, drivers.Platforms()...)
	if err != nil {
		return badInput(err)
	}
	f, err := hw.Fabric()
	if err != nil {
		return badInput(err)
	}
	if resolve {
		for _, d := range hw.Devices {
			if _, err := drivers.ConfigFor(hw, d.Name); err != nil {
				return badInput(fmt.Errorf("%s: %w", path, err))
			}
		}
	}
	fmt.Fprintf(w, "%s: inventory %s is valid: %d devices, %s\n", path, hw.Name, len(hw.Devices), f.Summary())
	if resolve {
		fmt.Fprintf(w, "credentials of all %d devices resolved\n", len(hw.Devices))
	}
	return nil
}
