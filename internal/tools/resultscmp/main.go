// Command resultscmp compares two trees of fabricbench outputs made by
// scripts/compare-results.sh from the same inputs with two builds, and
// prints every difference that is not a matter of when or how fast the
// run went. It exits 0 when there is none, 1 when there are differences,
// 2 on bad usage.
//
// A tree holds one directory per example suite (a results directory of
// `fabricbench run`, with its exit status in the file rc) and one per
// `fabricbench sim` command (its --json file sim.json, its standard output
// stdout and error stderr, and its exit status rc). Compared:
//   - every results.json, less the fields that record the wall clock:
//     started, finished, every run's wall_s and its telemetry's epoch_ns
//     and run_tag (the run tag holds the start time);
//   - every run's flows.csv and plots.json, byte for byte;
//   - every sim.json, less wall_s, events_per_s and peak_rss_bytes of its
//     summary, and its stdout less the engine line (wall time, speed, RSS);
//   - every exit status.
//
// telemetry.csv.gz is not compared: its timestamps start at the run's
// wall-clock epoch; junit.xml and report.html are rendered from
// results.json and the plot data.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/fabricbench/fabricbench/results"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: resultscmp BEFORE AFTER")
		os.Exit(2)
	}
	diffs, n, err := compareTrees(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "resultscmp:", err)
		os.Exit(2)
	}
	for _, d := range diffs {
		fmt.Println(d)
	}
	if len(diffs) > 0 {
		fmt.Printf("%d differences in %d files compared\n", len(diffs), n)
		os.Exit(1)
	}
	fmt.Printf("identical: %d files compared (less wall-clock times)\n", n)
}

// simVolatile are the sim --json summary fields that measure the machine.
var simVolatile = map[string]bool{"wall_s": true, "events_per_s": true, "peak_rss_bytes": true}

// compareTrees compares every compared file of a with its namesake in b,
// and reports files only one side has.
func compareTrees(a, b string) ([]string, int, error) {
	fa, err := files(a)
	if err != nil {
		return nil, 0, err
	}
	fb, err := files(b)
	if err != nil {
		return nil, 0, err
	}
	var diffs []string
	n := 0
	for _, rel := range union(fa, fb) {
		switch {
		case !fa[rel]:
			diffs = append(diffs, rel+": only in "+b)
			continue
		case !fb[rel]:
			diffs = append(diffs, rel+": only in "+a)
			continue
		}
		n++
		x, err := os.ReadFile(filepath.Join(a, rel))
		if err != nil {
			return nil, 0, err
		}
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil {
			return nil, 0, err
		}
		var d []string
		switch base := filepath.Base(rel); base {
		case "results.json":
			d, err = jsonDiff(x, y, func(path []string) bool { return results.Volatile(path[len(path)-1]) })
		case "sim.json":
			d, err = jsonDiff(x, y, func(path []string) bool {
				return len(path) == 2 && path[0] == "summary" && simVolatile[path[1]]
			})
		case "stdout":
			x, y = dropEngine(x), dropEngine(y)
			fallthrough
		default:
			if !bytes.Equal(x, y) {
				d = []string{firstLineDiff(x, y)}
			}
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", rel, err)
		}
		for _, s := range d {
			diffs = append(diffs, rel+": "+s)
		}
	}
	return diffs, n, nil
}

// files lists the compared files under root, relative to it.
func files(root string) (map[string]bool, error) {
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		switch e.Name() {
		case "results.json", "flows.csv", "plots.json", "sim.json", "stdout", "stderr", "rc":
			rel, _ := filepath.Rel(root, path)
			out[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	return out, err
}

func union(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if !a[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// dropEngine removes the engine line of `fabricbench sim` (wall time,
// events per second, peak RSS) from its standard output.
func dropEngine(b []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if !bytes.HasPrefix(l, []byte("engine ")) {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

func firstLineDiff(x, y []byte) string {
	lx, ly := strings.Split(string(x), "\n"), strings.Split(string(y), "\n")
	for i := 0; i < len(lx) || i < len(ly); i++ {
		var a, b string
		if i < len(lx) {
			a = lx[i]
		}
		if i < len(ly) {
			b = ly[i]
		}
		if a != b {
			return fmt.Sprintf("line %d differs:\n  - %s\n  + %s", i+1, clip(a), clip(b))
		}
	}
	return "differs"
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// jsonDiff compares two JSON documents, skipping the object members for
// which skip(path) is true, and lists the differing paths.
func jsonDiff(x, y []byte, skip func(path []string) bool) ([]string, error) {
	var a, b any
	dx := json.NewDecoder(bytes.NewReader(x))
	dx.UseNumber()
	if err := dx.Decode(&a); err != nil {
		return nil, err
	}
	dy := json.NewDecoder(bytes.NewReader(y))
	dy.UseNumber()
	if err := dy.Decode(&b); err != nil {
		return nil, err
	}
	var out []string
	walk(nil, a, b, skip, &out)
	return out, nil
}

func walk(path []string, a, b any, skip func([]string) bool, out *[]string) {
	if len(*out) >= 20 {
		return
	}
	name := strings.Join(path, ".")
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: %s vs %s", name, short(a), short(b)))
			return
		}
		keys := maps.Clone(x)
		maps.Copy(keys, y)
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			p := append(append([]string(nil), path...), k)
			if skip(p) {
				continue
			}
			walk(p, x[k], y[k], skip, out)
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			*out = append(*out, fmt.Sprintf("%s: %s vs %s", name, short(a), short(b)))
			return
		}
		for i := range x {
			p := append([]string(nil), path...)
			if len(p) > 0 {
				p[len(p)-1] += fmt.Sprintf("[%d]", i)
			} else {
				p = []string{fmt.Sprintf("[%d]", i)}
			}
			walk(p, x[i], y[i], skip, out)
		}
	default:
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, fmt.Sprintf("%s: %s vs %s", name, short(a), short(b)))
		}
	}
}

func short(v any) string {
	b, _ := json.Marshal(v)
	return clip(string(b))
}
