package dataplane

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/agents/transport"
)

// entropyCounter counts the data packets an engine sends per entropy (the
// engine sends entropy e from data socket e % EntropyPorts); drop, when
// set, loses the packets it accepts.
type entropyCounter struct {
	mu      sync.Mutex
	n       map[uint16]int
	dropped map[uint16]int
	drop    func(uint16) bool
	retx    atomic.Uint64 // dropped retransmissions (runFlows' accounting)
}

func (c *entropyCounter) hook(d *transport.Data) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[d.Entropy]++
	if c.drop != nil && c.drop(d.Entropy) {
		c.dropped[d.Entropy]++
		if d.Retx {
			c.retx.Add(1)
		}
		return true
	}
	return false
}

func (c *entropyCounter) snapshot() (map[uint16]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tot := 0
	m := map[uint16]int{}
	for e, v := range c.n {
		m[e] = v
		tot += v
	}
	return m, tot
}

// TestPathAwareLoopback runs the path-aware load balancers in the UDP
// agent's engine: without a path list each uses the EntropyPorts data
// sockets' source ports as its EVs (coarse-grained Spritz). Every flow
// completes with every byte delivered once, spread over several source
// ports.
func TestPathAwareLoopback(t *testing.T) {
	const ports = 8
	for _, lb := range []transport.LBKind{transport.Spray, transport.Flicr, transport.Scout, transport.OPSWeighted} {
		t.Run(lb.String(), func(t *testing.T) {
			ec := &entropyCounter{n: map[uint16]int{}, dropped: map[uint16]int{}}
			cfg := Config{Addr: lo4, EntropyPorts: ports, RateBps: 2e9, Params: testParams(transport.NSCC, lb), RunID: 21}
			b := startEngine(t, cfg)
			cfg.DropData = ec.hook
			a := startEngine(t, cfg)
			if a.Params().Entropies != ports {
				t.Fatalf("engine entropies %d, want the %d entropy ports", a.Params().Entropies, ports)
			}
			var plans []flowPlan
			sizes := []int64{1, 100 << 10, 2 << 20}
			for i := range 12 {
				plans = append(plans, flowPlan{a, b, FlowSpec{ID: uint32(i + 1), Dst: b.LocalAddr(),
					Size: sizes[i%len(sizes)], BaseRTT: 500 * transport.Microsecond, RateBps: 2e9}})
			}
			comps := runFlows(t, []*Engine{a, b}, plans, 30*time.Second)
			n, tot := ec.snapshot()
			var fct time.Duration
			for _, c := range comps {
				fct = max(fct, c.FCT)
			}
			t.Logf("%s: %d flows, longest FCT %v, %d data packets over entropies %v", lb, len(comps), fct, tot, n)
			for e := range n {
				if int(e) >= ports {
					t.Errorf("entropy %d outside the %d entropy ports", e, ports)
				}
			}
			// Flicr keeps a flow on one EV while nothing is marked; the
			// others spread every flow.
			want := ports / 2
			if lb == transport.Flicr {
				want = 3
			}
			if len(n) < want {
				t.Errorf("data left from %d source ports, want at least %d", len(n), want)
			}
		})
	}
}

// TestSprayAvoidsDeadSourcePort: every packet sent from one of the eight
// source ports is lost (as if the fabric hashed it onto a dead link).
// Spritz-Spray learns that its EV times out and never comes back good, and
// keeps fewer of its packets there than weighted OPS, which keeps sending
// an eighth of them; both complete every flow. The flows' base RTT is of
// the loopback's order (50 us): the congestion control's RTT leaves the
// hosts' delays out, so a 500 us model RTT would keep a 45-packet window,
// more than Spray's 8 recycled EVs cover, and most of its packets would
// be fresh random draws.
func TestSprayAvoidsDeadSourcePort(t *testing.T) {
	const ports, dead = 8, 3
	share := map[transport.LBKind]float64{}
	for _, lb := range []transport.LBKind{transport.OPSWeighted, transport.Spray} {
		ec := &entropyCounter{n: map[uint16]int{}, dropped: map[uint16]int{}, drop: func(e uint16) bool { return e%ports == dead }}
		cfg := Config{Addr: lo4, EntropyPorts: ports, RateBps: 2e9, Params: testParams(transport.NSCC, lb), RunID: 22}
		b := startEngine(t, cfg)
		cfg.DropData = ec.hook
		a := startEngine(t, cfg)
		retxDropped[a] = &ec.retx
		t.Cleanup(func() { delete(retxDropped, a) })
		var plans []flowPlan
		for i := range 4 {
			plans = append(plans, flowPlan{a, b, FlowSpec{ID: uint32(200 + i), Dst: b.LocalAddr(), Size: 1 << 20,
				BaseRTT: 50 * transport.Microsecond, RateBps: 2e9}})
		}
		comps := runFlows(t, []*Engine{a, b}, plans, 60*time.Second)
		n, tot := ec.snapshot()
		var timeouts uint64
		for _, c := range comps {
			timeouts += c.Stats.Timeouts
		}
		share[lb] = float64(n[dead]) / float64(tot)
		t.Logf("%s: %d of %d data packets (%.3f) on the dead source port, %d timeouts", lb, n[dead], tot, share[lb], timeouts)
	}
	if share[transport.OPSWeighted] < 0.08 {
		t.Errorf("ops-w sent only %.3f of its packets to the dead port, want about 1/8 (it ignores feedback)", share[transport.OPSWeighted])
	}
	if share[transport.Spray] > 0.5*share[transport.OPSWeighted] {
		t.Errorf("spritz-spray sent %.3f of its packets to the dead port, want at most half of ops-w's %.3f", share[transport.Spray], share[transport.OPSWeighted])
	}
}
