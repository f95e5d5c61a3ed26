// Package telemetry carries counter samples from gNMI targets to sinks.
//
// The target side (Server) serves devices as gNMI targets that stream SAMPLE
// subscriptions; the collector subscribes to them with
// github.com/openconfig/gnmic/pkg/api and hands every received value, as a
// Sample, to one or more Sinks: the embedded store in the run directory and,
// optionally, InfluxDB.
package telemetry

// Measurements: every leaf path belongs to one of them.
const (
	// MeasInterface holds /interfaces/interface/state/counters/* leaves,
	// keyed by interface name.
	MeasInterface = "interface"
	// MeasQueue holds /qos/interfaces/interface/output/queues/queue/state/*
	// leaves, keyed by interface and queue name.
	MeasQueue = "queue"
)

// Interface counter fields (leaf names under .../state/counters).
const (
	FieldInOctets    = "in-octets"
	FieldOutOctets   = "out-octets"
	FieldInPkts      = "in-pkts"
	FieldOutPkts     = "out-pkts"
	FieldOutDiscards = "out-discards"
	// Inbound packets dropped without an error (no buffer, a full ring),
	// and packets with errors in and out: the counters dashboards alert on.
	// The simulator drops at egress only, so its in-discards and errors
	// are 0; the kernel exporter serves rx_dropped, rx_errors, tx_errors.
	FieldInDiscards = "in-discards"
	FieldInErrors   = "in-errors"
	FieldOutErrors  = "out-errors"
)

// Interface state leaves (under /interfaces/interface/state), published
// as status codes (OperUp...) and served as the OpenConfig enumerations.
const (
	FieldOperStatus  = "oper-status"
	FieldAdminStatus = "admin-status"
)

// Interface status codes: the values a publisher gives the oper-status
// and admin-status leaves (ValueIndex with MeasInterface and
// FieldOperStatus or FieldAdminStatus). They are served as the OpenConfig
// enumerations UP, DOWN, TESTING, UNKNOWN, DORMANT, NOT_PRESENT and
// LOWER_LAYER_DOWN; admin-status takes UP, DOWN and TESTING only (any
// other code is served as DOWN). 0, a value nobody published, is UNKNOWN
// (admin-status: DOWN).
const (
	StatusUnknown        int64 = 0
	StatusUp             int64 = 1
	StatusDown           int64 = 2
	StatusTesting        int64 = 3
	StatusDormant        int64 = 5
	StatusNotPresent     int64 = 6
	StatusLowerLayerDown int64 = 7
)

// Queue fields (leaf names under .../queue/state).
const (
	FieldTransmitOctets = "transmit-octets"
	FieldDroppedPkts    = "dropped-pkts"
	FieldECNMarkedPkts  = "ecn-marked-pkts"
	FieldTrimPkts       = "trim-pkts"
	// FieldMaxQueueLen is the queue's high-water mark in bytes over the last
	// sample interval (a gauge, not a counter).
	FieldMaxQueueLen = "max-queue-len"
	// FieldBackloggedNs counts the nanoseconds the queue held a packet
	// waiting behind the one in transmission (a counter). The port sends
	// back to back all that time, so transmit-octets over an interval
	// divided by its backlogged time bounds the service rate from above:
	// a degraded link shows it even when a load balancer keeps its queue
	// short. Streamed by the simulator; the kernel exporter has no source
	// for it and omits it.
	FieldBackloggedNs = "backlogged-ns"
	// PFC counters of the interface, summed over its priorities (SONiC's
	// per-port SAI_PORT_STAT_PFC_n_{TX,RX}_PKTS and pause durations, in
	// the queue's state): pause frames the port sent (its switch's ingress
	// buffer for a lossless class reached XOFF), pause frames it received,
	// and the nanoseconds its egress was paused (a counter; summed over
	// classes, so two classes paused for 1 us count 2 us). Streamed by the
	// simulator with features.pfc; 0 elsewhere (veth links have no pause
	// frames).
	FieldPFCPauseTx  = "pfc-pause-frames-tx"
	FieldPFCPauseRx  = "pfc-pause-frames-rx"
	FieldPFCPausedNs = "pfc-paused-ns"
	// FieldTransmitPkts counts the packets the queue sent (OpenConfig's
	// transmit-pkts).
	FieldTransmitPkts = "transmit-pkts"
)

// InterfaceFields and QueueFields list the leaves in their canonical order.
var (
	InterfaceFields = []string{FieldInOctets, FieldOutOctets, FieldInPkts, FieldOutPkts, FieldOutDiscards,
		FieldInDiscards, FieldInErrors, FieldOutErrors}
	QueueFields = []string{FieldTransmitOctets, FieldDroppedPkts, FieldECNMarkedPkts, FieldTrimPkts, FieldMaxQueueLen, FieldBackloggedNs,
		FieldPFCPauseTx, FieldPFCPauseRx, FieldPFCPausedNs, FieldTransmitPkts}
	// StatusFields are the published interface state leaves, in order.
	StatusFields = []string{FieldOperStatus, FieldAdminStatus}
)

// Sample is one leaf value received in a gNMI notification.
type Sample struct {
	// Time is the notification timestamp in nanoseconds since the Unix
	// epoch. For the simulator it is the run's epoch plus simulated time.
	Time        int64
	Run         string // run ID; a tag in InfluxDB
	Target      string // gNMI target name = device name
	Measurement string // MeasInterface or MeasQueue
	Interface   string
	Queue       string // "" for interface counters
	Field       string // leaf name, e.g. FieldOutOctets
	Value       int64
}

// Key identifies a time series: one leaf of one interface (or queue) of one
// target.
type Key struct {
	Target, Measurement, Interface, Queue, Field string
}

// Key returns the series the sample belongs to.
func (s *Sample) Key() Key {
	return Key{s.Target, s.Measurement, s.Interface, s.Queue, s.Field}
}
