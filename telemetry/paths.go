package telemetry

import (
	"sort"
	"strings"

	"github.com/openconfig/gnmi/proto/gnmi"
)

// Device is one gNMI target served by a Server: a switch or a host NIC.
//
// Every device serves, for each interface X, the leaves
//
//	/interfaces/interface[name=X]/state/counters/{in-octets,out-octets,in-pkts,out-pkts,out-discards,
//	    in-discards,in-errors,out-errors}
//	/interfaces/interface[name=X]/state/{oper-status,admin-status}
//	/interfaces/interface[name=X]/state/name
//	/interfaces/interface[name=X]/ethernet/state/port-speed
//
// and, if Queues is set, the leaves
//
//	/qos/interfaces/interface[interface-id=X]/output/queues/queue[name=data]/state/{transmit-octets,dropped-pkts,
//	    ecn-marked-pkts,trim-pkts,max-queue-len,backlogged-ns,pfc-pause-frames-tx,pfc-pause-frames-rx,
//	    pfc-paused-ns,transmit-pkts}
//
// Publish takes the values of a device in canonical order: for each
// interface in order, the InterfaceFields in their order, then, if Queues,
// the QueueFields in their order; after every interface's counters, for
// each interface the StatusFields (oper-status, admin-status, as status
// codes StatusUp...). ValuesPerDevice and ValueIndex describe that layout.
// The name and port-speed leaves are static: the server serves them from
// Interfaces and Speeds.
type Device struct {
	Name       string
	Interfaces []string
	Queues     bool
	// Speeds optionally gives each interface's line rate in bit/s (same
	// order as Interfaces; missing or 0: unknown), served as port-speed:
	// the OpenConfig identity of a standard Ethernet rate (SPEED_100GB),
	// SPEED_UNKNOWN for any other rate.
	Speeds []int64
}

// QueueName is the name of the one (data) queue of every interface.
const QueueName = "data"

// Path element names and keys of the served schema.
const (
	elemInterfaces = "interfaces"
	elemInterface  = "interface"
	elemState      = "state"
	elemCounters   = "counters"
	elemEthernet   = "ethernet"
	elemQoS        = "qos"
	elemOutput     = "output"
	elemQueues     = "queues"
	elemQueue      = "queue"
	keyName        = "name"
	keyInterfaceID = "interface-id"
	leafName       = "name"
	leafPortSpeed  = "port-speed"
	originOC       = "openconfig"
)

// leafKind is how a leaf's value is typed and encoded.
type leafKind uint8

const (
	kindCounter leafKind = iota // counter64 (or a gauge): uint_val
	kindOper                    // oper-status enumeration: string_val
	kindAdmin                   // admin-status enumeration: string_val
	kindName                    // the interface name (static): string_val
	kindSpeed                   // port-speed identity from bit/s (static): string_val
)

// onChange reports whether a TARGET_DEFINED subscription streams the leaf
// on change (state and static leaves) rather than sampling it (counters).
func (k leafKind) onChange() bool { return k != kindCounter }

// stride is the number of counter values per interface.
func stride(d *Device) int {
	if d.Queues {
		return len(InterfaceFields) + len(QueueFields)
	}
	return len(InterfaceFields)
}

// counterValues is the number of counter values of d (the first part of
// its published values).
func counterValues(d *Device) int { return len(d.Interfaces) * stride(d) }

// staticPerInterface is the number of static leaves per interface (name,
// port-speed).
const staticPerInterface = 2

// ValuesPerDevice returns the number of values d publishes per tick, i.e.
// the length Publish expects for the device's slice.
func ValuesPerDevice(d Device) int {
	return counterValues(&d) + len(d.Interfaces)*len(StatusFields)
}

// leavesPerDevice is the number of leaves d serves: its published values,
// then the static leaves.
func leavesPerDevice(d *Device) int {
	return ValuesPerDevice(*d) + len(d.Interfaces)*staticPerInterface
}

// ValueIndex returns the position of (interface number iface, measurement,
// field) in d's canonical value order, or -1 if d has no such leaf.
// measurement is MeasInterface (with one of InterfaceFields or
// StatusFields) or MeasQueue (with one of QueueFields).
func ValueIndex(d Device, iface int, measurement, field string) int {
	if iface < 0 || iface >= len(d.Interfaces) {
		return -1
	}
	base := iface * stride(&d)
	switch measurement {
	case MeasInterface:
		if i := indexOf(InterfaceFields, field); i >= 0 {
			return base + i
		}
		if i := indexOf(StatusFields, field); i >= 0 {
			return counterValues(&d) + iface*len(StatusFields) + i
		}
	case MeasQueue:
		if !d.Queues {
			return -1
		}
		if i := indexOf(QueueFields, field); i >= 0 {
			return base + len(InterfaceFields) + i
		}
	}
	return -1
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// schemaElem is one element of a served leaf path; every keyed element of
// the schema has exactly one key.
type schemaElem struct {
	name, key, val string
}

// leafKindOf returns the kind of leaf idx of d and its interface number.
func leafKindOf(d *Device, idx int) (leafKind, int) {
	nc, np := counterValues(d), ValuesPerDevice(*d)
	switch {
	case idx < nc:
		return kindCounter, idx / stride(d)
	case idx < np:
		off := idx - nc
		if off%len(StatusFields) == 0 {
			return kindOper, off / len(StatusFields)
		}
		return kindAdmin, off / len(StatusFields)
	default:
		off := idx - np
		if off%staticPerInterface == 0 {
			return kindName, off / staticPerInterface
		}
		return kindSpeed, off / staticPerInterface
	}
}

// leafElems returns the path of leaf number idx of d (canonical order,
// then the static leaves). It appends to dst to avoid allocations in
// loops.
func leafElems(dst []schemaElem, d *Device, idx int) []schemaElem {
	kind, i := leafKindOf(d, idx)
	iface := d.Interfaces[i]
	ifElems := func(rest ...schemaElem) []schemaElem {
		dst = append(dst, schemaElem{name: elemInterfaces}, schemaElem{name: elemInterface, key: keyName, val: iface})
		return append(dst, rest...)
	}
	switch kind {
	case kindOper:
		return ifElems(schemaElem{name: elemState}, schemaElem{name: FieldOperStatus})
	case kindAdmin:
		return ifElems(schemaElem{name: elemState}, schemaElem{name: FieldAdminStatus})
	case kindName:
		return ifElems(schemaElem{name: elemState}, schemaElem{name: leafName})
	case kindSpeed:
		return ifElems(schemaElem{name: elemEthernet}, schemaElem{name: elemState}, schemaElem{name: leafPortSpeed})
	}
	off := idx % stride(d)
	if off < len(InterfaceFields) {
		return ifElems(schemaElem{name: elemState}, schemaElem{name: elemCounters}, schemaElem{name: InterfaceFields[off]})
	}
	return append(dst,
		schemaElem{name: elemQoS},
		schemaElem{name: elemInterfaces},
		schemaElem{name: elemInterface, key: keyInterfaceID, val: iface},
		schemaElem{name: elemOutput},
		schemaElem{name: elemQueues},
		schemaElem{name: elemQueue, key: keyName, val: QueueName},
		schemaElem{name: elemState},
		schemaElem{name: QueueFields[off-len(InterfaceFields)]},
	)
}

// gnmiLeafPaths builds the gNMI paths of all of d's leaves (published,
// then static), in canonical order. Elements that do not depend on the
// leaf are shared between the returned paths, which must therefore be
// treated as read-only.
func gnmiLeafPaths(d *Device) []*gnmi.Path {
	n := leavesPerDevice(d)
	out := make([]*gnmi.Path, 0, n)
	shared := map[string]*gnmi.PathElem{}
	elem := func(e schemaElem) *gnmi.PathElem {
		k := e.name + "\x00" + e.key + "\x00" + e.val
		pe, ok := shared[k]
		if !ok {
			pe = &gnmi.PathElem{Name: e.name}
			if e.key != "" {
				pe.Key = map[string]string{e.key: e.val}
			}
			shared[k] = pe
		}
		return pe
	}
	var buf []schemaElem
	for i := 0; i < n; i++ {
		buf = leafElems(buf[:0], d, i)
		p := &gnmi.Path{Elem: make([]*gnmi.PathElem, len(buf))}
		for j, e := range buf {
			p.Elem[j] = elem(e)
		}
		out = append(out, p)
	}
	return out
}

// originOK reports whether a path origin names the served (OpenConfig)
// schema.
func originOK(origin string) bool { return origin == "" || origin == originOC }

// matchLeaves returns the indices of d's leaves (published and static)
// that pattern matches, in increasing order. A pattern element matches a leaf element
// if the names are equal (or the pattern's is "*"), and each key the pattern
// gives is the leaf's key with an equal value (or "*"). "..." matches any
// number of elements. A pattern shorter than a leaf matches the subtree.
func matchLeaves(d *Device, pattern []*gnmi.PathElem) []int {
	var out []int
	var buf []schemaElem
	for i, n := 0, leavesPerDevice(d); i < n; i++ {
		buf = leafElems(buf[:0], d, i)
		if matchElems(pattern, buf) {
			out = append(out, i)
		}
	}
	return out
}

// anyKey, as a leaf's key value, matches any key value of a pattern.
const anyKey = "\x00*"

// schemaDevice has every leaf of the schema, with keys that match anything.
var schemaDevice = Device{Interfaces: []string{anyKey}, Queues: true}

// inSchema reports whether pattern matches any leaf a device could serve.
func inSchema(pattern []*gnmi.PathElem) bool {
	return len(matchLeaves(&schemaDevice, pattern)) > 0
}

func matchElems(pattern []*gnmi.PathElem, leaf []schemaElem) bool {
	for i, pe := range pattern {
		if pe.GetName() == "..." {
			for j := i; j <= len(leaf); j++ {
				if matchElems(pattern[i+1:], leaf[j:]) {
					return true
				}
			}
			return false
		}
		if i >= len(leaf) {
			return false
		}
		le := &leaf[i]
		if pe.GetName() != "*" && pe.GetName() != le.name {
			return false
		}
		for k, v := range pe.GetKey() {
			if k != le.key || (v != "*" && v != le.val && le.val != anyKey) {
				return false
			}
		}
	}
	return true
}

// pathString formats origin and elems as an XPath-like string for messages,
// e.g. "/interfaces/interface[name=eth0]/state".
func pathString(origin string, elems []*gnmi.PathElem) string {
	var sb strings.Builder
	if origin != "" {
		sb.WriteString(origin)
		sb.WriteByte(':')
	}
	if len(elems) == 0 {
		sb.WriteByte('/')
	}
	for _, e := range elems {
		sb.WriteByte('/')
		sb.WriteString(e.GetName())
		keys := make([]string, 0, len(e.GetKey()))
		for k := range e.GetKey() {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sb.WriteByte('[')
			sb.WriteString(k)
			sb.WriteByte('=')
			sb.WriteString(e.GetKey()[k])
			sb.WriteByte(']')
		}
	}
	return sb.String()
}

// parseLeaf classifies a received leaf path (prefix and update elements
// concatenated). ok is false for paths outside the served schema.
func parseLeaf(elems []*gnmi.PathElem) (measurement, iface, queue, field string, ok bool) {
	name := func(i int) string { return elems[i].GetName() }
	switch {
	case len(elems) == 5 && name(0) == elemInterfaces && name(1) == elemInterface &&
		name(2) == elemState && name(3) == elemCounters:
		iface, ok = elems[1].GetKey()[keyName]
		return MeasInterface, iface, "", internField(name(4)), ok
	case len(elems) == 8 && name(0) == elemQoS && name(1) == elemInterfaces && name(2) == elemInterface &&
		name(3) == elemOutput && name(4) == elemQueues && name(5) == elemQueue && name(6) == elemState:
		iface, ok1 := elems[2].GetKey()[keyInterfaceID]
		queue, ok2 := elems[5].GetKey()[keyName]
		return MeasQueue, iface, queue, internField(name(7)), ok1 && ok2
	}
	return "", "", "", "", false
}

// internField returns the package constant equal to f, if any, so that
// stored samples share one copy of each field name.
func internField(f string) string {
	for _, c := range InterfaceFields {
		if c == f {
			return c
		}
	}
	for _, c := range QueueFields {
		if c == f {
			return c
		}
	}
	return f
}
