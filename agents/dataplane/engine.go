// Package dataplane is fabricbench's real data plane: it drives the transport
// state machines of agents/transport (the same code the reference simulator
// runs) over UDP sockets.
//
// One Engine runs per agent process. Data leaves from one of EntropyPorts
// sockets, chosen by the packet's entropy value, so the fabric's L4 ECMP hash
// picks the path from the UDP source port; marked flows leave from a socket
// with SO_MARK set so policy routing on the host can steer them. An ACK leaves
// from the entropy socket its receiver's route entropy (transport.Ack.Route)
// names, by the same mapping, so the receiver's ACK routing (echo the data
// entropy; after a duplicate, spray until the sender confirms a route) moves
// ACKs between fabric paths as in the simulator. Data and ACKs arrive on the
// main port. A single engine goroutine owns every sender and
// receiver; a reader goroutine feeds it received packets in batches.
package dataplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fabricbench/fabricbench/agents/transport"
	"golang.org/x/sys/unix"
)

// Time is transport time: picoseconds since the engine was created.
type Time = transport.Time

// Config configures an Engine.
type Config struct {
	// Addr is the local data-plane address to bind (IPv4 or IPv6).
	Addr netip.Addr
	// Port is the main port: it receives data and ACKs. Data and ACKs
	// leave from Port+1 .. Port+EntropyPorts (ACKs of marked flows from
	// their marked socket). 0 picks a free block of
	// 1+EntropyPorts consecutive ports.
	Port int
	// EntropyPorts is the number of data sockets; a data packet of entropy
	// e, and an ACK of route entropy e, is sent from Port+1+e%EntropyPorts. Default 64. The path-aware load balancers
	// (ops-w, spritz-scout, spritz-spray, flicr) have no path list here:
	// each entropy, i.e. source port, is one of their equal-weight EVs
	// (coarse-grained Spritz, agents/transport/spritz.go).
	EntropyPorts int
	// RateBps paces all data of this host (a token bucket shared by every
	// flow, served round robin). 0 leaves pacing to the kernel and the NIC.
	RateBps int64
	// Params are the transport parameters of every flow. A zero MTU selects
	// transport.DefaultParams. Zero Entropies becomes EntropyPorts; zero
	// HeaderBytes and AckBytes become the real per-packet overhead on an
	// Ethernet link (wire header + UDP + IP + Ethernet), so pacing accounts
	// for what the link carries.
	Params transport.Params
	// RunID tags every packet; packets of another run are counted and ignored.
	RunID uint32
	// FlowTimeout abandons a flow that has not completed after this long; its
	// Completion carries an error. 0: never.
	FlowTimeout time.Duration
	// ModelRTO keeps every sender's retransmission timeout at the one the
	// path model derives (transport.RTOFor of FlowSpec.BaseRTT). By default
	// senders measure their RTT and derive the RTO from it, with the model's
	// as the floor (transport.Params.MeasureRTO): this host's scheduling,
	// timers and syscalls add latency the model does not know, and a timeout
	// that fires while the original is still on its way is a spurious
	// retransmission and a needless window cut.
	ModelRTO bool
	// Netns, when set, is a network namespace file (e.g. /var/run/netns/NAME)
	// in which every socket of the engine is created.
	Netns string
	// Logf receives diagnostics (rare; never per packet). nil discards them.
	Logf func(string, ...any)
	// DropData is a test hook: when it returns true for an outgoing data
	// packet, the packet is not sent (simulated loss). nil in production.
	DropData func(*transport.Data) bool
	// DropAck is a test hook: when it returns true for an outgoing ACK or
	// NACK, leaving from local UDP port srcPort, it is not sent. nil in
	// production.
	DropAck func(srcPort uint16, a transport.Ack) bool
}

// FlowSpec describes a flow to send.
type FlowSpec struct {
	ID uint32
	// Dst is the peer engine's main Addr:Port.
	Dst  netip.AddrPort
	Size int64 // payload bytes
	// BaseRTT is the unloaded round-trip time estimate (ps).
	BaseRTT transport.Time
	// RateBps is the path bottleneck for transport.Path; 0 uses Config.RateBps.
	RateBps int64
	// Mark 0 is a normal ECMP flow. Mark > 0 is a path class: data leaves
	// from a socket with SO_MARK=Mark (policy routing on the host steers it)
	// and the receiver sends the flow's ACKs from a socket with the same mark.
	// Entropy does not select the socket of marked flows.
	Mark uint32
}

// Completion reports a finished (or abandoned) flow.
type Completion struct {
	ID         uint32
	Start, End time.Time
	// FCT is the time from the start of the flow to the ACK that completed
	// it (to End when the flow was abandoned).
	FCT   time.Duration
	Stats transport.SenderStats
	Err   error
}

// ReceiverInfo describes one receiving flow.
type ReceiverInfo struct {
	Src         netip.AddrPort // sender address and its main (reply) port
	Flow        uint32
	Mark        uint32
	Packets     uint32 // packets in the flow
	Received    uint64 // data packets that arrived, duplicates included
	Bytes       int64  // distinct payload bytes
	Done        bool   // every packet arrived
	First, Last time.Time
}

// Errors.
var (
	ErrClosed  = errors.New("dataplane: engine closed")
	ErrStopped = errors.New("dataplane: engine stopped before the flow completed")
)

const (
	defaultEntropyPorts = 64
	maxBatch            = 256                       // packets per reader batch
	maxPerPass          = 64                        // data packets per send pass before checking input
	dueSlack            = 5 * transport.Microsecond // shorter waits are not slept
	// catchUpMax is the pacing credit kept across a late wake-up while data
	// waits for the NIC. A Go timer wakes up to about 1 ms late (the network
	// poller sleeps in whole milliseconds), so sub-millisecond pacing gaps
	// become small bursts at this granularity; the long-run rate is exact.
	catchUpMax    = 2 * transport.Millisecond
	completionBuf = 4096
)

// Engine drives transport senders and receivers over UDP.
type Engine struct {
	cfg    Config
	params transport.Params
	v6     bool
	nsFD   int
	t0     time.Time
	local  netip.AddrPort
	port   uint16
	logf   func(string, ...any)

	main *net.UDPConn
	data []*net.UDPConn
	// ackOOB is the control message that sends ACKs Not-ECT from the
	// ECN-capable entropy sockets.
	ackOOB []byte
	// rparams are the receivers' parameters: the engine's, acknowledging
	// every packet (the wire ACK has no selective bitmap).
	rparams transport.Params

	marksMu  sync.Mutex
	marks    map[uint32]*net.UDPConn
	markWarn map[uint32]bool

	bufWarn  sync.Once
	sendWarn atomic.Bool
	recvWarn atomic.Bool

	// Commands from other goroutines.
	mu      sync.Mutex
	cmds    []FlowSpec
	spare   []FlowSpec
	queries []chan []ReceiverInfo
	used    map[uint32]struct{}
	started bool
	closed  bool
	wake    chan struct{}

	out       chan Completion
	closing   chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
	closeErr  error

	// Received packets: the reader appends to rxCur and signals rxReady
	// when the batch was empty; the engine goroutine swaps rxCur for its
	// empty rxSpare and processes the batch. When rxCur is full the reader
	// waits for rxSpace (the kernel's socket buffer queues meanwhile).
	rxMu    sync.Mutex
	rxCur   *rxBatch
	rxSpare *rxBatch
	rxReady chan struct{}
	rxSpace chan struct{}

	c counters

	// Owned by the engine goroutine.
	flows      map[uint32]*sendFlow
	active     []*sendFlow
	rr         int
	rcv        map[rxKey]*recvFlow
	timers     timerHeap
	doneQ      []Completion
	rate       int64
	nicNext    Time
	backlogged bool
	burst      Time
	catchUp    Time
	sendBuf    []byte
	ackBuf     []byte
	txData     transport.Data
	// RTT estimates of finished flows, by destination and the latest of
	// any: a new flow's measured RTO starts from them (rttHintAge).
	rttHints map[netip.Addr]rttHint
	lastHint rttHint
}

// rttHint is a finished flow's RTT estimate.
type rttHint struct {
	srtt, rttvar, at Time
}

// rttHintAge is how long a finished flow's RTT estimate seeds new flows.
const rttHintAge = 10 * transport.Second

type sendFlow struct {
	spec    FlowSpec
	snd     *transport.Sender
	npkts   uint32
	start   Time
	timerAt Time
	active  bool
	done    bool
	sock    *net.UDPConn // marked socket; nil: by entropy
}

type rxKey struct {
	src  netip.Addr
	port uint16 // the sender's reply port: tells engines sharing an address apart
	flow uint32
}

type recvFlow struct {
	r           *transport.Receiver
	npkts       uint32
	mark        uint32
	sock        *net.UDPConn
	pkts        uint64
	first, last Time
}

type rxPkt struct {
	src netip.AddrPort
	n   int
	tos uint8
	p   Packet
}

type rxBatch struct{ pkts []rxPkt }

// New validates cfg and opens the engine's sockets.
func New(cfg Config) (*Engine, error) {
	if !cfg.Addr.IsValid() {
		return nil, errors.New("dataplane: Config.Addr is not set")
	}
	cfg.Addr = cfg.Addr.Unmap()
	if cfg.EntropyPorts == 0 {
		cfg.EntropyPorts = defaultEntropyPorts
	}
	switch {
	case cfg.EntropyPorts < 1 || cfg.EntropyPorts > 4096:
		return nil, fmt.Errorf("dataplane: EntropyPorts %d out of range [1, 4096]", cfg.EntropyPorts)
	case cfg.Port < 0 || cfg.Port+cfg.EntropyPorts > 65535:
		return nil, fmt.Errorf("dataplane: ports %d..%d out of range", cfg.Port, cfg.Port+cfg.EntropyPorts)
	case cfg.RateBps < 0:
		return nil, fmt.Errorf("dataplane: negative RateBps %d", cfg.RateBps)
	case cfg.FlowTimeout < 0:
		return nil, fmt.Errorf("dataplane: negative FlowTimeout %v", cfg.FlowTimeout)
	}
	e := &Engine{cfg: cfg, v6: cfg.Addr.Is6(), nsFD: -1, logf: cfg.Logf}
	if e.logf == nil {
		e.logf = func(string, ...any) {}
	}
	maxUDP := 65507
	if e.v6 {
		maxUDP = 65527
	}
	p := cfg.Params
	if p.MTU == 0 {
		p = transport.DefaultParams()
		p.HeaderBytes, p.AckBytes, p.Entropies = 0, 0, 0
	}
	if p.Entropies == 0 {
		p.Entropies = uint32(cfg.EntropyPorts)
	}
	data, ack := WireHeaderBytes(e.v6)
	if p.HeaderBytes == 0 {
		p.HeaderBytes = data
	}
	if p.AckBytes == 0 {
		p.AckBytes = ack
	}
	p.MeasureRTO = !cfg.ModelRTO
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("dataplane: transport params: %w", err)
	}
	if DataHeaderLen+p.MTU > maxUDP {
		return nil, fmt.Errorf("dataplane: MTU %d + header %d exceeds the largest UDP payload (%d)", p.MTU, DataHeaderLen, maxUDP)
	}
	e.params = p
	e.cfg.Params = p
	e.rparams = p
	e.rparams.AckEvery, e.rparams.AckEveryBytes, e.rparams.AckDelay, e.rparams.GoBackN = 0, 0, 0, false
	e.ackOOB = notECTOOB(e.v6)
	e.rate = cfg.RateBps
	if e.rate > 0 {
		pkt := Time(p.MTU+p.HeaderBytes) * 8 * transport.Second / e.rate
		e.burst = 2 * pkt
		e.catchUp = max(e.burst, catchUpMax)
	}
	if cfg.Netns != "" {
		fd, err := unix.Open(cfg.Netns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("dataplane: open netns %s: %w", cfg.Netns, err)
		}
		e.nsFD = fd
	}
	if err := e.openSockets(); err != nil {
		if e.nsFD >= 0 {
			unix.Close(e.nsFD)
		}
		return nil, err
	}
	e.port = uint16(e.cfg.Port)
	e.local = netip.AddrPortFrom(cfg.Addr, e.port)
	e.t0 = time.Now()
	e.marks = map[uint32]*net.UDPConn{}
	e.markWarn = map[uint32]bool{}
	e.used = map[uint32]struct{}{}
	e.wake = make(chan struct{}, 1)
	e.out = make(chan Completion, completionBuf)
	e.closing = make(chan struct{})
	e.stopped = make(chan struct{})
	e.rxCur = &rxBatch{pkts: make([]rxPkt, 0, maxBatch)}
	e.rxSpare = &rxBatch{pkts: make([]rxPkt, 0, maxBatch)}
	e.rxReady = make(chan struct{}, 1)
	e.rxSpace = make(chan struct{}, 1)
	e.flows = map[uint32]*sendFlow{}
	e.rcv = map[rxKey]*recvFlow{}
	e.rttHints = map[netip.Addr]rttHint{}
	e.sendBuf = make([]byte, DataHeaderLen+p.MTU)
	e.ackBuf = make([]byte, AckHeaderLen)
	return e, nil
}

// openSockets binds the main and entropy sockets; with Port 0 it searches a
// free block of consecutive ports.
func (e *Engine) openSockets() error {
	if e.cfg.Port != 0 {
		return e.openBlock(e.cfg.Port)
	}
	var last error
	for range 64 {
		// The kernel picks a free main port; the block above it must be free too.
		c, err := e.listen(0, sockMain, 0)
		if err != nil {
			return err
		}
		base := c.LocalAddr().(*net.UDPAddr).Port
		c.Close()
		if base+e.cfg.EntropyPorts > 65535 {
			continue
		}
		err = e.openBlock(base)
		if err == nil {
			e.cfg.Port = base
			return nil
		}
		if !errors.Is(err, unix.EADDRINUSE) {
			return err
		}
		last = err
	}
	return fmt.Errorf("dataplane: no free block of %d ports on %s: %w", 1+e.cfg.EntropyPorts, e.cfg.Addr, last)
}

func (e *Engine) openBlock(base int) error {
	m, err := e.listen(base, sockMain, 0)
	if err != nil {
		return err
	}
	data := make([]*net.UDPConn, 0, e.cfg.EntropyPorts)
	for i := range e.cfg.EntropyPorts {
		c, err := e.listen(base+1+i, sockData, 0)
		if err != nil {
			m.Close()
			for _, c := range data {
				c.Close()
			}
			return err
		}
		data = append(data, c)
	}
	e.main, e.data = m, data
	return nil
}

// markSocket returns the socket for path class mark, opening it on first use.
func (e *Engine) markSocket(mark uint32) (*net.UDPConn, error) {
	e.marksMu.Lock()
	defer e.marksMu.Unlock()
	if c := e.marks[mark]; c != nil {
		return c, nil
	}
	if e.marks == nil {
		return nil, ErrClosed
	}
	c, err := e.listen(0, sockMark, mark)
	if err != nil {
		return nil, err
	}
	e.marks[mark] = c
	return c, nil
}

// LocalAddr returns the main address and port: the Dst peers use.
func (e *Engine) LocalAddr() netip.AddrPort { return e.local }

// Params returns the transport parameters in effect (after defaults).
func (e *Engine) Params() transport.Params { return e.params }

// Stats returns a snapshot of the counters.
func (e *Engine) Stats() Stats { return e.c.snapshot() }

// Completions delivers one Completion per started flow. It is closed when
// Run returns (or by Close when Run never ran).
func (e *Engine) Completions() <-chan Completion { return e.out }

// StartFlow queues a flow to start. It is safe from any goroutine. Flow IDs
// are unique for the lifetime of the engine (receivers remember them).
func (e *Engine) StartFlow(f FlowSpec) error {
	f.Dst = netip.AddrPortFrom(f.Dst.Addr().Unmap(), f.Dst.Port())
	switch {
	case !f.Dst.Addr().IsValid() || f.Dst.Port() == 0:
		return fmt.Errorf("dataplane: flow %d: invalid destination %v", f.ID, f.Dst)
	case f.Dst.Addr().Is6() != e.v6:
		return fmt.Errorf("dataplane: flow %d: destination %v is not in the address family of %v", f.ID, f.Dst, e.cfg.Addr)
	case f.Size < 0:
		return fmt.Errorf("dataplane: flow %d: negative size %d", f.ID, f.Size)
	case f.Size/int64(e.params.MTU) >= 1<<31:
		return fmt.Errorf("dataplane: flow %d: size %d needs too many packets", f.ID, f.Size)
	case f.BaseRTT <= 0:
		return fmt.Errorf("dataplane: flow %d: BaseRTT must be positive", f.ID)
	case f.RateBps < 0:
		return fmt.Errorf("dataplane: flow %d: negative RateBps", f.ID)
	}
	if f.RateBps == 0 {
		f.RateBps = e.cfg.RateBps
	}
	if f.RateBps == 0 {
		return fmt.Errorf("dataplane: flow %d: no path rate (set FlowSpec.RateBps or Config.RateBps)", f.ID)
	}
	if f.Mark != 0 {
		if _, err := e.markSocket(f.Mark); err != nil {
			return fmt.Errorf("dataplane: flow %d: %w", f.ID, err)
		}
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	if _, dup := e.used[f.ID]; dup {
		e.mu.Unlock()
		return fmt.Errorf("dataplane: flow ID %d already used", f.ID)
	}
	e.used[f.ID] = struct{}{}
	e.cmds = append(e.cmds, f)
	e.mu.Unlock()
	e.notify()
	return nil
}

// Receivers returns the state of every receiving flow. The engine goroutine
// answers, so Run must be running (or have returned).
func (e *Engine) Receivers(ctx context.Context) ([]ReceiverInfo, error) {
	ch := make(chan []ReceiverInfo, 1)
	e.mu.Lock()
	e.queries = append(e.queries, ch)
	e.mu.Unlock()
	e.notify()
	select {
	case r := <-ch:
		return r, nil
	case <-e.stopped:
		// Run has returned: its state is ours to read.
		return e.receivers(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (e *Engine) notify() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Close stops Run, closes every socket and waits for Run to return.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() {
		e.mu.Lock()
		e.closed = true
		started := e.started
		e.mu.Unlock()
		close(e.closing)
		if started {
			<-e.stopped
		} else {
			close(e.out)
		}
		var errs []error
		add := func(err error) {
			if err != nil && !isClosed(err) {
				errs = append(errs, err)
			}
		}
		add(e.main.Close())
		for _, c := range e.data {
			add(c.Close())
		}
		e.marksMu.Lock()
		for _, c := range e.marks {
			add(c.Close())
		}
		e.marks = nil
		e.marksMu.Unlock()
		if e.nsFD >= 0 {
			add(unix.Close(e.nsFD))
		}
		e.closeErr = errors.Join(errs...)
	})
	return e.closeErr
}

// now is the transport time: picoseconds since the engine was created.
func (e *Engine) now() Time { return Time(time.Since(e.t0)) * 1000 }

func (e *Engine) wall(t Time) time.Time { return e.t0.Add(time.Duration(t / 1000)) }

// Run runs the engine until ctx is done (returning ctx.Err()) or Close is
// called (returning nil). It may be called once.
func (e *Engine) Run(ctx context.Context) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	if e.started {
		e.mu.Unlock()
		return errors.New("dataplane: Run called twice")
	}
	e.started = true
	e.mu.Unlock()
	defer close(e.stopped)

	stopRead := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.reader(stopRead)
	}()
	err := e.loop(ctx)
	close(stopRead)
	_ = e.main.SetReadDeadline(time.Now())
	wg.Wait()
	e.shutdown()
	return err
}

// shutdown fails the flows still running or queued and closes Completions.
func (e *Engine) shutdown() {
	now := e.now()
	for _, f := range e.flows {
		e.complete(f, now, ErrStopped)
	}
	e.mu.Lock()
	queued := e.cmds
	e.cmds = nil
	e.mu.Unlock()
	for _, spec := range queued {
		e.c.flowsFailed.Add(1)
		e.doneQ = append(e.doneQ, Completion{ID: spec.ID, Start: e.wall(now), End: e.wall(now), Err: ErrStopped})
	}
	lost := 0
	for _, c := range e.doneQ {
		select {
		case e.out <- c:
		default:
			lost++
		}
	}
	if lost > 0 {
		e.logf("dataplane: %d completions lost: the Completions channel was not drained", lost)
	}
	e.doneQ = nil
	close(e.out)
}

func (e *Engine) loop(ctx context.Context) error {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		e.takeCommands()
		e.takeRx()
		e.deliverCompletions()
		now := e.now()
		e.runTimers(now)
		wakeAt, more := e.sendPass(now)
		if !more {
			if t := e.timers.next(); t > 0 && (wakeAt == 0 || t < wakeAt) {
				wakeAt = t
			}
		}
		var wait Time = -1 // block without a deadline
		switch {
		case more:
			wait = 0
		case wakeAt > 0:
			wait = max(wakeAt-e.now(), 0)
		}
		if wait >= 0 && wait < dueSlack {
			// Busy, or due within a few microseconds, far below what a Go
			// timer can sleep: go round again. (Yielding here would keep
			// this goroutine runnable and starve the network poller.)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-e.closing:
				return nil
			default:
			}
			continue
		}
		armed := wait > 0
		if armed {
			timer.Reset(time.Duration(wait / 1000))
		}
		var outc chan Completion
		var first Completion
		if len(e.doneQ) > 0 {
			outc, first = e.out, e.doneQ[0]
		}
		select {
		case <-e.rxReady:
			e.takeRx()
		case <-e.wake:
		case <-timer.C:
			armed = false
		case outc <- first:
			e.popCompletion()
		case <-ctx.Done():
			return ctx.Err()
		case <-e.closing:
			return nil
		}
		if armed {
			timer.Stop()
		}
	}
}

func (e *Engine) deliverCompletions() {
	for len(e.doneQ) > 0 {
		select {
		case e.out <- e.doneQ[0]:
			e.popCompletion()
		default:
			return
		}
	}
}

func (e *Engine) popCompletion() {
	e.doneQ[0] = Completion{}
	e.doneQ = e.doneQ[1:]
	if len(e.doneQ) == 0 {
		e.doneQ = e.doneQ[:0:0]
	}
}

// takeCommands starts queued flows and answers queries.
func (e *Engine) takeCommands() {
	e.mu.Lock()
	if len(e.cmds) == 0 && len(e.queries) == 0 {
		e.mu.Unlock()
		return
	}
	cmds := e.cmds
	e.cmds = e.spare[:0]
	queries := e.queries
	e.queries = nil
	e.mu.Unlock()
	now := e.now()
	for i := range cmds {
		e.startFlow(cmds[i], now)
		cmds[i] = FlowSpec{}
	}
	e.mu.Lock()
	e.spare = cmds[:0]
	e.mu.Unlock()
	if len(queries) > 0 {
		r := e.receivers()
		for _, q := range queries {
			q <- r
		}
	}
}

func (e *Engine) receivers() []ReceiverInfo {
	r := make([]ReceiverInfo, 0, len(e.rcv))
	for k, v := range e.rcv {
		r = append(r, ReceiverInfo{Src: netip.AddrPortFrom(k.src, k.port), Flow: k.flow, Mark: v.mark,
			Packets: v.npkts, Received: v.pkts, Bytes: v.r.Bytes(), Done: v.r.Done(),
			First: e.wall(v.first), Last: e.wall(v.last)})
	}
	return r
}

func (e *Engine) startFlow(spec FlowSpec, now Time) {
	e.c.flowsStarted.Add(1)
	path := transport.Path{BaseRTT: spec.BaseRTT, RateBps: spec.RateBps}
	f := &sendFlow{spec: spec, start: now}
	f.snd = transport.NewSender(&e.params, transport.Flow{ID: spec.ID, Size: spec.Size, Path: path})
	f.npkts = f.snd.Packets()
	// Without samples of its own, a flow's RTO starts from the estimate of
	// a recent flow to the same host, else of any host: this host's delays
	// are what the fabric model misses.
	h, ok := e.rttHints[spec.Dst.Addr()]
	if !ok {
		h = e.lastHint
	}
	if h.srtt > 0 && now-h.at <= rttHintAge {
		f.snd.SeedRTT(h.srtt, h.rttvar)
	}
	if spec.Mark != 0 {
		sock, err := e.markSocket(spec.Mark)
		if err != nil {
			e.complete(f, now, err)
			return
		}
		f.sock = sock
	}
	e.flows[spec.ID] = f
	if e.cfg.FlowTimeout > 0 {
		e.timers.push(timerEnt{at: now + Time(e.cfg.FlowTimeout)*1000, f: f, deadline: true})
	}
	e.activate(f)
}

func (e *Engine) activate(f *sendFlow) {
	if !f.active && !f.done {
		f.active = true
		e.active = append(e.active, f)
	}
}

// complete finishes f: err nil when every packet was acknowledged.
func (e *Engine) complete(f *sendFlow, now Time, err error) {
	if f.done {
		return
	}
	f.done = true
	if e.flows[f.spec.ID] == f {
		delete(e.flows, f.spec.ID)
	}
	st := f.snd.Stats
	if est := f.snd.RTT(); est != nil && est.Samples() > 0 {
		h := rttHint{srtt: est.SRTT(), rttvar: est.RTTVar(), at: now}
		e.rttHints[f.spec.Dst.Addr()] = h
		e.lastHint = h
	}
	end := now
	if err == nil {
		end = st.Completed
		e.c.flowsCompleted.Add(1)
	} else {
		e.c.flowsFailed.Add(1)
	}
	e.doneQ = append(e.doneQ, Completion{ID: f.spec.ID, Start: e.wall(f.start), End: e.wall(end),
		FCT: time.Duration((end - f.start) / 1000), Stats: st, Err: err})
	// The flow may linger in the timer heap (until its FlowTimeout) and in
	// the active list; its per-packet state is not needed any more.
	f.snd = nil
}

// sendPass sends what the windows and the NIC pacing allow, round robin over
// the flows that may send. It returns when pacing next allows a packet (0:
// nothing waits for the NIC) and whether it stopped early with more to send.
func (e *Engine) sendPass(now Time) (wakeAt Time, more bool) {
	if e.rate > 0 {
		// Token bucket: idle credit is capped at a small burst; after a
		// late wake-up with packets waiting, the missed time is caught up.
		floor := now - e.burst
		if e.backlogged {
			floor = now - e.catchUp
		}
		e.nicNext = max(e.nicNext, floor)
	}
	e.backlogged = false
	d := &e.txData // a field: the DropData hook would make a local escape
	sent := 0
	for len(e.active) > 0 {
		if e.rate > 0 && e.nicNext > now {
			e.backlogged = true
			return e.nicNext, false
		}
		if sent == maxPerPass {
			e.backlogged = true // keep the catch-up credit for the next pass
			return 0, true
		}
		if e.rr >= len(e.active) {
			e.rr = 0
		}
		f := e.active[e.rr]
		var size int64
		if !f.done {
			size = f.snd.NextPacket(now, d)
		}
		if size == 0 {
			f.active = false
			last := len(e.active) - 1
			copy(e.active[e.rr:], e.active[e.rr+1:])
			e.active[last] = nil
			e.active = e.active[:last]
			continue
		}
		e.rr++
		sent++
		e.transmit(f, d)
		// A socket write takes microseconds: keep timestamps honest.
		now = e.now()
		if e.rate > 0 {
			e.nicNext += size * 8 * transport.Second / e.rate
		}
		if f.timerAt == 0 {
			e.armTimer(f)
		}
	}
	return 0, false
}

func (e *Engine) transmit(f *sendFlow, d *transport.Data) {
	if e.cfg.DropData != nil && e.cfg.DropData(d) {
		e.c.dataDropped.Add(1)
		return
	}
	h := DataHeader{RunID: e.cfg.RunID, Flow: d.Flow, PSN: d.PSN, NPkts: f.npkts, Payload: d.Payload,
		Entropy: d.Entropy, ReplyPort: e.port, Mark: f.spec.Mark, SentAt: d.SentAt, Retx: d.Retx,
		AckRoute: d.AckRoute, AckRouteValid: d.AckRouteValid}
	n, err := EncodeData(e.sendBuf, &h)
	if err != nil {
		// Cannot happen: the sender respects the MTU the buffer was sized for.
		e.c.sendErrors.Add(1)
		return
	}
	sock := f.sock
	if sock == nil {
		sock = e.data[int(d.Entropy)%len(e.data)]
	}
	if _, err := sock.WriteToUDPAddrPort(e.sendBuf[:n], f.spec.Dst); err != nil {
		// The packet is lost; the transport's timeout recovers it.
		e.sendError(err)
		return
	}
	e.c.dataSent.Add(1)
	if d.Retx {
		e.c.dataRetx.Add(1)
	}
	e.c.dataBytesSent.Add(uint64(n))
}

func (e *Engine) sendError(err error) {
	e.c.sendErrors.Add(1)
	if !e.sendWarn.Swap(true) {
		e.logf("dataplane: send: %v (further send errors are only counted)", err)
	}
}

func (e *Engine) armTimer(f *sendFlow) {
	if t := f.snd.NextTimeout(); t > 0 {
		f.timerAt = t
		e.timers.push(timerEnt{at: t, f: f})
	}
}

func (e *Engine) runTimers(now Time) {
	for len(e.timers) > 0 && e.timers[0].at <= now {
		t := e.timers.pop()
		f := t.f
		if f.done {
			continue
		}
		if t.deadline {
			st := f.snd.Stats
			e.complete(f, now, fmt.Errorf("dataplane: flow %d to %v abandoned after %v (FlowTimeout): %d packets, %d sent, %d retransmitted, %d timeouts",
				f.spec.ID, f.spec.Dst, e.cfg.FlowTimeout, f.npkts, st.Sent, st.Retx, st.Timeouts))
			continue
		}
		if f.timerAt != t.at {
			continue
		}
		f.timerAt = 0
		if n := f.snd.OnTimeout(now); n > 0 {
			e.c.timeouts.Add(uint64(n))
			e.activate(f)
		}
		if f.timerAt == 0 {
			e.armTimer(f)
		}
	}
}

// takeRx processes the packets the reader has queued.
func (e *Engine) takeRx() {
	e.rxMu.Lock()
	b := e.rxCur
	if len(b.pkts) == 0 {
		e.rxMu.Unlock()
		return
	}
	full := len(b.pkts) == cap(b.pkts)
	e.rxCur, e.rxSpare = e.rxSpare, nil
	e.rxMu.Unlock()
	if full {
		select {
		case e.rxSpace <- struct{}{}:
		default:
		}
	}
	e.c.rxBatches.Add(1)
	now := e.now()
	for i := range b.pkts {
		p := &b.pkts[i]
		if p.p.Type == TypeData {
			e.onData(p, now)
		} else {
			e.onAck(&p.p.Ack, now)
		}
	}
	clear(b.pkts)
	b.pkts = b.pkts[:0]
	e.rxSpare = b
}

func (e *Engine) onAck(h *AckHeader, now Time) {
	f := e.flows[h.Flow]
	if f == nil {
		e.c.staleAcks.Add(1)
		return
	}
	if h.Nack {
		e.c.nacksRecv.Add(1)
	} else {
		e.c.acksRecv.Add(1)
		if h.ECN {
			e.c.ecnAcks.Add(1)
		}
	}
	a := h.Transport()
	spurious := f.snd.Stats.Spurious
	f.snd.OnAck(now, &a)
	if n := f.snd.Stats.Spurious - spurious; n > 0 {
		e.c.spurious.Add(n)
	}
	if f.snd.Done() {
		e.complete(f, now, nil)
		return
	}
	if !f.active && f.snd.CanSend(now) {
		e.activate(f)
	}
}

func (e *Engine) onData(p *rxPkt, now Time) {
	h := &p.p.Data
	if h.ReplyPort == 0 {
		e.c.badPackets.Add(1)
		return
	}
	key := rxKey{src: p.src.Addr(), port: h.ReplyPort, flow: h.Flow}
	r := e.rcv[key]
	if r == nil || r.npkts != h.NPkts {
		r = &recvFlow{r: transport.NewReceiverFor(&e.rparams, h.Flow, h.NPkts), npkts: h.NPkts, mark: h.Mark, first: now}
		if h.Mark != 0 {
			if s, err := e.markSocket(h.Mark); err == nil {
				r.sock = s
			} else {
				// Its ACKs leave by their route, as unmarked ones do.
				e.c.markErrors.Add(1)
				e.markWarning(h.Mark, err)
			}
		}
		e.rcv[key] = r
		e.c.recvFlows.Add(1)
	}
	r.pkts++
	r.last = now
	e.c.dataRecv.Add(1)
	e.c.dataBytesRecv.Add(uint64(p.n))
	ecn := p.tos&tosCE == tosCE
	if ecn {
		e.c.ecnMarked.Add(1)
	}
	if h.Trimmed {
		e.c.trimmed.Add(1)
	}
	d := h.Transport()
	before, wasDone := r.r.Bytes(), r.r.Done()
	ack, complete := r.r.OnData(&d, ecn, h.Trimmed)
	if got := r.r.Bytes() - before; got > 0 {
		e.c.payloadRecv.Add(uint64(got))
	} else if !h.Trimmed && (d.Payload > 0 || wasDone) {
		// Only zero-size flows have empty packets, and they have one.
		e.c.dataDup.Add(1)
	}
	if complete {
		e.c.recvFlowsDone.Add(1)
	}
	ah := AckHeader{RunID: e.cfg.RunID, Flow: ack.Flow, PSN: ack.PSN, CumAck: ack.CumAck, Entropy: ack.Entropy,
		Route: ack.Route, Mark: h.Mark, EchoTS: ack.EchoTS, ECN: ack.ECN, Nack: ack.Nack}
	n, _ := EncodeAck(e.ackBuf, &ah)
	to := netip.AddrPortFrom(key.src, h.ReplyPort)
	if r.sock != nil {
		// A marked flow: policy routing steers its ACKs, not the route.
		if _, err := r.sock.WriteToUDPAddrPort(e.ackBuf[:n], to); err != nil {
			e.sendError(err)
			return
		}
	} else {
		i := int(ack.Route) % len(e.data)
		if e.cfg.DropAck != nil && e.cfg.DropAck(uint16(e.cfg.Port+1+i), ack) {
			e.c.acksDropped.Add(1)
			return
		}
		if _, _, err := e.data[i].WriteMsgUDPAddrPort(e.ackBuf[:n], e.ackOOB, to); err != nil {
			e.sendError(err)
			return
		}
	}
	if ack.Nack {
		e.c.nacksSent.Add(1)
	} else {
		e.c.acksSent.Add(1)
	}
	if ack.ECN {
		e.c.ecnAcksSent.Add(1)
	}
}

func (e *Engine) markWarning(mark uint32, err error) {
	e.marksMu.Lock()
	warned := e.markWarn[mark]
	if e.markWarn != nil {
		e.markWarn[mark] = true
	}
	e.marksMu.Unlock()
	if !warned {
		e.logf("dataplane: ACKs of mark %d leave from the entropy sockets: %v", mark, err)
	}
}

// reader receives datagrams on the main socket, decodes them and queues
// them for the engine goroutine, waking it when the queue was empty. While
// the engine is busy, packets accumulate into a batch.
func (e *Engine) reader(stop <-chan struct{}) {
	buf := make([]byte, DataHeaderLen+e.params.MTU)
	oob := make([]byte, tosOOBLen)
	var pk rxPkt
	for {
		n, oobn, flags, src, err := e.main.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
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
				e.logf("dataplane: receive on %v: %v (further receive errors are only counted)", e.local, err)
			}
			time.Sleep(time.Millisecond) // a persistent error must not spin
			continue
		}
		if flags&unix.MSG_TRUNC != 0 {
			e.c.badPackets.Add(1)
			continue
		}
		if err := Decode(buf[:n], &pk.p); err != nil {
			e.c.badPackets.Add(1)
			continue
		}
		run := pk.p.Ack.RunID
		if pk.p.Type == TypeData {
			run = pk.p.Data.RunID
		}
		if run != e.cfg.RunID {
			e.c.foreignRun.Add(1)
			continue
		}
		pk.src, pk.n = src, n
		pk.tos, _ = parseTOS(oob[:oobn])
		e.rxMu.Lock()
		for len(e.rxCur.pkts) == cap(e.rxCur.pkts) {
			e.rxMu.Unlock()
			select {
			case <-e.rxSpace:
			case <-stop:
				return
			}
			e.rxMu.Lock()
		}
		e.rxCur.pkts = append(e.rxCur.pkts, pk)
		first := len(e.rxCur.pkts) == 1
		e.rxMu.Unlock()
		if first {
			select {
			case e.rxReady <- struct{}{}:
			default:
			}
		}
	}
}

// timerHeap is a min-heap of timer entries. Entries are validated lazily:
// an RTO entry is live only while its flow's timerAt equals its time.
type timerEnt struct {
	at       Time
	f        *sendFlow
	deadline bool // FlowTimeout rather than the transport's RTO
}

type timerHeap []timerEnt

func (h timerHeap) next() Time {
	if len(h) == 0 {
		return 0
	}
	return h[0].at
}

func (h *timerHeap) push(t timerEnt) {
	*h = append(*h, t)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].at <= s[i].at {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *timerHeap) pop() timerEnt {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s[last] = timerEnt{}
	s = s[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(s) {
			break
		}
		m := l
		if r := l + 1; r < len(s) && s[r].at < s[l].at {
			m = r
		}
		if s[i].at <= s[m].at {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
