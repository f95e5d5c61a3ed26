package hwbackend

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fabricbench/fabricbench/agents/dataplane"
	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/hostdeploy"
	"github.com/fabricbench/fabricbench/inventory"
)

// Settings the features map to on every platform.
const (
	// TrimDSCP and TrimQueue are where a trimmed packet's header goes: a
	// class of its own above the data.
	TrimDSCP  = 46
	TrimQueue = 6
	// AgentDSCP is the DSCP of the agents' packets (they set only the ECN
	// bits): WRED goes on the queue each switch port puts it in.
	AgentDSCP = 0
	// MaxQueueRefBytes caps the reference queue ECN thresholds are
	// fractions of (1 GiB).
	MaxQueueRefBytes = 1 << 30
)

// QueueRefBytes is the queue the suite's ECN thresholds (kmin, kmax: a
// fraction of the queue) are fractions of on hardware: one bandwidth-delay
// product, the fabric's fastest link rate times the base round trip of
// the longest path (the agents' endpoint time and 2*tiers-1 switches each
// way, at the backend's costs), at most MaxQueueRefBytes and at least one
// LinkMTU.
func QueueRefBytes(f *inventory.Fabric, c hostdeploy.Costs) int64 {
	var rate int64
	for _, l := range f.Links {
		rate = max(rate, l.RateBps)
	}
	hops := int64(max(2*f.Tiers-1, 1))
	rttPs := c.EndpointPs + 2*hops*c.HopPs
	b := float64(rate) * float64(rttPs) / 8e12
	switch {
	case b > MaxQueueRefBytes:
		return MaxQueueRefBytes
	case b < LinkMTU:
		return LinkMTU
	}
	return int64(math.Round(b))
}

// DeviceFeatures maps a run's switch features onto one switch of the
// inventory: what its driver diffs, applies, verifies and reverts. It is
// the hardware backend's one place where suite features become device
// settings (for every platform; what a platform then cannot do is its
// driver's Capabilities, checked before any change):
//
//   - features.ecmp.hash: the switch's multipath hash fields;
//   - features.ecn: WRED with ECN marking on the queue the agents'
//     packets (DSCP AgentDSCP) use on each port, as the switch's own QoS
//     maps say; thresholds kmin and kmax times QueueRefBytes, marking
//     probability rising to 100% at kmax (as the simulator marks);
//   - features.trimming: packets that would be dropped are cut to the
//     agents' headers (Ethernet, IP, UDP and the agent's data header) and
//     sent with DSCP TrimDSCP on queue TrimQueue;
//   - features.vrfs: on each leaf, one VRF per suite VRF with a host
//     attached there, its members the leaf's ports to those hosts (the
//     device's own interface names), its table the suite's; on SONiC the
//     name gets SONiC's "Vrf" prefix. Route leaking is refused there: the
//     SONiC driver configures no leaks. On FRR and Linux routers, whose
//     VRFs would not be routed between leaves (one underlay, no per-VRF
//     BGP), the VRFs are isolation rules on the leaves' host ports
//     instead (leafIsolation; leaks allowed), as on the netns lab;
//   - features.srv6: every switch's uN SID from its srv6_locator, and
//     for each pinned path (features.srv6.paths) the uDX SIDs on the
//     destination leaves and the steering routes and policy rules on
//     both hosts (srv6.go); a host's features are only these.
//
// PFC, queue sizes, adaptive routing and the path controller are not
// mapped yet (refused by Capabilities at plan time).
func DeviceFeatures(f *inventory.Fabric, hw *inventory.Hardware, dev *inventory.Device, feat harness.Features, queueRef int64) (*drivers.DeviceFeatures, error) {
	sr, err := planSRv6(f, hw, feat)
	if err != nil {
		return nil, err
	}
	if dev.Role == inventory.DeviceHost {
		return &drivers.DeviceFeatures{SRv6: sr.of(dev.Name)}, nil
	}
	want := &drivers.DeviceFeatures{ECMPHash: slices.Clone(feat.ECMPHash), SRv6: sr.of(dev.Name)}
	if feat.ECN {
		kmin, kmax := feat.KMin, feat.KMax
		if kmin < 0 || kmax > 1 || kmin >= kmax {
			return nil, fmt.Errorf("features.ecn: kmin %g and kmax %g: want 0 <= kmin < kmax <= 1", kmin, kmax)
		}
		want.ECN = &drivers.ECN{MinBytes: max(int64(math.Round(kmin*float64(queueRef))), 1), MaxBytes: int64(math.Round(kmax * float64(queueRef))),
			MaxProbPercent: 100, DSCPs: []int{AgentDSCP}}
	}
	if feat.Trimming {
		hdr, _ := dataplane.WireHeaderBytes(false)
		want.Trimming = &drivers.Trimming{Size: hdr, DSCP: TrimDSCP, Queue: TrimQueue}
	}
	if len(feat.VRFs) > 0 && dev.Role == inventory.DeviceLeaf && vrfByRules(dev.Platform) {
		iso, err := leafIsolation(f, hw, dev, feat.VRFs)
		if err != nil {
			return nil, err
		}
		want.Isolation = iso
	} else if len(feat.VRFs) > 0 && dev.Role == inventory.DeviceLeaf {
		vrfs, err := leafVRFs(f, dev, feat.VRFs)
		if err != nil {
			return nil, err
		}
		want.VRFs = vrfs
	}
	return want, nil
}

// leafVRFs are a leaf's VRFs: per suite VRF, the leaf's ports to its
// hosts.
func leafVRFs(f *inventory.Fabric, dev *inventory.Device, vrfs []harness.VRF) ([]drivers.VRF, error) {
	id, ok := f.NodeByName(dev.Name)
	if !ok {
		return nil, fmt.Errorf("the fabric has no node %s", dev.Name)
	}
	var out []drivers.VRF
	for _, v := range vrfs {
		if len(v.Leak) > 0 {
			return nil, &drivers.CapabilityError{Platform: dev.Platform, Device: dev.Name, Feature: drivers.FeatVRF,
				Reason: fmt.Sprintf("VRF %s leaks routes to %s: the drivers configure no route leaking between VRFs", v.Name, strings.Join(v.Leak, ", "))}
		}
		name := v.Name
		if dev.Platform == "sonic" && !strings.HasPrefix(name, "Vrf") {
			name = "Vrf-" + name
		}
		dv := drivers.VRF{Name: name, Table: v.Table}
		for _, h := range v.Hosts {
			hn := f.Host(h)
			for _, p := range hn.Ports {
				peer := f.Ports[p].Peer
				if f.Ports[peer].Node != id {
					continue
				}
				port := f.Ports[peer].Name
				dv.Interfaces = append(dv.Interfaces, dev.Interface(port))
			}
		}
		if len(dv.Interfaces) > 0 {
			out = append(out, dv)
		}
	}
	return out, nil
}

// refusal is the plan-time error for a feature a device cannot do: it
// names the device, its platform and the feature.
func refusal(err error) error {
	var ce *drivers.CapabilityError
	if errors.As(err, &ce) {
		return &harness.InputError{Err: fmt.Errorf("%s (platform %s) cannot do %s, which the suite needs: %s; nothing was changed", ce.Device, ce.Platform, ce.Feature, ce.Reason)}
	}
	return err
}

// CheckPlan implements harness.PlanChecker: every switch of the point's
// inventory gets its DeviceFeatures, and a feature its platform's driver
// never does (drivers.Limit) is refused naming device, platform and
// feature, before anything is reached. What depends on the device (the
// kernel's qdiscs, the ASIC's trimming, a change that cannot be reverted)
// is checked by Configure, also before anything changes.
func (b *Backend) CheckPlan(p *harness.Point) error {
	path := p.Suite.Fabric.Inventory
	if path == "" || p.Fabric == nil {
		return nil
	}
	hw, err := inventory.LoadHardware(path, drivers.Platforms()...)
	if err != nil {
		return err
	}
	// SRv6 is planned for the whole inventory: its errors once.
	if _, err := planSRv6(p.Fabric, hw, p.Features); err != nil {
		return err
	}
	var errs []error
	for i := range hw.Devices {
		dev := &hw.Devices[i]
		want, err := DeviceFeatures(p.Fabric, hw, dev, p.Features, LinkMTU)
		if err == nil {
			for _, f := range want.Requested() {
				if r := drivers.Limit(dev.Platform, f); r != "" {
					err = &drivers.CapabilityError{Platform: dev.Platform, Device: dev.Name, Feature: f, Reason: r}
					break
				}
			}
		}
		if err != nil {
			var ce *drivers.CapabilityError
			if errors.As(err, &ce) {
				errs = append(errs, fmt.Errorf("%s (platform %s) cannot do %s, which the suite needs: %s", ce.Device, ce.Platform, ce.Feature, ce.Reason))
			} else {
				errs = append(errs, fmt.Errorf("%s: %w", dev.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}
