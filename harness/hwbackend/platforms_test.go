package hwbackend

import (
	"slices"
	"strings"
	"testing"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/inventory"
)

// The per-platform declaration (platformFeatures, which the feature table
// in docs/features.md shows) is what DeviceFeatures asks of the
// switches: for each suite feature, on SONiC and on FRR switches, the
// device features the switches are asked for are exactly the declared
// ones.
func TestPlatformFeaturesAreDeviceFeatures(t *testing.T) {
	for _, platform := range []string{"sonic", "frr"} {
		hw, f := parseInventory(t, strings.ReplaceAll(frrInventory("fd00:bbbb:2::/48"), "platform: frr", "platform: "+platform))
		spine0, _ := f.NodeByName("spine0")
		paths := []runspec.SRv6Path{{Name: "p", Src: 0, Dst: 1, Via: []int{spine0}}}
		for _, c := range []struct {
			f    harness.Feature
			feat runspec.Features
		}{
			{harness.FeatECN, runspec.Features{ECN: true, KMin: 0.2, KMax: 0.8}},
			{harness.FeatTrimming, runspec.Features{Trimming: true}},
			{harness.FeatPFC, runspec.Features{PFC: true, PFCPriorities: []int{3}}},
			{harness.FeatPFCWatchdog, runspec.Features{PFC: true, PFCPriorities: []int{3}, PFCWatchdogDetect: 200_000_000_000}},
			{harness.FeatSRv6, runspec.Features{SRv6: true, SRv6Paths: paths}},
			{harness.FeatController, runspec.Features{SRv6: true, SRv6Paths: paths}},
			{harness.FeatVRF, runspec.Features{VRFs: []runspec.VRF{{Name: "Vrf-red", Table: 10, Hosts: []int{0}}, {Name: "Vrf-blue", Table: 20, Hosts: []int{1}}}}},
			{harness.FeatQueue, runspec.Features{QueueBytes: 512 << 10}},
			{harness.FeatAdaptive, runspec.Features{Adaptive: true}},
			{harness.FeatFlowlet, runspec.Features{Flowlet: true, FlowletGap: 50_000_000}},
			{harness.FeatPlanes, runspec.Features{}},
		} {
			c.feat.ECMPHash = drivers.FiveTuple()
			var got []drivers.Feature
			for i := range hw.Devices {
				dev := &hw.Devices[i]
				if dev.Role == inventory.DeviceHost {
					continue
				}
				w, err := DeviceFeatures(f, hw, dev, c.feat, LinkMTU)
				if err != nil {
					t.Fatalf("%s on %s %s: %v", c.f, platform, dev.Name, err)
				}
				for _, df := range w.Requested() {
					if df != drivers.FeatECMPHash && !slices.Contains(got, df) {
						got = append(got, df)
					}
				}
			}
			want := platformFeatures(platform, c.f)
			slices.Sort(got)
			want = slices.Sorted(slices.Values(want))
			if !slices.Equal(got, want) {
				t.Errorf("%s on %s switches: the switches are asked for %v, platformFeatures says %v", c.f, platform, got, want)
			}
		}
	}
	b := New()
	if r := b.PlatformLimit("frr", harness.FeatECN); r != drivers.Limit("frr", drivers.FeatECN) || r == "" {
		t.Errorf("FRR ECN limit %q", r)
	}
	if r := b.PlatformLimit("sonic", harness.FeatPFCWatchdog); r != "" {
		t.Errorf("SONiC PFC watchdog limit %q", r)
	}
	if r := b.PlatformLimit("sonic", harness.FeatFlowlet); r == "" {
		t.Error("SONiC flowlet: no limit")
	}
	if !slices.Equal(b.Platforms(), drivers.Platforms()) {
		t.Errorf("platforms %v", b.Platforms())
	}
}
