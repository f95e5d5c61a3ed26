package hwbackend

import (
	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/harness"
)

// platformFeatures are the device features the backend configures on a
// switch of platform for suite feature f (DeviceFeatures maps a run's
// features onto each device; TestPlatformFeaturesAreDeviceFeatures keeps
// the two in step). A suite feature not listed configures nothing
// through the devices' drivers: the backend does it on the hosts, or
// refuses it (capabilities).
func platformFeatures(platform string, f harness.Feature) []drivers.Feature {
	switch f {
	case harness.FeatECN:
		return []drivers.Feature{drivers.FeatECN}
	case harness.FeatTrimming:
		return []drivers.Feature{drivers.FeatTrimming}
	case harness.FeatPFC:
		return []drivers.Feature{drivers.FeatPFC}
	case harness.FeatPFCWatchdog:
		return []drivers.Feature{drivers.FeatPFC, drivers.FeatPFCWatchdog}
	case harness.FeatSRv6, harness.FeatController:
		// The path controller moves pinned SRv6 paths.
		return []drivers.Feature{drivers.FeatSRv6}
	case harness.FeatVRF:
		if vrfByRules(platform) {
			return []drivers.Feature{drivers.FeatVRFRules}
		}
		return []drivers.Feature{drivers.FeatVRF}
	case harness.FeatQueue:
		return []drivers.Feature{drivers.FeatQueueSize}
	case harness.FeatAdaptive, harness.FeatFlowlet:
		return []drivers.Feature{drivers.FeatAdaptive}
	}
	return nil
}

// Platforms implements harness.PlatformCapable: the registered drivers'
// platforms.
func (b *Backend) Platforms() []string { return drivers.Platforms() }

// PlatformLimit implements harness.PlatformCapable: why the switches of
// platform never do f, the driver's limit (drivers.Limit) of the first
// device feature f needs there that it never does; "" when it may.
func (b *Backend) PlatformLimit(platform string, f harness.Feature) string {
	for _, df := range platformFeatures(platform, f) {
		if r := drivers.Limit(platform, df); r != "" {
			return r
		}
	}
	return ""
}
