package main

// The docs test: every relative link of the README and docs/ resolves
// (files and #anchors), every fabricbench command they quote exists in the
// CLI with the flags it uses, and the commands marked runnable run and
// print what the text says.
//
// Markers (HTML comments, invisible on GitHub), on the line before a
// fenced code block:
//
//	<!-- docs-test: run [root] [exit=N] -->
//
// runs every fabricbench command of the block, in order, in a directory
// that holds the repository's files (what they write, out/..., stays in
// it), and expects exit status N (default 0). "root" marks a lab command:
// it runs where a native lab can (root, FRR, OpenSSH server) and is
// skipped with the reason otherwise. Blocks run in the order of the file,
// so a block may use what an earlier one wrote.
//
//	<!-- docs-test: output [tol=P%] -->
//
// on the block after it: each non-empty line must appear, in order, in
// what the last run block's last command printed (stdout and stderr).
// "…" in a line matches any text. A number in the text (one not part of a
// name such as leaf1 or #1) must equal the printed one, or be within P% of
// it with tol=.

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
)

// repoRoot is the repository, relative to this package.
var repoRoot = filepath.Join("..", "..")

// docPages lists the Markdown pages the docs test reads: the README,
// DEVELOPERS.md, docs/*.md and the generated docs/cli/*.md, relative to the
// repository.
func docPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"README.md", "DEVELOPERS.md"}
	for _, pat := range []string{"docs/*.md", "docs/cli/*.md"} {
		m, err := filepath.Glob(filepath.Join(repoRoot, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			rel, _ := filepath.Rel(repoRoot, p)
			pages = append(pages, filepath.ToSlash(rel))
		}
	}
	if len(pages) < 20 {
		t.Fatalf("only %d documentation pages found", len(pages))
	}
	return pages
}

// mdLine is a line of a Markdown page with its number and whether it lies
// in a fenced code block (fence lines count as inside).
type mdLine struct {
	n       int
	text    string
	inFence bool
}

func readMD(t *testing.T, page string) []mdLine {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, page))
	if err != nil {
		t.Fatal(err)
	}
	var out []mdLine
	fence := ""
	for i, l := range strings.Split(string(b), "\n") {
		trim := strings.TrimLeft(l, " ")
		isFence := strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~")
		if isFence && fence == "" {
			fence = trim[:3]
			out = append(out, mdLine{i + 1, l, true})
			continue
		}
		if isFence && strings.HasPrefix(trim, fence) && strings.TrimSpace(strings.Trim(trim, fence[:1])) == "" {
			out = append(out, mdLine{i + 1, l, true})
			fence = ""
			continue
		}
		out = append(out, mdLine{i + 1, l, fence != ""})
	}
	return out
}

var (
	headingRE  = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	codeSpanRE = regexp.MustCompile("`+[^`]*`+")
	linkRE     = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	mdLinkRE   = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	htmlIDRE   = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	slugDropRE = regexp.MustCompile(`[^\p{L}\p{N}\p{M}_\- ]`)
)

// slug is GitHub's anchor for a heading: lower case, Markdown and
// punctuation other than - and _ removed, spaces as hyphens.
func slug(h string) string {
	h = mdLinkRE.ReplaceAllString(h, "$1")
	h = strings.ToLower(strings.TrimSpace(h))
	h = slugDropRE.ReplaceAllString(h, "")
	return strings.ReplaceAll(h, " ", "-")
}

// anchors are a page's heading anchors (a repeated heading gets -1, -2,
// ... as on GitHub) and explicit HTML anchors.
func anchors(lines []mdLine) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range lines {
		if l.inFence {
			continue
		}
		for _, m := range htmlIDRE.FindAllStringSubmatch(l.text, -1) {
			out[m[1]] = true
		}
		m := headingRE.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		s := slug(m[2])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// TestDocsLinks: every relative link of the README and docs/ names a file
// or directory of the repository, and every #anchor a heading of its page.
func TestDocsLinks(t *testing.T) {
	pages := docPages(t)
	parsed := map[string][]mdLine{}
	load := func(p string) []mdLine {
		if l, ok := parsed[p]; ok {
			return l
		}
		l := readMD(t, p)
		parsed[p] = l
		return l
	}
	links := 0
	for _, page := range pages {
		for _, l := range load(page) {
			if l.inFence {
				continue
			}
			text := codeSpanRE.ReplaceAllString(l.text, "``")
			for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
				target := m[1]
				if u, err := url.Parse(target); err == nil && u.Scheme != "" {
					continue // http:, https:, mailto:
				}
				links++
				path, frag, _ := strings.Cut(target, "#")
				if p, err := url.PathUnescape(path); err == nil {
					path = p
				}
				dest := page
				if path != "" {
					dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(page), path)))
					if strings.HasPrefix(dest, "../") || filepath.IsAbs(path) {
						t.Errorf("%s:%d: link %q leaves the repository", page, l.n, target)
						continue
					}
					if _, err := os.Stat(filepath.Join(repoRoot, dest)); err != nil {
						t.Errorf("%s:%d: link %q: %s does not exist", page, l.n, target, dest)
						continue
					}
				}
				if frag != "" && strings.HasSuffix(dest, ".md") && !anchors(load(dest))[frag] {
					t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", page, l.n, target, dest, frag)
				}
			}
		}
	}
	if links < 50 {
		t.Errorf("only %d relative links found: the link parser is broken", links)
	}
	t.Logf("%d relative links in %d pages checked", links, len(pages))
}

// quotedCommand is a fabricbench command quoted in a page.
type quotedCommand struct {
	page     string
	line     int
	args     []string // after the program name
	synopsis bool     // a usage line with placeholders: check names only
	text     string
}

// shellWords splits a shell command line into words: quotes and
// backslashes, no expansion.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quote := false, rune(0)
	for i := 0; i < len(s); i++ {
		c := rune(s[i])
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			} else {
				cur.WriteRune(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

var envAssignRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// fabricbenchArgs returns the arguments of a fabricbench invocation in a
// shell command (after sudo, environment assignments and time), or false.
func fabricbenchArgs(words []string) ([]string, bool) {
	for len(words) > 0 {
		w := words[0]
		switch {
		case w == "sudo" || w == "time" || w == "-E" || w == "exec":
			words = words[1:]
		case envAssignRE.MatchString(w):
			words = words[1:]
		default:
			goto prog
		}
	}
prog:
	if len(words) == 0 {
		return nil, false
	}
	switch {
	case words[0] == "fabricbench" || strings.HasSuffix(words[0], "/fabricbench") || words[0] == "/tmp/fbl":
		return words[1:], true
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && (words[2] == "./cmd/fabricbench" || words[2] == "./cmd/fabricbench/"):
		return words[3:], true
	}
	return nil, false
}

var placeholderRE = regexp.MustCompile(`^(?:[A-Z][A-Z0-9_]*[A-Z0-9]|[A-Z])(?:[|.,/].*)?$|[\[\]|…<>{}$*]|\.\.\.`)

// splitShell splits a command line at ;, && , || and | outside quotes
// (roughly: quoted separators are rare in the docs).
func splitShell(s string) []string {
	return regexp.MustCompile(`\s*(?:;|&&|\|\||\s\|\s)\s*`).Split(s, -1)
}

// newQuoted is the quoted command text (fabricbench arguments args) at
// page:line; a placeholder argument (SUITE, [--out DIR]) makes it a
// synopsis.
func newQuoted(page string, line int, text string, args []string) quotedCommand {
	q := quotedCommand{page: page, line: line, args: args, text: text}
	for _, a := range args {
		if placeholderRE.MatchString(a) {
			q.synopsis = true
		}
	}
	return q
}

// quotedCommands finds the fabricbench commands of a page: in code blocks
// (lines joined at trailing backslashes, comments dropped) and in inline
// code spans.
func quotedCommands(t *testing.T, page string) []quotedCommand {
	t.Helper()
	lines := readMD(t, page)
	var out []quotedCommand
	add := func(line int, cmdline string) {
		for _, seg := range splitShell(cmdline) {
			seg = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(seg), "$ "))
			words, err := shellWords(seg)
			if err != nil || len(words) == 0 {
				continue
			}
			args, ok := fabricbenchArgs(words)
			if !ok {
				continue
			}
			if strings.Contains(seg, "frobnicate") {
				continue // the docs' deliberately unknown name, in error examples
			}
			out = append(out, newQuoted(page, line, seg, args))
		}
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l.inFence {
			if strings.HasPrefix(strings.TrimSpace(l.text), "```") || strings.HasPrefix(strings.TrimSpace(l.text), "~~~") {
				continue
			}
			start, text := l.n, l.text
			for strings.HasSuffix(strings.TrimRight(text, " "), "\\") && i+1 < len(lines) && lines[i+1].inFence {
				i++
				text = strings.TrimSuffix(strings.TrimRight(text, " "), "\\") + " " + strings.TrimSpace(lines[i].text)
			}
			if c := strings.Index(text, " #"); c >= 0 {
				text = text[:c]
			}
			if strings.HasPrefix(strings.TrimSpace(text), "#") {
				continue
			}
			add(start, text)
			continue
		}
		for _, span := range codeSpanRE.FindAllString(l.text, -1) {
			// Prose names commands ("`fabricbench run` plans the
			// suite") without their arguments: names and flags only.
			n := len(out)
			add(l.n, strings.Trim(span, "`"))
			for k := n; k < len(out); k++ {
				out[k].synopsis = true
			}
		}
	}
	return out
}

// checkQuoted checks one quoted command against a fresh command tree: the
// subcommands exist; every flag is one of the command's; a concrete
// command's flags parse and its arguments are accepted.
func checkQuoted(q quotedCommand) error {
	root := newRoot()
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	args := q.args
	if q.synopsis {
		// Keep what names commands and flags: drop brackets, split
		// alternatives.
		var clean []string
		for _, a := range args {
			a = strings.Trim(a, "[]()")
			for _, alt := range strings.Split(a, "|") {
				alt = strings.Trim(alt, "[]().,")
				if alt != "" {
					clean = append(clean, alt)
				}
			}
		}
		args = clean
	}
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	cmd.InitDefaultHelpFlag()
	if cmd.HasSubCommands() && cmd.Name() != "help" {
		for _, a := range rest {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if !q.synopsis || !placeholderRE.MatchString(a) {
				return fmt.Errorf("%q has no subcommand %q", cmd.CommandPath(), a)
			}
			break
		}
	}
	if q.synopsis {
		for _, a := range rest {
			if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			var f *pflag.Flag
			if strings.HasPrefix(a, "--") {
				f = cmd.Flags().Lookup(name)
				if f == nil {
					f = cmd.InheritedFlags().Lookup(name)
				}
			} else if len(name) == 1 {
				f = cmd.Flags().ShorthandLookup(name)
			} else {
				continue // -1 and the like: a value, not a flag
			}
			if f == nil && name != "help" && !(cmd == root && name == "version") {
				return fmt.Errorf("%s has no flag %s", cmd.CommandPath(), a)
			}
		}
		return nil
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return fmt.Errorf("%s: %v", cmd.CommandPath(), err)
	}
	if help, _ := cmd.Flags().GetBool("help"); help {
		return nil
	}
	if cmd == root {
		if v, _ := cmd.Flags().GetBool("version"); v {
			return nil
		}
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return fmt.Errorf("%s: %v", cmd.CommandPath(), err)
	}
	return nil
}

// TestDocsCommands: every fabricbench command the README and docs/ quote
// names existing subcommands and flags, and a concrete one parses.
func TestDocsCommands(t *testing.T) {
	readme := 0
	total := 0
	for _, page := range docPages(t) {
		if strings.HasPrefix(page, "docs/cli/") {
			continue // generated from the command tree
		}
		for _, q := range quotedCommands(t, page) {
			total++
			if page == "README.md" {
				readme++
			}
			if err := checkQuoted(q); err != nil {
				t.Errorf("%s:%d: %q: %v", q.page, q.line, q.text, err)
			}
		}
	}
	if readme < 5 || total < 100 {
		t.Errorf("only %d quoted commands found (%d in the README): the parser is broken", total, readme)
	}
	t.Logf("%d quoted commands checked, %d of them in the README", total, readme)
}

// The command checker refuses what the CLI does not have and accepts
// what it has, synopses included.
func TestDocsCommandsRefuse(t *testing.T) {
	for _, c := range []struct {
		text string
		ok   bool
	}{
		{"fabricbench frobnicat", false},
		{"fabricbench lab frob x.clab.yml", false},
		{"fabricbench run examples/suites/smoke.yaml --frob", false},
		{"fabricbench run SUITE [--frob N]", false},
		{"fabricbench run", false},
		{"go run ./cmd/fabricbench sim --topo", false},
		{"fabricbench report a b", false},
		{"fabricbench run SUITE [--out DIR] [-q|--quiet] [--parallel N]", true},
		{"go run ./cmd/fabricbench run examples/suites/smoke.yaml --out out/smoke", true},
		{"fabricbench lab check TOPOLOGY [--runtime auto|containerlab|native]", true},
		{"fabricbench --version", true},
	} {
		words, _ := shellWords(c.text)
		args, isCmd := fabricbenchArgs(words)
		if !isCmd {
			t.Fatalf("%q not seen as a fabricbench command", c.text)
		}
		err := checkQuoted(newQuoted("", 0, c.text, args))
		switch {
		case c.ok && err != nil:
			t.Errorf("%q refused: %v", c.text, err)
		case !c.ok && err == nil:
			t.Errorf("%q accepted", c.text)
		}
	}
}

// runnableBlock is a code block marked <!-- docs-test: run ... -->.
type runnableBlock struct {
	page     string
	line     int
	cmds     [][]string // fabricbench arguments
	root     bool
	exit     int
	output   []string // the lines of the following output block
	outLine  int
	tol      float64 // relative, 0: exact
	cmdTexts []string
}

var markerRE = regexp.MustCompile(`^<!--\s*docs-test:\s*(run|output)\b(.*?)-->\s*$`)

// runnableBlocks parses a page's markers.
func runnableBlocks(t *testing.T, page string) []*runnableBlock {
	t.Helper()
	lines := readMD(t, page)
	var out []*runnableBlock
	// block returns the lines of the fenced block that starts at or after
	// line index i (the marker's next line) and the index after it.
	block := func(i int) ([]mdLine, int) {
		if i >= len(lines) || !lines[i].inFence {
			t.Fatalf("%s:%d: a docs-test marker must stand right before a fenced code block", page, lines[i-1].n)
		}
		j := i + 1
		for j < len(lines) && lines[j].inFence && !(strings.HasPrefix(strings.TrimSpace(lines[j].text), "```") || strings.HasPrefix(strings.TrimSpace(lines[j].text), "~~~")) {
			j++
		}
		return lines[i+1 : j], j + 1
	}
	for i := 0; i < len(lines); i++ {
		if lines[i].inFence {
			continue
		}
		m := markerRE.FindStringSubmatch(strings.TrimSpace(lines[i].text))
		if m == nil {
			if strings.Contains(lines[i].text, "docs-test:") && strings.HasPrefix(strings.TrimSpace(lines[i].text), "<!--") {
				t.Errorf("%s:%d: malformed docs-test marker %q", page, lines[i].n, lines[i].text)
			}
			continue
		}
		opts := strings.Fields(m[2])
		body, next := block(i + 1)
		switch m[1] {
		case "run":
			b := &runnableBlock{page: page, line: lines[i].n}
			for _, o := range opts {
				switch {
				case o == "root":
					b.root = true
				case strings.HasPrefix(o, "exit="):
					n, err := strconv.Atoi(strings.TrimPrefix(o, "exit="))
					if err != nil {
						t.Fatalf("%s:%d: bad %q", page, lines[i].n, o)
					}
					b.exit = n
				default:
					t.Fatalf("%s:%d: unknown run option %q", page, lines[i].n, o)
				}
			}
			for k := 0; k < len(body); k++ {
				text := body[k].text
				for strings.HasSuffix(strings.TrimRight(text, " "), "\\") && k+1 < len(body) {
					k++
					text = strings.TrimSuffix(strings.TrimRight(text, " "), "\\") + " " + strings.TrimSpace(body[k].text)
				}
				if c := strings.Index(text, " #"); c >= 0 {
					text = text[:c]
				}
				if strings.TrimSpace(text) == "" || strings.HasPrefix(strings.TrimSpace(text), "#") {
					continue
				}
				words, err := shellWords(strings.TrimSpace(text))
				if err != nil {
					t.Fatalf("%s:%d: %v", page, body[k].n, err)
				}
				args, ok := fabricbenchArgs(words)
				if !ok {
					t.Fatalf("%s:%d: a runnable block runs fabricbench commands only: %q", page, body[k].n, text)
				}
				b.cmds = append(b.cmds, args)
				b.cmdTexts = append(b.cmdTexts, strings.TrimSpace(text))
			}
			if len(b.cmds) == 0 {
				t.Fatalf("%s:%d: a runnable block without commands", page, lines[i].n)
			}
			out = append(out, b)
		case "output":
			if len(out) == 0 || out[len(out)-1].output != nil {
				t.Fatalf("%s:%d: an output block needs a run block before it (one output block each)", page, lines[i].n)
			}
			b := out[len(out)-1]
			for _, o := range opts {
				if !strings.HasPrefix(o, "tol=") || !strings.HasSuffix(o, "%") {
					t.Fatalf("%s:%d: unknown output option %q", page, lines[i].n, o)
				}
				p, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(o, "tol="), "%"), 64)
				if err != nil || p < 0 || p > 100 {
					t.Fatalf("%s:%d: bad %q", page, lines[i].n, o)
				}
				b.tol = p / 100
			}
			b.outLine = lines[i].n
			b.output = []string{}
			for _, l := range body {
				if s := strings.TrimSpace(l.text); s != "" {
					b.output = append(b.output, s)
				}
			}
		}
		i = next - 1
	}
	return out
}

// figure reports whether the number at s[i:] is a figure, not part of a
// name (leaf1, #1, F1, Ethernet5, 0x1f).
func figureAt(s string, i int) bool {
	if i == 0 {
		return true
	}
	r := rune(s[i-1])
	return !(unicode.IsLetter(r) || r == '#' || r == '_' || r == '.' || unicode.IsDigit(r))
}

var numRE = regexp.MustCompile(`\d+(?:\.\d+)?`)

// outputLineRE turns a documented output line into a regexp over a printed
// line and the documented figures it captures (with tol > 0).
func outputLineRE(doc string, tol float64) (*regexp.Regexp, []float64) {
	var b strings.Builder
	var figs []float64
	b.WriteString(`^`)
	for k, part := range strings.Split(doc, "…") {
		if k > 0 {
			b.WriteString(`.*?`)
		}
		last := 0
		for _, loc := range numRE.FindAllStringIndex(part, -1) {
			if tol == 0 || !figureAt(part, loc[0]) {
				continue
			}
			b.WriteString(regexp.QuoteMeta(part[last:loc[0]]))
			b.WriteString(`(\d+(?:\.\d+)?)`)
			v, _ := strconv.ParseFloat(part[loc[0]:loc[1]], 64)
			figs = append(figs, v)
			last = loc[1]
		}
		b.WriteString(regexp.QuoteMeta(part[last:]))
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String()), figs
}

// matchOutput checks that the documented lines appear in order in the
// printed output, figures within tol.
func matchOutput(doc []string, printed string, tol float64) error {
	var got []string
	sc := bufio.NewScanner(strings.NewReader(printed))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		got = append(got, strings.TrimSpace(sc.Text()))
	}
	pos := 0
	for _, d := range doc {
		re, figs := outputLineRE(d, tol)
		found := false
		var near []string
		for k := pos; k < len(got); k++ {
			m := re.FindStringSubmatch(got[k])
			if m == nil {
				continue
			}
			ok := true
			for f, want := range figs {
				v, _ := strconv.ParseFloat(m[f+1], 64)
				if math.Abs(v-want) > tol*math.Abs(want) {
					ok = false
					near = append(near, fmt.Sprintf("%q: %g is not within %g%% of %g", got[k], v, tol*100, want))
				}
			}
			if ok {
				pos, found = k+1, true
				break
			}
		}
		if !found {
			return fmt.Errorf("the text's line %q is not in the output (in order)%s\noutput:\n%s", d, strings.Join(append([]string{""}, near...), "\n  "), printed)
		}
	}
	return nil
}

func TestDocsOutputMatcher(t *testing.T) {
	printed := "run x pass 7/7 KPIs, 1387 µs simulated, 1.1 s\nanomaly #1 leaf1:Ethernet5 at 50% of 100.0 Gb/s\n"
	for _, c := range []struct {
		doc  []string
		tol  float64
		want bool
	}{
		{[]string{"run x pass 7/7 KPIs, 1387 µs simulated, 1.1 s"}, 0, true},
		{[]string{"run x pass 7/7 KPIs, 1387 µs simulated, … s"}, 0, true},
		{[]string{"run x pass 7/7 KPIs, 1388 µs simulated, … s"}, 0, false},
		{[]string{"run x pass 7/7 KPIs, 1400 µs simulated, 1.05 s"}, 0.1, true},
		{[]string{"run x pass 7/7 KPIs, 1600 µs simulated, 1.0 s"}, 0.1, false},
		{[]string{"anomaly #1 leaf2:Ethernet5 at 50% of 100.0 Gb/s"}, 0.5, false}, // names are exact
		{[]string{"anomaly #1 leaf1:Ethernet5 …", "run x …"}, 0, false},           // order
		{[]string{"run x …", "anomaly #1 leaf1:Ethernet5 …"}, 0, true},
	} {
		if err := matchOutput(c.doc, printed, c.tol); (err == nil) != c.want {
			t.Errorf("%q tol %g: %v, want match %v", c.doc, c.tol, err, c.want)
		}
	}
}

// docsWorkDir is a directory that holds the repository's files (as
// symbolic links) for runnable commands to run in: what they write stays
// in it.
func docsWorkDir(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		switch e.Name() {
		case ".git", "out", "bin":
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDocsRunnable runs the commands the README and docs/ mark runnable and
// checks their exit status and output against the text.
func TestDocsRunnable(t *testing.T) {
	var blocks []*runnableBlock
	for _, page := range docPages(t) {
		blocks = append(blocks, runnableBlocks(t, page)...)
	}
	readme := 0
	for _, b := range blocks {
		if b.page == "README.md" {
			readme++
		}
	}
	if readme < 4 {
		t.Fatalf("only %d runnable blocks in the README", readme)
	}
	if testing.Short() {
		t.Skipf("the %d runnable documentation blocks are skipped in -short mode", len(blocks))
	}
	// The binary the README's 'go run ./cmd/fabricbench' builds; static, as
	// the lab backends copy it to the lab's hosts.
	bin := filepath.Join(t.TempDir(), "fabricbench")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := docsWorkDir(t)
	sort.SliceStable(blocks, func(i, j int) bool { return blocks[i].page == "README.md" && blocks[j].page != "README.md" })
	for _, b := range blocks {
		t.Run(fmt.Sprintf("%s:%d", b.page, b.line), func(t *testing.T) {
			if b.root {
				labtest.Require(t)
			}
			var last string
			for k, args := range b.cmds {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				c := exec.CommandContext(ctx, bin, args...)
				c.Dir = work
				out, err := c.CombinedOutput()
				cancel()
				code := 0
				if err != nil {
					ee, ok := err.(*exec.ExitError)
					if !ok {
						t.Fatalf("%s: %v", b.cmdTexts[k], err)
					}
					code = ee.ExitCode()
				}
				want := 0
				if k == len(b.cmds)-1 {
					want = b.exit
				}
				if code != want {
					t.Fatalf("%s:%d: %s: exit %d, the text says %d\n%s", b.page, b.line, b.cmdTexts[k], code, want, out)
				}
				last = string(out)
			}
			if b.output != nil {
				if err := matchOutput(b.output, last, b.tol); err != nil {
					t.Errorf("%s:%d: %s: %v", b.page, b.outLine, b.cmdTexts[len(b.cmds)-1], err)
				}
			}
		})
	}
}

// pageLinks are the relative link targets of a page (outside code).
func pageLinks(t *testing.T, page string) []string {
	t.Helper()
	var out []string
	for _, l := range readMD(t, page) {
		if l.inFence {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(l.text, "``"), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// TestDocsReachable: every page of docs/ is linked from the README, and
// every section of it (## and ###) from the page's contents list, so any
// section is two clicks from the README; every generated command page is
// linked from docs/cli/README.md, itself linked from the README.
func TestDocsReachable(t *testing.T) {
	fromReadme := map[string]bool{}
	for _, l := range pageLinks(t, "README.md") {
		path, _, _ := strings.Cut(l, "#")
		fromReadme[path] = true
	}
	fromCLIIndex := map[string]bool{}
	for _, l := range pageLinks(t, "docs/cli/README.md") {
		fromCLIIndex["docs/cli/"+l] = true
	}
	for _, page := range docPages(t) {
		switch {
		case page == "README.md" || page == "DEVELOPERS.md":
			continue
		case strings.HasPrefix(page, "docs/cli/"):
			if page != "docs/cli/README.md" && !fromCLIIndex[page] {
				t.Errorf("%s is not linked from docs/cli/README.md", page)
			}
			continue
		}
		if !fromReadme[page] {
			t.Errorf("%s is not linked from the README", page)
		}
		lines := readMD(t, page)
		inPage := map[string]bool{}
		for _, l := range pageLinks(t, page) {
			if strings.HasPrefix(l, "#") {
				inPage[l[1:]] = true
			}
		}
		seen := map[string]int{}
		for _, l := range lines {
			if l.inFence {
				continue
			}
			m := headingRE.FindStringSubmatch(l.text)
			if m == nil {
				continue
			}
			s := slug(m[2])
			if n := seen[s]; n > 0 {
				s = fmt.Sprintf("%s-%d", s, n)
			}
			seen[slug(m[2])]++
			if (len(m[1]) == 2 || len(m[1]) == 3) && !inPage[s] {
				t.Errorf("%s:%d: section %q is not in the page's contents list", page, l.n, m[2])
			}
		}
	}
	if !fromReadme["docs/cli/README.md"] {
		t.Error("the README does not link the CLI reference docs/cli/README.md")
	}
}

// TestREADMEShape: the README stays a front page of at most 300 lines,
// its set-up section gives exactly two commands, the main job on the
// simulator and the test command, and .ci/run runs that same test
// command.
func TestREADMEShape(t *testing.T) {
	lines := readMD(t, "README.md")
	if len(lines) > 301 { // the last element is after the final newline
		t.Errorf("README.md has %d lines; at most 300 (move long sections into docs/)", len(lines)-1)
	}
	var setup []string
	in := false
	for _, l := range lines {
		if !l.inFence && strings.HasPrefix(l.text, "## ") {
			in = l.text == "## Set-up"
			continue
		}
		if in && l.inFence && !strings.HasPrefix(strings.TrimSpace(l.text), "```") {
			setup = append(setup, strings.TrimSpace(l.text))
		}
	}
	want := []string{"go run ./cmd/fabricbench run examples/suites/smoke.yaml --out out/smoke", "./scripts/test.sh"}
	if strings.Join(setup, "\n") != strings.Join(want, "\n") {
		t.Errorf("README set-up commands: %q, want %q", setup, want)
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^exec \./scripts/test\.sh\s*$`).Match(ci) {
		t.Errorf(".ci/run does not run the README's test command ./scripts/test.sh:\n%s", ci)
	}
}
