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

// A missing argument or an unknown flag is bad input (exit 2) and says how
// the command is used; containerlab's verbs are aliases of lab's.
func TestUsageOnBadArguments(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "usage: fabricbench run SUITE"},
		{[]string{"sim", "--bogus"}, "usage: fabricbench sim "},
		{[]string{"lab", "up"}, "usage: fabricbench lab up TOPOLOGY"},
		{[]string{"lab", "deploy"}, "usage: fabricbench lab up TOPOLOGY"},
		{[]string{"lab", "destroy", "a", "b"}, "usage: fabricbench lab down TOPOLOGY"},
		{[]string{"lab", "inspect"}, "usage: fabricbench lab status TOPOLOGY"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "--help") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
