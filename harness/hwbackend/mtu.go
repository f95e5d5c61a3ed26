package hwbackend

import (
	"fmt"
	"sort"

	"github.com/fabricbench/fabricbench/agents/dataplane"
	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/harness/suite"
	"github.com/fabricbench/fabricbench/inventory"
)

// The devices' MTUs: MaxMTU assumes LinkMTU, but a port or NIC at a
// smaller MTU (a lab generated without --mtu: 1500) drops every packet of
// a larger transport.mtu, and the run would only stall. ValidateFabric
// reads the MTU of every interface with the bring-up checks' device
// states (bringup.Options.OnState), and LiveCheck refuses, before any
// point, a transport.mtu whose packets do not fit the smallest MTU of the
// interfaces on the hosts' paths: the NIC each agent binds and both ends
// of every link of the fabric.

// SRv6EncapBytes is what the steering hosts' seg6 encapsulation adds to
// a packet of a pinned path (features.srv6.paths): an outer IPv6 header
// and a segment routing header with one segment (the micro-SID
// container).
const SRv6EncapBytes = dataplane.IPv6HeaderLen + 8 + 16

// portMTU is an interface's MTU as read from its device.
type portMTU struct {
	dev, port, iface string
	mtu              int
}

func (p portMTU) String() string {
	if p.port != p.iface {
		return fmt.Sprintf("%s %s (interface %s)", p.dev, p.port, p.iface)
	}
	return p.dev + " " + p.iface
}

// recordState keeps the interfaces' MTUs of one device's state.
func (b *Backend) recordState(dev string, st *drivers.State) {
	b.mtuM.Lock()
	defer b.mtuM.Unlock()
	if b.ifMTU == nil {
		b.ifMTU = map[string]map[string]int{}
	}
	m := map[string]int{}
	for _, l := range st.Links {
		if l.MTU > 0 {
			m[l.Name] = l.MTU
		}
	}
	b.ifMTU[dev] = m
}

// pathMTUs are the read MTUs of the interfaces on the hosts' paths, the
// smallest first: each host's agent NIC and both ends of every link (a
// host's end only when it is the agent's NIC). Interfaces whose MTU was
// not read are left out.
func (b *Backend) pathMTUs() []portMTU {
	b.mtuM.Lock()
	defer b.mtuM.Unlock()
	seen := map[[2]string]bool{}
	var out []portMTU
	add := func(dev, port string) {
		d := b.hw.Device(dev)
		if d == nil {
			return
		}
		iface := d.Interface(port)
		if seen[[2]string{dev, iface}] {
			return
		}
		seen[[2]string{dev, iface}] = true
		if m, ok := b.ifMTU[dev][iface]; ok {
			out = append(out, portMTU{dev: dev, port: port, iface: iface, mtu: m})
		}
	}
	agentNIC := map[string]string{}
	for i := range b.hw.Devices {
		d := &b.hw.Devices[i]
		if d.Role != inventory.DeviceHost {
			continue
		}
		if nic, ok := firstAddressedNIC(d); ok {
			agentNIC[d.Name] = nic.Name
			add(d.Name, nic.Name)
		}
	}
	for _, l := range b.hw.Links {
		for _, e := range []inventory.Endpoint{l.A, l.B} {
			if d := b.hw.Device(e.Device); d != nil && d.Role == inventory.DeviceHost && agentNIC[e.Device] != e.Port {
				continue
			}
			add(e.Device, e.Port)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].mtu < out[j].mtu })
	return out
}

// firstAddressedNIC is the NIC a host's agent binds: its first with an
// address.
func firstAddressedNIC(d *inventory.Device) (inventory.NIC, bool) {
	for _, nic := range d.NICs {
		if nic.Address.IsValid() {
			return nic, true
		}
	}
	return inventory.NIC{}, false
}

// hostsV6 reports whether the agents' data addresses are IPv6 (the
// first host's decides, as for the agents' header sizes).
func (b *Backend) hostsV6() bool {
	for i := range b.hw.Devices {
		d := &b.hw.Devices[i]
		if d.Role == inventory.DeviceHost {
			nic, ok := firstAddressedNIC(d)
			return ok && nic.Address.Addr().Is6()
		}
	}
	return false
}

// LiveCheck implements harness.LiveChecker: a transport.mtu whose
// packets (payload, the agents' IP, UDP and data headers, and the SRv6
// encapsulation of pinned paths) exceed the smallest MTU read on the
// hosts' paths is refused, naming that device, interface and MTU and the
// largest transport.mtu that fits.
func (b *Backend) LiveCheck() suite.CheckFunc {
	ports := b.pathMTUs()
	v6 := b.hostsV6()
	return func(s *suite.Suite, errf func(path, format string, args ...any)) {
		if len(ports) == 0 {
			return
		}
		smallest := ports[0]
		ip, ipName := dataplane.IPv4HeaderLen, "IPv4"
		if v6 {
			ip, ipName = dataplane.IPv6HeaderLen, "IPv6"
		}
		over := ip + dataplane.UDPHeaderLen + dataplane.DataHeaderLen
		heads := fmt.Sprintf("%s %d + UDP %d + data header %d bytes", ipName, ip, dataplane.UDPHeaderLen, dataplane.DataHeaderLen)
		if s.Features.SRv6 != nil && len(s.Features.SRv6.Paths) > 0 {
			over += SRv6EncapBytes
			heads += fmt.Sprintf(" + the SRv6 encapsulation of features.srv6.paths %d bytes (outer IPv6 header and a one-segment SRH)", SRv6EncapBytes)
		}
		if s.Transport.MTU+over <= smallest.mtu {
			return
		}
		fit := smallest.mtu - over
		fix := fmt.Sprintf("set transport.mtu to at most %d, or raise the MTU of %s", fit, smallest)
		if fit < 256 {
			fix = fmt.Sprintf("no transport.mtu fits (at least 256); raise the MTU of %s", smallest)
		}
		errf("transport.mtu", "the devices cannot carry an mtu of %d: its packets are %d bytes (%s), larger than the %d-byte MTU read on %s, the smallest on the hosts' paths; %s (nothing was changed on the devices)",
			s.Transport.MTU, s.Transport.MTU+over, heads, smallest.mtu, smallest, fix)
	}
}
