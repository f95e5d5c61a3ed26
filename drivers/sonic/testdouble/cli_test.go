package testdouble

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPyStr(t *testing.T) {
	for in, want := range map[string]string{
		"plain":      "'plain'",
		"it's":       `"it's"`,
		`say "it's"`: `'say "it\'s"'`,
		`a\b`:        `'a\\b'`,
		"tab\there":  `'tab\there'`,
		"":           "''",
	} {
		if got := PyStr(in); got != want {
			t.Errorf("PyStr(%q) = %s, want %s", in, got, want)
		}
	}
	if got := PyDict(map[string]string{"b": "2", "a": "1"}); got != "{'a': '1', 'b': '2'}" {
		t.Errorf("PyDict: %s", got)
	}
}

// Errors look like SONiC's (the driver's platform treats "Error:" and
// "Usage:" as failures), with a failing exit status.
func TestToolErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := NewDBConfig(filepath.Join(dir, "none.sock"))
	b, _ := json.Marshal(cfg)
	path := filepath.Join(dir, "database_config.json")
	os.WriteFile(path, b, 0o644)
	t.Setenv(EnvDBConfig, path)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sonic-db-cli", "NO_DB", "KEYS", "*"}, "Error: unknown database \"NO_DB\""},
		{[]string{"sonic-db-cli"}, "Usage:"},
		{[]string{"config", "vrf", "add", "red"}, "Error: 'vrf_name' must begin with 'Vrf'"},
		{[]string{"config", "bgp", "shutdown", "all"}, "Usage:"},
		{[]string{"show", "ip", "route"}, "Usage:"},
		{[]string{"sudo", "show", "nothing"}, "Usage:"},
	} {
		var out, errb bytes.Buffer
		code := Main(c.args, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want an error with %q", c.args, code, errb.String(), c.want)
		}
	}
}
