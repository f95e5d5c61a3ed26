package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/results"
)

// fixture is a realistic two-run suite on a 4-leaf, 8-spine leaf-spine
// fabric: run r1 (ECMP) has three injected faults: F1 degrades the uplink
// leaf0:Ethernet4 from 2 ms (culprit #1, capacity, with three victims), F2
// slows host7's NIC (culprit #2, slow-nic, with twelve victims), F3 flaps
// leaf2:Ethernet1 and no anomaly explains it; culprit #3 (loss on
// spine2:Ethernet3) matches no injected fault. r1 also has an ECMP
// imbalance in leaf-uplinks:leaf2, one failing and one erroring KPI. Run
// r2 (REPS) passes and has no faults.
func fixture() (*results.Results, map[string]*results.Plots) {
	start := time.Date(2025, 3, 14, 2, 0, 0, 0, time.UTC)
	mkRun := func(id, lb string) results.Run {
		return results.Run{
			ID:       id,
			Params:   map[string]string{"transport.lb": lb},
			Seed:     42,
			Status:   results.Pass,
			Fabric:   "leafspine 4 leaves × 8 spines, 8 hosts/leaf, 100 Gb/s",
			Config:   map[string]string{"cc": "nscc", "lb": lb, "trimming": "on", "ecn": "on"},
			SimEndUs: 6000, WallS: 12.4,
			Packets:   results.Packets{Sent: 1_234_567, Retransmitted: 321, Trimmed: 1200, Dropped: 3, ECNMarked: 45_000},
			Telemetry: results.Telemetry{IntervalUs: 100, Targets: 12, Samples: 28_800, Store: "runs/" + id + "/telemetry.db"},
			Files:     map[string]string{"plots": "runs/" + id + "/plots.json"},
			Jobs: []results.Job{
				{Name: "perm", Workload: "permutation", Hosts: 32, SizeBytes: 8 << 20, Repetitions: 3, Flows: 96, Completed: 96,
					CompletionUs: 1450, RepetitionsUs: []float64{1390, 1450, 1410}, AlgBWGbps: 46.3, BusBWGbps: 46.3,
					FCTUs: results.Quantiles{Min: 690, P50: 712, P99: 1402, Max: 1450}, Slowdown: results.Quantiles{Min: 1, P50: 1.03, P99: 2.1, Max: 2.2},
					P01PairBW: 0.48, Packets: results.JobPackets{Retransmitted: 120, Nacks: 40, Timeouts: 0}},
				{Name: "a2a", Workload: "all-to-all", Hosts: 16, SizeBytes: 256 << 10, Repetitions: 1, Flows: 240, Completed: 238,
					CompletionUs: 3900, AlgBWGbps: 71.2, BusBWGbps: 66.8,
					FCTUs: results.Quantiles{Min: 30, P50: 210, P99: 3100, Max: 3900}, Slowdown: results.Quantiles{Min: 1, P50: 4.2, P99: 38, Max: 51},
					P01PairBW: 0.07, Packets: results.JobPackets{Retransmitted: 201, Nacks: 77, Timeouts: 2}},
			},
		}
	}
	r1 := mkRun("r1", "ecmp")
	r1.Status = results.Fail
	r1.Faults = fixtureFaults()
	r1.FaultMatches = []results.FaultMatch{
		{ID: "F1", Description: "degrade leaf0:Ethernet4 to 50% at 2ms", Ports: []string{"leaf0:Ethernet4"}, StartUs: 2000, EndUs: -1, Anomaly: 1},
		{ID: "F2", Description: "degrade nic host7 to 45% at 1ms", Ports: []string{"host7:eth0", "leaf0:Ethernet15"}, Host: "host7", StartUs: 1000, EndUs: -1, Anomaly: 2},
		{ID: "F3", Description: "flap leaf2:Ethernet1 every 400us x2 at 4ms", Ports: []string{"leaf2:Ethernet1", "spine1:Ethernet2"}, StartUs: 4000, EndUs: 4800, Anomaly: 0},
	}
	r1.KPIs = []results.KPI{
		{Name: "perm.fct_slowdown_p99", Metric: "fct_slowdown_p99", Scope: "perm", Op: "<=", Threshold: 3, Value: 2.1, Verdict: results.Pass},
		{Name: "perm.busbw", Metric: "busbw", Scope: "perm", Op: ">=", Threshold: 80, Value: 46.3, Unit: "Gb/s", Verdict: results.Fail, Message: "busbw 46.3 Gb/s is 42% below the 80 Gb/s target"},
		{Name: "a2a.completion", Metric: "completion", Scope: "a2a", Op: "<=", Threshold: 5000, Value: 3900, Unit: "us", Verdict: results.Pass},
		{Name: "fabric.drops", Metric: "drops", Scope: "fabric", Op: "==", Threshold: 0, Value: 0, Verdict: results.Error, Message: "counter leaf2:drops missing from telemetry"},
		{Name: "leaf-uplinks.symmetry", Metric: "symmetry_outliers", Scope: "leaf-uplinks", Op: "==", Threshold: 0, Value: 1, Verdict: results.Pass},
	}
	r1.Anomalies = fixtureAnomalies()
	r1.Imbalances = []results.Imbalance{
		{Group: "leaf-uplinks:leaf2", Kind: "leaf-uplinks", Members: 8, CV: 0.21, MaxMin: 1.9, Jain: 0.957,
			MaxMember: "leaf2:Ethernet1", MinMember: "leaf2:Ethernet6", Evidence: "ECMP: 3 of 8 uplinks carried 52% of the bytes; no uplink was backlogged"},
	}
	r2 := mkRun("r2", "reps")
	r2.WallS = 11.9
	r2.Jobs[0].AlgBWGbps, r2.Jobs[0].BusBWGbps, r2.Jobs[0].P01PairBW = 91.5, 91.5, 0.88
	r2.KPIs = []results.KPI{
		{Name: "perm.fct_slowdown_p99", Metric: "fct_slowdown_p99", Scope: "perm", Op: "<=", Threshold: 3, Value: 1.2, Verdict: results.Pass},
		{Name: "perm.busbw", Metric: "busbw", Scope: "perm", Op: ">=", Threshold: 80, Value: 91.5, Unit: "Gb/s", Verdict: results.Pass},
	}
	r := &results.Results{
		Schema: results.Schema, Suite: "nightly-fabric", SuiteFile: "suites/nightly.yaml", Backend: "sim",
		Started: start, Finished: start.Add(31 * time.Second), Status: results.Fail,
		Summary: results.Summary{Runs: 2, KPIs: 7, Passed: 5, Failed: 1, Errors: 1, Anomalies: 3},
		Runs:    []results.Run{r1, r2},
	}
	plots := map[string]*results.Plots{
		"r1": fixturePlots("r1", true),
		"r2": fixturePlots("r2", false),
	}
	return r, plots
}

// fixtureFaults are r1's fault events.
func fixtureFaults() []results.Fault {
	return []results.Fault{
		{AtUs: 1000, Description: "degrade nic host7 to 45% at 1ms", ID: "F2", Kind: "degrade", Ports: []string{"host7:eth0", "leaf0:Ethernet15"}, Host: "host7"},
		{AtUs: 2000, Description: "degrade leaf0:Ethernet4 to 50%", ID: "F1", Kind: "degrade", Ports: []string{"leaf0:Ethernet4"}},
		{AtUs: 4000, Description: "flap down leaf2:Ethernet1 at 4ms", ID: "F3", Kind: "flap-down", Ports: []string{"leaf2:Ethernet1", "spine1:Ethernet2"}},
		{AtUs: 4200, Description: "flap up leaf2:Ethernet1 at 4.2ms", ID: "F3", Kind: "flap-up", Ports: []string{"leaf2:Ethernet1", "spine1:Ethernet2"}},
		{AtUs: 4400, Description: "flap down leaf2:Ethernet1 at 4.4ms", ID: "F3", Kind: "flap-down", Ports: []string{"leaf2:Ethernet1", "spine1:Ethernet2"}},
		{AtUs: 4600, Description: "flap up leaf2:Ethernet1 at 4.6ms", ID: "F3", Kind: "flap-up", Ports: []string{"leaf2:Ethernet1", "spine1:Ethernet2"}},
	}
}

// fixtureAnomalies are r1's culprits, ranked.
func fixtureAnomalies() []results.Anomaly {
	var hostVictims []results.Victim
	for _, h := range []int{0, 2, 3, 5, 9, 11, 14, 18, 21, 25, 27, 30} {
		hostVictims = append(hostVictims, results.Victim{Member: fmt.Sprintf("host%d", h), Group: "job:perm", Why: "receives from host7: flow completion 2.1× the job median"})
	}
	return []results.Anomaly{
		{Rank: 1, Kind: results.KindSymmetry, Group: "leaf-uplinks:leaf0", Member: "leaf0:Ethernet4", Cause: results.CauseCapacity, Score: 2.46,
			StartUs: 2100, EndUs: 6000,
			Signals: []results.Signal{
				{Name: "rate_util", Value: 0.5, Baseline: 0.97, Unit: "fraction"},
				{Name: "backlog_util", Value: 0.93, Baseline: 0.04, Unit: "fraction"},
				{Name: "queue_bytes", Value: 412_000, Baseline: 2900, Unit: "B"},
				{Name: "bytes_share", Value: 0.52, Baseline: 1},
			},
			Victims: []results.Victim{
				{Member: "spine4:Ethernet1", Group: "spine-downlinks:spine4", Why: "low bytes (−23%) with an empty queue"},
				{Member: "host3", Group: "job:perm", Why: "flows cross the culprit"},
				{Member: "host12", Group: "job:a2a", Why: "flows cross the culprit"},
			},
			Faults:   []string{"F1"},
			Evidence: "mean 49.7 Gb/s vs group median 96.1 Gb/s (MAD 1.2) from 2.0 ms <after fault F1>",
			Details:  map[string]float64{"mean_gbps": 49.7, "median_gbps": 96.1, "mad": 1.2}},
		{Rank: 2, Kind: results.KindStraggler, Group: "job:perm", Member: "host7", Cause: results.CauseSlowNIC, Score: 1.31,
			StartUs: 1100, EndUs: 6000,
			Signals: []results.Signal{
				{Name: "rate_util", Value: 0.45, Baseline: 0.96, Unit: "fraction"},
				{Name: "bytes_share", Value: 0.47, Baseline: 1},
			},
			Victims:  hostVictims,
			Faults:   []string{"F2"},
			Evidence: "62% of samples in the 40–50% band of line rate (job median 3%)"},
		{Rank: 3, Kind: results.KindSymmetry, Group: "spine-downlinks:spine2", Member: "spine2:Ethernet3", Cause: results.CauseLoss, Score: 0.41,
			StartUs: 4200, EndUs: 4900,
			Signals: []results.Signal{
				{Name: "loss", Value: 0.62, Baseline: 0, Unit: "fraction"},
				{Name: "drops", Value: 1834, Baseline: 0, Unit: "packets"},
			},
			Victims: []results.Victim{
				{Member: "leaf3:Ethernet2", Group: "leaf-uplinks:leaf3", Why: "retransmissions of flows crossing the culprit"},
				{Member: "host30", Group: "job:a2a", Why: "flows cross the culprit"},
			},
			Evidence: "dropped 62% of 2,958 packets with an empty queue from 4.2 to 4.9 ms"},
	}
}

func fixturePlots(run string, faulty bool) *results.Plots {
	rng := rand.New(rand.NewPCG(7, uint64(len(run))))
	p := &results.Plots{Run: run}
	const intervals, dt = 60, 100.0
	times := make([]float64, intervals)
	for i := range times {
		times[i] = dt * float64(i+1)
	}
	faultAt := 2000.0
	if faulty {
		p.Faults = fixtureFaults()
	}
	for leaf := range 4 {
		g := results.GroupSeries{Group: fmt.Sprintf("leaf-uplinks:leaf%d", leaf), Kind: "leaf-uplinks", TimesUs: times}
		for port := range 8 {
			name := fmt.Sprintf("leaf%d:Ethernet%d", leaf, port)
			g.Members = append(g.Members, name)
			row := make([]float64, intervals)
			for i, t := range times {
				v := 94 + 4*rng.Float64()
				if t < 300 {
					v *= t / 300 // ramp up
				}
				if faulty && leaf == 0 && port == 4 && t > faultAt {
					v = 48 + 3*rng.Float64()
				}
				if faulty && leaf == 2 { // ECMP imbalance: uneven, no outlier
					v *= []float64{0.78, 1, 0.96, 0.93, 0.72, 0.74, 0.55, 0.66}[port]
				}
				row[i] = v
			}
			g.Gbps = append(g.Gbps, row)
		}
		if faulty && leaf == 0 {
			g.Anomalous = []string{"leaf0:Ethernet4"}
		}
		p.Groups = append(p.Groups, g)
	}
	edges := make([]float64, 11)
	for i := range edges {
		edges[i] = float64(i) / 10
	}
	for _, job := range []struct {
		name  string
		hosts int
	}{{"perm", 32}, {"a2a", 16}} {
		for h := range job.hosts {
			counts := make([]int, 10)
			straggler := faulty && job.name == "perm" && h == 7
			for range 200 {
				var band int
				switch {
				case straggler:
					band = 4 + rng.IntN(2)*rng.IntN(2)
				case job.name == "a2a":
					band = 6 + rng.IntN(4)
				default:
					band = 8 + rng.IntN(2)
				}
				counts[band]++
			}
			p.NICHists = append(p.NICHists, results.NICHist{Job: job.name, Host: fmt.Sprintf("host%d", h), Edges: edges, Counts: counts, Straggler: straggler})
		}
	}
	for _, job := range []struct {
		name string
		n    int
		base float64
	}{{"perm", 96, 700}, {"a2a", 238, 30}} {
		f := results.FCTSeries{Job: job.name}
		for i := range job.n {
			v := job.base * (1 + 0.05*rng.Float64())
			if job.name == "a2a" {
				v = job.base * math.Exp(4.6*float64(i)/float64(job.n)) // 30 µs to ~3 ms
			}
			if faulty && job.name == "perm" && i%8 == 7 {
				v *= 2
			}
			f.FCTUs = append(f.FCTUs, v)
		}
		p.FCTs = append(p.FCTs, f)
	}
	if faulty {
		panel := "leaf0 uplinks around F1"
		var port, mean []float64
		for _, t := range times {
			v := 95 + 2*rng.Float64()
			if t < 300 {
				v *= t / 300
			}
			mean = append(mean, v)
			if t > faultAt {
				v = 49 + 2*rng.Float64()
			}
			port = append(port, v)
		}
		p.TimeSeries = []results.TimeSeries{
			{Name: "leaf0:Ethernet4", Panel: panel, TimesUs: times, Gbps: port},
			{Name: "leaf0 uplinks (mean of others)", Panel: panel, TimesUs: times, Gbps: mean},
		}
	}
	return p
}

// fixtureSVGs is the number of plots the fixture's report draws: per run,
// 4 heat maps, 2 NIC histograms and 1 FCT CDF, plus r1's fault panel.
const fixtureSVGs = 2*(4+2+1) + 1

// writeFixtureDir saves the fixture as a results directory.
func writeFixtureDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	r, plots := fixture()
	if err := results.Save(dir, r); err != nil {
		t.Fatal(err)
	}
	for _, run := range r.Runs {
		if err := results.SavePlots(filepath.Join(dir, run.Files["plots"]), plots[run.ID]); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
