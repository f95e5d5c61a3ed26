package harness

import (
	"fmt"
	"slices"
	"strings"
)

// PlatformCapable is implemented by backends whose support of a feature
// also depends on the platform of the devices (the hardware backend): the
// feature table (FeatureSupport) gives such a backend a column per
// platform.
type PlatformCapable interface {
	// Platforms lists the device platforms in a stable order.
	Platforms() []string
	// PlatformLimit says why the devices of platform never do f: "" when
	// they may (the backend's Capabilities and each device then decide).
	PlatformLimit(platform string, f Feature) string
}

// FeatureSupport renders the Markdown table of features and backends
// (docs/features.md, "Features and backends"): one row per registered
// feature (FeatureKinds: its suite fields, what it does, its default) and
// one column per named backend, or per platform of a PlatformCapable
// one. A cell is "yes", "by device" (the backend does it where its devices
// can: Capabilities.ByDevice) or "no" (Capabilities.Unsupported, or the
// platform's limit), with the reason numbered below the table ("yes" with
// a number on a platform: on the devices the note names).
func FeatureSupport(backends []string) (string, error) {
	type column struct {
		name     string // the column's heading
		backend  string
		caps     Capabilities
		declared bool
		platform string
		pc       PlatformCapable
	}
	var cols []column
	for _, name := range backends {
		b, err := newBackend(name)
		if err != nil {
			return "", err
		}
		c, declared := b.(Capable)
		var caps Capabilities
		if declared {
			caps = c.Capabilities()
		}
		if pc, ok := b.(PlatformCapable); ok {
			for _, p := range pc.Platforms() {
				cols = append(cols, column{name: name + " (" + p + ")", backend: name, caps: caps, declared: declared, platform: p, pc: pc})
			}
			continue
		}
		cols = append(cols, column{name: name, backend: name, caps: caps, declared: declared})
	}

	// The reasons, numbered once each, with the columns that give them.
	type reason struct {
		labels []string
		text   string
	}
	var reasons []*reason
	number := map[string]int{}
	note := func(label, text string) int {
		n, ok := number[text]
		if !ok {
			reasons = append(reasons, &reason{text: text})
			n = len(reasons)
			number[text] = n
		}
		if r := reasons[n-1]; !slices.Contains(r.labels, label) {
			r.labels = append(r.labels, label)
		}
		return n
	}
	cell := func(c column, f Feature) string {
		switch {
		case !c.declared:
			return "not declared"
		case c.caps.Unsupported[f] != "":
			return fmt.Sprintf("no [%d]", note(c.backend, c.caps.Unsupported[f]))
		case c.pc != nil && c.pc.PlatformLimit(c.platform, f) != "":
			return fmt.Sprintf("no [%d]", note(c.name, c.pc.PlatformLimit(c.platform, f)))
		case c.caps.ByDevice[f] != "" && c.pc != nil:
			return fmt.Sprintf("yes [%d]", note(c.backend, c.caps.ByDevice[f]))
		case c.caps.ByDevice[f] != "":
			return fmt.Sprintf("by device [%d]", note(c.backend, c.caps.ByDevice[f]))
		}
		return "yes"
	}

	var b strings.Builder
	b.WriteString("| feature | suite fields | what it does | default |")
	for _, c := range cols {
		b.WriteString(" " + c.name + " |")
	}
	b.WriteString("\n|---|---|---|---|")
	for range cols {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, k := range FeatureKinds() {
		paths := make([]string, len(k.Paths))
		for i, p := range k.Paths {
			paths[i] = "`" + p + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |", k.Feature, strings.Join(paths, ", "), mdCell(k.Line), mdCell(k.Default))
		for _, c := range cols {
			b.WriteString(" " + cell(c, k.Feature) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\nReasons:\n\n")
	for i, r := range reasons {
		fmt.Fprintf(&b, "%d. %s: %s\n", i+1, strings.Join(r.labels, ", "), r.text)
	}
	return b.String(), nil
}

// mdCell escapes text for a Markdown table cell.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
