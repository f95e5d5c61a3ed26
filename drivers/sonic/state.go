package sonic

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/fabricbench/fabricbench/drivers"
)

// Commands of Facts and State.
const (
	cmdShowVersion   = "show version"
	cmdHostname      = "hostname"
	cmdIfStatus      = "show interfaces status"
	cmdBGPSummary    = "vtysh -c 'show bgp vrf all summary json'"
	cmdRoutesV4      = "vtysh -c 'show ip route vrf all json'"
	cmdRoutesV6      = "vtysh -c 'show ipv6 route vrf all json'"
	ifAddrKeyPattern = "*INTERFACE|*|*"
)

// Capabilities reads STATE_DB SWITCH_CAPABILITY|switch. Trimming is
// supported only when it says SWITCH_TRIMMING_CAPABLE is true; the other
// features are always available (SRv6: locators and uN/uDT46 SIDs, without
// steering).
//
// Command: sonic-db-cli STATE_DB HGETALL 'SWITCH_CAPABILITY|switch'
func (d *Driver) Capabilities(ctx context.Context) (drivers.Capabilities, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ok, reason, err := d.newReader(ctx).trimmingCapable()
	if err != nil {
		return nil, err
	}
	return drivers.Capabilities{
		drivers.FeatBGP:      {Supported: true, Mode: "frr"},
		drivers.FeatECMPHash: {Supported: true, Mode: "switch-hash"},
		drivers.FeatVRF:      {Supported: true, Mode: "vrf-device"},
		drivers.FeatVRFRules: {Reason: "SONiC has VRFs (CONFIG_DB VRF and interface bindings); isolation rules are for Linux and FRR routers without VRF devices"},
		drivers.FeatSRv6:     {Supported: true, Mode: "usid"},
		drivers.FeatECN:      {Supported: true, Mode: "wred"},
		drivers.FeatPFC:      {Supported: true},
		drivers.FeatTrimming: {Supported: ok, Reason: reason},
		// PFC_WD per port; BUFFER_PROFILE and BUFFER_QUEUE.
		drivers.FeatPFCWatchdog: {Supported: true, Mode: "pfcwd"},
		drivers.FeatQueueSize:   {Supported: true, Mode: "buffer-profile"},
		drivers.FeatAdaptive:    {Reason: reasonAdaptive},
	}, nil
}

// Facts reads `show version`, `hostname` and the PORT table. Platform is
// show version's Platform with the HwSKU, e.g. "x86_64-kvm_x86_64-r0
// (HwSKU Force10-S6000)"; OSVersion its SONiC Software Version.
//
// Commands: show version; hostname; sonic-db-cli CONFIG_DB KEYS 'PORT|*'
func (d *Driver) Facts(ctx context.Context) (*drivers.Facts, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out, err := d.run(ctx, cmdShowVersion)
	if err != nil {
		return nil, err
	}
	v, err := parseShowVersion(out)
	if err != nil {
		return nil, d.replyError(cmdShowVersion, out, err)
	}
	host, err := d.run(ctx, cmdHostname)
	if err != nil {
		return nil, err
	}
	host = strings.TrimSpace(host)
	if host == "" || strings.ContainsAny(host, " \t\n") {
		return nil, d.replyError(cmdHostname, host, errors.New("expected one word"))
	}
	ports, err := d.newReader(ctx).keys("CONFIG_DB", "PORT|")
	if err != nil {
		return nil, err
	}
	platform := v.Platform
	if v.HwSKU != "" {
		platform += " (HwSKU " + v.HwSKU + ")"
	}
	return &drivers.Facts{
		Hostname:   host,
		Platform:   strings.TrimSpace(platform),
		OSVersion:  v.Software,
		Interfaces: ports,
		VRFMode:    "vrf-device",
	}, nil
}

// State reads the operational state.
//
// Commands, in order:
//
//	show interfaces status
//	sonic-db-cli CONFIG_DB KEYS '*INTERFACE|*|*'
//	vtysh -c 'show bgp vrf all summary json'
//	vtysh -c 'show ip route vrf all json'
//	vtysh -c 'show ipv6 route vrf all json'
//	sonic-db-cli CONFIG_DB KEYS 'SRV6_MY_SIDS|*'
//	sonic-db-cli CONFIG_DB HGETALL 'SRV6_MY_SIDS|<locator>|<prefix>' (each, in order)
func (d *Driver) State(ctx context.Context) (*drivers.State, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := &drivers.State{}

	out, err := d.run(ctx, cmdIfStatus)
	if err != nil {
		return nil, err
	}
	if st.Links, err = parseInterfacesStatus(out); err != nil {
		return nil, d.replyError(cmdIfStatus, out, err)
	}
	cmd := "sonic-db-cli CONFIG_DB KEYS " + dbQuote(ifAddrKeyPattern)
	if out, err = d.run(ctx, cmd); err != nil {
		return nil, err
	}
	addrs, err := parseInterfaceAddrs(out)
	if err != nil {
		return nil, d.replyError(cmd, out, err)
	}
	for i := range st.Links {
		st.Links[i].Addrs = addrs[st.Links[i].Name]
	}

	if out, err = d.run(ctx, cmdBGPSummary); err != nil {
		return nil, err
	}
	if st.BGP, err = parseBGPSummary(out); err != nil {
		return nil, d.replyError(cmdBGPSummary, out, err)
	}
	for _, cmd := range []string{cmdRoutesV4, cmdRoutesV6} {
		if out, err = d.run(ctx, cmd); err != nil {
			return nil, err
		}
		routes, err := parseRoutes(out)
		if err != nil {
			return nil, d.replyError(cmd, out, err)
		}
		st.Routes = append(st.Routes, routes...)
	}
	sortRoutes(st.Routes)

	r := d.newReader(ctx)
	sids, err := r.keys("CONFIG_DB", "SRV6_MY_SIDS|")
	if err != nil {
		return nil, err
	}
	for _, k := range sids {
		_, pfx, ok := strings.Cut(k, "|")
		p, perr := netip.ParsePrefix(pfx)
		if !ok || perr != nil {
			return nil, fmt.Errorf("sonic %s: CONFIG_DB key %q is not SRV6_MY_SIDS|locator|prefix", d.device, "SRV6_MY_SIDS|"+k)
		}
		m, err := r.hgetall("CONFIG_DB", "SRV6_MY_SIDS|"+k)
		if err != nil {
			return nil, err
		}
		st.SIDs = append(st.SIDs, drivers.SIDState{Addr: p, Behavior: m["action"]})
	}
	// LLDP neighbours (lldp_syncd's APPL_DB table).
	ports, err := r.keys("APPL_DB", "LLDP_ENTRY_TABLE:")
	if err != nil {
		return nil, err
	}
	for _, p := range ports {
		m, err := r.hgetall("APPL_DB", "LLDP_ENTRY_TABLE:"+p)
		if err != nil {
			return nil, err
		}
		st.Neighbors = append(st.Neighbors, lldpNeighbor(p, m))
	}
	return st, nil
}
