package harness

// RenderReports lets tests make the reports fail to write.
var RenderReports = &renderReports
