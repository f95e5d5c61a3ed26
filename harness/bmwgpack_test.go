package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/kpis"
	"github.com/fabricbench/fabricbench/report"
	"github.com/fabricbench/fabricbench/results"
)

// TestBMWGPack runs the IETF BMWG AI-fabric pack (examples/suites/bmwg)
// on the simulator, writes every suite's BMWG report, and checks what
// each test measured against what the methodology expects of a healthy
// fabric and of the hazards the tests provoke: figures that would be
// wrong if a stage, a KPI or the search were broken.
func TestBMWGPack(t *testing.T) {
	files, err := filepath.Glob("../examples/suites/bmwg/[0-9]*.yaml")
	if err != nil || len(files) != 8 {
		t.Fatalf("the pack: %v %v", files, err)
	}
	start := time.Now()
	res := map[string]*results.Results{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		out := t.TempDir()
		par := 2
		if name == "7-soak" {
			par = 1 // its leak check samples the process after each run
		}
		r, err := harness.Run(context.Background(), harness.Options{SuiteFile: f, Out: out, Parallel: par})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.Status != results.Pass {
			for _, run := range r.Runs {
				for _, k := range run.KPIs {
					if k.Verdict != results.Pass && run.Search != results.SearchAbove {
						t.Errorf("%s %s: KPI %s %s: %s", name, run.ID, k.Name, k.Verdict, k.Message)
					}
				}
			}
			t.Errorf("%s: status %s", name, r.Status)
		}
		md, _, err := report.RenderBMWG(out)
		if err != nil {
			t.Fatalf("%s: report: %v", name, err)
		}
		b, _ := os.ReadFile(md)
		for _, sec := range []string{"## 1. DUT identification", "## 2. Test topology", "## 3. Test configuration", "## 4. Host configuration",
			"## 5. Test results", "## 6. Anomalies", "## 7. Repeatability statement"} {
			if !strings.Contains(string(b), sec) {
				t.Errorf("%s: bmwg.md lacks %q", name, sec)
			}
		}
		res[name] = r
	}
	t.Logf("the pack ran in %s", time.Since(start).Round(time.Second))

	val := func(suite, run, metric, scope string) float64 {
		t.Helper()
		for i := range res[suite].Runs {
			r := &res[suite].Runs[i]
			if r.ID == run {
				v, err := kpis.Stored(metric, scope, r)
				if err != nil {
					t.Fatalf("%s %s: %s: %v", suite, run, metric, err)
				}
				return v
			}
		}
		t.Fatalf("%s: no run %s", suite, run)
		return 0
	}
	test := func(suite, name string) results.Test {
		for _, tt := range res[suite].Tests {
			if tt.Name == name {
				return tt
			}
		}
		t.Fatalf("%s: no test %s", suite, name)
		return results.Test{}
	}
	na := func(suite, run string) {
		t.Helper()
		for _, r := range res[suite].Runs {
			if r.ID == run && r.Status == results.NotApplicable && strings.Contains(r.Error, "cannot do") {
				return
			}
		}
		t.Errorf("%s %s: want not applicable with the reason", suite, run)
	}

	// 1: the zero-loss search settles strictly inside the swept loads;
	// a loaded fabric raises the probe's tail latency.
	if f := test("1-rdma-transport", "baseline-throughput").Found; f == "" || f == "10%" || f == "100%" {
		t.Errorf("baseline throughput found %q: want a limit inside 10%%..100%%", f)
	}
	if f := test("1-rdma-transport", "burst-absorption").Found; f == "" || f == "256KiB" {
		t.Errorf("burst absorption found %q", f)
	}
	unloaded, loaded := val("1-rdma-transport", "latency,rate=10,seed=1", "latency_p99_us", "probe"), val("1-rdma-transport", "latency,rate=80,seed=1", "latency_p99_us", "probe")
	if !(loaded > 1.5*unloaded) {
		t.Errorf("probe P99 %.2f us loaded, %.2f us unloaded: want the load to show", loaded, unloaded)
	}
	// 1A: spraying balances the uplinks and reorders; ECMP does not
	// reorder; UEC-only tests are not applicable.
	if e, r := val("1a-uet-transport", "spray-efficacy,lb=ecmp", "min_group_jain", ""), val("1a-uet-transport", "spray-efficacy,lb=reps", "min_group_jain", ""); !(r > e && r > 0.95) {
		t.Errorf("JFI ecmp %.3f, reps %.3f", e, r)
	}
	if e, r := val("1a-uet-transport", "spray-efficacy,lb=ecmp", "ooo_fraction", "perm"), val("1a-uet-transport", "spray-efficacy,lb=reps", "ooo_fraction", "perm"); e != 0 || r <= 0 {
		t.Errorf("out-of-order fraction ecmp %v, reps %v", e, r)
	}
	na("1a-uet-transport", "cbfc-vs-pfc")
	na("1a-uet-transport", "llr")
	na("1a-uet-transport", "pdc-scalability")
	// 2: the marker's thresholds are found within 15%; pauses grow with
	// the incast fan-in; the cyclic traffic deadlocks without the
	// watchdog and finishes with it.
	if d := val("2-congestion", "ecn-accuracy", "ecn_kmin_deviation_pct", ""); d < -15 || d > 15 {
		t.Errorf("ECN kmin deviation %.1f%%", d)
	}
	if p16, p64 := val("2-congestion", "pfc-incast,senders=16", "pfc_paused_us", ""), val("2-congestion", "pfc-incast,senders=64", "pfc_paused_us", ""); !(p64 > 4*p16 && p16 > 0) {
		t.Errorf("PFC paused time N=16 %.1f us, N=64 %.1f us", p16, p64)
	}
	if d := val("2-congestion", "pfc-deadlock", "pfc_deadlock", ""); d != 1 {
		t.Errorf("cyclic traffic without a watchdog: deadlock %v", d)
	}
	if ev, d := val("2-congestion", "pfc-watchdog", "pfc_watchdog_events", ""), val("2-congestion", "pfc-watchdog", "pfc_deadlock", ""); ev < 1 || d != 0 {
		t.Errorf("with the watchdog: %v events, deadlock %v", ev, d)
	}
	// 3: more flows per host pair spread ECMP; address-only hashing
	// polarizes; flowlets and adaptive routing beat hashing.
	if m1, m32 := val("3-load-balancing", "ecmp-entropy,qps=1", "max_group_mmr", ""), val("3-load-balancing", "ecmp-entropy,qps=32", "max_group_mmr", ""); !(m32 < m1 && m32 < 1.5) {
		t.Errorf("MMR 1 QP %.2f, 32 QPs %.2f", m1, m32)
	}
	if a, f := val("3-load-balancing", "ecmp-polarization,hash=src-ip_dst-ip", "max_group_mmr", ""),
		val("3-load-balancing", "ecmp-polarization,hash=src-ip_dst-ip_src-port_dst-port_protocol", "max_group_mmr", ""); !(a > f) {
		t.Errorf("MMR address-only %.2f, 5-tuple %.2f", a, f)
	}
	if h, fl, ar := val("3-load-balancing", "flowlet-dlb,mode=hash", "jct_us", "perm"), val("3-load-balancing", "flowlet-dlb,mode=flowlet", "jct_us", "perm"),
		val("3-load-balancing", "flowlet-dlb,mode=adaptive", "jct_us", "perm"); !(fl < h && ar < fl) {
		t.Errorf("JCT hash %.0f, flowlet %.0f, adaptive %.0f us", h, fl, ar)
	}
	// 4: bus bandwidth grows with the message size towards line rate.
	if s, l := val("4-collectives", "allreduce,size=256KiB", "busbw_gbps", "ar"), val("4-collectives", "allreduce,size=16MiB", "busbw_gbps", "ar"); !(l > s && l > 60 && l <= 100) {
		t.Errorf("all-reduce bus bandwidth 256 KiB %.1f, 16 MiB %.1f Gb/s", s, l)
	}
	if g := val("4-collectives", "allgather,size=16MiB", "busbw_gbps", "ag"); g < 60 || g > 100 {
		t.Errorf("all-gather bus bandwidth %.1f Gb/s", g)
	}
	// 5: JCT above the roofline; the other tenant slows ECMP more than
	// spraying; MLPerf needs GPUs.
	if r := val("5-jct", "synthetic-jct,lb=reps,size=4MiB", "jct_ratio", "train"); r < 1 || r > 1.5 {
		t.Errorf("JCT ratio %.3f", r)
	}
	if e, r := val("5-jct", "multi-tenant,lb=ecmp", "interference_factor", "shared"), val("5-jct", "multi-tenant,lb=reps", "interference_factor", "shared"); !(e > r && r >= 1) {
		t.Errorf("interference ecmp %.3f, reps %.3f", e, r)
	}
	na("5-jct", "mlperf-jct")
	// 6: the failure loses packets for a while, not forever; the JCT
	// ratio grows with the accelerator count.
	if d := val("6-convergence", "link-failure,lb=ecmp", "loss_duration_us", ""); d <= 0 || d > 500 {
		t.Errorf("loss duration %.1f us", d)
	}
	if a, b := val("6-convergence", "scale,hosts=4", "jct_ratio", "ar"), val("6-convergence", "scale,hosts=16", "jct_ratio", "ar"); !(b > a) {
		t.Errorf("JCT ratio 4 hosts %.3f, 16 hosts %.3f", a, b)
	}
	// 7: a steady fabric repeats its iterations.
	if sd := val("7-soak", "soak", "jct_ratio_sd", "train"); sd <= 0 || sd > 0.05 {
		t.Errorf("soak JCT-ratio SD %v", sd)
	}
	if lt := test("7-soak", "resource-leak").Leak; lt == nil || lt.Runs != 6 || lt.Verdict != results.Pass {
		t.Errorf("resource leak check: %+v", lt)
	}
}
