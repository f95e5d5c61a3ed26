package harness

import (
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/inventory"
)

// The run's types live in package runspec; these names keep the backends'
// and tests' spelling (harness.Point, harness.Features, ...).
type (
	// Point is a planned run (runspec.RunSpec).
	Point          = runspec.RunSpec
	Features       = runspec.Features
	Transport      = runspec.Transport
	Fault          = runspec.Fault
	SRv6Path       = runspec.SRv6Path
	VRF            = runspec.VRF
	ControllerSpec = runspec.ControllerSpec
	Job            = runspec.Job
	Workload       = runspec.Workload
)

// Workloads and agent launchers (runspec's).
const (
	Permutation   = runspec.Permutation
	Incast        = runspec.Incast
	AllToAll      = runspec.AllToAll
	AllReduce     = runspec.AllReduce
	AllGather     = runspec.AllGather
	ReduceScatter = runspec.ReduceScatter
	GroupShift    = runspec.GroupShift
	LauncherSSH   = runspec.LauncherSSH
	LauncherSrun  = runspec.LauncherSrun
)

// BuildWorkload turns jobs into flows (runspec.BuildWorkload).
func BuildWorkload(f *inventory.Fabric, jobs []Job, seed uint64) (*Workload, error) {
	return runspec.BuildWorkload(f, jobs, seed)
}

// Plural is "1 one" or "n many" (runspec.Plural).
func Plural(n int, one, many string) string { return runspec.Plural(n, one, many) }

// VRFMap is the reachability of a run's VRFs (runspec.VRFMap).
type VRFMap = runspec.VRFMap

// NewVRFMap builds the map for a fabric of nHosts hosts (runspec.NewVRFMap).
func NewVRFMap(nHosts int, vrfs []VRF) *VRFMap { return runspec.NewVRFMap(nHosts, vrfs) }
