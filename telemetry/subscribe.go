package telemetry

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// encodePaths builds device d's prefix and leaf path encodings, kinds and
// labels.
func (s *Server) encodePaths(d int) error {
	dp := &s.paths[d]
	dev := &s.devices[d]
	var err error
	if dp.prefix, err = encodePrefix(dev.Name); err != nil {
		return err
	}
	paths := gnmiLeafPaths(dev)
	dp.wire = make([][]byte, len(paths))
	dp.kinds = make([]leafKind, len(paths))
	dp.labels = make([]string, len(paths))
	for i, p := range paths {
		if dp.wire[i], err = (proto.MarshalOptions{Deterministic: true}).Marshal(p); err != nil {
			return fmt.Errorf("telemetry: device %q: encoding path %d: %w", dev.Name, i, err)
		}
		k, ifn := leafKindOf(dev, i)
		dp.kinds[i] = k
		if k == kindName {
			dp.labels[i] = dev.Interfaces[ifn]
		}
	}
	return nil
}

// targets resolves a request's target name: the device it names, or, for
// the empty target, the one device of a single-device server, or every
// device. prefixOf gives the prefix (encoded) of a device's notifications:
// the request's target, or the device's name when the request named none
// and the server has several devices (an empty prefix for a single one).
func (s *Server) targets(name string) (devs []int, prefixOf func(d int) []byte, err error) {
	if name == "" {
		if len(s.devices) == 1 {
			empty := []byte{}
			return []int{0}, func(int) []byte { return empty }, nil
		}
		devs = make([]int, len(s.devices))
		for i := range devs {
			devs[i] = i
		}
		return devs, func(d int) []byte { return s.paths[d].prefix }, nil
	}
	d, ok := s.byName[name]
	if !ok {
		known := make([]string, 0, len(s.devices))
		for _, dev := range s.devices {
			known = append(known, dev.Name)
		}
		if len(known) > 10 {
			known = append(known[:10], "...")
		}
		return nil, nil, status.Errorf(codes.NotFound, "unknown target %q (this server serves %s; the empty target is %s)",
			name, strings.Join(known, ", "), map[bool]string{true: "its device", false: "every device"}[len(s.devices) == 1])
	}
	return []int{d}, func(int) []byte { return s.paths[d].prefix }, nil
}

// register adds a STREAM subscription, unless the server is closed, and
// returns the latest values of its leaves (nil when nothing has been
// published yet) as its initial data. Its publisher state starts from
// them: a SAMPLE entry samples next an interval after them, ON_CHANGE
// compares with them.
func (s *Server) register(sub *subscription) (*tickBuf, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false
	}
	s.latestMu.Lock()
	var init *tickBuf
	if s.published {
		init = sub.newBuf()
		init.time = s.latestTime
		for i := range sub.parts {
			p := &sub.parts[i]
			for j, idx := range p.leaves {
				init.vals[i][j] = s.latest[p.dev][idx]
			}
			init.send[i] = true
			init.incl[i] = nil // every leaf
			p.start(s.latestTime, init.vals[i])
		}
	}
	s.latestMu.Unlock()
	s.subs = append(s.subs, sub)
	s.broadcastLocked()
	return init, true
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

// snapshot returns the latest values of parts' leaves and their time; ok
// is false when nothing has been published yet.
func (s *Server) snapshot(parts []subPart) (ts int64, vals [][]int64, ok bool) {
	s.latestMu.Lock()
	defer s.latestMu.Unlock()
	if !s.published {
		return 0, nil, false
	}
	vals = make([][]int64, len(parts))
	for i := range parts {
		p := &parts[i]
		vals[i] = make([]int64, len(p.leaves))
		for j, idx := range p.leaves {
			vals[i][j] = s.latest[p.dev][idx]
		}
	}
	return s.latestTime, vals, true
}

// subscription is one registered STREAM SubscribeRequest. Its parts (one
// per device it covers) share one queue and one stream; a tick's due
// leaves of a device go out in one notification.
type subscription struct {
	parts []subPart
	enc   gnmi.Encoding

	free, ready chan *tickBuf
	allocated   int           // tick buffers allocated so far (publisher-owned)
	due         []bool        // per part: it sends in the current tick (publisher-owned)
	closing     chan struct{} // closed by Server.Close: drain and end
	gone        chan struct{} // closed when the handler has returned
}

// subPart is a subscription's leaves of one device.
type subPart struct {
	dev     int
	prefix  []byte  // encoded prefix of its notifications
	leaves  []int   // leaf indices of the device, increasing, unique
	set     leafSet // leaves' paths, kinds, labels (read-only)
	entries []subEntry
	// simple: one SAMPLE entry over every leaf, without
	// suppress_redundant or heartbeat: every due tick sends every leaf.
	simple bool

	// Publisher-owned state: what was last sent of each leaf, and the
	// leaves to include in the current tick.
	lastSent []int64
	sent     []bool
	incl     []bool
}

// subEntry is one Subscription of the request, on one device.
type subEntry struct {
	interval  int64 // SAMPLE interval, source-clock ns
	heartbeat int64 // 0: none
	suppress  bool  // suppress_redundant
	samplePos []int // positions in subPart.leaves sampled every interval
	changePos []int // positions sent when they change
	// Publisher-owned sampling state.
	last, lastHB int64
	emitted      bool // sampled at least once (last valid)
	hbStarted    bool // lastHB valid
	hbPending    bool // a heartbeat is due at the next sample
}

// tickBuf is one queued tick of a subscription.
type tickBuf struct {
	time int64
	vals [][]int64 // per part, per leaf
	incl [][]bool  // per part, per leaf; nil inner slice: every leaf
	send []bool    // per part: whether the part has anything to send
}

func (sub *subscription) newBuf() *tickBuf {
	b := &tickBuf{vals: make([][]int64, len(sub.parts)), incl: make([][]bool, len(sub.parts)), send: make([]bool, len(sub.parts))}
	for i := range sub.parts {
		b.vals[i] = make([]int64, len(sub.parts[i].leaves))
		if !sub.parts[i].simple {
			b.incl[i] = make([]bool, len(sub.parts[i].leaves))
		}
	}
	return b
}

func newSubscription(parts []subPart, enc gnmi.Encoding, depth int) *subscription {
	for i := range parts {
		p := &parts[i]
		p.simple = len(p.entries) == 1 && p.entries[0].heartbeat == 0 && !p.entries[0].suppress &&
			len(p.entries[0].changePos) == 0 && len(p.entries[0].samplePos) == len(p.leaves)
		if !p.simple {
			p.lastSent = make([]int64, len(p.leaves))
			p.sent = make([]bool, len(p.leaves))
			p.incl = make([]bool, len(p.leaves))
		}
	}
	return &subscription{
		parts: parts, enc: enc, due: make([]bool, len(parts)),
		free: make(chan *tickBuf, depth), ready: make(chan *tickBuf, depth),
		closing: make(chan struct{}), gone: make(chan struct{}),
	}
}

// start sets the part's publisher state as if vals, the values at time
// ts, had just been sent.
func (p *subPart) start(ts int64, vals []int64) {
	for i := range p.entries {
		e := &p.entries[i]
		e.last, e.emitted = ts, true
		e.lastHB, e.hbStarted = ts, true
	}
	if !p.simple {
		copy(p.lastSent, vals)
		for i := range p.sent {
			p.sent[i] = true
		}
	}
}

// plan decides what the part sends at tick t with the device's values
// all (every leaf): whether anything, and for a non-simple part which
// leaves (p.incl), updating the publisher state. Only the (serialised)
// publisher calls it.
func (p *subPart) plan(t int64, all []int64) bool {
	if p.simple {
		e := &p.entries[0]
		if e.emitted && t-e.last < e.interval {
			return false
		}
		e.last, e.emitted = t, true
		return true
	}
	clear(p.incl)
	changed := func(pos int) bool { return !p.sent[pos] || p.lastSent[pos] != all[p.leaves[pos]] }
	for i := range p.entries {
		e := &p.entries[i]
		hb := false
		if e.heartbeat > 0 && (!e.hbStarted || t-e.lastHB >= e.heartbeat) {
			e.lastHB, e.hbStarted = t, true
			hb = true
			e.hbPending = true
		}
		if len(e.samplePos) > 0 && (!e.emitted || t-e.last >= e.interval) {
			e.last, e.emitted = t, true
			for _, pos := range e.samplePos {
				if !e.suppress || e.hbPending || changed(pos) {
					p.incl[pos] = true
				}
			}
			e.hbPending = false
		}
		for _, pos := range e.changePos {
			if hb || changed(pos) {
				p.incl[pos] = true
			}
		}
		if len(e.samplePos) == 0 {
			e.hbPending = false
		}
	}
	any := false
	for pos, in := range p.incl {
		if in {
			p.lastSent[pos], p.sent[pos] = all[p.leaves[pos]], true
			any = true
		}
	}
	return any
}

// offer queues the tick if any part has something to send, waiting for
// room if needed. latest holds every device's values. Only the
// (serialised) publisher calls it.
func (sub *subscription) offer(ctx context.Context, timeNs int64, latest [][]int64, s *Server) error {
	due := false
	for i := range sub.parts {
		p := &sub.parts[i]
		sub.due[i] = p.plan(timeNs, latest[p.dev])
		due = due || sub.due[i]
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
			buf = sub.newBuf()
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
	for i := range sub.parts {
		p := &sub.parts[i]
		buf.send[i] = sub.due[i]
		if !p.simple {
			copy(buf.incl[i], p.incl)
		}
		if buf.send[i] {
			all := latest[p.dev]
			for j, idx := range p.leaves {
				buf.vals[i][j] = all[idx]
			}
		}
	}
	sub.ready <- buf // never blocks: there are at most cap(ready) buffers
	return nil
}

// send writes buf's notifications to the stream, one per part with
// something to send.
func (sub *subscription) send(stream gnmi.GNMI_SubscribeServer, buf *tickBuf) error {
	for i := range sub.parts {
		if !buf.send[i] {
			continue
		}
		p := &sub.parts[i]
		if msg := encodeNotificationAs(buf.time, p.prefix, &p.set, buf.vals[i], buf.incl[i], sub.enc); msg != nil {
			if err := stream.SendMsg(msg); err != nil {
				return err
			}
		}
	}
	return nil
}

var syncResponse = &gnmi.SubscribeResponse{Response: &gnmi.SubscribeResponse_SyncResponse{SyncResponse: true}}

// gnmiService implements gnmi.GNMIServer for a Server.
type gnmiService struct {
	gnmi.UnimplementedGNMIServer
	s *Server
}

// Models are the OpenConfig models whose leaves a Server serves, as its
// Capabilities response lists them: openconfig-interfaces (counters,
// oper-status, admin-status, name), openconfig-if-ethernet (port-speed)
// and openconfig-qos (the queue state leaves; trim-pkts, backlogged-ns and
// the pfc-* leaves are fabricbench's additions in the queue's state).
var Models = []*gnmi.ModelData{
	{Name: "openconfig-interfaces", Organization: "OpenConfig working group", Version: "3.5.0"},
	{Name: "openconfig-if-ethernet", Organization: "OpenConfig working group", Version: "2.13.0"},
	{Name: "openconfig-qos", Organization: "OpenConfig working group", Version: "0.11.2"},
}

// gnmiVersion is the version of the gNMI service the server implements:
// the gnmi_service option of the gnmi.proto it is built with.
func gnmiVersion() string {
	if v, ok := proto.GetExtension(gnmi.File_proto_gnmi_gnmi_proto.Options(), gnmi.E_GnmiService).(string); ok && v != "" {
		return v
	}
	return "0.10.0"
}

var supportedEncodings = []gnmi.Encoding{gnmi.Encoding_JSON, gnmi.Encoding_JSON_IETF, gnmi.Encoding_PROTO}

// Capabilities implements gnmi.GNMIServer.
func (g *gnmiService) Capabilities(context.Context, *gnmi.CapabilityRequest) (*gnmi.CapabilityResponse, error) {
	models := make([]*gnmi.ModelData, len(Models))
	for i, m := range Models {
		models[i] = proto.Clone(m).(*gnmi.ModelData)
	}
	return &gnmi.CapabilityResponse{
		SupportedModels:    models,
		SupportedEncodings: slices.Clone(supportedEncodings),
		GNMIVersion:        gnmiVersion(),
	}, nil
}

// Set implements gnmi.GNMIServer: the targets are read-only.
func (g *gnmiService) Set(context.Context, *gnmi.SetRequest) (*gnmi.SetResponse, error) {
	return nil, status.Error(codes.Unimplemented, "Set: this target serves telemetry only (read-only)")
}

func checkEncoding(enc gnmi.Encoding) error {
	if !slices.Contains(supportedEncodings, enc) {
		return status.Errorf(codes.Unimplemented, "encoding %v is not supported (JSON, JSON_IETF and PROTO are)", enc)
	}
	return nil
}

// Subscribe implements gnmi.GNMIServer: ONCE, POLL and STREAM (SAMPLE,
// ON_CHANGE and TARGET_DEFINED subscriptions).
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
	switch list.GetMode() {
	case gnmi.SubscriptionList_STREAM, gnmi.SubscriptionList_ONCE, gnmi.SubscriptionList_POLL:
	default:
		return status.Errorf(codes.InvalidArgument, "unknown subscription list mode %v", list.GetMode())
	}
	if err := checkEncoding(list.GetEncoding()); err != nil {
		return err
	}
	if len(list.GetSubscription()) == 0 {
		return status.Error(codes.InvalidArgument, "the SubscriptionList has no subscriptions")
	}
	devs, prefixOf, err := s.targets(list.GetPrefix().GetTarget())
	if err != nil {
		return err
	}
	parts, err := s.resolve(devs, prefixOf, list)
	if err != nil {
		return err
	}
	switch list.GetMode() {
	case gnmi.SubscriptionList_ONCE:
		if !list.GetUpdatesOnly() {
			if err := s.sendSnapshot(stream, parts, list.GetEncoding()); err != nil {
				return err
			}
		}
		return stream.Send(syncResponse)
	case gnmi.SubscriptionList_POLL:
		return s.servePoll(stream, parts, list)
	}
	sub := newSubscription(parts, list.GetEncoding(), s.depth)
	init, ok := s.register(sub)
	if !ok {
		return status.Error(codes.Unavailable, "the gNMI server is shutting down")
	}
	defer s.unregister(sub)
	if list.GetUpdatesOnly() {
		init = nil
	}
	return sub.serve(stream, init)
}

// sendSnapshot sends the latest values of parts' leaves, one
// notification per device (nothing before the first Publish).
func (s *Server) sendSnapshot(stream gnmi.GNMI_SubscribeServer, parts []subPart, enc gnmi.Encoding) error {
	ts, vals, ok := s.snapshot(parts)
	if !ok {
		return nil
	}
	for i := range parts {
		p := &parts[i]
		if msg := encodeNotificationAs(ts, p.prefix, &p.set, vals[i], nil, enc); msg != nil {
			if err := stream.SendMsg(msg); err != nil {
				return err
			}
		}
	}
	return nil
}

// servePoll serves a POLL subscription: the latest values and
// sync_response now (unless updates_only) and on every Poll, until the
// client ends the stream.
func (s *Server) servePoll(stream gnmi.GNMI_SubscribeServer, parts []subPart, list *gnmi.SubscriptionList) error {
	if !list.GetUpdatesOnly() {
		if err := s.sendSnapshot(stream, parts, list.GetEncoding()); err != nil {
			return err
		}
	}
	if err := stream.Send(syncResponse); err != nil {
		return err
	}
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if req.GetPoll() == nil {
			return status.Error(codes.InvalidArgument, "a POLL subscription takes Poll requests only after its SubscriptionList")
		}
		if err := s.sendSnapshot(stream, parts, list.GetEncoding()); err != nil {
			return err
		}
		if err := stream.Send(syncResponse); err != nil {
			return err
		}
	}
}

// resolve matches the subscriptions of list against the devices. It
// returns one part per device that something matched, with the union of
// the matched leaves (increasing) and, for STREAM, one entry per
// subscription that matched something there, with its mode and the
// positions of its leaves in the union.
//
// A path that no device could serve (not in the schema, or another origin)
// is an error. A path in the schema that matches no leaf of a device, e.g.
// the queue paths on a host NIC, is accepted and contributes nothing, so
// one path list fits every device; but the request as a whole must match
// at least one leaf.
func (s *Server) resolve(devs []int, prefixOf func(int) []byte, list *gnmi.SubscriptionList) ([]subPart, error) {
	isStream := list.GetMode() == gnmi.SubscriptionList_STREAM
	prefix := list.GetPrefix()
	type spec struct {
		elems []*gnmi.PathElem
		entry subEntry
		mode  gnmi.SubscriptionMode
	}
	var specs []spec
	var names []string
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
			return nil, status.Errorf(codes.InvalidArgument, "path %s uses the deprecated element field; use elem", ps)
		}
		sp := spec{elems: elems, mode: sub.GetMode()}
		if isStream {
			switch sub.GetMode() {
			case gnmi.SubscriptionMode_SAMPLE, gnmi.SubscriptionMode_TARGET_DEFINED, gnmi.SubscriptionMode_ON_CHANGE:
			default:
				return nil, status.Errorf(codes.InvalidArgument, "unknown subscription mode %v (path %s)", sub.GetMode(), ps)
			}
			e := &sp.entry
			e.interval = int64(sub.GetSampleInterval())
			switch {
			case sub.GetSampleInterval() == 0:
				e.interval = s.base
			case sub.GetMode() == gnmi.SubscriptionMode_ON_CHANGE:
				// sample_interval means nothing for ON_CHANGE.
			case e.interval <= 0 || e.interval%s.base != 0:
				return nil, status.Errorf(codes.InvalidArgument,
					"sample_interval %dns (path %s) is not a positive multiple of the target's base interval %dns",
					sub.GetSampleInterval(), ps, s.base)
			}
			if hb := sub.GetHeartbeatInterval(); hb != 0 {
				if int64(hb) <= 0 || int64(hb) < s.base {
					return nil, status.Errorf(codes.InvalidArgument, "heartbeat_interval %dns (path %s) is below the target's base interval %dns",
						hb, ps, s.base)
				}
				e.heartbeat = int64(hb)
			}
			e.suppress = sub.GetSuppressRedundant()
		}
		if !originOK(prefix.GetOrigin()) || !originOK(p.GetOrigin()) || !inSchema(elems) {
			return nil, status.Errorf(codes.InvalidArgument, "path %s matches no leaf of the served schema (%s)", ps, schemaSummary)
		}
		specs = append(specs, sp)
	}
	var parts []subPart
	for _, d := range devs {
		dev := &s.devices[d]
		dp := &s.paths[d]
		var matched [][]int
		var entries []subEntry
		for _, sp := range specs {
			m := matchLeaves(dev, sp.elems)
			if len(m) == 0 {
				continue
			}
			matched = append(matched, m)
			entries = append(entries, sp.entry)
			e := &entries[len(entries)-1]
			e.samplePos, e.changePos = nil, nil
			switch sp.mode {
			case gnmi.SubscriptionMode_ON_CHANGE:
				e.changePos = m // positions filled below
			case gnmi.SubscriptionMode_TARGET_DEFINED:
				for _, idx := range m {
					if dp.kinds[idx].onChange() {
						e.changePos = append(e.changePos, idx)
					} else {
						e.samplePos = append(e.samplePos, idx)
					}
				}
			default:
				e.samplePos = m
			}
		}
		if len(matched) == 0 {
			continue
		}
		// The union of matched leaves, in increasing order.
		posOf := make([]int, leavesPerDevice(dev)) // position+1; 0: not matched
		for _, m := range matched {
			for _, idx := range m {
				posOf[idx] = 1
			}
		}
		p := subPart{dev: d, prefix: prefixOf(d)}
		allCounters := true
		for idx := range posOf {
			if posOf[idx] != 0 {
				p.leaves = append(p.leaves, idx)
				posOf[idx] = len(p.leaves)
				allCounters = allCounters && dp.kinds[idx] == kindCounter
			}
		}
		p.set.paths = make([][]byte, len(p.leaves))
		for i, idx := range p.leaves {
			p.set.paths[i] = dp.wire[idx]
		}
		if !allCounters {
			p.set.kinds = make([]leafKind, len(p.leaves))
			p.set.labels = make([]string, len(p.leaves))
			for i, idx := range p.leaves {
				p.set.kinds[i], p.set.labels[i] = dp.kinds[idx], dp.labels[idx]
			}
		}
		toPos := func(idxs []int) []int {
			if idxs == nil {
				return nil
			}
			out := make([]int, len(idxs))
			for i, idx := range idxs {
				out[i] = posOf[idx] - 1
			}
			return out
		}
		for i := range entries {
			entries[i].samplePos = toPos(entries[i].samplePos)
			entries[i].changePos = toPos(entries[i].changePos)
		}
		if isStream {
			p.entries = entries
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		target := list.GetPrefix().GetTarget()
		if target == "" {
			target = "the empty target"
		} else {
			target = fmt.Sprintf("target %q", target)
		}
		return nil, status.Errorf(codes.InvalidArgument, "path %s matches no leaf of %s", strings.Join(names, ", "), target)
	}
	return parts, nil
}

// schemaSummary describes the served schema in errors.
const schemaSummary = "/interfaces/interface/state/{counters/*,oper-status,admin-status,name}, " +
	"/interfaces/interface/ethernet/state/port-speed and /qos/interfaces/interface/output/queues/queue/state/*; origin openconfig or none"

// serve sends the initial data (nil: none), sync_response, then streams
// the subscription's queue to the client until the server closes (then it
// drains the queue and returns nil) or the client goes away. A request
// the client sends on the stream after its SubscriptionList ends the
// stream with InvalidArgument (a STREAM subscription takes no Poll, and
// cannot be changed).
func (sub *subscription) serve(stream gnmi.GNMI_SubscribeServer, init *tickBuf) error {
	if init != nil {
		if err := sub.send(stream, init); err != nil {
			return err
		}
	}
	if err := stream.Send(syncResponse); err != nil {
		return err
	}
	ctx := stream.Context()
	bad := make(chan error, 1)
	go func() {
		// Recv returns once the handler has returned, at the latest.
		req, err := stream.Recv()
		if err != nil {
			return // io.EOF: the client closed its side; keep streaming
		}
		what := "a SubscriptionList"
		if req.GetPoll() != nil {
			what = "a Poll"
		}
		bad <- status.Errorf(codes.InvalidArgument, "a STREAM subscription takes no further requests (got %s)", what)
	}()
	send := func(buf *tickBuf) error {
		err := sub.send(stream, buf)
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
		case err := <-bad:
			return err
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
	}
}
