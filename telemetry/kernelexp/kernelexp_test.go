package kernelexp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/telemetry"
	"github.com/openconfig/gnmi/proto/gnmi"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

const (
	testUser = "fabricbench"
	testPass = "s3cret"
	// The shaped link: tbf at 100 Mb/s with a 32 KB queue.
	tbfRate = 100e6
)

// requireRoot skips the test unless it can create network namespaces,
// veth pairs and qdiscs.
func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("kernelexp: skipping, needs root to create network namespaces, veth pairs and tbf qdiscs (running as uid %d)", os.Geteuid())
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("kernelexp: skipping, %s (iproute2) not found: %v", tool, err)
		}
	}
}

func run(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

var labSeq atomic.Int32

// lab is two network namespaces a and b joined by veth pairs: x<i> in a
// and its peer y<i> in b, addressed 10.199.<i>.1 and .2, with a tbf qdisc
// at 100 Mb/s (32 KB queue) on each x<i>.
type lab struct {
	a, b string
	n    int
}

// newLab creates the namespaces and n veth pairs. Everything is deleted in
// t.Cleanup, also when the test fails half-way.
func newLab(t testing.TB, n int) *lab {
	t.Helper()
	seq := labSeq.Add(1)
	l := &lab{a: fmt.Sprintf("fbkx-%d-%d-a", os.Getpid(), seq), b: fmt.Sprintf("fbkx-%d-%d-b", os.Getpid(), seq), n: n}
	t.Cleanup(func() {
		// Deleting the namespaces deletes the veth pairs in them.
		for _, ns := range []string{l.a, l.b} {
			if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil && !strings.Contains(string(out), "No such file") {
				t.Logf("cleanup: ip netns del %s: %v: %s", ns, err, out)
			}
		}
	})
	run(t, "ip", "netns", "add", l.a)
	run(t, "ip", "netns", "add", l.b)
	for i := 1; i <= n; i++ {
		l.addPair(t, i)
	}
	return l
}

func (l *lab) x(i int) string { return fmt.Sprintf("x%d", i) }
func (l *lab) y(i int) string { return fmt.Sprintf("y%d", i) }
func (l *lab) dst(i int) string {
	return fmt.Sprintf("10.199.%d.2", i)
}

// addPair creates veth pair i. IPv6 is disabled on both ends so that
// nothing but the test's traffic is sent (no DAD, router solicitations or
// MLD reports).
func (l *lab) addPair(t testing.TB, i int) {
	t.Helper()
	run(t, "ip", "link", "add", l.x(i), "netns", l.a, "type", "veth", "peer", "name", l.y(i), "netns", l.b)
	run(t, "ip", "netns", "exec", l.a, "sysctl", "-qw", "net.ipv6.conf."+l.x(i)+".disable_ipv6=1")
	run(t, "ip", "netns", "exec", l.b, "sysctl", "-qw", "net.ipv6.conf."+l.y(i)+".disable_ipv6=1")
	run(t, "ip", "-n", l.a, "addr", "add", fmt.Sprintf("10.199.%d.1/24", i), "dev", l.x(i))
	run(t, "ip", "-n", l.b, "addr", "add", fmt.Sprintf("10.199.%d.2/24", i), "dev", l.y(i))
	run(t, "tc", "-n", l.a, "qdisc", "add", "dev", l.x(i), "root", "tbf", "rate", "100mbit", "burst", "16k", "limit", "32k")
	run(t, "ip", "-n", l.a, "link", "set", l.x(i), "up")
	run(t, "ip", "-n", l.b, "link", "set", l.y(i), "up")
}

// kernel reads x<i>'s counters with the netlink package, independently of
// the exporter's own parser: tx_bytes, and tx_dropped plus the root qdisc's
// drops.
func (l *lab) kernel(t testing.TB, i int) (txBytes, discards uint64) {
	t.Helper()
	ns, err := netns.GetFromName(l.a)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	link, err := h.LinkByName(l.x(i))
	if err != nil {
		t.Fatal(err)
	}
	st := link.Attrs().Statistics
	qds, err := h.QdiscList(link)
	if err != nil {
		t.Fatal(err)
	}
	discards = st.TxDropped
	for _, q := range qds {
		if a := q.Attrs(); a.Parent == netlink.HANDLE_ROOT && a.Statistics != nil && a.Statistics.Queue != nil {
			discards += uint64(a.Statistics.Queue.Drops)
		}
	}
	return st.TxBytes, discards
}

// udpSocket opens a UDP socket in network namespace ns and binds or
// connects it.
func udpSocket(t testing.TB, ns string, addr string, connect bool) int {
	t.Helper()
	ip, port, _ := net.SplitHostPort(addr)
	var p int
	fmt.Sscan(port, &p)
	sa := &unix.SockaddrInet4{Port: p, Addr: [4]byte(net.ParseIP(ip).To4())}
	fd := -1
	err := inNetns(ns, func() error {
		var err error
		if fd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return err
		}
		if connect {
			return unix.Connect(fd, sa)
		}
		return unix.Bind(fd, sa)
	})
	if err != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		t.Fatalf("UDP socket in %s: %v", ns, err)
	}
	return fd
}

// blast sends 1400-byte UDP datagrams over x<i> at about rate bits/s (in
// bursts of a scheduler tick) until stop is closed, and returns the bytes
// handed to the kernel. A socket bound at the destination swallows the
// datagrams, so b sends nothing back (no ICMP unreachable).
func (l *lab) blast(t testing.TB, i int, rate float64, stop <-chan struct{}) <-chan int64 {
	t.Helper()
	dst := net.JoinHostPort(l.dst(i), "9999")
	sink := udpSocket(t, l.b, dst, false)
	fd := udpSocket(t, l.a, dst, true)
	done := make(chan int64, 1)
	go func() {
		defer unix.Close(fd)
		defer unix.Close(sink)
		payload := make([]byte, 1400)
		start := time.Now()
		var sent int64
		for {
			select {
			case <-stop:
				done <- sent
				return
			default:
			}
			due := int64(time.Since(start).Seconds() * rate / 8)
			for sent < due {
				if _, err := unix.Write(fd, payload); err != nil && !errors.Is(err, unix.ENOBUFS) {
					t.Errorf("blast: %v", err)
					done <- sent
					return
				}
				sent += int64(len(payload))
			}
			time.Sleep(200 * time.Microsecond)
		}
	}()
	return done
}

// point is one received value.
type point struct{ t, v int64 }

// recorder collects the samples of one target by interface and field.
type recorder struct {
	mu     sync.Mutex
	series map[[2]string][]point // (interface, field)
}

func newRecorder() *recorder { return &recorder{series: map[[2]string][]point{}} }

func (r *recorder) handle(batch []telemetry.Sample) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range batch {
		k := [2]string{s.Interface, s.Field}
		r.series[k] = append(r.series[k], point{s.Time, s.Value})
	}
	return nil
}

func (r *recorder) get(iface, field string) []point {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.series[[2]string{iface, field}])
}

// startExporter creates an exporter for cfg (filling in defaults) and runs
// it until the test ends. The returned stop function stops it and returns
// Run's error.
func startExporter(t testing.TB, cfg Config, hook func(lag, read time.Duration)) (*Exporter, func() error) {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Username == "" {
		cfg.Username, cfg.Password = testUser, testPass
	}
	var logMu sync.Mutex
	var logDone bool
	cfg.Logf = func(f string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		if !logDone {
			t.Logf("exporter: "+f, args...)
		}
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.tickHook = hook
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- e.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-errc:
			case <-time.After(15 * time.Second):
				runErr = errors.New("Run did not return within 15s of cancel")
			}
			logMu.Lock()
			logDone = true
			logMu.Unlock()
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return e, stop
}

func startCollector(t testing.TB, ctx context.Context, e *Exporter, device string, rec *recorder, interval time.Duration) *telemetry.Collector {
	t.Helper()
	c := telemetry.NewCollector([]telemetry.TargetSpec{{Name: device, Address: e.Addr(), Username: testUser, Password: testPass}},
		telemetry.WithSampleInterval(interval), telemetry.WithHandler(rec.handle))
	if err := c.Start(ctx); err != nil {
		t.Fatalf("collector Start: %v", err)
	}
	return c
}

// checkGoroutines fails the test if, after its cleanups, more goroutines
// run than when it started. Call it first so that its cleanup runs last.
func checkGoroutines(t testing.TB) {
	base := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > base {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines still running, baseline %d:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
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

func median(d []int64) int64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// percentiles formats the median, 90th, 99th percentile and maximum of
// durations.
func percentiles(d []int64) string {
	if len(d) == 0 {
		return "none"
	}
	s := slices.Clone(d)
	slices.Sort(s)
	q := func(f float64) time.Duration { return time.Duration(s[int(f*float64(len(s)-1))]) }
	return fmt.Sprintf("p50 %v p90 %v p99 %v max %v (n=%d)", q(0.5), q(0.9), q(0.99), q(1), len(s))
}

// checkMonotonic fails if a counter series ever decreases.
func checkMonotonic(t *testing.T, name string, ps []point) {
	t.Helper()
	for i := 1; i < len(ps); i++ {
		if ps[i].v < ps[i-1].v {
			t.Errorf("%s decreased at sample %d: %d -> %d", name, i, ps[i-1].v, ps[i].v)
			return
		}
	}
}

// TestExportShapedLink samples a tbf-shaped veth at 1 ms while a UDP blast
// overruns it, and checks the spacing, the counters against the kernel's,
// and that the queue and its drops are seen.
func TestExportShapedLink(t *testing.T) {
	requireRoot(t)
	checkGoroutines(t)
	ctx := testCtx(t)
	l := newLab(t, 1)
	var lags, reads []int64 // written by Run until stopExporter returns
	e, stopExporter := startExporter(t, Config{
		Device: "leaf0", Interfaces: []Interface{{Name: "Ethernet0", Dev: "x1"}}, Queues: true,
		Interval: time.Millisecond, Netns: l.a,
	}, func(lag, read time.Duration) {
		lags = append(lags, int64(lag))
		reads = append(reads, int64(read))
	})
	rec := newRecorder()
	coll := startCollector(t, ctx, e, "leaf0", rec, time.Millisecond)

	time.Sleep(150 * time.Millisecond) // idle
	stop := make(chan struct{})
	blastStart := time.Now().UnixNano()
	sentc := l.blast(t, 1, 2.5*tbfRate, stop)
	time.Sleep(600 * time.Millisecond)
	close(stop)
	sent := <-sentc
	blastEnd := time.Now().UnixNano()
	time.Sleep(150 * time.Millisecond) // the 32 KB queue drains in ~3 ms
	kTx, kDiscards := l.kernel(t, 1)
	time.Sleep(50 * time.Millisecond) // samples read after the kernel's values
	if err := stopExporter(); err != nil {
		t.Errorf("Run: %v", err)
	}
	cstats, err := coll.Wait()
	if err != nil {
		t.Errorf("collector Wait: %v (the stream should end with EOF)", err)
	}
	st := e.Stats()
	t.Logf("exporter stats: %+v", st)
	t.Logf("collector: %d samples in %d notifications; blast handed %d bytes to the kernel", cstats.Samples, cstats.Notifications, sent)
	t.Logf("tick lag behind its timestamp: %s; kernel read per tick: %s", percentiles(lags), percentiles(reads))

	out := rec.get("Ethernet0", telemetry.FieldOutOctets)
	if len(out) < 10 {
		t.Fatalf("only %d out-octets samples", len(out))
	}
	// Spacing.
	var gaps []int64
	for i := 1; i < len(out); i++ {
		gaps = append(gaps, out[i].t-out[i-1].t)
		if out[i].t <= out[i-1].t {
			t.Errorf("timestamps not increasing at %d: %d, %d", i, out[i-1].t, out[i].t)
		}
	}
	for _, p := range out {
		if p.t%int64(time.Millisecond) != 0 {
			t.Errorf("timestamp %d is not a multiple of the 1ms interval", p.t)
			break
		}
	}
	span := out[len(out)-1].t - out[0].t
	expected := span/int64(time.Millisecond) + 1
	med := median(gaps)
	t.Logf("%d samples over %v: %.1f%% of the %d ticks, median spacing %v, max gap %v",
		len(out), time.Duration(span), 100*float64(len(out))/float64(expected), expected, time.Duration(med), time.Duration(slices.Max(gaps)))
	if med < int64(800*time.Microsecond) || med > int64(1200*time.Microsecond) {
		t.Errorf("median sample spacing %v, want 1ms ± 20%%", time.Duration(med))
	}
	// The exporter skips the ticks it cannot publish in time; a loaded
	// 2-core runner skips about a quarter (72.6% kept with two CPU hogs).
	if float64(len(out)) < 0.3*float64(expected) {
		t.Errorf("%d samples over %v, want at least 30%% of %d", len(out), time.Duration(span), expected)
	}

	// Counters against the kernel, after the traffic stopped.
	checkMonotonic(t, "out-octets", out)
	if last := out[len(out)-1]; uint64(last.v) != kTx {
		t.Errorf("last out-octets %d, kernel tx_bytes %d", last.v, kTx)
	}
	disc := rec.get("Ethernet0", telemetry.FieldOutDiscards)
	checkMonotonic(t, "out-discards", disc)
	if len(disc) == 0 {
		t.Fatal("no out-discards samples")
	}
	if last := disc[len(disc)-1]; uint64(last.v) != kDiscards {
		t.Errorf("last out-discards %d, kernel tx_dropped + tbf drops %d", last.v, kDiscards)
	}
	if first, last := disc[0].v, disc[len(disc)-1].v; last <= first {
		t.Errorf("out-discards did not grow under a %.0f Mb/s blast into a 100 Mb/s tbf: %d -> %d", 2.5*tbfRate/1e6, first, last)
	} else {
		t.Logf("out-discards %d -> %d", first, last)
	}
	for _, f := range []string{telemetry.FieldInOctets, telemetry.FieldInPkts, telemetry.FieldOutPkts} {
		checkMonotonic(t, f, rec.get("Ethernet0", f))
	}

	// The rate while shaped (samples at least 100 ms into the blast, until
	// it ends): never above the tbf rate; at it (~100 Mb/s) only while the
	// blaster keeps the 32 KB queue (2.6 ms) full. On a loaded runner the
	// blaster is descheduled for longer and the link idles meanwhile
	// (67.9 Mb/s seen on a busy 2-core machine), so the floor only says
	// that the traffic was sampled while it flowed. The exact check is the
	// counters against the kernel's above.
	var shaped []point
	for _, p := range out {
		if p.t >= blastStart+int64(100*time.Millisecond) && p.t <= blastEnd {
			shaped = append(shaped, p)
		}
	}
	if len(shaped) < 100 {
		t.Errorf("only %d samples during the blast", len(shaped))
	} else {
		a, b := shaped[0], shaped[len(shaped)-1]
		rate := float64(b.v-a.v) * 8 / (float64(b.t-a.t) / 1e9)
		t.Logf("shaped rate from out-octets: %.1f Mb/s", rate/1e6)
		if rate < 0.25*tbfRate || rate > 1.3*tbfRate {
			t.Errorf("out-octets rate during the blast %.1f Mb/s, want 25-130 (a 100 Mb/s tbf)", rate/1e6)
		}
	}

	// Queue leaves.
	maxq := rec.get("Ethernet0", telemetry.FieldMaxQueueLen)
	var peak int64
	for _, p := range maxq {
		peak = max(peak, p.v)
	}
	t.Logf("max-queue-len peak %d bytes; %d mid-interval samples", peak, st.MidSamples)
	if peak <= 0 {
		t.Error("max-queue-len never above 0 while the tbf queue overflowed")
	}
	if peak > 64<<10 {
		t.Errorf("max-queue-len %d bytes exceeds the tbf limit (32 KB) by far", peak)
	}
	same := func(a, b string) {
		pa, pb := rec.get("Ethernet0", a), rec.get("Ethernet0", b)
		if !slices.Equal(pa, pb) {
			t.Errorf("%s (%d samples) differs from %s (%d samples)", a, len(pa), b, len(pb))
		}
	}
	same(telemetry.FieldTransmitOctets, telemetry.FieldOutOctets)
	same(telemetry.FieldDroppedPkts, telemetry.FieldOutDiscards)
	for _, f := range []string{telemetry.FieldTrimPkts, telemetry.FieldECNMarkedPkts} {
		ps := rec.get("Ethernet0", f)
		if len(ps) != len(out) {
			t.Errorf("%d %s samples, %d out-octets", len(ps), f, len(out))
		}
		for _, p := range ps {
			if p.v != 0 {
				t.Errorf("%s = %d, want 0 (no trimming, no marking qdisc)", f, p.v)
				break
			}
		}
	}
	if st.ReadErrors != 0 || st.PublishErrors != 0 {
		t.Errorf("read errors %d, publish errors %d", st.ReadErrors, st.PublishErrors)
	}
}

// TestSlowSubscriber stops reading a stream until Publish blocks: the
// exporter must skip the ticks it cannot publish (counting them) rather
// than publish them late, and resume at 1 ms.
func TestSlowSubscriber(t *testing.T) {
	requireRoot(t)
	ctx := testCtx(t)
	l := newLab(t, 1)
	e, stopExporter := startExporter(t, Config{
		Device: "leaf0", Interfaces: []Interface{{Name: "Ethernet0", Dev: "x1"}}, Queues: true,
		Interval: time.Millisecond, Netns: l.a,
	}, nil)
	conn, err := grpc.NewClient(e.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sctx, cancel := context.WithCancel(metadata.AppendToOutgoingContext(ctx, "username", testUser, "password", testPass))
	defer cancel()
	stream, err := gnmi.NewGNMIClient(conn).Subscribe(sctx)
	if err != nil {
		t.Fatal(err)
	}
	err = stream.Send(&gnmi.SubscribeRequest{Request: &gnmi.SubscribeRequest_Subscribe{Subscribe: &gnmi.SubscriptionList{
		Prefix: &gnmi.Path{Target: "leaf0"}, Mode: gnmi.SubscriptionList_STREAM, Encoding: gnmi.Encoding_PROTO,
		Subscription: []*gnmi.Subscription{{
			Path: &gnmi.Path{Elem: []*gnmi.PathElem{{Name: "interfaces"}, {Name: "interface"}, {Name: "state"}, {Name: "counters"}}},
			Mode: gnmi.SubscriptionMode_SAMPLE, SampleInterval: uint64(time.Millisecond),
		}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	var stamps []int64
	recv := func() *gnmi.SubscribeResponse {
		t.Helper()
		r, err := stream.Recv()
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if n := r.GetUpdate(); n != nil {
			stamps = append(stamps, n.GetTimestamp())
		}
		return r
	}
	for !recv().GetSyncResponse() {
	}
	// Stop reading until the server's queue and gRPC's window are full
	// and Publish waits, then some more.
	missed0 := e.Stats().MissedTicks
	deadline := time.Now().Add(10 * time.Second)
	for !e.srv.Stats().PublishWaiting {
		if time.Now().After(deadline) {
			t.Fatal("Publish never blocked on the stalled subscriber")
		}
		time.Sleep(time.Millisecond)
	}
	blocked := time.Now().UnixNano()
	time.Sleep(200 * time.Millisecond)
	resumed := time.Now().UnixNano()
	// Drain the backlog until the stream is live (a tick stamped within
	// 5 ms of its arrival), then read 100 ms more.
	caughtUp := int64(0)
	for caughtUp == 0 || stamps[len(stamps)-1] < caughtUp+int64(100*time.Millisecond) {
		recv()
		if last := stamps[len(stamps)-1]; caughtUp == 0 && last > resumed && time.Now().UnixNano()-last < int64(5*time.Millisecond) {
			caughtUp = last
		}
		if time.Now().UnixNano() > resumed+int64(10*time.Second) {
			t.Fatal("the stream did not catch up within 10s of resuming")
		}
	}
	missed := e.Stats().MissedTicks - missed0
	if err := stopExporter(); err != nil {
		t.Errorf("Run: %v", err)
	}
	t.Logf("stalled %v: %d ticks missed; stats %+v", time.Duration(resumed-blocked), missed, e.Stats())
	if missed < 150 {
		t.Errorf("%d ticks counted as missed during a 200ms stall at 1ms", missed)
	}
	for i := 1; i < len(stamps); i++ {
		if stamps[i] <= stamps[i-1] {
			t.Fatalf("timestamps not increasing at %d: %d, %d", i, stamps[i-1], stamps[i])
		}
	}
	// Nothing is published with a timestamp inside the stall: the ticks
	// were skipped, not caught up with stale times.
	for _, ts := range stamps {
		if ts > blocked+int64(2*time.Millisecond) && ts < resumed-int64(2*time.Millisecond) {
			t.Errorf("a tick stamped %v after Publish blocked and %v before the subscriber resumed",
				time.Duration(ts-blocked), time.Duration(resumed-ts))
			break
		}
	}
	// And 1 ms spacing again once the stream has caught up.
	var after []int64
	for i := 1; i < len(stamps); i++ {
		if stamps[i-1] >= caughtUp {
			after = append(after, stamps[i]-stamps[i-1])
		}
	}
	t.Logf("caught up %v after resuming", time.Duration(caughtUp-resumed))
	// (TestExportShapedLink holds the exporter to 60% of the ticks; this
	// test's 200 ms stall and catch-up load the machine more, so it only
	// checks that 1 ms ticks resume.)
	if len(after) < 30 {
		t.Errorf("only %d ticks in the 100ms after catching up", len(after))
	} else if m := median(after); m != int64(time.Millisecond) {
		t.Errorf("median spacing after catching up %v, want 1ms", time.Duration(m))
	}
}

// TestRecreatedInterface deletes and recreates the served device: the
// exporter must follow the name to the new ifindex, keep its counters
// monotonic and add the new device's counters to the old totals.
func TestRecreatedInterface(t *testing.T) {
	requireRoot(t)
	ctx := testCtx(t)
	l := newLab(t, 1)
	e, stopExporter := startExporter(t, Config{
		Device: "leaf0", Interfaces: []Interface{{Name: "Ethernet0", Dev: "x1"}}, Queues: true,
		Interval: time.Millisecond, Netns: l.a,
	}, nil)
	rec := newRecorder()
	coll := startCollector(t, ctx, e, "leaf0", rec, time.Millisecond)
	traffic := func() {
		stop := make(chan struct{})
		done := l.blast(t, 1, 2.5*tbfRate, stop)
		time.Sleep(100 * time.Millisecond)
		close(stop)
		<-done
		time.Sleep(50 * time.Millisecond)
	}
	traffic()
	tx1, disc1 := l.kernel(t, 1)
	run(t, "ip", "-n", l.a, "link", "del", "x1")
	time.Sleep(20 * time.Millisecond)
	l.addPair(t, 1)
	traffic()
	tx2, disc2 := l.kernel(t, 1)
	time.Sleep(20 * time.Millisecond)
	if err := stopExporter(); err != nil {
		t.Errorf("Run: %v", err)
	}
	if _, err := coll.Wait(); err != nil {
		t.Errorf("collector Wait: %v", err)
	}
	st := e.Stats()
	t.Logf("kernel before: tx %d discards %d; after recreation: tx %d discards %d; stats %+v", tx1, disc1, tx2, disc2, st)
	if st.Recreated != 1 {
		t.Errorf("Recreated = %d, want 1", st.Recreated)
	}
	// The new device's counters are counted from zero because the
	// exporter saw the new ifindex, not because they went back.
	if st.CounterResets != 0 || st.CounterWraps != 0 {
		t.Errorf("%d counter resets, %d wraps; want none", st.CounterResets, st.CounterWraps)
	}
	for _, f := range []string{telemetry.FieldOutOctets, telemetry.FieldOutPkts, telemetry.FieldInOctets, telemetry.FieldOutDiscards} {
		checkMonotonic(t, f, rec.get("Ethernet0", f))
	}
	out, disc := rec.get("Ethernet0", telemetry.FieldOutOctets), rec.get("Ethernet0", telemetry.FieldOutDiscards)
	if len(out) == 0 || len(disc) == 0 {
		t.Fatal("no samples")
	}
	if got := uint64(out[len(out)-1].v); got != tx1+tx2 {
		t.Errorf("out-octets %d, want old device's %d + new device's %d = %d", got, tx1, tx2, tx1+tx2)
	}
	if got := uint64(disc[len(disc)-1].v); got != disc1+disc2 {
		t.Errorf("out-discards %d, want %d + %d = %d", got, disc1, disc2, disc1+disc2)
	}
}

// TestConfigErrors checks that New rejects bad configurations with errors
// that name the field. It needs no privileges ("lo" of the current
// namespace).
func TestConfigErrors(t *testing.T) {
	good := Config{
		Device: "leaf0", Interfaces: []Interface{{Name: "Ethernet0", Dev: "lo"}},
		Listen: "127.0.0.1:0", Interval: time.Millisecond, Username: testUser, Password: testPass,
	}
	cases := []struct {
		name   string
		mod    func(*Config)
		expect []string
	}{
		{"unknown device", func(c *Config) { c.Interfaces = []Interface{{Name: "Ethernet9", Dev: "fbkx-nodev9"}} },
			[]string{`interface "Ethernet9"`, `no kernel device "fbkx-nodev9"`}},
		{"second device unknown", func(c *Config) {
			c.Interfaces = append(c.Interfaces, Interface{Name: "Ethernet4", Dev: "fbkx-nodev4"})
		}, []string{`interface "Ethernet4"`, `"fbkx-nodev4"`}},
		{"interval too short", func(c *Config) { c.Interval = 50 * time.Microsecond }, []string{"Interval", "50µs", "100µs"}},
		{"interval zero", func(c *Config) { c.Interval = 0 }, []string{"Interval"}},
		{"interval too long", func(c *Config) { c.Interval = 11 * time.Second }, []string{"Interval", "10s"}},
		{"no username", func(c *Config) { c.Username = "" }, []string{"Username"}},
		{"no password", func(c *Config) { c.Password = "" }, []string{"Password"}},
		{"no device name", func(c *Config) { c.Device = "" }, []string{"Device"}},
		{"no interfaces", func(c *Config) { c.Interfaces = nil }, []string{"Interfaces"}},
		{"empty interface name", func(c *Config) { c.Interfaces = []Interface{{Dev: "lo"}} }, []string{"Interfaces[0].Name"}},
		{"empty kernel name", func(c *Config) { c.Interfaces = []Interface{{Name: "Ethernet0"}} }, []string{`interface "Ethernet0"`, "Dev"}},
		{"duplicate name", func(c *Config) { c.Interfaces = append(c.Interfaces, Interface{Name: "Ethernet0", Dev: "x"}) },
			[]string{`interface "Ethernet0"`, "Name", "duplicate"}},
		{"device served twice", func(c *Config) { c.Interfaces = append(c.Interfaces, Interface{Name: "Ethernet4", Dev: "lo"}) },
			[]string{`interface "Ethernet4"`, "Dev", `"Ethernet0"`}},
		{"no listen address", func(c *Config) { c.Listen = "" }, []string{"Listen"}},
		{"bad listen address", func(c *Config) { c.Listen = "127.0.0.1:99999" }, []string{"Listen", "99999"}},
		{"unknown netns", func(c *Config) { c.Netns = "fbkx-no-such-ns" }, []string{"Netns", "fbkx-no-such-ns"}},
		{"bad netns", func(c *Config) { c.Netns = "../x" }, []string{"Netns"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			cfg.Interfaces = slices.Clone(good.Interfaces)
			tc.mod(&cfg)
			e, err := New(cfg)
			if err == nil {
				e.Close(context.Background())
				t.Fatal("New accepted the configuration")
			}
			for _, s := range tc.expect {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
	// And the good configuration works (without Run: Close releases it).
	e, err := New(good)
	if err != nil {
		t.Fatalf("New(good): %v", err)
	}
	if err := e.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := e.Run(context.Background()); err == nil {
		t.Error("Run after Close succeeded")
	}
}

// TestAuth checks that a collector with the wrong password gets an
// authentication error and no data, and one with the right password gets
// data. It needs no privileges.
func TestAuth(t *testing.T) {
	checkGoroutines(t)
	ctx := testCtx(t)
	e, stopExporter := startExporter(t, Config{
		Device: "host0", Interfaces: []Interface{{Name: "eth0", Dev: "lo"}}, Interval: time.Millisecond,
	}, nil)
	for _, creds := range [][2]string{{testUser, "wrong"}, {"intruder", testPass}, {"", ""}} {
		var got atomic.Int64
		c := telemetry.NewCollector([]telemetry.TargetSpec{{Name: "host0", Address: e.Addr(), Username: creds[0], Password: creds[1]}},
			telemetry.WithHandler(func(b []telemetry.Sample) error { got.Add(int64(len(b))); return nil }))
		// The collector (gnmic) reports Unauthenticated, or, if the
		// server's rejection races its sending of the request, the EOF of
		// that send; either way it must fail and receive nothing.
		err := c.Start(ctx)
		if err == nil {
			t.Errorf("credentials %q/%q: Start succeeded", creds[0], creds[1])
		}
		c.Wait()
		if got.Load() != 0 {
			t.Errorf("credentials %q/%q: received %d samples", creds[0], creds[1], got.Load())
		}
		// A plain gNMI client always sees the status.
		if code := rawSubscribeCode(t, ctx, e.Addr(), creds[0], creds[1]); code != codes.Unauthenticated {
			t.Errorf("credentials %q/%q: Subscribe status %v, want Unauthenticated", creds[0], creds[1], code)
		}
	}
	if code := rawSubscribeCode(t, ctx, e.Addr(), testUser, testPass); code != codes.OK {
		t.Errorf("right credentials: Subscribe status %v", code)
	}
	rec := newRecorder()
	c := startCollector(t, ctx, e, "host0", rec, time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for len(rec.get("eth0", telemetry.FieldInOctets)) < 10 {
		if time.Now().After(deadline) {
			t.Fatal("no data with the right credentials")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if rec.get("eth0", telemetry.FieldMaxQueueLen) != nil {
		t.Error("queue leaves served with Queues false")
	}
	if err := stopExporter(); err != nil {
		t.Errorf("Run: %v", err)
	}
	if _, err := c.Wait(); err != nil {
		t.Errorf("collector Wait: %v", err)
	}
}

// rawSubscribeCode subscribes to host0's interface counters with a plain
// gNMI client and returns the status of the first response (OK if it is
// data).
func rawSubscribeCode(t *testing.T, ctx context.Context, addr, user, pass string) codes.Code {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(metadata.AppendToOutgoingContext(ctx, "username", user, "password", pass))
	defer cancel()
	stream, err := gnmi.NewGNMIClient(conn).Subscribe(ctx)
	if err != nil {
		return status.Code(err)
	}
	// A failed Send is reported by Recv's status.
	_ = stream.Send(&gnmi.SubscribeRequest{Request: &gnmi.SubscribeRequest_Subscribe{Subscribe: &gnmi.SubscriptionList{
		Prefix: &gnmi.Path{Target: "host0"}, Mode: gnmi.SubscriptionList_STREAM, Encoding: gnmi.Encoding_PROTO,
		Subscription: []*gnmi.Subscription{{Path: &gnmi.Path{Elem: []*gnmi.PathElem{{Name: "interfaces"}}}, Mode: gnmi.SubscriptionMode_SAMPLE}},
	}}})
	_, err = stream.Recv()
	return status.Code(err)
}

// BenchmarkTick measures one tick's kernel reads (link stats dump, qdisc
// dump, value layout) for a switch with 8 tbf-shaped interfaces, and, for
// comparison, the single dumps and the netlink package's LinkList.
func BenchmarkTick(b *testing.B) {
	requireRoot(b)
	const n = 8
	l := newLab(b, n)
	cfg := Config{Device: "leaf0", Queues: true, Listen: "127.0.0.1:0", Interval: time.Millisecond,
		Username: testUser, Password: testPass, Netns: l.a}
	for i := 1; i <= n; i++ {
		cfg.Interfaces = append(cfg.Interfaces, Interface{Name: fmt.Sprintf("Ethernet%d", 4*(i-1)), Dev: l.x(i)})
	}
	e, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close(context.Background()) })
	b.Run("tick", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := e.read(); err != nil {
				b.Fatal(err)
			}
			e.fill()
		}
	})
	b.Run("linkstats", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := e.readLinks(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("qdiscs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := e.readQdiscs(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("getlink-dump", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := e.sock.dump(unix.RTM_GETLINK, getLinkBody, func(uint16, []byte) {}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("netlink-LinkList", func(b *testing.B) {
		ns, err := netns.GetFromName(l.a)
		if err != nil {
			b.Fatal(err)
		}
		defer ns.Close()
		h, err := netlink.NewHandleAt(ns)
		if err != nil {
			b.Fatal(err)
		}
		defer h.Close()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := h.LinkList(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
