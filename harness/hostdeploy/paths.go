package hostdeploy

import (
	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
)

// Costs are the per-hop and per-RTT software costs of a fabric, for the
// base RTT the transport's congestion control starts from and the ideal
// completion times.
type Costs struct {
	HopPs      int64 // forwarding per hop and direction
	EndpointPs int64 // agent and socket time per RTT
}

// route is the hops and bottleneck rate between two hosts.
type route struct {
	hops int
	rate int64
}

// Paths are the shortest paths between a fabric's hosts.
type Paths struct {
	f     *inventory.Fabric
	c     Costs
	tp    transport.Params
	table [][]route
}

// NewPaths computes a shortest path's hop count and bottleneck for every
// host pair (breadth-first over the fabric; ECMP paths of a Clos are
// equal) for packets of tp.
func NewPaths(f *inventory.Fabric, tp transport.Params, c Costs) *Paths {
	n := f.NumHosts()
	out := make([][]route, n)
	for s := 0; s < n; s++ {
		out[s] = make([]route, n)
		src := f.Hosts[s]
		dist := map[int]int{src: 0}
		rate := map[int]int64{src: 1 << 62}
		queue := []int{src}
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			// Hosts do not forward.
			if u != src && !f.Nodes[u].IsSwitch() {
				continue
			}
			for _, p := range f.Nodes[u].Ports {
				v := f.PeerNode(p)
				if _, seen := dist[v]; seen {
					continue
				}
				dist[v] = dist[u] + 1
				rate[v] = min(rate[u], f.PortRate(p))
				queue = append(queue, v)
			}
		}
		for d := 0; d < n; d++ {
			dn := f.Hosts[d]
			out[s][d] = route{hops: dist[dn], rate: rate[dn]}
		}
	}
	return &Paths{f: f, c: c, tp: tp, table: out}
}

// BaseRTT returns the unloaded RTT estimate (ps) between two hosts:
// store-and-forward serialisation of a full data packet and of its ACK
// on every hop, plus the software costs.
func (p *Paths) BaseRTT(src, dst int) int64 {
	data := int64(p.tp.MTU + p.tp.HeaderBytes)
	ack := int64(p.tp.AckBytes)
	r := p.table[src][dst]
	if r.rate <= 0 || r.hops == 0 {
		return p.c.EndpointPs
	}
	ser := int64(float64(data+ack) * 8e12 / float64(r.rate))
	return int64(r.hops)*(ser+2*p.c.HopPs) + p.c.EndpointPs
}

// IdealFCT is the unloaded completion time of a flow: one base RTT plus
// the rest of the flow's wire bytes at the bottleneck rate (-1 without a
// path).
func (p *Paths) IdealFCT(src, dst int, size int64) int64 {
	r := p.table[src][dst]
	if r.rate <= 0 {
		return -1
	}
	mtu, hdr := int64(p.tp.MTU), int64(p.tp.HeaderBytes)
	pkts := max((size+mtu-1)/mtu, 1)
	rest := max(size+pkts*hdr-(mtu+hdr), 0)
	return p.BaseRTT(src, dst) + int64(float64(rest)*8e12/float64(r.rate))
}

// HostRate is the rate of host h's (first) NIC.
func HostRate(f *inventory.Fabric, h int) int64 {
	n := f.Host(h)
	if len(n.Ports) == 0 {
		return 0
	}
	return f.PortRate(n.Ports[0])
}
