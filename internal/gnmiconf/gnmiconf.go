// Package gnmiconf is the gNMI conformance suite the tests run against
// every gNMI server of the project (telemetry.Server with a test source,
// the kernel exporter, the simulator served by `fabricbench sim
// --serve-gnmi`): OpenConfig's reference client gnmi_cli (built from the
// github.com/openconfig/gnmi module pinned in go.mod) and the gnmic API
// (github.com/openconfig/gnmic/pkg/api) ask for Capabilities, Get (paths,
// wildcards, JSON, JSON_IETF and PROTO), Subscribe ONCE, POLL and STREAM
// (SAMPLE, ON_CHANGE, TARGET_DEFINED, updates_only), with the empty target
// and with named targets, and check what the gNMI specification says the
// answers are: the models and versions, sync_response after the initial
// data, values typed per encoding, the OpenConfig interface leaves
// dashboards read (counters with errors and discards, oper-status,
// admin-status, port-speed) and the qos queue leaves.
package gnmiconf

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmic/pkg/api"
	"github.com/openconfig/gnmic/pkg/api/target"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
)

// Device is a served gNMI target.
type Device struct {
	Name       string
	Interfaces []string
	Queues     bool // it serves the qos queue leaves
}

// Target is a running gNMI server under test. Its source must keep
// publishing while the suite runs (a tick at least every 100 ms of wall
// time), with counters of the first device's first interface moving.
type Target struct {
	Addr, Username, Password string
	// Devices are the served devices; with one, the empty target is it,
	// with several, the empty target is all of them.
	Devices []Device
	// Flap takes the oper-status of Devices[0].Interfaces[0] down (down
	// true) or up again. It returns once the source will publish the new
	// state. nil: the source cannot (the simulator's faults are scheduled
	// in simulated time; its test checks them).
	Flap func(t testing.TB, down bool)

	bin string // gnmi_cli
}

// BuildGnmiCLI builds OpenConfig's gnmi_cli from the module pinned in
// go.mod into t.TempDir() and returns its path (the go build cache makes
// the builds after the first quick).
func BuildGnmiCLI(t testing.TB) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building gnmi_cli needs the go command: %v", err)
	}
	path := filepath.Join(t.TempDir(), "gnmi_cli")
	out, err := exec.Command(gobin, "build", "-o", path, "github.com/openconfig/gnmi/cmd/gnmi_cli").CombinedOutput()
	if err != nil {
		t.Fatalf("go build gnmi_cli: %v\n%s", err, out)
	}
	return path
}

// cli runs gnmi_cli against tg with args; it returns stdout and the
// error (the exit status with stderr).
func (tg *Target) cli(t testing.TB, ctx context.Context, args ...string) (string, error) {
	t.Helper()
	all := append([]string{"-address", tg.Addr, "-insecure", "-with_user_pass", "-logtostderr", "-timeout", "20s"}, args...)
	cmd := exec.CommandContext(ctx, tg.bin, all...)
	cmd.Env = append(os.Environ(), "GNMI_USER="+tg.Username, "GNMI_PASS="+tg.Password, "TMPDIR="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("gnmi_cli %s: %v\nstderr: %s\nstdout: %.2000s", strings.Join(args, " "), err, errb.String(), out.String())
	}
	return out.String(), err
}

// gnmic returns a connected gnmic target for tg.
func (tg *Target) gnmic(t testing.TB, ctx context.Context) *target.Target {
	t.Helper()
	g, err := api.NewTarget(api.Name("conformance"), api.Address(tg.Addr), api.Username(tg.Username), api.Password(tg.Password),
		api.Insecure(true), api.Timeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.CreateGNMIClient(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// name is the target name of device d in requests: the empty target for
// the one device of a single-device server (the spec's "the device"),
// else its name.
func (tg *Target) name(d int) string {
	if len(tg.Devices) == 1 {
		return ""
	}
	return tg.Devices[d].Name
}

// Run runs the suite against tg.
func Run(t *testing.T, tg Target) {
	if len(tg.Devices) == 0 || len(tg.Devices[0].Interfaces) == 0 {
		t.Fatal("gnmiconf: the target needs a device with an interface")
	}
	tg.bin = BuildGnmiCLI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t.Run("Capabilities", func(t *testing.T) { tg.capabilities(t, ctx) })
	t.Run("Get", func(t *testing.T) { tg.get(t, ctx) })
	t.Run("GetEmptyTarget", func(t *testing.T) { tg.getEmptyTarget(t, ctx) })
	t.Run("Once", func(t *testing.T) { tg.once(t, ctx) })
	t.Run("Poll", func(t *testing.T) { tg.poll(t, ctx) })
	t.Run("StreamSample", func(t *testing.T) { tg.streamSample(t, ctx) })
	t.Run("StreamTargetDefined", func(t *testing.T) { tg.streamTargetDefined(t, ctx) })
	t.Run("StreamOnChange", func(t *testing.T) { tg.streamOnChange(t, ctx) })
	t.Run("Errors", func(t *testing.T) { tg.errors(t, ctx) })
}

// wantModels are the models and versions every server advertises.
var wantModels = map[string]string{"openconfig-interfaces": "3.5.0", "openconfig-if-ethernet": "2.13.0", "openconfig-qos": "0.11.2"}

func checkCapabilities(t testing.TB, who string, r *gnmi.CapabilityResponse) {
	t.Helper()
	got := map[string]string{}
	for _, m := range r.GetSupportedModels() {
		got[m.GetName()] = m.GetVersion()
		if m.GetOrganization() == "" {
			t.Errorf("%s: model %s has no organization", who, m.GetName())
		}
	}
	for name, v := range wantModels {
		if got[name] != v {
			t.Errorf("%s: model %s version %q, want %q (models %v)", who, name, got[name], v, got)
		}
	}
	for _, e := range []gnmi.Encoding{gnmi.Encoding_JSON, gnmi.Encoding_JSON_IETF, gnmi.Encoding_PROTO} {
		if !slices.Contains(r.GetSupportedEncodings(), e) {
			t.Errorf("%s: encodings %v lack %v", who, r.GetSupportedEncodings(), e)
		}
	}
	if r.GetGNMIVersion() != "0.10.0" {
		t.Errorf("%s: gNMI version %q, want 0.10.0", who, r.GetGNMIVersion())
	}
}

func (tg *Target) capabilities(t *testing.T, ctx context.Context) {
	out, err := tg.cli(t, ctx, "-capabilities")
	if err != nil {
		t.Fatal(err)
	}
	var r gnmi.CapabilityResponse
	if err := prototext.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("gnmi_cli -capabilities printed no CapabilityResponse: %v\n%s", err, out)
	}
	checkCapabilities(t, "gnmi_cli", &r)
	resp, err := tg.gnmic(t, ctx).Capabilities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkCapabilities(t, "gnmic", resp)
}

// getReq builds a GetRequest with the gnmic API.
func getReq(t testing.TB, tgt string, paths ...string) *gnmi.GetRequest {
	t.Helper()
	opts := []api.GNMIOption{api.Target(tgt)}
	for _, p := range paths {
		opts = append(opts, api.Path(p))
	}
	req, err := api.NewGetRequest(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// pathOf formats an update's path (prefix elements first).
func pathOf(prefix, p *gnmi.Path) string {
	var b strings.Builder
	for _, e := range append(append([]*gnmi.PathElem(nil), prefix.GetElem()...), p.GetElem()...) {
		b.WriteString("/" + e.GetName())
		keys := make([]string, 0, len(e.GetKey()))
		for k := range e.GetKey() {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "[%s=%s]", k, e.GetKey()[k])
		}
	}
	return b.String()
}

func (tg *Target) get(t *testing.T, ctx context.Context) {
	g := tg.gnmic(t, ctx)
	dev := tg.Devices[0]
	if0 := dev.Interfaces[0]
	tgt := tg.name(0)

	// JSON_IETF subtree of one interface.
	req := getReq(t, tgt, "/interfaces/interface[name="+if0+"]")
	req.Encoding = gnmi.Encoding_JSON_IETF
	resp, err := g.Get(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetNotification()) != 1 || len(resp.GetNotification()[0].GetUpdate()) != 1 {
		t.Fatalf("JSON_IETF Get of one interface: %v, want one notification with one update", resp)
	}
	n := resp.GetNotification()[0]
	if n.GetTimestamp() <= 0 {
		t.Errorf("notification timestamp %d", n.GetTimestamp())
	}
	u := n.GetUpdate()[0]
	if got, want := pathOf(n.GetPrefix(), u.GetPath()), "/interfaces/interface[name="+if0+"]"; got != want {
		t.Errorf("update path %s, want %s", got, want)
	}
	var tree map[string]any
	if err := json.Unmarshal(u.GetVal().GetJsonIetfVal(), &tree); err != nil {
		t.Fatalf("json_ietf_val %q: %v", u.GetVal().GetJsonIetfVal(), err)
	}
	state, _ := tree["openconfig-interfaces:state"].(map[string]any)
	counters, _ := state["counters"].(map[string]any)
	if tree["openconfig-interfaces:name"] != if0 || state == nil || counters == nil {
		t.Fatalf("JSON_IETF interface %s: %s", if0, u.GetVal().GetJsonIetfVal())
	}
	for _, leaf := range []string{"in-octets", "out-octets", "in-pkts", "out-pkts", "in-discards", "out-discards", "in-errors", "out-errors"} {
		s, ok := counters[leaf].(string) // RFC 7951: uint64 as a string
		if _, err := strconv.ParseUint(s, 10, 64); !ok || err != nil {
			t.Errorf("counters/%s = %#v, want a uint64 in a JSON string", leaf, counters[leaf])
		}
	}
	if state["oper-status"] != "UP" || state["admin-status"] != "UP" || state["name"] != if0 {
		t.Errorf("state: oper-status %v admin-status %v name %v, want UP UP %s", state["oper-status"], state["admin-status"], state["name"], if0)
	}
	eth, _ := tree["openconfig-if-ethernet:ethernet"].(map[string]any)
	ethState, _ := eth["state"].(map[string]any)
	if s, _ := ethState["port-speed"].(string); !strings.HasPrefix(s, "openconfig-if-ethernet:SPEED_") {
		t.Errorf("ethernet/state/port-speed = %#v, want an openconfig-if-ethernet:SPEED_* identity", ethState["port-speed"])
	}

	// PROTO, a wildcard: one update per interface, typed values.
	req = getReq(t, tgt, "/interfaces/interface[name=*]/state/counters/in-errors", "/interfaces/interface/state/oper-status")
	req.Encoding = gnmi.Encoding_PROTO
	if resp, err = g.Get(ctx, req); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, n := range resp.GetNotification() {
		for _, u := range n.GetUpdate() {
			p := pathOf(n.GetPrefix(), u.GetPath())
			switch {
			case strings.HasSuffix(p, "/in-errors"):
				if _, ok := u.GetVal().GetValue().(*gnmi.TypedValue_UintVal); !ok {
					t.Errorf("%s: %v, want uint_val", p, u.GetVal())
				}
				counts["in-errors"]++
			case strings.HasSuffix(p, "/oper-status"):
				if u.GetVal().GetStringVal() != "UP" {
					t.Errorf("%s: %v, want string_val UP", p, u.GetVal())
				}
				counts["oper-status"]++
			default:
				t.Errorf("unexpected update %s", p)
			}
		}
	}
	if counts["in-errors"] != len(dev.Interfaces) || counts["oper-status"] != len(dev.Interfaces) {
		t.Errorf("PROTO wildcard Get: %v, want %d of each", counts, len(dev.Interfaces))
	}

	// JSON, a leaf: its scalar value.
	req = getReq(t, tgt, "/interfaces/interface[name="+if0+"]/state/admin-status")
	req.Encoding = gnmi.Encoding_JSON
	if resp, err = g.Get(ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := resp.GetNotification(); len(n) != 1 || len(n[0].GetUpdate()) != 1 || string(n[0].GetUpdate()[0].GetVal().GetJsonVal()) != `"UP"` {
		t.Errorf("JSON Get of admin-status: %v, want json_val \"UP\"", resp)
	}

	// The queue leaves.
	if dev.Queues {
		req = getReq(t, tgt, "/qos/interfaces/interface[interface-id="+if0+"]/output/queues/queue[name=*]/state")
		req.Encoding = gnmi.Encoding_PROTO
		if resp, err = g.Get(ctx, req); err != nil {
			t.Fatal(err)
		}
		leaves := map[string]bool{}
		for _, n := range resp.GetNotification() {
			for _, u := range n.GetUpdate() {
				el := u.GetPath().GetElem()
				leaves[el[len(el)-1].GetName()] = true
			}
		}
		for _, want := range []string{"transmit-pkts", "transmit-octets", "dropped-pkts", "ecn-marked-pkts", "max-queue-len"} {
			if !leaves[want] {
				t.Errorf("queue state lacks %s (has %v)", want, leaves)
			}
		}
	}

	// gnmi_cli's Get, JSON_IETF.
	proto := fmt.Sprintf(`prefix: <target: %q> path: <elem: <name: "interfaces"> elem: <name: "interface" key: <key: "name" value: %q>> elem: <name: "state"> elem: <name: "counters">> encoding: JSON_IETF`, tgt, if0)
	out, err := tg.cli(t, ctx, "-get", "-proto", proto)
	if err != nil {
		t.Fatal(err)
	}
	var gr gnmi.GetResponse
	if err := prototext.Unmarshal([]byte(out), &gr); err != nil {
		t.Fatalf("gnmi_cli -get printed no GetResponse: %v\n%s", err, out)
	}
	if n := gr.GetNotification(); len(n) != 1 || len(n[0].GetUpdate()) != 1 ||
		!bytes.Contains(n[0].GetUpdate()[0].GetVal().GetJsonIetfVal(), []byte(`"openconfig-interfaces:in-errors":"`)) {
		t.Errorf("gnmi_cli Get of the counters: %v", &gr)
	}
}

func (tg *Target) getEmptyTarget(t *testing.T, ctx context.Context) {
	g := tg.gnmic(t, ctx)
	req := getReq(t, "", "/interfaces/interface/state/oper-status")
	req.Encoding = gnmi.Encoding_PROTO
	resp, err := g.Get(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, n := range resp.GetNotification() {
		targets = append(targets, n.GetPrefix().GetTarget())
	}
	var want []string
	if len(tg.Devices) == 1 {
		want = []string{""} // the device; no target to name
	} else {
		for _, d := range tg.Devices {
			want = append(want, d.Name)
		}
	}
	slices.Sort(targets)
	slices.Sort(want)
	if !slices.Equal(targets, want) {
		t.Errorf("Get with the empty target: notifications of targets %q, want one per device %q", targets, want)
	}
	// Named, the first device answers for itself.
	req = getReq(t, tg.Devices[0].Name, "/interfaces/interface/state/oper-status")
	req.Encoding = gnmi.Encoding_PROTO
	if resp, err = g.Get(ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := resp.GetNotification(); len(n) != 1 || n[0].GetPrefix().GetTarget() != tg.Devices[0].Name {
		t.Errorf("Get of target %s: %v", tg.Devices[0].Name, resp)
	}
}

// subReq builds a SubscribeRequest with the gnmic API.
func subReq(t testing.TB, opts ...api.GNMIOption) *gnmi.SubscribeRequest {
	t.Helper()
	req, err := api.NewSubscribeRequest(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// parseShortProto parses gnmi_cli's -display_type shortproto output: one
// SubscribeResponse per line.
func parseShortProto(t testing.TB, out string) []*gnmi.SubscribeResponse {
	t.Helper()
	var rs []*gnmi.SubscribeResponse
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || !(strings.HasPrefix(line, "update:") || strings.HasPrefix(line, "sync_response:")) {
			continue
		}
		var r gnmi.SubscribeResponse
		if err := prototext.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("gnmi_cli printed %q: %v", line, err)
		}
		rs = append(rs, &r)
	}
	return rs
}

// checkInitialThenSync checks that rs starts with updates (the initial
// data, covering want leaves per device) followed by one sync_response,
// and returns the index after it.
func checkInitialThenSync(t testing.TB, who string, rs []*gnmi.SubscribeResponse, wantLeaves int) int {
	t.Helper()
	leaves := 0
	for i, r := range rs {
		if r.GetSyncResponse() {
			if leaves < wantLeaves {
				t.Errorf("%s: sync_response after %d initial updates, want at least %d", who, leaves, wantLeaves)
			}
			return i + 1
		}
		leaves += len(r.GetUpdate().GetUpdate())
	}
	t.Errorf("%s: no sync_response in %d responses", who, len(rs))
	return len(rs)
}

func (tg *Target) once(t *testing.T, ctx context.Context) {
	dev := tg.Devices[0]
	args := []string{"-query_type", "once", "-display_type", "shortproto", "-query", "/interfaces/interface/state/counters"}
	if tgt := tg.name(0); tgt != "" {
		args = append(args, "-target", tgt)
	}
	out, err := tg.cli(t, ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	rs := parseShortProto(t, out)
	if end := checkInitialThenSync(t, "gnmi_cli ONCE", rs, 8*len(dev.Interfaces)); end != len(rs) {
		t.Errorf("gnmi_cli ONCE: %d responses after sync_response", len(rs)-end)
	}
	// gnmic's ONCE, every device with the empty target.
	g := tg.gnmic(t, ctx)
	req := subReq(t, api.Target(""), api.SubscriptionListModeONCE(), api.EncodingJSON_IETF(),
		api.Subscription(api.Path("/interfaces/interface/state/counters/in-octets")))
	resps, err := g.SubscribeOnce(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, r := range resps {
		n := r.GetUpdate()
		targets[n.GetPrefix().GetTarget()] = true
		for _, u := range n.GetUpdate() {
			if v := u.GetVal().GetJsonIetfVal(); len(v) < 3 || v[0] != '"' {
				t.Errorf("JSON_IETF in-octets %q, want a quoted uint64", v)
			}
		}
	}
	if len(tg.Devices) > 1 && len(targets) != len(tg.Devices) {
		t.Errorf("gnmic ONCE with the empty target: targets %v, want all %d devices", targets, len(tg.Devices))
	}
}

func (tg *Target) poll(t *testing.T, ctx context.Context) {
	// gnmi_cli polls three times.
	args := []string{"-query_type", "polling", "-polling_interval", "300ms", "-count", "3", "-query", "/interfaces/interface/state/counters/in-octets"}
	if tgt := tg.name(0); tgt != "" {
		args = append(args, "-target", tgt)
	}
	out, err := tg.cli(t, ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "in-octets"); n < 3*len(tg.Devices[0].Interfaces) {
		t.Errorf("gnmi_cli POLL -count 3: in-octets shown %d times, want %d:\n%s", n, 3*len(tg.Devices[0].Interfaces), out)
	}
	// gnmic: initial data and sync_response, then per Poll the current
	// values (a later tick) and sync_response.
	g := tg.gnmic(t, ctx)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req := subReq(t, api.Target(tg.name(0)), api.SubscriptionListModePOLL(), api.EncodingPROTO(),
		api.Subscription(api.Path("/interfaces/interface[name="+tg.Devices[0].Interfaces[0]+"]/state/counters/out-pkts")))
	go g.Subscribe(pctx, req, "poll")
	rch, ech := g.ReadSubscriptions()
	round := func() (ts int64) {
		t.Helper()
		updates := 0
		for {
			select {
			case r := <-rch:
				if r.Response.GetSyncResponse() {
					if updates != 1 {
						t.Errorf("poll round: %d updates before sync_response, want 1", updates)
					}
					return ts
				}
				n := r.Response.GetUpdate()
				updates += len(n.GetUpdate())
				ts = n.GetTimestamp()
			case e := <-ech:
				t.Fatalf("POLL: %v", e.Err)
			case <-time.After(30 * time.Second):
				t.Fatal("POLL: no sync_response within 30s")
			}
		}
	}
	first := round()
	prev := first
	for range 2 {
		time.Sleep(300 * time.Millisecond)
		deadline := time.Now().Add(20 * time.Second)
		for {
			if err := g.SubscribePoll(ctx, "poll"); err != nil {
				t.Fatal(err)
			}
			ts := round()
			if ts > prev {
				prev = ts
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("POLL: the timestamp stayed %d for 20s: the source does not publish", ts)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	cancel()
}

// stream subscribes with gnmic and collects the responses until stop
// returns true or the deadline passes.
func stream(t testing.TB, ctx context.Context, g *target.Target, req *gnmi.SubscribeRequest, stop func([]*gnmi.SubscribeResponse) bool) []*gnmi.SubscribeResponse {
	t.Helper()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rch, ech := g.SubscribeStreamChan(sctx, req, fmt.Sprintf("stream-%p", req))
	var rs []*gnmi.SubscribeResponse
	deadline := time.After(60 * time.Second)
	for !stop(rs) {
		select {
		case r := <-rch:
			rs = append(rs, r)
		case err := <-ech:
			if err != nil && !errors.Is(err, io.EOF) {
				t.Fatalf("STREAM: %v", err)
			}
			t.Fatalf("STREAM ended: %v", err)
		case <-deadline:
			t.Fatalf("STREAM: condition not met within 60s; %d responses", len(rs))
		}
	}
	return rs
}

// updatesAfterSync counts responses with updates after the first
// sync_response.
func updatesAfterSync(rs []*gnmi.SubscribeResponse) int {
	n, synced := 0, false
	for _, r := range rs {
		if r.GetSyncResponse() {
			synced = true
		} else if synced {
			n++
		}
	}
	return n
}

func (tg *Target) streamSample(t *testing.T, ctx context.Context) {
	g := tg.gnmic(t, ctx)
	dev := tg.Devices[0]
	req := subReq(t, api.Target(tg.name(0)), api.SubscriptionListModeSTREAM(), api.EncodingPROTO(),
		api.Subscription(api.Path("/interfaces/interface/state/counters"), api.SubscriptionModeSAMPLE()))
	rs := stream(t, ctx, g, req, func(rs []*gnmi.SubscribeResponse) bool { return updatesAfterSync(rs) >= 5 })
	end := checkInitialThenSync(t, "SAMPLE", rs, 8*len(dev.Interfaces))
	var last int64
	for _, r := range rs[end:] {
		n := r.GetUpdate()
		if n.GetTimestamp() <= last {
			t.Errorf("SAMPLE: timestamp %d after %d", n.GetTimestamp(), last)
		}
		last = n.GetTimestamp()
		if len(n.GetUpdate()) != 8*len(dev.Interfaces) {
			t.Errorf("SAMPLE: %d updates in a sample, want every counter (%d)", len(n.GetUpdate()), 8*len(dev.Interfaces))
		}
	}
	// updates_only: sync_response first.
	req = subReq(t, api.Target(tg.name(0)), api.SubscriptionListModeSTREAM(), api.EncodingPROTO(), api.UpdatesOnly(true),
		api.Subscription(api.Path("/interfaces/interface/state/counters/in-octets"), api.SubscriptionModeSAMPLE()))
	rs = stream(t, ctx, g, req, func(rs []*gnmi.SubscribeResponse) bool { return updatesAfterSync(rs) >= 2 })
	if !rs[0].GetSyncResponse() {
		t.Errorf("updates_only: first response %v, want sync_response", rs[0])
	}
}

// The gnmi_cli default: TARGET_DEFINED with no interval. Counters are
// sampled; oper-status and admin-status, which do not change here, come
// once, with the initial data.
func (tg *Target) streamTargetDefined(t *testing.T, ctx context.Context) {
	if0 := tg.Devices[0].Interfaces[0]
	args := []string{"-query_type", "streaming", "-display_type", "shortproto", "-streaming_duration", "3s",
		"-query", "/interfaces/interface[name=" + if0 + "]/state"}
	if tgt := tg.name(0); tgt != "" {
		args = append(args, "-target", tgt)
	}
	out, _ := tg.cli(t, ctx, args...) // -streaming_duration ends it with an error
	rs := parseShortProto(t, out)
	end := checkInitialThenSync(t, "gnmi_cli TARGET_DEFINED", rs, 8+3)
	leafCount := map[string]int{}
	for _, r := range rs {
		for _, u := range r.GetUpdate().GetUpdate() {
			el := u.GetPath().GetElem()
			leafCount[el[len(el)-1].GetName()]++
		}
	}
	if len(rs)-end < 2 {
		t.Fatalf("gnmi_cli TARGET_DEFINED: %d responses after sync_response in 3s, want samples:\n%.3000s", len(rs)-end, out)
	}
	if leafCount["oper-status"] != 1 || leafCount["admin-status"] != 1 || leafCount["in-octets"] < 3 {
		t.Errorf("TARGET_DEFINED: oper-status %d, admin-status %d, in-octets %d updates; want 1, 1 (on change) and >= 3 (sampled)",
			leafCount["oper-status"], leafCount["admin-status"], leafCount["in-octets"])
	}
}

// ON_CHANGE: oper-status when the link flaps (gnmi_cli, with a
// SubscribeRequest in text), counters when they change (gnmic).
func (tg *Target) streamOnChange(t *testing.T, ctx context.Context) {
	if0 := tg.Devices[0].Interfaces[0]
	tgt := tg.name(0)
	proto := fmt.Sprintf(`subscribe: <prefix: <target: %q> mode: STREAM encoding: JSON_IETF `+
		`subscription: <path: <elem: <name: "interfaces"> elem: <name: "interface" key: <key: "name" value: %q>> elem: <name: "state"> elem: <name: "oper-status">> mode: ON_CHANGE>>`,
		tgt, if0)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(cctx, tg.bin, "-address", tg.Addr, "-insecure", "-with_user_pass", "-logtostderr",
		"-display_type", "shortproto", "-streaming_duration", "60s", "-proto", proto)
	cmd.Env = append(os.Environ(), "GNMI_USER="+tg.Username, "GNMI_PASS="+tg.Password, "TMPDIR="+t.TempDir())
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); pw.Close(); _ = cmd.Wait() }()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var values []string
	synced := false
	next := func(what string) {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("gnmi_cli ended waiting for %s; values %v\nstderr: %s", what, values, errb.String())
				}
				for _, r := range parseShortProto(t, l) {
					if r.GetSyncResponse() {
						synced = true
						if len(values) != 1 {
							t.Errorf("ON_CHANGE: %d values before sync_response, want the initial one", len(values))
						}
						if what == "sync" {
							return
						}
						continue
					}
					for _, u := range r.GetUpdate().GetUpdate() {
						values = append(values, string(u.GetVal().GetJsonIetfVal()))
					}
					if what != "sync" {
						return
					}
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("ON_CHANGE: no %s within 30s; values %v\nstderr: %s", what, values, errb.String())
			}
		}
	}
	next("sync")
	if !synced || len(values) != 1 || values[0] != `"UP"` {
		t.Fatalf("ON_CHANGE initial value %v, want \"UP\" then sync_response", values)
	}
	if tg.Flap != nil {
		tg.Flap(t, true)
		next("DOWN")
		tg.Flap(t, false)
		next("UP")
		if want := []string{`"UP"`, `"DOWN"`, `"UP"`}; !slices.Equal(values, want) {
			t.Errorf("ON_CHANGE oper-status values %v, want %v (one per change)", values, want)
		}
	} else {
		t.Log("the target cannot flap a link on demand: its oper-status changes are checked by its own test")
	}

	// Counters on change: a value is sent only when it moved.
	g := tg.gnmic(t, ctx)
	req := subReq(t, api.Target(tgt), api.SubscriptionListModeSTREAM(), api.EncodingPROTO(),
		api.Subscription(api.Path("/interfaces/interface[name="+if0+"]/state/counters"), api.SubscriptionModeON_CHANGE()))
	rs := stream(t, ctx, g, req, func(rs []*gnmi.SubscribeResponse) bool { return updatesAfterSync(rs) >= 3 })
	end := checkInitialThenSync(t, "ON_CHANGE counters", rs, 8)
	last := map[string]uint64{}
	for _, r := range rs[:end] {
		for _, u := range r.GetUpdate().GetUpdate() {
			last[pathOf(nil, u.GetPath())] = u.GetVal().GetUintVal()
		}
	}
	for _, r := range rs[end:] {
		for _, u := range r.GetUpdate().GetUpdate() {
			p := pathOf(nil, u.GetPath())
			if v := u.GetVal().GetUintVal(); v == last[p] {
				t.Errorf("ON_CHANGE: %s sent again unchanged (%d)", p, v)
			} else {
				last[p] = v
			}
		}
	}
}

func (tg *Target) errors(t *testing.T, ctx context.Context) {
	g := tg.gnmic(t, ctx)
	req := getReq(t, tg.name(0), "/interfaces/interface[name=no-such-port]/state")
	req.Encoding = gnmi.Encoding_JSON_IETF
	if _, err := g.Get(ctx, req); status.Code(err) != codes.NotFound {
		t.Errorf("Get of a missing interface: %v, want NotFound", err)
	}
	req = getReq(t, "no-such-target", "/interfaces")
	if _, err := g.Get(ctx, req); status.Code(err) != codes.NotFound {
		t.Errorf("Get of an unknown target: %v, want NotFound", err)
	}
	req = getReq(t, tg.name(0), "/interfaces")
	req.Encoding = gnmi.Encoding_ASCII
	if _, err := g.Get(ctx, req); status.Code(err) != codes.Unimplemented {
		t.Errorf("Get in ASCII: %v, want Unimplemented", err)
	}
	if _, err := g.Set(ctx, &gnmi.SetRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("Set: %v, want Unimplemented (read-only)", err)
	}
}
