package main

import (
	"runtime"
	"strings"
	"testing"
)

// --version names the program, a commit line and the Go version, and
// exits 0 (bug reports paste it).
func TestVersion(t *testing.T) {
	code, stdout, stderr := runCLI(t, "--version")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "fabricbench ") || !strings.HasPrefix(lines[1], "commit ") ||
		!strings.HasPrefix(lines[2], runtime.Version()+" ") {
		t.Errorf("--version printed %q", stdout)
	}
}
