// Package report renders a results directory (results.json and the
// per-run plots.json files of package results) for people and for CI:
//
//   - JUnit writes JUnit XML for CI dashboards: one testsuite per run, one
//     testcase per KPI, and a "run" testcase that errors when the run could
//     not complete.
//   - HTML writes one self-contained page (inline CSS and inline SVG plots
//     drawn with gonum/plot, no scripts, nothing fetched) with the suite's
//     status, per-run KPI, anomaly, job and fault tables, symmetry-group
//     heat maps, per-NIC bandwidth histograms, FCT CDFs and bandwidth
//     around faults.
//   - Render does both for a directory: dir/junit.xml and dir/report.html.
//     It is what `fabricbench report DIR` runs, and what the harness runs
//     at the end of a suite.
package report
