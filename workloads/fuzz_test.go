package workloads

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/internal/fuzzbound"
)

// FuzzParseCM checks that ParseCM never panics, that what it accepts is
// valid, and that it survives a WriteCM/ParseCM round trip unchanged.
func FuzzParseCM(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.cm"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"Nodes 2\nConnections 1\n0->1 size 1\n",
		"Nodes 3\nConnections 2\nTriggers 1\n0->1 id 5 start 0.5 size 9 send_done_trigger 3\n1->2 id 6 trigger 3 start 1 size 2\ntrigger id 3 multishot\n",
		"Nodes 1048576\nConnections 16777216\n",
		"Nodes 4\nConnections 1\n3->0 size 9223372036854775807 start 9223372036854.775807 prio -4\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbound.Default(t, func() {
			m, err := ParseCM("fuzz.cm", bytes.NewReader(data))
			if err != nil {
				if m != nil {
					t.Fatal("matrix and error")
				}
				if !strings.HasPrefix(err.Error(), "fuzz.cm") {
					t.Fatalf("error does not name the file: %v", err)
				}
				return
			}
			if err := m.Validate(); err != nil {
				t.Fatalf("accepted an invalid matrix: %v", err)
			}
			if m.Hosts > maxCMNodes || len(m.Flows) > maxCMConnections {
				t.Fatalf("limits exceeded: %d hosts, %d flows", m.Hosts, len(m.Flows))
			}
			var out bytes.Buffer
			if err := WriteCM(&out, m); err != nil {
				t.Fatalf("WriteCM: %v", err)
			}
			back, err := ParseCM("fuzz.cm", bytes.NewReader(out.Bytes()))
			if err != nil {
				t.Fatalf("re-parse: %v\n%s", err, out.Bytes())
			}
			if !reflect.DeepEqual(back, m) {
				t.Fatalf("round trip changed the matrix:\n%+v\n%+v", m, back)
			}
			var again bytes.Buffer
			if err := WriteCM(&again, back); err != nil || !bytes.Equal(again.Bytes(), out.Bytes()) {
				t.Fatalf("WriteCM is not stable: %v", err)
			}
		})
	})
}

// FuzzParseSpec checks that ParseSpec never panics and that what it
// accepts is a valid matrix for the fabric that round-trips through .cm.
func FuzzParseSpec(f *testing.F) {
	fab := leafSpine(f, 4, 2, 2)
	for _, s := range []string{
		"permutation:size=2MiB",
		"incast:senders=15,size=2MB,dst=5",
		"incast:senders=3,size=1.5KiB,start=10us",
		"alltoall:size=1MiB,k=4",
		"alltoall:size=9223372036854775807,start=9223372036854775807ps",
		" alltoall : size = 1 , k = 0 ",
		"permutation:size=1,start=0.000001us",
		"incast:senders=1,size=1,dst=0,",
	} {
		f.Add(s, uint64(1))
	}
	f.Fuzz(func(t *testing.T, spec string, seed uint64) {
		fuzzbound.Default(t, func() {
			m, err := ParseSpec(spec, fab, seed)
			if err != nil {
				if m != nil {
					t.Fatal("matrix and error")
				}
				return
			}
			if err := m.Validate(); err != nil {
				t.Fatalf("invalid matrix: %v", err)
			}
			if m.Hosts != fab.NumHosts() || m.Name != strings.TrimSpace(spec) {
				t.Fatalf("hosts %d, name %q", m.Hosts, m.Name)
			}
			again, err := ParseSpec(spec, fab, seed)
			if err != nil || !reflect.DeepEqual(again, m) {
				t.Fatalf("not deterministic: %v", err)
			}
			var out bytes.Buffer
			if err := WriteCM(&out, m); err != nil {
				t.Fatalf("WriteCM: %v", err)
			}
			back, err := ParseCM(m.Name, &out)
			if err != nil || !reflect.DeepEqual(back, m) {
				t.Fatalf("round trip: %v", err)
			}
		})
	})
}
