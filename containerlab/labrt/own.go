package labrt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Ownership. A lab's state (state.json) names its Owner, the process that
// deployed it (PID and start time, so that a reused PID is not taken for
// it), and is saved before anything of the lab is created: namespaces,
// processes, containers, bridges, the Docker network. A Temporary lab
// lives only as long as its owner: a run's lab, and every lab while it is
// being deployed. Once its owner is gone (killed, crashed), nothing will
// ever remove it but Reclaim, which `fabricbench lab gc`, every `run` and
// every `lab up` call. `lab up` Keeps its lab once deployed: a kept lab is
// the user's until `lab down`, whoever deployed it.
//
// Nothing of a live owner is touched: Reclaim skips its labs, and a
// runtime's Deploy refuses to replace a lab a live process owns
// (*InUseError).

// ownerCmdMax bounds the command line recorded with an owner.
const ownerCmdMax = 160

// Describe names the owner for people: "pid 1234 (fabricbench run x.yaml)".
func (o Owner) Describe() string {
	if o.Cmd == "" {
		return fmt.Sprintf("pid %d", o.PID)
	}
	return fmt.Sprintf("pid %d (%s)", o.PID, o.Cmd)
}

// procCmdline is a process's command line with spaces between the
// arguments, the program by its base name, at most ownerCmdMax bytes.
func procCmdline(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return ""
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	args[0] = filepath.Base(args[0])
	s := strings.Join(args, " ")
	if len(s) > ownerCmdMax {
		s = s[:ownerCmdMax-3] + "..."
	}
	return s
}

// Reclaimable reports whether the lab belongs to an owner that is gone
// (and is not kept).
func (s *State) Reclaimable() bool { return s.Temporary && !s.Owner.Alive() }

// InUseError is a lab that belongs to a running process.
type InUseError struct {
	Lab   string
	Owner Owner
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("lab %s belongs to %s, which is still running: stop that process first (its lab goes with it)", e.Lab, e.Owner.Describe())
}

// CheckNotInUse returns an *InUseError when lab's state under root says a
// live process other than this one owns it (a run's lab, or one being
// deployed); kept labs and labs of owners that are gone are free.
func CheckNotInUse(root, lab string) error {
	st, err := LoadState(root, lab)
	if err != nil {
		return nil
	}
	if st.Temporary && st.Owner.Alive() && st.Owner.PID != os.Getpid() {
		return &InUseError{Lab: lab, Owner: st.Owner}
	}
	return nil
}

// Keep makes a deployed lab the user's: no longer reclaimed when its
// owner exits (lab up, a suite's bring-up step without teardown).
func Keep(root, lab string) error {
	st, err := LoadState(root, lab)
	if err != nil {
		return err
	}
	if !st.Temporary {
		return nil
	}
	st.Temporary = false
	return SaveState(st)
}

// Lock serialises Deploy's start (the check that no live process owns the
// lab, the removal of leftovers, the first state) and Reclaim under one
// state root, so that a lab is never reclaimed while it is being
// redeployed. It creates root. The returned function unlocks (it may be
// called more than once).
func Lock(ctx context.Context, root string) (func(), error) {
	if root == "" {
		root = DefaultStateRoot
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(root, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	var once sync.Once
	return func() { once.Do(func() { f.Close() }) }, nil
}

// Lab statuses of Scan.
const (
	StatusInUse       = "in use"      // a live owner's temporary lab
	StatusKept        = "kept"        // the user's until lab down
	StatusReclaimable = "reclaimable" // a temporary lab whose owner is gone
)

// Entry is one lab under a state root.
type Entry struct {
	State  *State
	Status string
	// Err is why the state could not be read (State is then nil and Lab
	// names the directory).
	Lab string
	Err error
}

// Scan lists the labs under root (sorted by name). A root that does not
// exist has none.
func Scan(root string) ([]Entry, error) {
	if root == "" {
		root = DefaultStateRoot
	}
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		st, err := LoadState(root, e.Name())
		if err != nil {
			if errors.Is(err, ErrNotDeployed) {
				continue // a directory being made (its state comes next), or not a lab's
			}
			out = append(out, Entry{Lab: e.Name(), Err: err})
			continue
		}
		out = append(out, Entry{State: st, Lab: st.Lab, Status: status(st)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Lab < out[j].Lab })
	return out, nil
}

func status(st *State) string {
	switch {
	case !st.Temporary:
		return StatusKept
	case st.Owner.Alive():
		return StatusInUse
	}
	return StatusReclaimable
}

// Reclaimed is one lab Reclaim removed (or, dry, would remove).
type Reclaimed struct {
	State  *State
	Report *Report // nil when dry
	Err    error
}

// String says what was reclaimed, e.g. "reclaimed lab fbn12ab34 (native
// runtime, deployed ...) of pid 4242 (fabricbench run x.yaml), which is
// gone: 7 namespaces, ...".
func (r Reclaimed) String() string {
	st := r.State
	rt := st.Runtime
	if rt == "" {
		rt = "native"
	}
	what := fmt.Sprintf("lab %s (%s runtime, deployed %s) of %s, which is gone", st.Lab, rt,
		st.Created.Local().Format("2006-01-02 15:04:05"), st.Owner.Describe())
	switch {
	case r.Err != nil:
		return "could not reclaim " + what + ": " + r.Err.Error()
	case r.Report == nil:
		return "would reclaim " + what
	}
	return "reclaimed " + what + ": " + r.Report.String()
}

// Reclaim removes every lab under o.StateRoot whose owner is gone (state
// Temporary, owner not alive) with the runtime that deployed it; dry only
// lists them. Labs of live owners and kept labs are not touched. The
// error is for the state root itself; a lab that could not be removed
// has its Err.
func Reclaim(ctx context.Context, o Options, dry bool) ([]Reclaimed, error) {
	o = o.Defaults()
	if _, err := os.Stat(o.StateRoot); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	entries, err := Scan(o.StateRoot)
	if err != nil {
		return nil, err
	}
	any := false
	for _, e := range entries {
		if e.Status == StatusReclaimable {
			any = true
		}
	}
	if !any {
		return nil, nil
	}
	if dry {
		var out []Reclaimed
		for _, e := range entries {
			if e.Status == StatusReclaimable {
				out = append(out, Reclaimed{State: e.State})
			}
		}
		return out, nil
	}
	unlock, err := Lock(ctx, o.StateRoot)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var out []Reclaimed
	for _, e := range entries {
		if e.Status != StatusReclaimable {
			continue
		}
		// Read it again under the lock: a Deploy may have replaced it.
		st, err := LoadState(o.StateRoot, e.Lab)
		if err != nil || !st.Reclaimable() {
			continue
		}
		r := Reclaimed{State: st}
		rt, err := ForState(st, o)
		if err != nil {
			r.Err = err
		} else {
			names := make([]string, len(st.Nodes))
			for i, n := range st.Nodes {
				names[i] = n.Name
			}
			r.Report, r.Err = rt.Destroy(ctx, st.Lab, names)
		}
		out = append(out, r)
	}
	return out, nil
}
