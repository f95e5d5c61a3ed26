package transport

import "testing"

// TestAckRouteEchoesUntilDuplicate: a receiver routes its ACKs on the data
// packets' entropies until a duplicate arrives; then it sprays them round
// robin over its own paths (every path within one round), locks on the
// route the sender confirms in a later data packet, ignores stale
// confirmations and, after the next duplicate, the route it abandoned.
func TestAckRouteEchoesUntilDuplicate(t *testing.T) {
	p := DefaultParams()
	paths := []PathEV{{EV: 0x0001}, {EV: 0x0102}, {EV: 0x0203}, {EV: 0x03FF}}
	r := NewReceiverFor(&p, 7, 100)
	r.SetAckPaths(paths)
	d := Data{Flow: 7, PSN: 0, Payload: 4096, Entropy: 0x0203, SentAt: 10}
	a, _ := r.OnData(&d, false, false)
	if a.Route != 0x0203 || a.Entropy != 0x0203 {
		t.Fatalf("first ACK routed on %04x echoing %04x, want the data EV 0203 for both", a.Route, a.Entropy)
	}
	// The same PSN again: the sender did not hear the ACK.
	d.SentAt, d.Retx = 20, true
	a, _ = r.OnData(&d, false, false)
	if a.Entropy != 0x0203 {
		t.Errorf("ACK of the duplicate echoes %04x, want the data EV 0203", a.Entropy)
	}
	seen := map[uint16]bool{a.Route: true}
	for psn := uint32(1); psn < uint32(len(paths)); psn++ {
		d = Data{Flow: 7, PSN: psn, Payload: 4096, Entropy: 0x0203, SentAt: 20 + Time(psn)}
		a, _ = r.OnData(&d, false, false)
		seen[a.Route] = true
	}
	for _, pe := range paths {
		if !seen[pe.EV] {
			t.Errorf("after the duplicate, %d ACKs did not try path %04x (tried %v)", len(paths), pe.EV, seen)
		}
	}
	if r.AckRouteMoves() != 1 {
		t.Errorf("AckRouteMoves %d, want 1", r.AckRouteMoves())
	}
	// A confirmation from a packet sent before the duplicate is stale.
	d = Data{Flow: 7, PSN: 10, Payload: 4096, Entropy: 0x0001, SentAt: 15, AckRoute: 0x0102, AckRouteValid: true}
	a, _ = r.OnData(&d, false, false)
	d = Data{Flow: 7, PSN: 11, Payload: 4096, Entropy: 0x0001, SentAt: 30}
	b, _ := r.OnData(&d, false, false)
	if a.Route == b.Route {
		t.Errorf("a stale confirmation locked the route on %04x", a.Route)
	}
	// A fresh one locks it.
	for psn := uint32(12); psn < 16; psn++ {
		d = Data{Flow: 7, PSN: psn, Payload: 4096, Entropy: 0x0001, SentAt: 40 + Time(psn), AckRoute: 0x03FF, AckRouteValid: true}
		a, _ = r.OnData(&d, false, false)
		if a.Route != 0x03FF {
			t.Fatalf("PSN %d: ACK routed on %04x after the sender confirmed 03ff", psn, a.Route)
		}
	}
	// A new duplicate abandons it; later confirmations of it are ignored.
	d = Data{Flow: 7, PSN: 12, Payload: 4096, Entropy: 0x0001, SentAt: 100, Retx: true}
	r.OnData(&d, false, false)
	routes := map[uint16]bool{}
	for psn := uint32(20); psn < 24; psn++ {
		d = Data{Flow: 7, PSN: psn, Payload: 4096, Entropy: 0x0001, SentAt: 100 + Time(psn), AckRoute: 0x03FF, AckRouteValid: true}
		a, _ = r.OnData(&d, false, false)
		routes[a.Route] = true
	}
	if len(routes) < 2 {
		t.Errorf("after the second duplicate the ACKs stayed on %v: the abandoned route was confirmed again", routes)
	}
	// A confirmation of another route locks that one.
	d = Data{Flow: 7, PSN: 30, Payload: 4096, Entropy: 0x0001, SentAt: 200, AckRoute: 0x0001, AckRouteValid: true}
	if a, _ = r.OnData(&d, false, false); a.Route != 0x0001 {
		t.Errorf("ACK routed on %04x after the sender confirmed 0001", a.Route)
	}
}

// TestAckRouteWithoutPaths: without a path list the receiver moves its
// ACKs to random entropies of the space after a duplicate, and the
// coalescing and go-back-N receivers move too.
func TestAckRouteWithoutPaths(t *testing.T) {
	p := DefaultParams()
	p.Entropies = 64
	r := NewReceiverFor(&p, 3, 100)
	d := Data{Flow: 3, PSN: 0, Payload: 4096, Entropy: 5, SentAt: 1}
	r.OnData(&d, false, false)
	d.SentAt = 2
	routes := map[uint16]bool{}
	for i := 0; i < 20; i++ {
		a, _ := r.OnData(&d, false, false)
		if a.Route >= 64 {
			t.Fatalf("route %d outside the 64 entropies", a.Route)
		}
		routes[a.Route] = true
	}
	if len(routes) < 5 {
		t.Errorf("20 duplicates tried only routes %v", routes)
	}
	for _, mode := range []string{"coalescing", "go-back-n"} {
		q := DefaultParams()
		if mode == "coalescing" {
			q.AckEvery = 4
		} else {
			q.GoBackN = true
		}
		r := NewReceiverFor(&q, 3, 100)
		var a Ack
		moved := false
		for i := 0; i < 8 && !moved; i++ {
			d := Data{Flow: 3, PSN: 0, Payload: 4096, Entropy: 5, SentAt: Time(i + 1), Retx: i > 0}
			if send, _ := r.Receive(Time(i), &d, false, false, &a); send && a.Route != 5 {
				moved = true
			}
		}
		if !moved || r.AckRouteMoves() == 0 {
			t.Errorf("%s receiver: ACKs of 7 duplicates all routed on the data EV", mode)
		}
	}
}

// TestSenderEchoesAckRoute: data packets carry the route of the latest ACK
// the sender received.
func TestSenderEchoesAckRoute(t *testing.T) {
	p := DefaultParams()
	s := NewSender(&p, Flow{ID: 1, Size: 64 * 4096, Path: Path{BaseRTT: 10 * Microsecond, RateBps: 100e9}})
	var d Data
	s.NextPacket(0, &d)
	if d.AckRouteValid {
		t.Fatal("first packet echoes an ACK route before any ACK")
	}
	s.OnAck(Microsecond, &Ack{Flow: 1, PSN: 0, CumAck: 1, Entropy: d.Entropy, Route: 0x0A0B, EchoTS: d.SentAt})
	s.NextPacket(2*Microsecond, &d)
	if !d.AckRouteValid || d.AckRoute != 0x0A0B {
		t.Errorf("data echoes route %04x (valid %v), want 0a0b", d.AckRoute, d.AckRouteValid)
	}
}

// TestAckRouteOWD: with the OWD balancer (port-msb routing) ACKs go on a
// shortest path (the echoed entropy with its MSB cleared) while the data
// packet's entropy is echoed whole; after a duplicate they may take any
// entropy, non-shortest ones included.
func TestAckRouteOWD(t *testing.T) {
	p := DefaultParams()
	p.LB = OWD
	r := NewReceiverFor(&p, 2, 100)
	d := Data{Flow: 2, PSN: 0, Payload: 1024, Entropy: 0x8003, SentAt: 1}
	a, _ := r.OnData(&d, false, false)
	if a.Route != 0x0003 || a.Entropy != 0x8003 {
		t.Fatalf("ACK routed on %04x echoing %04x, want 0003 and 8003", a.Route, a.Entropy)
	}
	msb := 0
	for i := 0; i < 32; i++ {
		d.SentAt = Time(2 + i)
		if a, _ = r.OnData(&d, false, false); a.Route&0x8000 != 0 {
			msb++
		}
	}
	if msb < 4 || msb > 28 {
		t.Errorf("%d of 32 ACKs after duplicates asked for a non-shortest path, want about half", msb)
	}
}

// TestAckRouteMinimal: with Params.AckMinimal a receiver that has a path
// list sends its ACKs on the list's minimal paths (the data EV picks one,
// so they spread over all of them), still echoing the data EV; after a
// duplicate it sprays over every path as without it. Without AckMinimal,
// or without a list, it routes on the data EV.
func TestAckRouteMinimal(t *testing.T) {
	paths := []PathEV{{EV: 0x0001}, {EV: 0x0102, Minimal: true}, {EV: 0x0203}, {EV: 0x03FF, Minimal: true}}
	for _, c := range []struct {
		minimal, list bool
	}{{false, true}, {true, false}, {true, true}} {
		p := DefaultParams()
		p.AckMinimal = c.minimal
		r := NewReceiverFor(&p, 7, 100)
		if c.list {
			r.SetAckPaths(paths)
		}
		routes := map[uint16]bool{}
		for psn := uint32(0); psn < 8; psn++ {
			ev := paths[psn%4].EV
			d := Data{Flow: 7, PSN: psn, Payload: 4096, Entropy: ev, SentAt: Time(psn)}
			a, _ := r.OnData(&d, false, false)
			if a.Entropy != ev {
				t.Fatalf("AckMinimal %v, list %v: ACK echoes %04x, want the data EV %04x", c.minimal, c.list, a.Entropy, ev)
			}
			ok := a.Route == ev
			if c.minimal && c.list {
				ok = a.Route == 0x0102 || a.Route == 0x03FF
			}
			if !ok {
				t.Errorf("AckMinimal %v, list %v: data EV %04x, ACK routed on %04x", c.minimal, c.list, ev, a.Route)
			}
			routes[a.Route] = true
		}
		if c.minimal && c.list && (len(routes) != 2 || !routes[0x0102] || !routes[0x03FF]) {
			t.Errorf("ACK routes %v, want both minimal paths 0102 and 03ff", routes)
		}
		if !(c.minimal && c.list) {
			continue
		}
		// A duplicate: spray over every path, minimal or not.
		d := Data{Flow: 7, PSN: 0, Payload: 4096, Entropy: 0x0001, SentAt: 20, Retx: true}
		r.OnData(&d, false, false)
		seen := map[uint16]bool{}
		for psn := uint32(8); psn < 12; psn++ {
			d = Data{Flow: 7, PSN: psn, Payload: 4096, Entropy: 0x0001, SentAt: 20 + Time(psn)}
			a, _ := r.OnData(&d, false, false)
			seen[a.Route] = true
		}
		if len(seen) != len(paths) {
			t.Errorf("after a duplicate the ACKs tried %v, want all %d paths", seen, len(paths))
		}
	}
}
