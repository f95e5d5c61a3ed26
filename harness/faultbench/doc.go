// Package faultbench is the fault-localisation benchmark: it runs many
// simulated suites with injected faults and judges, independently of the
// analysis code, whether each run's anomaly report named exactly the
// faulted members. It is the acceptance instrument for anomaly
// attribution.
//
// # Catalogue
//
// [Catalogue] builds every scenario from two fabrics, whose port and link
// names it looks up in the fabric built by inventory.ParseSpec:
//
//   - [LeafSpine]: 4 leaves x 4 spines x 4 hosts per leaf, 100G;
//   - [FatTree]: a 3-tier fat tree of K=6 blocks, 4 pods, 36 hosts; every
//     ToR has 3 uplinks (one per agg of its pod), every agg 3 core links.
//
// The faulted scenarios (fault classes, see [Classes]) are degraded leaf
// or ToR uplink ports (to 50% and 25%), degraded spine or agg ports
// towards a leaf or ToR, degraded agg-core links and ports (3-tier),
// slow host NICs (50%) under all-to-all and ring all-reduce, two degraded
// ports on different switches at once, links down for good at 200us,
// links down from 200us to 500us (three telemetry intervals), and links
// flapping three times with periods of 100us and 200us. Workloads are a
// permutation (8 MiB, or 4 MiB), an all-to-all (512 KiB) and a ring
// all-reduce (4 MiB) over every host, the ring striped so that neighbours
// sit under different leaves (pods) and every hop loads the fabric
// ([StripedRing]); faults start at 100us or 200us and the jobs last
// several 100us telemetry intervals beyond. Every faulted
// scenario runs under ECMP, OPS and REPS, with the seed rotating through
// 1, 2 and 3. Healthy runs are each workload on each fabric under each
// load balancer with seeds [HealthySeeds].
//
// Every scenario is one suite file ([Scenario.SuiteYAML]: telemetry every
// 100us, ECMP reconvergence 1ms after a link changes state, at most 20ms
// simulated, no KPIs) run by harness.Run on the simulator in a directory
// of its own ([Run], [RunAll]).
//
// # Evaluation
//
// [ExpectedCulprits] derives from the fabric alone what names a fault: a
// port fault dev:port is named by that port or its link ("A-B" or "B-A");
// a link fault by either of its two ports or the link; a NIC fault by the
// host, its NIC port, the leaf port facing it or the link. An anomaly
// names its Member, and its Link when set. It is correct when it names a
// culprit of some fault of the run, extra otherwise (every anomaly of a
// healthy run is extra). A run is exact when every fault is named by a
// correct anomaly and there are no extras; a fault no anomaly names is
// missed. Extras on a node at either end of a faulted link are flagged
// "near fault" (mostly victims of the fault). Where the report carries its
// own fault correlation (Run.FaultMatches), it is compared with this
// verdict: a named fault should point at one of the anomalies that name
// it, a missed one at none; disagreements are counted as "corr mismatch"
// and do not change the verdict.
//
// [Markdown] renders the summary: faulted runs by load balancer, by fault
// class and by fabric (runs, exact, runs with extras, extras, missed,
// correlation mismatches) and healthy runs by load balancer (runs, runs
// with anomalies, anomalies, imbalances).
//
// # Running it
//
//	task bench-anomaly
//	# or
//	FABRICBENCH_FAULTBENCH_OUT=out/bench-anomaly.md go test -count=1 -run TestFaultLocalisation -v ./harness/faultbench/
//
// TestFaultLocalisation runs the whole catalogue with GOMAXPROCS runs at
// a time, logs the tables and every run that is not exact, writes the
// tables to the file named by FABRICBENCH_FAULTBENCH_OUT when set, and
// fails unless every run completed, each load balancer reaches its
// [MinExact] share of exact faulted runs (a regression guard; the goal is
// [GoalExact]), no anomaly names a member no fault hit, and at most
// [MaxHealthyWithAnomalies] healthy runs per load balancer report an
// anomaly. FABRICBENCH_FAULTBENCH_KEEP=1 keeps
// every run's suite and results directory (the path is logged).
package faultbench
