package transport

// rng is a small deterministic generator (SplitMix64). Each flow owns one,
// seeded from the run seed and the flow ID, so results do not depend on the
// order in which flows run.
type rng struct{ s uint64 }

func newRNG(seed uint64, stream uint64) rng {
	r := rng{s: seed ^ (stream * 0x9E3779B97F4A7C15)}
	r.next()
	return r
}

func (r *rng) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// intn returns a value in [0, n).
func (r *rng) intn(n uint32) uint32 {
	return uint32((r.next() >> 32) * uint64(n) >> 32)
}
