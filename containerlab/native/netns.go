package native

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// netnsDir is where iproute2 (and vishvananda/netns) keep named namespaces.
const netnsDir = "/run/netns"

// createNamedNS creates a named network namespace without moving the
// calling goroutine into it for longer than the call. It brings lo up.
func createNamedNS(name string) (err error) {
	if _, err := os.Stat(filepath.Join(netnsDir, name)); err == nil {
		return fmt.Errorf("network namespace %s already exists", name)
	}
	done := make(chan error, 1)
	go func() {
		// A fresh goroutine on a locked thread: if switching back fails the
		// thread is never unlocked and dies with the goroutine.
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			done <- err
			return
		}
		defer orig.Close()
		ns, err := netns.NewNamed(name)
		if err != nil {
			if serr := netns.Set(orig); serr == nil {
				runtime.UnlockOSThread()
			}
			done <- fmt.Errorf("create network namespace %s: %w", name, err)
			return
		}
		ns.Close()
		if err := netns.Set(orig); err != nil {
			done <- fmt.Errorf("return from network namespace %s: %w", name, err)
			return
		}
		runtime.UnlockOSThread()
		done <- nil
	}()
	if err := <-done; err != nil {
		return err
	}
	h, err := handleAt(name)
	if err != nil {
		return err
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("%s: lo: %w", name, err)
	}
	if err := h.LinkSetUp(lo); err != nil {
		return fmt.Errorf("%s: set lo up: %w", name, err)
	}
	return nil
}

// nsHandle is a netlink handle bound to a named namespace plus the
// namespace's file descriptor (for moving links into it).
type nsHandle struct {
	*netlink.Handle
	ns netns.NsHandle
}

func (h *nsHandle) Close() {
	h.Handle.Close()
	h.ns.Close()
}

// handleAt opens a netlink handle in the named namespace ("" = this one).
func handleAt(name string) (*nsHandle, error) {
	var ns netns.NsHandle
	var err error
	if name == "" {
		ns, err = netns.Get()
	} else {
		ns, err = netns.GetFromName(name)
	}
	if err != nil {
		return nil, fmt.Errorf("open network namespace %q: %w", name, err)
	}
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		ns.Close()
		return nil, fmt.Errorf("netlink in namespace %q: %w", name, err)
	}
	return &nsHandle{Handle: h, ns: ns}, nil
}

// nsExists reports whether a named namespace exists.
func nsExists(name string) bool {
	_, err := os.Stat(filepath.Join(netnsDir, name))
	return err == nil
}

// nsInode returns the inode of a named namespace, which identifies it in
// /proc/PID/ns/net.
func nsInode(name string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(netnsDir, name), &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// pidsInNamespaces returns the processes whose network namespace is one of
// inodes, by namespace inode.
func pidsInNamespaces(inodes map[uint64]string) map[int]string {
	out := map[int]string{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join("/proc", e.Name(), "ns/net"), &st); err != nil {
			continue
		}
		if ns, ok := inodes[st.Ino]; ok {
			out[pid] = ns
		}
	}
	return out
}

// killNamespaces terminates every process in the given namespaces: SIGTERM,
// then SIGKILL for what is left after grace. It returns the processes it
// signalled, as "pid (comm) in ns".
func killNamespaces(names []string, grace time.Duration) []string {
	inodes := map[uint64]string{}
	for _, n := range names {
		if ino, err := nsInode(n); err == nil {
			inodes[ino] = n
		}
	}
	if len(inodes) == 0 {
		return nil
	}
	pids := pidsInNamespaces(inodes)
	var killed []string
	for pid, ns := range pids {
		killed = append(killed, fmt.Sprintf("%d (%s) in %s", pid, procComm(pid), ns))
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for len(pids) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		pids = pidsInNamespaces(inodes)
	}
	for pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	// Wait (bounded) for killed processes to leave, so the namespaces
	// really go away when their files are removed.
	for i := 0; i < 40 && len(pidsInNamespaces(inodes)) > 0; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	return killed
}

func procComm(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return "?"
	}
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	return string(b)
}

// deleteNS removes a named namespace (its interfaces go with it).
func deleteNS(name string) error {
	err := netns.DeleteNamed(name)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		// Not mounted (a half-created namespace): remove the file anyway.
		if rerr := os.Remove(filepath.Join(netnsDir, name)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			return fmt.Errorf("delete network namespace %s: %w", name, err)
		}
	}
	return nil
}
