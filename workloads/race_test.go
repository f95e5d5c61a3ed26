//go:build race

package workloads

// raceSlowdown scales timing limits in tests: the race detector makes code
// several times slower.
const raceSlowdown = 10
