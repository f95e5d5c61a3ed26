package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/harness/simbackend"
	"github.com/fabricbench/fabricbench/harness/suite"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/preset"
	"github.com/fabricbench/fabricbench/sim"
	"github.com/fabricbench/fabricbench/units"
	"github.com/fabricbench/fabricbench/workloads"
)

type simOpts struct {
	topo, tm      string
	cc, lb        string
	planes        string
	trim, ecn     bool
	seed          uint64
	end           string
	stallAfter    string
	jsonOut       string
	mtu, header   int
	queue         string
	kmin, kmax    float64
	quickAdapt    bool
	fastIncrease  bool
	quiet         bool
	faults        []string
	failLinks     float64
	reconverge    string
	progressAfter time.Duration
	preset        string
	targetRTT     float64
	maxWindow     float64
	ackEvery      int
	goBackN       bool
	ackEveryBytes string
	ackDelay      string
	entropies     uint32
	routing       string
	arStaleness   string
	arQuantum     string
	arWeighted    bool
	opsCycle      bool
	repsWarmup    bool
	cpuProfile    string
	shards        int
	workers       int
	memProfile    string
	serve         serveOpts
	// changed reports whether a flag was given (the preset fills the rest).
	changed func(name string) bool
}

func newSimCmd() *cobra.Command {
	o := &simOpts{}
	c := &cobra.Command{
		Use:   "sim --topo FILE|SPEC --tm FILE|SPEC",
		Short: "Run one traffic matrix on the packet-level reference simulator",
		Long: `Run one traffic matrix on the packet-level reference simulator.

--topo takes an htsim .topo file or a generator spec, for example
  fattree:hosts=128,tiers=3,gbps=100,oversub=1
  leafspine:leaves=4,spines=2,hosts_per_leaf=2,gbps=100
--tm takes an htsim .cm connection matrix or a generator spec, for example
  permutation:size=2MiB
  incast:senders=32,size=2MB,dst=host5   (dst: a host name or number)
  alltoall:size=1MiB,k=4
The spec grammars are documented in docs/simulator.md ("Fabric specs",
"Traffic specs" and "Faults").

--preset smartt runs in the SMaRTT paper's setting (Sec. IV): it adds
gbps=800,latency=600ns,switch_latency=400ns to a --topo spec that does not
set them and sets --mtu 4096, --queue bdp, --kmin 0.2, --kmax 0.8, --ecn,
--trim, --target-rtt 1.5 and --max-window 1.5 unless they are given.

--preset spritz runs in the Spritz paper's setting (Sec. V-A, Table II) on
a dragonfly or slimfly spec: it adds gbps=400,latency=25ns,local_latency=25ns,
global_latency=500ns,switch_latency=500ns to the spec where not set and
sets --cc dctcp (QuickAdapt and FastIncrease on), --mtu 4096, --queue
longest-path (one BDP of the longest source-guided path; every flow's
window sized on that path too), --kmin 0.2, --kmax 0.8, --ecn, --trim,
--target-rtt 1.5 and --max-window 1.5 unless given. Pair it with
--routing source-guided --lb spritz-spray (or spritz-scout) for Spritz,
or any other routing mode for the paper's baselines.

A flow that has not finished by --end is reported with fct_us null. A run
also ends when no flow has made progress for --stall-after (flows that
cannot finish: a destination cut off, every path dead); it then exits 1,
as it does when flows are unfinished at the default --end.

--serve-gnmi ADDR serves the simulated fabric's telemetry live to gNMI
clients (gnmic, gnmi_cli, Telegraf, a Grafana stack) while it runs: every
switch and host NIC is a target named after its node (the empty target is
all of them), with the OpenConfig interface counters, oper-status,
admin-status, port-speed and the qos queue leaves, a sample every
--gnmi-interval of simulated time. --gnmi-pace paces the simulation to
wall-clock time: realtime, asap (as fast as possible) or a slow-down
factor (1000: a simulated millisecond takes a second). The credentials
are --gnmi-username and --gnmi-password-file (default: a random password
in a 0600 file whose path is printed). See docs/telemetry.md, e.g.
  fabricbench sim --topo leafspine:leaves=2,spines=2,hosts_per_leaf=2 \
    --tm permutation:size=64MiB --serve-gnmi 127.0.0.1:9339 --gnmi-pace 1000
  gnmic -a 127.0.0.1:9339 --insecure -u fabricbench -p "$(cat FILE)" \
    subscribe --path /interfaces/interface/state/counters/out-octets`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.changed = cmd.Flags().Changed
			if err := o.serve.check(cmd.Flags()); err != nil {
				return err
			}
			return runSim(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	fl := c.Flags()
	fl.StringVar(&o.topo, "topo", "", "fabric: htsim .topo file or generator spec (required)")
	fl.StringVar(&o.tm, "tm", "", "traffic: htsim .cm file or generator spec (required)")
	fl.StringVar(&o.cc, "cc", "nscc", "congestion control: nscc or dctcp")
	fl.StringVar(&o.lb, "lb", "reps", "load balancing: reps, ops or ecmp; also ops-w (weighted OPS), spritz-scout, spritz-spray or flicr, which with --routing source-guided choose among the fabric's listed paths by latency weight and on hash ECMP among --entropies equal-weight entropies (coarse-grained Spritz); with --routing port-msb also owd (one path per flow, chosen by one-way queuing-delay probes)")
	fl.StringVar(&o.planes, "planes", "plb", "multi-plane hosts (a --topo with planes=N): plb (per-plane congestion control), global (one window over all planes) or entropy (entropy source routing)")
	fl.BoolVar(&o.trim, "trim", true, "switches trim packets when the data queue is full (false: drop, recover by timeout)")
	fl.BoolVar(&o.ecn, "ecn", true, "RED ECN marking at dequeue")
	fl.Uint64Var(&o.seed, "seed", 1, "random seed (same inputs and seed give identical results)")
	fl.StringVar(&o.end, "end", "10s", "stop at this simulated time (e.g. 500us, 20ms; at most 3600s); 0: the simulator's default limit, 1s")
	fl.StringVar(&o.stallAfter, "stall-after", "0", "end the run when no flow has made progress (a new ACK, a flow start or end, a link event) for this long of simulated time (at most 3600s); 0: the larger of 10ms and 100 RTOs of the slowest path; off: never")
	fl.StringVar(&o.jsonOut, "json", "", "write per-flow results and a summary as JSON to this file")
	fl.IntVar(&o.mtu, "mtu", 4096, "payload bytes per data packet")
	fl.IntVar(&o.header, "header", 64, "header bytes per packet (also the size of ACKs, NACKs and trimmed headers)")
	fl.StringVar(&o.queue, "queue", "bdp", "data queue per switch port: bytes (e.g. 256KiB), bdp (one BDP of the longest path) or longest-path (dragonfly/slimfly, Spritz Sec. V-A: one BDP of the longest source-guided path, and every flow's window sized on that path too)")
	fl.Float64Var(&o.kmin, "kmin", 0.2, "RED ECN Kmin as a fraction of the queue")
	fl.Float64Var(&o.kmax, "kmax", 0.8, "RED ECN Kmax as a fraction of the queue")
	fl.BoolVar(&o.quickAdapt, "quickadapt", true, "dctcp: enable SMaRTT QuickAdapt")
	fl.BoolVar(&o.fastIncrease, "fastincrease", true, "dctcp: enable SMaRTT FastIncrease")
	fl.Float64Var(&o.failLinks, "fail-links", 0, "take down this fraction of the switch-to-switch links at time 0, chosen by --seed (e.g. 0.02; at most 0.5)")
	fl.StringArrayVar(&o.faults, "fault", nil, "link fault, repeatable: down:A-B@TIME, up:A-B@TIME, degrade:A-B@TIME=FRAC (A-B/N for the Nth parallel link)")
	fl.StringVar(&o.reconverge, "reconverge", "0", "after a link changes state, recompute ECMP groups after this long (e.g. 1ms); 0: never, only the adjacent switches fail over")
	fl.Float64Var(&o.targetRTT, "target-rtt", 0, "target RTT in base RTTs, (1, 10]; 0: the default 1.5")
	fl.Float64Var(&o.maxWindow, "max-window", 0, "largest congestion window in BDPs, (0, 100]; 0: the default 1.5")
	fl.BoolVar(&o.goBackN, "go-back-n", false, "go-back-N loss recovery (RoCE without selective repeat): receivers accept only the next packet, senders resend everything from a gap; the default is selective repeat (LERP)")
	fl.IntVar(&o.ackEvery, "ack-every", 0, "receivers coalesce ACKs: one per this many data packets (at most 64; 0 or 1: an ACK per packet, the default)")
	fl.StringVar(&o.ackEveryBytes, "ack-every-bytes", "0", "receivers coalesce ACKs: one per this many wire bytes (htsim: 16384); 0: no byte threshold")
	fl.StringVar(&o.ackDelay, "ack-delay", "0", "a coalescing receiver sends a held ACK at most this long after the first packet it covers (e.g. 2us); 0: no timer")
	fl.Uint32Var(&o.entropies, "entropies", 0, "size of the load balancer's entropy space, at most 65536 (htsim_uec: 64); 0: 65536")
	fl.BoolVar(&o.opsCycle, "ops-cycle", false, "--lb ops walks every entropy once per cycle, in a new order each cycle (htsim_uec's oblivious spraying); default: an independent random entropy per packet")
	fl.BoolVar(&o.repsWarmup, "reps-warmup", false, "--lb reps sends its first window on entropies 1, 2, 3, ... in turn (htsim_uec's REPS); default: random from the first packet")
	fl.StringVar(&o.routing, "routing", "hash", "switch routing among equal-cost ports: hash (ECMP on flow and entropy) or adaptive (per-packet join-shortest-queue; ignores the entropy, so pair it with --lb ecmp); on dragonfly/slimfly fabrics also minimal (on global then local hops), valiant (uniform random intermediate group), valiant-hop (dragonfly: the next hop sampled uniformly at each switch, the Spritz paper's Valiant), ugal-l, ugal-g, source-guided (the sender's entropy picks the first two hops: Spritz EV1/EV2) or port-msb (the entropy's MSB picks shortest or non-shortest, switches add queuing delays for --lb owd)")
	fl.StringVar(&o.arStaleness, "ar-staleness", "0", "with --routing adaptive: age of the queue depths the switches decide on (e.g. 100ns, 1us); 0: live")
	fl.StringVar(&o.arQuantum, "ar-quantum", "0", "with --routing adaptive: queue-depth step, bytes (e.g. 4160, 128KiB); 0: one full packet")
	fl.BoolVar(&o.arWeighted, "ar-weighted", false, "with --routing adaptive: weigh ports by the capacity left downstream (weighted AR after link failures)")
	fl.StringVar(&o.preset, "preset", "", "named setting: smartt (the SMaRTT paper's 800G fabric and transport) or spritz (the Spritz paper's 400G dragonfly, DCTCP, longest-path sizing); flags and spec keys given win")
	fl.IntVar(&o.shards, "shards", 0, "parallel mode: cut the fabric into this many shards run in lock-step windows (results depend on it, at most 255); 1: the serial simulator; 0: one shard per 256 hosts on fabrics of 2048 hosts or more whose features the parallel mode supports, else serial")
	fl.IntVar(&o.workers, "workers", 0, "parallel mode: goroutines running the shards (results do not depend on it); 0: the number of CPUs")
	fl.BoolVarP(&o.quiet, "quiet", "q", false, "print no progress line")
	fl.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the whole run (setup included) to this file (go tool pprof)")
	fl.StringVar(&o.memProfile, "memprofile", "", "write a Go heap profile taken at the end of the run to this file (go tool pprof)")
	fl.DurationVar(&o.progressAfter, "progress-after", 3*time.Second, "print a progress line on stderr once a run takes longer than this")
	addServeFlags(fl, &o.serve, true)
	_ = c.MarkFlagRequired("topo")
	_ = c.MarkFlagRequired("tm")
	return c
}

// applyPreset fills the options the user did not give from --preset and
// adds its link rate and latencies to a --topo spec.
func applyPreset(o *simOpts) (*preset.Preset, error) {
	if o.preset == "" {
		return nil, nil
	}
	p, err := preset.Lookup(o.preset)
	if err != nil {
		return nil, fmt.Errorf("--preset: %w", err)
	}
	if st, err := os.Stat(o.topo); err == nil && st.Mode().IsRegular() {
		return nil, fmt.Errorf("--preset %s: sets the link rate and latencies of a generator spec (%s); --topo %s is a file with its own (give a spec such as fattree:hosts=128)",
			p.Name, p.SpecKeys(), o.topo)
	}
	if err := p.CheckSpec(o.topo); err != nil {
		return nil, fmt.Errorf("--preset: %w", err)
	}
	o.topo = p.ApplySpec(o.topo)
	changed := o.changed
	if changed == nil {
		changed = func(string) bool { return false }
	}
	set := p.Apply(preset.Settings{CC: o.cc, MTU: o.mtu, Queue: o.queue, KMin: o.kmin, KMax: o.kmax, ECN: o.ecn, Trimming: o.trim,
		TargetRTT: o.targetRTT, MaxWindow: o.maxWindow}, func(name string) bool { return changed(presetFlags[name]) })
	o.cc, o.mtu, o.queue, o.kmin, o.kmax, o.ecn, o.trim = set.CC, set.MTU, set.Queue, set.KMin, set.KMax, set.ECN, set.Trimming
	o.targetRTT, o.maxWindow = set.TargetRTT, set.MaxWindow
	return p, nil
}

// presetFlags are the flags of a preset's settings (preset.Apply).
var presetFlags = map[string]string{
	preset.SetCC: "cc", preset.SetMTU: "mtu", preset.SetQueue: "queue", preset.SetKMin: "kmin", preset.SetKMax: "kmax",
	preset.SetECN: "ecn", preset.SetTrimming: "trim", preset.SetTargetRTT: "target-rtt", preset.SetMaxWindow: "max-window",
}

// simFlags are the flags of the suite fields RunSpec.Validate reports.
var simFlags = map[string]string{
	"transport.lb": "--lb", "features.ecmp.mode": "--routing", "features.ecmp.hash": "the ECMP hash (always the 5-tuple)",
}

// simSpelling names a field in a RunSpec rule's message by its flag.
func simSpelling(path, value string) string {
	name, ok := simFlags[path]
	if !ok {
		name = path
	}
	if value == "" {
		return name
	}
	return name + " " + value
}

// simFieldError is a RunSpec rule's error at its flag.
func simFieldError(e runspec.FieldError) error {
	return fmt.Errorf("%s: %s", simSpelling(e.Path, ""), e.Msg)
}

func runSim(parent context.Context, stdout, stderr io.Writer, o *simOpts) error {
	if parent == nil {
		parent = context.Background()
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return badInput(fmt.Errorf("--cpuprofile: %w", err))
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return badInput(fmt.Errorf("--cpuprofile: %w", err))
		}
		defer pprof.StopCPUProfile()
	}
	pre, err := applyPreset(o)
	if err != nil {
		return badInput(err)
	}
	cc, err := transport.ParseCC(o.cc)
	if err != nil {
		return badInput(fmt.Errorf("--cc: %w", err))
	}
	lb, err := transport.ParseLB(o.lb)
	if err != nil {
		return badInput(fmt.Errorf("--lb: %w", err))
	}
	end, err := units.ParsePs(o.end)
	if err != nil {
		return badInput(fmt.Errorf("--end: %w", err))
	}
	var stallAfter int64 = -1
	if o.stallAfter != "off" {
		if stallAfter, err = units.ParsePs(o.stallAfter); err != nil {
			return badInput(fmt.Errorf("--stall-after: %w (or off)", err))
		}
	}
	var queue int64
	if o.queue != "bdp" && o.queue != preset.LongestPath {
		if queue, err = units.ParseBytes(o.queue); err != nil {
			return badInput(fmt.Errorf("--queue: %w", err))
		}
	}
	fab, err := inventory.Load(o.topo)
	if err != nil {
		return badInput(fmt.Errorf("--topo: %w", err))
	}
	m, err := workloads.Load(o.tm, fab, o.seed)
	if err != nil {
		return badInput(fmt.Errorf("--tm: %w", err))
	}
	reconverge, err := units.ParsePs(o.reconverge)
	if err != nil {
		return badInput(fmt.Errorf("--reconverge: %w", err))
	}
	var events []inventory.LinkEvent
	if o.failLinks != 0 {
		if events, err = fab.RandomLinkFailures(o.failLinks, o.seed, 0); err != nil {
			return badInput(fmt.Errorf("--fail-links: %w", err))
		}
	}
	for _, fs := range o.faults {
		ev, err := fab.ParseLinkEvent(fs)
		if err != nil {
			return badInput(fmt.Errorf("--fault: %w", err))
		}
		events = append(events, ev)
	}
	faults := make([]runspec.Fault, len(events))
	for i, ev := range events {
		faults[i] = runspec.Fault{At: ev.At, Link: ev.Link, Up: ev.Up, Fraction: ev.RateFactor, Direction: ev.Direction}
	}
	tp := transport.DefaultParams()
	tp.CC, tp.LB, tp.Trimming = cc, lb, o.trim
	if tp.PlaneMode, err = transport.ParsePlaneMode(o.planes); err != nil {
		return badInput(fmt.Errorf("--planes: %w", err))
	}
	tp.GoBackN = o.goBackN
	tp.MTU, tp.HeaderBytes, tp.AckBytes = o.mtu, o.header, o.header
	tp.QuickAdapt, tp.FastIncrease = o.quickAdapt, o.fastIncrease
	tp.TargetRTT, tp.MaxWindow = o.targetRTT, o.maxWindow
	ackBytes, err := units.ParseBytes(o.ackEveryBytes)
	if err != nil {
		return badInput(fmt.Errorf("--ack-every-bytes: %w", err))
	}
	ackDelay, err := units.ParsePs(o.ackDelay)
	if err != nil {
		return badInput(fmt.Errorf("--ack-delay: %w", err))
	}
	if ackBytes > 1<<26 {
		return badInput(fmt.Errorf("--ack-every-bytes: %d is out of range (at most %d)", ackBytes, 1<<26))
	}
	if o.ackEvery < 0 || o.ackEvery > transport.SackBits {
		return badInput(fmt.Errorf("--ack-every: %d is out of range (want 0 or 1 for an ACK per packet, at most %d)", o.ackEvery, transport.SackBits))
	}
	tp.AckEvery, tp.AckEveryBytes, tp.AckDelay = o.ackEvery, int(ackBytes), ackDelay
	if o.entropies > 1<<16 {
		return badInput(fmt.Errorf("--entropies: %d is out of range (at most 65536)", o.entropies))
	}
	if o.entropies > 0 {
		tp.Entropies = o.entropies
	}
	tp.OPSCycle, tp.REPSWarmup = o.opsCycle, o.repsWarmup
	if o.targetRTT != 0 && !(o.targetRTT > 1 && o.targetRTT <= 10) {
		return badInput(fmt.Errorf("--target-rtt: %g is out of range (want 0 for the default, or more than 1 and at most 10 base RTTs)", o.targetRTT))
	}
	if o.maxWindow != 0 && !(o.maxWindow > 0 && o.maxWindow <= 100) {
		return badInput(fmt.Errorf("--max-window: %g is out of range (want 0 for the default, or more than 0 and at most 100 BDPs)", o.maxWindow))
	}
	_, isLD := sim.ParseLowDiameter(o.routing)
	routing, err := sim.ParseRouting(o.routing)
	if isLD {
		routing, err = sim.RoutingHash, nil
	}
	if err != nil {
		return badInput(fmt.Errorf("--routing: %w (or, on dragonfly and slimfly fabrics, minimal, valiant, valiant-hop, ugal-l, ugal-g, source-guided or port-msb)", err))
	}
	arStale, err := units.ParsePs(o.arStaleness)
	if err != nil {
		return badInput(fmt.Errorf("--ar-staleness: %w", err))
	}
	arQuantum, err := units.ParseBytes(o.arQuantum)
	if err != nil {
		return badInput(fmt.Errorf("--ar-quantum: %w", err))
	}
	// The run as a RunSpec: its rules are the suite's (RunSpec.Validate,
	// named by flag) and the simulator runs it through the sim backend's
	// mapping, as a suite's run.
	feat := runspec.Features{ECMPHash: suite.DefaultHash, ECN: o.ecn, KMin: o.kmin, KMax: o.kmax, Trimming: o.trim,
		QueueBytes: queue, QueueLongestPath: o.queue == preset.LongestPath,
		Adaptive: routing == sim.RoutingAdaptive, Flowlet: routing == sim.RoutingFlowlet,
		ARStaleness: arStale, ARQuantum: arQuantum, ARWeighted: o.arWeighted,
		SimEnd: end, StallAfter: stallAfter, Reconverge: reconverge}
	if isLD {
		feat.LowDiameter = o.routing
	}
	spec := &runspec.RunSpec{ID: "sim", Fabric: fab, Features: feat, Transport: runspec.Transport{Seed: o.seed}, TransportParams: tp, Faults: faults}
	if errs := spec.Validate(simSpelling); len(errs) > 0 {
		return badInput(simFieldError(errs[0]))
	}
	cfg, err := simbackend.Config(spec, &runspec.Workload{Matrix: m})
	if err != nil {
		if feat.QueueLongestPath {
			return badInput(fmt.Errorf("--queue %s: %w", o.queue, err))
		}
		return badInput(err)
	}
	windowRTT := cfg.WindowRTT
	if !o.quiet {
		cfg.Progress = func(p sim.Progress) {
			if p.WallSoFar < o.progressAfter {
				return
			}
			fmt.Fprintf(stderr, "\rsim %s  flows %d/%d done  %d events (%.1f M/s)  wall %s   ",
				fmtUs(p.SimNow), p.Done, p.Flows, p.Events, float64(p.Events)/p.WallSoFar.Seconds()/1e6, p.WallSoFar.Truncate(time.Second))
		}
	}
	var served *simServer
	ctx := parent
	if o.serve.addr != "" {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
		defer stop()
		ss, cleanup, err := startSimServer(ctx, stderr, &o.serve, &cfg)
		defer cleanup()
		if err != nil {
			return err
		}
		served = ss
		defer ss.close()
	}
	if o.shards < 0 || o.shards > 255 {
		return badInput(fmt.Errorf("--shards: %d is out of range (0 for automatic, 1 for serial, at most 255)", o.shards))
	}
	if o.workers < 0 || o.workers > 1024 {
		return badInput(fmt.Errorf("--workers: %d is out of range (0 for the number of CPUs, at most 1024)", o.workers))
	}
	cfg.Shards, cfg.Workers = o.shards, o.workers
	if o.shards == 0 {
		cfg.Shards = autoShards(fab, &cfg)
	}
	if cfg.Workers == 0 {
		cfg.Workers = runtime.NumCPU()
	}
	setGC(fab)
	s, err := sim.New(cfg)
	if err != nil {
		return badInput(err)
	}
	if served != nil {
		stopSim := context.AfterFunc(ctx, s.Interrupt)
		defer stopSim()
	}
	res := s.Run()
	if served != nil {
		served.finish(ctx, stderr)
		switch {
		case ctx.Err() != nil:
			printSummary(stdout, fab, sim.BuildReport(sim.ReportConfig{Topo: o.topo, TM: o.tm, CC: cc.String(), LB: lb.String(), Trim: o.trim, ECN: o.ecn,
				Seed: o.seed, MTU: o.mtu, Header: o.header, EndUs: float64(end) / 1e6}, res))
			return &exitError{code: exitInterrupted, err: errors.New("interrupted (Ctrl-C); the summary covers the simulated time so far")}
		case served.err != nil:
			return infraError(fmt.Errorf("--serve-gnmi: publishing telemetry: %w", served.err))
		}
	}
	if o.memProfile != "" {
		if err := writeHeapProfile(o.memProfile); err != nil {
			return badInput(fmt.Errorf("--memprofile: %w", err))
		}
	}
	if cfg.Progress != nil && res.Wall >= o.progressAfter {
		fmt.Fprintln(stderr)
	}
	rc := sim.ReportConfig{Topo: o.topo, TM: o.tm, CC: cc.String(), LB: lb.String(), Trim: o.trim, ECN: o.ecn,
		Seed: o.seed, MTU: o.mtu, Header: o.header, EndUs: float64(end) / 1e6}
	if fab.NumPlanes() > 1 {
		rc.Planes = tp.PlaneMode.String()
	}
	rep := sim.BuildReport(rc, res)
	if windowRTT > 0 {
		rep.Config.BaseRTTus = float64(windowRTT) / 1e6 // the longest source-guided path the queues and windows are sized on
	}
	if pre != nil {
		fmt.Fprintf(stdout, "preset   %s: --topo %s --cc %s --mtu %d --queue %s --kmin %g --kmax %g --ecn=%v --trim=%v --target-rtt %g --max-window %g\n",
			pre.Name, o.topo, cc, o.mtu, o.queue, o.kmin, o.kmax, o.ecn, o.trim, o.targetRTT, o.maxWindow)
	}
	printSummary(stdout, fab, rep)
	if o.jsonOut != "" {
		if err := writeJSONFile(o.jsonOut, rep); err != nil {
			return &exitError{code: exitBadInput, err: fmt.Errorf("--json: %w", err)}
		}
	}
	// Flows that could not finish fail the run; an --end given on purpose
	// may cut flows short.
	if res.Incomplete > 0 && (res.EndReason == sim.EndStalled || (res.EndReason == sim.EndLimit && (o.changed == nil || !o.changed("end")))) {
		return &exitError{code: exitFail, err: fmt.Errorf("%d of %d flows did not finish (%s)", res.Incomplete, len(res.Flows), rep.Summary.EndReason)}
	}
	return nil
}

// autoShards is --shards 0: the parallel mode's default shard count on
// fabrics of sim.ParallelMinHosts hosts or more when the run's features
// allow it, else 1 (serial). It depends on the fabric and the flags, never
// on the machine, so results do not either.
func autoShards(fab *inventory.Fabric, cfg *sim.Config) int {
	if fab.NumHosts() >= sim.ParallelMinHosts && sim.ParallelUnsupported(cfg) == "" {
		return sim.DefaultShards(fab.NumHosts())
	}
	return 1
}

// setGC bounds the Go heap's headroom on large fabrics: the default GOGC
// of 100 lets the heap grow to twice the live data before a collection
// (8192 hosts: 142 MB live, up to 248 MB of heap, 277 MB RSS). From 4096
// hosts GOGC is 50 (about 1.5x: 232 MB RSS; a few more collections of a
// heap that is mostly long-lived), unless the GOGC environment variable is
// set.
func setGC(fab *inventory.Fabric) {
	if os.Getenv("GOGC") == "" && fab.NumHosts() >= 4096 {
		debug.SetGCPercent(50)
	}
}

// writeHeapProfile writes the live heap (after a collection) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeJSONFile(path string, rep *sim.Report) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := rep.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func fmtUs(ps int64) string { return fmt.Sprintf("%.1f µs", float64(ps)/1e6) }

func fmtQ(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", *v)
}

func printSummary(w io.Writer, fab *inventory.Fabric, r *sim.Report) {
	s := &r.Summary
	c := &r.Config
	fmt.Fprintf(w, "fabric   %s; queue %d B", fab.Summary(), c.QueueBytes)
	if c.BaseRTTus > 0 { // not known with a --queue size given
		fmt.Fprintf(w, ", longest base RTT %.2f µs", c.BaseRTTus)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "run      cc=%s lb=%s trim=%v ecn=%v seed=%d mtu=%d", c.CC, c.LB, c.Trim, c.ECN, c.Seed, c.MTU)
	if c.Planes != "" {
		fmt.Fprintf(w, " planes=%s", c.Planes)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "flows    %d/%d completed", s.Completed, s.Flows)
	if s.Incomplete > 0 {
		fmt.Fprintf(w, " (%d unfinished at the end of the run: %s)", s.Incomplete, s.EndReason)
	}
	fmt.Fprintf(w, "; FCT µs min %s p50 %s p99 %s max %s\n", fmtQ(s.FCTUs.Min), fmtQ(s.FCTUs.P50), fmtQ(s.FCTUs.P99), fmtQ(s.FCTUs.Max))
	if strings.HasPrefix(c.TM, "monitored:") && len(r.Flows) > 0 {
		// Spritz Table III's figure: the monitored flow's own FCT.
		f0 := &r.Flows[0]
		fmt.Fprintf(w, "monitor  flow 0, host %d -> host %d, %d B: FCT µs %s\n", f0.Src, f0.Dst, f0.SizeBytes, fmtQ(f0.FCTUs))
	}
	p := &s.Packets
	fmt.Fprintf(w, "packets  sent %d, retransmitted %d, trimmed %d, dropped %d, ECN-marked %d\n", p.Sent, p.Retransmitted, p.Trimmed, p.Dropped, p.ECNMarked)
	fmt.Fprintf(w, "engine   %.1f µs simulated in %.3f s wall, %d events (%.2f M events/s), peak RSS %.1f MB",
		s.SimEndUs, s.WallS, s.Events, s.EventsPerS/1e6, float64(s.PeakRSSBytes)/1e6)
	if s.Shards > 1 {
		fmt.Fprintf(w, "; parallel: %d shards on %d workers, %.3f µs windows", s.Shards, s.Workers, s.LookaheadUs)
	}
	fmt.Fprintln(w)
}
