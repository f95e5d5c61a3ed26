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

// LBKind selects the load balancer (how entropy values are chosen).
type LBKind uint8

const (
	ECMP LBKind = iota // one entropy per flow
	OPS                // oblivious packet spraying: random entropy per packet
	REPS               // recycled entropy packet spraying
)

func (l LBKind) String() string {
	switch l {
	case ECMP:
		return "ecmp"
	case OPS:
		return "ops"
	case REPS:
		return "reps"
	}
	return fmt.Sprintf("lb(%d)", uint8(l))
}

// ParseLB parses "ecmp", "ops" or "reps".
func ParseLB(s string) (LBKind, error) {
	switch strings.ToLower(s) {
	case "ecmp":
		return ECMP, nil
	case "ops", "oblivious", "spray":
		return OPS, nil
	case "reps":
		return REPS, nil
	}
	return 0, fmt.Errorf("unknown load balancer %q (want ecmp, ops or reps)", s)
}

// Data is the transport header of a data packet.
type Data struct {
	Flow    uint32
	PSN     uint32 // packet sequence number, 0-based
	Payload int32  // payload bytes
	Entropy uint16 // entropy value: the path selector hashed by ECMP switches
	SentAt  Time   // sender timestamp, echoed in the ACK
	Retx    bool   // a retransmission
}

// Ack is a per-packet acknowledgement, or a NACK for a trimmed packet.
type Ack struct {
	Flow    uint32
	PSN     uint32 // the packet this acknowledges (or NACKs)
	CumAck  uint32 // every PSN below this has been received
	Entropy uint16 // echoed from the data packet
	ECN     bool   // the data packet arrived ECN-marked
	Nack    bool   // the data packet arrived trimmed: retransmit it
	EchoTS  Time   // echoed SentAt
}
