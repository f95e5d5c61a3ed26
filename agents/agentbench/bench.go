package agentbench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/fabricbench/fabricbench/agents/dataplane"
	"github.com/fabricbench/fabricbench/agents/transport"
)

// Path is where the bench measures: the two hosts' namespaces and their
// data addresses, plane 0 first (several planes: the agent spreads its
// flows over them; iperf3 uses plane 0).
type Path struct {
	SrcNS, DstNS string
	Src, Dst     []netip.Addr
	// MTU is the links' MTU: it sizes the agent's packets and iperf3's
	// UDP datagrams.
	MTU int
}

// Path returns the chain's path.
func (c *Chain) Path(mtu int) Path {
	if mtu == 0 {
		mtu = 9000
	}
	return Path{SrcNS: c.SrcNS, DstNS: c.DstNS, Src: c.Src, Dst: c.Dst, MTU: mtu}
}

// Options configure a bench run.
type Options struct {
	// Flows are the numbers of concurrent flows from the source host to
	// the destination host to measure; nil: 1, 2 and 4.
	Flows []int
	// Bytes is what the agent sends in each measurement, split evenly over
	// its flows; 0: 4 GiB.
	Bytes int64
	// Duration of each iperf3 test; 0: 4 s.
	Duration time.Duration
	// Repeat runs every measurement this many times, interleaved; the
	// summary takes medians. 0: 1.
	Repeat int
	// Params are the agent's transport parameters (transport.DefaultParams
	// amended). MTU 0 is the largest payload the path MTU allows.
	Params transport.Params
	// EntropyPorts of each agent; 0: 64.
	EntropyPorts int
	// PathRateBps is the path rate the transport assumes
	// (FlowSpec.RateBps: the window is 1.5 x rate x base RTT); 0: 100
	// Gb/s, a rate the lab path (veth, no shaping) does not limit.
	PathRateBps int64
	// PaceBps paces each agent's NIC (Config.RateBps); 0: unpaced.
	PaceBps int64
	// BaseRTT is the flows' base RTT; 0 measures it: the smallest whole
	// round trip of single packets sent one after another (the hosts'
	// delays included, as the harness's path model includes the endpoints'
	// time), which the window (1.5 x rate x base RTT) must cover.
	BaseRTT time.Duration
	// DisableGSO and DisableGRO turn the agents' offloads off.
	DisableGSO, DisableGRO bool
	// Iperf3 is the iperf3 binary; "" looks it up on PATH (missing: the
	// agent is measured alone); "none" skips iperf3.
	Iperf3 string
	// Logf receives progress lines; nil discards them.
	Logf func(format string, args ...any)
}

// Tools measured.
const (
	ToolAgent    = "agent"
	ToolIperfUDP = "iperf3-udp"
	ToolIperfTCP = "iperf3-tcp"
)

// Result is one measurement.
type Result struct {
	Tool  string `json:"tool"`
	Flows int    `json:"flows"`
	Run   int    `json:"run"`
	// Datagram is the UDP payload of a full data packet (agent, iperf3
	// UDP); 0 for TCP.
	Datagram int     `json:"datagram_bytes,omitempty"`
	Seconds  float64 `json:"seconds"`
	// Bytes is the payload delivered.
	Bytes int64 `json:"bytes"`
	// GoodputGbps is the delivered payload rate of all flows; PerFlowGbps
	// that over the flows; MinFlowGbps the slowest flow's.
	GoodputGbps float64 `json:"goodput_gbps"`
	PerFlowGbps float64 `json:"per_flow_gbps"`
	MinFlowGbps float64 `json:"min_flow_gbps"`
	// SentGbps is what the sender sent (iperf3 UDP: the rate it offered,
	// lost datagrams included).
	SentGbps float64 `json:"sent_gbps"`
	// LossPct is the share of datagrams lost (iperf3 UDP) or of packets
	// retransmitted that were not spurious (agent).
	LossPct float64 `json:"loss_pct"`
	// Packets sent (agent: data packets, retransmissions included; iperf3
	// UDP: datagrams; TCP: segments, estimated from bytes and the MSS).
	Packets     uint64 `json:"packets"`
	Retransmits uint64 `json:"retransmits"`
	// Timeouts are the agent's retransmission timeouts (packets), Spurious
	// its retransmissions the original's ACK proved needless.
	Timeouts       uint64  `json:"timeouts"`
	Spurious       uint64  `json:"spurious"`
	TimeoutsPer10k float64 `json:"timeouts_per_10k"`
	// CPUSeconds is user plus system time of the tool's processes (the
	// agent: this process, both ends; iperf3: client and server) while it
	// ran; CPUPerGB that per gigabyte (1e9 bytes) delivered.
	CPUSeconds float64 `json:"cpu_s"`
	CPUPerGB   float64 `json:"cpu_s_per_gb"`
	// The agent's: smallest fabric RTT (kernel timestamps), largest window
	// and the path's BDP at the goodput and that RTT.
	MinRTTus   float64   `json:"min_rtt_us,omitempty"`
	LoopRTTus  float64   `json:"loop_rtt_us,omitempty"`
	MaxCwnd    int64     `json:"max_cwnd_bytes,omitempty"`
	PathBDP    int64     `json:"path_bdp_bytes,omitempty"`
	GSO        bool      `json:"gso,omitempty"`
	GRO        bool      `json:"gro,omitempty"`
	SendCalls  uint64    `json:"send_calls,omitempty"`
	RecvCalls  uint64    `json:"recv_calls,omitempty"`
	PlaneShare []float64 `json:"plane_share,omitempty"`
}

// Summary compares the tools for one number of flows (medians over
// repeats).
type Summary struct {
	Flows int `json:"flows"`
	// Per-flow goodput (iperf3 UDP: also its per-flow send rate), Gb/s.
	Agent   float64 `json:"agent_gbps"`
	UDP     float64 `json:"udp_gbps"`
	UDPSent float64 `json:"udp_sent_gbps"`
	TCP     float64 `json:"tcp_gbps"`
	// AgentOverUDP is the agent's per-flow goodput over iperf3 UDP's
	// per-flow send rate (what it offered: more than it delivered);
	// AgentOverTCP over iperf3 TCP's per-flow goodput. 0 without iperf3.
	AgentOverUDP float64 `json:"agent_over_udp"`
	AgentOverTCP float64 `json:"agent_over_tcp"`
	// TimeoutsPer10k is the agent's, over all repeats (timeouts over
	// packets sent).
	TimeoutsPer10k float64 `json:"timeouts_per_10k"`
}

// Report is a bench run.
type Report struct {
	Path      Path             `json:"path"`
	Params    transport.Params `json:"transport"`
	BaseRTTus float64          `json:"base_rtt_us"`
	PathRate  int64            `json:"path_rate_bps"`
	Iperf3    string           `json:"iperf3,omitempty"`
	Results   []Result         `json:"results"`
	Summaries []Summary        `json:"summaries"`
}

// Run measures the path: a warm-up agent flow, then for each number of
// flows (and repeat) the agent, iperf3 UDP and iperf3 TCP.
func Run(ctx context.Context, p Path, o Options) (*Report, error) {
	if len(p.Src) == 0 || len(p.Src) != len(p.Dst) {
		return nil, errors.New("agentbench: the path needs a source and a destination address per plane")
	}
	if o.Flows == nil {
		o.Flows = []int{1, 2, 4}
	}
	for _, n := range o.Flows {
		if n < 1 || n > 64 {
			return nil, fmt.Errorf("agentbench: %d flows, want 1 to 64", n)
		}
	}
	if o.Bytes == 0 {
		o.Bytes = 4 << 30
	}
	if o.Duration == 0 {
		o.Duration = 4 * time.Second
	}
	if o.Repeat == 0 {
		o.Repeat = 1
	}
	if o.EntropyPorts == 0 {
		o.EntropyPorts = 64
	}
	if o.PathRateBps == 0 {
		o.PathRateBps = 100e9
	}
	if p.MTU == 0 {
		p.MTU = 9000
	}
	switch {
	case o.Bytes < 1<<20:
		return nil, fmt.Errorf("agentbench: %d bytes per measurement, want at least 1 MiB", o.Bytes)
	case o.Duration < time.Second || o.Duration > time.Hour:
		return nil, fmt.Errorf("agentbench: iperf3 duration %v, want 1s to 1h", o.Duration)
	case o.Repeat < 1 || o.Repeat > 100:
		return nil, fmt.Errorf("agentbench: %d repeats, want 1 to 100", o.Repeat)
	case o.PathRateBps < 0 || o.PaceBps < 0 || o.BaseRTT < 0:
		return nil, errors.New("agentbench: negative path rate, pacing rate or base RTT")
	}
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	params := o.Params
	if params.MTU == 0 {
		params.MTU = p.MTU - dataplane.IPv4HeaderLen - dataplane.UDPHeaderLen - dataplane.DataHeaderLen
	}
	params.HeaderBytes, params.AckBytes, params.Entropies = 0, 0, 0
	params.Trimming = false // Linux forwarding drops
	if hdr := dataplane.IPv4HeaderLen + dataplane.UDPHeaderLen + dataplane.DataHeaderLen; params.MTU+hdr > p.MTU {
		return nil, fmt.Errorf("agentbench: transport mtu %d does not fit the path's %d-byte MTU (at most %d)", params.MTU, p.MTU, p.MTU-hdr)
	}
	iperf, err := findIperf3(o.Iperf3)
	if err != nil {
		return nil, err
	}
	switch {
	case o.Iperf3 == "none":
		logf("iperf3 skipped: measuring the agent alone")
	case iperf == "":
		logf("iperf3 not found on PATH: measuring the agent alone")
	}
	cfg := dataplane.Config{Addr: p.Src[0], Planes: p.Src[1:], Netns: NetnsPath(p.SrcNS), EntropyPorts: o.EntropyPorts,
		RateBps: o.PaceBps, Params: params, RunID: 0xbe7c, DisableGSO: o.DisableGSO, DisableGRO: o.DisableGRO, Logf: logf,
		FlowTimeout: 10 * time.Minute}
	src, err := dataplane.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("agentbench: source agent: %w", err)
	}
	defer src.Close()
	cfg.Addr, cfg.Planes, cfg.Netns = p.Dst[0], p.Dst[1:], NetnsPath(p.DstNS)
	dst, err := dataplane.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("agentbench: destination agent: %w", err)
	}
	defer dst.Close()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	for _, e := range []*dataplane.Engine{src, dst} {
		go func() { errc <- e.Run(rctx) }()
	}
	defer func() {
		cancel()
		<-errc
		<-errc
	}()
	a := &agentRunner{src: src, dst: dst, path: p, o: o, params: src.Params()}
	// Warm-up: RTT estimates for the flows' RTOs and the fabric's RTT;
	// then the unloaded whole round trip, from single-packet flows one
	// after another (a full flow's own queue would inflate it).
	base := transport.Time(o.BaseRTT.Nanoseconds()) * transport.Nanosecond
	if base == 0 {
		res, err := a.measure(ctx, 1, min(o.Bytes/8, 256<<20), 100*transport.Microsecond, -1)
		if err != nil {
			return nil, fmt.Errorf("agentbench: warm-up flow: %w", err)
		}
		var loop float64
		for range 20 {
			r, err := a.measure(ctx, 1, int64(a.params.MTU), 100*transport.Microsecond, -1)
			if err != nil {
				return nil, fmt.Errorf("agentbench: warm-up packet: %w", err)
			}
			if r.LoopRTTus > 0 && (loop == 0 || r.LoopRTTus < loop) {
				loop = r.LoopRTTus
			}
		}
		base = transport.Time(max(res.MinRTTus, loop) * 1e6)
		logf("warm-up: %.2f Gb/s, fabric RTT %.1f us (kernel timestamps); unloaded whole round trip %.1f us (single packets)", res.GoodputGbps, res.MinRTTus, loop)
		if base <= 0 {
			return nil, errors.New("agentbench: the warm-up measured no RTT")
		}
	}
	rep := &Report{Path: p, Params: a.params, BaseRTTus: float64(base) / 1e6, PathRate: o.PathRateBps, Iperf3: iperf}
	ip := &iperfRunner{bin: iperf, path: p, dur: o.Duration, datagram: dataplane.DataHeaderLen + a.params.MTU}
	for run := 0; run < o.Repeat; run++ {
		for _, n := range o.Flows {
			res, err := a.measure(ctx, n, o.Bytes, base, run)
			if err != nil {
				return rep, err
			}
			logf("%s", res.line())
			rep.Results = append(rep.Results, *res)
			if iperf == "" {
				continue
			}
			for _, udp := range []bool{true, false} {
				res, err := ip.measure(ctx, n, udp, run)
				if err != nil {
					return rep, err
				}
				logf("%s", res.line())
				rep.Results = append(rep.Results, *res)
			}
		}
	}
	rep.Summaries = summarize(rep.Results, o.Flows)
	return rep, nil
}

// agentRunner runs the agent's measurements on one pair of engines.
type agentRunner struct {
	src, dst *dataplane.Engine
	path     Path
	o        Options
	params   transport.Params
	nextID   uint32
}

// measure sends n flows of bytes/n each and waits for them.
func (a *agentRunner) measure(ctx context.Context, n int, bytes int64, base transport.Time, run int) (*Result, error) {
	size := bytes / int64(n)
	specs := make([]dataplane.FlowSpec, n)
	for i := range specs {
		a.nextID++
		specs[i] = dataplane.FlowSpec{ID: a.nextID, Dst: netip.AddrPortFrom(a.path.Dst[0], a.dst.LocalAddr().Port()), Size: size,
			BaseRTT: base, RateBps: a.o.PathRateBps}
		if len(a.path.Dst) > 1 {
			specs[i].PlaneDsts = a.path.Dst[1:]
		}
	}
	st0, rst0 := a.src.Stats(), a.dst.Stats()
	sent0, _ := a.src.PlaneCounts()
	cpu0 := cpuTime()
	start := time.Now()
	for _, s := range specs {
		if err := a.src.StartFlow(s); err != nil {
			return nil, err
		}
	}
	var comps []dataplane.Completion
	for len(comps) < n {
		select {
		case c, ok := <-a.src.Completions():
			if !ok {
				return nil, errors.New("agentbench: the source agent stopped")
			}
			comps = append(comps, c)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	wall := time.Since(start)
	cpu := cpuTime() - cpu0
	st, rst := a.src.Stats(), a.dst.Stats()
	sent1, _ := a.src.PlaneCounts()
	r := &Result{Tool: ToolAgent, Flows: n, Run: run, Datagram: dataplane.DataHeaderLen + a.params.MTU, Seconds: wall.Seconds(),
		CPUSeconds: cpu.Seconds(), MinFlowGbps: math.Inf(1)}
	r.GSO, r.GRO = a.src.Offloads()
	var minRTT, loopRTT time.Duration
	for _, c := range comps {
		if c.Err != nil {
			return nil, fmt.Errorf("agentbench: agent flow %d: %w", c.ID, c.Err)
		}
		r.Bytes += size
		r.MinFlowGbps = min(r.MinFlowGbps, float64(size)*8/c.FCT.Seconds()/1e9)
		r.Retransmits += c.Stats.Retx
		r.Timeouts += c.Stats.Timeouts
		r.Spurious += c.Stats.Spurious
		r.MaxCwnd = max(r.MaxCwnd, c.MaxCwnd)
		if c.MinRTT > 0 && (minRTT == 0 || c.MinRTT < minRTT) {
			minRTT = c.MinRTT
		}
		if c.LoopRTT > 0 && (loopRTT == 0 || c.LoopRTT < loopRTT) {
			loopRTT = c.LoopRTT
		}
	}
	// Every byte arrived, once.
	if got := rst.PayloadRecv - rst0.PayloadRecv; got != uint64(r.Bytes) {
		return nil, fmt.Errorf("agentbench: the destination agent received %d payload bytes of %d", got, r.Bytes)
	}
	r.Packets = st.DataSent - st0.DataSent
	r.SendCalls = st.SendCalls - st0.SendCalls + rst.SendCalls - rst0.SendCalls
	r.RecvCalls = st.RecvCalls - st0.RecvCalls + rst.RecvCalls - rst0.RecvCalls
	r.GoodputGbps = float64(r.Bytes) * 8 / wall.Seconds() / 1e9
	r.PerFlowGbps = r.GoodputGbps / float64(n)
	r.SentGbps = float64(st.DataBytesSent-st0.DataBytesSent) * 8 / wall.Seconds() / 1e9
	if r.Packets > 0 {
		r.LossPct = 100 * float64(r.Retransmits-min(r.Spurious, r.Retransmits)) / float64(r.Packets)
		r.TimeoutsPer10k = 1e4 * float64(r.Timeouts) / float64(r.Packets)
	}
	r.CPUPerGB = r.CPUSeconds / (float64(r.Bytes) / 1e9)
	r.MinRTTus = float64(minRTT.Nanoseconds()) / 1e3
	r.LoopRTTus = float64(loopRTT.Nanoseconds()) / 1e3
	r.PathBDP = int64(r.GoodputGbps * 1e9 / 8 * minRTT.Seconds())
	if len(sent1) > 1 {
		var tot uint64
		for i := range sent1 {
			tot += sent1[i] - sent0[i]
		}
		for i := range sent1 {
			r.PlaneShare = append(r.PlaneShare, float64(sent1[i]-sent0[i])/float64(max(tot, 1)))
		}
	}
	return r, nil
}

// cpuTime is this process's user plus system time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (r *Result) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s flows %d run %d: %.2f Gb/s per flow (slowest %.2f), %.2f Gb/s in all", r.Tool, r.Flows, r.Run, r.PerFlowGbps, r.MinFlowGbps, r.GoodputGbps)
	switch r.Tool {
	case ToolAgent:
		fmt.Fprintf(&b, "; %d packets, %d retransmitted (%d spurious), %d timeouts (%.2f per 10k); fabric RTT %.1f us (whole %.1f), window up to %d B (path BDP %d B); %.3f CPU-s/GB",
			r.Packets, r.Retransmits, r.Spurious, r.Timeouts, r.TimeoutsPer10k, r.MinRTTus, r.LoopRTTus, r.MaxCwnd, r.PathBDP, r.CPUPerGB)
	case ToolIperfUDP:
		fmt.Fprintf(&b, "; sent %.2f Gb/s, %.1f%% of %d datagrams lost; %.3f CPU-s/GB", r.SentGbps, r.LossPct, r.Packets, r.CPUPerGB)
	case ToolIperfTCP:
		fmt.Fprintf(&b, "; %d retransmitted segments; %.3f CPU-s/GB", r.Retransmits, r.CPUPerGB)
	}
	return b.String()
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func summarize(rs []Result, flows []int) []Summary {
	var out []Summary
	for _, n := range flows {
		var ag, udp, sent, tcp []float64
		var timeouts, pkts uint64
		s := Summary{Flows: n}
		for _, r := range rs {
			if r.Flows != n {
				continue
			}
			switch r.Tool {
			case ToolAgent:
				ag = append(ag, r.PerFlowGbps)
				timeouts += r.Timeouts
				pkts += r.Packets
			case ToolIperfUDP:
				udp = append(udp, r.PerFlowGbps)
				sent = append(sent, r.SentGbps/float64(n))
			case ToolIperfTCP:
				tcp = append(tcp, r.PerFlowGbps)
			}
		}
		s.Agent, s.UDP, s.UDPSent, s.TCP = median(ag), median(udp), median(sent), median(tcp)
		if pkts > 0 {
			s.TimeoutsPer10k = 1e4 * float64(timeouts) / float64(pkts)
		}
		if s.UDPSent > 0 {
			s.AgentOverUDP = s.Agent / s.UDPSent
		}
		if s.TCP > 0 {
			s.AgentOverTCP = s.Agent / s.TCP
		}
		out = append(out, s)
	}
	return out
}

// Table renders the results as a markdown table, one row per measurement.
func (rep *Report) Table() string {
	var b strings.Builder
	b.WriteString("| flows | tool | per-flow goodput (Gb/s) | slowest flow | all flows | loss | retransmits | timeouts / 10k pkts | CPU-s per GB |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rep.Results {
		tool := map[string]string{ToolAgent: "agent", ToolIperfUDP: fmt.Sprintf("iperf3 UDP (%d B, sent %.2f)", r.Datagram, r.SentGbps), ToolIperfTCP: "iperf3 TCP"}[r.Tool]
		if r.Tool == ToolAgent {
			tool = fmt.Sprintf("agent (%d B)", r.Datagram)
		}
		to := "–"
		if r.Tool == ToolAgent {
			to = fmt.Sprintf("%.2f", r.TimeoutsPer10k)
		}
		fmt.Fprintf(&b, "| %d | %s | %.2f | %.2f | %.2f | %.2f%% | %d | %s | %.3f |\n", r.Flows, tool, r.PerFlowGbps, r.MinFlowGbps, r.GoodputGbps,
			r.LossPct, r.Retransmits, to, r.CPUPerGB)
	}
	return b.String()
}
