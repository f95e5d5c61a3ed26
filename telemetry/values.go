package telemetry

import (
	"strconv"

	"github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/encoding/protowire"
)

// How leaf values are served. A value is kept as an int64 (a counter, a
// status code, a rate in bit/s) and typed when it is encoded:
//
//   - PROTO: the scalar TypedValue field (uint_val for counters,
//     string_val for enumerations and identities, which carry no module
//     prefix, as ygot encodes them);
//   - JSON: json_val with the RFC 7159 value (a number for counters, a
//     string for the others);
//   - JSON_IETF: json_ietf_val with the RFC 7951 value: 64-bit integers
//     are strings ("123"), identities are module-qualified
//     ("openconfig-if-ethernet:SPEED_100GB").

// operStatusNames are OpenConfig's oper-status enumeration by status code.
var operStatusNames = map[int64]string{
	StatusUp: "UP", StatusDown: "DOWN", StatusTesting: "TESTING", StatusUnknown: "UNKNOWN",
	StatusDormant: "DORMANT", StatusNotPresent: "NOT_PRESENT", StatusLowerLayerDown: "LOWER_LAYER_DOWN",
}

// OperStatusName returns the oper-status enumeration of a status code
// (UNKNOWN for a code that is none).
func OperStatusName(code int64) string {
	if n, ok := operStatusNames[code]; ok {
		return n
	}
	return "UNKNOWN"
}

// AdminStatusName returns the admin-status enumeration of a status code:
// UP, TESTING, or DOWN for every other code.
func AdminStatusName(code int64) string {
	switch code {
	case StatusUp:
		return "UP"
	case StatusTesting:
		return "TESTING"
	}
	return "DOWN"
}

// ethModule is the module of the port-speed leaf and its identities.
const ethModule = "openconfig-if-ethernet"

// speedIdentities are the ETHERNET_SPEED identities of
// openconfig-if-ethernet by rate.
var speedIdentities = map[int64]string{
	10e6: "SPEED_10MB", 100e6: "SPEED_100MB", 1e9: "SPEED_1GB", 2500e6: "SPEED_2500MB", 5e9: "SPEED_5GB",
	10e9: "SPEED_10GB", 25e9: "SPEED_25GB", 40e9: "SPEED_40GB", 50e9: "SPEED_50GB", 100e9: "SPEED_100GB",
	200e9: "SPEED_200GB", 400e9: "SPEED_400GB", 600e9: "SPEED_600GB", 800e9: "SPEED_800GB",
}

// SpeedIdentity returns the port-speed identity of a line rate in bit/s:
// the standard Ethernet rate's (SPEED_100GB), SPEED_UNKNOWN for 0 or any
// other rate (a lab link shaped to 200 Mbit/s has no identity).
func SpeedIdentity(bps int64) string {
	if id, ok := speedIdentities[bps]; ok {
		return id
	}
	return "SPEED_UNKNOWN"
}

// leafString is the string value of a non-counter leaf (label: the
// interface name, for kindName).
func leafString(kind leafKind, v int64, label string) string {
	switch kind {
	case kindOper:
		return OperStatusName(v)
	case kindAdmin:
		return AdminStatusName(v)
	case kindName:
		return label
	case kindSpeed:
		return SpeedIdentity(v)
	}
	return strconv.FormatUint(uint64(v), 10)
}

// jsonScalar is the JSON (enc JSON) or RFC 7951 (enc JSON_IETF) value of a
// leaf.
func jsonScalar(dst []byte, enc gnmi.Encoding, kind leafKind, v int64, label string) []byte {
	if kind == kindCounter {
		if enc == gnmi.Encoding_JSON_IETF {
			dst = append(dst, '"')
			dst = strconv.AppendUint(dst, uint64(v), 10)
			return append(dst, '"')
		}
		return strconv.AppendUint(dst, uint64(v), 10)
	}
	s := leafString(kind, v, label)
	if kind == kindSpeed && enc == gnmi.Encoding_JSON_IETF {
		s = ethModule + ":" + s
	}
	return strconv.AppendQuote(dst, s)
}

// TypedValue field numbers (gnmi.proto).
const (
	fieldTypedValueString   = 1
	fieldTypedValueJSON     = 10
	fieldTypedValueJSONIETF = 11
)

// appendTypedValue appends the encoding of the leaf's TypedValue message
// (without a tag or length) to dst.
func appendTypedValue(dst []byte, enc gnmi.Encoding, kind leafKind, v int64, label string, scratch []byte) ([]byte, []byte) {
	switch enc {
	case gnmi.Encoding_JSON, gnmi.Encoding_JSON_IETF:
		scratch = jsonScalar(scratch[:0], enc, kind, v, label)
		field := protowire.Number(fieldTypedValueJSON)
		if enc == gnmi.Encoding_JSON_IETF {
			field = fieldTypedValueJSONIETF
		}
		dst = protowire.AppendTag(dst, field, protowire.BytesType)
		return protowire.AppendBytes(dst, scratch), scratch
	}
	if kind == kindCounter {
		dst = protowire.AppendTag(dst, fieldTypedValueUint, protowire.VarintType)
		return protowire.AppendVarint(dst, uint64(v)), scratch
	}
	dst = protowire.AppendTag(dst, fieldTypedValueString, protowire.BytesType)
	return protowire.AppendString(dst, leafString(kind, v, label)), scratch
}

// typedValue is the leaf's TypedValue as a message (Get).
func typedValue(enc gnmi.Encoding, kind leafKind, v int64, label string) *gnmi.TypedValue {
	switch enc {
	case gnmi.Encoding_JSON:
		return &gnmi.TypedValue{Value: &gnmi.TypedValue_JsonVal{JsonVal: jsonScalar(nil, enc, kind, v, label)}}
	case gnmi.Encoding_JSON_IETF:
		return &gnmi.TypedValue{Value: &gnmi.TypedValue_JsonIetfVal{JsonIetfVal: jsonScalar(nil, enc, kind, v, label)}}
	}
	if kind == kindCounter {
		return &gnmi.TypedValue{Value: &gnmi.TypedValue_UintVal{UintVal: uint64(v)}}
	}
	return &gnmi.TypedValue{Value: &gnmi.TypedValue_StringVal{StringVal: leafString(kind, v, label)}}
}
