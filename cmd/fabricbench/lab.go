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
	"github.com/fabricbench/fabricbench/containerlab/clabrt"
	"github.com/fabricbench/fabricbench/containerlab/labinv"
	"github.com/fabricbench/fabricbench/containerlab/labrt"
	"github.com/fabricbench/fabricbench/containerlab/native"
	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/drivers/dockerx"
	"github.com/fabricbench/fabricbench/harness/bringup"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/report"
	"github.com/fabricbench/fabricbench/results"
	"github.com/fabricbench/fabricbench/units"

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
	converge  time.Duration
	varsFile  string
	rendered  bool
	watch     time.Duration
	force     bool // down
	dryRun    bool // gc
	// generate
	name, kind, rate, mgmt string
	image, hostImage       string
	srv6                   bool
	mtu                    int
	// inventory
	invOut, invName, defaultSpeed string
	gnmi                          []string
}

func newLabCmd() *cobra.Command {
	var o labOpts
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Bring up, validate and tear down a lab from a containerlab topology file",
		Long: `Labs are containerlab topology files (*.clab.yml), the files containerlab
users already have: templates with their variables file and ${VAR}
environment variables are rendered as containerlab renders them.

Two runtimes deploy them (--runtime, default auto):
  containerlab  containerlab and Docker, as containerlab users deploy; the
                default when both are present
  native        no Docker: every node a network namespace, every link a
                veth pair (shaped with tbf when the link has vars.rate), FRR
                daemons in the switch nodes, an OpenSSH server in every node
                on the lab's management network
Nodes without a fabricbench.role label get a role from the graph (FRR nodes
and routers are switches, tiered by distance from the hosts). See
docs/containerlab.md.

  fabricbench lab check lab.clab.yml            # what would be deployed; no Docker or root needed
  fabricbench lab generate leafspine:leaves=4,spines=2,hosts_per_leaf=2 --name leafspine --out examples/labs
  fabricbench lab up examples/labs/leafspine.clab.yml
  fabricbench lab validate examples/labs/leafspine.clab.yml
  fabricbench lab down examples/labs/leafspine.clab.yml
  fabricbench lab gc                            # labs of killed runs (lab up and run do it too)

containerlab's verbs work too: deploy (up), destroy (down), inspect (status).

A lab that does not come up (deploy fails, not ready in --timeout) or that
cannot be reached is an infrastructure error.

` + exitStatusHelp(exitOK, exitFail, exitBadInput, exitInfra),
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.stateRoot, "state-dir", labStateRoot(), "where labs keep their state (environment: FABRICBENCH_LAB_STATE; built in: "+labrt.DefaultStateRoot+")")
	pf.StringVar(&o.varsFile, "vars", "", "the topology's template variables file (default: containerlab's, FILE_vars.yaml next to it)")
	up := &cobra.Command{
		Use: "up TOPOLOGY",
		// containerlab's verbs, for its users.
		Aliases: []string{"deploy"},
		Short:   "Deploy a lab (with containerlab when it and Docker are present, else natively) and wait until it is ready",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return labUp(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], o)
		},
	}
	up.Flags().StringVar(&o.runtime, "runtime", "auto", "auto, containerlab or native")
	up.Flags().DurationVar(&o.timeout, "timeout", 120*time.Second, "how long to wait for readiness (routing protocols converged, SSH up)")
	check := &cobra.Command{
		Use:   "check TOPOLOGY",
		Short: "Parse, render and resolve a topology for a runtime and show what would be deployed, changing nothing",
		Long: `Everything lab up does before its first side effect: the file is rendered
(template, variables file, environment variables), parsed, resolved for the
runtime (kinds and properties it cannot honour are refused at their
file:line:column), roles are inferred, and the nodes, links and what the
runtime would create are listed. Needs no Docker and no root.

` + exitStatusHelp(exitOK, exitBadInput),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return labCheck(cmd.OutOrStdout(), args[0], o)
		},
	}
	check.Flags().StringVar(&o.runtime, "runtime", "auto", "auto (containerlab when it and Docker are present, else native), containerlab or native")
	check.Flags().BoolVar(&o.rendered, "rendered", false, "print the rendered topology (after templates and environment variables) too")
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
	validate.Flags().DurationVar(&o.converge, "converge", 0, "validate again every 2s while checks fail, for up to this long (routing still converging after lab up; at most 10m)")
	validate.Flags().DurationVar(&o.watch, "watch", 0, "validate again every INTERVAL (e.g. 10s) and print what changed, until interrupted (for a lab being cabled or configured)")
	down := &cobra.Command{
		Use:     "down TOPOLOGY",
		Aliases: []string{"destroy"},
		Short:   "Remove a lab: its containers or namespaces, processes, links and state (also a crashed lab's leftovers)",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return labDown(cmd.Context(), cmd.OutOrStdout(), args[0], o)
		},
	}
	down.Flags().BoolVar(&o.force, "force", false, "remove the lab also when a running fabricbench process (a run) owns it")
	gc := &cobra.Command{
		Use:   "gc",
		Short: "Remove the labs of fabricbench processes that are gone (killed runs, interrupted deploys); labs of running processes and labs from lab up are kept",
		Long: `Every lab a run or lab up deploys is recorded, before anything of it is
created, with its owner: the fabricbench process (PID and start time).
A run's lab lives as long as its run; a lab from lab up is kept until
lab down. When a run is killed (SIGKILL, the OOM killer, a CI timeout)
before it tears its lab down, the lab's namespaces or containers, its
processes, its Docker network and its state stay behind with an owner
that is gone. lab gc removes them, with the runtime that deployed them
(native or containerlab), and says what it removed; every run and lab
up does the same first. Nothing of a running process is touched.

  fabricbench lab gc --dry-run    # list what would be removed
  fabricbench lab gc

` + exitStatusHelp(exitOK, exitInfra),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return labGC(cmd.Context(), cmd.OutOrStdout(), o)
		},
	}
	gc.Flags().BoolVar(&o.dryRun, "dry-run", false, "only list the labs that would be removed")
	status := &cobra.Command{
		Use:     "status TOPOLOGY",
		Aliases: []string{"inspect"},
		Short:   "Show a lab's nodes, management addresses, how each is reached and whether it is up",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return labStatus(cmd.Context(), cmd.OutOrStdout(), args[0], o)
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
	gf.StringVar(&o.image, "image", "", "image of the FRR switches (default "+containerlab.DefaultFRRImage+")")
	gf.StringVar(&o.hostImage, "host-image", "", "image of the hosts (default "+containerlab.DefaultHostImage+")")
	gf.BoolVar(&o.srv6, "srv6", false, "give every switch an SRv6 uN micro-SID locator")
	gf.IntVar(&o.mtu, "mtu", 0, "every link's MTU, 68 to 65535 (default: the runtime's, 1500 natively, 9500 under containerlab)")
	inv := &cobra.Command{
		Use:   "inventory TOPOLOGY",
		Short: "Write the hardware inventory of a deployed lab, to drive it through the hardware path (run --inventory)",
		Long: `Writes the inventory (docs/inventory.md) of a deployed lab, native or
containerlab: its devices with their platform, role and management address,
the lab's SSH user and key (as a file: reference) and known_hosts, switch
ports (a router's ethN is EthernetN-1, with interface ethN), host NICs with
their addresses, and links with their rates. fabricbench run SUITE
--inventory FILE then drives the lab exactly as real switches: bring-up
checks, the configuration diff (--apply), agents over SSH and telemetry
from each switch's own gNMI server (--gnmi) or the kernel exporter.

  fabricbench lab up lab.clab.yml
  fabricbench lab inventory lab.clab.yml --out lab.inventory.yaml
  fabricbench run suite.yaml --inventory lab.inventory.yaml --apply

The inventory is valid while the lab is deployed (the key and known_hosts
are the lab's). See docs/hardware.md.

` + exitStatusHelp(exitOK, exitBadInput, exitInfra),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return labInventory(cmd.OutOrStdout(), args[0], o)
		},
	}
	ivf := inv.Flags()
	ivf.StringVar(&o.invOut, "out", "-", "the inventory file to write (- for standard output)")
	ivf.StringVar(&o.invName, "name", "", "the inventory's name (default the lab's)")
	ivf.StringVar(&o.defaultSpeed, "default-speed", "", "the speed of links without a rate (vars.rate), e.g. 10G; without it such a link is an error")
	ivf.StringArrayVar(&o.gnmi, "gnmi", nil, "a switch's own gNMI server: NODE=HOST:PORT,ca=FILE|skip-verify|insecure[,profile=openconfig|sonic][,user=U][,password=env:NAME|file:PATH] (repeatable; other devices get the kernel exporter)")
	cmd.AddCommand(up, check, validate, down, gc, status, gen, inv)
	return cmd
}

// chooseRuntime resolves --runtime (clabrt.Choose); a bad value or an
// impossible containerlab is bad input.
func chooseRuntime(flag string) (rt, why string, err error) {
	rt, why, err = clabrt.Choose(flag)
	if err != nil {
		return "", "", badInput(fmt.Errorf("--runtime: %w", err))
	}
	return rt, why, nil
}

// parseTopology renders and parses a topology file; errors are bad input.
func parseTopology(path string, o labOpts) (*containerlab.Topology, error) {
	top, err := containerlab.ParseFile(path, containerlab.RenderOptions{VarsFile: o.varsFile})
	if err != nil {
		return nil, badInput(err)
	}
	return top, nil
}

// loadLabFor parses and resolves a topology file for a runtime; errors are
// bad input.
func loadLabFor(path, runtime string, o labOpts) (*containerlab.Lab, error) {
	top, err := parseTopology(path, o)
	if err != nil {
		return nil, err
	}
	top.File = absPath(path)
	lab, err := top.Resolve(filepath.Dir(path), runtime)
	if err != nil {
		return nil, badInput(err)
	}
	return lab, nil
}

// loadLab resolves a topology file for the native runtime (tests).
func loadLab(path string) (*containerlab.Lab, error) {
	return loadLabFor(path, containerlab.RuntimeNative, labOpts{})
}

func runtimeOptions(o labOpts, logf func(string, ...any)) labrt.Options {
	return labrt.Options{StateRoot: o.stateRoot, ReadyTimeout: o.timeout, Logf: logf}
}

func labUp(ctx context.Context, stdout, stderr io.Writer, path string, o labOpts) error {
	rt, _, err := chooseRuntime(o.runtime)
	if err != nil {
		return err
	}
	lab, err := loadLabFor(path, rt, o)
	if err != nil {
		return err
	}
	r, err := labrt.Open(rt, runtimeOptions(o, func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }))
	if err != nil {
		return infraError(err)
	}
	reclaimLabs(ctx, stdout, o.stateRoot)
	start := time.Now()
	st, err := r.Deploy(ctx, lab)
	if err == nil || st != nil {
		// Deployed (or up but not ready, left for inspection): the lab is
		// the user's until lab down, not this process's.
		if kerr := labrt.Keep(o.stateRoot, lab.Name); kerr != nil {
			return infraError(kerr)
		}
	}
	var nr *labrt.NotReadyError
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
	fmt.Fprintf(stdout, "lab %s is up and ready in %s: %d nodes, %d links (%s runtime)\n",
		lab.Name, time.Since(start).Round(time.Millisecond), len(lab.Nodes), len(lab.Links)+len(lab.Stubs), rt)
	printNodes(stdout, st)
	fmt.Fprintf(stdout, "ssh: ssh -i %s -o UserKnownHostsFile=%s %s@<mgmt address>\n", st.Key, st.KnownHosts, st.User)
	return nil
}

func printNodes(w io.Writer, st *labrt.State) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tROLE\tOS\tMGMT\tREACHED BY\tNAMESPACE/CONTAINER")
	for _, n := range st.Nodes {
		where := n.Namespace
		if n.Container != "" {
			where = n.Container
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, orDash(n.Role), orDash(n.OS), orDash(n.Mgmt), reachedBy(n), where)
	}
	tw.Flush()
}

func reachedBy(n labrt.NodeState) string {
	switch n.Transport {
	case labrt.TransportSSH:
		return "ssh"
	case labrt.TransportDocker:
		return "docker exec"
	}
	return "-"
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

// deployedLab finds a deployed lab's state and resolves its topology for
// the runtime that deployed it.
func deployedLab(path string, o labOpts) (*containerlab.Lab, *labrt.State, error) {
	top, err := parseTopology(path, o)
	if err != nil {
		return nil, nil, err
	}
	st, err := labrt.LoadState(o.stateRoot, top.Name)
	if err != nil {
		return nil, nil, infraError(fmt.Errorf("lab %s is not deployed here (%v); run fabricbench lab up %s", top.Name, err, path))
	}
	rt := st.Runtime
	if rt == "" {
		rt = containerlab.RuntimeNative
	}
	top.File = absPath(path)
	lab, err := top.Resolve(filepath.Dir(path), rt)
	if err != nil {
		return nil, nil, badInput(err)
	}
	return lab, st, nil
}

func labValidate(ctx context.Context, stdout io.Writer, path string, o labOpts) error {
	if o.converge < 0 || o.converge > 10*time.Minute {
		return badInput(fmt.Errorf("--converge %s: want a duration from 0 to 10m", o.converge))
	}
	var target *bringup.Target
	var runtime string
	if isTopologyFile(path) {
		lab, st, err := deployedLab(path, o)
		if err != nil {
			return err
		}
		if target, err = bringup.FromLab(lab, st, path); err != nil {
			return infraError(err)
		}
		runtime = st.Runtime
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
	if o.watch > 0 {
		return watchValidate(ctx, stdout, target, runtime, out, o)
	}
	started := time.Now().UTC()
	b, err := bringup.Validate(ctx, target, bringup.Options{BGPWait: o.bgpWait, Converge: o.converge,
		Logf: func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }})
	if err != nil {
		return infraError(err)
	}
	res := bringupResults("lab "+target.Name, "", runtime, started, b)
	if err := writeResults(out, res); err != nil {
		return infraError(err)
	}
	printBringup(stdout, target.Name, b)
	fmt.Fprintf(stdout, "results: %s\n", out)
	if len(bringup.Failed(b)) > 0 {
		return &exitError{code: exitFail, err: fmt.Errorf("lab %s: bring-up validation failed: %s", target.Name, plural(len(b.Causes), "cause"))}
	}
	return nil
}

// printBringup prints a validation: the summary line, then each cause
// (device, port, what is wrong) with the checks that fail because of it.
func printBringup(w io.Writer, name string, b *results.Bringup) {
	failed := bringup.Failed(b)
	if len(failed) == 0 {
		fmt.Fprintf(w, "lab %s: %d checks, 0 failed\n", name, len(b.Checks))
		return
	}
	fmt.Fprintf(w, "lab %s: %d checks, %d failed: %s\n", name, len(b.Checks), len(failed), plural(len(b.Causes), "cause"))
	for _, c := range b.Causes {
		where := strings.TrimSpace(c.Device + " " + c.Interface)
		fmt.Fprintf(w, "CAUSE %d [%s] %s: %s\n", c.ID, where, c.Kind, c.Summary)
		for k, i := range c.Checks {
			if k < c.Roots || i < 0 || i >= len(b.Checks) {
				continue
			}
			ch := b.Checks[i]
			fmt.Fprintf(w, "    because of it: %-5s %s [%s]: %s\n", strings.ToUpper(ch.Verdict), ch.Name, ch.Device, ch.Evidence)
		}
	}
}

// plural writes "1 cause", "3 causes".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// watchValidate validates every o.watch and prints what changed since the
// last round (causes that appeared or went, checks that started or
// stopped failing), until ctx ends. Each round's results replace the last
// in out.
func watchValidate(ctx context.Context, stdout io.Writer, target *bringup.Target, runtime, out string, o labOpts) error {
	var prev *results.Bringup
	for round := 1; ; round++ {
		started := time.Now().UTC()
		b, err := bringup.Validate(ctx, target, bringup.Options{BGPWait: o.bgpWait})
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return infraError(err)
		}
		if err := writeResults(out, bringupResults("lab "+target.Name, "", runtime, started, b)); err != nil {
			return infraError(err)
		}
		stamp := time.Now().Format("15:04:05")
		if prev == nil {
			fmt.Fprintf(stdout, "[%s] round %d\n", stamp, round)
			printBringup(stdout, target.Name, b)
		} else if d := bringupDiff(prev, b); d != "" {
			fmt.Fprintf(stdout, "[%s] round %d: %d checks, %d failed, %s\n%s", stamp, round, len(b.Checks), len(bringup.Failed(b)),
				plural(len(b.Causes), "cause"), d)
		}
		prev = b
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.watch):
		}
	}
}

// bringupDiff says what changed between two validations of a lab.
func bringupDiff(a, b *results.Bringup) string {
	var s strings.Builder
	// A cause is the same cause while its kind, device and port are (its
	// summary's counts may change as the lab converges).
	key := func(c results.Cause) string { return c.Kind + " " + c.Device + " " + c.Interface }
	causes := func(x *results.Bringup) map[string]bool {
		m := map[string]bool{}
		for _, c := range x.Causes {
			m[key(c)] = true
		}
		return m
	}
	ca, cb := causes(a), causes(b)
	for _, c := range b.Causes {
		if !ca[key(c)] {
			fmt.Fprintf(&s, "  new cause [%s] %s: %s\n", strings.TrimSpace(c.Device+" "+c.Interface), c.Kind, c.Summary)
		}
	}
	for _, c := range a.Causes {
		if !cb[key(c)] {
			fmt.Fprintf(&s, "  fixed: [%s] %s: %s\n", strings.TrimSpace(c.Device+" "+c.Interface), c.Kind, c.Summary)
		}
	}
	verdict := func(x *results.Bringup) map[string]string {
		m := map[string]string{}
		for _, c := range x.Checks {
			m[c.Name] = c.Verdict
		}
		return m
	}
	va, vb := verdict(a), verdict(b)
	var changed []string
	for _, c := range b.Checks {
		if old, ok := va[c.Name]; ok && old != c.Verdict {
			changed = append(changed, fmt.Sprintf("  %s: %s -> %s (%s)", c.Name, old, c.Verdict, c.Evidence))
		} else if !ok {
			changed = append(changed, fmt.Sprintf("  %s: new, %s (%s)", c.Name, c.Verdict, c.Evidence))
		}
	}
	for _, c := range a.Checks {
		if _, ok := vb[c.Name]; !ok {
			changed = append(changed, fmt.Sprintf("  %s: gone", c.Name))
		}
	}
	for _, l := range changed {
		s.WriteString(l + "\n")
	}
	return s.String()
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
		Summary: results.Summary{Runs: 1, Checks: len(b.Checks), ChecksFailed: len(failed), Causes: len(b.Causes)},
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

// labDown removes a lab with the runtime that deployed it (its state
// says); without state, both runtimes look for leftovers by the lab's
// name. The topology only has to parse: a lab whose file no longer
// resolves can still be taken down.
func labDown(ctx context.Context, stdout io.Writer, path string, o labOpts) error {
	top, err := parseTopology(path, o)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(top.Nodes))
	for n := range top.Nodes {
		names = append(names, n)
	}
	opts := runtimeOptions(o, func(f string, a ...any) { fmt.Fprintf(stdout, f+"\n", a...) })
	if !o.force {
		if err := labrt.CheckNotInUse(o.stateRoot, top.Name); err != nil {
			return infraError(fmt.Errorf("%w; or lab down --force", err))
		}
	}
	var runtimes []string
	if st, err := labrt.LoadState(o.stateRoot, top.Name); err == nil {
		runtimes = []string{st.Runtime}
		if st.Runtime == "" {
			runtimes = []string{containerlab.RuntimeNative}
		}
	} else {
		runtimes = []string{containerlab.RuntimeNative}
		if ok, _ := clabrt.Usable(); ok {
			runtimes = append(runtimes, containerlab.RuntimeContainerlab)
		}
	}
	var all labrt.Report
	var errs []error
	for _, name := range runtimes {
		r, err := labrt.Open(name, opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rep, err := r.Destroy(ctx, top.Name, names)
		if err != nil {
			errs = append(errs, err)
		}
		if rep != nil {
			all.Namespaces = append(all.Namespaces, rep.Namespaces...)
			all.Processes = append(all.Processes, rep.Processes...)
			all.Interfaces = append(all.Interfaces, rep.Interfaces...)
			all.Containers = append(all.Containers, rep.Containers...)
			all.Networks = append(all.Networks, rep.Networks...)
			if rep.StateDir != "" {
				all.StateDir = rep.StateDir
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return infraError(err)
	}
	if all.Empty() {
		fmt.Fprintf(stdout, "lab %s: nothing to remove\n", top.Name)
	} else {
		fmt.Fprintf(stdout, "lab %s removed: %s\n", top.Name, &all)
	}
	return nil
}

func labStatus(ctx context.Context, stdout io.Writer, path string, o labOpts) error {
	top, err := parseTopology(path, o)
	if err != nil {
		return err
	}
	st, err := labrt.LoadState(o.stateRoot, top.Name)
	if err != nil {
		fmt.Fprintf(stdout, "lab %s is not deployed\n", top.Name)
		return &exitError{code: exitFail, err: fmt.Errorf("lab %s is not deployed", top.Name)}
	}
	rt := st.Runtime
	if rt == "" {
		rt = containerlab.RuntimeNative
	}
	mgmt := st.Mgmt
	if st.MgmtNetwork != "" {
		mgmt += " (Docker network " + st.MgmtNetwork + ")"
	} else if st.RootIf != "" {
		mgmt += " via " + st.RootIf
	}
	fmt.Fprintf(stdout, "lab %s (%s runtime), deployed %s, management %s\n", st.Lab, rt,
		st.Created.Local().Format(time.RFC3339), mgmt)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tROLE\tOS\tMGMT\tNAMESPACE/CONTAINER\tREACHED BY\tSTATE")
	down := 0
	for _, n := range st.Nodes {
		state := "up"
		where := n.Namespace
		switch {
		case n.Container != "":
			where = n.Container
			if out, err := exec.CommandContext(ctx, dockerx.Binary(), "inspect", "--format", "{{.State.Running}}", n.Container).Output(); err != nil || strings.TrimSpace(string(out)) != "true" {
				state, down = "container not running", down+1
			}
		default:
			if _, err := os.Stat(filepath.Join("/run/netns", n.Namespace)); err != nil {
				state, down = "namespace missing", down+1
			}
		}
		if state == "up" && n.Transport == labrt.TransportSSH {
			if c, err := net.DialTimeout("tcp", net.JoinHostPort(n.Mgmt, "22"), time.Second); err != nil {
				state, down = "ssh down", down+1
			} else {
				c.Close()
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, orDash(n.Role), orDash(n.OS), orDash(n.Mgmt), where, reachedBy(n), state)
	}
	tw.Flush()
	if down > 0 {
		return &exitError{code: exitFail, err: fmt.Errorf("lab %s: %d nodes down", st.Lab, down)}
	}
	return nil
}

// labCheck is `lab check`: everything up to the first side effect.
func labCheck(stdout io.Writer, path string, o labOpts) error {
	rt, why := o.runtime, ""
	if rt == "" || rt == "auto" {
		var err error
		if rt, why, err = chooseRuntime(rt); err != nil {
			return err
		}
	} else if rt != containerlab.RuntimeNative && rt != containerlab.RuntimeContainerlab {
		return badInput(fmt.Errorf("--runtime %q: want auto, containerlab or native", o.runtime))
	}
	top, err := parseTopology(path, o)
	if err != nil {
		return err
	}
	if o.rendered && top.Source != nil {
		fmt.Fprintf(stdout, "# %s as rendered", path)
		if top.Source.VarsFile != "" {
			fmt.Fprintf(stdout, " (variables from %s)", top.Source.VarsFile)
		}
		fmt.Fprintf(stdout, "\n%s\n", strings.TrimRight(string(top.Source.Text), "\n"))
	}
	top.File = absPath(path)
	lab, err := top.Resolve(filepath.Dir(path), rt)
	if err != nil {
		return badInput(err)
	}
	fmt.Fprint(stdout, describeLab(lab, why))
	return nil
}

// describeLab lists what a runtime would deploy for lab.
func describeLab(lab *containerlab.Lab, why string) string {
	var b strings.Builder
	rt := lab.Runtime
	if why != "" {
		rt += " (" + why + ")"
	}
	fmt.Fprintf(&b, "lab %s: %d nodes, %d links; runtime %s\n", lab.Name, len(lab.Nodes), len(lab.Links)+len(lab.Stubs), rt)
	mg := "none"
	if lab.Mgmt.IsValid() {
		mg = lab.Mgmt.String()
	}
	if lab.MgmtIPv6.IsValid() {
		mg += ", " + lab.MgmtIPv6.String()
	}
	fmt.Fprintf(&b, "management: %s (network %s)\n", mg, lab.MgmtNetwork)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tKIND\tROLE\tOS\tMGMT\tIMAGE\tWOULD BE")
	for _, n := range lab.Nodes {
		role := n.Role
		if n.RoleInferred {
			role += " (inferred)"
		}
		mgmt := "-"
		if n.Mgmt.IsValid() {
			mgmt = n.Mgmt.String()
		} else if lab.Runtime == containerlab.RuntimeContainerlab && n.Kind != "bridge" {
			mgmt = "(assigned by containerlab)"
		}
		var where string
		switch {
		case lab.Runtime == containerlab.RuntimeContainerlab && n.Kind == "bridge":
			where = "bridge " + n.Name + " on this machine"
		case lab.Runtime == containerlab.RuntimeContainerlab:
			where = "container " + lab.Container(n.Name)
		case n.Kind == "bridge":
			where = "bridge " + n.Name + " in namespace " + native.NamespaceName(lab.Name, n.Name)
		default:
			where = "namespace " + native.NamespaceName(lab.Name, n.Name)
			if n.OS == "frr" {
				where += " with FRR"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, n.Kind, role, orDash(n.OS), mgmt, orDash(n.Image), where)
	}
	tw.Flush()
	for _, l := range lab.Links {
		extra := ""
		if l.MTU > 0 {
			extra += fmt.Sprintf(" mtu %d", l.MTU)
		}
		if l.RateBps > 0 {
			extra += " shaped to " + units.FormatTCRate(l.RateBps)
		}
		fmt.Fprintf(&b, "link %s:%s -- %s:%s%s\n", l.A.Node, l.A.Interface, l.B.Node, l.B.Interface, extra)
	}
	for _, s := range lab.Stubs {
		far := s.HostInterface
		switch s.Type {
		case "dummy":
			far = "(dummy)"
		case "vxlan", "vxlan-stitch":
			far = fmt.Sprintf("vxlan vni %d to %s:%d", s.VNI, s.Remote, s.UDPPort)
		default:
			far = s.Type + ":" + far
		}
		fmt.Fprintf(&b, "link %s:%s -- %s (%s)\n", s.Endpoint.Node, s.Endpoint.Interface, far, s.Type)
	}
	return b.String()
}

func labGenerate(stdout io.Writer, spec string, o labOpts) error {
	f, err := inventory.Load(spec)
	if err != nil {
		return badInput(err)
	}
	if o.mtu != 0 && (o.mtu < 68 || o.mtu > 65535) {
		return badInput(fmt.Errorf("--mtu %d: want 68 to 65535", o.mtu))
	}
	opt := containerlab.GenOptions{Name: o.name, SwitchKind: o.kind, SRv6: o.srv6, FRRImage: o.image, HostImage: o.hostImage, MTU: o.mtu}
	if o.rate != "" {
		if opt.RateBps, err = units.ParseTCRate(o.rate); err != nil {
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

// labInventory is lab inventory: the inventory of a deployed lab.
func labInventory(stdout io.Writer, path string, o labOpts) error {
	lab, st, err := deployedLab(path, o)
	if err != nil {
		return err
	}
	opt := labinv.Options{Name: o.invName, Topology: path, GNMI: map[string]labinv.GNMI{}}
	if o.defaultSpeed != "" {
		if opt.DefaultSpeed, err = units.ParseSpeed(o.defaultSpeed); err != nil {
			return badInput(fmt.Errorf("--default-speed: %w", err))
		}
	}
	for _, g := range o.gnmi {
		node, srv, err := labinv.ParseGNMI(g)
		if err != nil {
			return badInput(fmt.Errorf("--gnmi %w", err))
		}
		if _, dup := opt.GNMI[node]; dup {
			return badInput(fmt.Errorf("--gnmi: %s given twice", node))
		}
		opt.GNMI[node] = srv
	}
	out, err := labinv.Generate(lab, st, opt, drivers.Platforms()...)
	if err != nil {
		return badInput(err)
	}
	if o.invOut == "" || o.invOut == "-" {
		_, err := stdout.Write(out)
		return err
	}
	if err := os.WriteFile(o.invOut, out, 0o644); err != nil {
		return infraError(err)
	}
	fmt.Fprintf(stdout, "wrote the inventory of lab %s (%s runtime, %d devices) to %s\n", lab.Name, orDash(st.Runtime), len(lab.Devices()), o.invOut)
	return nil
}

func parsePrefix(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return p.Masked(), nil
}

// labStateRoot is where labs keep their state: $FABRICBENCH_LAB_STATE or
// /run/fabricbench/labs.
func labStateRoot() string {
	if d := os.Getenv("FABRICBENCH_LAB_STATE"); d != "" {
		return d
	}
	return labrt.DefaultStateRoot
}

// reclaimLabs removes the labs under root whose owner is gone and says
// so on w (lab up, before deploying).
func reclaimLabs(ctx context.Context, w io.Writer, root string) {
	got, err := labrt.Reclaim(ctx, labrt.Options{StateRoot: root}, false)
	if err != nil {
		fmt.Fprintf(w, "could not look for leftover labs under %s: %v\n", root, err)
	}
	for _, r := range got {
		fmt.Fprintln(w, r)
	}
}

// labGC is lab gc: every lab under the state root with its owner and
// status; those whose owner is gone are removed (listed with --dry-run).
func labGC(ctx context.Context, stdout io.Writer, o labOpts) error {
	root := o.stateRoot
	if root == "" {
		root = labrt.DefaultStateRoot
	}
	entries, err := labrt.Scan(root)
	if err != nil {
		return infraError(err)
	}
	var errs []error
	reclaimable := 0
	for _, e := range entries {
		switch {
		case e.Err != nil:
			fmt.Fprintf(stdout, "lab %s: state unreadable, not touched: %v\n", e.Lab, e.Err)
		case e.Status == labrt.StatusInUse:
			fmt.Fprintf(stdout, "lab %s: in use by %s, not touched\n", e.Lab, e.State.Owner.Describe())
		case e.Status == labrt.StatusKept:
			fmt.Fprintf(stdout, "lab %s: kept (lab up; fabricbench lab down removes it), not touched\n", e.Lab)
		default:
			reclaimable++
		}
	}
	got, err := labrt.Reclaim(ctx, labrt.Options{StateRoot: root, Logf: func(f string, a ...any) { fmt.Fprintf(stdout, f+"\n", a...) }}, o.dryRun)
	if err != nil {
		return infraError(err)
	}
	for _, r := range got {
		fmt.Fprintln(stdout, r)
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("lab %s: %w", r.State.Lab, r.Err))
		}
	}
	if reclaimable == 0 {
		fmt.Fprintf(stdout, "no labs of processes that are gone under %s\n", root)
	}
	if err := errors.Join(errs...); err != nil {
		return infraError(err)
	}
	return nil
}
