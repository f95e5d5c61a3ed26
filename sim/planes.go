package sim

import (
	"errors"

	"github.com/fabricbench/fabricbench/agents/transport"
)

// This file is the multi-plane host NIC (a fabric with
// inventory.Fabric.Planes, e.g. leafspine:...,planes=4): a host has one NIC
// port per plane, each pulling from the host's senders on its own, round
// robin, whenever it is free. A sender answers per plane
// (transport.Sender.NextPacketOn): the plane load balancer lives in the
// endpoint state machine (agents/transport/plane.go), the NIC only asks.
// Each port keeps the list of flows that may send on it; a flow that may
// not is dropped from that list and put back when an ACK or a timer makes
// it able to (activate). ACKs go back on the port their data arrived at,
// and tell the sender their plane. A host port going down is the NIC's
// link-down signal: its senders exclude the plane at once
// (Sender.PlaneDown) and re-admit it when it comes back (PlaneUp); the
// port itself stops pulling while it is down.

type planeNIC struct {
	port   int32
	plane  uint8
	active []int32
	rr     int
}

type planeState struct {
	on    bool
	n     int
	mode  transport.PlaneMode
	nicOf []int32    // port -> index into nics, -1 for switch ports
	nics  []planeNIC // host*n + plane
	// onList[flow] has bit p set while the flow is on plane p's list.
	onList  []uint8
	started []bool // per flow: told about its host's ports that were down
	// rot[host] is the plane the host offers a flow to first: it turns
	// on every offer, so idle planes tie round robin (all local queues
	// empty), not always towards plane 0.
	rot []uint8
}

// buildPlanes sets up the multi-plane NICs of a multi-plane fabric.
func (s *Sim) buildPlanes() error {
	n := s.f.NumPlanes()
	if n <= 1 {
		s.tp.Planes = 0 // the fabric decides: one plane, one port
		return nil
	}
	switch {
	case s.tp.Coalescing():
		return errors.New("sim: ACK coalescing on a multi-plane fabric is not supported (ACKs go back per plane)")
	case s.cfg.SRv6.Paths != nil || len(s.cfg.Paths) > 0:
		return errors.New("sim: explicit paths and SRv6 on a multi-plane fabric are not supported")
	case s.cfg.LowDiameter != LowDiameterOff:
		return errors.New("sim: low-diameter routing on a multi-plane fabric is not supported")
	}
	mp := &s.mp
	mp.on, mp.n, mp.mode = true, n, s.tp.PlaneMode
	s.tp.Planes = n
	mp.nicOf = make([]int32, len(s.ports))
	for i := range mp.nicOf {
		mp.nicOf[i] = -1
	}
	mp.nics = make([]planeNIC, len(s.f.Hosts)*n)
	for h := range s.f.Hosts {
		for pl := 0; pl < n; pl++ {
			p := s.f.HostPlanePort(h, pl)
			if p < 0 {
				return errors.New("sim: host " + s.f.Host(h).Name + " has no port in plane " + s.f.Planes[pl])
			}
			mp.nics[h*n+pl] = planeNIC{port: int32(p), plane: uint8(pl)}
			mp.nicOf[p] = int32(h*n + pl)
		}
	}
	mp.onList = make([]uint8, len(s.cfg.Matrix.Flows))
	mp.started = make([]bool, len(s.cfg.Matrix.Flows))
	mp.rot = make([]uint8, len(s.f.Hosts))
	return nil
}

// pullNIC is the host NIC stage of port pid: the next data packet of host
// hn's senders for that port.
func (s *Sim) pullNIC(pid, hn int32) int32 {
	if s.mp.on {
		return s.mpPull(pid)
	}
	return s.pull(hn)
}

// nicBacklog reports whether host port pid may have more to pull.
func (s *Sim) nicBacklog(pid, hn int32) bool {
	if s.mp.on {
		return len(s.mp.nics[s.mp.nicOf[pid]].active) > 0
	}
	return len(s.hosts[hn].active) > 0
}

// mpPull asks the flows on port pid's list, round robin, for a packet on
// its plane.
func (s *Sim) mpPull(pid int32) int32 {
	q := &s.mp.nics[s.mp.nicOf[pid]]
	if !s.ports[pid].up {
		return -1 // the NIC sees its link down: nothing goes out
	}
	pl := int(q.plane)
	var d transport.Data
	skipped := 0
	for len(q.active) > 0 {
		if q.rr >= len(q.active) {
			q.rr = 0
		}
		fi := q.active[q.rr]
		st := &s.flows[fi]
		if s.pfc.on && s.pfcPaused(pid, int(st.class)) {
			if skipped++; skipped >= len(q.active) {
				return -1
			}
			q.rr++
			continue
		}
		size := st.snd.NextPacketOn(s.now, pl, &d)
		if size == 0 {
			s.mp.onList[fi] &^= 1 << pl
			last := len(q.active) - 1
			copy(q.active[q.rr:], q.active[q.rr+1:])
			q.active = q.active[:last]
			continue
		}
		q.rr++
		pi := s.pk.alloc()
		p := &s.pk.p[pi]
		*p = packet{ts: d.SentAt, flow: fi, dst: st.dstNode, size: int32(size), payload: d.Payload, psn: d.PSN,
			entropy: d.Entropy, class: st.class, kind: pkData}
		if d.Retx {
			p.flags = pfRetx
		}
		if d.AckReq {
			p.flags |= pfAckReq
		}
		p.setAckRoute(&d)
		if st.timerAt == 0 {
			s.armTimer(fi)
		}
		if s.mp.mode == transport.PlaneEntropy {
			// The next packet's entropy picks its plane: that port's turn.
			if np := st.snd.NextPlane(); np >= 0 && np != pl {
				s.mpOffer(fi, np)
			}
		}
		return pi
	}
	return -1
}

// mpOffer puts flow fi on plane pl's list and kicks that port.
func (s *Sim) mpOffer(fi int32, pl int) {
	st := &s.flows[fi]
	q := &s.mp.nics[int(st.src)*s.mp.n+pl]
	if s.mp.onList[fi]&(1<<pl) == 0 {
		s.mp.onList[fi] |= 1 << pl
		q.active = append(q.active, fi)
	}
	s.kick(q.port)
}

// mpActivate offers flow fi to every plane that may take a packet of it.
func (s *Sim) mpActivate(fi int32) {
	st := &s.flows[fi]
	n := s.mp.n
	if !s.mp.started[fi] {
		// A flow starting while one of its host's ports is down learns it
		// at once, as the flows running then did.
		s.mp.started[fi] = true
		for pl := 0; pl < n; pl++ {
			if !s.ports[s.mp.nics[int(st.src)*n+pl].port].up {
				st.snd.PlaneDown(s.now, pl)
			}
		}
	}
	r := int(s.mp.rot[st.src])
	s.mp.rot[st.src] = uint8((r + 1) % n)
	for k := 0; k < n; k++ {
		pl := (r + k) % n
		if st.snd.CanSendOn(s.now, pl) {
			s.mpOffer(fi, pl)
		}
	}
}

// ackPort is the port host h answers a data packet on: the one it arrived
// at on a multi-plane host.
func (s *Sim) ackPort(h int32, pkt *packet) int32 {
	if s.mp.on {
		return s.ports[pkt.port].peerPort
	}
	return s.hosts[h].port
}

// ackPlane is the plane an ACK arrived on.
func (s *Sim) ackPlane(pkt *packet) uint8 {
	return uint8(s.f.Ports[s.ports[pkt.port].peerPort].Plane)
}

// mpLink passes a host port's link change to the senders of its host: the
// NIC's link-down signal.
func (s *Sim) mpLink(le *LinkEvent) {
	l := &s.f.Links[le.Link]
	for _, pid := range [2]int{l.A, l.B} {
		ni := s.mp.nicOf[pid]
		if ni < 0 {
			continue
		}
		h := int32(int(ni) / s.mp.n)
		pl := int(s.mp.nics[ni].plane)
		for fi := range s.flows {
			st := &s.flows[fi]
			if st.src != h || st.snd == nil || st.fct >= 0 {
				continue
			}
			if le.Up {
				st.snd.PlaneUp(s.now, pl)
			} else {
				st.snd.PlaneDown(s.now, pl)
			}
			s.mpActivate(int32(fi))
		}
	}
}
