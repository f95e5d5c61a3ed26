package workloads

// intIndex maps int keys to int32 values. Keys in [0, 2n+1024), n being the
// number of entries, live in a slice and the others in a map, so that the
// usual dense ids (0..n-1 or 1..n) avoid hashing while sparse or hostile
// keys cannot force a large allocation.
type intIndex struct {
	dense  []int32 // value+1; 0 means absent
	sparse map[int]int32
	n      int
}

// get returns the value stored for k.
func (x *intIndex) get(k int) (int32, bool) {
	if k >= 0 && k < len(x.dense) {
		if v := x.dense[k]; v != 0 {
			return v - 1, true
		}
	}
	if x.sparse == nil {
		return 0, false
	}
	// A key stored in the map before the slice grew past it stays there.
	v, ok := x.sparse[k]
	return v, ok
}

// set stores v (>= 0, < 2^31-1) for k, which must not be present yet.
func (x *intIndex) set(k int, v int32) {
	x.n++
	if limit := 2*x.n + 1024; k >= 0 && k < limit {
		if k >= len(x.dense) {
			size := min(max(k+1, 2*len(x.dense)), limit)
			grown := make([]int32, size)
			copy(grown, x.dense)
			x.dense = grown
		}
		x.dense[k] = v + 1
		return
	}
	if x.sparse == nil {
		x.sparse = make(map[int]int32)
	}
	x.sparse[k] = v
}
