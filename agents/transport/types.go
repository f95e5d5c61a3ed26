// Package transport holds the endpoint logic of fabricbench's transport: the
// sender and receiver state machines, congestion control (NSCC/SMaRTT and
// DCTCP) and load balancing (ECMP, OPS, REPS).
//
// It is pure: time and packets go in, decisions come out. There are no
// simulator or socket types here, so the reference simulator and the UDP agent
// drive exactly the same code. Time is an int64 count of picoseconds on any
// monotonic clock the driver chooses.
package transport

import (
	"fmt"
	"math"
	"strings"

	"github.com/fabricbench/fabricbench/units"
)

// Time is a point in time or a duration in picoseconds (units.Ps).
type Time = units.Ps

// Time units.
const (
	Picosecond  Time = 1
	Nanosecond  Time = 1000
	Microsecond Time = 1000 * Nanosecond
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// CCKind selects the congestion control algorithm.
type CCKind uint8

const (
	NSCC  CCKind = iota // SMaRTT / UEC NSCC
	DCTCP               // DCTCP, optionally with QuickAdapt and FastIncrease
)

func (c CCKind) String() string {
	switch c {
	case NSCC:
		return "nscc"
	case DCTCP:
		return "dctcp"
	}
	return fmt.Sprintf("cc(%d)", uint8(c))
}

// ParseCC parses "nscc" or "dctcp".
func ParseCC(s string) (CCKind, error) {
	switch strings.ToLower(s) {
	case "nscc", "smartt":
		return NSCC, nil
	case "dctcp":
		return DCTCP, nil
	}
	return 0, fmt.Errorf("unknown congestion control %q (want nscc or dctcp)", s)
}

// MarshalText writes c's name (JSON: "nscc").
func (c CCKind) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText parses a name as ParseCC does.
func (c *CCKind) UnmarshalText(b []byte) (err error) {
	*c, err = ParseCC(string(b))
	return err
}

// LBKind selects the load balancer (how entropy values are chosen).
type LBKind uint8

const (
	ECMP LBKind = iota // one entropy per flow
	OPS                // oblivious packet spraying: random entropy per packet
	REPS               // recycled entropy packet spraying
	// The path-aware balancers (spritz.go) choose among the paths of a
	// source-guided fabric (Flow.Paths), weighted by latency, or without
	// them among Params.Entropies equal-weight EVs that ECMP hashes
	// (coarse-grained Spritz; in the UDP agent, its source ports).
	OPSWeighted // weighted OPS: a path per packet, by weight
	Scout       // Spritz-Scout: reuse good paths until negative feedback
	Spray       // Spritz-Spray: recycle each good path once per good ACK
	Flicr       // Flicr: a path per flowcell, changed after congestion
	// OWD keeps each flow on one path, chosen by one-way queuing delay
	// probes (owd.go): the entropy's MSB selects shortest (0) or
	// non-shortest (1) routing, the other 15 bits which path.
	OWD
)

// LBNames lists the load balancers' names, for help texts and errors.
const LBNames = "ecmp, ops, reps, ops-w, spritz-scout, spritz-spray, flicr or owd"

func (l LBKind) String() string {
	switch l {
	case ECMP:
		return "ecmp"
	case OPS:
		return "ops"
	case REPS:
		return "reps"
	case OPSWeighted:
		return "ops-w"
	case Scout:
		return "spritz-scout"
	case Spray:
		return "spritz-spray"
	case Flicr:
		return "flicr"
	case OWD:
		return "owd"
	}
	return fmt.Sprintf("lb(%d)", uint8(l))
}

// ParseLB parses a load balancer's name (LBNames).
func ParseLB(s string) (LBKind, error) {
	switch strings.ToLower(s) {
	case "ecmp":
		return ECMP, nil
	case "ops", "oblivious", "spray":
		return OPS, nil
	case "reps":
		return REPS, nil
	case "ops-w", "weighted-ops", "ops-weighted":
		return OPSWeighted, nil
	case "spritz-scout", "scout":
		return Scout, nil
	case "spritz-spray", "spritz":
		return Spray, nil
	case "flicr":
		return Flicr, nil
	case "owd", "telemetry":
		return OWD, nil
	}
	return 0, fmt.Errorf("unknown load balancer %q (want %s)", s, LBNames)
}

// MarshalText writes l's name (JSON: "reps").
func (l LBKind) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText parses a name as ParseLB does.
func (l *LBKind) UnmarshalText(b []byte) (err error) {
	*l, err = ParseLB(string(b))
	return err
}

// Data is the transport header of a data packet.
type Data struct {
	Flow    uint32
	PSN     uint32 // packet sequence number, 0-based
	Payload int32  // payload bytes
	Entropy uint16 // entropy value: the path selector hashed by ECMP switches
	SentAt  Time   // sender timestamp, echoed in the ACK
	Retx    bool   // a retransmission
	// AckReq asks a coalescing receiver to acknowledge at once (the AR
	// flag of UEC and htsim): the sender sets it on the last new packet,
	// on every retransmission and on a packet that fills its window.
	// Receivers that acknowledge every packet ignore it.
	AckReq bool
	// Plane is the plane the packet is sent on (multi-plane senders,
	// plane.go; 0 otherwise). The driver sends it on that NIC port.
	Plane uint8
	// QDelay is the queuing delay the packet accumulated in the fabric's
	// switches (the non-shortest-path paper's Accumulated Queuing Delay
	// field), when QDelayValid; the receiver echoes it in the ACK.
	QDelay      Time
	QDelayValid bool
	// AckRoute echoes the route entropy (Ack.Route) of the latest ACK the
	// sender received, when AckRouteValid: the receiver's confirmation
	// that ACKs on it get through (ackroute.go).
	AckRoute      uint16
	AckRouteValid bool
}

// Ack is an acknowledgement, or a NACK for a trimmed packet.
//
// A per-packet ACK acknowledges PSN (and, cumulatively, every PSN below
// CumAck) and has Sack 0. A coalesced ACK (Params.AckEvery, AckEveryBytes)
// acknowledges, besides, every PSN SackBase+i whose bit i is set in Sack:
// the packets that arrived since the receiver's previous ACK. PSN is the
// packet that made the receiver answer (always one of those bits): its
// entropy, ECN mark and timestamp are the ones echoed.
type Ack struct {
	Flow     uint32
	PSN      uint32 // the packet this acknowledges (or NACKs)
	CumAck   uint32 // every PSN below this has been received
	SackBase uint32 // first PSN of the Sack bitmap
	Sack     uint64 // selective ACK bitmap over [SackBase, SackBase+SackBits); 0: PSN only
	Entropy  uint16 // echoed from the data packet
	// Route is the entropy the ACK itself travels on, chosen by the
	// receiver (ackroute.go): the data packet's entropy unless the
	// receiver saw its ACKs get lost. Drivers route the ACK by it.
	Route uint16
	ECN   bool // the data packet arrived ECN-marked
	Nack  bool // the data packet arrived trimmed: retransmit it
	// GoBack (with Nack, go-back-N receivers): resend everything from
	// CumAck on.
	GoBack bool
	EchoTS Time // echoed SentAt
	// Plane is the plane the ACK came back on: the driver sets it from
	// the NIC port it arrived at (multi-plane senders; 0 otherwise).
	Plane uint8
	// QDelay echoes the data packet's accumulated queuing delay.
	QDelay      Time
	QDelayValid bool
	// HostDelay is the part of this ACK's round trip that the hosts, not
	// the fabric, added: the time the receiver held the data packet
	// before its ACK left and the time the ACK waited at the sender
	// before OnAck, which a real driver measures from kernel receive
	// timestamps (the UDP agent). The congestion control's RTT sample
	// leaves it out, so host scheduling delay does not look like
	// queuing; the retransmission timeout (MeasureRTO) keeps it, since a
	// timeout fires on the host's clock. 0 (the simulator): none.
	HostDelay Time
}

// fabricRTT is the RTT sample of a fresh ACK for the congestion control:
// now minus the echoed send time, without the hosts' share (HostDelay)
// when that is known and shorter than the whole.
func fabricRTT(now Time, a *Ack) Time {
	rtt := now - a.EchoTS
	if a.HostDelay > 0 && a.HostDelay < rtt {
		rtt -= a.HostDelay
	}
	return rtt
}

// SackBits is the span of an ACK's selective bitmap: a coalescing receiver
// holds back at most this many consecutive PSNs' worth of arrivals.
const SackBits = 64

// Flow size limit. PSNs, cumulative ACKs and packet counts are 32 bits, on
// the UDP agent's wire as in the simulator, so a flow has at most MaxPackets
// packets: at most MaxFlowBytes(mtu) = (2^32-1) x mtu payload bytes (just
// under 16 TiB at mtu 4096, 1 TiB at mtu 256). Larger flows are refused
// (CheckFlowSize) rather than wrapped.
const MaxPackets = 1<<32 - 1

// MaxFlowBytes returns the largest flow, in payload bytes, that fits in
// MaxPackets packets of mtu payload bytes.
func MaxFlowBytes(mtu int) int64 {
	if mtu <= 0 {
		return 0
	}
	return MaxPackets * int64(mtu)
}

// CheckFlowSize returns an error when a flow of size payload bytes needs more
// than MaxPackets packets at mtu.
func CheckFlowSize(size int64, mtu int) error {
	if n := Packets(size, mtu); n > MaxPackets {
		return fmt.Errorf("%d bytes need %d packets at mtu %d; a flow has at most %d packets (%d bytes at this mtu)",
			size, n, mtu, uint64(MaxPackets), MaxFlowBytes(mtu))
	}
	return nil
}

// TxTime returns the time to serialise bytes at rateBps bits per second,
// bytes*8e12/rateBps picoseconds rounded down (units.SerializationTime: the
// product is computed in 128 bits and cannot overflow). Non-positive bytes
// take 0; a result beyond the range of Time, or a non-positive rate,
// saturates at math.MaxInt64.
func TxTime(bytes, rateBps int64) Time {
	if bytes <= 0 {
		return 0
	}
	if t, ok := units.SerializationTime(bytes, rateBps); ok {
		return t
	}
	return math.MaxInt64
}

// AddTime returns a+b for non-negative a and b, saturating at math.MaxInt64.
func AddTime(a, b Time) Time {
	if s, ok := units.Add(a, b); ok {
		return s
	}
	return math.MaxInt64
}
