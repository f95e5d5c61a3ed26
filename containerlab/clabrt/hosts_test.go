package clabrt

import (
	"os"
	"path/filepath"
	"testing"
)

// removeHostEntries removes exactly the lab's /etc/hosts block and SSH
// configuration, nothing of other labs, and leaves a block without its
// END line alone.
func TestRemoveHostEntries(t *testing.T) {
	dir := t.TempDir()
	prevHosts, prevSSH := etcHosts, sshConfigDir
	etcHosts, sshConfigDir = filepath.Join(dir, "hosts"), dir
	t.Cleanup(func() { etcHosts, sshConfigDir = prevHosts, prevSSH })
	const other = "###### CLAB-fbother-START ######\n198.19.1.2\tclab-fbother-leaf0\n###### CLAB-fbother-END ######\n"
	const hosts = "127.0.0.1\tlocalhost\n" + other +
		"###### CLAB-fbx1-START ######\n198.19.215.11\tclab-fbx1-leaf0 f0bb\t# Kind: linux\n###### CLAB-fbx1-END ######\n" +
		"::1\tlocalhost\n"
	if err := os.WriteFile(etcHosts, []byte(hosts), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"clab-fbx1.conf", "clab-fbother.conf"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("Host x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := removeHostEntries("fbx1"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(etcHosts)
	if want := "127.0.0.1\tlocalhost\n" + other + "::1\tlocalhost\n"; string(got) != want {
		t.Errorf("hosts:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "clab-fbx1.conf")); !os.IsNotExist(err) {
		t.Errorf("clab-fbx1.conf: %v, want removed", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "clab-fbother.conf")); err != nil {
		t.Errorf("another lab's SSH configuration: %v", err)
	}
	// Again: nothing to do. A block without END: left alone.
	if err := removeHostEntries("fbx1"); err != nil {
		t.Fatal(err)
	}
	cut := "127.0.0.1\tlocalhost\n###### CLAB-fbx2-START ######\n198.19.215.11\tclab-fbx2-leaf0\n::1\tlocalhost\n"
	os.WriteFile(etcHosts, []byte(cut), 0o644)
	if err := removeHostEntries("fbx2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(etcHosts); string(got) != cut {
		t.Errorf("a block without END was changed:\n%s", got)
	}
}
