package telemetry

import (
	"context"
	"strconv"
	"time"

	"github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Get implements gnmi.GNMIServer. Every path (prefix + path) must match a
// leaf of some requested device (NOT_FOUND otherwise). The response has
// one notification per device, timestamped with the last published tick
// (the current time before the first one, with no updates: nothing has
// been measured yet).
func (g *gnmiService) Get(ctx context.Context, req *gnmi.GetRequest) (*gnmi.GetResponse, error) {
	s := g.s
	enc := req.GetEncoding()
	if err := checkEncoding(enc); err != nil {
		return nil, err
	}
	switch req.GetType() {
	case gnmi.GetRequest_ALL, gnmi.GetRequest_STATE, gnmi.GetRequest_OPERATIONAL, gnmi.GetRequest_CONFIG:
	default:
		return nil, status.Errorf(codes.InvalidArgument, "unknown data type %v", req.GetType())
	}
	if len(req.GetPath()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "a GetRequest needs at least one path (/ for everything)")
	}
	prefix := req.GetPrefix()
	devs, _, err := s.targets(prefix.GetTarget())
	if err != nil {
		return nil, err
	}
	type reqPath struct {
		elems    []*gnmi.PathElem
		origin   string
		concrete bool
	}
	var paths []reqPath
	for _, p := range req.GetPath() {
		elems := append(append([]*gnmi.PathElem(nil), prefix.GetElem()...), p.GetElem()...)
		origin := p.GetOrigin()
		if origin == "" {
			origin = prefix.GetOrigin()
		}
		ps := pathString(origin, elems)
		//lint:ignore SA1019 rejecting the deprecated field needs reading it
		if len(p.GetElement()) > 0 && len(p.GetElem()) == 0 {
			return nil, status.Errorf(codes.InvalidArgument, "path %s uses the deprecated element field; use elem", ps)
		}
		if !originOK(prefix.GetOrigin()) || !originOK(p.GetOrigin()) || !inSchema(elems) {
			return nil, status.Errorf(codes.NotFound, "path %s matches no leaf of the served schema (%s)", ps, schemaSummary)
		}
		found := false
		for _, d := range devs {
			if len(matchLeaves(&s.devices[d], elems)) > 0 {
				found = true
				break
			}
		}
		if !found {
			return nil, status.Errorf(codes.NotFound, "path %s matches no leaf of %s", ps, describeTarget(prefix.GetTarget()))
		}
		paths = append(paths, reqPath{elems: elems, origin: p.GetOrigin(), concrete: concretePath(elems)})
	}

	s.latestMu.Lock()
	published, ts := s.published, s.latestTime
	vals := make([][]int64, len(devs))
	for i, d := range devs {
		vals[i] = append([]int64(nil), s.latest[d]...)
	}
	s.latestMu.Unlock()
	if !published {
		ts = time.Now().UnixNano()
	}

	resp := &gnmi.GetResponse{}
	for i, d := range devs {
		dev := &s.devices[d]
		dp := &s.paths[d]
		n := &gnmi.Notification{Timestamp: ts}
		switch {
		case prefix.GetTarget() != "":
			n.Prefix = &gnmi.Path{Target: prefix.GetTarget()}
		case len(s.devices) > 1:
			n.Prefix = &gnmi.Path{Target: dev.Name}
		}
		resp.Notification = append(resp.Notification, n)
		if !published || req.GetType() == gnmi.GetRequest_CONFIG {
			continue
		}
		leafPaths := gnmiLeafPaths(dev)
		for _, rp := range paths {
			m := matchLeaves(dev, rp.elems)
			if len(m) == 0 {
				continue
			}
			if enc == gnmi.Encoding_PROTO || !rp.concrete {
				for _, idx := range m {
					n.Update = append(n.Update, &gnmi.Update{
						Path: &gnmi.Path{Origin: rp.origin, Elem: leafPaths[idx].GetElem()},
						Val:  typedValue(enc, dp.kinds[idx], vals[i][idx], dp.labels[idx]),
					})
				}
				continue
			}
			n.Update = append(n.Update, &gnmi.Update{
				Path: &gnmi.Path{Origin: rp.origin, Elem: rp.elems},
				Val:  jsonTree(enc, dev, dp, rp.elems, m, vals[i]),
			})
		}
	}
	return resp, nil
}

func describeTarget(target string) string {
	if target == "" {
		return "the empty target"
	}
	return "target " + strconv.Quote(target)
}

// concretePath reports whether elems name one node: no "*" or "..."
// element, no "*" key value, and every list element (interface, queue)
// with its key.
func concretePath(elems []*gnmi.PathElem) bool {
	for _, e := range elems {
		switch e.GetName() {
		case "*", "...":
			return false
		case elemInterface, elemQueue:
			if len(e.GetKey()) == 0 {
				return false
			}
		}
		for _, v := range e.GetKey() {
			if v == "*" {
				return false
			}
		}
	}
	return true
}

// moduleOf is the YANG module of the node elems[i] of an absolute path.
func moduleOf(elems []schemaElem, i int) string {
	if len(elems) > 0 && elems[0].name == elemQoS {
		return "openconfig-qos"
	}
	for j := 0; j <= i && j < len(elems); j++ {
		if elems[j].name == elemEthernet {
			return ethModule
		}
	}
	return "openconfig-interfaces"
}

// jsonObj is a JSON object under construction, members in insertion
// order.
type jsonObj struct {
	names []string
	vals  map[string]*jsonMember
}

type jsonMember struct {
	raw     []byte     // a leaf's value
	obj     *jsonObj   // a container
	entries []*jsonObj // a list's entries
	byKey   map[string]*jsonObj
}

func (o *jsonObj) member(name string) *jsonMember {
	if o.vals == nil {
		o.vals = map[string]*jsonMember{}
	}
	m, ok := o.vals[name]
	if !ok {
		m = &jsonMember{}
		o.vals[name] = m
		o.names = append(o.names, name)
	}
	return m
}

func (o *jsonObj) appendTo(b []byte) []byte {
	b = append(b, '{')
	for i, name := range o.names {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, name)
		b = append(b, ':')
		m := o.vals[name]
		switch {
		case m.raw != nil:
			b = append(b, m.raw...)
		case m.obj != nil:
			b = m.obj.appendTo(b)
		default:
			b = append(b, '[')
			for j, e := range m.entries {
				if j > 0 {
					b = append(b, ',')
				}
				b = e.appendTo(b)
			}
			b = append(b, ']')
		}
	}
	return append(b, '}')
}

// jsonTree is the JSON (RFC 7159) or JSON_IETF (RFC 7951) value of the
// subtree at the concrete path root: a scalar for a leaf, else an object
// of the matched leaves under root. In JSON_IETF a member name carries its
// module where the module changes and at the top level, lists are arrays
// of entries that include their key leaf.
func jsonTree(enc gnmi.Encoding, dev *Device, dp *devicePaths, root []*gnmi.PathElem, leaves []int, vals []int64) *gnmi.TypedValue {
	wrap := func(b []byte) *gnmi.TypedValue {
		if enc == gnmi.Encoding_JSON_IETF {
			return &gnmi.TypedValue{Value: &gnmi.TypedValue_JsonIetfVal{JsonIetfVal: b}}
		}
		return &gnmi.TypedValue{Value: &gnmi.TypedValue_JsonVal{JsonVal: b}}
	}
	var buf []schemaElem
	if len(leaves) == 1 {
		if buf = leafElems(buf[:0], dev, leaves[0]); len(buf) == len(root) {
			return wrap(jsonScalar(nil, enc, dp.kinds[leaves[0]], vals[leaves[0]], dp.labels[leaves[0]]))
		}
	}
	name := func(abs []schemaElem, i int) string {
		if enc != gnmi.Encoding_JSON_IETF {
			return abs[i].name
		}
		mod := moduleOf(abs, i)
		if i == len(root) || (i > 0 && moduleOf(abs, i-1) != mod) {
			return mod + ":" + abs[i].name
		}
		return abs[i].name
	}
	top := &jsonObj{}
	keyed := false
	for _, idx := range leaves {
		abs := leafElems(buf[:0], dev, idx)
		o := top
		if !keyed && len(root) > 0 && abs[len(root)-1].key != "" {
			// The root is a list entry: its key leaf comes first.
			keyed = true
			k := abs[len(root)-1]
			kname := k.key
			if enc == gnmi.Encoding_JSON_IETF {
				kname = moduleOf(abs, len(root)-1) + ":" + kname
			}
			o.member(kname).raw = strconv.AppendQuote(nil, k.val)
		}
		for i := len(root); i < len(abs); i++ {
			e := abs[i]
			m := o.member(name(abs, i))
			switch {
			case i == len(abs)-1:
				m.raw = jsonScalar(nil, enc, dp.kinds[idx], vals[idx], dp.labels[idx])
			case e.key != "":
				if m.byKey == nil {
					m.byKey = map[string]*jsonObj{}
				}
				entry, ok := m.byKey[e.val]
				if !ok {
					entry = &jsonObj{}
					entry.member(e.key).raw = strconv.AppendQuote(nil, e.val)
					m.byKey[e.val] = entry
					m.entries = append(m.entries, entry)
				}
				o = entry
			default:
				if m.obj == nil {
					m.obj = &jsonObj{}
				}
				o = m.obj
			}
		}
	}
	return wrap(top.appendTo(nil))
}
