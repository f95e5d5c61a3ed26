package main

import (
	"context"
	"fmt"
	"log"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabricbench/fabricbench/agents/agent"
	"github.com/fabricbench/fabricbench/agents/dataplane"
	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/telemetry/kernelexp"
)

// signalContext is cancelled by SIGINT or SIGTERM.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func newAgentCmd() *cobra.Command {
	var (
		name, control, tokenFile, data, rate, cc, lb string
		entropyPorts, mtu, headerBytes, ackBytes     int
		quickAdapt, fastIncrease                     bool
		seed                                         uint64
		runID                                        uint32
		flowTimeout                                  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the transport agent on a host (started by the harness over SSH)",
		Long: `The transport agent sends and receives the flows of jobs as UDP datagrams,
with the same congestion control and load balancing state machines as the
simulator (agents/transport). Its control API (start flows, completions,
counters) listens on --control and requires the bearer token in
--token-file (a 0600 file); the harness deploys and starts it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tok, err := agent.ReadToken(tokenFile)
			if err != nil {
				return badInput(err)
			}
			ap, err := netip.ParseAddrPort(data)
			if err != nil {
				return badInput(fmt.Errorf("--data %q: want ADDRESS:PORT: %v", data, err))
			}
			var rateBps int64
			if rate != "0" {
				if rateBps, err = containerlab.ParseRate(rate); err != nil {
					return badInput(fmt.Errorf("--rate: %w", err))
				}
			}
			p := transport.DefaultParams()
			if p.CC, err = transport.ParseCC(cc); err != nil {
				return badInput(fmt.Errorf("--cc: %w", err))
			}
			if p.LB, err = transport.ParseLB(lb); err != nil {
				return badInput(fmt.Errorf("--lb: %w", err))
			}
			p.MTU, p.HeaderBytes, p.AckBytes = mtu, headerBytes, ackBytes
			p.QuickAdapt, p.FastIncrease, p.Seed = quickAdapt, fastIncrease, seed
			p.Trimming = false
			p.Entropies = uint32(entropyPorts)
			if err := p.Validate(); err != nil {
				return badInput(err)
			}
			logger := log.New(cmd.ErrOrStderr(), "", log.LstdFlags|log.Lmicroseconds)
			ctx, stop := signalContext()
			defer stop()
			err = agent.Run(ctx, agent.Config{Name: name, Control: control, Token: tok, Data: ap, EntropyPorts: entropyPorts,
				RateBps: rateBps, Params: p, RunID: runID, FlowTimeout: flowTimeout, Logf: logger.Printf})
			if err != nil {
				return &exitError{code: exitFail, err: err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	def := transport.DefaultParams()
	f.StringVar(&name, "name", hostname(), "host name reported in health checks")
	f.StringVar(&control, "control", "", "control API listen address (the management address), host:port")
	f.StringVar(&tokenFile, "token-file", "", "file holding the control API bearer token (mode 0600)")
	f.StringVar(&data, "data", "", "data-plane address and port, e.g. 198.18.0.1:7500")
	f.IntVar(&entropyPorts, "entropy-ports", 64, "UDP source ports (entropies) after the data port")
	f.StringVar(&rate, "rate", "0", "NIC rate to pace at, e.g. 200M or 1G (0: unpaced)")
	f.StringVar(&cc, "cc", "nscc", "congestion control: nscc or dctcp")
	f.StringVar(&lb, "lb", "reps", "load balancing: ecmp, ops or reps")
	f.IntVar(&mtu, "mtu", def.MTU, "payload bytes per full data packet")
	f.IntVar(&headerBytes, "header-bytes", 14+20+8+dataplane.DataHeaderLen, "wire bytes in front of the payload (Ethernet, IP, UDP, agent header)")
	f.IntVar(&ackBytes, "ack-bytes", 14+20+8+dataplane.AckHeaderLen, "wire bytes of an ACK")
	f.BoolVar(&quickAdapt, "quick-adapt", true, "DCTCP QuickAdapt")
	f.BoolVar(&fastIncrease, "fast-increase", true, "DCTCP FastIncrease")
	f.Uint64Var(&seed, "seed", 1, "seed of the entropy choices")
	f.Uint32Var(&runID, "run-id", 0, "run identifier carried in every packet")
	f.DurationVar(&flowTimeout, "flow-timeout", 2*time.Minute, "abandon a flow after this long (0: never)")
	for _, req := range []string{"control", "token-file", "data"} {
		_ = cmd.MarkFlagRequired(req)
	}
	return cmd
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

func newExporterCmd() *cobra.Command {
	var (
		device, listen, username, passwordFile, netns string
		ifaces                                        []string
		queues                                        bool
		interval                                      time.Duration
	)
	cmd := &cobra.Command{
		Use:   "exporter",
		Short: "Serve a Linux switch's or host's kernel counters as a gNMI target",
		Long: `The exporter serves the OpenConfig interface counters and queue state of
this network namespace over gNMI, the same paths the simulator serves,
sampled from the kernel (netlink link stats, qdisc backlog and drops)
every --interval (1 ms and up). --interface maps a served port name to a
kernel device: --interface Ethernet0=eth1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pw, err := os.ReadFile(passwordFile)
			if err != nil {
				return badInput(fmt.Errorf("--password-file: %w", err))
			}
			cfg := kernelexp.Config{Device: device, Queues: queues, Listen: listen, Interval: interval,
				Username: username, Password: strings.TrimSpace(string(pw)), Netns: netns}
			for _, m := range ifaces {
				name, dev, ok := strings.Cut(m, "=")
				if !ok || name == "" || dev == "" {
					return badInput(fmt.Errorf("--interface %q: want NAME=DEVICE, e.g. Ethernet0=eth1", m))
				}
				cfg.Interfaces = append(cfg.Interfaces, kernelexp.Interface{Name: name, Dev: dev})
			}
			logger := log.New(cmd.ErrOrStderr(), "", log.LstdFlags|log.Lmicroseconds)
			cfg.Logf = logger.Printf
			e, err := kernelexp.New(cfg)
			if err != nil {
				return badInput(err)
			}
			logger.Printf("exporter %s: gNMI on %s, %d interfaces every %v", device, e.Addr(), len(cfg.Interfaces), interval)
			ctx, stop := signalContext()
			defer stop()
			if err := e.Run(ctx); err != nil {
				return &exitError{code: exitFail, err: err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&device, "device", hostname(), "gNMI target name")
	f.StringVar(&listen, "listen", "127.0.0.1:9339", "gRPC listen address")
	f.StringVar(&username, "username", "fabricbench", "gNMI username")
	f.StringVar(&passwordFile, "password-file", "", "file holding the gNMI password")
	f.StringArrayVar(&ifaces, "interface", nil, "served port NAME=kernel DEVICE (repeat)")
	f.BoolVar(&queues, "queues", false, "serve the qos queue leaves (switches)")
	f.DurationVar(&interval, "interval", 10*time.Millisecond, "sample interval (1ms to 10s)")
	f.StringVar(&netns, "netns", "", "read the counters of this named network namespace")
	_ = cmd.MarkFlagRequired("password-file")
	return cmd
}
