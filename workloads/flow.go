package workloads

import "fmt"

// Flow is one message from Src to Dst (host numbers).
type Flow struct {
	ID   int   // unique within the matrix
	Src  int   // host number
	Dst  int   // host number
	Size int64 // payload bytes
	// Start is the start time in picoseconds: absolute, or, when After >= 0,
	// the delay after flow After completes.
	Start int64
	// After is the ID of a flow that must complete before this one starts,
	// or -1.
	After int
	// Group, when > 0, puts the flow in a barrier group (e.g. one repetition
	// of a job).
	Group int
	// AfterGroup, when > 0, is a group whose every flow must complete before
	// this one starts (Start is then the delay after the last of them). It
	// excludes After and must be smaller than the flow's own Group, which
	// keeps dependencies acyclic.
	AfterGroup int
	// Minimal marks environment traffic (a background job, not the scheme
	// under test): the flow keeps one ECMP entropy and, on low-diameter
	// routing, travels on the fabric's minimal routes whatever the routing
	// mode and load balancer of the run.
	Minimal bool
	// Rate, when > 0, paces the flow's sender to this many bits per
	// second (an offered load below the congestion control's; 0: unpaced).
	Rate int64
}

// Matrix is a set of flows over a fabric of Hosts hosts.
type Matrix struct {
	Name  string
	Hosts int
	Flows []Flow
}

// Validate checks host ranges, sizes, IDs and dependencies.
func (m *Matrix) Validate() error {
	if len(m.Flows) == 0 {
		return fmt.Errorf("%s: no flows", m.name())
	}
	ids := make(map[int]int, len(m.Flows))
	for i, f := range m.Flows {
		if f.Src < 0 || f.Src >= m.Hosts {
			return fmt.Errorf("%s: flow %d: source host %d out of range [0, %d)", m.name(), f.ID, f.Src, m.Hosts)
		}
		if f.Dst < 0 || f.Dst >= m.Hosts {
			return fmt.Errorf("%s: flow %d: destination host %d out of range [0, %d)", m.name(), f.ID, f.Dst, m.Hosts)
		}
		if f.Src == f.Dst {
			return fmt.Errorf("%s: flow %d: source and destination are both host %d", m.name(), f.ID, f.Src)
		}
		if f.Size <= 0 {
			return fmt.Errorf("%s: flow %d: size must be positive, got %d", m.name(), f.ID, f.Size)
		}
		if f.Start < 0 {
			return fmt.Errorf("%s: flow %d: negative start time", m.name(), f.ID)
		}
		if j, dup := ids[f.ID]; dup {
			return fmt.Errorf("%s: flow id %d used twice (entries %d and %d)", m.name(), f.ID, j+1, i+1)
		}
		ids[f.ID] = i
	}
	groups := make(map[int]bool)
	for _, f := range m.Flows {
		if f.Group < 0 || f.AfterGroup < 0 {
			return fmt.Errorf("%s: flow %d: negative group", m.name(), f.ID)
		}
		if f.Group > 0 {
			groups[f.Group] = true
		}
	}
	for _, f := range m.Flows {
		if f.AfterGroup > 0 {
			if f.After >= 0 {
				return fmt.Errorf("%s: flow %d waits for both flow %d and group %d", m.name(), f.ID, f.After, f.AfterGroup)
			}
			if f.AfterGroup >= f.Group {
				return fmt.Errorf("%s: flow %d in group %d waits for group %d, which is not an earlier group", m.name(), f.ID, f.Group, f.AfterGroup)
			}
			if !groups[f.AfterGroup] {
				return fmt.Errorf("%s: flow %d waits for group %d, which has no flows", m.name(), f.ID, f.AfterGroup)
			}
		}
		if f.After < 0 {
			continue
		}
		j, ok := ids[f.After]
		if !ok {
			return fmt.Errorf("%s: flow %d waits for flow %d, which does not exist", m.name(), f.ID, f.After)
		}
		if m.Flows[j].Group > f.Group {
			return fmt.Errorf("%s: flow %d in group %d waits for flow %d of the later group %d", m.name(), f.ID, f.Group, f.After, m.Flows[j].Group)
		}
	}
	if j, ok := dependencyCycle(m.Flows, func(id int) (int, bool) {
		i, ok := ids[id]
		return i, ok
	}); ok {
		return fmt.Errorf("%s: flow %d is part of a dependency cycle", m.name(), m.Flows[j].ID)
	}
	return nil
}

func (m *Matrix) name() string {
	if m.Name == "" {
		return "traffic matrix"
	}
	return m.Name
}

// dependencyCycle returns the index of a flow on an After cycle, walking
// each chain once (0 = unseen, 1 = on the current walk, 2 = known to end),
// so the check is linear in the flows. index maps a flow ID to its index;
// unknown IDs end a chain.
func dependencyCycle(flows []Flow, index func(id int) (int, bool)) (int, bool) {
	state := make([]uint8, len(flows))
	var path []int
	for i := range flows {
		path = path[:0]
		j := i
		for j >= 0 && state[j] == 0 {
			state[j] = 1
			path = append(path, j)
			next := -1
			if a := flows[j].After; a >= 0 {
				if k, ok := index(a); ok {
					next = k
				}
			}
			j = next
		}
		if j >= 0 && state[j] == 1 {
			return j, true
		}
		for _, k := range path {
			state[k] = 2
		}
	}
	return 0, false
}
