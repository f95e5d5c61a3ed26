package runspec

import (
	"github.com/fabricbench/fabricbench/harness/suite"
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
