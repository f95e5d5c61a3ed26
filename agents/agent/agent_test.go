package agent

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/agents/control"
	"github.com/fabricbench/fabricbench/agents/transport"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// freeUDPBlock finds a UDP port with n free ports after it.
func freeUDPBlock(t *testing.T, n int) int {
	t.Helper()
	for try := 0; try < 50; try++ {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := c.LocalAddr().(*net.UDPAddr).Port
		c.Close()
		if base+n > 65000 {
			continue
		}
		ok := true
		for p := base; p <= base+n && ok; p++ {
			c, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				ok = false
				break
			}
			c.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free UDP port block")
	return 0
}

type running struct {
	client *control.Client
	data   netip.AddrPort
	done   chan error
}

func start(t *testing.T, name, token string, planes ...netip.Addr) *running {
	t.Helper()
	p := transport.DefaultParams()
	p.MTU = 4096
	data := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(freeUDPBlock(t, 9)))
	ctl := "127.0.0.1:" + strconv.Itoa(freePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{client: control.NewClient(ctl, token), data: data, done: make(chan error, 1)}
	go func() {
		r.done <- Run(ctx, Config{Name: name, Control: ctl, Token: token, Data: data, Planes: planes, EntropyPorts: 8,
			RateBps: 2e9, Params: p, RunID: 9, FlowTimeout: 20 * time.Second, Logf: t.Logf})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(5 * time.Second):
			t.Errorf("agent %s did not stop", name)
		}
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		h, err := r.client.Health(context.Background())
		if err == nil {
			if h.Host != name || h.RunID != 9 {
				t.Fatalf("health %+v", h)
			}
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent %s not healthy: %v", name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAgentsExchangeFlows runs two agents on loopback and drives them only
// through the control API, as the harness does.
func TestAgentsExchangeFlows(t *testing.T) {
	const token = "per-run-token-0123456789"
	a, b := start(t, "host0", token), start(t, "host1", token)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.client.Start(ctx, []control.Flow{
		{ID: 1, Dst: b.data.String(), Size: 1 << 20, BaseRTTPs: 50e6, RateBps: 2e9},
		{ID: 2, Dst: b.data.String(), Size: 1, BaseRTTPs: 50e6, RateBps: 2e9},
	}); err != nil {
		t.Fatal(err)
	}
	if err := a.client.Start(ctx, []control.Flow{{ID: 1, Dst: b.data.String(), Size: 1}}); err == nil {
		t.Error("a flow ID that is running was accepted again")
	}
	if err := a.client.Start(ctx, []control.Flow{{ID: 3, Dst: "not-an-address", Size: 1}}); err == nil {
		t.Error("a bad destination was accepted")
	}
	got := map[uint32]control.Event{}
	ectx, ecancel := context.WithCancel(ctx)
	go func() {
		<-ctx.Done()
		ecancel()
	}()
	_ = a.client.Events(ectx, 0, func(e control.Event) {
		got[e.Flow] = e
		if len(got) == 2 {
			ecancel()
		}
	})
	for _, id := range []uint32{1, 2} {
		e, ok := got[id]
		if !ok || e.Error != "" || e.FCTNs <= 0 {
			t.Fatalf("flow %d: %+v (have %v)", id, e, got)
		}
	}
	if got[1].Sent < 256 { // 1 MiB in 4 KiB packets
		t.Errorf("flow 1 sent %d packets", got[1].Sent)
	}
	st, err := b.client.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st) == 0 {
		t.Error("no data-plane counters")
	}
	// A wrong token gets nothing.
	bad := control.NewClient(a.client.Addr(), "wrong-token-wrong-token")
	if _, err := bad.Health(ctx); !control.IsUnauthorized(err) {
		t.Errorf("wrong token: %v", err)
	}
	if err := a.client.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-a.done:
		if err != nil {
			t.Errorf("agent exit: %v", err)
		}
		a.done <- nil // for the cleanup
	case <-time.After(5 * time.Second):
		t.Fatal("agent did not shut down when asked")
	}
}

// TestAgentsOverPlanes: agents with a second NIC port (plane) take flows
// that name the peer's plane address and complete them over both.
func TestAgentsOverPlanes(t *testing.T) {
	const token = "per-run-token-0123456789"
	a := start(t, "host0", token, netip.MustParseAddr("127.0.1.1"))
	b := start(t, "host1", token, netip.MustParseAddr("127.0.1.2"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.client.Start(ctx, []control.Flow{{ID: 1, Dst: b.data.String(), Size: 4 << 20, BaseRTTPs: 50e6, RateBps: 2e9, PlaneDsts: []string{"127.0.1.2"}}}); err != nil {
		t.Fatal(err)
	}
	if err := a.client.Start(ctx, []control.Flow{{ID: 2, Dst: b.data.String(), Size: 1, PlaneDsts: []string{"127.0.1.2", "127.0.2.2"}}}); err == nil {
		t.Error("a flow over three planes was accepted by a two-plane agent")
	}
	var got control.Event
	ectx, ecancel := context.WithCancel(ctx)
	defer ecancel()
	_ = a.client.Events(ectx, 0, func(e control.Event) {
		if e.Flow == 1 {
			got = e
			ecancel()
		}
	})
	if got.Error != "" || got.FCTNs <= 0 || got.Sent < 1024 {
		t.Fatalf("flow over two planes: %+v", got)
	}
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "token")
	if err := os.WriteFile(p, []byte("0123456789abcdef0123\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadToken(p); err == nil {
		t.Error("a world-readable token file was accepted")
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := ReadToken(p); err != nil || tok != "0123456789abcdef0123" {
		t.Errorf("token %q, %v", tok, err)
	}
}

// TestConfigJSON: a configuration survives EncodeConfig and DecodeConfig
// whole; a file that sets a few keys gets DefaultConfig for the rest;
// unknown keys and bad names are errors.
func TestConfigJSON(t *testing.T) {
	c := DefaultConfig()
	c.Name, c.Control, c.TokenFile = "host3", "198.19.100.4:7400", "/run/agent.token"
	c.Data = netip.MustParseAddrPort("198.18.0.7:7500")
	c.Planes = []netip.Addr{netip.MustParseAddr("198.18.1.7")}
	c.EntropyPorts, c.RateBps, c.RunID, c.FlowTimeout = 256, 200e6, 77, 90*time.Second
	c.Params.CC, c.Params.LB, c.Params.MTU, c.Params.AckEvery, c.Params.RTO = transport.DCTCP, transport.OPS, 1500, 4, 3*transport.Millisecond
	c.Params.HeaderBytes, c.Params.AckBytes = 86, 78
	b, err := EncodeConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeConfig(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	got.Logf, c.Logf = nil, nil
	if !reflect.DeepEqual(got, c) {
		t.Errorf("round trip:\n got %+v\nwant %+v\n%s", got, c, b)
	}
	for _, key := range []string{`"cc": "dctcp"`, `"lb": "ops"`, `"flow_timeout": "1m30s"`, `"data": "198.18.0.7:7500"`, `"planes": [`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("encoded config lacks %s:\n%s", key, b)
		}
	}

	got, err = DecodeConfig([]byte(`{"control": "127.0.0.1:7400", "transport": {"lb": "ecmp"}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Control, want.Params.LB = "127.0.0.1:7400", transport.ECMP
	got.Logf, want.Logf = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("partial file:\n got %+v\nwant %+v", got, want)
	}

	for in, msg := range map[string]string{
		`{"contrl": "x"}`:                "contrl",
		`{"transport": {"cc": "reno"}}`:  "reno",
		`{"transport": {"ccc": "nscc"}}`: "ccc",
		`{"flow_timeout": "soon"}`:       "flow_timeout",
		`{"data": "nowhere"}`:            "ip:port",
		`{"name": "a"} {"name": "b"}`:    "more than one",
	} {
		if _, err := DecodeConfig([]byte(in)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: error %v, want one naming %q", in, err, msg)
		}
	}
}
