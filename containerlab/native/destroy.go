package native

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fabricbench/fabricbench/containerlab/labrt"
	"github.com/vishvananda/netlink"
)

// Destroy removes everything of lab: the processes in its namespaces, the
// namespaces (with their interfaces), the management veth and the state
// directory. It finds them by lab name (and the node names of the
// topology, also when the state file is gone), so it also cleans up after
// a crash. Destroying a lab that does not exist is not an error.
func (d *Deployer) Destroy(ctx context.Context, lab string, nodes []string) (*Report, error) {
	rep := &Report{}
	names := map[string]bool{MgmtNamespace(lab): true}
	for _, n := range nodes {
		names[NamespaceName(lab, n)] = true
	}
	if st, err := d.LoadState(lab); err == nil {
		for _, n := range st.Nodes {
			names[n.Namespace] = true
		}
	}
	var existing []string
	for n := range names {
		if nsExists(n) {
			existing = append(existing, n)
		}
	}
	rep.Processes = killNamespaces(existing, 3*time.Second)
	var errs []error
	for _, n := range existing {
		if err := deleteNS(n); err != nil {
			errs = append(errs, err)
			continue
		}
		rep.Namespaces = append(rep.Namespaces, n)
	}
	// The root end of the management veth goes with its peer; remove it
	// explicitly when the management namespace was already gone.
	rootIf := RootInterface(lab)
	for i := 0; i < 20; i++ {
		l, err := netlink.LinkByName(rootIf)
		if err != nil {
			break
		}
		if i == 19 {
			if err := netlink.LinkDel(l); err != nil {
				errs = append(errs, fmt.Errorf("delete %s: %w", rootIf, err))
			} else {
				rep.Interfaces = append(rep.Interfaces, rootIf)
			}
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if dir, err := labrt.RemoveStateDir(d.StateDir(lab)); err != nil {
		errs = append(errs, err)
	} else if dir != "" {
		rep.StateDir = dir
	}
	return rep, errors.Join(errs...)
}
