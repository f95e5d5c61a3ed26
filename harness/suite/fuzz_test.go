package suite

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/internal/fileerr"
	"github.com/fabricbench/fabricbench/inventory"

	"github.com/fabricbench/fabricbench/internal/fuzzbound"
)

// smallSpec builds only small fabrics, so that fuzzed specs cannot make
// the fuzzer spend its time building huge trees.
func smallSpec(spec string) (*inventory.Fabric, error) {
	for _, f := range strings.FieldsFunc(spec, func(r rune) bool { return r < '0' || r > '9' }) {
		if n, err := strconv.Atoi(f); err != nil || n > 64 {
			return nil, errors.New("fuzz: spec too large")
		}
	}
	return inventory.ParseSpec(spec)
}

const idChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-=,"

// FuzzLoad checks that Parse never panics, that every problem names the
// file, and that a suite that parses always expands into valid points.
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, doc := range []string{
		base,
		base + "colour: red\n    sise: 1\n",
		base + "faults:\n  - {kind: flap, link: leaf0-spine1/0, period: 10us, count: 3, until: 1ms}\n",
		base + "kpis:\n  - {metric: m, scope: perm, max: 1}\nmatrix:\n  jobs[name=perm].hosts: [all, 2, [host0, host3]]\n  features.ecn: [{kmin: 0.1}, ~]\n",
		base + "x: &a {b: *a}\n",
		"a: &a [*a]\n",
		"<<: {seed: 3}\n" + base,
		base + "features:\n  <<: [{queue: bdp}, {queue: 1MiB}]\n",
		"",
		"---\n...\n",
		"{",
		"!!binary abc: 1\n",
	} {
		f.Add([]byte(doc))
	}
	saved := parseSpec
	parseSpec = smallSpec
	f.Cleanup(func() { parseSpec = saved })

	f.Fuzz(func(t *testing.T, data []byte) {
		var s *Suite
		var err error
		fuzzbound.Default(t, func() { s, err = Parse("testdata/fuzz.yaml", data) })
		if err != nil {
			if s != nil {
				t.Fatal("both a suite and an error")
			}
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 || len(list) > fileerr.MaxErrors+1 {
				t.Fatalf("error %T with %d entries: %v", err, len(list), err)
			}
			for _, e := range list {
				if e.File != "testdata/fuzz.yaml" || e.Msg == "" || !strings.HasPrefix(e.Error(), "testdata/fuzz.yaml") {
					t.Fatalf("bad error entry %+v", e)
				}
			}
			return
		}
		if s.Name == "" || len(s.Jobs) == 0 || s.Transport.MTU < minMTU {
			t.Fatalf("accepted an invalid suite: %+v", s)
		}
		pts, err := s.Points()
		if err != nil {
			t.Fatalf("Parse accepted the suite but Points fails: %v", err)
		}
		if len(pts) < 1 || len(pts) > MaxPoints {
			t.Fatalf("%d points", len(pts))
		}
		ids := map[string]bool{}
		for _, p := range pts {
			if p.ID == "" || ids[p.ID] || len(p.ID) > maxIDLen || strings.Trim(p.ID, idChars) != "" || p.Suite == nil || p.Suite.Matrix != nil {
				t.Fatalf("bad point %q %+v", p.ID, p.Suite)
			}
			ids[p.ID] = true
			if len(p.Params) != len(s.Matrix) {
				t.Fatalf("point %s: params %v for matrix %v", p.ID, p.Params, s.Matrix)
			}
		}
	})
}
