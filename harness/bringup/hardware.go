package bringup

import (
	"fmt"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/inventory"
)

// FromHardware builds the validation target of real hardware from its
// inventory: every device reached with its credentials (resolved from env
// or files) and host keys checked against the inventory's known_hosts.
// Switch ports carry no addresses in an inventory, so BGP sessions are
// matched by local interface; host prefixes come from the NIC addresses.
func FromHardware(hw *inventory.Hardware) (*Target, error) {
	t := &Target{Name: hw.Name, Topology: hw.File, Runtime: "hardware"}
	for i := range hw.Devices {
		d := &hw.Devices[i]
		cfg, err := drivers.ConfigFor(hw, d.Name)
		if err != nil {
			return nil, err
		}
		t.Devices = append(t.Devices, Device{Name: d.Name, Role: string(d.Role), Platform: d.Platform, Config: cfg})
	}
	nicAddr := func(dev, port string) Endpoint {
		e := Endpoint{Device: dev, Interface: port}
		if d := hw.Device(dev); d != nil {
			e.Interface = d.Interface(port)
			for _, n := range d.NICs {
				if n.Name == port && n.Address.IsValid() {
					if n.Address.Addr().Is4() {
						e.IPv4 = n.Address
					} else {
						e.IPv6 = n.Address
					}
				}
			}
		}
		return e
	}
	for _, c := range hw.Links {
		t.Links = append(t.Links, Link{A: nicAddr(c.A.Device, c.A.Port), B: nicAddr(c.B.Device, c.B.Port)})
	}
	if len(t.Devices) == 0 {
		return nil, fmt.Errorf("%s: no devices", hw.File)
	}
	return t, nil
}
