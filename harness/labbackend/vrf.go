package labbackend

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/fabricbench/fabricbench/harness/runspec"
)

// VRFs on the lab. This host's kernel has no VRF device (the linux driver
// probes `ip link add NAME type vrf`), so a suite's VRFs cannot become
// per-VRF routing tables bound to interfaces. What the lab does instead is
// isolate them where a VRF's traffic enters the fabric: on every leaf, for
// each host port, one policy rule per host the attached host's VRF does
// not reach (no leak), `ip rule add pref 500 iif PORT to ADDR/32 prohibit`,
// so the leaf answers such a packet with ICMP administratively prohibited
// and forwards nothing. Routing inside a VRF is the lab's shared table
// (FRR BGP over the underlay; ECMP is not per VRF), and the planner refuses
// a job that needs unreachable pairs before anything runs, as on the
// simulator; the rules make the lab's data plane agree with that verdict.
const vrfRulePref = 500

// vrfRules returns, per leaf, the commands that install the isolation.
func (b *Backend) vrfRules(vrfs []runspec.VRF) map[string][]string {
	m := runspec.NewVRFMap(b.f.NumHosts(), vrfs)
	out := map[string][]string{}
	for h := 0; h < b.f.NumHosts(); h++ {
		hn := b.f.Host(h)
		for _, p := range hn.Ports {
			peer := b.f.Ports[p].Peer
			leaf := b.f.Nodes[b.f.Ports[peer].Node].Name
			dev := b.nodes[leaf].ifaces[peer]
			for d := 0; d < b.f.NumHosts(); d++ {
				if d == h || m.Reachable(h, d) {
					continue
				}
				out[leaf] = append(out[leaf], fmt.Sprintf("ip rule add pref %d iif %s to %s/32 prohibit", vrfRulePref, dev, b.hostIP[d]))
			}
		}
	}
	return out
}

// configureVRFs installs the isolation rules on the leaves.
func (b *Backend) configureVRFs(ctx context.Context, vrfs []runspec.VRF) error {
	rules := b.vrfRules(vrfs)
	leaves := make([]string, 0, len(rules))
	for l := range rules {
		leaves = append(leaves, l)
	}
	sort.Strings(leaves)
	for _, l := range leaves {
		script := "set -e\n" + strings.Join(rules[l], "\n")
		if out, err := b.Exec(ctx, l, script); err != nil {
			return fmt.Errorf("features.vrfs: isolation rules on %s: %v: %s", l, err, strings.TrimSpace(out))
		}
		b.logf("vrfs: %s: %d prohibit rules (pref %d)", l, len(rules[l]), vrfRulePref)
	}
	return nil
}
