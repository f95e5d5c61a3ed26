package labbackend

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/containerlab/native/labtest"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/results"
)

// TestPlanesOnLab runs the multi-plane suite on the FRR lab: every host
// has a NIC per plane (source-routed into that plane's switches), the
// agents open their sockets on both and spread every flow over the planes
// (PLB); every flow completes, each plane's switches and each host NIC
// carry a share of the payload (kernel counters over gNMI), the plane KPI
// passes, and nothing is left behind. The lab uses the management subnet
// 198.19.238.0/24, which no other test package uses.
func TestPlanesOnLab(t *testing.T) {
	labtest.Require(t)
	prev := labMgmtSubnet
	labMgmtSubnet = func(string) netip.Prefix { return netip.MustParsePrefix("198.19.238.0/24") }
	t.Cleanup(func() { labMgmtSubnet = prev })
	res, out := runSuite(t, "../../examples/suites/lab-planes.yaml", Name)
	defer checkTornDown(t, out)
	if len(res.Runs) != 1 {
		t.Fatalf("%d runs", len(res.Runs))
	}
	run := &res.Runs[0]
	if res.Status != results.Pass {
		t.Errorf("suite status %s (%s): KPIs %+v", res.Status, run.Error, run.KPIs)
	}
	for _, j := range run.Jobs {
		if j.Completed != j.Flows {
			t.Errorf("job %s: %d of %d flows completed", j.Name, j.Completed, j.Flows)
		}
		t.Logf("job %s: busbw %.3f Gb/s, completion %.1f ms; %d retransmitted (%d spurious), %d timeouts",
			j.Name, j.BusBWGbps, j.CompletionUs/1000, j.Packets.Retransmitted, j.Packets.SpuriousRetransmits, j.Packets.Timeouts)
	}
	f, err := inventory.Load("leafspine:leaves=2,spines=1,hosts_per_leaf=2,gbps=0.2,planes=2")
	if err != nil {
		t.Fatal(err)
	}
	oct := portOctets(t, out, run)
	// Host NIC bytes per plane, and the spines' (one per plane).
	var nic [2]float64
	spine := map[string]float64{}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			v := oct[n.Name+":"+f.Ports[p].Name]
			switch {
			case n.Role == inventory.RoleHost:
				nic[f.Ports[p].Plane] += v
			case n.Role == inventory.RoleSpine:
				spine[strings.SplitN(n.Name, "-", 2)[0]] += v
			}
		}
	}
	payload := float64(4 * 4 << 20)
	t.Logf("host NIC out-octets per plane %.0f, spine out-octets %v (payload %.0f)", nic, spine, payload)
	for pl, v := range nic {
		if v < 0.2*payload {
			t.Errorf("plane %d's host NICs sent %.0f bytes of %.0f: the flows do not use it", pl, v, payload)
		}
	}
	if nic[0]+nic[1] < payload {
		t.Errorf("the host NICs sent %.0f bytes, less than the payload %.0f", nic[0]+nic[1], payload)
	}
	for _, p := range []string{"p0", "p1"} {
		if spine[p] < 0.2*payload {
			t.Errorf("%s's spine forwarded %.0f bytes: the plane is not used", p, spine[p])
		}
	}
	for _, k := range run.KPIs {
		if k.Name == "plane_share_min" {
			t.Logf("plane_share_min %v", k.Value)
		}
	}
}
