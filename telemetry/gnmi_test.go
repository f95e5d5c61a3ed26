package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmic/pkg/api"
	gpath "github.com/openconfig/gnmic/pkg/api/path"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

const (
	testEpoch = int64(1_700_000_000_000_000_000)
	testBase  = 100 * time.Microsecond
)

var testDevs = []Device{
	{Name: "leaf0", Interfaces: []string{"Ethernet0", "Ethernet4"}, Queues: true},
	{Name: "host0", Interfaces: []string{"nic0"}},
	{Name: "spine0", Interfaces: []string{"Ethernet0", "Ethernet4", "Ethernet8"}, Queues: true},
}

// waitFor polls cond; it fails the test if cond does not hold within a
// generous deadline. It never asserts on elapsed time.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// checkGoroutines fails the test if, after its cleanups, more goroutines
// run than when it started. Call it first so that its cleanup runs last.
func checkGoroutines(t testing.TB) {
	base := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(15 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= base {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("%d goroutines still running, baseline %d:\n%s", n, base, buf)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func startServer(t testing.TB, devs []Device, opts ...ServerOption) *Server {
	t.Helper()
	srv, err := NewServer(devs, append([]ServerOption{WithBaseInterval(testBase)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	return srv
}

func specsFor(srv *Server, names ...string) []TargetSpec {
	user, pass := srv.Credentials()
	out := make([]TargetSpec, len(names))
	for i, n := range names {
		out[i] = TargetSpec{Name: n, Address: srv.Addr(), Username: user, Password: pass}
	}
	return out
}

// tickValue is the value of leaf idx of device d at tick.
func tickValue(tick, d, idx int) int64 { return int64(tick)*1_000_000 + int64(d)*10_000 + int64(idx) }

func tickTime(tick int) int64 { return testEpoch + int64(tick)*testBase.Nanoseconds() }

// publisher publishes ticks with one reused set of value slices, so a
// Publish that kept a reference would be caught by the value checks.
type publisher struct {
	srv  *Server
	vals [][]int64
}

func newPublisher(srv *Server, devs []Device) *publisher {
	p := &publisher{srv: srv}
	for _, d := range devs {
		p.vals = append(p.vals, make([]int64, ValuesPerDevice(d)))
	}
	return p
}

func (p *publisher) publish(ctx context.Context, tick int) error {
	for d := range p.vals {
		for i := range p.vals[d] {
			p.vals[d][i] = tickValue(tick, d, i)
		}
	}
	err := p.srv.Publish(ctx, tickTime(tick), p.vals)
	for d := range p.vals {
		for i := range p.vals[d] {
			p.vals[d][i] = -1
		}
	}
	return err
}

func (p *publisher) publishRange(t testing.TB, ctx context.Context, from, to int) {
	t.Helper()
	for tick := from; tick < to; tick++ {
		if err := p.publish(ctx, tick); err != nil {
			t.Fatalf("Publish tick %d: %v", tick, err)
		}
	}
}

// leafSample describes leaf idx of devs[d] at tick as the collector should
// report it.
func leafSample(devs []Device, d, idx, tick int, run string) Sample {
	dev := devs[d]
	st := stride(&dev)
	s := Sample{Time: tickTime(tick), Run: run, Target: dev.Name, Interface: dev.Interfaces[idx/st], Value: tickValue(tick, d, idx)}
	if off := idx % st; off < len(InterfaceFields) {
		s.Measurement, s.Field = MeasInterface, InterfaceFields[off]
	} else {
		s.Measurement, s.Field, s.Queue = MeasQueue, QueueFields[off-len(InterfaceFields)], QueueName
	}
	return s
}

// expect returns the multiset of samples of the given device's leaves that
// keep accepts, at the given ticks.
func expect(devs []Device, d int, ticks []int, run string, keep func(Sample) bool) map[Sample]int {
	out := map[Sample]int{}
	for _, tick := range ticks {
		for idx := range counterValues(&devs[d]) {
			s := leafSample(devs, d, idx, tick, run)
			if keep == nil || keep(s) {
				out[s]++
			}
		}
	}
	return out
}

func ticksRange(from, to, step int) []int {
	var out []int
	for i := from; i < to; i += step {
		out = append(out, i)
	}
	return out
}

func multiset(samples []Sample) map[Sample]int {
	out := map[Sample]int{}
	for _, s := range samples {
		out[s]++
	}
	return out
}

func diffSets(t testing.TB, what string, got, want map[Sample]int) {
	t.Helper()
	if maps.Equal(got, want) {
		return
	}
	var missing, extra []string
	for s, n := range want {
		if got[s] != n {
			missing = append(missing, fmt.Sprintf("%+v x%d (got x%d)", s, n, got[s]))
		}
	}
	for s, n := range got {
		if _, ok := want[s]; !ok {
			extra = append(extra, fmt.Sprintf("%+v x%d", s, n))
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	if len(missing) > 5 {
		missing = append(missing[:5], "...")
	}
	if len(extra) > 5 {
		extra = append(extra[:5], "...")
	}
	t.Errorf("%s: got %d distinct samples, want %d\nmissing or miscounted: %v\nunexpected: %v",
		what, len(got), len(want), missing, extra)
}

// recorder is a batch handler that keeps copies of every sample.
type recorder struct {
	samples []Sample
	batches int
}

func (r *recorder) handle(batch []Sample) error {
	r.batches++
	r.samples = append(r.samples, batch...)
	return nil
}

func startCollector(t testing.TB, ctx context.Context, specs []TargetSpec, opts ...CollectorOption) (*Collector, *recorder) {
	t.Helper()
	rec := &recorder{}
	c := NewCollector(specs, append([]CollectorOption{WithHandler(rec.handle)}, opts...)...)
	if err := c.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return c, rec
}

func TestLayout(t *testing.T) {
	d := Device{Name: "x", Interfaces: []string{"a", "b", "c"}, Queues: true}
	// 3 interfaces x (8 counters + 10 queue leaves), then 3 x 2 status.
	if got := ValuesPerDevice(d); got != 60 {
		t.Errorf("ValuesPerDevice = %d, want 60", got)
	}
	if got := ValuesPerDevice(Device{Interfaces: []string{"a", "b"}}); got != 20 {
		t.Errorf("ValuesPerDevice without queues = %d, want 20", got)
	}
	cases := []struct {
		iface       int
		meas, field string
		want        int
	}{
		{0, MeasInterface, FieldInOctets, 0},
		{0, MeasInterface, FieldOutDiscards, 4},
		{0, MeasInterface, FieldOutErrors, 7},
		{0, MeasQueue, FieldTransmitOctets, 8},
		{1, MeasInterface, FieldOutOctets, 19},
		{1, MeasQueue, FieldTrimPkts, 29},
		{2, MeasQueue, FieldMaxQueueLen, 48},
		{2, MeasQueue, FieldBackloggedNs, 49},
		{2, MeasQueue, FieldPFCPausedNs, 52},
		{2, MeasQueue, FieldTransmitPkts, 53},
		{0, MeasInterface, FieldOperStatus, 54},
		{0, MeasInterface, FieldAdminStatus, 55},
		{2, MeasInterface, FieldAdminStatus, 59},
		{0, MeasQueue, FieldOperStatus, -1},
		{3, MeasInterface, FieldInOctets, -1},
		{-1, MeasInterface, FieldInOctets, -1},
		{0, MeasInterface, FieldTrimPkts, -1},
		{0, "nope", FieldInOctets, -1},
	}
	for _, c := range cases {
		if got := ValueIndex(d, c.iface, c.meas, c.field); got != c.want {
			t.Errorf("ValueIndex(%d, %s, %s) = %d, want %d", c.iface, c.meas, c.field, got, c.want)
		}
	}
	if got := ValueIndex(Device{Interfaces: []string{"a"}}, 0, MeasQueue, FieldTrimPkts); got != -1 {
		t.Errorf("ValueIndex of a queue leaf without queues = %d, want -1", got)
	}
	// The served paths follow the same order: the counters (which the
	// collector parses), the status leaves, then the static ones.
	paths := gnmiLeafPaths(&d)
	if len(paths) != leavesPerDevice(&d) || len(paths) != 66 {
		t.Fatalf("%d leaves, want 66", len(paths))
	}
	for i, want := range map[int]string{
		54: "/interfaces/interface[name=a]/state/oper-status",
		59: "/interfaces/interface[name=c]/state/admin-status",
		60: "/interfaces/interface[name=a]/state/name",
		61: "/interfaces/interface[name=a]/ethernet/state/port-speed",
		65: "/interfaces/interface[name=c]/ethernet/state/port-speed",
	} {
		if got := pathString("", paths[i].GetElem()); got != want {
			t.Errorf("leaf %d: %s, want %s", i, got, want)
		}
	}
	for i, p := range paths[:counterValues(&d)] {
		meas, iface, queue, field, ok := parseLeaf(p.GetElem())
		if !ok {
			t.Fatalf("leaf %d: path %s not parsed", i, pathString("", p.GetElem()))
		}
		ifi := slices.Index(d.Interfaces, iface)
		if got := ValueIndex(d, ifi, meas, field); got != i {
			t.Errorf("leaf %d (%s): ValueIndex = %d", i, pathString("", p.GetElem()), got)
		}
		if (meas == MeasQueue) != (queue == QueueName) {
			t.Errorf("leaf %d: measurement %s with queue %q", i, meas, queue)
		}
	}
}

func TestNewServerRejectsBadDevices(t *testing.T) {
	checkGoroutines(t)
	for name, devs := range map[string][]Device{
		"no name":         {{Interfaces: []string{"a"}}},
		"duplicate name":  {{Name: "a"}, {Name: "a"}},
		"duplicate iface": {{Name: "a", Interfaces: []string{"x", "x"}}},
	} {
		if srv, err := NewServer(devs); err == nil {
			srv.Close(context.Background())
			t.Errorf("%s: NewServer accepted %+v", name, devs)
		}
	}
	if _, err := NewServer(testDevs, WithBaseInterval(0)); err == nil {
		t.Error("NewServer accepted a zero base interval")
	}
}

func TestPublishCollect(t *testing.T) {
	checkGoroutines(t)
	ctx := testCtx(t)
	srv := startServer(t, testDevs)
	coll, rec := startCollector(t, ctx, specsFor(srv, "leaf0", "host0", "spine0"), WithRun("run-1"))
	// Start returns after every sync_response, which the server sends
	// after registering the subscription.
	if got := srv.Stats().Subscriptions; got != 3 {
		t.Fatalf("after Start: %d subscriptions registered, want 3", got)
	}
	if err := srv.WaitSubscribers(ctx, 3); err != nil {
		t.Fatal(err)
	}
	const n = 40
	p := newPublisher(srv, testDevs)
	p.publishRange(t, ctx, 0, n)
	if err := srv.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	stats, err := coll.Wait()
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	want := map[Sample]int{}
	for d := range testDevs {
		maps.Copy(want, expect(testDevs, d, ticksRange(0, n, 1), "run-1", nil))
	}
	diffSets(t, "collected", multiset(rec.samples), want)
	if stats.Samples != int64(len(want)) || stats.Notifications != 3*n || stats.Unknown != 0 {
		t.Errorf("stats = %+v, want %d samples, %d notifications", stats, len(want), 3*n)
	}
	for d, dev := range testDevs {
		if got, w := stats.PerTarget[dev.Name], int64(n*counterValues(&testDevs[d])); got != w {
			t.Errorf("PerTarget[%s] = %d, want %d", dev.Name, got, w)
		}
	}
	if got := srv.Stats().Ticks; got != n {
		t.Errorf("server ticks = %d, want %d", got, n)
	}
	// Closed: Publish refuses, Close is idempotent.
	if err := p.publish(ctx, n); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Publish after Close: %v, want ErrServerClosed", err)
	}
	if err := srv.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := srv.WaitSubscribers(ctx, 1); !errors.Is(err, ErrServerClosed) {
		t.Errorf("WaitSubscribers after Close: %v, want ErrServerClosed", err)
	}
}

func TestPublishValidatesShape(t *testing.T) {
	checkGoroutines(t)
	ctx := testCtx(t)
	srv := startServer(t, testDevs)
	if err := srv.Publish(ctx, 1, make([][]int64, 2)); err == nil {
		t.Error("Publish accepted values for 2 of 3 devices")
	}
	vals := [][]int64{make([]int64, 40), make([]int64, 10), make([]int64, 59)}
	if err := srv.Publish(ctx, 1, vals); err == nil {
		t.Error("Publish accepted 59 values for a device with 60")
	}
	vals[2] = make([]int64, 60)
	if err := srv.Publish(ctx, 1, vals); err != nil {
		t.Errorf("Publish of the right shape: %v", err)
	}
}

func TestSampleInterval(t *testing.T) {
	checkGoroutines(t)
	ctx := testCtx(t)
	srv := startServer(t, testDevs)
	ca, ra := startCollector(t, ctx, specsFor(srv, "leaf0"), WithSampleInterval(2*testBase))
	cb, rb := startCollector(t, ctx, specsFor(srv, "host0"))
	cc, rc := startCollector(t, ctx, specsFor(srv, "spine0"), WithSampleInterval(3*testBase))
	p := newPublisher(srv, testDevs)
	p.publishRange(t, ctx, 0, 5)
	// Registered after tick 4: its initial data (before sync_response)
	// is tick 4, then it samples every 2 ticks from there.
	cd, rd := startCollector(t, ctx, specsFor(srv, "host0"), WithSampleInterval(2*testBase))
	p.publishRange(t, ctx, 5, 10)
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Collector{ca, cb, cc, cd} {
		if _, err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	diffSets(t, "200us", multiset(ra.samples), expect(testDevs, 0, []int{0, 2, 4, 6, 8}, "", nil))
	diffSets(t, "base", multiset(rb.samples), expect(testDevs, 1, ticksRange(0, 10, 1), "", nil))
	diffSets(t, "300us", multiset(rc.samples), expect(testDevs, 2, []int{0, 3, 6, 9}, "", nil))
	diffSets(t, "late 200us", multiset(rd.samples), expect(testDevs, 1, []int{4, 6, 8}, "", nil))
}

func TestPathSelection(t *testing.T) {
	checkGoroutines(t)
	cases := []struct {
		name  string
		paths []string
		keep  func(Sample) bool
	}{
		{"keyed leaf", []string{"/interfaces/interface[name=Ethernet4]/state/counters/out-octets"},
			func(s Sample) bool {
				return s.Measurement == MeasInterface && s.Interface == "Ethernet4" && s.Field == FieldOutOctets
			}},
		{"wildcard key", []string{"/qos/interfaces/interface[interface-id=*]/output/queues/queue[name=data]/state/dropped-pkts"},
			func(s Sample) bool { return s.Measurement == MeasQueue && s.Field == FieldDroppedPkts }},
		{"subtree", []string{"/qos"},
			func(s Sample) bool { return s.Measurement == MeasQueue }},
		{"origin and keyed subtree", []string{"openconfig:/interfaces/interface[name=Ethernet0]"},
			func(s Sample) bool { return s.Measurement == MeasInterface && s.Interface == "Ethernet0" }},
		{"overlapping paths deduplicated", []string{"/interfaces", "/interfaces/interface[name=Ethernet0]/state/counters/in-pkts"},
			func(s Sample) bool { return s.Measurement == MeasInterface }},
		{"element wildcards", []string{"/interfaces/interface[name=Ethernet0]/*/*/in-octets", "/qos/.../trim-pkts"},
			func(s Sample) bool {
				return (s.Interface == "Ethernet0" && s.Field == FieldInOctets) || s.Field == FieldTrimPkts
			}},
		{"defaults", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			srv := startServer(t, testDevs)
			coll, rec := startCollector(t, ctx, specsFor(srv, "leaf0"), WithPaths(tc.paths...))
			newPublisher(srv, testDevs).publishRange(t, ctx, 0, 3)
			if err := srv.Close(ctx); err != nil {
				t.Fatal(err)
			}
			stats, err := coll.Wait()
			if err != nil {
				t.Fatal(err)
			}
			want := expect(testDevs, 0, ticksRange(0, 3, 1), "", tc.keep)
			diffSets(t, strings.Join(tc.paths, ","), multiset(rec.samples), want)
			if stats.Notifications != 3 {
				t.Errorf("%d notifications, want 3 (one per tick)", stats.Notifications)
			}
		})
	}
}

func TestSubscribeErrors(t *testing.T) {
	checkGoroutines(t)
	ctx := testCtx(t)
	srv := startServer(t, testDevs)
	good := specsFor(srv, "leaf0")[0]
	wrongPass := good
	wrongPass.Password = "not-the-password"
	unknown := good
	unknown.Name = "no-such-device"
	cases := []struct {
		name     string
		spec     TargetSpec
		opts     []CollectorOption
		code     codes.Code
		contains []string
	}{
		{"unknown target", unknown, nil, codes.NotFound, []string{"no-such-device"}},
		{"path matches nothing", good, []CollectorOption{WithPaths("/interfaces/interface[name=Ethernet99]/state")},
			codes.InvalidArgument, []string{"/interfaces/interface[name=Ethernet99]/state"}},
		{"unknown leaf", good, []CollectorOption{WithPaths("/interfaces/interface/state/counters/bogus")},
			codes.InvalidArgument, []string{"bogus"}},
		{"interval not a multiple", good, []CollectorOption{WithSampleInterval(150 * time.Microsecond)},
			codes.InvalidArgument, []string{"150000", "100000"}},
		{"interval below base", good, []CollectorOption{WithSampleInterval(50 * time.Microsecond)},
			codes.InvalidArgument, []string{"50000", "100000"}},
		{"wrong password", wrongPass, nil, codes.Unauthenticated, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCollector([]TargetSpec{tc.spec}, append([]CollectorOption{WithHandler(func([]Sample) error { return nil })}, tc.opts...)...)
			err := c.Start(ctx)
			if got := status.Code(err); got != tc.code {
				t.Fatalf("Start: code %v (%v), want %v", got, err, tc.code)
			}
			for _, s := range append(tc.contains, tc.spec.Name) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if _, werr := c.Wait(); status.Code(werr) != tc.code {
				t.Errorf("Wait: %v, want code %v", werr, tc.code)
			}
		})
	}
	if got := srv.Stats().Subscriptions; got != 0 {
		t.Errorf("%d subscriptions registered after failed subscribes", got)
	}
}

// rawClient returns a plain gNMI client for srv and a context carrying
// srv's credentials.
func rawClient(t testing.TB, srv *Server) gnmi.GNMIClient {
	t.Helper()
	conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return gnmi.NewGNMIClient(conn)
}

func authCtx(ctx context.Context, srv *Server) context.Context {
	user, pass := srv.Credentials()
	return metadata.AppendToOutgoingContext(ctx, "username", user, "password", pass)
}

// rawSubscribe sends req and receives until the stream ends; io.EOF is
// reported as nil.
func rawSubscribe(ctx context.Context, cl gnmi.GNMIClient, srv *Server, req *gnmi.SubscribeRequest) ([]*gnmi.SubscribeResponse, error) {
	ctx, cancel := context.WithCancel(authCtx(ctx, srv))
	defer cancel()
	st, err := cl.Subscribe(ctx)
	if err != nil {
		return nil, err
	}
	if err := st.Send(req); err != nil {
		return nil, err
	}
	var out []*gnmi.SubscribeResponse
	for {
		r, err := st.Recv()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
}

func mustRequest(t testing.TB, opts ...api.GNMIOption) *gnmi.SubscribeRequest {
	t.Helper()
	req, err := api.NewSubscribeRequest(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestSubscribeUnsupported(t *testing.T) {
	checkGoroutines(t)
	ctx := testCtx(t)
	srv := startServer(t, testDevs)
	cl := rawClient(t, srv)
	cases := []struct {
		name string
		req  *gnmi.SubscribeRequest
		code codes.Code
	}{
		{"ascii", mustRequest(t, api.Target("leaf0"), api.SubscriptionListModeSTREAM(), api.EncodingASCII(),
			api.Subscription(api.Path("/interfaces"), api.SubscriptionModeSAMPLE())), codes.Unimplemented},
		{"other origin", mustRequest(t, api.Target("leaf0"), api.SubscriptionListModeSTREAM(), api.EncodingPROTO(),
			api.Subscription(api.Path("vendor:/interfaces"), api.SubscriptionModeSAMPLE())), codes.InvalidArgument},
		{"unknown target", mustRequest(t, api.Target("leaf9"), api.SubscriptionListModeSTREAM(), api.EncodingPROTO(),
			api.Subscription(api.Path("/interfaces"), api.SubscriptionModeSAMPLE())), codes.NotFound},
		{"heartbeat below base", mustRequest(t, api.Target("leaf0"), api.SubscriptionListModeSTREAM(), api.EncodingPROTO(),
			api.Subscription(api.Path("/interfaces"), api.SubscriptionModeON_CHANGE(), api.HeartbeatInterval(time.Microsecond))), codes.InvalidArgument},
		{"no subscriptions", mustRequest(t, api.Target("leaf0"), api.SubscriptionListModeSTREAM()), codes.InvalidArgument},
	}
	for _, tc := range cases {
		if _, err := rawSubscribe(ctx, cl, srv, tc.req); status.Code(err) != tc.code {
			t.Errorf("%s: %v, want code %v", tc.name, err, tc.code)
		}
	}
	// Unauthenticated without metadata.
	st, err := cl.Subscribe(ctx)
	if err == nil {
		_, err = st.Recv()
	}
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("no credentials: %v, want Unauthenticated", err)
	}
}

func TestSubscribeOnce(t *testing.T) {
	checkGoroutines(t)
	ctx := testCtx(t)
	srv := startServer(t, testDevs)
	cl := rawClient(t, srv)
	req := mustRequest(t, api.Target("host0"), api.SubscriptionListModeONCE(), api.EncodingPROTO(),
		api.Subscription(api.Path("/interfaces/interface/state/counters/out-pkts")))
	resps, err := rawSubscribe(ctx, cl, srv, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resps) != 1 || !resps[0].GetSyncResponse() {
		t.Fatalf("ONCE before any Publish: %v, want just sync_response", resps)
	}
	newPublisher(srv, testDevs).publishRange(t, ctx, 0, 3)
	resps, err = rawSubscribe(ctx, cl, srv, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resps) != 2 || !resps[1].GetSyncResponse() {
		t.Fatalf("ONCE: %v, want one notification then sync_response", resps)
	}
	n := resps[0].GetUpdate()
	if n.GetTimestamp() != tickTime(2) || n.GetPrefix().GetTarget() != "host0" || len(n.GetUpdate()) != 1 {
		t.Fatalf("ONCE notification %v, want tick 2 of host0 with one update", n)
	}
	u := n.GetUpdate()[0]
	idx := ValueIndex(testDevs[1], 0, MeasInterface, FieldOutPkts)
	if got, want := pathString("", u.GetPath().GetElem()), "/interfaces/interface[name=nic0]/state/counters/out-pkts"; got != want {
		t.Errorf("path %s, want %s", got, want)
	}
	if got := int64(u.GetVal().GetUintVal()); got != tickValue(2, 1, idx) {
		t.Errorf("value %d, want %d", got, tickValue(2, 1, idx))
	}
	if got := srv.Stats().Subscriptions; got != 0 {
		t.Errorf("ONCE left %d STREAM subscriptions", got)
	}
}

func TestCapabilities(t *testing.T) {
	checkGoroutines(t)
	ctx := testCtx(t)
	srv := startServer(t, testDevs)
	user, pass := srv.Credentials()
	if user != DefaultUsername || len(pass) < 16 || pass != srv.Password() {
		t.Errorf("credentials %q/%d chars, want %q and a random password", user, len(pass), DefaultUsername)
	}
	other := startServer(t, testDevs[:1])
	if other.Password() == pass {
		t.Error("two servers share a password")
	}
	for _, pw := range []string{pass, "wrong"} {
		tg, err := api.NewTarget(api.Name("leaf0"), api.Address(srv.Addr()), api.Username(user), api.Password(pw), api.Insecure(true))
		if err != nil {
			t.Fatal(err)
		}
		if err := tg.CreateGNMIClient(ctx); err != nil {
			t.Fatal(err)
		}
		resp, err := tg.Capabilities(ctx)
		tg.Close()
		if pw != pass {
			if status.Code(err) != codes.Unauthenticated {
				t.Errorf("Capabilities with a wrong password: %v, want Unauthenticated", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var models []string
		for _, m := range resp.GetSupportedModels() {
			models = append(models, m.GetName())
		}
		if !slices.Contains(models, "openconfig-interfaces") || !slices.Contains(models, "openconfig-qos") {
			t.Errorf("models %v", models)
		}
		if !slices.Contains(resp.GetSupportedEncodings(), gnmi.Encoding_PROTO) {
			t.Errorf("encodings %v lack PROTO", resp.GetSupportedEncodings())
		}
	}
}

// streamSubscribe opens a subscription stream on cl (ctx carries the
// credentials), subscribes to target in STREAM mode with subs and waits
// for the sync_response.
func streamSubscribe(t testing.TB, ctx context.Context, cl gnmi.GNMIClient, target string, subs ...api.GNMIOption) gnmi.GNMI_SubscribeClient {
	t.Helper()
	st, err := cl.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	opts := append([]api.GNMIOption{api.Target(target), api.SubscriptionListModeSTREAM(), api.EncodingPROTO()}, subs...)
	if err := st.Send(mustRequest(t, opts...)); err != nil {
		t.Fatal(err)
	}
	if r, err := st.Recv(); err != nil || !r.GetSyncResponse() {
		t.Fatalf("first response %v, %v; want sync_response", r, err)
	}
	return st
}

// publishToStall publishes ticks (publishUntil) until a client that
// reads nothing stalls Publish; close stop to end, then done has the
// number of ticks and errs Publish's error.
func publishToStall(t testing.TB, ctx context.Context, srv *Server) (stop chan struct{}, done chan int, errs chan error) {
	t.Helper()
	stop, done, errs = make(chan struct{}), make(chan int, 1), make(chan error, 1)
	go publishUntil(ctx, newPublisher(srv, testDevs), stop, done, errs)
	waitFor(t, "Publish to stall", func() bool { return srv.Stats().Stalls > 0 })
	return stop, done, errs
}

// publishUntil publishes ticks from 0 until stop is closed and returns the
// number published on the result channel.
func publishUntil(ctx context.Context, p *publisher, stop <-chan struct{}, done chan<- int, errs chan<- error) {
	for tick := 0; ; tick++ {
		select {
		case <-stop:
			done <- tick
			return
		default:
		}
		if err := p.publish(ctx, tick); err != nil {
			errs <- err
			done <- tick
			return
		}
	}
}

func TestBackPressure(t *testing.T) {
	checkGoroutines(t)
	ctx := testCtx(t)
	srv := startServer(t, testDevs, WithQueueDepth(1))
	release := make(chan struct{})
	var calls atomic.Int64
	var got []Sample
	slow := func(batch []Sample) error {
		calls.Add(1)
		<-release
		got = append(got, batch...)
		return nil
	}
	coll := NewCollector(specsFor(srv, "leaf0", "host0", "spine0"), WithHandler(slow))
	if err := coll.Start(ctx); err != nil {
		t.Fatal(err)
	}
	stop, done, errs := make(chan struct{}), make(chan int, 1), make(chan error, 1)
	go publishUntil(ctx, newPublisher(srv, testDevs), stop, done, errs)
	// The handler is stuck, so the pipeline fills up: the collector's
	// buffer is full and Publish waits for room in a queue.
	waitFor(t, "the collector to fill up and Publish to wait", func() bool {
		return len(coll.out) == cap(coll.out) && srv.Stats().PublishWaiting
	})
	if calls.Load() > 1 {
		t.Fatalf("the blocked handler was called %d times", calls.Load())
	}
	close(release)
	close(stop)
	n := <-done
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	stats, err := coll.Wait()
	if err != nil {
		t.Fatal(err)
	}
	want := map[Sample]int{}
	for d := range testDevs {
		maps.Copy(want, expect(testDevs, d, ticksRange(0, n, 1), "", nil))
	}
	t.Logf("%d ticks, %d stalls, %d samples", n, srv.Stats().Stalls, stats.Samples)
	diffSets(t, "after back-pressure", multiset(got), want)
}

func TestGoneClientReleasesPublish(t *testing.T) {
	checkGoroutines(t)
	ctx := testCtx(t)
	srv := startServer(t, testDevs, WithQueueDepth(1))
	cl := rawClient(t, srv)
	sctx, cancel := context.WithCancel(authCtx(ctx, srv))
	defer cancel()
	streamSubscribe(t, sctx, cl, "spine0", api.Subscription(api.Path("/"), api.SubscriptionModeSAMPLE()))
	// The client reads nothing more: Publish stalls on its queue.
	stop, done, errs := publishToStall(t, ctx, srv)
	cancel() // the client goes away
	waitFor(t, "the subscription to be removed", func() bool { return srv.Stats().Subscriptions == 0 })
	close(stop)
	n := <-done
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	// Publishing goes on without blocking.
	p := newPublisher(srv, testDevs)
	p.publishRange(t, ctx, n, n+100)
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestHandlerErrorAborts(t *testing.T) {
	checkGoroutines(t)
	ctx := testCtx(t)
	srv := startServer(t, testDevs)
	boom := errors.New("disk full")
	calls := 0
	coll := NewCollector(specsFor(srv, "leaf0", "host0"), WithHandler(func([]Sample) error { calls++; return boom }))
	if err := coll.Start(ctx); err != nil {
		t.Fatal(err)
	}
	p := newPublisher(srv, testDevs)
	p.publishRange(t, ctx, 0, 5)
	_, err := coll.Wait()
	if !errors.Is(err, boom) {
		t.Fatalf("Wait: %v, want the handler's error", err)
	}
	if calls != 1 {
		t.Errorf("handler called %d times after failing, want 1", calls)
	}
	waitFor(t, "subscriptions to be removed", func() bool { return srv.Stats().Subscriptions == 0 })
	p.publishRange(t, ctx, 5, 200)
}

func TestCollectorCancel(t *testing.T) {
	checkGoroutines(t)
	ctx := testCtx(t)
	srv := startServer(t, testDevs)
	cctx, cancel := context.WithCancel(ctx)
	coll, rec := startCollector(t, cctx, specsFor(srv, "leaf0", "host0", "spine0"))
	p := newPublisher(srv, testDevs)
	p.publishRange(t, ctx, 0, 3)
	cancel()
	stats, err := coll.Wait()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait after cancel: %v, want context.Canceled", err)
	}
	if stats.Samples != int64(len(rec.samples)) {
		t.Errorf("stats say %d samples, handler got %d", stats.Samples, len(rec.samples))
	}
	waitFor(t, "subscriptions to be removed", func() bool { return srv.Stats().Subscriptions == 0 })
}

func TestCloseForced(t *testing.T) {
	checkGoroutines(t)
	ctx := testCtx(t)
	srv := startServer(t, testDevs, WithQueueDepth(1))
	cl := rawClient(t, srv)
	st := streamSubscribe(t, authCtx(ctx, srv), cl, "leaf0", api.Subscription(api.Path("/interfaces"), api.SubscriptionModeSAMPLE()))
	// The client reads nothing more: Publish stalls while holding a tick,
	// so Close cannot drain and must cut the stream.
	stop, done, _ := publishToStall(t, ctx, srv)
	expired, cancel := context.WithCancel(ctx)
	cancel()
	if err := srv.Close(expired); !errors.Is(err, context.Canceled) {
		t.Errorf("Close with a done context: %v, want it to report context.Canceled", err)
	}
	close(stop)
	<-done
	for {
		if _, err := st.Recv(); err != nil {
			if err == io.EOF {
				t.Error("a cut stream ended normally")
			}
			break
		}
	}
}

// BenchmarkPublishCollect publishes b.N ticks of 100 devices x 16
// interfaces with queues (28,800 counter values a tick) through gNMI to a
// collector subscribed to every device.
func BenchmarkPublishCollect(b *testing.B) {
	const ndev, nif = 100, 16
	devs := make([]Device, ndev)
	for d := range devs {
		devs[d].Name = fmt.Sprintf("sw%03d", d)
		devs[d].Queues = true
		for i := range nif {
			devs[d].Interfaces = append(devs[d].Interfaces, fmt.Sprintf("Ethernet%d", 4*i))
		}
	}
	ctx := testCtx(b)
	srv := startServer(b, devs)
	names := make([]string, ndev)
	for d := range devs {
		names[d] = devs[d].Name
	}
	var count int64
	coll := NewCollector(specsFor(srv, names...), WithHandler(func(batch []Sample) error {
		count += int64(len(batch))
		return nil
	}))
	if err := coll.Start(ctx); err != nil {
		b.Fatal(err)
	}
	p := newPublisher(srv, devs)
	b.ReportAllocs()
	b.ResetTimer()
	for tick := range b.N {
		if err := p.publish(ctx, tick); err != nil {
			b.Fatal(err)
		}
	}
	if err := srv.Close(ctx); err != nil {
		b.Fatal(err)
	}
	stats, err := coll.Wait()
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if want := int64(b.N * ndev * nif * stride(&devs[0])); stats.Samples != want || count != want {
		b.Fatalf("%d samples (handler %d), want %d", stats.Samples, count, want)
	}
	b.ReportMetric(float64(stats.Samples)/b.Elapsed().Seconds(), "samples/s")
	b.ReportMetric(float64(srv.Stats().Stalls)/float64(b.N), "stalls/tick")
}

func TestMixedIntervalsOneStream(t *testing.T) {
	checkGoroutines(t)
	ctx := testCtx(t)
	srv := startServer(t, testDevs)
	cl := rawClient(t, srv)
	st := streamSubscribe(t, authCtx(ctx, srv), cl, "leaf0",
		api.Subscription(api.Path("/interfaces/interface/state/counters"), api.SubscriptionModeSAMPLE()),
		api.Subscription(api.Path("/qos"), api.SubscriptionModeTARGET_DEFINED(), api.SampleInterval(2*testBase)),
		api.Subscription(api.Path("/qos/interfaces/interface[interface-id=Ethernet4]"), api.SubscriptionModeSAMPLE(), api.SampleInterval(3*testBase)),
	)
	newPublisher(srv, testDevs).publishRange(t, ctx, 0, 4)
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	conv := converter{spec: "leaf0", ifaces: map[string]string{}}
	var got []Sample
	notes := 0
	for {
		r, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		notes++
		var unknown int64
		got, unknown = conv.convert(got, r.GetUpdate())
		if unknown != 0 {
			t.Errorf("%d unknown updates", unknown)
		}
	}
	if notes != 4 {
		t.Errorf("%d notifications, want one per tick", notes)
	}
	want := expect(testDevs, 0, ticksRange(0, 4, 1), "", func(s Sample) bool { return s.Measurement == MeasInterface })
	// Queue leaves: all at ticks 0 and 2; Ethernet4's also at 3 (its own
	// 300us subscription), once per tick even where both are due.
	maps.Copy(want, expect(testDevs, 0, []int{0, 2}, "", func(s Sample) bool { return s.Measurement == MeasQueue }))
	maps.Copy(want, expect(testDevs, 0, []int{3}, "", func(s Sample) bool {
		return s.Measurement == MeasQueue && s.Interface == "Ethernet4"
	}))
	diffSets(t, "mixed intervals", multiset(got), want)
}

func TestEncodeNotificationMatchesProto(t *testing.T) {
	d := testDevs[0]
	paths := gnmiLeafPaths(&d)
	wire := make([][]byte, len(paths))
	for i, p := range paths {
		b, err := proto.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		wire[i] = b
	}
	vals := make([]int64, len(paths))
	for i := range vals {
		vals[i] = int64(i) << (3 * i % 64) // small, large and negative values
	}
	vals[0], vals[1] = 0, -1
	incl := make([]bool, len(paths))
	for i := range incl {
		incl[i] = i%3 != 1
	}
	for _, in := range [][]bool{nil, incl} {
		for _, ts := range []int64{0, 1, tickTime(7)} {
			var got gnmi.SubscribeResponse
			if err := proto.Unmarshal(encodeNotification(ts, mustPrefix(t, d.Name), wire, vals, in).b, &got); err != nil {
				t.Fatal(err)
			}
			n := &gnmi.Notification{Timestamp: ts, Prefix: &gnmi.Path{Target: d.Name}}
			for i, p := range paths {
				if in == nil || in[i] {
					n.Update = append(n.Update, &gnmi.Update{Path: p, Val: &gnmi.TypedValue{Value: &gnmi.TypedValue_UintVal{UintVal: uint64(vals[i])}}})
				}
			}
			want := &gnmi.SubscribeResponse{Response: &gnmi.SubscribeResponse_Update{Update: n}}
			if !proto.Equal(&got, want) {
				t.Fatalf("encoded notification decodes to\n%v\nwant\n%v", &got, want)
			}
		}
	}
}

// TestFastDecoderMatchesProto checks the collector's wire-format decoder
// against decoding with proto.Unmarshal and converting the structs.
func TestFastDecoderMatchesProto(t *testing.T) {
	mustPath := func(s string) *gnmi.Path {
		p, err := gpath.ParsePath(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	uintVal := func(v uint64) *gnmi.TypedValue { return &gnmi.TypedValue{Value: &gnmi.TypedValue_UintVal{UintVal: v}} }
	update := func(path string, v *gnmi.TypedValue) *gnmi.Update { return &gnmi.Update{Path: mustPath(path), Val: v} }
	notif := func(n *gnmi.Notification) *gnmi.SubscribeResponse {
		return &gnmi.SubscribeResponse{Response: &gnmi.SubscribeResponse_Update{Update: n}}
	}
	withPrefix := mustPath("openconfig:/interfaces/interface[name=e1]")
	withPrefix.Target = "dev1"
	cases := map[string]*gnmi.SubscribeResponse{
		"server format": notif(&gnmi.Notification{Timestamp: 42, Prefix: &gnmi.Path{Target: "dev1"}, Update: []*gnmi.Update{
			update("/interfaces/interface[name=e1]/state/counters/in-octets", uintVal(1)),
			update("/qos/interfaces/interface[interface-id=e1]/output/queues/queue[name=data]/state/trim-pkts", uintVal(1<<63)),
		}}),
		"prefix elements and origin": notif(&gnmi.Notification{Timestamp: 7, Prefix: withPrefix, Update: []*gnmi.Update{
			update("state/counters/out-pkts", uintVal(5)),
			update("state/counters/in-errors", uintVal(6)),
		}}),
		"value types and odd paths": notif(&gnmi.Notification{Timestamp: -3, Update: []*gnmi.Update{
			update("/interfaces/interface[name=e2]/state/counters/out-octets", &gnmi.TypedValue{Value: &gnmi.TypedValue_IntVal{IntVal: -9}}),
			update("/interfaces/interface[name=e2]/state/counters/in-pkts", &gnmi.TypedValue{Value: &gnmi.TypedValue_StringVal{StringVal: "x"}}),
			update("/interfaces/interface[name=e2]/state/counters/in-octets", nil),
			update("/interfaces/interface[name=e3][unit=0]/state/counters/in-octets", uintVal(3)),
			update("/interfaces/interface/state/counters/in-octets", uintVal(3)),
			update("/system/state/hostname", uintVal(3)),
			update("/qos/interfaces/interface[interface-id=e1]/output/queues/queue/state/trim-pkts", uintVal(3)),
		}, Delete: []*gnmi.Path{mustPath("/interfaces/interface[name=e9]")}}),
		"other target": notif(&gnmi.Notification{Timestamp: 1, Prefix: &gnmi.Path{Target: "elsewhere"}, Update: []*gnmi.Update{
			update("/interfaces/interface[name=e1]/state/counters/in-octets", uintVal(1)),
		}}),
		"empty notification": notif(&gnmi.Notification{}),
		"sync":               {Response: &gnmi.SubscribeResponse_SyncResponse{SyncResponse: true}},
	}
	//lint:ignore SA1019 the deprecated error field is what the fallback is for
	cases["error (fallback)"] = &gnmi.SubscribeResponse{Response: &gnmi.SubscribeResponse_Error{Error: &gnmi.Error{Message: "x"}}}
	codec := rawCodec{encoding.GetCodec("proto")}
	for name, resp := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := proto.Marshal(resp)
			if err != nil {
				t.Fatal(err)
			}
			var raw gnmi.SubscribeResponse
			if err := codec.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			if raw.GetResponse() != nil {
				t.Fatal("rawCodec decoded the response")
			}
			fast := converter{run: "r", spec: "dev1", ifaces: map[string]string{}}
			slow := converter{run: "r", spec: "dev1", ifaces: map[string]string{}}
			_, _, rawErr := fast.decodeRaw(nil, raw.ProtoReflect().GetUnknown())
			if wantFallback := strings.Contains(name, "fallback"); (rawErr != nil) != wantFallback {
				t.Errorf("fast decoder error %v, want fallback %v", rawErr, wantFallback)
			}
			got, gr, err := fast.decodeResponse(nil, &raw)
			if err != nil {
				t.Fatal(err)
			}
			want, wr, err := slow.decodeResponse(nil, resp)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) || gr != wr {
				t.Errorf("fast decoder: %+v %+v\nproto:        %+v %+v", got, gr, want, wr)
			}
		})
	}
	// Fields in an unusual order: updates before the prefix and timestamp.
	var n []byte
	u, _ := proto.Marshal(update("/interfaces/interface[name=e1]/state/counters/in-octets", uintVal(11)))
	n = protowire.AppendTag(n, fieldNotificationUpdate, protowire.BytesType)
	n = protowire.AppendBytes(n, u)
	n = protowire.AppendTag(n, fieldNotificationPrefix, protowire.BytesType)
	n = protowire.AppendBytes(n, mustPrefix(t, "dev1"))
	n = protowire.AppendTag(n, fieldNotificationTimestamp, protowire.VarintType)
	n = protowire.AppendVarint(n, 99)
	var r []byte
	r = protowire.AppendTag(r, fieldSubscribeResponseUpdate, protowire.BytesType)
	r = protowire.AppendBytes(r, n)
	cv := converter{spec: "dev1", ifaces: map[string]string{}}
	got, _, err := cv.decodeRaw(nil, r)
	want := []Sample{{Time: 99, Target: "dev1", Measurement: MeasInterface, Interface: "e1", Field: FieldInOctets, Value: 11}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("reordered fields: %+v, %v; want %+v", got, err, want)
	}
	// Garbage fails.
	if _, _, err := cv.decodeResponse(nil, &gnmi.SubscribeResponse{}); err != nil {
		t.Errorf("empty response: %v", err)
	}
	var bad gnmi.SubscribeResponse
	bad.ProtoReflect().SetUnknown(protoreflect.RawFields{0x0a, 0x05, 0x01})
	if _, _, err := cv.decodeResponse(nil, &bad); err == nil {
		t.Error("a truncated response decoded without error")
	}
}

func TestServerRejectsNamesThatAreNotUTF8(t *testing.T) {
	for _, d := range []Device{{Name: "sw\xff", Interfaces: []string{"e0"}}, {Name: "sw", Interfaces: []string{"e\xfe"}}} {
		if _, err := NewServer([]Device{d}); err == nil || !strings.Contains(err.Error(), "UTF-8") {
			t.Errorf("%q: err %v, want a UTF-8 error", d.Name, err)
		}
	}
}

func mustPrefix(t testing.TB, target string) []byte {
	t.Helper()
	b, err := encodePrefix(target)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
