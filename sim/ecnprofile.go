package sim

// This file is the ECN marking profile (Config.ECNProfile), a probe on the
// egress stage's marking decision (queue.go, dequeueData): for every data
// packet dequeued with ECN on, the depth of the class queue it leaves
// behind, in buckets of one full packet, and whether it was marked. It is
// what an ECN accuracy test plots (marking probability against queue
// depth) and compares with the configured thresholds. Arrays sized in New.

// maxECNBuckets bounds the profile's buckets (depths beyond the last
// bucket count in it).
const maxECNBuckets = 1 << 14

type ecnProfile struct {
	on           bool
	bucket       int64 // bytes per bucket
	seen, marked []uint64
}

func (s *Sim) buildECNProfile() error {
	if !s.cfg.ECNProfile {
		return nil
	}
	e := &s.ecnp
	e.on, e.bucket = true, s.wire()
	n := int(s.res.QueueBytes/e.bucket) + 2
	if s.cfg.Buffer.SharedBytes > 0 {
		n = int(s.cfg.Buffer.SharedBytes/e.bucket) + 2
	}
	n = min(n, maxECNBuckets)
	e.seen, e.marked = make([]uint64, n), make([]uint64, n)
	return nil
}

// ecnRecord records one marking decision at queue depth q.
func (s *Sim) ecnRecord(q int64, mark bool) {
	e := &s.ecnp
	b := min(int(q/e.bucket), len(e.seen)-1)
	e.seen[b]++
	if mark {
		e.marked[b]++
	}
}

// ECNProfileData is the marking profile of a run: Seen[i] packets were
// dequeued leaving a queue depth in [i*BucketBytes, (i+1)*BucketBytes),
// Marked[i] of them marked; KMin and KMax are the configured thresholds
// in bytes.
type ECNProfileData struct {
	BucketBytes  int64
	KMin, KMax   int64
	Seen, Marked []uint64
}

// ECNProfile returns the run's marking profile (nil without
// Config.ECNProfile).
func (s *Sim) ECNProfile() *ECNProfileData {
	if !s.ecnp.on || len(s.ports) == 0 {
		return nil
	}
	return &ECNProfileData{BucketBytes: s.ecnp.bucket, KMin: s.ports[0].kmin, KMax: s.ports[0].kmax,
		Seen: append([]uint64(nil), s.ecnp.seen...), Marked: append([]uint64(nil), s.ecnp.marked...)}
}
