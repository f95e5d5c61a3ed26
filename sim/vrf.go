package sim

import "fmt"

// VRFs put hosts into routing instances (Config.VRF). Every switch holds
// one routing table per VRF over the shared underlay: the destinations the
// VRF has routes to (its own hosts and those of the VRFs it leaks routes
// with) and, for each, the underlay's equal-cost group, hashed with a
// per-VRF salt (per-VRF ECMP: two VRFs spread the same flows differently).
// A packet travels in its sender's VRF (data in the flow source's, ACKs
// in the receiver's); a switch whose table for that VRF has no route to
// the packet's destination drops it (counted in Counters.Unreachable and
// the ingress port's drops).
type VRF struct {
	// Of maps host numbers to VRFs 0..n-1; nil (or empty) leaves every
	// host in one table.
	Of []int
	// Reach[a][b] is true when VRF a's table has routes to VRF b's hosts
	// (a route leak); a VRF always reaches itself. nil: no leaks.
	Reach [][]bool
	// Names name the VRFs in errors (optional).
	Names []string
	// DropUnreachable lets New accept flows between hosts whose VRFs do
	// not reach each other: their packets are dropped at the first switch.
	// Otherwise New refuses such a flow, naming it.
	DropUnreachable bool
}

// MaxVRFs is the largest number of VRFs.
const MaxVRFs = 4096

type vrfState struct {
	on   bool
	of   []uint16   // host -> VRF
	tab  [][]uint64 // VRF -> bitset of the destination hosts it has routes to
	salt []uint32   // VRF -> ECMP hash salt
	// cur is the salt of the packet the ingress stage is routing (0
	// without VRFs), folded into the ECMP hash key by Sim.route.
	cur   uint32
	drops uint64
}

// buildVRF builds the per-VRF tables and checks the flows.
func (s *Sim) buildVRF() error {
	v := &s.cfg.VRF
	if len(v.Of) == 0 {
		return nil
	}
	nh := s.f.NumHosts()
	if len(v.Of) != nh {
		return fmt.Errorf("sim: VRF: %d host entries for %d hosts", len(v.Of), nh)
	}
	n := 0
	for h, x := range v.Of {
		if x < 0 || x >= MaxVRFs {
			return fmt.Errorf("sim: VRF: host %d in VRF %d, want 0..%d", h, x, MaxVRFs-1)
		}
		n = max(n, x+1)
	}
	if len(v.Reach) > n {
		n = len(v.Reach)
	}
	if n > MaxVRFs {
		return fmt.Errorf("sim: VRF: %d VRFs, at most %d", n, MaxVRFs)
	}
	vs := &s.vrf
	vs.on = true
	vs.of = make([]uint16, nh)
	for h, x := range v.Of {
		vs.of[h] = uint16(x)
	}
	words := (nh + 63) / 64
	vs.tab = make([][]uint64, n)
	vs.salt = make([]uint32, n)
	for a := 0; a < n; a++ {
		vs.tab[a] = make([]uint64, words)
		for h, b := range v.Of {
			if a == b || (a < len(v.Reach) && b < len(v.Reach[a]) && v.Reach[a][b]) {
				vs.tab[a][h/64] |= 1 << (h % 64)
			}
		}
		z := uint64(a+1) * 0x9E3779B97F4A7C15
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		vs.salt[a] = uint32(z ^ (z >> 31))
	}
	vs.salt[0] = 0 // the default VRF hashes as the simulator without VRFs
	if v.DropUnreachable {
		return nil
	}
	for _, fl := range s.cfg.Matrix.Flows {
		if !s.vrfReach(int32(fl.Src), int32(fl.Dst)) || !s.vrfReach(int32(fl.Dst), int32(fl.Src)) {
			return fmt.Errorf("sim: flow %d (host %d in VRF %s -> host %d in VRF %s): unreachable, the VRFs leak no routes to each other",
				fl.ID, fl.Src, s.vrfName(fl.Src), fl.Dst, s.vrfName(fl.Dst))
		}
	}
	return nil
}

func (s *Sim) vrfName(h int) string {
	x := s.cfg.VRF.Of[h]
	if x < len(s.cfg.VRF.Names) {
		return s.cfg.VRF.Names[x]
	}
	return fmt.Sprint(x)
}

// vrfReach reports whether a packet from host src has a route to host dst
// in src's VRF.
func (s *Sim) vrfReach(src, dst int32) bool {
	t := s.vrf.tab[s.vrf.of[src]]
	return t[dst/64]&(1<<(dst%64)) != 0
}

// vrfStage is the ingress stage's VRF lookup: the packet's VRF (its
// sender's) and whether that VRF's table routes to its destination.
func (s *Sim) vrfStage(pkt *packet) (vrf uint16, ok bool) {
	st := &s.flows[pkt.flow]
	src := st.src
	if pkt.kind == pkAck {
		src = st.dst
	}
	return s.vrf.of[src], s.vrfReach(src, s.hostOf[pkt.dst])
}
