// Package kernelexp exports the counters of a real Linux switch or host (in
// a lab: one network namespace per node) over gNMI, with the same OpenConfig
// paths and value layout as the simulator (telemetry.Device), so the same
// collector records both.
//
// Every Interval (aligned to multiples of it on the wall clock) the exporter
// reads, in the node's network namespace, with two rtnetlink dumps:
//
//   - the link counters of every interface (RTM_GETSTATS, struct
//     rtnl_link_stats64), and
//   - the statistics of every qdisc (RTM_GETQDISC: TCA_STATS2 and xstats);
//
// and publishes, per served interface:
//
//	in-octets, out-octets, in-pkts, out-pkts   rx/tx bytes and packets of the link
//	out-discards                               tx_dropped of the link + drops of its root qdisc
//	in-discards, in-errors, out-errors         rx_dropped, rx_errors, tx_errors of the link
//	admin-status                               UP when the link is up (IFF_UP), else DOWN
//	oper-status                                the kernel's operstate (IFLA_OPERSTATE): UP,
//	                                           DOWN, LOWER_LAYER_DOWN, ...; NOT_PRESENT while
//	                                           the kernel device is gone (admin-status DOWN)
//	port-speed                                 Interface.Speed's identity (SPEED_UNKNOWN without)
//
// and, with Config.Queues, for the one queue "data":
//
//	transmit-octets   tx bytes of the link
//	transmit-pkts     tx packets of the link
//	dropped-pkts      the same drops as out-discards
//	ecn-marked-pkts   ECN marks counted by the device's qdiscs (xstats of red,
//	                  choke, sfb, codel, fq_codel, pie, fq_pie, fq; for
//	                  codel/fq_codel AQM and ce_threshold marks), summed over
//	                  all of its qdiscs, not only the root: the marking AQM
//	                  is often a child (tbf+red, mq+fq_codel). 0 without a
//	                  marking qdisc (cake and dualpi2 are not decoded)
//	trim-pkts         always 0: Linux does not trim packets
//	max-queue-len     the root qdisc's backlog in bytes, the largest of the
//	                  samples taken since the previous published tick: one at
//	                  the tick and, when the qdisc dump is cheap (at most a
//	                  tenth of the interval), one half an interval earlier.
//	                  Bytes queued below the qdisc (a NIC's TX ring) are not
//	                  seen, and a burst that builds and drains between two
//	                  samples is missed.
//
// Counters are monotonic: kernel fields that wrap (the qdisc's are 32 bits)
// are extended, and when an interface is deleted and recreated (a new
// ifindex; the exporter follows the kernel device name), a qdisc is
// replaced, or a counter goes back for another reason, the served counter
// continues from where it was and counts the new object's value on top.
// Each such event is logged once per interface and counted in Stats.
//
// # Timestamps
//
// A tick is read right after its time T (a multiple of Interval; the timer
// fires typically some tens of microseconds late) and published with the
// timestamp T, the start of the tick in which the read happened, not the
// exact time.Now of the read. telemetry.Server samples a subscription when
// the published timestamps have advanced by its sample interval (its
// Publish contract: timestamps increase by the base interval); read-time
// timestamps, jittering around the grid, make it skip every tick that
// follows its predecessor by less than the interval (measured at 1 ms: a
// third of the ticks lost, median spacing 1.7 ms). The read's lag behind
// T is reported in Stats (LastLag, MaxLag) and bounds the timestamp's error.
// When the exporter is late by a whole interval or more (a slow Publish
// because a collector is behind, a slow read, scheduling), the ticks in
// between are skipped and counted as missed, never published late with old
// timestamps: a published timestamp is always the tick in which its values
// were read.
package kernelexp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fabricbench/fabricbench/telemetry"
	"golang.org/x/sys/unix"
)

// Interface is one served interface.
type Interface struct {
	Name string // the name served over gNMI (the fabric's port name, e.g. "Ethernet4" or "eth0")
	Dev  string // the kernel interface name (e.g. "eth3")
	// Speed is the line rate in bit/s served as port-speed (0: unknown).
	Speed int64
}

// Config configures an Exporter.
type Config struct {
	Device     string // gNMI target name (the node name)
	Interfaces []Interface
	Queues     bool          // serve the qos queue leaves (switches)
	Listen     string        // host:port for gRPC (e.g. the lab management address)
	Interval   time.Duration // base sample interval, MinInterval to MaxInterval
	// Username and Password are the credentials clients must send
	// (required).
	Username, Password string
	// Netns optionally names a network namespace (/run/netns/NAME) to read
	// the counters in instead of the current one. The gRPC listener is
	// always opened in the current namespace.
	Netns string
	// Logf, if set, receives the exporter's log lines.
	Logf func(string, ...any)
	// TLS, when set, serves gNMI over TLS (nil: plain text).
	TLS *tls.Config
}

// Limits of Config.Interval.
const (
	MinInterval = 100 * time.Microsecond
	MaxInterval = 10 * time.Second
)

// closeTimeout bounds the graceful close of the gNMI server at the end of
// Run.
const closeTimeout = 5 * time.Second

// Stats are counters of an Exporter.
type Stats struct {
	Ticks         int64 // ticks read and published
	MissedTicks   int64 // ticks skipped because the exporter was late (slow Publish or read, scheduling)
	PublishErrors int64 // ticks whose Publish failed
	ReadErrors    int64 // ticks not published because reading the kernel counters failed
	MidSamples    int64 // mid-interval backlog samples taken

	LastRead time.Duration // kernel read time of the last tick (all dumps)
	MaxRead  time.Duration
	LastLag  time.Duration // how long after its tick time the last read started
	MaxLag   time.Duration

	CounterWraps  int64 // counters that wrapped in the kernel
	CounterResets int64 // counters that went back (recreated qdisc, driver reset)
	Recreated     int64 // served interfaces found under a new ifindex
}

// Exporter serves one node's kernel counters over gNMI. Create it with New,
// then call Run.
type Exporter struct {
	cfg      Config
	interval int64 // ns
	logf     func(string, ...any)

	srv     *telemetry.Server
	ifs     []ifState
	byIndex map[int32]int // ifindex -> position in ifs
	vals    [][]int64     // published values, one device
	mid     bool          // take a mid-interval backlog sample

	// Owned by the goroutine that reads (Run, or the caller of read).
	sock, mon    *nlSock // request socket; link event socket
	needResolve  bool
	missing      bool      // a served device is absent
	nextResolve  time.Time // retry time while missing
	lastSlot     int64     // tick number of the last tick
	midDone      bool
	lastQdiscDur time.Duration
	logged       uint8 // exporter-wide logOnce bits

	mu    sync.Mutex // guards state
	state int

	// tickHook, if set (by tests), is called after every published tick
	// with its lag and read time.
	tickHook func(lag, read time.Duration)

	ticks, missed, pubErrs, readErrs, mids atomic.Int64
	lastRead, maxRead, lastLag, maxLag     atomic.Int64
	wraps, resets, recreated               atomic.Int64
}

// Exporter states.
const (
	stateIdle = iota
	stateRunning
	stateDone
)

// Exporter-wide logOnce bits.
const (
	logReadErr uint8 = 1 << iota
	logPublishErr
	logClockStep
	logInterrupted
)

// The served values of an interface, in ifState.idx order.
var servedFields = [len(ifState{}.idx)]struct{ meas, field string }{
	{telemetry.MeasInterface, telemetry.FieldInOctets},
	{telemetry.MeasInterface, telemetry.FieldOutOctets},
	{telemetry.MeasInterface, telemetry.FieldInPkts},
	{telemetry.MeasInterface, telemetry.FieldOutPkts},
	{telemetry.MeasInterface, telemetry.FieldOutDiscards},
	{telemetry.MeasInterface, telemetry.FieldInDiscards},
	{telemetry.MeasInterface, telemetry.FieldInErrors},
	{telemetry.MeasInterface, telemetry.FieldOutErrors},
	{telemetry.MeasInterface, telemetry.FieldOperStatus},
	{telemetry.MeasInterface, telemetry.FieldAdminStatus},
	{telemetry.MeasQueue, telemetry.FieldTransmitOctets},
	{telemetry.MeasQueue, telemetry.FieldTransmitPkts},
	{telemetry.MeasQueue, telemetry.FieldDroppedPkts},
	{telemetry.MeasQueue, telemetry.FieldECNMarkedPkts},
	{telemetry.MeasQueue, telemetry.FieldTrimPkts},
	{telemetry.MeasQueue, telemetry.FieldMaxQueueLen},
}

const (
	vInOctets = iota
	vOutOctets
	vInPkts
	vOutPkts
	vOutDiscards
	vInDiscards
	vInErrors
	vOutErrors
	vOperStatus
	vAdminStatus
	vTransmitOctets
	vTransmitPkts
	vDroppedPkts
	vECNMarked
	vTrimPkts
	vMaxQueueLen
)

// New validates cfg, resolves the kernel devices in the namespace and starts
// the gNMI server. Errors name the offending Config field or interface.
// Call Run to sample and publish (or Close to give up).
func New(cfg Config) (*Exporter, error) {
	if err := validate(&cfg); err != nil {
		return nil, err
	}
	e := &Exporter{
		cfg:      cfg,
		interval: int64(cfg.Interval),
		logf:     cfg.Logf,
		byIndex:  make(map[int32]int, len(cfg.Interfaces)),
		mid:      cfg.Queues && cfg.Interval%2 == 0,
	}
	if e.logf == nil {
		e.logf = func(string, ...any) {}
	}
	dev := telemetry.Device{Name: cfg.Device, Queues: cfg.Queues}
	for _, ifc := range cfg.Interfaces {
		dev.Interfaces = append(dev.Interfaces, ifc.Name)
		dev.Speeds = append(dev.Speeds, ifc.Speed)
	}
	e.ifs = make([]ifState, len(cfg.Interfaces))
	for i, ifc := range cfg.Interfaces {
		s := &e.ifs[i]
		s.name, s.dev = ifc.Name, ifc.Dev
		for k, f := range servedFields {
			s.idx[k] = telemetry.ValueIndex(dev, i, f.meas, f.field)
		}
	}
	e.vals = [][]int64{make([]int64, telemetry.ValuesPerDevice(dev))}

	sockErr := func(err error) error {
		if cfg.Netns == "" {
			return fmt.Errorf("kernelexp: %w", err)
		}
		return fmt.Errorf("kernelexp: Netns %q: %w", cfg.Netns, err)
	}
	var err error
	if e.sock, err = openSock(cfg.Netns, 0); err != nil {
		return nil, sockErr(err)
	}
	if e.mon, err = openSock(cfg.Netns, unix.RTMGRP_LINK); err != nil {
		e.sock.close()
		return nil, sockErr(err)
	}
	fail := func(err error) (*Exporter, error) {
		e.sock.close()
		e.mon.close()
		return nil, err
	}
	// Subscribed to link events before the names are resolved: a change
	// after the dump is seen by the first tick.
	if err := e.resolveAll(); err != nil {
		return fail(err)
	}
	for i := range e.ifs {
		if e.ifs[i].ifindex == 0 {
			where := "the current network namespace"
			if cfg.Netns != "" {
				where = fmt.Sprintf("network namespace %q", cfg.Netns)
			}
			return fail(fmt.Errorf("kernelexp: interface %q: no kernel device %q in %s", e.ifs[i].name, e.ifs[i].dev, where))
		}
	}
	// A first read checks that the dumps work here and measures them.
	if err := e.read(); err != nil {
		return fail(fmt.Errorf("kernelexp: reading kernel counters: %w", err))
	}
	for i := range e.ifs {
		e.ifs[i].hwm = 0
	}
	e.maxRead.Store(0)
	sopts := []telemetry.ServerOption{
		telemetry.WithListenAddress(cfg.Listen),
		telemetry.WithBaseInterval(cfg.Interval),
		telemetry.WithCredentials(cfg.Username, cfg.Password),
	}
	if cfg.TLS != nil {
		sopts = append(sopts, telemetry.WithTLS(cfg.TLS))
	}
	e.srv, err = telemetry.NewServer([]telemetry.Device{dev}, sopts...)
	if err != nil {
		return fail(fmt.Errorf("kernelexp: Listen %q: %w", cfg.Listen, err))
	}
	return e, nil
}

// resolveAll resolves every device, retrying a dump that was interrupted.
func (e *Exporter) resolveAll() error {
	var err error
	for range 5 {
		if err = e.resolve(); !errors.Is(err, errDumpInterrupted) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("kernelexp: listing links: %w", err)
	}
	return nil
}

func validate(c *Config) error {
	if c.Device == "" {
		return errors.New("kernelexp: Device: empty gNMI target name")
	}
	if len(c.Interfaces) == 0 {
		return errors.New("kernelexp: Interfaces: none given")
	}
	names := make(map[string]bool, len(c.Interfaces))
	devs := make(map[string]string, len(c.Interfaces))
	for i, ifc := range c.Interfaces {
		switch {
		case ifc.Name == "":
			return fmt.Errorf("kernelexp: Interfaces[%d].Name: empty", i)
		case names[ifc.Name]:
			return fmt.Errorf("kernelexp: interface %q: Name: duplicate", ifc.Name)
		case ifc.Dev == "":
			return fmt.Errorf("kernelexp: interface %q: Dev: empty kernel device name", ifc.Name)
		case len(ifc.Dev) >= unix.IFNAMSIZ || strings.ContainsAny(ifc.Dev, "/ \x00"):
			return fmt.Errorf("kernelexp: interface %q: Dev: %q is not a kernel interface name", ifc.Name, ifc.Dev)
		case devs[ifc.Dev] != "":
			return fmt.Errorf("kernelexp: interface %q: Dev: %q is already served as %q", ifc.Name, ifc.Dev, devs[ifc.Dev])
		}
		names[ifc.Name], devs[ifc.Dev] = true, ifc.Name
	}
	switch {
	case c.Interval < MinInterval:
		return fmt.Errorf("kernelexp: Interval: %v is below the minimum %v", c.Interval, MinInterval)
	case c.Interval > MaxInterval:
		return fmt.Errorf("kernelexp: Interval: %v is above the maximum %v", c.Interval, MaxInterval)
	case c.Listen == "":
		return errors.New("kernelexp: Listen: empty (want host:port)")
	case c.Username == "":
		return errors.New("kernelexp: Username: empty (credentials are required)")
	case c.Password == "":
		return errors.New("kernelexp: Password: empty (credentials are required)")
	case strings.ContainsAny(c.Netns, "/\x00") || c.Netns == "." || c.Netns == "..":
		return fmt.Errorf("kernelexp: Netns: %q is not a namespace name", c.Netns)
	}
	return nil
}

// Addr returns the gNMI server's listen address (host:port).
func (e *Exporter) Addr() string { return e.srv.Addr() }

// Stats returns the exporter's counters. It may be called at any time.
func (e *Exporter) Stats() Stats {
	return Stats{
		Ticks:         e.ticks.Load(),
		MissedTicks:   e.missed.Load(),
		PublishErrors: e.pubErrs.Load(),
		ReadErrors:    e.readErrs.Load(),
		MidSamples:    e.mids.Load(),
		LastRead:      time.Duration(e.lastRead.Load()),
		MaxRead:       time.Duration(e.maxRead.Load()),
		LastLag:       time.Duration(e.lastLag.Load()),
		MaxLag:        time.Duration(e.maxLag.Load()),
		CounterWraps:  e.wraps.Load(),
		CounterResets: e.resets.Load(),
		Recreated:     e.recreated.Load(),
	}
}

// Run samples and publishes every Interval until ctx is done (or Close is
// called), then closes the gNMI server gracefully: every subscriber gets
// the ticks already queued for it, then its stream ends (EOF). It returns
// nil after a normal stop. Run may be called once.
func (e *Exporter) Run(ctx context.Context) error {
	e.mu.Lock()
	if e.state != stateIdle {
		e.mu.Unlock()
		return errors.New("kernelexp: Run called twice or after Close")
	}
	e.state = stateRunning
	e.mu.Unlock()

	err := e.loop(ctx)
	cctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	cerr := e.srv.Close(cctx)

	e.mu.Lock()
	e.state = stateDone
	e.sock.close()
	e.mon.close()
	e.mu.Unlock()
	return errors.Join(err, cerr)
}

// Close stops the gNMI server (gracefully unless ctx ends first, see
// telemetry.Server.Close). A running Run then returns; without Run, Close
// releases the exporter's resources. Close is idempotent.
func (e *Exporter) Close(ctx context.Context) error {
	err := e.srv.Close(ctx)
	e.mu.Lock()
	if e.state == stateIdle {
		e.state = stateDone
		e.sock.close()
		e.mon.close()
	}
	e.mu.Unlock()
	return err
}

// loop is Run's sampling loop.
func (e *Exporter) loop(ctx context.Context) error {
	period := e.interval
	if e.mid {
		period /= 2
	}
	tk, err := newTicker(time.Duration(period), time.Duration(e.interval))
	if err != nil {
		return fmt.Errorf("kernelexp: %w", err)
	}
	defer tk.close()
	stop := context.AfterFunc(ctx, tk.stop)
	defer stop()
	for {
		err := tk.wait()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if errors.Is(err, unix.ECANCELED) { // the clock was set
				e.logOnce(logClockStep, "kernelexp: %s: the wall clock was set; re-aligning ticks (logged once)", e.cfg.Device)
				if err := tk.arm(); err != nil {
					return fmt.Errorf("kernelexp: %w", err)
				}
				e.lastSlot = 0 // a jump is not missed ticks
				continue
			}
			return fmt.Errorf("kernelexp: timer: %w", err)
		}
		start := time.Now()
		now := start.UnixNano()
		slot := now / e.interval
		if slot < e.lastSlot {
			// The clock went back. Timestamps stay truthful, so they go
			// back too; telemetry.Server samples an existing subscription
			// again only once they pass its last sample.
			e.logOnce(logClockStep, "kernelexp: %s: the wall clock went back (logged once)", e.cfg.Device)
			e.lastSlot = 0
		}
		if slot == e.lastSlot {
			if e.mid && !e.midDone && now-slot*e.interval >= e.interval/2 {
				e.midDone = true
				e.midSample()
			}
			continue
		}
		if e.lastSlot != 0 && slot > e.lastSlot+1 {
			e.missed.Add(slot - e.lastSlot - 1)
		}
		e.lastSlot, e.midDone = slot, false
		ts := slot * e.interval
		lag := now - ts
		e.lastLag.Store(lag)
		if lag > e.maxLag.Load() {
			e.maxLag.Store(lag)
		}

		if err := e.read(); err != nil {
			e.readErrs.Add(1)
			e.logOnce(logReadErr, "kernelexp: %s: reading kernel counters: %v (tick not published; logged once)", e.cfg.Device, err)
			continue
		}
		e.fill()
		err = e.srv.Publish(ctx, ts, e.vals)
		for i := range e.ifs {
			e.ifs[i].hwm = 0
		}
		switch {
		case err == nil:
			e.ticks.Add(1)
			if e.tickHook != nil {
				e.tickHook(time.Duration(lag), time.Duration(e.lastRead.Load()))
			}
		case ctx.Err() != nil, errors.Is(err, telemetry.ErrServerClosed):
			return nil
		default:
			e.pubErrs.Add(1)
			e.logOnce(logPublishErr, "kernelexp: %s: publish: %v (logged once)", e.cfg.Device, err)
		}
	}
}

func (e *Exporter) logOnce(bit uint8, format string, args ...any) {
	if e.logged&bit == 0 {
		e.logged |= bit
		e.logf(format, args...)
	}
}

// read performs one tick's kernel reads: link events, the link counters and
// the qdiscs. It returns an error only if the counters could not be read.
func (e *Exporter) read() error {
	start := time.Now()
	if e.mon.pending() {
		e.needResolve = true
	}
	if e.needResolve || (e.missing && start.After(e.nextResolve)) {
		// A failure here leaves the previous mapping in use.
		if err := e.resolve(); err == nil {
			e.needResolve = false
		}
		if e.missing {
			e.nextResolve = start.Add(time.Second)
		}
	}
	if err := e.readLinks(); err != nil {
		return err
	}
	if err := e.readQdiscs(); err != nil {
		return err
	}
	d := int64(time.Since(start))
	e.lastRead.Store(d)
	if d > e.maxRead.Load() {
		e.maxRead.Store(d)
	}
	return nil
}

// resolve maps the served devices to their current ifindex with one
// RTM_GETLINK dump, noticing devices that went away or were recreated.
func (e *Exporter) resolve() error {
	found := make([]int32, len(e.ifs))
	err := e.sock.dump(unix.RTM_GETLINK, getLinkBody, func(typ uint16, msg []byte) {
		if typ != unix.RTM_NEWLINK {
			return
		}
		idx, name, st := parseLinkMsg(msg)
		for i := range e.ifs {
			if e.ifs[i].dev == string(name) {
				found[i] = idx
				e.ifs[i].adminUp, e.ifs[i].oper = st.adminUp, operStatus(st.operstate)
			}
		}
	})
	if err != nil {
		return err // including an interrupted dump: a device may be missing from it
	}
	e.missing = false
	clear(e.byIndex)
	for i := range e.ifs {
		s := &e.ifs[i]
		switch idx := found[i]; {
		case idx == 0:
			e.missing = true
			s.adminUp, s.oper = false, telemetry.StatusNotPresent
			if s.ifindex != 0 {
				s.ifindex = 0
				s.backlog, s.hwm = 0, 0
				s.logOnce(e, logVanished, "kernel device %q is gone; serving its last values until it reappears", s.dev)
			}
		case idx != s.ifindex:
			if s.known {
				e.recreated.Add(1)
				s.logOnce(e, logRecreated, "kernel device %q is back as ifindex %d; its counters continue", s.dev, idx)
				s.rebase()
			}
			s.ifindex, s.known = idx, true
		}
		if s.ifindex != 0 {
			e.byIndex[s.ifindex] = i
		}
	}
	return nil
}

func (s *ifState) logOnce(e *Exporter, bit uint8, format string, args ...any) {
	if s.logged&bit == 0 {
		s.logged |= bit
		e.logf("kernelexp: %s: interface %q: "+format+" (logged once)", append([]any{e.cfg.Device, s.name}, args...)...)
	}
}

// count folds a kernel counter value into c.
func (e *Exporter) count(s *ifState, c *counter, raw uint64, what string) {
	last := c.last
	switch c.update(raw) {
	case evWrap:
		e.wraps.Add(1)
		s.logOnce(e, logWrap, "%s counter wrapped in the kernel; extended", what)
	case evReset:
		e.resets.Add(1)
		s.logOnce(e, logReset, "%s counter went back from %d to %d; counting on from there", what, last, raw)
	}
}

// readLinks reads every link's counters with one RTM_GETSTATS dump.
func (e *Exporter) readLinks() error {
	for i := range e.ifs {
		e.ifs[i].linkSeen = false
	}
	err := e.sock.dump(unix.RTM_GETSTATS, getStatsBody, e.onStats)
	if errors.Is(err, errDumpInterrupted) {
		// The values read are real; only an absence would be unreliable.
		e.logOnce(logInterrupted, "kernelexp: %s: a netlink dump was interrupted by a concurrent change (logged once)", e.cfg.Device)
		return nil
	}
	if err != nil {
		return fmt.Errorf("link statistics: %w", err)
	}
	for i := range e.ifs {
		if s := &e.ifs[i]; s.ifindex != 0 && !s.linkSeen {
			e.needResolve = true // gone, perhaps recreated: resolve next tick
		}
	}
	return nil
}

func (e *Exporter) onStats(typ uint16, msg []byte) {
	if typ != unix.RTM_NEWSTATS {
		return
	}
	idx, st, ok := parseStatsMsg(msg)
	if !ok {
		return
	}
	i, served := e.byIndex[idx]
	if !served {
		return
	}
	s := &e.ifs[i]
	s.linkSeen = true
	e.count(s, &s.rxBytes, st.rxBytes, "rx_bytes")
	e.count(s, &s.txBytes, st.txBytes, "tx_bytes")
	e.count(s, &s.rxPkts, st.rxPackets, "rx_packets")
	e.count(s, &s.txPkts, st.txPackets, "tx_packets")
	e.count(s, &s.txDropped, st.txDropped, "tx_dropped")
	e.count(s, &s.rxErrors, st.rxErrors, "rx_errors")
	e.count(s, &s.txErrors, st.txErrors, "tx_errors")
	e.count(s, &s.rxDropped, st.rxDropped, "rx_dropped")
}

// readQdiscs reads every qdisc with one RTM_GETQDISC dump: drops and
// backlog of the served devices' root qdiscs, ECN marks of all their
// qdiscs.
func (e *Exporter) readQdiscs() error {
	for i := range e.ifs {
		s := &e.ifs[i]
		s.backlog = 0
		for j := range s.qds {
			s.qds[j].seen = false
		}
	}
	start := time.Now()
	err := e.sock.dump(unix.RTM_GETQDISC, getQdiscBody, e.onQdisc)
	e.lastQdiscDur = time.Since(start)
	if errors.Is(err, errDumpInterrupted) {
		e.logOnce(logInterrupted, "kernelexp: %s: a netlink dump was interrupted by a concurrent change (logged once)", e.cfg.Device)
		return nil // keep the qdiscs not seen this time
	}
	if err != nil {
		return fmt.Errorf("qdisc statistics: %w", err)
	}
	for i := range e.ifs {
		if s := &e.ifs[i]; s.ifindex != 0 {
			s.sweep()
		}
	}
	return nil
}

func (e *Exporter) onQdisc(typ uint16, msg []byte) {
	if typ != unix.RTM_NEWQDISC {
		return
	}
	m, ok := parseQdiscMsg(msg)
	if !ok || m.parent == tcHIngress {
		return
	}
	i, served := e.byIndex[m.ifindex]
	if !served {
		return
	}
	s := &e.ifs[i]
	q := s.qdisc(&m)
	q.seen = true
	if !m.hasStats {
		return
	}
	if q.root {
		e.count(s, &q.drops, uint64(m.drops), "qdisc drops")
		s.backlog = uint64(m.backlog)
		s.hwm = max(s.hwm, s.backlog)
	}
	if marks, ok := ecnMarks(m.kind, m.xstats); ok {
		e.count(s, &q.marks, marks, "qdisc ECN marks")
	}
}

// midSample samples the root qdiscs' backlog between two ticks, if the
// qdisc dump is cheap enough: at most a tenth of the interval.
func (e *Exporter) midSample() {
	if e.lastQdiscDur > time.Duration(e.interval/10) {
		return
	}
	start := time.Now()
	err := e.sock.dump(unix.RTM_GETQDISC, getQdiscBody, e.onQdiscBacklog)
	e.lastQdiscDur = time.Since(start)
	if err == nil || errors.Is(err, errDumpInterrupted) {
		e.mids.Add(1)
	}
}

func (e *Exporter) onQdiscBacklog(typ uint16, msg []byte) {
	if typ != unix.RTM_NEWQDISC {
		return
	}
	m, ok := parseQdiscMsg(msg)
	if !ok || m.parent != tcHRoot || !m.hasStats {
		return
	}
	if i, served := e.byIndex[m.ifindex]; served {
		e.ifs[i].hwm = max(e.ifs[i].hwm, uint64(m.backlog))
	}
}

// fill writes the interfaces' current values into e.vals.
func (e *Exporter) fill() {
	v := e.vals[0]
	for i := range e.ifs {
		s := &e.ifs[i]
		discards := s.discards()
		admin := uint64(telemetry.StatusDown)
		if s.adminUp {
			admin = uint64(telemetry.StatusUp)
		}
		vals := [len(s.idx)]uint64{
			vInOctets:       s.rxBytes.total,
			vOutOctets:      s.txBytes.total,
			vInPkts:         s.rxPkts.total,
			vOutPkts:        s.txPkts.total,
			vOutDiscards:    discards,
			vInDiscards:     s.rxDropped.total,
			vInErrors:       s.rxErrors.total,
			vOutErrors:      s.txErrors.total,
			vOperStatus:     uint64(s.oper),
			vAdminStatus:    admin,
			vTransmitOctets: s.txBytes.total,
			vTransmitPkts:   s.txPkts.total,
			vDroppedPkts:    discards,
			vECNMarked:      s.ecnMarked(),
			vTrimPkts:       0,
			vMaxQueueLen:    s.hwm,
		}
		for k, x := range vals {
			if s.idx[k] >= 0 {
				v[s.idx[k]] = int64(x)
			}
		}
	}
}
