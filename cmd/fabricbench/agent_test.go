package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentAndExporterBadInput: bad flags and files are exit status 2
// with the offending flag or file named.
func TestAgentAndExporterBadInput(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "token-open")
	if err := os.WriteFile(open, []byte("0123456789abcdef0123"), 0o644); err != nil {
		t.Fatal(err)
	}
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte("0123456789abcdef0123"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"agent", "--control", "127.0.0.1:0", "--token-file", open, "--data", "127.0.0.1:7500"}, "lets others read it"},
		{[]string{"agent", "--control", "127.0.0.1:0", "--token-file", tok, "--data", "nowhere"}, "--data"},
		{[]string{"agent", "--control", "127.0.0.1:0", "--token-file", tok, "--data", "127.0.0.1:7500", "--cc", "reno"}, "--cc"},
		{[]string{"agent", "--control", "127.0.0.1:0", "--token-file", tok, "--data", "127.0.0.1:7500", "--rate", "fast"}, "--rate"},
		{[]string{"agent", "--token-file", tok}, "control"},
		{[]string{"exporter", "--password-file", tok, "--interface", "Ethernet0"}, "NAME=DEVICE"},
		{[]string{"exporter", "--password-file", filepath.Join(dir, "missing")}, "--password-file"},
		{[]string{"exporter", "--password-file", tok, "--interface", "Ethernet0=nosuchdev0", "--listen", "127.0.0.1:0"}, "nosuchdev0"},
		{[]string{"exporter", "--password-file", tok, "--interval", "10us", "--interface", "Ethernet0=lo", "--listen", "127.0.0.1:0"}, "Interval"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", c.args, code, stderr, c.want)
		}
	}
}
