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
//	/interfaces/interface[name=X]/state/counters/{in-octets,out-octets,in-pkts,out-pkts,out-discards}
//
// and, if Queues is set, the leaves
//
//	/qos/interfaces/interface[interface-id=X]/output/queues/queue[name=data]/state/{transmit-octets,dropped-pkts,ecn-marked-pkts,trim-pkts,max-queue-len,backlogged-ns,
//	    pfc-pause-frames-tx,pfc-pause-frames-rx,pfc-paused-ns}
//
// Publish takes the values of a device in canonical order: for each
// interface in order, the InterfaceFields in their order, then, if Queues,
// the QueueFields in their order. ValuesPerDevice and ValueIndex describe
// that layout.
type Device struct {
	Name       string
	Interfaces []string
	Queues     bool
}

// QueueName is the name of the one (data) queue of every interface.
const QueueName = "data"

// Path element names and keys of the served schema.
const (
	elemInterfaces = "interfaces"
	elemInterface  = "interface"
	elemState      = "state"
	elemCounters   = "counters"
	elemQoS        = "qos"
	elemOutput     = "output"
	elemQueues     = "queues"
	elemQueue      = "queue"
	keyName        = "name"
	keyInterfaceID = "interface-id"
	originOC       = "openconfig"
)

// stride is the number of values per interface.
func stride(d *Device) int {
	if d.Queues {
		return len(InterfaceFields) + len(QueueFields)
	}
	return len(InterfaceFields)
}

// ValuesPerDevice returns the number of values d publishes per tick, i.e.
// the length Publish expects for the device's slice.
func ValuesPerDevice(d Device) int { return len(d.Interfaces) * stride(&d) }

// ValueIndex returns the position of (interface number iface, measurement,
// field) in d's canonical value order, or -1 if d has no such leaf.
// measurement is MeasInterface or MeasQueue; field one of InterfaceFields or
// QueueFields respectively.
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

// leafElems returns the path of value number idx of d (canonical order).
// It appends to dst to avoid allocations in loops.
func leafElems(dst []schemaElem, d *Device, idx int) []schemaElem {
	st := stride(d)
	iface, off := d.Interfaces[idx/st], idx%st
	if off < len(InterfaceFields) {
		return append(dst,
			schemaElem{name: elemInterfaces},
			schemaElem{name: elemInterface, key: keyName, val: iface},
			schemaElem{name: elemState},
			schemaElem{name: elemCounters},
			schemaElem{name: InterfaceFields[off]},
		)
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

// gnmiLeafPaths builds the gNMI paths of all of d's leaves, in canonical
// order. Elements that do not depend on the leaf are shared between the
// returned paths, which must therefore be treated as read-only.
func gnmiLeafPaths(d *Device) []*gnmi.Path {
	n := ValuesPerDevice(*d)
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

// matchLeaves returns the canonical indices of d's leaves that pattern
// matches, in increasing order. A pattern element matches a leaf element
// if the names are equal (or the pattern's is "*"), and each key the pattern
// gives is the leaf's key with an equal value (or "*"). "..." matches any
// number of elements. A pattern shorter than a leaf matches the subtree.
func matchLeaves(d *Device, pattern []*gnmi.PathElem) []int {
	var out []int
	var buf []schemaElem
	for i, n := 0, ValuesPerDevice(*d); i < n; i++ {
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
