package telemetry

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
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
)

// Server serves many devices as gNMI targets on one gRPC listener; the gNMI
// target name (the prefix target of a request) selects the device. The
// data source (the simulator, the kernel exporter) calls Publish once per
// tick of its own clock; subscriptions are sampled in that clock, so a
// sample_interval of 200µs means every 200µs of source time, however long
// that takes in wall time.
//
// What it serves follows the gNMI specification (0.10.0) for a read-only
// target:
//
//   - Capabilities: the OpenConfig models of the served leaves with their
//     versions (Models), and the encodings JSON, JSON_IETF and PROTO.
//   - Get: any number of paths (with the prefix), wildcards ("*" names and
//     key values, "...", missing keys), in JSON, JSON_IETF or PROTO. In
//     the JSON encodings a path without wildcards gets one update whose
//     value is the subtree under it (RFC 7951 in JSON_IETF: module-qualified
//     top-level members, 64-bit integers as strings); a path with wildcards,
//     and PROTO, get one update per leaf. Type CONFIG returns no data (every
//     served leaf is state).
//   - Subscribe ONCE (the latest values, then sync_response, then the
//     stream ends), POLL (the latest values and sync_response, again on
//     every Poll) and STREAM with SAMPLE (every sample_interval, a multiple
//     of the base interval; suppress_redundant and heartbeat_interval
//     honoured), ON_CHANGE (a leaf when its value changes: oper-status,
//     admin-status, a counter that moved; heartbeat_interval honoured) and
//     TARGET_DEFINED (counters sampled, state leaves on change). A STREAM
//     subscription first gets the latest values of every leaf (unless
//     updates_only), then sync_response, then the stream. Leaf values are
//     typed as values.go describes.
//   - The empty target is the device when the server serves one device
//     (the kernel exporter); a server of many devices (the simulator)
//     answers a request with an empty target for every device, each
//     notification's prefix naming its device.
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

	// latest holds every device's leaf values (published, then static),
	// the last published tick's. Publish writes it holding mu and
	// latestMu; readers hold either (Publish's own offers read it
	// without a lock: Publish calls are serialised).
	latestMu   sync.Mutex
	latest     [][]int64
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
	kinds  []leafKind
	labels []string // per leaf: the interface name of a kindName leaf
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
		s.byName[d.Name] = i
		if len(d.Speeds) > len(d.Interfaces) {
			return nil, fmt.Errorf("telemetry: device %q: %d speeds for %d interfaces", d.Name, len(d.Speeds), len(d.Interfaces))
		}
		for k, v := range d.Speeds {
			if v < 0 {
				return nil, fmt.Errorf("telemetry: device %q: interface %q: negative speed %d", d.Name, d.Interfaces[k], v)
			}
		}
		d.Speeds = append([]int64(nil), d.Speeds...)
		s.devices[i] = d
		s.latest[i] = make([]int64, leavesPerDevice(&d))
		if err := s.encodePaths(i); err != nil {
			return nil, err
		}
		// The static leaves' values.
		for idx := ValuesPerDevice(d); idx < len(s.latest[i]); idx++ {
			if k, ifn := leafKindOf(&d, idx); k == kindSpeed && ifn < len(d.Speeds) {
				s.latest[i][idx] = d.Speeds[ifn]
			}
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

	// The subscriptions this tick goes to and the latest values change
	// together: a subscription registers (and takes the latest values as
	// its initial data) either before this tick, and is offered it, or
	// after, with this tick as its initial data.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrServerClosed
	}
	subs := append(s.scratch[:0], s.subs...)
	s.latestMu.Lock()
	for d := range values {
		copy(s.latest[d], values[d])
	}
	s.latestTime, s.published = timeNs, true
	s.latestMu.Unlock()
	s.mu.Unlock()
	s.scratch = subs
	defer clear(subs) // do not keep removed subscriptions alive

	for _, sub := range subs {
		if err := sub.offer(ctx, timeNs, s.latest, s); err != nil {
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
