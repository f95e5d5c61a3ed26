package workloads

import "testing"

func TestIntIndex(t *testing.T) {
	var x intIndex
	// A large key goes to the map; later growth of the slice past it must
	// not hide it.
	x.set(5000, 7)
	for k := range 6000 {
		if k != 5000 {
			x.set(k, int32(k))
		}
	}
	x.set(-3, 1)
	x.set(1<<40, 2)
	for k := range 6000 {
		want := int32(k)
		if k == 5000 {
			want = 7
		}
		if v, ok := x.get(k); !ok || v != want {
			t.Fatalf("get(%d) = %d, %v", k, v, ok)
		}
	}
	if v, ok := x.get(-3); !ok || v != 1 {
		t.Fatalf("get(-3) = %d, %v", v, ok)
	}
	if v, ok := x.get(1 << 40); !ok || v != 2 {
		t.Fatalf("get(1<<40) = %d, %v", v, ok)
	}
	if _, ok := x.get(6000); ok {
		t.Fatal("absent key found")
	}
	if len(x.dense) > 2*x.n+1024 {
		t.Fatalf("slice of %d for %d entries", len(x.dense), x.n)
	}
}
