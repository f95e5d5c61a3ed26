package labrt

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fabricbench/fabricbench/containerlab"
)

// Execer runs a shell script in a lab node as the node sees it.
type Execer func(ctx context.Context, node, script string) (string, error)

// WaitReady polls until the lab is ready (see Pending), twice in a row so
// that routes have spread and not only the sessions, or until timeout:
// then the lab is left as it is and a *NotReadyError lists what is not
// ready.
func WaitReady(ctx context.Context, lab *containerlab.Lab, st *State, exec Execer, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	clear := 0
	for {
		pending := Pending(ctx, lab, st, exec)
		if len(pending) == 0 {
			if clear++; clear == 2 {
				return nil
			}
		} else {
			clear = 0
		}
		if time.Now().After(deadline) {
			return &NotReadyError{Lab: lab.Name, Pending: pending}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Pending lists what is not ready yet:
//   - a node reached over SSH whose sshd does not accept connections;
//   - on FRR nodes, per routing daemon running (vtysh's show daemons):
//     bgpd: a configured BGP session not Established, with queued
//     messages, or without End-of-RIB in one of its address families;
//     ospfd/ospf6d: an interface with neighbours that are not all Full, or
//     no Full adjacency at all; isisd: an adjacency not Up, or none.
func Pending(ctx context.Context, lab *containerlab.Lab, st *State, exec Execer) []string {
	var mu sync.Mutex
	var out []string
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, n := range lab.Devices() {
		ns, ok := st.Node(n.Name)
		if !ok {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(n *containerlab.Node, ns NodeState) {
			defer wg.Done()
			defer func() { <-sem }()
			var p []string
			if ns.Transport == TransportSSH {
				c, err := net.DialTimeout("tcp", net.JoinHostPort(ns.Mgmt, "22"), time.Second)
				if err != nil {
					p = append(p, fmt.Sprintf("%s: ssh %s:22 not accepting", n.Name, ns.Mgmt))
				} else {
					c.Close()
				}
			}
			if n.OS == "frr" {
				p = append(p, routingPending(ctx, n.Name, exec)...)
			}
			mu.Lock()
			out = append(out, p...)
			mu.Unlock()
		}(n, ns)
	}
	wg.Wait()
	sort.Strings(out)
	return out
}

// routingPending checks the routing protocols an FRR node runs.
func routingPending(ctx context.Context, node string, exec Execer) []string {
	raw, err := exec(ctx, node, "vtysh -c 'show daemons'")
	if err != nil {
		return []string{fmt.Sprintf("%s: vtysh: %v: %s", node, err, strings.TrimSpace(raw))}
	}
	daemons := map[string]bool{}
	for _, d := range strings.Fields(raw) {
		daemons[d] = true
	}
	var p []string
	if daemons["bgpd"] {
		p = append(p, BGPPending(ctx, node, exec)...)
	}
	if daemons["ospfd"] {
		p = append(p, ospfPending(ctx, node, exec)...)
	}
	if daemons["ospf6d"] {
		p = append(p, ospf6Pending(ctx, node, exec)...)
	}
	if daemons["isisd"] {
		p = append(p, isisPending(ctx, node, exec)...)
	}
	return p
}

// bgpNeighbors is the part of FRR's `show bgp neighbors json` readiness
// needs.
type bgpNeighbors map[string]struct {
	State        string                     `json:"bgpState"`
	AFs          map[string]json.RawMessage `json:"addressFamilyInfo"`
	MessageStats struct {
		InQ  int `json:"depthInq"`
		OutQ int `json:"depthOutq"`
	} `json:"messageStats"`
	GR struct {
		EoRRecv map[string]bool `json:"endOfRibRecv"`
	} `json:"gracefulRestartInfo"`
}

// BGPPending lists the BGP sessions of a node that are not ready.
func BGPPending(ctx context.Context, node string, exec Execer) []string {
	raw, err := exec(ctx, node, "vtysh -c 'show bgp neighbors json'")
	if err != nil {
		return []string{fmt.Sprintf("%s: vtysh: %v: %s", node, err, strings.TrimSpace(raw))}
	}
	var nb bgpNeighbors
	if err := json.Unmarshal([]byte(raw), &nb); err != nil {
		return []string{fmt.Sprintf("%s: cannot read show bgp neighbors json: %v", node, err)}
	}
	var p []string
	for peer, n := range nb {
		switch {
		case n.State != "Established":
			p = append(p, fmt.Sprintf("%s: BGP %s %s", node, peer, n.State))
		case n.MessageStats.InQ+n.MessageStats.OutQ > 0:
			p = append(p, fmt.Sprintf("%s: BGP %s has queued updates", node, peer))
		default:
			for af := range n.AFs {
				if !n.GR.EoRRecv[af] {
					p = append(p, fmt.Sprintf("%s: BGP %s %s: no End-of-RIB yet", node, peer, af))
				}
			}
		}
	}
	return p
}

// ospfInterfaces is the part of `show ip ospf interface json` readiness
// needs.
type ospfInterfaces struct {
	Interfaces map[string]struct {
		Passive  bool `json:"timerPassiveIface"`
		Nbrs     int  `json:"nbrCount"`
		Adjacent int  `json:"nbrAdjacentCount"`
	} `json:"interfaces"`
}

func ospfPending(ctx context.Context, node string, exec Execer) []string {
	raw, err := exec(ctx, node, "vtysh -c 'show ip ospf interface json'")
	if err != nil {
		return []string{fmt.Sprintf("%s: vtysh: %v: %s", node, err, strings.TrimSpace(raw))}
	}
	var oi ospfInterfaces
	if err := json.Unmarshal([]byte(raw), &oi); err != nil {
		return []string{fmt.Sprintf("%s: cannot read show ip ospf interface json: %v", node, err)}
	}
	var p []string
	full := 0
	for name, i := range oi.Interfaces {
		full += i.Adjacent
		if i.Nbrs > i.Adjacent {
			p = append(p, fmt.Sprintf("%s: OSPF on %s: %d of %d neighbours Full", node, name, i.Adjacent, i.Nbrs))
		}
	}
	if full == 0 {
		p = append(p, fmt.Sprintf("%s: OSPF has no Full adjacency yet", node))
	}
	return p
}

func ospf6Pending(ctx context.Context, node string, exec Execer) []string {
	raw, err := exec(ctx, node, "vtysh -c 'show ipv6 ospf6 neighbor json'")
	if err != nil {
		return []string{fmt.Sprintf("%s: vtysh: %v: %s", node, err, strings.TrimSpace(raw))}
	}
	var nb struct {
		Neighbors []struct {
			ID    string `json:"neighborId"`
			State string `json:"state"`
			If    string `json:"interfaceName"`
		} `json:"neighbors"`
	}
	if err := json.Unmarshal([]byte(raw), &nb); err != nil {
		return []string{fmt.Sprintf("%s: cannot read show ipv6 ospf6 neighbor json: %v", node, err)}
	}
	var p []string
	for _, n := range nb.Neighbors {
		if n.State != "Full" {
			p = append(p, fmt.Sprintf("%s: OSPFv3 neighbour %s on %s %s", node, n.ID, n.If, n.State))
		}
	}
	if len(nb.Neighbors) == 0 {
		p = append(p, fmt.Sprintf("%s: OSPFv3 has no neighbour yet", node))
	}
	return p
}

// isisPending reads `show isis neighbor`: System Id, Interface, L, State,
// Holdtime, SNPA per adjacency.
func isisPending(ctx context.Context, node string, exec Execer) []string {
	raw, err := exec(ctx, node, "vtysh -c 'show isis neighbor'")
	if err != nil {
		return []string{fmt.Sprintf("%s: vtysh: %v: %s", node, err, strings.TrimSpace(raw))}
	}
	var p []string
	up := 0
	for _, l := range strings.Split(raw, "\n") {
		f := strings.Fields(l)
		if len(f) < 4 || f[0] == "System" || strings.HasPrefix(l, "Area") {
			continue
		}
		switch f[3] {
		case "Up":
			up++
		case "Initializing", "Down":
			p = append(p, fmt.Sprintf("%s: IS-IS adjacency %s on %s %s", node, f[0], f[1], f[3]))
		}
	}
	if up == 0 {
		p = append(p, fmt.Sprintf("%s: IS-IS has no adjacency Up yet", node))
	}
	return p
}
