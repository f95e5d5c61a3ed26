// Package faultbench is the fault-localisation benchmark: it runs many
// simulated suites with injected faults and judges, independently of the
// analysis code, whether each run's anomaly report named exactly the
// faulted members. It is the acceptance instrument for anomaly
// attribution.
//
// # Catalogue
//
// [Catalogue] is the trees catalogue ([TreeCatalogue], issue 11) and the
// worlds catalogue ([WorldsCatalogue], issue 28); [LabCatalogue] adds
// runs on the netns FRR lab. Port and link names are looked up in the
// fabric built by inventory.ParseSpec.
//
// The trees catalogue runs on two lossy fabrics:
//
//   - [LeafSpine]: 4 leaves x 4 spines x 4 hosts per leaf, 100G;
//   - [FatTree]: a 3-tier fat tree of K=6 blocks, 4 pods, 36 hosts; every
//     ToR has 3 uplinks (one per agg of its pod), every agg 3 core links.
//
// Its faulted scenarios (fault classes, see [Classes]) are degraded leaf
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
// The worlds catalogue ([WorldClasses], [Worlds]) covers lossless fabrics
// (features.pfc on LeafSpine and FatTree, NSCC or DCTCP: a NIC at 40%, a
// degraded port, an 8:1 incast beside a permutation plus a fault
// elsewhere; healthy incasts, all-to-all and rings), [Dragonfly] and
// [SlimFly] (a global or local link at 50%, a port at 25%, under UGAL-L
// and source-guided routing; healthy), [MultiPlane] (a plane's leaf
// uplink at 50% or 25%, a host's plane port or a plane's leaf uplink
// down; healthy) and 1 ms and 10 ms telemetry ([LeafSpine10] for 10 ms).
// Each entry runs under the load balancers its routing allows: ECMP, OPS,
// REPS and the Spritz load balancers ([SpritzLBs]: coarse-grained on hash
// ECMP, fine-grained on source-guided routing; UGAL refuses them).
// [Representative] is the subset the default test runs: the first entry
// of each worlds class and of each world's healthy runs, once.
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
// [Markdown] renders the summary: faulted runs by load balancer and by
// fabric (runs, exact, runs with extras, extras, missed, correlation
// mismatches), by fault class for OPS, REPS and Spritz and for ECMP
// (runs, exact, precision: anomalies naming a fault over all anomalies,
// recall: faults named over faults injected, the time to detect of the
// named faults, median and max, and from the fault's injection, extras,
// missed) and healthy runs by load balancer and by world (runs, runs with
// anomalies, false positives, imbalances, informational congestion
// trees).
//
// # Running it
//
//	task bench-anomaly       # the whole catalogue, about 20 minutes on 2 cores
//	task bench-anomaly-lab   # the lab runs (root)
//	# or
//	FABRICBENCH_FAULTBENCH_FULL=1 FABRICBENCH_FAULTBENCH_OUT=out/bench-anomaly.md go test -count=1 -timeout 3h -run TestFaultLocalisation -v ./harness/faultbench/
//
// TestFaultLocalisation runs the trees catalogue and the representative
// subset of the worlds catalogue (FABRICBENCH_FAULTBENCH_FULL=1: the
// whole catalogue; FABRICBENCH_FAULTBENCH_WORLDS: only those worlds;
// FABRICBENCH_FAULTBENCH_SEED_OFFSET=N: every seed plus N) with
// GOMAXPROCS runs at a time, logs the tables and every run that is not
// exact, writes the tables to the file named by
// FABRICBENCH_FAULTBENCH_OUT when set, and fails unless every run
// completed, each load balancer reaches its [MinExact] share of exact
// faulted runs of the trees catalogue with no anomaly naming a member no
// fault hit, every fault class reaches [MinClassExact] with the load
// balancers other than ECMP (ECMP is recorded separately), and at most
// [MaxHealthyWithAnomalies] healthy runs per load balancer report an
// anomaly. FABRICBENCH_FAULTBENCH_KEEP=1 keeps every run's suite and
// results directory (the path is logged). TestFaultLocalisationLab
// (FABRICBENCH_FAULTBENCH_LAB=1, root) runs [LabCatalogue] on the netns
// backend.
package faultbench
