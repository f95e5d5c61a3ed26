package drivers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabricbench/fabricbench/inventory"
)

const testKey = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAtest-key-body\n-----END OPENSSH PRIVATE KEY-----"

// writeLab writes an inventory, its known_hosts file and a key file into a
// temporary directory and loads it.
func writeLab(t *testing.T, creds string) *inventory.Hardware {
	t.Helper()
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "known_hosts"), []byte("198.18.200.1 ssh-ed25519 AAAA\n"), 0o600))
	must(os.MkdirAll(filepath.Join(dir, "keys"), 0o700))
	must(os.WriteFile(filepath.Join(dir, "keys", "id"), []byte(testKey+"\n"), 0o600))
	must(os.WriteFile(filepath.Join(dir, "keys", "id.pub"), []byte("ssh-ed25519 AAAAC3Nza fb@lab\n"), 0o600))
	must(os.WriteFile(filepath.Join(dir, "pw"), []byte("file-password\n"), 0o600))
	src := `name: lab
known_hosts: known_hosts
timeout: 1m
credentials:
` + creds + `
devices:
  - {name: leaf0, platform: sonic, role: leaf, mgmt: 198.18.200.1, credentials: sw}
  - {name: spine0, platform: frr, role: spine, mgmt: "[fd00::2]:2222", credentials: keyed, timeout: 5s}
  - {name: host0, platform: linux, role: host, mgmt: host0.lab, credentials: agent}
`
	path := filepath.Join(dir, "lab.yaml")
	must(os.WriteFile(path, []byte(src), 0o600))
	hw, err := inventory.LoadHardware(path)
	if err != nil {
		t.Fatal(err)
	}
	return hw
}

const labCreds = `  sw: {user: admin, password: env:FB_TEST_SWITCH_PW}
  keyed: {user: fb, key: file:keys/id, passphrase: env:FB_TEST_KEY_PASS}
  agent: {user: root, ssh_agent: true}
  filepw: {user: admin, password: file:pw}`

func TestConfigFor(t *testing.T) {
	t.Setenv("FB_TEST_SWITCH_PW", "sw1tch-s3cret")
	t.Setenv("FB_TEST_KEY_PASS", "k3y-passphrase")
	hw := writeLab(t, labCreds)
	kh := filepath.Join(hw.Dir, "known_hosts")

	cfg, err := ConfigFor(hw, "leaf0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Device != "leaf0" || cfg.Address != "198.18.200.1" || cfg.Port != 22 || cfg.KnownHosts != kh || cfg.Timeout != time.Minute {
		t.Errorf("leaf0 config %+v", cfg)
	}
	if a := cfg.Auth; a.User != "admin" || a.Password != "sw1tch-s3cret" || a.PrivateKey != nil || a.Passphrase != "" || a.Agent {
		t.Errorf("leaf0 auth user %q password %q key %q passphrase %q agent %v", a.User, a.Password, a.PrivateKey, a.Passphrase, a.Agent)
	}

	cfg, err = ConfigFor(hw, "spine0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Address != "fd00::2" || cfg.Port != 2222 || cfg.Timeout != 5*time.Second {
		t.Errorf("spine0 config %+v", cfg)
	}
	if a := cfg.Auth; a.User != "fb" || string(a.PrivateKey) != testKey+"\n" || a.Passphrase != "k3y-passphrase" || a.Password != "" || a.Agent {
		t.Errorf("spine0 auth user %q key %q passphrase %q", a.User, a.PrivateKey, a.Passphrase)
	}

	cfg, err = ConfigFor(hw, "host0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Address != "host0.lab" || cfg.Port != 22 || !cfg.Auth.Agent || cfg.Auth.User != "root" || cfg.Auth.Password != "" {
		t.Errorf("host0 config %+v", cfg)
	}

	// A file: password, read relative to the inventory.
	hw.Device("leaf0").Credentials = "filepw"
	cfg, err = ConfigFor(hw, "leaf0")
	if err != nil || cfg.Auth.Password != "file-password" {
		t.Errorf("file password %q, %v", cfg.Auth.Password, err)
	}

	if _, err := ConfigFor(hw, "leaf9"); err == nil || !strings.Contains(err.Error(), `no device "leaf9"`) {
		t.Errorf("unknown device: %v", err)
	}
}

func TestConfigForDefaultTimeout(t *testing.T) {
	t.Setenv("FB_TEST_SWITCH_PW", "x")
	t.Setenv("FB_TEST_KEY_PASS", "y")
	hw := writeLab(t, labCreds)
	hw.Timeout = 0
	cfg, err := ConfigFor(hw, "leaf0")
	if err != nil || cfg.Timeout != DefaultTimeout || DefaultTimeout != 30*time.Second {
		t.Errorf("timeout %v, %v", cfg.Timeout, err)
	}
}

func TestConfigForHomeKey(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("FB_TEST_SWITCH_PW", "x")
	t.Setenv("FB_TEST_KEY_PASS", "y")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "lab_ed25519"), []byte(testKey), 0o600); err != nil {
		t.Fatal(err)
	}
	hw := writeLab(t, labCreds)
	hw.Credentials["keyed"].Key = "file:~/.ssh/lab_ed25519"
	cfg, err := ConfigFor(hw, "spine0")
	if err != nil || string(cfg.Auth.PrivateKey) != testKey+"\n" {
		t.Errorf("key from ~: %q, %v", cfg.Auth.PrivateKey, err)
	}
	// A key in an environment variable.
	t.Setenv("FB_TEST_KEY", testKey)
	hw.Credentials["keyed"].Key = "env:FB_TEST_KEY"
	cfg, err = ConfigFor(hw, "spine0")
	if err != nil || string(cfg.Auth.PrivateKey) != testKey+"\n" {
		t.Errorf("key from env: %q, %v", cfg.Auth.PrivateKey, err)
	}
}

// Errors name the device, the credential set and the field, never the
// secret values, even those that did resolve.
func TestConfigForErrors(t *testing.T) {
	const (
		swPW = "sw1tch-s3cret-value"
		pass = "k3y-passphrase-value"
	)
	secrets := []string{swPW, pass, "b3BlbnNzaC1rZXktdjEAAAAAtest-key-body", "file-password", "literal-pw"}
	cases := []struct {
		name   string
		device string
		setup  func(t *testing.T, hw *inventory.Hardware)
		want   []string
	}{
		{"env not set", "leaf0", func(t *testing.T, hw *inventory.Hardware) { os.Unsetenv("FB_TEST_SWITCH_PW") },
			[]string{`device leaf0: credential set "sw": password: `, "FB_TEST_SWITCH_PW is not set"}},
		{"env empty", "leaf0", func(t *testing.T, hw *inventory.Hardware) { t.Setenv("FB_TEST_SWITCH_PW", "") },
			[]string{`device leaf0: credential set "sw": password: secret reference "env:FB_TEST_SWITCH_PW": empty value`}},
		{"passphrase not set (key resolved)", "spine0", func(t *testing.T, hw *inventory.Hardware) { os.Unsetenv("FB_TEST_KEY_PASS") },
			[]string{`device spine0: credential set "keyed": passphrase: `, "FB_TEST_KEY_PASS is not set"}},
		{"key file missing", "spine0", func(t *testing.T, hw *inventory.Hardware) {
			hw.Credentials["keyed"].Key = "file:keys/nope"
		}, []string{`device spine0: credential set "keyed": key: secret reference "file:/`, filepath.Join("keys", "nope") + `": open `, "no such file"}},
		{"public key", "spine0", func(t *testing.T, hw *inventory.Hardware) {
			hw.Credentials["keyed"].Key = "file:keys/id.pub"
		}, []string{`device spine0: credential set "keyed": key: secret reference "file:keys/id.pub": not a PEM private key`}},
		{"password file is not a key", "spine0", func(t *testing.T, hw *inventory.Hardware) {
			hw.Credentials["keyed"].Key = "file:pw"
		}, []string{`credential set "keyed": key: secret reference "file:pw": not a PEM private key`}},
		{"literal in a hand-built inventory", "leaf0", func(t *testing.T, hw *inventory.Hardware) {
			hw.Credentials["sw"].Password = "literal-pw"
		}, []string{`device leaf0: credential set "sw": password: not a secret reference (want env:NAME or file:PATH)`}},
		{"known_hosts missing", "leaf0", func(t *testing.T, hw *inventory.Hardware) {
			os.Remove(hw.KnownHosts)
		}, []string{"device leaf0: known_hosts: ", "no such file"}},
		{"no known_hosts", "leaf0", func(t *testing.T, hw *inventory.Hardware) { hw.KnownHosts = "" },
			[]string{"device leaf0: the inventory names no known_hosts file"}},
		{"unknown credential set", "leaf0", func(t *testing.T, hw *inventory.Hardware) {
			hw.Device("leaf0").Credentials = "gone"
		}, []string{`device leaf0: unknown credential set "gone"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("FB_TEST_SWITCH_PW", swPW)
			t.Setenv("FB_TEST_KEY_PASS", pass)
			hw := writeLab(t, labCreds)
			c.setup(t, hw)
			cfg, err := ConfigFor(hw, c.device)
			if err == nil {
				t.Fatalf("no error; config %+v", cfg)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			for _, s := range secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q shows a secret value", err)
				}
			}
			if cfg.Auth.Password != "" || cfg.Auth.PrivateKey != nil || cfg.Auth.Passphrase != "" {
				t.Errorf("failed ConfigFor returned secrets")
			}
		})
	}
}

func TestConfigForExample(t *testing.T) {
	// The example inventory loads; ConfigFor either works or fails naming
	// the device (here: the example has no known_hosts file, and its
	// secrets are not set).
	hw, err := inventory.LoadHardware(filepath.Join("..", "examples", "inventory", "lab-a.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range hw.Devices {
		cfg, err := ConfigFor(hw, d.Name)
		switch {
		case err != nil && !strings.HasPrefix(err.Error(), "device "+d.Name+": "):
			t.Errorf("%s: %v", d.Name, err)
		case err == nil && (cfg.Device != d.Name || cfg.Address != d.MgmtHost || cfg.Timeout <= 0):
			t.Errorf("%s: config %+v", d.Name, cfg)
		}
	}
}

// registerFake registers the fake platform once (tests may run again with
// -count).
var registerFake sync.Once

func TestRegisterRefusesDuplicates(t *testing.T) {
	open := func(Config) (Driver, error) { return nil, errors.New("x") }
	Register("fbtest-dup", open)
	for _, c := range []struct {
		name string
		open func(Config) (Driver, error)
		want string
	}{
		{"fbtest-dup", open, `drivers: platform "fbtest-dup" registered twice`},
		{"", open, "drivers: Register needs a platform name and an open function"},
		{"fbtest-nil", nil, "drivers: Register needs a platform name and an open function"},
	} {
		func() {
			defer func() {
				if r := recover(); r != c.want {
					t.Errorf("Register(%q): panic %v, want %q", c.name, r, c.want)
				}
			}()
			Register(c.name, c.open)
		}()
	}
	regMu.Lock()
	delete(registry, "fbtest-dup")
	regMu.Unlock()
}

func TestOpenDevice(t *testing.T) {
	t.Setenv("FB_TEST_SWITCH_PW", "x")
	t.Setenv("FB_TEST_KEY_PASS", "y")
	hw := writeLab(t, labCreds)
	registerFake.Do(func() {
		Register("fbtest-fake", func(cfg Config) (Driver, error) {
			return nil, fmt.Errorf("fake driver for %s at %s port %d", cfg.Device, cfg.Address, cfg.Port)
		})
	})
	hw.Device("spine0").Platform = "fbtest-fake"
	if _, err := OpenDevice(hw, "spine0"); err == nil || err.Error() != "fake driver for spine0 at fd00::2 port 2222" {
		t.Errorf("OpenDevice: %v", err)
	}
	hw.Device("leaf0").Platform = "fbtest-none"
	if _, err := OpenDevice(hw, "leaf0"); err == nil || !strings.Contains(err.Error(), `unknown platform "fbtest-none"`) {
		t.Errorf("OpenDevice with an unknown platform: %v", err)
	}
	if _, err := OpenDevice(hw, "nope"); err == nil || !strings.Contains(err.Error(), `no device "nope"`) {
		t.Errorf("OpenDevice(nope): %v", err)
	}
}
