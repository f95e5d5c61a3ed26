package sim

import (
	"fmt"
	"math"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

// MaxLongestPathQueue is the largest queue LongestPathSizing returns (1
// GiB per port); a fabric whose longest path needs more is rejected.
const MaxLongestPathQueue = 1 << 30

// LongestPathSizing is Spritz Sec. V-A's sizing on fabric f (a Dragonfly or
// Slim Fly) with transport tp's packet sizes: windowRTT is the unloaded RTT
// of the fabric's longest source-guided path (LongestPathRTT: a data packet
// on the longest listed path, its ACK back), to be Config.WindowRTT (every
// flow's window, initial and maximum, sized on that path whatever its own
// path or routing mode); queueBytes is one BDP of that path at the host
// link rate in whole data packets, to be Config.QueueBytes (Table II: 88
// packets on its Dragonfly; 94 here, where a path's latency also counts
// serialisation at every hop). The fabric needs low-diameter structure:
// global links (a Dragonfly) or a slimfly: spec.
func LongestPathSizing(f *inventory.Fabric, tp transport.Params) (windowRTT, queueBytes int64, err error) {
	if f == nil || f.NumHosts() < 2 || len(f.Links) == 0 {
		return 0, 0, fmt.Errorf("sim: longest-path sizing needs a fabric with at least 2 hosts")
	}
	if !f.LowDiameter() {
		return 0, 0, fmt.Errorf("sim: longest-path sizing (Spritz) sizes on the source-guided paths of a dragonfly or slimfly fabric; %s is neither", f.Name)
	}
	tp.LB = transport.Spray // any source-guided balancer: the paths do not depend on it
	m := &workloads.Matrix{Name: "sizing", Hosts: f.NumHosts(), Flows: []workloads.Flow{{ID: 0, Src: 0, Dst: 1, Size: 1, After: -1}}}
	s, err := New(Config{Fabric: f, Matrix: m, Transport: tp, Seed: 1, LowDiameter: SourceGuided})
	if err != nil {
		return 0, 0, err
	}
	rtt := s.LongestPathRTT()
	w := s.wire()
	pkts := math.Ceil(float64(f.Links[0].RateBps) * float64(rtt) / 8e12 / float64(w))
	if rtt <= 0 || !(pkts*float64(w) <= MaxLongestPathQueue) {
		return 0, 0, fmt.Errorf("sim: longest-path sizing: longest RTT %d ps gives a queue of %.0f packets of %d B, outside (0, %d B]", rtt, pkts, w, MaxLongestPathQueue)
	}
	return rtt, int64(pkts) * w, nil
}
