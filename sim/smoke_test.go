package sim

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/workloads"
)

func kTree(k int) *inventory.Fabric {
	b := inventory.NewBuilder("k")
	rate, lat := int64(100e9), int64(1e6)
	half := k / 2
	var tors, aggs []int
	for p := 0; p < k; p++ {
		for t := 0; t < half; t++ {
			tors = append(tors, b.AddNode(fmt.Sprintf("tor%d", p*half+t), inventory.RoleLeaf, 0, p, 0))
		}
	}
	for p := 0; p < k; p++ {
		for a := 0; a < half; a++ {
			aggs = append(aggs, b.AddNode(fmt.Sprintf("agg%d", p*half+a), inventory.RoleSpine, 1, p, 0))
		}
	}
	var cores []int
	for c := 0; c < half*half; c++ {
		cores = append(cores, b.AddNode(fmt.Sprintf("core%d", c), inventory.RoleCore, 2, -1, 0))
	}
	for h := 0; h < k*k*k/4; h++ {
		n := b.AddNode(fmt.Sprintf("host%d", h), inventory.RoleHost, -1, h/(half*half), 0)
		b.Connect(n, tors[h/half], rate, lat)
	}
	for p := 0; p < k; p++ {
		for t := 0; t < half; t++ {
			for a := 0; a < half; a++ {
				b.Connect(tors[p*half+t], aggs[p*half+a], rate, lat)
			}
		}
		for a := 0; a < half; a++ {
			for l := 0; l < half; l++ {
				b.Connect(aggs[p*half+a], cores[a+half*l], rate, lat)
			}
		}
	}
	f, err := b.Fabric(3, k*k/4)
	if err != nil {
		panic(err)
	}
	return f
}

func TestSmokeOneFlow(t *testing.T) {
	f := kTree(8)
	m := &workloads.Matrix{Hosts: 128, Flows: []workloads.Flow{{ID: 1, Src: 0, Dst: 127, Size: 2000000, After: -1}}}
	tp := transport.DefaultParams()
	tp.MTU = 4086
	s, err := New(Config{Fabric: f, Matrix: m, Transport: tp, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run()
	t.Logf("fct=%.2fus q=%d rtt=%d events=%d pk=%+v", float64(r.Flows[0].FCT)/1e6, r.QueueBytes, r.BaseRTT, r.Events, r.Packets)
}

func loadRefCM(t *testing.T, name string) *workloads.Matrix {
	data, err := os.ReadFile("../../shared/reference/htsim/" + name)
	if err != nil {
		t.Skip(err)
	}
	m := &workloads.Matrix{Hosts: 128}
	for _, ln := range strings.Split(string(data), "\n") {
		var a, b, id, st int
		var sz int64
		if n, _ := fmt.Sscanf(ln, "%d->%d id %d start %d size %d", &a, &b, &id, &st, &sz); n == 5 {
			m.Flows = append(m.Flows, workloads.Flow{ID: id, Src: a, Dst: b, Size: sz, Start: int64(st) * 1e6, After: -1})
		}
	}
	return m
}

func runRef(t *testing.T, cm string, lb transport.LBKind, trim bool) *Result {
	f := kTree(8)
	m := loadRefCM(t, cm)
	tp := transport.DefaultParams()
	tp.MTU = 4086
	tp.LB = lb
	tp.Trimming = trim
	s, err := New(Config{Fabric: f, Matrix: m, Transport: tp, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run()
	var fcts []float64
	for _, fr := range r.Flows {
		fcts = append(fcts, float64(fr.FCT)/1e6)
	}
	sort.Float64s(fcts)
	q := func(p float64) float64 { return fcts[int(p*float64(len(fcts)-1)+0.5)] }
	t.Logf("%s lb=%v trim=%v: min %.1f p50 %.1f p99 %.1f max %.1f  wall=%v events=%d pk=%+v incomplete=%d", cm, lb, trim, fcts[0], q(.5), q(.99), fcts[len(fcts)-1], r.Wall, r.Events, r.Packets, r.Incomplete)
	return r
}

func TestSmokeRef(t *testing.T) {
	runRef(t, "perm_128n_128c_2MB.cm", transport.REPS, true)
	runRef(t, "perm_128n_128c_2MB.cm", transport.OPS, true)
	runRef(t, "perm_128n_128c_2MB.cm", transport.ECMP, true)
	runRef(t, "incast32.cm", transport.REPS, true)
	runRef(t, "incast32.cm", transport.OPS, true)
	runRef(t, "incast32.cm", transport.REPS, false)
}
