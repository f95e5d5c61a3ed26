package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// versionString is what `fabricbench --version` prints, for bug reports:
// the module version, the VCS commit and its time (with "+dirty" when the
// tree had uncommitted changes), the Go version and the platform. It is
// read from the build information the Go toolchain embeds; `go run` and
// test binaries carry no VCS stamp and say "commit unknown".
func versionString() string {
	version, commit, when, dirty := "(devel)", "unknown", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "fabricbench %s\ncommit %s", version, commit)
	if dirty {
		b.WriteString("+dirty")
	}
	if when != "" {
		fmt.Fprintf(&b, " (%s)", when)
	}
	fmt.Fprintf(&b, "\n%s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}
