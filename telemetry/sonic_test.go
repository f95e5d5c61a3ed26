package telemetry

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/fabricbench/fabricbench/internal/testca"
)

// fakeSONiC is a gNMI server that replays recorded SONiC COUNTERS_DB
// replies, and refuses what SONiC refuses: another target or origin, and
// sample intervals under 1 s.
type fakeSONiC struct {
	gnmi.UnimplementedGNMIServer
	notes []*gnmi.Notification
	hold  bool // stream on (send nothing more) until the client goes
	mu    sync.Mutex
	reqs  []*gnmi.SubscribeRequest
}

func loadRecorded(t *testing.T) []*gnmi.Notification {
	t.Helper()
	b, err := os.ReadFile("testdata/sonic-counters.json")
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Notifications []struct {
			Timestamp int64           `json:"timestamp"`
			Path      string          `json:"path"`
			JSON      json.RawMessage `json:"json"`
		} `json:"notifications"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	var out []*gnmi.Notification
	for _, n := range rec.Notifications {
		var elems []*gnmi.PathElem
		for _, e := range strings.Split(n.Path, "/") {
			elems = append(elems, &gnmi.PathElem{Name: e})
		}
		out = append(out, &gnmi.Notification{Timestamp: n.Timestamp, Prefix: &gnmi.Path{Origin: sonicOrigin, Target: sonicTarget},
			Update: []*gnmi.Update{{Path: &gnmi.Path{Elem: elems}, Val: &gnmi.TypedValue{Value: &gnmi.TypedValue_JsonIetfVal{JsonIetfVal: n.JSON}}}}})
	}
	return out
}

func (f *fakeSONiC) Subscribe(stream gnmi.GNMI_SubscribeServer) error {
	req, err := stream.Recv()
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	sl := req.GetSubscribe()
	if sl.GetPrefix().GetTarget() != sonicTarget || sl.GetPrefix().GetOrigin() != sonicOrigin {
		return status.Errorf(codes.InvalidArgument, "unsupported target %q origin %q", sl.GetPrefix().GetTarget(), sl.GetPrefix().GetOrigin())
	}
	for _, s := range sl.GetSubscription() {
		if time.Duration(s.GetSampleInterval()) < time.Second {
			return status.Errorf(codes.InvalidArgument, "invalid sample_interval %d, minimum is 1s", s.GetSampleInterval())
		}
	}
	for i, n := range f.notes {
		if err := stream.Send(&gnmi.SubscribeResponse{Response: &gnmi.SubscribeResponse_Update{Update: n}}); err != nil {
			return err
		}
		if i == 1 {
			if err := stream.Send(&gnmi.SubscribeResponse{Response: &gnmi.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
				return err
			}
		}
	}
	if f.hold {
		<-stream.Context().Done()
		return stream.Context().Err()
	}
	return nil // the stream ends: the collector drains
}

// TestSONiCProfileRecorded subscribes with the SONiC profile over TLS
// (a test CA) to a server replaying recorded COUNTERS_DB replies: the
// request asks for COUNTERS_DB at 1 s although the run asked for 5 ms,
// the SAI counters become interface and queue samples under the fabric's
// port names, and an unreachable optional target is named without
// failing the collection or hanging it.
func TestSONiCProfileRecorded(t *testing.T) {
	ca := testca.New(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fake := &fakeSONiC{notes: loadRecorded(t)}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(ca.ServerTLS(t, "leaf0", "127.0.0.1"))))
	gnmi.RegisterGNMIServer(srv, fake)
	go srv.Serve(lis)
	defer srv.Stop()
	// A port nobody listens on: unreachable.
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()

	var mu sync.Mutex
	var got []Sample
	c := NewCollector([]TargetSpec{
		{Name: "leaf0", Address: lis.Addr().String(), Profile: ProfileSONiC,
			TLS:        &tls.Config{RootCAs: ca.Pool(), ServerName: "leaf0"},
			Interfaces: map[string]string{"Ethernet8": "Ethernet8-fabric"}},
		{Name: "spine9", Address: deadAddr, Optional: true},
	}, WithSampleInterval(5*time.Millisecond), WithConnectTimeout(2*time.Second),
		WithHandler(func(b []Sample) error { mu.Lock(); got = append(got, b...); mu.Unlock(); return nil }))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	stats, err := c.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("collection took %v", time.Since(start))
	}
	if why := stats.Unreachable["spine9"]; why == "" || len(stats.Unreachable) != 1 {
		t.Errorf("unreachable: %v", stats.Unreachable)
	}
	fake.mu.Lock()
	req := fake.reqs[0]
	fake.mu.Unlock()
	for _, s := range req.GetSubscribe().GetSubscription() {
		if time.Duration(s.GetSampleInterval()) != SONiCMinInterval {
			t.Errorf("asked for %v, want SONiC's 1 s", time.Duration(s.GetSampleInterval()))
		}
	}
	val := map[string]int64{}
	for _, s := range got {
		if s.Target != "leaf0" {
			t.Errorf("sample of %s", s.Target)
		}
		val[s.Measurement+" "+s.Interface+" "+s.Queue+" "+s.Field+" "+time.Unix(0, s.Time).UTC().Format("05")] = s.Value
	}
	want := map[string]int64{
		"interface Ethernet0  in-octets 20":           1000,
		"interface Ethernet0  in-pkts 20":             11, // unicast + non-unicast
		"interface Ethernet0  out-octets 21":          252000,
		"interface Ethernet0  out-pkts 21":            222,
		"interface Ethernet8-fabric  out-discards 21": 7,
		"interface Ethernet8-fabric  out-octets 21":   4100, // the per-port reply came last
		"queue Ethernet0 3 transmit-octets 21":        251500,
		"queue Ethernet0 3 ecn-marked-pkts 21":        9,
		"queue Ethernet8-fabric 3 dropped-pkts 20":    1,
		"queue Ethernet8-fabric 3 ecn-marked-pkts 20": 0,
		"interface Ethernet0  out-discards 20":        0,
	}
	for k, v := range want {
		if g, ok := val[k]; !ok || g != v {
			t.Errorf("%s = %d (present %v), want %d", k, g, ok, v)
		}
	}
	if stats.Samples != int64(len(got)) || len(got) != 2*5+2*3+2*5+3+2 {
		t.Errorf("%d samples (stats %d), want %d", len(got), stats.Samples, 2*5+2*3+2*5+3+2)
	}
}

// A switch's own server streams until told otherwise: Stop ends the
// subscription, keeps what arrived and reports no error.
func TestCollectorStopEndsOwnStreams(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	gnmi.RegisterGNMIServer(srv, &fakeSONiC{notes: loadRecorded(t), hold: true})
	go srv.Serve(lis)
	defer srv.Stop()
	var n int
	c := NewCollector([]TargetSpec{{Name: "leaf0", Address: lis.Addr().String(), Profile: ProfileSONiC, Optional: true}},
		WithHandler(func(b []Sample) error { n += len(b); return nil }))
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var stats CollectStats
	go func() { stats, err = c.Wait(); close(done) }()
	select {
	case <-done:
		t.Fatal("the collection ended while the server streams")
	case <-time.After(300 * time.Millisecond):
	}
	c.Stop()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not end the collection")
	}
	if err != nil || stats.Samples != 31 || n != 31 || len(stats.Unreachable) != 0 {
		t.Errorf("after Stop: err %v, %d samples (%d handled), unreachable %v", err, stats.Samples, n, stats.Unreachable)
	}
}
