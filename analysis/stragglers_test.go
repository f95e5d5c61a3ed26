package analysis

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
)

// allToAll returns an all-to-all job over every host, all flows running
// from startPs to endPs.
func allToAll(f *inventory.Fabric, name string, startPs, endPs int64) JobInput {
	j := JobInput{Name: name, Workload: AllToAll, SizeBytes: 1 << 20, Repetitions: 1}
	for h := 0; h < f.NumHosts(); h++ {
		j.Hosts = append(j.Hosts, h)
	}
	for s := range j.Hosts {
		for d := range j.Hosts {
			if s != d {
				j.Flows = append(j.Flows, flowRec(len(j.Flows), s, d, startPs, endPs-startPs))
			}
		}
	}
	return j
}

func flowRec(id, src, dst int, start, fct int64) FlowRecord {
	return FlowRecord{ID: id, Src: src, Dst: dst, Size: 1 << 20, Start: start, FCT: fct}
}

// nicRates: healthy hosts alternate between ~line rate and idle, with a
// ramp (60%) every 5th interval; special hosts follow their own function.
func nicRates(f *inventory.Fabric, special map[string]func(i int) float64) rateFunc {
	return func(p, i int) float64 {
		if !isHostPort(f, p) {
			return 50
		}
		name := nodeName(f, p)
		if fn, ok := special[name]; ok {
			return fn(i)
		}
		h := f.Ports[p].Node
		switch {
		case i%5 == 0:
			return 60
		case (i+h)%2 == 0:
			return 98
		}
		return 1
	}
}

// (d) A host stuck at half line rate among bimodal peers is the straggler.
func TestStragglerAmongBimodalPeers(t *testing.T) {
	f := testFabric(t)
	rate := nicRates(f, map[string]func(int) float64{
		"host7":  func(int) float64 { return 50 },
		"host11": func(i int) float64 { return map[bool]float64{true: 45, false: 99}[i%5 < 2] }, // 40% middle
	})
	job := allToAll(f, "a2a", 0, 40*testStep*1000)
	out := analyze(t, Input{Fabric: f, Samples: synth(f, 40, rate), EpochNs: testEpoch, Jobs: []JobInput{job}})
	if got := anomaliesOf(out, results.KindStraggler); !reflect.DeepEqual(got, []string{"job:a2a host7"}) {
		t.Fatalf("stragglers %v, want host7", got)
	}
	var a results.Anomaly
	for _, x := range out.Anomalies {
		if x.Kind == results.KindStraggler {
			a = x
		}
	}
	if a.Score != 1 || a.Details["samples"] != 40 || a.Details["median_middle_fraction"] != 0.2 || a.Details["mean_gbps"] != 50 {
		t.Errorf("anomaly %+v", a)
	}
	if want := "host7 spent 100% of 40 samples between 10% and 80% of line rate (median participant 20%); mean 50.0 Gb/s"; a.Evidence != want {
		t.Errorf("evidence %q\nwant     %q", a.Evidence, want)
	}
	if out.Metrics[MetricStragglers] != 1 {
		t.Errorf("metric %v", out.Metrics[MetricStragglers])
	}
	if len(out.Plots.NICHists) != 16 {
		t.Fatalf("%d histograms", len(out.Plots.NICHists))
	}
	for _, hst := range out.Plots.NICHists {
		total := 0
		for _, c := range hst.Counts {
			total += c
		}
		if total != 40 || len(hst.Edges) != 11 || hst.Edges[10] != 1 || hst.Straggler != (hst.Host == "host7") {
			t.Errorf("hist %+v", hst)
		}
		switch hst.Host {
		case "host7":
			if hst.Counts[5] != 40 {
				t.Errorf("host7 hist %v", hst.Counts)
			}
		case "host0":
			if !reflect.DeepEqual(hst.Counts, []int{16, 0, 0, 0, 0, 0, 8, 0, 0, 16}) {
				t.Errorf("host0 hist %v", hst.Counts)
			}
		}
	}
}

func TestNoStragglerWhenEveryoneIsSlow(t *testing.T) {
	f := testFabric(t)
	rate := func(p, i int) float64 { return 50 }
	job := allToAll(f, "a2a", 0, 40*testStep*1000)
	out := analyze(t, Input{Fabric: f, Samples: synth(f, 40, rate), EpochNs: testEpoch, Jobs: []JobInput{job}})
	if got := anomaliesOf(out, results.KindStraggler); len(got) != 0 {
		t.Fatalf("stragglers %v", got)
	}
}

// Only the intervals inside the job's window count: host7 is slow before
// the job starts, then healthy.
func TestStragglerWindow(t *testing.T) {
	f := testFabric(t)
	slowUntil := func(k int) map[string]func(int) float64 {
		return map[string]func(int) float64{"host7": func(i int) float64 {
			if i <= k {
				return 50
			}
			return map[bool]float64{true: 98, false: 1}[i%2 == 0]
		}}
	}
	job := allToAll(f, "a2a", 10*testStep*1000, 40*testStep*1000) // intervals 11..40
	out := analyze(t, Input{Fabric: f, Samples: synth(f, 40, nicRates(f, slowUntil(10))), EpochNs: testEpoch, Jobs: []JobInput{job}})
	if got := anomaliesOf(out, results.KindStraggler); len(got) != 0 {
		t.Fatalf("stragglers %v", got)
	}
	for _, h := range out.Plots.NICHists {
		if h.Host == "host7" && (h.Counts[5] != 0 || h.Counts[0]+h.Counts[9] != 30) {
			t.Errorf("host7 hist %v", h.Counts)
		}
	}
	// Slow for the first 25 intervals: 15 of its 30 in-window samples.
	out = analyze(t, Input{Fabric: f, Samples: synth(f, 40, nicRates(f, slowUntil(25))), EpochNs: testEpoch, Jobs: []JobInput{job}})
	if got := anomaliesOf(out, results.KindStraggler); !reflect.DeepEqual(got, []string{"job:a2a host7"}) {
		t.Fatalf("stragglers %v", got)
	}
}

// Unfinished flows extend the window to the last sample; incast jobs and
// jobs with fewer than 3 participants are not checked.
func TestStragglerJobSelection(t *testing.T) {
	f := testFabric(t)
	rate := nicRates(f, map[string]func(int) float64{"host7": func(int) float64 { return 50 }})
	unfinished := allToAll(f, "a2a", 0, 10*testStep*1000)
	unfinished.Flows[3].FCT = -1
	incast := JobInput{Name: "inc", Workload: Incast, Hosts: []int{0, 5, 7, 9}, SizeBytes: 1 << 20}
	pair := JobInput{Name: "pair", Workload: Permutation, Hosts: []int{7, 8}, SizeBytes: 1 << 20}
	for i, h := range []int{5, 7, 9} {
		incast.Flows = append(incast.Flows, FlowRecord{ID: i, Src: h, Dst: 0, Size: 1 << 20, Start: 0, FCT: 4e9})
	}
	pair.Flows = []FlowRecord{{Src: 7, Dst: 8, Size: 1 << 20, Start: 0, FCT: 4e9}, {ID: 1, Src: 8, Dst: 7, Size: 1 << 20, Start: 0, FCT: 4e9}}
	out := analyze(t, Input{Fabric: f, Samples: synth(f, 40, rate), EpochNs: testEpoch, Jobs: []JobInput{unfinished, incast, pair}})
	if got := anomaliesOf(out, results.KindStraggler); !reflect.DeepEqual(got, []string{"job:a2a host7"}) {
		t.Fatalf("stragglers %v", got)
	}
	for _, h := range out.Plots.NICHists {
		if h.Job != "a2a" {
			t.Errorf("histogram for job %s", h.Job)
		}
		if h.Host == "host7" && h.Counts[5] != 40 {
			t.Errorf("unfinished job window: host7 hist %v", h.Counts)
		}
	}
	if !strings.HasPrefix(out.Anomalies[0].Evidence, "host7 spent 100% of 40 samples") {
		t.Errorf("evidence %q", out.Anomalies[0].Evidence)
	}
}

// A host that is low on its rail and a straggler is named once, as a
// straggler (rails are judged by the straggler test).
func TestRailOutlierIsNamedOnceAsStraggler(t *testing.T) {
	f := testFabric(t)
	rate := func(p, i int) float64 {
		if !isHostPort(f, p) {
			return 90
		}
		if nodeName(f, p) == "host6" {
			return 30
		}
		return map[bool]float64{true: 98, false: 90}[i%2 == 0]
	}
	job := allToAll(f, "a2a", 0, 20*testStep*1000)
	out := analyze(t, Input{Fabric: f, Samples: synth(f, 20, rate), EpochNs: testEpoch, Jobs: []JobInput{job}})
	var got []string
	for _, a := range out.Anomalies {
		got = append(got, a.Kind+" "+a.Group+" "+a.Member)
	}
	if !reflect.DeepEqual(got, []string{"straggler job:a2a host6"}) {
		t.Fatalf("anomalies %v", got)
	}
}

// Too few samples inside the window (a job shorter than 3 sample intervals)
// judge no one.
func TestStragglerNeedsSamples(t *testing.T) {
	f := testFabric(t)
	rate := nicRates(f, map[string]func(int) float64{"host7": func(int) float64 { return 50 }})
	for _, c := range []struct {
		intervals int64
		want      int
	}{{2, 0}, {3, 1}} {
		job := allToAll(f, "a2a", 10*testStep*1000, (10+c.intervals)*testStep*1000)
		out := analyze(t, Input{Fabric: f, Samples: synth(f, 40, rate), EpochNs: testEpoch, Jobs: []JobInput{job}})
		if got := anomaliesOf(out, results.KindStraggler); len(got) != c.want {
			t.Errorf("%d intervals: stragglers %v", c.intervals, got)
		}
	}
}
