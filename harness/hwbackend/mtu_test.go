package hwbackend

import (
	"crypto/ed25519"
	"encoding/pem"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/suite"
	"golang.org/x/crypto/ssh"
)

// The transport.mtu check against the MTUs the bring-up checks read,
// with devices' states as a driver gives them: the smallest MTU of an
// agent's NIC or a link's port bounds the payload plus headers (and the
// SRv6 encapsulation of pinned paths); an interface off the hosts' paths
// (a host's management NIC) does not count.
func TestLiveCheckMTU(t *testing.T) {
	dir := t.TempDir()
	inv := filepath.Join(dir, "inv.yaml")
	text := strings.NewReplacer("/nonexistent/kh", filepath.Join(dir, "kh"), "/nonexistent/key", filepath.Join(dir, "key")).Replace(frrInventory("fd00:bbbb:2::/48"))
	_, priv, _ := ed25519.GenerateKey(nil)
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"inv.yaml": text, "kh": "", "key": string(pem.EncodeToMemory(block))} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b := New()
	if err := b.load(harness.Env{Inventory: inv}); err != nil {
		t.Fatal(err)
	}
	links := func(mtu map[string]int) *drivers.State {
		st := &drivers.State{}
		for name, m := range mtu {
			st.Links = append(st.Links, drivers.LinkState{Name: name, Up: true, Admin: true, MTU: m})
		}
		return st
	}
	nine := map[string]int{"lo": 65536, "eth1": 9000, "eth2": 9000, "eth3": 9000}
	for _, d := range []string{"leaf0", "spine0", "spine1"} {
		b.recordState(d, links(nine))
	}
	// leaf1's port towards spine0 is at 1500; host0's management NIC
	// at 1280 is not on any host's path.
	b.recordState("leaf1", links(map[string]int{"eth1": 9000, "eth2": 1500, "eth3": 9000}))
	b.recordState("host0", links(map[string]int{"eth0": 1280, "eth1": 9000}))
	b.recordState("host1", links(map[string]int{"eth0": 1280, "eth1": 9000}))

	check := func(mtu int, srv6 bool) error {
		t.Helper()
		feat := ""
		if srv6 {
			feat = "features:\n  srv6: {usid: true, paths: [{src: host0, dst: host1, via: [spine0]}]}\n"
		}
		file := filepath.Join(dir, "s.yaml")
		text := "name: s\nfabric: {inventory: inv.yaml}\n" + feat + "transport: {cc: nscc, lb: ops, mtu: " + itoa(mtu) + "}\njobs:\n  - {name: perm, workload: permutation, size: 256KiB}\n"
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := suite.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.PointsChecked(b.LiveCheck())
		return err
	}
	// IPv4 20 + UDP 8 + data header 48: 1424 fits 1500, 1425 does not.
	if err := check(1424, false); err != nil {
		t.Errorf("mtu 1424 on a 1500-byte port: %v", err)
	}
	err = check(8192, false)
	if err == nil {
		t.Fatal("mtu 8192 on a 1500-byte port: no error")
	}
	msg := err.Error()
	t.Logf("refusal: %s", msg)
	for _, want := range []string{"transport.mtu", "an mtu of 8192", "8268 bytes", "1500-byte MTU read on leaf1 Ethernet1 (interface eth2)", "at most 1424", "nothing was changed"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if !regexp.MustCompile(`s\.yaml:\d+:\d+`).MatchString(msg) {
		t.Errorf("error %q has no file:line:col", msg)
	}
	if strings.Contains(msg, "1280") {
		t.Errorf("error %q names the management NIC", msg)
	}
	if err := check(1425, false); err == nil || !strings.Contains(err.Error(), "at most 1424") {
		t.Errorf("mtu 1425: %v", err)
	}
	// Pinned SRv6 paths add an outer IPv6 header and a one-segment SRH.
	if err := check(1360, true); err != nil {
		t.Errorf("mtu 1360 with SRv6 paths: %v", err)
	}
	if err := check(1400, true); err == nil || !strings.Contains(err.Error(), "at most 1360") || !strings.Contains(err.Error(), "SRv6 encapsulation") {
		t.Errorf("mtu 1400 with SRv6 paths: %v", err)
	}
	// At 9000 everywhere the plan-time bound is the only one.
	b.recordState("leaf1", links(nine))
	if err := check(MaxMTU, false); err != nil {
		t.Errorf("mtu %d at 9000: %v", MaxMTU, err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
