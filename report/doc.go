// Package report renders a results directory (results.json and the
// per-run plots.json files of package results) for people and for CI:
//
//   - JUnit writes JUnit XML for CI dashboards: one testsuite per run, one
//     testcase per KPI, and a "run" testcase that errors when the run could
//     not complete. A failing KPI's message names the culprit first.
//   - HTML writes one self-contained page (inline CSS and inline SVG plots
//     drawn with gonum/plot, no scripts, nothing fetched) with the suite's
//     status and per run: the KPI table; the ranked list of culprits
//     (anomalies), each with its cause, window, decisive signals, the faults
//     it explains and its victims nested under it, linked to its heat map;
//     the fault correlation table (each injected fault and the anomaly that
//     explains it, unexplained faults and unmatched anomalies called out);
//     the imbalances; the jobs; symmetry-group heat maps with each
//     anomaly's window outlined on its culprit's row, per-NIC bandwidth
//     histograms, FCT CDFs and bandwidth around faults.
//   - Render does both for a directory: dir/junit.xml and dir/report.html.
//     It is what `fabricbench report DIR` runs, and what the harness runs
//     at the end of a suite.
package report
