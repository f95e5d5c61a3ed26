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
// main port.
//
// A host with several NIC ports, one per plane (Config.Planes), has this
// set of sockets on every port's address; a flow given the peer's plane
// addresses (FlowSpec.PlaneDsts) is spread over the planes by the
// transport's plane load balancer, each packet sent on its plane's port
// and acknowledged on it.
//
// The send path and the receive path run on their own goroutines: the
// sending goroutine (locked to its thread, whose timer slack follows the
// pacing rate) owns every sender, its timers and the NIC pacing, and sends
// with sendmmsg, several equal-sized datagrams to one destination as one
// UDP GSO message where the kernel has UDP_SEGMENT; a receiving goroutine
// per plane reads with recvmmsg (trains of datagrams as one UDP GRO buffer
// where the kernel has UDP_GRO), runs the receivers, answers each data
// packet with its ACK (batched the same way) and hands the ACKs it
// received to the sending goroutine with their kernel receive timestamps.
// Nothing is allocated per packet.
package dataplane

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fabricbench/fabricbench/agents/transport"
	"golang.org/x/sys/unix"
)

// Time is transport time: picoseconds since the engine was created.
type Time = transport.Time

// Config configures an Engine.
type Config struct {
	// Addr is the local data-plane address to bind (IPv4 or IPv6): the
	// address of the NIC port of plane 0.
	Addr netip.Addr
	// Planes are the addresses of the host's further NIC ports, one per
	// further plane (plane 1, 2, ...; at most transport.MaxPlanes in all),
	// in Addr's family. The engine opens the same ports on each. A flow
	// with the peer's plane addresses (FlowSpec.PlaneDsts) is spread over
	// every plane by the plane load balancer (Params.PlaneMode); others
	// stay on plane 0.
	Planes []netip.Addr
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
	// RateBps paces all data of this host (a token bucket per NIC port,
	// shared by every flow on it, served round robin). 0 leaves pacing to
	// the kernel and the NIC.
	RateBps int64
	// Params are the transport parameters of every flow. A zero MTU selects
	// transport.DefaultParams. Zero Entropies becomes EntropyPorts; zero
	// HeaderBytes and AckBytes become the real per-packet overhead on an
	// Ethernet link (wire header + UDP + IP + Ethernet), so pacing accounts
	// for what the link carries. Planes is set from Config.Planes.
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
	// DisableGSO and DisableGRO turn UDP segmentation and receive
	// offload off (to compare, or on a kernel where they misbehave); by
	// default the engine uses them where the kernel has them.
	DisableGSO, DisableGRO bool
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
	// Dst is the peer engine's main Addr:Port (its plane-0 address).
	Dst  netip.AddrPort
	Size int64 // payload bytes
	// BaseRTT is the unloaded round-trip time estimate (ps). When flows to
	// the same host measured a larger fabric RTT in the last 10 s (kernel
	// timestamps, without the hosts' delays), the flow starts from that.
	BaseRTT transport.Time
	// RateBps is the path bottleneck for transport.Path (per plane); 0
	// uses Config.RateBps.
	RateBps int64
	// Mark 0 is a normal ECMP flow. Mark > 0 is a path class: data leaves
	// from a socket with SO_MARK=Mark (policy routing on the host steers it)
	// and the receiver sends the flow's ACKs from a socket with the same mark.
	// Entropy does not select the socket of marked flows.
	Mark uint32
	// PlaneDsts are the peer's addresses on planes 1, 2, ... (its main
	// port is Dst's on every plane). With them the flow is spread over
	// 1+len(PlaneDsts) planes, which must be the engine's number of
	// planes; without them it stays on plane 0.
	PlaneDsts []netip.Addr
}

// Completion reports a finished (or abandoned) flow.
type Completion struct {
	ID         uint32
	Start, End time.Time
	// FCT is the time from the start of the flow to the ACK that completed
	// it (to End when the flow was abandoned).
	FCT   time.Duration
	Stats transport.SenderStats
	// MinRTT is the flow's smallest round trip through the fabric,
	// measured from kernel timestamps without the hosts' delays (0
	// without an ACK). LoopRTT is its smallest whole round trip, the
	// hosts' delays included (what its window must cover), and SRTT the
	// smoothed one at the end (both 0 with Config.ModelRTO).
	MinRTT, LoopRTT, SRTT time.Duration
	// MaxCwnd is the largest congestion window the sender reached (bytes,
	// all planes).
	MaxCwnd int64
	Err     error
}

// ReceiverInfo describes one receiving flow.
type ReceiverInfo struct {
	Src         netip.AddrPort // sender address (on the lowest plane its packets came on) and its main (reply) port
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
	dueSlack            = 5 * transport.Microsecond // shorter waits are not slept
	// catchUpMax is the pacing credit kept across a late wake-up while data
	// waits for the NIC: the long-run rate stays exact when a wake-up is late.
	catchUpMax = 2 * transport.Millisecond
	// paceGrain is the pacing batch: at a rate where one packet takes
	// less, a batch of packets (at most one GSO message) leaves at once
	// every batch time, so the sending thread sleeps about this long
	// between batches (nanosleep with a timer slack of a tenth of it)
	// instead of once per packet: at 1 Gb/s with 9 KB packets (72 us
	// each) two per batch, at 10 Gb/s a GSO message of 7. At 200 Mb/s a
	// packet takes 360 us: one per batch, as without batching. (50 us
	// paced 1 Gb/s as well, for 1.7 times the CPU time.)
	paceGrain = 200 * transport.Microsecond
	// sleepMax is the longest wait slept with nanosleep on the sending
	// thread (Go timers wake up about 1 ms late; longer waits use them
	// and can be interrupted by ACKs and commands).
	sleepMax = 2 * transport.Millisecond
	// postponeMax bounds how long a due retransmission timeout waits for
	// ACKs the receiving goroutine has not handed over yet.
	postponeMax   = 10 * transport.Millisecond
	completionBuf = 4096
	// maxAckQueue is the most received ACKs waiting for the sending
	// goroutine; a receiving goroutine that finds it full waits.
	maxAckQueue = 1 << 16
)

// sock is one UDP socket with its raw connection for batched I/O.
type sock struct {
	conn *net.UDPConn
	rc   syscall.RawConn
	port uint16
}

func newSock(c *net.UDPConn) (*sock, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		c.Close()
		return nil, err
	}
	return &sock{conn: c, rc: rc, port: uint16(c.LocalAddr().(*net.UDPAddr).Port)}, nil
}

// portSet is one NIC port's (plane's) sockets and pacing.
type portSet struct {
	plane int
	addr  netip.Addr
	main  *sock
	data  []*sock
	// NIC pacing (sending goroutine).
	nicNext    Time
	limit      Time // this pass may send while nicNext <= limit
	open       bool // the pacing allows a batch this pass
	backlogged bool
	// The receiving goroutine: busy from a read that returned datagrams
	// until their ACKs are handed over; readAt is when that read was,
	// handed the read time of the last batch handed over, drained when a
	// read last found the socket empty. A due timeout waits while ACKs that
	// arrived before it may be on their way (acksInFlight).
	rxBusy    atomic.Bool
	rxReadAt  atomic.Int64
	rxHanded  atomic.Int64
	rxDrained atomic.Int64
	// Data packets queued to send and received on this plane.
	sentPkts, recvPkts atomic.Uint64
}

// Engine drives transport senders and receivers over UDP.
type Engine struct {
	cfg     Config
	params  transport.Params // multi-plane flows (Planes = planes) or all
	params1 transport.Params // single-plane flows of a multi-plane engine
	// rparams are the receivers' parameters: the engine's, acknowledging
	// every packet.
	rparams transport.Params
	v6      bool
	nsFD    int
	t0      time.Time
	local   netip.AddrPort
	port    uint16
	id      uint32
	logf    func(string, ...any)

	planes []*portSet

	marksMu  sync.Mutex
	marks    map[uint32]*sock
	markWarn map[uint32]bool

	// Offloads: GSO as probed and still working, GRO as granted.
	gsoProbe atomic.Bool
	gsoOff   atomic.Bool
	gro      atomic.Bool
	sndBuf   atomic.Int64
	rcvBuf   atomic.Int64
	// The sending goroutine's liveness (State): when it last went round
	// its loop, and since when it waits in a socket write (0: it does not).
	loopAt, writeSince atomic.Int64

	bufWarn  sync.Once
	gsoWarn  sync.Once
	sendWarn atomic.Bool
	recvWarn atomic.Bool

	// Commands from other goroutines.
	mu      sync.Mutex
	cmds    []FlowSpec
	queries []chan []FlowState // State, answered by the sending goroutine
	spare   []FlowSpec
	used    map[uint32]struct{}
	started bool
	closed  bool
	wake    chan struct{}

	out       chan Completion
	closing   chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
	closeErr  error

	// Received ACKs: the receiving goroutines append to ackCur and signal
	// ackReady when it was empty; the sending goroutine swaps it for its
	// empty ackSpare. When ackCur is full a receiving goroutine waits for
	// ackSpace (the kernel's socket buffer queues meanwhile).
	ackMu    sync.Mutex
	ackCur   []ackRec
	ackSpare []ackRec
	ackReady chan struct{}
	ackSpace chan struct{}

	// Receivers, run by the receiving goroutines.
	rcvMu sync.Mutex
	rcv   map[rxKey]*recvFlow

	c counters

	// Owned by the sending goroutine.
	flows    map[uint32]*sendFlow
	active   []*sendFlow
	rr       int
	timers   timerHeap
	doneQ    []Completion
	rate     int64
	burst    Time
	catchUp  Time
	ahead    Time // the pacing batch beyond the first packet
	run      int  // packets taken from one flow in a row (one GSO message)
	slackNs  int  // timer slack of the sending thread
	tx       *txBatch
	txData   transport.Data
	postpone Time // a due timeout waiting for ACKs in flight since
	// RTT estimates of finished flows, by destination and the latest of
	// any: a new flow's measured RTO starts from them (rttHintAge).
	rttHints map[netip.Addr]rttHint
	lastHint rttHint
	// The largest delay the hosts added to an ACK's round trip (the
	// receiver's hold and this host's wait) in the last rttHintAge, and
	// when it was seen.
	hostMax, hostAt Time
}

// rttHint is a finished flow's RTT estimate and its fabric's minimum RTT.
type rttHint struct {
	srtt, rttvar, min, at Time
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
	sock    *sock            // marked socket; nil: by entropy
	dst     []netip.AddrPort // per plane
	multi   bool             // spread over the planes
	pnext   int              // the plane to offer first
	minRTT  Time
	maxCwnd float64
}

type rxKey struct {
	sender uint32 // the sending engine's ID (several planes: several addresses)
	port   uint16 // the sender's reply port
	flow   uint32
}

type recvFlow struct {
	r           *transport.Receiver
	src         netip.AddrPort
	srcPlane    int // the plane src is on: the lowest a packet arrived on
	npkts       uint32
	mark        uint32
	sock        *sock
	pkts        uint64
	first, last Time
}

// ackRec is a received ACK on its way to the sending goroutine.
type ackRec struct {
	h     AckHeader
	rxAt  Time // kernel receive time, transport clock
	plane uint8
}

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
	case 1+len(cfg.Planes) > transport.MaxPlanes:
		return nil, fmt.Errorf("dataplane: %d planes, at most %d", 1+len(cfg.Planes), transport.MaxPlanes)
	}
	addrs := []netip.Addr{cfg.Addr}
	for i, a := range cfg.Planes {
		a = a.Unmap()
		switch {
		case !a.IsValid():
			return nil, fmt.Errorf("dataplane: Config.Planes[%d] is not set", i)
		case a.Is6() != cfg.Addr.Is6():
			return nil, fmt.Errorf("dataplane: plane %d address %v is not in the family of %v", i+1, a, cfg.Addr)
		}
		for _, b := range addrs {
			if a == b {
				return nil, fmt.Errorf("dataplane: plane %d address %v is already another plane's", i+1, a)
			}
		}
		addrs = append(addrs, a)
	}
	e := &Engine{cfg: cfg, v6: cfg.Addr.Is6(), nsFD: -1, logf: cfg.Logf}
	if e.logf == nil {
		e.logf = func(string, ...any) {}
	}
	var idb [4]byte
	for binary.BigEndian.Uint32(idb[:]) == 0 {
		_, _ = rand.Read(idb[:])
	}
	e.id = binary.BigEndian.Uint32(idb[:])
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
	p.Planes = 0
	if len(addrs) > 1 {
		p.Planes = len(addrs)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("dataplane: transport params: %w", err)
	}
	if DataHeaderLen+p.MTU > maxUDP {
		return nil, fmt.Errorf("dataplane: MTU %d + header %d exceeds the largest UDP payload (%d)", p.MTU, DataHeaderLen, maxUDP)
	}
	e.params = p
	e.params1 = p
	e.params1.Planes = 0
	e.cfg.Params = p
	e.rparams = p
	e.rparams.AckEvery, e.rparams.AckEveryBytes, e.rparams.AckDelay, e.rparams.GoBackN = 0, 0, 0, false
	e.rate = cfg.RateBps
	slot := DataHeaderLen + p.MTU
	e.run = max(1, min(gsoMaxSegments, gsoMaxBytes/slot))
	e.slackNs = int(paceGrain / 10 / transport.Nanosecond)
	if e.rate > 0 {
		pkt := Time(p.MTU+p.HeaderBytes) * 8 * transport.Second / e.rate
		batch := max(1, min(int(paceGrain/max(pkt, 1)), e.run))
		e.ahead = Time(batch-1) * pkt
		e.burst = max(2*pkt, Time(batch)*pkt)
		e.catchUp = max(e.burst, catchUpMax)
		e.slackNs = int(max(min(Time(batch)*pkt/10, paceGrain/10), transport.Microsecond) / transport.Nanosecond)
	}
	snd, rcv := bufferSizes(cfg.RateBps, 0, bufStall)
	e.sndBuf.Store(int64(snd))
	e.rcvBuf.Store(int64(rcv))
	if cfg.Netns != "" {
		fd, err := unix.Open(cfg.Netns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("dataplane: open netns %s: %w", cfg.Netns, err)
		}
		e.nsFD = fd
	}
	for i, a := range addrs {
		e.planes = append(e.planes, &portSet{plane: i, addr: a})
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
	e.marks = map[uint32]*sock{}
	e.markWarn = map[uint32]bool{}
	e.used = map[uint32]struct{}{}
	e.wake = make(chan struct{}, 1)
	e.out = make(chan Completion, completionBuf)
	e.closing = make(chan struct{})
	e.stopped = make(chan struct{})
	e.ackReady = make(chan struct{}, 1)
	e.ackSpace = make(chan struct{}, 1)
	e.ackCur = make([]ackRec, 0, 1024)
	e.ackSpare = make([]ackRec, 0, 1024)
	e.flows = map[uint32]*sendFlow{}
	e.rcv = map[rxKey]*recvFlow{}
	e.rttHints = map[netip.Addr]rttHint{}
	e.tx = newTxBatch(slot, max(16, min(256, (1<<20)/slot)), e.run, e.v6)
	return e, nil
}

// openSockets binds every plane's main and entropy sockets; with Port 0 it
// searches a free block of consecutive ports (free on every plane).
func (e *Engine) openSockets() error {
	if e.cfg.Port != 0 {
		return e.openBlocks(e.cfg.Port)
	}
	var last error
	for range 64 {
		// The kernel picks a free main port; the block above it must be free too.
		c, err := e.listen(e.cfg.Addr, 0, sockMain, 0)
		if err != nil {
			return err
		}
		base := c.LocalAddr().(*net.UDPAddr).Port
		c.Close()
		if base+e.cfg.EntropyPorts > 65535 {
			continue
		}
		err = e.openBlocks(base)
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

func (e *Engine) openBlocks(base int) error {
	for i, ps := range e.planes {
		if err := e.openBlock(ps, base); err != nil {
			for _, q := range e.planes[:i] {
				q.close()
			}
			return err
		}
	}
	return nil
}

func (e *Engine) openBlock(ps *portSet, base int) error {
	var opened []*sock
	fail := func(err error) error {
		for _, s := range opened {
			s.conn.Close()
		}
		return err
	}
	c, err := e.listen(ps.addr, base, sockMain, 0)
	if err != nil {
		return err
	}
	m, err := newSock(c)
	if err != nil {
		return err
	}
	opened = append(opened, m)
	data := make([]*sock, 0, e.cfg.EntropyPorts)
	for i := range e.cfg.EntropyPorts {
		c, err := e.listen(ps.addr, base+1+i, sockData, 0)
		if err != nil {
			return fail(err)
		}
		s, err := newSock(c)
		if err != nil {
			return fail(err)
		}
		opened = append(opened, s)
		data = append(data, s)
	}
	ps.main, ps.data = m, data
	return nil
}

func (ps *portSet) close() []error {
	var errs []error
	add := func(err error) {
		if err != nil && !isClosed(err) {
			errs = append(errs, err)
		}
	}
	if ps.main != nil {
		add(ps.main.conn.Close())
	}
	for _, s := range ps.data {
		add(s.conn.Close())
	}
	return errs
}

// markSocket returns the socket for path class mark, opening it on first use.
func (e *Engine) markSocket(mark uint32) (*sock, error) {
	e.marksMu.Lock()
	defer e.marksMu.Unlock()
	if c := e.marks[mark]; c != nil {
		return c, nil
	}
	if e.marks == nil {
		return nil, ErrClosed
	}
	c, err := e.listen(e.cfg.Addr, 0, sockMark, mark)
	if err != nil {
		return nil, err
	}
	s, err := newSock(c)
	if err != nil {
		return nil, err
	}
	e.marks[mark] = s
	return s, nil
}

// LocalAddr returns the main address and port: the Dst peers use.
func (e *Engine) LocalAddr() netip.AddrPort { return e.local }

// PlaneAddrs returns the data addresses of every plane, plane 0 first.
func (e *Engine) PlaneAddrs() []netip.Addr {
	out := make([]netip.Addr, len(e.planes))
	for i, ps := range e.planes {
		out[i] = ps.addr
	}
	return out
}

// PlaneCounts returns the data packets sent (queued for the NIC,
// retransmissions included) and received on each plane, plane 0 first.
func (e *Engine) PlaneCounts() (sent, recv []uint64) {
	for _, ps := range e.planes {
		sent = append(sent, ps.sentPkts.Load())
		recv = append(recv, ps.recvPkts.Load())
	}
	return sent, recv
}

// ID returns the engine's sender ID, carried in its data packets.
func (e *Engine) ID() uint32 { return e.id }

// Params returns the transport parameters in effect (after defaults).
func (e *Engine) Params() transport.Params { return e.params }

// Offloads reports whether the engine sends with UDP GSO and receives
// with UDP GRO (the kernel has them, they are not disabled, and GSO has
// not failed).
func (e *Engine) Offloads() (gso, gro bool) {
	return e.gsoProbe.Load() && !e.gsoOff.Load(), e.gro.Load()
}

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
	case len(f.PlaneDsts) > 0 && 1+len(f.PlaneDsts) != len(e.planes):
		return fmt.Errorf("dataplane: flow %d: %d destination planes, but this engine has %d", f.ID, 1+len(f.PlaneDsts), len(e.planes))
	case len(f.PlaneDsts) > 0 && f.Mark != 0:
		return fmt.Errorf("dataplane: flow %d: a marked flow stays on plane 0 (no PlaneDsts)", f.ID)
	}
	if len(f.PlaneDsts) > 0 {
		ds := make([]netip.Addr, len(f.PlaneDsts))
		for i, a := range f.PlaneDsts {
			a = a.Unmap()
			if !a.IsValid() || a.Is6() != e.v6 {
				return fmt.Errorf("dataplane: flow %d: plane %d destination %v is not an address of %v's family", f.ID, i+1, a, e.cfg.Addr)
			}
			ds[i] = a
		}
		f.PlaneDsts = ds
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

// Receivers returns the state of every receiving flow.
func (e *Engine) Receivers(ctx context.Context) ([]ReceiverInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.receivers(), nil
}

func (e *Engine) receivers() []ReceiverInfo {
	e.rcvMu.Lock()
	defer e.rcvMu.Unlock()
	r := make([]ReceiverInfo, 0, len(e.rcv))
	for k, v := range e.rcv {
		r = append(r, ReceiverInfo{Src: v.src, Flow: k.flow, Mark: v.mark,
			Packets: v.npkts, Received: v.pkts, Bytes: v.r.Bytes(), Done: v.r.Done(),
			First: e.wall(v.first), Last: e.wall(v.last)})
	}
	return r
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
		for _, ps := range e.planes {
			errs = append(errs, ps.close()...)
		}
		e.marksMu.Lock()
		for _, c := range e.marks {
			if err := c.conn.Close(); err != nil && !isClosed(err) {
				errs = append(errs, err)
			}
		}
		e.marks = nil
		e.marksMu.Unlock()
		if e.nsFD >= 0 {
			if err := unix.Close(e.nsFD); err != nil {
				errs = append(errs, err)
			}
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
	for _, ps := range e.planes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.reader(ps, stopRead)
		}()
	}
	err := e.loop(ctx)
	close(stopRead)
	for _, ps := range e.planes {
		_ = ps.main.conn.SetReadDeadline(time.Now())
	}
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
	queued, qs := e.cmds, e.queries
	e.cmds, e.queries = nil, nil
	e.mu.Unlock()
	for _, q := range qs {
		q <- nil // every flow failed
	}
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
	cmds, qs := e.cmds, e.queries
	e.cmds, e.queries = e.spare[:0], nil
	e.mu.Unlock()
	now := e.now()
	if len(qs) > 0 {
		e.answer(qs, now)
	}
	for i := range cmds {
		e.startFlow(cmds[i], now)
		cmds[i] = FlowSpec{}
	}
	e.mu.Lock()
	e.spare = cmds[:0]
	e.mu.Unlock()
}

func (e *Engine) startFlow(spec FlowSpec, now Time) {
	e.c.flowsStarted.Add(1)
	// Without samples of its own, a flow's RTO starts from the estimate of
	// a recent flow to the same host, else of any host: this host's delays
	// are what the fabric model misses. Its base RTT is the model's, or
	// the fabric's measured minimum to that host when that is larger.
	h, ok := e.rttHints[spec.Dst.Addr()]
	if ok && now-h.at <= rttHintAge && h.min > spec.BaseRTT {
		spec.BaseRTT = h.min
	}
	if !ok {
		h = e.lastHint
	}
	path := transport.Path{BaseRTT: spec.BaseRTT, RateBps: spec.RateBps}
	f := &sendFlow{spec: spec, start: now}
	params := &e.params
	if len(e.planes) > 1 && len(spec.PlaneDsts) == 0 {
		params = &e.params1
	}
	f.snd = transport.NewSender(params, transport.Flow{ID: spec.ID, Size: spec.Size, Path: path})
	f.npkts = f.snd.Packets()
	f.multi = f.snd.Planes() > 1
	f.dst = make([]netip.AddrPort, len(e.planes))
	f.dst[0] = spec.Dst
	for i, a := range spec.PlaneDsts {
		f.dst[i+1] = netip.AddrPortFrom(a, spec.Dst.Port())
	}
	if e.hostMax > 0 && now-e.hostAt <= rttHintAge {
		f.snd.SeedHostDelay(now, e.hostMax)
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
	// The socket buffers hold the flow's window (both ways: the peer's
	// flows are alike) and what arrives while a goroutine waits for a CPU.
	e.sizeBuffers(max(e.rate, spec.RateBps), f.snd.Cwnd())
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
	var loop, srtt Time
	if est := f.snd.RTT(); est != nil && est.Samples() > 0 {
		loop, srtt = est.MinRTT(), est.SRTT()
		h := rttHint{srtt: est.SRTT(), rttvar: est.RTTVar(), min: f.minRTT, at: now}
		if old, ok := e.rttHints[f.spec.Dst.Addr()]; ok && now-old.at <= rttHintAge && old.min > 0 && (h.min == 0 || old.min < h.min) {
			h.min = old.min
		}
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
		FCT: time.Duration((end - f.start) / 1000), Stats: st, Err: err,
		MinRTT: time.Duration(f.minRTT / 1000), LoopRTT: time.Duration(loop / 1000), SRTT: time.Duration(srtt / 1000), MaxCwnd: int64(f.maxCwnd)})
	// The flow may linger in the timer heap (until its FlowTimeout) and in
	// the active list; its per-packet state is not needed any more.
	f.snd = nil
}

func (e *Engine) sendError(err error) {
	if !e.sendWarn.Swap(true) {
		e.logf("dataplane: send: %v (further send errors are only counted)", err)
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
