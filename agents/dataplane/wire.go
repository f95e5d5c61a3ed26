package dataplane

import (
	"encoding/binary"
	"errors"

	"github.com/fabricbench/fabricbench/agents/transport"
)

// Wire format, version 3. All fields are big-endian. Earlier versions are
// refused with ErrVersion, so agents of mixed versions fail loudly instead
// of misreading each other: version 1 had no ACK route in either header
// (36-byte ACKs), version 2 no sender ID in data packets (44-byte headers)
// and no hold time in ACKs (40 bytes).
//
// Every packet starts with the same 16-byte prefix:
//
//	0  magic    uint16 (0x4642, "FB")
//	2  version  uint8  (2)
//	3  type     uint8  (1 data, 2 ack, 3 nack)
//	4  flags    uint8  (data: 0x01 retransmission, 0x02 ACK route valid;
//	                    ack/nack: 0x01 ECN echo)
//	5  reserved uint8  (0)
//	6  entropy  uint16
//	8  run ID   uint32
//	12 flow ID  uint32
//
// A data packet continues with
//
//	16 PSN        uint32
//	20 NPkts      uint32 (packets in the flow)
//	24 payload    int32  (payload bytes following the header)
//	28 mark       uint32 (path class, 0 = plain ECMP)
//	32 reply port uint16 (the sender's main port, where ACKs go)
//	34 ACK route  uint16 (the route entropy of the latest ACK the sender
//	                      received, transport.Data.AckRoute, when flag 0x02;
//	                      0 otherwise)
//	36 sent at    int64  (sender clock, picoseconds)
//	44 sender     uint32 (the sending engine's ID: with several planes
//	                      a flow's packets come from several addresses)
//	48 payload bytes (padding)
//
// and an ACK or NACK with
//
//	16 PSN      uint32
//	20 cum ack  uint32
//	24 mark     uint32
//	28 echo TS  int64
//	36 route    uint16 (transport.Ack.Route: the entropy the receiver sent
//	                    it on, i.e. the source port it left from)
//	38 reserved uint16 (0)
//	40 hold     uint32 (nanoseconds from the kernel's receive timestamp
//	                    of the data packet to this ACK's send: the
//	                    receiver's share of the round trip, saturating)
//	44 end
//
// A data packet whose header is intact but which carries fewer payload
// bytes than it announces was trimmed by the fabric: Decode reports it with
// DataHeader.Trimmed and the receiver answers with a NACK.
const (
	Magic   uint16 = 0x4642
	Version uint8  = 3

	// PrefixLen is the length of the prefix every packet type shares.
	PrefixLen = 16
	// DataHeaderLen is the header length of a data packet (the payload follows).
	DataHeaderLen = 48
	// AckHeaderLen is the length of an ACK or NACK (they carry no payload).
	AckHeaderLen = 44
	// MaxHeaderLen is the longest header of any packet type.
	MaxHeaderLen = DataHeaderLen
)

// The headers in front of the agent header on an Ethernet link, as the
// link (and a Linux qdisc) counts them.
const (
	EthernetHeaderLen = 14
	IPv4HeaderLen     = 20
	IPv6HeaderLen     = 40
	UDPHeaderLen      = 8
)

// WireHeaderBytes returns the wire bytes in front of a data packet's
// payload and the wire size of an ACK or NACK on an Ethernet link
// (Ethernet, IPv4 or IPv6, UDP and the agent header): what
// transport.Params.HeaderBytes and AckBytes are for the agents.
func WireHeaderBytes(v6 bool) (data, ack int) {
	o := EthernetHeaderLen + IPv4HeaderLen + UDPHeaderLen
	if v6 {
		o = EthernetHeaderLen + IPv6HeaderLen + UDPHeaderLen
	}
	return o + DataHeaderLen, o + AckHeaderLen
}

// Type is the packet type.
type Type uint8

// Packet types.
const (
	TypeData Type = 1
	TypeAck  Type = 2
	TypeNack Type = 3
)

func (t Type) String() string {
	switch t {
	case TypeData:
		return "data"
	case TypeAck:
		return "ack"
	case TypeNack:
		return "nack"
	}
	return "unknown"
}

// Flag bits.
const (
	FlagRetx     uint8 = 0x01 // data: a retransmission
	FlagAckRoute uint8 = 0x02 // data: the ACK route field is valid
	FlagECN      uint8 = 0x01 // ack/nack: the data packet arrived CE-marked
)

// Decoding errors. They are plain values so the receive path never allocates.
var (
	ErrShort   = errors.New("dataplane: packet too short")
	ErrMagic   = errors.New("dataplane: bad magic number")
	ErrVersion = errors.New("dataplane: unknown wire version")
	ErrType    = errors.New("dataplane: unknown packet type")
	ErrGarbled = errors.New("dataplane: garbled header")
	ErrBuffer  = errors.New("dataplane: buffer too small")
)

// DataHeader is the decoded header of a data packet.
type DataHeader struct {
	RunID     uint32
	Flow      uint32
	PSN       uint32
	NPkts     uint32
	Payload   int32
	Entropy   uint16
	ReplyPort uint16
	Mark      uint32
	SentAt    int64
	Retx      bool
	// AckRoute is the route entropy of the latest ACK the sender received
	// (transport.Data.AckRoute), when AckRouteValid.
	AckRoute      uint16
	AckRouteValid bool
	// Sender identifies the sending engine (Engine.ID).
	Sender uint32
	// Trimmed is set by Decode when fewer payload bytes arrived than Payload
	// announces; it is not encoded.
	Trimmed bool
}

// AckHeader is a decoded ACK or NACK.
type AckHeader struct {
	RunID   uint32
	Flow    uint32
	PSN     uint32
	CumAck  uint32
	Entropy uint16 // echoed from the data packet
	Route   uint16 // the entropy the ACK travels on (transport.Ack.Route)
	Mark    uint32
	EchoTS  int64
	// HoldNs is how long the receiver held the data packet, from its
	// kernel receive timestamp to the ACK's send, in nanoseconds.
	HoldNs uint32
	ECN    bool
	Nack   bool
}

// Packet is any decoded packet: Data is valid when Type is TypeData, Ack
// otherwise.
type Packet struct {
	Type Type
	Data DataHeader
	Ack  AckHeader
}

// Transport returns the transport view of the data header.
func (h *DataHeader) Transport() transport.Data {
	return transport.Data{Flow: h.Flow, PSN: h.PSN, Payload: h.Payload, Entropy: h.Entropy, SentAt: h.SentAt, Retx: h.Retx,
		AckRoute: h.AckRoute, AckRouteValid: h.AckRouteValid}
}

// Transport returns the transport view of the ACK.
func (h *AckHeader) Transport() transport.Ack {
	return transport.Ack{Flow: h.Flow, PSN: h.PSN, CumAck: h.CumAck, Entropy: h.Entropy, Route: h.Route, ECN: h.ECN, Nack: h.Nack, EchoTS: h.EchoTS}
}

var be = binary.BigEndian

func putPrefix(b []byte, t Type, flags uint8, entropy uint16, run, flow uint32) {
	be.PutUint16(b[0:], Magic)
	b[2] = Version
	b[3] = uint8(t)
	b[4] = flags
	b[5] = 0
	be.PutUint16(b[6:], entropy)
	be.PutUint32(b[8:], run)
	be.PutUint32(b[12:], flow)
}

// EncodeData writes the header of h into b and returns the length of the
// whole packet, header plus h.Payload bytes. b must hold the whole packet;
// the payload bytes are padding and are left as they are (callers keep them
// zero). It does not allocate.
func EncodeData(b []byte, h *DataHeader) (int, error) {
	if h.Payload < 0 {
		return 0, ErrGarbled
	}
	n := DataHeaderLen + int(h.Payload)
	if len(b) < n {
		return 0, ErrBuffer
	}
	if err := PutDataHeader(b, h); err != nil {
		return 0, err
	}
	return n, nil
}

// PutDataHeader writes only the DataHeaderLen header bytes of h into b (for
// callers that send the payload from elsewhere, or a trimmed packet).
func PutDataHeader(b []byte, h *DataHeader) error {
	if h.Payload < 0 || h.NPkts == 0 || h.PSN >= h.NPkts {
		return ErrGarbled
	}
	if len(b) < DataHeaderLen {
		return ErrBuffer
	}
	var flags uint8
	if h.Retx {
		flags = FlagRetx
	}
	var route uint16
	if h.AckRouteValid {
		flags |= FlagAckRoute
		route = h.AckRoute
	}
	putPrefix(b, TypeData, flags, h.Entropy, h.RunID, h.Flow)
	be.PutUint32(b[16:], h.PSN)
	be.PutUint32(b[20:], h.NPkts)
	be.PutUint32(b[24:], uint32(h.Payload))
	be.PutUint32(b[28:], h.Mark)
	be.PutUint16(b[32:], h.ReplyPort)
	be.PutUint16(b[34:], route)
	be.PutUint64(b[36:], uint64(h.SentAt))
	be.PutUint32(b[44:], h.Sender)
	return nil
}

// EncodeAck writes the ACK (or NACK when h.Nack) into b and returns its
// length, AckHeaderLen. It does not allocate.
func EncodeAck(b []byte, h *AckHeader) (int, error) {
	if len(b) < AckHeaderLen {
		return 0, ErrBuffer
	}
	t := TypeAck
	if h.Nack {
		t = TypeNack
	}
	var flags uint8
	if h.ECN {
		flags = FlagECN
	}
	putPrefix(b, t, flags, h.Entropy, h.RunID, h.Flow)
	be.PutUint32(b[16:], h.PSN)
	be.PutUint32(b[20:], h.CumAck)
	be.PutUint32(b[24:], h.Mark)
	be.PutUint64(b[28:], uint64(h.EchoTS))
	be.PutUint16(b[36:], h.Route)
	be.PutUint16(b[38:], 0)
	be.PutUint32(b[40:], h.HoldNs)
	return AckHeaderLen, nil
}

// PeekRunID returns the run ID of a packet whose prefix is valid.
func PeekRunID(b []byte) (uint32, error) {
	if _, err := checkPrefix(b); err != nil {
		return 0, err
	}
	return be.Uint32(b[8:]), nil
}

func checkPrefix(b []byte) (Type, error) {
	if len(b) < PrefixLen {
		return 0, ErrShort
	}
	if be.Uint16(b[0:]) != Magic {
		return 0, ErrMagic
	}
	if b[2] != Version {
		return 0, ErrVersion
	}
	t := Type(b[3])
	if t != TypeData && t != TypeAck && t != TypeNack {
		return 0, ErrType
	}
	flags := FlagECN
	if t == TypeData {
		flags = FlagRetx | FlagAckRoute
	}
	if b[4]&^flags != 0 || b[5] != 0 {
		return 0, ErrGarbled
	}
	return t, nil
}

// Decode decodes any packet into p. It rejects short, garbled and
// unknown-version input with one of the Err values and does not allocate.
func Decode(b []byte, p *Packet) error {
	t, err := checkPrefix(b)
	if err != nil {
		return err
	}
	p.Type = t
	if t == TypeData {
		return decodeData(b, &p.Data)
	}
	return decodeAck(b, t, &p.Ack)
}

// DecodeData decodes a data packet.
func DecodeData(b []byte, h *DataHeader) error {
	t, err := checkPrefix(b)
	if err != nil {
		return err
	}
	if t != TypeData {
		return ErrType
	}
	return decodeData(b, h)
}

// DecodeAck decodes an ACK or NACK.
func DecodeAck(b []byte, h *AckHeader) error {
	t, err := checkPrefix(b)
	if err != nil {
		return err
	}
	if t == TypeData {
		return ErrType
	}
	return decodeAck(b, t, h)
}

func decodeData(b []byte, h *DataHeader) error {
	if len(b) < DataHeaderLen {
		return ErrShort
	}
	d := DataHeader{
		Entropy:   be.Uint16(b[6:]),
		RunID:     be.Uint32(b[8:]),
		Flow:      be.Uint32(b[12:]),
		PSN:       be.Uint32(b[16:]),
		NPkts:     be.Uint32(b[20:]),
		Payload:   int32(be.Uint32(b[24:])),
		Mark:      be.Uint32(b[28:]),
		ReplyPort: be.Uint16(b[32:]),
		SentAt:    int64(be.Uint64(b[36:])),
		Sender:    be.Uint32(b[44:]),
		Retx:      b[4]&FlagRetx != 0,
	}
	if b[4]&FlagAckRoute != 0 {
		d.AckRoute, d.AckRouteValid = be.Uint16(b[34:]), true
	} else if be.Uint16(b[34:]) != 0 {
		return ErrGarbled
	}
	if d.Payload < 0 || d.NPkts == 0 || d.PSN >= d.NPkts {
		return ErrGarbled
	}
	switch have := int64(len(b) - DataHeaderLen); {
	case have > int64(d.Payload):
		return ErrGarbled
	case have < int64(d.Payload):
		d.Trimmed = true
	}
	*h = d
	return nil
}

func decodeAck(b []byte, t Type, h *AckHeader) error {
	if len(b) < AckHeaderLen {
		return ErrShort
	}
	if len(b) > AckHeaderLen || be.Uint16(b[38:]) != 0 {
		return ErrGarbled
	}
	*h = AckHeader{
		Entropy: be.Uint16(b[6:]),
		RunID:   be.Uint32(b[8:]),
		Flow:    be.Uint32(b[12:]),
		PSN:     be.Uint32(b[16:]),
		CumAck:  be.Uint32(b[20:]),
		Mark:    be.Uint32(b[24:]),
		EchoTS:  int64(be.Uint64(b[28:])),
		Route:   be.Uint16(b[36:]),
		HoldNs:  be.Uint32(b[40:]),
		ECN:     b[4]&FlagECN != 0,
		Nack:    t == TypeNack,
	}
	return nil
}
