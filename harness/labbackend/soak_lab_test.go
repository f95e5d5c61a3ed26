package labbackend

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/results"
)

// The soak (issue 34; the IETF draft's resource-leak test, category 7):
// a lab suite runs N times back to back in this process, on the netns
// lab, and after every run the test records what the harness holds (open
// file descriptors, goroutines, live heap, child processes) and what the
// run's agents held at their peak (file descriptors, resident memory);
// every run must leave nothing of its lab. At the end a least-squares
// line through the runs after the first (which warms caches up) must not
// rise by more than a small allowance over the whole soak: a leak of one
// descriptor, goroutine or process per run, or of a few hundred KiB of
// heap per run, fails it.
//
//	FABRICBENCH_SOAK_N      runs (default 5; task soak: 50)
//	FABRICBENCH_SOAK_SUITE  the suite (default a small 8-node suite;
//	                        task soak: examples/suites/lab-smoke.yaml)
//	FABRICBENCH_SOAK_OUT    a CSV of the per-run figures (optional)
//
// The labs' management subnet is 198.19.225.0/24.

// soakRuns is the test command's soak: 5 runs of chaosSuite with a 1 MiB
// large job (about 20 s a run, most of it bring-up).
const soakRuns = 5

// soakAllowance is how much each figure may rise over the whole soak
// (the fitted line's rise from the second run to the last).
var soakAllowance = map[string]float64{
	"fds":        2,
	"goroutines": 4,
	"children":   0.5,
	"heap_mib":   4,
	"agent_fds":  2,
	"agent_mib":  4,
}

var soakFigures = []string{"fds", "goroutines", "children", "heap_mib", "rss_mib", "agent_fds", "agent_mib", "netns", "seconds"}

func TestSoak(t *testing.T) {
	labtest.Require(t)
	if testing.Short() {
		t.Skip("the soak is skipped in -short mode")
	}
	n := soakRuns
	if s := os.Getenv("FABRICBENCH_SOAK_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 3 {
			t.Fatalf("FABRICBENCH_SOAK_N=%q: want a number of runs, at least 3", s)
		}
		n = v
	}
	suite := os.Getenv("FABRICBENCH_SOAK_SUITE")
	if suite == "" {
		suite = writeChaosSuite(t, "soak", "1MiB")
	}
	prev := labMgmtSubnet
	labMgmtSubnet = func(string) netip.Prefix { return netip.MustParsePrefix("198.19.225.0/24") }
	t.Cleanup(func() { labMgmtSubnet = prev })
	bin := labtest.Fabricbench(t)
	root := t.TempDir()

	rows := make([]map[string]float64, 0, n)
	// The CSV gets a line per run as it ends: a soak stopped early keeps
	// its figures.
	var csv *os.File
	if p := os.Getenv("FABRICBENCH_SOAK_OUT"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		csv = f
		fmt.Fprintf(csv, "run,%s\n", strings.Join(soakFigures, ","))
	}
	for i := 0; i < n; i++ {
		out := filepath.Join(t.TempDir(), "out")
		var peak agentPeak
		stop := make(chan struct{})
		log := &triggerLog{what: "routing watch: ", fn: func(s string) { peak.watch(labOf(s), stop) }}
		ctx, cancel := context.WithTimeout(context.Background(), chaosRunTimeout)
		start := time.Now()
		res, err := harness.Run(ctx, harness.Options{SuiteFile: suite, Out: out, Backend: Name, LabStateRoot: root,
			Log: log, Progress: log, AgentBinary: bin})
		secs := time.Since(start).Seconds()
		cancel()
		close(stop)
		lab := labOf(log.String())
		if err != nil || res == nil || res.Status == results.Error {
			t.Errorf("run %d: %v:\n%s", i+1, err, log.String())
		}
		if res != nil {
			for _, r := range res.Runs {
				for _, k := range r.KPIs {
					if k.Verdict != results.Pass {
						t.Logf("run %d: KPI %s %s: %s", i+1, k.Name, k.Verdict, k.Message)
					}
				}
			}
		}
		checkTornDown(t, out)
		destroyLeft(t, root, lab)
		if t.Failed() {
			t.Fatalf("run %d failed; stopping the soak", i+1)
		}
		os.RemoveAll(out)
		row := harnessFigures()
		fds, mib := peak.get()
		row["agent_fds"], row["agent_mib"], row["seconds"] = float64(fds), mib, secs
		row["netns"] = float64(len(labtest.NetnsByName("")))
		rows = append(rows, row)
		vals := make([]string, len(soakFigures))
		for j, f := range soakFigures {
			vals[j] = strconv.FormatFloat(row[f], 'f', -1, 64)
			if f == "heap_mib" || f == "rss_mib" || f == "agent_mib" || f == "seconds" {
				vals[j] = strconv.FormatFloat(row[f], 'f', 2, 64)
			}
		}
		if csv != nil {
			if _, err := fmt.Fprintf(csv, "%d,%s\n", i+1, strings.Join(vals, ",")); err != nil {
				t.Error(err)
			}
		}
		t.Logf("run %d/%d (%s, %.1f s): harness %v fds, %v goroutines, %v children, heap %.2f MiB, RSS %.1f MiB; agents' peak %d fds, %.1f MiB; %v namespaces on the host",
			i+1, n, res.Status, secs, row["fds"], row["goroutines"], row["children"], row["heap_mib"], row["rss_mib"], fds, mib, row["netns"])
	}
	for _, f := range soakFigures {
		allow, judged := soakAllowance[f]
		ys := make([]float64, 0, n-1)
		for _, r := range rows[1:] {
			ys = append(ys, r[f])
		}
		slope := slopeOf(ys)
		rise := slope * float64(len(ys)-1)
		t.Logf("%-10s slope %+.4f per run, rise %+.3f over runs 2-%d (first %.2f, last %.2f)", f, slope, rise, n, rows[0][f], rows[n-1][f])
		if judged && rise > allow {
			t.Errorf("%s grows: %+.4f per run, %+.3f over the soak (allowed %v): %v", f, slope, rise, allow, ys)
		}
	}
	if rows[n-1]["children"] != 0 {
		t.Errorf("the harness has %v child processes left after the last run", rows[n-1]["children"])
	}
}

// harnessFigures are this process's open descriptors, goroutines (once
// they settled), live heap after a collection, resident memory and
// child processes.
func harnessFigures() map[string]float64 {
	base := runtime.NumGoroutine()
	for i := 0; i < 20; i++ { // goroutines of the run may still be ending
		time.Sleep(100 * time.Millisecond)
		g := runtime.NumGoroutine()
		if g >= base {
			break
		}
		base = g
	}
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fds, _ := os.ReadDir("/proc/self/fd")
	return map[string]float64{
		"fds":        float64(len(fds)),
		"goroutines": float64(runtime.NumGoroutine()),
		"heap_mib":   float64(ms.HeapAlloc) / (1 << 20),
		"rss_mib":    float64(statusKB(os.Getpid(), "VmRSS")) / 1024,
		"children":   float64(children(os.Getpid())),
	}
}

// statusKB is a /proc/PID/status field in kB (0 when unreadable).
func statusKB(pid int, field string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return kb
		}
	}
	return 0
}

// children counts the live (not zombie) processes whose parent is pid.
func children(pid int) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(pid) {
			n++
		}
	}
	return n
}

// agentPeak is the most descriptors and resident memory any agent of a
// run held, sampled every 100 ms while the jobs run.
type agentPeak struct {
	mu  sync.Mutex
	fds int
	kb  int
}

func (p *agentPeak) watch(lab string, stop <-chan struct{}) {
	for {
		for _, pr := range labtest.Procs(" agent --config") {
			ns := labtest.NetnsByName("clab-" + lab + "-")
			if ns[pr.Netns] == "" {
				continue
			}
			pid, _ := strconv.Atoi(pr.PID)
			fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
			kb := statusKB(pid, "VmRSS")
			p.mu.Lock()
			if err == nil && len(fds) > p.fds {
				p.fds = len(fds)
			}
			if kb > p.kb {
				p.kb = kb
			}
			p.mu.Unlock()
		}
		select {
		case <-stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (p *agentPeak) get() (int, float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fds, float64(p.kb) / 1024
}

// slopeOf is the least-squares slope of ys over 0, 1, 2, ...
func slopeOf(ys []float64) float64 {
	n := float64(len(ys))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i, y := range ys {
		x := float64(i)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}
