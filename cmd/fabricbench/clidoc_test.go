package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// updateDocs makes TestCLIReference rewrite docs/cli/ ('task docs').
var updateDocs = flag.Bool("update-docs", false, "rewrite the generated CLI reference in docs/cli/")

// cliRefDir is the generated CLI reference, relative to this package.
var cliRefDir = filepath.Join("..", "..", "docs", "cli")

// cliRefHeader opens every generated page.
const cliRefHeader = "<!-- Generated from the fabricbench command tree by 'task docs' (cmd/fabricbench TestCLIReference); do not edit. -->\n\n"

// genCLIReference writes one Markdown page per command of the command
// tree into dir with cobra/doc, and returns the pages by file name.
func genCLIReference(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	root := newRoot()
	root.DisableAutoGenTag = true
	// The version string names the commit and Go version: not part of a
	// reference that must be the same on every machine.
	root.Version = ""
	stabiliseDefaults(root)
	err := doc.GenMarkdownTreeCustom(root, dir,
		func(string) string { return cliRefHeader },
		func(name string) string { return name })
	if err != nil {
		t.Fatal(err)
	}
	// README.md: every command on one page, so that each is two clicks
	// from the project's README.
	var b strings.Builder
	b.WriteString(cliRefHeader)
	b.WriteString("# fabricbench command reference\n\n")
	b.WriteString("Every command with its flags, generated from the command tree. How the\n")
	b.WriteString("commands fit together: [../cli.md](../cli.md) and the [README](../../README.md).\n\n")
	var walk func(c *cobra.Command, depth int)
	walk = func(c *cobra.Command, depth int) {
		if !c.IsAvailableCommand() && c != root {
			return
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
		fmt.Fprintf(&b, "%s- [%s](%s): %s\n", strings.Repeat("  ", depth), c.CommandPath(), name, c.Short)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
				walk(sub, depth+1)
			}
		}
	}
	walk(root, 0)
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return readPages(t, dir)
}

// stabiliseDefaults replaces flag defaults that depend on the machine
// (the host name) by what they mean.
func stabiliseDefaults(c *cobra.Command) {
	host := hostname()
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if host != "" && f.DefValue == host {
			f.DefValue = ""
			f.Usage += " (default: this host's name)"
		}
	})
	for _, sub := range c.Commands() {
		stabiliseDefaults(sub)
	}
}

func readPages(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string][]byte{}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		pages[e.Name()] = b
	}
	return pages
}

// TestCLIReference fails when docs/cli/ is not what the command tree
// generates: a changed flag, help text or command needs 'task docs'.
func TestCLIReference(t *testing.T) {
	want := genCLIReference(t, t.TempDir())
	if len(want) < 10 {
		t.Fatalf("the command tree gave only %d pages", len(want))
	}
	if *updateDocs {
		if err := os.RemoveAll(cliRefDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(cliRefDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range want {
			if err := os.WriteFile(filepath.Join(cliRefDir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("wrote %d pages to %s", len(want), cliRefDir)
		return
	}
	if _, err := os.Stat(cliRefDir); err != nil {
		t.Fatalf("%v: generate the CLI reference with 'task docs'", err)
	}
	got := readPages(t, cliRefDir)
	var stale []string
	for name, b := range want {
		if g, ok := got[name]; !ok {
			stale = append(stale, name+" (missing)")
		} else if !bytes.Equal(g, b) {
			stale = append(stale, name+" (differs)")
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			stale = append(stale, name+" (no such command)")
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("docs/cli/ is stale, run 'task docs': %s", strings.Join(stale, ", "))
	}
}
