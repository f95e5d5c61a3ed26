package influxtest

import "syscall"

// sysProcAttr puts influxd in its own process group (so Stop can kill it and
// anything it spawned) and has the kernel kill it if the test process dies
// without running its cleanups.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
