package telemetry

import (
	"bytes"
	"context"
	"errors"
	"sync"

	"github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Decoding every notification into gnmi.SubscribeResponse structs (a
// dozen allocations per leaf for its path elements and key maps) was most
// of the collector's CPU time. So the collector's Subscribe calls use
// rawCodec: a response's bytes are kept, undecoded, as the unknown fields
// of the *gnmi.SubscribeResponse that gnmic hands over, and the collector
// decodes them straight into Samples. Anything the fast decoder does not
// handle is decoded normally with proto.Unmarshal.

// rawCodec keeps SubscribeResponse bytes as unknown fields; everything else
// goes through the standard proto codec.
type rawCodec struct{ encoding.Codec }

func (c rawCodec) Unmarshal(data []byte, v any) error {
	if m, ok := v.(*gnmi.SubscribeResponse); ok {
		// gRPC reuses data after Unmarshal returns.
		m.ProtoReflect().SetUnknown(protoreflect.RawFields(bytes.Clone(data)))
		return nil
	}
	return c.Codec.Unmarshal(data, v)
}

// clientHook wraps a target's gNMI client: Subscribe uses rawCodec and
// reports (started) that gnmic's subscribe goroutine has passed its initial
// context check (see Collector.runTarget).
type clientHook struct {
	gnmi.GNMIClient
	once    sync.Once
	started chan struct{}
}

func (h *clientHook) Subscribe(ctx context.Context, opts ...grpc.CallOption) (gnmi.GNMI_SubscribeClient, error) {
	h.once.Do(func() { close(h.started) })
	opts = append(opts, grpc.ForceCodec(rawCodec{encoding.GetCodec("proto")}))
	return h.GNMIClient.Subscribe(ctx, opts...)
}

// Field numbers from gnmi.proto, for decoding.
const (
	fieldSubscribeResponseSync = 3
	fieldPathElem              = 3
	fieldPathTarget            = 4
	fieldPathElemName          = 1
	fieldPathElemKey           = 2
	fieldMapKey                = 1
	fieldMapValue              = 2
	fieldTypedValueInt         = 2
)

var errFallback = errors.New("not handled by the fast decoder")

// rawElem is a decoded path element; its keys are rawKVs in the
// converter's scratch.
type rawElem struct {
	name       []byte
	kv0, nkeys int
}

type rawKV struct{ k, v []byte }

// response is what the collector learns from one SubscribeResponse.
type response struct {
	update  bool
	sync    bool
	unknown int64
}

// decodeResponse converts a response received through rawCodec (or
// decoded normally) and appends its samples to dst.
func (cv *converter) decodeResponse(dst []Sample, resp *gnmi.SubscribeResponse) ([]Sample, response, error) {
	if resp.GetResponse() == nil {
		raw := resp.ProtoReflect().GetUnknown()
		out, r, err := cv.decodeRaw(dst, raw)
		if err == nil {
			return out, r, nil
		}
		resp = new(gnmi.SubscribeResponse)
		if err := proto.Unmarshal(raw, resp); err != nil {
			return dst, response{}, err
		}
	}
	switch r := resp.GetResponse().(type) {
	case *gnmi.SubscribeResponse_Update:
		out, unknown := cv.convert(dst, r.Update)
		return out, response{update: true, unknown: unknown}, nil
	case *gnmi.SubscribeResponse_SyncResponse:
		return dst, response{sync: r.SyncResponse}, nil
	}
	return dst, response{}, nil
}

// decodeRaw decodes a SubscribeResponse in wire format. It returns
// errFallback (or a parse error) for anything but a notification or a
// sync_response.
func (cv *converter) decodeRaw(dst []Sample, b []byte) ([]Sample, response, error) {
	var r response
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return dst, r, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == fieldSubscribeResponseUpdate && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return dst, r, protowire.ParseError(n)
			}
			b = b[n:]
			var err error
			if dst, r.unknown, err = cv.decodeNotification(dst, v); err != nil {
				return dst, r, err
			}
			r.update = true
		case num == fieldSubscribeResponseSync && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return dst, r, protowire.ParseError(n)
			}
			b = b[n:]
			r.sync = v != 0
		default:
			return dst, r, errFallback
		}
	}
	return dst, r, nil
}

// fields calls f for each field of message b.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

func (cv *converter) decodeNotification(dst []Sample, b []byte) ([]Sample, int64, error) {
	var ts int64
	var prefix []byte
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == fieldNotificationTimestamp && typ == protowire.VarintType:
			ts = int64(x)
		case num == fieldNotificationPrefix && typ == protowire.BytesType:
			prefix = v
		}
		return nil
	})
	if err != nil {
		return dst, 0, err
	}
	cv.relems, cv.rkv = cv.relems[:0], cv.rkv[:0]
	target, err := cv.decodePath(prefix)
	if err != nil {
		return dst, 0, err
	}
	tgt := cv.spec
	if len(target) > 0 && string(target) != cv.spec {
		tgt = string(target)
	}
	npfx, nkv := len(cv.relems), len(cv.rkv)
	var unknown int64
	err = fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != fieldNotificationUpdate || typ != protowire.BytesType {
			return nil
		}
		var path, val []byte
		if err := fields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
			switch {
			case num == fieldUpdatePath && typ == protowire.BytesType:
				path = v
			case num == fieldUpdateVal && typ == protowire.BytesType:
				val = v
			}
			return nil
		}); err != nil {
			return err
		}
		cv.relems, cv.rkv = cv.relems[:npfx], cv.rkv[:nkv]
		_, err := cv.decodePath(path)
		if err != nil {
			return err
		}
		value, isInt, err := decodeIntValue(val)
		if err != nil {
			return err
		}
		s, ok := cv.rawLeaf()
		if !ok || !isInt {
			unknown++
			return nil
		}
		s.Time, s.Run, s.Target, s.Value = ts, cv.run, tgt, value
		dst = append(dst, s)
		return nil
	})
	return dst, unknown, err
}

// decodePath appends the elements of an encoded Path to cv.relems and
// returns its target. Like the generated code's users, it ignores the
// deprecated element field.
func (cv *converter) decodePath(b []byte) (target []byte, err error) {
	err = fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case fieldPathTarget:
			target = v
		case fieldPathElem:
			e := rawElem{kv0: len(cv.rkv)}
			err := fields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				if typ != protowire.BytesType {
					return nil
				}
				switch num {
				case fieldPathElemName:
					e.name = v
				case fieldPathElemKey:
					var kv rawKV
					if err := fields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
						switch {
						case num == fieldMapKey && typ == protowire.BytesType:
							kv.k = v
						case num == fieldMapValue && typ == protowire.BytesType:
							kv.v = v
						}
						return nil
					}); err != nil {
						return err
					}
					// A repeated map key replaces the earlier entry.
					for i := e.kv0; i < len(cv.rkv); i++ {
						if bytes.Equal(cv.rkv[i].k, kv.k) {
							cv.rkv[i] = kv
							return nil
						}
					}
					cv.rkv = append(cv.rkv, kv)
					e.nkeys++
				}
				return nil
			})
			if err != nil {
				return err
			}
			cv.relems = append(cv.relems, e)
		}
		return nil
	})
	return target, err
}

// decodeIntValue decodes a TypedValue holding int_val or uint_val. isInt is
// false for any other value (the last oneof field present wins).
func decodeIntValue(b []byte) (v int64, isInt bool, err error) {
	err = fields(b, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
		switch {
		case (num == fieldTypedValueInt || num == fieldTypedValueUint) && typ == protowire.VarintType:
			v, isInt = int64(x), true
		default:
			isInt = false
		}
		return nil
	})
	return v, isInt, err
}

// rawKey returns the value of key k of element e.
func (cv *converter) rawKey(e *rawElem, k string) ([]byte, bool) {
	for _, kv := range cv.rkv[e.kv0 : e.kv0+e.nkeys] {
		if string(kv.k) == k {
			return kv.v, true
		}
	}
	return nil, false
}

// rawLeaf classifies cv.relems like parseLeaf and fills the sample's
// measurement, interface, queue and field.
func (cv *converter) rawLeaf() (s Sample, ok bool) {
	el := cv.relems
	is := func(i int, name string) bool { return string(el[i].name) == name }
	switch {
	case len(el) == 5 && is(0, elemInterfaces) && is(1, elemInterface) && is(2, elemState) && is(3, elemCounters):
		iface, ok := cv.rawKey(&el[1], keyName)
		if !ok {
			return s, false
		}
		return Sample{Measurement: MeasInterface, Interface: cv.internBytes(iface), Field: internFieldBytes(el[4].name)}, true
	case len(el) == 8 && is(0, elemQoS) && is(1, elemInterfaces) && is(2, elemInterface) && is(3, elemOutput) &&
		is(4, elemQueues) && is(5, elemQueue) && is(6, elemState):
		iface, ok1 := cv.rawKey(&el[2], keyInterfaceID)
		queue, ok2 := cv.rawKey(&el[5], keyName)
		if !ok1 || !ok2 {
			return s, false
		}
		return Sample{Measurement: MeasQueue, Interface: cv.internBytes(iface), Queue: cv.internBytes(queue),
			Field: internFieldBytes(el[7].name)}, true
	}
	return s, false
}

func (cv *converter) internBytes(b []byte) string {
	if v, ok := cv.ifaces[string(b)]; ok {
		return v
	}
	return cv.intern(string(b))
}

func internFieldBytes(b []byte) string {
	for _, c := range InterfaceFields {
		if string(b) == c {
			return c
		}
	}
	for _, c := range QueueFields {
		if string(b) == c {
			return c
		}
	}
	return string(b)
}
