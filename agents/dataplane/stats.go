package dataplane

import "sync/atomic"

// Stats are the engine's counters. Each field is read atomically; the set is
// not a consistent cut while the engine runs.
type Stats struct {
	// Sending side.
	DataSent      uint64 // data packets written to a socket (new and retransmitted)
	DataRetx      uint64 // of DataSent, retransmissions
	DataDropped   uint64 // data packets dropped by Config.DropData (not in DataSent)
	DataBytesSent uint64 // UDP payload bytes of the data packets sent (headers included)
	AcksRecv      uint64 // ACKs received for a running flow
	NacksRecv     uint64 // NACKs received for a running flow
	ECNAcks       uint64 // of AcksRecv, ACKs echoing a CE mark
	StaleAcks     uint64 // ACKs and NACKs for flows this engine does not run (any more)
	Timeouts      uint64 // packets that hit the retransmission timeout
	SpuriousRetx  uint64 // of DataRetx, packets whose original was acknowledged after the resend
	SendErrors    uint64 // failed socket writes (data and ACKs)

	// Receiving side.
	DataRecv      uint64 // data packets received, duplicates included
	DataDup       uint64 // of DataRecv, duplicates of packets already received
	DataBytesRecv uint64 // UDP payload bytes of the data packets received
	PayloadRecv   uint64 // distinct payload bytes delivered to receivers
	Trimmed       uint64 // data packets that arrived trimmed (answered with a NACK)
	ECNMarked     uint64 // data packets that arrived with CE set
	AcksSent      uint64
	NacksSent     uint64
	ECNAcksSent   uint64 // ACKs and NACKs sent with the ECN echo
	AcksDropped   uint64 // ACKs and NACKs dropped by Config.DropAck (not in AcksSent, NacksSent)

	// Anything received.
	BadPackets uint64 // undecodable, truncated or otherwise invalid datagrams
	ForeignRun uint64 // valid packets of another run ID (ignored)
	RecvErrors uint64 // failed socket reads
	RxBatches  uint64 // batches of ACKs handed from the receiving goroutines to the sending goroutine
	MarkErrors uint64 // ACKs of marked flows sent by their route because the marked socket could not be opened

	// System calls and offloads.
	SendCalls    uint64 // sendmmsg calls (data and ACKs)
	SendMsgs     uint64 // messages they sent: a GSO message carries several datagrams
	GSOSegments  uint64 // datagrams sent inside GSO messages of more than one
	RecvCalls    uint64 // recvmmsg calls that returned datagrams
	RecvMsgs     uint64 // messages they returned: a GRO buffer carries several datagrams
	GROSegments  uint64 // datagrams received inside GRO buffers of more than one
	TimeoutsHeld uint64 // times a due retransmission timeout waited for ACKs not yet handed over

	// Flows.
	FlowsStarted   uint64
	FlowsCompleted uint64 // finished: every packet acknowledged
	FlowsFailed    uint64 // abandoned (FlowTimeout, socket error, engine stopped)
	RecvFlows      uint64 // receivers created
	RecvFlowsDone  uint64 // receivers that got every packet
}

type counters struct {
	dataSent, dataRetx, dataDropped, dataBytesSent       atomic.Uint64
	acksRecv, nacksRecv, ecnAcks, staleAcks              atomic.Uint64
	timeouts, sendErrors, spurious                       atomic.Uint64
	dataRecv, dataDup, dataBytesRecv, payloadRecv        atomic.Uint64
	trimmed, ecnMarked, acksSent, nacksSent, ecnAcksSent atomic.Uint64
	badPackets, foreignRun, recvErrors, rxBatches        atomic.Uint64
	markErrors, acksDropped                              atomic.Uint64
	sendCalls, sendMsgs, gsoSegs                         atomic.Uint64
	recvCalls, recvMsgs, groSegs, timeoutsHeld           atomic.Uint64
	flowsStarted, flowsCompleted, flowsFailed            atomic.Uint64
	recvFlows, recvFlowsDone                             atomic.Uint64
}

func (c *counters) snapshot() Stats {
	return Stats{
		DataSent: c.dataSent.Load(), DataRetx: c.dataRetx.Load(), DataDropped: c.dataDropped.Load(),
		DataBytesSent: c.dataBytesSent.Load(), AcksRecv: c.acksRecv.Load(), NacksRecv: c.nacksRecv.Load(),
		ECNAcks: c.ecnAcks.Load(), StaleAcks: c.staleAcks.Load(), Timeouts: c.timeouts.Load(),
		SpuriousRetx: c.spurious.Load(),
		SendErrors:   c.sendErrors.Load(),
		DataRecv:     c.dataRecv.Load(), DataDup: c.dataDup.Load(), DataBytesRecv: c.dataBytesRecv.Load(),
		PayloadRecv: c.payloadRecv.Load(), Trimmed: c.trimmed.Load(), ECNMarked: c.ecnMarked.Load(),
		AcksSent: c.acksSent.Load(), NacksSent: c.nacksSent.Load(), ECNAcksSent: c.ecnAcksSent.Load(),
		AcksDropped: c.acksDropped.Load(),
		BadPackets:  c.badPackets.Load(), ForeignRun: c.foreignRun.Load(), RecvErrors: c.recvErrors.Load(),
		RxBatches: c.rxBatches.Load(), MarkErrors: c.markErrors.Load(),
		SendCalls: c.sendCalls.Load(), SendMsgs: c.sendMsgs.Load(), GSOSegments: c.gsoSegs.Load(),
		RecvCalls: c.recvCalls.Load(), RecvMsgs: c.recvMsgs.Load(), GROSegments: c.groSegs.Load(),
		TimeoutsHeld: c.timeoutsHeld.Load(),
		FlowsStarted: c.flowsStarted.Load(), FlowsCompleted: c.flowsCompleted.Load(),
		FlowsFailed: c.flowsFailed.Load(), RecvFlows: c.recvFlows.Load(), RecvFlowsDone: c.recvFlowsDone.Load(),
	}
}
