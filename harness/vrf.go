package harness

import (
	"fmt"

	"github.com/fabricbench/fabricbench/harness/suite"
	"github.com/fabricbench/fabricbench/inventory"
)

// VRFMap is the reachability the VRFs of a run give: VRF 0 is the
// default VRF, VRF i+1 is VRFs[i].
type VRFMap struct {
	Names []string
	Of    []int    // host number -> VRF
	Reach [][]bool // [a][b]: VRF a's table has VRF b's routes
}

// NewVRFMap builds the map for a fabric of nHosts hosts.
func NewVRFMap(nHosts int, vrfs []VRF) *VRFMap {
	m := &VRFMap{Names: []string{suite.DefaultVRF}, Of: make([]int, nHosts)}
	idx := map[string]int{suite.DefaultVRF: 0}
	for i, v := range vrfs {
		m.Names = append(m.Names, v.Name)
		idx[v.Name] = i + 1
		for _, h := range v.Hosts {
			if h >= 0 && h < nHosts {
				m.Of[h] = i + 1
			}
		}
	}
	n := len(m.Names)
	m.Reach = make([][]bool, n)
	for a := range m.Reach {
		m.Reach[a] = make([]bool, n)
		m.Reach[a][a] = true
	}
	for i, v := range vrfs {
		for _, l := range v.Leak {
			if j, ok := idx[l]; ok {
				m.Reach[i+1][j], m.Reach[j][i+1] = true, true
			}
		}
	}
	return m
}

// Reachable reports whether host a reaches host b (and b a).
func (m *VRFMap) Reachable(a, b int) bool { return m.Reach[m.Of[a]][m.Of[b]] }

// VRFOf names host h's VRF.
func (m *VRFMap) VRFOf(h int) string { return m.Names[m.Of[h]] }

// resolveVRFs maps the suite's VRFs onto host numbers.
func resolveVRFs(f *inventory.Fabric, vrfs []suite.VRF) ([]VRF, error) {
	var out []VRF
	for i, v := range vrfs {
		r := VRF{Name: v.Name, Table: v.Table, Leak: append([]string(nil), v.Leak...)}
		for k, h := range v.Hosts {
			n, ok := f.NodeByName(h)
			if !ok || f.Nodes[n].IsSwitch() {
				return nil, fmt.Errorf("features.vrfs[%d].hosts[%d]: no host named %q", i, k, h)
			}
			r.Hosts = append(r.Hosts, hostNumber(f, n))
		}
		out = append(out, r)
	}
	return out, nil
}

// vrfCheck refuses, at plan time, every job with a flow between hosts
// whose VRFs do not reach each other, at the job's hosts and naming the
// first such pair: on any backend that traffic would be unreachable.
func vrfCheck() suite.CheckFunc {
	fabrics := map[string]*inventory.Fabric{}
	return func(s *suite.Suite, errf func(path, format string, args ...any)) {
		if len(s.Features.VRFs) == 0 {
			return
		}
		key := s.Fabric.Spec + "\x00" + s.Fabric.File
		f := fabrics[key]
		if f == nil {
			var err error
			if f, err = s.LoadFabric(); err != nil {
				return // reported when the point is resolved
			}
			fabrics[key] = f
		}
		vrfs, err := resolveVRFs(f, s.Features.VRFs)
		if err != nil {
			return // the suite checker named it
		}
		m := NewVRFMap(f.NumHosts(), vrfs)
		jobs := make([]Job, len(s.Jobs))
		for i := range s.Jobs {
			if jobs[i], err = resolveJob(f, &s.Jobs[i]); err != nil {
				return // reported when the point is resolved
			}
		}
		// The flows the run will have: the same jobs and seed as runPoint.
		w, err := BuildWorkload(f, jobs, s.Seed)
		if err != nil {
			return
		}
		bad := make([]bool, len(jobs))
		for fi, fl := range w.Matrix.Flows {
			ji := w.FlowJob[fi]
			if bad[ji] || m.Reachable(fl.Src, fl.Dst) {
				continue
			}
			bad[ji] = true
			errf(fmt.Sprintf("jobs[%d].hosts", ji),
				"job %s sends from %s (VRF %s) to %s (VRF %s): unreachable, the two VRFs leak no routes to each other; put both hosts in one VRF, add a leak (features.vrfs[].leak) or leave the pair out of the job",
				jobs[ji].Name, f.Host(fl.Src).Name, m.VRFOf(fl.Src), f.Host(fl.Dst).Name, m.VRFOf(fl.Dst))
		}
	}
}
