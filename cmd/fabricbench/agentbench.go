package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabricbench/fabricbench/agents/agentbench"
	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/workloads"
)

func newAgentBenchCmd() *cobra.Command {
	var (
		flows, bytes, cc, lb, planeMode, out, linkRate, pathRate, pace, iperf3 string
		srcNS, dstNS, srcAddrs, dstAddrs                                       string
		duration, baseRTT                                                      time.Duration
		repeat, mtu, linkMTU, planes, entropyPorts, entropyRun                 int
		noGSO, noGRO                                                           bool
		minUDP, minTCP, maxTimeouts                                            float64
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the transport agent on one host pair against iperf3 (UDP and TCP) on the same lab path",
		Long: `bench measures one host pair: the agent's flows (the data plane and
transport the agents run), then iperf3's UDP streams (the agent's datagram
size, -b 0) and TCP streams, over the same path in the same run, for each
number of concurrent flows in --flows. It prints per-flow goodput, loss,
retransmissions, timeouts per 10,000 packets and CPU seconds per GB, and
writes bench.json and bench.md to --out.

The path is built for the run (root; iproute2): host h0 - leaf - spine -
leaf - host h1 as network namespaces (fbab-<pid>-*) with plain kernel
forwarding over veth links of --link-mtu (9000), unshaped unless
--link-rate shapes every link with tbf; --planes N builds N such paths,
each host with a NIC per plane, and the agent spreads every flow over
them (plane load balancing, --plane-mode). Everything is removed at the
end, also after a failure or Ctrl-C. --src-netns/--dst-netns with
--src/--dst measure an existing path instead (e.g. two hosts of a
deployed lab: their namespaces and data addresses, several addresses
comma-separated for several planes).

The agent's base RTT is measured by a warm-up flow (kernel timestamps,
without host delays) unless --base-rtt sets it; --path-rate is the path
rate the transport assumes (its window is 1.5 x rate x base RTT).

Without iperf3 (or with --iperf3 none) the agent is measured alone. With
it, the agent must reach --min-udp-ratio x iperf3 UDP's per-flow send
rate (what iperf3 offered, more than it delivered) and --min-tcp-ratio x
iperf3 TCP's per-flow goodput, with at most --max-timeouts timeouts per
10,000 packets; otherwise the exit status is 1.

` + exitStatusHelp(exitOK, exitFail, exitBadInput, exitInfra, exitInterrupted),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := agentbench.Options{Duration: duration, Repeat: repeat, EntropyPorts: entropyPorts, BaseRTT: baseRTT,
				DisableGSO: noGSO, DisableGRO: noGRO, Iperf3: iperf3}
			for _, f := range strings.Split(flows, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || n < 1 || n > 64 {
					return badInput(fmt.Errorf("--flows %q: want numbers of flows from 1 to 64, comma-separated", flows))
				}
				o.Flows = append(o.Flows, n)
			}
			b, err := workloads.ParseSize(bytes)
			if err != nil || b < 1<<20 || b > 1<<40 {
				return badInput(fmt.Errorf("--bytes %q: want a size from 1MiB to 1TiB (%v)", bytes, err))
			}
			o.Bytes = b
			rate := func(flag, v string) (int64, error) {
				if v == "0" {
					return 0, nil
				}
				r, err := containerlab.ParseRate(v)
				if err != nil {
					return 0, badInput(fmt.Errorf("--%s: %w", flag, err))
				}
				return r, nil
			}
			var link int64
			if link, err = rate("link-rate", linkRate); err != nil {
				return err
			}
			if o.PathRateBps, err = rate("path-rate", pathRate); err != nil {
				return err
			}
			if o.PaceBps, err = rate("pace", pace); err != nil {
				return err
			}
			switch {
			case duration < time.Second || duration > time.Hour:
				return badInput(fmt.Errorf("--duration %v: want 1s to 1h", duration))
			case repeat < 1 || repeat > 100:
				return badInput(fmt.Errorf("--repeat %d: want 1 to 100", repeat))
			case linkMTU < 1280 || linkMTU > 65535:
				return badInput(fmt.Errorf("--link-mtu %d: want 1280 to 65535", linkMTU))
			case planes < 1 || planes > agentbench.MaxPlanes:
				return badInput(fmt.Errorf("--planes %d: want 1 to %d", planes, agentbench.MaxPlanes))
			case baseRTT < 0 || baseRTT > time.Second:
				return badInput(fmt.Errorf("--base-rtt %v: want 0 (measure) to 1s", baseRTT))
			case minUDP < 0 || minTCP < 0 || maxTimeouts < 0:
				return badInput(errors.New("--min-udp-ratio, --min-tcp-ratio and --max-timeouts must not be negative"))
			}
			p := transport.DefaultParams()
			if p.CC, err = transport.ParseCC(cc); err != nil {
				return badInput(fmt.Errorf("--cc: %w", err))
			}
			if p.LB, err = transport.ParseLB(lb); err != nil {
				return badInput(fmt.Errorf("--lb: %w", err))
			}
			if p.PlaneMode, err = transport.ParsePlaneMode(planeMode); err != nil {
				return badInput(fmt.Errorf("--plane-mode: %w", err))
			}
			p.EntropyRun = entropyRun
			p.MTU = mtu // 0: the largest the path MTU allows
			p.Seed = 1
			if err := (&transport.Params{MTU: max(p.MTU, 64), AckBytes: 1, EntropyRun: p.EntropyRun}).Validate(); err != nil {
				return badInput(fmt.Errorf("transport: %w", err))
			}
			o.Params = p
			if out == "" {
				out = filepath.Join("runs", "agent-bench-"+time.Now().Format("20060102-150405"))
			}
			logger := log.New(cmd.ErrOrStderr(), "", log.LstdFlags)
			o.Logf = logger.Printf
			ctx, stop := signalContext()
			defer stop()

			var path agentbench.Path
			if srcNS != "" || dstNS != "" {
				if srcNS == "" || dstNS == "" || srcAddrs == "" || dstAddrs == "" {
					return badInput(errors.New("an existing path needs --src-netns, --dst-netns, --src and --dst"))
				}
				path = agentbench.Path{SrcNS: srcNS, DstNS: dstNS, MTU: linkMTU}
				for _, x := range []struct {
					flag, v string
					to      *[]netip.Addr
				}{{"src", srcAddrs, &path.Src}, {"dst", dstAddrs, &path.Dst}} {
					for _, s := range strings.Split(x.v, ",") {
						a, err := netip.ParseAddr(strings.TrimSpace(s))
						if err != nil || !a.Is4() {
							return badInput(fmt.Errorf("--%s %q: want IPv4 addresses, comma-separated (one per plane)", x.flag, x.v))
						}
						*x.to = append(*x.to, a)
					}
				}
				if len(path.Src) != len(path.Dst) {
					return badInput(errors.New("--src and --dst need as many addresses (one per plane)"))
				}
				for _, ns := range []string{srcNS, dstNS} {
					if _, err := os.Stat(agentbench.NetnsPath(ns)); err != nil {
						return badInput(fmt.Errorf("network namespace %s: %w", ns, err))
					}
				}
			} else {
				chain, err := agentbench.NewChain(ctx, agentbench.ChainOptions{MTU: linkMTU, RateBps: link, Planes: planes})
				if err != nil {
					return infraError(err)
				}
				defer func() {
					if err := chain.Close(); err != nil {
						logger.Printf("removing the lab path: %v", err)
					}
				}()
				logger.Printf("lab path: %s (%s) - leaf - spine - leaf - %s (%s), %d plane(s), MTU %d, links %s",
					chain.SrcNS, chain.Src[0], chain.DstNS, chain.Dst[0], planes, linkMTU, map[bool]string{true: "unshaped", false: linkRate + "bit/s (tbf)"}[link == 0])
				path = chain.Path(linkMTU)
			}
			rep, runErr := agentbench.Run(ctx, path, o)
			if rep != nil {
				if err := writeBench(out, rep); err != nil {
					return infraError(err)
				}
				fmt.Fprint(cmd.OutOrStdout(), rep.Table())
				fmt.Fprintf(cmd.OutOrStdout(), "results: %s\n", filepath.Join(out, "bench.json"))
			}
			if runErr != nil {
				if ctx.Err() != nil {
					return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted: %w", runErr)}
				}
				return infraError(runErr)
			}
			var fails []string
			for _, s := range rep.Summaries {
				v := fmt.Sprintf("%d flow(s): agent %.2f Gb/s per flow", s.Flows, s.Agent)
				if s.UDPSent > 0 {
					v += fmt.Sprintf(" = %.2fx iperf3 UDP's send rate %.2f (goodput %.2f)", s.AgentOverUDP, s.UDPSent, s.UDP)
					if s.AgentOverUDP < minUDP {
						fails = append(fails, fmt.Sprintf("%d flow(s): agent %.2fx iperf3 UDP, want >= %.2fx", s.Flows, s.AgentOverUDP, minUDP))
					}
				}
				if s.TCP > 0 {
					v += fmt.Sprintf(", %.2fx iperf3 TCP %.2f", s.AgentOverTCP, s.TCP)
					if s.AgentOverTCP < minTCP {
						fails = append(fails, fmt.Sprintf("%d flow(s): agent %.2fx iperf3 TCP, want >= %.2fx", s.Flows, s.AgentOverTCP, minTCP))
					}
				}
				v += fmt.Sprintf("; %.2f timeouts per 10k packets", s.TimeoutsPer10k)
				if s.TimeoutsPer10k > maxTimeouts {
					fails = append(fails, fmt.Sprintf("%d flow(s): %.2f timeouts per 10k packets, want <= %.2f", s.Flows, s.TimeoutsPer10k, maxTimeouts))
				}
				fmt.Fprintln(cmd.OutOrStdout(), v)
			}
			if len(fails) > 0 {
				return &exitError{code: exitFail, err: fmt.Errorf("the agent missed its targets: %s", strings.Join(fails, "; "))}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&flows, "flows", "1,2,4", "numbers of concurrent flows to measure, comma-separated")
	f.StringVar(&bytes, "bytes", "4GiB", "what the agent sends per measurement, split over its flows")
	f.DurationVar(&duration, "duration", 4*time.Second, "each iperf3 test's duration")
	f.IntVar(&repeat, "repeat", 1, "measure each this many times (interleaved); the verdict takes the goodputs' medians and the timeouts of all")
	f.IntVar(&linkMTU, "link-mtu", 9000, "MTU of the lab path's links (also of an existing path: it sizes the datagrams)")
	f.StringVar(&linkRate, "link-rate", "0", "shape every link with tbf, e.g. 10G (0: unshaped)")
	f.IntVar(&planes, "planes", 1, "parallel leaf-spine-leaf paths, one NIC per plane on each host")
	f.IntVar(&mtu, "mtu", 0, "transport payload bytes per packet (0: the largest the link MTU allows)")
	f.StringVar(&cc, "cc", "nscc", "congestion control: nscc or dctcp")
	f.StringVar(&lb, "lb", "ecmp", "load balancing: "+transport.LBNames)
	f.StringVar(&planeMode, "plane-mode", "plb", "plane load balancing: plb, global or entropy")
	f.IntVar(&entropyRun, "entropy-run", 0, "packets per load-balancing choice (0: each packet; a run goes as one GSO message)")
	f.IntVar(&entropyPorts, "entropy-ports", 64, "UDP source ports (entropies) per agent")
	f.StringVar(&pathRate, "path-rate", "100G", "the path rate the transport assumes")
	f.StringVar(&pace, "pace", "0", "pace each agent's NIC at this rate (0: unpaced)")
	f.DurationVar(&baseRTT, "base-rtt", 0, "the flows' base RTT (0: measured by a warm-up flow)")
	f.BoolVar(&noGSO, "no-gso", false, "send without UDP GSO")
	f.BoolVar(&noGRO, "no-gro", false, "receive without UDP GRO")
	f.StringVar(&iperf3, "iperf3", "", "the iperf3 binary (default: from PATH; none: skip iperf3)")
	f.StringVar(&srcNS, "src-netns", "", "measure an existing path: the source host's network namespace")
	f.StringVar(&dstNS, "dst-netns", "", "the destination host's network namespace")
	f.StringVar(&srcAddrs, "src", "", "the source host's data address (one per plane, comma-separated)")
	f.StringVar(&dstAddrs, "dst", "", "the destination host's data address (one per plane, comma-separated)")
	f.Float64Var(&minUDP, "min-udp-ratio", 1.0, "least agent per-flow goodput over iperf3 UDP's per-flow send rate")
	f.Float64Var(&minTCP, "min-tcp-ratio", 0.5, "least agent per-flow goodput over iperf3 TCP's")
	f.Float64Var(&maxTimeouts, "max-timeouts", 1, "most agent timeouts per 10,000 packets")
	f.StringVar(&out, "out", "", "results directory (default runs/agent-bench-<time>)")
	return cmd
}

// writeBench writes the report as JSON and as the markdown table.
func writeBench(dir string, rep *agentbench.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "bench.md"), []byte(rep.Table()), 0o644)
}
