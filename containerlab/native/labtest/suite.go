package labtest

// SuiteBody is the middle of the lab tests' suite files, from features to
// telemetry: ECMP on the 5-tuple, ECN and trimming off (an FRR lab does
// neither), then the extra lines under features (each "  key: value\n"),
// NSCC over the load balancer lb with 8192-byte packets, and telemetry
// every 5 ms. A test writes its name, seed and fabric before it and its
// jobs, faults and KPIs after it.
func SuiteBody(lb, features string) string {
	return "features:\n" +
		"  ecmp: {hash: [src-ip, dst-ip, protocol, src-port, dst-port]}\n" +
		"  ecn: {enabled: false}\n" +
		"  trimming: {enabled: false}\n" +
		features +
		"transport: {cc: nscc, lb: " + lb + ", mtu: 8192}\n" +
		"telemetry: {interval: 5ms}\n"
}
