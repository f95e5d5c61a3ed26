package labinv

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/labrt"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/units"
)

// fakeLab is a generated leaf-spine lab and the state a native deployment
// of it would record (nothing is deployed).
func fakeLab(t *testing.T, spec string, rates bool) (*containerlab.Lab, *labrt.State) {
	t.Helper()
	f, err := inventory.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	g, err := containerlab.Generate(f, containerlab.GenOptions{Name: "fbinv", MgmtSubnet: netip.MustParsePrefix("198.19.230.0/24"), LinkRates: rates})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := g.Write(dir); err != nil {
		t.Fatal(err)
	}
	lab, err := g.Resolve(dir, containerlab.RuntimeNative)
	if err != nil {
		t.Fatal(err)
	}
	st := &labrt.State{Lab: lab.Name, Runtime: containerlab.RuntimeNative, KnownHosts: "/run/fb/fbinv/known_hosts", Key: "/run/fb/fbinv/id_ed25519", User: "root"}
	for _, n := range lab.Nodes {
		st.Nodes = append(st.Nodes, labrt.NodeState{Name: n.Name, OS: n.OS, Role: n.Role, Mgmt: n.Mgmt.String(), Transport: labrt.TransportSSH})
	}
	return lab, st
}

// The generated inventory parses, and its fabric is the spec's fabric:
// the same nodes, roles, port names and link rates.
func TestGenerateMatchesFabric(t *testing.T) {
	const spec = "leafspine:leaves=2,spines=4,hosts_per_leaf=4,gbps=0.05"
	lab, st := fakeLab(t, spec, true)
	out, err := Generate(lab, st, Options{GNMI: map[string]GNMI{
		"leaf0":  {Address: "198.19.230.9:9339", CA: "/tmp/ca.pem", Password: "file:/tmp/pw"},
		"spine0": {Address: "198.19.230.10:9339", SkipVerify: true, Password: "file:/tmp/pw"},
		"spine1": {Address: "198.19.230.11:9339", Insecure: true},
	}})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		`key: "file:/run/fb/fbinv/id_ed25519"`, `known_hosts: "/run/fb/fbinv/known_hosts"`,
		`{name: "Ethernet4", interface: "eth5"}`, `{name: "eth1", address: 198.18.`,
		`gnmi: {address: "198.19.230.9:9339", credentials: gnmi, tls: {ca: "/tmp/ca.pem"}}`,
		`gnmi: {address: "198.19.230.10:9339", credentials: gnmi, tls: {skip_verify: true}}`,
		`gnmi: {address: "198.19.230.11:9339", insecure: true}`, "speed: 50M",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("inventory lacks %s:\n%s", want, text)
		}
	}
	hw, err := inventory.ParseHardware("fbinv.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := hw.Fabric()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := inventory.ParseSpec(spec)
	if got.NumHosts() != want.NumHosts() || len(got.Nodes) != len(want.Nodes) || len(got.Links) != len(want.Links) {
		t.Fatalf("fabric: %d hosts %d nodes %d links, want %d %d %d", got.NumHosts(), len(got.Nodes), len(got.Links), want.NumHosts(), len(want.Nodes), len(want.Links))
	}
	// Every switch port of the spec's fabric is in the inventory's, by
	// name, with the same rate.
	for _, wn := range want.Nodes {
		if !wn.IsSwitch() {
			continue
		}
		id, ok := got.NodeByName(wn.Name)
		if !ok {
			t.Fatalf("no node %s", wn.Name)
		}
		names := map[string]bool{}
		for _, p := range got.Nodes[id].Ports {
			names[got.Ports[p].Name] = true
		}
		for _, p := range wn.Ports {
			if !names[want.Ports[p].Name] {
				t.Errorf("%s: no port %s in the inventory's fabric (%v)", wn.Name, want.Ports[p].Name, names)
			}
		}
	}
	if d := hw.Device("leaf0"); d.Interface("Ethernet4") != "eth5" || d.GNMI == nil || d.GNMI.CA != "/tmp/ca.pem" {
		t.Errorf("leaf0: Ethernet4 is %s, gnmi %+v", d.Interface("Ethernet4"), d.GNMI)
	}
}

// What cannot be an inventory is refused, naming the node or link.
func TestGenerateRefuses(t *testing.T) {
	lab, st := fakeLab(t, "leafspine:leaves=2,spines=1,hosts_per_leaf=1", false)
	if _, err := Generate(lab, st, Options{}); err == nil || !strings.Contains(err.Error(), "has no rate") || !strings.Contains(err.Error(), "--default-speed") {
		t.Errorf("links without rates: %v", err)
	}
	if _, err := Generate(lab, st, Options{DefaultSpeed: 10e9}); err != nil {
		t.Errorf("with a default speed: %v", err)
	}
	// A containerlab node without sshd: docker exec on this machine.
	st.Nodes[0].Transport, st.Nodes[0].Container = labrt.TransportDocker, "clab-fbinv-"+st.Nodes[0].Name
	out, err := Generate(lab, st, Options{DefaultSpeed: 10e9})
	if err != nil || !strings.Contains(string(out), `container: "clab-fbinv-`+st.Nodes[0].Name+`"`) {
		t.Errorf("a docker exec node: %v\n%s", err, out)
	}
	if hw, err := inventory.ParseHardware("x.yaml", out); err != nil || hw.Device(st.Nodes[0].Name).Container == "" {
		t.Errorf("container not parsed: %v", err)
	}
	st.Nodes[0].Mgmt = ""
	if _, err := Generate(lab, st, Options{DefaultSpeed: 10e9}); err == nil || !strings.Contains(err.Error(), "no management address") {
		t.Errorf("no management address: %v", err)
	}
	st.Nodes[0].Transport, st.Nodes[0].Mgmt = labrt.TransportSSH, "198.19.230.99"
	if _, err := Generate(lab, st, Options{DefaultSpeed: 10e9, GNMI: map[string]GNMI{"host0": {Address: "1.2.3.4:1", Insecure: true}}}); err == nil || !strings.Contains(err.Error(), "no switch host0") {
		t.Errorf("gnmi on a host: %v", err)
	}
}

func TestParseGNMI(t *testing.T) {
	n, g, err := ParseGNMI("leaf0=198.19.230.2:9339,ca=ca.pem,user=u,password=file:pw")
	if err != nil || n != "leaf0" || g.Address != "198.19.230.2:9339" || g.CA != "ca.pem" || g.User != "u" || g.Password != "file:pw" {
		t.Errorf("%s %+v %v", n, g, err)
	}
	for _, bad := range []string{"leaf0", "leaf0=1.2.3.4:1", "leaf0=1.2.3.4:1,insecure,skip-verify", "leaf0=1.2.3.4:1,tls"} {
		if _, _, err := ParseGNMI(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSpeed(t *testing.T) {
	for bps, want := range map[int64]string{50e6: "50M", 400e9: "400G", 2e12: "2T", 1_500_000: "1.5M", 2_500_000_000: "2500M"} {
		if got := Speed(bps); got != want {
			t.Errorf("Speed(%d) = %s, want %s", bps, got, want)
		}
		if v, err := units.ParseSpeed(Speed(bps)); err != nil || v != bps {
			t.Errorf("ParseSpeed(%s) = %d, %v", Speed(bps), v, err)
		}
	}
}
