package dataplane

import (
	"net/netip"
	"time"
	"unsafe"

	"github.com/fabricbench/fabricbench/agents/transport"
	"golang.org/x/sys/unix"
)

// The receiving goroutines, one per plane: recvmmsg batches on the main
// socket (a GRO buffer is a train of datagrams with the segment size in a
// control message), the receivers of the data packets, their ACKs batched
// back (GSO where several go to one sender from one socket), and the ACKs
// for this engine's senders handed to the sending goroutine with their
// kernel receive times.

const (
	rxMsgs = 32 // messages per recvmmsg
	// rxBufLen holds the largest GRO buffer (64 KB of datagrams) or
	// datagram.
	rxBufLen = 65536 + 4096
	// ackSlots is the most ACKs one receive batch queues before sending.
	ackSlots = 1024
)

// rxState is one receiving goroutine's buffers.
type rxState struct {
	e     *Engine
	ps    *portSet
	bufs  []byte
	hdrs  []unix.Mmsghdr
	iovs  []unix.Iovec
	names []unix.RawSockaddrInet6
	ctrl  []byte
	call  *mmsgCall
	acks  *txBatch
	pend  []ackRec // ACKs for this engine's senders, to hand over
	pk    Packet
	cnt   rxCounts
}

// rxCounts are a batch's receive counters, added to the engine's at its end.
type rxCounts struct {
	dataRecv, dataDup, dataBytes, payload uint64
	trimmed, ecnMarked, bad, foreign      uint64
	recvFlows, recvFlowsDone, acksDropped uint64
	markErrors, groSegs, msgs             uint64
}

func (c *rxCounts) add(to *counters) {
	add := func(v uint64, f func(uint64) uint64) {
		if v > 0 {
			f(v)
		}
	}
	add(c.dataRecv, to.dataRecv.Add)
	add(c.dataDup, to.dataDup.Add)
	add(c.dataBytes, to.dataBytesRecv.Add)
	add(c.payload, to.payloadRecv.Add)
	add(c.trimmed, to.trimmed.Add)
	add(c.ecnMarked, to.ecnMarked.Add)
	add(c.bad, to.badPackets.Add)
	add(c.foreign, to.foreignRun.Add)
	add(c.recvFlows, to.recvFlows.Add)
	add(c.recvFlowsDone, to.recvFlowsDone.Add)
	add(c.acksDropped, to.acksDropped.Add)
	add(c.markErrors, to.markErrors.Add)
	add(c.groSegs, to.groSegs.Add)
	add(c.msgs, to.recvMsgs.Add)
	*c = rxCounts{}
}

func newRxState(e *Engine, ps *portSet) *rxState {
	r := &rxState{e: e, ps: ps, bufs: make([]byte, rxMsgs*rxBufLen), hdrs: make([]unix.Mmsghdr, rxMsgs),
		iovs: make([]unix.Iovec, rxMsgs), names: make([]unix.RawSockaddrInet6, rxMsgs), ctrl: make([]byte, rxMsgs*rxCtrlLen),
		acks: newTxBatch(AckHeaderLen, ackSlots, gsoMaxSegments, e.v6), pend: make([]ackRec, 0, 1024)}
	r.call = newMmsgCall(r.hdrs)
	// The poller calls doRecv until it finds datagrams; an empty socket
	// is noted (acksInFlight) before the goroutine parks.
	r.call.recv = func(fd uintptr) bool {
		if r.call.doRecv(fd) {
			if r.call.errno == nil && r.call.done > 0 {
				ps.rxReadAt.Store(int64(e.now()))
				ps.rxBusy.Store(true)
			}
			return true
		}
		ps.rxDrained.Store(int64(e.now()))
		return false
	}
	for i := range r.hdrs {
		r.iovs[i].Base = &r.bufs[i*rxBufLen]
		r.iovs[i].SetLen(rxBufLen)
	}
	return r
}

// reader receives on plane ps's main socket until the socket is closed or
// its read deadline passes after stop.
func (e *Engine) reader(ps *portSet, stop <-chan struct{}) {
	r := newRxState(e, ps)
	for {
		r.reset()
		n, err := r.call.recvmmsg(ps.main.rc, rxMsgs)
		if err != nil {
			ps.rxBusy.Store(false)
			select {
			case <-stop:
				return
			default:
			}
			if isClosed(err) {
				return
			}
			e.c.recvErrors.Add(1)
			if !e.recvWarn.Swap(true) {
				e.logf("dataplane: receive on %v: %v (further receive errors are only counted)", netip.AddrPortFrom(ps.addr, e.port), err)
			}
			time.Sleep(time.Millisecond) // a persistent error must not spin
			continue
		}
		e.c.recvCalls.Add(1)
		if !r.process(n, stop) {
			return
		}
	}
}

// reset prepares the message headers for a recvmmsg call (the kernel
// writes the lengths).
func (r *rxState) reset() {
	for i := range r.hdrs {
		h := &r.hdrs[i]
		h.Hdr.Name = (*byte)(unsafe.Pointer(&r.names[i]))
		h.Hdr.Namelen = unix.SizeofSockaddrInet6
		h.Hdr.Iov = &r.iovs[i]
		h.Hdr.SetIovlen(1)
		h.Hdr.Control = &r.ctrl[i*rxCtrlLen]
		h.Hdr.SetControllen(rxCtrlLen)
		h.Hdr.Flags = 0
		h.Len = 0
	}
}

// process handles n received messages: data packets answered, ACKs handed
// over. It returns false when the engine stops while it waits for the
// sending goroutine to take ACKs.
func (r *rxState) process(n int, stop <-chan struct{}) bool {
	e := r.e
	wall := time.Now()
	now := Time(wall.Sub(e.t0)) * 1000
	wallNs := wall.UnixNano()
	gso := e.gsoProbe.Load() && !e.gsoOff.Load()
	e.rcvMu.Lock()
	for i := 0; i < n; i++ {
		h := &r.hdrs[i]
		r.cnt.msgs++
		if h.Hdr.Flags&unix.MSG_TRUNC != 0 {
			r.cnt.bad++
			continue
		}
		l := int(h.Len)
		src := getSockaddr(&r.names[i])
		meta := parseRxCtrl(r.ctrl[i*rxCtrlLen : i*rxCtrlLen+int(h.Hdr.Controllen)])
		rxAt := now
		if meta.tsNs > 0 {
			// The kernel stamped the datagram with the wall clock; the age
			// moves it onto the transport clock (a clock step in between
			// leaves it at now).
			if age := wallNs - meta.tsNs; age >= 0 && age < int64(time.Second) {
				rxAt = now - Time(age)*transport.Nanosecond
			}
		}
		buf := r.bufs[i*rxBufLen : i*rxBufLen+l]
		seg := l
		if meta.gso > 0 && meta.gso < l {
			seg = meta.gso
			r.cnt.groSegs += uint64((l + seg - 1) / seg)
		}
		for off := 0; off < l; off += seg {
			r.handle(buf[off:min(off+seg, l)], src, &meta, rxAt, gso)
			if r.acks.full() {
				e.rcvMu.Unlock()
				r.count()
				r.flushAcks()
				e.rcvMu.Lock()
			}
		}
	}
	e.rcvMu.Unlock()
	r.count()
	r.flushAcks()
	ok := r.handOver(stop)
	r.ps.rxHanded.Store(r.ps.rxReadAt.Load())
	r.ps.rxBusy.Store(false)
	return ok
}

// handle decodes one datagram.
func (r *rxState) handle(b []byte, src netip.AddrPort, meta *rxMeta, rxAt Time, gso bool) {
	e := r.e
	if err := Decode(b, &r.pk); err != nil {
		r.cnt.bad++
		return
	}
	if r.pk.Type != TypeData {
		if r.pk.Ack.RunID != e.cfg.RunID {
			r.cnt.foreign++
			return
		}
		r.pend = append(r.pend, ackRec{h: r.pk.Ack, rxAt: rxAt, plane: uint8(r.ps.plane)})
		return
	}
	h := &r.pk.Data
	if h.RunID != e.cfg.RunID {
		r.cnt.foreign++
		return
	}
	if h.ReplyPort == 0 {
		r.cnt.bad++
		return
	}
	key := rxKey{sender: h.Sender, port: h.ReplyPort, flow: h.Flow}
	rf := e.rcv[key]
	if rf == nil || rf.npkts != h.NPkts {
		rf = &recvFlow{r: transport.NewReceiverFor(&e.rparams, h.Flow, h.NPkts), npkts: h.NPkts, mark: h.Mark, first: rxAt,
			src: netip.AddrPortFrom(src.Addr(), h.ReplyPort), srcPlane: r.ps.plane}
		if h.Mark != 0 {
			if s, err := e.markSocket(h.Mark); err == nil {
				rf.sock = s
			} else {
				// Its ACKs leave by their route, as unmarked ones do.
				r.cnt.markErrors++
				e.markWarning(h.Mark, err)
			}
		}
		e.rcv[key] = rf
		r.cnt.recvFlows++
	}
	if r.ps.plane < rf.srcPlane {
		rf.src, rf.srcPlane = netip.AddrPortFrom(src.Addr(), h.ReplyPort), r.ps.plane
	}
	rf.pkts++
	rf.last = rxAt
	r.cnt.dataRecv++
	r.cnt.dataBytes += uint64(len(b))
	ecn := meta.tos&tosCE == tosCE
	if ecn {
		r.cnt.ecnMarked++
	}
	if h.Trimmed {
		r.cnt.trimmed++
	}
	d := h.Transport()
	before, wasDone := rf.r.Bytes(), rf.r.Done()
	ack, complete := rf.r.OnData(&d, ecn, h.Trimmed)
	if got := rf.r.Bytes() - before; got > 0 {
		r.cnt.payload += uint64(got)
	} else if !h.Trimmed && (d.Payload > 0 || wasDone) {
		// Only zero-size flows have empty packets, and they have one.
		r.cnt.dataDup++
	}
	if complete {
		r.cnt.recvFlowsDone++
	}
	ah := AckHeader{RunID: e.cfg.RunID, Flow: ack.Flow, PSN: ack.PSN, CumAck: ack.CumAck, Entropy: ack.Entropy,
		Route: ack.Route, Mark: h.Mark, EchoTS: ack.EchoTS, ECN: ack.ECN, Nack: ack.Nack}
	// The ACK goes back to the address the data came from (the sender's
	// port on this plane).
	to := netip.AddrPortFrom(src.Addr(), h.ReplyPort)
	s := rf.sock // a marked flow: policy routing steers its ACKs, not the route
	if s == nil {
		i := int(ack.Route) % len(r.ps.data)
		if e.cfg.DropAck != nil && e.cfg.DropAck(uint16(e.cfg.Port+1+i), ack) {
			r.cnt.acksDropped++
			return
		}
		s = r.ps.data[i]
	}
	// ACKs are not ECN-capable (RFC 3168 6.1.4): Not-ECT on every socket.
	slot, m := r.acks.add(s, to, AckHeaderLen, true, gso)
	_, _ = EncodeAck(slot, &ah)
	r.acks.ts[r.acks.used-1] = meta.tsNs
	switch {
	case ack.Nack:
		m.nacks++
	default:
		m.acks++
	}
	if ack.ECN {
		m.ecn++
	}
}

// count adds the batch's counters to the engine's: before its ACKs go,
// so a sender that sees an ACK finds the packet counted here.
func (r *rxState) count() {
	if r.cnt.dataRecv > 0 {
		r.ps.recvPkts.Add(r.cnt.dataRecv)
	}
	r.cnt.add(&r.e.c)
}

// flushAcks sends the queued ACKs with their hold times.
func (r *rxState) flushAcks() {
	if r.acks.empty() {
		return
	}
	res := r.acks.flush(time.Now().UnixNano())
	r.e.account(&res)
}

// handOver gives the received ACKs to the sending goroutine.
func (r *rxState) handOver(stop <-chan struct{}) bool {
	if len(r.pend) == 0 {
		return true
	}
	e := r.e
	e.ackMu.Lock()
	for len(e.ackCur) >= maxAckQueue {
		e.ackMu.Unlock()
		select {
		case <-e.ackSpace:
		case <-stop:
			return false
		}
		e.ackMu.Lock()
	}
	if e.ackCur == nil {
		e.ackCur = make([]ackRec, 0, max(1024, len(r.pend)))
	}
	first := len(e.ackCur) == 0
	e.ackCur = append(e.ackCur, r.pend...)
	e.ackMu.Unlock()
	clear(r.pend)
	r.pend = r.pend[:0]
	if first {
		select {
		case e.ackReady <- struct{}{}:
		default:
		}
	}
	return true
}
