package telemetry

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/proto"
)

// SONiC's gNMI server (sonic-gnmi, the telemetry container) serves the
// switch's Redis databases. Its OpenConfig support is incomplete (no
// queue state on most images), so the SONiC profile reads the native
// COUNTERS_DB instead:
//
//   - the subscription's prefix has origin "sonic-db" and target
//     "COUNTERS_DB"; its paths are COUNTERS/Ethernet* (every port's
//     counters) and COUNTERS/Ethernet*/Queues (every queue's);
//   - the server maps port names to SAI object IDs itself
//     (COUNTERS_PORT_NAME_MAP, COUNTERS_QUEUE_NAME_MAP), so replies are
//     keyed by port name ("Ethernet8") and queue ("Ethernet8:3");
//   - values are JSON (JSON_IETF) objects of SAI counter names to decimal
//     strings, e.g. {"SAI_PORT_STAT_IF_OUT_OCTETS": "123456", ...}, either
//     one port's under a path naming the port, or keyed by port (or
//     queue) under a wildcard path;
//   - the server refuses sample intervals under 1 s (SONiCMinInterval):
//     the collector asks for at least that.

// SONiCMinInterval is the shortest sample interval SONiC's gNMI server
// accepts.
const SONiCMinInterval = time.Second

// SONiC subscription constants.
const (
	sonicOrigin = "sonic-db"
	sonicTarget = "COUNTERS_DB"
)

// SONiCPaths are the COUNTERS_DB paths the SONiC profile subscribes to.
var SONiCPaths = []string{"COUNTERS/Ethernet*", "COUNTERS/Ethernet*/Queues"}

// sonicPortFields maps SAI port counters to interface fields; the packet
// counts add unicast and non-unicast packets.
var sonicPortFields = map[string]string{
	"SAI_PORT_STAT_IF_IN_OCTETS":          FieldInOctets,
	"SAI_PORT_STAT_IF_OUT_OCTETS":         FieldOutOctets,
	"SAI_PORT_STAT_IF_IN_UCAST_PKTS":      FieldInPkts,
	"SAI_PORT_STAT_IF_IN_NON_UCAST_PKTS":  FieldInPkts,
	"SAI_PORT_STAT_IF_OUT_UCAST_PKTS":     FieldOutPkts,
	"SAI_PORT_STAT_IF_OUT_NON_UCAST_PKTS": FieldOutPkts,
	"SAI_PORT_STAT_IF_OUT_DISCARDS":       FieldOutDiscards,
}

// sonicQueueFields maps SAI queue counters to queue fields.
var sonicQueueFields = map[string]string{
	"SAI_QUEUE_STAT_BYTES":                   FieldTransmitOctets,
	"SAI_QUEUE_STAT_DROPPED_PACKETS":         FieldDroppedPkts,
	"SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS": FieldECNMarkedPkts,
}

// sonicSubscribeRequest is the SONiC profile's subscription: STREAM,
// SAMPLE every interval, JSON_IETF values.
func sonicSubscribeRequest(interval time.Duration) *gnmi.SubscribeRequest {
	sl := &gnmi.SubscriptionList{
		Prefix:   &gnmi.Path{Origin: sonicOrigin, Target: sonicTarget},
		Mode:     gnmi.SubscriptionList_STREAM,
		Encoding: gnmi.Encoding_JSON_IETF,
	}
	for _, p := range SONiCPaths {
		var elems []*gnmi.PathElem
		for _, e := range strings.Split(p, "/") {
			elems = append(elems, &gnmi.PathElem{Name: e})
		}
		sl.Subscription = append(sl.Subscription, &gnmi.Subscription{
			Path: &gnmi.Path{Elem: elems}, Mode: gnmi.SubscriptionMode_SAMPLE, SampleInterval: uint64(interval.Nanoseconds()),
		})
	}
	return &gnmi.SubscribeRequest{Request: &gnmi.SubscribeRequest_Subscribe{Subscribe: sl}}
}

// decodeSONiC converts a SONiC COUNTERS_DB response.
func (cv *converter) decodeSONiC(dst []Sample, resp *gnmi.SubscribeResponse) ([]Sample, response, error) {
	if resp.GetResponse() == nil {
		raw := resp.ProtoReflect().GetUnknown()
		resp = new(gnmi.SubscribeResponse)
		if err := proto.Unmarshal(raw, resp); err != nil {
			return dst, response{}, err
		}
	}
	switch r := resp.GetResponse().(type) {
	case *gnmi.SubscribeResponse_SyncResponse:
		return dst, response{sync: r.SyncResponse}, nil
	case *gnmi.SubscribeResponse_Update:
		n := r.Update
		var unknown int64
		for _, u := range n.GetUpdate() {
			elems := append(append([]*gnmi.PathElem(nil), n.GetPrefix().GetElem()...), u.GetPath().GetElem()...)
			var raw []byte
			switch v := u.GetVal().GetValue().(type) {
			case *gnmi.TypedValue_JsonIetfVal:
				raw = v.JsonIetfVal
			case *gnmi.TypedValue_JsonVal:
				raw = v.JsonVal
			default:
				unknown++
				continue
			}
			var obj map[string]any
			if err := json.Unmarshal(raw, &obj); err != nil {
				return dst, response{}, fmt.Errorf("SONiC value at %s: %w", pathString("", elems), err)
			}
			// The name the value belongs to: the last element naming a
			// port (not the Queues suffix or a wildcard).
			name := ""
			for _, e := range elems {
				if e.GetName() != "COUNTERS" && e.GetName() != "Queues" && !strings.Contains(e.GetName(), "*") {
					name = e.GetName()
				}
			}
			var u2 int64
			dst, u2 = cv.sonicObject(dst, n.GetTimestamp(), name, obj)
			unknown += u2
		}
		return dst, response{update: true, unknown: unknown}, nil
	}
	return dst, response{}, nil
}

// sonicObject converts one COUNTERS object: counters of name (a port, or
// a port:queue), or objects keyed by port or queue.
func (cv *converter) sonicObject(dst []Sample, ts int64, name string, obj map[string]any) ([]Sample, int64) {
	var unknown int64
	sums := map[string]int64{}
	for k, v := range obj {
		switch x := v.(type) {
		case map[string]any:
			var u int64
			dst, u = cv.sonicObject(dst, ts, k, x)
			unknown += u
			continue
		case string:
			n, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				unknown++
				continue
			}
			sums[k] = n
		case float64:
			sums[k] = int64(x)
		default:
			unknown++
		}
	}
	if len(sums) == 0 || name == "" {
		unknown += int64(len(sums))
		return dst, unknown
	}
	port, queue, isQueue := strings.Cut(name, ":")
	fields := sonicPortFields
	meas := MeasInterface
	if isQueue {
		fields, meas = sonicQueueFields, MeasQueue
	}
	vals := map[string]int64{}
	for k, n := range sums {
		f, ok := fields[k]
		if !ok {
			continue // other SAI counters are not streamed as samples
		}
		vals[f] += n
	}
	order := InterfaceFields
	if isQueue {
		order = QueueFields
	}
	for _, f := range order {
		v, ok := vals[f]
		if !ok {
			continue
		}
		dst = append(dst, Sample{Time: ts, Run: cv.run, Target: cv.spec, Measurement: meas,
			Interface: cv.intern(port), Queue: cv.intern(queue), Field: f, Value: v})
	}
	return dst, unknown
}
