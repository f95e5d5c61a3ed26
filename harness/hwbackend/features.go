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
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/inventory"
	"github.com/fabricbench/fabricbench/units"
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
	b, ok := units.BytesIn(rate, rttPs)
	switch {
	case !ok || b > MaxQueueRefBytes:
		return MaxQueueRefBytes
	case b < LinkMTU:
		return LinkMTU
	}
	return b
}

// DeviceFeatures maps a run's switch features onto one switch of the
// inventory: what its driver diffs, applies, verifies and reverts. It is
// the hardware backend's one place where suite features become device
// settings (for every platform; what a platform then cannot do is its
// driver's Capabilities, checked before any change):
//
//   - features.ecmp.hash: the switch's multipath hash fields;
//
//   - features.ecn: WRED with ECN marking on the queue the agents'
//     packets (DSCP AgentDSCP) use on each port, as the switch's own QoS
//     maps say; thresholds kmin and kmax times QueueRefBytes, marking
//     probability rising to 100% at kmax (as the simulator marks);
//
//   - features.trimming: packets that would be dropped are cut to the
//     agents' headers (Ethernet, IP, UDP and the agent's data header) and
//     sent with DSCP TrimDSCP on queue TrimQueue;
//
//   - features.vrfs: on each leaf, one VRF per suite VRF with a host
//     attached there, its members the leaf's ports to those hosts (the
//     device's own interface names), its table the suite's; on SONiC the
//     name gets SONiC's "Vrf" prefix. Route leaking is refused there: the
//     SONiC driver configures no leaks. On FRR and Linux routers, whose
//     VRFs would not be routed between leaves (one underlay, no per-VRF
//     BGP), the VRFs are isolation rules on the leaves' host ports
//     instead (leafIsolation; leaks allowed), as on the netns lab;
//
//   - features.srv6: every switch's uN SID from its srv6_locator, and
//     for each pinned path (features.srv6.paths) the uDX SIDs on the
//     destination leaves and the steering routes and policy rules on
//     both hosts (srv6.go); a host's features are only these.
//
//   - features.pfc, features.queue, features.ecmp.mode: qosFeatures.
//
// The path controller moves pinned paths through Steer (srv6.go).
func DeviceFeatures(f *inventory.Fabric, hw *inventory.Hardware, dev *inventory.Device, feat runspec.Features, queueRef int64) (*drivers.DeviceFeatures, error) {
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
	if err := qosFeatures(f, dev, feat, want); err != nil {
		return nil, err
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
func leafVRFs(f *inventory.Fabric, dev *inventory.Device, vrfs []runspec.VRF) ([]drivers.VRF, error) {
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
func (b *Backend) CheckPlan(p *runspec.RunSpec) error {
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

// PFC headroom on hardware (the simulator's sizing, sim/pfc.go): XOFF
// headroom 2 × link latency × rate + 2 MTU for the device's fastest link,
// the latency the inventory's (at least MinHeadroomLatencyPs), XON two
// MTUs, the reserved size both.
const (
	// MinHeadroomLatencyPs is the least link latency headroom is sized
	// for (1 µs, the simulator's default link: ~200 m of fibre).
	MinHeadroomLatencyPs = 1_000_000
	// MaxHeadroomBytes caps a priority group's headroom (64 MiB).
	MaxHeadroomBytes = 64 << 20
)

// pfcHeadroom is dev's lossless priority groups' buffer.
func pfcHeadroom(f *inventory.Fabric, dev *inventory.Device) (*drivers.PFCHeadroom, error) {
	id, ok := f.NodeByName(dev.Name)
	if !ok {
		return nil, fmt.Errorf("the fabric has no node %s", dev.Name)
	}
	var xoff int64
	for _, p := range f.Ports {
		if p.Node != id || p.Link < 0 || p.Link >= len(f.Links) {
			continue
		}
		l := f.Links[p.Link]
		lat := max(l.LatencyPs, MinHeadroomLatencyPs)
		inFlight, ok := units.BytesIn(l.RateBps, 2*lat)
		b := inFlight + 2*LinkMTU
		if !ok || b > MaxHeadroomBytes {
			return nil, fmt.Errorf("features.pfc: a %d bit/s link with %d ps latency needs more than %d bytes of headroom", l.RateBps, l.LatencyPs, int64(MaxHeadroomBytes))
		}
		xoff = max(xoff, b)
	}
	if xoff == 0 {
		return nil, nil
	}
	xon := int64(2 * LinkMTU)
	return &drivers.PFCHeadroom{Xoff: xoff, Xon: xon, Size: xoff + xon}, nil
}

// qosFeatures maps PFC, queue sizes and the ECMP mode onto a switch:
//
//   - features.pfc: PFC on the priorities the suite lists and on the
//     class the agents' packets (DSCP AgentDSCP) are in on each port (so
//     that they are lossless); the lossless priority groups' headroom
//     (pfcHeadroom); features.pfc.watchdog: the watchdog with its detect
//     and restore times (restore defaults to detect);
//   - features.queue (a size): the egress queue the agents' packets use,
//     capped at that size; longest-path sizing is refused (it needs the
//     simulator's source-guided paths);
//   - features.ecmp.mode adaptive or flowlet: the switch's adaptive
//     routing (per packet) or flowlet switching with the suite's gap;
//   - the ECMP width: the switch's uplinks in the fabric, the equal-cost
//     next hops it must install for a destination beyond them (FRR: at
//     least that maximum-paths, refused above zebra's ECMP maximum).
func qosFeatures(f *inventory.Fabric, dev *inventory.Device, feat runspec.Features, want *drivers.DeviceFeatures) error {
	if w := ecmpWidth(f, dev); w > 1 {
		want.ECMPWidth = w
	}
	if feat.PFC {
		hr, err := pfcHeadroom(f, dev)
		if err != nil {
			return err
		}
		want.PFC = &drivers.PFC{Priorities: slices.Clone(feat.PFCPriorities), DSCPs: []int{AgentDSCP}, Headroom: hr}
		if d := feat.PFCWatchdogDetect; d > 0 {
			r := feat.PFCWatchdogRestore
			if r <= 0 {
				r = d
			}
			want.PFC.Watchdog = &drivers.PFCWatchdog{Detect: units.Duration(d), Restore: units.Duration(r)}
		}
	}
	switch {
	case feat.QueueLongestPath:
		return &drivers.CapabilityError{Platform: dev.Platform, Device: dev.Name, Feature: drivers.FeatQueueSize,
			Reason: "features.queue longest-path sizes queues and windows on the simulator's source-guided paths; set a size"}
	case feat.QueueBytes > 0:
		want.QueueSize = &drivers.QueueSize{Bytes: feat.QueueBytes, DSCPs: []int{AgentDSCP}}
	}
	switch {
	case feat.Adaptive:
		want.Adaptive = &drivers.Adaptive{Mode: drivers.AdaptivePacket}
	case feat.Flowlet:
		want.Adaptive = &drivers.Adaptive{Mode: drivers.AdaptiveFlowlet, FlowletGap: units.Duration(feat.FlowletGap)}
	}
	return nil
}

// ecmpWidth is the number of dev's ports to a switch on a higher tier.
func ecmpWidth(f *inventory.Fabric, dev *inventory.Device) int {
	id, ok := f.NodeByName(dev.Name)
	if !ok {
		return 0
	}
	n := 0
	for _, p := range f.Ports {
		if p.Node == id && p.Uplink && p.Peer >= 0 && p.Peer < len(f.Ports) && f.Nodes[f.Ports[p.Peer].Node].IsSwitch() {
			n++
		}
	}
	return n
}
