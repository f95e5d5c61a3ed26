package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/native"
	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/harness/bringup"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/report"
	"github.com/fabricbench/fabricbench/results"

	// Device drivers used by lab validation.
	_ "github.com/fabricbench/fabricbench/drivers/frr"
	_ "github.com/fabricbench/fabricbench/drivers/linux"
	_ "github.com/fabricbench/fabricbench/drivers/sonic"
)

type labOpts struct {
	runtime   string
	timeout   time.Duration
	stateRoot string
	out       string
	bgpWait   time.Duration
	// generate
	name, kind, rate, mgmt string
	srv6                   bool
}

func newLabCmd() *cobra.Command {
	var o labOpts
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Bring up, validate and tear down a lab from a containerlab topology file",
		Long: `Labs are containerlab topology files (*.clab.yml). Without Docker they are
deployed natively: every node a network namespace, every link a veth pair
(shaped with tbf when the link has vars.rate), FRR daemons in the switch
nodes, an OpenSSH server in every node on the lab's management network.
See docs/containerlab.md.

  fabricbench lab generate leafspine:leaves=4,spines=2,hosts_per_leaf=2 --name leafspine --out examples/labs
  fabricbench lab up examples/labs/leafspine.clab.yml
  fabricbench lab validate examples/labs/leafspine.clab.yml
  fabricbench lab down examples/labs/leafspine.clab.yml

containerlab's verbs work too: deploy (up), destroy (down), inspect (status).

A lab that does not come up (deploy fails, not ready in --timeout) or that
cannot be reached is an infrastructure error.

` + exitStatusHelp(exitOK, exitFail, exitBadInput, exitInfra),
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.stateRoot, "state-dir", labStateRoot(), "where native labs keep their state (environment: FABRICBENCH_LAB_STATE; built in: "+native.DefaultStateRoot+")")
	up := &cobra.Command{
		Use: "up TOPOLOGY",
		// containerlab's verbs, for its users.
		Aliases: []string{"deploy"},
		Short:   "Deploy a lab (natively, or with containerlab when it and Docker are present) and wait until it is ready",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return labUp(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], o)
		},
	}
	up.Flags().StringVar(&o.runtime, "runtime", "auto", "auto, native or containerlab")
	up.Flags().DurationVar(&o.timeout, "timeout", 120*time.Second, "how long to wait for readiness (BGP established, SSH up)")
	validate := &cobra.Command{
		Use:   "validate TOPOLOGY|INVENTORY",
		Short: "Check a deployed lab or real hardware (an inventory file): links, BGP sessions, leaf ECMP width, SRv6 SIDs, host reachability",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return labValidate(cmd.Context(), cmd.OutOrStdout(), args[0], o)
		},
	}
	validate.Flags().StringVar(&o.out, "out", "", "results directory (default runs/lab-<name>-<time>)")
	validate.Flags().DurationVar(&o.bgpWait, "bgp-wait", 0, "keep polling BGP sessions that are not established for this long")
	down := &cobra.Command{
		Use:     "down TOPOLOGY",
		Aliases: []string{"destroy"},
		Short:   "Remove a lab: its processes, namespaces, links and state (also a crashed lab's leftovers)",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return labDown(cmd.Context(), cmd.OutOrStdout(), args[0], o)
		},
	}
	status := &cobra.Command{
		Use:     "status TOPOLOGY",
		Aliases: []string{"inspect"},
		Short:   "Show a lab's nodes, management addresses and whether they are up",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return labStatus(cmd.OutOrStdout(), args[0], o)
		},
	}
	gen := &cobra.Command{
		Use:   "generate SPEC|TOPO-FILE",
		Short: "Write a containerlab topology (and FRR configs) for a fabric spec or htsim .topo file",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return labGenerate(cmd.OutOrStdout(), args[0], o)
		},
	}
	gf := gen.Flags()
	gf.StringVar(&o.out, "out", ".", "directory to write <name>.clab.yml and <name>/ into")
	gf.StringVar(&o.name, "name", "", "lab name (default from the fabric)")
	gf.StringVar(&o.kind, "kind", "frr", "switch kind: frr or sonic-vs")
	gf.StringVar(&o.rate, "rate", "", "shape every link to this rate with tbf, e.g. 1gbit")
	gf.StringVar(&o.mgmt, "mgmt-subnet", "", "management IPv4 subnet (default 198.19.X.0/24 from the name)")
	gf.BoolVar(&o.srv6, "srv6", false, "give every switch an SRv6 uN micro-SID locator")
	cmd.AddCommand(up, validate, down, status, gen)
	return cmd
}

// loadLab parses and resolves a topology file; errors are bad input.
func loadLab(path string) (*containerlab.Lab, error) {
	top, err := containerlab.Parse(path)
	if err != nil {
		return nil, badInput(err)
	}
	lab, err := top.Lab(filepath.Dir(path))
	if err != nil {
		return nil, badInput(err)
	}
	return lab, nil
}

// containerlabUsable reports whether the containerlab binary and a Docker
// engine are present.
func containerlabUsable() (bool, string) {
	if _, err := exec.LookPath("containerlab"); err != nil {
		return false, "no containerlab binary in PATH"
	}
	if err := exec.Command("docker", "info").Run(); err != nil {
		return false, "no Docker engine (docker info failed)"
	}
	return true, ""
}

func labUp(ctx context.Context, stdout, stderr io.Writer, path string, o labOpts) error {
	lab, err := loadLab(path)
	if err != nil {
		return err
	}
	runtime := o.runtime
	switch runtime {
	case "auto":
		runtime = "native"
		if ok, _ := containerlabUsable(); ok {
			runtime = "containerlab"
		}
	case "native":
	case "containerlab":
		if ok, why := containerlabUsable(); !ok {
			return badInput(fmt.Errorf("--runtime containerlab: %s; use --runtime native", why))
		}
	default:
		return badInput(fmt.Errorf("--runtime %q: want auto, native or containerlab", o.runtime))
	}
	if runtime == "containerlab" {
		c := exec.CommandContext(ctx, "containerlab", "deploy", "--reconfigure", "-t", path)
		c.Stdout, c.Stderr = stdout, stderr
		if err := c.Run(); err != nil {
			return infraError(fmt.Errorf("containerlab deploy: %w", err))
		}
		return nil
	}
	d := native.New(native.WithStateRoot(o.stateRoot), native.WithReadyTimeout(o.timeout),
		native.WithLogf(func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }))
	start := time.Now()
	st, err := d.Deploy(ctx, lab, absPath(path))
	var nr *native.NotReadyError
	switch {
	case errors.As(err, &nr):
		fmt.Fprintf(stdout, "lab %s is up but not ready after %s:\n", lab.Name, o.timeout)
		for _, p := range nr.Pending {
			fmt.Fprintf(stdout, "  %s\n", p)
		}
		fmt.Fprintf(stdout, "it is left running: inspect it, then fabricbench lab down %s\n", path)
		return infraError(fmt.Errorf("lab %s not ready", lab.Name))
	case err != nil:
		return infraError(err)
	}
	target, err := bringup.FromLab(lab, st, path)
	if err != nil {
		return infraError(err)
	}
	if feats := bringup.LabFeatures(lab); len(feats) > 0 {
		diffs, err := bringup.Apply(ctx, target, feats, nil, false)
		fmt.Fprint(stdout, bringup.DiffSummary(diffs))
		if err != nil {
			return infraError(fmt.Errorf("configure lab %s: %w", lab.Name, err))
		}
	}
	fmt.Fprintf(stdout, "lab %s is up and ready in %s: %d nodes, %d links (native runtime)\n",
		lab.Name, time.Since(start).Round(time.Millisecond), len(lab.Nodes), len(lab.Links))
	printNodes(stdout, st)
	fmt.Fprintf(stdout, "ssh: ssh -i %s -o UserKnownHostsFile=%s %s@<mgmt address>\n", st.Key, st.KnownHosts, st.User)
	return nil
}

func printNodes(w io.Writer, st *native.State) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tROLE\tOS\tMGMT\tNAMESPACE")
	for _, n := range st.Nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", n.Name, orDash(n.Role), n.OS, n.Mgmt, n.Namespace)
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// isTopologyFile tells containerlab topology files from inventories.
func isTopologyFile(path string) bool {
	return strings.HasSuffix(path, ".clab.yml") || strings.HasSuffix(path, ".clab.yaml")
}

func labValidate(ctx context.Context, stdout io.Writer, path string, o labOpts) error {
	var target *bringup.Target
	var runtime string
	if isTopologyFile(path) {
		lab, err := loadLab(path)
		if err != nil {
			return err
		}
		d := native.New(native.WithStateRoot(o.stateRoot))
		st, err := d.LoadState(lab.Name)
		if err != nil {
			return infraError(fmt.Errorf("lab %s is not deployed here (%v); run fabricbench lab up %s", lab.Name, err, path))
		}
		if target, err = bringup.FromLab(lab, st, path); err != nil {
			return infraError(err)
		}
		runtime = "native"
	} else {
		// Real hardware: an inventory file (docs/inventory.md).
		hw, err := inventory.LoadHardware(path, drivers.Platforms()...)
		if err != nil {
			return badInput(err)
		}
		if target, err = bringup.FromHardware(hw); err != nil {
			return badInput(err)
		}
		runtime = "hardware"
	}
	out := o.out
	if out == "" {
		out = filepath.Join("runs", "lab-"+target.Name+"-"+time.Now().Format("20060102-150405"))
	}
	started := time.Now().UTC()
	b, err := bringup.Validate(ctx, target, bringup.Options{BGPWait: o.bgpWait})
	if err != nil {
		return infraError(err)
	}
	res := bringupResults("lab "+target.Name, "", runtime, started, b)
	if err := writeResults(out, res); err != nil {
		return infraError(err)
	}
	failed := bringup.Failed(b)
	fmt.Fprintf(stdout, "lab %s: %d checks, %d failed\n", target.Name, len(b.Checks), len(failed))
	for _, c := range failed {
		fmt.Fprintf(stdout, "  %-5s %s [%s]: %s\n", strings.ToUpper(c.Verdict), c.Name, c.Device, c.Evidence)
	}
	fmt.Fprintf(stdout, "results: %s\n", out)
	if len(failed) > 0 {
		return &exitError{code: exitFail, err: fmt.Errorf("lab %s: bring-up validation failed", target.Name)}
	}
	return nil
}

// bringupResults wraps a bring-up validation as a results.json with one run.
func bringupResults(suite, file, backend string, started time.Time, b *results.Bringup) *results.Results {
	status := results.Pass
	failed := bringup.Failed(b)
	for _, c := range failed {
		if c.Verdict == results.Fail && status == results.Pass {
			status = results.Fail
		}
	}
	if status == results.Pass && len(failed) > 0 {
		status = results.Fail // errors (device unreachable) fail the bring-up too
	}
	finished := time.Now().UTC()
	run := results.Run{ID: "bringup", Status: status, Fabric: b.Lab, WallS: finished.Sub(started).Seconds(), Bringup: b}
	return &results.Results{
		Schema: results.Schema, Suite: suite, SuiteFile: file, Backend: backend,
		Started: started, Finished: finished, Status: status,
		Summary: results.Summary{Runs: 1, Checks: len(b.Checks), ChecksFailed: len(failed)},
		Runs:    []results.Run{run},
	}
}

func writeResults(dir string, res *results.Results) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := results.Save(dir, res); err != nil {
		return err
	}
	return report.Render(dir)
}

func labDown(ctx context.Context, stdout io.Writer, path string, o labOpts) error {
	lab, err := loadLab(path)
	if err != nil {
		return err
	}
	// A lab deployed by containerlab is destroyed by it; the native
	// leftovers (if any) are removed below either way.
	if ok, _ := containerlabUsable(); ok {
		c := exec.CommandContext(ctx, "containerlab", "destroy", "--cleanup", "-t", path)
		c.Stdout, c.Stderr = stdout, stdout
		if err := c.Run(); err != nil {
			fmt.Fprintf(stdout, "containerlab destroy: %v\n", err)
		}
	}
	names := make([]string, len(lab.Nodes))
	for i, n := range lab.Nodes {
		names[i] = n.Name
	}
	rep, err := native.New(native.WithStateRoot(o.stateRoot)).Destroy(ctx, lab.Name, names)
	if err != nil {
		return infraError(err)
	}
	if rep.Empty() {
		fmt.Fprintf(stdout, "lab %s: nothing to remove\n", lab.Name)
	} else {
		fmt.Fprintf(stdout, "lab %s removed: %s\n", lab.Name, rep)
	}
	return nil
}

func labStatus(stdout io.Writer, path string, o labOpts) error {
	lab, err := loadLab(path)
	if err != nil {
		return err
	}
	st, err := native.New(native.WithStateRoot(o.stateRoot)).LoadState(lab.Name)
	if err != nil {
		fmt.Fprintf(stdout, "lab %s is not deployed\n", lab.Name)
		return &exitError{code: exitFail, err: fmt.Errorf("lab %s is not deployed", lab.Name)}
	}
	fmt.Fprintf(stdout, "lab %s (%s runtime), deployed %s, management %s via %s\n", st.Lab, st.Runtime,
		st.Created.Local().Format(time.RFC3339), st.Mgmt, st.RootIf)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tROLE\tOS\tMGMT\tNAMESPACE\tSSH")
	down := 0
	for _, n := range st.Nodes {
		ssh := "up"
		if _, err := os.Stat(filepath.Join("/run/netns", n.Namespace)); err != nil {
			ssh, down = "namespace missing", down+1
		} else if c, err := net.DialTimeout("tcp", net.JoinHostPort(n.Mgmt, "22"), time.Second); err != nil {
			ssh, down = "down", down+1
		} else {
			c.Close()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, orDash(n.Role), n.OS, n.Mgmt, n.Namespace, ssh)
	}
	tw.Flush()
	if down > 0 {
		return &exitError{code: exitFail, err: fmt.Errorf("lab %s: %d nodes down", lab.Name, down)}
	}
	return nil
}

func labGenerate(stdout io.Writer, spec string, o labOpts) error {
	f, err := inventory.Load(spec)
	if err != nil {
		return badInput(err)
	}
	opt := containerlab.GenOptions{Name: o.name, SwitchKind: o.kind, SRv6: o.srv6}
	if o.rate != "" {
		if opt.RateBps, err = containerlab.ParseRate(o.rate); err != nil {
			return badInput(fmt.Errorf("--rate: %w", err))
		}
	}
	if o.mgmt != "" {
		if opt.MgmtSubnet, err = parsePrefix(o.mgmt); err != nil {
			return badInput(fmt.Errorf("--mgmt-subnet: %w", err))
		}
	}
	g, err := containerlab.Generate(f, opt)
	if err != nil {
		return badInput(err)
	}
	if err := g.Write(o.out); err != nil {
		return infraError(err)
	}
	fmt.Fprintf(stdout, "wrote %d files under %s\n", len(g.Files), o.out)
	return nil
}

func parsePrefix(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return p.Masked(), nil
}

// labStateRoot is where native labs keep their state: $FABRICBENCH_LAB_STATE
// or /run/fabricbench/labs.
func labStateRoot() string {
	if d := os.Getenv("FABRICBENCH_LAB_STATE"); d != "" {
		return d
	}
	return native.DefaultStateRoot
}
