package labrt

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/crypto/ssh"
)

// WriteKey generates an ed25519 key pair, writes the private key in
// OpenSSH format to path (0600) and returns the public key.
func WriteKey(path, comment string) (ssh.PublicKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	blk, err := ssh.MarshalPrivateKey(priv, comment)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(blk), 0o600); err != nil {
		return nil, err
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path+".pub", ssh.MarshalAuthorizedKey(sp), 0o644); err != nil {
		return nil, err
	}
	return sp, nil
}

// KnownHostsLine renders one known_hosts entry for a node reachable by its
// name and management address.
func KnownHostsLine(hosts []string, key ssh.PublicKey) string {
	return strings.Join(hosts, ",") + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
}

// WriteKnownHosts writes the lab's known_hosts file (sorted, stable).
func WriteKnownHosts(path string, lines []string) error {
	sort.Strings(lines)
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// SSHDConfig renders the sshd_config of one node: listening on its
// management address, host key and PID file in dir (on the node), only
// key authentication for the lab's client key; root may log in (the
// lab's nodes are managed as root).
func SSHDConfig(dir, listen, authorizedKeys string) string {
	return fmt.Sprintf(`# fabricbench lab node; generated, do not edit
ListenAddress %s
Port 22
HostKey %s
PidFile %s
AuthorizedKeysFile %s
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
PrintLastLog no
UseDNS no
MaxStartups 100:30:200
MaxSessions 50
Subsystem sftp internal-sftp
`, listen, filepath.Join(dir, "ssh_host_ed25519_key"), filepath.Join(dir, "sshd.pid"), authorizedKeys)
}

// LLDPSocket is where the lab runtimes have each node's lldpd listen.
const LLDPSocket = "/run/lldpd/lldpd.socket"

// StartLLDPD is the shell command that starts lldpd in a node (when the
// node has it) on every interface but the loopback and the management one,
// announcing every second, so that bring-up validation reads each port's
// neighbour by LLDP. Without lldpd it does nothing.
func StartLLDPD(mgmtIf string) string {
	return fmt.Sprintf("if command -v lldpd >/dev/null 2>&1; then mkdir -p /run/lldpd && lldpd -u %[1]s -I '*,!lo,!%[2]s' && "+
		"for i in 1 2 3 4 5 6 7 8 9 10; do [ -S %[1]s ] && break; sleep 0.1; done; lldpcli -u %[1]s configure lldp tx-interval 1 >/dev/null; fi", LLDPSocket, mgmtIf)
}
