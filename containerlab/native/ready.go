package native

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

// waitReady polls until every node's SSH server accepts connections and
// every configured BGP session of every FRR node is Established, has
// received End-of-RIB in each of its address families and has no queued
// messages, twice in a row (so the routes have spread, not only the
// sessions).
func (d *Deployer) waitReady(ctx context.Context, lab *containerlab.Lab, st *State) error {
	deadline := time.Now().Add(d.readyTimeout)
	clear := 0
	for {
		pending := d.pending(ctx, lab, st)
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

// pending lists what is not ready yet.
func (d *Deployer) pending(ctx context.Context, lab *containerlab.Lab, st *State) []string {
	var mu sync.Mutex
	var out []string
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, n := range lab.Nodes {
		ns := st.Nodes[i]
		wg.Add(1)
		sem <- struct{}{}
		go func(n *containerlab.Node, ns NodeState) {
			defer wg.Done()
			defer func() { <-sem }()
			var p []string
			c, err := net.DialTimeout("tcp", net.JoinHostPort(ns.Mgmt, "22"), time.Second)
			if err != nil {
				p = append(p, fmt.Sprintf("%s: ssh %s:22 not accepting", n.Name, ns.Mgmt))
			} else {
				c.Close()
			}
			if n.OS == "frr" {
				p = append(p, d.bgpPending(ctx, ns)...)
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

func (d *Deployer) bgpPending(ctx context.Context, ns NodeState) []string {
	raw, err := d.nodeExec(ctx, ns, "vtysh -c 'show bgp neighbors json'")
	if err != nil {
		return []string{fmt.Sprintf("%s: vtysh: %v: %s", ns.Name, err, strings.TrimSpace(raw))}
	}
	var nb bgpNeighbors
	if err := json.Unmarshal([]byte(raw), &nb); err != nil {
		return []string{fmt.Sprintf("%s: cannot read show bgp neighbors json: %v", ns.Name, err)}
	}
	var p []string
	for peer, n := range nb {
		switch {
		case n.State != "Established":
			p = append(p, fmt.Sprintf("%s: BGP %s %s", ns.Name, peer, n.State))
		case n.MessageStats.InQ+n.MessageStats.OutQ > 0:
			p = append(p, fmt.Sprintf("%s: BGP %s has queued updates", ns.Name, peer))
		default:
			for af := range n.AFs {
				if !n.GR.EoRRecv[af] {
					p = append(p, fmt.Sprintf("%s: BGP %s %s: no End-of-RIB yet", ns.Name, peer, af))
				}
			}
		}
	}
	return p
}
