package frr

import (
	"context"
	"fmt"

	"github.com/fabricbench/fabricbench/drivers"
	"github.com/fabricbench/fabricbench/drivers/sshx"
)

// State reads the daemons running (show daemons), the BGP configuration
// (show running-config: local AS, maximum-paths, neighbours shut down) and
// sessions (show bgp vrf all neighbors json), the OSPF, OSPFv3 and IS-IS
// adjacencies of the daemons that run, the routes FRR selected (show
// ip/ipv6 route vrf all json: per prefix the selected entry and its active
// nexthops), and the links, neighbours and SRv6 SIDs of the kernel (linux
// driver). A session's Interface is the local link whose connected prefix
// holds the peer (in the VRF's namespace for netns VRFs).
func (d *Driver) State(ctx context.Context) (*drivers.State, error) {
	caps, err := d.Capabilities(ctx)
	if err != nil {
		return nil, err
	}
	kst, err := d.lx.State(ctx)
	if err != nil {
		return nil, fmt.Errorf("frr %s: %w", d.name, err)
	}
	st := &drivers.State{Links: kst.Links, Neighbors: kst.Neighbors, SIDs: kst.SIDs, Rules: kst.Rules, PolicyRoutes: kst.PolicyRoutes,
		Forwarding: kst.Forwarding}
	out, err := d.Vtysh(ctx, "show daemons")
	if err != nil {
		return nil, err
	}
	st.Daemons = parseDaemons(out)
	// The daemons file says which daemons should run; unreadable (another
	// layout, permissions) leaves it unknown.
	if out, err := d.lx.Exec(ctx, "cat /etc/frr/daemons"); err == nil {
		st.DaemonsEnabled = parseDaemonsFile(out)
	}
	running := map[string]bool{}
	for _, dm := range st.Daemons {
		running[dm] = true
	}
	if running["bgpd"] {
		cfg, err := d.Vtysh(ctx, "show running-config")
		if err != nil {
			return nil, err
		}
		st.BGPConfig = bgpConfigs(cfg)
	}
	if running["ospfd"] {
		const cmd = "show ip ospf neighbor json"
		out, err := d.Vtysh(ctx, cmd)
		if err != nil {
			return nil, err
		}
		adj, err := parseOSPFNeighbors(out)
		if err != nil {
			return nil, d.badReply(cmd, out, err)
		}
		st.Adjacencies = append(st.Adjacencies, adj...)
	}
	if running["ospf6d"] {
		const cmd = "show ipv6 ospf6 neighbor json"
		out, err := d.Vtysh(ctx, cmd)
		if err != nil {
			return nil, err
		}
		adj, err := parseOSPF6Neighbors(out)
		if err != nil {
			return nil, d.badReply(cmd, out, err)
		}
		st.Adjacencies = append(st.Adjacencies, adj...)
	}
	if running["isisd"] {
		out, err := d.Vtysh(ctx, "show isis neighbor")
		if err != nil {
			return nil, err
		}
		st.Adjacencies = append(st.Adjacencies, parseISISNeighbors(out)...)
	}

	if caps[drivers.FeatBGP].Supported && running["bgpd"] {
		const cmd = "show bgp vrf all neighbors json"
		out, err := d.Vtysh(ctx, cmd)
		if err != nil {
			return nil, err
		}
		if st.BGP, err = parseBGPNeighbors(out); err != nil {
			return nil, d.badReply(cmd, out, err)
		}
		vrfLinks := map[string][]drivers.LinkState{"": kst.Links}
		netns := caps[drivers.FeatVRF].Mode == "netns"
		for i := range st.BGP {
			s := &st.BGP[i]
			if s.Interface != "" {
				continue
			}
			links, ok := vrfLinks[s.VRF]
			if !ok {
				links = kst.Links
				if netns {
					if links, err = d.lx.Links(ctx, s.VRF); err != nil {
						return nil, fmt.Errorf("frr %s: %w", d.name, err)
					}
				}
				vrfLinks[s.VRF] = links
			}
			s.Interface = sessionInterface(s.Peer, links)
		}
	}
	for _, cmd := range []string{"show ip route vrf all json", "show ipv6 route vrf all json"} {
		out, err := d.Vtysh(ctx, cmd)
		if err != nil {
			return nil, err
		}
		rs, err := parseRoutes(out)
		if err != nil {
			return nil, d.badReply(cmd, out, err)
		}
		st.Routes = append(st.Routes, rs...)
	}
	return st, nil
}

// badReply is an unparseable vtysh reply.
func (d *Driver) badReply(cmd, out string, err error) error {
	return fmt.Errorf("frr %s: vtysh %q returned an unexpected reply: %v (reply: %q)", d.name, cmd, err, sshx.Excerpt(out, 300))
}
