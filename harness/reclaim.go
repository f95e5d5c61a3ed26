package harness

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// A Reclaimer removes what earlier runs left behind because their process
// was killed before it could tear down (SIGKILL, the OOM killer, a CI
// timeout): the labs, containers, namespaces, processes and networks whose
// recorded owner is gone. It never touches what a live process owns. It
// returns one line per thing reclaimed (or that it failed to reclaim),
// for the user.
type Reclaimer func(ctx context.Context, stateRoot string) []string

var (
	reclaimMu  sync.Mutex
	reclaimers = map[string]Reclaimer{}
)

// RegisterReclaimer makes Run call r before its first point (backends
// register theirs in init; the name orders them). It panics on a
// duplicate name.
func RegisterReclaimer(name string, r Reclaimer) {
	reclaimMu.Lock()
	defer reclaimMu.Unlock()
	if _, dup := reclaimers[name]; dup {
		panic(fmt.Sprintf("harness: reclaimer %q registered twice", name))
	}
	reclaimers[name] = r
}

// ReclaimLeftovers runs every registered Reclaimer on the lab state root
// and returns what they say.
func ReclaimLeftovers(ctx context.Context, stateRoot string) []string {
	reclaimMu.Lock()
	names := make([]string, 0, len(reclaimers))
	for n := range reclaimers {
		names = append(names, n)
	}
	sort.Strings(names)
	rs := make([]Reclaimer, len(names))
	for i, n := range names {
		rs[i] = reclaimers[n]
	}
	reclaimMu.Unlock()
	var out []string
	for _, r := range rs {
		out = append(out, r(ctx, stateRoot)...)
	}
	return out
}
