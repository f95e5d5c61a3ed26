package telemetry

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Server serves many devices as gNMI targets on one gRPC listener; the gNMI
// target name (the prefix target of a SubscribeRequest) selects the device.
// The data source (e.g. the simulator) calls Publish once per tick of its
// own clock; subscriptions are sampled in that clock, so a sample_interval
// of 200µs means every 200µs of source time, however long that takes in wall
// time.
//
// The server is built directly on grpc and gnmi.RegisterGNMIServer rather
// than on github.com/openconfig/gnmic/pkg/api/server: that package's Start
// opens its own listener and keeps the *grpc.Server local, so there is no
// way to learn the address of a ":0" listener nor to stop the server (and it
// retries a failing listen forever).
//
// Publish never drops data: every STREAM subscription has a bounded queue,
// and Publish blocks while a queue is full.
type Server struct {
	devices []Device
	byName  map[string]int
	paths   []devicePaths // per device, built on first use

	base     int64 // base sample interval, source-clock ns
	depth    int   // subscriber queue depth
	user     string
	passHash [sha256.Size]byte
	userHash [sha256.Size]byte
	pass     string

	lis     net.Listener
	grpc    *grpc.Server
	served  chan struct{} // closed when Serve returned
	pubSem  chan struct{} // serialises Publish; Close takes it to wait for an in-flight Publish
	scratch []*subscription

	mu      sync.Mutex
	subs    []*subscription
	changed chan struct{} // closed and replaced whenever subs or closed change
	closed  bool

	latestMu   sync.Mutex
	latest     [][]int64 // last published values, for ONCE
	latestTime int64
	published  bool

	ticks   atomic.Int64
	stalls  atomic.Int64
	waiting atomic.Int32 // Publish is waiting for room in a queue

	closeOnce sync.Once
	closeErr  error
}

type devicePaths struct {
	prefix []byte   // the encoding of gnmi.Path{Target: device name}
	wire   [][]byte // per leaf, the protobuf encoding of its gnmi.Path
}

// ErrServerClosed is returned by Publish and WaitSubscribers after Close.
var ErrServerClosed = errors.New("telemetry: gNMI server closed")

// DefaultUsername is the username a Server requires unless WithCredentials
// says otherwise.
const DefaultUsername = "fabricbench"

// ServerOption configures a Server.
type ServerOption func(*serverConfig) error

type serverConfig struct {
	addr       string
	base       time.Duration
	user, pass string
	depth      int
	tls        *tls.Config
}

// WithTLS serves gNMI over TLS with the server certificate in cfg
// (default: plain-text gRPC).
func WithTLS(cfg *tls.Config) ServerOption {
	return func(c *serverConfig) error {
		if cfg == nil || (len(cfg.Certificates) == 0 && cfg.GetCertificate == nil) {
			return errors.New("TLS needs a server certificate")
		}
		c.tls = cfg
		return nil
	}
}

// WithListenAddress sets the TCP address to listen on (default
// "127.0.0.1:0", a free loopback port; see Server.Addr).
func WithListenAddress(addr string) ServerOption {
	return func(c *serverConfig) error { c.addr = addr; return nil }
}

// WithBaseInterval sets the interval at which the data source calls Publish,
// measured in the source's clock (default 100µs). Subscriptions may ask for
// any positive multiple of it.
func WithBaseInterval(d time.Duration) ServerOption {
	return func(c *serverConfig) error {
		if d <= 0 {
			return fmt.Errorf("base interval must be positive, got %v", d)
		}
		c.base = d
		return nil
	}
}

// WithCredentials sets the username and password clients must send as gRPC
// metadata (as gnmic does with api.Username and api.Password). The default
// is DefaultUsername and a random password (see Server.Credentials).
func WithCredentials(username, password string) ServerOption {
	return func(c *serverConfig) error {
		if username == "" || password == "" {
			return errors.New("username and password must not be empty")
		}
		c.user, c.pass = username, password
		return nil
	}
}

// WithQueueDepth sets how many ticks each STREAM subscription may have
// queued before Publish blocks (default 32). Queue memory is allocated as a
// queue first grows.
func WithQueueDepth(n int) ServerOption {
	return func(c *serverConfig) error {
		if n < 1 {
			return fmt.Errorf("queue depth must be at least 1, got %d", n)
		}
		c.depth = n
		return nil
	}
}

// NewServer validates devices, starts listening and serving gNMI, and
// returns the running server. Close it when done.
func NewServer(devices []Device, opts ...ServerOption) (*Server, error) {
	cfg := serverConfig{addr: "127.0.0.1:0", base: 100 * time.Microsecond, user: DefaultUsername, depth: 32}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
	}
	if cfg.pass == "" {
		cfg.pass = rand.Text()
	}
	s := &Server{
		devices: make([]Device, len(devices)),
		byName:  make(map[string]int, len(devices)),
		paths:   make([]devicePaths, len(devices)),
		base:    cfg.base.Nanoseconds(),
		depth:   cfg.depth,
		user:    cfg.user,
		pass:    cfg.pass,
		served:  make(chan struct{}),
		pubSem:  make(chan struct{}, 1),
		changed: make(chan struct{}),
		latest:  make([][]int64, len(devices)),
	}
	s.userHash = sha256.Sum256([]byte(cfg.user))
	s.passHash = sha256.Sum256([]byte(cfg.pass))
	for i, d := range devices {
		if d.Name == "" {
			return nil, fmt.Errorf("telemetry: device %d has no name", i)
		}
		if _, dup := s.byName[d.Name]; dup {
			return nil, fmt.Errorf("telemetry: duplicate device name %q", d.Name)
		}
		// gNMI strings are protobuf strings: valid UTF-8 (which also makes
		// the path encodings below unable to fail).
		if !utf8.ValidString(d.Name) {
			return nil, fmt.Errorf("telemetry: device name %q is not valid UTF-8", d.Name)
		}
		seen := make(map[string]bool, len(d.Interfaces))
		for _, ifn := range d.Interfaces {
			if ifn == "" || seen[ifn] {
				return nil, fmt.Errorf("telemetry: device %q: empty or duplicate interface name %q", d.Name, ifn)
			}
			if !utf8.ValidString(ifn) {
				return nil, fmt.Errorf("telemetry: device %q: interface name %q is not valid UTF-8", d.Name, ifn)
			}
			seen[ifn] = true
		}
		d.Interfaces = append([]string(nil), d.Interfaces...)
		s.devices[i] = d
		s.byName[d.Name] = i
		s.latest[i] = make([]int64, ValuesPerDevice(d))
		if err := s.encodePaths(i); err != nil {
			return nil, err
		}
	}
	lis, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, fmt.Errorf("telemetry: gNMI listen: %w", err)
	}
	s.lis = lis
	sopts := []grpc.ServerOption{
		grpc.ForceServerCodec(wireCodec{encoding.GetCodec("proto")}),
		grpc.ChainUnaryInterceptor(s.unaryAuth),
		grpc.ChainStreamInterceptor(s.streamAuth),
	}
	if cfg.tls != nil {
		sopts = append(sopts, grpc.Creds(credentials.NewTLS(cfg.tls)))
	}
	s.grpc = grpc.NewServer(sopts...)
	gnmi.RegisterGNMIServer(s.grpc, &gnmiService{s: s})
	go func() {
		defer close(s.served)
		// Serve returns nil after Stop/GracefulStop; any other error
		// leaves the server without a listener, which clients see.
		_ = s.grpc.Serve(lis)
	}()
	return s, nil
}

// Addr returns the address the server listens on, e.g. "127.0.0.1:40123".
func (s *Server) Addr() string { return s.lis.Addr().String() }

// Credentials returns the username and password clients must present.
func (s *Server) Credentials() (username, password string) { return s.user, s.pass }

// Password returns the password clients must present.
func (s *Server) Password() string { return s.pass }

// Devices returns the number of devices served.
func (s *Server) Devices() int { return len(s.devices) }

// ServerStats are counters of a Server.
type ServerStats struct {
	Subscriptions int   // STREAM subscriptions currently registered
	Ticks         int64 // Publish calls that completed
	// Stalls counts the times Publish found a subscription's queue full
	// and had to wait: the collector was the bottleneck.
	Stalls int64
	// PublishWaiting is true while Publish waits for room in a queue.
	PublishWaiting bool
}

// Stats returns the server's counters.
func (s *Server) Stats() ServerStats {
	s.mu.Lock()
	n := len(s.subs)
	s.mu.Unlock()
	return ServerStats{Subscriptions: n, Ticks: s.ticks.Load(), Stalls: s.stalls.Load(), PublishWaiting: s.waiting.Load() > 0}
}

// authorize checks the username and password metadata in constant time.
func (s *Server) authorize(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	var u, p string
	if v := md.Get("username"); len(v) > 0 {
		u = v[0]
	}
	if v := md.Get("password"); len(v) > 0 {
		p = v[0]
	}
	uh, ph := sha256.Sum256([]byte(u)), sha256.Sum256([]byte(p))
	if subtle.ConstantTimeCompare(uh[:], s.userHash[:])&subtle.ConstantTimeCompare(ph[:], s.passHash[:]) != 1 {
		return status.Error(codes.Unauthenticated, "invalid username or password")
	}
	return nil
}

func (s *Server) unaryAuth(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := s.authorize(ctx); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (s *Server) streamAuth(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := s.authorize(ss.Context()); err != nil {
		return err
	}
	return h(srv, ss)
}

// broadcastLocked wakes everybody waiting on s.changed. s.mu must be held.
func (s *Server) broadcastLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// WaitSubscribers waits until at least n STREAM subscriptions are
// registered (each has been sent its sync_response), ctx is done, or the
// server is closed.
func (s *Server) WaitSubscribers(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		have, closed, ch := len(s.subs), s.closed, s.changed
		s.mu.Unlock()
		if have >= n {
			return nil
		}
		if closed {
			return ErrServerClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%w (%d of %d gNMI subscriptions)", ctx.Err(), have, n)
		}
	}
}

// Publish hands one tick of the source to every subscription that is due.
// values[d] holds device d's values in canonical order (see Device);
// Publish copies what it needs, so the caller may reuse the slices. timeNs
// is the notifications' timestamp (ns since the Unix epoch in the source's
// clock) and should increase from call to call by the base interval.
//
// Publish never drops a value: when a subscription's queue is full it
// blocks until there is room, the subscription's client goes away, or ctx
// is done (then it returns ctx's error, and the tick may have reached some
// subscriptions only). Calls are serialised. A Publish that overlaps Close
// either completes before the streams drain or returns ErrServerClosed, as
// do all later calls.
func (s *Server) Publish(ctx context.Context, timeNs int64, values [][]int64) error {
	if len(values) != len(s.devices) {
		return fmt.Errorf("telemetry: Publish got values for %d devices, serving %d", len(values), len(s.devices))
	}
	for d := range values {
		if want := ValuesPerDevice(s.devices[d]); len(values[d]) != want {
			return fmt.Errorf("telemetry: Publish got %d values for device %q, want %d", len(values[d]), s.devices[d].Name, want)
		}
	}
	select {
	case s.pubSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.pubSem }()

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrServerClosed
	}
	subs := append(s.scratch[:0], s.subs...)
	s.mu.Unlock()
	s.scratch = subs
	defer clear(subs) // do not keep removed subscriptions alive

	s.latestMu.Lock()
	for d := range values {
		copy(s.latest[d], values[d])
	}
	s.latestTime, s.published = timeNs, true
	s.latestMu.Unlock()

	for _, sub := range subs {
		if err := sub.offer(ctx, timeNs, values[sub.dev], s); err != nil {
			return err
		}
	}
	s.ticks.Add(1)
	return nil
}

// Close stops accepting subscriptions, lets every STREAM subscription send
// what it has queued, ends the streams normally (clients see io.EOF) and
// stops the gRPC server. If ctx is already done, or ends before the streams
// have drained, the remaining streams are cut (clients see an error, not
// io.EOF) and Close returns an error wrapping ctx's. Close is idempotent;
// later calls return the first call's result.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() { s.closeErr = s.close(ctx) })
	return s.closeErr
}

func (s *Server) close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.broadcastLocked()
	s.mu.Unlock()

	// A context that is already done cuts the streams at once.
	forced := ctx.Err() != nil
	if !forced {
		// Wait for an in-flight Publish, so that its tick is queued
		// before the streams drain. Publish calls after this see closed.
		select {
		case s.pubSem <- struct{}{}:
			<-s.pubSem
		case <-ctx.Done():
			forced = true
		}
	}
	if !forced {
		s.mu.Lock()
		for _, sub := range s.subs {
			close(sub.closing) // each subscription is closed here only, once
		}
		s.mu.Unlock()
	}
	// Wait for the STREAM handlers to drain and return.
	for !forced {
		s.mu.Lock()
		n, ch := len(s.subs), s.changed
		s.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-ch:
		case <-ctx.Done():
			forced = true
		}
	}

	if forced {
		// Cancels every stream: handlers return, which also releases a
		// Publish waiting on them.
		s.grpc.Stop()
	} else {
		stopped := make(chan struct{})
		go func() {
			s.grpc.GracefulStop()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-ctx.Done():
			forced = true
			s.grpc.Stop()
			<-stopped
		}
	}
	<-s.served
	if forced {
		return fmt.Errorf("telemetry: gNMI server stopped before all streams drained: %w", ctx.Err())
	}
	return nil
}

// register adds a STREAM subscription, unless the server is closed.
func (s *Server) register(sub *subscription) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.subs = append(s.subs, sub)
	s.broadcastLocked()
	return true
}

// unregister removes sub and releases a Publish waiting on it.
func (s *Server) unregister(sub *subscription) {
	s.mu.Lock()
	for i, x := range s.subs {
		if x == sub {
			s.subs = slices.Delete(s.subs, i, i+1)
			break
		}
	}
	s.broadcastLocked()
	s.mu.Unlock()
	close(sub.gone)
}

// leafWire returns the protobuf encodings of device d's leaf paths
// (read-only; built by NewServer).
func (s *Server) leafWire(d int) [][]byte { return s.paths[d].wire }

// encodePaths builds device d's prefix and leaf path encodings.
func (s *Server) encodePaths(d int) error {
	dp := &s.paths[d]
	var err error
	if dp.prefix, err = encodePrefix(s.devices[d].Name); err != nil {
		return err
	}
	paths := gnmiLeafPaths(&s.devices[d])
	dp.wire = make([][]byte, len(paths))
	for i, p := range paths {
		if dp.wire[i], err = (proto.MarshalOptions{Deterministic: true}).Marshal(p); err != nil {
			return fmt.Errorf("telemetry: device %q: encoding path %d: %w", s.devices[d].Name, i, err)
		}
	}
	return nil
}

// subscription is one registered STREAM SubscribeRequest. Its entries
// (the request's Subscriptions) share one queue and one stream; a tick's
// due leaves go out in one notification.
type subscription struct {
	dev     int
	prefix  []byte   // encoded gnmi.Path{Target: device name}
	leaves  []int    // canonical value indices, increasing, unique
	paths   [][]byte // paths[i] is leaves[i]'s encoded path, read-only
	entries []subEntry

	free, ready chan *tickBuf
	allocated   int           // tick buffers allocated so far (publisher-owned)
	closing     chan struct{} // closed by Server.Close: drain and end
	gone        chan struct{} // closed when the handler has returned

	incl []bool // handler scratch: leaves included in the current tick
}

type subEntry struct {
	interval int64
	pos      []int // positions in subscription.leaves
	// Publisher-owned sampling state.
	last    int64
	emitted bool
}

// tickBuf is one queued tick of a subscription.
type tickBuf struct {
	time int64
	due  []bool  // per entry
	vals []int64 // per leaf
}

func newSubscription(dev int, prefix []byte, leaves []int, paths [][]byte, entries []subEntry, depth int) *subscription {
	sub := &subscription{
		dev: dev, prefix: prefix, leaves: leaves, paths: paths, entries: entries,
		free: make(chan *tickBuf, depth), ready: make(chan *tickBuf, depth),
		closing: make(chan struct{}), gone: make(chan struct{}),
		incl: make([]bool, len(leaves)),
	}
	return sub
}

// offer queues the tick if any entry is due, waiting for room if needed.
// Only the (serialised) publisher calls it.
func (sub *subscription) offer(ctx context.Context, timeNs int64, values []int64, s *Server) error {
	due := false
	for i := range sub.entries {
		e := &sub.entries[i]
		if !e.emitted || timeNs-e.last >= e.interval {
			due = true
			break
		}
	}
	if !due {
		return nil
	}
	var buf *tickBuf
	select {
	case buf = <-sub.free:
	default:
		if sub.allocated < cap(sub.free) {
			// Buffers are allocated as the queue first grows.
			sub.allocated++
			buf = &tickBuf{due: make([]bool, len(sub.entries)), vals: make([]int64, len(sub.leaves))}
			break
		}
		s.stalls.Add(1)
		s.waiting.Add(1)
		select {
		case buf = <-sub.free:
		case <-sub.gone:
		case <-ctx.Done():
		}
		s.waiting.Add(-1)
		if buf == nil {
			return ctx.Err() // nil if the subscription is gone
		}
	}
	buf.time = timeNs
	for i := range sub.entries {
		e := &sub.entries[i]
		buf.due[i] = !e.emitted || timeNs-e.last >= e.interval
		if buf.due[i] {
			e.last, e.emitted = timeNs, true
		}
	}
	for i, idx := range sub.leaves {
		buf.vals[i] = values[idx]
	}
	sub.ready <- buf // never blocks: there are at most cap(ready) buffers
	return nil
}

// notification encodes the response for buf. Only the handler calls it.
func (sub *subscription) notification(buf *tickBuf) *wireMsg {
	if len(sub.entries) == 1 {
		return encodeNotification(buf.time, sub.prefix, sub.paths, buf.vals, nil)
	}
	clear(sub.incl)
	for i := range sub.entries {
		if buf.due[i] {
			for _, p := range sub.entries[i].pos {
				sub.incl[p] = true
			}
		}
	}
	return encodeNotification(buf.time, sub.prefix, sub.paths, buf.vals, sub.incl)
}

var syncResponse = &gnmi.SubscribeResponse{Response: &gnmi.SubscribeResponse_SyncResponse{SyncResponse: true}}

// gnmiService implements gnmi.GNMIServer for a Server.
type gnmiService struct {
	gnmi.UnimplementedGNMIServer
	s *Server
}

// Capabilities implements gnmi.GNMIServer.
func (g *gnmiService) Capabilities(context.Context, *gnmi.CapabilityRequest) (*gnmi.CapabilityResponse, error) {
	return &gnmi.CapabilityResponse{
		SupportedModels: []*gnmi.ModelData{
			{Name: "openconfig-interfaces", Organization: "OpenConfig working group"},
			{Name: "openconfig-qos", Organization: "OpenConfig working group"},
		},
		SupportedEncodings: []gnmi.Encoding{gnmi.Encoding_PROTO, gnmi.Encoding_JSON, gnmi.Encoding_JSON_IETF},
		GNMIVersion:        "0.10.0",
	}, nil
}

// Subscribe implements gnmi.GNMIServer: STREAM (SAMPLE or TARGET_DEFINED
// subscriptions) and ONCE. Values are scalar TypedValues, valid under every
// supported encoding.
func (g *gnmiService) Subscribe(stream gnmi.GNMI_SubscribeServer) error {
	s := g.s
	req, err := stream.Recv()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	list := req.GetSubscribe()
	if list == nil {
		return status.Error(codes.InvalidArgument, "the first SubscribeRequest must carry a SubscriptionList")
	}
	name := list.GetPrefix().GetTarget()
	dev, ok := s.byName[name]
	if !ok {
		return status.Errorf(codes.NotFound, "unknown target %q", name)
	}
	switch list.GetMode() {
	case gnmi.SubscriptionList_STREAM, gnmi.SubscriptionList_ONCE:
	default:
		return status.Errorf(codes.Unimplemented, "subscription list mode %v is not supported", list.GetMode())
	}
	switch list.GetEncoding() {
	case gnmi.Encoding_PROTO, gnmi.Encoding_JSON, gnmi.Encoding_JSON_IETF:
	default:
		return status.Errorf(codes.Unimplemented, "encoding %v is not supported", list.GetEncoding())
	}
	if len(list.GetSubscription()) == 0 {
		return status.Error(codes.InvalidArgument, "the SubscriptionList has no subscriptions")
	}
	isStream := list.GetMode() == gnmi.SubscriptionList_STREAM
	leaves, entries, err := s.resolve(dev, list)
	if err != nil {
		return err
	}
	all := s.leafWire(dev)
	paths := make([][]byte, len(leaves))
	for i, idx := range leaves {
		paths[i] = all[idx]
	}

	if !isStream {
		return s.serveOnce(stream, dev, name, leaves, paths)
	}
	sub := newSubscription(dev, s.paths[dev].prefix, leaves, paths, entries, s.depth)
	if !s.register(sub) {
		return status.Error(codes.Unavailable, "the gNMI server is shutting down")
	}
	defer s.unregister(sub)
	return sub.serve(stream)
}

// resolve matches the subscriptions of list against device dev. It returns
// the union of the matched leaves (canonical indices, increasing) and one
// entry per subscription that matched something, with its sample interval
// and the positions of its leaves in the union.
//
// A path that no device could serve (not in the schema, or another origin)
// is an error. A path in the schema that matches no leaf of this device,
// e.g. the queue paths on a host NIC, is accepted and contributes nothing,
// so one path list fits every device; but the request as a whole must match
// at least one leaf.
func (s *Server) resolve(dev int, list *gnmi.SubscriptionList) ([]int, []subEntry, error) {
	isStream := list.GetMode() == gnmi.SubscriptionList_STREAM
	prefix := list.GetPrefix()
	name := s.devices[dev].Name
	var (
		entries []subEntry
		matched [][]int
		names   []string
	)
	for _, sub := range list.GetSubscription() {
		p := sub.GetPath()
		elems := append(append([]*gnmi.PathElem(nil), prefix.GetElem()...), p.GetElem()...)
		origin := p.GetOrigin()
		if origin == "" {
			origin = prefix.GetOrigin()
		}
		ps := pathString(origin, elems)
		names = append(names, ps)
		//lint:ignore SA1019 rejecting the deprecated field needs reading it
		if len(p.GetElement()) > 0 && len(p.GetElem()) == 0 {
			return nil, nil, status.Errorf(codes.InvalidArgument, "path %s uses the deprecated element field; use elem", ps)
		}
		var e subEntry
		if isStream {
			switch sub.GetMode() {
			case gnmi.SubscriptionMode_SAMPLE, gnmi.SubscriptionMode_TARGET_DEFINED:
			default:
				return nil, nil, status.Errorf(codes.Unimplemented, "subscription mode %v (path %s) is not supported; use SAMPLE", sub.GetMode(), ps)
			}
			e.interval = int64(sub.GetSampleInterval())
			switch {
			case sub.GetSampleInterval() == 0:
				e.interval = s.base
			case e.interval <= 0 || e.interval%s.base != 0:
				return nil, nil, status.Errorf(codes.InvalidArgument,
					"sample_interval %dns (path %s) is not a positive multiple of the target's base interval %dns",
					sub.GetSampleInterval(), ps, s.base)
			}
		}
		if !originOK(prefix.GetOrigin()) || !originOK(p.GetOrigin()) || !inSchema(elems) {
			return nil, nil, status.Errorf(codes.InvalidArgument, "path %s matches no leaf of the served schema (target %q)", ps, name)
		}
		if m := matchLeaves(&s.devices[dev], elems); len(m) > 0 {
			entries = append(entries, e)
			matched = append(matched, m)
		}
	}
	if len(entries) == 0 {
		return nil, nil, status.Errorf(codes.InvalidArgument, "path %s matches no leaf of target %q", strings.Join(names, ", "), name)
	}
	// The union of matched leaves, in canonical order.
	posOf := make([]int, ValuesPerDevice(s.devices[dev])) // position+1; 0: not matched
	for _, m := range matched {
		for _, idx := range m {
			posOf[idx] = 1
		}
	}
	var leaves []int
	for idx := range posOf {
		if posOf[idx] != 0 {
			leaves = append(leaves, idx)
			posOf[idx] = len(leaves)
		}
	}
	for i, m := range matched {
		entries[i].pos = make([]int, len(m))
		for j, idx := range m {
			entries[i].pos[j] = posOf[idx] - 1
		}
	}
	return leaves, entries, nil
}

// serve streams the subscription's queue to the client until the server
// closes (then it drains the queue and returns nil) or the client goes
// away.
func (sub *subscription) serve(stream gnmi.GNMI_SubscribeServer) error {
	if err := stream.Send(syncResponse); err != nil {
		return err
	}
	ctx := stream.Context()
	send := func(buf *tickBuf) error {
		err := stream.SendMsg(sub.notification(buf))
		sub.free <- buf
		return err
	}
	for {
		select {
		case buf := <-sub.ready:
			if err := send(buf); err != nil {
				return err
			}
		case <-sub.closing:
			for {
				select {
				case buf := <-sub.ready:
					if err := send(buf); err != nil {
						return err
					}
				default:
					return nil
				}
			}
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
	}
}

// serveOnce answers a ONCE request with the latest published values, then
// sync_response, then ends the stream.
func (s *Server) serveOnce(stream gnmi.GNMI_SubscribeServer, dev int, name string, leaves []int, paths [][]byte) error {
	s.latestMu.Lock()
	published, ts := s.published, s.latestTime
	vals := make([]int64, len(leaves))
	for i, idx := range leaves {
		vals[i] = s.latest[dev][idx]
	}
	s.latestMu.Unlock()
	if published {
		if err := stream.SendMsg(encodeNotification(ts, s.paths[dev].prefix, paths, vals, nil)); err != nil {
			return err
		}
	}
	return stream.Send(syncResponse)
}
