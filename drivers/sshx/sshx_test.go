package sshx

import (
	"errors"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/internal/fuzzbound"
)

func TestSplitBatch(t *testing.T) {
	const m = "@@fb-x"
	cmds := []string{"a", "b", "c"}
	out := "one\n\n" + m + " 0\n" + "two" + "\n" + m + " 2\n" + "\n" + m + " 0\n"
	res, err := splitBatch(out, m, cmds)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Output != "one\n" || res[0].Status != 0 || res[1].Output != "two" || res[1].Status != 2 || res[2].Output != "" || !res[2].Ran {
		t.Errorf("%+v", res)
	}
	var ee *ExitError
	if err := res[1].Err(); !errors.As(err, &ee) || ee.Cmd != "b" || ee.Status != 2 || !strings.Contains(err.Error(), "two") {
		t.Errorf("err %v", err)
	}
	// Stopped after a failure.
	res, err = splitBatch("x\n"+m+" 1\n", m, cmds)
	if err != nil || !res[0].Ran || res[1].Ran || res[2].Ran || res[1].Err() == nil {
		t.Errorf("stopped: %+v %v", res, err)
	}
	// Truncated.
	for _, bad := range []string{"", "one\n" + m + " 0\n", "one\n" + m + " x\n", "one\n" + m + " 0"} {
		if _, err := splitBatch(bad, m, []string{"a", "b"}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzSplitBatch(f *testing.F) {
	f.Add("one\n\n@@m 0\ntwo\n@@m 3\n", 2)
	f.Fuzz(func(t *testing.T, out string, n int) {
		fuzzbound.Default(t, func() {
			if n < 0 || n > 10 {
				return
			}
			cmds := make([]string, n)
			res, err := splitBatch(out, "@@m", cmds)
			if err == nil && len(res) != n {
				t.Errorf("%d results for %d commands", len(res), n)
			}
		})
	})
}

func TestHostPort(t *testing.T) {
	for _, c := range []struct {
		addr string
		port int
		host string
		want int
		err  bool
	}{
		{"198.19.0.1", 0, "198.19.0.1", 22, false},
		{"198.19.0.1:2222", 0, "198.19.0.1", 2222, false},
		{"198.19.0.1:2222", 23, "198.19.0.1", 23, false},
		{"[fd00::1]:830", 0, "fd00::1", 830, false},
		{"fd00::1", 0, "fd00::1", 22, false},
		{"leaf0", 70000, "", 0, true},
		{"", 0, "", 0, true},
		{"h:x", 0, "", 0, true},
	} {
		h, p, err := HostPort(c.addr, c.port)
		if (err != nil) != c.err || h != c.host || p != c.want {
			t.Errorf("HostPort(%q, %d) = %q, %d, %v", c.addr, c.port, h, p, err)
		}
	}
}

func TestAuthMethods(t *testing.T) {
	if _, _, err := AuthMethods(drivers.Auth{User: "u"}); err == nil {
		t.Errorf("no credentials: no error")
	}
	t.Setenv("SSH_AUTH_SOCK", "")
	if _, _, err := AuthMethods(drivers.Auth{User: "u", Agent: true}); err == nil || !strings.Contains(err.Error(), "SSH_AUTH_SOCK") {
		t.Errorf("agent without socket: %v", err)
	}
	const secret = "hunter2-not-a-key"
	_, _, err := AuthMethods(drivers.Auth{User: "u", PrivateKey: []byte(secret), Passphrase: "pp-" + secret})
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("bad key: %v", err)
	}
	if _, err := PlainPrivateKey([]byte(secret), ""); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("bad key: %v", err)
	}
	if _, err := Dial(t.Context(), drivers.Config{Address: "127.0.0.1", Auth: drivers.Auth{User: "u", Password: "p"}}); !errors.Is(err, ErrNoKnownHosts) {
		t.Errorf("no known_hosts: %v", err)
	}
}
