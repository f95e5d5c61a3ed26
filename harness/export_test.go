package harness

// RenderReports lets tests make the reports fail to write.
var RenderReports = &renderReports

// NoPFC is noPFC: why a backend's pause trees are not analysed.
var NoPFC = noPFC
