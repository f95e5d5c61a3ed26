package main

import (
	"context"
	"crypto/tls"
	"errors"
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
		configFile, name, control, tokenFile, data, rate, cc, lb string
		entropyPorts, mtu                                        int
		quickAdapt, fastIncrease                                 bool
		seed                                                     uint64
		runID                                                    uint32
		flowTimeout                                              time.Duration
	)
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the transport agent on a host (started by the harness over SSH)",
		Long: `The transport agent sends and receives the flows of jobs as UDP datagrams,
with the same congestion control and load balancing state machines as the
simulator (agents/transport). Its control API (start flows, completions,
counters) listens on --control and requires the bearer token in
--token-file (a 0600 file); the harness deploys and starts it.

Its whole configuration is one JSON file, --config (the harness writes
one per host; the keys are documented on agents/agent.Config, e.g.
{"control": "10.0.0.1:7400", "token_file": "agent.token",
"data": "10.1.0.1:7500", "transport": {"cc": "dctcp", "lb": "ops"}}).
The flags below set the same fields by hand, over the file's values.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := agent.DefaultConfig()
			if configFile != "" {
				b, err := os.ReadFile(configFile)
				if err != nil {
					return badInput(fmt.Errorf("--config: %w", err))
				}
				if cfg, err = agent.DecodeConfig(b); err != nil {
					return badInput(fmt.Errorf("--config %s: %w", configFile, err))
				}
			}
			f := cmd.Flags()
			set := func(flag string) bool { return f.Changed(flag) }
			var err error
			if set("name") {
				cfg.Name = name
			}
			if set("control") {
				cfg.Control = control
			}
			if set("token-file") {
				cfg.TokenFile = tokenFile
			}
			if set("data") {
				if cfg.Data, err = netip.ParseAddrPort(data); err != nil {
					return badInput(fmt.Errorf("--data %q: want ADDRESS:PORT: %v", data, err))
				}
			}
			if set("entropy-ports") {
				cfg.EntropyPorts = entropyPorts
			}
			if set("rate") {
				cfg.RateBps = 0
				if rate != "0" {
					if cfg.RateBps, err = containerlab.ParseRate(rate); err != nil {
						return badInput(fmt.Errorf("--rate: %w", err))
					}
				}
			}
			if set("run-id") {
				cfg.RunID = runID
			}
			if set("flow-timeout") {
				cfg.FlowTimeout = flowTimeout
			}
			p := &cfg.Params
			if set("cc") {
				if p.CC, err = transport.ParseCC(cc); err != nil {
					return badInput(fmt.Errorf("--cc: %w", err))
				}
			}
			if set("lb") {
				if p.LB, err = transport.ParseLB(lb); err != nil {
					return badInput(fmt.Errorf("--lb: %w", err))
				}
			}
			if set("mtu") {
				p.MTU = mtu
			}
			if set("quick-adapt") {
				p.QuickAdapt = quickAdapt
			}
			if set("fast-increase") {
				p.FastIncrease = fastIncrease
			}
			if set("seed") {
				p.Seed = seed
			}
			if cfg.TokenFile == "" {
				return badInput(errors.New("no token file: give --token-file (or \"token_file\" in --config)"))
			}
			if cfg.Token, err = agent.ReadToken(cfg.TokenFile); err != nil {
				return badInput(err)
			}
			if err := cfg.Validate(); err != nil {
				return badInput(err)
			}
			logger := log.New(cmd.ErrOrStderr(), "", log.LstdFlags|log.Lmicroseconds)
			cfg.Logf = logger.Printf
			ctx, stop := signalContext()
			defer stop()
			if err := agent.Run(ctx, cfg); err != nil {
				return &exitError{code: exitFail, err: err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	def := agent.DefaultConfig()
	f.StringVar(&configFile, "config", "", "the agent's configuration, a JSON file (agents/agent.Config)")
	f.StringVar(&name, "name", def.Name, "host name reported in health checks")
	f.StringVar(&control, "control", "", "control API listen address (the management address), host:port")
	f.StringVar(&tokenFile, "token-file", "", "file holding the control API bearer token (mode 0600)")
	f.StringVar(&data, "data", "", "data-plane address and port, e.g. 198.18.0.1:7500")
	f.IntVar(&entropyPorts, "entropy-ports", def.EntropyPorts, "UDP source ports (entropies) after the data port")
	f.StringVar(&rate, "rate", "0", "NIC rate to pace at, e.g. 200M or 1G (0: unpaced)")
	f.StringVar(&cc, "cc", def.Params.CC.String(), "congestion control: nscc or dctcp")
	f.StringVar(&lb, "lb", def.Params.LB.String(), "load balancing: ecmp, ops or reps")
	f.IntVar(&mtu, "mtu", def.Params.MTU, "payload bytes per full data packet")
	f.BoolVar(&quickAdapt, "quick-adapt", def.Params.QuickAdapt, "DCTCP QuickAdapt")
	f.BoolVar(&fastIncrease, "fast-increase", def.Params.FastIncrease, "DCTCP FastIncrease")
	f.Uint64Var(&seed, "seed", def.Params.Seed, "seed of the entropy choices")
	f.Uint32Var(&runID, "run-id", def.RunID, "run identifier carried in every packet")
	f.DurationVar(&flowTimeout, "flow-timeout", def.FlowTimeout, "abandon a flow after this long (0: never)")
	cmd.AddCommand(newAgentBenchCmd())
	return cmd
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

func newExporterCmd() *cobra.Command {
	var (
		device, listen, username, passwordFile, netns string
		tlsCert, tlsKey                               string
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
kernel device: --interface Ethernet0=eth1, optionally with the line rate
served as port-speed: --interface Ethernet0=eth1@100G.

It serves Capabilities, Get (JSON, JSON_IETF, PROTO) and Subscribe ONCE,
POLL and STREAM (SAMPLE, ON_CHANGE, TARGET_DEFINED); the empty target is
this device. See docs/telemetry.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pw, err := os.ReadFile(passwordFile)
			if err != nil {
				return badInput(fmt.Errorf("--password-file: %w", err))
			}
			cfg := kernelexp.Config{Device: device, Queues: queues, Listen: listen, Interval: interval,
				Username: username, Password: strings.TrimSpace(string(pw)), Netns: netns}
			switch {
			case (tlsCert == "") != (tlsKey == ""):
				return badInput(errors.New("--tls-cert and --tls-key go together"))
			case tlsCert != "":
				cert, err := tls.LoadX509KeyPair(tlsCert, tlsKey)
				if err != nil {
					return badInput(fmt.Errorf("--tls-cert/--tls-key: %w", err))
				}
				cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
			}
			for _, m := range ifaces {
				name, dev, ok := strings.Cut(m, "=")
				dev, rate, hasRate := strings.Cut(dev, "@")
				if !ok || name == "" || dev == "" || (hasRate && rate == "") {
					return badInput(fmt.Errorf("--interface %q: want NAME=DEVICE or NAME=DEVICE@RATE, e.g. Ethernet0=eth1 or Ethernet0=eth1@100G", m))
				}
				ifc := kernelexp.Interface{Name: name, Dev: dev}
				if hasRate {
					var err error
					if ifc.Speed, err = containerlab.ParseRate(rate); err != nil {
						return badInput(fmt.Errorf("--interface %q: rate: %w", m, err))
					}
				}
				cfg.Interfaces = append(cfg.Interfaces, ifc)
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
	f.StringArrayVar(&ifaces, "interface", nil, "served port NAME=kernel DEVICE[@RATE] (repeat; RATE, e.g. 100G, is served as port-speed)")
	f.BoolVar(&queues, "queues", false, "serve the qos queue leaves (switches)")
	f.DurationVar(&interval, "interval", 10*time.Millisecond, "sample interval (1ms to 10s)")
	f.StringVar(&netns, "netns", "", "read the counters of this named network namespace")
	f.StringVar(&tlsCert, "tls-cert", "", "serve gNMI over TLS with this PEM certificate (with --tls-key)")
	f.StringVar(&tlsKey, "tls-key", "", "the PEM private key of --tls-cert")
	_ = cmd.MarkFlagRequired("password-file")
	return cmd
}
