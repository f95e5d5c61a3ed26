package transport

import "math"

// controller is a congestion control algorithm driving one sender's window.
type controller interface {
	window() float64
	// onAck: rtt < 0 when the ACK gives no valid sample (retransmission).
	onAck(now, rtt Time, ecn bool, size, inflight int64, lb *balancer, entropy uint16)
	onNack(now Time, size, inflight int64)
	onTimeout(now Time, inflight int64)
	// setWindow sets the window to w bytes, within the algorithm's
	// bounds (slow start after a path change, owd.go).
	setWindow(w float64)
}

func newController(p *Params, path Path, mtu int64) controller {
	switch p.CC {
	case DCTCP:
		return newDCTCP(p, path, mtu)
	default:
		return newNSCC(p, path, mtu)
	}
}

// Constants of NSCC (SMaRTT, ../shared/papers/smartt-nscc-congestion-control.txt).
const (
	// RefBDP is the BDP at which the increase constants take their base
	// values; they are scaled by pathBDP/RefBDP (Sec. III-J "Scaling").
	RefBDP = 150000.0
	// FairIncreaseBase is fi at RefBDP (Eq. 2).
	FairIncreaseBase = 5.0
	// MDGain is the 0.8 of Eq. 1; MDFloor its lower bound 0.5.
	MDGain  = 0.8
	MDFloor = 0.5
	// RTTEWMA is the weight of a new sample in the average RTT.
	RTTEWMA = 0.0125
	// FastIncreaseK is k of Algorithm 3: MTUs added per ACK.
	FastIncreaseK = 2
	// TargetFactor: target RTT = TargetFactor x base RTT (the default of
	// Params.TargetRTT).
	TargetFactor = 1.5
	// MaxWindowBDP: the window is clamped to [1 MTU, MaxWindowBDP x BDP]
	// (the default of Params.MaxWindow).
	MaxWindowBDP = 1.5
)

// quickAdapt is Algorithm 2 with its ignore phase, shared by NSCC and DCTCP.
type quickAdapt struct {
	enabled      bool
	trtt         Time
	end          Time
	acked        int64 // bytes acknowledged (or NACKed) in the current window
	trigger      bool
	bytesToIgn   int64
	bytesIgnored int64
	// delay trigger (no trimming): an RTT above delayThresh signals heavy congestion.
	delayTrigger bool
	delayThresh  Time
}

// account is lines 2-3 of Algorithm 4.
func (q *quickAdapt) account(size int64) {
	q.acked += size
	q.bytesIgnored += size
}

func (q *quickAdapt) ignoring() bool { return q.enabled && q.bytesIgnored < q.bytesToIgn }

// run is QUICK_ADAPT: returns true when it adapted the window.
func (q *quickAdapt) run(now Time, cwnd *float64, mtu, inflight int64) bool {
	if !q.enabled {
		return false
	}
	adapted := false
	if now >= q.end {
		if q.trigger && q.end != 0 {
			q.trigger = false
			adapted = true
			// QuickAdapt drops the window to what the path delivered over the
			// last target RTT. It never raises it: acked can exceed cwnd when
			// the RTT is below target, and raising is the increase rules' job.
			v := math.Max(float64(q.acked), float64(mtu))
			if v < *cwnd {
				*cwnd = v
			}
			q.bytesToIgn = inflight
			q.bytesIgnored = 0
		}
		q.end = now + q.trtt
		q.acked = 0
	}
	return adapted
}

// fastIncrease is Algorithm 3. Its k MTUs are per acknowledged packet: a
// coalesced ACK of n packets adds k x n MTUs.
type fastIncrease struct {
	enabled  bool
	count    int64
	active   bool
	nearBase Time // rtt <= nearBase counts as "rtt ~ brtt"
}

func (f *fastIncrease) run(rtt Time, ecn bool, size int64, cwnd *float64, mtu int64) bool {
	if !f.enabled {
		return false
	}
	if rtt >= 0 && rtt <= f.nearBase && !ecn {
		f.count += size
		if float64(f.count) > *cwnd || f.active {
			pkts := (size + mtu - 1) / mtu // packets this ACK covers (1 per-packet)
			*cwnd += FastIncreaseK * float64(mtu*pkts)
			f.active = true
			return true
		}
		return false
	}
	f.count = 0
	f.active = false
	return false
}

// nscc implements SMaRTT / UEC NSCC (Algorithms 1-4, Eqs. 1-3).
type nscc struct {
	cwnd     float64
	mtu      int64
	minW     float64
	maxW     float64
	brtt     Time
	trtt     Time
	avgRTT   float64
	lastMD   Time
	mdArmed  bool
	fi       float64 // Eq. 2 constant, scaled by BDP
	pi       float64 // Eq. 3 constant, scaled by BDP
	qa       quickAdapt
	finc     fastIncrease
	trimming bool

	// Stats for tests and traces.
	Cases [4]uint64 // MD, path change, FI, PI
	QAs   uint64
	FIs   uint64
}

func newNSCC(p *Params, path Path, mtu int64) *nscc {
	bdp := path.BDP()
	scale := bdp / RefBDP
	trtt := Time(float64(path.BaseRTT) * p.targetFactor())
	n := &nscc{mtu: mtu, brtt: path.BaseRTT, trtt: trtt, trimming: p.Trimming}
	n.minW = float64(mtu)
	n.maxW = math.Max(p.maxWindowBDPs()*bdp, float64(mtu))
	n.cwnd = n.maxW // the initial window is the maximum (1.5 BDP by default)
	n.avgRTT = float64(path.BaseRTT)
	n.fi = FairIncreaseBase * scale
	// pi = brtt / (trtt - brtt) (Sec. III-I4), scaled like fi.
	n.pi = float64(path.BaseRTT) / float64(trtt-path.BaseRTT) * scale
	n.qa = quickAdapt{enabled: true, trtt: trtt, delayTrigger: !p.Trimming, delayThresh: 2 * trtt}
	n.finc = fastIncrease{enabled: true, nearBase: path.BaseRTT + (trtt-path.BaseRTT)/8}
	return n
}

func (n *nscc) window() float64 { return n.cwnd }

func (n *nscc) setWindow(w float64) { n.cwnd = w; n.clamp() }

func (n *nscc) clamp() {
	if n.cwnd > n.maxW {
		n.cwnd = n.maxW
	}
	if n.cwnd < n.minW {
		n.cwnd = n.minW
	}
}

func (n *nscc) onAck(now, rtt Time, ecn bool, size, inflight int64, lb *balancer, entropy uint16) {
	defer n.clamp()
	n.qa.account(size)
	if rtt >= 0 {
		n.avgRTT += RTTEWMA * (float64(rtt) - n.avgRTT)
		if n.qa.delayTrigger && rtt > n.qa.delayThresh && float64(n.qa.acked) < n.cwnd {
			// Without trimming, a high RTT while little is being delivered is
			// the heavy-congestion signal (Sec. III-E a).
			n.qa.trigger = true
		}
	}
	if n.qa.ignoring() {
		return
	}
	if n.qa.run(now, &n.cwnd, n.mtu, inflight) {
		n.QAs++
		return
	}
	if rtt < 0 {
		return // no delay sample: no core case
	}
	if n.finc.run(rtt, ecn, size, &n.cwnd, n.mtu) {
		n.FIs++
		return
	}
	n.coreCases(now, rtt, ecn, size, lb, entropy)
}

// coreCases is Algorithm 1.
func (n *nscc) coreCases(now, rtt Time, ecn bool, size int64, lb *balancer, entropy uint16) {
	fsize := float64(size)
	switch {
	case ecn && rtt > n.trtt:
		// Multiplicative decrease (Eq. 1), at most once per base RTT.
		if !n.mdArmed || now-n.lastMD >= n.brtt {
			f := math.Max(MDFloor, 1-(n.avgRTT-float64(n.trtt))/n.avgRTT*MDGain)
			if f < 1 {
				n.cwnd *= f
			}
			n.lastMD, n.mdArmed = now, true
		}
		n.Cases[0]++
	case ecn:
		// ECN with low delay: let the load balancer move, keep the window.
		lb.pathChange(entropy)
		n.Cases[1]++
	case rtt > n.trtt:
		// Fair increase (Eq. 2).
		n.cwnd += fsize / n.cwnd * float64(n.mtu) * n.fi
		n.Cases[2]++
	default:
		// Proportional increase (Eq. 3), followed by a fair increase.
		pinc := float64(n.trtt-rtt) / float64(rtt) * fsize / n.cwnd * float64(n.mtu) * n.pi
		n.cwnd += math.Min(fsize, pinc) + fsize/n.cwnd*float64(n.mtu)*n.fi
		n.Cases[3]++
	}
}

func (n *nscc) onNack(now Time, size, inflight int64) {
	// Algorithm 4, trimmed branch.
	n.qa.account(size)
	n.cwnd -= float64(size)
	n.qa.trigger = true
	if !n.qa.ignoring() {
		if n.qa.run(now, &n.cwnd, n.mtu, inflight) {
			n.QAs++
		}
	}
	n.clamp()
}

func (n *nscc) onTimeout(now Time, inflight int64) {
	// A timeout is the loss signal when the fabric does not trim: it arms
	// QuickAdapt. Timeouts inside the ignore phase are ignored (Sec. III-E a).
	if n.qa.ignoring() {
		return
	}
	n.qa.trigger = true
	n.cwnd -= float64(n.mtu)
	if n.qa.run(now, &n.cwnd, n.mtu, inflight) {
		n.QAs++
	}
	n.clamp()
}

// dctcp is DCTCP (per-ACK ECN echo, alpha updated once per window) with the
// optional QuickAdapt and FastIncrease of SMaRTT, as evaluated by Spritz.
type dctcp struct {
	cwnd       float64
	mtu        int64
	minW, maxW float64
	brtt       Time
	alpha      float64
	g          float64
	winEnd     Time
	winAcked   int64
	winMarked  int64
	lastCut    Time
	cut        bool
	qa         quickAdapt
	finc       fastIncrease
}

func newDCTCP(p *Params, path Path, mtu int64) *dctcp {
	bdp := path.BDP()
	trtt := Time(float64(path.BaseRTT) * p.targetFactor())
	d := &dctcp{mtu: mtu, brtt: path.BaseRTT, g: 1.0 / 16}
	d.minW = float64(mtu)
	d.maxW = math.Max(p.maxWindowBDPs()*bdp, float64(mtu))
	d.cwnd = d.maxW
	d.qa = quickAdapt{enabled: p.QuickAdapt, trtt: trtt, delayTrigger: !p.Trimming, delayThresh: 2 * trtt}
	d.finc = fastIncrease{enabled: p.FastIncrease, nearBase: path.BaseRTT + (trtt-path.BaseRTT)/8}
	if p.ECNFastIncrease {
		d.finc.nearBase = math.MaxInt64 // ECN-only: any RTT counts
	}
	return d
}

func (d *dctcp) window() float64 { return d.cwnd }

func (d *dctcp) setWindow(w float64) { d.cwnd = w; d.clamp() }

func (d *dctcp) clamp() {
	d.cwnd = math.Min(math.Max(d.cwnd, d.minW), d.maxW)
}

func (d *dctcp) onAck(now, rtt Time, ecn bool, size, inflight int64, lb *balancer, entropy uint16) {
	defer d.clamp()
	d.qa.account(size)
	if d.qa.delayTrigger && rtt > d.qa.delayThresh && float64(d.qa.acked) < d.cwnd {
		d.qa.trigger = true
	}
	if d.qa.ignoring() {
		return
	}
	if d.qa.run(now, &d.cwnd, d.mtu, inflight) {
		return
	}
	// alpha: fraction of marked bytes, updated once per RTT.
	d.winAcked += size
	if ecn {
		d.winMarked += size
	}
	if now >= d.winEnd {
		if d.winAcked > 0 {
			d.alpha = (1-d.g)*d.alpha + d.g*float64(d.winMarked)/float64(d.winAcked)
		}
		d.winAcked, d.winMarked = 0, 0
		d.winEnd = now + d.brtt
	}
	if d.finc.run(rtt, ecn, size, &d.cwnd, d.mtu) {
		return
	}
	if ecn {
		if !d.cut || now-d.lastCut >= d.brtt {
			d.cwnd *= 1 - d.alpha/2
			d.lastCut, d.cut = now, true
		}
		return
	}
	// Additive increase: one MTU per window.
	d.cwnd += float64(size) / d.cwnd * float64(d.mtu)
}

func (d *dctcp) onNack(now Time, size, inflight int64) {
	d.qa.account(size)
	d.cwnd -= float64(size)
	d.qa.trigger = true
	if !d.qa.ignoring() {
		d.qa.run(now, &d.cwnd, d.mtu, inflight)
	}
	d.clamp()
}

func (d *dctcp) onTimeout(now Time, inflight int64) {
	if d.qa.enabled && d.qa.ignoring() {
		return
	}
	d.qa.trigger = true
	d.cwnd = math.Max(d.cwnd/2, d.minW)
	d.qa.run(now, &d.cwnd, d.mtu, inflight)
	d.clamp()
}
