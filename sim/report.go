package sim

import (
	"encoding/json"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Report is the JSON document `fabricbench sim --json` writes.
type Report struct {
	Config  ReportConfig `json:"config"`
	Flows   []ReportFlow `json:"flows"`
	Summary Summary      `json:"summary"`
}

// ReportConfig echoes what was simulated.
type ReportConfig struct {
	Topo       string  `json:"topo"`
	TM         string  `json:"tm"`
	CC         string  `json:"cc"`
	LB         string  `json:"lb"`
	Trim       bool    `json:"trim"`
	ECN        bool    `json:"ecn"`
	Seed       uint64  `json:"seed"`
	MTU        int     `json:"mtu_payload_bytes"`
	Header     int     `json:"header_bytes"`
	QueueBytes int64   `json:"queue_bytes"`
	BaseRTTus  float64 `json:"base_rtt_us"`
	EndUs      float64 `json:"end_us,omitempty"`
	// Planes is the plane load balancing (plb, global, entropy) of a
	// multi-plane fabric; empty otherwise.
	Planes string `json:"planes,omitempty"`
}

// ReportFlow is one flow; FCT is null when the flow did not finish.
type ReportFlow struct {
	ID        int      `json:"id"`
	Src       int      `json:"src"`
	Dst       int      `json:"dst"`
	SizeBytes int64    `json:"size_bytes"`
	StartUs   *float64 `json:"start_us"`
	FCTUs     *float64 `json:"fct_us"`
}

// Summary aggregates a run.
type Summary struct {
	FCTUs      Quantiles     `json:"fct_us"`
	Packets    PacketSummary `json:"packets"`
	Flows      int           `json:"flows"`
	Completed  int           `json:"completed"`
	Incomplete int           `json:"incomplete"`
	SimEndUs   float64       `json:"sim_end_us"`
	// EndReason is why the run ended: done (every flow finished),
	// time-limit (--end), stalled (no flow progressed for the stall
	// stretch, StallUs) or interrupted.
	EndReason    string  `json:"end_reason"`
	StallUs      float64 `json:"stall_us,omitempty"`
	WallS        float64 `json:"wall_s"`
	Events       uint64  `json:"events"`
	EventsPerS   float64 `json:"events_per_s"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
	// Shards is the parallel mode's shard count (results depend on it);
	// Workers how many goroutines ran them (they do not). Both are 0 in the
	// serial mode.
	Shards  int `json:"shards,omitempty"`
	Workers int `json:"workers,omitempty"`
	// LookaheadUs is the parallel mode's window (the shortest latency of a
	// link between shards).
	LookaheadUs float64 `json:"lookahead_us,omitempty"`
}

// Quantiles of the completed flows' FCTs (all null when none completed).
type Quantiles struct {
	Min *float64 `json:"min"`
	P50 *float64 `json:"p50"`
	P99 *float64 `json:"p99"`
	Max *float64 `json:"max"`
}

// PacketSummary are the fabric-wide packet counters.
type PacketSummary struct {
	Sent          uint64 `json:"sent"`
	Retransmitted uint64 `json:"retransmitted"`
	Trimmed       uint64 `json:"trimmed"`
	Dropped       uint64 `json:"dropped"`
	ECNMarked     uint64 `json:"ecn_marked"`
}

func us(ps int64) float64 { return float64(ps) / 1e6 }

// Quantile returns the q-quantile (nearest rank) of sorted values.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

// BuildReport turns a result into the JSON report.
func BuildReport(cfg ReportConfig, r *Result) *Report {
	rep := &Report{Config: cfg, Flows: make([]ReportFlow, len(r.Flows))}
	var fcts []float64
	for i, f := range r.Flows {
		rf := ReportFlow{ID: f.ID, Src: f.Src, Dst: f.Dst, SizeBytes: f.Size}
		if f.Start >= 0 {
			v := us(f.Start)
			rf.StartUs = &v
		}
		if f.FCT >= 0 {
			v := us(f.FCT)
			rf.FCTUs = &v
			fcts = append(fcts, v)
		}
		rep.Flows[i] = rf
	}
	sort.Float64s(fcts)
	s := &rep.Summary
	if len(fcts) > 0 {
		mn, p50, p99, mx := fcts[0], Quantile(fcts, 0.5), Quantile(fcts, 0.99), fcts[len(fcts)-1]
		s.FCTUs = Quantiles{Min: &mn, P50: &p50, P99: &p99, Max: &mx}
	}
	s.Packets = PacketSummary{Sent: r.Packets.Sent, Retransmitted: r.Packets.Retransmitted, Trimmed: r.Packets.Trimmed, Dropped: r.Packets.Dropped, ECNMarked: r.Packets.ECNMarked}
	s.Flows, s.Completed, s.Incomplete = len(r.Flows), len(fcts), r.Incomplete
	s.SimEndUs = us(r.SimEnd)
	s.EndReason, s.StallUs = r.EndReason.String(), us(r.StallAfter)
	s.WallS = r.Wall.Seconds()
	s.Events = r.Events
	if s.WallS > 0 {
		s.EventsPerS = float64(r.Events) / s.WallS
	}
	s.PeakRSSBytes = PeakRSS()
	s.Shards, s.Workers, s.LookaheadUs = r.Shards, r.Workers, us(r.Lookahead)
	rep.Config.QueueBytes = r.QueueBytes
	rep.Config.BaseRTTus = us(r.BaseRTT)
	return rep
}

// WriteJSON writes the report, indented.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// PeakRSS returns the process's peak resident set size in bytes (Linux
// VmHWM), or 0 when unknown.
func PeakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, ln := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(ln, "VmHWM:") {
			f := strings.Fields(ln)
			if len(f) >= 2 {
				kb, err := strconv.ParseInt(f[1], 10, 64)
				if err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}
