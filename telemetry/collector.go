package telemetry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmic/pkg/api"
	"github.com/openconfig/gnmic/pkg/api/target"
	"google.golang.org/grpc"
)

// TargetSpec names one gNMI target and how to reach it.
type TargetSpec struct {
	Name     string // gNMI target name, sent as the prefix target
	Address  string // host:port
	Username string
	Password string
	// TLS, when set, is the client's TLS configuration (a CA pool and
	// server name, or InsecureSkipVerify); nil is plain-text gRPC.
	TLS *tls.Config
	// Profile is how the target is subscribed to and read: "" or
	// ProfileOpenConfig (the collector's paths), or ProfileSONiC
	// (SONiC's COUNTERS_DB, see sonic.go).
	Profile string
	// Interfaces maps the target's own interface names to the names its
	// samples carry (the fabric's port names); names not listed are kept.
	Interfaces map[string]string
	// Optional: a target that cannot be reached, refuses the
	// subscription or fails later does not fail the collection; it is
	// listed in CollectStats.Unreachable (and its ports have no samples).
	Optional bool
}

// TargetError is one target's failure: it could not be reached, refused
// the subscription, or its stream failed.
type TargetError struct {
	Target string // TargetSpec.Name
	Err    error
}

func (e *TargetError) Error() string { return fmt.Sprintf("telemetry: target %q: %v", e.Target, e.Err) }
func (e *TargetError) Unwrap() error { return e.Err }

// Profiles of TargetSpec.Profile.
const (
	ProfileOpenConfig = "openconfig"
	ProfileSONiC      = "sonic"
)

// MinInterval returns the shortest sample interval a profile's targets
// honour (0: no limit of their own).
func MinInterval(profile string) time.Duration {
	if profile == ProfileSONiC {
		return SONiCMinInterval
	}
	return 0
}

// DefaultPaths are the paths a Collector subscribes to unless WithPaths says
// otherwise: every interface counter and every queue leaf.
var DefaultPaths = []string{
	"/interfaces/interface/state/counters",
	"/qos/interfaces/interface/output/queues/queue/state",
}

// CollectorOption configures a Collector.
type CollectorOption func(*Collector)

// WithPaths sets the subscription paths (XPath-like, as gnmic parses them,
// e.g. "/interfaces/interface[name=eth0]/state/counters"). No paths keeps
// DefaultPaths.
func WithPaths(paths ...string) CollectorOption {
	return func(c *Collector) {
		if len(paths) > 0 {
			c.paths = append([]string(nil), paths...)
		}
	}
}

// WithSampleInterval sets every subscription's sample_interval, in the
// target's clock (0, the default, asks for the target's base interval).
func WithSampleInterval(d time.Duration) CollectorOption {
	return func(c *Collector) { c.interval = d }
}

// WithRun sets the run ID copied into every Sample.
func WithRun(id string) CollectorOption {
	return func(c *Collector) { c.run = id }
}

// WithHandler sets the function that receives the samples. It is called
// from one goroutine only, with batches in arrival order per target; it must
// not retain batch after returning (the slice is reused). An error from it
// aborts the collection, and Wait returns it. Without a handler samples are
// only counted.
func WithHandler(h func(batch []Sample) error) CollectorOption {
	return func(c *Collector) { c.handler = h }
}

// WithConnectTimeout bounds connecting to each target (default 10s).
func WithConnectTimeout(d time.Duration) CollectorOption {
	return func(c *Collector) { c.connectTimeout = d }
}

// WithBatchSize sets the largest batch handed to the handler (default 4096
// samples). Smaller batches are handed over when no more data is waiting.
func WithBatchSize(n int) CollectorOption {
	return func(c *Collector) {
		if n > 0 {
			c.batchSize = n
		}
	}
}

// CollectStats summarises a collection.
type CollectStats struct {
	Samples       int64            // samples handed to the handler (or received, if it failed)
	Notifications int64            // notifications received
	Unknown       int64            // updates skipped: unknown path or non-integer value
	PerTarget     map[string]int64 // samples per TargetSpec.Name
	// Unreachable maps each optional target that could not be reached,
	// refused the subscription or failed later to why.
	Unreachable map[string]string
}

// Collector subscribes to gNMI targets with STREAM/SAMPLE subscriptions
// through github.com/openconfig/gnmic/pkg/api and turns every received leaf
// value into a Sample for its handler. Use NewCollector, Start, then Wait.
//
// Each target has its own gRPC connection and one goroutine besides gnmic's
// and gRPC's; all targets feed one handler goroutine through a bounded
// queue, so a slow handler slows the streams down (back-pressure reaches
// the targets through gRPC flow control) rather than losing samples.
// Responses are decoded straight from the wire into Samples (see
// gnmi_decode.go).
type Collector struct {
	targets        []TargetSpec
	paths          []string
	interval       time.Duration
	run            string
	handler        func([]Sample) error
	connectTimeout time.Duration
	batchSize      int

	started  bool
	parent   context.Context
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup // target goroutines
	out      chan *noteSamples
	done     chan struct{} // closed when everything has ended and err/stats are final
	stats    CollectStats
	err      error
	startErr error

	errMu       sync.Mutex
	targetErrs  []error
	unreachable map[string]string
	interrupted atomic.Bool // a stream was cut by ctx rather than ended by its target
	handlerErr  error       // set by the sink goroutine only
	pool        sync.Pool   // *noteSamples
}

// noteSamples carries one notification's samples to the sink goroutine.
type noteSamples struct {
	target  string // TargetSpec.Name
	samples []Sample
	unknown int64
}

// NewCollector returns a collector for targets; nothing happens until Start.
func NewCollector(targets []TargetSpec, opts ...CollectorOption) *Collector {
	c := &Collector{
		targets:        append([]TargetSpec(nil), targets...),
		paths:          append([]string(nil), DefaultPaths...),
		connectTimeout: 10 * time.Second,
		batchSize:      4096,
		done:           make(chan struct{}),
	}
	c.pool.New = func() any { return new(noteSamples) }
	for _, o := range opts {
		o(c)
	}
	return c
}

// subscriptionName is the gnmic subscription name of every target's one
// subscription.
const subscriptionName = "fabricbench"

// Start connects to every target, subscribes, and returns once every
// subscription has been confirmed by its sync_response, or with the first
// error, naming the target (then everything started is stopped again, and
// Wait returns at once). ctx bounds the whole collection: cancelling it
// later stops collecting.
func (c *Collector) Start(ctx context.Context) error {
	if c.started {
		return errors.New("telemetry: collector already started")
	}
	c.started = true
	if err := c.validate(); err != nil {
		c.startErr, c.err = err, err
		close(c.done)
		return err
	}
	c.parent = ctx
	c.ctx, c.cancel = context.WithCancel(ctx)
	c.out = make(chan *noteSamples, 256)
	c.stats.PerTarget = make(map[string]int64, len(c.targets))

	ready := make(chan error, len(c.targets))
	sinkDone := make(chan struct{})
	go c.sink(sinkDone)
	for _, spec := range c.targets {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			if err := c.runTarget(spec, ready); err != nil {
				c.errMu.Lock()
				if spec.Optional {
					if c.unreachable == nil {
						c.unreachable = map[string]string{}
					}
					c.unreachable[spec.Name] = err.Error()
				} else {
					c.targetErrs = append(c.targetErrs, err)
				}
				c.errMu.Unlock()
			}
		}()
	}
	go func() {
		c.wg.Wait()
		close(c.out)
		<-sinkDone
		c.finish()
		close(c.done)
	}()

	for range c.targets {
		var err error
		select {
		case err = <-ready:
		case <-ctx.Done():
			err = fmt.Errorf("telemetry: subscribing: %w", ctx.Err())
		}
		if err != nil {
			c.cancel()
			<-c.done
			c.startErr = err
			return err
		}
	}
	return nil
}

func (c *Collector) validate() error {
	seen := make(map[string]bool, len(c.targets))
	for i, t := range c.targets {
		if t.Name == "" || t.Address == "" {
			return fmt.Errorf("telemetry: target %d: name and address are required", i)
		}
		if seen[t.Name] {
			return fmt.Errorf("telemetry: duplicate target %q", t.Name)
		}
		seen[t.Name] = true
	}
	if c.interval < 0 {
		return fmt.Errorf("telemetry: negative sample interval %v", c.interval)
	}
	return nil
}

// finish computes the final error once every goroutine has ended.
func (c *Collector) finish() {
	c.errMu.Lock()
	errs := append([]error(nil), c.targetErrs...)
	c.stats.Unreachable = c.unreachable
	c.errMu.Unlock()
	if c.handlerErr != nil {
		errs = append([]error{fmt.Errorf("telemetry: sample handler: %w", c.handlerErr)}, errs...)
	} else if c.interrupted.Load() && c.parent.Err() != nil {
		errs = append(errs, fmt.Errorf("telemetry: collection interrupted: %w", c.parent.Err()))
	}
	c.err = errors.Join(errs...)
	c.cancel()
}

// Stop ends every subscription now, as if each target had ended its
// stream: what was received is kept and Wait reports no error for it.
// It is for targets that are not stopped with the run (a switch's own
// gNMI server streams until told otherwise).
func (c *Collector) Stop() {
	if c.started && c.cancel != nil {
		c.cancel()
	}
}

// Wait blocks until every stream has ended (its target closed it), failed,
// or was cut because the Start context was cancelled or the handler failed.
// Everything received has been handed to the handler when it returns. The
// error joins the targets' failures (each naming its target), the
// handler's error and, if streams were cut, the context's error.
func (c *Collector) Wait() (CollectStats, error) {
	if !c.started {
		return CollectStats{}, errors.New("telemetry: collector not started")
	}
	<-c.done
	if c.startErr != nil && c.err == nil {
		return c.stats, c.startErr
	}
	return c.stats, c.err
}

// sink is the one goroutine that calls the handler.
func (c *Collector) sink(done chan<- struct{}) {
	defer close(done)
	batch := make([]Sample, 0, c.batchSize)
	flush := func() {
		if len(batch) > 0 && c.handlerErr == nil && c.handler != nil {
			if err := c.handler(batch); err != nil {
				c.handlerErr = err
				c.cancel()
			}
		}
		batch = batch[:0]
	}
	for ns := range c.out {
		c.stats.Notifications++
		c.stats.Unknown += ns.unknown
		c.stats.Samples += int64(len(ns.samples))
		c.stats.PerTarget[ns.target] += int64(len(ns.samples))
		batch = append(batch, ns.samples...)
		clear(ns.samples) // drop string references before pooling
		ns.samples = ns.samples[:0]
		c.pool.Put(ns)
		if len(batch) >= c.batchSize || len(c.out) == 0 {
			flush()
		}
	}
	flush()
}

// retryTimer sets gnmic's resubscribe delay. A stream is never
// resubscribed here (EOF means done, other errors fail the target), so the
// delay only has to outlast cancelling the subscription.
func retryTimer(d time.Duration) api.TargetOption {
	return func(t *target.Target) error { t.Config.RetryTimer = d; return nil }
}

// runTarget subscribes to one target and forwards its notifications until
// the stream ends. It sends exactly one value on ready: nil once the
// subscription is confirmed, else the error.
//
// gnmic's SubscribeStreamChan goroutine sends on unbuffered channels that
// are never closed and, after any error, waits RetryTimer or until its
// context is done. Every exit of that goroutine after its initial context
// check is preceded by a send on the error channel, so once we know it has
// passed that check (clientHook), cancelling its context and receiving
// until one error arrives guarantees it ends: no goroutine is leaked.
func (c *Collector) runTarget(spec TargetSpec, ready chan<- error) error {
	signalled := false
	signal := func(err error) {
		if !signalled {
			signalled = true
			ready <- err
		}
	}
	fail := func(err error) error {
		err = &TargetError{Target: spec.Name, Err: err}
		if spec.Optional {
			signal(nil) // the others go on without it
		} else {
			signal(err)
		}
		return err
	}

	opts := []api.TargetOption{
		api.Name(spec.Name), api.Address(spec.Address),
		api.Timeout(c.connectTimeout), retryTimer(24 * time.Hour),
	}
	if spec.TLS != nil {
		opts = append(opts, api.Insecure(false), api.TLSConfig(spec.TLS.Clone()))
	} else {
		opts = append(opts, api.Insecure(true))
	}
	if spec.Username != "" {
		opts = append(opts, api.Username(spec.Username))
	}
	if spec.Password != "" {
		opts = append(opts, api.Password(spec.Password))
	}
	tg, err := api.NewTarget(opts...)
	if err != nil {
		return fail(err)
	}
	var req *gnmi.SubscribeRequest
	if spec.Profile == ProfileSONiC {
		req = sonicSubscribeRequest(max(c.interval, SONiCMinInterval))
	} else {
		subOpts := []api.GNMIOption{api.Target(spec.Name), api.SubscriptionListModeSTREAM(), api.EncodingPROTO()}
		for _, p := range c.paths {
			subOpts = append(subOpts, api.Subscription(api.Path(p), api.SubscriptionMode("sample"), api.SampleInterval(c.interval)))
		}
		req, err = api.NewSubscribeRequest(subOpts...)
	}
	if err != nil {
		return fail(err)
	}
	if err := tg.CreateGNMIClient(c.ctx, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20))); err != nil {
		return fail(fmt.Errorf("connect %s: %w", spec.Address, err))
	}
	defer tg.Close()
	hook := &clientHook{GNMIClient: tg.Client, started: make(chan struct{})}
	tg.Client = hook

	// The subscription's context is cancelled only by this goroutine,
	// never before gnmic's goroutine has started (see above).
	subCtx, subCancel := context.WithCancel(context.WithoutCancel(c.ctx))
	defer subCancel()
	respCh, errCh := tg.SubscribeStreamChan(subCtx, req, subscriptionName)

	conv := converter{run: c.run, spec: spec.Name, ifaces: map[string]string{}}
	// handle processes one response; a response that cannot be decoded
	// fails the target.
	handle := func(resp *gnmi.SubscribeResponse) error {
		ns := c.pool.Get().(*noteSamples)
		var samples []Sample
		var r response
		var err error
		if spec.Profile == ProfileSONiC {
			samples, r, err = conv.decodeSONiC(ns.samples[:0], resp)
		} else {
			samples, r, err = conv.decodeResponse(ns.samples[:0], resp)
		}
		if len(spec.Interfaces) > 0 {
			for i := range samples {
				if to, ok := spec.Interfaces[samples[i].Interface]; ok {
					samples[i].Interface = to
				}
			}
		}
		ns.samples = samples
		if r.sync {
			signal(nil)
		}
		if err != nil || !r.update {
			clear(ns.samples)
			ns.samples = ns.samples[:0]
			c.pool.Put(ns)
			if err != nil {
				return fmt.Errorf("decoding a notification: %w", err)
			}
			return nil
		}
		ns.target, ns.unknown = spec.Name, r.unknown
		c.out <- ns // the sink drains until every target goroutine has ended
		return nil
	}
	for {
		select {
		case resp := <-respCh:
			if err := handle(resp); err != nil {
				<-hook.started
				subCancel()
				drain(respCh, errCh)
				return fail(err)
			}
		case err := <-errCh:
			subCancel() // gnmic's goroutine now waits to retry; this ends it
			switch {
			case errors.Is(err, io.EOF):
				if !signalled {
					return fail(errors.New("stream ended before sync_response"))
				}
				return nil
			case err == nil:
				return fail(errors.New("stream aborted"))
			default:
				return fail(err)
			}
		case <-c.ctx.Done():
			<-hook.started
			subCancel()
			drain(respCh, errCh)
			c.interrupted.Store(true)
			signal(fmt.Errorf("telemetry: target %q: %w", spec.Name, c.ctx.Err()))
			return nil
		}
	}
}

// drain receives from gnmic's subscribe channels, after its context has
// been cancelled, until its goroutine reports the error it ends with.
func drain(respCh <-chan *gnmi.SubscribeResponse, errCh <-chan error) {
	for {
		select {
		case <-respCh:
		case <-errCh:
			return
		}
	}
}

// converter turns notifications of one target into samples.
type converter struct {
	run, spec string
	ifaces    map[string]string // interned interface and queue names
	elems     []*gnmi.PathElem
	// Fast decoder scratch (gnmi_decode.go).
	relems []rawElem
	rkv    []rawKV
}

func (cv *converter) intern(s string) string {
	if v, ok := cv.ifaces[s]; ok {
		return v
	}
	if len(cv.ifaces) < 1<<14 {
		cv.ifaces[s] = s
	}
	return s
}

// convert appends n's samples to dst and returns it with the number of
// updates skipped.
func (cv *converter) convert(dst []Sample, n *gnmi.Notification) ([]Sample, int64) {
	tgt := n.GetPrefix().GetTarget()
	if tgt == "" {
		tgt = cv.spec
	} else if tgt == cv.spec {
		tgt = cv.spec // share the string
	}
	pfx := n.GetPrefix().GetElem()
	var unknown int64
	for _, u := range n.GetUpdate() {
		elems := u.GetPath().GetElem()
		if len(pfx) > 0 {
			cv.elems = append(append(cv.elems[:0], pfx...), elems...)
			elems = cv.elems
		}
		meas, iface, queue, field, ok := parseLeaf(elems)
		if !ok {
			unknown++
			continue
		}
		var v int64
		switch tv := u.GetVal().GetValue().(type) {
		case *gnmi.TypedValue_UintVal:
			v = int64(tv.UintVal)
		case *gnmi.TypedValue_IntVal:
			v = tv.IntVal
		default:
			unknown++
			continue
		}
		dst = append(dst, Sample{
			Time: n.GetTimestamp(), Run: cv.run, Target: tgt, Measurement: meas,
			Interface: cv.intern(iface), Queue: cv.intern(queue), Field: field, Value: v,
		})
	}
	clear(cv.elems)
	return dst, unknown
}
