package labbackend

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fabricbench/fabricbench/containerlab"
)

// The routing watch: a lab's switches are the fabric under test, and
// their routing daemons can die in the middle of a run (a crash, the OOM
// killer, a chaos test's kill -9). The backend reads every switch's FRR
// daemons when the jobs start and again when they end: a daemon that is
// gone (or runs with another PID: restarted) fails the run, naming it,
// and the fabric's reaction is measured from the other switches' BGP
// sessions: which lost a session with whom, and when, in run time.

// frrDaemonsScript lists the running FRR daemons of a node, "NAME PID" a
// line, from the pid files both runtimes' FRR keep in /run/frr (watchfrr,
// which restarts the others, is not one of the routing daemons).
const frrDaemonsScript = `for f in /run/frr/*.pid; do [ -e "$f" ] || continue; n=$(basename "$f" .pid); ` +
	`[ "$n" = watchfrr ] && continue; p=$(cat "$f" 2>/dev/null); ` +
	`[ -n "$p" ] && kill -0 "$p" 2>/dev/null && echo "$n $p"; done; true`

// daemons is node -> daemon -> PID.
type daemons map[string]map[string]int

// frrNodes are the lab's FRR nodes (the switches), by name.
func (b *Backend) frrNodes() []string {
	var out []string
	for _, n := range b.lab.Nodes {
		if n.OS == "frr" {
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	return out
}

// readDaemons reads the running FRR daemons of every switch (in parallel);
// a node that cannot be read is left out.
func (b *Backend) readDaemons(ctx context.Context) daemons {
	out := daemons{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, node := range b.frrNodes() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			txt, err := b.Exec(cctx, node, frrDaemonsScript)
			if err != nil {
				b.logf("routing watch: %s: %v", node, err)
				return
			}
			m := map[string]int{}
			for _, l := range strings.Split(txt, "\n") {
				f := strings.Fields(l)
				if len(f) == 2 {
					if pid, err := strconv.Atoi(f[1]); err == nil {
						m[f[0]] = pid
					}
				}
			}
			mu.Lock()
			out[node] = m
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// lostDaemons compares two readings: "spine0: bgpd (pid 123) is no longer
// running" or "... was restarted (now pid 456)".
func lostDaemons(before, after daemons) []string {
	var out []string
	nodes := make([]string, 0, len(before))
	for n := range before {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		now, ok := after[n]
		if !ok {
			continue // not readable at the end: nothing to say about it
		}
		names := make([]string, 0, len(before[n]))
		for d := range before[n] {
			names = append(names, d)
		}
		sort.Strings(names)
		for _, d := range names {
			pid := before[n][d]
			switch np, ok := now[d]; {
			case !ok:
				out = append(out, fmt.Sprintf("%s: %s (pid %d) stopped during the jobs and is not running", n, d, pid))
			case np != pid:
				out = append(out, fmt.Sprintf("%s: %s (pid %d) stopped during the jobs and was restarted (pid %d)", n, d, pid, np))
			}
		}
	}
	return out
}

// frrTimerRes is the resolution of FRR's BGP timers (lastResetTimerMsecs,
// bgpTimerUpMsec count whole seconds, in milliseconds).
const frrTimerRes = time.Second

// bgpNeighbor is what the reaction needs of `show bgp neighbors json`.
type bgpNeighbor struct {
	State         string `json:"bgpState"`
	LastResetMs   *int64 `json:"lastResetTimerMsecs"`
	LastResetDue  string `json:"lastResetDueTo"`
	EstablishedMs *int64 `json:"bgpTimerUpMsec"`
}

// bgpReaction reads, on every switch whose bgpd still runs, the BGP
// sessions that went down or were re-established after the jobs started
// (start), and those still established with a switch whose bgpd is gone:
// one line per session, with when in run time. Sessions that went down
// before watched (the first reading, when every daemon ran) are
// bring-up's business; one that went down after it but before the jobs'
// start (a fault while the agents' clock started) is said so.
func (b *Backend) bgpReaction(ctx context.Context, after daemons, watched, start time.Time) []string {
	peerNode := map[string]string{}
	for _, l := range b.lab.Links {
		for _, ep := range []containerlab.Endpoint{l.A, l.B} {
			if ep.IPv4.IsValid() {
				peerNode[ep.IPv4.Addr().String()] = ep.Node
			}
			if ep.IPv6.IsValid() {
				peerNode[ep.IPv6.Addr().String()] = ep.Node
			}
		}
	}
	// The switches whose bgpd is gone: a peer that still counts its
	// session with one as established has not noticed yet (its hold
	// timer runs) and may still send traffic there.
	noBGP := map[string]bool{}
	for node, ds := range after {
		if _, ok := ds["bgpd"]; !ok {
			noBGP[node] = true
		}
	}
	var mu sync.Mutex
	var out []string
	var wg sync.WaitGroup
	for node, ds := range after {
		if _, ok := ds["bgpd"]; !ok {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			read := time.Now()
			txt, err := b.Exec(cctx, node, "vtysh -c 'show bgp neighbors json'")
			if err != nil {
				b.logf("routing watch: %s: show bgp neighbors: %v", node, err)
				return
			}
			var nb map[string]json.RawMessage
			if err := json.Unmarshal([]byte(txt), &nb); err != nil {
				b.logf("routing watch: %s: show bgp neighbors: %v", node, err)
				return
			}
			elapsed := read.Sub(start)
			var lines []string
			for peer, raw := range nb {
				var n bgpNeighbor
				if json.Unmarshal(raw, &n) != nil {
					continue
				}
				who := peer
				if pn := peerNode[peer]; pn != "" {
					who = pn + " (" + peer + ")"
				}
				gone := noBGP[peerNode[peer]]
				if gone && n.State != "Established" && (n.LastResetMs == nil ||
					elapsed-time.Duration(*n.LastResetMs)*time.Millisecond < watched.Sub(start)-frrTimerRes) {
					// Down, but its last reset is not this one (or unknown):
					// say its state all the same.
					last := "unknown"
					if n.LastResetMs != nil {
						last = fmt.Sprintf("%.0f s before the jobs ended", (time.Duration(*n.LastResetMs) * time.Millisecond).Seconds())
						if n.LastResetDue != "" {
							last += ": " + n.LastResetDue
						}
					}
					lines = append(lines, fmt.Sprintf("%s had its BGP session with %s %s when the jobs ended, %s's bgpd being gone (last reset %s)",
						node, who, strings.ToLower(n.State), peerNode[peer], last))
					continue
				}
				if n.State != "Established" && n.LastResetMs != nil {
					at := elapsed - time.Duration(*n.LastResetMs)*time.Millisecond
					if at < watched.Sub(start)-frrTimerRes {
						continue // down before the watch began: bring-up's business
					}
					why := ""
					if n.LastResetDue != "" {
						why = ": " + n.LastResetDue
					}
					if at < 0 && at > -50*time.Millisecond {
						at = 0 // not "0.0 s before" (nor "-0.0 s into")
					}
					when := fmt.Sprintf("%.1f s into the jobs (±1 s: FRR's timers count whole seconds)", at.Seconds())
					if at < 0 {
						when = fmt.Sprintf("%.1f s before the jobs started (±1 s: FRR's timers count whole seconds)", -at.Seconds())
					}
					lines = append(lines, fmt.Sprintf("%s lost its BGP session with %s %s (%s since%s)",
						node, who, when, strings.ToLower(n.State), why))
				}
				if n.State == "Established" && gone {
					lines = append(lines, fmt.Sprintf("%s still counted its BGP session with %s as established when the jobs ended (%.3f s into them), though %s's bgpd is gone: it notices when its hold timer expires",
						node, who, elapsed.Seconds(), peerNode[peer]))
				}
				if n.State == "Established" && n.EstablishedMs != nil && n.LastResetMs != nil {
					up := elapsed - time.Duration(*n.EstablishedMs)*time.Millisecond
					if up > 0 {
						lines = append(lines, fmt.Sprintf("%s re-established its BGP session with %s %.1f s into the jobs (±1 s)", node, who, up.Seconds()))
					}
				}
			}
			mu.Lock()
			out = append(out, lines...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Strings(out)
	return out
}

func (d daemons) String() string {
	n := 0
	for _, m := range d {
		n += len(m)
	}
	return fmt.Sprintf("%d routing daemons on %d switches", n, len(d))
}
