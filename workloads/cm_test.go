package workloads

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseCMBasic(t *testing.T) {
	m, err := LoadCM("testdata/basic.cm")
	if err != nil {
		t.Fatal(err)
	}
	want := &Matrix{Name: "testdata/basic.cm", Hosts: 4, Flows: []Flow{
		{ID: 0, Src: 0, Dst: 1, Size: 1000, Start: 0, After: -1},
		{ID: 1, Src: 1, Dst: 2, Size: 2000, Start: 2500000, After: -1},
		{ID: 6, Src: 2, Dst: 3, Size: 3, Start: 1, After: -1},
		{ID: 3, Src: 3, Dst: 0, Size: 4096, Start: 0, After: -1},
	}}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("got  %+v\nwant %+v", m, want)
	}
}

func TestParseCMTriggers(t *testing.T) {
	m, err := LoadCM("testdata/chain.cm")
	if err != nil {
		t.Fatal(err)
	}
	want := []Flow{
		{ID: 0, Src: 0, Dst: 1, Size: 100, After: -1},
		{ID: 1, Src: 1, Dst: 2, Size: 200, After: 0},
		{ID: 2, Src: 2, Dst: 3, Size: 300, Start: 1e6, After: 0},
		{ID: 3, Src: 3, Dst: 4, Size: 400, After: 1},
	}
	if !reflect.DeepEqual(m.Flows, want) {
		t.Fatalf("got  %+v\nwant %+v", m.Flows, want)
	}
	var buf bytes.Buffer
	if err := WriteCM(&buf, m); err != nil {
		t.Fatal(err)
	}
	const golden = `# fabricbench traffic matrix testdata/chain.cm
Nodes 8
Connections 4
Triggers 2
0->1 id 1 start 0 size 100 send_done_trigger 1
1->2 id 2 trigger 1 size 200 send_done_trigger 2
2->3 id 3 trigger 1 start 1 size 300
3->4 id 4 trigger 2 size 400
trigger id 1 oneshot
trigger id 2 oneshot
`
	if buf.String() != golden {
		t.Fatalf("WriteCM:\n%s\nwant:\n%s", buf.String(), golden)
	}
}

// roundTrip writes m and parses it back under the same name.
func roundTrip(t *testing.T, m *Matrix) *Matrix {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteCM(&buf, m); err != nil {
		t.Fatal(err)
	}
	back, err := ParseCM(m.Name, &buf)
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if !reflect.DeepEqual(back, m) {
		t.Fatalf("round trip of %s changed the matrix", m.Name)
	}
	return back
}

func TestWriteCMRoundTrip(t *testing.T) {
	f := leafSpine(t, 4, 2, 2)
	inc, err := Incast(f, 5, -1, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	a2a := AllToAll(f, 1<<20, 3, 2)
	// Start times with sub-microsecond parts and delays after predecessors.
	for i := range a2a.Flows {
		if i%7 == 0 {
			a2a.Flows[i].Start = int64(i)*1234567 + 1
		}
	}
	odd := &Matrix{Name: "odd ids\nand a newline", Hosts: 3, Flows: []Flow{
		{ID: 41, Src: 2, Dst: 0, Size: 1<<40 + 1, Start: 3600e12 - 3, After: -1}, // 3600e12 ps: units.MaxPs,
		{ID: 0, Src: 0, Dst: 1, Size: 1, Start: 999999, After: 41},
		{ID: 2147483646, Src: 1, Dst: 2, Size: 7, After: 0},
	}}
	for _, m := range []*Matrix{Permutation(f, 2e6, 1), inc, AllToAll(f, 5, 0, 1), a2a, odd} {
		roundTrip(t, m)
	}
}

func TestWriteCMErrors(t *testing.T) {
	for _, tc := range []struct {
		m    *Matrix
		want string
	}{
		{&Matrix{Name: "neg", Hosts: 2, Flows: []Flow{{ID: -2, Src: 0, Dst: 1, Size: 1, After: -1}}},
			"write .cm: neg: flow ID -2 out of range [0, 2147483646]"},
		{&Matrix{Name: "big", Hosts: 2, Flows: []Flow{{ID: 1 << 31, Src: 0, Dst: 1, Size: 1, After: -1}}},
			"write .cm: big: flow ID 2147483648 out of range [0, 2147483646]"},
		{&Matrix{Name: "bad", Hosts: 2, Flows: []Flow{{ID: 0, Src: 0, Dst: 2, Size: 1, After: -1}}},
			"write .cm: bad: flow 0: destination host 2 out of range [0, 2)"},
		{&Matrix{Name: "empty", Hosts: 2}, "write .cm: empty: no flows"},
		{&Matrix{Name: "hosts", Hosts: 1<<20 + 1, Flows: []Flow{{ID: 0, Src: 0, Dst: 1, Size: 1, After: -1}}},
			"write .cm: hosts: 1048577 hosts, more than the .cm limit of 1048576"},
	} {
		if err := WriteCM(&bytes.Buffer{}, tc.m); err == nil || err.Error() != tc.want {
			t.Errorf("WriteCM(%s) = %v, want %q", tc.m.Name, err, tc.want)
		}
	}
}

func TestParseCMErrors(t *testing.T) {
	const hdr = "Nodes 4\nConnections 1\n"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"perm.cm", "Nodes 128\nConnections 2\n\n# comment\n0->1 size 1\n\n0->130 size 5\n",
			"perm.cm:7: destination host 130 out of range [0, 128)"},
		{"x.cm", "Nodes 4\nConnections abc\n", `x.cm:2: "Connections" expects an integer, got "abc"`},
		{"x.cm", "Nodes 4\nConnections 4\n0->1 size 1\n1->2 size 1\n2->3 size 1\n",
			"x.cm: header says Connections 4 but 3 connection lines follow"},
		{"x.cm", "Nodes 4\nConnections 2\n0->1 size 1\n",
			"x.cm: header says Connections 2 but 1 connection line follows"},
		{"x.cm", "Nodes 4\nConnections 2\n0->1 size 1\n1->2 size 1\n2->3 size 1\n3->0 size 1\n",
			"x.cm: header says Connections 2 but 4 connection lines follow"},
		{"x.cm", "", "x.cm: empty file"},
		{"x.cm", "# nothing\n\n", `x.cm: missing "Nodes" header`},
		{"x.cm", "Nodes 4\n", `x.cm: missing "Connections" header`},
		{"x.cm", "Nodes 4\nConnections 0\n", "x.cm: no connections"},
		{"", "Nodes 4\nConnections 0\n", "connection matrix: no connections"},
		{"x.cm", "Nodes 2000000\n", `x.cm:1: "Nodes" must be in [1, 1048576], got 2000000`},
		{"x.cm", "Nodes 0\n", `x.cm:1: "Nodes" must be in [1, 1048576], got 0`},
		{"x.cm", "Connections 99999999999999999999999\n", `x.cm:1: "Connections" must be in [0, 16777216], got 99999999999999999999999`},
		{"x.cm", "Nodes\n", `x.cm:1: "Nodes" expects an integer, got nothing`},
		{"x.cm", "Nodes 4 5\n", `x.cm:1: unexpected "5" after "Nodes 4"`},
		{"x.cm", "Nodes 4\nNodes 5\n", `x.cm:2: "Nodes" given twice (first on line 1)`},
		{"x.cm", "Nodes 4\n0->1 size 1\n", `x.cm:2: connection before the "Connections" header`},
		{"x.cm", "Connections 1\n0->1 size 1\n", `x.cm:2: connection before the "Nodes" header`},
		{"x.cm", hdr + "0->1 size 1\nNodes 4\n", `x.cm:4: "Nodes" header after the first connection or trigger line`},
		{"x.cm", hdr + "-1->2 size 1\n", "x.cm:3: source host -1 out of range [0, 4)"},
		{"x.cm", hdr + "a->2 size 1\n", `x.cm:3: source host "a" is not an integer`},
		{"x.cm", hdr + "1->2->3 size 1\n", `x.cm:3: destination host "2->3" is not an integer`},
		{"x.cm", hdr + "1-> 2 size 1\n", `x.cm:3: malformed connection "1->" (expected "src->dst" without spaces)`},
		{"x.cm", hdr + "2->2 size 1\n", "x.cm:3: source and destination are both host 2"},
		{"x.cm", hdr + "0->1 size 1 addon\n", `x.cm:3: unknown connection attribute "addon" (expected id, size, start, trigger, send_done_trigger or prio)`},
		{"x.cm", hdr + "0->1 size 1 recv_done_trigger 3\n", "x.cm:3: recv_done_trigger is not supported: a fabricbench flow starts when its predecessor completes at the sender (use send_done_trigger)"},
		{"x.cm", hdr + "0->1 start 0\n", `x.cm:3: connection has no "size"`},
		{"x.cm", hdr + "0->1 size\n", `x.cm:3: "size" expects a value`},
		{"x.cm", hdr + "0->1 size 1 size 2\n", `x.cm:3: "size" given twice`},
		{"x.cm", hdr + "0->1 size 0\n", `x.cm:3: "size" expects a positive integer (bytes), got "0"`},
		{"x.cm", hdr + "0->1 size 2MB\n", `x.cm:3: "size" expects a positive integer (bytes), got "2MB"`},
		{"x.cm", hdr + "0->1 size 1 start 1.0000001\n", "x.cm:3: start time 1.0000001 µs is not a whole number of picoseconds"},
		{"x.cm", hdr + "0->1 size 1 start -1\n", `x.cm:3: "start" expects a non-negative decimal time in microseconds, got "-1"`},
		{"x.cm", hdr + "0->1 size 1 start 1e3\n", `x.cm:3: "start" expects a non-negative decimal time in microseconds, got "1e3"`},
		{"x.cm", hdr + "0->1 size 1 start 99999999999999\n", "x.cm:3: start time 99999999999999 µs is too large (at most 3600000000 µs)"},
		{"x.cm", hdr + "0->1 size 99999999999999999999\n", "x.cm:3: size 99999999999999999999 bytes is too large (at most 1125899906842624)"},
		{"x.cm", hdr + "0->1 size 1 prio high\n", `x.cm:3: "prio" expects an integer, got "high"`},
		{"x.cm", hdr + "0->1 size 1 id 0\n", `x.cm:3: "id" expects an integer in [1, 2147483647], got "0"`},
		{"x.cm", "Nodes 4\nConnections 2\n0->1 size 1 id 5\n1->2 size 1 id 5\n", "x.cm:4: connection id 5 already used on line 3"},
		{"x.cm", "Nodes 4\nConnections 2\n0->1 size 1\n1->2 size 1 id 1\n", "x.cm:4: connection id 1 already used on line 3"},
		{"x.cm", "Nodes 4\nConnections 2\nTriggers 1\n0->1 id 1 size 1 start 0\n1->2 id 2 size 1 trigger 3\ntrigger id 4 oneshot\n",
			`x.cm:5: trigger 3 is not declared (add a line "trigger id 3 oneshot")`},
		{"x.cm", "Nodes 4\nConnections 2\nTriggers 1\n0->1 id 1 size 1 send_done_trigger 5\n1->2 id 2 size 1 trigger 4\ntrigger id 4 oneshot\n",
			`x.cm:4: trigger 5 is not declared (add a line "trigger id 5 oneshot")`},
		{"x.cm", "Nodes 4\nConnections 2\nTriggers 1\n0->1 id 1 size 1\n1->2 id 2 size 1 trigger 4\ntrigger id 4 oneshot\n",
			"x.cm:5: trigger 4 is never fired: no connection has send_done_trigger 4"},
		{"x.cm", "Nodes 4\nConnections 3\nTriggers 1\n0->1 size 1 send_done_trigger 4\n1->2 size 1 send_done_trigger 4\n2->3 size 1 trigger 4\ntrigger id 4 oneshot\n",
			"x.cm:5: trigger 4 is also fired by the connection on line 4; a fabricbench flow can wait for one predecessor only"},
		{"x.cm", "Nodes 4\nConnections 2\nTriggers 2\n0->1 size 1 trigger 2 send_done_trigger 1\n1->2 size 1 trigger 1 send_done_trigger 2\ntrigger id 1 oneshot\ntrigger id 2 oneshot\n",
			"x.cm:4: connection id 1 is part of a dependency cycle"},
		{"x.cm", "Nodes 4\nConnections 1\nTriggers 1\n0->1 size 1 trigger 1 send_done_trigger 1\ntrigger id 1 oneshot\n",
			"x.cm:4: connection id 1 is part of a dependency cycle"},
		{"x.cm", "Nodes 4\nConnections 3\nTriggers 1\n0->1 size 1 send_done_trigger 4\n1->2 size 1 trigger 4\n2->3 size 1 trigger 4\ntrigger id 4 multishot\n",
			"x.cm:6: multishot trigger 4 has several waiting connections; fabricbench supports one (or use oneshot)"},
		{"x.cm", "Nodes 4\nConnections 2\nTriggers 1\n0->1 size 1 send_done_trigger 4\n1->2 size 1 trigger 4\ntrigger id 4 barrier count 2\n",
			"x.cm:5: barrier trigger 4 needs count 1 (one predecessor), got 2"},
		{"x.cm", hdr + "0->1 size 1\ntrigger id 4 oneshot\n", `x.cm: 1 trigger line but no "Triggers" header`},
		{"x.cm", "Nodes 4\nConnections 1\nTriggers 2\n0->1 size 1\ntrigger id 4 oneshot\n", "x.cm: header says Triggers 2 but 1 trigger line follows"},
		{"x.cm", "Nodes 4\nConnections 1\nTriggers 2\n0->1 size 1\ntrigger id 4 oneshot\ntrigger id 4 oneshot\n", "x.cm:6: trigger 4 declared twice (first on line 5)"},
		{"x.cm", hdr + "trigger oneshot\n", `x.cm:3: trigger has no "id"`},
		{"x.cm", hdr + "trigger id 3\n", "x.cm:3: trigger 3 has no type (oneshot, multishot or barrier)"},
		{"x.cm", hdr + "trigger id 3 oneshot barrier\n", `x.cm:3: trigger has two types, "oneshot" and "barrier"`},
		{"x.cm", hdr + "trigger id 3 daily\n", `x.cm:3: unknown trigger attribute "daily" (expected id, oneshot, multishot, barrier or count)`},
		{"x.cm", hdr + "trigger id 3 barrier count -1\n", `x.cm:3: trigger "count" expects a non-negative integer, got "-1"`},
		{"x.cm", "Nodes 4\nFailures 1\n", `x.cm:2: link failures ("Failures") are not supported`},
		{"x.cm", hdr + "hello world\n", `x.cm:3: unrecognized line starting with "hello" (expected Nodes, Connections, Triggers, a connection "src->dst ..." or "trigger id ...")`},
		{"x.cm", hdr + "0->1 size 1" + strings.Repeat(" ", 70000) + "\n", "x.cm:3: line longer than 65536 bytes"},
	} {
		_, err := ParseCM(tc.name, strings.NewReader(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseCM(%q, %q):\n got  %v\n want %s", tc.name, tc.in, err, tc.want)
		}
	}
}

func TestParseCMLenient(t *testing.T) {
	// CRLF line ends, tabs, comments after headers, no start.
	in := "Nodes 3\r\n\tConnections 1 # one\r\n\r\n2->0\tsize 5\r\n"
	m, err := ParseCM("crlf.cm", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if want := []Flow{{ID: 0, Src: 2, Dst: 0, Size: 5, After: -1}}; !reflect.DeepEqual(m.Flows, want) {
		t.Fatalf("%+v", m.Flows)
	}
}

func TestLoadCMMissing(t *testing.T) {
	if _, err := LoadCM("testdata/does-not-exist.cm"); !os.IsNotExist(err) {
		t.Fatalf("got %v", err)
	}
}

// TestHtsimReference loads the reference matrices shipped with the htsim
// figures, when they are present next to the repository.
func TestHtsimReference(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "reference", "htsim")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("htsim reference files not available: %v", err)
	}
	for _, tc := range []struct {
		file  string
		flows int
		check func(t *testing.T, m *Matrix)
	}{
		{"one128.cm", 1, func(t *testing.T, m *Matrix) {
			if f := m.Flows[0]; f.Src != 0 || f.Dst != 127 || f.ID != 0 {
				t.Errorf("flow %+v", f)
			}
		}},
		{"perm_128n_128c_2MB.cm", 128, func(t *testing.T, m *Matrix) {
			src, dst := make([]int, 128), make([]int, 128)
			for _, f := range m.Flows {
				src[f.Src]++
				dst[f.Dst]++
			}
			for h := range 128 {
				if src[h] != 1 || dst[h] != 1 {
					t.Errorf("host %d sends %d and receives %d flows", h, src[h], dst[h])
				}
			}
		}},
		{"incast32.cm", 32, func(t *testing.T, m *Matrix) {
			senders := map[int]bool{}
			for _, f := range m.Flows {
				senders[f.Src] = true
				if f.Dst != m.Flows[0].Dst {
					t.Errorf("flow %+v has another destination", f)
				}
			}
			if len(senders) != 32 {
				t.Errorf("%d distinct senders", len(senders))
			}
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("not available: %v", err)
			}
			m, err := LoadCM(path)
			if err != nil {
				t.Fatal(err)
			}
			if m.Hosts != 128 || len(m.Flows) != tc.flows {
				t.Fatalf("%d hosts, %d flows; want 128 and %d", m.Hosts, len(m.Flows), tc.flows)
			}
			for i, f := range m.Flows {
				if f.Size != 2000000 || f.Start != 0 || f.After != -1 || f.ID != i {
					t.Errorf("flow %+v", f)
				}
			}
			tc.check(t, m)
			roundTrip(t, m)
		})
	}
}

// BenchmarkCMRoundTrip writes and parses a 65,280-flow all-to-all with a
// window, which exercises the trigger paths.
func BenchmarkCMRoundTrip(b *testing.B) {
	m := AllToAll(leafSpine(b, 0, 8, 32), 1<<20, 4, 1)
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := WriteCM(&buf, m); err != nil {
			b.Fatal(err)
		}
		if _, err := ParseCM(m.Name, &buf); err != nil {
			b.Fatal(err)
		}
	}
}
