package containerlab

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// corpusEntry is one entry of testdata/corpus/MANIFEST.yaml: a topology
// file written the way users write them, and what each runtime must make
// of it.
type corpusEntry struct {
	File         string            `yaml:"file"`
	Style        string            `yaml:"style"`
	Env          map[string]string `yaml:"env"`
	Containerlab any               `yaml:"containerlab"`
	Native       any               `yaml:"native"`
	Roles        map[string]string `yaml:"roles"`
	Deploy       bool              `yaml:"deploy"`
	Fault        string            `yaml:"fault"`
	Restore      []string          `yaml:"restore"`
}

// corpusWant is an expectation: ok, or a refusal at a position.
type corpusWant struct {
	ok       bool
	line     int
	col      int
	contains []string
	rendered bool
}

func parseWant(t *testing.T, v any) corpusWant {
	t.Helper()
	if s, ok := v.(string); ok && s == "ok" {
		return corpusWant{ok: true}
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("manifest: want ok or {line, col, contains}, got %#v", v)
	}
	w := corpusWant{}
	w.line = toIntT(t, m["line"])
	w.col = toIntT(t, m["col"])
	if r, ok := m["rendered"].(bool); ok {
		w.rendered = r
	}
	for _, c := range m["contains"].([]any) {
		w.contains = append(w.contains, c.(string))
	}
	return w
}

func toIntT(t *testing.T, v any) int {
	t.Helper()
	switch x := v.(type) {
	case uint64:
		return int(x)
	case int64:
		return int(x)
	case int:
		return x
	}
	t.Fatalf("manifest: %#v is not a number", v)
	return 0
}

func loadCorpus(t *testing.T) (string, []corpusEntry) {
	t.Helper()
	dir := filepath.Join("testdata", "corpus")
	b, err := os.ReadFile(filepath.Join(dir, "MANIFEST.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var entries []corpusEntry
	if err := yaml.Unmarshal(b, &entries); err != nil {
		t.Fatalf("MANIFEST.yaml: %v", err)
	}
	if len(entries) < 30 {
		t.Fatalf("the corpus has %d entries, want at least 30", len(entries))
	}
	return dir, entries
}

// TestCorpus resolves every topology of the corpus for both runtimes, as
// `fabricbench lab check --runtime R` does: each is accepted (with the
// roles the manifest gives) or refused at the file:line:col the manifest
// gives, the message naming the thing.
func TestCorpus(t *testing.T) {
	dir, entries := loadCorpus(t)
	for _, e := range entries {
		for _, rt := range Runtimes {
			want := e.Containerlab
			if rt == RuntimeNative {
				want = e.Native
			}
			name := e.File + "/" + rt
			if len(e.Env) > 0 {
				name += "/env"
				for k, v := range e.Env {
					name += "," + k + "=" + v
				}
			}
			t.Run(name, func(t *testing.T) {
				w := parseWant(t, want)
				lookup := func(k string) (string, bool) {
					v, ok := e.Env[k]
					return v, ok
				}
				path := filepath.Join(dir, e.File)
				lab, err := resolveFile(path, rt, lookup)
				if w.ok {
					if err != nil {
						t.Fatalf("%s (%s) refused on the %s runtime:\n%v", e.File, e.Style, rt, err)
					}
					for node, role := range e.Roles {
						n := lab.NodeByName(node)
						if n == nil {
							t.Errorf("no node %s", node)
						} else if n.Role != role {
							t.Errorf("%s: role %s, want %s", node, n.Role, role)
						}
					}
					return
				}
				if err == nil {
					t.Fatalf("%s (%s) accepted on the %s runtime, want a refusal at %d:%d naming %v", e.File, e.Style, rt, w.line, w.col, w.contains)
				}
				var list ErrorList
				if !errors.As(err, &list) {
					t.Fatalf("error is not a positioned ErrorList: %T %v", err, err)
				}
				for _, fe := range list {
					if fe.Line != w.line || fe.Column != w.col {
						continue
					}
					ok := true
					for _, c := range w.contains {
						ok = ok && strings.Contains(fe.Error(), c)
					}
					if ok && (!w.rendered || strings.Contains(fe.File, "(rendered)")) {
						return
					}
				}
				t.Errorf("%s on the %s runtime: no error at %d:%d containing %v (rendered %v); got:\n%v", e.File, rt, w.line, w.col, w.contains, w.rendered, err)
			})
		}
	}
}

// resolveFile renders, parses and resolves a topology for a runtime.
func resolveFile(path, runtime string, lookup func(string) (string, bool)) (*Lab, error) {
	top, err := ParseFile(path, RenderOptions{LookupEnv: lookup})
	if err != nil {
		return nil, err
	}
	return top.Resolve("", runtime)
}

// TestCorpusIsContainerlabs: every corpus file fabricbench accepts for the
// containerlab runtime is one containerlab itself accepts
// (`containerlab validate`), so the corpus is made of real containerlab
// files. Skipped without ../shared/tools/containerlab.
func TestCorpusIsContainerlabs(t *testing.T) {
	bin := os.Getenv("FABRICBENCH_CONTAINERLAB")
	if bin == "" {
		bin = filepath.Join(repoRoot(t), "..", "shared", "tools", "containerlab")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("containerlab not available (%s: %v); the corpus is checked against fabricbench only", bin, err)
	}
	dir, entries := loadCorpus(t)
	for _, e := range entries {
		w := parseWant(t, e.Containerlab)
		if !w.ok {
			continue
		}
		t.Run(e.File, func(t *testing.T) {
			abs, _ := filepath.Abs(filepath.Join(dir, e.File))
			cmd := exec.Command(bin, "validate", "-t", filepath.Base(abs))
			cmd.Dir = filepath.Dir(abs)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "CLAB_VERSION_CHECK=disable", "NO_COLOR=1"}
			for k, v := range e.Env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Topology is valid") {
				t.Errorf("containerlab validate %s: %v\n%s", e.File, err, out)
			}
		})
	}
}
