package transport

// This file is the receiver's choice of the entropy its ACKs travel on
// (Ack.Route). By default an ACK is routed on the entropy of the data
// packet it answers (Spritz Sec. IV: "the receiver keeps the same EV for
// the response"). With Params.AckMinimal, a receiver that knows its paths
// towards the sender (SetAckPaths, source-guided routing) sends it on one
// of the minimal ones instead (the data entropy picks which, so ACKs
// spread over them): Spritz sizes its BDP on the longest data path plus a
// minimal return (Table II: 88 packets on its Dragonfly; an ACK on the
// reverse of a long path would make it ~106), and UGAL-L's switches route
// ACKs minimally too. The ACK still echoes the data EV (Ack.Entropy), so
// the sender's feedback logic is unchanged.
//
// On a fabric with failed links the reverse path can be dead while the
// forward one lives: the sender then never hears of packets that arrived,
// times out, retransmits, and the receiver sees duplicates.
// A duplicate is the receiver's evidence that its ACKs are not getting
// through, so it stops echoing and routes ACKs on entropies of its own:
// it sprays them round robin over its own paths towards the sender
// (SetAckPaths: the source-guided path list of the reverse direction) or,
// without a list, over random entropies, until the sender confirms one.
// The sender echoes, in every data packet, the route entropy of the latest
// ACK it received (Data.AckRoute); once the receiver has seen such a
// confirmation it routes every ACK on that entropy, until the next
// duplicate. An ACK that is lost is covered by the cumulative and
// selective information of later ACKs, so once one ACK in a round of the
// spray arrives the sender progresses: whenever any working reverse path
// exists, ACKs reach the sender.
//
// Which entropy an ACK travels on does not change what it echoes
// (Ack.Entropy, the data packet's, for the sender's balancer).

// ackRouter is a receiver's ACK-route state.
type ackRouter struct {
	paths []PathEV // the receiver's paths towards the sender, or nil
	space uint32   // entropy space without a path list
	rng   rng
	own   bool   // moved off echoing (a duplicate arrived)
	next  int    // spray position in paths
	good  uint16 // confirmed route entropy, valid when hasGood
	bad   uint16 // the route abandoned on the latest duplicate, valid when hasBad
	// Confirmations from data packets sent no later than the duplicate
	// that moved the route (sender time) are stale.
	since   Time
	hasGood bool
	hasBad  bool
	// Moves counts duplicates that moved the ACK route.
	moves uint64
	// echoMask is applied to the echoed entropy: with the OWD balancer
	// (port-msb routing, where the entropy's MSB asks for a non-shortest
	// path) ACKs go on a shortest path (MSB 0) until they move.
	echoMask uint16
	// minimal are the minimal paths' EVs in paths (Params.AckMinimal):
	// until it moves, an ACK goes on minimal[echo % len].
	minimal    []uint16
	ackMinimal bool // Params.AckMinimal
}

func newAckRouter(p *Params, flow uint32) ackRouter {
	sp := p.Entropies
	if sp == 0 || sp > 1<<16 {
		sp = 1 << 16
	}
	a := ackRouter{space: sp, rng: newRNG(p.Seed, uint64(flow)+0x5bd1e995<<20), echoMask: 0xFFFF, ackMinimal: p.AckMinimal}
	if p.LB == OWD {
		a.echoMask = 0x7FFF
	}
	return a
}

// SetAckPaths gives the receiver its paths towards the sender (a
// source-guided fabric's list for the reverse direction, sorted by EV or
// not; shared read-only): with Params.AckMinimal its ACKs go on the
// minimal ones; when they stop getting through it sprays them over all.
// Without a list it uses random entropies then.
func (r *Receiver) SetAckPaths(paths []PathEV) {
	r.ar.paths = paths
	r.ar.minimal = r.ar.minimal[:0]
	if r.ar.ackMinimal {
		for _, p := range paths {
			if p.Minimal {
				r.ar.minimal = append(r.ar.minimal, p.EV)
			}
		}
	}
	if len(paths) > 0 {
		r.ar.next = int(r.ar.rng.intn(uint32(len(paths))))
	}
}

// AckRouteMoves returns how many duplicates moved the receiver's ACK
// route (0 while it echoes the data packets' entropies).
func (r *Receiver) AckRouteMoves() uint64 { return r.ar.moves }

// observe learns from an arriving data packet: the sender's confirmation
// of an ACK route, and whether it is a duplicate (dup).
func (a *ackRouter) observe(d *Data, dup bool) {
	if dup {
		a.moves++
		if a.own && a.hasGood {
			a.bad, a.hasBad = a.good, true
		}
		a.own, a.hasGood = true, false
		a.since = max(a.since, d.SentAt)
		return
	}
	if a.own && d.AckRouteValid && d.SentAt > a.since && !(a.hasBad && d.AckRoute == a.bad) {
		a.good, a.hasGood, a.hasBad = d.AckRoute, true, false
	}
}

// route returns the entropy an ACK that echoes echo travels on.
func (a *ackRouter) route(echo uint16) uint16 {
	switch {
	case !a.own && len(a.minimal) > 0:
		return a.minimal[int(echo)%len(a.minimal)]
	case !a.own:
		return echo & a.echoMask
	case a.hasGood:
		return a.good
	case len(a.paths) > 0:
		e := a.paths[a.next%len(a.paths)].EV
		a.next = (a.next + 1) % len(a.paths)
		return e
	}
	return uint16(a.rng.intn(a.space))
}
