package inventory

import (
	"fmt"
	"strconv"
)

// This file builds the low-diameter generator specs, dragonfly and slimfly
// (see the package documentation for the keys).
//
// Both are flat: every switch is a router at tier 0 with hosts hanging off
// it (Role RoleLeaf, Tier 0), and Node.Pod is the router's group (Dragonfly)
// or subgraph row (Slim Fly), so analysis groups by it. Router-to-router
// links carry Link.Global when they join two groups of a Dragonfly; their
// ports have Uplink false on both ends.

// isLowDiameter reports whether kind is built here.
func isLowDiameter(kind string) bool { return kind == "dragonfly" || kind == "slimfly" }

func buildLowDiameter(p *specParams) (*Fabric, error) {
	if p.kind == "dragonfly" {
		return buildDragonfly(p)
	}
	return buildSlimFly(p)
}

// linkOpts are the rate and latency keys shared by both kinds.
type linkOpts struct {
	hostMbps, localMbps, globalMbps int64
	hostLat, localLat, globalLat    int64
	switchLat                       int64
}

func (p *specParams) lowDiameterLinks() (linkOpts, error) {
	var o linkOpts
	var err error
	if o.hostMbps, err = p.gbps("gbps", defaultMbps); err != nil {
		return o, err
	}
	if o.localMbps, err = p.gbps("local_gbps", o.hostMbps); err != nil {
		return o, err
	}
	if o.hostLat, err = p.duration("latency", defaultLatencyPs); err != nil {
		return o, err
	}
	if o.hostLat == 0 {
		return o, p.errf("latency", "link latency must be positive")
	}
	if o.localLat, err = p.duration("local_latency", o.hostLat); err != nil {
		return o, err
	}
	if o.switchLat, err = p.duration("switch_latency", 0); err != nil {
		return o, err
	}
	if o.globalMbps, err = p.gbps("global_gbps", o.localMbps); err != nil {
		return o, err
	}
	if o.globalLat, err = p.duration("global_latency", o.localLat); err != nil {
		return o, err
	}
	if o.localLat == 0 || o.globalLat == 0 {
		return o, fmt.Errorf("%s: link latencies must be positive", p.kind)
	}
	return o, nil
}

// connectRouters links routers x and y (x < y) and clears the ports' Uplink
// flags: neither end is above the other.
func (b *Builder) connectRouters(x, y int, rateBps, latPs int64, global bool) {
	l := b.Connect(x, y, rateBps, latPs)
	f := &b.f
	f.Links[l].Global = global
	f.Ports[f.Links[l].A].Uplink = false
}

// buildDragonfly builds dragonfly:p=P,a=A,h=H: A routers per group joined
// all-to-all by local links, P hosts and H global links per router, and
// g = A*H+1 groups with exactly one global link between every pair of
// groups (a balanced Dragonfly when A = 2P = 2H). The global links follow
// htsim's DragonFlyTopology (the "absolute" arrangement): group G's
// global links are numbered t = 0..A*H-1, router t/H owning t's port
// t%H, and link t leads to group t when t < G, else to group t+1. So
// router r of group G reaches groups r*H+k (+1 when >= G) for k < H, and
// the link G-T (G < T) joins router (T-1)/H of G to router G/H of T.
func buildDragonfly(p *specParams) (*Fabric, error) {
	if err := p.allow("p", "a", "h", "gbps", "latency", "local_gbps", "local_latency", "global_gbps", "global_latency", "switch_latency"); err != nil {
		return nil, err
	}
	hp, err := p.integer("p", 1, 1<<10, 0, true)
	if err != nil {
		return nil, err
	}
	a, err := p.integer("a", 1, 1<<10, 0, true)
	if err != nil {
		return nil, err
	}
	h, err := p.integer("h", 1, 1<<10, 0, true)
	if err != nil {
		return nil, err
	}
	o, err := p.lowDiameterLinks()
	if err != nil {
		return nil, err
	}
	g := a*h + 1
	routers := g * a
	if routers > 1<<16 || routers*hp > MaxHosts {
		return nil, fmt.Errorf("%s: %d groups of %d routers with %d hosts each: too large (at most 65536 routers and %d hosts)", p.kind, g, a, hp, MaxHosts)
	}
	b := NewBuilder(p.spec)
	nH := int(routers * hp)
	for i := 0; i < nH; i++ {
		b.AddNode("host"+strconv.Itoa(i), RoleHost, -1, i/int(hp*a), 0)
	}
	r0 := nH
	for r := 0; r < int(routers); r++ {
		b.AddNode("router"+strconv.Itoa(r), RoleLeaf, 0, r/int(a), o.switchLat)
	}
	for i := 0; i < nH; i++ {
		b.Connect(i, r0+i/int(hp), o.hostMbps*1_000_000, o.hostLat)
	}
	A, H := int(a), int(h)
	for r := 0; r < int(routers); r++ {
		grp, pos := r/A, r%A
		for k := pos + 1; k < A; k++ {
			b.connectRouters(r0+r, r0+grp*A+k, o.localMbps*1_000_000, o.localLat, false)
		}
		for l := 0; l < H; l++ {
			t := pos*H + l
			if t < grp {
				continue // made from the other end
			}
			tg := t + 1
			b.connectRouters(r0+r, r0+tg*A+grp/H, o.globalMbps*1_000_000, o.globalLat, true)
		}
	}
	return b.Fabric(1, int(hp*a))
}

// buildSlimFly builds slimfly:q=Q,p=P, the MMS graph of Slim Fly (Besta
// and Hoefler, SC14) for a prime power Q = 4w+d, d in {-1,0,1}: 2Q^2
// routers (s,x,y) with s in {0,1} and x, y in GF(Q); (0,x,y)~(0,x,y')
// when y-y' is in X, (1,m,c)~(1,m,c') when c-c' is in X', and
// (0,x,y)~(1,m,c) when y = m*x + c. X and X' are the even and odd powers
// of a primitive element as the construction prescribes for d. Network
// degree (3Q-d)/2, diameter 2; P hosts per router. Routers are numbered
// s*Q^2 + x*Q + y and Pod is s*Q + x (2Q groups of Q routers). Links
// within a group ((0,x,y)~(0,x,y'), (1,m,c)~(1,m,c')) are local, the
// links between the two halves global (Spritz Table I: a Slim Fly's
// minimal paths take 0-2 global hops; global_gbps and global_latency
// default to the local links').
func buildSlimFly(p *specParams) (*Fabric, error) {
	if err := p.allow("q", "p", "gbps", "latency", "local_gbps", "local_latency", "global_gbps", "global_latency", "switch_latency"); err != nil {
		return nil, err
	}
	q, err := p.integer("q", 3, 128, 0, true)
	if err != nil {
		return nil, err
	}
	hp, err := p.integer("p", 1, 1<<10, 0, true)
	if err != nil {
		return nil, err
	}
	o, err := p.lowDiameterLinks()
	if err != nil {
		return nil, err
	}
	F, err := newGF(int(q))
	if err != nil {
		return nil, p.errf("q", "%v", err)
	}
	if q%4 == 2 {
		return nil, p.errf("q", "q = 4w+d needs d in {-1,0,1}")
	}
	X, X2 := F.mmsSets()
	Q := int(q)
	nR := 2 * Q * Q
	if nR*int(hp) > MaxHosts {
		return nil, fmt.Errorf("%s: %d routers x %d hosts: more than %d hosts", p.kind, nR, hp, MaxHosts)
	}
	b := NewBuilder(p.spec)
	nH := nR * int(hp)
	for i := 0; i < nH; i++ {
		b.AddNode("host"+strconv.Itoa(i), RoleHost, -1, i/int(hp)/Q, 0)
	}
	r0 := nH
	for r := 0; r < nR; r++ {
		b.AddNode("router"+strconv.Itoa(r), RoleLeaf, 0, r/Q, o.switchLat)
	}
	for i := 0; i < nH; i++ {
		b.Connect(i, r0+i/int(hp), o.hostMbps*1_000_000, o.hostLat)
	}
	rate := o.localMbps * 1_000_000
	id := func(s, x, y int) int { return r0 + s*Q*Q + x*Q + y }
	for x := 0; x < Q; x++ {
		for y := 0; y < Q; y++ {
			for y2 := y + 1; y2 < Q; y2++ {
				if X[F.sub(y, y2)] {
					b.connectRouters(id(0, x, y), id(0, x, y2), rate, o.localLat, false)
				}
				if X2[F.sub(y, y2)] {
					b.connectRouters(id(1, x, y), id(1, x, y2), rate, o.localLat, false)
				}
			}
		}
	}
	for x := 0; x < Q; x++ {
		for y := 0; y < Q; y++ {
			for m := 0; m < Q; m++ {
				c := F.sub(y, F.mul(m, x)) // y = m*x + c
				b.connectRouters(id(0, x, y), id(1, m, c), o.globalMbps*1_000_000, o.globalLat, true)
			}
		}
	}
	return b.Fabric(1, Q*int(hp))
}

// gf is a small finite field GF(p^k): elements are 0..q-1, read as the
// base-p digits of a polynomial's coefficients, with operation tables.
type gf struct {
	q, p, k    int
	addT, mulT []uint8 // [a*q+b]
	neg        []uint8
}

func (F *gf) sub(a, b int) int { return int(F.addT[a*F.q+int(F.neg[b])]) }
func (F *gf) mul(a, b int) int { return int(F.mulT[a*F.q+b]) }

// newGF builds GF(q) for a prime power q < 256: arithmetic modulo p for a
// prime, else polynomials over GF(p) modulo the first monic irreducible
// polynomial of degree k (GF(9) = GF(3)[x]/(x^2+1)).
func newGF(q int) (*gf, error) {
	p, k := 0, 0
	for d := 2; d <= q; d++ {
		if q%d == 0 {
			p = d
			break
		}
	}
	for n := q; n > 1; n /= p {
		if n%p != 0 {
			return nil, fmt.Errorf("%d is not a prime power", q)
		}
		k++
	}
	if q >= 256 {
		return nil, fmt.Errorf("%d is too large", q)
	}
	F := &gf{q: q, p: p, k: k, addT: make([]uint8, q*q), mulT: make([]uint8, q*q), neg: make([]uint8, q)}
	digits := func(a int) []int {
		d := make([]int, k)
		for i := range d {
			d[i] = a % p
			a /= p
		}
		return d
	}
	num := func(d []int) int {
		v := 0
		for i := len(d) - 1; i >= 0; i-- {
			v = v*p + d[i]
		}
		return v
	}
	// polyMul multiplies a and b modulo the monic polynomial x^k + m(x)
	// (m given by its k low coefficients).
	polyMul := func(a, b, m []int) []int {
		prod := make([]int, 2*k)
		for i, x := range a {
			for j, y := range b {
				prod[i+j] = (prod[i+j] + x*y) % p
			}
		}
		for i := 2*k - 1; i >= k; i-- {
			c := prod[i]
			if c == 0 {
				continue
			}
			prod[i] = 0
			for j := 0; j < k; j++ { // x^k = -m(x)
				prod[i-k+j] = ((prod[i-k+j]-c*m[j])%p + p) % p
			}
		}
		return prod[:k]
	}
	var mod []int
	if k > 1 {
		// The first m with x^k + m(x) irreducible, tested directly: the
		// quotient ring has no zero divisors.
		for mv := 0; mv < q && mod == nil; mv++ {
			m := digits(mv)
			ok := true
			for a := 1; a < q && ok; a++ {
				for b := 1; b < q; b++ {
					if num(polyMul(digits(a), digits(b), m)) == 0 {
						ok = false
						break
					}
				}
			}
			if ok {
				mod = m
			}
		}
	}
	for a := 0; a < q; a++ {
		da := digits(a)
		nd := make([]int, k)
		for i := range da {
			nd[i] = (p - da[i]) % p
		}
		F.neg[a] = uint8(num(nd))
		for b := 0; b < q; b++ {
			db := digits(b)
			s := make([]int, k)
			for i := range s {
				s[i] = (da[i] + db[i]) % p
			}
			F.addT[a*q+b] = uint8(num(s))
			if k == 1 {
				F.mulT[a*q+b] = uint8(a * b % p)
			} else {
				F.mulT[a*q+b] = uint8(num(polyMul(da, db, mod)))
			}
		}
	}
	return F, nil
}

// primitive returns a generator of GF(q)'s multiplicative group.
func (F *gf) primitive() int {
	for e := 2; e < F.q; e++ {
		x, n := e, 1
		for x != 1 {
			x = F.mul(x, e)
			n++
		}
		if n == F.q-1 {
			return e
		}
	}
	return 1 // not reached for q >= 3
}

// mmsSets returns the MMS generator sets X and X' as membership tables.
func (F *gf) mmsSets() (X, X2 []bool) {
	q := F.q
	var w, d int
	switch q % 4 {
	case 1:
		w, d = (q-1)/4, 1
	case 0:
		w, d = q/4, 0
	default: // 3
		w, d = (q+1)/4, -1
	}
	xi := F.primitive()
	pow := make([]int, q-1)
	pow[0] = 1
	for i := 1; i < q-1; i++ {
		pow[i] = F.mul(pow[i-1], xi)
	}
	X, X2 = make([]bool, q), make([]bool, q)
	switch d {
	case 1: // X: even powers up to q-3, X': odd up to q-2
		for i := 0; i <= q-3; i += 2 {
			X[pow[i]], X2[pow[i+1]] = true, true
		}
	case 0: // X: even powers up to q-2, X': odd up to q-1
		for i := 0; i <= q-2; i += 2 {
			X[pow[i]] = true
			X2[pow[(i+1)%(q-1)]] = true
		}
	default: // d = -1: X: even up to 2w-2 and odd from 2w-1 to 4w-3; X' the rest
		for i := 0; i <= 2*w-2; i += 2 {
			X[pow[i]], X2[pow[(i+1)%(q-1)]] = true, true
		}
		for i := 2*w - 1; i <= 4*w-3; i += 2 {
			X[pow[i]], X2[pow[(i+1)%(q-1)]] = true, true
		}
	}
	return X, X2
}
