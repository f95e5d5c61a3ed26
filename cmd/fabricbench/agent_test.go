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
	badConf := filepath.Join(dir, "agent.json")
	if err := os.WriteFile(badConf, []byte(`{"control": "127.0.0.1:0", "token_file": "`+tok+`", "data": "127.0.0.1:7500", "transport": {"lb": "rps"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	goodConf := filepath.Join(dir, "agent-good.json")
	if err := os.WriteFile(goodConf, []byte(`{"control": "127.0.0.1:0", "token_file": "`+tok+`", "data": "127.0.0.1:7500"}`), 0o600); err != nil {
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
		{[]string{"agent", "--config", badConf}, "rps"},
		{[]string{"agent", "--config", goodConf, "--mtu", "10"}, "mtu 10"},
		{[]string{"agent", "--config", filepath.Join(dir, "missing.json")}, "--config"},
		{[]string{"agent", "bench", "--flows", "1,0"}, "--flows"},
		{[]string{"agent", "bench", "--bytes", "1KiB"}, "--bytes"},
		{[]string{"agent", "bench", "--lb", "rps"}, "--lb"},
		{[]string{"agent", "bench", "--planes", "9"}, "--planes"},
		{[]string{"agent", "bench", "--link-rate", "fast"}, "--link-rate"},
		{[]string{"agent", "bench", "--entropy-run", "5000"}, "entropy run"},
		{[]string{"agent", "bench", "--src-netns", "x"}, "--src-netns"},
		{[]string{"agent", "bench", "--src-netns", "fbab-none-a", "--dst-netns", "fbab-none-b", "--src", "198.18.250.1", "--dst", "198.18.250.2,198.18.251.2"}, "as many addresses"},
		{[]string{"agent", "bench", "--src-netns", "fbab-none-a", "--dst-netns", "fbab-none-b", "--src", "198.18.250.1", "--dst", "198.18.250.2"}, "fbab-none-a"},
		{[]string{"exporter", "--password-file", tok, "--interface", "Ethernet0"}, "NAME=DEVICE"},
		{[]string{"exporter", "--password-file", tok, "--interface", "Ethernet0=lo@fast"}, `--interface "Ethernet0=lo@fast": rate: "fast" is not a rate`},
		{[]string{"exporter", "--password-file", tok, "--interface", "Ethernet0=lo@"}, "NAME=DEVICE@RATE"},
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

// TestLabSuitesOnSim: the lab suites run on the simulator too (SRv6 paths
// and planes included).
func TestLabSuitesOnSim(t *testing.T) {
	for _, s := range []string{"lab-srv6.yaml", "lab-smoke.yaml", "lab-planes.yaml"} {
		code, stdout, stderr := runCLI(t, "run", suites+s, "--out", t.TempDir(), "--quiet")
		if code != exitOK {
			t.Errorf("%s on sim: exit %d\n%s\n%s", s, code, stdout, stderr)
		}
	}
}
