package workloads

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestParseSpec(t *testing.T) {
	f := leafSpine(t, 4, 2, 2)
	m, err := ParseSpec(" permutation : size = 2MiB ", f, 3)
	if err != nil {
		t.Fatal(err)
	}
	p := Permutation(f, 2<<20, 3)
	p.Name = "permutation : size = 2MiB"
	if !reflect.DeepEqual(m, p) {
		t.Fatal("spec and generator disagree")
	}

	m, err = ParseSpec("incast:senders=4,size=2MB,dst=5,start=10us", f, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Flows) != 4 || m.Flows[0].Dst != 5 || m.Flows[0].Size != 2e6 || m.Flows[0].Start != 10e6 {
		t.Fatalf("incast: %+v", m.Flows)
	}

	// Hosts by name, as suites give them (issue 19): the same matrix.
	byName, err := ParseSpec("incast:senders=4,size=2MB,dst=host5,start=10us", f, 3)
	if err != nil {
		t.Fatal(err)
	}
	byName.Name = m.Name
	if !reflect.DeepEqual(byName, m) {
		t.Fatalf("dst=host5 and dst=5 differ: %+v", byName.Flows)
	}

	m, err = ParseSpec("alltoall:size=1MiB,k=4,start=1.5us", f, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, fl := range m.Flows {
		if want := map[bool]int64{true: 0, false: 1.5e6}[fl.After >= 0]; fl.Start != want {
			t.Fatalf("flow %+v: start %d, want %d", fl, fl.Start, want)
		}
	}
	checkAllToAll(t, stripStart(AllToAll(f, 1<<20, 4, 3)), 16, 4, 1<<20)

	for _, tc := range []struct{ spec, want string }{
		{"", `workload "": missing workload kind (valid kinds: permutation, incast, alltoall, groupshift, unf, adv1, adv2, monitored; or the path of a .cm file)`},
		{"perm:size=1", `workload "perm:size=1": unknown workload kind "perm" (valid kinds: permutation, incast, alltoall, groupshift, unf, adv1, adv2, monitored; or the path of a .cm file)`},
		{"permutation", `workload "permutation": permutation needs key "size" (valid keys: size, start)`},
		{"permutation:", `workload "permutation:": permutation needs key "size" (valid keys: size, start)`},
		{"permutation:sz=1", `workload "permutation:sz=1": unknown key "sz" for permutation (valid keys: size, start)`},
		{"permutation:size=1,,start=1us", `workload "permutation:size=1,,start=1us": empty parameter (expected key=value; valid keys: size, start)`},
		{"permutation:size", `workload "permutation:size": parameter "size" is not key=value (valid keys: size, start)`},
		{"permutation:size=", `workload "permutation:size=": key "size" has no value`},
		{"permutation:size=1,size=2", `workload "permutation:size=1,size=2": key "size" given twice`},
		{"permutation:size=0", `workload "permutation:size=0": key "size" must be positive, got "0"`},
		{"permutation:size=2XB", `workload "permutation:size=2XB": key "size": invalid size "2XB": unknown unit "XB" (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)`},
		{"permutation:size=1,start=5", `workload "permutation:size=1,start=5": key "start": invalid duration "5": missing unit (use ps, ns, us, µs, ms or s)`},
		{"incast:size=1", `workload "incast:size=1": incast needs key "senders" (valid keys: senders, size, dst, start)`},
		{"incast:senders=16,size=1", `workload "incast:senders=16,size=1": key "senders" expects an integer in [1, 15], got "16"`},
		{"incast:senders=x,size=1", `workload "incast:senders=x,size=1": key "senders" expects an integer in [1, 15], got "x"`},
		{"incast:senders=2,size=1,dst=16", `workload "incast:senders=2,size=1,dst=16": key "dst" expects a host number in [0, 15] or a host name (host0..host15), got "16"`},
		{"incast:senders=2,size=1,dst=host16", `workload "incast:senders=2,size=1,dst=host16": key "dst" expects a host number in [0, 15] or a host name (host0..host15), got "host16"`},
		{"incast:senders=2,size=1,dst=spine1", `workload "incast:senders=2,size=1,dst=spine1": key "dst": spine1 is a spine, not a host (want a host number in [0, 15] or a host name (host0..host15))`},
		{"incast:senders=2,size=1,k=3", `workload "incast:senders=2,size=1,k=3": unknown key "k" for incast (valid keys: senders, size, dst, start)`},
		{"alltoall:size=1,k=-1", `workload "alltoall:size=1,k=-1": key "k" expects an integer in [0, 2147483647], got "-1"`},
	} {
		if _, err := ParseSpec(tc.spec, f, 1); err == nil || err.Error() != tc.want {
			t.Errorf("ParseSpec(%q):\n got  %v\n want %s", tc.spec, err, tc.want)
		}
	}
	if _, err := ParseSpec("permutation:size=1", nil, 1); err == nil || err.Error() != `workload "permutation:size=1": no fabric to generate the workload on` {
		t.Errorf("nil fabric: %v", err)
	}
	one := leafSpine(t, 0, 1, 1)
	if _, err := ParseSpec("alltoall:size=1", one, 1); err == nil || err.Error() != `workload "alltoall:size=1": the fabric has 1 host; alltoall needs at least 2` {
		t.Errorf("one host: %v", err)
	}
	big := leafSpine(t, 0, 1, 5800)
	if _, err := ParseSpec("alltoall:size=1", big, 1); err == nil || err.Error() != `workload "alltoall:size=1": an all-to-all on 5800 hosts has 33634200 flows, more than the limit of 33554432` {
		t.Errorf("huge all-to-all: %v", err)
	}
}

func stripStart(m *Matrix) *Matrix {
	for i := range m.Flows {
		m.Flows[i].Start = 0
	}
	return m
}

func TestLoad(t *testing.T) {
	f := leafSpine(t, 0, 2, 2) // 4 hosts, like testdata/basic.cm
	m, err := Load("testdata/basic.cm", f, 1)
	if err != nil || len(m.Flows) != 4 {
		t.Fatalf("%v %v", m, err)
	}
	if _, err := Load("testdata/chain.cm", f, 1); err == nil || err.Error() != "testdata/chain.cm: the matrix is for Nodes 8 but the fabric has 4 hosts" {
		t.Errorf("size mismatch: %v", err)
	}
	if _, err := Load("testdata/chain.cm", nil, 1); err != nil {
		t.Errorf("nil fabric skips the check: %v", err)
	}
	// Upper-case extension; missing file.
	dir := t.TempDir()
	data, _ := os.ReadFile("testdata/basic.cm")
	if err := os.WriteFile(filepath.Join(dir, "B.CM"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(filepath.Join(dir, "B.CM"), f, 1); err != nil {
		t.Error(err)
	}
	if _, err := Load(filepath.Join(dir, "none.cm"), f, 1); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
	m, err = Load("alltoall:size=1KiB", f, 1)
	if err != nil || len(m.Flows) != 12 {
		t.Fatalf("spec: %v %v", m, err)
	}
}
