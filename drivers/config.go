package drivers

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/internal/secret"
	"github.com/fabricbench/fabricbench/inventory"
)

// Defaults ConfigFor applies when the inventory leaves them out.
const (
	DefaultTimeout = 30 * time.Second
	DefaultSSHPort = 22
)

// ConfigFor returns the driver configuration of one device of a hardware
// inventory (see docs/inventory.md):
//
//   - Address is the host part of the device's mgmt address and Port its
//     port, DefaultSSHPort when mgmt has none;
//   - KnownHosts is the inventory's known_hosts file, which must exist;
//   - Timeout is the device's timeout, else the inventory's, else
//     DefaultTimeout;
//   - a device with a container is reached with docker exec on this
//     machine (Config.Container): no address port, credentials or
//     known_hosts are used;
//   - Auth is the device's credential set with its secrets resolved:
//     env:NAME reads a variable, file:PATH a file (~/ and paths relative to
//     the inventory allowed); a key is the PEM text of a private key;
//     ssh_agent sets Auth.Agent.
//
// Errors name the device, the credential set and the field, never a
// secret's value.
func ConfigFor(hw *inventory.Hardware, device string) (Config, error) {
	if hw == nil {
		return Config{}, fmt.Errorf("device %s: no inventory", device)
	}
	d := hw.Device(device)
	if d == nil {
		return Config{}, fmt.Errorf("inventory %s: no device %q", hw.File, device)
	}
	fail := func(format string, args ...any) (Config, error) {
		return Config{}, fmt.Errorf("device %s: %s", d.Name, fmt.Sprintf(format, args...))
	}
	if d.MgmtHost == "" {
		return fail("no management address")
	}
	cfg := Config{Device: d.Name, Address: d.MgmtHost, Port: d.MgmtPort, KnownHosts: hw.KnownHosts, Timeout: d.Timeout}
	if cfg.Port == 0 {
		cfg.Port = DefaultSSHPort
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = hw.Timeout
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if d.Container != "" {
		// docker exec on this machine: no SSH, no credentials.
		return Config{Device: d.Name, Container: d.Container, Address: d.MgmtHost, Timeout: cfg.Timeout}, nil
	}
	if cfg.KnownHosts == "" {
		return fail("the inventory names no known_hosts file (host keys are always verified)")
	}
	if st, err := os.Stat(cfg.KnownHosts); err != nil {
		return fail("known_hosts: %v", err)
	} else if !st.Mode().IsRegular() {
		return fail("known_hosts: %s is not a regular file", cfg.KnownHosts)
	}
	cs := hw.Credentials[d.Credentials]
	if cs == nil {
		return fail("unknown credential set %q", d.Credentials)
	}
	credFail := func(field string, err error) (Config, error) {
		return fail("credential set %q: %s: %v", cs.Name, field, err)
	}
	auth := Auth{User: cs.User, Agent: cs.SSHAgent}
	if cs.User == "" {
		return fail("credential set %q: no user", cs.Name)
	}
	if cs.Password != "" {
		v, err := resolveSecret(hw, cs.Password)
		if err != nil {
			return credFail("password", err)
		}
		auth.Password = v
	}
	if cs.Key != "" {
		v, err := resolveSecret(hw, cs.Key)
		if err != nil {
			return credFail("key", err)
		}
		if !looksLikePrivateKey(v) {
			return credFail("key", fmt.Errorf("secret reference %q: not a PEM private key (no -----BEGIN ... PRIVATE KEY----- line; is it the .pub file?)", cs.Key))
		}
		auth.PrivateKey = []byte(v + "\n")
	}
	if cs.Passphrase != "" {
		v, err := resolveSecret(hw, cs.Passphrase)
		if err != nil {
			return credFail("passphrase", err)
		}
		auth.Passphrase = v
	}
	if auth.Password == "" && auth.PrivateKey == nil && !auth.Agent {
		return fail("credential set %q: no password, key or ssh_agent", cs.Name)
	}
	cfg.Auth = auth
	return cfg, nil
}

// OpenDevice connects to a device of a hardware inventory with the driver
// of its platform.
func OpenDevice(hw *inventory.Hardware, device string) (Driver, error) {
	cfg, err := ConfigFor(hw, device)
	if err != nil {
		return nil, err
	}
	return Open(hw.Device(device).Platform, cfg)
}

// resolveSecret resolves a reference with internal/secret; file: paths are
// resolved like every path in the inventory (~/, relative to its
// directory). Errors name the reference, never the value.
func resolveSecret(hw *inventory.Hardware, ref string) (string, error) {
	if secret.Check(ref) != nil {
		// Not a reference: it may be the secret itself, so it is not shown.
		return "", fmt.Errorf("not a secret reference (want env:NAME or file:PATH)")
	}
	resolved := ref
	if kind, arg, _ := strings.Cut(ref, ":"); kind == "file" && arg != "" {
		p, err := hw.Path(arg)
		if err != nil {
			return "", fmt.Errorf("secret reference %q: %v", ref, err)
		}
		resolved = "file:" + p
	}
	v, err := secret.Resolve(resolved)
	if err != nil {
		return "", err
	}
	if v == "" {
		return "", fmt.Errorf("secret reference %q: empty value", ref)
	}
	return v, nil
}

func looksLikePrivateKey(v string) bool {
	b := []byte(v)
	return bytes.Contains(b, []byte("-----BEGIN ")) && bytes.Contains(b, []byte("PRIVATE KEY-----"))
}

// GNMICredentials resolves the user and password a device's gNMI server
// checks (its gnmi.credentials set, default the device's). A set without
// a password gives "" (the server then gets none).
func GNMICredentials(hw *inventory.Hardware, device string) (user, password string, err error) {
	d := hw.Device(device)
	if d == nil || d.GNMI == nil {
		return "", "", fmt.Errorf("inventory %s: device %q has no gnmi server", hw.File, device)
	}
	cs := hw.Credentials[d.GNMI.Credentials]
	if cs == nil {
		return "", "", fmt.Errorf("device %s: gnmi: unknown credential set %q", device, d.GNMI.Credentials)
	}
	if cs.Password != "" {
		if password, err = resolveSecret(hw, cs.Password); err != nil {
			return "", "", fmt.Errorf("device %s: gnmi: credential set %q: password: %v", device, cs.Name, err)
		}
	}
	return cs.User, password, nil
}
