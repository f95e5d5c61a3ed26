package telemetry

import (
	"fmt"

	"github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/encoding"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The server encodes its notifications directly in protobuf wire format:
// each leaf's path is encoded once per device and a tick only appends the
// values. Generic proto marshalling of the full, keyed paths of every
// update was most of the server's CPU time; the bytes on the wire are the
// same gNMI SubscribeResponse messages.

// Field numbers from gnmi.proto.
const (
	fieldSubscribeResponseUpdate = 1 // SubscribeResponse.update (Notification)
	fieldNotificationTimestamp   = 1
	fieldNotificationPrefix      = 2
	fieldNotificationUpdate      = 4
	fieldUpdatePath              = 1
	fieldUpdateVal               = 3
	fieldTypedValueUint          = 3 // TypedValue.uint_val
)

// wireMsg is a message already in wire format; wireCodec passes it
// through. The server allocates a new one per message: gRPC may write it
// after SendMsg has returned.
type wireMsg struct{ b []byte }

// wireCodec is the server's codec: wireMsg as is, anything else through the
// standard proto codec.
type wireCodec struct{ encoding.Codec }

func (c wireCodec) Marshal(v any) ([]byte, error) {
	if w, ok := v.(*wireMsg); ok {
		return w.b, nil
	}
	return c.Codec.Marshal(v)
}

// encodePrefix returns the encoding of gnmi.Path{Target: target}.
func encodePrefix(target string) ([]byte, error) {
	b, err := proto.Marshal(&gnmi.Path{Target: target})
	if err != nil {
		return nil, fmt.Errorf("telemetry: encoding prefix of %q: %w", target, err)
	}
	return b, nil
}

// encodeNotification encodes a SubscribeResponse holding one Notification
// with timestamp ts, the encoded prefix, and one update per path whose
// value is TypedValue{uint_val: uint64(vals[i])}. If incl is not nil, only
// the paths with incl[i] set are included.
func encodeNotification(ts int64, prefix []byte, paths [][]byte, vals []int64, incl []bool) *wireMsg {
	tvSize := func(v int64) int {
		return protowire.SizeTag(fieldTypedValueUint) + protowire.SizeVarint(uint64(v))
	}
	updSize := func(i int) int {
		return protowire.SizeTag(fieldUpdatePath) + protowire.SizeBytes(len(paths[i])) +
			protowire.SizeTag(fieldUpdateVal) + protowire.SizeBytes(tvSize(vals[i]))
	}
	n := protowire.SizeTag(fieldNotificationTimestamp) + protowire.SizeVarint(uint64(ts)) +
		protowire.SizeTag(fieldNotificationPrefix) + protowire.SizeBytes(len(prefix))
	for i := range paths {
		if incl == nil || incl[i] {
			n += protowire.SizeTag(fieldNotificationUpdate) + protowire.SizeBytes(updSize(i))
		}
	}
	b := make([]byte, 0, protowire.SizeTag(fieldSubscribeResponseUpdate)+protowire.SizeBytes(n))
	b = protowire.AppendTag(b, fieldSubscribeResponseUpdate, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	b = protowire.AppendTag(b, fieldNotificationTimestamp, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(ts))
	b = protowire.AppendTag(b, fieldNotificationPrefix, protowire.BytesType)
	b = protowire.AppendBytes(b, prefix)
	for i, p := range paths {
		if incl != nil && !incl[i] {
			continue
		}
		v := uint64(vals[i])
		b = protowire.AppendTag(b, fieldNotificationUpdate, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(updSize(i)))
		b = protowire.AppendTag(b, fieldUpdatePath, protowire.BytesType)
		b = protowire.AppendBytes(b, p)
		b = protowire.AppendTag(b, fieldUpdateVal, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(tvSize(vals[i])))
		b = protowire.AppendTag(b, fieldTypedValueUint, protowire.VarintType)
		b = protowire.AppendVarint(b, v)
	}
	return &wireMsg{b: b}
}

// leafSet describes the leaves of one device in a notification: their
// encoded paths, kinds (nil: every leaf a counter) and labels (the
// interface name of kindName leaves; nil when there are none).
type leafSet struct {
	paths  [][]byte
	kinds  []leafKind
	labels []string
}

// encodeNotificationAs is encodeNotification for leaves of any kind in
// any supported encoding; counters in PROTO take encodeNotification's
// path. It returns nil when incl includes no leaf.
func encodeNotificationAs(ts int64, prefix []byte, ls *leafSet, vals []int64, incl []bool, enc gnmi.Encoding) *wireMsg {
	if incl != nil {
		any := false
		for _, in := range incl {
			any = any || in
		}
		if !any {
			return nil
		}
	}
	if ls.kinds == nil && enc == gnmi.Encoding_PROTO {
		return encodeNotification(ts, prefix, ls.paths, vals, incl)
	}
	var body, tv, scratch []byte
	body = protowire.AppendTag(body, fieldNotificationTimestamp, protowire.VarintType)
	body = protowire.AppendVarint(body, uint64(ts))
	body = protowire.AppendTag(body, fieldNotificationPrefix, protowire.BytesType)
	body = protowire.AppendBytes(body, prefix)
	for i, p := range ls.paths {
		if incl != nil && !incl[i] {
			continue
		}
		kind, label := kindCounter, ""
		if ls.kinds != nil {
			kind = ls.kinds[i]
		}
		if ls.labels != nil {
			label = ls.labels[i]
		}
		tv, scratch = appendTypedValue(tv[:0], enc, kind, vals[i], label, scratch)
		n := protowire.SizeTag(fieldUpdatePath) + protowire.SizeBytes(len(p)) +
			protowire.SizeTag(fieldUpdateVal) + protowire.SizeBytes(len(tv))
		body = protowire.AppendTag(body, fieldNotificationUpdate, protowire.BytesType)
		body = protowire.AppendVarint(body, uint64(n))
		body = protowire.AppendTag(body, fieldUpdatePath, protowire.BytesType)
		body = protowire.AppendBytes(body, p)
		body = protowire.AppendTag(body, fieldUpdateVal, protowire.BytesType)
		body = protowire.AppendBytes(body, tv)
	}
	b := make([]byte, 0, protowire.SizeTag(fieldSubscribeResponseUpdate)+protowire.SizeBytes(len(body)))
	b = protowire.AppendTag(b, fieldSubscribeResponseUpdate, protowire.BytesType)
	b = protowire.AppendBytes(b, body)
	return &wireMsg{b: b}
}
