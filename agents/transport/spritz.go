package transport

import "sort"

// This file is path-aware load balancing (Spritz,
// ../shared/papers/spritz-path-aware-load-balancing.txt). The balancers
// here, weighted OPS, Spritz-Scout, Spritz-Spray and Flicr, choose among
// the entries of an EV entry list, in one of two ways:
//
//   - Fine-grained, on source-guided routing: the fabric's first two
//     switches pick the next hop from the entropy (EV1, the high byte, at
//     the first switch; EV2, the low byte, at the second; minimal routing
//     after that), every entropy value names one path, and the sender holds
//     the list of them towards its destination switch (Flow.Paths), with
//     their latencies (weights by Eq. 1) and which are minimal.
//   - Coarse-grained (Spritz Sec. III-D), on plain ECMP hashing: without
//     Flow.Paths the sender uses the whole entropy space as its list, EVs
//     0 .. Params.Entropies-1 (in the UDP agent each is a UDP source port,
//     Port+1+EV%EntropyPorts, the mapping every load balancer uses). The
//     switches hash each EV onto some path the sender does not know (two EVs
//     may hash onto the same one, Sec. II-C), so every entry has the same
//     weight, none counts as minimal (the >90% ECN-rate bias then changes
//     nothing), and Scout inserts good EVs in arrival order. What the
//     algorithms learn stays per EV: Scout and Spray reuse the EVs that came
//     back unmarked, a timeout blocks its EV for Params.SpritzBlock, Flicr
//     leaves a marked EV at the next flowcell. The list is implicit (no
//     per-EV memory, except Scout's ECN counters, one byte per EV: 64 KiB
//     at 65536 entropies), and blocked EVs are kept as a short list.
//
// ECMP, OPS and REPS given a source-guided path list pick from it uniformly
// (ECMP once per flow); without one they use the entropy space as always.

// PathEV is one path of a source-guided fabric between two switches.
type PathEV struct {
	// EV is the entropy value that selects the path: EV1<<8 | EV2, where
	// 0xFF in either byte means "no choice at that switch" (minimal).
	EV uint16 `json:"ev"`
	// Latency is the path's unloaded one-way latency (links and switches).
	Latency Time `json:"latency_ps"`
	// Minimal marks the fabric's minimal paths (fewest global, then local hops).
	Minimal bool `json:"minimal"`
}

// Spritz defaults (Spritz Table II and Sec. V-A).
const (
	DefaultSpritzBuffer       = 8    // buffer_paths positions
	DefaultSpritzExplore      = 44   // explore_threshold, packets (~0.5 BDP)
	DefaultSpritzECNThreshold = 8    // ecn_threshold, packets (~0.1 BDP)
	DefaultSpritzWeightScale  = 3.0  // w_scale
	SpritzECNRateBias         = 0.90 // ecn_rate above which minimal paths are favoured
	DefaultSpritzMinBias      = 4.0  // factor on the minimal paths' weights while biased
	DefaultFlicrCell          = 16   // Flicr flowcell, packets (64 KiB at mtu 4096)
)

// DefaultSpritzBlock is how long a path that timed out keeps weight 0 (the
// paper's "global timer").
const DefaultSpritzBlock = 500 * Microsecond

// spritzState is the path-aware part of a balancer: the path list, its
// weights and what the algorithms learn.
type spritzState struct {
	// paths is the source-guided path list, shared with the other flows of
	// the pair and sorted by EV; nil for the coarse-grained list, whose
	// entry i is EV i.
	paths   []PathEV
	n       int       // entries on the list
	base    []float64 // weights from latency (Eq. 1, scaled); nil when coarse
	cum     []float64 // cumulative current weights; nil when coarse
	blocked []spBlock // paths that timed out, until when (few)
	ecnCnt  []uint8
	buf     []uint16 // path indices, ring of Params.SpritzBuffer
	bHead   int
	bN      int
	count   int // packets since the last forced exploration
	ecnRate float64
	biased  bool
	// Flicr
	cur      int
	cellLeft int
	cellBad  bool

	explore, ecnThr, cell int
	minBias               float64
	block                 Time
}

// spBlock is a blocked path: entry i is not sampled before until.
type spBlock struct {
	i     int32
	until Time
}

// coarseSampleTries is how many uniform draws the coarse-grained list makes
// before it takes the next unblocked EV after the last draw.
const coarseSampleTries = 8

// isPathAware reports whether kind needs a path list.
func (k LBKind) isPathAware() bool { return k == OPSWeighted || k == Scout || k == Spray || k == Flicr }

// PathAware reports whether the load balancer chooses among the entries of
// an EV entry list by weight and feedback (weighted OPS, Spritz-Scout,
// Spritz-Spray, Flicr): Flow.Paths on a source-guided fabric, else the
// coarse-grained list of Params.Entropies equal-weight EVs (spritz.go).
func (k LBKind) PathAware() bool { return k.isPathAware() }

// spritzWeights are Eq. 1 of the paper, w_i = lat_longest / lat_i, with the
// shorter paths' weights multiplied by scale (the longest keep 1.0).
func spritzWeights(paths []PathEV, scale float64, out []float64) {
	var longest Time
	for _, p := range paths {
		longest = max(longest, p.Latency)
	}
	for i, p := range paths {
		w := 1.0
		if p.Latency > 0 && p.Latency < longest {
			w = scale * float64(longest) / float64(p.Latency)
		}
		out[i] = w
	}
}

// initPaths sets up the path list: paths, or for a path-aware balancer
// without them the coarse-grained list of b.entropies EVs.
func (b *balancer) initPaths(p *Params, paths []PathEV) {
	if len(paths) == 0 {
		if !b.kind.isPathAware() {
			return
		}
		b.sp = &spritzState{n: int(b.entropies)}
	} else {
		if !sort.SliceIsSorted(paths, func(i, j int) bool { return paths[i].EV < paths[j].EV }) {
			cp := append([]PathEV(nil), paths...)
			sort.Slice(cp, func(i, j int) bool { return cp[i].EV < cp[j].EV })
			paths = cp
		}
		b.sp = &spritzState{paths: paths, n: len(paths)}
	}
	sp := b.sp
	switch b.kind {
	case ECMP:
		b.fixed = paths[b.rng.intn(uint32(len(paths)))].EV
		return
	case OPS, REPS:
		return
	}
	n := sp.n
	if sp.paths != nil {
		sp.base, sp.cum = make([]float64, n), make([]float64, n)
		scale := p.SpritzWeightScale
		if scale <= 0 {
			scale = DefaultSpritzWeightScale
		}
		spritzWeights(paths, scale, sp.base)
		if p.SpritzUniform {
			for i := range sp.base {
				sp.base[i] = 1
			}
		}
	}
	sp.explore, sp.ecnThr, sp.cell, sp.minBias, sp.block = p.SpritzExplore, p.SpritzECNThreshold, p.FlicrCell, DefaultSpritzMinBias, p.SpritzBlock
	if sp.explore <= 0 {
		sp.explore = DefaultSpritzExplore
	}
	if sp.ecnThr <= 0 {
		sp.ecnThr = DefaultSpritzECNThreshold
	}
	if sp.cell <= 0 {
		sp.cell = DefaultFlicrCell
	}
	if sp.block <= 0 {
		sp.block = DefaultSpritzBlock
	}
	bs := p.SpritzBuffer
	if bs <= 0 {
		bs = DefaultSpritzBuffer
	}
	sp.buf = make([]uint16, bs)
	if b.kind == Scout {
		sp.ecnCnt = make([]uint8, n)
	}
	sp.reweight()
	if b.kind == Flicr {
		sp.cur = sp.sample(b.rng)
		sp.cellLeft = sp.cell
	}
}

// ev, latency and minimal describe entry i of the list.
func (sp *spritzState) ev(i int) uint16 {
	if sp.paths == nil {
		return uint16(i)
	}
	return sp.paths[i].EV
}

func (sp *spritzState) latency(i int) Time {
	if sp.paths == nil {
		return 0
	}
	return sp.paths[i].Latency
}

// isBlocked reports whether entry i is blocked.
func (sp *spritzState) isBlocked(i int) bool {
	for _, b := range sp.blocked {
		if int(b.i) == i {
			return true
		}
	}
	return false
}

// blockUntil blocks entry i until t (later blocks extend earlier ones).
func (sp *spritzState) blockUntil(i int, t Time) {
	for k := range sp.blocked {
		if int(sp.blocked[k].i) == i {
			sp.blocked[k].until = t
			return
		}
	}
	sp.blocked = append(sp.blocked, spBlock{i: int32(i), until: t})
}

// reweight recomputes the cumulative weights of a source-guided list:
// blocked paths 0, minimal paths times minBias while biased. The coarse
// list has equal weights and no minimal paths: sample skips blocked EVs.
func (sp *spritzState) reweight() {
	if sp.paths == nil {
		return
	}
	t := 0.0
	for i, w := range sp.base {
		if len(sp.blocked) > 0 && sp.isBlocked(i) {
			w = 0
		} else if sp.biased && sp.paths[i].Minimal {
			w *= sp.minBias
		}
		t += w
		sp.cum[i] = t
	}
	if t == 0 { // every path blocked: fall back to the latency weights
		for i, w := range sp.base {
			t += w
			sp.cum[i] = t
		}
	}
}

// sample draws a path index by weight (gen(w) of Algorithm 1). On the
// coarse list every unblocked EV is equally likely; with every EV blocked,
// every EV is (as the source-guided list falls back to its latency weights).
func (sp *spritzState) sample(r *rng) int {
	if sp.paths == nil {
		i := int(r.intn(uint32(sp.n)))
		if len(sp.blocked) == 0 || len(sp.blocked) >= sp.n {
			return i
		}
		for k := 1; k < coarseSampleTries && sp.isBlocked(i); k++ {
			i = int(r.intn(uint32(sp.n)))
		}
		for sp.isBlocked(i) { // fewer than n are blocked: this ends
			i = (i + 1) % sp.n
		}
		return i
	}
	n := len(sp.cum)
	x := float64(r.next()>>11) / (1 << 53) * sp.cum[n-1]
	i := sort.SearchFloat64s(sp.cum, x)
	if i < n && sp.cum[i] == x {
		i++ // SearchFloat64s finds cum[i] >= x; x must fall below cum[i]
	}
	return min(i, n-1)
}

// index returns the position of entropy e in the path list, or -1.
func (sp *spritzState) index(e uint16) int {
	if sp.paths == nil {
		if int(e) < sp.n {
			return int(e)
		}
		return -1
	}
	i := sort.Search(len(sp.paths), func(i int) bool { return sp.paths[i].EV >= e })
	if i < len(sp.paths) && sp.paths[i].EV == e {
		return i
	}
	return -1
}

// unblock lifts blocks whose time is up.
func (sp *spritzState) unblock(now Time) {
	if len(sp.blocked) == 0 {
		return
	}
	w := 0
	for _, b := range sp.blocked {
		if now < b.until {
			sp.blocked[w] = b
			w++
		}
	}
	if w != len(sp.blocked) {
		sp.blocked = sp.blocked[:w]
		sp.reweight()
	}
}

// nextPathAware is the send logic (Algorithm 1; Flicr: the flowcell's path).
func (b *balancer) nextPathAware(now Time) uint16 {
	sp := b.sp
	sp.unblock(now)
	switch b.kind {
	case OPSWeighted:
		return sp.ev(sp.sample(b.rng))
	case Flicr:
		if sp.cellLeft <= 0 {
			if sp.cellBad || (len(sp.blocked) > 0 && sp.isBlocked(sp.cur)) {
				sp.cur = sp.sample(b.rng)
			}
			sp.cellLeft, sp.cellBad = sp.cell, false
		}
		sp.cellLeft--
		return sp.ev(sp.cur)
	}
	if sp.count > sp.explore {
		sp.count = 0
		return sp.ev(sp.sample(b.rng))
	}
	sp.count++
	if sp.bN == 0 {
		return sp.ev(sp.sample(b.rng))
	}
	i := int(sp.buf[sp.bHead])
	if b.kind == Spray {
		sp.bHead = (sp.bHead + 1) % len(sp.buf)
		sp.bN--
	}
	return sp.ev(i)
}

// bufHas reports whether path i is in the buffer.
func (sp *spritzState) bufHas(i int) bool {
	for k := 0; k < sp.bN; k++ {
		if int(sp.buf[(sp.bHead+k)%len(sp.buf)]) == i {
			return true
		}
	}
	return false
}

// bufRemove removes path i from the buffer, keeping the order.
func (sp *spritzState) bufRemove(i int) {
	L := len(sp.buf)
	w := 0
	for k := 0; k < sp.bN; k++ {
		v := sp.buf[(sp.bHead+k)%L]
		if int(v) != i {
			sp.buf[(sp.bHead+w)%L] = v
			w++
		}
	}
	sp.bN = w
}

// bufInsertByLatency inserts path i before the first buffered path with a
// longer latency (Algorithm 2: shorter paths first; on the coarse list,
// whose latencies are unknown, at the end).
func (sp *spritzState) bufInsertByLatency(i int) {
	L := len(sp.buf)
	pos := sp.bN
	for k := 0; k < sp.bN; k++ {
		if sp.latency(int(sp.buf[(sp.bHead+k)%L])) > sp.latency(i) {
			pos = k
			break
		}
	}
	for k := sp.bN; k > pos; k-- {
		sp.buf[(sp.bHead+k)%L] = sp.buf[(sp.bHead+k-1)%L]
	}
	sp.buf[(sp.bHead+pos)%L] = uint16(i)
	sp.bN++
}

// ackPathAware is the feedback logic for an ACK (Algorithms 2 and 3).
func (b *balancer) ackPathAware(e uint16, ecn bool) {
	sp := b.sp
	x := 0.0
	if ecn {
		x = 1
	}
	sp.ecnRate += (x - sp.ecnRate) / 32
	if bias := sp.ecnRate > SpritzECNRateBias; bias != sp.biased {
		sp.biased = bias
		sp.reweight()
	}
	i := sp.index(e)
	if i < 0 {
		return
	}
	switch b.kind {
	case Scout:
		if !ecn {
			if sp.bN < len(sp.buf) && !sp.bufHas(i) {
				sp.bufInsertByLatency(i)
			}
			return
		}
		if sp.ecnCnt[i]++; int(sp.ecnCnt[i]) > sp.ecnThr {
			sp.ecnCnt[i] = 0
			sp.bufRemove(i)
		}
	case Spray:
		if !ecn && sp.bN < len(sp.buf) {
			sp.buf[(sp.bHead+sp.bN)%len(sp.buf)] = uint16(i)
			sp.bN++
		}
	case Flicr:
		if ecn && i == sp.cur {
			sp.cellBad = true
		}
	}
}

// lossPathAware is the feedback logic for a NACK (timeout false) or a
// timeout on entropy e at now.
func (b *balancer) lossPathAware(now Time, e uint16, timeout bool) {
	sp := b.sp
	i := sp.index(e)
	if i < 0 {
		return
	}
	switch b.kind {
	case Scout:
		sp.ecnCnt[i] = 0
		sp.bufRemove(i)
	case Flicr:
		if i == sp.cur {
			sp.cellBad = true
			if timeout {
				sp.cellLeft = 0
			}
		}
	}
	if timeout && b.kind != OPSWeighted {
		sp.blockUntil(i, max(AddTime(now, sp.block), 1))
		if b.kind == Spray {
			sp.bufRemove(i)
		}
		sp.reweight()
	}
}
